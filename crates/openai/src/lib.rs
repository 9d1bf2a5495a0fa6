//! Compile a provider-neutral chef request into OpenAI Chat Completions and Responses JSON,
//! and parse replies.
//!
//! The wire mapping lands with the provider-crates issue; the crate exists now so that the
//! dependency graph (ir ← providers ← chef) is fixed from the start.

pub use chef_ir as ir;
