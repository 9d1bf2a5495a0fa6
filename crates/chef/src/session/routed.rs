//! What [`Chef::route`](crate::Chef::route) answers: the outcome of one model call.

use chef_ir::{ToolCallId, ToolName};
use serde_json::Value;

use crate::error::RouteError;

/// How a model's call was classified. Only [`Routed::Call`] is dispatched to the agent's
/// own tools; every other outcome carries the reply to hand back to the model.
#[derive(Debug, Clone, PartialEq)]
pub enum Routed {
    /// A validated call of a real, allowed tool: dispatch it.
    Call(RoutedCall),
    /// A library-owned tool: run [`Chef::handle_tool`](crate::Chef::handle_tool) for the reply.
    Owned(OwnedCall),
    /// A toolkit was loaded; its tools are offered from the next compile on.
    ToolkitLoaded {
        /// The call's id.
        id: ToolCallId,
        /// The toolkit's name.
        toolkit: String,
        /// The tools it makes available, in the toolkit's order. Blocked tools are left
        /// out (they are still sent, as blocking never edits the tool list, and calls to
        /// them are refused); the reply says how many.
        tools: Vec<ToolName>,
        /// The reply for the model.
        reply: String,
    },
    /// A lookup (`q`, `describe_op`) answered by the library.
    Lookup {
        /// The call's id.
        id: ToolCallId,
        /// The reply for the model.
        reply: String,
    },
    /// The call reached a blocked tool.
    Blocked {
        /// The call's id.
        id: ToolCallId,
        /// The blocked name (a tool, namespace or toolkit).
        name: String,
        /// The reply for the model.
        reply: String,
    },
    /// The call cannot be honoured; the reply tells the model how to recover.
    Error {
        /// The call's id.
        id: ToolCallId,
        /// What went wrong, for the program.
        error: RouteError,
        /// The reply for the model.
        reply: String,
    },
}

/// A call to dispatch to one of the agent's own tools.
#[derive(Debug, Clone, PartialEq)]
pub struct RoutedCall {
    /// The call's id (answer with a tool result of this id).
    pub id: ToolCallId,
    /// The tool's real name.
    pub name: ToolName,
    /// The arguments, validated against the tool's original schema.
    pub arguments: Value,
    /// The namespace or toolkit the call came through, if any.
    pub via: Option<String>,
}

/// A call of a library-owned tool.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnedCall {
    /// The call's id.
    pub id: ToolCallId,
    /// The owned tool's name.
    pub name: String,
    /// The arguments as the model sent them.
    pub arguments: Value,
}

impl Routed {
    /// The call id.
    pub fn id(&self) -> &ToolCallId {
        match self {
            Self::Call(c) => &c.id,
            Self::Owned(c) => &c.id,
            Self::ToolkitLoaded { id, .. }
            | Self::Lookup { id, .. }
            | Self::Blocked { id, .. }
            | Self::Error { id, .. } => id,
        }
    }

    /// The reply for the model, for outcomes the library answers itself.
    pub fn reply(&self) -> Option<&str> {
        match self {
            Self::Call(_) | Self::Owned(_) => None,
            Self::ToolkitLoaded { reply, .. }
            | Self::Lookup { reply, .. }
            | Self::Blocked { reply, .. }
            | Self::Error { reply, .. } => Some(reply),
        }
    }

    /// Whether the reply reports a failure (send it as an error tool result).
    pub fn is_error(&self) -> bool {
        matches!(self, Self::Blocked { .. } | Self::Error { .. })
    }

    /// The real tool this outcome is about, as a field rather than inside the reply's
    /// text: the tool a [`Call`](Self::Call) dispatches, the owned tool an
    /// [`Owned`](Self::Owned) call names, and for an [`Error`](Self::Error) the tool its
    /// error names ([`RouteError::tool`]: refused arguments, an unusable schema, a tool no
    /// longer offered). `None` for lookups, toolkit loads, blocked calls (whose `name` is
    /// the blocked tool, namespace or toolkit; the blocklist entry itself only for a
    /// misspelt name that matched it) and errors that reached no tool.
    ///
    /// ```
    /// use chef::{Chef, ChefConfig, Routed};
    /// use chef_ir::{ToolCall, ToolDefinition};
    /// use serde_json::json;
    ///
    /// let mut chef = Chef::new(ChefConfig::default());
    /// chef.register_tools(vec![ToolDefinition::new("timezone.convert", json!({
    ///     "type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]
    /// }))])?;
    /// let routed = chef.route(&ToolCall::new("c1", "timezone.convert", json!({})));
    /// assert!(matches!(routed, Routed::Error { .. }));
    /// assert_eq!(routed.tool(), Some("timezone.convert"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn tool(&self) -> Option<&str> {
        match self {
            Self::Call(c) => Some(c.name.as_str()),
            Self::Owned(c) => Some(&c.name),
            Self::Error { error, .. } => error.tool(),
            Self::ToolkitLoaded { .. } | Self::Lookup { .. } | Self::Blocked { .. } => None,
        }
    }
}
