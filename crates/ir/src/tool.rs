//! Tool definitions and the calls a model makes to them.

use std::{borrow::Borrow, fmt};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::is_false;

/// The real name of a tool, as its owner registered it.
///
/// Names are compared exactly (case-sensitive). Provider crates map names that a provider
/// refuses to valid wire names and back; callers only ever see real names.
///
/// Shared, not copied: cloning a name (every turn's tool lists, payload metadata, the
/// selection key) is a reference-count increment.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ToolName(std::sync::Arc<str>);

impl ToolName {
    /// Wraps a name.
    pub fn new(name: impl Into<String>) -> Self {
        Self(std::sync::Arc::from(name.into()))
    }

    /// The name as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The owned string.
    pub fn into_inner(self) -> String {
        String::from(&*self.0)
    }
}

impl Serialize for ToolName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for ToolName {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self::new)
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for ToolName {
    fn from(s: &str) -> Self {
        Self(std::sync::Arc::from(s))
    }
}

impl From<String> for ToolName {
    fn from(s: String) -> Self {
        Self::new(s)
    }
}

impl AsRef<str> for ToolName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for ToolName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for ToolName {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for ToolName {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

/// The id a provider gives one tool call; a tool result answers it by the same id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ToolCallId(String);

impl ToolCallId {
    /// Wraps an id.
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }

    /// The id as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ToolCallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for ToolCallId {
    fn from(s: &str) -> Self {
        Self(s.to_owned())
    }
}

impl From<String> for ToolCallId {
    fn from(s: String) -> Self {
        Self(s)
    }
}

/// Behavioural hints about a tool (the MCP `annotations` object).
///
/// Hints are advisory: a gate policy may use them (for example, block every tool that is
/// not read-only), but chef never trusts them for anything that matters on its own.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling the tool repeatedly with the same arguments has no additional effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// True when no hint is set.
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// One tool the model may call: the provider-neutral definition.
///
/// `input_schema` is the JSON Schema of the arguments exactly as authored (key order kept).
/// It is validated and normalised by `chef-compress`, never here.
///
/// ```
/// use chef_ir::ToolDefinition;
/// use serde_json::json;
///
/// let tool = ToolDefinition::new("search_docs", json!({"type": "object"}))
///     .with_description("Full-text search over the docs.")
///     .with_tags(["docs", "search"])
///     .with_defer_loading(true);
/// assert!(tool.defer_loading);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The tool's real name.
    pub name: ToolName,
    /// What the tool does, for the model. Empty when the source had none.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments; `{"type":"object"}` when the source had none.
    pub input_schema: Value,
    /// Tags used by task pruning.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Ask a provider with native tool search to load this tool only on demand.
    #[serde(default, skip_serializing_if = "is_false")]
    pub defer_loading: bool,
    /// Behavioural hints (MCP `annotations`).
    #[serde(default, skip_serializing_if = "ToolAnnotations::is_empty")]
    pub annotations: ToolAnnotations,
}

impl ToolDefinition {
    /// A tool with a name and an argument schema; no description, tags or hints.
    pub fn new(name: impl Into<ToolName>, input_schema: Value) -> Self {
        Self {
            name: name.into(),
            description: String::new(),
            input_schema,
            tags: Vec::new(),
            defer_loading: false,
            annotations: ToolAnnotations::default(),
        }
    }

    /// Sets the description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// Sets the tags.
    #[must_use]
    pub fn with_tags<I, S>(mut self, tags: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// Sets `defer_loading`.
    #[must_use]
    pub fn with_defer_loading(mut self, defer: bool) -> Self {
        self.defer_loading = defer;
        self
    }

    /// Sets the behavioural hints.
    #[must_use]
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// The schema used when a source gives none: an object with any properties.
    pub fn empty_schema() -> Value {
        let mut schema = serde_json::Map::new();
        schema.insert("type".to_owned(), Value::String("object".to_owned()));
        Value::Object(schema)
    }
}

/// A call the model made to a tool.
///
/// `arguments` holds the parsed JSON arguments. When a provider sends argument text that is
/// not JSON (OpenAI sends arguments as a string, and models do produce broken JSON), the
/// parser keeps the raw text as a JSON string value so nothing is lost; `chef-compress`'s
/// resolver then answers the model with an error it can act on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for this call.
    pub id: ToolCallId,
    /// The tool name exactly as the model wrote it (a real name, a code, a namespace tool).
    pub name: ToolName,
    /// The arguments as JSON.
    pub arguments: Value,
    /// Gemini's thought signature on this `functionCall` part, echoed back verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
}

impl ToolCall {
    /// A call with an id, a name and arguments.
    pub fn new(id: impl Into<ToolCallId>, name: impl Into<ToolName>, arguments: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
            thought_signature: None,
        }
    }
}
