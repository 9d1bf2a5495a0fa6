//! The context store: namespaced, versioned entries behind one async trait.
//!
//! A [`StorageBackend`] holds [`Entry`] values (text content plus JSON metadata) under a
//! [`Namespace`] and a validated [`StoreKey`]. Every stored value carries a version, and every
//! write says which version it expects ([`Expect`]): a write that finds another version fails
//! with [`StoreError::Conflict`] instead of overwriting. That is compare-and-set from the first
//! backend on, so that a backend shared by many worker processes (a database) can promise "no
//! lost update" with the same trait and the same callers.
//!
//! Three backends ship here: [`MemoryBackend`] (one process, nothing on disk), [`FsBackend`]
//! (one directory tree, the embedded default; atomic, durable writes; see its docs for the
//! on-disk layout and what its compare-and-set holds across processes) and, behind the
//! `postgres` feature, `PgBackend` (many worker processes on many hosts sharing one
//! PostgreSQL database).
//!
//! A backend that wraps another one — to add a timeout, metrics, a key prefix ([`Scoped`]),
//! faults in a test — is written as a [`Layer`]: one function that sees every operation as
//! an [`Op`] value and passes on what it leaves alone with [`Op::run`]; every `Layer` is a
//! `StorageBackend`.
//!
//! Workers that drive the same sessions coordinate with [leases](Lease)
//! ([`StorageBackend::claim_lease`]), and save session snapshots through the store with
//! compare-and-set ([`crate::snapshot::store`]).
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
//! use std::sync::Arc;
//! use chef::store::{Entry, Expect, MemoryBackend, Namespace, StorageBackend, StoreKey};
//!
//! let store: Arc<dyn StorageBackend> = Arc::new(MemoryBackend::new());
//! let key = StoreKey::new("plan.md")?;
//! let v1 = store.put(&Namespace::NOTES, &key, Entry::new("draft"), Expect::Absent).await?;
//! // A second writer that still believes the key is absent is refused:
//! let err = store.put(&Namespace::NOTES, &key, Entry::new("other"), Expect::Absent).await;
//! assert!(err.is_err_and(|e| e.is_conflict()));
//! // A writer that read version v1 succeeds:
//! store.put(&Namespace::NOTES, &key, Entry::new("final"), Expect::Version(v1)).await?;
//! let got = store.get(&Namespace::NOTES, &key).await?.expect("stored");
//! assert_eq!(got.value.content(), "final");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Versions
//!
//! A version is an opaque `u64` that changes on every successful write of a key and is never
//! handed out twice for the same key, including across a delete and a re-creation (so a
//! writer holding a version read before the delete cannot overwrite the new entry: no ABA).
//! Callers compare versions for equality only; they are not counters of writes.

mod error;
mod fs;
mod key;
mod layer;
mod lease;
mod memory_backend;
#[cfg(feature = "postgres")]
mod postgres;
mod scoped;
mod url;

use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use self::error::{Result, StoreError};
pub use self::fs::FsBackend;
pub use self::key::{
    InvalidKey, InvalidNamespace, KeyProblem, MAX_KEY_BYTES, MAX_NAMESPACE_BYTES,
    MAX_SEGMENT_BYTES, Namespace, StoreKey,
};
pub use self::layer::{Layer, Op, Reply};
pub use self::lease::{Lease, MAX_HOLDER_BYTES};
pub use self::memory_backend::MemoryBackend;
#[cfg(feature = "postgres")]
pub use self::postgres::{PG_SCHEMA_VERSION, PgBackend, PgOptions};
pub use self::scoped::Scoped;
pub use self::url::{StoreUrl, StoreUrlError, open};

/// One stored value: text content plus free-form JSON metadata.
///
/// Metadata keeps its insertion order (serde_json `preserve_order`), so an entry written and
/// read back serializes to the same bytes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Entry {
    content: String,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    meta: Map<String, Value>,
}

impl Entry {
    /// An entry with `content` and no metadata.
    pub fn new(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            meta: Map::new(),
        }
    }

    /// Set one metadata field.
    #[must_use]
    pub fn with_meta(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.meta.insert(name.into(), value.into());
        self
    }

    /// Replace all metadata.
    #[must_use]
    pub fn with_meta_map(mut self, meta: Map<String, Value>) -> Self {
        self.meta = meta;
        self
    }

    /// The content.
    pub fn content(&self) -> &str {
        &self.content
    }

    /// The metadata.
    pub fn meta(&self) -> &Map<String, Value> {
        &self.meta
    }

    /// Content and metadata, owned.
    pub fn into_parts(self) -> (String, Map<String, Value>) {
        (self.content, self.meta)
    }
}

/// A value together with the version it was stored under.
#[derive(Debug, Clone, PartialEq)]
pub struct Versioned<T> {
    /// The value.
    pub value: T,
    /// Its version (see the module docs).
    pub version: u64,
}

