//! [`Layer`]: a backend written as one function that sees every operation, for backends
//! that wrap another one.

use std::time::Duration;

use async_trait::async_trait;

use super::{
    Entry, Expect, Lease, Namespace, Result, StorageBackend, StoreError, StoreKey, Versioned,
};

/// One call of a [`StorageBackend`] method, as a value: what a [`Layer`] sees.
///
/// Each variant holds the arguments of the method it is named after.
#[derive(Debug)]
#[non_exhaustive]
pub enum Op<'a> {
    /// [`StorageBackend::get`].
    Get {
        /// The namespace.
        namespace: &'a Namespace,
        /// The key.
        key: &'a StoreKey,
    },
    /// [`StorageBackend::put`].
    Put {
        /// The namespace.
        namespace: &'a Namespace,
        /// The key.
        key: &'a StoreKey,
        /// The entry to write.
        entry: Entry,
        /// What the write expects to find.
        expect: Expect,
    },
    /// [`StorageBackend::delete`].
    Delete {
        /// The namespace.
        namespace: &'a Namespace,
        /// The key.
        key: &'a StoreKey,
        /// What the delete expects to find.
        expect: Expect,
    },
    /// [`StorageBackend::list`].
    List {
        /// The namespace.
        namespace: &'a Namespace,
        /// The prefix of the keys listed.
        prefix: &'a str,
    },
    /// [`StorageBackend::scan`].
    Scan {
        /// The namespace.
        namespace: &'a Namespace,
        /// The prefix of the keys read.
        prefix: &'a str,
    },
    /// [`StorageBackend::claim_lease`].
    ClaimLease {
        /// The session claimed.
        session: &'a StoreKey,
        /// Who claims it.
        holder: &'a str,
        /// For how long.
        ttl: Duration,
    },
    /// [`StorageBackend::renew_lease`].
    RenewLease {
        /// The lease held.
        lease: &'a Lease,
        /// For how long from now.
        ttl: Duration,
    },
    /// [`StorageBackend::release_lease`].
    ReleaseLease {
        /// The lease given up.
        lease: &'a Lease,
    },
}

/// What an [`Op`] returned: the value of the method it called.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Reply {
    /// Of [`Op::Get`].
    Get(Option<Versioned<Entry>>),
    /// Of [`Op::Put`]: the new version.
    Put(u64),
    /// Of [`Op::Delete`]: whether an entry was removed.
    Delete(bool),
    /// Of [`Op::List`].
    List(Vec<StoreKey>),
    /// Of [`Op::Scan`].
    Scan(Vec<(StoreKey, Versioned<Entry>)>),
    /// Of [`Op::ClaimLease`] and [`Op::RenewLease`].
    Lease(Lease),
    /// Of [`Op::ReleaseLease`]: whether the lease was still held.
    Released(bool),
}

