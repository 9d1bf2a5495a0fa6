//! IR request → Responses request.

use std::{borrow::Cow, ops::Range};

use chef_ir::{
    Attachment, AttachmentSource, Content, Message, Request, Role, Target, ToolPass, ToolResult,
    WireNames,
};
use serde_json::{Map, Value};

use super::wire::{
    self, FunctionCallItem, FunctionCallOutputItem, FunctionTool, Input, InputFile, InputImage,
    Item, MessageContent, MessageItem, Part, Tagged,
};
use crate::{
    error::{Error, Result},
    lowering::{
        self, Lower, TextPart, call_arguments, compaction, left_out, misplaced, thinking_notices,
    },
    notice::{Notice, PrefillPlacement},
    shared::{self, CompileOptions, wire_name},
};

/// A compiled Responses request.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Compiled<'a> {
    /// The request body, borrowing texts and schemas from the IR request.
    pub body: wire::Request<'a>,
    /// Real ↔ wire tool names; pass it to [`crate::responses::parse_response`].
    pub names: WireNames,
    /// What could not be expressed, and what was done instead.
    pub notices: Vec<Notice>,
    /// How many leading `input` items belong to the cache-stable prefix (everything
    /// compiled from IR messages up to the last one with `cache_breakpoint`; `tools` and
    /// `instructions` come before them). `None` when no message asks for a breakpoint.
    pub stable_items: Option<usize>,
    /// Which of [`notices`](Self::notices) are about the request's tools as declared
    /// ([`Notice::DeferLoadingIgnored`], [`Notice::NativeToolLeftOut`]): they depend on
    /// the tools alone. They follow the [`Notice::ToolRenamed`] notices (which depend on
    /// the whole name table) and precede those about messages. With [`ToolPass::Skip`]
    /// the range is empty, at the place they would take.
    pub tool_notices: Range<usize>,
}

/// Item types that carry ids pairing a function call or message with the reasoning
/// before it: in the IR, a `Content::Unknown` with one of these tags is the header of the
/// typed content that follows (see [`crate::responses`]).
const HEADER_TAGS: [&str; 2] = ["message", "function_call"];

/// Compiles an IR request into a Responses request body.
///
/// - Function tools are sent flat, `{"type":"function","name",…}`, under wire names
///   valid for OpenAI; provider-native tools whose targets include
///   [`Target::OpenAiResponses`] follow verbatim. `defer_loading` is sent only when one
///   of those native tools is `{"type":"tool_search",…}`.
/// - Non-positional system messages are joined (`"\n\n"`) into `instructions`;
///   positional ones, and system messages carrying media, stay inline as system message
///   items.
/// - Assistant turns become items in content order: `Content::Unknown` items of this
///   target (reasoning, server-tool calls) verbatim, text as `output_text` message items,
///   calls as `function_call` items. Item headers (see the module docs) restore the
///   `id`/`status` of the message or call they precede.
/// - Each tool result becomes a `function_call_output` joined to its call by `call_id`;
///   media in a result stays in it (`output` takes parts).
/// - A prefill is degraded to [`crate::prefill_enforcement`] text appended to the last
///   item when it is a user message (its media kept), to `instructions` when there is no
///   input at all, and otherwise sent as a new trailing system message item.
///
/// # Errors
///
/// [`Error::MisplacedContent`] for a tool call outside an assistant message or a tool
/// result outside a tool message.
pub fn compile<'a>(request: &'a Request, options: &CompileOptions) -> Result<Compiled<'a>> {
    compile_with(request, options, ToolPass::Convert)
}

