//! The parts a [`Chef`](super::Chef) is made of, each holding the state of one concern.
//!
//! A session is a handful of these plus its configuration and the turn compiler: the tools
//! (registry, blocklist, allowlist, loaded toolkits, the latest selection), the routing
//! memo (what the model was shown, so what `route` resolves against), the conversation
//! (system prompt, history, turn counter, overflow), memory and the stores, offloading,
//! skills, event subscribers, and the context layers (guardrail, prefill, dynamic state,
//! injectors). `Chef::new` starts each part empty and `Chef::fork` forks each as its own
//! rules say; the session's methods, grouped by concern in the files beside this one, keep
//! the invariants that cross parts (the gate over every route, the registry epoch that
//! every memo is checked against).

use std::{collections::BTreeSet, sync::Arc};

use chef_ir::{Message, ToolName, WireNames};

use super::{CompiledHook, Subscriber, history::History, select, skills::ActiveSkill};
use crate::{
    events::Subscription,
    memory::Memory,
    overflow::{OverflowState, Summarizer, Tokenizer},
    prune::Pruner,
    store::{MemoryBackend, StorageBackend},
};

/// The registry and what the session selects from it.
pub(crate) struct ToolState {
    pub(crate) pruner: Pruner,
    /// Moves on every change of the registry, the blocklist or the allowlist: every memo
    /// made from them (a selection, the unmatched-blocklist check) is keyed by it.
    pub(crate) epoch: u64,
    pub(crate) loaded_toolkits: Vec<String>,
    /// The tools of the turn and their caches (latest selection, owned tools, prepared
    /// registry).
    pub(crate) selection: select::Selection,
    /// The flat tools the model was last shown (for announcements of what changed).
    pub(crate) shown: Option<Vec<ToolName>>,
    /// The session's allowlist (see [`ToolsMut::set_allowlist`](super::ToolsMut::set_allowlist)).
    pub(crate) allowlist: Option<Vec<String>>,
    /// The task pruning ranks on instead of the conversation (see
    /// [`ToolsMut::set_task`](super::ToolsMut::set_task)).
    pub(crate) task_override: Option<String>,
    /// What the discovery setting remembers: the tools `find_tools` found, the request a
    /// search found nothing for, and (restored from a snapshot, until the next compile) the
    /// order of the extra tools (see [`discover`](super::discover)).
    pub(crate) discovery: crate::prune::DiscoveryState,
    /// Blocklist entries already reported in a compile's notices as matching nothing.
    pub(crate) unmatched_reported: BTreeSet<String>,
    /// The registry epoch the blocklist was last checked against (`None`: the blocklist
    /// changed since).
    pub(crate) unmatched_checked: Option<u64>,
}

impl ToolState {
    pub(crate) fn new(pruner: Pruner) -> Self {
        Self {
            pruner,
            epoch: 0,
            loaded_toolkits: Vec::new(),
            selection: select::Selection::default(),
            shown: None,
            allowlist: None,
            task_override: None,
            discovery: crate::prune::DiscoveryState::default(),
            unmatched_reported: BTreeSet::new(),
            unmatched_checked: None,
        }
    }

    /// A fork shares what was prepared from the tools (see `Selection::fork`).
    pub(crate) fn fork(&self) -> Self {
        Self {
            pruner: self.pruner.clone(),
            epoch: self.epoch,
            loaded_toolkits: self.loaded_toolkits.clone(),
            selection: self.selection.fork(),
            shown: self.shown.clone(),
            allowlist: self.allowlist.clone(),
            task_override: self.task_override.clone(),
            discovery: self.discovery.clone(),
            unmatched_reported: self.unmatched_reported.clone(),
            unmatched_checked: self.unmatched_checked,
        }
    }
}

/// What the model answers: the tools and the name table of the latest compile (or
/// `request`).
#[derive(Clone, Default)]
pub(crate) struct Routing {
    /// The tools `route` resolves against.
    pub(crate) latest: Option<Arc<select::TurnTools>>,
    /// The latest target's name table: `route` reads a wire name the target gave a tool
    /// (`timezone_convert` for `timezone.convert`) as that tool.
    pub(crate) names: WireNames,
    /// The latest target's name rule (none before a compile): a tool a search finds is
    /// named to the model as that target will send it.
    pub(crate) rule: Option<chef_ir::NameRule>,
    /// The latest call `route` refused for its arguments (tool name as written, arguments,
    /// and how many assistant messages the history held then): the identical call again,
    /// in a later reply, gets the short correction instead of the same text.
    pub(crate) last_refused: Option<(String, serde_json::Value, usize)>,
}

