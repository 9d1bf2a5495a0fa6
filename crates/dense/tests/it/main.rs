//! Integration tests for chef-dense: the tool-vector cache (with a hand-made table) and,
//! with the `dense` feature, the real models from `CHEF_MINILM_DIR`.
#![cfg(test)]

mod cache;
#[cfg(feature = "dense")]
mod models;

#[path = "../../../../tests/support/fixtures.rs"]
mod fixtures;
