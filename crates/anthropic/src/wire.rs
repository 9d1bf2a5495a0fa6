//! Serde mirror of the Anthropic Messages API JSON, field for field.
//!
//! Names follow Anthropic's API reference; doc comments quote it. Types that go out borrow
//! from the IR request through [`Cow`], so compiling a large request copies no schema and no
//! text: serialising a [`Request`] reads the caller's data in place.
//!
//! Content blocks and tools are open sets on Anthropic's side (server tools, new block
//! types). [`ContentBlock`] and [`Tool`] therefore keep what they do not model as raw JSON:
//! the tag is dispatched by hand, a known tag decodes into its typed form (a failure is an
//! error), and an unknown tag is kept verbatim in `Unknown`, which serialises back to the
//! same bytes.
//!
//! # Format
//!
//! ```json
//! {"system":[{"type":"text","text":"Be terse.","cache_control":{"type":"ephemeral"}}],
//!  "messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],
//!  "tools":[{"name":"get_weather","input_schema":{"type":"object"}}]}
//! ```

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, de::Error as _};
use serde_json::Value;

/// The body of `POST /v1/messages`, as chef compiles it.
///
/// Only the keys chef fills are modelled; a caller adds sampling settings itself. Keys
/// serialise in declaration order and absent keys are omitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Request<'a> {
    /// "The model that will complete your prompt."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<Cow<'a, str>>,
    /// "The maximum number of tokens to generate before stopping."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// "System prompt. A system prompt is a way of providing context and instructions to
    /// Claude."
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "system_blocks")]
    pub system: Vec<TextBlock<'a>>,
    /// "Input messages." Alternating user and assistant turns; consecutive turns of one role
    /// are combined by the API.
    pub messages: Vec<Message<'a>>,
    /// "Configuration for enabling Claude's extended thinking."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<ThinkingConfig<'a>>,
    /// "Definitions of tools that the model may use."
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool<'a>>,
}

impl<'a> Request<'a> {
    /// A request with messages only.
    pub fn new(messages: Vec<Message<'a>>) -> Self {
        Self {
            model: None,
            max_tokens: None,
            system: Vec::new(),
            messages,
            thinking: None,
            tools: Vec::new(),
        }
    }

    /// Where the last prompt-cache breakpoint sits, in prefix order (tools, then system,
    /// then messages): everything up to and including it is the cache-stable prefix.
    pub fn last_breakpoint(&self) -> Option<Breakpoint> {
        for (index, message) in self.messages.iter().enumerate().rev() {
            if let Some(block) = message
                .content
                .iter()
                .rposition(|b| b.cache_control().is_some())
            {
                return Some(Breakpoint::Message { index, block });
            }
        }
        if let Some(index) = self.system.iter().rposition(|b| b.cache_control.is_some()) {
            return Some(Breakpoint::System { index });
        }
        self.tools
            .iter()
            .rposition(Tool::has_cache_control)
            .map(|index| Breakpoint::Tool { index })
    }

    /// How many `cache_control` markers the request carries (the API accepts at most 4).
    pub fn breakpoint_count(&self) -> usize {
        let tools = self.tools.iter().filter(|t| t.has_cache_control()).count();
        let system = self
            .system
            .iter()
            .filter(|b| b.cache_control.is_some())
            .count();
        let messages = self
            .messages
            .iter()
            .flat_map(|m| &m.content)
            .filter(|b| b.cache_control().is_some())
            .count();
        tools + system + messages
    }
}

/// The location of a prompt-cache breakpoint in a [`Request`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Breakpoint {
    /// On `tools[index]`.
    Tool {
        /// Index in `tools`.
        index: usize,
    },
    /// On `system[index]`.
    System {
        /// Index in `system`.
        index: usize,
    },
    /// On `messages[index].content[block]`.
    Message {
        /// Index in `messages`.
        index: usize,
        /// Index in that message's `content`.
        block: usize,
    },
}

