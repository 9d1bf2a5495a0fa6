//! IR request -> Anthropic Messages request.
//!
//! # Decisions
//!
//! - **System messages** are hoisted into `system`, one text block per IR text block, in
//!   encounter order. A `positional` system message that follows a user or tool turn stays
//!   at its place: the Messages API has no `system` role inside `messages`, so its text is
//!   appended to that user turn (consecutive user turns are one turn to the API anyway).
//!   This keeps it out of the cached `system` prefix. A positional message anywhere else
//!   (first, or right after an assistant turn) is hoisted and reported with
//!   [`Notice::PositionalHoisted`]. System messages hold text only; anything else is an
//!   [`Error::SystemContent`]. A system text block that is empty or blank is not sent (the
//!   API refuses it), so a system prompt of `""` sends no `system` at all.
//! - **Tool results**: `tool` messages become user turns of `tool_result` blocks; the
//!   results of consecutive `tool` messages are packed into one user turn, as the API wants
//!   all results for one assistant turn in the next user turn; a user message right after
//!   them joins that turn too (text after results, as the API expects). Other messages map
//!   one to one.
//! - **Cache breakpoints**: a message's `cache_breakpoint` puts `cache_control` on the last
//!   block of that message that may carry one (text, image, document, `tool_use`,
//!   `tool_result`; never a thinking block, never an unknown block, which chef does not
//!   edit). A message with no such block reports [`Notice::BreakpointDropped`]. Tools get
//!   exactly one breakpoint, on the last function tool that is not deferred.
//! - **Tools**: provider-native tools for Anthropic go first, verbatim (Anthropic documents
//!   the tool-search server tool first; native tools are stable configuration, so they
//!   belong early in the cached prefix), then the function tools in request order. Native
//!   tools for other targets are left out with [`Notice::NativeToolLeftOut`]. A native tool
//!   is never edited, so the tool breakpoint never lands on a deferred tool or a
//!   `tool_search_*` server tool.
//! - **Prefill** is a trailing assistant text block (native prefill). The API refuses a
//!   final assistant turn ending in whitespace, so trailing whitespace is trimmed
//!   ([`Notice::PrefillTrimmed`]). With extended thinking on, the API refuses prefills: the
//!   prefill then becomes an instruction text block in the last user turn
//!   ([`Notice::PrefillDegraded`]); its text is kept whole, and no attachment is touched.
//! - **Attachments**: `image/*` becomes an `image` block, anything else a `document` block
//!   (file name as `title`). A base64 `data:` URL is sent as a base64 source (the
//!   reference sends the whole URL as base64 data, which the API rejects); any other
//!   `data:` URL is sent as a `url` source. Media types the API does not
//!   take are still sent, with [`Notice::UnsupportedMediaType`].
//! - **Gemini thought signatures** on text and calls mean nothing to Anthropic and are not
//!   sent ([`Notice::ThoughtSignatureDropped`], once per message). Not sent and not
//!   reported: the `pinned` flag and a tool result's `name` (Anthropic matches results by
//!   id), and empty text blocks in messages that have other blocks (the API refuses empty
//!   text blocks).
//! - Tool call arguments are written as serde_json holds them: no re-serialisation through
//!   doubles, and key order kept.

use std::{borrow::Cow, fmt};

use chef_ir::{
    Attachment, AttachmentSource, CallIdRule, Content, Message, NameRule, NativeTool, Request,
    Role, Target, ToolDefinition, ToolName, ToolResult, WireNames,
};

use crate::{
    error::{Error, Result},
    wire::{
        self, CacheControl, CacheTtl, ContentBlock, DocumentBlock, FunctionTool, ImageBlock,
        RedactedThinkingBlock, Source, TextBlock, ThinkingBlock, ThinkingConfig, Tool,
        ToolResultBlock, ToolResultContent, ToolUseBlock,
    },
};

/// The number of `cache_control` markers the API accepts in one request.
pub const MAX_BREAKPOINTS: usize = 4;

/// Settings for [`compile`] and [`envelope`].
///
/// ```
/// use chef_anthropic::{CompileOptions, wire::CacheTtl};
///
/// let options = CompileOptions::default()
///     .with_model("claude-sonnet-4-5")
///     .with_max_tokens(1024)
///     .with_cache_ttl(Some(CacheTtl::OneHour));
/// assert!(options.cache_tools);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CompileOptions {
    /// `model`, written first when set.
    pub model: Option<String>,
    /// `max_tokens`, when set.
    pub max_tokens: Option<u64>,
    /// `thinking`; when on, a prefill is degraded (the API refuses prefills with thinking).
    pub thinking: Option<ThinkingConfig<'static>>,
    /// The lifetime written on every breakpoint chef places (`None`: the API default).
    pub cache_ttl: Option<CacheTtl>,
    /// Put one breakpoint on the last eligible tool (default: on).
    pub cache_tools: bool,
    /// [`envelope`] only: put a breakpoint on the system preamble block too (default: off).
    pub cache_preamble: bool,
}

