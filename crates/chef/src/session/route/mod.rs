//! The dispatch entry point: every call the model makes goes through [`Chef::route`].
//!
//! ```text
//! raw call ─▶ trim name ─▶ owned tool? ──────────────────────────────▶ gate ─▶ Owned
//!                        └▶ the resolver of the LATEST COMPILE's tools (codes, q, case,
//!                           separators, bags): the map the model answered
//!                             ├─ Meta ─────────────────────────────────────▶ Lookup
//!                             ├─ Error ─▶ gate(the tool it is about) ─▶ Blocked
//!                             │         ─▶ (a blocked lookalike?) ─▶ Blocked | Error
//!                             └─ Call(real name)
//!                                  ├─ load_toolkit ─▶ gate(loader, kit) ─▶ ToolkitLoaded
//!                                  ├─ namespace ─▶ member ─▶ gate(group, member)
//!                                  │     ─▶ validate(member schema) ─▶ still offered? ─▶ Call
//!                                  └─ tool ─▶ gate(name, its toolkit)
//!                                        ─▶ still offered? ────────────────────────▶ Call
//! ```
//!
//! The gate always runs on the resolved real name (and the group it was reached through),
//! before the arguments are judged, so no spelling, code, namespace or toolkit route
//! reaches a blocked tool, and no validation error teaches a blocked tool's parameters.
//! Nor does an error teach a blocked tool's spelling: did-you-mean (a near-miss code at
//! level 3, a function name at level 4, through `t` or `q`) suggests the nearest tool that
//! is not blocked, and none when a blocked tool is at least as near (the model meant it;
//! the next-nearest is a tool it did not ask for); a namespace's unknown action and an
//! unknown toolkit are answered with the choices that are not blocked; a spelling that
//! differs from a blocked name only in case or separators is refused as blocked.
//! "Still offered" matters only when the registry changed after the compile: the tool the
//! model's list named must still be registered with the same schema, else the call is
//! refused as made against a changed list.
//!
//! Here the core of the route; beside it what the gate never teaches (`hide.rs`), toolkit
//! loads (`toolkit.rs`) and the shorter correction of a repeated refused call (`repeat.rs`).

mod hide;
mod repeat;
mod spoken;
mod toolkit;

use std::sync::Arc;

use chef_compress::{Compressed, Level, Resolution, ResolveError};
use chef_ir::{ToolCall, ToolCallId, ToolDefinition, ToolName};
use serde_json::Value;

use self::hide::mentioned_names;
use super::{
    Chef,
    routed::{OwnedCall, Routed, RoutedCall},
    select::TurnTools,
};
use crate::{
    error::{ChefError, RouteError},
    events::ChefEvent,
    gate::{self, MALFORMED_CALL_REASON},
    namespace::{self, LOAD_TOOLKIT, NamespaceError, ToolGroup},
    owned,
};

/// The reply to a `final_answer` call that reached [`Chef::route`] (a loop that did not
/// pass the reply through [`Chef::recover_text_calls`], which makes it the reply's text).
const ANSWER_ROUTED: &str =
    "Your answer is noted. Reply to the user with it as plain text; call no other tool.";

