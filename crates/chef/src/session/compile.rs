//! Compiling a turn: the provider-neutral request, the layers around the history, and
//! the cache-stable request bytes.

use std::sync::Arc;

use chef_ir::{Request, Target, ToolDefinition, ToolName};

use super::{Chef, assemble, compiler, memory_instruction, request_names, subscribe::Compiled};
use super::{
    compiler::Spliced, config::MemoryPlacement, payload::ChunkedPayload, payload::Payload,
    payload::PayloadMeta, select::TurnTools,
};
use crate::{
    announce::Announcement, announce::Channel, error::ChefError, events::ChefEvent, memory::Memory,
    memory::MemoryStyle, owned::ToolsMode,
};

impl Chef {
    /// Assembles the provider-neutral request for this turn without compiling it to a
    /// provider (also advances nothing).
    ///
    /// Its tools become the ones [`route`](Self::route) resolves against, as a compile's
    /// do (a loop that sends this request through its own client routes the reply).
    pub fn request(&mut self, target: Target) -> Result<Request, ChefError> {
        let tools = self.turn_tools()?;
        let extra: Vec<Announcement> = self
            .handoff_notice(false)
            .into_iter()
            .chain(self.repeat_notice())
            .collect();
        let request = self.build_request(target, &tools, tools.wire_tools(), &extra)?;
        self.routing.latest = Some(tools);
        self.routing.names = request_names(&request, target);
        self.routing.rule = Some(target.name_rule());
        Ok(request)
    }

    fn build_request(
        &self,
        target: Target,
        tools: &TurnTools,
        wire_tools: Vec<ToolDefinition>,
        extra: &[Announcement],
    ) -> Result<Request, ChefError> {
        let layers = self.assemble_layers(target, tools, extra)?;
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
    fn assemble_layers(
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
    /// or as a streaming HTTP body (see [`ChunkedBody`](crate::ChunkedBody)).
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
                self.routing.rule = Some(target.name_rule());
                self.conversation.turn = self.conversation.turn.saturating_add(1);
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
        let extra: Vec<Announcement> = self
            .handoff_notice(true)
            .into_iter()
            .chain(self.repeat_notice())
            .collect();
        let pending = self.pending_overflow_notice();
        let layers = self.assemble_layers(target, &tools, &extra)?;
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
        wire.notices.extend(self.interrupted_call_notices());
        wire.notices.extend(self.unmatched_blocklist_notices());
        wire.notices.extend(self.offload_compile_notices());
        wire.notices.extend(self.skill_notices());
        let meta = PayloadMeta {
            turn: self.conversation.turn,
            wire_tools,
            kept: tools.kept.iter().chain(&tools.extra).cloned().collect(),
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
            active_skill: self.skills().active().map(|s| s.name().to_owned()),
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
        let unmatched = self.tools().unmatched_blocked();
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
