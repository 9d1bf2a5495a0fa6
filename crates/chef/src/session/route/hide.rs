//! What the gate never teaches: the blocklist asked for the names a call reaches, a
//! spelling of a blocked name in another case or with other separators, and the blocked
//! names left out of the choices an error lists (did-you-mean, a namespace's actions, the
//! toolkits of `load_toolkit`).

use chef_compress::{ResolveError, validate::ArgumentProblem};
use chef_ir::ToolDefinition;
use serde_json::{Map, Value};

use super::Gate;
use crate::{
    namespace::{LOAD_TOOLKIT, NamespaceError},
    session::{Chef, select::TurnTools},
};

impl Chef {
    /// The first of `names` on the blocklist (matched ignoring case and separators).
    pub(crate) fn blocked(&self, names: &[&str]) -> Option<String> {
        self.tools
            .pruner
            .blocklist()
            .first_blocked(names.iter().copied())
            .map(str::to_owned)
    }

    /// The blocklist entry that `name` spells, with any case or separators.
    fn blocked_lookalike(&self, name: &str) -> Option<String> {
        self.tools
            .pruner
            .blocklist()
            .entry_for(name)
            .map(str::to_owned)
    }

    /// The registered tool (flat, namespace or toolkit member, or owned) that `written`
    /// names with other case or separators, else `written` itself: how a refusal of a
    /// blocked lookalike names the tool, never by the blocklist's own spelling.
    pub(crate) fn real_name_of(&self, written: &str) -> String {
        let key = crate::gate::name_key(written);
        let pruner = &self.tools.pruner;
        let members = pruner
            .namespaces()
            .iter()
            .chain(pruner.toolkits())
            .flat_map(|g| g.tools.iter().map(|t| t.name.as_str()));
        pruner
            .all_tools()
            .iter()
            .map(|t| t.name.as_str())
            .chain(members)
            .chain(crate::owned::OWNED_NAMES)
            .find(|n| crate::gate::name_key(n) == key)
            .unwrap_or(written)
            .to_owned()
    }

    /// [`blocked`](Self::blocked) when the gate is on; nothing when it is off.
    pub(super) fn gated(&self, gate: Gate, names: &[&str]) -> Option<String> {
        match gate {
            Gate::On => self.blocked(names),
            Gate::Off => None,
        }
    }

    /// [`blocked_lookalike`](Self::blocked_lookalike) when the gate is on.
    pub(super) fn gated_lookalike(&self, gate: Gate, name: &str) -> Option<String> {
        match gate {
            Gate::On => self.blocked_lookalike(name),
            Gate::Off => None,
        }
    }

    /// Whether did-you-mean must not name `tool` (a real name of the compressed set): it
    /// is blocked, or the toolkit it was loaded from is.
    pub(super) fn hidden_tool(&self, tool: &str, tools: &TurnTools) -> bool {
        let kit = tools.toolkit_of.get(tool).map(String::as_str);
        let names: Vec<&str> = std::iter::once(tool).chain(kit).collect();
        self.blocked(&names).is_some()
    }

    /// `e` without blocked names among the choices it lists: the actions of a namespace
    /// tool's `action` enum and the toolkits of `load_toolkit`'s `toolkit_name` enum, as
    /// the argument validator lists them. The model is never taught a blocked tool's
    /// spelling by an error, as it is never offered one in a toolkit's list.
    pub(super) fn without_blocked_choices(
        &self,
        e: ResolveError,
        tools: &TurnTools,
    ) -> ResolveError {
        let ResolveError::InvalidArguments(mut arg) = e else {
            return e;
        };
        let Some(field) = choice_field(arg.tool.as_str(), tools) else {
            return ResolveError::InvalidArguments(arg);
        };
        for problem in arg.problems_mut() {
            if let ArgumentProblem::InvalidEnum {
                path,
                allowed,
                exact,
                ..
            } = problem
                && path.as_str() == field
            {
                allowed.retain(|v| v.as_str().is_none_or(|n| self.blocked(&[n]).is_none()));
                if exact
                    .as_deref()
                    .is_some_and(|n| self.blocked(&[n]).is_some())
                {
                    *exact = None;
                }
            }
        }
        ResolveError::InvalidArguments(arg)
    }

