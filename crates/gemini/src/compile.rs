//! IR request → Gemini `generateContent` body.
//!
//! The mapping, message by message (spec providers.md §3.4, with the deliberate changes
//! listed at the end):
//!
//! - A system message goes to `systemInstruction` (one text part per text block, in
//!   order). A *positional* system message becomes a `user` content at its position, as
//!   Gemini has no system role inside `contents` ([`Notice::PositionalSystemAsUser`]).
//! - User and tool messages become `user` contents; assistant messages `model` contents.
//!   Consecutive contents with the same role are merged (parallel tool results become one
//!   content, a positional system message joins the user turn before it).
//! - Text → `{text}`, with `thoughtSignature` when the block carries one. Empty text
//!   without a signature is skipped (Gemini refuses empty text parts).
//! - Tool call → `{functionCall:{name, args}}` with a sibling `thoughtSignature`; the
//!   arguments must be a JSON object and are sent exactly as given (no re-parsing).
//! - Tool result → `{functionResponse:{name, response}}` where `response` is
//!   `{"output": text}` or, for an error, `{"error": text}` — the keys Gemini documents
//!   for a function's output and error. The text is sent verbatim as a string (a JSON text
//!   is not re-parsed, so nothing is rewritten); several text blocks become an array of
//!   strings. The name is the result's name, else the name of the call it answers.
//!   Attachments in a result follow the `functionResponse` as parts of the same content.
//! - Attachment → `{inlineData:{mimeType, data}}` for base64 and `data:…;base64,` URLs;
//!   `{fileData:{mimeType, fileUri}}` for `gs://`, `https://` and other URIs.
//! - Thinking → per [`ThinkingMode`]: dropped (the default, as the spec says), textified
//!   (§3.5), or sent as a native `{text, thought: true, thoughtSignature}` part. Redacted
//!   thinking cannot be expressed and is dropped. Every drop is a [`Notice`].
//! - `Content::Unknown` for Gemini is sent back byte for byte; an Anthropic compaction
//!   block (`{"type":"compaction","content":…}`) becomes a text part after
//!   [`COMPACTION_HEADER`](crate::COMPACTION_HEADER) so the summary is not lost; any other target's block is left out
//!   with a notice.
//!
//! Tools: all function declarations sit in ONE `{functionDeclarations:[…]}` object, with
//! names mapped through [`WireNames`] under [`NameRule::GEMINI`](chef_ir::NameRule::GEMINI) and parameters cleaned by
//! [`clean_schema`](crate::clean_schema); native tools aimed at Gemini follow as their own
//! tool objects.
//!
//! # Deliberate departures from the reference
//!
//! - **Prefill.** Gemini has no prefill. The instruction text [`prefill_enforcement`](crate::prefill_enforcement) is
//!   appended as a NEW text part to the last content when it is a user content, else it
//!   becomes a new trailing user content. The reference replaces an earlier user turn's
//!   parts (dropping its attachments) and may rewrite a turn before the tail; this never
//!   drops content and never rewrites an earlier turn.
//! - **Tool results** are always wrapped in an object (`output`/`error`), as Gemini
//!   requires; the reference sends `42`, `[1,2]` or `null` unwrapped and re-serialises JSON
//!   text through doubles.
//! - **Result names** come from the call the result answers, not from the call id.
//! - **Attachments** on assistant messages and in tool results are sent, not dropped.

use std::{borrow::Cow, collections::HashMap, ops::Range};

use chef_ir::{
    AttachmentSource, Content, Message, Request, Role, Target, ToolPass, ToolResult, WireNames,
};
use serde_json::{Map, Value};

use crate::{
    envelope::declarations,
    error::{Error, Result},
    names::{renamed, table, wire_name},
    notice::Notice,
    options::{CompileOptions, ThinkingMode},
    prefill,
    wire::{self, Blob, Data, FileData, FunctionCall, FunctionResponse, KnownPart, Part},
};

