//! The session: [`Chef`], the state one agent conversation carries, and `compile`.

mod assemble;
mod body;
pub(crate) mod compiler;
mod dynamic;
mod history;
mod offload;
mod overflow;
mod parts;
mod route;
mod select;
mod skills;
mod state;

use std::sync::Arc;

use chef_ir::{Message, Request, Role, Target, ToolDefinition, ToolName, WireNames};
use serde::{Deserialize, Serialize};

pub use self::body::ChunkedBody;
use self::compiler::Spliced;
pub use self::compiler::TargetOptions;
use self::select::{SelectInput, TurnTools};
pub use self::{
    assemble::ANCHOR_LINE,
    route::{OwnedCall, Routed, RoutedCall},
    skills::SkillRef,
    state::{RestoreOptions, SessionState},
};
use crate::{
    announce::{Announcement, Announcements, Channel},
    error::ChefError,
    events::{ChefEvent, Compiled, Subscription},
    gate::BlockReport,
    memory::{Memory, MemoryStyle},
    namespace::ToolGroup,
    overflow::{HandoffBudget, OverflowConfig},
    owned::OwnedReply,
    owned::ToolsMode,
    prune::{KeepReason, PrunePolicy, Pruner, Strategy},
    store::StorageBackend,
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
    /// [`PayloadMeta::cache_issues`]).
    pub cache_audit: bool,
    /// Where the active skill's instructions go.
    pub skill_placement: crate::skills::SkillPlacement,
    /// Emit the library-owned `load_skill` tool (see [`ChefConfig::with_skill_tool`]).
    pub skill_tool: bool,
    /// Bound the flat tools to the active skill's `allowed-tools` (see
    /// [`ChefConfig::with_skill_pruning`]).
    pub skill_pruning: bool,
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
    /// cache breakpoint, in [`PayloadMeta::cache_issues`], and each kind of finding once per
    /// session in [`Payload::notices`]. The request is not changed.
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

    /// Emits the library-owned `load_skill` tool (after the other owned tools, in either
    /// tools mode), answered by [`Chef::handle_tool`]. A setting, not a consequence of
    /// registering skills: its schema is static and names no skill, so registering,
    /// replacing or activating skills never moves the tool list. Off by default.
    #[must_use]
    pub fn with_skill_tool(mut self, on: bool) -> Self {
        self.skill_tool = on;
        self
    }

    /// Bounds the flat tools kept to the active skill's `allowed-tools` (each entry up to
    /// a `(`, matched like [`Chef::set_allowlist`], and within the allowlist when both are
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

/// One compiled request, ready to send.
///
/// `B` is the body's form: a contiguous `Vec<u8>` from [`Chef::compile`] (the default),
/// or a [`ChunkedBody`] from [`Chef::compile_chunked`] ([`ChunkedPayload`]), which shares
/// the bytes chef caches across turns instead of copying them. Both hold the same bytes,
/// and everything else in the payload is the same for either.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Payload<B = Vec<u8>> {
    /// The target.
    pub target: Target,
    /// The request body (compact JSON).
    pub body: B,
    /// Real ↔ wire tool names, for parsing the reply.
    pub names: WireNames,
    /// What the provider crate could not express as asked, plus chef's own notices
    /// (blocklist entries that match nothing, a pending overflow step, offloads, skills,
    /// the cache audit), one line per cause: repeats
    /// that differ only in the message and ids they name (one per error result in a
    /// loop) are folded into the first, which says how many more and which messages
    /// ([`notices::fold`](crate::notices::fold)).
    pub notices: Vec<String>,
    /// Bookkeeping about this compile (never sent).
    pub meta: PayloadMeta,
}

/// A compiled request whose body is a [`ChunkedBody`]: see [`Chef::compile_chunked`].
pub type ChunkedPayload = Payload<ChunkedBody>;

impl<B> Payload<B> {
    /// The payload with its body changed by `f`.
    fn map_body<C>(self, f: impl FnOnce(B) -> C) -> Payload<C> {
        Payload {
            target: self.target,
            body: f(self.body),
            names: self.names,
            notices: self.notices,
            meta: self.meta,
        }
    }
}

impl From<ChunkedPayload> for Payload {
    /// The payload with its body joined (one copy).
    fn from(payload: ChunkedPayload) -> Self {
        payload.map_body(|body| body.to_vec())
    }
}

/// Bookkeeping about one compile.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct PayloadMeta {
    /// The turn this compile belongs to (0-based).
    pub turn: u64,
    /// The sent tools' names as chef names them, in order, before the target's name rule
    /// (`timezone.convert` here may travel as `timezone_convert`; see
    /// [`Payload::names`]).
    pub wire_tools: Vec<ToolName>,
    /// Why each kept flat tool was kept.
    pub kept: Vec<(ToolName, KeepReason)>,
    /// Memory keys injected.
    pub memory_keys: Vec<String>,
    /// Memory keys that expired at this compile.
    pub expired_memory_keys: Vec<String>,
    /// The context window this compile belongs to (see [`crate::overflow`]).
    pub window: u64,
    /// Cache-audit findings for this compile (Anthropic, with
    /// [`ChefConfig::with_cache_audit`]).
    pub cache_issues: Vec<chef_anthropic::CacheIssue>,
    /// The name of the skill active at this compile.
    pub active_skill: Option<String>,
    /// Whether the body reused the serialised history prefix of earlier turns instead of
    /// compiling the whole history (the bytes are the same either way). An optimisation's
    /// trace for chef's own tests and profilers, not part of the supported API.
    #[doc(hidden)]
    pub reused_prefix: bool,
}

type Subscriber = Arc<dyn Fn(&ChefEvent) + Send + Sync>;
type CompiledHook = Arc<dyn Fn(&Compiled<'_>) + Send + Sync>;

/// One agent session: tools, conversation, announcements, memory.
///
/// ```
/// use chef::{Chef, ChefConfig, Routed};
/// use chef_ir::{Message, Target, ToolCall, ToolDefinition};
/// use serde_json::json;
///
/// let mut chef = Chef::new(ChefConfig::default());
/// chef.register_tools(vec![
///     ToolDefinition::new("delete_file", json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})),
/// ])?;
/// chef.set_system_prompt(vec![Message::system("You manage files.")]);
/// chef.push(Message::user("Remove notes.txt"));
/// chef.set_blocked_tools(["delete_file"]);
///
/// let payload = chef.compile(Target::Anthropic)?;
/// assert!(String::from_utf8(payload.body)?.contains("delete_file")); // the list never moves
///
/// let call = ToolCall::new("c1", "delete_file", json!({"path": "notes.txt"}));
/// assert!(matches!(chef.route(&call), Routed::Blocked { .. }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Chef {
    pub(crate) config: ChefConfig,
    /// Which `Chef` value this is, process-wide (a journal tells its session's appends from
    /// another session's; a restore keeps it).
    instance: u64,
    /// The registry, the blocklist and allowlist, loaded toolkits and the latest selection.
    pub(crate) tools: parts::ToolState,
    /// The tools and name table the model answers (what `route` resolves against).
    routing: parts::Routing,
    /// The system prompt, the history, the turn counter and the overflow state.
    conversation: parts::Conversation,
    announcements: Announcements,
    /// Memory and the stores behind the owned tools.
    pub(crate) storage: parts::Storage,
    /// The offload policy and the results not yet written.
    offloading: parts::Offloading,
    /// The registered skills and the active one.
    skill_state: parts::SkillState,
    /// Event subscribers and compile hooks.
    events: parts::Events,
    /// The guardrail, the prefill, the dynamic state and the context injectors.
    context: parts::ContextLayers,
    /// The per-target caches of compiling (tool bytes, history prefixes).
    compiler: compiler::TurnCompiler,
}

