//! Names as the model saw them. The texts `route` writes for the model — a refusal, a
//! did-you-mean, the shorter correction of a repeated call — name a tool by the name the
//! latest compile's target sent it under (`billing_invoice_create` for
//! `billing.invoice_create` under OpenAI's name rule, `cafe_send` for `café_send`), the
//! name in the list the model answered. The outcome's fields (`Routed::Blocked::name`,
//! the error's data) keep the real name, for the program.

use chef_compress::ResolveError;
use chef_ir::{ToolName, WireNames};

use super::super::{Chef, routed::Routed};
use crate::{error::RouteError, gate};

impl Chef {
    /// The name the latest compile sent the tool `real` under (itself when it was not
    /// renamed, or before any compile).
    pub(crate) fn sent_name<'a>(&'a self, real: &'a str) -> &'a str {
        self.routing.names.to_wire(real)
    }

    /// The name the tool `real` goes by on the wire of the latest compile's target, offered
    /// in it or not: an offered tool's as that compile sent it; another's (a tool a search
    /// found, a blocked tool under discovery) as the target's rule writes it, when no other
    /// registered tool would take that name, else its real name (which routes as well).
    /// Before any compile, the real name. `registry_table` caches the registry's table for
    /// a run of calls.
    pub(crate) fn wire_name_for(
        &self,
        real: &str,
        registry_table: &mut Option<WireNames>,
    ) -> String {
        let names = &self.routing.names;
        let offered = names.to_wire(real);
        let Some(rule) = self.routing.rule else {
            return real.to_owned();
        };
        if offered != real || rule.accepts(real) {
            return offered.to_owned();
        }
        let table = registry_table.get_or_insert_with(|| {
            WireNames::new(self.tools.pruner.all_tools().iter().map(|t| &t.name), rule)
        });
        let wire = table.to_wire(real);
        let alone = WireNames::new([&ToolName::from(real)], rule);
        // The name the rule writes for it alone, taken by no other tool: neither a
        // registered one (the table would have given it a suffix) nor one the latest
        // compile renamed.
        if wire == alone.to_wire(real) && names.to_real(wire) == wire {
            wire.to_owned()
        } else {
            real.to_owned()
        }
    }

    /// Rewrites the reply of a refusal that names a renamed tool by its real name to name
    /// it as the model saw it. A reply that is not the text this module knows for the
    /// outcome (a caller's own) is left as it is.
    pub(super) fn speak_wire_names(&self, routed: &mut Routed) {
        if self.routing.rule.is_none() {
            return;
        }
        match routed {
            Routed::Blocked { name, reply, .. } => {
                let wire = self.wire_name_for(name, &mut None);
                if wire != *name && *reply == gate::blocked_reason(name) {
                    *reply = gate::blocked_reason(&wire);
                }
            }
            Routed::Error {
                error: RouteError::Resolve(error),
                reply,
                ..
            } => {
                let Some(renamed) = renamed(error, &self.routing.names) else {
                    return;
                };
                if let Some(rest) = reply.strip_prefix(&error.message()) {
                    *reply = format!("{}{rest}", renamed.message());
                }
            }
            _ => {}
        }
    }
}

/// `error` with the tool it is about named as `names` sends it, when that differs from its
/// real name.
fn renamed(error: &ResolveError, names: &WireNames) -> Option<ResolveError> {
    match error {
        ResolveError::InvalidArguments(problem) => {
            let name = names.to_wire(&problem.tool);
            (name != problem.tool).then(|| {
                let mut problem = problem.clone();
                name.clone_into(&mut problem.tool);
                ResolveError::InvalidArguments(problem)
            })
        }
        ResolveError::HiddenTool { tool } => {
            let name = names.to_wire(tool);
            (name != tool).then(|| ResolveError::HiddenTool {
                tool: name.to_owned(),
            })
        }
        _ => None,
    }
}
