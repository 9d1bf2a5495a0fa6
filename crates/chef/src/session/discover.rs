//! Find, then call by real name: the tools a session offers beyond its policy's own.
//!
//! Under [`PrunePolicy::Ranked`](crate::PrunePolicy::Ranked) and
//! [`PrunePolicy::Discover`](crate::PrunePolicy::Discover) the list follows the task, and two
//! kinds of tool join it besides the ranked ones:
//!
//! * **called** — a tool the history calls, with an answer that is not an error, stays
//!   offered while that call is in the history (the model can repeat or continue what it
//!   did, and a re-ranking at a new request never orphans a call);
//! * **found** — under `Discover`, the tools a `find_tools` call returned, for the request
//!   it was made for.
//!
//! Both go in the set sent after the stable and owned tools, in the order they joined
//! (the order of the latest compile's, which the model saw, then the new ones): while the
//! request stays the same that set only grows at its end, so no earlier byte of the
//! request moves and the provider's cached prefix holds. Nothing here bypasses the gate:
//! a blocked tool, or one off the allowlist or the active skill's, is never found, kept or
//! ranked (select.rs drops blocked tools from a discovery list),
//! and every call of a found tool is routed, gated and validated like any other.

use chef_compress::validate::ArgumentValidator;
use chef_ir::{Content, Role, ToolCall, ToolCallId, ToolDefinition, ToolName};
use serde_json::Value;

use super::{Chef, routed::Routed};
use crate::{
    error::RouteError,
    owned::{
        FIND_TOOLS, FIND_TOOLS_DEFAULT_LIMIT, FIND_TOOLS_MAX_LIMIT, find_tools_args,
        find_tools_tool, found_tool_line_as,
    },
    prune::{FoundTool, KeepReason},
};

/// What a `find_tools` call found: the reply and the tools to offer.
pub(crate) struct Finding {
    pub(crate) routed: Routed,
    pub(crate) found: Vec<FoundTool>,
    /// The search ran and matched no tool at all.
    pub(crate) in_vain: bool,
}

impl Chef {
    /// The tools offered beyond the policy's own for `task`, in the order they joined: see
    /// the module docs. Empty unless the policy ranks.
    pub(crate) fn extra_tools(&self, task: &str) -> Vec<(ToolDefinition, KeepReason)> {
        let policy = &self.config.prune;
        if !policy.ranks() {
            return Vec::new();
        }
        let registry = self.tools.pruner.all_tools();
        let allowed = |name: &str| self.offerable(name, true);
        let mut fresh: Vec<(ToolDefinition, KeepReason)> = Vec::new();
        let mut push = |name: &str, reason: KeepReason| {
            if fresh.iter().any(|(t, _)| t.name == name) || !allowed(name) {
                return;
            }
            if let Some(tool) = registry.iter().find(|t| t.name == name) {
                fresh.push((tool.clone(), reason));
            }
        };
        if self.discovering() {
            for found in self.tools.discovery.found.iter().filter(|f| f.task == task) {
                push(
                    found.name.as_str(),
                    KeepReason::Found {
                        query: found.query.clone(),
                    },
                );
            }
        }
        for name in self.answered_calls() {
            push(&name, KeepReason::Called);
        }
        // The order the latest compile sent them in first, then the new ones.
        let mut ordered = Vec::with_capacity(fresh.len());
        // (A session resumed from a snapshot has compiled nothing yet: the order saved.)
        let shown: Vec<&ToolName> = match self.routing.latest.as_ref() {
            Some(latest) => latest.extra.iter().map(|(name, _)| name).collect(),
            None => self.tools.discovery.extra_order.iter().collect(),
        };
        for name in shown {
            if let Some(at) = fresh.iter().position(|(t, _)| &t.name == name) {
                ordered.push(fresh.remove(at));
            }
        }
        ordered.extend(fresh);
        ordered
    }