impl Default for CompileOptions {
    fn default() -> Self {
        Self {
            model: None,
            max_tokens: None,
            thinking: None,
            cache_ttl: None,
            cache_tools: true,
            cache_preamble: false,
        }
    }
}

impl CompileOptions {
    /// Sets `model`.
    #[must_use]
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Sets `max_tokens`.
    #[must_use]
    pub fn with_max_tokens(mut self, max_tokens: u64) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Sets the thinking configuration.
    #[must_use]
    pub fn with_thinking(mut self, thinking: Option<ThinkingConfig<'static>>) -> Self {
        self.thinking = thinking;
        self
    }

    /// Sets the breakpoint lifetime.
    #[must_use]
    pub fn with_cache_ttl(mut self, ttl: Option<CacheTtl>) -> Self {
        self.cache_ttl = ttl;
        self
    }

    /// Turns the tool breakpoint on or off.
    #[must_use]
    pub fn with_cache_tools(mut self, on: bool) -> Self {
        self.cache_tools = on;
        self
    }

    /// Turns the preamble breakpoint of [`envelope`] on or off.
    #[must_use]
    pub fn with_cache_preamble(mut self, on: bool) -> Self {
        self.cache_preamble = on;
        self
    }

    fn cache_control(&self) -> CacheControl {
        CacheControl::ephemeral(self.cache_ttl)
    }

    fn thinking_on(&self) -> bool {
        self.thinking.as_ref().is_some_and(ThinkingConfig::is_on)
    }
}

/// Something the request asked for that Anthropic cannot express as asked, and what was
/// done instead. Compiling never drops or rewrites content silently: each case is here
/// (see the module docs of `compile` for the few flags that are not content).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Notice {
    /// A positional system message did not directly follow a user or tool turn (it came
    /// first, or right after an assistant turn) and was hoisted to `system`.
    PositionalHoisted {
        /// Index of the message in the IR request.
        index: usize,
    },
    /// A native tool for other targets was left out.
    NativeToolLeftOut {
        /// Index in `Request::native_tools`.
        index: usize,
        /// The targets it belongs to.
        targets: Vec<Target>,
    },
    /// A content block in another target's wire format was left out.
    ForeignContentLeftOut {
        /// Index of the message in the IR request.
        message: usize,
        /// The target the block belongs to (`None`: unknown).
        target: Option<Target>,
    },
    /// A tool name Anthropic refuses was sent under another name (mapped back on parse).
    ToolRenamed {
        /// The real name.
        real: ToolName,
        /// The name on the wire.
        wire: String,
    },
    /// Thinking is on, which refuses prefills: the prefill was sent as an instruction in
    /// the last user turn instead.
    PrefillDegraded,
    /// Trailing whitespace was cut from the prefill (the API refuses it).
    PrefillTrimmed {
        /// The whitespace removed.
        removed: String,
    },
    /// The prefill was empty (after trimming) and was not sent.
    PrefillEmpty,
    /// A message asked for a breakpoint but has no block that can carry one.
    BreakpointDropped {
        /// Index of the message in the IR request.
        message: usize,
    },
    /// Tool caching is on but no function tool may carry the breakpoint (all deferred).
    NoToolBreakpoint,
    /// An image's file name has no place on the wire.
    ImageFilenameDropped {
        /// Index of the message in the IR request.
        message: usize,
        /// The file name.
        filename: String,
    },
    /// An attachment's media type is not one the API documents for its block kind; it was
    /// sent anyway.
    UnsupportedMediaType {
        /// Index of the message in the IR request.
        message: usize,
        /// The media type.
        media_type: String,
    },
    /// Gemini thought signatures in a message were not sent (Anthropic has no place for
    /// them).
    ThoughtSignatureDropped {
        /// Index of the message in the IR request.
        message: usize,
    },
    /// A tool call's arguments were not a JSON object (a garbled call that was refused when
    /// it was routed, kept in the history with its error result); `tool_use.input` must be
    /// one, so they were sent as `{}`. (`null` is sent as `{}` without a notice: that is
    /// what it means.)
    ArgumentsNotAnObject {
        /// Index of the message in the IR request.
        message: usize,
        /// The call's id.
        call_id: String,
    },
    /// A thinking block without a signature (a foreign model's thought, or Gemini's) was
    /// left out: the API refuses thinking it did not sign.
    UnsignedThinkingLeftOut {
        /// Index of the message in the IR request.
        message: usize,
    },
    /// A text block with no text but whitespace was left out (the API refuses "text
    /// content blocks must contain non-whitespace text").
    BlankTextLeftOut {
        /// Index of the message in the IR request.
        message: usize,
    },
    /// A message left with no block to send (nothing but blank text, unsigned thinking or
    /// other targets' blocks) was not sent: the API refuses empty content.
    EmptyMessageSkipped {
        /// Index of the message in the IR request.
        message: usize,
    },
    /// Trailing whitespace was cut from the final assistant message's text (the API
    /// refuses a final assistant turn ending in whitespace).
    FinalAssistantTrimmed {
        /// Index of the message in the IR request.
        message: usize,
        /// The whitespace removed.
        removed: String,
    },
    /// A tool call id Anthropic refuses (it takes `^[a-zA-Z0-9_-]+$`: a Gemini call's
    /// `gemini-fc-files.read-0`, an OpenAI-compatible server's `functions.get:0`) was sent
    /// under another id, in its call and its result alike.
    CallIdRewritten {
        /// Index of the message in the IR request holding the call.
        message: usize,
        /// The id in the history.
        id: String,
        /// The id on the wire.
        wire: String,
    },
    /// More breakpoints were requested than the API accepts (it refuses such a request
    /// whole), so the earliest were left out until [`MAX_BREAKPOINTS`] remain: message
    /// breakpoints first (never the last of them), then system ones; the tools' stays.
    TooManyBreakpoints {
        /// How many the request carries.
        count: usize,
    },
}

