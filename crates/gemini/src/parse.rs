//! Gemini JSON → IR: replies ([`parse_response`]) and whole request bodies
//! ([`parse_request`], the input adapter of providers.md §6.4).
//!
//! Part by part:
//!
//! - `{text}` → [`Content::Text`] with its `thoughtSignature`; `{text, thought: true}` →
//!   [`Content::Thinking`] with the signature.
//! - `{inlineData}` → a base64 [`Attachment`]; `{fileData}` → a URL attachment (an absent
//!   `mimeType` becomes an empty media type, which compiles back to an absent one).
//! - `{functionCall}` → [`ToolCall`], the name mapped back to the real name, a missing
//!   `args` read as `{}`, the signature kept. A call without an `id` gets
//!   `gemini-fc-<name>-<n>`, `n` counting calls of that name across the conversation from
//!   0 (and skipping ids already taken).
//! - `{functionResponse}` → [`ToolResult`]: `{"output": s}` → text `s`, `{"error": s}` →
//!   an error result with text `s` (an array of two or more strings → one text block each; any other
//!   value → its compact JSON text); any other object → its compact JSON text. The call id
//!   is the response's `id`, else the oldest unanswered call of that name (FIFO), else
//!   `gemini-fc-<name>-0`.
//! - Anything else → [`Content::Unknown`] with `target: Some(Target::Gemini)`, verbatim.

use std::{
    borrow::Cow,
    collections::{HashMap, HashSet, VecDeque},
};

use chef_ir::{
    Attachment, Content, Message, NativeTool, RepairOptions, Request, Role, Target, ToolCall,
    ToolDefinition, ToolResult, WireNames, repair_history,
};
use serde_json::{Map, Value};

use crate::{
    error::{Error, Result},
    wire::{self, Data, FunctionCall, FunctionResponse, KnownPart, Part},
};

/// A parsed `generateContent` reply.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ParsedResponse {
    /// The first candidate's content as an assistant message.
    pub message: Message,
    /// Why the model stopped.
    pub finish_reason: Option<wire::FinishReason>,
    /// Token usage.
    pub usage: Option<wire::UsageMetadata>,
    /// The model version that answered.
    pub model_version: Option<String>,
    /// The response id.
    pub response_id: Option<String>,
    /// The candidate's other fields, as received (`groundingMetadata` from Google Search,
    /// `safetyRatings`, `citationMetadata`, …).
    pub metadata: serde_json::Map<String, Value>,
}

