//! The dispatch entry point: every call the model makes goes through [`Chef::route`].
//!
//! ```text
//! raw call ─▶ trim name ─▶ owned tool?  ───────────────────────────▶ gate ─▶ Owned
//!                        └▶ compressed resolver (codes, q, case, separators, bags)
//!                             ├─ Meta ─────────────────────────────────────▶ Lookup
//!                             ├─ Error ─▶ (a blocked lookalike?) ─▶ Blocked | Error
//!                             └─ Call(real name)
//!                                  ├─ load_toolkit ─▶ gate(loader, kit) ─▶ ToolkitLoaded
//!                                  ├─ namespace ─▶ member ─▶ gate(group, member)
//!                                  │                 ─▶ validate(member schema) ─▶ Call
//!                                  └─ tool ─▶ gate(name, its toolkit) ──────────▶ Call
//! ```
//!
//! The gate always runs on the resolved real name (and the group it was reached through),
//! so no spelling, code, namespace or toolkit route reaches a blocked tool.

use chef_compress::Resolution;
use chef_ir::{ToolCall, ToolCallId, ToolName};
use serde_json::Value;

use super::{Chef, select::TurnTools};
use crate::{
    announce::Channel,
    error::RouteError,
    events::ChefEvent,
    gate::{self, MALFORMED_CALL_REASON},
    namespace::{LOAD_TOOLKIT, NamespaceError},
    owned,
};

/// How a model's call was classified. Only [`Routed::Call`] is dispatched to the agent's
/// own tools; every other outcome carries the reply to hand back to the model.
#[derive(Debug, Clone, PartialEq)]
pub enum Routed {
    /// A validated call of a real, allowed tool: dispatch it.
    Call(RoutedCall),
    /// A library-owned tool: run [`Chef::handle_tool`] for the reply.
    Owned(OwnedCall),
    /// A toolkit was loaded; its tools are offered from the next compile on.
    ToolkitLoaded {
        /// The call's id.
        id: ToolCallId,
        /// The toolkit's name.
        toolkit: String,
        /// The tools it adds.
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
}

impl Chef {
    /// Classifies a model's call: the single dispatch entry point.
    ///
    /// The call is resolved against the tools of the latest compile (a code, a real name in
    /// any case or separator style, a namespace action, a toolkit tool, an owned tool), then
    /// gated on the real name it reaches, then validated against the original schema.
    /// Loading a toolkit records it in the session (it appears from the next compile on,
    /// and rides snapshots).
    pub fn route(&mut self, call: &ToolCall) -> Routed {
        self.route_with(call, true)
    }

    /// [`Chef::route`]; with `commit` false a toolkit load is classified but not recorded.
    pub(crate) fn route_with(&mut self, call: &ToolCall, commit: bool) -> Routed {
        let id = call.id.clone();
        let name = call.name.as_str().trim();
        if name.is_empty() {
            return error(id, RouteError::Malformed, MALFORMED_CALL_REASON.to_owned());
        }
        if owned::is_owned_name(name) {
            if let Some(blocked) = self.blocked(&[name]) {
                return blocked_outcome(self, id, &blocked);
            }
            return Routed::Owned(OwnedCall {
                id,
                name: name.to_owned(),
                arguments: call.arguments.clone(),
            });
        }

        let tools = match self.turn_tools() {
            Ok(tools) => tools,
            Err(e) => {
                let reply = format!("The tool list could not be prepared: {e}");
                return error(id, RouteError::Unavailable(e.to_string()), reply);
            }
        };

        let resolution = resolve(&tools, name, &call.arguments);
        let (real, args) = match resolution {
            Resolution::Call { name, args } => (ToolName::from(name), args),
            Resolution::Meta { result, .. } => return Routed::Lookup { id, reply: result },
            Resolution::Error(e) => {
                // A misspelt name of a blocked tool is reported as blocked: clearer for the
                // model, and it is never taught the exact spelling of a blocked tool.
                if let Some(blocked) = mentioned_names(name, &call.arguments)
                    .into_iter()
                    .find_map(|n| self.blocked_lookalike(&n))
                {
                    return blocked_outcome(self, id, &blocked);
                }
                let reply = e.message();
                return error(id, RouteError::Resolve(reply.clone()), reply);
            }
        };

        if real == LOAD_TOOLKIT {
            return self.load_toolkit_call(id, &args, commit);
        }

        if self.pruner.is_namespace_call(real.as_str()) {
            let member = match self.pruner.resolve_namespace(real.as_str(), &args) {
                Ok(member) => member,
                Err(e) => {
                    if let NamespaceError::UnknownAction { action, .. } = &e
                        && let Some(blocked) = self.blocked_lookalike(action)
                    {
                        return blocked_outcome(self, id, &blocked);
                    }
                    let reply = e.to_string();
                    return error(id, RouteError::Namespace(e), reply);
                }
            };
            if let Some(blocked) = self.blocked(&[member.tool_name.as_str(), &member.group]) {
                return blocked_outcome(self, id, &blocked);
            }
            if let Some(validator) = tools.members.get(&member.tool_name)
                && let Err(e) = validator.validate(&member.args)
            {
                let reply = e.message();
                return error(id, RouteError::Resolve(reply.clone()), reply);
            }
            return Routed::Call(RoutedCall {
                id,
                name: member.tool_name,
                arguments: member.args,
                via: Some(member.group),
            });
        }

        let via = tools.toolkit_of.get(&real).cloned();
        let mut names = vec![real.as_str()];
        if let Some(kit) = &via {
            names.push(kit);
        }
        if let Some(blocked) = self.blocked(&names) {
            return blocked_outcome(self, id, &blocked);
        }
        Routed::Call(RoutedCall {
            id,
            name: real,
            arguments: args,
            via,
        })
    }

