//! Anthropic JSON -> IR: responses, and whole requests (the input adapter).
//!
//! # Lossless by construction
//!
//! A block becomes a typed IR content block only when the IR can hold all of it: a known
//! `type` with no field the IR has no place for. Anything else (`server_tool_use`,
//! `web_search_tool_result`, `tool_search_tool_result`, a `text` block with `citations`, a
//! `document` with a `text` or `file` source, …) is kept as
//! [`Content::Unknown`]`{ target: Some(Anthropic), value }`, which compiles back to the same
//! bytes. The one exception is `tool_use`: a call must reach the caller as a
//! [`ToolCall`](chef_ir::ToolCall), so fields beside `id`, `name` and `input` are not kept.
//!
//! Tool names are mapped back to real names through the [`WireNames`] the request was
//! compiled with.

use std::collections::HashMap;

use chef_ir::{
    Attachment, AttachmentSource, Content, Message, NativeTool, Repair, RepairOptions, Request,
    Role, Target, ToolCall, ToolCallId, ToolDefinition, ToolName, ToolResult, WireNames,
};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::{
    error::{Error, Result},
    wire::{self, ContentBlock, Source, StopReason, Tool, ToolResultContent, Usage},
};

/// A parsed `message` response.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ParsedResponse {
    /// The response id (`msg_…`).
    pub id: String,
    /// The model that answered.
    pub model: String,
    /// The assistant message, with real tool names.
    pub message: Message,
    /// Why the model stopped.
    pub stop_reason: Option<StopReason>,
    /// The custom stop sequence that ended the turn, if any.
    pub stop_sequence: Option<String>,
    /// Token counts.
    pub usage: Usage,
}

#[derive(Deserialize)]
struct Head {
    id: String,
    #[serde(default)]
    model: String,
    #[serde(default)]
    stop_reason: Option<StopReason>,
    #[serde(default)]
    stop_sequence: Option<String>,
    #[serde(default)]
    usage: Usage,
}

/// An error body: `{"type":"error","error":{"type":"…","message":"…"}}`.
#[derive(Deserialize)]
struct ErrorBody {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    message: String,
}

fn json(body: &[u8]) -> Result<Value> {
    serde_json::from_slice(body).map_err(|source| Error::InvalidJson {
        source,
        body: String::from_utf8_lossy(body).into_owned(),
    })
}

/// Parses a Messages API response body.
///
/// ```
/// use chef_anthropic::{parse_response, wire::StopReason};
/// use chef_ir::{Content, WireNames};
///
/// let body = br#"{"id":"msg_1","type":"message","role":"assistant","model":"m",
///   "content":[{"type":"text","text":"Hi"},{"type":"server_tool_use","id":"srv_1","name":"web_search","input":{"query":"q"}}],
///   "stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}"#;
/// let parsed = parse_response(body, &WireNames::default())?;
/// assert_eq!(parsed.message.text(), "Hi");
/// assert!(matches!(parsed.message.content[1], Content::Unknown { .. }));
/// assert_eq!(parsed.stop_reason, Some(StopReason::END_TURN));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn parse_response(body: &[u8], names: &WireNames) -> Result<ParsedResponse> {
    parse_response_value(&json(body)?, names)
}

/// [`parse_response`] over an already-parsed JSON value.
pub fn parse_response_value(value: &Value, names: &WireNames) -> Result<ParsedResponse> {
    match value.get("type").and_then(Value::as_str) {
        Some("message") | None => {}
        Some("error") => {
            let error = value
                .get("error")
                .ok_or_else(|| Error::shape("/error", "error body without `error`"))?;
            let error =
                ErrorBody::deserialize(error).map_err(|e| Error::shape("/error", e.to_string()))?;
            return Err(Error::Api {
                kind: error.kind,
                message: error.message,
            });
        }
        Some(other) => {
            return Err(Error::shape(
                "/type",
                format!("expected `message`, got {other:?}"),
            ));
        }
    }
    let head = Head::deserialize(value).map_err(|e| Error::shape("", e.to_string()))?;
    let blocks = value
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::shape("/content", "expected an array of blocks"))?;
    let mut content = Vec::with_capacity(blocks.len());
    for (i, block) in blocks.iter().enumerate() {
        content.push(block_to_ir(block, &format!("/content/{i}"), names)?.0);
    }
    Ok(ParsedResponse {
        id: head.id,
        model: head.model,
        message: Message::new(Role::Assistant, content),
        stop_reason: head.stop_reason,
        stop_sequence: head.stop_sequence,
        usage: head.usage,
    })
}

