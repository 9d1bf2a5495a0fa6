//! Integration tests for chef-openai: Chat Completions and Responses compile and parse.
#![cfg(test)]

/// Asserts some notice in `$notices` matches `$pattern`.
macro_rules! assert_any_notice {
    ($notices:expr, $pattern:pat) => {
        assert!($notices.iter().any(|n| matches!(n, $pattern)))
    };
}

mod chat;
mod golden;
mod input;
mod parse;
mod response_format;
mod responses;
mod roundtrip;

#[path = "../../../../tests/support/child.rs"]
mod child;
#[path = "../../../../tests/support/fixtures.rs"]
mod fixtures;

use chef_ir::{Attachment, Content, Message, Request, Role, ToolCall, ToolResult};
use chef_openai::{CompileOptions, Notice};
use serde_json::{Value, json};

pub(crate) use fixtures::{conversation as tool_heavy, real_tools};

/// Chat body as the exact text sent, compiled with default options.
pub(crate) fn chat_bytes(request: &Request) -> String {
    let compiled = chef_openai::chat::compile(request, &CompileOptions::default()).unwrap();
    String::from_utf8(chef_openai::chat::to_vec(&compiled).unwrap()).unwrap()
}

/// Responses body as the exact text sent, compiled with default options.
pub(crate) fn responses_bytes(request: &Request) -> String {
    let compiled = chef_openai::responses::compile(request, &CompileOptions::default()).unwrap();
    String::from_utf8(chef_openai::responses::to_vec(&compiled).unwrap()).unwrap()
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

/// A small PNG attachment, `AAA`.
pub(crate) fn png() -> Content {
    Content::Attachment(Attachment::base64("image/png", "AAA"))
}

/// One user turn, `text` (none: no text part) then [`png`], with the prefill `PRE`.
pub(crate) fn prefilled_image(text: Option<&str>) -> Request {
    let parts = text.map(Content::text).into_iter().chain([png()]).collect();
    Request::new(vec![Message::new(Role::User, parts)]).with_prefill("PRE")
}

/// A user turn `q`, the assistant's call `c` of `f`, its result `r`, then the prefill `PRE`.
pub(crate) fn prefilled_after_tool_result() -> Request {
    Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![Content::ToolCall(ToolCall::new("c", "f", json!({})))]),
        Message::tool_results(vec![ToolResult::text("c", "r")]),
    ])
    .with_prefill("PRE")
}

/// The result of call `id`: `text`, then [`png`].
pub(crate) fn result_with_image(id: &str, text: &str) -> ToolResult {
    let mut result = ToolResult::text(id, text);
    result.content.push(png());
    result
}
