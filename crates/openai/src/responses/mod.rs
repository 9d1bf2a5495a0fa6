//! OpenAI Responses (`POST /v1/responses`).
//!
//! [`compile`] turns an IR request into a body, [`to_vec`] serialises it, and
//! [`parse_response`] / [`parse_request`] read replies and whole requests back.
//!
//! # Provider state in the IR
//!
//! Reasoning models return `reasoning` items (with `encrypted_content` when asked) that
//! must be sent back, verbatim and in place, on the next turn. The IR keeps each one as
//! `Content::Unknown { target: Some(Target::OpenAiResponses), value }` inside the
//! assistant message, at its position among the turn's text and calls; so are item kinds
//! chef does not model (`web_search_call`, `tool_search_call`, `tool_search_output`, …).
//! Other targets leave them out (with a notice).
//!
//! The API pairs a reasoning item with the item after it by that item's `id` (`fc_…`,
//! `msg_…`); a history replayed without those ids is refused. The typed IR blocks have no
//! slot for them, so the parsers keep a **header**: a `Content::Unknown` of this target
//! whose `type` is `message` or `function_call` and which holds the item's other fields
//! (`{"type":"function_call","id":"fc_1","status":"completed"}`), placed right before the
//! text blocks or the call it belongs to. A message header also holds the item's
//! `content` as received when a part carries annotations (citations) or logprobs. [`compile`] merges a header back into the next
//! message item or `function_call` item instead of sending it alone, and sends the
//! received parts instead of rebuilt ones while their texts are unchanged. A header whose call
//! was removed simply merges into the next call, or is dropped with the turn.
//!
//! # Tool search
//!
//! OpenAI documents tool search for the Responses API: a `{"type":"tool_search"}` tool in
//! `tools`, and `defer_loading: true` on the functions (or namespaces) it may load. Put
//! the search tool in [`chef_ir::Request::native_tools`] for
//! [`chef_ir::Target::OpenAiResponses`]; [`compile`] then sends `defer_loading` for
//! deferred tools. Without it, `defer_loading` is not sent (a
//! [`crate::Notice::DeferLoadingIgnored`] says so). The `tool_search_call` /
//! `tool_search_output` items it produces are kept verbatim like any unknown item.

mod compile;
mod parse;
pub mod wire;

pub use self::{
    compile::{Compiled, compile, compile_with},
    parse::{parse_request, parse_response},
};
use crate::error::Result;

/// OpenAI's documented tool-search tool, `{"type":"tool_search"}`, as a native tool for
/// [`chef_ir::Target::OpenAiResponses`]. Offer it beside tools marked `defer_loading` to
/// let the model load their definitions on demand (the search runs on OpenAI's side).
///
/// ```
/// use chef_ir::{Message, Request, ToolDefinition};
/// use chef_openai::{CompileOptions, responses};
/// use serde_json::json;
///
/// let request = Request::new(vec![Message::user("hi")])
///     .with_tools(vec![
///         ToolDefinition::new("search_docs", json!({"type": "object"})),
///         ToolDefinition::new("archive", json!({"type": "object"})).with_defer_loading(true),
///     ])
///     .with_native_tools(vec![responses::tool_search()]);
/// let body = responses::to_vec(&responses::compile(&request, &CompileOptions::default())?)?;
/// let body = String::from_utf8(body)?;
/// assert!(body.contains(r#""defer_loading":true},{"type":"tool_search"}]"#));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn tool_search() -> chef_ir::NativeTool {
    let mut value = serde_json::Map::new();
    value.insert(
        "type".to_owned(),
        serde_json::Value::String("tool_search".to_owned()),
    );
    chef_ir::NativeTool {
        targets: vec![chef_ir::Target::OpenAiResponses],
        value: serde_json::Value::Object(value),
    }
}

serialisers! {
    prefix: "`tools`, `instructions` and the items within [`Compiled::stable_items`].",
    envelope: "a Responses body: `{\"tools\":[…],\"instructions\":…,\"input\":[]}`.",
}
