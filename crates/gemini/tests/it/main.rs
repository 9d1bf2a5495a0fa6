//! Integration tests for chef-gemini: the spec checklist, golden files, determinism,
//! response and request parsing, round trips and the schema repairs.
#![cfg(test)]

mod checklist;
mod determinism;
mod golden;
mod parse;
mod roundtrip;
mod schema;

use std::path::PathBuf;

use chef_gemini::{CompileOptions, Compiled, Notice};
use chef_ir::{Request, ToolDefinition};
use serde_json::Value;

/// A file under the workspace's `tests/fixtures`.
pub(crate) fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

/// The shared tool-heavy conversation.
pub(crate) fn conversation() -> Request {
    serde_json::from_str(&std::fs::read_to_string(fixture("conversation-tool-heavy.json")).unwrap())
        .unwrap()
}

/// The 149 real MCP tools.
pub(crate) fn corpus() -> Vec<ToolDefinition> {
    chef_ir::load_tools_from_str(&std::fs::read_to_string(fixture("real-mcp-tools.json")).unwrap())
        .unwrap()
        .tools
}

/// Compiles with default options.
pub(crate) fn compile(request: &Request) -> Compiled<'_> {
    chef_gemini::compile(request, &CompileOptions::default()).unwrap()
}

/// The compiled body as a JSON value.
pub(crate) fn body(request: &Request) -> Value {
    serde_json::to_value(&compile(request).body).unwrap()
}

/// The compiled body as compact JSON text.
pub(crate) fn text(compiled: &Compiled<'_>) -> String {
    String::from_utf8(chef_gemini::to_vec(compiled).unwrap()).unwrap()
}

/// Asserts the compile reported `notice`.
#[track_caller]
pub(crate) fn assert_notice(compiled: &Compiled<'_>, notice: &Notice) {
    assert!(compiled.notices.contains(notice), "{:?}", compiled.notices);
}
