//! Reusing the serialised history prefix across turns.
//!
//! A turn appends to the history; everything before the last few messages compiles to the
//! same bytes as last turn. Per target, chef keeps those bytes (the *prefix*: the wire
//! elements of `history[..cut]`) and compiles only the system layers plus `history[cut..]`,
//! then splices the prefix into the messages array. The result is byte-identical to a full
//! compile because the cut is only placed where the provider crates' conversion is local:
//!
//! * `history[cut]` is a user message and `history[cut - 1]` an assistant message without
//!   tool calls (no provider merges or pairs messages across that boundary) whose text
//!   does not end in whitespace (Anthropic trims a request's final assistant text);
//! * the prefix holds no system message, no cache breakpoint and no positional flag, and
//!   every tool call in it is answered in it, by a result or by the placeholder a compile
//!   gives a call the conversation moved on from (`interrupted.rs`), so nothing is
//!   answered across the cut; no later tool result names a call of the prefix;
//! * every notice of the suffix compile is one the provider crate renumbers by the cut
//!   ([`chef_ir::layout::Layout::notices_shifted`]: a notice about what happened inside
//!   one message, such as an error flag OpenAI has no place for); the prefix's own notices
//!   are kept with its bytes and put back in their place, after those of the system
//!   layers, so the notices are a full compile's too;
//! * the system layers (preamble, directory, memory) are equal to those the prefix was
//!   compiled with, the tool selection is the same `Arc`, and the history has only grown
//!   since (a generation counter that `set_history`, `clear_history`, overflow and restore
//!   bump).
//!
//! When a prefix is first made, the turn is also compiled in full and the two bodies are
//! compared; a mismatch drops the prefix for this history generation. Once the suffix has
//! grown past [`MAX_SUFFIX`], the prefix is grown to a later cut by compiling only the
//! messages between the two cuts, and the turn through the grown prefix is compared with
//! the turn through the old one (so a long conversation never compiles its whole history
//! again while it only grows). Anything unusual falls back to the full compile.

use std::{collections::HashSet, sync::Arc};

use bytes::Bytes;
use chef_ir::{Message, Role, Target, layout};

use super::{PerTarget, wire::PrefixInsert};
use crate::session::select::TurnTools;

/// Histories shorter than this are compiled in full.
pub(crate) const MIN_HISTORY: usize = 24;
/// A prefix is grown to a later cut (or made again) once more messages than this follow its
/// cut.
pub(crate) const MAX_SUFFIX: usize = 48;
/// A new cut leaves at least this many messages after it.
const KEEP_SUFFIX: usize = 2;

/// The prefix of one target.
pub(crate) struct Slot {
    pub(crate) tools: Arc<TurnTools>,
    pub(crate) generation: u64,
    pub(crate) head: Vec<Message>,
    pub(crate) cut: usize,
    /// The placeholder results a compile adds to `history[..cut]` (calls the conversation
    /// moved on from: `interrupted.rs`): IR messages before the cut that the history does
    /// not hold, so a notice after the cut is numbered `cut + inserted` further on.
    pub(crate) inserted: usize,
    /// Wire elements the system layers alone produce (OpenAI Chat's system messages).
    pub(crate) head_elems: usize,
    /// The prefix's wire elements, comma-separated (shared with every body spliced from
    /// them: a chunked body holds them without a copy).
    pub(crate) bytes: Bytes,
    /// How many notices the system layers and the name table give (a compile of the head
    /// alone, the tools left out): the prefix's notices follow them and the tool notices.
    pub(crate) head_notices: usize,
    /// The notices about the prefix's messages, in order.
    pub(crate) notices: Vec<String>,
    /// Their fold keys (`crate::notices::fold`), made on first use: reset whenever
    /// `notices` changes.
    pub(crate) keys: std::sync::OnceLock<Arc<[Option<crate::notices::Key>]>>,
    /// Tool-call ids of the prefix.
    pub(crate) calls: HashSet<String>,
    /// The bytes of a suffix body up to and including its messages array's `[`, as found
    /// by parsing once: a later body that starts with the same bytes has its array at the
    /// same place (JSON is read left to right), so it is not parsed again.
    pub(crate) array_head: parking_lot::Mutex<Option<Vec<u8>>>,
}

