//! Step 4 of a turn: the assembled turn to provider bytes, reusing what earlier turns made.
//!
//! [`TurnCompiler`] owns every per-target cache a compile reads or fills, and nothing else
//! writes them:
//!
//! * the serialised tools of the last compile ([`wire::ToolBytes`]), spliced into the body
//!   while the tool selection is the same;
//! * the wire tool list itself, lent to each compile's request and taken back, so a turn
//!   whose tools did not change clones no tool definition;
//! * the serialised history prefix ([`prefix::Prefixes`]), so a long conversation converts
//!   only its last messages.
//!
//! It works on a borrowed [`TurnInput`]: what the session assembled for this turn. The
//! provider crates lay the bodies out (`chef_*::layout`); this module only splices bytes
//! where they say.

mod prefix;
mod wire;

use std::sync::Arc;

use chef_ir::{Message, Request, Target, ToolDefinition, ToolName};

pub use self::wire::TargetOptions;
pub(crate) use self::wire::{Spliced, Wire};
use self::{prefix::Prefixes, wire::ToolBytes};
use super::{assemble::Layers, select::TurnTools};
use crate::error::ChefError;

/// One value per provider target, in [`Target::ALL`]'s order.
#[derive(Clone)]
pub(crate) struct PerTarget<T>([Option<T>; Target::ALL.len()]);

impl<T> Default for PerTarget<T> {
    fn default() -> Self {
        Self(std::array::from_fn(|_| None))
    }
}

impl<T> PerTarget<T> {
    /// The slot of `target`: its place in [`Target::ALL`] (the enum's declaration order).
    fn index(target: Target) -> usize {
        target as usize
    }

    /// The value for `target`, if one is set.
    pub(crate) fn get(&self, target: Target) -> Option<&T> {
        self.0.get(Self::index(target)).and_then(Option::as_ref)
    }

    /// The value for `target`, taken out (the slot is left empty).
    pub(crate) fn take(&mut self, target: Target) -> Option<T> {
        self.0.get_mut(Self::index(target)).and_then(Option::take)
    }

    /// Sets (or, with `None`, clears) the value for `target`.
    pub(crate) fn set(&mut self, target: Target, value: Option<T>) {
        if let Some(slot) = self.0.get_mut(Self::index(target)) {
            *slot = value;
        }
    }
}

/// What the session assembled for one compile, borrowed for its length.
pub(crate) struct TurnInput<'a> {
    pub(crate) target: Target,
    /// The tools of the turn (their `Arc` is the key of the tool caches).
    pub(crate) tools: &'a Arc<TurnTools>,
    pub(crate) layers: &'a Layers,
    /// The caller's system messages.
    pub(crate) system: &'a [Message],
    pub(crate) history: &'a [Message],
    /// The history's generation (see `History`).
    pub(crate) generation: u64,
    pub(crate) options: &'a TargetOptions,
    /// Place chef's cache breakpoints.
    pub(crate) cache: bool,
    /// Audit Anthropic requests (a full compile every turn: no prefix reuse).
    pub(crate) audit: bool,
}

impl TurnInput<'_> {
    fn head(&self) -> Vec<Message> {
        self.layers.head(self.system, self.cache)
    }

    fn around(&self, history: &[Message]) -> Vec<Message> {
        self.layers.around(self.system, history, self.cache)
    }
}

/// A compiled turn.
pub(crate) struct CompiledTurn {
    pub(crate) wire: Wire,
    /// The names of the tools sent, in wire order.
    pub(crate) wire_tools: Vec<ToolName>,
    /// Whether the body was made from a reused history prefix.
    pub(crate) reused_prefix: bool,
}

/// The per-target caches of compiling (see the module docs).
#[derive(Default)]
pub(crate) struct TurnCompiler {
    tool_bytes: ToolBytes,
    /// The wire tool list of a selection, lent to each compile's request.
    wire_tools: Option<(Arc<TurnTools>, Vec<ToolDefinition>)>,
    prefixes: Prefixes,
    /// Cache-audit findings already reported (each is reported once per session).
    pub(crate) audit_reported: std::collections::BTreeSet<String>,
}