    /// The wire tools of a constrained reply's format (`Chef::response_format`) without a
    /// branch for a blocked tool (or a tool of a blocked toolkit), without blocked names in
    /// a namespace's `action` enum and `load_toolkit`'s `toolkit_name` enum, and at level 2
    /// without a blocked tool's `op` in its alias's enum; a branch left with no choice goes.
    pub(in crate::session) fn without_blocked_branches(
        &self,
        tools: &mut Vec<ToolDefinition>,
        turn: &TurnTools,
    ) {
        if self.tools.pruner.blocked_tools().is_empty() {
            return;
        }
        let names = &self.routing.names;
        tools.retain_mut(|tool| {
            let real = names.to_real(tool.name.as_str());
            if self.hidden_tool(real, turn) {
                return false;
            }
            let Some(field) = choice_field(real, turn) else {
                return true;
            };
            let pointer = format!("/properties/{field}/enum");
            let Some(Value::Array(choices)) = tool.input_schema.pointer_mut(&pointer) else {
                return true;
            };
            let offered = choices.len();
            choices.retain(|c| c.as_str().is_none_or(|c| self.blocked(&[c]).is_none()));
            // Emptied by the blocklist: no branch (an empty enum registered so stays).
            !(choices.is_empty() && offered > 0)
        });
        if self.config.compress.level() == chef_compress::Level::Two {
            self.without_blocked_ops(tools, turn);
        }
    }

    /// At level 2, where a call names a namespace alias and an `op`: each blocked tool's
    /// op leaves its alias's `op` enum, and an alias the blocklist left with no op loses
    /// its branch.
    fn without_blocked_ops(&self, tools: &mut Vec<ToolDefinition>, turn: &TurnTools) {
        let mut emptied = Vec::new();
        let members = turn.toolkits.iter().flat_map(|k| k.tools.iter());
        let blocked = turn
            .registry
            .iter()
            .chain(members)
            .map(|t| t.name.as_str())
            .filter(|name| self.hidden_tool(name, turn));
        for name in blocked {
            let sets = std::iter::once(&turn.stable).chain(turn.loaded.as_ref());
            for encoded in
                sets.filter_map(|set| set.encode_call(name, Value::Object(Map::new())).ok())
            {
                let Some(op) = encoded.args.get("op").and_then(Value::as_str) else {
                    continue;
                };
                let wire = tools.iter_mut().find(|t| t.name == encoded.name.as_str());
                if let Some(Value::Array(ops)) =
                    wire.and_then(|t| t.input_schema.pointer_mut("/properties/op/enum"))
                {
                    ops.retain(|o| o.as_str() != Some(op));
                    if ops.is_empty() {
                        emptied.push(encoded.name);
                    }
                }
            }
        }
        tools.retain(|t| !emptied.iter().any(|e| t.name == e.as_str()));
    }

    /// `e` without blocked names in the actions or toolkits it lists as available.
    pub(super) fn without_blocked_names(&self, e: NamespaceError) -> NamespaceError {
        match e {
            NamespaceError::UnknownAction {
                group,
                action,
                mut available,
            } => {
                available.retain(|t| self.blocked(&[t.as_str()]).is_none());
                NamespaceError::UnknownAction {
                    group,
                    action,
                    available,
                }
            }
            NamespaceError::UnknownToolkit {
                name,
                mut available,
            } => {
                available.retain(|k| self.blocked(&[k.as_str()]).is_none());
                NamespaceError::UnknownToolkit { name, available }
            }
            other => other,
        }
    }
}

/// The names a failed call mentions: the tool name, and the fields through which a call
/// names another tool (`f` of the dispatcher, `action` of a namespace, `op` of a level-2
/// tool, `toolkit_name`), one level of nesting deep.
pub(super) fn mentioned_names(name: &str, arguments: &Value) -> Vec<String> {
    const FIELDS: [&str; 4] = ["f", "action", "op", "toolkit_name"];
    let mut names = vec![name.to_owned()];
    let arguments = crate::arguments::parsed(arguments);
    let arguments = arguments.as_ref();
    // The dispatcher's lookup names a tool in `c` (`q(c="gdrive_upload_file")`): a blocked
    // tool asked for there, in any spelling, is refused as blocked, as through `t(f=…)`.
    if name == "q"
        && let Some(Value::String(c)) = arguments.get("c")
    {
        names.push(c.clone());
    }
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

/// The argument of `tool` (a real name) whose enum lists tools or toolkits by name:
/// `load_toolkit`'s `toolkit_name`, a namespace tool's `action`; `None` for any other tool.
fn choice_field(tool: &str, turn: &TurnTools) -> Option<&'static str> {
    if tool == LOAD_TOOLKIT {
        Some("toolkit_name")
    } else if turn.namespaces.iter().any(|g| g.name == tool) {
        Some("action")
    } else {
        None
    }
}