impl Notice {
    /// Adds `offset` to the message this notice names, for a request that left its first
    /// `offset` messages out; `false` for a notice that depends on more than its own
    /// message (a hoisted positional system message, the breakpoints). Notices about the
    /// tools or the prefill hold as they are.
    pub(crate) fn renumber(&mut self, offset: usize) -> bool {
        match self {
            Self::ForeignContentLeftOut { message, .. }
            | Self::ImageFilenameDropped { message, .. }
            | Self::UnsupportedMediaType { message, .. }
            | Self::ThoughtSignatureDropped { message }
            | Self::UnsignedThinkingLeftOut { message }
            | Self::BlankTextLeftOut { message }
            | Self::EmptyMessageSkipped { message }
            | Self::FinalAssistantTrimmed { message, .. }
            | Self::CallIdRewritten { message, .. }
            | Self::ArgumentsNotAnObject { message, .. } => {
                *message += offset;
                true
            }
            Self::NativeToolLeftOut { .. }
            | Self::ToolRenamed { .. }
            | Self::NoToolBreakpoint
            | Self::PrefillDegraded
            | Self::PrefillTrimmed { .. }
            | Self::PrefillEmpty => true,
            Self::PositionalHoisted { .. }
            | Self::BreakpointDropped { .. }
            | Self::TooManyBreakpoints { .. } => false,
        }
    }
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PositionalHoisted { index } => write!(
                f,
                "positional system message {index} follows no user turn; hoisted into `system`"
            ),
            Self::NativeToolLeftOut { index, targets } => {
                let targets: Vec<&str> = targets.iter().map(|t| t.as_str()).collect();
                write!(
                    f,
                    "native tool {index} is for {}; left out",
                    targets.join(", ")
                )
            }
            Self::ForeignContentLeftOut { message, target } => write!(
                f,
                "message {message} holds a block in {} format; left out",
                target.map_or("an unknown", Target::as_str)
            ),
            Self::ToolRenamed { real, wire } => {
                write!(f, "tool {:?} is sent as {wire:?}", real.as_str())
            }
            Self::PrefillDegraded => f.write_str(
                "thinking is on, which refuses prefills; prefill sent as an instruction in the last user turn",
            ),
            Self::PrefillTrimmed { removed } => {
                write!(f, "trailing whitespace {removed:?} cut from the prefill")
            }
            Self::PrefillEmpty => f.write_str("prefill is empty; not sent"),
            Self::BreakpointDropped { message } => write!(
                f,
                "message {message} asks for a cache breakpoint but has no block that can carry one"
            ),
            Self::NoToolBreakpoint => {
                f.write_str("no function tool can carry the tool cache breakpoint")
            }
            Self::ImageFilenameDropped { message, filename } => write!(
                f,
                "image file name {filename:?} in message {message} has no place on the wire"
            ),
            Self::UnsupportedMediaType {
                message,
                media_type,
            } => write!(
                f,
                "attachment of type {media_type} in message {message} is not a type Anthropic documents"
            ),
            Self::ThoughtSignatureDropped { message } => write!(
                f,
                "Gemini thought signatures in message {message} have no place on the wire"
            ),
            Self::ArgumentsNotAnObject { message, call_id } => write!(
                f,
                "arguments of tool call {call_id:?} in message {message} are not a JSON object: sent as {{}}"
            ),
            Self::UnsignedThinkingLeftOut { message } => write!(
                f,
                "thinking without a signature in message {message} was left out (Anthropic refuses unsigned thinking)"
            ),
            Self::BlankTextLeftOut { message } => write!(
                f,
                "a text block of nothing but whitespace in message {message} was left out"
            ),
            Self::EmptyMessageSkipped { message } => write!(
                f,
                "message {message} has nothing Anthropic accepts; not sent"
            ),
            Self::FinalAssistantTrimmed { message, removed } => write!(
                f,
                "trailing whitespace {removed:?} cut from the final assistant message {message}"
            ),
            Self::CallIdRewritten { message, id, wire } => write!(
                f,
                "tool call id {id:?} in message {message} is sent as {wire:?}"
            ),
            Self::TooManyBreakpoints { count } => write!(
                f,
                "{count} cache breakpoints requested; the API accepts {MAX_BREAKPOINTS}: the earliest were left out"
            ),
        }
    }
}

