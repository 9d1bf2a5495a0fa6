//! chef: a context-engineering runtime for LLM agents.
//!
//! The runtime (registry, pruning, the dispatch gate, compile, sessions) lands with the
//! runtime issues. Today this crate re-exports the layers below it so that the dependency
//! graph (ir ← compress, providers ← chef ← cli) is fixed from the start.

mod fsutil;
pub mod store;

pub use chef_compress as compress;
pub use chef_ir as ir;