/// "Configuration for enabling Claude's extended thinking."
///
/// Serialises to `{"type":"enabled","budget_tokens":2048}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ThinkingConfig<'a> {
    /// `enabled`, `disabled`, or `adaptive`.
    #[serde(rename = "type")]
    pub kind: Cow<'a, str>,
    /// "Determines how many tokens Claude can use for its internal reasoning process."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_tokens: Option<u64>,
}

impl ThinkingConfig<'static> {
    /// Thinking enabled with a token budget.
    pub fn enabled(budget_tokens: u64) -> Self {
        Self {
            kind: Cow::Borrowed("enabled"),
            budget_tokens: Some(budget_tokens),
        }
    }

    /// Adaptive thinking (the model decides how much to think).
    pub fn adaptive() -> Self {
        Self {
            kind: Cow::Borrowed("adaptive"),
            budget_tokens: None,
        }
    }
}

impl ThinkingConfig<'_> {
    /// Whether thinking is on (any kind other than `disabled`).
    pub fn is_on(&self) -> bool {
        self.kind != "disabled"
    }
}

/// Who speaks a message: "Our models are trained to operate on alternating `user` and
/// `assistant` conversational turns."
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Role {
    /// The user (tool results are user content too).
    User,
    /// The model.
    Assistant,
}

/// One input message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Message<'a> {
    /// `user` or `assistant`.
    pub role: Role,
    /// The content blocks. (The API also accepts a bare string, read by the parser as one
    /// text block; chef always writes blocks.)
    #[serde(deserialize_with = "blocks_or_string")]
    pub content: Vec<ContentBlock<'a>>,
}

impl<'a> Message<'a> {
    /// A message with a role and blocks.
    pub fn new(role: Role, content: Vec<ContentBlock<'a>>) -> Self {
        Self { role, content }
    }
}

fn blocks_or_string<'de, 'a, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<ContentBlock<'a>>, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::String(text) => Ok(vec![ContentBlock::Text(TextBlock::new(text))]),
        Value::Array(items) => items
            .into_iter()
            .map(|v| ContentBlock::from_value(v).map_err(D::Error::custom))
            .collect(),
        other => Err(D::Error::custom(format!(
            "content must be a string or an array of blocks, got {other}"
        ))),
    }
}

/// "Create a cache control breakpoint at this content block."
///
/// Serialises to `{"type":"ephemeral"}` or `{"type":"ephemeral","ttl":"1h"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CacheControl {
    /// Always `ephemeral`.
    #[serde(rename = "type")]
    pub kind: CacheKind,
    /// "The time-to-live for the cache control breakpoint."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<CacheTtl>,
}

impl CacheControl {
    /// An ephemeral breakpoint with the default lifetime (5 minutes).
    pub const EPHEMERAL: Self = Self {
        kind: CacheKind::Ephemeral,
        ttl: None,
    };

    /// An ephemeral breakpoint with an optional explicit lifetime.
    pub fn ephemeral(ttl: Option<CacheTtl>) -> Self {
        Self {
            kind: CacheKind::Ephemeral,
            ttl,
        }
    }
}

/// The kind of a cache breakpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CacheKind {
    /// The only kind the API documents.
    Ephemeral,
}

/// "The time-to-live for the cache control breakpoint."
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum CacheTtl {
    /// `5m`, the default.
    #[serde(rename = "5m")]
    FiveMinutes,
    /// `1h`.
    #[serde(rename = "1h")]
    OneHour,
}

/// A `text` block (also the only block kind of `system`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TextBlock<'a> {
    /// The text.
    pub text: Cow<'a, str>,
    /// Citations the model attached to this text (responses with citations enabled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citations: Option<Value>,
    /// A cache breakpoint after this block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

impl<'a> TextBlock<'a> {
    /// A text block without citations or breakpoint.
    pub fn new(text: impl Into<Cow<'a, str>>) -> Self {
        Self {
            text: text.into(),
            citations: None,
            cache_control: None,
        }
    }
}

