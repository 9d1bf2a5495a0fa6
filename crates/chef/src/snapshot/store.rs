//! Session snapshots kept in a [`StorageBackend`], with versions and compare-and-set.
//!
//! One entry per session in [`Namespace::SESSIONS`], keyed by the session id. Its content is
//! exactly the snapshot file format (see [`file`](super::file)), so a snapshot exported from
//! a store is a valid snapshot file and the other way round. Its metadata repeats
//! `created_turn` and `format_version` so listings need not decode every payload.
//!
//! Saving takes an [`Expect`]: a worker that loaded version `v` saves with
//! `Expect::Version(v)`, and if another worker committed a turn in between the save fails
//! with [`StoreError::Conflict`] carrying the version stored now: reload, re-apply, save.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
//! use chef::snapshot::{Snapshot, store};
//! use chef::store::{Expect, MemoryBackend, StoreKey};
//!
//! let backend = MemoryBackend::new();
//! let id = StoreKey::new("session-1")?;
//! let v1 = store::save(&backend, &id, &Snapshot::new(vec![1u32]), Expect::Absent).await?;
//! let loaded = store::load::<Vec<u32>>(&backend, &id).await?.expect("saved");
//! assert_eq!((loaded.value.payload, loaded.version), (vec![1], v1));
//! // A save based on a stale version is refused.
//! store::save(&backend, &id, &Snapshot::new(vec![1, 2]), Expect::Version(v1)).await?;
//! let stale = store::save(&backend, &id, &Snapshot::new(vec![9]), Expect::Version(v1)).await;
//! assert!(stale.is_err_and(|e| e.is_conflict()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::error::{Origin, SnapshotError};
use super::file::{FORMAT_VERSION, Snapshot, decode, to_vec};
use crate::store::{Entry, Expect, Namespace, StorageBackend, StoreError, StoreKey, Versioned};

/// Save `snapshot` as session `session` if `expect` holds; returns the new version.
pub async fn save<T: Serialize>(
    backend: &(impl StorageBackend + ?Sized),
    session: &StoreKey,
    snapshot: &Snapshot<T>,
    expect: Expect,
) -> Result<u64, SnapshotError> {
    let bytes = to_vec(snapshot)?;
    save_bytes(
        backend,
        session,
        bytes,
        snapshot.created_turn,
        FORMAT_VERSION,
        expect,
    )
    .await
}

/// Save already-encoded snapshot bytes (checked to be a readable snapshot first), as they
/// are: the entry's `format_version` is the one the bytes declare.
pub async fn save_raw(
    backend: &(impl StorageBackend + ?Sized),
    session: &StoreKey,
    bytes: Vec<u8>,
    expect: Expect,
) -> Result<u64, SnapshotError> {
    let origin = Origin::Store(session.as_str().to_owned());
    let (snapshot, version): (Snapshot<serde::de::IgnoredAny>, _) =
        super::file::decode_versioned(&bytes, origin)?;
    save_bytes(
        backend,
        session,
        bytes,
        snapshot.created_turn,
        version,
        expect,
    )
    .await
}

async fn save_bytes(
    backend: &(impl StorageBackend + ?Sized),
    session: &StoreKey,
    bytes: Vec<u8>,
    created_turn: u64,
    format_version: u64,
    expect: Expect,
) -> Result<u64, SnapshotError> {
    // serde_json writes UTF-8 only; a failure here would be a serializer bug.
    let text = String::from_utf8(bytes).map_err(|e| SnapshotError::Serialize {
        source: serde::ser::Error::custom(e),
    })?;
    let entry = Entry::new(text)
        .with_meta("created_turn", created_turn)
        .with_meta("format_version", format_version);
    Ok(backend
        .put(&Namespace::SESSIONS, session, entry, expect)
        .await?)
}

/// Load session `session` with its version; `None` when the store has no such session.
pub async fn load<T: DeserializeOwned>(
    backend: &(impl StorageBackend + ?Sized),
    session: &StoreKey,
) -> Result<Option<Versioned<Snapshot<T>>>, SnapshotError> {
    let Some(stored) = backend.get(&Namespace::SESSIONS, session).await? else {
        return Ok(None);
    };
    let origin = Origin::Store(session.as_str().to_owned());
    let snapshot = decode(stored.value.content().as_bytes(), origin)?;
    Ok(Some(Versioned {
        value: snapshot,
        version: stored.version,
    }))
}

/// The raw stored bytes of session `session` (the snapshot file format) with its version.
pub async fn load_raw(
    backend: &(impl StorageBackend + ?Sized),
    session: &StoreKey,
) -> Result<Option<Versioned<String>>, StoreError> {
    Ok(backend
        .get(&Namespace::SESSIONS, session)
        .await?
        .map(|v| Versioned {
            value: v.value.into_parts().0,
            version: v.version,
        }))
}

/// The ids of the sessions in the store, sorted.
pub async fn list(backend: &(impl StorageBackend + ?Sized)) -> Result<Vec<StoreKey>, StoreError> {
    backend.list(&Namespace::SESSIONS, "").await
}
