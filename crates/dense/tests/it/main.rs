//! Integration tests for chef-dense: the tool-vector cache (with a hand-made table) and,
//! with the `dense` feature, the real models from `CHEF_MINILM_DIR`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test helpers fail loudly"
)]

mod cache;
#[cfg(feature = "dense")]
mod models;
