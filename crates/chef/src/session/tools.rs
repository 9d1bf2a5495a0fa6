//! The tool registry of a session: registering, the blocklist and allowlist, pruning,
//! toolkits, and the selection each turn's tools come from.

use std::sync::Arc;

use chef_ir::{Message, Role, ToolDefinition};

use super::{Chef, OwnedKey, SHORT_REPLY_WORDS};
use super::{select::SelectInput, select::TurnTools};
use crate::{
    announce::Channel,
    error::ChefError,
    events::ChefEvent,
    gate::BlockReport,
    namespace::ToolGroup,
    prune::{PrunePolicy, Pruner},
};

/// The session's tools as they stand: the registry, the blocklist and allowlist, the
/// pruning policy and task, the loaded toolkits and found tools, and the names and codes
/// of the latest compile. Reached with [`Chef::tools`]; to change them,
/// [`Chef::tools_mut`] ([`Chef::register_tools`] stays on the session: it is the loop's).
#[derive(Debug, Clone, Copy)]
pub struct Tools<'a> {
    pub(super) chef: &'a Chef,
}

/// The session's tools, to change: namespaces and toolkits, the blocklist and allowlist,
/// the pruning policy, the task and the ranker (see [`Tools`]). Reached with
/// [`Chef::tools_mut`]; setters return the handle, so settings chain.
#[derive(Debug)]
pub struct ToolsMut<'a> {
    pub(super) chef: &'a mut Chef,
}