/// A compiled request: the body, the name table to parse replies with, and the notices.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Compiled<'a> {
    /// The `generateContent` body, borrowing text, arguments and schemas from the request.
    pub body: wire::Request<'a>,
    /// Real ↔ wire tool names; pass it to [`parse_response`](crate::parse_response).
    pub names: WireNames,
    /// What could not be expressed, and what was done instead.
    pub notices: Vec<Notice>,
    /// How many leading `contents` form, with `systemInstruction` and `tools`, the
    /// cache-stable prefix: the contents holding only messages up to the last
    /// `cache_breakpoint`, untouched by prefill degradation, and not the last content (a
    /// later message of the same role would merge into it). `None` when no message has a
    /// breakpoint, or when `systemInstruction` holds a system message from after it.
    /// The body serialises `systemInstruction`, `tools`, then `contents`, so this prefix
    /// is also a byte prefix of [`to_vec`](crate::to_vec)'s output up to that content.
    pub cache_prefix: Option<usize>,
    /// Which of [`notices`](Self::notices) are about the request's tools as declared
    /// ([`Notice::DeferLoadingIgnored`], [`Notice::NativeToolLeftOut`]): they depend on
    /// the tools alone. They follow the [`Notice::ToolRenamed`] notices (which depend on
    /// the whole name table) and precede those about messages. With [`ToolPass::Skip`]
    /// the range is empty, at the place they would take.
    pub tool_notices: Range<usize>,
}

/// Compiles a provider-neutral request into a Gemini `generateContent` body.
///
/// ```
/// use chef_ir::{Message, Request};
///
/// let request = Request::new(vec![Message::system("Be terse."), Message::user("Hi")]);
/// let compiled = chef_gemini::compile(&request, &Default::default())?;
/// assert_eq!(
///     String::from_utf8(chef_gemini::to_vec(&compiled)?)?,
///     r#"{"systemInstruction":{"parts":[{"text":"Be terse."}]},"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}"#
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`Error::SchemaNotObject`] for a tool whose input schema is not an object,
/// [`Error::NativeToolNotObject`] for a native tool that is not an object, and
/// [`Error::UnsupportedDataUrl`] for an attachment `data:` URL Gemini cannot take.
pub fn compile<'a>(request: &'a Request, options: &CompileOptions) -> Result<Compiled<'a>> {
    compile_with(request, options, ToolPass::Convert)
}

/// Like [`compile`], with the request's tools converted or left out as `pass` says.
///
/// With [`ToolPass::Skip`] the body's `tools` is empty and [`Compiled::tool_notices`] is
/// an empty range where the tool notices would be; everything else (contents, the name
/// table, the other notices) is what [`compile`] gives. A caller that kept the serialised
/// `tools` and the tool notices of an earlier compile of the same tools puts them back
/// there and has [`compile`]'s output, without converting every declaration again. The
/// tools still enter the name table, so calls and results are named as in that compile.
///
/// ```
/// use chef_ir::{Message, Request, ToolDefinition};
/// use chef_gemini::{CompileOptions, ToolPass};
/// use serde_json::json;
///
/// let request = Request::new(vec![Message::user("Hi")]).with_tools(vec![
///     ToolDefinition::new("later", json!({"type": "object"})).with_defer_loading(true),
/// ]);
/// let options = CompileOptions::default();
/// let full = chef_gemini::compile(&request, &options)?;
/// let skipped = chef_gemini::compile_with(&request, &options, ToolPass::Skip)?;
/// assert!(skipped.body.tools.is_empty());
/// assert_eq!(full.tool_notices.clone(), 0..1);
/// assert_eq!(skipped.tool_notices.clone(), 0..0);
/// assert_eq!(skipped.body.contents, full.body.contents);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// As [`compile`]; with [`ToolPass::Skip`], tools are not checked.
pub fn compile_with<'a>(
    request: &'a Request,
    options: &CompileOptions,
    pass: ToolPass,
) -> Result<Compiled<'a>> {
    let names = table(request);
    let mut notices = renamed(&names);
    let tools_from = notices.len();
    let tools = match pass {
        ToolPass::Convert => tools(request, &names, options, &mut notices)?,
        ToolPass::Skip => Vec::new(),
    };
    let tool_notices = tools_from..notices.len();

    let mut cx = Cx {
        names: &names,
        options,
        notices,
        messages: &request.messages,
        call_names: None,
    };
    let mut system = Vec::new();
    let mut system_last = None;
    // Contents are merged as they are built: a message whose role matches the previous
    // content's extends it.
    let mut pending: Vec<Pending> = Vec::with_capacity(request.messages.len() + 1);
    for (i, message) in request.messages.iter().enumerate() {
        let role = match message.role {
            Role::System if !message.positional => {
                let mut moved = Vec::new();
                for block in &message.content {
                    match block {
                        Content::Text { .. } => cx.block(i, block, &mut system)?,
                        other => cx.block(i, other, &mut moved)?,
                    }
                }
                system_last = Some(i);
                if !moved.is_empty() {
                    cx.notices.push(Notice::SystemContentMoved { message: i });
                    push_parts(&mut pending, wire::Role::USER, i, moved);
                }
                continue;
            }
            Role::System => {
                cx.notices
                    .push(Notice::PositionalSystemAsUser { message: i });
                wire::Role::USER
            }
            Role::User | Role::Tool => wire::Role::USER,
            Role::Assistant => wire::Role::MODEL,
        };
        let joins = pending.last().is_some_and(|p| p.role == role);
        if !joins {
            pending.push(Pending {
                role,
                parts: Vec::with_capacity(message.content.len()),
                last: i,
                touched: false,
            });
        }
        let Some(content) = pending.last_mut() else {
            continue;
        };
        let before = content.parts.len();
        for block in &message.content {
            cx.block(i, block, &mut content.parts)?;
        }
        if content.parts.len() > before {
            content.last = i;
        } else {
            cx.notices.push(Notice::EmptyMessageSkipped { message: i });
            if !joins {
                pending.pop();
            }
        }
    }

    if let Some(prefill) = &request.prefill {
        degrade_prefill(
            prefill,
            &mut pending,
            request.messages.len(),
            &mut cx.notices,
        );
    }

    let merged = pending;
    let cache_prefix = request
        .messages
        .iter()
        .rposition(|m| m.cache_breakpoint)
        .filter(|bp| system_last.is_none_or(|s| s <= *bp))
        .map(|bp| {
            // The last content stays open: the next turn's message may merge into it.
            let closed = merged.len().saturating_sub(1);
            merged
                .iter()
                .take(closed)
                .take_while(|c| c.last <= bp && !c.touched)
                .count()
        });
    let body = wire::Request {
        system_instruction: (!system.is_empty()).then(|| wire::Content::without_role(system)),
        tools,
        contents: merged
            .into_iter()
            .map(|c| wire::Content::new(c.role, c.parts))
            .collect(),
    };
    let notices = cx.notices;
    Ok(Compiled {
        body,
        names,
        notices,
        tool_notices,
        cache_prefix,
    })
}

