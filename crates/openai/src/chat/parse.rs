//! Chat Completions JSON → IR: replies, and whole requests (the input adapter).

use std::collections::HashMap;

use chef_ir::{
    Content, Message, NativeTool, Request, Role, Target, ToolCall, ToolName, ToolResult, WireNames,
};
use serde_json::{Map, Value};

use super::wire::{self, MessageContent, Part, Tagged};
use crate::{
    error::{Error, Result},
    shared::{self, ParsedResponse, StopReason, Usage},
};

/// Parses a chat completion (the reply body) into an IR assistant message.
///
/// Only `choices[0]` is read. Its `content` becomes a text block; `refusal` becomes
/// `Content::Unknown` holding `{"type":"refusal","refusal":…}` (which compiles back as a
/// refusal part); function tool calls become [`ToolCall`]s with real names (through
/// `names`) and arguments parsed from their JSON text — text that is not JSON is kept as
/// a string value, byte for byte; tool calls of other types and any message field chef
/// does not model (`audio`, non-empty `annotations`, …) are kept verbatim as
/// `Content::Unknown { target: Some(Target::OpenAiChat), .. }`.
///
/// # Errors
///
/// [`Error::InvalidJson`] when the body is not a chat completion, [`Error::NoChoices`]
/// when it has no choice.
pub fn parse_response(bytes: &[u8], names: &WireNames) -> Result<ParsedResponse> {
    let response: wire::Response = serde_json::from_slice(bytes)
        .map_err(|source| Error::invalid_json("chat completion", bytes, source))?;
    let usage = response.usage.map(|u| Usage {
        input_tokens: u.prompt_tokens,
        cached_input_tokens: u.prompt_tokens_details.map_or(0, |d| d.cached_tokens),
        output_tokens: u.completion_tokens,
        reasoning_tokens: u
            .completion_tokens_details
            .map_or(0, |d| d.reasoning_tokens),
    });
    let choice = response
        .choices
        .into_iter()
        .next()
        .ok_or(Error::NoChoices)?;
    Ok(ParsedResponse {
        message: assistant(choice.message, names),
        stop_reason: choice.finish_reason.map(StopReason::new),
        usage,
    })
}

fn assistant(message: wire::AssistantMessage<'_>, names: &WireNames) -> Message {
    let mut content = Vec::new();
    match message.content {
        Some(MessageContent::Text(text)) => content.push(Content::text(text)),
        Some(MessageContent::Parts(parts)) => {
            for part in parts {
                content.push(match part {
                    Tagged::Known(Part::Text { text }) => Content::text(text),
                    other => unknown(serde_json::to_value(other).unwrap_or(Value::Null)),
                });
            }
        }
        None => {}
    }
    if let Some(refusal) = message.refusal {
        let mut map = Map::new();
        map.insert("type".to_owned(), Value::String("refusal".to_owned()));
        map.insert("refusal".to_owned(), Value::String(refusal.into_owned()));
        content.push(unknown(Value::Object(map)));
    }
    for call in message.tool_calls {
        content.push(match call {
            Tagged::Known(wire::ToolCall::Function { id, function }) => {
                Content::ToolCall(ToolCall::new(
                    id.into_owned(),
                    names.to_real(&function.name).to_owned(),
                    shared::arguments_from_text(&function.arguments),
                ))
            }
            Tagged::Unknown(value) => unknown(value.into_owned()),
        });
    }
    for (key, value) in message.extra {
        // A reply's message repeats its role; it is not content.
        if key == "role" {
            continue;
        }
        let empty = match &value {
            Value::Null => true,
            Value::Array(items) => items.is_empty(),
            _ => false,
        };
        if !empty {
            let mut map = Map::new();
            map.insert(key, value);
            content.push(unknown(Value::Object(map)));
        }
    }
    Message::assistant_with(content)
}

fn unknown(value: Value) -> Content {
    Content::Unknown {
        target: Some(Target::OpenAiChat),
        value,
    }
}