    /// Real names of the tools the history calls with an answer that is not an error, in
    /// the order first called.
    fn answered_calls(&self) -> Vec<String> {
        let history: &[chef_ir::Message] = &self.conversation.history;
        let mut failed: std::collections::BTreeSet<&ToolCallId> = Default::default();
        let mut answered: std::collections::BTreeSet<&ToolCallId> = Default::default();
        for message in history.iter().filter(|m| m.role != Role::Assistant) {
            for result in message.tool_results_iter() {
                if result.is_error {
                    failed.insert(&result.tool_call_id);
                } else {
                    answered.insert(&result.tool_call_id);
                }
            }
        }
        let mut names: Vec<String> = Vec::new();
        for message in history.iter().filter(|m| m.role == Role::Assistant) {
            for content in &message.content {
                let Content::ToolCall(call) = content else {
                    continue;
                };
                if failed.contains(&call.id) || !answered.contains(&call.id) {
                    continue;
                }
                let name = self.routing.names.to_real(call.name.as_str().trim());
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_owned());
                }
            }
        }
        names
    }

    /// Whether `name` may be offered beyond the policy's own tools: not blocked (when
    /// `gated`), on the allowlist and the active skill's list when they are set.
    fn offerable(&self, name: &str, gated: bool) -> bool {
        let listed = |list: Option<&[String]>| {
            list.is_none_or(|l| l.iter().any(|n| n.eq_ignore_ascii_case(name)))
        };
        (!gated || self.blocked(&[name]).is_none())
            && listed(self.tools.allowlist.as_deref())
            && listed(self.skill_bound())
    }

    /// Whether the session offers `find_tools` now: the policy discovers and the catalogue
    /// less its blocked tools (never offered under discovery) is larger than what it shows.
    pub(crate) fn discovering(&self) -> bool {
        self.config.prune.discovers_in(&self.tools.pruner)
    }

    /// Whether `find_tools` calls are chef's to answer: the session discovers, and no
    /// registered tool has the name (the agent's tool is then the one ranked, offered and
    /// called like its others). A blocked `find_tools` is still chef's: a call is refused.
    fn answers_find_tools(&self) -> bool {
        self.discovering() && !self.registers(FIND_TOOLS)
    }

    /// Whether the session offers chef's `find_tools` now (on the wire, with the discovery
    /// note): it answers its calls, and the blocklist does not name it.
    pub(crate) fn offers_find_tools(&self) -> bool {
        self.answers_find_tools() && !self.tools.pruner.blocklist().blocks(FIND_TOOLS)
    }

    /// Whether `call` is a `find_tools` call this session answers (or, when blocked,
    /// refuses).
    pub(crate) fn is_find_call(&self, call: &ToolCall) -> bool {
        // The name first: every routed call asks, and the offer scans the registry.
        call.name.as_str().trim() == FIND_TOOLS && self.answers_find_tools()
    }

    /// Answers a `find_tools` call: the best-ranked tools for its query that the gate, the
    /// allowlist and the active skill allow, or a plain "nothing fits" when the index
    /// abstains. `gated`: whether the gate applies (off only for chef's own look at a
    /// call).
    pub(crate) fn find(&self, call: &ToolCall, gated: bool) -> Finding {
        let id = call.id.clone();
        let nothing = |routed| Finding {
            routed,
            found: Vec::new(),
            in_vain: false,
        };
        if gated && let Some(blocked) = self.blocked(&[FIND_TOOLS]) {
            return nothing(Routed::Blocked {
                id,
                reply: crate::gate::blocked_reason(&blocked),
                name: blocked,
            });
        }
        let args = match &call.arguments {
            Value::String(text) => match serde_json::from_str(text) {
                Ok(args) => args,
                // Said as it is: "must be an object; received null" would blame a value
                // the model never wrote.
                Err(_) => {
                    return nothing(Routed::Lookup {
                        id,
                        reply: "find_tools' arguments were not JSON: call it with a JSON \
                                object, {\"query\": \"a few words saying what the tool should do\"}."
                            .to_owned(),
                    });
                }
            },
            other => other.clone(),
        };
        // A blank query is said as such (the validator would call it missing).
        if args
            .get("query")
            .and_then(Value::as_str)
            .is_some_and(|q| q.trim().is_empty())
            && let Some(reply) = crate::owned::find_tools_query_error("")
        {
            return nothing(Routed::Lookup { id, reply });
        }
        let tool = find_tools_tool();
        let checked = ArgumentValidator::new(FIND_TOOLS, &tool.input_schema)
            .map_err(|e| chef_compress::ResolveError::UnusableSchema(Box::new(e)))
            .and_then(|v| {
                v.validate(&args)
                    .map_err(chef_compress::ResolveError::InvalidArguments)
            });
        if let Err(e) = checked {
            let reply = e.message();
            return nothing(Routed::Error {
                id,
                error: RouteError::Resolve(e),
                reply,
            });
        }
        let (query, limit) = find_tools_args(&args, FIND_TOOLS_DEFAULT_LIMIT, FIND_TOOLS_MAX_LIMIT);
        if let Some(reply) = crate::owned::find_tools_query_error(&query) {
            return nothing(Routed::Lookup { id, reply });
        }
        // A search for a blocked tool by its name (in any spelling) is refused as that
        // tool: the tools a search for its words would bring back are ones the model did
        // not ask for (as a call of a blocked tool's near miss is not searched for).
        let written = query.trim();
        if gated
            && !written.contains(char::is_whitespace)
            && self.tools.pruner.blocklist().entry_for(written).is_some()
        {
            let blocked = self.real_name_of(written);
            return nothing(Routed::Blocked {
                id,
                reply: crate::gate::blocked_reason(&blocked),
                name: blocked,
            });
        }
        let ranked = self.search_offerable(&query, limit, gated);
        let task = self.task();
        // Offered: in the list the model answered, or found for this request since.
        let offered = self.routing_tools().ok();
        let is_offered = |name: &ToolName| {
            offered.as_ref().is_some_and(|t| {
                t.kept.iter().any(|(n, _)| n == name) || t.extra.iter().any(|(n, _)| n == name)
            }) || self
                .tools
                .discovery
                .found
                .iter()
                .any(|f| f.task == task && &f.name == name)
        };
        let mut lines = Vec::new();
        let mut found = Vec::new();
        let names = self.wire_names_for(ranked.iter().map(|(tool, _)| *tool));
        for ((tool, _), name) in ranked.iter().zip(&names) {
            let mut line = found_tool_line_as(name, tool);
            if is_offered(&tool.name) {
                line.push_str(" (already in your tools)");
            } else {
                found.push(FoundTool {
                    name: tool.name.clone(),
                    query: query.clone(),
                    task: task.clone(),
                });
            }
            lines.push(line);
        }
        let in_vain = lines.is_empty();
        // Quoted as a name is: control and invisible characters escaped, cut at 200.
        let shown = chef_compress::similarity::shown_name(&query);
        let reply = if in_vain {
            format!(
                "No tool fits \"{shown}\": none of your tools can do that. Use a tool you \
                 already have if one fits the request; otherwise answer the user in text, \
                 without a tool."
            )
        } else {
            format!(
                "Tools for \"{shown}\", best first; from your next step call them by name, \
                 with the arguments their schemas give:\n{}",
                lines.join("\n")
            )
        };
        Finding {
            routed: Routed::Lookup { id, reply },
            found,
            in_vain,
        }
    }

    /// The names `tools` (a search's answer) go by on the wire of the latest compile's
    /// target, which is how the model will see them listed
    /// ([`wire_name_for`](Self::wire_name_for)).
    fn wire_names_for<'t>(&self, tools: impl Iterator<Item = &'t ToolDefinition>) -> Vec<String> {
        let mut registry_table = None;
        tools
            .map(|tool| self.wire_name_for(tool.name.as_str(), &mut registry_table))
            .collect()
    }

    /// The best-ranked tools for `query` that may be offered (see [`offerable`](Self::offerable);
    /// `gated`: whether the blocklist applies), best first, up to `limit`, each with its
    /// score; empty when the index abstains, also when only tools that may not be offered
    /// fit ([`Pruner::rank_search_among`](crate::prune::Pruner::rank_search_among)). Ranked
    /// deep enough that the tools the gate or the lists remove do not cost places. A tool
    /// scoring under [`FOUND_SCORE_FLOOR`](crate::owned::FOUND_SCORE_FLOOR) of the best one's score is left out: found
    /// tools join the model's list, and an unrelated tail would join with them.
    fn search_offerable(
        &self,
        query: &str,
        limit: usize,
        gated: bool,
    ) -> Vec<(&ToolDefinition, f64)> {
        let registry = self.tools.pruner.all_tools();
        let depth = (limit.saturating_mul(4))
            .max(limit.saturating_add(20))
            .min(registry.len().max(1));
        let offerable = |name: &str| self.offerable(name, gated);
        let (ranked, best) = self
            .tools
            .pruner
            .rank_search_among_with_best(query, depth, &offerable);
        let mut found: Vec<(&ToolDefinition, f64)> = ranked
            .tools
            .iter()
            .zip(&ranked.reasons)
            .filter_map(|(tool, reason)| {
                let score = reason.score()?;
                // The registry's own definition, so the reference outlives `ranked`.
                registry
                    .iter()
                    .find(|t| t.name == tool.name)
                    .map(|t| (t, score))
            })
            .take(limit)
            .collect();
        // Near the best of the whole ranking: a blocked best match does not let in what it
        // outranked by far.
        found.retain(|(_, score)| *score >= best * crate::owned::FOUND_SCORE_FLOOR);
        found
    }

    /// Under discovery, a call of a name the list the model answered does not hold (a tool
    /// the ranking left out, or a name the model made up) is answered with a search for
    /// the name's words, as if the model had called `find_tools` with them: the tools
    /// found are listed and callable by name from its next step — a search that brings
    /// back what the ranking missed, in the same round. The search goes through the same
    /// gate as `find_tools` (a blocked tool, or one off the allowlist or the active skill's,
    /// is never found). When it finds nothing, or `find_tools` is not offered (blocked, or
    /// not discovering), `routed` is left as it is, with how to search added when
    /// `find_tools` is offered.
    /// `routed` is rewritten here; what the search found is returned, for
    /// [`route`](Chef::route) to record ([`check_tool_call`](Chef::check_tool_call) records
    /// nothing).
    pub(crate) fn search_for_unknown(
        &self,
        call: &ToolCall,
        tools: &super::select::TurnTools,
        routed: &mut Routed,
    ) -> Vec<FoundTool> {
        let Routed::Error {
            error: RouteError::Resolve(chef_compress::ResolveError::UnknownTool { name, .. }),
            reply,
            ..
        } = routed
        else {
            return Vec::new();
        };
        if !self.offers_find_tools() {
            return Vec::new();
        }
        // A near miss of a blocked tool's name is not searched for: the model meant that
        // tool, and what a search for its words finds are tools it did not ask for (a
        // misspelt `office_push` would bring back `office_crash`). It keeps the plain error.
        if self.nearest_is_blocked(name) {
            return Vec::new();
        }
        // A slip of a listed tool's name (a typo, another case) is told the name it meant
        // (`mend_did_you_mean`), not handed a search for tools it did not ask for. Only a
        // slip: a name that merely shares a word with a listed one (`get_order_details`
        // beside `get_fifo_report`, a real tool the ranking left out) is searched for.
        if self
            .listed_near(tools, name)
            .is_some_and(|near| chef_compress::similarity::is_slip_of(name, near))
        {
            return Vec::new();
        }
        // The name's words, as many as a query holds (a made-up name may be a page long).
        let mut words: Vec<&str> = Vec::new();
        let mut chars = 0;
        for word in name_words(name) {
            chars += word.chars().count() + usize::from(!words.is_empty());
            if chars > crate::owned::FIND_TOOLS_MAX_QUERY_CHARS {
                break;
            }
            words.push(word);
        }
        const HOW_TO_SEARCH: &str =
            " To look for a tool, call find_tools with a few words saying what it should do.";
        if words.is_empty() {
            reply.push_str(HOW_TO_SEARCH);
            return Vec::new();
        }
        let search = ToolCall::new(
            call.id.clone(),
            FIND_TOOLS,
            serde_json::json!({ "query": words.join(" ") }),
        );
        let finding = self.find(&search, true);
        match finding.routed {
            Routed::Lookup { id, reply: found } if !finding.in_vain => {
                let name = name.clone();
                *routed = Routed::Lookup {
                    id,
                    reply: format!("{} {found}", not_run(&name)),
                };
                finding.found
            }
            _ => {
                reply.push_str(HOW_TO_SEARCH);
                Vec::new()
            }
        }
    }

    /// Whether a blocked registered tool's name (a flat tool, a namespace or toolkit
    /// member) is at least as near `name` as every other registered tool's, and near
    /// enough for a did-you-mean ([`Nearest::Withheld`](chef_compress::similarity::Nearest)).
    pub(crate) fn nearest_is_blocked(&self, name: &str) -> bool {
        use chef_compress::similarity::{Nearest, SUGGESTION_FLOOR, nearest_among};
        let pruner = &self.tools.pruner;
        // Flat tools, and the members of namespaces and toolkits.
        let names = pruner
            .all_tools()
            .iter()
            .chain(pruner.namespaces().iter().flat_map(|g| &g.tools))
            .chain(pruner.toolkits().iter().flat_map(|g| &g.tools))
            .map(|t| t.name.as_str());
        let blocked = |n: &str| self.blocked(&[n]).is_some();
        nearest_among(name, names, SUGGESTION_FLOOR, blocked) == Nearest::Withheld
    }

    /// What a snapshot saves of discovery: the finds, the search in vain, and the extra
    /// tools' order as the latest compile sent them (as restored, before any compile).
    pub(crate) fn discovery_state(&self) -> crate::prune::DiscoveryState {
        let mut state = self.tools.discovery.clone();
        if let Some(latest) = self.routing.latest.as_ref() {
            state.extra_order = latest.extra.iter().map(|(name, _)| name.clone()).collect();
        }
        state
    }

    /// Whether a search for the current request found nothing: the constrained format
    /// ([`Chef::response_format`]) then leaves `find_tools` out.
    pub(crate) fn searched_in_vain(&self) -> bool {
        self.tools
            .discovery
            .searched_in_vain
            .as_ref()
            .is_some_and(|task| *task == self.task())
    }

    /// Records what a search found (the request's earlier finds are kept; those of other
    /// requests are dropped), and whether it found nothing at all.
    pub(crate) fn commit_found(&mut self, found: Vec<FoundTool>, in_vain: bool) {
        let task = self.task();
        if in_vain {
            self.tools.discovery.searched_in_vain = Some(task.clone());
        }
        let known = &mut self.tools.discovery.found;
        known.retain(|f| f.task == task);
        for tool in found {
            if !known.iter().any(|f| f.name == tool.name) {
                known.push(tool);
            }
        }
    }
}

