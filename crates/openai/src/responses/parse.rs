//! Responses JSON → IR: replies, and whole requests (the input adapter).

use std::collections::HashMap;

use chef_ir::{
    Attachment, Content, Message, NativeTool, Request, Role, Target, ToolCall, ToolResult,
    WireNames,
};
use serde_json::{Map, Value};

use super::wire::{self, FunctionCallItem, Input, Item, MessageContent, MessageItem, Part, Tagged};
use crate::{
    error::{Error, Result},
    shared::{self, ParsedResponse, StopReason, Usage},
};

/// Parses a response object (the reply body) into an IR assistant message.
///
/// Output items become content blocks in order: `reasoning` items and every item kind
/// chef does not model are kept verbatim as `Content::Unknown { target:
/// Some(Target::OpenAiResponses), .. }`; `message` items give text blocks (refusal parts
/// kept verbatim); `function_call` items give [`ToolCall`]s with real names (through
/// `names`) and arguments parsed as in [`crate::chat::parse_response`]. A message or call
/// item's `id` and `status` are kept in a header block before it (see
/// [`crate::responses`]), so the reasoning that preceded it can be paired on the next
/// turn. When an `output_text` part carries annotations (citations) or logprobs, the
/// header also keeps the message's parts as received; they are sent back as long as the
/// text blocks are unchanged.
///
/// # Errors
///
/// [`Error::InvalidJson`] when the body is not a response object (including an error body
/// or `{}`, which have no `output`, and a known item kind whose fields do not match the
/// documented shape); [`Error::ResponseFailed`] when it carries an `error` object (the
/// model failed).
pub fn parse_response(bytes: &[u8], names: &WireNames) -> Result<ParsedResponse> {
    let response: wire::Response = serde_json::from_slice(bytes)
        .map_err(|source| Error::invalid_json("response", bytes, source))?;
    if let Some(error) = response.error.as_ref().filter(|e| !e.is_null()) {
        let message = error
            .get("message")
            .and_then(serde_json::Value::as_str)
            .map_or_else(|| error.to_string(), str::to_owned);
        return Err(Error::ResponseFailed { message });
    }
    let mut content = Vec::new();
    for item in response.output {
        match item {
            Tagged::Known(Item::Message(message)) => message_blocks(message, &mut content),
            Tagged::Known(Item::FunctionCall(call)) => call_blocks(call, names, &mut content),
            other => content.push(unknown(to_value(&other))),
        }
    }
    let stop_reason = match (response.status.as_deref(), response.incomplete_details) {
        (
            Some("incomplete"),
            Some(wire::IncompleteDetails {
                reason: Some(reason),
            }),
        ) => Some(StopReason::new(reason)),
        (status, _) => status.map(StopReason::new),
    };
    let usage = response.usage.map(|u| Usage {
        input_tokens: u.input_tokens,
        cached_input_tokens: u.input_tokens_details.map_or(0, |d| d.cached_tokens),
        output_tokens: u.output_tokens,
        reasoning_tokens: u.output_tokens_details.map_or(0, |d| d.reasoning_tokens),
    });
    Ok(ParsedResponse {
        message: Message::assistant_with(content),
        stop_reason,
        usage,
    })
}

fn to_value<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn unknown(value: Value) -> Content {
    Content::Unknown {
        target: Some(Target::OpenAiResponses),
        value,
    }
}

/// `{"type": tag, ...extra}`, the header kept before a typed item's blocks.
fn header(tag: &str, extra: Map<String, Value>) -> Content {
    let mut map = Map::with_capacity(extra.len() + 1);
    map.insert("type".to_owned(), Value::String(tag.to_owned()));
    map.extend(extra);
    unknown(Value::Object(map))
}

fn message_blocks(message: MessageItem<'_>, out: &mut Vec<Content>) {
    let mut extra = message.extra;
    if let MessageContent::Parts(parts) = &message.content
        && parts.iter().any(has_citations)
    {
        // The IR text blocks cannot hold annotations (citations) or logprobs: the header
        // keeps the parts as received, and compile sends them back while the text is
        // unchanged.
        extra.insert("content".to_owned(), to_value(parts));
    }
    if !extra.is_empty() {
        out.push(header("message", extra));
    }
    match message.content {
        MessageContent::Text(text) => out.push(Content::text(text)),
        MessageContent::Parts(parts) => out.extend(parts.into_iter().map(part)),
    }
}

