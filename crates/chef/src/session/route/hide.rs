//! What the gate never teaches: the blocklist asked for the names a call reaches, a
//! spelling of a blocked name in another case or with other separators, and the blocked
//! names left out of the choices an error lists (did-you-mean, a namespace's actions, the
//! toolkits of `load_toolkit`).

use chef_compress::{ResolveError, validate::ArgumentProblem};
use serde_json::Value;

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
    pub(super) fn real_name_of(&self, written: &str) -> String {
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
    pub(in crate::session) fn hidden_tool(&self, tool: &str, tools: &TurnTools) -> bool {
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
        let field = if arg.tool == LOAD_TOOLKIT {
            "toolkit_name"
        } else if tools.namespaces.iter().any(|g| g.name == arg.tool.as_str()) {
            "action"
        } else {
            return ResolveError::InvalidArguments(arg);
        };
        if let ArgumentProblem::InvalidEnum {
            path,
            allowed,
            exact,
            ..
        } = &mut arg.problem
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
        ResolveError::InvalidArguments(arg)
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