impl<'a> super::Tools<'a> {
    /// Searches the registered tools for `query` as `find_tools` does, best first, up to
    /// `k`, each with its score: what the catalogue index ranks (a sentence it abstains on
    /// as a whole is searched by the words of it the catalogue uses), less the tools that
    /// may not be offered — blocked ones, and ones off the allowlist or the active skill's
    /// list (ranked with the others, then dropped, so they cost no place), and the tools
    /// scoring under [`FOUND_SCORE_FLOOR`](crate::owned::FOUND_SCORE_FLOOR) of the best
    /// one's score. Empty when the index abstains: nothing fits; also when only such tools
    /// fit. [`Pruner::rank_search`](crate::prune::Pruner::rank_search) ranks the whole
    /// registry, with no gate.
    pub fn search(&self, query: &str, k: usize) -> Vec<(&'a ToolDefinition, f64)> {
        self.chef.search_offerable(query, k, true)
    }

    /// The tools found by `find_tools` for the current request, in the order found (see
    /// [`PrunePolicy::Discover`](crate::PrunePolicy::Discover)).
    pub fn found(&self) -> Vec<&'a FoundTool> {
        let task = self.chef.task();
        self.chef
            .tools
            .discovery
            .found
            .iter()
            .filter(|f| f.task == task)
            .collect()
    }
}

/// The words of a tool name: those the similarity rules read (split at camelCase humps
/// and separators), then at anything else that is not a letter or digit
/// (`sendMarkdownEmail` → `send`, `Markdown`, `Email`).
fn name_words(name: &str) -> impl Iterator<Item = &str> {
    chef_compress::similarity::word_slices(name)
        .flat_map(|word| word.split(|c: char| !c.is_alphanumeric()))
        .filter(|word| !word.is_empty())
}

/// How the answer to a call of a tool that is not offered begins ([`Chef::search_for_unknown`]):
/// nothing was run, so the loop guard does not count that call as made
/// (`repeated::repeated_calls`).
pub(crate) fn not_run(name: &str) -> String {
    format!(
        "No tool named \"{}\" is among your tools for this step; nothing was run.",
        chef_compress::similarity::shown_name(name)
    )
}
