//! The store's error type.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use super::key::{InvalidKey, InvalidNamespace, Namespace, StoreKey};

/// What a store operation can fail with.
///
/// [`StoreError::Conflict`] is the one a caller is expected to handle: reload the key, apply
/// the change again, write with the new version.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The key could escape the store root or cannot be stored.
    #[error(transparent)]
    InvalidKey(#[from] InvalidKey),
    /// The namespace name is not a single safe segment.
    #[error(transparent)]
    InvalidNamespace(#[from] InvalidNamespace),
    /// A compare-and-set write found another version than the one it expected. `current` is
    /// the version stored now (`None`: the key is absent).
    #[error("write conflict on {namespace}/{key}: stored version is {}", display_version(*.current))]
    Conflict {
        /// The namespace written to.
        namespace: Namespace,
        /// The key written to.
        key: StoreKey,
        /// The version stored now, `None` when the key is absent.
        current: Option<u64>,
    },
    /// Another holder has a lease on the session until `until`.
    #[error("session {session} is leased by {holder:?} until {}", display_time(*.until))]
    Leased {
        /// The session claimed.
        session: StoreKey,
        /// Who holds the lease.
        holder: String,
        /// When the lease ends unless renewed (on the backend's clock).
        until: SystemTime,
    },
    /// A lease could not be renewed: it expired and another holder took the session over,
    /// or it was released.
    #[error("lease of {holder:?} on session {session} was lost")]
    LeaseLost {
        /// The session.
        session: StoreKey,
        /// The holder whose lease was lost.
        holder: String,
    },
    /// A lease holder name is empty, too long or contains a control character.
    #[error("invalid lease holder {holder:?}: use 1 to 200 bytes without control characters")]
    InvalidHolder {
        /// The name as given.
        holder: String,
    },
    /// A stored entry could not be decoded.
    #[error("store entry at {path} is corrupt")]
    Corrupt {
        /// Where the entry lives (a file path for the file-system backend).
        path: PathBuf,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
    /// An I/O operation failed.
    #[error("store i/o failed at {path}")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A store URL the backend cannot read (a PostgreSQL connection URL that does not
    /// parse): the caller's input, not a failure of the store.
    #[error("invalid store URL: {message}")]
    InvalidUrl {
        /// What is wrong with it (never the URL itself, which may hold a password).
        message: String,
    },
    /// The backend failed for a reason of its own (a lost connection, a worker thread that
    /// panicked).
    #[error("store backend failed: {message}")]
    Backend {
        /// What happened.
        message: String,
        /// The cause, when there is one.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
}

fn display_version(version: Option<u64>) -> String {
    match version {
        Some(v) => v.to_string(),
        None => "absent".to_owned(),
    }
}

fn display_time(t: SystemTime) -> String {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => format!(
            "{}.{:03}s after the Unix epoch",
            d.as_secs(),
            d.subsec_millis()
        ),
        Err(_) => "before the Unix epoch".to_owned(),
    }
}

impl StoreError {
    /// `true` for [`StoreError::Conflict`].
    pub fn is_conflict(&self) -> bool {
        matches!(self, Self::Conflict { .. })
    }

    /// `true` for [`StoreError::Leased`].
    pub fn is_leased(&self) -> bool {
        matches!(self, Self::Leased { .. })
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}

/// `Result` with [`StoreError`].
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