/// Fields a typed IR block can hold, per known `type`.
fn allowed_keys(tag: &str) -> Option<&'static [&'static str]> {
    Some(match tag {
        "text" => &["type", "text", "cache_control"],
        "image" => &["type", "source", "cache_control"],
        "document" => &["type", "source", "title", "cache_control"],
        "tool_result" => &[
            "type",
            "tool_use_id",
            "content",
            "is_error",
            "cache_control",
        ],
        "thinking" => &["type", "thinking", "signature"],
        "redacted_thinking" => &["type", "data"],
        _ => return None,
    })
}

/// Whether the IR can hold this block whole.
fn expressible(tag: &str, map: &Map<String, Value>) -> bool {
    if tag == "tool_use" {
        return true;
    }
    let Some(allowed) = allowed_keys(tag) else {
        return false;
    };
    if !map.keys().all(|k| allowed.contains(&k.as_str())) {
        return false;
    }
    match tag {
        "image" | "document" => {
            let Some(Value::Object(source)) = map.get("source") else {
                return false;
            };
            match source.get("type").and_then(Value::as_str) {
                Some("base64") => source
                    .keys()
                    .all(|k| matches!(k.as_str(), "type" | "media_type" | "data")),
                Some("url") => source.keys().all(|k| matches!(k.as_str(), "type" | "url")),
                _ => false,
            }
        }
        _ => true,
    }
}

/// One wire block -> one IR content block, plus whether it carried `cache_control`.
fn block_to_ir(value: &Value, path: &str, names: &WireNames) -> Result<(Content, bool)> {
    let map = value
        .as_object()
        .ok_or_else(|| Error::shape(path, "a content block must be an object"))?;
    let tag = map
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| Error::shape(path, "content block without a string `type`"))?;
    if !expressible(tag, map) {
        let cached = map.contains_key("cache_control");
        return Ok((
            Content::Unknown {
                target: Some(Target::Anthropic),
                value: value.clone(),
            },
            cached,
        ));
    }
    let block =
        ContentBlock::from_value(value.clone()).map_err(|source| Error::MalformedBlock {
            kind: tag.to_owned(),
            path: path.to_owned(),
            source,
        })?;
    let cached = block.cache_control().is_some();
    let content = match block {
        ContentBlock::Text(b) => Content::text(b.text.into_owned()),
        ContentBlock::Image(b) => Content::Attachment(attachment(b.source, "image/*", None)),
        ContentBlock::Document(b) => Content::Attachment(attachment(
            b.source,
            "application/pdf",
            b.title.map(std::borrow::Cow::into_owned),
        )),
        ContentBlock::ToolUse(b) => Content::ToolCall(ToolCall::new(
            b.id.into_owned(),
            names.to_real(&b.name).to_owned(),
            b.input.into_owned(),
        )),
        ContentBlock::ToolResult(b) => {
            let content = match b.content {
                None => Vec::new(),
                Some(ToolResultContent::Text(text)) => vec![Content::text(text.into_owned())],
                Some(ToolResultContent::Blocks(_)) => {
                    let items = value
                        .get("content")
                        .and_then(Value::as_array)
                        .map(Vec::as_slice)
                        .unwrap_or_default();
                    let mut nested = Vec::with_capacity(items.len());
                    for (i, item) in items.iter().enumerate() {
                        nested.push(block_to_ir(item, &format!("{path}/content/{i}"), names)?.0);
                    }
                    nested
                }
            };
            Content::ToolResult(ToolResult {
                tool_call_id: ToolCallId::new(b.tool_use_id.into_owned()),
                name: None,
                content,
                is_error: b.is_error == Some(true),
            })
        }
        ContentBlock::Thinking(b) => Content::Thinking {
            thinking: b.thinking.into_owned(),
            signature: Some(b.signature.into_owned()).filter(|s| !s.is_empty()),
        },
        ContentBlock::RedactedThinking(b) => Content::RedactedThinking {
            data: b.data.into_owned(),
        },
        ContentBlock::Unknown(v) => Content::Unknown {
            target: Some(Target::Anthropic),
            value: v.into_owned(),
        },
    };
    Ok((content, cached))
}

