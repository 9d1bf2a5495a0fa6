//! Session snapshots on disk: a versioned JSON envelope around any serializable payload.
//!
//! The session's full snapshot type lands with the compile pipeline; the file format and
//! its guarantees are fixed here, generic over the payload. See [`file`](mod@file) for the format,
//! and [`store`](mod@store) for snapshots kept in a [`StorageBackend`](crate::store::StorageBackend)
//! with versions and compare-and-set (many workers, one truth). [`SnapshotTools`] is how a
//! session snapshot carries its tools: shared with the registry when taken, left as JSON
//! text when read, and parsed on restore only if the restoring session's tools differ.

mod error;
pub mod file;
pub mod journal;
pub(crate) mod state;
pub mod store;
mod tools;

pub use self::error::{Origin, SnapshotError};
pub use self::file::{
    FORMAT, FORMAT_VERSION, MAX_NESTING, MAX_SNAPSHOT_FILE_BYTES, Snapshot, from_slice, load, save,
    to_vec,
};
pub use self::state::{RestoreOptions, SessionState};
pub use self::tools::SnapshotTools;