impl Chef {
    /// The session's tools as they stand (see [`Tools`]).
    #[must_use]
    pub fn tools(&self) -> Tools<'_> {
        Tools { chef: self }
    }

    /// The session's tools, to change (see [`ToolsMut`]).
    #[must_use]
    pub fn tools_mut(&mut self) -> ToolsMut<'_> {
        ToolsMut { chef: self }
    }

    pub(super) fn touch(&mut self) {
        self.tools.epoch += 1;
        self.tools.selection.forget();
    }

    /// Replaces the flat tools (names must be unique).
    ///
    /// Each tool is checked as compression would take it ([`chef_compress::check_tool`],
    /// with this session's limits): a schema no argument object satisfies (`false`, a
    /// string schema, `type: "string"`), one nested past the limit, a name too long. Such a
    /// tool is refused here with [`ChefError::Compress`] naming it, and the registry is
    /// unchanged; taken, it would fail every later compile and route.
    pub fn register_tools(&mut self, tools: Vec<ToolDefinition>) -> Result<&mut Self, ChefError> {
        self.check_tools(&tools)?;
        self.tools.pruner.register_tools(tools)?;
        self.touch();
        Ok(self)
    }

    /// [`chef_compress::check_tool`] for each of `tools`, with this session's limits.
    pub(crate) fn check_tools<'t>(
        &self,
        tools: impl IntoIterator<Item = &'t ToolDefinition>,
    ) -> Result<(), ChefError> {
        let limits = self.config.compress.limits();
        for (index, tool) in tools.into_iter().enumerate() {
            match chef_compress::check_tool(index, tool, &limits) {
                // The registry says these itself, with its own types.
                Err(
                    chef_compress::CompressError::MissingName { .. }
                    | chef_compress::CompressError::ControlCharacter { .. },
                )
                | Ok(()) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// At levels 3–4 no toolkit tool may be named like the dispatcher's `t` or `q`: a
    /// loaded toolkit's tools travel beside them.
    pub(crate) fn check_toolkit_names(&self, groups: &[ToolGroup]) -> Result<(), ChefError> {
        if self.config.compress.level().is_dispatcher()
            && let Some(tool) = groups
                .iter()
                .flat_map(|g| &g.tools)
                .find(|t| matches!(t.name.as_str(), "t" | "q"))
        {
            return Err(crate::prune::RegistryError::ReservedToolName {
                name: tool.name.clone(),
                owner: "the dispatcher at levels 3–4",
            }
            .into());
        }
        Ok(())
    }

    /// States the blocklist in force in the `tools:blocked` announcement (retracted when
    /// nothing is blocked).
    pub(crate) fn announce_blocked(&mut self) {
        let blocked = self.tools.pruner.blocked_tools().to_vec();
        if blocked.is_empty() {
            self.retract_internal("tools:blocked");
        } else {
            self.announce_internal(
                "tools:blocked",
                format!(
                    "These tools are blocked for now; calls to them will be refused: {}.",
                    blocked.join(", ")
                ),
                Channel::Auto,
            );
        }
    }

    fn owned_key(&self) -> OwnedKey {
        (
            self.config.tools_mode,
            self.storage
                .memory
                .as_ref()
                .map(|m| m.allowed_keys().map(<[String]>::to_vec)),
            self.config.overflow.handoff.is_some(),
            self.config.skill_tool,
            self.offers_find_tools(),
            self.answering(),
        )
    }

    /// Whether the session offers chef's `final_answer` now: it is on, and no registered
    /// tool has the name.
    pub(crate) fn answering(&self) -> bool {
        self.config.answer_tool && !self.registers(crate::owned::FINAL_ANSWER)
    }

    /// Whether a registered flat tool has exactly this name.
    pub(crate) fn registers(&self, name: &str) -> bool {
        self.tools
            .pruner
            .all_tools()
            .iter()
            .any(|t| t.name.as_str() == name)
    }

    /// The current selection without caching it (for `&self` readers before any compile).
    pub(crate) fn selection_now(&self) -> Result<Arc<TurnTools>, ChefError> {
        let task = self.task();
        let extra = self.extra_tools(&task);
        self.tools
            .selection
            .peek(self.select_input(&task, &extra), &self.owned_key())
    }

    /// What a selection reads from the session (the owned tools come from the
    /// [`select::Selection`]).
    fn select_input<'a>(
        &'a self,
        task: &'a str,
        extra: &'a [(ToolDefinition, crate::prune::KeepReason)],
    ) -> SelectInput<'a> {
        SelectInput {
            pruner: &self.tools.pruner,
            epoch: self.tools.epoch,
            policy: &self.config.prune,
            task,
            loaded: &self.tools.loaded_toolkits,
            options: &self.config.compress,
            owned: &[],
            extra,
            allowlist: self.tools.allowlist.as_deref(),
            skill_bound: self.skill_bound(),
        }
    }

    /// The tools of this turn, kept as the latest selection.
    pub(crate) fn turn_tools(&mut self) -> Result<Arc<TurnTools>, ChefError> {
        let task = self.task();
        let extra = self.extra_tools(&task);
        let owned_key = self.owned_key();
        // Lent out while it reads the session's settings, and put back whatever happens.
        let mut selection = std::mem::take(&mut self.tools.selection);
        let chosen = selection.select(self.select_input(&task, &extra), owned_key);
        self.tools.selection = selection;
        let (fresh, changed) = chosen?;
        if changed {
            let stats = fresh.stable.stats();
            self.emit(&ChefEvent::Compress {
                wire_tools: fresh.stable.tools().len(),
                original_chars: stats.original_chars,
                compressed_chars: stats.compressed_chars,
                original_tokens: stats.original_tokens,
                compressed_tokens: stats.compressed_tokens,
            });
        }
        Ok(fresh)
    }

    /// A Chat Completions `response_format` that constrains the reply to one call of the
    /// latest compile's wire tools (at level 3: `t` or `q`), named as that compile put them
    /// on the wire, each tool's arguments constrained by its own schema (no unknown
    /// parameter, no missing required one, no wrong type): [`chef_openai::chat::response_format`] for the turn. For models and
    /// servers that do not emit native tool calls (llama.cpp turns the schema into a
    /// grammar): add it to the body of [`compile`](Self::compile)`(Target::OpenAiChat)` as
    /// `response_format`, and recover the reply's JSON content with
    /// [`recover_text_calls`](Self::recover_text_calls). Call it after that compile (its
    /// name table is the one used). `None` when the turn has no tools or its tools cannot
    /// be built. Under [`PrunePolicy::Discover`], and at any setting once the current
    /// request has had a tool result (its task may be done), the model may also answer
    /// without a call: the format then has one more branch, `{"answer": "<text>"}`
    /// ([`chef_openai::chat::response_format_or_answer`]), which recovery leaves as text; a
    /// first call at the other settings has no such branch (the model is asked to pick a
    /// tool). Once a `find_tools` search for the current request has
    /// found nothing, `find_tools` has no branch (a small model otherwise searches again
    /// and again). Right after a reply whose calls all repeat answered calls (the loop
    /// guard, [`ChefConfig::with_repeat_notice`](crate::ChefConfig::with_repeat_notice)),
    /// those tools have no branch for that one reply, below level 3. A blocked tool (or a
    /// tool of a blocked toolkit) has no branch at any setting, though outside discovery it
    /// stays in the compiled tool list: a constrained model cannot even write its call.
    ///
    /// ```
    /// use chef::{Chef, ChefConfig};
    /// use chef_compress::Level;
    /// use chef_ir::{Message, Target, ToolDefinition};
    /// use serde_json::{Value, json};
    ///
    /// let mut chef = Chef::new(ChefConfig::default().with_level(Level::Three));
    /// chef.register_tools(vec![ToolDefinition::new("get_weather", json!({"type": "object"}))])?;
    /// chef.push(Message::user("Weather in Oslo?"));
    /// let payload = chef.compile(Target::OpenAiChat)?;
    /// let mut body: Value = serde_json::from_slice(&payload.body)?;
    /// body["model"] = json!("qwen2.5-coder-1.5b");
    /// body["response_format"] = serde_json::to_value(chef.response_format().unwrap())?;
    /// // One branch per wire tool, its name fixed and its arguments its own schema.
    /// let branches = &body["response_format"]["json_schema"]["schema"]["anyOf"];
    /// assert_eq!(branches[0]["properties"]["name"]["const"], json!("t"));
    /// assert_eq!(branches[1]["properties"]["name"]["const"], json!("q"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn response_format(&self) -> Option<chef_openai::chat::wire::ResponseFormat> {
        let turn = self.routing_tools().ok()?;
        let mut tools = turn.wire_tools();
        // A blocked tool stays on the wire outside discovery (the blocklist never moves the
        // cached prefix), but a constrained model is never given a branch to call it: the
        // format is not part of the prompt, so leaving it out changes no cached byte.
        self.without_blocked_branches(&mut tools, &turn);
        if self.offers_find_tools() {
            if self.searched_in_vain() {
                tools.retain(|t| t.name != crate::owned::FIND_TOOLS);
            } else if let Some(query) = tools
                .iter_mut()
                .find(|t| t.name == crate::owned::FIND_TOOLS)
                .and_then(|t| t.input_schema.pointer_mut("/properties/query"))
                .and_then(serde_json::Value::as_object_mut)
            {
                // A constrained search has a query to run: `""` would be refused
                // ("find_tools needs a query"). Only the format says so; the tool on the
                // wire is unchanged.
                query.insert("minLength".to_owned(), serde_json::Value::from(1));
            }
        }
        // The loop guard's lever for a constrained model, which the notice alone did not
        // stop: right after it repeated answered calls, their tools have no branch for one
        // reply (it answers, or makes another call). Not at level 3, whose wire tools are
        // the dispatcher every call goes through.
        if self.config.repeat_notice
            && self.config.compress.level() < chef_compress::Level::Three
            && let Some(repeated) = self.repeated_calls()
        {
            let real: Vec<&str> = repeated
                .iter()
                .map(|n| self.routing.names.to_real(n))
                .collect();
            tools.retain(|t| !real.contains(&t.name.as_str()));
        }
        // Under discovery the model may answer from the start (nothing may fit); at any
        // setting, once the request has tool results, it may finish its task.
        if self.discovering() || self.request_has_results() {
            chef_openai::chat::response_format_or_answer(&tools, &self.routing.names)
        } else {
            chef_openai::chat::response_format(&tools, &self.routing.names)
        }
    }

    /// Whether the history holds a tool result after the latest user message with text
    /// (the current request has had calls answered).
    fn request_has_results(&self) -> bool {
        for message in self.conversation.history.iter().rev() {
            if message.tool_results_iter().next().is_some() {
                return true;
            }
            if message.role == chef_ir::Role::User && !message.text().trim().is_empty() {
                return false;
            }
        }
        false
    }

    pub(super) fn task(&self) -> String {
        if let Some(task) = &self.tools.task_override {
            return task.clone();
        }
        let has_text = |m: &Message| {
            m.content
                .iter()
                .filter_map(chef_ir::Content::as_text)
                .any(|t| !t.trim().is_empty())
        };
        let text = |m: &Message| m.text().trim().to_owned();
        let history: &[Message] = &self.conversation.history;
        let Some(last) = history
            .iter()
            .rposition(|m| m.role == Role::User && has_text(m))
        else {
            return String::new();
        };
        let reply = history.get(last).map(text).unwrap_or_default();
        if reply.split_whitespace().count() > SHORT_REPLY_WORDS {
            return reply;
        }
        let before = history.get(..last).unwrap_or_default();
        let request = before
            .iter()
            .rposition(|m| m.role == Role::User && has_text(m));
        let between = before
            .get(request.map_or(0, |r| r + 1)..)
            .unwrap_or_default();
        let Some(asked) = between
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant && has_text(m))
            .filter(|m| text(m).ends_with('?'))
        else {
            return reply;
        };
        request
            .and_then(|r| history.get(r))
            .map(text)
            .into_iter()
            .chain([text(asked), reply])
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl<'a> Tools<'a> {
    /// The blocklist in force, as set (see [`ToolsMut::set_blocked`]).
    pub fn blocked(&self) -> &'a [String] {
        self.chef.tools.pruner.blocked_tools()
    }

    /// The registry (read-only; change it through [`Chef::register_tools`] and
    /// [`ToolsMut`], so the session's caches stay right).
    pub fn pruner(&self) -> &'a Pruner {
        &self.chef.tools.pruner
    }

    /// Blocklist entries that match no registered flat tool, namespace, namespace member,
    /// toolkit, toolkit member or owned tool, in blocklist order.
    pub fn unmatched_blocked(&self) -> Vec<String> {
        let pruner = &self.chef.tools.pruner;
        let groups = pruner.namespaces().iter().chain(pruner.toolkits());
        let members = groups.flat_map(|g| {
            std::iter::once(g.name.as_str()).chain(g.tools.iter().map(|t| t.name.as_str()))
        });
        let names = pruner
            .all_tools()
            .iter()
            .map(|t| t.name.as_str())
            .chain(members)
            .chain(crate::owned::OWNED_NAMES)
            .chain([
                crate::namespace::LOAD_TOOLKIT,
                crate::owned::FINAL_ANSWER,
                crate::owned::FIND_TOOLS,
            ]);
        pruner.blocklist().unmatched(names)
    }

    /// The pruning policy in force.
    pub fn prune_policy(&self) -> &'a PrunePolicy {
        &self.chef.config.prune
    }

    /// The session's allowlist, when set.
    pub fn allowlist(&self) -> Option<&'a [String]> {
        self.chef.tools.allowlist.as_deref()
    }

    /// The toolkits loaded so far, in load order.
    pub fn loaded_toolkits(&self) -> &'a [String] {
        &self.chef.tools.loaded_toolkits
    }

    /// The tool-search directory to place in the system prompt (`""` without toolkits).
    /// chef also adds it to its own system message at compile.
    pub fn directory_xml(&self) -> String {
        self.chef.tools.pruner.directory_xml()
    }

    /// Whether chef owns (answers) a tool of this name.
    pub fn owns(&self, name: &str) -> bool {
        crate::owned::is_owned_name(name)
    }

    /// The dispatcher code of a real tool at levels 3–4, in the map of the latest compile
    /// (the one the model was shown; before any compile, the current tools). `None` below
    /// level 3, or for a tool not in that map.
    pub fn code_for(&self, name: &str) -> Option<String> {
        let tools = self.chef.routing_tools().ok()?;
        tools.stable.code_for(name).ok().map(str::to_owned)
    }

    /// The call a model would write for `name(args)` in the map of the latest compile
    /// (before any compile, of the current tools): `t(f=<code>, a=args)` at level 3, the
    /// compound op at level 2, the call itself at levels 0–1. `None` for a tool not in that
    /// map. A host that replays history written with real names (a gateway, say) encodes
    /// each earlier call with it; tests and demos use it to play the model.
    pub fn encode_call(&self, name: &str, args: serde_json::Value) -> Option<chef_ir::ToolCall> {
        let tools = self.chef.routing_tools().ok()?;
        let encoded = match tools.stable.encode_call(name, args.clone()) {
            Ok(encoded) => encoded,
            // A loaded toolkit's or a found tool's call is the call itself (level 1 at most).
            Err(_) => tools.loaded.as_ref()?.encode_call(name, args).ok()?,
        };
        Some(chef_ir::ToolCall::new(
            format!("call_{name}"),
            encoded.name,
            encoded.args,
        ))
    }

    /// The text pruning ranks on this turn (see [`PrunePolicy::Ranked`]): the override set
    /// with [`ToolsMut::set_task`], else the request as the conversation states it.
    ///
    /// That is the latest user message that has text. Tool results do not count (also when
    /// they travel in a user message, as Anthropic's do), so while the model works through
    /// tool calls the task stays the request they serve — and the ranked tool list, and the
    /// prompt cache, stay put. A short reply of four words or fewer ("yes", "go ahead",
    /// "the second one") to an assistant message that ends with a question answers that
    /// question: the task is then the user's request before it, the assistant's question,
    /// and the reply, one per line, in that order. A short message after anything else is
    /// a request of its own ("now use the shell"). Ranked pruning ranks such a task line by
    /// line when the index abstains on it as a whole (see [`Pruner::rank_by_task`](crate::prune::Pruner::rank_by_task)).
    ///
    /// ```
    /// use chef::{Chef, ChefConfig};
    /// use chef_ir::Message;
    ///
    /// let mut chef = Chef::new(ChefConfig::default());
    /// chef.push(Message::user("Clean up my repository"));
    /// chef.push(Message::assistant("Shall I delete the merged branches?"));
    /// chef.push(Message::user("yes"));
    /// assert_eq!(
    ///     chef.tools().pruning_task(),
    ///     "Clean up my repository\nShall I delete the merged branches?\nyes"
    /// );
    /// ```
    pub fn pruning_task(&self) -> String {
        self.chef.task()
    }
}