impl std::fmt::Debug for Chef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chef")
            .field("config", &self.config)
            .field("tools", &self.tools.pruner.all_tools().len())
            .field("history", &self.conversation.history.len())
            .field("announcements", &self.announcements.as_slice().len())
            .field("turn", &self.conversation.turn)
            .finish_non_exhaustive()
    }
}

const _: fn() = || {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<Chef>();
    assert_send_sync::<Payload>();
    assert_send_sync::<ChunkedPayload>();
    assert_send_sync::<Routed>();
};

/// A new [`Chef::instance`] number.
fn next_instance() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Chef {
    /// A session with this configuration and nothing registered.
    pub fn new(config: ChefConfig) -> Self {
        Self {
            tools: parts::ToolState::new(Pruner::new(config.strategy)),
            config,
            instance: next_instance(),
            routing: parts::Routing::default(),
            conversation: parts::Conversation::default(),
            announcements: Announcements::default(),
            storage: parts::Storage::default(),
            offloading: parts::Offloading::default(),
            skill_state: parts::SkillState::default(),
            events: parts::Events::default(),
            context: parts::ContextLayers::default(),
            compiler: compiler::TurnCompiler::default(),
        }
    }

    /// An independent session that starts where this one is, sharing what was prepared from
    /// the tools instead of preparing it again.
    ///
    /// The fork has a copy of everything a snapshot carries (the configuration, the
    /// registry, blocklist and allowlist, loaded toolkits, announcements, system prompt,
    /// history, memory, dynamic state, overflow state and turn counter) plus the context
    /// injectors, tokenizer and summarizer. What was prepared from the tools is shared, not
    /// copied: the parsed tool definitions, the search index, the compressed tool list of
    /// the latest selection and each target's serialised tools. So a fork of a session that
    /// has compiled once compiles its next turn without registering, compressing or
    /// serialising the catalogue again: serve many conversations from one prepared
    /// template.
    ///
    /// ```
    /// # use chef::{Chef, ChefConfig};
    /// # use chef_ir::{Message, Target, ToolDefinition};
    /// # use serde_json::json;
    /// let mut template = Chef::new(ChefConfig::default());
    /// template.register_tools(vec![ToolDefinition::new(
    ///     "get_weather",
    ///     json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    /// )
    /// .with_description("Weather for a city")])?;
    /// template.compile(Target::Anthropic)?; // prepares the tools once
    ///
    /// let mut session = template.fork();
    /// session.push(Message::user("Weather in Oslo?"));
    /// let payload = session.compile(Target::Anthropic)?;
    /// # assert!(!payload.body.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// After the fork the two sessions change independently: a message, registration or
    /// blocklist change in one never reaches the other. Not carried:
    /// - event subscribers, of the session and of its memory, and
    ///   [`on_compiled`](Self::on_compiled) hooks: subscribe to the fork;
    /// - history prefixes kept for reuse between turns: the fork makes its own.
    ///
    /// Shared, since they are storage that many sessions may use: the `context` tool's
    /// store ([`with_store`](Self::with_store)) and the memory write-through store
    /// ([`with_memory_store`](Self::with_memory_store)). Two sessions writing the same
    /// memory keys to one store are resolved as for workers sharing it. A
    /// [`Journal`](crate::snapshot::journal::Journal) tells a fork from its parent: give
    /// each its own key.
    #[must_use]
    pub fn fork(&self) -> Self {
        Self {
            config: self.config.clone(),
            instance: next_instance(),
            tools: self.tools.fork(),
            routing: self.routing.clone(),
            conversation: self.conversation.fork(),
            announcements: self.announcements.clone(),
            storage: self.storage.fork(),
            offloading: self.offloading.clone(),
            skill_state: self.skill_state.clone(),
            events: parts::Events::default(),
            context: self.context.clone(),
            compiler: self.compiler.fork(),
        }
    }

    /// Uses `store` for the `context` tool's namespaces other than memory (default: an
    /// in-memory store owned by this session).
    #[must_use]
    pub fn with_store(mut self, store: Arc<dyn StorageBackend>) -> Self {
        self.storage.store = store;
        self
    }

    /// The store behind the `context` tool.
    pub fn store(&self) -> &Arc<dyn StorageBackend> {
        &self.storage.store
    }

    /// Persists every memory write an owned tool makes to `store` before the tool answers
    /// (write-through), so sessions on other workers sharing `store` see it. Load the
    /// session's memory from the same store first ([`Memory::load`]).
    ///
    /// A write that meets another writer's change is resolved by [`Memory::persist`] where
    /// that is safe (the model never hears of it; a [`MemoryEvent::PersistRetried`]
    /// arrives as [`ChefEvent::Memory`]). Where it is not safe, nothing is overwritten: the
    /// key is reloaded from the store and the tool's reply tells the model its change was
    /// not saved and to look again. Direct writes by host code are not written through;
    /// persist them with [`Memory::persist`].
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
    /// use std::sync::Arc;
    /// use chef::memory::Memory;
    /// use chef::store::{MemoryBackend, StorageBackend};
    /// use chef::{Chef, ChefConfig, OwnedCall};
    /// use serde_json::json;
    ///
    /// let store: Arc<dyn StorageBackend> = Arc::new(MemoryBackend::new());
    /// let worker = || Chef::new(ChefConfig::default())
    ///     .with_memory(Memory::new())
    ///     .with_memory_store(Arc::clone(&store));
    /// let (mut a, mut b) = (worker(), worker());
    /// let create = |value: &str| OwnedCall {
    ///     id: "c1".into(),
    ///     name: "create_memory".into(),
    ///     arguments: json!({"key": "lang", "value": value}),
    /// };
    /// assert!(!b.handle_tool(&create("Rust")).await?.is_error);
    /// // The same fact again: already applied, not an error.
    /// assert!(!a.handle_tool(&create("Rust")).await?.is_error);
    /// // Another value: refused, and `c` now shows what is stored.
    /// let mut c = worker();
    /// let reply = c.handle_tool(&create("Go")).await?;
    /// assert!(reply.is_error && reply.text.contains("created by someone else"));
    /// assert_eq!(c.memory().and_then(|m| m.get("lang")).map(|e| e.value()), Some("Rust"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// [`MemoryEvent::PersistRetried`]: crate::memory::MemoryEvent::PersistRetried
    #[must_use]
    pub fn with_memory_store(mut self, store: Arc<dyn StorageBackend>) -> Self {
        self.storage.memory_store = Some(store);
        self
    }

    /// The store owned-tool memory writes are persisted to, when configured.
    pub fn memory_store(&self) -> Option<&Arc<dyn StorageBackend>> {
        self.storage.memory_store.as_ref()
    }

    /// Answers a call of a library-owned tool (see [`Routed::Owned`]).
    ///
    /// Mistakes the model can correct come back as an [`OwnedReply`] with `is_error` set;
    /// only failures of the host (the store's I/O) and a call of a tool chef does not own
    /// are `Err`. The gate runs here as well as in [`Chef::route`]: a blocked owned tool
    /// (`create_memory`, `context`, `new_context`, …) is answered with the blocked reply,
    /// as an error result, and does nothing.
    /// With a [memory store](Self::with_memory_store) the call's memory writes are persisted
    /// before it answers.
    pub async fn handle_tool(&mut self, call: &OwnedCall) -> Result<OwnedReply, ChefError> {
        if !crate::owned::is_owned_name(&call.name) {
            return Err(ChefError::NotOwned(call.name.clone()));
        }
        // Gated here too, so an owned call built by hand (or routed before a blocklist
        // change) never runs a blocked tool.
        if let Some(blocked) = self.blocked(&[call.name.as_str()]) {
            self.emit(&ChefEvent::ToolBlocked {
                name: blocked.clone(),
            });
            return Ok(OwnedReply {
                text: crate::gate::blocked_reason(&blocked),
                is_error: true,
            });
        }
        // Offloaded results the model may be about to read are written first.
        self.flush_offloads().await?;
        if call.name == crate::owned::LOAD_SKILL {
            return Ok(self.load_skill_reply(&call.arguments));
        }
        let before = self
            .storage
            .memory
            .as_ref()
            .map(crate::memory::Memory::state);
        let store = Arc::clone(&self.storage.store);
        let writable = self.config.writable.clone();
        let reply = crate::owned::handle(
            &call.name,
            &call.arguments,
            crate::owned::Context {
                memory: self.storage.memory.as_mut(),
                store: &store,
                writable: &writable,
                new_context_requested: &mut self.conversation.new_context_requested,
            },
        )
        .await?;
        let after = self
            .storage
            .memory
            .as_ref()
            .map(crate::memory::Memory::state);
        if after == before {
            return Ok(reply);
        }
        self.emit(&ChefEvent::MemoryWritten {
            tool: call.name.clone(),
        });
        match (
            &self.storage.memory_store,
            self.storage.memory.as_mut(),
            before,
            after,
        ) {
            (Some(backend), Some(memory), Some(before), Some(after)) => {
                let keys = crate::memory::changed_keys(&before.entries, &after.entries);
                let backend = Arc::clone(backend);
                Ok(crate::owned::write_through(memory, &*backend, &keys, reply).await?)
            }
            _ => Ok(reply),
        }
    }

    /// Asks for a fresh context window: the next overflow step summarises or archives
    /// everything before the last turn.
    pub fn request_new_context(&mut self) -> &mut Self {
        self.conversation.new_context_requested = true;
        self
    }

    /// Whether a new context window was requested and not yet acted on.
    pub fn new_context_requested(&self) -> bool {
        self.conversation.new_context_requested
    }

    /// Sets the output guardrail (replacing any), or clears it with `None`.
    ///
    /// Its [`instruction`](crate::guardrail::Guardrail::instruction) is the last message of
    /// every request from now on (a positional system message, before trailing assistant
    /// messages; each target places it as its API allows), after the cached prefix, so the
    /// cache holds. Snapshots and the journal carry it. Check the model's answer with
    /// [`check_reply`](Self::check_reply).
    ///
    /// ```
    /// use chef::{Chef, ChefConfig, guardrail::{Guardrail, Verdict}};
    /// use chef_ir::{Message, Target};
    ///
    /// let mut chef = Chef::new(ChefConfig::default());
    /// chef.set_guardrail(Some(Guardrail::tag("answer")?)).set_prefill(Some("<answer>"));
    /// chef.push(Message::user("2 + 2?"));
    /// let body = String::from_utf8(chef.compile(Target::Anthropic)?.body)?;
    /// assert!(body.contains("inside <answer> and </answer>"));
    /// assert!(body.contains(r#"{"role":"assistant","content":[{"type":"text","text":"<answer>"}]}"#));
    /// assert!(matches!(chef.check_reply("<answer>4</answer>"), Some(Verdict::Pass { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_guardrail(&mut self, guardrail: Option<crate::guardrail::Guardrail>) -> &mut Self {
        self.context.guardrail = guardrail.map(with_instruction);
        self
    }

    /// The output guardrail in force.
    pub fn guardrail(&self) -> Option<&crate::guardrail::Guardrail> {
        self.context.guardrail.as_ref().map(|(g, _)| g)
    }

    /// Sets the text the model's reply must start with (replacing any), or clears it with
    /// `None`. Anthropic gets it natively (a trailing assistant message); OpenAI Chat,
    /// OpenAI Responses and Gemini, which cannot start a reply with given text, get the
    /// provider crate's instruction after the last message instead, and the payload's
    /// notices say so. Snapshots and the journal carry it.
    pub fn set_prefill(&mut self, prefill: Option<impl Into<String>>) -> &mut Self {
        self.context.prefill = prefill.map(Into::into);
        self
    }

    /// The prefill in force.
    pub fn prefill(&self) -> Option<&str> {
        self.context.prefill.as_deref()
    }

    /// Checks the model's answer against the guardrail in force (`None` without one). With
    /// a prefill, pass the reply with the prefill in front (the provider returns only what
    /// follows it).
    pub fn check_reply(&self, reply: &str) -> Option<crate::guardrail::Verdict> {
        self.guardrail().map(|g| g.check(reply))
    }

    /// Attaches memory (enables the memory tools in legacy mode and the memory layer).
    #[must_use]
    pub fn with_memory(mut self, mut memory: Memory) -> Self {
        self.events.memory_bridges = bridge_all(&self.events.subscribers, &mut memory);
        self.storage.memory = Some(memory);
        self.touch();
        self
    }

    /// The configuration.
    pub fn config(&self) -> &ChefConfig {
        &self.config
    }

    /// The registry (read-only; mutate through the session so caches stay right).
    pub fn pruner(&self) -> &Pruner {
        &self.tools.pruner
    }

    /// Memory, when attached.
    pub fn memory(&self) -> Option<&Memory> {
        self.storage.memory.as_ref()
    }

    /// Memory, mutably (direct writes by host code).
    pub fn memory_mut(&mut self) -> Option<&mut Memory> {
        self.storage.memory.as_mut()
    }

    /// Subscribes to session events, until [`unsubscribe`](Self::unsubscribe).
    ///
    /// Memory changes (set, deleted, expired) arrive as [`ChefEvent::Memory`], whether the
    /// memory was attached before or after subscribing.
    ///
    /// ```
    /// use std::sync::{Arc, atomic::{AtomicUsize, Ordering}};
    /// use chef::{Chef, ChefConfig, ChefEvent};
    /// use chef_ir::{Message, Target};
    ///
    /// let mut chef = Chef::new(ChefConfig::default());
    /// let done = Arc::new(AtomicUsize::new(0));
    /// let seen = Arc::clone(&done);
    /// let subscription = chef.subscribe(move |event| {
    ///     if matches!(event, ChefEvent::CompileDone { .. }) {
    ///         seen.fetch_add(1, Ordering::Relaxed);
    ///     }
    /// });
    /// chef.push(Message::user("hi"));
    /// chef.compile(Target::Anthropic)?;
    /// assert!(chef.unsubscribe(subscription));
    /// chef.compile(Target::Anthropic)?;
    /// assert_eq!(done.load(Ordering::Relaxed), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn subscribe(
        &mut self,
        subscriber: impl Fn(&ChefEvent) + Send + Sync + 'static,
    ) -> Subscription {
        let subscriber: Subscriber = Arc::new(subscriber);
        let id = Self::next_subscription();
        if let Some(memory) = self.storage.memory.as_mut() {
            let bridge = bridge_memory_events(memory, Arc::clone(&subscriber));
            self.events.memory_bridges.push((id, bridge));
        }
        self.events.subscribers.push((id, subscriber));
        id
    }

    /// Calls `hook` at the end of every successful compile (after
    /// [`ChefEvent::CompileDone`]) with the compiled request, borrowed: the body (read
    /// in place, piece by piece), names, notices and meta. For logging the exact bytes
    /// sent, metrics on the payload, or a cache audit of your own. A hook cannot change the
    /// request, so the bytes stay the same for the same input. Ends with
    /// [`unsubscribe`](Self::unsubscribe).
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use chef::{Chef, ChefConfig};
    /// use chef_ir::{Message, Target};
    ///
    /// let mut chef = Chef::new(ChefConfig::default());
    /// let last = Arc::new(Mutex::new(Vec::new()));
    /// let sink = Arc::clone(&last);
    /// chef.on_compiled(move |compiled| *sink.lock().unwrap() = compiled.body_to_vec());
    /// chef.push(Message::user("hi"));
    /// let payload = chef.compile(Target::OpenAiChat)?;
    /// assert_eq!(*last.lock().unwrap(), payload.body);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn on_compiled(
        &mut self,
        hook: impl Fn(&Compiled<'_>) + Send + Sync + 'static,
    ) -> Subscription {
        let id = Self::next_subscription();
        self.events.compiled_hooks.push((id, Arc::new(hook)));
        id
    }

    /// Ends a subscription made with [`subscribe`](Self::subscribe) or
    /// [`on_compiled`](Self::on_compiled) (its memory events too); `false` when it was not
    /// there (already ended, or made on another session).
    pub fn unsubscribe(&mut self, subscription: Subscription) -> bool {
        let before = self.events.subscribers.len() + self.events.compiled_hooks.len();
        self.events
            .subscribers
            .retain(|(id, _)| *id != subscription);
        self.events
            .compiled_hooks
            .retain(|(id, _)| *id != subscription);
        let memory = self.storage.memory.as_mut();
        let mut bridges = std::mem::take(&mut self.events.memory_bridges);
        if let Some(memory) = memory {
            bridges.retain(|(id, bridge)| {
                *id != subscription || {
                    memory.unsubscribe(*bridge);
                    false
                }
            });
        }
        self.events.memory_bridges = bridges;
        before != self.events.subscribers.len() + self.events.compiled_hooks.len()
    }

    fn next_subscription() -> Subscription {
        // Process-wide, so a subscription of another session (a fork included) is never
        // mistaken for one of this session's.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Subscription(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }

    pub(crate) fn emit(&self, event: &ChefEvent) {
        for (_, s) in &self.events.subscribers {
            s(event);
        }
    }

    fn touch(&mut self) {
        self.tools.epoch += 1;
        self.tools.selection.forget();
    }

    // ---- tools ------------------------------------------------------------------------

    /// Replaces the flat tools (names must be unique).
    pub fn register_tools(&mut self, tools: Vec<ToolDefinition>) -> Result<&mut Self, ChefError> {
        self.tools.pruner.register_tools(tools)?;
        self.touch();
        Ok(self)
    }

    /// Replaces the namespaces.
    pub fn register_namespaces(&mut self, groups: Vec<ToolGroup>) -> Result<&mut Self, ChefError> {
        self.tools.pruner.register_namespaces(groups)?;
        self.touch();
        Ok(self)
    }

    /// Replaces the lazy toolkits. At levels 3–4 a loaded toolkit's tools are sent beside
    /// the dispatcher, so a member named `t` or `q` is refused
    /// ([`RegistryError::ReservedToolName`](crate::RegistryError::ReservedToolName)).
    pub fn register_toolkits(&mut self, groups: Vec<ToolGroup>) -> Result<&mut Self, ChefError> {
        self.check_toolkit_names(&groups)?;
        self.tools.pruner.register_toolkits(groups)?;
        self.touch();
        Ok(self)
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

    /// Replaces the blocklist. The compiled tool list does not change; with tool-change
    /// announcements on, the model is told which tools are blocked.
    ///
    /// Entries match names the way [`route`](Self::route) does, ignoring letter case and
    /// separators (`GDrive_Upload_File` blocks `gdrive_upload_file`). The report lists the
    /// entries that match no registered tool, namespace, toolkit or owned tool, so a typo
    /// never leaves a tool open unnoticed; such entries are also named, once each, in the
    /// next compile's [`Payload::notices`] (the registry may change after blocking).
    ///
    /// ```
    /// use chef::{Chef, ChefConfig};
    /// use chef_ir::ToolDefinition;
    /// use serde_json::json;
    ///
    /// let mut chef = Chef::new(ChefConfig::default());
    /// chef.register_tools(vec![ToolDefinition::new("gdrive_upload_file", json!({"type": "object"}))])?;
    /// let report = chef.set_blocked_tools(["GDrive_Upload_File", "gdrive_uplaod"]);
    /// assert_eq!(report.unmatched, ["gdrive_uplaod"]);
    /// assert!(chef.pruner().blocklist().blocks("gdrive_upload_file"));
    /// # Ok::<(), chef::ChefError>(())
    /// ```
    pub fn set_blocked_tools<I, S>(&mut self, names: I) -> BlockReport
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools.pruner.set_blocked_tools(names);
        self.tools.unmatched_reported.clear();
        self.tools.unmatched_checked = None;
        if self.config.announce_tool_changes {
            self.announce_blocked();
        }
        BlockReport {
            unmatched: self.unmatched_blocked_tools(),
        }
    }

    /// Blocklist entries that match no registered flat tool, namespace, namespace member,
    /// toolkit, toolkit member or owned tool, in blocklist order.
    pub fn unmatched_blocked_tools(&self) -> Vec<String> {
        let pruner = &self.tools.pruner;
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
            .chain([crate::namespace::LOAD_TOOLKIT]);
        pruner.blocklist().unmatched(names)
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

    // ---- pruning policy ----------------------------------------------------------------

    /// Replaces the pruning policy (which flat tools each compile keeps) from the next
    /// compile on. Like the rest of the policy set on a session — [`set_allowlist`],
    /// [`set_task`], [`set_embedder`] — it is the session's own setting, not snapshot
    /// state: [`restore`](Self::restore) and [`load`](Self::load) keep it.
    ///
    /// [`set_allowlist`]: Self::set_allowlist
    /// [`set_task`]: Self::set_task
    /// [`set_embedder`]: Self::set_embedder
    pub fn set_prune_policy(&mut self, policy: PrunePolicy) -> &mut Self {
        self.config.prune = policy;
        self
    }

    /// The pruning policy in force.
    pub fn prune_policy(&self) -> &PrunePolicy {
        &self.config.prune
    }

    /// Bounds every policy to these flat tools (case-insensitive exact names): a tool off
    /// the list is never kept, whatever the policy says. Under [`PrunePolicy::Ranked`] the
    /// whole catalogue is ranked (scores and abstention as without the list) and the best
    /// `top_k` allowed tools are kept, so `top_k` is not spent on tools the list removes
    /// (a kept tool's [`KeepReason`](crate::prune::KeepReason) rank is its catalogue rank). `None` lifts the bound. Kept across `restore`.
    pub fn set_allowlist<I, S>(&mut self, names: Option<I>) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools.allowlist = names.map(|n| n.into_iter().map(Into::into).collect());
        self
    }

    /// The session's allowlist, when set.
    pub fn allowlist(&self) -> Option<&[String]> {
        self.tools.allowlist.as_deref()
    }

    /// Prunes (and ranks) on this task text instead of the conversation's request (see
    /// [`pruning_task`](Self::pruning_task)); `None` goes back to the conversation. Kept
    /// across `restore`.
    pub fn set_task(&mut self, task: Option<impl Into<String>>) -> &mut Self {
        self.tools.task_override = task.map(Into::into);
        self
    }

    /// Ranks the session's tools with the hybrid of BM25F and this embedding model
    /// (`chef_compress::search::dense`; [`PrunePolicy::Ranked`] uses it from the next
    /// compile). The catalogue is embedded on the first ranking after each registration;
    /// if the model fails, the lexical index ranks. An embedder is code, so snapshots do
    /// not carry it: `restore` and `load` keep the session's own.
    pub fn set_embedder(&mut self, config: chef_compress::search::dense::DenseConfig) -> &mut Self {
        self.tools.pruner.set_embedder(config);
        self
    }

    /// Ranks the session's tools with BM25F alone instead of the default hybrid (BM25F and
    /// the static model bundled in chef; see [`Pruner::set_embedder`]). Kept across
    /// `restore`, like [`set_embedder`](Self::set_embedder).
    pub fn set_lexical_ranking(&mut self) -> &mut Self {
        self.tools.pruner.set_lexical_ranking();
        self
    }

    /// The toolkits loaded so far, in load order.
    pub fn loaded_toolkits(&self) -> &[String] {
        &self.tools.loaded_toolkits
    }

    /// The tool-search directory to place in the system prompt (`""` without toolkits).
    /// chef also adds it to its own system message at compile.
    pub fn directory_xml(&self) -> String {
        self.tools.pruner.directory_xml()
    }

    /// Whether chef owns (answers) a tool of this name.
    pub fn owns_tool(&self, name: &str) -> bool {
        crate::owned::is_owned_name(name)
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
        )
    }

    /// The current selection without caching it (for `&self` readers before any compile).
    pub(crate) fn selection_now(&self) -> Result<Arc<TurnTools>, ChefError> {
        let task = self.task();
        self.tools
            .selection
            .peek(self.select_input(&task), &self.owned_key())
    }

    /// What a selection reads from the session (the owned tools come from the
    /// [`select::Selection`]).
    fn select_input<'a>(&'a self, task: &'a str) -> SelectInput<'a> {
        SelectInput {
            pruner: &self.tools.pruner,
            epoch: self.tools.epoch,
            policy: &self.config.prune,
            task,
            loaded: &self.tools.loaded_toolkits,
            options: &self.config.compress,
            owned: &[],
            allowlist: self.tools.allowlist.as_deref(),
            skill_bound: self.skill_bound(),
        }
    }

    /// The tools of this turn, kept as the latest selection.
    pub(crate) fn turn_tools(&mut self) -> Result<Arc<TurnTools>, ChefError> {
        let task = self.task();
        let owned_key = self.owned_key();
        // Lent out while it reads the session's settings, and put back whatever happens.
        let mut selection = std::mem::take(&mut self.tools.selection);
        let chosen = selection.select(self.select_input(&task), owned_key);
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

    /// The dispatcher code of a real tool at levels 3–4, in the map of the latest compile
    /// (the one the model was shown; before any compile, the current tools). `None` below
    /// level 3, or for a tool not in that map.
    pub fn code_for(&self, name: &str) -> Option<String> {
        let tools = self.routing_tools().ok()?;
        tools.stable.code_for(name).ok().map(str::to_owned)
    }

    /// The call a model would write for `name(args)` in the map of the latest compile
    /// (before any compile, of the current tools): `t(f=<code>, a=args)` at level 3, the
    /// compound op at level 2, the call itself at levels 0–1. `None` for a tool not in that
    /// map. A host that replays history written with real names (a gateway, say) encodes
    /// each earlier call with it; tests and demos use it to play the model.
    pub fn encode_call(&self, name: &str, args: serde_json::Value) -> Option<chef_ir::ToolCall> {
        let tools = self.routing_tools().ok()?;
        let encoded = tools.stable.encode_call(name, args).ok()?;
        Some(chef_ir::ToolCall::new(
            format!("call_{name}"),
            encoded.name,
            encoded.args,
        ))
    }

    /// A Chat Completions `response_format` that constrains the reply to one call of the
    /// latest compile's wire tools (at level 3: `t` or `q`), named as that compile put them
    /// on the wire: [`chef_openai::chat::response_format`] for the turn. For models and
    /// servers that do not emit native tool calls (llama.cpp turns the schema into a
    /// grammar): add it to the body of [`compile`](Self::compile)`(Target::OpenAiChat)` as
    /// `response_format`, and recover the reply's JSON content with
    /// [`recover_text_calls`](Self::recover_text_calls). Call it after that compile (its
    /// name table is the one used). `None` when the turn has no tools or its tools cannot
    /// be built.
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
    /// assert_eq!(body["response_format"]["json_schema"]["schema"]["properties"]["name"]["enum"], json!(["t", "q"]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn response_format(&self) -> Option<chef_openai::chat::wire::ResponseFormat> {
        let tools = self.routing_tools().ok()?;
        chef_openai::chat::response_format(&tools.wire_tools(), &self.routing.names)
    }

    /// The text pruning ranks on this turn (see [`PrunePolicy::Ranked`]): the override set
    /// with [`set_task`](Self::set_task), else the request as the conversation states it.
    ///
    /// That is the latest user message that has text. Tool results do not count (also when
    /// they travel in a user message, as Anthropic's do), so while the model works through
    /// tool calls the task stays the request they serve — and the ranked tool list, and the
    /// prompt cache, stay put. A short reply of four words or fewer ("yes", "go ahead",
    /// "the second one") to an assistant message that ends with a question answers that
    /// question: the task is then the user's request before it, the assistant's question,
    /// and the reply, one per line, in that order. A short message after anything else is
    /// a request of its own ("now use the shell"). Ranked pruning ranks such a task line by
    /// line when the index abstains on it as a whole (see [`Pruner::rank_by_task`]).
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
    ///     chef.pruning_task(),
    ///     "Clean up my repository\nShall I delete the merged branches?\nyes"
    /// );
    /// ```
    pub fn pruning_task(&self) -> String {
        self.task()
    }

    fn task(&self) -> String {
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

    // ---- conversation -----------------------------------------------------------------

    /// Replaces the system prompt (system messages; breakpoints as the caller sets them).
    pub fn set_system_prompt(&mut self, messages: Vec<Message>) -> &mut Self {
        self.conversation.system = messages;
        self
    }

    /// The system prompt.
    pub fn system_prompt(&self) -> &[Message] {
        &self.conversation.system
    }

    /// Appends a message to the history.
    ///
    /// With an [offload policy](Self::set_offload_policy), a tool result over its limit is
    /// replaced by its preview here, and its full text written to the store at the next
    /// async step (see [`flush_offloads`](Self::flush_offloads)).
    pub fn push(&mut self, message: Message) -> &mut Self {
        let message = if self.offloading.offload.is_some() {
            self.offload_incoming(message)
        } else {
            message
        };
        self.conversation.history.push(message);
        self
    }

    /// Replaces the history.
    pub fn set_history(&mut self, history: Vec<Message>) -> &mut Self {
        self.conversation.history.replace(history);
        self
    }

    /// The history.
    pub fn history(&self) -> &[Message] {
        &self.conversation.history
    }

    /// Clears the history (announcements, memory, toolkits and the turn counter stay). This
    /// starts a new context window: the circuit breaker resets and the handoff notice may
    /// show again.
    pub fn clear_history(&mut self) -> &mut Self {
        self.conversation.history.rewrite(Vec::clear);
        self.conversation.overflow.next_window();
        self
    }

    /// The turn counter: compiles so far.
    pub fn turn(&self) -> u64 {
        self.conversation.turn
    }

    // ---- announcements ----------------------------------------------------------------

    /// Adds an announcement or updates the one with this id in place.
    pub fn announce(
        &mut self,
        id: impl Into<String>,
        content: impl Into<String>,
        channel: Channel,
    ) -> &mut Self {
        let id = id.into();
        self.announce_internal(&id, content.into(), channel);
        self
    }

    /// Removes an announcement; true when one was removed.
    pub fn retract_announcement(&mut self, id: &str) -> bool {
        self.retract_internal(id)
    }

    /// The standing announcements, in order.
    pub fn announcements(&self) -> &[Announcement] {
        self.announcements.as_slice()
    }

    pub(crate) fn announce_internal(&mut self, id: &str, content: String, channel: Channel) {
        if self.announcements.announce(id, content, channel) {
            self.emit(&ChefEvent::AnnouncementChanged {
                id: id.to_owned(),
                present: true,
            });
        }
    }

    fn retract_internal(&mut self, id: &str) -> bool {
        let removed = self.announcements.retract(id);
        if removed {
            self.emit(&ChefEvent::AnnouncementChanged {
                id: id.to_owned(),
                present: false,
            });
        }
        removed
    }

    // ---- compile ----------------------------------------------------------------------

    /// Assembles the provider-neutral request for this turn without compiling it to a
    /// provider (also advances nothing).
    ///
    /// Its tools become the ones [`route`](Self::route) resolves against, as a compile's
    /// do (a loop that sends this request through its own client routes the reply).
    pub fn request(&mut self, target: Target) -> Result<Request, ChefError> {
        let tools = self.turn_tools()?;
        let notice = self.handoff_notice(false);
        let request = self.build_request(target, &tools, tools.wire_tools(), notice.as_slice())?;
        self.routing.latest = Some(tools);
        self.routing.names = request_names(&request, target);
        Ok(request)
    }

    fn build_request(
        &self,
        target: Target,
        tools: &TurnTools,
        wire_tools: Vec<ToolDefinition>,
        extra: &[Announcement],
    ) -> Result<Request, ChefError> {
        let layers = self.layers(target, tools, extra)?;
        let mut request = Request::new(layers.around(
            &self.conversation.system,
            &self.conversation.history,
            self.config.cache,
        ))
        .with_tools(wire_tools);
        request.prefill = layers.prefill;
        Ok(request)
    }

    /// Everything around the history that a compile adds: the stable system text, the
    /// memory layer, dynamic state and injected context, and the announcements of both
    /// channels. Fails when an injector does.
    fn layers(
        &self,
        target: Target,
        tools: &TurnTools,
        extra: &[Announcement],
    ) -> Result<assemble::Layers, ChefError> {
        let mut stable = tools.preamble();
        let directory = self.tools.pruner.directory_xml();
        if !directory.is_empty() {
            if !stable.is_empty() {
                stable.push_str("\n\n");
            }
            stable.push_str(&directory);
        }
        let style = match self.config.tools_mode {
            ToolsMode::Legacy => MemoryStyle::Legacy,
            ToolsMode::Unified => MemoryStyle::Unified,
        };
        let block = self
            .storage
            .memory
            .as_ref()
            .and_then(|m| m.render_block(style));
        let (memory_system, tail_memory) =
            match (&self.storage.memory, self.config.memory_placement) {
                (None, _) => (None, None),
                (Some(_), MemoryPlacement::AfterSystem) => (
                    Some(match &block {
                        Some(b) => format!("{}\n\n{b}", memory_instruction(style)),
                        None => memory_instruction(style).to_owned(),
                    }),
                    None,
                ),
                (Some(_), MemoryPlacement::BeforeHistoryTail) => {
                    (Some(memory_instruction(style).to_owned()), block)
                }
            };
        let (tail_dynamic, system_dynamic) = self.dynamic_parts(target)?;
        let (skill_system, tail_skill) = self.skill_parts();
        Ok(assemble::Layers {
            stable,
            skill_system,
            tail_skill,
            memory_system,
            tail_memory,
            tail_dynamic,
            system_dynamic,
            tail_announcements: self
                .announcements
                .render_for(target, Channel::UserTail, extra),
            system_announcements: self
                .announcements
                .render_for(target, Channel::System, extra),
            guardrail: self
                .context
                .guardrail
                .as_ref()
                .map(|(_, text)| text.clone()),
            prefill: self.context.prefill.clone(),
        })
    }

    /// Compiles the session into the request for `target`: one call per turn.
    ///
    /// Expired memory is swept first; with tool-change announcements on, a change in the
    /// tools the model can reach since the previous compile is announced. The turn counter
    /// advances by one, and the compiled tools become the ones [`route`](Self::route)
    /// resolves the model's calls against.
    ///
    /// A compile that fails (an injector, a provider, a tool list that cannot be built)
    /// changes nothing: memory entries it would have expired are kept, announcements and
    /// the turn counter stay as they were.
    pub fn compile(&mut self, target: Target) -> Result<Payload, ChefError> {
        Ok(self.compile_spliced(target)?.map_body(Spliced::into_vec))
    }

    /// [`compile`](Self::compile) with the body as chunks: the bytes this turn compiled
    /// afresh, and the bytes chef keeps across turns (the serialised tools and history
    /// prefix) shared rather than copied into one buffer. For long conversations, where
    /// copying the unchanged prefix is a large part of a turn; send it with vectored writes
    /// or as a streaming HTTP body (see [`ChunkedBody`]).
    ///
    /// The body's bytes are those `compile` would return, and everything else is the same
    /// as `compile`: notices, names, meta, events, the turn counter, a failure that
    /// changes nothing.
    ///
    /// ```
    /// use chef::{Chef, ChefConfig};
    /// use chef_ir::{Message, Target};
    ///
    /// let mut chef = Chef::new(ChefConfig::default());
    /// chef.push(Message::user("hi"));
    /// let payload = chef.compile_chunked(Target::Anthropic)?;
    /// let mut sent = Vec::new();
    /// payload.body.write_to(&mut sent)?; // vectored writes
    /// assert_eq!(sent.len(), payload.body.len());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn compile_chunked(&mut self, target: Target) -> Result<ChunkedPayload, ChefError> {
        Ok(self.compile_spliced(target)?.map_body(Spliced::into_chunks))
    }

    /// [`compile`](Self::compile) up to the body's form.
    fn compile_spliced(&mut self, target: Target) -> Result<Payload<Spliced>, ChefError> {
        self.emit(&ChefEvent::CompileStart {
            target,
            turn: self.conversation.turn,
        });
        let expired = self
            .storage
            .memory
            .as_mut()
            .map(Memory::take_expired)
            .unwrap_or_default();
        let tools = match self.turn_tools() {
            Ok(tools) => tools,
            Err(e) => {
                if let Some(memory) = self.storage.memory.as_mut() {
                    memory.unexpire(expired);
                }
                return Err(e);
            }
        };
        // Only the tool-change announcement moves the standing announcements here.
        let announcements = self
            .config
            .announce_tool_changes
            .then(|| self.announcements.clone());
        let handoff_noticed_window = self.conversation.overflow.handoff_noticed_window;
        let shown_before = self.announce_tool_delta(&tools);
        match self.compile_turn(target, &expired, Arc::clone(&tools)) {
            Ok(payload) => {
                if let Some(memory) = self.storage.memory.as_mut() {
                    memory.finish_expired(&expired);
                    memory.advance_turn();
                }
                self.routing.latest = Some(tools);
                self.routing.names = payload.names.clone();
                self.conversation.turn += 1;
                self.emit(&ChefEvent::CompileDone {
                    target,
                    bytes: payload.body.len(),
                });
                if !self.events.compiled_hooks.is_empty() {
                    let compiled = Compiled {
                        target,
                        body: &payload.body,
                        names: &payload.names,
                        notices: &payload.notices,
                        meta: &payload.meta,
                    };
                    for (_, hook) in &self.events.compiled_hooks {
                        hook(&compiled);
                    }
                }
                Ok(payload)
            }
            Err(e) => {
                if let Some(memory) = self.storage.memory.as_mut() {
                    memory.unexpire(expired);
                }
                if let Some(shown) = shown_before {
                    self.tools.shown = shown;
                }
                if let Some(announcements) = announcements {
                    self.announcements = announcements;
                }
                self.conversation.overflow.handoff_noticed_window = handoff_noticed_window;
                Err(e)
            }
        }
    }

    /// The fallible part of [`compile`](Self::compile); its caller commits or undoes.
    fn compile_turn(
        &mut self,
        target: Target,
        expired: &[crate::memory::MemoryEntry],
        tools: Arc<TurnTools>,
    ) -> Result<Payload<Spliced>, ChefError> {
        let notice = self.handoff_notice(true);
        let pending = self.pending_overflow_notice();
        let layers = self.layers(target, &tools, notice.as_slice())?;
        let compiler::CompiledTurn {
            mut wire,
            wire_tools,
            reused_prefix,
        } = self.compiler.compile(&compiler::TurnInput {
            target,
            tools: &tools,
            layers: &layers,
            system: &self.conversation.system,
            history: &self.conversation.history,
            generation: self.conversation.history.generation(),
            options: &self.config.targets,
            cache: self.config.cache,
            audit: self.config.cache_audit,
        })?;
        // One line per cause (an error result per loop turn would otherwise add one each).
        let known = wire.prefix_keys.as_ref().map(|(at, keys)| (*at, &keys[..]));
        wire.notices = crate::notices::fold_known(std::mem::take(&mut wire.notices), known);
        for issue in &wire.cache_issues {
            if self
                .compiler
                .audit_reported
                .insert(issue.dedupe_key.clone())
            {
                wire.notices.push(issue.to_string());
            }
        }
        wire.notices.extend(pending);
        wire.notices.extend(self.unmatched_blocklist_notices());
        wire.notices.extend(self.offload_compile_notices());
        wire.notices.extend(self.skill_notices());
        let meta = PayloadMeta {
            turn: self.conversation.turn,
            wire_tools,
            kept: tools.kept.clone(),
            memory_keys: self
                .storage
                .memory
                .as_ref()
                .map(|m| m.entries().map(|e| e.key().as_str().to_owned()).collect())
                .unwrap_or_default(),
            expired_memory_keys: expired
                .iter()
                .map(|e| e.key().as_str().to_owned())
                .collect(),
            window: self.conversation.overflow.window,
            cache_issues: std::mem::take(&mut wire.cache_issues),
            active_skill: self.active_skill().map(|s| s.name().to_owned()),
            reused_prefix,
        };
        Ok(Payload {
            target,
            body: wire.body,
            names: wire.names,
            notices: wire.notices,
            meta,
        })
    }

    /// Notices for blocklist entries that match nothing, each reported once. Checked once
    /// per blocklist and registry (the check reads every name).
    fn unmatched_blocklist_notices(&mut self) -> Vec<String> {
        if self.tools.pruner.blocked_tools().is_empty()
            || self.tools.unmatched_checked == Some(self.tools.epoch)
        {
            return Vec::new();
        }
        let unmatched = self.unmatched_blocked_tools();
        self.tools.unmatched_checked = Some(self.tools.epoch);
        unmatched
            .into_iter()
            .filter(|entry| self.tools.unmatched_reported.insert(entry.clone()))
            .map(|entry| {
                format!(
                    "blocklist entry \"{entry}\" matches no registered tool, namespace, \
                     toolkit or owned tool, so it blocks nothing (a typo?)"
                )
            })
            .collect()
    }

    /// Announces a change in the reachable tools since the previous compile; returns the
    /// names shown before (`None`: changes are not tracked), for a failed compile to put
    /// back.
    fn announce_tool_delta(&mut self, tools: &TurnTools) -> Option<Option<Vec<ToolName>>> {
        // Only tracked when announced: collecting and sorting every reachable name is
        // work a turn should not pay for otherwise.
        if !self.config.announce_tool_changes {
            return None;
        }
        let before = self.tools.shown.replace(tools.reachable());
        let (Some(previous), Some(now)) = (before.as_ref(), self.tools.shown.as_ref()) else {
            return Some(before);
        };
        // A blocked tool is never announced as available.
        let added: Vec<&str> = now
            .iter()
            .filter(|n| previous.binary_search(n).is_err())
            .map(ToolName::as_str)
            .filter(|n| {
                let group = tools.toolkit_of.get(*n).map(String::as_str).or_else(|| {
                    tools
                        .namespaces
                        .iter()
                        .find(|g| g.tools.iter().any(|t| t.name == **n))
                        .map(|g| g.name.as_str())
                });
                let names: Vec<&str> = std::iter::once(*n).chain(group).collect();
                self.blocked(&names).is_none()
            })
            .collect();
        let removed: Vec<&str> = previous
            .iter()
            .filter(|n| now.binary_search(n).is_err())
            .map(ToolName::as_str)
            .collect();
        let mut text = Vec::new();
        if !added.is_empty() {
            text.push(format!("Tools now available: {}.", added.join(", ")));
        }
        if !removed.is_empty() {
            text.push(format!(
                "Tools no longer available: {}.",
                removed.join(", ")
            ));
        }
        if text.is_empty() {
            // No longer new: the last delta has been shown once.
            self.retract_internal("tools:changed");
        } else {
            self.announce_internal("tools:changed", text.join(" "), Channel::Auto);
        }
        Some(before)
    }
}