/// A compiled request: the wire body (borrowing the IR request), the tool-name table to
/// parse replies with, and the notices.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Compiled<'a> {
    /// The request body.
    pub body: wire::Request<'a>,
    /// Real <-> wire tool names; pass it to [`parse_response`](crate::parse_response).
    pub names: WireNames,
    /// What could not be expressed as asked, in the order met.
    pub notices: Vec<Notice>,
}

impl Compiled<'_> {
    /// The compact JSON body; identical requests give identical bytes.
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        serde_json::to_vec(&self.body).map_err(Error::Serialize)
    }

    /// Where the cache-stable prefix ends (the last breakpoint), see
    /// [`wire::Request::last_breakpoint`].
    pub fn last_breakpoint(&self) -> Option<wire::Breakpoint> {
        self.body.last_breakpoint()
    }
}

/// The compact JSON body of a compiled request (same as [`Compiled::to_vec`]).
pub fn to_vec(compiled: &Compiled<'_>) -> Result<Vec<u8>> {
    compiled.to_vec()
}

/// Compiles an IR request into an Anthropic Messages request.
///
/// ```
/// use chef_anthropic::{CompileOptions, compile};
/// use chef_ir::{Message, Request};
///
/// let request = Request::new(vec![
///     Message::system("Be terse.").with_cache_breakpoint(true),
///     Message::user("hi"),
/// ]);
/// let compiled = compile(&request, &CompileOptions::default())?;
/// assert_eq!(
///     String::from_utf8(compiled.to_vec()?)?,
///     r#"{"system":[{"type":"text","text":"Be terse.","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}"#
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn compile<'a>(request: &'a Request, options: &CompileOptions) -> Result<Compiled<'a>> {
    let names = wire_names(request);
    let mut notices: Vec<Notice> = names
        .renamed()
        .map(|(real, wire)| Notice::ToolRenamed {
            real: ToolName::new(real),
            wire: wire.to_owned(),
        })
        .collect();
    let mut compiler = Compiler {
        names: &names,
        notices: &mut notices,
        cache: options.cache_control(),
        system: Vec::new(),
        messages: Vec::new(),
        after_user_turn: false,
        open_tool_turn: false,
        last_turn: None,
    };
    for (index, message) in request.messages.iter().enumerate() {
        compiler.message(index, message)?;
    }
    if let Some(prefill) = &request.prefill {
        compiler.prefill(prefill, options.thinking_on());
    }
    compiler.trim_final_assistant();
    let Compiler {
        system, messages, ..
    } = compiler;

    let mut tools = native_tools(&request.native_tools, &mut notices);
    tools.extend(function_tools(&request.tools, &names));
    if options.cache_tools && !tools.is_empty() && !place_tool_breakpoint(&mut tools, options) {
        notices.push(Notice::NoToolBreakpoint);
    }

    let mut body = wire::Request {
        model: options.model.clone().map(Cow::Owned),
        max_tokens: options.max_tokens,
        system,
        messages,
        thinking: options.thinking.clone(),
        tools,
    };
    let count = body.breakpoint_count();
    if count > MAX_BREAKPOINTS {
        trim_breakpoints(&mut body, count - MAX_BREAKPOINTS);
        notices.push(Notice::TooManyBreakpoints { count });
    }
    Ok(Compiled {
        body,
        names,
        notices,
    })
}