impl TurnCompiler {
    /// The caches a forked session starts with: the serialised tools of each target (shared
    /// bytes), but not the history prefixes (made again from the fork's own turns).
    pub(crate) fn fork(&self) -> Self {
        Self {
            tool_bytes: self.tool_bytes.fork(),
            wire_tools: None,
            prefixes: Prefixes::default(),
            audit_reported: self.audit_reported.clone(),
        }
    }

    /// Compiles the turn: from the reused history prefix when one applies, else in full
    /// (which may make a prefix for the next turns).
    pub(crate) fn compile(&mut self, input: &TurnInput<'_>) -> Result<CompiledTurn, ChefError> {
        let wire_tools = match self.wire_tools.take() {
            Some((owner, list)) if Arc::ptr_eq(&owner, input.tools) => list,
            _ => input.tools.wire_tools(),
        };
        let (wire, wire_tools, reused_prefix) = self.compile_body(input, wire_tools)?;
        let names = wire_tools.iter().map(|t| t.name.clone()).collect();
        self.wire_tools = Some((Arc::clone(input.tools), wire_tools));
        Ok(CompiledTurn {
            wire,
            wire_tools: names,
            reused_prefix,
        })
    }

    /// The body of this turn, and the lent wire tools back.
    fn compile_body(
        &mut self,
        input: &TurnInput<'_>,
        wire_tools: Vec<ToolDefinition>,
    ) -> Result<(Wire, Vec<ToolDefinition>, bool), ChefError> {
        let TurnInput { target, tools, .. } = *input;
        let reuse = !input.audit;
        let mut wire_tools = wire_tools;
        if reuse
            && self
                .prefixes
                .current(target, tools, input.generation, input.history.len())
                .is_some_and(|(_, fit)| fit == prefix::Fit::Usable)
        {
            let (attempt, lent) = self.suffix_compile(input, wire_tools)?;
            wire_tools = lent;
            if let Some(unspliced) = attempt {
                let wire = unspliced.finish(target, &mut self.tool_bytes, tools)?;
                return Ok((wire, wire_tools, true));
            }
        }
        if reuse {
            let (attempt, lent) = self.grow_prefix(input, wire_tools)?;
            wire_tools = lent;
            if let Some(unspliced) = attempt {
                let wire = unspliced.finish(target, &mut self.tool_bytes, tools)?;
                return Ok((wire, wire_tools, true));
            }
        }
        let mut request = Request::new(input.around(input.history)).with_tools(wire_tools);
        request.prefill.clone_from(&input.layers.prefill);
        let cached = wire::ToolsWanted::from_cache(self.tool_bytes.get(target, tools));
        let full =
            wire::compile_unspliced(target, &request, input.options, input.audit, 0, cached)?;
        if reuse
            && self
                .prefixes
                .may_try(target, input.generation, input.history.len())
        {
            let lent = std::mem::take(&mut request.tools);
            request.tools = self.make_prefix(input, &full, lent)?;
        }
        let wire = full.finish(target, &mut self.tool_bytes, tools)?;
        Ok((wire, request.tools, false))
    }

    /// Compiles the system layers + `history[cut..]` and splices the prefix in. `None` when
    /// this turn does not keep the conversion local.
    fn suffix_compile(
        &self,
        input: &TurnInput<'_>,
        wire_tools: Vec<ToolDefinition>,
    ) -> Result<(Option<wire::Unspliced>, Vec<ToolDefinition>), ChefError> {
        let TurnInput { target, tools, .. } = *input;
        let Some(slot) = self.prefixes.slot(target) else {
            return Ok((None, wire_tools));
        };
        let head = input.head();
        if head != slot.head || !prefix::suffix_ok(slot, input.history) {
            return Ok((None, wire_tools));
        }
        let suffix = input.history.get(slot.cut..).unwrap_or_default();
        let messages = input.around(suffix);
        if !prefix::breakpoint_in_suffix(&messages, head.len(), input.cache) {
            return Ok((None, wire_tools));
        }
        let mut request = Request::new(messages).with_tools(wire_tools);
        request.prefill.clone_from(&input.layers.prefill);
        let cached = wire::ToolsWanted::from_cache(self.tool_bytes.get(target, tools));
        let compiled = wire::compile_unspliced(
            target,
            &request,
            input.options,
            false,
            slot.cut + slot.inserted,
            cached,
        );
        let lent = std::mem::take(&mut request.tools);
        let mut unspliced = compiled?;
        if !unspliced.notices_shifted {
            return Ok((None, lent));
        }
        // The prefix's notices go after the head's and the tools'.
        let at = slot.head_notices + unspliced.tool_notices;
        if at > unspliced.notices.len() {
            return Ok((None, lent));
        }
        let Some(insert) = prefix::prefix_insert(
            unspliced.messages_key,
            &unspliced.body,
            slot.head_elems,
            &slot.bytes,
            &slot.array_head,
        ) else {
            return Ok((None, lent));
        };
        if !slot.notices.is_empty() {
            unspliced
                .notices
                .splice(at..at, slot.notices.iter().cloned());
            unspliced.prefix_keys = Some((at, slot.notice_keys()));
        }
        // Written into the body together with the tools, in one copy (`Unspliced::finish`).
        unspliced.prefix = Some(insert);
        Ok((Some(unspliced), lent))
    }

