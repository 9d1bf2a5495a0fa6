//! Integration tests for chef-anthropic: compile rules, golden files, determinism, response
//! and request parsing, history repair, the cache audit, and IR round trips.
#![cfg(test)]

mod audit;
mod compile;
mod determinism;
mod golden;
mod parse_request;
mod parse_response;
mod repair;
mod roundtrip;
mod stream;

#[path = "../../../../tests/support/child.rs"]
mod child;
#[path = "../../../../tests/support/fixtures.rs"]
mod fixtures;
#[path = "../../../../tests/support/messages.rs"]
mod messages;

use chef_anthropic::{CompileOptions, Compiled, compile};
use chef_ir::Request;
use serde_json::Value;

pub(crate) use fixtures::{conversation, real_tools};

/// Compiles with default options.
pub(crate) fn compiled(request: &Request) -> Compiled<'_> {
    compile(request, &CompileOptions::default()).unwrap()
}

/// The compiled body as a JSON value.
pub(crate) fn body(request: &Request) -> Value {
    serde_json::from_slice(&compiled(request).to_vec().unwrap()).unwrap()
}
