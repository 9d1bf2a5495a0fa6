//! IR request → Chat Completions request.

use std::{borrow::Cow, ops::Range};

use chef_ir::{
    Attachment, AttachmentSource, CallIdRule, Content, Message, Request, Role, Target, ToolPass,
    ToolResult, WireNames,
};
use serde_json::{Map, Value};

use super::wire::{self, FileRef, FunctionDefinition, ImageUrl, MessageContent, Part, Tagged};
use crate::{
    error::Result,
    lowering::{
        self, Lower, TextPart, call_arguments, compaction, left_out, misplaced, text_part,
        thinking_notices,
    },
    notice::{Notice, PrefillPlacement},
    shared::{self, CompileOptions, is_file_id, wire_name},
};

/// A compiled Chat Completions request.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Compiled<'a> {
    /// The request body, borrowing texts and schemas from the IR request.
    pub body: wire::Request<'a>,
    /// Real ↔ wire tool names; pass it to [`crate::chat::parse_response`].
    pub names: WireNames,
    /// What could not be expressed, and what was done instead.
    pub notices: Vec<Notice>,
    /// How many leading `messages` belong to the cache-stable prefix: every message up to
    /// and including those compiled from the last IR message with `cache_breakpoint`.
    /// `None` when no message asks for a breakpoint. OpenAI caches prefixes on its own;
    /// this tells the caller how much of the serialised body it may reuse.
    pub stable_messages: Option<usize>,
    /// Which of [`notices`](Self::notices) are about the request's tools as declared
    /// ([`Notice::DeferLoadingIgnored`], [`Notice::NativeToolLeftOut`]): they depend on
    /// the tools alone. They follow the [`Notice::ToolRenamed`] notices (which depend on
    /// the whole name table) and precede those about messages. With [`ToolPass::Skip`]
    /// the range is empty, at the place they would take.
    pub tool_notices: Range<usize>,
}

/// Compiles an IR request into a Chat Completions request body.
///
/// - Function tools are sent nested, `{"type":"function","function":{name, description,
///   parameters}}`, under wire names valid for OpenAI; provider-native tools whose
///   targets include [`Target::OpenAiChat`] follow verbatim.
/// - System messages stay inline at their positions (Chat Completions accepts them
///   anywhere), so `positional` changes nothing here.
/// - Each tool result becomes its own `tool` message. Media in a result (a tool message
///   takes text only) is sent in one user message right after the run of tool messages.
/// - Assistant tool calls carry their arguments as compact JSON text; a string value is
///   raw text the model produced and is sent back as is (see the crate docs).
/// - A prefill is degraded to [`crate::prefill_enforcement`] text, appended to the last
///   message when it is a user or system message (its other parts are kept), otherwise
///   sent as a new trailing system message.
///
/// # Errors
///
/// [`Error::MisplacedContent`](crate::Error::MisplacedContent) for a tool call outside an assistant message or a tool
/// result outside a tool message.
pub fn compile<'a>(request: &'a Request, options: &CompileOptions) -> Result<Compiled<'a>> {
    compile_with(request, options, ToolPass::Convert)
}

/// Like [`compile`], with the request's tools converted or left out as `pass` says.
///
/// With [`ToolPass::Skip`] the body's `tools` is empty and [`Compiled::tool_notices`] is
/// an empty range where the tool notices would be; everything else (messages, the name
/// table, the other notices) is what [`compile`] gives. A caller that kept the serialised
/// `tools` and the tool notices of an earlier compile of the same tools puts them back
/// (`"tools":[…],` just after the opening `{`) and has [`compile`]'s output. The tools
/// still enter the name table, so calls are named as in that compile.
///
/// ```
/// use chef_ir::{Message, Request, ToolDefinition};
/// use chef_openai::{CompileOptions, ToolPass, chat};
/// use serde_json::json;
///
/// let request = Request::new(vec![Message::user("Hi")]).with_tools(vec![
///     ToolDefinition::new("later", json!({"type": "object"})).with_defer_loading(true),
/// ]);
/// let options = CompileOptions::default();
/// let full = chat::compile(&request, &options)?;
/// let skipped = chat::compile_with(&request, &options, ToolPass::Skip)?;
/// assert!(skipped.body.tools.is_empty());
/// assert_eq!((full.tool_notices.clone(), skipped.tool_notices.clone()), (0..1, 0..0));
/// let full = String::from_utf8(chat::to_vec(&full)?)?;
/// let skipped = String::from_utf8(chat::to_vec(&skipped)?)?;
/// assert_eq!(full.split_once(r#"}}],"#).map(|(_, rest)| rest), skipped.strip_prefix('{'));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// As [`compile`].
pub fn compile_with<'a>(
    request: &'a Request,
    options: &CompileOptions,
    pass: ToolPass,
) -> Result<Compiled<'a>> {
    let lowering::Start {
        names,
        mut notices,
        tools,
        tool_notices,
    } = lowering::start(request, pass, tools);
    let mut builder = Builder {
        names: &names,
        options,
        notices: &mut notices,
        messages: Vec::with_capacity(request.messages.len() + 1),
        spill: Vec::new(),
    };
    let mut stable_messages = lowering::lower_all(&mut builder, &request.messages)?;
    let mut messages = builder.messages;
    if let Some(prefill) = &request.prefill {
        let placement = degrade_prefill(&mut messages, prefill);
        if let PrefillPlacement::Appended { wire_index } = placement {
            stable_messages = stable_messages.map(|n: usize| n.min(wire_index));
        }
        notices.push(Notice::PrefillDegraded { into: placement });
    }
    Ok(Compiled {
        body: wire::Request { tools, messages },
        names,
        notices,
        stable_messages,
        tool_notices,
    })
}

