//! How a session behaves: [`ChefConfig`] and its setters.

use serde::{Deserialize, Serialize};

use super::compiler::TargetOptions;
use crate::{
    overflow::HandoffBudget, overflow::OverflowConfig, owned::ToolsMode, prune::PrunePolicy,
    prune::Strategy,
};

/// Where the memory block goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryPlacement {
    /// In the system layers (changes to memory move the cached prefix's end).
    #[default]
    AfterSystem,
    /// In the tail stitch (the cached prefix never sees memory).
    BeforeHistoryTail,
}

/// How a session behaves. Build with [`ChefConfig::default`] and the `with_*` setters.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ChefConfig {
    /// Compression options; the level decides what compile emits (0–4).
    pub compress: chef_compress::Options,
    /// Which flat tools each compile keeps.
    pub prune: PrunePolicy,
    /// How the flat pruning operations combine task and allowlist.
    pub strategy: Strategy,
    /// Which library-owned tools are emitted.
    pub tools_mode: ToolsMode,
    /// Where memory goes.
    pub memory_placement: MemoryPlacement,
    /// Announce tool changes (added, removed, blocked, toolkits loaded) to the model.
    pub announce_tool_changes: bool,
    /// Place chef's cache breakpoints (end of the system layers, rolling history).
    pub cache: bool,
    /// The context window, the overflow policy and the handoff budget (with a handoff
    /// budget, `new_context` is emitted in unified mode).
    pub overflow: OverflowConfig,
    /// Namespaces the owned tools may write to (default `memory`, `notes`).
    pub writable: Vec<String>,
    /// Provider compile settings.
    pub targets: TargetOptions,
    /// Audit Anthropic requests for volatile content inside the cached prefix (see
    /// [`PayloadMeta::cache_issues`](crate::PayloadMeta::cache_issues)).
    pub cache_audit: bool,
    /// Where the active skill's instructions go.
    pub skill_placement: crate::skills::SkillPlacement,
    /// Emit the library-owned `load_skill` tool (see [`ChefConfig::with_skill_tool`]).
    pub skill_tool: bool,
    /// Bound the flat tools to the active skill's `allowed-tools` (see
    /// [`ChefConfig::with_skill_pruning`]).
    pub skill_pruning: bool,
    /// Tell the model when its latest calls repeat answered calls (see
    /// [`ChefConfig::with_repeat_notice`]). On by default.
    pub repeat_notice: bool,
    /// Emit the library-owned `final_answer` tool (see [`ChefConfig::with_answer_tool`]).
    pub answer_tool: bool,
}

impl Default for ChefConfig {
    fn default() -> Self {
        Self {
            compress: chef_compress::Options::new(),
            prune: PrunePolicy::All,
            strategy: Strategy::Union,
            tools_mode: ToolsMode::Legacy,
            memory_placement: MemoryPlacement::AfterSystem,
            announce_tool_changes: false,
            cache: true,
            overflow: OverflowConfig::default(),
            writable: vec!["memory".to_owned(), "notes".to_owned()],
            targets: TargetOptions::default(),
            cache_audit: false,
            skill_placement: crate::skills::SkillPlacement::AfterSystem,
            skill_tool: false,
            skill_pruning: false,
            repeat_notice: true,
            answer_tool: false,
        }
    }
}

impl ChefConfig {
    /// Sets the compression options.
    #[must_use]
    pub fn with_compress(mut self, options: chef_compress::Options) -> Self {
        self.compress = options;
        self
    }

    /// Sets the compression level.
    #[must_use]
    pub fn with_level(mut self, level: chef_compress::Level) -> Self {
        self.compress = self.compress.with_level(level);
        self
    }

    /// Sets the pruning policy.
    #[must_use]
    pub fn with_prune(mut self, policy: PrunePolicy) -> Self {
        self.prune = policy;
        self
    }

    /// Sets the pruning strategy.
    #[must_use]
    pub fn with_strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// Sets the owned-tools mode.
    #[must_use]
    pub fn with_tools_mode(mut self, mode: ToolsMode) -> Self {
        self.tools_mode = mode;
        self
    }

    /// Sets the memory placement.
    #[must_use]
    pub fn with_memory_placement(mut self, placement: MemoryPlacement) -> Self {
        self.memory_placement = placement;
        self
    }

    /// Turns tool-change announcements on or off.
    #[must_use]
    pub fn with_tool_change_announcements(mut self, on: bool) -> Self {
        self.announce_tool_changes = on;
        self
    }