impl Chef {
    /// Classifies a model's call: the single dispatch entry point.
    ///
    /// The call is resolved against the tools of the **latest compile** — the list the
    /// model answered — (a code, a real name in any case or separator style, a namespace
    /// action, a toolkit tool, an owned tool), then gated on the real name it reaches, then
    /// validated against the original schema. An owned tool's name (`create_memory`,
    /// `context`, `load_skill`, …) always routes to [`Routed::Owned`] unless blocked,
    /// offered or not: its handler answers, and says so when what it needs is missing
    /// (memory tools without memory). Block an owned tool to refuse it outright. The gate comes first on every route: a call
    /// of a blocked tool is answered [`Routed::Blocked`] whatever its arguments.
    ///
    /// A call named as that compile's target put a tool on the wire (`timezone_convert` for
    /// `timezone.convert` under OpenAI's name rule: a call recovered from text, or built
    /// from the raw reply) reaches that tool, as the real name does. A wire name that as
    /// written also reaches another tool is refused with
    /// [`ResolveError::AmbiguousWireName`](chef_compress::ResolveError::AmbiguousWireName),
    /// or answered [`Routed::Blocked`] when either tool is blocked.
    ///
    /// If the registry changed between that compile and this call (an MCP server re-listed
    /// its tools, say), the call still means what it meant in the list the model saw: it
    /// reaches the tool that list named if that tool is still registered with the same
    /// schema, and is otherwise refused with [`RouteError::ToolListChanged`] — never routed
    /// to another tool. Before any compile, the current tools are used.
    ///
    /// Loading a toolkit records it in the session (it appears from the next compile on,
    /// and rides snapshots). A tool of a toolkit loaded since the latest compile is
    /// reachable by its exact name at once.
    pub fn route(&mut self, call: &ToolCall) -> Routed {
        if self.is_find_call(call) {
            let finding = self.find(call, true);
            if let Routed::Blocked { name, .. } = &finding.routed {
                self.emit(&ChefEvent::ToolBlocked { name: name.clone() });
            }
            self.commit_found(finding.found, finding.in_vain);
            let mut routed = finding.routed;
            self.correct_repeat(call, &mut routed);
            return routed;
        }
        let tools = match self.routing.latest.clone() {
            Some(tools) => tools,
            None => match self.turn_tools() {
                Ok(tools) => tools,
                Err(e) => return unavailable(call, e),
            },
        };
        let mut routed = self.classify(call, &tools, Gate::On);
        let found = self.search_for_unknown(call, &tools, &mut routed);
        if !found.is_empty() {
            self.commit_found(found, false);
        }
        self.mend_did_you_mean(&tools, &mut routed);
        self.speak_wire_names(&mut routed);
        self.correct_repeat(call, &mut routed);
        match &routed {
            Routed::ToolkitLoaded { toolkit, tools, .. } => self.commit_toolkit(toolkit, tools),
            Routed::Blocked { name, .. } => {
                self.emit(&ChefEvent::ToolBlocked { name: name.clone() })
            }
            _ => {}
        }
        routed
    }

    /// At levels 0–1 a name the list the model answered does not hold (and that no search
    /// answered) gets the nearest name the list does hold: a typo is told the tool it
    /// meant. Never a blocked tool's name, and none when a blocked tool is at least as
    /// near ([`nearest_open`](chef_compress::similarity::nearest_open)). Levels 2–4 suggest
    /// their own way (an op enum, codes, function names).
    ///
    /// At levels 3–4 the resolver's own suggestion (a code, a name) is dropped when a
    /// blocked registered tool is the nearest: under discovery a blocked tool has left the
    /// list the resolver sees, so it cannot tell.
    fn mend_did_you_mean(&self, tools: &TurnTools, routed: &mut Routed) {
        let Routed::Error {
            error: RouteError::Resolve(error),
            reply,
            ..
        } = routed
        else {
            return;
        };
        let written = match &*error {
            ResolveError::UnknownCode {
                code,
                suggestion: Some(_),
            } => code.clone(),
            ResolveError::UnknownFunction {
                name,
                suggestion: Some(_),
            } => name.clone(),
            ResolveError::UnknownTool { .. } => {
                return self.suggest_for_unknown_tool(tools, error, reply);
            }
            _ => return,
        };
        if self.nearest_is_blocked(&written) {
            let before = error.message();
            if let ResolveError::UnknownCode { suggestion, .. }
            | ResolveError::UnknownFunction { suggestion, .. } = error
            {
                *suggestion = None;
            }
            let after = error.message();
            *reply = match reply.strip_prefix(&before) {
                Some(rest) => format!("{after}{rest}"),
                None => reply.replace(&before, &after),
            };
        }
    }

    /// [`mend_did_you_mean`](Self::mend_did_you_mean) for a name at levels 0–1.
    fn suggest_for_unknown_tool(
        &self,
        tools: &TurnTools,
        error: &ResolveError,
        reply: &mut String,
    ) {
        let ResolveError::UnknownTool { name, .. } = error else {
            return;
        };
        // Under discovery only a slip is suggested: a name that shares a word with a listed
        // one was searched for instead (`search_for_unknown`), and a search that found
        // nothing is no reason to steer the model to another tool.
        if let Some(near) = self.listed_near(tools, name).filter(|near| {
            !self.offers_find_tools() || chef_compress::similarity::is_slip_of(name, near)
        }) {
            chef_compress::similarity::add_did_you_mean(reply, name, self.sent_name(near));
        }
    }