/// Where an image's or document's bytes are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Source<'a> {
    /// `{"type":"base64","media_type":"image/png","data":"…"}`.
    Base64 {
        /// The MIME type.
        media_type: Cow<'a, str>,
        /// Base64 payload.
        data: Cow<'a, str>,
    },
    /// `{"type":"url","url":"https://…"}`.
    Url {
        /// The URL the API fetches.
        url: Cow<'a, str>,
    },
    /// Plain-text document source: `{"type":"text","media_type":"text/plain","data":"…"}`.
    Text {
        /// Always `text/plain`.
        media_type: Cow<'a, str>,
        /// The text itself.
        data: Cow<'a, str>,
    },
    /// A file uploaded through the Files API: `{"type":"file","file_id":"file_…"}`.
    File {
        /// The file id.
        file_id: Cow<'a, str>,
    },
}

/// An `image` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ImageBlock<'a> {
    /// The image bytes.
    pub source: Source<'a>,
    /// A cache breakpoint after this block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

impl<'a> ImageBlock<'a> {
    /// An image block without breakpoint.
    pub fn new(source: Source<'a>) -> Self {
        Self {
            source,
            cache_control: None,
        }
    }
}

/// A `document` block (PDF, plain text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DocumentBlock<'a> {
    /// The document bytes.
    pub source: Source<'a>,
    /// "The title of the document." chef writes the attachment's file name here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<Cow<'a, str>>,
    /// "Context about the document that will not be cited from."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Cow<'a, str>>,
    /// Citation settings, e.g. `{"enabled":true}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citations: Option<Value>,
    /// A cache breakpoint after this block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

impl<'a> DocumentBlock<'a> {
    /// A document block without title, context, citations or breakpoint.
    pub fn new(source: Source<'a>) -> Self {
        Self {
            source,
            title: None,
            context: None,
            citations: None,
            cache_control: None,
        }
    }
}

/// A `tool_use` block: a call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolUseBlock<'a> {
    /// The call id, `toolu_…`.
    pub id: Cow<'a, str>,
    /// The tool's wire name.
    pub name: Cow<'a, str>,
    /// The arguments, a JSON object.
    pub input: Cow<'a, Value>,
    /// A cache breakpoint after this block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

impl<'a> ToolUseBlock<'a> {
    /// A call without breakpoint.
    pub fn new(
        id: impl Into<Cow<'a, str>>,
        name: impl Into<Cow<'a, str>>,
        input: Cow<'a, Value>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            input,
            cache_control: None,
        }
    }
}

/// The `content` of a `tool_result`: "either a string or a list of content blocks".
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ToolResultContent<'a> {
    /// A plain string.
    Text(Cow<'a, str>),
    /// Text, image, document (and other) blocks.
    Blocks(Vec<ContentBlock<'a>>),
}

impl<'de> Deserialize<'de> for ToolResultContent<'_> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(text) => Ok(Self::Text(Cow::Owned(text))),
            Value::Array(items) => items
                .into_iter()
                .map(|v| ContentBlock::from_value(v).map_err(D::Error::custom))
                .collect::<Result<_, _>>()
                .map(Self::Blocks),
            other => Err(D::Error::custom(format!(
                "tool_result content must be a string or an array, got {other}"
            ))),
        }
    }
}

/// A `tool_result` block: the answer to a `tool_use`, sent in a user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolResultBlock<'a> {
    /// "The id of the tool use request this is a result for."
    pub tool_use_id: Cow<'a, str>,
    /// "The result of the tool", absent when empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<ToolResultContent<'a>>,
    /// "Set to true if the tool execution resulted in an error."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// A cache breakpoint after this block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