/// What a write expects to find before it applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Expect {
    /// Apply whatever is stored (last writer wins).
    Any,
    /// Apply only if the key is absent (create).
    Absent,
    /// Apply only if the key is stored with exactly this version.
    Version(u64),
}

impl Expect {
    /// The expectation matching what a read returned: `Version` of a present entry,
    /// `Absent` otherwise.
    pub fn from_read<T>(read: Option<&Versioned<T>>) -> Self {
        match read {
            Some(v) => Self::Version(v.version),
            None => Self::Absent,
        }
    }

    /// Whether a key whose stored version is `current` meets the expectation.
    pub fn matches(self, current: Option<u64>) -> bool {
        match self {
            Self::Any => true,
            Self::Absent => current.is_none(),
            Self::Version(v) => current == Some(v),
        }
    }
}

/// A namespaced, versioned key-value store with compare-and-set writes.
///
/// Implementations are shared as `Arc<dyn StorageBackend>` between sessions and tasks. Every
/// method is atomic with respect to the others on the same key: a reader sees a whole entry,
/// old or new, never a mix; a write whose [`Expect`] does not hold changes nothing and returns
/// [`StoreError::Conflict`] with the version stored now.
///
/// The contract is pinned by a conformance suite run against every backend
/// (`crates/chef/tests/it/store_conformance.rs`); a new backend is added to it in one line.
#[async_trait]
pub trait StorageBackend: Send + Sync {
    /// Read one entry with its version; `None` when absent.
    async fn get(&self, namespace: &Namespace, key: &StoreKey) -> Result<Option<Versioned<Entry>>>;

    /// Write one entry if `expect` holds; returns the new version.
    async fn put(
        &self,
        namespace: &Namespace,
        key: &StoreKey,
        entry: Entry,
        expect: Expect,
    ) -> Result<u64>;

    /// Delete one entry if `expect` holds; returns whether an entry was removed.
    ///
    /// `Expect::Any` on an absent key returns `Ok(false)`; `Expect::Absent` on an absent key
    /// also returns `Ok(false)` and on a present key fails with a conflict;
    /// `Expect::Version(v)` fails with a conflict unless version `v` is stored.
    async fn delete(&self, namespace: &Namespace, key: &StoreKey, expect: Expect) -> Result<bool>;

    /// The keys of a namespace whose text starts with `prefix` (`""` lists all), sorted by
    /// byte order.
    async fn list(&self, namespace: &Namespace, prefix: &str) -> Result<Vec<StoreKey>>;

    /// Every entry whose key starts with `prefix`, sorted by key.
    ///
    /// The default reads [`list`](Self::list) then [`get`](Self::get) per key, skipping keys
    /// deleted in between; a backend with a cheaper bulk read overrides it. It is not a
    /// point-in-time snapshot of the namespace unless the backend says so.
    async fn scan(
        &self,
        namespace: &Namespace,
        prefix: &str,
    ) -> Result<Vec<(StoreKey, Versioned<Entry>)>> {
        let keys = self.list(namespace, prefix).await?;
        let mut out = Vec::with_capacity(keys.len());
        for key in keys {
            if let Some(entry) = self.get(namespace, &key).await? {
                out.push((key, entry));
            }
        }
        Ok(out)
    }

    /// Claim `session` for `holder` for `ttl`.
    ///
    /// Succeeds when nobody holds the session, when the lease in place has expired (a
    /// crashed worker's lease is taken over), or when `holder` already holds it (the claim
    /// then extends it). Otherwise fails with [`StoreError::Leased`] naming the holder and
    /// the expiry (or, when the claim keeps losing races with other claimants, with the
    /// last [`StoreError::Conflict`]: claim again). Holder names must be unique per concurrent driver (say `host:pid:n`).
    ///
    /// The default implementation stores the lease as an entry of [`Namespace::LEASES`]
    /// with compare-and-set and the local clock (see [`Lease`]); a backend shared by many
    /// hosts overrides it.
    async fn claim_lease(&self, session: &StoreKey, holder: &str, ttl: Duration) -> Result<Lease> {
        lease::claim(self, session, holder, ttl).await
    }

    /// Extend a lease this worker holds to `ttl` from now; returns the lease to use from now
    /// on (its token may change). Fails with [`StoreError::LeaseLost`] when the lease was
    /// taken over or released. A lease that expired but that nobody took over is renewed.
    async fn renew_lease(&self, lease: &Lease, ttl: Duration) -> Result<Lease> {
        lease::renew(self, lease, ttl).await
    }

    /// Give a lease up before it expires; returns `false` when it was no longer held (it
    /// expired and was taken over, or was released already).
    async fn release_lease(&self, lease: &Lease) -> Result<bool> {
        lease::release(self, lease).await
    }
}

const _: fn() = || {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<MemoryBackend>();
    assert_send_sync::<FsBackend>();
    assert_send_sync::<std::sync::Arc<dyn StorageBackend>>();
    assert_send_sync::<StoreError>();
};