    /// At levels 0–1, the listed name nearest `name` (a typo, another case or separators
    /// of a tool the model was shown), if near enough for a did-you-mean and no blocked
    /// tool is as near.
    pub(super) fn listed_near<'s>(&'s self, tools: &'s TurnTools, name: &str) -> Option<&'s str> {
        if !matches!(tools.stable.level(), Level::Zero | Level::One) {
            return None;
        }
        // The offered names, and the blocked registered tools (under discovery a blocked
        // tool leaves the list, but a typo of its name must still not be sent elsewhere).
        let blocked = |n: &str| self.blocked(&[n]).is_some();
        let registry = self.tools.pruner.all_tools();
        let candidates = tools
            .stable
            .tools()
            .iter()
            .chain(tools.loaded.iter().flat_map(Compressed::tools))
            .chain(&tools.owned)
            .chain(registry.iter().filter(|t| blocked(t.name.as_str())))
            .map(|t| t.name.as_str());
        chef_compress::similarity::nearest_open(
            name,
            candidates,
            chef_compress::similarity::SUGGESTION_FLOOR,
            blocked,
        )
    }

    /// Turns the tool calls an assistant reply wrote as text (a fenced JSON block, a bare
    /// JSON object, `<tool_call>` tags: see [`chef_ir::find_text_calls`]) into ordinary
    /// tool calls, in place, before the reply is pushed and its calls routed; returns how
    /// many it recovered. Opt-in: a reply not passed here is routed exactly as parsed.
    ///
    /// This is [`chef_ir::recover_text_calls`] with the session's history for the ids
    /// (`text-call-N`, unique in the conversation) and the latest compile's name table for
    /// the names: a wire name the model copied (`timezone_convert`) becomes the real name,
    /// unless it could mean two tools, when it is left as written and [`route`](Self::route)
    /// refuses it naming both. Each recovered call then goes through `route` like a native
    /// one: codes, real names, a code used as the function name, the gate, validation.
    /// A reply that already holds native calls, or no text that parses as a call, is left
    /// as it is. With [`ChefConfig::with_answer_tool`](crate::ChefConfig::with_answer_tool),
    /// a `final_answer` call (recovered or native) becomes the reply's text: the answer
    /// (one recovered from text still counts in the number returned; the reply's
    /// `tool_calls()` say what is left to route).
    ///
    /// ```
    /// use chef::{Chef, ChefConfig, Routed};
    /// use chef_compress::Level;
    /// use chef_ir::{Message, Target, ToolDefinition};
    /// use serde_json::json;
    ///
    /// let mut chef = Chef::new(ChefConfig::default().with_level(Level::Three));
    /// chef.register_tools(vec![ToolDefinition::new("get_weather", json!({
    ///     "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]
    /// }))])?;
    /// chef.push(Message::user("Weather in Oslo?"));
    /// chef.compile(Target::OpenAiChat)?;
    /// // A small model answered with text, not with native tool_calls:
    /// let mut reply = Message::assistant(
    ///     "```json\n{\"name\": \"t\", \"arguments\": {\"f\": \"a0\", \"a\": {\"city\": \"Oslo\"}}}\n```",
    /// );
    /// assert_eq!(chef.recover_text_calls(&mut reply), 1);
    /// let call = reply.tool_calls().next().cloned().unwrap();
    /// chef.push(reply);
    /// let Routed::Call(routed) = chef.route(&call) else { panic!() };
    /// assert_eq!(routed.name.as_str(), "get_weather");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn recover_text_calls(&self, reply: &mut chef_ir::Message) -> usize {
        let mut recovered =
            chef_ir::recover_text_calls(reply, &chef_ir::WireNames::default(), self.history());
        // Calls written the Python way (`find_tools(query="…")`, Llama 3.2's pythonic
        // calls): only when the whole text is such calls of tools the request offered.
        if recovered == 0
            && let Ok(tools) = self.routing_tools()
        {
            // The offered tool's parameters in the order the model read them (its wire
            // schema's `properties`), for calls that pass values by position.
            let parameters = |name: &str| {
                let tool = tools.offered(name).or_else(|| {
                    self.real_name_of_wire(name, &tools)
                        .ok()
                        .and_then(|real| tools.offered(real))
                })?;
                Some(
                    tool.input_schema
                        .get("properties")
                        .and_then(serde_json::Value::as_object)
                        .map(|props| props.keys().cloned().collect())
                        .unwrap_or_default(),
                )
            };
            recovered = chef_ir::recover_pythonic_calls(reply, &parameters, self.history());
        }
        if recovered > 0
            && !self.routing.names.is_identity()
            && let Ok(tools) = self.routing_tools()
        {
            for content in &mut reply.content {
                if let chef_ir::Content::ToolCall(call) = content
                    && let Ok(real) = self.real_name_of_wire(call.name.as_str(), &tools)
                    && real != call.name.as_str()
                {
                    call.name = ToolName::from(real);
                }
            }
        }
        self.answer_final_calls(reply);
        recovered
    }

    /// Turns each `final_answer` call in `reply` (when the session offers it and the gate
    /// lets it through) into the reply's text at its place: the answer it carries.
    fn answer_final_calls(&self, reply: &mut chef_ir::Message) {
        if !self.answering() || self.blocked(&[owned::FINAL_ANSWER]).is_some() {
            return;
        }
        for content in &mut reply.content {
            if let chef_ir::Content::ToolCall(call) = content
                && call.name.as_str().trim() == owned::FINAL_ANSWER
            {
                *content = chef_ir::Content::text(owned::final_answer_text(&call.arguments));
            }
        }
    }

    /// Classifies a call exactly as [`Chef::route`] does — resolution against the latest
    /// compile's tools, the gate and validation — but changes nothing: a `load_toolkit`
    /// call is reported as [`Routed::ToolkitLoaded`] without loading the toolkit or
    /// announcing it. A blocked call emits [`ChefEvent::ToolBlocked`], as the gate does at
    /// dispatch (this is the dispatch-time check of a loop that routes on its own).
    pub fn check_tool_call(&self, call: &ToolCall) -> Routed {
        let routed = match self.routing_tools() {
            Ok(tools) => {
                let mut routed = self.classify(call, &tools, Gate::On);
                // As `route` answers it (a search for an unknown name, a did-you-mean),
                // recording nothing.
                let _ = self.search_for_unknown(call, &tools, &mut routed);
                self.mend_did_you_mean(&tools, &mut routed);
                self.speak_wire_names(&mut routed);
                routed
            }
            Err(e) => unavailable(call, e),
        };
        if let Routed::Blocked { name, .. } = &routed {
            self.emit(&ChefEvent::ToolBlocked { name: name.clone() });
        }
        routed
    }

    /// The call classified as [`route`](Self::route) would name its tool, **without the
    /// gate** and without an event: for chef's own look at a call (which tool a pushed
    /// result belongs to, for the offload policy's per-tool rules), which refuses nothing.
    /// A tool blocked since its call was made is still named: its result is still its
    /// result, and a rule that it must never be offloaded still holds.
    pub(crate) fn tool_of_call(&self, call: &ToolCall) -> Routed {
        match self.routing_tools() {
            Ok(tools) => self.classify(call, &tools, Gate::Off),
            Err(e) => unavailable(call, e),
        }
    }

    /// The tools calls are resolved against: those of the latest compile, else the
    /// current selection.
    pub(crate) fn routing_tools(&self) -> Result<Arc<TurnTools>, ChefError> {
        match &self.routing.latest {
            Some(tools) => Ok(Arc::clone(tools)),
            None => self.selection_now(),
        }
    }

    /// Resolution, the gate (when `gate` is on) and validation, in that order.
    fn classify(&self, call: &ToolCall, tools: &TurnTools, gate: Gate) -> Routed {
        let id = call.id.clone();
        let name = call.name.as_str().trim();
        if name.is_empty() {
            return error(id, RouteError::Malformed, MALFORMED_CALL_REASON.to_owned());
        }
        if self.is_find_call(call) {
            return self.find(call, gate == Gate::On).routed;
        }
        if name == owned::FINAL_ANSWER && self.answering() {
            if let Some(blocked) = self.gated(gate, &[name]) {
                return blocked_outcome(id, &blocked);
            }
            return Routed::Lookup {
                id,
                reply: ANSWER_ROUTED.to_owned(),
            };
        }
        if owned::is_owned_name(name) {
            if let Some(blocked) = self.gated(gate, &[name]) {
                return blocked_outcome(id, &blocked);
            }
            return Routed::Owned(OwnedCall {
                id,
                name: name.to_owned(),
                arguments: call.arguments.clone(),
            });
        }

        // A name the latest compile's target gave a tool on the wire (a dotted name sent
        // sanitised) is that tool, unless as written it also reaches another one.
        let name = match self.real_name_of_wire(name, tools) {
            Ok(name) => name,
            Err(e) => {
                // The gate first: the reply names both tools, and a blocked tool's name is
                // never taught.
                if let ResolveError::AmbiguousWireName {
                    wire_of, reaches, ..
                } = &e
                    && let Some(blocked) = self.gated(gate, &[wire_of, reaches])
                {
                    return blocked_outcome(id, &blocked);
                }
                let reply = e.message();
                return error(id, RouteError::Resolve(e), reply);
            }
        };

        let hidden = |tool: &str| self.hidden_tool(tool, tools);
        let (real, args) = match resolve(tools, name, &call.arguments, &hidden) {
            Resolution::Call { name, args } => (ToolName::from(name), args),
            Resolution::Meta { result, .. } => return Routed::Lookup { id, reply: result },
            Resolution::Error(e) => {
                // The gate before validation: a call that reached a blocked tool with bad
                // arguments is refused as blocked, and the model is never taught the
                // blocked tool's parameters.
                if let Some(tool) = e.tool() {
                    let kit = tools.toolkit_of.get(tool).map(String::as_str);
                    let names: Vec<&str> = std::iter::once(tool).chain(kit).collect();
                    if let Some(blocked) = self.gated(gate, &names) {
                        return blocked_outcome(id, &blocked);
                    }
                }
                // A misspelt name of a blocked tool is reported as blocked, by the real name
                // of the tool it reaches (else as written), never by the blocklist's own
                // spelling of the entry.
                if let Some(blocked) = mentioned_names(name, &call.arguments)
                    .into_iter()
                    .find(|n| self.gated_lookalike(gate, n).is_some())
                    .map(|n| self.real_name_of(&n))
                {
                    return blocked_outcome(id, &blocked);
                }
                if let Some(routed) = self.late_toolkit_call(call, name, tools, gate) {
                    return routed;
                }
                let e = self.without_blocked_choices(e, tools);
                let reply = e.message();
                return error(id, RouteError::Resolve(e), reply);
            }
        };

        if real == LOAD_TOOLKIT {
            return self.classify_toolkit_load(id, &args, gate);
        }

        if tools.namespaces.iter().any(|g| g.name == real.as_str()) {
            let member = match namespace::resolve_namespace(&tools.namespaces, real.as_str(), &args)
            {
                Ok(member) => member,
                Err(e) => {
                    if let NamespaceError::UnknownAction { action, .. } = &e
                        && self.gated_lookalike(gate, action).is_some()
                    {
                        return blocked_outcome(id, &self.real_name_of(action));
                    }
                    let e = self.without_blocked_names(e);
                    let reply = e.to_string();
                    return error(id, RouteError::Namespace(e), reply);
                }
            };
            if let Some(blocked) = self.gated(gate, &[member.tool_name.as_str(), &member.group]) {
                return blocked_outcome(id, &blocked);
            }
            if let Some(validator) = tools.members.get(&member.tool_name)
                && let Err(e) = validator.validate(&member.args)
            {
                let reply = e.message();
                return error(
                    id,
                    RouteError::Resolve(ResolveError::InvalidArguments(e)),
                    reply,
                );
            }
            if !self.still_offered(tools, &member.tool_name, Origin::Namespace(&member.group)) {
                return tool_list_changed(id, member.tool_name);
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
        if let Some(blocked) = self.gated(gate, &names) {
            return blocked_outcome(id, &blocked);
        }
        let origin = match &via {
            Some(kit) => Origin::Toolkit(kit),
            None => Origin::Flat,
        };
        if !self.still_offered(tools, &real, origin) {
            return tool_list_changed(id, real);
        }
        Routed::Call(RoutedCall {
            id,
            name: real,
            arguments: args,
            via,
        })
    }

    /// The real name for `name` when it is a wire name the latest compile's target gave a
    /// tool (renamed because the target refuses the real name), else `name` itself.
    ///
    /// # Errors
    /// [`ResolveError::AmbiguousWireName`] when `name`, as written, also reaches another
    /// tool of the selection (a loaded toolkit's tool sent as `a_b` beside a map tool
    /// named `a_b`, say).
    fn real_name_of_wire<'a>(
        &'a self,
        name: &'a str,
        tools: &'a TurnTools,
    ) -> Result<&'a str, ResolveError> {
        chef_compress::real_name_of_wire(name, &self.routing.names, || {
            if tools.toolkit_of.contains_key(name) || tools.extra.iter().any(|(n, _)| n == name) {
                return Some(name);
            }
            tools.stable.tool_for_name(name).or_else(|| {
                tools
                    .loaded
                    .as_ref()
                    .and_then(|loaded| loaded.tool_for_name(name))
            })
        })
    }

    /// Whether `tool`, as the selection `tools` offered it, is still registered with the
    /// same schema. Always true while the registry is the one the selection was made from.
    fn still_offered(&self, tools: &TurnTools, tool: &ToolName, origin: Origin<'_>) -> bool {
        if tools.key.epoch == self.tools.epoch {
            return true;
        }
        let shown = origin.schema(tool, &tools.registry, &tools.namespaces, &tools.toolkits);
        let now = origin.schema(
            tool,
            self.tools.pruner.all_tools(),
            self.tools.pruner.namespaces(),
            self.tools.pruner.toolkits(),
        );
        shown.is_some() && shown == now
    }
}

