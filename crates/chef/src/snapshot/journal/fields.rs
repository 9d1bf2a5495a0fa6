//! The parts of a session state a journal's delta record carries, and how each is
//! written and read back.

use serde::de::Error as _;
use serde_json::value::RawValue;

use chef_ir::Message;

use crate::{
    memory::{MemoryEntry, MemoryState},
    snapshot::SessionState,
};

/// The parts of [`SessionState`] a delta record can set, in record order. The history is
/// appended (`from`/`append`), the turn is always written, and the registry (tools,
/// namespaces, toolkits) changes only with a full record.
pub(crate) const FIELDS: [&str; 17] = [
    "system",
    "loaded_toolkits",
    "blocked",
    "announcements",
    // Memory in two parts: its turn counter moves every compile, its entries seldom.
    "memory_entries",
    "memory_turn",
    "shown_tools",
    "new_context_requested",
    "overflow",
    "dynamic_state",
    "guardrail",
    "prefill",
    "offload_policy",
    "offload_pending",
    "skill",
    "discovery",
    "allowlist",
];

/// The serialised form of each of [`FIELDS`], in that order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fields(pub(crate) [Vec<u8>; FIELDS.len()]);

/// The parts of a session state a delta can set, borrowed (from a live session or from a
/// state read back), to serialise them the one way.
pub(crate) struct FieldsOf<'a> {
    pub(crate) system: &'a [Message],
    pub(crate) loaded_toolkits: &'a [String],
    pub(crate) blocked: &'a crate::gate::Blocklist,
    pub(crate) announcements: &'a crate::announce::Announcements,
    pub(crate) memory: Option<&'a MemoryState>,
    pub(crate) shown_tools: Option<&'a [chef_ir::ToolName]>,
    pub(crate) new_context_requested: bool,
    pub(crate) overflow: &'a crate::overflow::OverflowState,
    pub(crate) dynamic_state: Option<&'a crate::dynamic::DynamicState>,
    pub(crate) guardrail: Option<&'a crate::guardrail::Guardrail>,
    pub(crate) prefill: Option<&'a str>,
    pub(crate) offload_policy: Option<&'a crate::offload::OffloadPolicy>,
    pub(crate) offload_pending: &'a [crate::offload::PendingOffload],
    pub(crate) skill: Option<&'a crate::skills::SavedSkill>,
    pub(crate) discovery: &'a crate::prune::DiscoveryState,
    pub(crate) allowlist: Option<&'a [String]>,
}

impl FieldsOf<'_> {
    /// Each part serialised, in [`FIELDS`] order, as the snapshot serialises it.
    pub(crate) fn encode(&self) -> Result<Fields, serde_json::Error> {
        Ok(Fields([
            serde_json::to_vec(self.system)?,
            serde_json::to_vec(self.loaded_toolkits)?,
            serde_json::to_vec(self.blocked)?,
            serde_json::to_vec(self.announcements)?,
            serde_json::to_vec(&self.memory.map(|m| &m.entries))?,
            serde_json::to_vec(&self.memory.map(|m| m.turn))?,
            serde_json::to_vec(&self.shown_tools)?,
            serde_json::to_vec(&self.new_context_requested)?,
            serde_json::to_vec(self.overflow)?,
            serde_json::to_vec(&self.dynamic_state)?,
            serde_json::to_vec(&self.guardrail)?,
            serde_json::to_vec(&self.prefill)?,
            serde_json::to_vec(&self.offload_policy)?,
            serde_json::to_vec(self.offload_pending)?,
            serde_json::to_vec(&self.skill)?,
            serde_json::to_vec(self.discovery)?,
            serde_json::to_vec(&self.allowlist)?,
        ]))
    }
}

impl Fields {
    /// The fields of a state read back from a journal or snapshot.
    pub(crate) fn of_state(state: &SessionState) -> Result<Self, serde_json::Error> {
        FieldsOf {
            system: &state.system,
            loaded_toolkits: &state.loaded_toolkits,
            blocked: &state.blocked,
            announcements: &state.announcements,
            memory: state.memory.as_ref(),
            shown_tools: state.shown_tools.as_deref(),
            new_context_requested: state.new_context_requested,
            overflow: &state.overflow,
            dynamic_state: state.dynamic_state.as_ref(),
            guardrail: state.guardrail.as_ref(),
            prefill: state.prefill.as_deref(),
            offload_policy: state.offload_policy.as_ref(),
            offload_pending: &state.offload_pending,
            skill: state.skill.as_ref(),
            discovery: &state.discovery,
            allowlist: state.allowlist.as_deref(),
        }
        .encode()
    }
}

/// A field's value, read as deep as its record was ([`MAX_NESTING`](crate::snapshot::MAX_NESTING)).
fn deep<T: serde::de::DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    crate::snapshot::file::from_slice_deep(text.as_bytes())
}

/// Sets one of [`FIELDS`] of `state` from its serialised form.
pub(super) fn set_field(
    state: &mut SessionState,
    name: &str,
    raw: &RawValue,
) -> serde_json::Result<()> {
    let text = raw.get();
    match name {
        "system" => state.system = deep(text)?,
        "loaded_toolkits" => state.loaded_toolkits = deep(text)?,
        "blocked" => state.blocked = deep(text)?,
        "announcements" => state.announcements = deep(text)?,
        "memory_entries" => {
            let entries: Option<Vec<MemoryEntry>> = deep(text)?;
            let turn = state.memory.as_ref().map_or(0, |m| m.turn);
            state.memory = entries.map(|entries| MemoryState { entries, turn });
        }
        "memory_turn" => {
            if let (Some(memory), Some(turn)) = (state.memory.as_mut(), deep::<Option<u64>>(text)?)
            {
                memory.turn = turn;
            }
        }
        "shown_tools" => state.shown_tools = deep(text)?,
        "new_context_requested" => state.new_context_requested = deep(text)?,
        "overflow" => state.overflow = deep(text)?,
        "dynamic_state" => state.dynamic_state = deep(text)?,
        "guardrail" => state.guardrail = deep(text)?,
        "prefill" => state.prefill = deep(text)?,
        "offload_policy" => state.offload_policy = deep(text)?,
        "offload_pending" => state.offload_pending = deep(text)?,
        "skill" => state.skill = deep(text)?,
        "discovery" => state.discovery = deep(text)?,
        "allowlist" => state.allowlist = deep(text)?,
        other => {
            return Err(serde_json::Error::custom(format_args!(
                "unknown field {other:?} in a delta record"
            )));
        }
    }
    Ok(())
}