/// Like [`compile`], with the request's tools converted or left out as `pass` says.
///
/// With [`ToolPass::Skip`] the body's `tools` is empty and [`Compiled::tool_notices`] is
/// an empty range where the tool notices would be; everything else (items, instructions,
/// the name table, the other notices) is what [`compile`] gives. A caller that kept the
/// serialised `tools` and the tool notices of an earlier compile of the same tools puts
/// them back (`"tools":[…],` just after the opening `{`) and has [`compile`]'s output.
/// The tools still enter the name table, so calls are named as in that compile.
///
/// ```
/// use chef_ir::{Message, Request, ToolDefinition};
/// use chef_openai::{CompileOptions, ToolPass, responses};
/// use serde_json::json;
///
/// let request = Request::new(vec![Message::user("Hi")]).with_tools(vec![
///     ToolDefinition::new("later", json!({"type": "object"})).with_defer_loading(true),
/// ]);
/// let options = CompileOptions::default();
/// let full = responses::compile(&request, &options)?;
/// let skipped = responses::compile_with(&request, &options, ToolPass::Skip)?;
/// assert!(skipped.body.tools.is_empty());
/// assert_eq!((full.tool_notices.clone(), skipped.tool_notices.clone()), (0..1, 0..0));
/// let full = String::from_utf8(responses::to_vec(&full)?)?;
/// let skipped = String::from_utf8(responses::to_vec(&skipped)?)?;
/// assert_eq!(full.split_once(r#"}],"#).map(|(_, rest)| rest), skipped.strip_prefix('{'));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// As [`compile`].
pub fn compile_with<'a>(
    request: &'a Request,
    _options: &CompileOptions,
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
        notices: &mut notices,
        items: Vec::with_capacity(request.messages.len() * 2),
        instructions: Vec::new(),
        spill: Vec::new(),
        started: false,
    };
    let mut stable_items = lowering::lower_all(&mut builder, &request.messages)?;
    let Builder {
        mut items,
        mut instructions,
        ..
    } = builder;
    if let Some(prefill) = &request.prefill {
        let placement = degrade_prefill(&mut items, &mut instructions, prefill);
        match placement {
            PrefillPlacement::Appended { wire_index } => {
                stable_items = stable_items.map(|n: usize| n.min(wire_index));
            }
            PrefillPlacement::Instructions => stable_items = stable_items.map(|_| 0),
            _ => {}
        }
        notices.push(Notice::PrefillDegraded { into: placement });
    }
    let instructions = match instructions.len() {
        0 => None,
        1 => instructions.pop(),
        _ => Some(Cow::Owned(
            instructions
                .iter()
                .map(AsRef::as_ref)
                .collect::<Vec<&str>>()
                .join("\n\n"),
        )),
    };
    Ok(Compiled {
        body: wire::Request {
            tools,
            instructions,
            input: Input::Items(items),
        },
        names,
        notices,
        stable_items,
        tool_notices,
    })
}

fn tools<'a>(
    request: &'a Request,
    names: &WireNames,
    notices: &mut Vec<Notice>,
) -> Vec<Tagged<'a, wire::Tool<'a>>> {
    let tool_search = request.native_tools.iter().any(|native| {
        native.targets.contains(&Target::OpenAiResponses)
            && native.value.get("type").and_then(Value::as_str) == Some("tool_search")
    });
    let mut out = Vec::with_capacity(request.tools.len() + request.native_tools.len());
    let mut ignored = Vec::new();
    for tool in &request.tools {
        let defer_loading = match (tool.defer_loading, tool_search) {
            (true, true) => Some(true),
            (true, false) => {
                ignored.push(tool.name.clone());
                None
            }
            (false, _) => None,
        };
        out.push(Tagged::Known(wire::Tool::Function(FunctionTool {
            name: wire_name(names, tool.name.as_str()),
            description: (!tool.description.is_empty())
                .then_some(Cow::Borrowed(tool.description.as_str())),
            parameters: Some(Cow::Borrowed(&tool.input_schema)),
            // Said, not left out: Responses reads a function tool without `strict` as
            // strict where the schema allows it (every optional parameter then required),
            // unlike Chat Completions, which reads it as not strict.
            strict: Some(false),
            defer_loading,
        })));
    }
    if !ignored.is_empty() {
        notices.push(Notice::DeferLoadingIgnored { tools: ignored });
    }
    lowering::native_tools(request, Target::OpenAiResponses, notices, &mut out);
    out
}

struct Builder<'a, 'b> {
    names: &'b WireNames,
    notices: &'b mut Vec<Notice>,
    items: Vec<Tagged<'a, Item<'a>>>,
    instructions: Vec<Cow<'a, str>>,
    /// Text or media given in a tool message outside any result; sent after the run of
    /// tool outputs as a user message.
    spill: Vec<Tagged<'a, Part<'a>>>,
    started: bool,
}

/// The assistant message item being filled.
struct OpenMessage<'a> {
    parts: Vec<Tagged<'a, Part<'a>>>,
    extra: Map<String, Value>,
    /// The parts as received (with annotations), from the header's `content`.
    verbatim: Option<Vec<Value>>,
}

impl OpenMessage<'_> {
    /// A header's `content` holds the parts as received (with annotations); it replaces
    /// the rebuilt parts when their texts are unchanged.
    fn opened(mut extra: Map<String, Value>) -> Self {
        let verbatim = match extra.remove("content") {
            Some(Value::Array(parts)) => Some(parts),
            _ => None,
        };
        Self {
            parts: Vec::new(),
            extra,
            verbatim,
        }
    }
}