impl ToolsMut<'_> {
    /// Replaces the namespaces.
    pub fn register_namespaces(&mut self, groups: Vec<ToolGroup>) -> Result<&mut Self, ChefError> {
        self.chef
            .check_tools(groups.iter().flat_map(|g| &g.tools))?;
        self.chef.tools.pruner.register_namespaces(groups)?;
        self.chef.touch();
        Ok(self)
    }

    /// Replaces the lazy toolkits. At levels 3–4 a loaded toolkit's tools are sent beside
    /// the dispatcher, so a member named `t` or `q` is refused
    /// ([`RegistryError::ReservedToolName`](crate::RegistryError::ReservedToolName)).
    pub fn register_toolkits(&mut self, groups: Vec<ToolGroup>) -> Result<&mut Self, ChefError> {
        self.chef.check_toolkit_names(&groups)?;
        self.chef
            .check_tools(groups.iter().flat_map(|g| &g.tools))?;
        self.chef.tools.pruner.register_toolkits(groups)?;
        self.chef.touch();
        Ok(self)
    }

    /// Replaces the blocklist. The compiled tool list does not change (except under
    /// [`PrunePolicy::Discover`](crate::PrunePolicy::Discover), whose list follows the task
    /// and never offers a blocked tool); with tool-change announcements on, the model is
    /// told which tools are blocked.
    ///
    /// Entries match names the way [`route`](Chef::route) does, ignoring letter case and
    /// separators (`GDrive_Upload_File` blocks `gdrive_upload_file`). The report lists the
    /// entries that match no registered tool, namespace, toolkit or owned tool, so a typo
    /// never leaves a tool open unnoticed; such entries are also named, once each, in the
    /// next compile's [`Payload::notices`](crate::Payload::notices) (the registry may change after blocking).
    ///
    /// ```
    /// use chef::{Chef, ChefConfig};
    /// use chef_ir::ToolDefinition;
    /// use serde_json::json;
    ///
    /// let mut chef = Chef::new(ChefConfig::default());
    /// chef.register_tools(vec![ToolDefinition::new("gdrive_upload_file", json!({"type": "object"}))])?;
    /// let report = chef.tools_mut().set_blocked(["GDrive_Upload_File", "gdrive_uplaod"]);
    /// assert_eq!(report.unmatched, ["gdrive_uplaod"]);
    /// assert!(chef.tools().pruner().blocklist().blocks("gdrive_upload_file"));
    /// # Ok::<(), chef::ChefError>(())
    /// ```
    pub fn set_blocked<I, S>(&mut self, names: I) -> BlockReport
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.chef.tools.pruner.set_blocked_tools(names);
        self.chef.tools.unmatched_reported.clear();
        self.chef.tools.unmatched_checked = None;
        if self.chef.config.announce_tool_changes {
            self.chef.announce_blocked();
        }
        BlockReport {
            unmatched: self.chef.tools().unmatched_blocked(),
        }
    }

    /// Replaces the pruning policy (which flat tools each compile keeps) from the next
    /// compile on. Like the rest of the policy set on a session — [`set_allowlist`],
    /// [`set_task`], [`set_embedder`] — it is the session's own setting, not snapshot
    /// state: [`restore`](Chef::restore) and [`load`](Chef::load) keep it.
    ///
    /// [`set_allowlist`]: crate::ToolsMut::set_allowlist
    /// [`set_task`]: crate::ToolsMut::set_task
    /// [`set_embedder`]: crate::ToolsMut::set_embedder
    pub fn set_prune_policy(&mut self, policy: PrunePolicy) -> &mut Self {
        self.chef.config.prune = policy;
        self
    }

    /// Bounds every policy to these flat tools (case-insensitive exact names): a tool off
    /// the list is never kept, whatever the policy says. Under [`PrunePolicy::Ranked`] the
    /// whole catalogue is ranked (scores and abstention as without the list) and the best
    /// `top_k` allowed tools are kept, so `top_k` is not spent on tools the list removes
    /// (a kept tool's [`KeepReason`](crate::prune::KeepReason) rank is its catalogue rank). `None` lifts the bound.
    /// Saved in snapshots; a restore never loosens it (see [`Chef::restore`](crate::Chef::restore)).
    pub fn set_allowlist<I, S>(&mut self, names: Option<I>) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.chef.tools.allowlist = names.map(|n| n.into_iter().map(Into::into).collect());
        self
    }

    /// Prunes (and ranks) on this task text instead of the conversation's request (see
    /// [`Tools::pruning_task`]); `None` goes back to the conversation. Kept
    /// across `restore`.
    pub fn set_task(&mut self, task: Option<impl Into<String>>) -> &mut Self {
        self.chef.tools.task_override = task.map(Into::into);
        self
    }

    /// Ranks the session's tools with the hybrid of BM25F and this embedding model
    /// (`chef_compress::search::dense`; [`PrunePolicy::Ranked`] uses it from the next
    /// compile). The catalogue is embedded on the first ranking after each registration;
    /// if the model fails, the lexical index ranks. An embedder is code, so snapshots do
    /// not carry it: `restore` and `load` keep the session's own.
    pub fn set_embedder(&mut self, config: chef_compress::search::dense::DenseConfig) -> &mut Self {
        self.chef.tools.pruner.set_embedder(config);
        self
    }

    /// Ranks the session's tools with BM25F alone instead of the default hybrid (BM25F and
    /// the static model bundled in chef; see [`Pruner::set_embedder`](crate::prune::Pruner::set_embedder)). Kept across
    /// `restore`, like [`ToolsMut::set_embedder`](crate::ToolsMut::set_embedder).
    pub fn set_lexical_ranking(&mut self) -> &mut Self {
        self.chef.tools.pruner.set_lexical_ranking();
        self
    }

    /// Builds now what the first compile after a registration would build from the whole
    /// catalogue, and keeps it: the search indexes (BM25F and, unless ranking is lexical,
    /// the embedded catalogue) and the registry prepared for compression. A
    /// [`Chef::fork`] made afterwards shares them, so a template forked once per request
    /// pays for them once. Nothing a compile sends changes.
    ///
    /// ```
    /// use chef::{Chef, ChefConfig, PrunePolicy};
    /// use chef_ir::{Message, Target, ToolDefinition};
    /// use serde_json::json;
    ///
    /// let mut template = Chef::new(ChefConfig::default().with_prune(PrunePolicy::discover(1)));
    /// template.register_tools(vec![
    ///     ToolDefinition::new("get_weather", json!({"type": "object"})),
    ///     ToolDefinition::new("send_email", json!({"type": "object"})),
    /// ])?;
    /// template.tools_mut().warm();
    /// let mut request = template.fork(); // shares the indexes and the prepared registry
    /// request.push(Message::user("What is the weather in Oslo?"));
    /// let mut fresh = Chef::new(template.config().clone());
    /// fresh.register_tools(template.tools().pruner().all_tools().to_vec())?;
    /// fresh.push(Message::user("What is the weather in Oslo?"));
    /// assert_eq!(
    ///     request.compile(Target::OpenAiChat)?.body,
    ///     fresh.compile(Target::OpenAiChat)?.body
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn warm(&mut self) -> &mut Self {
        let chef = &mut *self.chef;
        let pruner = &chef.tools.pruner;
        pruner.index();
        let _ = pruner.hybrid_index();
        chef.tools
            .selection
            .warm(pruner, chef.tools.epoch, &chef.config.compress);
        self
    }
}
