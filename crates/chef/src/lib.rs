//! chef: a context-engineering runtime for LLM agents.
//!
//! The runtime (registry, pruning, the dispatch gate, compile, sessions) lands with the
//! runtime issues. Today this crate holds the persistence foundation and re-exports the
//! layers below it so that the dependency graph (ir ← compress, providers ← chef ← cli) is
//! fixed from the start.
//!
//! * [`store`]: the namespaced, versioned [`StorageBackend`](store::StorageBackend) trait
//!   with compare-and-set writes, an in-memory and a file-system backend.
//! * [`memory`]: the session's memory entries (TTL in turns, validation hook, change
//!   events, the rendered memory block), persisted through a store.
//! * [`snapshot`]: the versioned on-disk envelope for session snapshots, saved atomically.
//!
//! ```
//! use chef::memory::{Memory, MemoryStyle, SetOptions};
//!
//! let mut memory = Memory::new();
//! memory.set("lang", "Rust", SetOptions::new())?;
//! assert!(memory.render_block(MemoryStyle::Unified).is_some());
//! # Ok::<(), chef::memory::MemoryError>(())
//! ```

mod fsutil;
pub mod memory;
pub mod snapshot;
pub mod store;

pub use chef_compress as compress;
pub use chef_ir as ir;