    fn load_toolkit_call(&mut self, id: ToolCallId, args: &Value, commit: bool) -> Routed {
        if let Some(blocked) = self.blocked(&[LOAD_TOOLKIT]) {
            return blocked_outcome(self, id, &blocked);
        }
        let requested = args
            .get("toolkit_name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let kit = match self.pruner.extract_toolkit(&requested) {
            Ok(kit) => kit.clone(),
            Err(e) => {
                let reply = e.to_string();
                return error(id, RouteError::Namespace(e), reply);
            }
        };
        if let Some(blocked) = self.blocked(&[kit.name.as_str()]) {
            return blocked_outcome(self, id, &blocked);
        }
        let tools: Vec<ToolName> = kit.tools.iter().map(|t| t.name.clone()).collect();
        let names: Vec<&str> = tools.iter().map(ToolName::as_str).collect();
        let already = self.loaded_toolkits.iter().any(|k| k == &kit.name);
        if !already && commit {
            self.loaded_toolkits.push(kit.name.clone());
            if self.config.announce_tool_changes {
                self.announce_internal(
                    &format!("toolkit:{}", kit.name),
                    format!(
                        "Toolkit \"{}\" is loaded; these tools are now available: {}.",
                        kit.name,
                        names.join(", ")
                    ),
                    Channel::Auto,
                );
            }
        }
        let reply = if already {
            format!(
                "Toolkit \"{}\" is already loaded. Its tools: {}.",
                kit.name,
                names.join(", ")
            )
        } else {
            format!(
                "Loaded toolkit \"{}\". These tools are available from your next step: {}.",
                kit.name,
                names.join(", ")
            )
        };
        Routed::ToolkitLoaded {
            id,
            toolkit: kit.name,
            tools,
            reply,
        }
    }

    /// The first of `names` on the blocklist.
    fn blocked(&self, names: &[&str]) -> Option<String> {
        self.pruner
            .blocklist()
            .first_blocked(names.iter().copied())
            .map(str::to_owned)
    }

    /// A blocklist entry that `name` spells with other case or separators.
    fn blocked_lookalike(&self, name: &str) -> Option<String> {
        let key = lookalike_key(name);
        if key.is_empty() {
            return None;
        }
        self.pruner
            .blocklist()
            .entries()
            .iter()
            .find(|entry| lookalike_key(entry) == key)
            .cloned()
    }
}

fn resolve(tools: &TurnTools, name: &str, args: &Value) -> Resolution {
    if let Some(loaded) = &tools.loaded
        && tools.toolkit_of.contains_key(name)
    {
        return loaded.resolve(name, args);
    }
    tools.stable.resolve(name, args)
}

/// The names a failed call mentions: the tool name, and the fields through which a call
/// names another tool (`f` of the dispatcher, `action` of a namespace, `op` of a level-2
/// tool, `toolkit_name`), one level of nesting deep.
fn mentioned_names(name: &str, arguments: &Value) -> Vec<String> {
    const FIELDS: [&str; 4] = ["f", "action", "op", "toolkit_name"];
    let mut names = vec![name.to_owned()];
    let parsed;
    let arguments = match arguments {
        Value::String(text) => {
            parsed = serde_json::from_str::<Value>(text).unwrap_or(Value::Null);
            &parsed
        }
        other => other,
    };
    let nested = ["a", "args"]
        .iter()
        .filter_map(|k| arguments.get(k))
        .collect::<Vec<_>>();
    for bag in std::iter::once(arguments).chain(nested) {
        for field in FIELDS {
            if let Some(Value::String(s)) = bag.get(field) {
                names.push(s.clone());
            }
        }
    }
    names
}

/// Letters and digits only, lower-cased: `Delete-File`, ` delete_file ` and `deleteFile`
/// all give `deletefile`.
fn lookalike_key(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

fn error(id: ToolCallId, error: RouteError, reply: String) -> Routed {
    Routed::Error { id, error, reply }
}

fn blocked_outcome(chef: &Chef, id: ToolCallId, name: &str) -> Routed {
    chef.emit(&ChefEvent::ToolBlocked {
        name: name.to_owned(),
    });
    Routed::Blocked {
        id,
        name: name.to_owned(),
        reply: gate::blocked_reason(name),
    }
}
