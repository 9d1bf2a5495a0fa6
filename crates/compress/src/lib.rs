//! Tool-schema compression for chef: levels 0–4, resolving a model's call back to the real
//! tool with validation against the original schema, level recommendation, statistics and
//! the catalogue search index.
//!
//! Compression itself lands with the chef-compress issues; this crate currently carries the
//! token counter shared by the CLI and the statistics.

pub mod similarity;
#[cfg(feature = "tokens")]
pub mod tokens;
pub mod validate;
