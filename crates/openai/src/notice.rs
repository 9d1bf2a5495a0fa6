//! Typed reports of what a compile could not express and what it did instead.

use chef_ir::{Target, ToolName};

/// Something the target cannot express, and what the compiler did about it.
///
/// Compiling never drops or rewrites content silently: every such decision is reported
/// here, in the order it was made. Message indices are positions in the IR request's
/// `messages`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Notice {
    /// A tool name the API refuses was sent under a valid wire name; replies are mapped
    /// back through [`crate::chat::Compiled::names`] / [`crate::responses::Compiled::names`].
    ToolRenamed {
        /// The real name.
        real: ToolName,
        /// The name on the wire.
        wire: String,
    },
    /// A provider-native tool for other targets was left out of `tools`.
    NativeToolLeftOut {
        /// Index in `Request::native_tools`.
        index: usize,
        /// The targets it belongs to.
        targets: Vec<Target>,
    },
    /// `defer_loading` was not sent: the target has no documented deferred loading here
    /// (Chat Completions), or no `tool_search` tool was offered (Responses).
    DeferLoadingIgnored {
        /// The deferred tools, in request order.
        tools: Vec<ToolName>,
    },
    /// The request's prefill cannot be sent as the start of the reply; an instruction
    /// quoting it was appended instead.
    PrefillDegraded {
        /// Where the instruction went.
        into: PrefillPlacement,
    },
    /// Thinking blocks were left out (the target cannot take them back); with
    /// `thinking_as_text` on they are sent as text instead and [`Notice::ThinkingAsText`]
    /// says so.
    ThinkingDropped {
        /// The message.
        message: usize,
        /// How many blocks.
        blocks: usize,
    },
    /// Redacted (encrypted) thinking blocks were left out: no OpenAI API accepts them.
    RedactedThinkingDropped {
        /// The message.
        message: usize,
        /// How many blocks.
        blocks: usize,
    },
    /// Thinking was sent as `<thinking>` text in the assistant message (option
    /// `thinking_as_text`).
    ThinkingAsText {
        /// The message.
        message: usize,
    },
    /// Attachments on a message whose role cannot carry media on this target were left
    /// out (OpenAI assistant messages carry only text and refusals).
    AttachmentDropped {
        /// The message.
        message: usize,
        /// How many attachments.
        count: usize,
    },
    /// An attachment's file name has no place on the wire (Chat `image_url` parts) and
    /// was left out.
    FilenameDropped {
        /// The message.
        message: usize,
        /// The file name.
        filename: String,
    },
    /// A document given by `http(s)` URL cannot be sent as a Chat Completions `file`
    /// part (which takes inline data or a file id only); a text part naming the URL was
    /// sent instead so the model still knows of it.
    DocumentUrlAsText {
        /// The message.
        message: usize,
        /// The URL.
        url: String,
    },
    /// Media or text inside a tool result that the target's tool message cannot carry
    /// was sent in a user message right after the tool results.
    ToolContentMoved {
        /// The message.
        message: usize,
        /// The call the content belongs to.
        tool_call_id: String,
    },
    /// A tool result flagged as an error was sent as a plain result: the target has no
    /// error flag (its text should say what failed).
    ToolErrorFlagDropped {
        /// The message.
        message: usize,
        /// The call.
        tool_call_id: String,
    },
    /// A tool call id the target refuses (Chat Completions takes 40 characters at most)
    /// was sent under another id, in its call and its result alike.
    CallIdRewritten {
        /// The message holding the call.
        message: usize,
        /// The id in the history.
        id: String,
        /// The id on the wire.
        wire: String,
    },
    /// A content block kept verbatim for another target (or for no known target) was
    /// left out.
    ForeignContentDropped {
        /// The message.
        message: usize,
        /// The target it belongs to.
        target: Option<Target>,
    },
    /// An Anthropic server-side compaction summary was sent as text, starting with
    /// [`crate::COMPACTION_HEADER`], at its place in the message.
    CompactionAsText {
        /// The message.
        message: usize,
    },
    /// A non-positional system message after the conversation started was hoisted into
    /// `instructions` (Responses), so it no longer sits at its position.
    SystemHoisted {
        /// The message.
        message: usize,
    },
    /// A system message carrying content other than text (attachments, a compaction
    /// summary) was kept inline as a message item instead of being folded into
    /// `instructions`, which takes text only.
    SystemKeptInline {
        /// The message.
        message: usize,
    },
}