/// A backend written as one function, [`call`](Self::call), that sees every operation as an
/// [`Op`] and answers it with a [`Reply`]. Every `Layer` is a [`StorageBackend`]: each
/// method of the trait is one `call`.
///
/// It is the way to write a backend that wraps another one and acts on what passes (a
/// timeout, metrics, a key prefix as [`Scoped`](super::Scoped) adds, injected faults):
/// what it leaves alone it passes on with [`Op::run`], so it cannot forget a method, and
/// the backend underneath keeps its own implementation of each (a PostgreSQL backend's
/// leases, a bulk [`scan`](StorageBackend::scan)).
///
/// A reply that does not answer its operation (a [`Reply::List`] to a `put`) is a bug of
/// the layer; the method fails with [`StoreError::Backend`] saying so.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
/// use std::sync::{Arc, atomic::{AtomicU64, Ordering}};
/// use async_trait::async_trait;
/// use chef::store::{
///     Entry, Expect, Layer, MemoryBackend, Namespace, Op, Reply, Result, StorageBackend,
///     StoreKey,
/// };
///
/// /// Counts the writes that reach the backend underneath.
/// struct CountWrites {
///     inner: Arc<dyn StorageBackend>,
///     writes: AtomicU64,
/// }
///
/// #[async_trait]
/// impl Layer for CountWrites {
///     async fn call(&self, op: Op<'_>) -> Result<Reply> {
///         if matches!(op, Op::Put { .. } | Op::Delete { .. }) {
///             self.writes.fetch_add(1, Ordering::Relaxed);
///         }
///         op.run(self.inner.as_ref()).await
///     }
/// }
///
/// let counted = CountWrites { inner: Arc::new(MemoryBackend::new()), writes: AtomicU64::new(0) };
/// let key = StoreKey::new("plan.md")?;
/// counted.put(&Namespace::NOTES, &key, Entry::new("draft"), Expect::Absent).await?;
/// assert_eq!(counted.get(&Namespace::NOTES, &key).await?.unwrap().value.content(), "draft");
/// assert_eq!(counted.writes.load(Ordering::Relaxed), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[async_trait]
pub trait Layer: Send + Sync {
    /// Answers one operation: usually by running it, as it is or changed, on the backend
    /// this layer wraps ([`Op::run`]).
    async fn call(&self, op: Op<'_>) -> Result<Reply>;
}

/// The error for a layer's reply that does not answer the operation `op`.
fn mismatch(op: &str) -> StoreError {
    StoreError::Backend {
        message: format!("a store layer answered {op} with the reply to another operation"),
        source: None,
    }
}

/// For each [`StorageBackend`] method, its arguments, what it returns and its [`Op`] and
/// [`Reply`] variants: [`Op::run`] calls the method, and every [`Layer`] implements it as
/// one [`call`](Layer::call) whose reply is unpacked.
macro_rules! operations {
    ($($method:ident($($arg:ident: $ty:ty),*) -> $out:ty: $op:ident => $reply:ident;)*) => {
        impl Op<'_> {
            /// Runs the operation on `backend`: calls the method it names with its arguments.
            pub async fn run(self, backend: &dyn StorageBackend) -> Result<Reply> {
                Ok(match self {
                    $(Self::$op { $($arg),* } => Reply::$reply(backend.$method($($arg),*).await?),)*
                })
            }
        }

        #[async_trait]
        impl<L: Layer> StorageBackend for L {
            $(
                async fn $method(&self, $($arg: $ty),*) -> Result<$out> {
                    match self.call(Op::$op { $($arg),* }).await? {
                        Reply::$reply(value) => Ok(value),
                        _ => Err(mismatch(stringify!($method))),
                    }
                }
            )*
        }
    };
}

operations! {
    get(namespace: &Namespace, key: &StoreKey) -> Option<Versioned<Entry>>: Get => Get;
    put(namespace: &Namespace, key: &StoreKey, entry: Entry, expect: Expect) -> u64: Put => Put;
    delete(namespace: &Namespace, key: &StoreKey, expect: Expect) -> bool: Delete => Delete;
    list(namespace: &Namespace, prefix: &str) -> Vec<StoreKey>: List => List;
    scan(namespace: &Namespace, prefix: &str) -> Vec<(StoreKey, Versioned<Entry>)>: Scan => Scan;
    claim_lease(session: &StoreKey, holder: &str, ttl: Duration) -> Lease: ClaimLease => Lease;
    renew_lease(lease: &Lease, ttl: Duration) -> Lease: RenewLease => Lease;
    release_lease(lease: &Lease) -> bool: ReleaseLease => Released;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers every operation with a list.
    struct Confused;

    #[async_trait]
    impl Layer for Confused {
        async fn call(&self, _: Op<'_>) -> Result<Reply> {
            Ok(Reply::List(Vec::new()))
        }
    }

    #[tokio::test]
    async fn a_reply_that_does_not_answer_its_operation_is_a_backend_error() {
        let key = StoreKey::new("k").unwrap();
        let err = Confused
            .put(&Namespace::NOTES, &key, Entry::new("x"), Expect::Any)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, StoreError::Backend { message, .. } if message.contains("put")),
            "{err:?}"
        );
        let keys = Confused.list(&Namespace::NOTES, "").await.unwrap();
        assert!(keys.is_empty());
    }
}
