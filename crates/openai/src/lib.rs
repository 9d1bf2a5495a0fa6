//! Compile a provider-neutral chef request into OpenAI Chat Completions and Responses
//! JSON, and parse replies and requests back.
//!
//! ```
//! use chef_ir::{Message, Request, ToolDefinition};
//! use chef_openai::{CompileOptions, chat, responses};
//! use serde_json::json;
//!
//! let request = Request::new(vec![
//!     Message::system("Be terse."),
//!     Message::user("Weather in Oslo?"),
//! ])
//! .with_tools(vec![ToolDefinition::new("weather.get", json!({"type": "object"}))]);
//!
//! let compiled = chat::compile(&request, &CompileOptions::default())?;
//! let body = String::from_utf8(chat::to_vec(&compiled)?)?;
//! assert!(body.starts_with(r#"{"tools":[{"type":"function","function":{"name":"weather_get""#));
//!
//! let compiled = responses::compile(&request, &CompileOptions::default())?;
//! let body = String::from_utf8(responses::to_vec(&compiled)?)?;
//! assert!(body.contains(r#""instructions":"Be terse.""#));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Two APIs, one crate
//!
//! [`chat`] targets `POST /v1/chat/completions` (nested function tools, `tool_calls`
//! with JSON-text arguments, one `tool` message per result, system messages inline).
//! [`responses`] targets `POST /v1/responses` (flat function tools, `instructions`,
//! input items joined by `call_id`, reasoning items echoed back). Each has a `wire`
//! module mirroring the JSON, `compile`, `to_vec`, `parse_response` and `parse_request`,
//! and `compile_with`, which can leave the tools out ([`ToolPass::Skip`]) for a caller
//! that keeps their serialised bytes and notices from an earlier compile. [`Chat`] and
//! [`Responses`] are the two as a [`chef_ir::provider::Provider`], and as a
//! [`chef_ir::relay::Relay`] (a gateway relaying their replies, streamed or whole).
//!
//! # Nothing silent
//!
//! What a target cannot express is reported as a [`Notice`] beside the body. Content
//! the reference library drops (media when a prefill is degraded, documents by URL,
//! unknown reply kinds) is kept.
//!
//! # Tool names
//!
//! OpenAI accepts tool names matching `^[a-zA-Z0-9_-]{1,64}$`. Other names are mapped
//! through [`chef_ir::WireNames`] with [`chef_ir::NameRule::OPENAI`]; the table is
//! returned with the compiled body and maps names back when parsing a reply.
//!
//! # Arguments that are not JSON
//!
//! The IR holds parsed call arguments. When a model writes argument text that is not
//! valid JSON (or is a bare JSON string), the parsers keep the raw text as a JSON string
//! value, and the compilers send a string value back as that raw text, byte for byte.
//! Every other value is sent as compact JSON with its keys in stored order and its
//! numbers exactly as serde_json holds them.
#![warn(clippy::exhaustive_structs, clippy::exhaustive_enums)]

/// `to_vec`, `to_vec_with_prefix` and `envelope` for an API module (`chat`, `responses`),
/// over its own `Compiled`, `compile` and `compile::write`. `prefix` ends the doc of
/// `to_vec_with_prefix` (what the stable prefix covers), `envelope` that of `envelope`
/// (the body it gives).
macro_rules! serialisers {
    (prefix: $prefix:literal, envelope: $envelope:literal $(,)?) => {
        /// The compact JSON bytes of a compiled body. Identical input gives identical bytes.
        ///
        /// # Errors
        ///
        /// [`crate::Error::Serialize`], which values built from `serde_json::Value` cannot
        /// trigger.
        pub fn to_vec(compiled: &Compiled<'_>) -> Result<Vec<u8>> {
            compile::write(compiled).map(|(bytes, _)| bytes)
        }

        #[doc = concat!(
            "Like [`to_vec`], also returning the length in bytes of the cache-stable prefix: ",
            $prefix
        )]
        ///
        /// # Errors
        ///
        /// As [`to_vec`].
        pub fn to_vec_with_prefix(compiled: &Compiled<'_>) -> Result<(Vec<u8>, Option<usize>)> {
            compile::write(compiled)
        }

        #[doc = concat!(
            "Envelopes tool definitions (and an optional system preamble, e.g. a compression \
             map) as ",
            $envelope
        )]
        ///
        /// # Errors
        ///
        /// As [`compile`] (no error is possible for tools alone).
        pub fn envelope(
            tools: &[chef_ir::ToolDefinition],
            system_preamble: &str,
        ) -> Result<(Vec<u8>, Vec<crate::Notice>)> {
            let request = crate::shared::envelope_request(tools, system_preamble);
            let compiled = compile(&request, &crate::CompileOptions::default())?;
            Ok((to_vec(&compiled)?, compiled.notices))
        }
    };
}

pub mod chat;
mod error;
pub mod layout;
mod lowering;
mod notice;
mod provider;
mod relay;
pub mod responses;
mod shared;
mod tagged;

/// What `compile_with` does with the tools (from `chef-ir`, shared by every provider crate).
pub use chef_ir::ToolPass;
/// The compaction header and history repair's placeholder texts (from `chef-ir`, shared by
/// every provider crate).
pub use chef_ir::{COMPACTION_HEADER, PH_CONTINUES, PH_NO_RESULT};

pub use crate::{
    error::{Error, Result},
    notice::{Notice, PrefillPlacement},
    provider::{Chat, Responses},
    shared::{
        CompileOptions, ParsedResponse, StopReason, Usage, prefill_enforcement, repair_history,
    },
    tagged::{KnownTags, Tagged},
};

const _: fn() = || {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<chat::Compiled<'static>>();
    assert_send_sync::<responses::Compiled<'static>>();
    assert_send_sync::<Error>();
    assert_send_sync::<ParsedResponse>();
};
