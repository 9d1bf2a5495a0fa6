//! One store with faults for the tests that need one (memory retries, offload writes): a
//! backend over another that misbehaves as its [`Fault`] says and passes everything else
//! through.

use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use async_trait::async_trait;
use chef::store::{
    Entry, Expect, Layer, Namespace, Op, Reply, Result, StorageBackend, StoreError, StoreKey,
    Versioned,
};
use parking_lot::Mutex;

/// What goes wrong.
pub(crate) enum Fault {
    /// The next memory `put` is applied but answered with an error (a connection dropped
    /// after the commit).
    LoseNextAck,
    /// After each of the first this-many reads of a memory key, the entry is rewritten with
    /// the same fact (another writer refreshing it), so the read is already stale.
    Churn(u32),
    /// Writes in `vfs` are refused (reads and other namespaces work).
    RefuseVfs,
    /// Writes in `vfs` never finish while the flag is set.
    StallVfs(Arc<AtomicBool>),
}

/// A backend over `inner` with one [`Fault`].
pub(crate) struct Faulty {
    inner: Arc<dyn StorageBackend>,
    fault: Mutex<Option<Fault>>,
}

impl Faulty {
    pub(crate) fn over(inner: Arc<dyn StorageBackend>, fault: Fault) -> Arc<dyn StorageBackend> {
        Arc::new(Self {
            inner,
            fault: Mutex::new(Some(fault)),
        })
    }
}

impl Faulty {
    /// A read, after which a churning fault rewrites the entry read.
    async fn read(
        &self,
        namespace: &Namespace,
        key: &StoreKey,
    ) -> Result<Option<Versioned<Entry>>> {
        let read = self.inner.get(namespace, key).await?;
        let churn = *namespace == Namespace::MEMORY && read.is_some() && {
            let mut fault = self.fault.lock();
            match &mut *fault {
                Some(Fault::Churn(left)) if *left > 0 => {
                    *left -= 1;
                    true
                }
                _ => false,
            }
        };
        if churn && let Some(read) = &read {
            self.inner
                .put(namespace, key, read.value.clone(), Expect::Any)
                .await?;
        }
        Ok(read)
    }

    /// A write (`put`, an [`Op::Put`] in `namespace`), refused, stalled or with its answer
    /// lost as the fault says.
    async fn write(&self, namespace: &Namespace, put: Op<'_>) -> Result<Reply> {
        if namespace.as_str() == "vfs" {
            let stall = match &*self.fault.lock() {
                Some(Fault::RefuseVfs) => {
                    return Err(StoreError::Io {
                        path: "vfs".into(),
                        source: std::io::Error::other("disk full"),
                    });
                }
                Some(Fault::StallVfs(on)) => on.load(Ordering::SeqCst),
                _ => false,
            };
            if stall {
                std::future::pending::<()>().await;
            }
        }
        let reply = put.run(self.inner.as_ref()).await?;
        // The fault fires once: it is taken when it does.
        let lose = *namespace == Namespace::MEMORY
            && self
                .fault
                .lock()
                .take_if(|f| matches!(f, Fault::LoseNextAck))
                .is_some();
        if lose {
            return Err(StoreError::Backend {
                message: "connection closed, answer lost".into(),
                source: None,
            });
        }
        Ok(reply)
    }
}

#[async_trait]
impl Layer for Faulty {
    async fn call(&self, op: Op<'_>) -> Result<Reply> {
        match op {
            Op::Get { namespace, key } => self.read(namespace, key).await.map(Reply::Get),
            put @ Op::Put { namespace, .. } => self.write(namespace, put).await,
            other => other.run(self.inner.as_ref()).await,
        }
    }
}
