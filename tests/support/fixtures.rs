//! The workspace's shared test fixtures (`tests/fixtures/`), read the same way by every
//! crate's integration tests, which include this file as a module:
//!
//! ```ignore
//! #[path = "../../../../tests/support/fixtures.rs"]
//! mod fixtures;
//! ```
#![allow(dead_code, reason = "each crate's tests use some of these")]

use std::path::PathBuf;

/// A file under the workspace's `tests/fixtures` (from the including crate's directory).
pub(crate) fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

/// The text of a file under `tests/fixtures`.
pub(crate) fn fixture_text(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap()
}

/// The shared tool-heavy conversation, `conversation-tool-heavy.json`.
pub(crate) fn conversation() -> chef_ir::Request {
    serde_json::from_str(&fixture_text("conversation-tool-heavy.json")).unwrap()
}

/// The 149 real MCP tools, `real-mcp-tools.json`.
pub(crate) fn real_tools() -> Vec<chef_ir::ToolDefinition> {
    chef_ir::load_tools_from_str(&fixture_text("real-mcp-tools.json"))
        .unwrap()
        .tools
}