fn attachment(source: Source<'_>, url_type: &str, filename: Option<String>) -> Attachment {
    let attachment = match source {
        Source::Base64 { media_type, data } => Attachment::base64(media_type, data),
        Source::Url { url } => Attachment::url(url_type, url),
        // `expressible` lets only base64 and url sources through.
        Source::Text { media_type, data } => Attachment {
            media_type: media_type.into_owned(),
            source: AttachmentSource::Url {
                url: data.into_owned(),
            },
            filename: None,
        },
        Source::File { file_id } => Attachment::url(url_type, file_id),
    };
    match filename {
        Some(name) => attachment.with_filename(name),
        None => attachment,
    }
}

/// A request read back into the IR, and the history repairs that made it valid.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ParsedRequest {
    /// The request: system messages first, then the repaired history.
    pub request: Request,
    /// What the history repair changed (empty for a valid history).
    pub repairs: Vec<Repair>,
}

/// Repairs a history the way [`parse_request`] does: [`chef_ir::repair_history`] with all
/// placeholder results of a turn in one tool message (one Anthropic user turn carries
/// all of a turn's `tool_result` blocks). A valid history comes back unchanged with no
/// repairs.
///
/// ```
/// use chef_anthropic::{Repair, repair_history};
/// use chef_ir::{Content, Message, ToolCall};
/// use serde_json::json;
///
/// let call = ToolCall::new("c1", "search", json!({}));
/// let history = vec![Message::user("go"), Message::assistant_with(vec![Content::ToolCall(call)])];
/// let (repaired, repairs) = repair_history(history);
/// assert_eq!(repaired.len(), 3);
/// assert!(matches!(repairs[0], Repair::MissingResultInserted { .. }));
/// ```
pub fn repair_history(history: Vec<Message>) -> (Vec<Message>, Vec<Repair>) {
    let repaired = chef_ir::repair_history(history, RepairOptions::new());
    (repaired.messages, repaired.repairs)
}

/// Reads an Anthropic Messages request body into the IR (the input adapter), repairing the
/// history so that it is valid (see [`repair_history`]).
///
/// - `system` (a string, or text blocks) becomes one system message per block;
///   `cache_control` becomes the message's `cache_breakpoint`.
/// - Each user turn's `tool_result` blocks become one `tool` message, placed before the
///   message made of the turn's other blocks.
/// - A final assistant turn made only of text is the prefill.
/// - Non-standard `role:"system"` entries are kept when they lead the conversation and
///   skipped (reported) mid-conversation: there they are channel output, not history.
/// - Tools: function tools (no `type`, or `custom`) become [`ToolDefinition`]s
///   (`cache_control` is a compile decision and is not kept); typed tools become
///   [`NativeTool`]s for Anthropic, verbatim.
///
/// `names` maps wire tool names back to real names: pass the table of the compile that
/// produced the body, or `&WireNames::default()` for a request chef did not compile.
pub fn parse_request(body: &[u8], names: &WireNames) -> Result<ParsedRequest> {
    parse_request_value(&json(body)?, names)
}

