//! [`Scoped`]: one backend shared by many sessions, each in its own key space.

use std::sync::Arc;

use async_trait::async_trait;

use super::{Layer, Lease, Op, Reply, Result, StorageBackend, StoreError, StoreKey};

/// A view of a backend in which every key lives under `SCOPE/`: many sessions (tenants,
/// conversations, agents) keep their memory, notes and journals in one store — one
/// PostgreSQL database, say — and none sees another's keys.
///
/// Through the view a key is written and read as the caller names it (`user_tz`); the
/// backend holds it as `SCOPE/user_tz` in the same namespace. [`list`](StorageBackend::list)
/// and [`scan`](StorageBackend::scan) see only the scope's keys, with the scope taken off;
/// conflicts and lease errors name keys as the caller did (a backend's other errors, such as
/// a key too long once `SCOPE/` is added, name the scoped key: keys here are limited to
/// the backend's limit less the scope and its `/`). Leases are the backend's own (a PostgreSQL backend
/// keeps its server clock), on the scoped session key.
///
/// ```
/// # use std::sync::Arc;
/// # use chef::store::{Entry, Expect, MemoryBackend, Namespace, Scoped, StorageBackend, StoreKey};
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let shared: Arc<dyn StorageBackend> = Arc::new(MemoryBackend::new());
/// let alice = Scoped::new(Arc::clone(&shared), "alice")?;
/// let bob = Scoped::new(Arc::clone(&shared), "bob")?;
/// let key = StoreKey::new("user_tz")?;
/// alice.put(&Namespace::MEMORY, &key, Entry::new("Europe/Oslo"), Expect::Any).await?;
/// assert!(bob.get(&Namespace::MEMORY, &key).await?.is_none());
/// let held = shared.list(&Namespace::MEMORY, "").await?;
/// assert_eq!(held[0].as_str(), "alice/user_tz");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub struct Scoped {
    inner: Arc<dyn StorageBackend>,
    /// The scope with its trailing `/`.
    prefix: String,
}

impl std::fmt::Debug for Scoped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scoped")
            .field("scope", &self.scope())
            .finish_non_exhaustive()
    }
}

impl Scoped {
    /// A view of `inner` under `scope`, which must be a valid key itself (it may hold `/`:
    /// `tenant/session`).
    pub fn new(inner: Arc<dyn StorageBackend>, scope: &str) -> Result<Self> {
        let scope = StoreKey::new(scope)?;
        Ok(Self {
            inner,
            prefix: format!("{}/", scope.as_str()),
        })
    }

    /// The scope.
    pub fn scope(&self) -> &str {
        self.prefix.strip_suffix('/').unwrap_or(&self.prefix)
    }

    /// The backend underneath.
    pub fn inner(&self) -> &Arc<dyn StorageBackend> {
        &self.inner
    }

    fn inner_key(&self, key: &StoreKey) -> Result<StoreKey> {
        Ok(StoreKey::new(self.inner_prefix(key.as_str()))?)
    }

    /// A key prefix (or a whole key's text) as the backend holds it.
    fn inner_prefix(&self, prefix: &str) -> String {
        format!("{}{prefix}", self.prefix)
    }

    /// A backend key as the caller names it (`None`: not in this scope).
    fn outer_key(&self, key: &StoreKey) -> Option<StoreKey> {
        key.as_str()
            .strip_prefix(&self.prefix)
            .and_then(|rest| StoreKey::new(rest).ok())
    }

    /// A lease of the backend, on the session as the caller names it.
    fn outer_lease(&self, lease: &Lease) -> Lease {
        let session = self
            .outer_key(lease.session())
            .unwrap_or_else(|| lease.session().clone());
        Lease::new(session, lease.holder(), lease.token(), lease.expires_at())
    }

    /// A lease the caller holds, as the backend knows it.
    fn inner_lease(&self, lease: &Lease) -> Result<Lease> {
        Ok(Lease::new(
            self.inner_key(lease.session())?,
            lease.holder(),
            lease.token(),
            lease.expires_at(),
        ))
    }

    /// An error with keys named as the caller named them.
    fn outer_error(&self, error: StoreError) -> StoreError {
        let unscope = |key: StoreKey| self.outer_key(&key).unwrap_or(key);
        match error {
            StoreError::Conflict {
                namespace,
                key,
                current,
            } => StoreError::Conflict {
                namespace,
                key: unscope(key),
                current,
            },
            StoreError::Leased {
                session,
                holder,
                until,
            } => StoreError::Leased {
                session: unscope(session),
                holder,
                until,
            },
            StoreError::LeaseLost { session, holder } => StoreError::LeaseLost {
                session: unscope(session),
                holder,
            },
            other => other,
        }
    }
}

#[async_trait]
impl Layer for Scoped {
    async fn call(&self, op: Op<'_>) -> Result<Reply> {
        let inner = self.inner.as_ref();
        let reply = match op {
            Op::Get { namespace, key } => inner
                .get(namespace, &self.inner_key(key)?)
                .await
                .map(Reply::Get),
            Op::Put {
                namespace,
                key,
                entry,
                expect,
            } => inner
                .put(namespace, &self.inner_key(key)?, entry, expect)
                .await
                .map(Reply::Put),
            Op::Delete {
                namespace,
                key,
                expect,
            } => inner
                .delete(namespace, &self.inner_key(key)?, expect)
                .await
                .map(Reply::Delete),
            Op::List { namespace, prefix } => inner
                .list(namespace, &self.inner_prefix(prefix))
                .await
                .map(|keys| Reply::List(keys.iter().filter_map(|k| self.outer_key(k)).collect())),
            Op::Scan { namespace, prefix } => inner
                .scan(namespace, &self.inner_prefix(prefix))
                .await
                .map(|entries| {
                    Reply::Scan(
                        entries
                            .into_iter()
                            .filter_map(|(k, v)| self.outer_key(&k).map(|k| (k, v)))
                            .collect(),
                    )
                }),
            Op::ClaimLease {
                session,
                holder,
                ttl,
            } => inner
                .claim_lease(&self.inner_key(session)?, holder, ttl)
                .await
                .map(|lease| Reply::Lease(self.outer_lease(&lease))),
            Op::RenewLease { lease, ttl } => inner
                .renew_lease(&self.inner_lease(lease)?, ttl)
                .await
                .map(|lease| Reply::Lease(self.outer_lease(&lease))),
            Op::ReleaseLease { lease } => inner
                .release_lease(&self.inner_lease(lease)?)
                .await
                .map(Reply::Released),
        };
        reply.map_err(|e| self.outer_error(e))
    }
}
