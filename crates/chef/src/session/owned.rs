//! The library-owned tools' side of a session: memory, the stores behind the owned
//! tools, and answering an owned call.

use std::sync::Arc;

use super::routed::OwnedCall;
use super::{Chef, bridge_all};
use crate::{
    error::ChefError, events::ChefEvent, memory::Memory, owned::OwnedReply, store::StorageBackend,
};

impl Chef {
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

    /// Answers a call of a library-owned tool (see [`Routed::Owned`](crate::Routed::Owned)).
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
        self.offloads_mut().flush().await?;
        if call.name == crate::owned::LOAD_SKILL {
            // Like `new_context` without a handoff: a tool the session does not offer does
            // nothing when called (a model that names it anyway loads no instructions).
            if !self.config.skill_tool {
                return Ok(OwnedReply::err(
                    "load_skill is not available: this session does not offer skills as a tool.",
                ));
            }
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
                handoff: self.config.overflow.handoff.is_some(),
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

    /// Attaches memory (enables the memory tools in legacy mode and the memory layer).
    #[must_use]
    pub fn with_memory(mut self, mut memory: Memory) -> Self {
        self.events.memory_bridges = bridge_all(&self.events.subscribers, &mut memory);
        self.storage.memory = Some(memory);
        self.touch();
        self
    }

    /// Memory, when attached.
    pub fn memory(&self) -> Option<&Memory> {
        self.storage.memory.as_ref()
    }

    /// Memory, mutably (direct writes by host code).
    pub fn memory_mut(&mut self) -> Option<&mut Memory> {
        self.storage.memory.as_mut()
    }
}