/// Whether [`Chef::classify`] applies the blocklist: always for a call the model made
/// (`route`, `check_tool_call`); not when chef only asks which tool a call named.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Gate {
    On,
    Off,
}

/// Where a routed tool came from in the selection.
#[derive(Clone, Copy)]
enum Origin<'a> {
    Flat,
    Namespace(&'a str),
    Toolkit(&'a str),
}

impl Origin<'_> {
    /// The input schema of `tool` where this origin says it lives in a registry.
    fn schema<'r>(
        self,
        tool: &ToolName,
        flat: &'r [ToolDefinition],
        namespaces: &'r [ToolGroup],
        toolkits: &'r [ToolGroup],
    ) -> Option<&'r Value> {
        let members = |groups: &'r [ToolGroup], name: &str| {
            groups
                .iter()
                .find(|g| g.name == name)
                .map_or(&[][..], |g| g.tools.as_slice())
        };
        let list = match self {
            Self::Flat => flat,
            Self::Namespace(group) => members(namespaces, group),
            Self::Toolkit(kit) => members(toolkits, kit),
        };
        list.iter()
            .find(|t| t.name == *tool)
            .map(|t| &t.input_schema)
    }
}

fn unavailable(call: &ToolCall, e: ChefError) -> Routed {
    let reply = format!("The tool list could not be prepared: {e}");
    error(call.id.clone(), RouteError::Unavailable(Arc::new(e)), reply)
}

