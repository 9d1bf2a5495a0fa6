//! Integration tests for chef-ir: serde round trips and tool loading.
#![cfg(test)]

mod load;
mod serde_roundtrip;
mod toy_provider;

#[path = "../../../../tests/support/fixtures.rs"]
mod fixtures;

pub(crate) use fixtures::fixture;