fn has_citations(part: &Tagged<'_, Part<'_>>) -> bool {
    match part {
        Tagged::Known(Part::OutputText { extra, .. }) => extra.values().any(|value| match value {
            Value::Null => false,
            Value::Array(items) => !items.is_empty(),
            _ => true,
        }),
        _ => false,
    }
}

fn call_blocks(call: FunctionCallItem<'_>, names: &WireNames, out: &mut Vec<Content>) {
    if !call.extra.is_empty() {
        out.push(header("function_call", call.extra));
    }
    out.push(Content::ToolCall(ToolCall::new(
        call.call_id.into_owned(),
        names.to_real(&call.name).to_owned(),
        shared::arguments_from_text(&call.arguments),
    )));
}

fn part(part: Tagged<'_, Part<'_>>) -> Content {
    match part {
        Tagged::Known(Part::InputText { text } | Part::OutputText { text, .. }) => {
            Content::text(text)
        }
        Tagged::Known(Part::InputImage(image)) if image.detail.is_none() => {
            match (image.image_url, image.file_id) {
                (Some(url), None) => {
                    Content::Attachment(shared::attachment_from_url(&url, "image/*", None))
                }
                (None, Some(id)) => Content::Attachment(Attachment::url("image/*", id)),
                (url, id) => unknown(to_value(&Part::InputImage(wire::InputImage {
                    image_url: url,
                    file_id: id,
                    detail: None,
                }))),
            }
        }
        Tagged::Known(Part::InputFile(file)) => {
            let filename = file.filename.as_deref();
            let fallback = shared::media_type_for(filename);
            let attachment = match (&file.file_data, &file.file_url, &file.file_id) {
                (Some(data), None, None) if data.starts_with("data:") => {
                    shared::attachment_from_url(data, fallback, filename)
                }
                (Some(data), None, None) => Attachment::base64(fallback, data.as_ref()),
                (None, Some(url), None) | (None, None, Some(url)) => {
                    shared::attachment_from_url(url, fallback, filename)
                }
                _ => return unknown(to_value(&Part::InputFile(file))),
            };
            Content::Attachment(match (filename, &attachment.filename) {
                (Some(name), None) => attachment.with_filename(name),
                _ => attachment,
            })
        }
        other => unknown(to_value(&other)),
    }
}

/// Parses a Responses request body (`{"instructions":…,"input":…,"tools":…}`) into an
/// IR request, then repairs its history ([`crate::repair_history`]).
///
/// - `instructions` becomes the first system message. A string `input` is one user
///   message.
/// - `system` and `developer` message items become system messages; after the
///   conversation started they are kept at their position as `positional` (the reference
///   drops mid-stream system items; chef keeps what the caller sent).
/// - An `assistant` message item opens an assistant turn; pending `reasoning` items are
///   placed at its start. A `function_call` joins the open turn when no reasoning is
///   pending, otherwise it opens a new turn. Other item kinds are kept verbatim in the
///   open (or a new) assistant turn. Trailing reasoning becomes an assistant turn of its
///   own.
/// - `function_call_output` items are joined to their calls by `call_id`: each becomes a
///   tool message right after the assistant turn holding the call, in call order.
///   Outputs with no call are dropped (history repair would drop them anyway).
/// - Function tools become [`ToolDefinition`](chef_ir::ToolDefinition)s (with `defer_loading`); other tools
///   become [`NativeTool`]s for [`Target::OpenAiResponses`].
///
/// # Errors
///
/// [`Error::InvalidJson`] when the body is not a Responses request.
pub fn parse_request(bytes: &[u8]) -> Result<Request> {
    let body: wire::Request<'static> = serde_json::from_slice(bytes)
        .map_err(|source| Error::invalid_json("responses request", bytes, source))?;
    Ok(request_from_wire(body))
}

#[derive(Default)]
struct Adapter {
    messages: Vec<Message>,
    /// Index of the open assistant turn.
    open: Option<usize>,
    /// Reasoning items waiting for the assistant turn they belong to.
    pending: Vec<Content>,
    outputs: HashMap<String, Vec<Content>>,
    started: bool,
}