impl<'a> ToolResultBlock<'a> {
    /// A result with content, not an error, without breakpoint.
    pub fn new(
        tool_use_id: impl Into<Cow<'a, str>>,
        content: Option<ToolResultContent<'a>>,
    ) -> Self {
        Self {
            tool_use_id: tool_use_id.into(),
            content,
            is_error: None,
            cache_control: None,
        }
    }
}

/// A `thinking` block, echoed back with its signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ThinkingBlock<'a> {
    /// The reasoning text.
    pub thinking: Cow<'a, str>,
    /// Anthropic's signature over it.
    pub signature: Cow<'a, str>,
}

impl<'a> ThinkingBlock<'a> {
    /// A thinking block with its signature.
    pub fn new(thinking: impl Into<Cow<'a, str>>, signature: impl Into<Cow<'a, str>>) -> Self {
        Self {
            thinking: thinking.into(),
            signature: signature.into(),
        }
    }
}

/// A `redacted_thinking` block: encrypted reasoning, echoed back verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RedactedThinkingBlock<'a> {
    /// The opaque payload.
    pub data: Cow<'a, str>,
}

impl<'a> RedactedThinkingBlock<'a> {
    /// A redacted thinking block.
    pub fn new(data: impl Into<Cow<'a, str>>) -> Self {
        Self { data: data.into() }
    }
}