impl Notice {
    /// Adds `offset` to the message this notice names, for a request that left its first
    /// `offset` messages out; `false` when the notice depends on more than its own message
    /// (the prefill's wire position) and cannot be renumbered. Notices naming no message
    /// hold as they are.
    pub(crate) fn renumber(&mut self, offset: usize) -> bool {
        match self {
            Self::ThinkingDropped { message, .. }
            | Self::RedactedThinkingDropped { message, .. }
            | Self::ThinkingAsText { message }
            | Self::AttachmentDropped { message, .. }
            | Self::FilenameDropped { message, .. }
            | Self::DocumentUrlAsText { message, .. }
            | Self::ToolContentMoved { message, .. }
            | Self::ToolErrorFlagDropped { message, .. }
            | Self::CallIdRewritten { message, .. }
            | Self::ForeignContentDropped { message, .. }
            | Self::CompactionAsText { message }
            | Self::SystemHoisted { message }
            | Self::SystemKeptInline { message } => {
                *message += offset;
                true
            }
            Self::ToolRenamed { .. }
            | Self::NativeToolLeftOut { .. }
            | Self::DeferLoadingIgnored { .. } => true,
            Self::PrefillDegraded { .. } => false,
        }
    }
}

/// Where a degraded prefill's instruction was placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PrefillPlacement {
    /// Appended to the text of the wire message/item at this index (the last one, a user
    /// or system message).
    Appended {
        /// Index in the wire `messages` / `input`.
        wire_index: usize,
    },
    /// A new system message/item at the end, because the conversation ends in tool
    /// results or an assistant turn (appending to an earlier user turn would rewrite the
    /// cached history).
    NewSystemMessage {
        /// Index in the wire `messages` / `input`.
        wire_index: usize,
    },
    /// Appended to `instructions` (Responses, empty input).
    Instructions,
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ToolRenamed { real, wire } => {
                write!(f, "tool {:?} is sent as {wire:?}", real.as_str())
            }
            Self::NativeToolLeftOut { index, targets } => {
                let targets: Vec<&str> = targets.iter().map(|t| t.as_str()).collect();
                write!(
                    f,
                    "native tool {index} is for {}; left out",
                    targets.join(", ")
                )
            }
            Self::DeferLoadingIgnored { tools } => {
                let names: Vec<&str> = tools.iter().map(ToolName::as_str).collect();
                write!(
                    f,
                    "defer_loading not sent for {} (no deferred loading on this target, or no \
                     tool_search tool offered)",
                    names.join(", ")
                )
            }
            Self::PrefillDegraded { into } => match into {
                PrefillPlacement::Appended { wire_index } => write!(
                    f,
                    "prefill sent as an instruction appended to wire message {wire_index}"
                ),
                PrefillPlacement::NewSystemMessage { wire_index } => write!(
                    f,
                    "prefill sent as an instruction in a new system message at {wire_index}"
                ),
                PrefillPlacement::Instructions => {
                    f.write_str("prefill sent as an instruction appended to `instructions`")
                }
            },
            Self::ThinkingDropped { message, blocks } => {
                write!(f, "message {message}: {blocks} thinking block(s) left out")
            }
            Self::RedactedThinkingDropped { message, blocks } => write!(
                f,
                "message {message}: {blocks} redacted thinking block(s) left out"
            ),
            Self::ThinkingAsText { message } => {
                write!(f, "message {message}: thinking sent as <thinking> text")
            }
            Self::AttachmentDropped { message, count } => write!(
                f,
                "message {message}: {count} attachment(s) left out (this role carries text only)"
            ),
            Self::FilenameDropped { message, filename } => write!(
                f,
                "message {message}: file name {filename:?} has no place on the wire; left out"
            ),
            Self::DocumentUrlAsText { message, url } => write!(
                f,
                "message {message}: document URL {url:?} sent as text (no URL documents here)"
            ),
            Self::ToolContentMoved {
                message,
                tool_call_id,
            } => write!(
                f,
                "message {message}: content of tool result {tool_call_id:?} moved to a user \
                 message after the tool results"
            ),
            Self::ToolErrorFlagDropped {
                message,
                tool_call_id,
            } => write!(
                f,
                "message {message}: tool result {tool_call_id:?} is an error, sent without an \
                 error flag"
            ),
            Self::CallIdRewritten { message, id, wire } => write!(
                f,
                "message {message}: tool call id {id:?} is sent as {wire:?}"
            ),
            Self::ForeignContentDropped { message, target } => write!(
                f,
                "message {message}: a block in {} format left out",
                target.map_or("an unknown", Target::as_str)
            ),
            Self::CompactionAsText { message } => {
                write!(f, "message {message}: a compaction summary sent as text")
            }
            Self::SystemHoisted { message } => {
                write!(f, "system message {message} hoisted into `instructions`")
            }
            Self::SystemKeptInline { message } => write!(
                f,
                "system message {message} carries attachments; kept inline"
            ),
        }
    }
}