/// The conversation: what the model reads after the tools.
#[derive(Default)]
pub(crate) struct Conversation {
    pub(crate) system: Vec<Message>,
    pub(crate) history: History,
    pub(crate) turn: u64,
    pub(crate) new_context_requested: bool,
    pub(crate) overflow: OverflowState,
    pub(crate) tokenizer: Option<Arc<dyn Tokenizer>>,
    pub(crate) summarizer: Option<Arc<dyn Summarizer>>,
    /// Where the next compile looks for calls the conversation moved on from: the history
    /// generation and the index to scan from (see `interrupted.rs`).
    pub(crate) interrupted_scan: (u64, usize),
}

impl Conversation {
    /// A fork keeps the messages but makes its own history prefixes.
    pub(crate) fn fork(&self) -> Self {
        Self {
            system: self.system.clone(),
            history: self.history.fork(),
            turn: self.turn,
            new_context_requested: self.new_context_requested,
            overflow: self.overflow.clone(),
            tokenizer: self.tokenizer.clone(),
            summarizer: self.summarizer.clone(),
            interrupted_scan: self.interrupted_scan,
        }
    }
}

/// Memory and the stores the owned tools write to.
pub(crate) struct Storage {
    pub(crate) memory: Option<Memory>,
    /// The store behind the `context` tool.
    pub(crate) store: Arc<dyn StorageBackend>,
    /// Where owned-tool memory writes are persisted as they are made (write-through).
    pub(crate) memory_store: Option<Arc<dyn StorageBackend>>,
}

impl Default for Storage {
    fn default() -> Self {
        Self {
            memory: None,
            store: Arc::new(MemoryBackend::new()),
            memory_store: None,
        }
    }
}

impl Storage {
    /// A fork has its own copy of memory and shares the stores.
    pub(crate) fn fork(&self) -> Self {
        Self {
            memory: self.memory.as_ref().map(Memory::fork),
            store: Arc::clone(&self.store),
            memory_store: self.memory_store.clone(),
        }
    }
}

/// Offloading of large tool results.
#[derive(Clone, Default)]
pub(crate) struct Offloading {
    /// The offload policy (see [`OffloadsMut::set_policy`](super::OffloadsMut::set_policy)).
    pub(crate) offload: Option<crate::offload::OffloadPolicy>,
    /// Offloaded results not yet written to the store.
    pub(crate) offload_pending: Vec<crate::offload::PendingOffload>,
    /// Notices about offloads for the next compile.
    pub(crate) offload_notices: Vec<String>,
}

/// The registered skills and the active one.
#[derive(Clone)]
pub(crate) struct SkillState {
    pub(crate) skills: crate::skills::Skills,
    pub(crate) active_skill: Option<ActiveSkill>,
}

impl Default for SkillState {
    fn default() -> Self {
        Self {
            skills: crate::skills::Skills::new(),
            active_skill: None,
        }
    }
}

/// Who hears of what the session does. Never carried by a fork.
#[derive(Default)]
pub(crate) struct Events {
    pub(crate) subscribers: Vec<(Subscription, Subscriber)>,
    /// Each event subscriber's subscription to the attached memory's events.
    pub(crate) memory_bridges: Vec<(Subscription, crate::memory::SubscriptionId)>,
    pub(crate) compiled_hooks: Vec<(Subscription, CompiledHook)>,
}

/// What the session adds around the conversation: the output guardrail and its
/// instruction (rendered once when set), the assistant prefill, the dynamic state and its
/// rendered block, and the context injectors by name, in the order added.
#[derive(Clone, Default)]
pub(crate) struct ContextLayers {
    pub(crate) guardrail: Option<(crate::guardrail::Guardrail, String)>,
    pub(crate) prefill: Option<String>,
    pub(crate) dynamic: Option<(crate::dynamic::DynamicState, String)>,
    pub(crate) injectors: Vec<(String, Arc<dyn crate::dynamic::ContextInjector>)>,
}