/// Leaves out `excess` breakpoints so the body carries no more than the API accepts (a
/// request with more is refused whole), earliest first: every message breakpoint but the
/// last one of all (the one the next turn reads from: consecutive tool results packed into
/// one turn may carry several), then every system one but the last, then that one. The
/// tools' breakpoint stays, and so does a passed-through block's (it is sent verbatim;
/// only such blocks can leave more than four).
fn trim_breakpoints(body: &mut wire::Request<'_>, mut excess: usize) {
    // The last editable message marker: kept.
    let last = body
        .messages
        .iter()
        .enumerate()
        .flat_map(|(m, message)| {
            message
                .content
                .iter()
                .enumerate()
                .filter(|(_, b)| b.cache_control().is_some())
                .map(move |(b, _)| (m, b))
        })
        .last();
    for (m, message) in body.messages.iter_mut().enumerate() {
        for (b, block) in message.content.iter_mut().enumerate() {
            if excess == 0 {
                return;
            }
            if Some((m, b)) == last {
                continue;
            }
            if let Some(marker) = block.cache_control_mut()
                && marker.take().is_some()
            {
                excess -= 1;
            }
        }
    }
    for block in &mut body.system {
        if excess == 0 {
            break;
        }
        if block.cache_control.take().is_some() {
            excess -= 1;
        }
    }
}

/// The name table for a request: every defined tool and every tool named in a call.
fn wire_names(request: &Request) -> WireNames {
    let called = request
        .messages
        .iter()
        .flat_map(|m| m.tool_calls())
        .map(|c| &c.name);
    WireNames::new(
        request.tools.iter().map(|t| &t.name).chain(called),
        NameRule::ANTHROPIC,
    )
}

fn wire_name<'a>(names: &WireNames, real: &'a str) -> Cow<'a, str> {
    let wire = names.to_wire(real);
    if wire == real {
        Cow::Borrowed(real)
    } else {
        Cow::Owned(wire.to_owned())
    }
}

struct Compiler<'a, 'n> {
    names: &'n WireNames,
    notices: &'n mut Vec<Notice>,
    cache: CacheControl,
    system: Vec<TextBlock<'a>>,
    messages: Vec<wire::Message<'a>>,
    /// The last non-system message was a user or tool turn.
    after_user_turn: bool,
    /// The last wire message is a user turn built from `tool` messages only.
    open_tool_turn: bool,
    /// The IR message the last wire message was built from (none when the prefill made it).
    last_turn: Option<usize>,
}

