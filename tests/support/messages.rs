//! IR messages the provider crates' tests build alike. Included by `#[path]`, as
//! `fixtures.rs` is.
#![allow(dead_code, reason = "each crate's tests use some of these")]

use chef_ir::{Attachment, Content, Message, Role, ToolCall};
use serde_json::{Value, json};

/// A call `id` of `name` with `args`.
pub(crate) fn call(id: &str, name: &str, args: Value) -> Content {
    Content::ToolCall(ToolCall::new(id, name, args))
}

/// The assistant calling each `(id, name)`, with no arguments.
pub(crate) fn assistant_calls(calls: &[(&str, &str)]) -> Message {
    Message::assistant_with(
        calls
            .iter()
            .map(|(id, name)| call(id, name, json!({})))
            .collect(),
    )
}

/// A user turn: `text`, then these attachments.
pub(crate) fn user_with(text: &str, attachments: Vec<Attachment>) -> Message {
    let parts = std::iter::once(Content::text(text))
        .chain(attachments.into_iter().map(Content::Attachment));
    Message::new(Role::User, parts.collect())
}
