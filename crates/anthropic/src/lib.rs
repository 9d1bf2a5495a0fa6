//! Compile a provider-neutral chef request into Anthropic Messages JSON, and parse replies.
//!
//! ```
//! use chef_anthropic::{CompileOptions, compile, parse_response};
//! use chef_ir::{Message, Request, ToolDefinition};
//! use serde_json::json;
//!
//! let tool = ToolDefinition::new("triangle_properties.get", json!({"type": "object"}));
//! let request = Request::new(vec![
//!     Message::system("Be terse.").with_cache_breakpoint(true),
//!     Message::user("Area of a 3-4-5 triangle?"),
//! ])
//! .with_tools(vec![tool]);
//!
//! let compiled = compile(&request, &CompileOptions::default().with_max_tokens(512))?;
//! let body = compiled.to_vec()?; // POST this to /v1/messages
//! assert!(String::from_utf8(body)?.contains(r#""name":"triangle_properties_get""#));
//!
//! // The reply names the tool by its wire name; parsing maps it back.
//! let reply = br#"{"id":"msg_1","type":"message","role":"assistant","model":"m",
//!   "content":[{"type":"tool_use","id":"toolu_1","name":"triangle_properties_get","input":{"a":3}}],
//!   "stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}}"#;
//! let parsed = parse_response(reply, &compiled.names)?;
//! assert_eq!(parsed.message.tool_calls().next().unwrap().name, "triangle_properties.get");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What goes where
//!
//! [`compile`] turns an assembled [`chef_ir::Request`] into a [`wire::Request`] that borrows
//! the IR (no schema or text is copied), plus the tool-name table and the [`Notice`]s for
//! everything Anthropic cannot express as asked; see the `compile` module docs for each
//! decision. [`envelope`] shapes a bare tool set (and a system preamble), for compressed
//! tool sets. [`parse_response`] reads a reply, [`parse_request`] reads a whole request
//! (the input adapter) and repairs its history ([`repair_history`]). [`CacheAudit`] checks a
//! compiled request for volatile text inside the cached prefix. [`compose_tool_search`]
//! defers all but the tools kept loaded and adds Anthropic's tool-search server tool.
//! [`SseDecoder`] and [`Assembler`] turn a streamed reply into the same
//! [`ParsedResponse`] as a whole one. [`Anthropic`] is the crate as a
//! [`chef_ir::provider::Provider`] and a [`chef_ir::relay::Relay`] (a gateway relaying
//! Messages replies, streamed or whole).
//!
//! Blocks this crate does not model (server tools' `server_tool_use`,
//! `web_search_tool_result`, `tool_search_tool_result`, …) are kept as
//! [`chef_ir::Content::Unknown`] and compile back byte for byte.
#![warn(clippy::exhaustive_structs, clippy::exhaustive_enums)]

mod audit;
mod compile;
mod error;
pub mod layout;
mod parse;
mod provider;
mod relay;
mod stream;
mod tool_search;
pub mod wire;

pub use chef_ir as ir;
/// The server-sent-event decoder (from `chef-ir`, shared by every provider crate).
pub use chef_ir::sse::{SseDecoder, SseError, SseEvent};
/// History repair's placeholder texts and its report (from `chef-ir`, shared by every
/// provider crate).
pub use chef_ir::{PH_CONTINUES, PH_NO_RESULT, Repair};

pub use crate::{
    audit::{CacheAudit, CacheIssue, IssueKind, Marker},
    compile::{
        CompileOptions, Compiled, Envelope, MAX_BREAKPOINTS, Notice, compile, envelope,
        prefill_instruction, to_vec,
    },
    error::{Error, Result},
    parse::{
        ParsedRequest, ParsedResponse, parse_request, parse_request_value, parse_response,
        parse_response_value, repair_history, request_to_ir,
    },
    provider::Anthropic,
    stream::Assembler,
    tool_search::{KeepLoaded, ToolSearch, ToolSearchSet, compose_tool_search},
};

const _: fn() = || {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<Compiled<'static>>();
    assert_send_sync::<ParsedResponse>();
    assert_send_sync::<Error>();
};