impl<'a> Compiler<'a, '_> {
    fn message(&mut self, index: usize, message: &'a Message) -> Result<()> {
        match message.role {
            Role::System => self.system_message(index, message),
            Role::User | Role::Assistant | Role::Tool => self.turn(index, message),
        }
    }

    fn system_message(&mut self, index: usize, message: &'a Message) -> Result<()> {
        let mut blocks = Vec::with_capacity(message.content.len());
        for content in &message.content {
            match content {
                // The API refuses a text block with no text in it ("text content blocks
                // must contain non-whitespace text"): such a block is left out, and a
                // system prompt of nothing but them sends no `system`.
                Content::Text { text, .. } => {
                    if !text.trim().is_empty() {
                        blocks.push(TextBlock::new(text.as_str()));
                    }
                }
                other => {
                    return Err(Error::SystemContent {
                        index,
                        kind: kind_name(other),
                    });
                }
            }
        }
        if message.cache_breakpoint {
            match blocks.last_mut() {
                Some(last) => last.cache_control = Some(self.cache),
                None => self
                    .notices
                    .push(Notice::BreakpointDropped { message: index }),
            }
        }
        if message.positional && self.after_user_turn {
            let blocks = blocks.into_iter().map(ContentBlock::Text);
            match self.messages.last_mut() {
                Some(last) if last.role == wire::Role::User => last.content.extend(blocks),
                _ => self
                    .messages
                    .push(wire::Message::new(wire::Role::User, blocks.collect())),
            }
            self.open_tool_turn = false;
        } else {
            if message.positional {
                self.notices.push(Notice::PositionalHoisted { index });
            }
            self.system.extend(blocks);
        }
        Ok(())
    }

    fn turn(&mut self, index: usize, message: &'a Message) -> Result<()> {
        let signed = message.content.iter().any(|c| match c {
            Content::Text {
                thought_signature, ..
            } => thought_signature.is_some(),
            Content::ToolCall(call) => call.thought_signature.is_some(),
            _ => false,
        });
        if signed {
            self.notices
                .push(Notice::ThoughtSignatureDropped { message: index });
        }
        // Results of consecutive tool messages share one user turn, and so does a user
        // message right after them (the API would combine the turns anyway; writing them
        // as one keeps compile -> parse -> compile byte-stable).
        let packs = matches!(message.role, Role::Tool | Role::User) && self.open_tool_turn;
        // A user turn of nothing but blank text is sent as it is (the API refuses it,
        // naming it): leaving it out would change the turns around it, a leading
        // assistant turn, or a trailing one read as a prefill. Blank text elsewhere (an
        // assistant turn, a block beside others, a user turn joining tool results) goes.
        let blank = |c: &Content| matches!(c, Content::Text { text, .. } if text.trim().is_empty());
        let keep_blank =
            message.role != Role::Assistant && !packs && message.content.iter().all(blank);
        let mut blocks = Vec::with_capacity(message.content.len());
        for content in &message.content {
            if let Content::Text { text, .. } = content
                && text.trim().is_empty()
                && !keep_blank
            {
                // An empty text beside other blocks is nothing to say; whitespace is.
                if !text.is_empty() || message.content.len() == 1 {
                    self.notices
                        .push(Notice::BlankTextLeftOut { message: index });
                }
                continue;
            }
            if let Some(block) = self.block(index, content)? {
                blocks.push(block);
            }
        }
        if blocks.is_empty() && !keep_blank {
            self.notices
                .push(Notice::EmptyMessageSkipped { message: index });
            if message.cache_breakpoint {
                self.notices
                    .push(Notice::BreakpointDropped { message: index });
            }
            return Ok(());
        }
        let role = match message.role {
            Role::Assistant => wire::Role::Assistant,
            Role::User | Role::Tool | Role::System => wire::Role::User,
        };
        let (target, start) = match self.messages.last_mut() {
            Some(last) if packs => {
                let start = last.content.len();
                last.content.extend(blocks);
                (last, start)
            }
            _ => {
                self.messages.push(wire::Message::new(role, blocks));
                let Some(last) = self.messages.last_mut() else {
                    return Ok(());
                };
                (last, 0)
            }
        };
        if message.cache_breakpoint {
            let slot = target
                .content
                .get_mut(start..)
                .into_iter()
                .flatten()
                .rev()
                .find_map(ContentBlock::cache_control_mut);
            match slot {
                Some(slot) => *slot = Some(self.cache),
                None => self
                    .notices
                    .push(Notice::BreakpointDropped { message: index }),
            }
        }
        self.open_tool_turn = message.role == Role::Tool;
        self.after_user_turn = message.role != Role::Assistant;
        self.last_turn = Some(index);
        Ok(())
    }

    /// Cuts trailing whitespace from the text ending a final assistant turn made from the
    /// history (the prefill trims its own): the API refuses a final assistant message that
    /// ends in whitespace.
    fn trim_final_assistant(&mut self) {
        let (Some(index), Some(last)) = (self.last_turn, self.messages.last_mut()) else {
            return;
        };
        if last.role != wire::Role::Assistant {
            return;
        }
        if let Some(ContentBlock::Text(block)) = last.content.last_mut() {
            let kept = block.text.trim_end().len();
            if kept < block.text.len() && kept > 0 {
                let removed = block.text[kept..].to_owned();
                match &mut block.text {
                    Cow::Borrowed(text) => *text = &text[..kept],
                    Cow::Owned(text) => text.truncate(kept),
                }
                self.notices.push(Notice::FinalAssistantTrimmed {
                    message: index,
                    removed,
                });
            }
        }
    }

    fn block(&mut self, index: usize, content: &'a Content) -> Result<Option<ContentBlock<'a>>> {
        Ok(Some(match content {
            Content::Text { text, .. } => ContentBlock::text(text.as_str()),
            Content::Attachment(attachment) => self.attachment(index, attachment),
            Content::ToolCall(call) => {
                // `input` must be an object: arguments that are not one (a model's garbled
                // call, refused when it was routed) go as `{}`, said by a notice; `null`
                // means `{}` as chef reads it.
                let input = if call.arguments.is_object() {
                    Cow::Borrowed(&call.arguments)
                } else {
                    if !call.arguments.is_null() {
                        self.notices.push(Notice::ArgumentsNotAnObject {
                            message: index,
                            call_id: call.id.to_string(),
                        });
                    }
                    Cow::Owned(serde_json::Value::Object(serde_json::Map::new()))
                };
                let id = CallIdRule::ANTHROPIC.wire_id(call.id.as_str());
                if let Cow::Owned(wire) = &id {
                    self.notices.push(Notice::CallIdRewritten {
                        message: index,
                        id: call.id.to_string(),
                        wire: wire.clone(),
                    });
                }
                ContentBlock::ToolUse(ToolUseBlock {
                    id,
                    name: wire_name(self.names, call.name.as_str()),
                    input,
                    cache_control: None,
                })
            }
            Content::ToolResult(result) => ContentBlock::ToolResult(self.result(index, result)?),
            Content::Thinking {
                thinking,
                signature: Some(signature),
            } if !signature.is_empty() => ContentBlock::Thinking(ThinkingBlock {
                thinking: Cow::Borrowed(thinking),
                signature: Cow::Borrowed(signature),
            }),
            Content::Thinking { .. } => {
                self.notices
                    .push(Notice::UnsignedThinkingLeftOut { message: index });
                return Ok(None);
            }
            Content::RedactedThinking { data } => {
                ContentBlock::RedactedThinking(RedactedThinkingBlock {
                    data: Cow::Borrowed(data),
                })
            }
            Content::Unknown {
                target: Some(Target::Anthropic),
                value,
            } => ContentBlock::Unknown(Cow::Borrowed(value)),
            Content::Unknown { target, .. } => {
                self.notices.push(Notice::ForeignContentLeftOut {
                    message: index,
                    target: *target,
                });
                return Ok(None);
            }
        }))
    }

    fn result(&mut self, index: usize, result: &'a ToolResult) -> Result<ToolResultBlock<'a>> {
        let content = match result.content.as_slice() {
            [] => None,
            [Content::Text { text, .. }] => Some(ToolResultContent::Text(Cow::Borrowed(text))),
            many => {
                let mut blocks = Vec::with_capacity(many.len());
                for content in many {
                    match content {
                        Content::Text { .. } | Content::Attachment(_) | Content::Unknown { .. } => {
                            if let Some(block) = self.block(index, content)? {
                                blocks.push(block);
                            }
                        }
                        other => {
                            return Err(Error::ToolResultContent {
                                index,
                                kind: kind_name(other),
                            });
                        }
                    }
                }
                Some(ToolResultContent::Blocks(blocks))
            }
        };
        Ok(ToolResultBlock {
            tool_use_id: CallIdRule::ANTHROPIC.wire_id(result.tool_call_id.as_str()),
            content,
            is_error: result.is_error.then_some(true),
            cache_control: None,
        })
    }

    fn attachment(&mut self, index: usize, attachment: &'a Attachment) -> ContentBlock<'a> {
        let media_type = attachment.media_type.as_str();
        let source = match &attachment.source {
            AttachmentSource::Base64 { data } | AttachmentSource::Url { url: data } => {
                match split_data_url(data) {
                    Some((url_type, payload)) => Source::Base64 {
                        media_type: Cow::Borrowed(if url_type.is_empty() {
                            media_type
                        } else {
                            url_type
                        }),
                        data: Cow::Borrowed(payload),
                    },
                    None if matches!(attachment.source, AttachmentSource::Url { .. }) => {
                        Source::Url {
                            url: Cow::Borrowed(data),
                        }
                    }
                    None => Source::Base64 {
                        media_type: Cow::Borrowed(media_type),
                        data: Cow::Borrowed(data),
                    },
                }
            }
        };
        let sent_type = match &source {
            Source::Base64 { media_type, .. } => Some(media_type.as_ref()),
            _ => None,
        };
        if media_type.starts_with("image/") {
            if let Some(sent) = sent_type
                && !IMAGE_TYPES.contains(&sent)
            {
                self.notices.push(Notice::UnsupportedMediaType {
                    message: index,
                    media_type: sent.to_owned(),
                });
            }
            if let Some(filename) = &attachment.filename {
                self.notices.push(Notice::ImageFilenameDropped {
                    message: index,
                    filename: filename.clone(),
                });
            }
            ContentBlock::Image(ImageBlock {
                source,
                cache_control: None,
            })
        } else {
            let sent = sent_type.unwrap_or(media_type);
            if sent != PDF {
                self.notices.push(Notice::UnsupportedMediaType {
                    message: index,
                    media_type: sent.to_owned(),
                });
            }
            ContentBlock::Document(DocumentBlock {
                source,
                title: attachment.filename.as_deref().map(Cow::Borrowed),
                context: None,
                citations: None,
                cache_control: None,
            })
        }
    }

    fn prefill(&mut self, prefill: &'a str, thinking_on: bool) {
        if thinking_on {
            self.notices.push(Notice::PrefillDegraded);
            let block = ContentBlock::text(Cow::Owned(prefill_instruction(prefill)));
            match self.messages.last_mut() {
                Some(last) if last.role == wire::Role::User => last.content.push(block),
                _ => self
                    .messages
                    .push(wire::Message::new(wire::Role::User, vec![block])),
            }
            self.last_turn = None;
            return;
        }
        let kept = prefill.trim_end();
        if let Some(removed) = prefill.get(kept.len()..)
            && !removed.is_empty()
        {
            self.notices.push(Notice::PrefillTrimmed {
                removed: removed.to_owned(),
            });
        }
        if kept.is_empty() {
            self.notices.push(Notice::PrefillEmpty);
        } else {
            self.messages.push(wire::Message::new(
                wire::Role::Assistant,
                vec![ContentBlock::text(kept)],
            ));
            self.last_turn = None;
        }
    }
}

const PDF: &str = "application/pdf";
const IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/// The instruction a degraded prefill becomes (chef's own wording,
/// [`chef_ir::PrefillWording::ReplyPrefix`]).
pub fn prefill_instruction(prefill: &str) -> String {
    chef_ir::prefill_enforcement(prefill, chef_ir::PrefillWording::ReplyPrefix)
}

/// Splits `data:<type>[;…];base64,<payload>` into the type and the payload.
fn split_data_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (header, payload) = rest.split_once(',')?;
    let media_type = header.strip_suffix(";base64")?;
    let media_type = media_type.split(';').next().unwrap_or("");
    Some((media_type, payload))
}

fn kind_name(content: &Content) -> &'static str {
    match content {
        Content::Text { .. } => "text",
        Content::Attachment(_) => "attachment",
        Content::ToolCall(_) => "tool call",
        Content::ToolResult(_) => "tool result",
        Content::Thinking { .. } => "thinking",
        Content::RedactedThinking { .. } => "redacted thinking",
        Content::Unknown { .. } => "unknown",
    }
}