/// Whether rebuilt parts say the same as the parts received.
fn same_text(parts: &[Tagged<'_, Part<'_>>], verbatim: &[Value]) -> bool {
    parts.len() == verbatim.len()
        && parts.iter().zip(verbatim).all(|(part, value)| match part {
            Tagged::Known(Part::OutputText { text, .. }) => {
                value.get("type").and_then(Value::as_str) == Some("output_text")
                    && value.get("text").and_then(Value::as_str) == Some(text.as_ref())
            }
            Tagged::Unknown(unknown) => unknown.as_ref() == value,
            Tagged::Known(_) => false,
        })
}

impl<'a> Lower<'a> for Builder<'a, '_> {
    const TARGET: Target = Target::OpenAiResponses;
    type Part = Part<'a>;

    fn message(&mut self, index: usize, message: &'a Message) -> Result<()> {
        match message.role {
            Role::System => self.system(index, message)?,
            Role::User => {
                self.started = true;
                let parts = self.input_parts(index, message)?;
                self.items.push(message_item("user", parts, Map::new()));
            }
            Role::Assistant => {
                self.started = true;
                self.assistant(index, message)?;
            }
            Role::Tool => {
                self.started = true;
                lowering::tool_message(self, index, message)?;
            }
        }
        Ok(())
    }

    fn flush_spill(&mut self) {
        if !self.spill.is_empty() {
            let parts = std::mem::take(&mut self.spill);
            self.items.push(message_item("user", parts, Map::new()));
        }
    }

    fn len(&self) -> usize {
        self.items.len()
    }

    fn notices(&mut self) -> &mut Vec<Notice> {
        self.notices
    }

    fn attachment(&mut self, index: usize, attachment: &'a Attachment) -> Tagged<'a, Part<'a>> {
        let media_type = attachment.media_type.as_str();
        let filename = attachment.filename.as_deref().map(Cow::Borrowed);
        let (inline, by_url) = match &attachment.source {
            AttachmentSource::Base64 { data } => {
                (Some(Cow::Owned(shared::data_url(media_type, data))), None)
            }
            AttachmentSource::Url { url } if url.starts_with("data:") => {
                (Some(Cow::Borrowed(url.as_str())), None)
            }
            AttachmentSource::Url { url } => (None, Some(url.as_str())),
        };
        let file_id = by_url
            .filter(|url| shared::is_file_id(url))
            .map(Cow::Borrowed);
        if lowering::is_image(self.notices, index, attachment) {
            let image_url = match (&file_id, inline, by_url) {
                (Some(_), _, _) => None,
                (None, Some(data), _) => Some(data),
                (None, None, url) => url.map(Cow::Borrowed),
            };
            return Tagged::Known(Part::InputImage(InputImage {
                image_url,
                file_id,
                detail: None,
            }));
        }
        let file_url = if file_id.is_some() {
            None
        } else {
            by_url.map(Cow::Borrowed)
        };
        Tagged::Known(Part::InputFile(InputFile {
            file_data: inline,
            file_id,
            file_url,
            filename,
        }))
    }

    fn tool_result(&mut self, index: usize, result: &'a ToolResult) {
        let id = result.tool_call_id.as_str();
        lowering::error_flag(self.notices, index, result);
        let mut parts = Vec::with_capacity(result.content.len());
        for content in &result.content {
            if let Some(part) = self.part(index, content) {
                parts.push(part);
                continue;
            }
            match content {
                // Sent by `part`.
                Content::Text { .. } | Content::Attachment(_) => {}
                other @ (Content::Unknown { .. }
                | Content::Thinking { .. }
                | Content::RedactedThinking { .. }) => left_out(self.notices, index, other),
                Content::ToolCall(_) | Content::ToolResult(_) => {
                    parts.extend(lowering::nested_as_text(content));
                }
            }
        }
        let output = match lowering::lone_text(&mut parts) {
            Some(text) => MessageContent::Text(text),
            None => MessageContent::Parts(parts),
        };
        self.items.push(Tagged::Known(Item::FunctionCallOutput(
            FunctionCallOutputItem {
                call_id: Cow::Borrowed(id),
                output,
                extra: Map::new(),
            },
        )));
    }

    fn spill(&mut self) -> &mut Vec<Tagged<'a, Part<'a>>> {
        &mut self.spill
    }

    /// A tool message's own content is an item of its own.
    fn tool_message_own(&mut self, value: &'a Value) {
        self.items.push(Tagged::Unknown(Cow::Borrowed(value)));
    }
}