/// The request's function declarations (one tool object) and native tools for Gemini,
/// with their notices.
fn tools<'a>(
    request: &'a Request,
    names: &WireNames,
    options: &CompileOptions,
    notices: &mut Vec<Notice>,
) -> Result<Vec<wire::Tool<'a>>> {
    let mut tools = Vec::new();
    let decls = declarations(&request.tools, names, options, notices)?;
    if !decls.is_empty() {
        tools.push(wire::Tool::FunctionDeclarations(decls));
    }
    for (index, native) in request.native_tools.iter().enumerate() {
        if native.targets.contains(&Target::Gemini) {
            if !native.value.is_object() {
                return Err(Error::NativeToolNotObject { index });
            }
            tools.push(wire::Tool::Native(Cow::Borrowed(&native.value)));
        } else {
            notices.push(Notice::NativeToolLeftOut {
                index,
                targets: native.targets.clone(),
            });
        }
    }
    Ok(tools)
}

/// A content before merging, with the last message it holds.
pub(crate) struct Pending<'a> {
    pub(crate) role: wire::Role,
    pub(crate) parts: Vec<Part<'a>>,
    pub(crate) last: usize,
    pub(crate) touched: bool,
}

/// Appends parts to the last content when it has this role, else starts a new content.
fn push_parts<'a>(
    pending: &mut Vec<Pending<'a>>,
    role: wire::Role,
    i: usize,
    parts: Vec<Part<'a>>,
) {
    match pending.last_mut() {
        Some(last) if last.role == role => {
            last.parts.extend(parts);
            last.last = i;
        }
        _ => pending.push(Pending {
            role,
            parts,
            last: i,
            touched: false,
        }),
    }
}

/// Call id → real tool name, over the whole request.
fn call_names(messages: &[Message]) -> HashMap<&str, &str> {
    messages
        .iter()
        .flat_map(Message::tool_calls)
        .map(|c| (c.id.as_str(), c.name.as_str()))
        .collect()
}