fn native_tools<'a>(natives: &'a [NativeTool], notices: &mut Vec<Notice>) -> Vec<Tool<'a>> {
    let mut tools = Vec::new();
    for (index, native) in natives.iter().enumerate() {
        if native.targets.contains(&Target::Anthropic) {
            tools.push(Tool::Native(Cow::Borrowed(&native.value)));
        } else {
            notices.push(Notice::NativeToolLeftOut {
                index,
                targets: native.targets.clone(),
            });
        }
    }
    tools
}

fn function_tools<'a>(
    tools: &'a [ToolDefinition],
    names: &WireNames,
) -> impl Iterator<Item = Tool<'a>> {
    tools.iter().map(|tool| {
        Tool::Function(FunctionTool {
            name: wire_name(names, tool.name.as_str()),
            description: (!tool.description.is_empty())
                .then_some(Cow::Borrowed(tool.description.as_str())),
            input_schema: Cow::Borrowed(&tool.input_schema),
            defer_loading: tool.defer_loading.then_some(true),
            cache_control: None,
        })
    })
}

/// Puts the tool breakpoint on the last function tool that is not deferred; native tools
/// are never edited. Returns whether a tool took it.
fn place_tool_breakpoint(tools: &mut [Tool<'_>], options: &CompileOptions) -> bool {
    for tool in tools.iter_mut().rev() {
        if let Tool::Function(function) = tool
            && function.defer_loading != Some(true)
        {
            function.cache_control = Some(options.cache_control());
            return true;
        }
    }
    false
}

/// Function tools (and an optional system preamble) in Anthropic's shape: the envelope of
/// a tool set, compressed or not.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct Envelope<'a> {
    /// The `tools` array.
    pub tools: Vec<Tool<'a>>,
    /// The `system` blocks (the preamble), absent when there is none.
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "system_text")]
    pub system: Vec<TextBlock<'a>>,
    /// Real <-> wire tool names.
    #[serde(skip)]
    pub names: WireNames,
}