fn tools<'a>(
    request: &'a Request,
    names: &WireNames,
    notices: &mut Vec<Notice>,
) -> Vec<Tagged<'a, wire::Tool<'a>>> {
    let mut out = Vec::with_capacity(request.tools.len() + request.native_tools.len());
    let mut deferred = Vec::new();
    for tool in &request.tools {
        if tool.defer_loading {
            deferred.push(tool.name.clone());
        }
        out.push(Tagged::Known(wire::Tool::Function {
            function: FunctionDefinition {
                name: wire_name(names, tool.name.as_str()),
                description: (!tool.description.is_empty())
                    .then_some(Cow::Borrowed(tool.description.as_str())),
                parameters: Some(Cow::Borrowed(&tool.input_schema)),
                strict: None,
            },
        }));
    }
    if !deferred.is_empty() {
        notices.push(Notice::DeferLoadingIgnored { tools: deferred });
    }
    lowering::native_tools(request, Target::OpenAiChat, notices, &mut out);
    out
}

struct Builder<'a, 'b> {
    names: &'b WireNames,
    options: &'b CompileOptions,
    notices: &'b mut Vec<Notice>,
    messages: Vec<wire::Message<'a>>,
    /// Parts of tool results a tool message cannot carry, sent after the tool messages.
    spill: Vec<Tagged<'a, Part<'a>>>,
}

impl<'a> Lower<'a> for Builder<'a, '_> {
    const TARGET: Target = Target::OpenAiChat;
    type Part = Part<'a>;

    fn message(&mut self, index: usize, message: &'a Message) -> Result<()> {
        match message.role {
            Role::System | Role::User => {
                let content = self.user_content(index, message)?;
                self.messages.push(if message.role == Role::System {
                    wire::Message::System {
                        content,
                        name: None,
                    }
                } else {
                    wire::Message::User {
                        content,
                        name: None,
                    }
                });
            }
            Role::Assistant => {
                let assistant = self.assistant(index, message)?;
                self.messages.push(wire::Message::Assistant(assistant));
            }
            Role::Tool => lowering::tool_message(self, index, message)?,
        }
        Ok(())
    }

    fn flush_spill(&mut self) {
        if !self.spill.is_empty() {
            let parts = std::mem::take(&mut self.spill);
            self.messages.push(wire::Message::User {
                content: MessageContent::Parts(parts),
                name: None,
            });
        }
    }

    fn len(&self) -> usize {
        self.messages.len()
    }

    fn notices(&mut self) -> &mut Vec<Notice> {
        self.notices
    }

