//! The memory module's error type.

use crate::store::{InvalidKey, StoreError};

/// What a memory operation can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemoryError {
    /// The key is not a valid store key (see [`StoreKey`](crate::store::StoreKey)).
    #[error(transparent)]
    InvalidKey(#[from] InvalidKey),
    /// An allow-list is configured and does not contain the key.
    #[error("memory key {key:?} is not allowed")]
    NotAllowed {
        /// The key refused.
        key: String,
        /// The keys that are allowed, in configured order (possibly empty).
        allowed: Vec<String>,
    },
    /// The operation needs an existing entry and there is none.
    #[error("no memory entry with key {key:?}")]
    NotFound {
        /// The key looked up.
        key: String,
    },
    /// The validation hook refused the write.
    #[error("the write to memory key {key:?} was rejected: {reason}")]
    Rejected {
        /// The key written to.
        key: String,
        /// The hook's reason.
        reason: String,
    },
    /// A validated write's value or description is longer than the limit
    /// ([`Memory::with_max_value_chars`](super::Memory::with_max_value_chars)).
    #[error("the {field} for memory key {key:?} is {chars} characters long; the limit is {limit}")]
    TooLong {
        /// The key written to.
        key: String,
        /// `"value"` or `"description"`.
        field: &'static str,
        /// Its length in characters (Unicode scalar values).
        chars: usize,
        /// The limit.
        limit: usize,
    },
    /// A stored entry's metadata could not be decoded.
    #[error("stored memory entry {key:?} is corrupt")]
    CorruptEntry {
        /// The key of the entry.
        key: String,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
    /// The store failed; [`StoreError::Conflict`] means another writer changed a key since it
    /// was loaded and the change could not safely be re-applied (see
    /// [`Memory::persist`](super::Memory::persist)): [`Memory::load`](super::Memory::load)
    /// again, re-apply, persist.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl MemoryError {
    /// `true` when the store refused a write because another writer got there first.
    pub fn is_conflict(&self) -> bool {
        matches!(self, Self::Store(e) if e.is_conflict())
    }
}