    /// Grows the target's prefix to a later cut once its suffix is past
    /// [`prefix::MAX_SUFFIX`], compiling only the messages between the two cuts instead of
    /// the whole history, and compiles this turn through it. The grown prefix is kept only
    /// if this turn through it equals this turn through the old one (which is what a full
    /// compile gives); otherwise the prefix is dropped and `None` sends the turn to the
    /// full compile, which makes a new one.
    fn grow_prefix(
        &mut self,
        input: &TurnInput<'_>,
        wire_tools: Vec<ToolDefinition>,
    ) -> Result<(Option<wire::Unspliced>, Vec<ToolDefinition>), ChefError> {
        let TurnInput {
            target,
            tools,
            history,
            ..
        } = *input;
        let Some((slot, prefix::Fit::Outgrown)) =
            self.prefixes
                .current(target, tools, input.generation, history.len())
        else {
            return Ok((None, wire_tools));
        };
        let Some(cut) = prefix::find_cut_after(history, slot.cut, &slot.calls) else {
            return Ok((None, wire_tools));
        };
        // This turn through the old prefix: what the grown one must give.
        let (old, lent) = self.suffix_compile(input, wire_tools)?;
        // Taken out: a prefix that fails to grow is dropped (the full path makes another).
        let (Some(old), Some(mut slot)) = (old, self.prefixes.take(target)) else {
            return Ok((None, lent));
        };
        // The head (equal to the slot's: the old prefix served) and the messages between
        // the cuts, numbered from the old cut as in a full compile.
        let grown = history.get(slot.cut..cut).unwrap_or_default();
        let mut messages = slot.head.clone();
        crate::session::interrupted::extend_closing_interrupted(&mut messages, grown);
        let inserted = messages.len() - slot.head.len() - grown.len();
        let (compiled, lent) = compile_lent(input, messages, lent, slot.cut + slot.inserted);
        let between = compiled?;
        let bytes = prefix::prefix_bytes(between.messages_key, &between.body, slot.head_elems);
        let notices = between.notices.get(slot.head_notices..);
        let (Some(bytes), Some(notices), true) = (bytes, notices, between.notices_shifted) else {
            return Ok((None, lent));
        };
        let mut joined = Vec::with_capacity(slot.bytes.len() + 1 + bytes.len());
        joined.extend_from_slice(&slot.bytes);
        joined.push(b',');
        joined.extend_from_slice(&bytes);
        slot.cut = cut;
        slot.inserted += inserted;
        slot.bytes = joined.into();
        slot.notices.extend(notices.iter().cloned());
        slot.keys = std::sync::OnceLock::new();
        slot.calls.extend(
            grown
                .iter()
                .flat_map(Message::tool_calls)
                .map(|c| c.id.as_str().to_owned()),
        );
        self.prefixes.set(target, Some(slot));
        let (attempt, lent) = self.suffix_compile(input, lent)?;
        let same = attempt.as_ref().is_some_and(|a| {
            let ((body, tools_at), (old_body, old_tools_at)) =
                (a.without_tools(), old.without_tools());
            body == old_body && tools_at == old_tools_at && a.notices == old.notices
        });
        if !same {
            self.prefixes.set(target, None);
            return Ok((None, lent));
        }
        Ok((attempt, lent))
    }

