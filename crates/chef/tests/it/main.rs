//! Integration tests for chef: the store (one conformance suite for every backend, plus
//! file-system specifics), memory, snapshot files and crash safety.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test helpers fail loudly"
)]

mod crash;
mod hostile;
mod memory;
mod snapshot_file;
mod store_conformance;
mod store_fs;
mod store_processes;
