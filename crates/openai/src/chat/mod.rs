//! OpenAI Chat Completions (`POST /v1/chat/completions`).
//!
//! [`compile`] turns an IR request into a body, [`to_vec`] serialises it, and
//! [`parse_response`] / [`parse_request`] read replies and whole requests back.
//!
//! What Chat Completions cannot take, and what happens instead (each reported as a
//! [`crate::Notice`]): thinking is left out, or sent as `<thinking>` text with
//! [`crate::CompileOptions::thinking_as_text`]; redacted thinking and assistant media are
//! left out; media in tool results moves to a user message right after the tool
//! messages; a document by `http(s)` URL is named in a text part; a prefill becomes an
//! instruction; cache breakpoints are not sent (OpenAI caches prefixes on its own) but
//! [`Compiled::stable_messages`] says where the stable prefix ends.
//!
//! For models that write tool calls as text, [`response_format`] builds a
//! `response_format` that constrains the reply to one call of the request's tools.

mod compile;
mod parse;
mod response_format;
pub mod wire;

pub use self::{
    compile::{Compiled, compile, compile_with},
    parse::{parse_request, parse_response},
    response_format::{
        ANSWER_MEMBER, TOOL_CALL_FORMAT, response_format, response_format_or_answer,
    },
};
use crate::error::Result;

serialisers! {
    prefix: "the bytes up to the end of the last message within \
             [`Compiled::stable_messages`]. A caller can keep those bytes between turns and \
             compare them instead of re-serialising.",
    envelope: "a Chat Completions body: \
               `{\"tools\":[…],\"messages\":[{\"role\":\"system\",…}]}`. An empty preamble gives \
               `\"messages\":[]`.",
}
