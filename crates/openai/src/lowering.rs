//! What the Chat Completions and Responses compilers share: the name table and tool
//! pass, native tools, the walk over the messages with its cache-stable count, the
//! notices for content neither API takes, call arguments, the text-part rules and the
//! serialised body's `tools` member and element list. Each API's `compile` module keeps
//! only what its wire shape needs.

use std::{borrow::Cow, ops::Range};

use chef_ir::{
    Attachment, Content, Message, Request, Role, Target, ToolCall, ToolPass, ToolResult, WireNames,
};
use serde::Serialize;
use serde_json::Value;

use crate::{
    error::{Error, Result},
    notice::Notice,
    shared,
    tagged::Tagged,
};

/// The start of a compile: the wire-name table (with its rename notices), the tools as
/// `pass` says, and the range of notices about the tools.
pub(crate) struct Start<T> {
    pub(crate) names: WireNames,
    pub(crate) notices: Vec<Notice>,
    pub(crate) tools: Vec<T>,
    pub(crate) tool_notices: Range<usize>,
}

/// Builds the name table and, with [`ToolPass::Convert`], the tools through `convert`.
pub(crate) fn start<'a, T>(
    request: &'a Request,
    pass: ToolPass,
    convert: impl FnOnce(&'a Request, &WireNames, &mut Vec<Notice>) -> Vec<T>,
) -> Start<T> {
    let mut notices = Vec::new();
    let names = shared::wire_names(request, &mut notices);
    let tools_from = notices.len();
    let tools = match pass {
        ToolPass::Convert => convert(request, &names, &mut notices),
        ToolPass::Skip => Vec::new(),
    };
    let tool_notices = tools_from..notices.len();
    Start {
        names,
        notices,
        tools,
        tool_notices,
    }
}

/// Sends the native tools aimed at `target` verbatim, after the function tools; each
/// other native tool is left out with a notice.
pub(crate) fn native_tools<'a, T>(
    request: &'a Request,
    target: Target,
    notices: &mut Vec<Notice>,
    out: &mut Vec<Tagged<'a, T>>,
) {
    for (index, native) in request.native_tools.iter().enumerate() {
        if native.targets.contains(&target) {
            out.push(Tagged::Unknown(Cow::Borrowed(&native.value)));
        } else {
            notices.push(Notice::NativeToolLeftOut {
                index,
                targets: native.targets.clone(),
            });
        }
    }
}