/// Parses a Chat Completions request body (`{"messages":[…],"tools":[…],…}`) into an IR
/// request, then repairs its history ([`crate::repair_history`]).
///
/// - Leading `system` and `developer` messages become system messages; later ones are
///   kept at their position as `positional` system messages (the reference drops them;
///   chef keeps what the caller sent).
/// - User parts: `text` → text, `image_url` → an attachment (a `data:` URL becomes
///   inline base64 with its media type; another URL keeps media type `image/*`), `file` →
///   an attachment (`file_data`, or `file_id` kept as the source), any other part kept
///   verbatim as `Content::Unknown`.
/// - Assistant text and refusal parts, function calls (arguments parsed as in
///   [`parse_response`]), and other tool-call types (kept verbatim).
/// - Each `tool` message becomes a tool message with one result, named after its call.
/// - Function tools become [`ToolDefinition`](chef_ir::ToolDefinition)s; other tool types become
///   [`NativeTool`]s for [`Target::OpenAiChat`].
///
/// Names are taken as they are: a request body already holds real names.
///
/// # Errors
///
/// [`Error::InvalidJson`] when the body is not a Chat Completions request.
pub fn parse_request(bytes: &[u8]) -> Result<Request> {
    let body: wire::Request<'static> = serde_json::from_slice(bytes)
        .map_err(|source| Error::invalid_json("chat completions request", bytes, source))?;
    Ok(request_from_wire(body))
}

fn request_from_wire(body: wire::Request<'_>) -> Request {
    let identity = WireNames::default();
    let mut messages = Vec::with_capacity(body.messages.len());
    let mut call_names: HashMap<String, ToolName> = HashMap::new();
    let mut started = false;
    for message in body.messages {
        match message {
            wire::Message::System { content, .. } | wire::Message::Developer { content, .. } => {
                let mut system = Message::new(Role::System, user_content(content));
                system.positional = started;
                messages.push(system);
            }
            wire::Message::User { content, .. } => {
                started = true;
                messages.push(Message::new(Role::User, user_content(content)));
            }
            wire::Message::Assistant(assistant_message) => {
                started = true;
                let message = assistant(assistant_message, &identity);
                for call in message.tool_calls() {
                    call_names.insert(call.id.to_string(), call.name.clone());
                }
                messages.push(message);
            }
            wire::Message::Tool {
                content,
                tool_call_id,
            } => {
                started = true;
                let mut result = ToolResult {
                    tool_call_id: tool_call_id.as_ref().into(),
                    name: call_names.get(tool_call_id.as_ref()).cloned(),
                    content: user_content(content),
                    is_error: false,
                };
                if result.content.is_empty() {
                    result.content.push(Content::text(""));
                }
                messages.push(Message::tool_results(vec![result]));
            }
        }
    }
    let mut tools = Vec::new();
    let mut native_tools = Vec::new();
    for tool in body.tools {
        match tool {
            Tagged::Known(wire::Tool::Function { function }) => tools.push(shared::function_tool(
                function.name,
                function.description,
                function.parameters,
            )),
            Tagged::Unknown(value) => native_tools.push(NativeTool {
                targets: vec![Target::OpenAiChat],
                value: value.into_owned(),
            }),
        }
    }
    shared::parsed_request(messages, tools, native_tools)
}

fn user_content(content: MessageContent<'_>) -> Vec<Content> {
    match content {
        MessageContent::Text(text) => vec![Content::text(text)],
        MessageContent::Parts(parts) => parts.into_iter().map(user_part).collect(),
    }
}

fn user_part(part: Tagged<'_, Part<'_>>) -> Content {
    match part {
        Tagged::Known(Part::Text { text }) => Content::text(text),
        Tagged::Known(Part::ImageUrl { image_url }) if image_url.detail.is_none() => {
            Content::Attachment(shared::attachment_from_url(&image_url.url, "image/*", None))
        }
        Tagged::Known(Part::File { file })
            if file.file_data.is_some() || file.file_id.is_some() =>
        {
            let filename = file.filename.as_deref();
            let fallback = shared::media_type_for(filename);
            let attachment = match (&file.file_data, &file.file_id) {
                (Some(data), _) if data.starts_with("data:") => {
                    shared::attachment_from_url(data, fallback, filename)
                }
                (Some(data), _) => {
                    let attachment = chef_ir::Attachment::base64(fallback, data.as_ref());
                    match filename {
                        Some(name) => attachment.with_filename(name),
                        None => attachment,
                    }
                }
                (None, id) => shared::attachment_from_url(
                    id.as_deref().unwrap_or_default(),
                    fallback,
                    filename,
                ),
            };
            Content::Attachment(attachment)
        }
        other => unknown(serde_json::to_value(other).unwrap_or(Value::Null)),
    }
}
