//! Integration tests for chef-ir: serde round trips and tool loading.
#![cfg(test)]

mod load;
mod serde_roundtrip;

use std::path::PathBuf;

/// A file under the workspace's `tests/fixtures`.
pub(crate) fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}