impl<'a> Builder<'a, '_> {
    fn system(&mut self, index: usize, message: &'a Message) -> Result<()> {
        let text_only = message.content.iter().all(|c| {
            matches!(
                c,
                Content::Text { .. } | Content::Thinking { .. } | Content::RedactedThinking { .. }
            )
        });
        if message.positional || !text_only {
            if !message.positional {
                self.notices
                    .push(Notice::SystemKeptInline { message: index });
            }
            let parts = self.input_parts(index, message)?;
            self.items.push(message_item("system", parts, Map::new()));
            return Ok(());
        }
        if self.started {
            self.notices.push(Notice::SystemHoisted { message: index });
        }
        let (thinking, redacted) = count_thinking(message);
        thinking_notices(self.notices, index, thinking, redacted);
        let mut texts = message.content.iter().filter_map(Content::as_text);
        let text = match (texts.next(), texts.next()) {
            (Some(one), None) => Cow::Borrowed(one),
            (None, _) => Cow::Borrowed(""),
            (Some(_), Some(_)) => Cow::Owned(message.text()),
        };
        self.instructions.push(text);
        Ok(())
    }

    fn input_parts(
        &mut self,
        index: usize,
        message: &'a Message,
    ) -> Result<Vec<Tagged<'a, Part<'a>>>> {
        let mut parts = lowering::user_parts(self, index, message)?;
        if parts.is_empty() {
            parts.push(input_text(""));
        }
        Ok(parts)
    }

    fn assistant(&mut self, index: usize, message: &'a Message) -> Result<()> {
        let first_item = self.items.len();
        let mut open: Option<OpenMessage<'a>> = None;
        let mut message_header: Option<Map<String, Value>> = None;
        let mut call_header: Option<Map<String, Value>> = None;
        let mut attachments = 0;
        for content in &message.content {
            match content {
                Content::Text { text, .. } => {
                    if text.is_empty() && open.is_none() {
                        continue;
                    }
                    open.get_or_insert_with(|| {
                        OpenMessage::opened(message_header.take().unwrap_or_default())
                    })
                    .parts
                    .push(Tagged::Known(Part::OutputText {
                        text: Cow::Borrowed(text),
                        extra: Map::new(),
                    }));
                }
                Content::ToolCall(call) => {
                    self.close(&mut open);
                    let arguments = call_arguments(index, call)?;
                    self.items
                        .push(Tagged::Known(Item::FunctionCall(FunctionCallItem {
                            call_id: Cow::Borrowed(call.id.as_str()),
                            name: wire_name(self.names, call.name.as_str()),
                            arguments,
                            extra: call_header.take().unwrap_or_default(),
                        })));
                }
                Content::Unknown {
                    target: Some(Target::OpenAiResponses),
                    value,
                } => {
                    let tag = value.get("type").and_then(Value::as_str);
                    match (tag, value) {
                        (Some(tag), Value::Object(map)) if HEADER_TAGS.contains(&tag) => {
                            let mut header = map.clone();
                            header.remove("type");
                            if tag == "message" {
                                self.close(&mut open);
                                header.remove("role");
                                message_header = Some(header);
                            } else {
                                for key in ["call_id", "name", "arguments"] {
                                    header.remove(key);
                                }
                                call_header = Some(header);
                            }
                        }
                        (Some("refusal"), _) => {
                            open.get_or_insert_with(|| {
                                OpenMessage::opened(message_header.take().unwrap_or_default())
                            })
                            .parts
                            .push(Tagged::Unknown(Cow::Borrowed(value)));
                        }
                        _ => {
                            self.close(&mut open);
                            self.items.push(Tagged::Unknown(Cow::Borrowed(value)));
                        }
                    }
                }
                Content::Unknown { target, value } => {
                    if let Some(text) = compaction(self.notices, index, *target, value) {
                        open.get_or_insert_with(|| {
                            OpenMessage::opened(message_header.take().unwrap_or_default())
                        })
                        .parts
                        .push(Tagged::Known(Part::OutputText {
                            text,
                            extra: Map::new(),
                        }));
                    }
                }
                Content::Attachment(_) => attachments += 1,
                Content::Thinking { .. } | Content::RedactedThinking { .. } => {}
                Content::ToolResult(_) => return Err(misplaced(index, message, "tool result")),
            }
        }
        self.close(&mut open);
        if self.items.len() == first_item {
            // A turn that produced nothing else still says the assistant spoke.
            let parts = vec![Tagged::Known(Part::OutputText {
                text: Cow::Borrowed(""),
                extra: Map::new(),
            })];
            let extra = message_header.take().unwrap_or_default();
            self.items.push(message_item("assistant", parts, extra));
        }
        let (thinking, redacted) = count_thinking(message);
        thinking_notices(self.notices, index, thinking, redacted);
        if attachments > 0 {
            self.notices.push(Notice::AttachmentDropped {
                message: index,
                count: attachments,
            });
        }
        Ok(())
    }

    fn close(&mut self, open: &mut Option<OpenMessage<'a>>) {
        if let Some(OpenMessage {
            mut parts,
            extra,
            verbatim,
        }) = open.take()
        {
            if let Some(verbatim) = verbatim
                && same_text(&parts, &verbatim)
            {
                parts = verbatim
                    .into_iter()
                    .map(|value| Tagged::Unknown(Cow::Owned(value)))
                    .collect();
            }
            self.items.push(message_item("assistant", parts, extra));
        }
    }

    /// The input part of text, media or this target's own content, which a user message
    /// and a tool result send alike; `None` for any other content, which the caller
    /// handles itself.
    fn part(&mut self, index: usize, content: &'a Content) -> Option<Tagged<'a, Part<'a>>> {
        Some(match content {
            Content::Text { text, .. } => input_text(text),
            Content::Attachment(attachment) => self.attachment(index, attachment),
            Content::Unknown {
                target: Some(Target::OpenAiResponses),
                value,
            } => Tagged::Unknown(Cow::Borrowed(value)),
            _ => return None,
        })
    }
}