/// A compiler's per-request state, turning IR messages into wire elements (messages or
/// items) one at a time. [`user_parts`] and [`tool_message`] are the walks both APIs
/// share over it.
pub(crate) trait Lower<'a> {
    /// The target whose own content (`Content::Unknown` aimed at it) is sent verbatim.
    const TARGET: Target;
    /// The API's content part.
    type Part: TextPart<'a>;

    /// Adds what message `index` becomes.
    fn message(&mut self, index: usize, message: &'a Message) -> Result<()>;
    /// Sends what tool messages held outside any result, after their run.
    fn flush_spill(&mut self);
    /// How many wire elements there are so far.
    fn len(&self) -> usize;
    /// The notices so far.
    fn notices(&mut self) -> &mut Vec<Notice>;
    /// The part an attachment of message `index` becomes.
    fn attachment(&mut self, index: usize, attachment: &'a Attachment) -> Tagged<'a, Self::Part>;
    /// Adds what a tool result in message `index` becomes.
    fn tool_result(&mut self, index: usize, result: &'a ToolResult);
    /// The parts tool messages held outside any result, waiting for [`flush_spill`](Self::flush_spill).
    fn spill(&mut self) -> &mut Vec<Tagged<'a, Self::Part>>;
    /// Adds content of [`TARGET`](Self::TARGET) that a tool message held outside any result.
    fn tool_message_own(&mut self, value: &'a Value);
}

/// The parts of a system or user message: text, media and content of the API's own
/// target as they are, an Anthropic compaction summary as text (other foreign content
/// left out), thinking left out; each reported.
///
/// # Errors
///
/// [`Error::MisplacedContent`] for a tool call or result.
pub(crate) fn user_parts<'a, L: Lower<'a>>(
    lower: &mut L,
    index: usize,
    message: &'a Message,
) -> Result<Vec<Tagged<'a, L::Part>>> {
    let mut parts = Vec::with_capacity(message.content.len());
    let (mut thinking, mut redacted) = (0, 0);
    for content in &message.content {
        match content {
            Content::Text { text, .. } => parts.push(text_part(text)),
            Content::Attachment(attachment) => parts.push(lower.attachment(index, attachment)),
            Content::Unknown {
                target: Some(target),
                value,
            } if *target == L::TARGET => parts.push(Tagged::Unknown(Cow::Borrowed(value))),
            Content::Unknown { target, value } => {
                if let Some(text) = compaction(lower.notices(), index, *target, value) {
                    parts.push(Tagged::Known(L::Part::text(text)));
                }
            }
            Content::Thinking { .. } => thinking += 1,
            Content::RedactedThinking { .. } => redacted += 1,
            Content::ToolCall(_) => return Err(misplaced(index, message, "tool call")),
            Content::ToolResult(_) => return Err(misplaced(index, message, "tool result")),
        }
    }
    thinking_notices(lower.notices(), index, thinking, redacted);
    Ok(parts)
}

/// Lowers a tool message: each result through [`Lower::tool_result`]; text and media
/// outside any result to the spill, content of the API's own target to
/// [`Lower::tool_message_own`]; foreign content and thinking left out (reported).
///
/// # Errors
///
/// [`Error::MisplacedContent`] for a tool call.
pub(crate) fn tool_message<'a, L: Lower<'a>>(
    lower: &mut L,
    index: usize,
    message: &'a Message,
) -> Result<()> {
    for content in &message.content {
        match content {
            Content::ToolResult(result) => lower.tool_result(index, result),
            Content::Text { text, .. } => lower.spill().push(text_part(text)),
            Content::Attachment(attachment) => {
                let part = lower.attachment(index, attachment);
                lower.spill().push(part);
            }
            Content::Unknown {
                target: Some(target),
                value,
            } if *target == L::TARGET => lower.tool_message_own(value),
            other @ (Content::Unknown { .. }
            | Content::Thinking { .. }
            | Content::RedactedThinking { .. }) => left_out(lower.notices(), index, other),
            Content::ToolCall(_) => return Err(misplaced(index, message, "tool call")),
        }
    }
    Ok(())
}

/// A call or result nested in a tool result has no meaning there: it is kept visible as a
/// text part holding its JSON rather than lost (`None` if it cannot be serialised).
pub(crate) fn nested_as_text<'a, P: TextPart<'a>>(content: &Content) -> Option<Tagged<'a, P>> {
    let json = serde_json::to_string(content).ok()?;
    Some(Tagged::Known(P::text(Cow::Owned(json))))
}

/// Lowers every message in order, flushing the spill before each non-tool message and at
/// the end. Returns how many leading wire elements come from messages up to the last one
/// with a `cache_breakpoint` (`None` when none has one).
pub(crate) fn lower_all<'a>(
    lower: &mut impl Lower<'a>,
    messages: &'a [Message],
) -> Result<Option<usize>> {
    let mut stable = None;
    for (index, message) in messages.iter().enumerate() {
        if message.role != Role::Tool {
            lower.flush_spill();
        }
        lower.message(index, message)?;
        if message.cache_breakpoint {
            stable = Some(lower.len());
        }
    }
    lower.flush_spill();
    Ok(stable)
}

/// A call's arguments as wire text (see [`shared::arguments_to_text`]), the error naming
/// message `index` and the call.
pub(crate) fn call_arguments(index: usize, call: &ToolCall) -> Result<Cow<'_, str>> {
    shared::arguments_to_text(&call.arguments).map_err(|source| Error::Arguments {
        message: index,
        call_id: call.id.to_string(),
        source,
    })
}

/// Neither API has an error flag on a tool result: say it was dropped.
pub(crate) fn error_flag(notices: &mut Vec<Notice>, index: usize, result: &ToolResult) {
    if result.is_error {
        notices.push(Notice::ToolErrorFlagDropped {
            message: index,
            tool_call_id: result.tool_call_id.as_str().to_owned(),
        });
    }
}

/// An Anthropic compaction summary as text (reported); any other foreign value is left
/// out (reported).
pub(crate) fn compaction<'a>(
    notices: &mut Vec<Notice>,
    index: usize,
    target: Option<Target>,
    value: &Value,
) -> Option<Cow<'a, str>> {
    if let Some(text) = shared::compaction_text(target, value) {
        notices.push(Notice::CompactionAsText { message: index });
        return Some(Cow::Owned(text));
    }
    foreign(notices, index, target);
    None
}

/// Content aimed at another target is left out (reported).
pub(crate) fn foreign(notices: &mut Vec<Notice>, index: usize, target: Option<Target>) {
    notices.push(Notice::ForeignContentDropped {
        message: index,
        target,
    });
}