    /// Makes a prefix for the target from this turn's history and checks it against this
    /// turn's full compile; a mismatch (or no usable cut) refuses prefixes for this history
    /// generation until it grows.
    fn make_prefix(
        &mut self,
        input: &TurnInput<'_>,
        full: &wire::Unspliced,
        wire_tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, ChefError> {
        let TurnInput { target, tools, .. } = *input;
        let (generation, len) = (input.generation, input.history.len());
        self.prefixes.set(target, None);
        let Some(cut) = prefix::find_cut(input.history) else {
            self.prefixes.refuse(target, generation, len);
            return Ok(wire_tools);
        };
        let head = input.head();
        let compile = |messages, tools| compile_lent(input, messages, tools, 0);
        // The head's own elements: a request of the head and one user message has them plus
        // one (a head alone may get a placeholder message from a provider crate).
        let mut probe = head.clone();
        probe.push(Message::user("."));
        let (head_only, lent) = compile(probe, wire_tools);
        let head_only = head_only?;
        let mut prefix_messages = head.clone();
        crate::session::interrupted::extend_closing_interrupted(
            &mut prefix_messages,
            input.history.get(..cut).unwrap_or_default(),
        );
        let inserted = prefix_messages.len() - head.len() - cut;
        let (with_prefix, lent) = compile(prefix_messages, lent);
        let with_prefix = with_prefix?;
        let head_elems = chef_ir::layout::elements(&head_only.body, head_only.messages_key)
            .and_then(|(_, s)| s.len().checked_sub(1));
        let bytes = head_elems.and_then(|n| {
            prefix::prefix_bytes(with_prefix.messages_key, &with_prefix.body, n).map(|b| (n, b))
        });
        // The prefix compile repeats the head's notices, then says what it did to the
        // prefix's messages.
        let head_notices = head_only.notices.len();
        let prefix_notices = with_prefix
            .notices
            .strip_prefix(head_only.notices.as_slice())
            .map(<[String]>::to_vec);
        let Some(((head_elems, bytes), notices)) = bytes.zip(prefix_notices) else {
            self.prefixes.refuse(target, generation, len);
            return Ok(lent);
        };
        let calls = input
            .history
            .get(..cut)
            .unwrap_or_default()
            .iter()
            .flat_map(Message::tool_calls)
            .map(|c| c.id.as_str().to_owned())
            .collect();
        self.prefixes.set(
            target,
            Some(prefix::Slot {
                tools: Arc::clone(tools),
                generation,
                head,
                cut,
                inserted,
                head_elems,
                bytes,
                head_notices,
                notices,
                keys: std::sync::OnceLock::new(),
                calls,
                array_head: parking_lot::Mutex::new(None),
            }),
        );
        // Check: this turn through the prefix must equal this turn compiled in full.
        let (attempt, lent) = self.suffix_compile(input, lent)?;
        let same = attempt.is_some_and(|a| {
            let (body, tools_at) = a.without_tools();
            *body == *full.body && tools_at == full.tools_at && a.notices == full.notices
        });
        if !same {
            self.prefixes.set(target, None);
            self.prefixes.refuse(target, generation, len);
        }
        Ok(lent)
    }
}

/// Compiles `messages` for the turn's target without the tools (numbered from message
/// `offset`, as in a full compile), lending `tools` to the request and handing them back.
fn compile_lent(
    input: &TurnInput<'_>,
    messages: Vec<Message>,
    tools: Vec<ToolDefinition>,
    offset: usize,
) -> (Result<wire::Unspliced, ChefError>, Vec<ToolDefinition>) {
    let mut request = Request::new(messages).with_tools(tools);
    let out = wire::compile_unspliced(
        input.target,
        &request,
        input.options,
        false,
        offset,
        wire::ToolsWanted::Omit,
    );
    (out, std::mem::take(&mut request.tools))
}

#[cfg(test)]
mod tests {
    use chef_ir::Target;

    #[test]
    fn every_target_has_its_own_slot() {
        let mut slots = super::PerTarget::default();
        for (i, target) in Target::ALL.into_iter().enumerate() {
            assert_eq!(super::PerTarget::<usize>::index(target), i);
            slots.set(target, Some(i));
        }
        for (i, target) in Target::ALL.into_iter().enumerate() {
            assert_eq!(slots.get(target), Some(&i));
        }
    }
}
