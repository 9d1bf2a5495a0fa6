//! The session: [`Chef`], the state one agent conversation carries, and `compile`.

mod assemble;
mod body;
mod compat;
mod compile;
pub(crate) mod compiler;
mod config;
mod context;
mod conversation;
mod discover;
mod dynamic;
mod history;
pub(crate) mod interrupted;
mod journal;
mod offload;
mod overflow;
mod owned;
mod parts;
mod payload;
mod repeated;
mod route;
mod routed;
mod select;
mod skills;
mod state;
mod subscribe;
mod tools;

use std::sync::Arc;

use chef_ir::{Request, Target, WireNames};

pub use self::body::ChunkedBody;
pub use self::compiler::TargetOptions;
pub use self::config::{ChefConfig, MemoryPlacement};
pub use self::dynamic::{Layers, LayersMut};
pub use self::offload::{Offloads, OffloadsMut};
pub use self::payload::{ChunkedPayload, Payload, PayloadMeta};
pub use self::repeated::REPEATED_CALL_ID;
pub use self::skills::{SessionSkills, SkillsMut};
pub use self::subscribe::Compiled;
pub use self::tools::{Tools, ToolsMut};
pub use self::{
    assemble::ANCHOR_LINE,
    routed::{OwnedCall, Routed, RoutedCall},
};
pub use crate::prune::FoundTool;
pub use crate::snapshot::{RestoreOptions, SessionState};
use crate::{
    announce::Announcements,
    events::{ChefEvent, Subscription},
    memory::{Memory, MemoryStyle},
    prune::Pruner,
};

type Subscriber = Arc<dyn Fn(&ChefEvent) + Send + Sync>;
type CompiledHook = Arc<dyn Fn(&Compiled<'_>) + Send + Sync>;

/// One agent session: tools, conversation, announcements, memory.
///
/// The loop's own calls are methods here (`register_tools`, `push`, `compile`, `route`,
/// `check_tool_call`, `handle_tool`, `snapshot`, `save`, …); each part of the session is
/// reached through a handle: [`tools`](Self::tools) / [`tools_mut`](Self::tools_mut),
/// [`layers`](Self::layers) / [`layers_mut`](Self::layers_mut),
/// [`offloads`](Self::offloads) / [`offloads_mut`](Self::offloads_mut),
/// [`skills`](Self::skills) / [`skills_mut`](Self::skills_mut), and
/// [`memory`](Self::memory) / [`memory_mut`](Self::memory_mut).
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
/// chef.tools_mut().set_blocked(["delete_file"]);
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

    /// The configuration.
    pub fn config(&self) -> &ChefConfig {
        &self.config
    }

    // ---- tools ------------------------------------------------------------------------

    // ---- pruning policy ----------------------------------------------------------------

    // ---- conversation -----------------------------------------------------------------

    // ---- announcements ----------------------------------------------------------------

    // ---- compile ----------------------------------------------------------------------
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
/// [`Tools::pruning_task`]).
const SHORT_REPLY_WORDS: usize = 4;

/// What the owned tools depend on: the tools mode, memory's allowed keys (`None`: no
/// memory), whether a handoff is configured, whether `load_skill` is on, and whether the
/// discovery search tool is offered.
type OwnedKey = (
    crate::owned::ToolsMode,
    Option<Option<Vec<String>>>,
    bool,
    bool,
    bool,
    bool,
);