/// One content block of a message.
///
/// Known tags decode into typed variants; any other tag (`server_tool_use`,
/// `web_search_tool_result`, `tool_search_tool_result`, `container_upload`, …) is kept in
/// [`ContentBlock::Unknown`] exactly as received and serialises back unchanged.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentBlock<'a> {
    /// `text`.
    Text(TextBlock<'a>),
    /// `image`.
    Image(ImageBlock<'a>),
    /// `document`.
    Document(DocumentBlock<'a>),
    /// `tool_use`.
    ToolUse(ToolUseBlock<'a>),
    /// `tool_result`.
    ToolResult(ToolResultBlock<'a>),
    /// `thinking`.
    Thinking(ThinkingBlock<'a>),
    /// `redacted_thinking`.
    RedactedThinking(RedactedThinkingBlock<'a>),
    /// A block kind this crate does not model, verbatim.
    #[serde(untagged)]
    Unknown(Cow<'a, Value>),
}

/// The tags [`ContentBlock`] decodes into typed variants.
pub const KNOWN_BLOCK_TYPES: [&str; 7] = [
    "text",
    "image",
    "document",
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
];

impl<'a> ContentBlock<'a> {
    /// Decodes one block: a known `type` decodes into its typed variant (a malformed known
    /// block is an error), any other `type` is kept verbatim.
    pub fn from_value(value: Value) -> Result<Self, serde_json::Error> {
        let tag = match value.get("type") {
            Some(Value::String(tag)) => tag.as_str(),
            _ => {
                return Err(serde_json::Error::custom(
                    "content block without a string `type`",
                ));
            }
        };
        Ok(match tag {
            "text" => Self::Text(serde_json::from_value(value)?),
            "image" => Self::Image(serde_json::from_value(value)?),
            "document" => Self::Document(serde_json::from_value(value)?),
            "tool_use" => Self::ToolUse(serde_json::from_value(value)?),
            "tool_result" => Self::ToolResult(serde_json::from_value(value)?),
            "thinking" => Self::Thinking(serde_json::from_value(value)?),
            "redacted_thinking" => Self::RedactedThinking(serde_json::from_value(value)?),
            _ => Self::Unknown(Cow::Owned(value)),
        })
    }

    /// A text block.
    pub fn text(text: impl Into<Cow<'a, str>>) -> Self {
        Self::Text(TextBlock::new(text))
    }

    /// The block's breakpoint, if it has one (unknown blocks are read as JSON).
    pub fn cache_control(&self) -> Option<CacheControl> {
        match self {
            Self::Text(b) => b.cache_control,
            Self::Image(b) => b.cache_control,
            Self::Document(b) => b.cache_control,
            Self::ToolUse(b) => b.cache_control,
            Self::ToolResult(b) => b.cache_control,
            Self::Thinking(_) | Self::RedactedThinking(_) => None,
            Self::Unknown(v) => v
                .get("cache_control")
                .and_then(|c| serde_json::from_value(c.clone()).ok()),
        }
    }

    /// A mutable handle on the block's breakpoint slot; `None` for kinds the API does not
    /// let carry one (thinking) and for unknown blocks, which chef never edits.
    pub fn cache_control_mut(&mut self) -> Option<&mut Option<CacheControl>> {
        match self {
            Self::Text(b) => Some(&mut b.cache_control),
            Self::Image(b) => Some(&mut b.cache_control),
            Self::Document(b) => Some(&mut b.cache_control),
            Self::ToolUse(b) => Some(&mut b.cache_control),
            Self::ToolResult(b) => Some(&mut b.cache_control),
            Self::Thinking(_) | Self::RedactedThinking(_) | Self::Unknown(_) => None,
        }
    }
}

impl<'de> Deserialize<'de> for ContentBlock<'_> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::from_value(Value::deserialize(deserializer)?).map_err(D::Error::custom)
    }
}

/// A client (function) tool definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FunctionTool<'a> {
    /// "Name of the tool", `^[a-zA-Z0-9_-]{1,64}$`.
    pub name: Cow<'a, str>,
    /// "Description of what this tool does."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<Cow<'a, str>>,
    /// "JSON schema for this tool's input."
    pub input_schema: Cow<'a, Value>,
    /// "If true, tool will not be included in initial system prompt. Only loaded when
    /// returned via tool_reference from tool search."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defer_loading: Option<bool>,
    /// A cache breakpoint after this tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

impl<'a> FunctionTool<'a> {
    /// A tool with a name and a schema.
    pub fn new(name: impl Into<Cow<'a, str>>, input_schema: Cow<'a, Value>) -> Self {
        Self {
            name: name.into(),
            description: None,
            input_schema,
            defer_loading: None,
            cache_control: None,
        }
    }
}

/// One entry of `tools`: a function tool, or a server / versioned tool (`{"type":
/// "tool_search_tool_regex_20251119", …}`, `web_search_20250305`, …) kept verbatim.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum Tool<'a> {
    /// A function tool (no `type`, or `"type":"custom"` on input).
    Function(FunctionTool<'a>),
    /// A typed tool, exactly as given.
    Native(Cow<'a, Value>),
}

impl Tool<'_> {
    /// Whether this tool carries a cache breakpoint.
    pub fn has_cache_control(&self) -> bool {
        match self {
            Self::Function(t) => t.cache_control.is_some(),
            Self::Native(v) => v.get("cache_control").is_some(),
        }
    }

    /// Whether this tool is loaded only on demand (`defer_loading: true`).
    pub fn is_deferred(&self) -> bool {
        match self {
            Self::Function(t) => t.defer_loading == Some(true),
            Self::Native(v) => v.get("defer_loading") == Some(&Value::Bool(true)),
        }
    }

    /// The `type` of a typed tool (`None` for function tools).
    pub fn kind(&self) -> Option<&str> {
        match self {
            Self::Function(_) => None,
            Self::Native(v) => v.get("type").and_then(Value::as_str),
        }
    }

    /// The tool's name.
    pub fn name(&self) -> Option<&str> {
        match self {
            Self::Function(t) => Some(&t.name),
            Self::Native(v) => v.get("name").and_then(Value::as_str),
        }
    }
}

impl<'de> Deserialize<'de> for Tool<'_> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        match value.get("type") {
            None => Ok(Self::Function(
                serde_json::from_value(value).map_err(D::Error::custom)?,
            )),
            Some(Value::String(t)) if t == "custom" => {
                let mut value = value;
                if let Value::Object(map) = &mut value {
                    map.shift_remove("type");
                }
                Ok(Self::Function(
                    serde_json::from_value(value).map_err(D::Error::custom)?,
                ))
            }
            Some(_) => Ok(Self::Native(Cow::Owned(value))),
        }
    }
}

/// Why the model stopped. An open set: unknown values are kept.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StopReason(Cow<'static, str>);

impl StopReason {
    /// "the model reached a natural stopping point".
    pub const END_TURN: Self = Self(Cow::Borrowed("end_turn"));
    /// "we exceeded the requested `max_tokens` or the model's maximum".
    pub const MAX_TOKENS: Self = Self(Cow::Borrowed("max_tokens"));
    /// "one of your provided custom `stop_sequences` was generated".
    pub const STOP_SEQUENCE: Self = Self(Cow::Borrowed("stop_sequence"));
    /// "the model invoked one or more tools".
    pub const TOOL_USE: Self = Self(Cow::Borrowed("tool_use"));
    /// "we paused a long-running turn" (server tools); send the response back to continue.
    pub const PAUSE_TURN: Self = Self(Cow::Borrowed("pause_turn"));
    /// "streaming classifiers intervened to handle potential policy violations".
    pub const REFUSAL: Self = Self(Cow::Borrowed("refusal"));

    /// Wraps any stop reason.
    pub fn new(reason: impl Into<Cow<'static, str>>) -> Self {
        Self(reason.into())
    }

    /// The reason as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// "Billing and rate-limit usage."
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Usage {
    /// "The number of input tokens which were used."
    #[serde(default)]
    pub input_tokens: u64,
    /// "The number of output tokens which were used."
    #[serde(default)]
    pub output_tokens: u64,
    /// "The number of input tokens used to create the cache entry."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    /// "The number of input tokens read from the cache."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
}

/// A `message` response of `POST /v1/messages`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Response {
    /// "Unique object identifier."
    pub id: String,
    /// "The model that handled the request."
    #[serde(default)]
    pub model: String,
    /// Always `assistant`.
    pub role: Role,
    /// "Content generated by the model."
    pub content: Vec<ContentBlock<'static>>,
    /// Why the model stopped; `null` only in streaming start events.
    #[serde(default)]
    pub stop_reason: Option<StopReason>,
    /// "Which custom stop sequence was generated, if any."
    #[serde(default)]
    pub stop_sequence: Option<String>,
    /// Token counts.
    #[serde(default)]
    pub usage: Usage,
}

// `system` holds text blocks only, so the field stores [`TextBlock`]s and this module writes
// each with its `"type":"text"` tag (and reads a bare string as one block, as the API allows).
mod system_blocks {
    use std::borrow::Cow;

    use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _};
    use serde_json::Value;

    use super::{CacheControl, TextBlock};

    #[derive(Serialize)]
    #[serde(tag = "type", rename = "text")]
    struct Tagged<'b> {
        text: &'b str,
        #[serde(skip_serializing_if = "Option::is_none")]
        citations: &'b Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: &'b Option<CacheControl>,
    }

    pub(super) fn serialize<S: Serializer>(
        blocks: &[TextBlock<'_>],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(blocks.iter().map(|b| Tagged {
            text: &b.text,
            citations: &b.citations,
            cache_control: &b.cache_control,
        }))
    }

    pub(super) fn deserialize<'de, 'a, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<TextBlock<'a>>, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(text) => Ok(vec![TextBlock::new(Cow::Owned(text))]),
            Value::Array(items) => items
                .into_iter()
                .map(|item| {
                    if item.get("type").and_then(Value::as_str) != Some("text") {
                        return Err(D::Error::custom("system blocks must be `text` blocks"));
                    }
                    serde_json::from_value(item).map_err(D::Error::custom)
                })
                .collect(),
            other => Err(D::Error::custom(format!(
                "system must be a string or an array of text blocks, got {other}"
            ))),
        }
    }
}