fn system_text<S: serde::Serializer>(
    blocks: &[TextBlock<'_>],
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    serializer.collect_seq(blocks.iter().map(|b| ContentBlock::Text(b.clone())))
}

/// Envelopes tools for Anthropic: `{name, description, input_schema}` per tool,
/// `defer_loading: true` on deferred tools, tags dropped, one breakpoint on the last tool
/// that is not deferred (when `options.cache_tools`), and the preamble as one system block
/// (with a breakpoint when `options.cache_preamble`).
///
/// ```
/// use chef_anthropic::{CompileOptions, envelope};
/// use chef_ir::ToolDefinition;
/// use serde_json::json;
///
/// let tools = [ToolDefinition::new("a.b", json!({"type": "object"}))];
/// let env = envelope(&tools, Some("Codes map to tools."), &CompileOptions::default());
/// assert_eq!(
///     serde_json::to_string(&env)?,
///     r#"{"tools":[{"name":"a_b","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}],"system":[{"type":"text","text":"Codes map to tools."}]}"#
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn envelope<'a>(
    tools: &'a [ToolDefinition],
    preamble: Option<&'a str>,
    options: &CompileOptions,
) -> Envelope<'a> {
    let names = WireNames::new(tools.iter().map(|t| &t.name), NameRule::ANTHROPIC);
    let mut wire_tools: Vec<Tool<'a>> = function_tools(tools, &names).collect();
    if options.cache_tools {
        place_tool_breakpoint(&mut wire_tools, options);
    }
    let system = preamble
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut block = TextBlock::new(p);
            if options.cache_preamble {
                block.cache_control = Some(options.cache_control());
            }
            vec![block]
        })
        .unwrap_or_default();
    Envelope {
        tools: wire_tools,
        system,
        names,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_urls_split_into_type_and_payload() {
        assert_eq!(
            split_data_url("data:image/png;base64,AAAA"),
            Some(("image/png", "AAAA"))
        );
        assert_eq!(
            split_data_url("data:image/png;name=a.png;base64,AAAA"),
            Some(("image/png", "AAAA"))
        );
        assert_eq!(split_data_url("data:text/plain,hello"), None);
        assert_eq!(split_data_url("https://x"), None);
    }
}
