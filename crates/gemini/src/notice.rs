//! What a compile reports: something the request asked for that Gemini cannot express,
//! and what was done instead.

use chef_ir::Target;

/// Something the request asked for that Gemini cannot express, and what was done instead.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Notice {
    /// A positional system message was sent as a user content at its position.
    PositionalSystemAsUser {
        /// Index of the message in the request.
        message: usize,
    },
    /// Non-text blocks of a system message were sent in a user content at its position
    /// (`systemInstruction` is text only).
    SystemContentMoved {
        /// Index of the message in the request.
        message: usize,
    },
    /// The prefill was degraded to an instruction in a user turn.
    PrefillDegraded {
        /// True when a new user content was added for it; false when it was appended to
        /// the last user content.
        new_content: bool,
    },
    /// A thinking block was left out ([`ThinkingMode::Drop`](crate::ThinkingMode::Drop)).
    ThinkingDropped {
        /// Index of the message in the request.
        message: usize,
    },
    /// A thinking block was sent as text and its signature left out.
    ThinkingSignatureDropped {
        /// Index of the message in the request.
        message: usize,
    },
    /// An Anthropic compaction summary was sent as a text part, after
    /// [`crate::COMPACTION_HEADER`].
    CompactionAsText {
        /// Index of the message in the request.
        message: usize,
    },
    /// A redacted-thinking block was left out (Gemini has no such part).
    RedactedThinkingDropped {
        /// Index of the message in the request.
        message: usize,
    },
    /// A block in another provider's format (or a kind a tool result cannot hold) was left
    /// out.
    ContentDropped {
        /// Index of the message in the request.
        message: usize,
        /// The block's target, when it had one.
        target: Option<Target>,
    },
    /// An attachment's file name was left out (Gemini parts carry none).
    FilenameDropped {
        /// Index of the message in the request.
        message: usize,
    },
    /// A message produced no part (Gemini refuses empty contents) and was left out.
    EmptyMessageSkipped {
        /// Index of the message in the request.
        message: usize,
    },
    /// A tool result had no name and answers no call in the request; its call id was used
    /// as the function name.
    ToolResultUnnamed {
        /// Index of the message in the request.
        message: usize,
        /// The call id it answers.
        tool_call_id: String,
    },
    /// A tool asked for `defer_loading`; Gemini has no deferred loading, so it is declared
    /// like any other.
    DeferLoadingIgnored {
        /// The tool's real name.
        tool: String,
    },
    /// A native tool for other targets was left out.
    NativeToolLeftOut {
        /// Its index in `Request::native_tools`.
        index: usize,
        /// The targets it belongs to.
        targets: Vec<Target>,
    },
    /// A tool call's arguments were not a JSON object (a garbled call that was refused when
    /// it was routed, kept in the history with its error result); Gemini's
    /// `functionCall.args` is a `Struct`, so they were sent as `{}`. (`null` is sent as `{}`
    /// without a notice: that is what it means.)
    ArgumentsNotAnObject {
        /// Index of the message in the request.
        message: usize,
        /// The call's id.
        call_id: String,
    },
    /// A tool name Gemini refuses is sent under another name (mapped back when parsing).
    ToolRenamed {
        /// The real name.
        real: String,
        /// The name on the wire.
        wire: String,
    },
}

impl Notice {
    /// Adds `offset` to the message this notice names, for a request that left its first
    /// `offset` messages out; `false` for a notice that depends on more than its own
    /// message (see [`crate::layout::layout`]). Notices about the tools hold as they are.
    pub(crate) fn renumber(&mut self, offset: usize) -> bool {
        match self {
            Self::PositionalSystemAsUser { message }
            | Self::ThinkingDropped { message }
            | Self::ThinkingSignatureDropped { message }
            | Self::CompactionAsText { message }
            | Self::RedactedThinkingDropped { message }
            | Self::ContentDropped { message, .. }
            | Self::FilenameDropped { message, .. }
            | Self::ArgumentsNotAnObject { message, .. } => {
                *message += offset;
                true
            }
            Self::DeferLoadingIgnored { .. }
            | Self::NativeToolLeftOut { .. }
            | Self::ToolRenamed { .. }
            | Self::PrefillDegraded { .. } => true,
            Self::SystemContentMoved { .. }
            | Self::EmptyMessageSkipped { .. }
            | Self::ToolResultUnnamed { .. } => false,
        }
    }
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::PositionalSystemAsUser { message } => write!(
                f,
                "positional system message {message} sent as a user content (Gemini has no system role in contents)"
            ),
            Self::SystemContentMoved { message } => write!(
                f,
                "non-text blocks of system message {message} sent in a user content"
            ),
            Self::PrefillDegraded { new_content: true } => {
                f.write_str("prefill degraded to an instruction in a new user content")
            }
            Self::PrefillDegraded { new_content: false } => {
                f.write_str("prefill degraded to an instruction appended to the last user content")
            }
            Self::ThinkingDropped { message } => {
                write!(f, "thinking in message {message} left out")
            }
            Self::ThinkingSignatureDropped { message } => write!(
                f,
                "thinking signature in message {message} left out (thinking sent as text)"
            ),
            Self::CompactionAsText { message } => {
                write!(f, "compaction summary in message {message} sent as text")
            }
            Self::RedactedThinkingDropped { message } => {
                write!(f, "redacted thinking in message {message} left out")
            }
            Self::ContentDropped { message, target } => match target {
                Some(t) => write!(f, "{t} content in message {message} left out"),
                None => write!(f, "content of unknown format in message {message} left out"),
            },
            Self::FilenameDropped { message } => {
                write!(f, "attachment file name in message {message} left out")
            }
            Self::EmptyMessageSkipped { message } => {
                write!(f, "message {message} has nothing Gemini can take; left out")
            }
            Self::ToolResultUnnamed {
                message,
                tool_call_id,
            } => write!(
                f,
                "tool result {tool_call_id:?} in message {message} has no name and answers no call; its id is used as the name"
            ),
            Self::DeferLoadingIgnored { tool } => write!(
                f,
                "tool {tool:?} asks for defer_loading, which Gemini lacks; declared normally"
            ),
            Self::NativeToolLeftOut { index, targets } => {
                write!(f, "native tool #{index} left out (targets:")?;
                for t in targets {
                    write!(f, " {t}")?;
                }
                f.write_str(")")
            }
            Self::ToolRenamed { real, wire } => {
                write!(f, "tool {real:?} sent as {wire:?}")
            }
            Self::ArgumentsNotAnObject { message, call_id } => write!(
                f,
                "arguments of tool call {call_id:?} in message {message} are not a JSON object: sent as {{}}"
            ),
        }
    }
}
