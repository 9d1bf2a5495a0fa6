//! The memory store as the gateway uses it: every operation bounded by `[memory]
//! timeout_secs`, and its outcome kept for `/metrics` and `/health`.
//!
//! A store that stops answering (a PostgreSQL server stopped by SIGSTOP, a hung network
//! file system) would otherwise hold a request for as long as the TCP connection lives:
//! the driver's `connect_timeout` covers only connecting, and PostgreSQL's own
//! `statement_timeout` runs on the server that is not running. The bound is the gateway's.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::Duration,
};

use async_trait::async_trait;
use chef::store::{Layer, Op, Reply, Result, StorageBackend, StoreError};

/// A store operation took longer than `[memory] timeout_secs`.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the memory store did not answer within {} s (memory.timeout_secs)", .0.as_secs())]
pub struct StoreTimeout(pub Duration);

impl StoreTimeout {
    /// As a store error (its source is this timeout, so callers can tell it apart).
    pub(crate) fn into_store_error(self) -> StoreError {
        StoreError::Backend {
            message: self.to_string(),
            source: Some(Box::new(self)),
        }
    }
}

/// Whether `e` or one of its sources is a [`StoreTimeout`].
pub(crate) fn timed_out(e: &(dyn std::error::Error + 'static)) -> Option<StoreTimeout> {
    let mut next = Some(e);
    while let Some(e) = next {
        if let Some(timeout) = e.downcast_ref::<StoreTimeout>() {
            return Some(*timeout);
        }
        next = e.source();
    }
    None
}

/// How the memory store has been doing: whether its latest operation failed, and how many
/// failed or timed out.
#[derive(Debug, Default)]
pub struct StoreHealth {
    /// Whether the gateway has a memory store at all.
    configured: AtomicBool,
    /// Whether the latest operation failed (could not reach the store, or timed out).
    failing: AtomicBool,
    errors: AtomicU64,
    timeouts: AtomicU64,
}

impl StoreHealth {
    pub(crate) fn configure(&self, on: bool) {
        self.configured.store(on, Ordering::Relaxed);
    }

    /// Whether the gateway has a memory store.
    pub fn configured(&self) -> bool {
        self.configured.load(Ordering::Relaxed)
    }

    /// Whether the latest operation reached the store (true before any).
    pub fn up(&self) -> bool {
        !self.failing.load(Ordering::Relaxed)
    }

    /// Operations that failed, timed out ones included.
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }

    /// Operations that timed out.
    pub fn timeouts(&self) -> u64 {
        self.timeouts.load(Ordering::Relaxed)
    }

    pub(crate) fn succeeded(&self) {
        self.failing.store(false, Ordering::Relaxed);
    }

    pub(crate) fn failed(&self) {
        self.failing.store(true, Ordering::Relaxed);
        self.errors.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn timed_out(&self) {
        self.failed();
        self.timeouts.fetch_add(1, Ordering::Relaxed);
    }

    /// Records the outcome of one operation: an error that says the store could not be
    /// used (a backend or I/O failure, a timeout) marks it down; a conflict or a refused
    /// key is the store answering.
    pub(crate) fn record<T>(&self, result: &Result<T>) {
        match result {
            Err(e) if timed_out(e).is_some() => self.timed_out(),
            Err(StoreError::Backend { .. } | StoreError::Io { .. }) => self.failed(),
            _ => self.succeeded(),
        }
    }
}

/// Runs `op` within `timeout`, recording its outcome in `health`.
pub(crate) async fn bounded<T>(
    timeout: Duration,
    health: &StoreHealth,
    op: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    let result = match tokio::time::timeout(timeout, op).await {
        Ok(result) => result,
        Err(_) => Err(StoreTimeout(timeout).into_store_error()),
    };
    health.record(&result);
    result
}

/// A store whose every operation is bounded by a timeout (a slower one fails with a
/// [`StoreTimeout`] as its source), each outcome recorded.
pub(crate) struct Bounded {
    inner: Arc<dyn StorageBackend>,
    timeout: Duration,
    health: Arc<StoreHealth>,
}

impl Bounded {
    pub(crate) fn new(
        inner: Arc<dyn StorageBackend>,
        timeout: Duration,
        health: Arc<StoreHealth>,
    ) -> Self {
        Self {
            inner,
            timeout,
            health,
        }
    }
}

#[async_trait]
impl Layer for Bounded {
    async fn call(&self, op: Op<'_>) -> Result<Reply> {
        bounded(self.timeout, &self.health, op.run(self.inner.as_ref())).await
    }
}

/// A session's file-system store (`[memory] dir/ID`) made on its first write: a
/// conversation that never writes memory leaves no directory behind (the resource audit
/// found one empty directory per conversation, never removed). Until the directory
/// exists, a read finds nothing and a delete removes nothing; once it exists (made by a
/// write, or there from an earlier request) every operation goes to the
/// [`FsBackend`](chef::store::FsBackend) opened on it.
pub(crate) struct LazyDir {
    root: std::path::PathBuf,
    opened: tokio::sync::OnceCell<Arc<chef::store::FsBackend>>,
}

impl LazyDir {
    pub(crate) fn new(root: std::path::PathBuf) -> Self {
        Self {
            root,
            opened: tokio::sync::OnceCell::new(),
        }
    }

    /// The backend, opening (and, for a write, making) the directory; `None` when it does
    /// not exist and `make` is false.
    async fn backend(&self, make: bool) -> Result<Option<&Arc<chef::store::FsBackend>>> {
        if let Some(store) = self.opened.get() {
            return Ok(Some(store));
        }
        let root = self.root.clone();
        let exists = tokio::task::spawn_blocking(move || root.try_exists())
            .await
            .map_err(thread_failed)?
            .map_err(|source| StoreError::Io {
                path: self.root.clone(),
                source,
            })?;
        if !exists && !make {
            return Ok(None);
        }
        let store = self
            .opened
            .get_or_try_init(|| async {
                let root = self.root.clone();
                tokio::task::spawn_blocking(move || chef::store::FsBackend::open(root))
                    .await
                    .map_err(thread_failed)?
                    .map(Arc::new)
            })
            .await?;
        Ok(Some(store))
    }
}

/// A store call run on a blocking thread whose thread failed (panicked, or was cancelled).
pub(crate) fn thread_failed(e: tokio::task::JoinError) -> StoreError {
    StoreError::Backend {
        message: "the store's thread failed".to_owned(),
        source: Some(Box::new(e)),
    }
}

#[async_trait]
impl Layer for LazyDir {
    async fn call(&self, op: Op<'_>) -> Result<Reply> {
        let reads = matches!(
            op,
            Op::Get { .. } | Op::List { .. } | Op::Scan { .. } | Op::Delete { .. }
        );
        match self.backend(!reads).await? {
            Some(store) => op.run(store.as_ref()).await,
            None => Ok(match op {
                Op::Get { .. } => Reply::Get(None),
                Op::List { .. } => Reply::List(Vec::new()),
                Op::Scan { .. } => Reply::Scan(Vec::new()),
                _ => Reply::Delete(false),
            }),
        }
    }
}