/// Parses a `generateContent` reply body.
///
/// `names` is the table the request was compiled with ([`Compiled::names`]); `history` is
/// the conversation so far, so that ids synthesised for calls without one continue its
/// count and never collide with an existing id.
///
/// [`Compiled::names`]: crate::Compiled::names
///
/// ```
/// use chef_ir::{Content, WireNames};
///
/// let body = br#"{"candidates":[{"content":{"role":"model","parts":[
///     {"functionCall":{"name":"get_weather","args":{"city":"Oslo"}},"thoughtSignature":"c2ln"}
/// ]},"finishReason":"STOP"}]}"#;
/// let parsed = chef_gemini::parse_response(body, &WireNames::default(), &[])?;
/// let call = parsed.message.tool_calls().next().unwrap();
/// assert_eq!(call.id.as_str(), "gemini-fc-get_weather-0");
/// assert_eq!(call.thought_signature.as_deref(), Some("c2ln"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn parse_response(
    body: &[u8],
    names: &WireNames,
    history: &[Message],
) -> Result<ParsedResponse> {
    let response: wire::Response = from_slice(body)?;
    let Some(candidate) = response.candidates.into_iter().next() else {
        let block_reason = response
            .prompt_feedback
            .as_ref()
            .and_then(|f| f.get("blockReason"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        return Err(Error::NoCandidate { block_reason });
    };
    let mut ids = Ids::new(history);
    let mut content = Vec::new();
    for part in candidate.content.map(|c| c.parts).unwrap_or_default() {
        content.push(match part {
            Part::Known(KnownPart {
                data: Data::FunctionResponse(_),
                ..
            }) => Content::Unknown {
                target: Some(Target::Gemini),
                value: serde_json::to_value(&part).map_err(Error::Serialize)?,
            },
            part => match convert(part, names, &mut ids) {
                Converted::Block(block) => block,
                Converted::Result(_, result) => Content::ToolResult(result),
            },
        });
    }
    Ok(ParsedResponse {
        message: Message::new(Role::Assistant, content),
        finish_reason: candidate.finish_reason,
        usage: response.usage_metadata,
        model_version: response.model_version,
        response_id: response.response_id,
        metadata: candidate.extra,
    })
}

/// Parses a `generateContent` request body into an IR request (providers.md §6.4), with
/// history repair (§4).
///
/// System-instruction parts become leading system messages (one per part); `model`
/// contents become assistant messages, any other role user messages; the function
/// responses of a content become one tool message placed before the rest of that content.
/// Function declarations become tools (their real names are the wire names), other tool
/// objects native tools for Gemini.
pub fn parse_request(body: &[u8]) -> Result<Request> {
    let wire: wire::Request = from_slice(body)?;
    Ok(request_from_wire(&wire))
}

/// [`parse_request`] on an already-decoded body.
pub fn request_from_wire(body: &wire::Request) -> Request {
    let names = WireNames::default();
    let mut ids = Ids::new(&[]);
    let mut unanswered: HashMap<String, VecDeque<String>> = HashMap::new();
    let mut system = Vec::new();
    if let Some(instruction) = &body.system_instruction {
        for part in &instruction.parts {
            let content = match convert(part.clone(), &names, &mut ids) {
                Converted::Block(block) => block,
                Converted::Result(_, result) => Content::ToolResult(result),
            };
            system.push(Message::new(Role::System, vec![content]));
        }
    }
    let mut history = Vec::new();
    for content in &body.contents {
        let role = if content.role.as_ref() == Some(&wire::Role::MODEL) {
            Role::Assistant
        } else {
            Role::User
        };
        let mut blocks = Vec::new();
        let mut results = Vec::new();
        for part in &content.parts {
            match convert(part.clone(), &names, &mut ids) {
                Converted::Block(Content::ToolCall(call)) => {
                    unanswered
                        .entry(call.name.to_string())
                        .or_default()
                        .push_back(call.id.to_string());
                    blocks.push(Content::ToolCall(call));
                }
                Converted::Block(block) => blocks.push(block),
                Converted::Result(had_id, mut result) => {
                    let name = result.name.as_ref().map(ToString::to_string);
                    let queue = name.and_then(|n| unanswered.get_mut(&n));
                    if had_id {
                        if let Some(queue) = queue {
                            queue.retain(|id| id != result.tool_call_id.as_str());
                        }
                    } else if let Some(id) = queue.and_then(VecDeque::pop_front) {
                        result.tool_call_id = id.into();
                    }
                    results.push(result);
                }
            }
        }
        if !results.is_empty() {
            history.push(Message::tool_results(results));
        }
        if !blocks.is_empty() {
            history.push(Message::new(role, blocks));
        }
    }
    let mut tools = Vec::new();
    let mut native_tools = Vec::new();
    for tool in &body.tools {
        match tool {
            wire::Tool::FunctionDeclarations(decls) => {
                tools.extend(decls.iter().map(|d| {
                    let schema = d
                        .parameters
                        .as_ref()
                        .map(wire::Schema::to_value)
                        .or_else(|| d.parameters_json_schema.as_deref().cloned())
                        .unwrap_or_else(ToolDefinition::empty_schema);
                    ToolDefinition::new(d.name.as_ref(), schema)
                        .with_description(d.description.as_deref().unwrap_or_default())
                }));
            }
            wire::Tool::Native(value) => native_tools.push(NativeTool {
                targets: vec![Target::Gemini],
                value: value.as_ref().clone(),
            }),
        }
    }
    // One tool message per content's function responses, so all placeholders of a turn
    // go in one tool message too.
    system.extend(repair_history(history, RepairOptions::new()).messages);
    Request {
        messages: system,
        tools,
        native_tools,
        prefill: None,
    }
}

fn from_slice<'a, T: serde::Deserialize<'a>>(body: &'a [u8]) -> Result<T> {
    serde_json::from_slice(body).map_err(|source| Error::InvalidJson {
        source,
        body: String::from_utf8_lossy(body).into_owned(),
    })
}

/// Synthesises call ids: `gemini-fc-<name>-<n>`.
struct Ids {
    taken: HashSet<String>,
    next: HashMap<String, usize>,
}

impl Ids {
    fn new(history: &[Message]) -> Self {
        let mut ids = Self {
            taken: HashSet::new(),
            next: HashMap::new(),
        };
        for call in history.iter().flat_map(Message::tool_calls) {
            ids.taken.insert(call.id.to_string());
            *ids.next.entry(call.name.to_string()).or_default() += 1;
        }
        ids
    }

    fn next(&mut self, name: &str) -> String {
        let n = self.next.entry(name.to_owned()).or_default();
        loop {
            let id = format!("gemini-fc-{name}-{n}");
            *n += 1;
            if self.taken.insert(id.clone()) {
                return id;
            }
        }
    }
}

enum Converted {
    Block(Content),
    /// A result, and whether the wire gave its call id.
    Result(bool, ToolResult),
}

fn convert(part: Part<'_>, names: &WireNames, ids: &mut Ids) -> Converted {
    let known = match part {
        Part::Known(known) => known,
        Part::Unknown(value) => {
            return Converted::Block(Content::Unknown {
                target: Some(Target::Gemini),
                value: value.into_owned(),
            });
        }
    };
    let KnownPart {
        data,
        thought,
        thought_signature,
    } = known;
    let thought_signature = thought_signature.map(Cow::into_owned);
    Converted::Block(match data {
        Data::Text(text) if thought => Content::Thinking {
            thinking: text.into_owned(),
            signature: thought_signature,
        },
        Data::Text(text) => Content::Text {
            text: text.into_owned(),
            thought_signature,
        },
        Data::InlineData(blob) => {
            Content::Attachment(Attachment::base64(blob.mime_type, blob.data))
        }
        Data::FileData(file) => Content::Attachment(Attachment::url(
            file.mime_type.unwrap_or_default(),
            file.file_uri,
        )),
        Data::FunctionCall(FunctionCall { id, name, args }) => {
            let real = names.to_real(&name).to_owned();
            let id = id.map_or_else(|| ids.next(&real), Cow::into_owned);
            let args = args.map(Cow::into_owned).unwrap_or_default();
            let mut call = ToolCall::new(id, real, Value::Object(args));
            // The stand-in compile writes for a call Gemini did not sign is no signature.
            call.thought_signature = thought_signature.filter(|s| s != crate::STAND_IN_SIGNATURE);
            Content::ToolCall(call)
        }
        Data::FunctionResponse(FunctionResponse { id, name, response }) => {
            let real = names.to_real(&name).to_owned();
            let had_id = id.is_some();
            let id = id.map_or_else(|| format!("gemini-fc-{real}-0"), Cow::into_owned);
            let (content, is_error) = unwrap_response(response);
            return Converted::Result(
                had_id,
                ToolResult {
                    tool_call_id: id.into(),
                    name: Some(real.into()),
                    content,
                    is_error,
                },
            );
        }
    })
}

/// The inverse of the compile-side wrapping (see the module docs).
fn unwrap_response(mut response: Map<String, Value>) -> (Vec<Content>, bool) {
    let single = if response.len() == 1 {
        response.keys().next().cloned()
    } else {
        None
    };
    let (value, is_error) = match single.as_deref() {
        Some(key @ ("output" | "error")) => {
            (response.remove(key).unwrap_or_default(), key == "error")
        }
        _ => {
            return (
                vec![Content::text(json_text(&Value::Object(response)))],
                false,
            );
        }
    };
    let content = match value {
        Value::String(s) => vec![Content::text(s)],
        Value::Array(items) if items.len() > 1 && items.iter().all(Value::is_string) => items
            .into_iter()
            .map(|s| Content::text(s.as_str().unwrap_or_default()))
            .collect(),
        other => vec![Content::text(json_text(&other))],
    };
    (content, is_error)
}

fn json_text(value: &Value) -> String {
    value.to_string()
}