/// [`parse_request`] over an already-parsed JSON value.
pub fn parse_request_value(value: &Value, names: &WireNames) -> Result<ParsedRequest> {
    let mut system = Vec::new();
    match value.get("system") {
        None | Some(Value::Null) => {}
        Some(Value::String(text)) => system.push(Message::system(text.clone())),
        Some(Value::Array(blocks)) => {
            for (i, block) in blocks.iter().enumerate() {
                let path = format!("/system/{i}");
                match block_to_ir(block, &path, names)? {
                    (text @ Content::Text { .. }, cached) => system
                        .push(Message::new(Role::System, vec![text]).with_cache_breakpoint(cached)),
                    _ => return Err(Error::shape(path, "system blocks must be text")),
                }
            }
        }
        Some(_) => return Err(Error::shape("/system", "expected a string or blocks")),
    }

    let items = value
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::shape("/messages", "expected an array of messages"))?;
    let mut history: Vec<Message> = Vec::new();
    let mut repairs = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let path = format!("/messages/{i}");
        let role = item
            .get("role")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::shape(&path, "message without a string `role`"))?;
        let blocks = content_blocks(item.get("content"), &path, names)?;
        match role {
            "system" => {
                if history.is_empty() {
                    let text: Vec<String> = blocks
                        .into_iter()
                        .filter_map(|(c, _)| c.as_text().map(str::to_owned))
                        .collect();
                    system.push(Message::system(text.join("\n")));
                } else {
                    repairs.push(Repair::MidStreamSystemSkipped { index: i });
                }
            }
            "user" => {
                let mut results = Message::new(Role::Tool, Vec::new());
                let mut rest = Message::new(Role::User, Vec::new());
                for (content, cached) in blocks {
                    let target = if matches!(content, Content::ToolResult(_)) {
                        &mut results
                    } else {
                        &mut rest
                    };
                    target.cache_breakpoint |= cached;
                    target.content.push(content);
                }
                for message in [results, rest] {
                    if !message.content.is_empty() {
                        history.push(message);
                    }
                }
            }
            "assistant" => {
                let mut message = Message::new(Role::Assistant, Vec::new());
                for (content, cached) in blocks {
                    message.cache_breakpoint |= cached;
                    message.content.push(content);
                }
                if !message.content.is_empty() {
                    history.push(message);
                }
            }
            other => {
                return Err(Error::shape(
                    format!("{path}/role"),
                    format!("unknown role {other:?}"),
                ));
            }
        }
    }

    let prefill = match history.last() {
        Some(last)
            if last.role == Role::Assistant
                && !last.cache_breakpoint
                && last.content.iter().all(|c| c.as_text().is_some()) =>
        {
            let text = last.text();
            history.pop();
            Some(text)
        }
        _ => None,
    };

    name_results(&mut history);
    let (history, mut repaired) = repair_history(history);
    repairs.append(&mut repaired);

    let (tools, native_tools) = tools(value.get("tools"), names)?;
    let mut messages = system;
    messages.extend(history);
    Ok(ParsedRequest {
        request: Request {
            messages,
            tools,
            native_tools,
            prefill,
        },
        repairs,
    })
}

fn content_blocks(
    content: Option<&Value>,
    path: &str,
    names: &WireNames,
) -> Result<Vec<(Content, bool)>> {
    match content {
        Some(Value::String(text)) => Ok(vec![(Content::text(text.clone()), false)]),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .enumerate()
            .map(|(i, b)| block_to_ir(b, &format!("{path}/content/{i}"), names))
            .collect(),
        _ => Err(Error::shape(
            format!("{path}/content"),
            "expected a string or an array of blocks",
        )),
    }
}

/// Gives each tool result the name of the call it answers (Gemini needs it).
fn name_results(history: &mut [Message]) {
    let mut called: HashMap<ToolCallId, ToolName> = HashMap::new();
    for message in history {
        for content in &mut message.content {
            match content {
                Content::ToolCall(call) => {
                    called.insert(call.id.clone(), call.name.clone());
                }
                Content::ToolResult(result) if result.name.is_none() => {
                    result.name = called.get(&result.tool_call_id).cloned();
                }
                _ => {}
            }
        }
    }
}

fn tools(
    value: Option<&Value>,
    names: &WireNames,
) -> Result<(Vec<ToolDefinition>, Vec<NativeTool>)> {
    let mut functions = Vec::new();
    let mut natives = Vec::new();
    let Some(value) = value else {
        return Ok((functions, natives));
    };
    let items = value
        .as_array()
        .ok_or_else(|| Error::shape("/tools", "expected an array of tools"))?;
    for (i, item) in items.iter().enumerate() {
        let tool = Tool::deserialize(item)
            .map_err(|e| Error::shape(format!("/tools/{i}"), e.to_string()))?;
        match tool {
            Tool::Function(f) => {
                let mut definition = ToolDefinition::new(
                    names.to_real(&f.name).to_owned(),
                    f.input_schema.into_owned(),
                )
                .with_defer_loading(f.defer_loading == Some(true));
                if let Some(description) = f.description {
                    definition = definition.with_description(description.into_owned());
                }
                functions.push(definition);
            }
            Tool::Native(v) => natives.push(NativeTool {
                targets: vec![Target::Anthropic],
                value: v.into_owned(),
            }),
        }
    }
    Ok((functions, natives))
}

/// Reads a wire request the caller built or received (typed) back into the IR, without
/// going through bytes.
pub fn request_to_ir(request: &wire::Request<'_>, names: &WireNames) -> Result<ParsedRequest> {
    let value = serde_json::to_value(request).map_err(Error::Serialize)?;
    parse_request_value(&value, names)
}
