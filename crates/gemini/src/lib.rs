//! Compile a provider-neutral chef request into Gemini `generateContent` JSON, and parse
//! Gemini replies and request bodies back into it.
//!
//! ```
//! use chef_ir::{Content, Message, Request, ToolCall, ToolDefinition, ToolResult};
//! use serde_json::json;
//!
//! let tool = ToolDefinition::new("triangle.area", json!({
//!     "type": "object",
//!     "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
//!     "additionalProperties": false
//! }));
//! let request = Request::new(vec![
//!     Message::system("You compute."),
//!     Message::user("Area of 3 by 4?"),
//!     Message::assistant_with(vec![Content::ToolCall(ToolCall::new(
//!         "c1", "triangle.area", json!({"a": 3, "b": 4}),
//!     ))]),
//!     Message::tool_results(vec![ToolResult::text("c1", "6")]),
//! ])
//! .with_tools(vec![tool]);
//!
//! let compiled = chef_gemini::compile(&request, &Default::default())?;
//! let body = String::from_utf8(chef_gemini::to_vec(&compiled)?)?;
//! assert!(body.contains(r#"{"functionResponse":{"name":"triangle.area","response":{"output":"6"}}}"#));
//!
//! let reply = br#"{"candidates":[{"content":{"role":"model","parts":[{"text":"6."}]},"finishReason":"STOP"}]}"#;
//! let parsed = chef_gemini::parse_response(reply, &compiled.names, &request.messages)?;
//! assert_eq!(parsed.message.text(), "6.");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Shape
//!
//! - [`wire`]: the Gemini JSON, field for field; parts chef does not model stay raw.
//! - [`compile`]: IR → wire, with [`Notice`]s for everything Gemini cannot express (the
//!   module docs of [`compile`] list the mapping and where it departs from the reference).
//!   [`compile_with`] can leave the tools out ([`ToolPass::Skip`]) for a caller that keeps
//!   their serialised bytes and notices; [`to_vec_with_tools_at`] says where they go.
//! - [`envelope`]: function tools (plus a system preamble) in Gemini's shape, for
//!   compressed tool sets; [`clean_schema`]: the schema repairs it applies.
//! - [`parse_response`] / [`parse_request`]: wire → IR, with history repair (providers.md
//!   §4) on request bodies.
//!
//! # Byte stability
//!
//! The same request always compiles to the same bytes: struct fields serialise in
//! declaration order, schemas and arguments keep their key order (`preserve_order`),
//! nothing is re-parsed or re-formatted, and the name table depends only on the set of
//! names. `systemInstruction` and `tools` serialise before `contents`, so an unchanged
//! prefix stays a byte prefix ([`Compiled::cache_prefix`]).
#![warn(clippy::exhaustive_structs, clippy::exhaustive_enums)]

mod compile;
mod envelope;
mod error;
pub mod layout;
mod names;
mod notice;
mod options;
mod parse;
mod prefill;
mod provider;
mod schema;
mod serialise;
pub mod wire;

pub use chef_ir as ir;
/// What [`compile_with`] does with the tools (from `chef-ir`, shared by every provider crate).
pub use chef_ir::ToolPass;
/// The compaction header and history repair's placeholder texts (from `chef-ir`, shared by
/// every provider crate).
pub use chef_ir::{COMPACTION_HEADER, PH_CONTINUES, PH_NO_RESULT};

/// The thought signature sent on the first call of a model turn Gemini did not write (a
/// call another provider made): the value Google's thought-signature guide gives for calls
/// whose signature cannot be had, which Gemini 3 accepts in place of one (it refuses a
/// step whose first call has none). It is sent without a notice: the same rule on every
/// request (docs/PROVIDERS.md).
pub const STAND_IN_SIGNATURE: &str = "skip_thought_signature_validator";

pub use crate::{
    compile::{Compiled, compile, compile_with},
    envelope::{Envelope, envelope},
    error::{Error, Result},
    notice::Notice,
    options::{CompileOptions, SchemaMode, ThinkingMode},
    parse::{ParsedResponse, parse_request, parse_response, request_from_wire},
    prefill::prefill_enforcement,
    provider::Gemini,
    schema::{MAX_DEPTH, clean_schema},
    serialise::{to_vec, to_vec_with_tools_at},
};

const _: fn() = || {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<Compiled<'static>>();
    assert_send_sync::<Envelope<'static>>();
    assert_send_sync::<ParsedResponse>();
    assert_send_sync::<Error>();
};