    fn attachment(&mut self, index: usize, attachment: &'a Attachment) -> Tagged<'a, Part<'a>> {
        let media_type = attachment.media_type.as_str();
        let filename = attachment.filename.as_deref().map(Cow::Borrowed);
        if lowering::is_image(self.notices, index, attachment) {
            let url = match &attachment.source {
                AttachmentSource::Base64 { data } => Cow::Owned(shared::data_url(media_type, data)),
                AttachmentSource::Url { url } => Cow::Borrowed(url.as_str()),
            };
            return Tagged::Known(Part::ImageUrl {
                image_url: ImageUrl { url, detail: None },
            });
        }
        let file = match &attachment.source {
            AttachmentSource::Base64 { data } => FileRef {
                file_data: Some(Cow::Owned(shared::data_url(media_type, data))),
                file_id: None,
                filename,
            },
            AttachmentSource::Url { url } if url.starts_with("data:") => FileRef {
                file_data: Some(Cow::Borrowed(url.as_str())),
                file_id: None,
                filename,
            },
            AttachmentSource::Url { url } if is_file_id(url) => FileRef {
                file_data: None,
                file_id: Some(Cow::Borrowed(url.as_str())),
                filename,
            },
            AttachmentSource::Url { url } => {
                self.notices.push(Notice::DocumentUrlAsText {
                    message: index,
                    url: url.clone(),
                });
                let name = attachment.filename.as_deref().unwrap_or("document");
                return Tagged::Known(Part::Text {
                    text: Cow::Owned(format!("[Attachment {name} ({media_type}): {url}]")),
                });
            }
        };
        Tagged::Known(Part::File { file })
    }

    fn tool_result(&mut self, index: usize, result: &'a ToolResult) {
        let id = CallIdRule::OPENAI_CHAT.wire_id(result.tool_call_id.as_str());
        lowering::error_flag(self.notices, index, result);
        let mut texts = Vec::with_capacity(result.content.len());
        let mut moved = Vec::new();
        for content in &result.content {
            match content {
                Content::Text { text, .. } => texts.push(text_part(text)),
                Content::Attachment(attachment) => moved.push(self.attachment(index, attachment)),
                Content::Unknown {
                    target: Some(Target::OpenAiChat),
                    value,
                } => moved.push(Tagged::Unknown(Cow::Borrowed(value))),
                other @ (Content::Unknown { .. }
                | Content::Thinking { .. }
                | Content::RedactedThinking { .. }) => left_out(self.notices, index, other),
                Content::ToolCall(_) | Content::ToolResult(_) => {
                    texts.extend(lowering::nested_as_text(content));
                }
            }
        }
        if !moved.is_empty() {
            self.notices.push(Notice::ToolContentMoved {
                message: index,
                tool_call_id: result.tool_call_id.to_string(),
            });
            self.spill.push(Tagged::Known(Part::Text {
                text: Cow::Owned(format!("[Media from the result of tool call {id}]")),
            }));
            self.spill.extend(moved);
        }
        self.messages.push(wire::Message::Tool {
            content: collapse(texts),
            tool_call_id: id,
        });
    }

    fn spill(&mut self) -> &mut Vec<Tagged<'a, Part<'a>>> {
        &mut self.spill
    }

    /// A tool message's own content rides with the spilled parts.
    fn tool_message_own(&mut self, value: &'a Value) {
        self.spill.push(Tagged::Unknown(Cow::Borrowed(value)));
    }
}

