//! Messages and their content.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    is_false,
    target::Target,
    tool::{ToolCall, ToolCallId, ToolName},
};

/// Who speaks a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Instructions from the application.
    System,
    /// The user.
    User,
    /// The model.
    Assistant,
    /// Results of tool calls, answering an assistant message's calls.
    Tool,
}

/// Where an attachment's bytes are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AttachmentSource {
    /// Inline base64 payload (no `data:` prefix).
    Base64 {
        /// The base64 text.
        data: String,
    },
    /// A URL the provider fetches (`https://…`, `gs://…`, or a `data:` URL).
    Url {
        /// The URL.
        url: String,
    },
}

/// An image, document or other media attached to a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    /// The MIME type, e.g. `image/png` or `application/pdf`.
    pub media_type: String,
    /// The bytes, inline or by reference.
    pub source: AttachmentSource,
    /// The file name, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
}

impl Attachment {
    /// An inline base64 attachment.
    pub fn base64(media_type: impl Into<String>, data: impl Into<String>) -> Self {
        Self {
            media_type: media_type.into(),
            source: AttachmentSource::Base64 { data: data.into() },
            filename: None,
        }
    }

    /// An attachment by URL.
    pub fn url(media_type: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            media_type: media_type.into(),
            source: AttachmentSource::Url { url: url.into() },
            filename: None,
        }
    }

    /// Sets the file name.
    #[must_use]
    pub fn with_filename(mut self, filename: impl Into<String>) -> Self {
        self.filename = Some(filename.into());
        self
    }
}

/// The result of one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the call this answers.
    pub tool_call_id: ToolCallId,
    /// The tool's name (Gemini needs it on the wire; others ignore it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<ToolName>,
    /// The result: text and attachments, in order.
    pub content: Vec<Content>,
    /// The call failed; the content explains why.
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_error: bool,
}

impl ToolResult {
    /// A text result.
    pub fn text(tool_call_id: impl Into<ToolCallId>, text: impl Into<String>) -> Self {
        Self {
            tool_call_id: tool_call_id.into(),
            name: None,
            content: vec![Content::text(text)],
            is_error: false,
        }
    }

    /// A text error result.
    pub fn error(tool_call_id: impl Into<ToolCallId>, text: impl Into<String>) -> Self {
        Self {
            is_error: true,
            ..Self::text(tool_call_id, text)
        }
    }

    /// Sets the tool name.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<ToolName>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// One block of a message's content, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    /// Plain text.
    Text {
        /// The text.
        text: String,
        /// Gemini's thought signature on this text part, echoed back verbatim.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thought_signature: Option<String>,
    },
    /// An image, document or other media.
    Attachment(Attachment),
    /// A call the model made (assistant messages).
    ToolCall(ToolCall),
    /// The result of a call (tool messages).
    ToolResult(ToolResult),
    /// The model's visible reasoning, echoed back with its signature.
    Thinking {
        /// The reasoning text.
        thinking: String,
        /// The provider's signature over it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// Reasoning the provider returned encrypted; echoed back verbatim.
    RedactedThinking {
        /// The opaque payload.
        data: String,
    },
    /// A content kind chef does not model (a server tool's result block, a provider's new
    /// block type), kept verbatim so that a conversation that used it can continue.
    Unknown {
        /// The target whose wire format this value is in; `None` when it is not known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<Target>,
        /// The block exactly as received.
        value: Value,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text {
            text: text.into(),
            thought_signature: None,
        }
    }

    /// The text of a [`Content::Text`] block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text { text, .. } => Some(text),
            _ => None,
        }
    }
}

/// One message of a conversation.
///
/// The flags steer compilation: `cache_breakpoint` asks for a prompt-cache breakpoint after
/// this message, `positional` keeps a system message at its place instead of hoisting it to
/// the provider's system slot, and `pinned` protects the message from lossy history
/// operations (summaries, compaction).
///
/// ```
/// use chef_ir::{Content, Message, Role, ToolCall};
/// use serde_json::json;
///
/// let call = ToolCall::new("call_1", "get_weather", json!({"city": "Oslo"}));
/// let turn = Message::assistant_with(vec![Content::text("Checking."), Content::ToolCall(call)]);
/// assert_eq!(turn.role, Role::Assistant);
/// assert_eq!(turn.tool_calls().count(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// The content blocks, in order.
    pub content: Vec<Content>,
    /// Request a prompt-cache breakpoint at the end of this message.
    #[serde(default, skip_serializing_if = "is_false")]
    pub cache_breakpoint: bool,
    /// On a system message: keep it at its position rather than hoisting it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub positional: bool,
    /// Protect this message from summarisation and compaction.
    #[serde(default, skip_serializing_if = "is_false")]
    pub pinned: bool,
}

impl Message {
    /// A message with a role and content blocks, no flags.
    pub fn new(role: Role, content: Vec<Content>) -> Self {
        Self {
            role,
            content,
            cache_breakpoint: false,
            positional: false,
            pinned: false,
        }
    }

    /// A system message with one text block.
    pub fn system(text: impl Into<String>) -> Self {
        Self::new(Role::System, vec![Content::text(text)])
    }

    /// A user message with one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Self::new(Role::User, vec![Content::text(text)])
    }

    /// An assistant message with one text block.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::new(Role::Assistant, vec![Content::text(text)])
    }

    /// An assistant message with the given blocks.
    pub fn assistant_with(content: Vec<Content>) -> Self {
        Self::new(Role::Assistant, content)
    }

    /// A tool message carrying results.
    pub fn tool_results(results: Vec<ToolResult>) -> Self {
        Self::new(
            Role::Tool,
            results.into_iter().map(Content::ToolResult).collect(),
        )
    }

    /// Sets the cache-breakpoint flag.
    #[must_use]
    pub fn with_cache_breakpoint(mut self, on: bool) -> Self {
        self.cache_breakpoint = on;
        self
    }

    /// Sets the positional flag.
    #[must_use]
    pub fn with_positional(mut self, on: bool) -> Self {
        self.positional = on;
        self
    }

    /// Sets the pinned flag.
    #[must_use]
    pub fn with_pinned(mut self, on: bool) -> Self {
        self.pinned = on;
        self
    }

    /// The text blocks joined with no separator (the text-only view of the message).
    pub fn text(&self) -> String {
        self.content.iter().filter_map(Content::as_text).collect()
    }

    /// The tool calls in this message, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|c| match c {
            Content::ToolCall(call) => Some(call),
            _ => None,
        })
    }

    /// The tool results in this message, in order.
    pub fn tool_results_iter(&self) -> impl Iterator<Item = &ToolResult> {
        self.content.iter().filter_map(|c| match c {
            Content::ToolResult(result) => Some(result),
            _ => None,
        })
    }
}
