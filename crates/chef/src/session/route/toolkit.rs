//! `load_toolkit` through the dispatch entry point: the load itself (gated on the loader and
//! the toolkit, its blocked tools never listed), its record and announcement, and a call of
//! a toolkit's tool loaded since the list the model answered.

use chef_compress::{ResolveError, validate::ArgumentValidator};
use chef_ir::{ToolCall, ToolCallId, ToolName};
use serde_json::Value;

use super::{Gate, blocked_outcome, error};
use crate::{
    announce::Channel,
    error::RouteError,
    namespace::LOAD_TOOLKIT,
    session::{
        Chef,
        routed::{Routed, RoutedCall},
        select::TurnTools,
    },
};

impl Chef {
    /// A call, by its exact name, of a tool of a toolkit loaded since the selection the
    /// model answered (a model may load a toolkit and call one of its tools in one reply).
    pub(super) fn late_toolkit_call(
        &self,
        call: &ToolCall,
        name: &str,
        tools: &TurnTools,
        gate: Gate,
    ) -> Option<Routed> {
        let kit = self
            .tools
            .loaded_toolkits
            .iter()
            .filter(|k| !tools.key.loaded.contains(k))
            .filter_map(|k| self.tools.pruner.toolkits().iter().find(|g| &g.name == k))
            .find(|g| g.tools.iter().any(|t| t.name == name))?;
        let tool = kit.tools.iter().find(|t| t.name == name)?;
        let id = call.id.clone();
        if let Some(blocked) = self.gated(gate, &[name, &kit.name]) {
            return Some(blocked_outcome(id, &blocked));
        }
        let args = crate::arguments::parsed(&call.arguments).into_owned();
        let checked =
            ArgumentValidator::with_limits(name, &tool.input_schema, self.config.compress.limits())
                .map_err(|e| {
                    let reply = e.to_string();
                    (ResolveError::UnusableSchema(Box::new(e)), reply)
                })
                .and_then(|v| {
                    v.validate(&args).map_err(|e| {
                        let reply = e.message();
                        (ResolveError::InvalidArguments(e), reply)
                    })
                });
        Some(match checked {
            Ok(()) => Routed::Call(RoutedCall {
                id,
                name: tool.name.clone(),
                arguments: args,
                via: Some(kit.name.clone()),
            }),
            Err((e, reply)) => error(id, RouteError::Resolve(e), reply),
        })
    }

    pub(super) fn classify_toolkit_load(&self, id: ToolCallId, args: &Value, gate: Gate) -> Routed {
        if let Some(blocked) = self.gated(gate, &[LOAD_TOOLKIT]) {
            return blocked_outcome(id, &blocked);
        }
        let requested = args
            .get("toolkit_name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let kit = match self.tools.pruner.extract_toolkit(requested) {
            Ok(kit) => kit,
            Err(e) => {
                // A misspelt blocked toolkit is refused as blocked, and never listed.
                if let Some(blocked) = self.gated_lookalike(gate, requested) {
                    return blocked_outcome(id, &blocked);
                }
                let e = self.without_blocked_names(e);
                let reply = e.to_string();
                return error(id, RouteError::Namespace(e), reply);
            }
        };
        if let Some(blocked) = self.gated(gate, &[kit.name.as_str()]) {
            return blocked_outcome(id, &blocked);
        }
        // Blocked tools are never listed as available (they stay on the wire list, which
        // blocking never edits, and calls to them are refused).
        let tools: Vec<ToolName> = kit
            .tools
            .iter()
            .filter(|t| self.blocked(&[t.name.as_str()]).is_none())
            .map(|t| t.name.clone())
            .collect();
        let held_back = kit.tools.len() - tools.len();
        let listed = toolkit_tool_list(&tools, held_back);
        let already = self.tools.loaded_toolkits.iter().any(|k| k == &kit.name);
        let reply = if already {
            format!("Toolkit \"{}\" is already loaded. {listed}", kit.name)
        } else {
            format!(
                "Loaded toolkit \"{}\". From your next step: {listed}",
                kit.name
            )
        };
        Routed::ToolkitLoaded {
            id,
            toolkit: kit.name.clone(),
            tools,
            reply,
        }
    }

    /// Records a toolkit load that [`classify`](Self::classify) reported.
    pub(super) fn commit_toolkit(&mut self, toolkit: &str, available: &[ToolName]) {
        if self.tools.loaded_toolkits.iter().any(|k| k == toolkit) {
            return;
        }
        self.tools.loaded_toolkits.push(toolkit.to_owned());
        if self.config.announce_tool_changes {
            let held_back = self
                .tools
                .pruner
                .toolkits()
                .iter()
                .find(|k| k.name == toolkit)
                .map_or(0, |k| k.tools.len().saturating_sub(available.len()));
            self.announce_internal(
                &format!("toolkit:{toolkit}"),
                format!(
                    "Toolkit \"{toolkit}\" is loaded. {}",
                    toolkit_tool_list(available, held_back)
                ),
                Channel::Auto,
            );
        }
    }
}

/// "These tools are available: a, b." with the count of blocked ones left out.
fn toolkit_tool_list(available: &[ToolName], held_back: usize) -> String {
    let names: Vec<&str> = available.iter().map(ToolName::as_str).collect();
    let mut text = if names.is_empty() {
        "None of its tools is available now.".to_owned()
    } else {
        format!("These tools are available: {}.", names.join(", "))
    };
    if held_back > 0 {
        text.push_str(&format!(
            " {held_back} more of its tools {} blocked for now.",
            if held_back == 1 { "is" } else { "are" }
        ));
    }
    text
}