    /// Turns the loop guard on or off (on by default). When every call of the model's
    /// latest reply repeats a call it already made for the same request — the same name
    /// as written, equal arguments — and that earlier call's result was not an error, the
    /// next compile tells the model so and asks it to answer if the results suffice
    /// (announcement id [`REPEATED_CALL_ID`](crate::REPEATED_CALL_ID), in the tail after
    /// the history, derived from the history at each compile, never stored). Nothing is
    /// refused: the caller still dispatches a repeated call. The request starts at the
    /// latest user message with text.
    ///
    /// ```
    /// use chef::{Chef, ChefConfig};
    /// use chef_ir::{Content, Message, Target, ToolCall, ToolResult};
    /// use serde_json::json;
    ///
    /// let notice = "You called `get_weather` again with the same arguments";
    /// for guard in [true, false] {
    ///     let mut chef = Chef::new(ChefConfig::default().with_repeat_notice(guard));
    ///     chef.push(Message::user("What is the weather in Paris?"));
    ///     for id in ["1", "2"] {
    ///         let call = ToolCall::new(id, "get_weather", json!({"city": "Paris"}));
    ///         chef.push(Message::assistant_with(vec![Content::ToolCall(call)]));
    ///         chef.push(Message::tool_results(vec![ToolResult::text(id, "12 °C")]));
    ///     }
    ///     let body = String::from_utf8(chef.compile(Target::OpenAiChat)?.body)?;
    ///     assert_eq!(body.contains(notice), guard);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_repeat_notice(mut self, on: bool) -> Self {
        self.repeat_notice = on;
        self
    }

    /// Turns chef's cache breakpoints on or off.
    #[must_use]
    pub fn with_cache(mut self, on: bool) -> Self {
        self.cache = on;
        self
    }

    /// Turns the handoff tool (`new_context`) on with the default [`HandoffBudget`]
    /// (8,000 tokens), or off. The tool is offered in [`ToolsMode::Unified`] only; the
    /// low-budget notice is shown in any mode, and its default text asks the model to call
    /// `new_context` and use `context`, so in [`ToolsMode::Legacy`] give the budget a
    /// prompt of your own ([`HandoffBudget::with_prompt`]).
    #[must_use]
    pub fn with_handoff(mut self, on: bool) -> Self {
        self.overflow.handoff = on.then(HandoffBudget::default);
        self
    }

    /// Sets the overflow policy (context window, summaries, handoff budget).
    #[must_use]
    pub fn with_overflow(mut self, overflow: OverflowConfig) -> Self {
        self.overflow = overflow;
        self
    }

    /// Turns the Anthropic cache audit on or off: each compile for Anthropic reports
    /// volatile content (announcements, memory, dynamic state) sitting at or before the last
    /// cache breakpoint, in [`PayloadMeta::cache_issues`](crate::PayloadMeta::cache_issues), and each kind of finding once per
    /// session in [`Payload::notices`](crate::Payload::notices). The request is not changed.
    #[must_use]
    pub fn with_cache_audit(mut self, on: bool) -> Self {
        self.cache_audit = on;
        self
    }

    /// Sets where the active skill's instructions go (default
    /// [`SkillPlacement::AfterSystem`](crate::skills::SkillPlacement::AfterSystem)).
    #[must_use]
    pub fn with_skill_placement(mut self, placement: crate::skills::SkillPlacement) -> Self {
        self.skill_placement = placement;
        self
    }

    /// Emits the library-owned `final_answer` tool (after the other owned tools), through
    /// which a model ends its task with its answer: for a model whose replies are
    /// constrained ([`Chef::response_format`](crate::Chef::response_format)) or written as
    /// text, which otherwise has no way to stop that it takes. A small model given the
    /// format's plain `{"answer": …}` branch never took it on whole NESTFUL tasks (0 of 120;
    /// docs/EVAL.md); given this tool, it ended 29 of 60 tasks with it — 16 of them before
    /// their last step, so it did fewer of the tasks' steps. Measure it on your model.
    ///
    /// [`Chef::recover_text_calls`](crate::Chef::recover_text_calls) turns a
    /// `final_answer` call in a reply (written as text or as a native call) into the reply's
    /// text, so the reply carries no call and the agent loop ends on it; a `final_answer`
    /// call routed anyway ([`Chef::route`](crate::Chef::route)) is answered as a
    /// [`Routed::Lookup`](crate::Routed::Lookup) telling the model to reply in text. The
    /// blocklist gates it like any owned tool (a blocked `final_answer` stays a call, and
    /// `route` refuses it). When the registry has a tool of that name, the agent's tool
    /// is the one offered and chef's is not. Off by default.
    ///
    /// ```
    /// use chef::{Chef, ChefConfig};
    /// use chef_ir::{Message, ToolDefinition};
    /// use serde_json::json;
    ///
    /// let mut chef = Chef::new(ChefConfig::default().with_answer_tool(true));
    /// chef.register_tools(vec![ToolDefinition::new("get_weather", json!({"type": "object"}))])?;
    /// chef.push(Message::user("Weather in Oslo?"));
    /// let names: Vec<String> = chef
    ///     .compile(chef_ir::Target::OpenAiChat)?
    ///     .meta
    ///     .wire_tools
    ///     .iter()
    ///     .map(|t| t.to_string())
    ///     .collect();
    /// assert_eq!(names, ["get_weather", "final_answer"]);
    /// let mut reply = Message::assistant(r#"{"name": "final_answer", "arguments": {"answer": "Sunny, 21 °C."}}"#);
    /// chef.recover_text_calls(&mut reply);
    /// assert_eq!((reply.text(), reply.tool_calls().count()), ("Sunny, 21 °C.".to_owned(), 0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_answer_tool(mut self, on: bool) -> Self {
        self.answer_tool = on;
        self
    }

    /// Emits the library-owned `load_skill` tool (after the other owned tools, in either
    /// tools mode), answered by [`Chef::handle_tool`](crate::Chef::handle_tool). A setting, not a consequence of
    /// registering skills: its schema is static and names no skill, so registering,
    /// replacing or activating skills never moves the tool list. Off by default.
    #[must_use]
    pub fn with_skill_tool(mut self, on: bool) -> Self {
        self.skill_tool = on;
        self
    }

    /// Bounds the flat tools kept to the active skill's `allowed-tools` (each entry up to
    /// a `(`, matched like [`ToolsMut::set_allowlist`](crate::ToolsMut::set_allowlist), and within the allowlist when both are
    /// set). Off by default: the skill's tools are then only information. A skill that
    /// lists no tools does not narrow anything; namespaces, toolkits and owned tools are
    /// never narrowed. With tool-change announcements on, the change is announced as any
    /// change of the tool list is.
    #[must_use]
    pub fn with_skill_pruning(mut self, on: bool) -> Self {
        self.skill_pruning = on;
        self
    }

    /// Sets the provider compile settings.
    #[must_use]
    pub fn with_targets(mut self, targets: TargetOptions) -> Self {
        self.targets = targets;
        self
    }
}