/// Reports what a tool message or result cannot carry and leaves out: content aimed at
/// another target, thinking and redacted thinking. Other content is not reported here.
pub(crate) fn left_out(notices: &mut Vec<Notice>, index: usize, content: &Content) {
    match content {
        Content::Unknown { target, .. } => foreign(notices, index, *target),
        Content::Thinking { .. } => thinking_notices(notices, index, 1, 0),
        Content::RedactedThinking { .. } => thinking_notices(notices, index, 0, 1),
        _ => {}
    }
}

/// Whether `attachment` is an image. Neither API takes an image's file name: one it has
/// is reported as dropped.
pub(crate) fn is_image(notices: &mut Vec<Notice>, index: usize, attachment: &Attachment) -> bool {
    let image = attachment.media_type.starts_with("image/");
    if image && let Some(name) = &attachment.filename {
        notices.push(Notice::FilenameDropped {
            message: index,
            filename: name.clone(),
        });
    }
    image
}

/// Reports thinking and redacted thinking blocks left out of message `index`.
pub(crate) fn thinking_notices(
    notices: &mut Vec<Notice>,
    index: usize,
    thinking: usize,
    redacted: usize,
) {
    if thinking > 0 {
        notices.push(Notice::ThinkingDropped {
            message: index,
            blocks: thinking,
        });
    }
    if redacted > 0 {
        notices.push(Notice::RedactedThinkingDropped {
            message: index,
            blocks: redacted,
        });
    }
}

/// A tool call or result in a message whose role cannot hold it.
pub(crate) fn misplaced(index: usize, message: &Message, kind: &'static str) -> Error {
    Error::MisplacedContent {
        message: index,
        role: message.role,
        kind,
    }
}

/// An API's content part with a plain-text kind (`text` in Chat, `input_text` in
/// Responses).
pub(crate) trait TextPart<'a>: Sized {
    /// A plain-text part.
    fn text(text: Cow<'a, str>) -> Self;
    /// The text of a plain-text part; `None` for any other part.
    fn text_mut(&mut self) -> Option<&mut Cow<'a, str>>;
}

/// A plain-text part borrowing `text`.
pub(crate) fn text_part<'a, P: TextPart<'a>>(text: &'a str) -> Tagged<'a, P> {
    Tagged::Known(P::text(Cow::Borrowed(text)))
}

/// The string a list of parts is sent as instead of an array: `""` for no parts, the
/// text of one plain-text part alone (taken out of it); `None` otherwise (the parts go
/// as an array, block boundaries and media order kept).
pub(crate) fn lone_text<'a, P: TextPart<'a>>(parts: &mut [Tagged<'a, P>]) -> Option<Cow<'a, str>> {
    match parts {
        [] => Some(Cow::Borrowed("")),
        [Tagged::Known(part)] => part.text_mut().map(std::mem::take),
        _ => None,
    }
}

/// Appends `"\n\n" + text` to `existing`.
pub(crate) fn append_paragraph(existing: &mut Cow<'_, str>, text: &str) {
    let owned = existing.to_mut();
    owned.push_str("\n\n");
    owned.push_str(text);
}

/// Appends `"\n\n" + text` to the last plain-text part, or adds `text` as a part of its
/// own when there is none; other parts (media) are kept.
pub(crate) fn append_to_parts<'a, P: TextPart<'a>>(parts: &mut Vec<Tagged<'a, P>>, text: String) {
    let last_text = parts.iter_mut().rev().find_map(|p| match p {
        Tagged::Known(part) => part.text_mut(),
        Tagged::Unknown(_) => None,
    });
    match last_text {
        Some(existing) => append_paragraph(existing, &text),
        None => parts.push(Tagged::Known(P::text(Cow::Owned(text)))),
    }
}

/// Writes `{` and, when there are tools, the `"tools":[…],` member.
pub(crate) fn open_body(buf: &mut Vec<u8>, tools: &[impl Serialize]) -> Result<()> {
    buf.push(b'{');
    if !tools.is_empty() {
        buf.extend_from_slice(b"\"tools\":");
        serde_json::to_writer(&mut *buf, tools).map_err(Error::Serialize)?;
        buf.push(b',');
    }
    Ok(())
}

/// Writes `elements` comma-separated (no brackets), returning the length of `buf` just
/// after the first `stable` of them when that many are written.
pub(crate) fn write_elements(
    buf: &mut Vec<u8>,
    elements: &[impl Serialize],
    stable: Option<usize>,
) -> Result<Option<usize>> {
    let mut prefix = None;
    for (i, element) in elements.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        serde_json::to_writer(&mut *buf, element).map_err(Error::Serialize)?;
        if stable == Some(i + 1) {
            prefix = Some(buf.len());
        }
    }
    Ok(prefix)
}
