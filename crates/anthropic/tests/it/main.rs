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

use std::path::PathBuf;

use chef_anthropic::{CompileOptions, Compiled, compile};
use chef_ir::Request;
use serde_json::Value;

/// A file under the workspace's `tests/fixtures`.
pub(crate) fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

/// The shared tool-heavy conversation.
pub(crate) fn conversation() -> Request {
    let text = std::fs::read_to_string(fixture("conversation-tool-heavy.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The 149-tool corpus.
pub(crate) fn real_tools() -> Vec<chef_ir::ToolDefinition> {
    let text = std::fs::read_to_string(fixture("real-mcp-tools.json")).unwrap();
    chef_ir::load_tools_from_str(&text).unwrap().tools
}

/// Compiles with default options.
pub(crate) fn compiled(request: &Request) -> Compiled<'_> {
    compile(request, &CompileOptions::default()).unwrap()
}

/// The compiled body as a JSON value.
pub(crate) fn body(request: &Request) -> Value {
    serde_json::from_slice(&compiled(request).to_vec().unwrap()).unwrap()
}