/// How a slot fits this turn's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fit {
    /// Nothing follows its cut (or the history is shorter): not usable.
    None,
    /// At most [`MAX_SUFFIX`] messages follow its cut: usable.
    Usable,
    /// More than [`MAX_SUFFIX`] follow: one to grow over the messages after its cut.
    Outgrown,
}

/// Per-target prefixes, and the generation for which making one failed.
#[derive(Default)]
pub(crate) struct Prefixes {
    slots: PerTarget<Slot>,
    refused: PerTarget<(u64, usize)>,
}

impl Slot {
    /// The fold keys of the prefix's notices, made once.
    pub(crate) fn notice_keys(&self) -> Arc<[Option<crate::notices::Key>]> {
        Arc::clone(self.keys.get_or_init(|| {
            self.notices
                .iter()
                .map(|n| crate::notices::key_of(n))
                .collect()
        }))
    }
}

impl Prefixes {
    pub(crate) fn slot(&self, target: Target) -> Option<&Slot> {
        self.slots.get(target)
    }

    pub(crate) fn set(&mut self, target: Target, slot: Option<Slot>) {
        self.slots.set(target, slot);
    }

    /// The slot of `target`, taken out.
    pub(crate) fn take(&mut self, target: Target) -> Option<Slot> {
        self.slots.take(target)
    }

    /// Records that no prefix could be made for this generation at this history length.
    pub(crate) fn refuse(&mut self, target: Target, generation: u64, len: usize) {
        self.refused.set(target, Some((generation, len)));
    }

    /// Whether making a prefix is worth trying now.
    pub(crate) fn may_try(&self, target: Target, generation: u64, len: usize) -> bool {
        if len < MIN_HISTORY {
            return false;
        }
        match self.refused.get(target).copied() {
            // Retry once the history has grown by a suffix's worth.
            Some((g, at)) if g == generation => len >= at + MAX_SUFFIX / 2,
            _ => true,
        }
    }

    /// The slot for this target when it was made for these tools and this history
    /// generation, and how it fits a history of `len` messages.
    pub(crate) fn current(
        &self,
        target: Target,
        tools: &Arc<TurnTools>,
        generation: u64,
        len: usize,
    ) -> Option<(&Slot, Fit)> {
        let slot = self
            .slot(target)
            .filter(|s| Arc::ptr_eq(&s.tools, tools) && s.generation == generation)?;
        let fit = match len.checked_sub(slot.cut) {
            Some(0) | None => Fit::None,
            Some(suffix) if suffix <= MAX_SUFFIX => Fit::Usable,
            Some(_) => Fit::Outgrown,
        };
        Some((slot, fit))
    }
}

/// Whether `message`'s last block is text ending in whitespace.
fn ends_in_whitespace(message: &Message) -> bool {
    matches!(
        message.content.last(),
        Some(chef_ir::Content::Text { text, .. }) if text.ends_with(char::is_whitespace)
    )
}

/// The latest cut in `history` that keeps the conversion local (see the module docs).
pub(crate) fn find_cut(history: &[Message]) -> Option<usize> {
    find_cut_after(history, 0, &HashSet::new())
}

