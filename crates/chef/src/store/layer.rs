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

impl Op<'_> {
    /// Runs the operation on `backend`: calls the method it names with its arguments.
    pub async fn run(self, backend: &dyn StorageBackend) -> Result<Reply> {
        Ok(match self {
            Self::Get { namespace, key } => Reply::Get(backend.get(namespace, key).await?),
            Self::Put {
                namespace,
                key,
                entry,
                expect,
            } => Reply::Put(backend.put(namespace, key, entry, expect).await?),
            Self::Delete {
                namespace,
                key,
                expect,
            } => Reply::Delete(backend.delete(namespace, key, expect).await?),
            Self::List { namespace, prefix } => Reply::List(backend.list(namespace, prefix).await?),
            Self::Scan { namespace, prefix } => Reply::Scan(backend.scan(namespace, prefix).await?),
            Self::ClaimLease {
                session,
                holder,
                ttl,
            } => Reply::Lease(backend.claim_lease(session, holder, ttl).await?),
            Self::RenewLease { lease, ttl } => Reply::Lease(backend.renew_lease(lease, ttl).await?),
            Self::ReleaseLease { lease } => Reply::Released(backend.release_lease(lease).await?),
        })
    }
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

/// A layer's reply that does not answer the operation `op`.
fn mismatch(op: &str, reply: &Reply) -> StoreError {
    StoreError::Backend {
        message: format!("a store layer answered {op} with {reply:?}"),
        source: None,
    }
}

#[async_trait]
impl<L: Layer> StorageBackend for L {
    async fn get(&self, namespace: &Namespace, key: &StoreKey) -> Result<Option<Versioned<Entry>>> {
        match self.call(Op::Get { namespace, key }).await? {
            Reply::Get(entry) => Ok(entry),
            other => Err(mismatch("get", &other)),
        }
    }

    async fn put(
        &self,
        namespace: &Namespace,
        key: &StoreKey,
        entry: Entry,
        expect: Expect,
    ) -> Result<u64> {
        let op = Op::Put {
            namespace,
            key,
            entry,
            expect,
        };
        match self.call(op).await? {
            Reply::Put(version) => Ok(version),
            other => Err(mismatch("put", &other)),
        }
    }

    async fn delete(&self, namespace: &Namespace, key: &StoreKey, expect: Expect) -> Result<bool> {
        let op = Op::Delete {
            namespace,
            key,
            expect,
        };
        match self.call(op).await? {
            Reply::Delete(removed) => Ok(removed),
            other => Err(mismatch("delete", &other)),
        }
    }

    async fn list(&self, namespace: &Namespace, prefix: &str) -> Result<Vec<StoreKey>> {
        match self.call(Op::List { namespace, prefix }).await? {
            Reply::List(keys) => Ok(keys),
            other => Err(mismatch("list", &other)),
        }
    }

    async fn scan(
        &self,
        namespace: &Namespace,
        prefix: &str,
    ) -> Result<Vec<(StoreKey, Versioned<Entry>)>> {
        match self.call(Op::Scan { namespace, prefix }).await? {
            Reply::Scan(entries) => Ok(entries),
            other => Err(mismatch("scan", &other)),
        }
    }

    async fn claim_lease(&self, session: &StoreKey, holder: &str, ttl: Duration) -> Result<Lease> {
        let op = Op::ClaimLease {
            session,
            holder,
            ttl,
        };
        match self.call(op).await? {
            Reply::Lease(lease) => Ok(lease),
            other => Err(mismatch("claim_lease", &other)),
        }
    }

    async fn renew_lease(&self, lease: &Lease, ttl: Duration) -> Result<Lease> {
        match self.call(Op::RenewLease { lease, ttl }).await? {
            Reply::Lease(lease) => Ok(lease),
            other => Err(mismatch("renew_lease", &other)),
        }
    }

    async fn release_lease(&self, lease: &Lease) -> Result<bool> {
        match self.call(Op::ReleaseLease { lease }).await? {
            Reply::Released(held) => Ok(held),
            other => Err(mismatch("release_lease", &other)),
        }
    }
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
