//! The state of a session as a snapshot carries it: plain data, written and read by the
//! snapshot formats (file, store, journal) and taken from or restored into a session by
//! [`Chef::snapshot`](crate::Chef::snapshot) and [`Chef::restore`](crate::Chef::restore).

use chef_ir::Message;
use serde::{Deserialize, Serialize};

use super::SnapshotTools;
use crate::{
    announce::Announcements, gate::Blocklist, memory::MemoryState, namespace::ToolGroup,
    overflow::OverflowState,
};

/// The state of a session, as saved to disk. Configuration (levels, modes, provider
/// settings) is not part of it: restore into a session built with the same configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SessionState {
    /// The system prompt.
    pub system: Vec<Message>,
    /// The conversation.
    pub history: Vec<Message>,
    /// Registered flat tools: shared with the registry when taken, unparsed JSON when read
    /// back (see [`SnapshotTools`]).
    pub tools: SnapshotTools,
    /// Registered namespaces.
    #[serde(default)]
    pub namespaces: Vec<ToolGroup>,
    /// Registered lazy toolkits.
    #[serde(default)]
    pub toolkits: Vec<ToolGroup>,
    /// Toolkits loaded so far, in load order.
    #[serde(default)]
    pub loaded_toolkits: Vec<String>,
    /// The blocklist.
    #[serde(default)]
    pub blocked: Blocklist,
    /// The allowlist (`None`: none set; left out of the file then). Like the blocklist,
    /// a restore never loosens it (see [`Chef::restore`](crate::Chef::restore)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowlist: Option<Vec<String>>,
    /// Standing announcements.
    #[serde(default)]
    pub announcements: Announcements,
    /// Memory entries and their turn counter (`None`: the session had no memory).
    #[serde(default)]
    pub memory: Option<MemoryState>,
    /// Compiles so far.
    pub turn: u64,
    /// The real names the model could reach at the last compile (for tool-change
    /// announcements).
    #[serde(default)]
    pub shown_tools: Option<Vec<chef_ir::ToolName>>,
    /// A `new_context` request not yet acted on.
    #[serde(default)]
    pub new_context_requested: bool,
    /// Overflow bookkeeping: context window, failures in a row, reported usage, handoff.
    #[serde(default)]
    pub overflow: OverflowState,
    /// The dynamic state and its placement (`None`: not set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dynamic_state: Option<crate::dynamic::DynamicState>,
    /// The output guardrail (`None`: not set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guardrail: Option<crate::guardrail::Guardrail>,
    /// The assistant prefill (`None`: not set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill: Option<String>,
    /// The offload policy (`None`: not set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offload_policy: Option<crate::offload::OffloadPolicy>,
    /// Offloaded results not yet written to the store (their full text).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub offload_pending: Vec<crate::offload::PendingOffload>,
    /// The active skill: its name and instructions (`None`: none active). On restore these
    /// instructions (as placed, arguments filled in) and allowed tools are kept, so the
    /// next request is byte-identical; the receiving session's registered skill of that
    /// name lends its other fields, and without one a stub with these becomes active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill: Option<crate::skills::SavedSkill>,
    /// What the discovery setting remembers (the tools the model's searches found for the
    /// current request, the order the extra tools were sent in); empty, and left out of the
    /// file, for a session that never searched.
    #[serde(
        default,
        skip_serializing_if = "crate::prune::DiscoveryState::is_empty"
    )]
    pub discovery: crate::prune::DiscoveryState,
}

/// How [`Chef::restore_with`](crate::Chef::restore_with) (and
/// [`Chef::load_with`](crate::Chef::load_with)) treat the snapshot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RestoreOptions {
    /// Take the snapshot's blocklist as it is, replacing the one in force (default: keep
    /// the one in force and add the snapshot's entries).
    pub snapshot_blocklist: bool,
    /// Take the snapshot's allowlist as it is (none when it has none), replacing the one
    /// in force (default: the tighter of the two; see [`Chef::restore`](crate::Chef::restore)).
    pub snapshot_allowlist: bool,
}

impl RestoreOptions {
    /// Replace the blocklist in force with the snapshot's, which may unblock tools
    /// blocked since the save: only for a caller that means to restore that policy.
    #[must_use]
    pub fn with_snapshot_blocklist(mut self) -> Self {
        self.snapshot_blocklist = true;
        self
    }

    /// Replace the allowlist in force with the snapshot's (a snapshot without one lifts
    /// it), which may allow tools the session in force does not: only for a caller that
    /// means to restore that policy.
    #[must_use]
    pub fn with_snapshot_allowlist(mut self) -> Self {
        self.snapshot_allowlist = true;
        self
    }
}

/// [`SessionState`] borrowed from a live session, for writing a snapshot without copying
/// the history. [`Chef::snapshot`](crate::Chef::snapshot) is this, owned; both serialise to the same bytes (the
/// same members in the same order with the same skipping rules; a test pins it).
#[derive(Serialize)]
pub(crate) struct SessionStateRef<'a> {
    pub(crate) system: &'a [Message],
    pub(crate) history: &'a [Message],
    pub(crate) tools: SnapshotTools,
    pub(crate) namespaces: &'a [ToolGroup],
    pub(crate) toolkits: &'a [ToolGroup],
    pub(crate) loaded_toolkits: &'a [String],
    pub(crate) blocked: &'a Blocklist,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) allowlist: Option<&'a [String]>,
    pub(crate) announcements: &'a Announcements,
    pub(crate) memory: Option<MemoryState>,
    pub(crate) turn: u64,
    pub(crate) shown_tools: Option<&'a [chef_ir::ToolName]>,
    pub(crate) new_context_requested: bool,
    pub(crate) overflow: &'a OverflowState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) dynamic_state: Option<&'a crate::dynamic::DynamicState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) guardrail: Option<&'a crate::guardrail::Guardrail>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) prefill: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) offload_policy: Option<&'a crate::offload::OffloadPolicy>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) offload_pending: &'a [crate::offload::PendingOffload],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) skill: Option<crate::skills::SavedSkill>,
    #[serde(skip_serializing_if = "crate::prune::DiscoveryState::is_empty")]
    pub(crate) discovery: crate::prune::DiscoveryState,
}

impl From<SessionStateRef<'_>> for SessionState {
    fn from(state: SessionStateRef<'_>) -> Self {
        Self {
            system: state.system.to_vec(),
            history: state.history.to_vec(),
            tools: state.tools,
            namespaces: state.namespaces.to_vec(),
            toolkits: state.toolkits.to_vec(),
            loaded_toolkits: state.loaded_toolkits.to_vec(),
            blocked: state.blocked.clone(),
            allowlist: state.allowlist.map(<[_]>::to_vec),
            announcements: state.announcements.clone(),
            memory: state.memory,
            turn: state.turn,
            shown_tools: state.shown_tools.map(<[_]>::to_vec),
            new_context_requested: state.new_context_requested,
            overflow: state.overflow.clone(),
            dynamic_state: state.dynamic_state.cloned(),
            guardrail: state.guardrail.cloned(),
            prefill: state.prefill.map(str::to_owned),
            offload_policy: state.offload_policy.cloned(),
            offload_pending: state.offload_pending.to_vec(),
            skill: state.skill,
            discovery: state.discovery,
        }
    }
}