impl<'a> Builder<'a, '_> {
    fn user_content(&mut self, index: usize, message: &'a Message) -> Result<MessageContent<'a>> {
        Ok(collapse(lowering::user_parts(self, index, message)?))
    }

    fn assistant(
        &mut self,
        index: usize,
        message: &'a Message,
    ) -> Result<wire::AssistantMessage<'a>> {
        let mut parts = Vec::new();
        let mut tool_calls = Vec::new();
        let mut extra = Map::new();
        let (mut thinking, mut redacted, mut attachments) = (0, 0, 0);
        let mut pending_thinking = String::new();
        for content in &message.content {
            match content {
                Content::Text { text, .. } => {
                    if pending_thinking.is_empty() {
                        parts.push(text_part(text));
                    } else {
                        let mut joined = std::mem::take(&mut pending_thinking);
                        joined.push_str(text);
                        parts.push(Tagged::Known(Part::Text {
                            text: Cow::Owned(joined),
                        }));
                    }
                }
                Content::Thinking { thinking: t, .. } => {
                    thinking += 1;
                    if self.options.thinking_as_text && !t.is_empty() {
                        pending_thinking.push_str(&shared::thinking_text(t));
                    }
                }
                Content::RedactedThinking { .. } => redacted += 1,
                Content::Attachment(_) => attachments += 1,
                Content::ToolCall(call) => {
                    let arguments = call_arguments(index, call)?;
                    let id = CallIdRule::OPENAI_CHAT.wire_id(call.id.as_str());
                    if let Cow::Owned(wire) = &id {
                        self.notices.push(Notice::CallIdRewritten {
                            message: index,
                            id: call.id.to_string(),
                            wire: wire.clone(),
                        });
                    }
                    tool_calls.push(Tagged::Known(wire::ToolCall::Function {
                        id,
                        function: wire::FunctionCall {
                            name: wire_name(self.names, call.name.as_str()),
                            arguments,
                        },
                    }));
                }
                Content::Unknown {
                    target: Some(Target::OpenAiChat),
                    value,
                } => match value {
                    Value::Object(map) if map.contains_key("type") && map.contains_key("id") => {
                        tool_calls.push(Tagged::Unknown(Cow::Borrowed(value)));
                    }
                    Value::Object(map) if !map.contains_key("type") => {
                        extra.extend(map.iter().map(|(k, v)| (k.clone(), v.clone())));
                    }
                    _ => parts.push(Tagged::Unknown(Cow::Borrowed(value))),
                },
                Content::Unknown { target, value } => {
                    if let Some(text) = compaction(self.notices, index, *target, value) {
                        parts.push(Tagged::Known(Part::Text { text }));
                    }
                }
                Content::ToolResult(_) => return Err(misplaced(index, message, "tool result")),
            }
        }
        if !pending_thinking.is_empty() {
            parts.push(Tagged::Known(Part::Text {
                text: Cow::Owned(pending_thinking),
            }));
        }
        if thinking > 0 && self.options.thinking_as_text {
            self.notices.push(Notice::ThinkingAsText { message: index });
            thinking = 0;
        }
        thinking_notices(self.notices, index, thinking, redacted);
        if attachments > 0 {
            self.notices.push(Notice::AttachmentDropped {
                message: index,
                count: attachments,
            });
        }
        let content = if parts.is_empty() && !tool_calls.is_empty() {
            None
        } else {
            Some(collapse(parts))
        };
        Ok(wire::AssistantMessage {
            content,
            refusal: None,
            tool_calls,
            extra,
        })
    }
}

impl<'a> TextPart<'a> for Part<'a> {
    fn text(text: Cow<'a, str>) -> Self {
        Part::Text { text }
    }

    fn text_mut(&mut self) -> Option<&mut Cow<'a, str>> {
        match self {
            Part::Text { text } => Some(text),
            _ => None,
        }
    }
}

/// Parts as message content (see [`lowering::lone_text`]).
fn collapse<'a>(mut parts: Vec<Tagged<'a, Part<'a>>>) -> MessageContent<'a> {
    match lowering::lone_text(&mut parts) {
        Some(text) => MessageContent::Text(text),
        None => MessageContent::Parts(parts),
    }
}

/// Appends the prefill instruction to the last message when it is a user or system
/// message; otherwise adds a trailing system message, so no earlier turn is rewritten.
fn degrade_prefill(messages: &mut Vec<wire::Message<'_>>, prefill: &str) -> PrefillPlacement {
    let enforcement = shared::prefill_enforcement(prefill);
    let wire_index = messages.len().saturating_sub(1);
    if let Some(wire::Message::User { content, .. } | wire::Message::System { content, .. }) =
        messages.last_mut()
    {
        append_text(content, enforcement);
        return PrefillPlacement::Appended { wire_index };
    }
    messages.push(wire::Message::System {
        content: MessageContent::Text(Cow::Owned(enforcement)),
        name: None,
    });
    PrefillPlacement::NewSystemMessage {
        wire_index: messages.len() - 1,
    }
}

/// Appends `"\n\n" + text` to the last text of `content`, or adds a text part when there
/// is none; other parts (media) are kept.
fn append_text(content: &mut MessageContent<'_>, text: String) {
    match content {
        MessageContent::Text(existing) => lowering::append_paragraph(existing, &text),
        MessageContent::Parts(parts) => lowering::append_to_parts(parts, text),
    }
}

/// Serialises a compiled body to compact JSON, and returns how many leading bytes hold
/// the cache-stable prefix (through the last stable message, excluding the `,` or `]`
/// after it).
pub(crate) fn write(compiled: &Compiled<'_>) -> Result<(Vec<u8>, Option<usize>)> {
    let body = &compiled.body;
    let mut buf = Vec::with_capacity(4096);
    lowering::open_body(&mut buf, &body.tools)?;
    buf.extend_from_slice(b"\"messages\":[");
    let prefix = lowering::write_elements(&mut buf, &body.messages, compiled.stable_messages)?;
    buf.extend_from_slice(b"]}");
    Ok((buf, prefix))
}
