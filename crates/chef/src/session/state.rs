//! Snapshots of a session: everything that decides the next compile.

use std::path::Path;

use super::Chef;
use crate::{
    error::ChefError,
    snapshot::{
        self, Origin, Snapshot, SnapshotError, SnapshotTools, journal,
        state::{RestoreOptions, SessionState, SessionStateRef},
    },
    store::{Expect, StorageBackend, StoreKey},
};

impl Chef {
    /// The state [`snapshot`](Self::snapshot) captures, borrowed, at the current turn.
    pub(crate) fn snapshot_ref(&self, label: Option<&str>) -> Snapshot<SessionStateRef<'_>> {
        let state = SessionStateRef {
            system: &self.conversation.system,
            history: &self.conversation.history[..],
            tools: SnapshotTools::shared(
                std::sync::Arc::clone(self.tools.pruner.shared_tools()),
                self.tools.pruner.tools_json(),
            ),
            namespaces: self.tools.pruner.namespaces(),
            toolkits: self.tools.pruner.toolkits(),
            loaded_toolkits: &self.tools.loaded_toolkits,
            blocked: self.tools.pruner.blocklist(),
            allowlist: self.tools.allowlist.as_deref(),
            announcements: &self.announcements,
            memory: self
                .storage
                .memory
                .as_ref()
                .map(crate::memory::Memory::state),
            turn: self.conversation.turn,
            shown_tools: self.tools.shown.as_deref(),
            new_context_requested: self.conversation.new_context_requested,
            overflow: &self.conversation.overflow,
            dynamic_state: self.layers().dynamic_state(),
            guardrail: self.layers().guardrail(),
            prefill: self.context.prefill.as_deref(),
            offload_policy: self.offloading.offload.as_ref(),
            offload_pending: &self.offloading.offload_pending,
            skill: self.saved_skill(),
            discovery: self.discovery_state(),
        };
        let snapshot = Snapshot::new(state).with_created_turn(self.conversation.turn);
        match label {
            Some(label) => snapshot.with_label(label),
            None => snapshot,
        }
    }

    /// Captures everything that decides the next compile.
    pub fn snapshot(&self, label: Option<&str>) -> Snapshot<SessionState> {
        let Snapshot {
            label,
            created_turn,
            payload,
        } = self.snapshot_ref(label);
        Snapshot {
            label,
            created_turn,
            payload: SessionState::from(payload),
        }
    }

    /// Replaces the session's state with a snapshot's. Validated first: a snapshot whose
    /// registrations are refused leaves the session untouched.
    ///
    /// Tools read from a snapshot file are parsed here, unless they are the same JSON as
    /// the tools this session has registered (then those are kept, nothing is parsed) or as
    /// tools another session of this process restored and still holds (then those are
    /// shared); a tools field that does not parse is [`SnapshotError::Corrupt`].
    ///
    /// Resuming never loosens policy: the blocklist in force now stays in force, and the
    /// snapshot's entries are added to it (a tool blocked since the save stays blocked).
    /// The allowlist is the tighter of the two: the snapshot's when the session has none
    /// (a fresh session restoring a saved one keeps its bound), the session's when the
    /// snapshot has none, and the names on both (ignoring case, in the snapshot's order)
    /// when both have one. Ask for the snapshot's blocklist or allowlist alone with
    /// [`restore_with`](Self::restore_with) and [`RestoreOptions::with_snapshot_blocklist`]
    /// / [`RestoreOptions::with_snapshot_allowlist`]. The session's own pruning policy, task
    /// override and embedder (see [`ToolsMut::set_prune_policy`](crate::ToolsMut::set_prune_policy))
    /// are settings, not state, and are kept.
    ///
    /// Nothing the snapshot holds is dropped: a snapshot with memory entries restored into
    /// a session built without memory attaches a default [`Memory`](crate::memory::Memory)
    /// holding them (a session with memory keeps its configuration and takes the entries).
    pub fn restore(&mut self, snapshot: &Snapshot<SessionState>) -> Result<&mut Self, ChefError> {
        self.restore_from(snapshot, Origin::Bytes, RestoreOptions::default())
    }

    /// [`restore`](Self::restore) with options.
    pub fn restore_with(
        &mut self,
        snapshot: &Snapshot<SessionState>,
        options: RestoreOptions,
    ) -> Result<&mut Self, ChefError> {
        self.restore_from(snapshot, Origin::Bytes, options)
    }

    /// [`restore`](Self::restore), naming where the snapshot came from in errors.
    pub(crate) fn restore_from(
        &mut self,
        snapshot: &Snapshot<SessionState>,
        origin: Origin,
        options: RestoreOptions,
    ) -> Result<&mut Self, ChefError> {
        let state = &snapshot.payload;
        // A memory key saved twice would keep one of its values and drop the other: the
        // snapshot is refused instead (chef never writes one).
        if let Some(memory) = &state.memory {
            let mut keys = std::collections::HashSet::new();
            if let Some(twice) = memory.entries.iter().find(|e| !keys.insert(e.key())) {
                return Err(SnapshotError::Corrupt {
                    origin,
                    source: serde::de::Error::custom(format_args!(
                        "payload.memory: the key {:?} has two entries",
                        twice.key().as_str()
                    )),
                }
                .into());
            }
        }
        let (tools, tools_json) = state
            .tools
            .resolve(self.tools.pruner.shared_tools(), || {
                self.tools.pruner.tools_json()
            })
            .map_err(|e| SnapshotError::Corrupt {
                origin,
                source: serde::de::Error::custom(format_args!("payload.tools: {e}")),
            })?;
        let mut pruner = crate::prune::Pruner::new(self.config.strategy);
        pruner.register_shared_tools(tools, tools_json)?;
        pruner.register_namespaces(state.namespaces.clone())?;
        self.check_toolkit_names(&state.toolkits)?;
        pruner.register_toolkits(state.toolkits.clone())?;
        // The snapshot's entries as saved (so a fresh session restores them exactly), then
        // the entries in force that the snapshot lacks.
        let mut blocked: Vec<String> = state.blocked.entries().to_vec();
        if !options.snapshot_blocklist {
            for entry in self.tools.pruner.blocked_tools() {
                if !state.blocked.entries().contains(entry) {
                    blocked.push(entry.clone());
                }
            }
        }
        let widened = blocked != state.blocked.entries();
        pruner.set_blocked_tools(blocked);
        let allowlist = if options.snapshot_allowlist {
            state.allowlist.clone()
        } else {
            tighter_allowlist(self.tools.allowlist.as_deref(), state.allowlist.as_deref())
        };
        pruner.keep_ranking_of(&self.tools.pruner);
        self.tools.pruner = pruner;
        self.tools.allowlist = allowlist;
        self.conversation.system = state.system.clone();
        self.conversation.history.replace(state.history.clone());
        self.tools.loaded_toolkits = state.loaded_toolkits.clone();
        self.announcements = state.announcements.clone();
        if let Some(saved) = state.memory.clone() {
            if self.storage.memory.is_none() {
                let mut memory = crate::memory::Memory::new();
                self.events.memory_bridges =
                    super::bridge_all(&self.events.subscribers, &mut memory);
                self.storage.memory = Some(memory);
            }
            if let Some(memory) = self.storage.memory.as_mut() {
                memory.restore_state(saved);
            }
        }
        self.conversation.turn = state.turn;
        self.tools.shown = state.shown_tools.clone();
        self.conversation.new_context_requested = state.new_context_requested;
        self.conversation.overflow = state.overflow.clone();
        match state.dynamic_state.clone() {
            Some(dynamic) => self.put_dynamic_state(dynamic),
            None => self.context.dynamic = None,
        }
        self.context.guardrail = state.guardrail.clone().map(super::with_instruction);
        self.context.prefill.clone_from(&state.prefill);
        self.offloading.offload.clone_from(&state.offload_policy);
        self.offloading
            .offload_pending
            .clone_from(&state.offload_pending);
        self.offloading.offload_notices.clear();
        self.restore_skill(state.skill.as_ref());
        self.tools.discovery = state.discovery.clone();
        if widened && self.config.announce_tool_changes {
            // The snapshot's announcement of blocked tools predates the blocks kept now.
            self.announce_blocked();
        }
        self.routing.latest = None;
        self.routing.names = chef_ir::WireNames::default();
        self.routing.rule = None;
        self.tools.unmatched_reported.clear();
        self.tools.unmatched_checked = None;
        self.touch();
        Ok(self)
    }

    /// Where the history and registry stand, for a journal to tell an append from a rewrite.
    pub(crate) fn journal_mark(&self) -> journal::Mark {
        journal::Mark {
            instance: self.instance,
            epoch: self.tools.epoch,
            generation: self.conversation.history.generation(),
            len: self.conversation.history.len(),
        }
    }

    /// The serialised parts of the state a journal delta can set (see [`journal::FIELDS`]),
    /// as [`snapshot`](Self::snapshot) would serialise them, without copying the history.
    pub(crate) fn journal_fields(&self) -> Result<journal::Fields, serde_json::Error> {
        let memory = self
            .storage
            .memory
            .as_ref()
            .map(crate::memory::Memory::state);
        journal::FieldsOf {
            system: &self.conversation.system,
            loaded_toolkits: &self.tools.loaded_toolkits,
            blocked: self.tools.pruner.blocklist(),
            allowlist: self.tools.allowlist.as_deref(),
            announcements: &self.announcements,
            memory: memory.as_ref(),
            shown_tools: self.tools.shown.as_deref(),
            new_context_requested: self.conversation.new_context_requested,
            overflow: &self.conversation.overflow,
            dynamic_state: self.layers().dynamic_state(),
            guardrail: self.layers().guardrail(),
            prefill: self.context.prefill.as_deref(),
            offload_policy: self.offloading.offload.as_ref(),
            offload_pending: &self.offloading.offload_pending,
            skill: self.saved_skill().as_ref(),
            discovery: &self.discovery_state(),
        }
        .encode()
    }

    /// Saves a snapshot to `path` atomically and durably (temp file, fsync, rename, fsync
    /// of the directory).
    pub fn save(&self, path: impl AsRef<Path>, label: Option<&str>) -> Result<(), ChefError> {
        snapshot::save(path, &self.snapshot_ref(label))?;
        Ok(())
    }

    /// Loads a snapshot from `path` and restores it. A corrupt file, or one written by a
    /// newer format version, gives a typed error and leaves the session untouched.
    pub fn load(&mut self, path: impl AsRef<Path>) -> Result<&mut Self, ChefError> {
        let path = path.as_ref();
        self.load_with(path, RestoreOptions::default())
    }

    /// [`load`](Self::load) with options (see [`restore`](Self::restore)).
    pub fn load_with(
        &mut self,
        path: impl AsRef<Path>,
        options: RestoreOptions,
    ) -> Result<&mut Self, ChefError> {
        let path = path.as_ref();
        let snapshot: Snapshot<SessionState> = snapshot::load(path)?;
        self.restore_from(&snapshot, Origin::File(path.to_path_buf()), options)
    }

    /// Saves a snapshot as session `session` in `backend` if `expect` holds (see
    /// [`snapshot::store`]); returns the new version. A worker that loaded version `v`
    /// passes `Expect::Version(v)`: if another worker saved in between, this fails with a
    /// conflict (`ChefError::Snapshot`, [`SnapshotError::is_conflict`](crate::snapshot::SnapshotError::is_conflict))
    /// and nothing is overwritten.
    pub async fn save_to_store(
        &self,
        backend: &dyn StorageBackend,
        session: &StoreKey,
        expect: Expect,
    ) -> Result<u64, ChefError> {
        Ok(snapshot::store::save(backend, session, &self.snapshot_ref(None), expect).await?)
    }

    /// Loads session `session` from `backend` and restores it; returns its version, or
    /// `None` (session untouched) when the store has no such session.
    pub async fn load_from_store(
        &mut self,
        backend: &dyn StorageBackend,
        session: &StoreKey,
    ) -> Result<Option<u64>, ChefError> {
        let Some(stored) = snapshot::store::load::<SessionState>(backend, session).await? else {
            return Ok(None);
        };
        self.restore_from(
            &stored.value,
            Origin::Store(session.as_str().to_owned()),
            RestoreOptions::default(),
        )?;
        Ok(Some(stored.version))
    }
}

/// The allowlist a restore leaves in force when neither side is taken as it is: whichever
/// one is set, or the names on both (ignoring case, as the allowlist matches) in the
/// snapshot's order. A restore never allows a tool that either list leaves out.
fn tighter_allowlist(now: Option<&[String]>, saved: Option<&[String]>) -> Option<Vec<String>> {
    match (now, saved) {
        (None, None) => None,
        (Some(list), None) | (None, Some(list)) => Some(list.to_vec()),
        (Some(now), Some(saved)) => Some(
            saved
                .iter()
                .filter(|name| now.iter().any(|n| n.eq_ignore_ascii_case(name)))
                .cloned()
                .collect(),
        ),
    }
}
