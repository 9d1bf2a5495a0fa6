//! A whole provider-neutral request.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{message::Message, target::Target, tool::ToolDefinition};

/// A provider's own tool (tool search, web search, code execution, …): an opaque JSON
/// object passed through untouched to the targets it belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NativeTool {
    /// The targets that understand this tool; compiling for any other leaves it out.
    pub targets: Vec<Target>,
    /// The tool exactly as the provider documents it.
    pub value: Value,
}

/// What a provider crate's `compile_with` does with a request's tools.
///
/// The tools are most of a request's bytes and change rarely, so a caller that kept the
/// serialised tools (and the notices about them) from an earlier compile of the same tools
/// can skip converting them each turn and splice its copy back.
///
/// Not `non_exhaustive`: every provider crate matches on it, and a new way of passing
/// tools would need each of them changed anyway.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ToolPass {
    /// Convert them into the body's `tools`, with their notices (what `compile` does).
    #[default]
    Convert,
    /// Leave `tools` empty and make no tool notices: the caller holds both from an earlier
    /// compile of the same tools.
    Skip,
}

/// One provider-neutral request: the conversation and the tools offered with it.
///
/// System messages live in `messages`; each provider crate decides where they go (hoisted
/// to the system slot, or kept in place when `positional`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The conversation, in order.
    pub messages: Vec<Message>,
    /// Function tools offered to the model, in the order they are sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolDefinition>,
    /// Provider-native tools, passed through to the targets they belong to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub native_tools: Vec<NativeTool>,
    /// Text the model's reply must start with (degraded per target where unsupported).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill: Option<String>,
}

impl Request {
    /// A request with messages and no tools.
    pub fn new(messages: Vec<Message>) -> Self {
        Self {
            messages,
            ..Self::default()
        }
    }

    /// Sets the function tools.
    #[must_use]
    pub fn with_tools(mut self, tools: Vec<ToolDefinition>) -> Self {
        self.tools = tools;
        self
    }

    /// Sets the provider-native tools.
    #[must_use]
    pub fn with_native_tools(mut self, tools: Vec<NativeTool>) -> Self {
        self.native_tools = tools;
        self
    }

    /// Sets the prefill.
    #[must_use]
    pub fn with_prefill(mut self, prefill: impl Into<String>) -> Self {
        self.prefill = Some(prefill.into());
        self
    }
}
