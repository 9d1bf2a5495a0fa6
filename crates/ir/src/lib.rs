//! Provider-neutral types for chef: messages, tool definitions, tool calls and requests.
//!
//! This is the contract crate at the bottom of the workspace. It is plain data and serde:
//! no I/O, no async, no provider knowledge. Provider crates (`chef-anthropic`,
//! `chef-openai`, `chef-gemini`) compile a [`Request`] into their wire JSON and parse
//! replies back into it; `chef-compress` rewrites [`ToolDefinition`]s; the `chef` runtime
//! assembles requests turn by turn.
//!
//! ```
//! use chef_ir::{Message, Request, ToolDefinition};
//! use serde_json::json;
//!
//! let weather = ToolDefinition::new("get_weather", json!({
//!     "type": "object",
//!     "properties": {"city": {"type": "string"}},
//!     "required": ["city"]
//! }))
//! .with_description("Current weather for a city.");
//!
//! let request = Request::new(vec![
//!     Message::system("You are terse."),
//!     Message::user("Weather in Oslo?"),
//! ])
//! .with_tools(vec![weather]);
//! assert_eq!(request.tools[0].name.as_str(), "get_weather");
//! ```
//!
//! # Loading tools users already hold
//!
//! [`load_tools`] reads the tool shapes found in the wild (MCP, Anthropic, OpenAI Chat,
//! OpenAI Responses, Gemini, bare) and auto-detects the shape of each entry; see
//! [`ToolShape`].
//!
//! # Interop with Rust agent stacks
//!
//! Optional, versioned Cargo features convert chef's types to and from the types other
//! Rust crates use; see [`interop`]:
//!
//! - `rmcp3`: rmcp 3.x model types (`Tool`, `ToolAnnotations`, `CallToolRequestParams`).
//! - `async_openai043`: async-openai 0.43 chat-completions and responses tool types
//!   (types only, no HTTP client).
//!
//! # What every provider does alike
//!
//! [`repair_history`] makes a parsed history one every provider accepts (each input
//! adapter runs it, reporting a [`Repair`] per change), and [`compaction_text`] and
//! [`prefill_enforcement`] are the texts that stand in for what a target cannot carry.
//!
//! # What a provider crate implements
//!
//! [`provider::Provider`] is the one trait every provider crate implements (compile into a
//! [`layout::Layout`], parse a reply and a request, its name rule); the runtime's
//! per-target compile is generic over it. [`relay::Relay`] is what a gateway asks of a
//! provider whose replies it relays, streamed or whole, over the shared [`sse`] decoder.
//!
//! # Tool calls written as text
//!
//! Models that do not emit native tool calls (small local models behind an
//! OpenAI-compatible server) write them into the reply's text: fenced JSON, a bare JSON
//! object, `<tool_call>` tags. [`find_text_calls`] finds them and [`recover_text_calls`]
//! turns them into ordinary tool calls of a parsed reply; both are opt-in (nothing calls
//! them for you).
//!
//! # Byte stability
//!
//! Every type serialises its fields in declaration order, optional fields are omitted when
//! absent, and JSON objects keep their authored key order (the workspace enables
//! `serde_json/preserve_order`). Identical values therefore always serialise to identical
//! bytes.

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod interop;
pub mod json_scan;
pub mod layout;
mod load;
mod message;
pub mod provider;
pub mod relay;
mod repair;
mod request;
pub mod sse;
mod stand_in;
mod target;
mod text_call;
mod tool;
mod wire_name;

pub use crate::{
    load::{
        LoadError, LoadedTools, ToolLocation, ToolShape, for_each_tool, load_tools,
        load_tools_from_str,
    },
    message::{Attachment, AttachmentSource, Content, Message, Role, ToolResult},
    repair::{
        PH_CONTINUES, PH_NO_RESULT, Repair, RepairOptions, Repaired, placeholder_result,
        repair_history,
    },
    request::{NativeTool, Request, ToolPass},
    stand_in::{COMPACTION_HEADER, PrefillWording, compaction_text, prefill_enforcement},
    target::Target,
    text_call::{
        TEXT_CALL_ID_PREFIX, TextCall, TextCallBlock, find_pythonic_calls, find_text_calls,
        recover_pythonic_calls, recover_text_calls,
    },
    tool::{ToolAnnotations, ToolCall, ToolCallId, ToolDefinition, ToolName},
    wire_name::{CallIdRule, NameRule, WireNames},
};

/// The kind of a JSON value with its article, for messages a model or a user reads:
/// `"null"`, `"a boolean"`, `"a number"`, `"a string"`, `"an array"`, `"an object"`.
///
/// ```
/// assert_eq!(chef_ir::json_kind(&serde_json::json!([1])), "an array");
/// ```
pub fn json_kind(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `serde(skip_serializing_if)` helper: omit `false` flags.
pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

const _: fn() = || {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<Request>();
    assert_send_sync::<ToolDefinition>();
    assert_send_sync::<LoadError>();
    assert_send_sync::<provider::Compiled>();
    assert_send_sync::<relay::Echo>();
    assert_send_sync::<relay::RelayError>();
    assert_send_sync::<sse::SseDecoder>();
    assert_send_sync::<sse::SseError>();
};
