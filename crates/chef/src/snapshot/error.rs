//! The snapshot file error type.

use std::fmt;
use std::path::PathBuf;

/// Where snapshot bytes came from, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A file.
    File(PathBuf),
    /// Bytes handed to [`from_slice`](super::from_slice).
    Bytes,
    /// A session stored in a [`StorageBackend`](crate::store::StorageBackend), by id.
    Store(String),
    /// A record of a session's [journal](super::journal).
    Journal {
        /// The session id.
        session: String,
        /// The record number.
        seq: u64,
    },
}

impl SnapshotError {
    /// `true` when the store refused a save because another writer saved first.
    pub fn is_conflict(&self) -> bool {
        matches!(self, Self::Store(e) if e.is_conflict())
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(path) => write!(f, "snapshot file {}", path.display()),
            Self::Bytes => f.write_str("the snapshot data"),
            Self::Store(id) => write!(f, "stored session {id:?}"),
            Self::Journal { session, seq } => {
                write!(f, "journal record {seq} of session {session:?}")
            }
        }
    }
}

/// What saving or loading a snapshot can fail with. A failed load changes nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// Reading or writing the file failed.
    #[error("snapshot i/o failed at {}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The bytes are not valid JSON, are truncated or empty, or the envelope or payload does
    /// not have the expected shape.
    #[error("{origin} is corrupt")]
    Corrupt {
        /// Where the bytes came from.
        origin: Origin,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
    /// The file was written by a newer chef with a format this build cannot read.
    #[error("{origin} has format version {found}; this build reads up to {supported}")]
    NewerVersion {
        /// Where the bytes came from.
        origin: Origin,
        /// The version in the file.
        found: u64,
        /// The newest version this build reads.
        supported: u64,
    },
    /// Valid JSON, but not a chef snapshot (no `"format": "chef-snapshot"`).
    #[error("{origin} is not a chef snapshot")]
    NotASnapshot {
        /// Where the bytes came from.
        origin: Origin,
    },
    /// The store failed; [`StoreError::Conflict`](crate::store::StoreError::Conflict) means
    /// another worker saved the session since it was loaded.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// The payload could not be serialized (for example a map with non-string keys).
    #[error("snapshot payload could not be serialized")]
    Serialize {
        /// The serialization error.
        #[source]
        source: serde_json::Error,
    },
    /// The session nests deeper than a snapshot may hold
    /// ([`MAX_NESTING`](super::MAX_NESTING)): a load could not read it back, so nothing
    /// was written.
    #[error(
        "the session nests {depth} levels deep, deeper than the {limit} a snapshot may hold; \
         nothing was saved"
    )]
    TooDeep {
        /// How deep the serialized session nests.
        depth: usize,
        /// [`MAX_NESTING`](super::MAX_NESTING).
        limit: usize,
    },
}