fn count_thinking(message: &Message) -> (usize, usize) {
    message.content.iter().fold((0, 0), |(t, r), c| match c {
        Content::Thinking { .. } => (t + 1, r),
        Content::RedactedThinking { .. } => (t, r + 1),
        _ => (t, r),
    })
}

impl<'a> TextPart<'a> for Part<'a> {
    fn text(text: Cow<'a, str>) -> Self {
        Part::InputText { text }
    }

    fn text_mut(&mut self) -> Option<&mut Cow<'a, str>> {
        match self {
            Part::InputText { text } => Some(text),
            _ => None,
        }
    }
}

fn input_text(text: &str) -> Tagged<'_, Part<'_>> {
    lowering::text_part(text)
}

fn message_item<'a>(
    role: &'static str,
    parts: Vec<Tagged<'a, Part<'a>>>,
    extra: Map<String, Value>,
) -> Tagged<'a, Item<'a>> {
    Tagged::Known(Item::Message(MessageItem {
        role: Cow::Borrowed(role),
        content: MessageContent::Parts(parts),
        extra,
    }))
}

fn degrade_prefill<'a>(
    items: &mut Vec<Tagged<'a, Item<'a>>>,
    instructions: &mut Vec<Cow<'a, str>>,
    prefill: &str,
) -> PrefillPlacement {
    let enforcement = shared::prefill_enforcement(prefill);
    if items.is_empty() {
        instructions.push(Cow::Owned(enforcement));
        return PrefillPlacement::Instructions;
    }
    let wire_index = items.len() - 1;
    if let Some(Tagged::Known(Item::Message(MessageItem {
        role,
        content: MessageContent::Parts(parts),
        ..
    }))) = items.last_mut()
        && role == "user"
    {
        lowering::append_to_parts(parts, enforcement);
        return PrefillPlacement::Appended { wire_index };
    }
    items.push(message_item(
        "system",
        vec![Tagged::Known(Part::InputText {
            text: Cow::Owned(enforcement),
        })],
        Map::new(),
    ));
    PrefillPlacement::NewSystemMessage {
        wire_index: items.len() - 1,
    }
}

/// Serialises a compiled body to compact JSON, and returns how many leading bytes hold
/// the cache-stable prefix.
pub(crate) fn write(compiled: &Compiled<'_>) -> Result<(Vec<u8>, Option<usize>)> {
    let body = &compiled.body;
    let mut buf = Vec::with_capacity(4096);
    let mut prefix = None;
    lowering::open_body(&mut buf, &body.tools)?;
    if let Some(instructions) = &body.instructions {
        buf.extend_from_slice(b"\"instructions\":");
        serde_json::to_writer(&mut buf, instructions).map_err(Error::Serialize)?;
        buf.push(b',');
    }
    buf.extend_from_slice(b"\"input\":");
    match &body.input {
        Input::Text(text) => {
            serde_json::to_writer(&mut buf, text).map_err(Error::Serialize)?;
        }
        Input::Items(items) => {
            buf.push(b'[');
            if compiled.stable_items == Some(0) {
                prefix = Some(buf.len());
            }
            if let Some(end) = lowering::write_elements(&mut buf, items, compiled.stable_items)? {
                prefix = Some(end);
            }
            buf.push(b']');
        }
    }
    buf.push(b'}');
    Ok((buf, prefix))
}