/// Per-compile state for turning blocks into parts.
struct Cx<'r, 'a> {
    names: &'r WireNames,
    options: &'r CompileOptions,
    notices: Vec<Notice>,
    messages: &'a [Message],
    /// Call id → real tool name, built on first need.
    call_names: Option<HashMap<&'a str, &'a str>>,
}

impl<'a> Cx<'_, 'a> {
    /// Whether `call` is the first call of a model turn that carries no thought signature
    /// anywhere (a turn another provider wrote): Gemini 3 refuses a step whose first call
    /// has none, and its own turns always sign it.
    fn needs_stand_in(&self, i: usize, call: &chef_ir::ToolCall) -> bool {
        let Some(message) = self.messages.get(i) else {
            return false;
        };
        message.role == Role::Assistant
            && message
                .tool_calls()
                .next()
                .is_some_and(|first| first.id == call.id)
            && !message.content.iter().any(|c| match c {
                Content::Text {
                    thought_signature, ..
                } => thought_signature.is_some(),
                Content::ToolCall(c) => c.thought_signature.is_some(),
                Content::Thinking { signature, .. } => signature.is_some(),
                _ => false,
            })
    }

    fn block(&mut self, i: usize, block: &'a Content, out: &mut Vec<Part<'a>>) -> Result<()> {
        match block {
            Content::Text {
                text,
                thought_signature,
            } => {
                if !text.is_empty() || thought_signature.is_some() {
                    out.push(Part::Known(
                        KnownPart::new(Data::Text(Cow::Borrowed(text))).with_thought_signature(
                            thought_signature.as_deref().map(Cow::Borrowed),
                        ),
                    ));
                }
            }
            Content::Attachment(attachment) => {
                if attachment.filename.is_some() {
                    self.notices.push(Notice::FilenameDropped { message: i });
                }
                let mime = attachment.media_type.as_str();
                let data = match &attachment.source {
                    AttachmentSource::Base64 { data } => {
                        Data::InlineData(Blob::new(mime, data.as_str()))
                    }
                    AttachmentSource::Url { url } => match url.strip_prefix("data:") {
                        Some(rest) => {
                            let (header, payload) = rest
                                .split_once(',')
                                .filter(|(h, _)| h.ends_with(";base64"))
                                .ok_or(Error::UnsupportedDataUrl { message: i })?;
                            let url_mime = header.trim_end_matches(";base64");
                            let mime = if mime.is_empty() { url_mime } else { mime };
                            Data::InlineData(Blob::new(mime, payload))
                        }
                        None => Data::FileData(FileData::new(
                            (!mime.is_empty()).then_some(Cow::Borrowed(mime)),
                            url.clone(),
                        )),
                    },
                };
                out.push(Part::Known(KnownPart::new(data)));
            }
            Content::ToolCall(call) => {
                // `functionCall.args` is a Struct: arguments that are not an object (a
                // model's garbled call, refused when it was routed) go as `{}`, said by a
                // notice; `null` means `{}` as chef reads it.
                let args = match &call.arguments {
                    Value::Object(args) => Cow::Borrowed(args),
                    other => {
                        if !other.is_null() {
                            self.notices.push(Notice::ArgumentsNotAnObject {
                                message: i,
                                call_id: call.id.to_string(),
                            });
                        }
                        Cow::Owned(serde_json::Map::new())
                    }
                };
                let fc = FunctionCall::new(wire_name(self.names, call.name.as_str()), Some(args))
                    .with_id(
                        self.options
                            .call_ids
                            .then_some(Cow::Borrowed(call.id.as_str())),
                    );
                let signature = match call.thought_signature.as_deref() {
                    Some(signature) => Some(Cow::Borrowed(signature)),
                    // Not a notice: it is the same rule on every request, described in
                    // the docs (a notice per such turn would grow with the history).
                    None if self.needs_stand_in(i, call) => {
                        Some(Cow::Borrowed(crate::STAND_IN_SIGNATURE))
                    }
                    None => None,
                };
                out.push(Part::Known(
                    KnownPart::new(Data::FunctionCall(fc)).with_thought_signature(signature),
                ));
            }
            Content::ToolResult(result) => self.result(i, result, out)?,
            Content::Thinking {
                thinking,
                signature,
            } => match self.options.thinking {
                ThinkingMode::Drop => self.notices.push(Notice::ThinkingDropped { message: i }),
                ThinkingMode::AsText => {
                    if signature.is_some() {
                        self.notices
                            .push(Notice::ThinkingSignatureDropped { message: i });
                    }
                    if !thinking.is_empty() {
                        out.push(Part::text(format!(
                            "<thinking>\n{thinking}\n</thinking>\n\n"
                        )));
                    }
                }
                ThinkingMode::Native => out.push(Part::Known(
                    KnownPart::new(Data::Text(Cow::Borrowed(thinking)))
                        .with_thought(true)
                        .with_thought_signature(signature.as_deref().map(Cow::Borrowed)),
                )),
            },
            Content::RedactedThinking { .. } => {
                self.notices
                    .push(Notice::RedactedThinkingDropped { message: i });
            }
            Content::Unknown {
                target: Some(Target::Gemini),
                value,
            } => out.push(Part::Unknown(Cow::Borrowed(value))),
            Content::Unknown {
                target: Some(Target::Anthropic),
                value,
            } if value.get("type").is_some_and(|t| t == "compaction") => {
                // A server-side compaction summary holds the earlier conversation: keep
                // it as text (providers.md §3.4) rather than lose it.
                match value.get("content").and_then(Value::as_str) {
                    Some(summary) => {
                        out.push(Part::text(chef_ir::compaction_text(summary)));
                        self.notices.push(Notice::CompactionAsText { message: i });
                    }
                    None => self.notices.push(Notice::ContentDropped {
                        message: i,
                        target: Some(Target::Anthropic),
                    }),
                }
            }
            Content::Unknown { target, .. } => self.notices.push(Notice::ContentDropped {
                message: i,
                target: *target,
            }),
        }
        Ok(())
    }

    fn result(&mut self, i: usize, result: &'a ToolResult, out: &mut Vec<Part<'a>>) -> Result<()> {
        let id = result.tool_call_id.as_str();
        let real = match &result.name {
            Some(name) => name.as_str(),
            None => match self
                .call_names
                .get_or_insert_with(|| call_names(self.messages))
                .get(id)
            {
                Some(name) => name,
                None => {
                    self.notices.push(Notice::ToolResultUnnamed {
                        message: i,
                        tool_call_id: id.to_owned(),
                    });
                    id
                }
            },
        };
        let mut texts = Vec::new();
        let mut extra = Vec::new();
        for block in &result.content {
            match block {
                Content::Text { text, .. } => texts.push(Value::String(text.clone())),
                Content::Attachment(_)
                | Content::Unknown {
                    target: Some(Target::Gemini),
                    ..
                } => self.block(i, block, &mut extra)?,
                Content::Unknown { target, .. } => self.notices.push(Notice::ContentDropped {
                    message: i,
                    target: *target,
                }),
                _ => self.notices.push(Notice::ContentDropped {
                    message: i,
                    target: None,
                }),
            }
        }
        let value = match texts.len() {
            0 => Value::String(String::new()),
            1 => texts.pop().unwrap_or_default(),
            _ => Value::Array(texts),
        };
        let mut response = Map::with_capacity(1);
        let key = if result.is_error { "error" } else { "output" };
        response.insert(key.to_owned(), value);
        let fr = FunctionResponse::new(wire_name(self.names, real), response)
            .with_id(self.options.call_ids.then_some(Cow::Borrowed(id)));
        out.push(Part::Known(KnownPart::new(Data::FunctionResponse(fr))));
        out.extend(extra);
        Ok(())
    }
}

/// Sends `prefill` as [`prefill_enforcement`](crate::prefill_enforcement) text: a new text part of the last content
/// when it is a user content, else a new trailing user content (standing after message
/// `next_message - 1`), so no content is dropped or rewritten. Either way the content is
/// marked as touched (out of the cache prefix) and a [`Notice::PrefillDegraded`] says
/// which.
fn degrade_prefill(
    prefill: &str,
    pending: &mut Vec<Pending<'_>>,
    next_message: usize,
    notices: &mut Vec<Notice>,
) {
    let part = Part::text(prefill::prefill_enforcement(prefill));
    match pending.last_mut() {
        Some(last) if last.role == wire::Role::USER => {
            last.parts.push(part);
            last.touched = true;
            notices.push(Notice::PrefillDegraded { new_content: false });
        }
        _ => {
            pending.push(Pending {
                role: wire::Role::USER,
                parts: vec![part],
                last: next_message,
                touched: true,
            });
            notices.push(Notice::PrefillDegraded { new_content: true });
        }
    }
}