impl Adapter {
    /// Adds to the open assistant turn, or to a new one (taking pending reasoning) when
    /// `force_new`, when none is open, or when reasoning is pending. The open turn is
    /// always the last message: anything else pushed closes it.
    fn with_turn(&mut self, force_new: bool, add: impl FnOnce(&mut Vec<Content>)) {
        self.started = true;
        if force_new || self.open.is_none() || !self.pending.is_empty() {
            let content = std::mem::take(&mut self.pending);
            self.messages.push(Message::assistant_with(content));
            self.open = Some(self.messages.len() - 1);
        }
        if let Some(message) = self.messages.last_mut() {
            add(&mut message.content);
        }
    }

    fn message(&mut self, message: MessageItem<'_>) {
        match message.role.as_ref() {
            "system" | "developer" => {
                let mut content = Vec::new();
                message_blocks(message, &mut content);
                let positional = self.started;
                self.push(Message::new(Role::System, content).with_positional(positional));
            }
            "assistant" => self.with_turn(true, |content| message_blocks(message, content)),
            _ => {
                let mut content = Vec::new();
                message_blocks(message, &mut content);
                self.started = true;
                self.push(Message::new(Role::User, content));
            }
        }
    }

    fn push(&mut self, message: Message) {
        self.open = None;
        self.messages.push(message);
    }
}

fn request_from_wire(body: wire::Request<'_>) -> Request {
    let identity = WireNames::default();
    let mut adapter = Adapter::default();
    if let Some(instructions) = body.instructions.filter(|i| !i.is_empty()) {
        adapter.messages.push(Message::system(instructions));
    }
    let items = match body.input {
        Input::Text(text) => {
            adapter.push(Message::user(text));
            Vec::new()
        }
        Input::Items(items) => items,
    };
    for item in items {
        match item {
            Tagged::Known(Item::Message(message)) => adapter.message(message),
            Tagged::Known(Item::FunctionCall(call)) => {
                adapter.with_turn(false, |content| call_blocks(call, &identity, content));
            }
            Tagged::Known(Item::FunctionCallOutput(output)) => {
                let content = match output.output {
                    MessageContent::Text(text) => vec![Content::text(text)],
                    MessageContent::Parts(parts) => parts.into_iter().map(part).collect(),
                };
                adapter.outputs.insert(output.call_id.into_owned(), content);
                adapter.open = None;
                adapter.started = true;
            }
            Tagged::Unknown(value) => {
                let value = value.into_owned();
                if value.get("type").is_none() && value.get("role").is_some() {
                    // "An item without type but with role is a message" (easy input form).
                    if let Ok(message) = serde_json::from_value::<MessageItem<'_>>(value.clone()) {
                        adapter.message(message);
                        continue;
                    }
                }
                if value.get("type").and_then(Value::as_str) == Some("reasoning") {
                    adapter.pending.push(unknown(value));
                } else {
                    adapter.with_turn(false, |content| content.push(unknown(value)));
                }
            }
        }
    }
    if !adapter.pending.is_empty() {
        let content = std::mem::take(&mut adapter.pending);
        adapter.push(Message::assistant_with(content));
    }
    let mut outputs = adapter.outputs;
    let mut messages = Vec::with_capacity(adapter.messages.len() * 2);
    for message in adapter.messages {
        let results: Vec<ToolResult> = message
            .tool_calls()
            .filter_map(|call| {
                outputs.remove(call.id.as_str()).map(|content| ToolResult {
                    tool_call_id: call.id.clone(),
                    name: Some(call.name.clone()),
                    content,
                    is_error: false,
                })
            })
            .collect();
        messages.push(message);
        messages.extend(results.into_iter().map(|r| Message::tool_results(vec![r])));
    }
    let mut tools = Vec::new();
    let mut native_tools = Vec::new();
    for tool in body.tools {
        match tool {
            Tagged::Known(wire::Tool::Function(function)) => tools.push(
                shared::function_tool(function.name, function.description, function.parameters)
                    .with_defer_loading(function.defer_loading.unwrap_or(false)),
            ),
            Tagged::Unknown(value) => native_tools.push(NativeTool {
                targets: vec![Target::OpenAiResponses],
                value: value.into_owned(),
            }),
        }
    }
    shared::parsed_request(messages, tools, native_tools)
}