fn tool_list_changed(id: ToolCallId, tool: ToolName) -> Routed {
    let reply = format!(
        "The tool list changed since your last request: \"{tool}\" is no longer offered as \
         you saw it, so the call was not made. Use the tools of the next request."
    );
    error(id, RouteError::ToolListChanged { tool }, reply)
}

/// Resolves against the loaded toolkits' set or the stable one; did-you-mean never names a
/// tool `hidden` says is blocked.
fn resolve(
    tools: &TurnTools,
    name: &str,
    args: &Value,
    hidden: &dyn Fn(&str) -> bool,
) -> Resolution {
    let Some(loaded) = &tools.loaded else {
        return tools.stable.resolve_hiding(name, args, hidden);
    };
    if tools.toolkit_of.contains_key(name) || tools.extra.iter().any(|(n, _)| n == name) {
        return loaded.resolve_hiding(name, args, hidden);
    }
    let stable = tools.stable.resolve_hiding(name, args, hidden);
    // A found tool named with other case or separators: the set it was offered in.
    if matches!(stable, Resolution::Error(_))
        && !tools.extra.is_empty()
        && let found @ Resolution::Call { .. } = loaded.resolve_hiding(name, args, hidden)
    {
        return found;
    }
    stable
}

fn error(id: ToolCallId, error: RouteError, reply: String) -> Routed {
    Routed::Error { id, error, reply }
}

fn blocked_outcome(id: ToolCallId, name: &str) -> Routed {
    Routed::Blocked {
        id,
        name: name.to_owned(),
        reply: gate::blocked_reason(name),
    }
}