/// The latest cut after `from` that keeps the conversion local, where `history[..from]` is
/// a prefix that does on its own and whose tool calls are `prefix_calls` (a prefix grown
/// over the messages that followed it; `from` 0 for a first one).
pub(crate) fn find_cut_after(
    history: &[Message],
    from: usize,
    prefix_calls: &HashSet<String>,
) -> Option<usize> {
    // closed[i]: history[..i] is a valid prefix on its own.
    let mut open: HashSet<&str> = HashSet::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut best = None;
    let last = history.len().saturating_sub(KEEP_SUFFIX);
    for (i, message) in history.iter().enumerate().skip(from) {
        if matches!(message.role, Role::User | Role::Assistant) {
            // Calls still open here were interrupted: the compile closes them with
            // placeholder results just before this message (`interrupted.rs`), in the
            // prefix and in a full compile alike. A result this message holds itself
            // still answers its call.
            open.retain(|id| {
                message
                    .tool_results_iter()
                    .any(|r| r.tool_call_id.as_str() == *id)
            });
        }
        if i > from && i <= last && open.is_empty() && message.role == Role::User {
            // An assistant turn ending in whitespace is no boundary: as the last message of
            // a request (a prefix compiled alone) Anthropic's is trimmed, in full it is not.
            let boundary = history.get(i - 1).is_some_and(|p| {
                p.role == Role::Assistant
                    && p.tool_calls().next().is_none()
                    && !ends_in_whitespace(p)
            });
            if boundary && !message.positional {
                best = Some(i);
            }
        }
        if message.role == Role::System || message.cache_breakpoint || message.positional {
            break;
        }
        for call in message.tool_calls() {
            if prefix_calls.contains(call.id.as_str()) || !seen.insert(call.id.as_str()) {
                break;
            }
            open.insert(call.id.as_str());
        }
        let mut orphan = false;
        for result in message.tool_results_iter() {
            orphan |= !open.remove(result.tool_call_id.as_str());
        }
        if orphan {
            break;
        }
    }
    let cut = best?;
    // No later result may name a call of the prefix.
    let calls: HashSet<&str> = history
        .get(from..cut)?
        .iter()
        .flat_map(Message::tool_calls)
        .map(|c| c.id.as_str())
        .collect();
    let crosses = history
        .get(cut..)?
        .iter()
        .flat_map(Message::tool_results_iter)
        .any(|r| {
            let id = r.tool_call_id.as_str();
            calls.contains(id) || prefix_calls.contains(id)
        });
    (!crosses).then_some(cut)
}

/// Whether the suffix `history[cut..]` keeps the conversion local.
pub(crate) fn suffix_ok(slot: &Slot, history: &[Message]) -> bool {
    history.get(slot.cut..).is_some_and(|suffix| {
        suffix.iter().all(|m| {
            !m.cache_breakpoint
                && (m.role != Role::System || m.positional)
                && m.tool_results_iter()
                    .all(|r| !slot.calls.contains(r.tool_call_id.as_str()))
        })
    })
}

/// Whether chef's rolling breakpoint fell inside the history part of `messages` (the
/// assembled head + suffix): otherwise it would sit on the last prefix message in a full
/// compile.
pub(crate) fn breakpoint_in_suffix(messages: &[Message], head_len: usize, cache: bool) -> bool {
    !cache
        || messages
            .get(head_len..)
            .is_some_and(|m| m.iter().any(|m| m.cache_breakpoint))
}

/// Where the prefix elements go in the messages array of `body`: after its first
/// `head_elems` elements (which must be followed by at least one more).
pub(crate) fn prefix_insert(
    key: &str,
    body: &[u8],
    head_elems: usize,
    prefix: &Bytes,
    array_head: &parking_lot::Mutex<Option<Vec<u8>>>,
) -> Option<PrefixInsert> {
    // A body that starts with the bytes found last time up to the insertion point has the
    // insertion point at the same place; only what follows it is checked.
    let known = array_head
        .lock()
        .as_ref()
        .filter(|head| body.starts_with(head))
        .map(Vec::len);
    let at = match known {
        Some(at) => at,
        None => {
            let at = if head_elems == 0 {
                // Only the array's start is needed.
                layout::array_start(body, key)?
            } else {
                let (_, spans) = layout::elements(body, key)?;
                spans.get(head_elems - 1)?.1
            };
            *array_head.lock() = body.get(..at).map(<[u8]>::to_vec);
            at
        }
    };
    // Another element must follow: after `[`, anything but `]`; after an element, a comma.
    let next = body.get(at..)?.iter().find(|b| !b.is_ascii_whitespace());
    let ok = if head_elems == 0 {
        at.checked_sub(1).and_then(|i| body.get(i)) == Some(&b'[')
            && next.is_some_and(|&b| b != b']')
    } else {
        next == Some(&b',')
    };
    ok.then(|| PrefixInsert {
        at,
        bytes: prefix.clone(),
        comma_before: head_elems > 0,
    })
}

/// The prefix bytes of a compile of head + `history[..cut]`: its elements after the
/// head's.
pub(crate) fn prefix_bytes(key: &str, body: &[u8], head_elems: usize) -> Option<Bytes> {
    let (_, spans) = layout::elements(body, key)?;
    let (start, _) = *spans.get(head_elems)?;
    let (_, end) = *spans.last()?;
    body.get(start..end).map(Bytes::copy_from_slice)
}
