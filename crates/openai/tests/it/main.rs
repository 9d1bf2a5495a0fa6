//! Integration tests for chef-openai: Chat Completions and Responses compile and parse.
#![cfg(test)]

mod chat;
mod golden;
mod input;
mod parse;
mod responses;
mod roundtrip;

use std::path::PathBuf;

use chef_ir::Request;
use chef_openai::{CompileOptions, Notice};
use serde_json::Value;

/// A file under the workspace's `tests/fixtures`.
pub(crate) fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

/// The shared tool-heavy conversation.
pub(crate) fn tool_heavy() -> Request {
    let text = std::fs::read_to_string(fixture("conversation-tool-heavy.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Chat body as JSON, with its notices.
pub(crate) fn chat_json(request: &Request) -> (Value, Vec<Notice>) {
    chat_json_with(request, &CompileOptions::default())
}

/// Chat body as JSON with options, with its notices.
pub(crate) fn chat_json_with(request: &Request, options: &CompileOptions) -> (Value, Vec<Notice>) {
    let compiled = chef_openai::chat::compile(request, options).unwrap();
    let bytes = chef_openai::chat::to_vec(&compiled).unwrap();
    (serde_json::from_slice(&bytes).unwrap(), compiled.notices)
}

/// Responses body as JSON, with its notices.
pub(crate) fn responses_json(request: &Request) -> (Value, Vec<Notice>) {
    let compiled = chef_openai::responses::compile(request, &CompileOptions::default()).unwrap();
    let bytes = chef_openai::responses::to_vec(&compiled).unwrap();
    (serde_json::from_slice(&bytes).unwrap(), compiled.notices)
}