/// Forwards `memory`'s change events to a session subscriber.
/// A guardrail with its instruction rendered, as the session keeps it.
fn with_instruction(
    guardrail: crate::guardrail::Guardrail,
) -> (crate::guardrail::Guardrail, String) {
    let text = guardrail.instruction();
    (guardrail, text)
}

fn bridge_memory_events(
    memory: &mut Memory,
    subscriber: Subscriber,
) -> crate::memory::SubscriptionId {
    memory.subscribe(move |event| subscriber(&ChefEvent::Memory(event.clone())))
}

/// Subscribes every session subscriber to `memory`'s events; the bridges, for unsubscribing.
fn bridge_all(
    subscribers: &[(Subscription, Subscriber)],
    memory: &mut Memory,
) -> Vec<(Subscription, crate::memory::SubscriptionId)> {
    subscribers
        .iter()
        .map(|(id, s)| (*id, bridge_memory_events(memory, Arc::clone(s))))
        .collect()
}

/// The name table `target`'s provider crate builds for `request`: its tools and the tools
/// its history calls (and, for OpenAI and Gemini, names its tool results), under the
/// target's rule. What a compile's [`Payload::names`] holds, for [`Chef::request`].
fn request_names(request: &Request, target: Target) -> WireNames {
    let named = request
        .messages
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|c| match c {
            chef_ir::Content::ToolCall(call) => Some(&call.name),
            chef_ir::Content::ToolResult(chef_ir::ToolResult {
                name: Some(name), ..
            }) if target != Target::Anthropic => Some(name),
            _ => None,
        });
    WireNames::new(
        request.tools.iter().map(|t| &t.name).chain(named),
        target.name_rule(),
    )
}

fn memory_instruction(style: MemoryStyle) -> &'static str {
    match style {
        MemoryStyle::Legacy => {
            "You have a memory that outlasts this conversation. When you learn a durable fact \
             (a preference, a convention, a decision), save it with create_memory; change or \
             remove it with modify_memory. What you saved is shown below each turn."
        }
        MemoryStyle::Unified => {
            "You have a memory that outlasts this conversation, at context://memory/. When you \
             learn a durable fact (a preference, a convention, a decision), save it with the \
             context tool (command create); edit or delete it the same way. Its entries are \
             shown below each turn."
        }
    }
}

/// A user reply of this many words or fewer is read with what it answers (see
/// [`Chef::pruning_task`]).
const SHORT_REPLY_WORDS: usize = 4;

/// What the owned tools depend on: the tools mode, memory's allowed keys (`None`: no
/// memory), whether a handoff is configured, and whether `load_skill` is on.
type OwnedKey = (
    crate::owned::ToolsMode,
    Option<Option<Vec<String>>>,
    bool,
    bool,
);
