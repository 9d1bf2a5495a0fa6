//! Gemini has no prefill: a prefill becomes an instruction in the last user turn.

use crate::{
    compile::Pending,
    notice::Notice,
    wire::{self, Part},
};

/// The instruction a prefill degrades to (providers.md §0.2 `PREFILL_ENFORCEMENT`): six
/// lines, the prefill quoted verbatim (no escaping), no trailing newline
/// ([`chef_ir::prefill_enforcement`] with
/// [`PrefillWording::Response`](chef_ir::PrefillWording::Response)).
pub fn prefill_enforcement(prefill: &str) -> String {
    chef_ir::prefill_enforcement(prefill, chef_ir::PrefillWording::Response)
}

/// Sends `prefill` as [`prefill_enforcement`] text: a new text part of the last content
/// when it is a user content, else a new trailing user content (standing after message
/// `next_message - 1`), so no content is dropped or rewritten. Either way the content is
/// marked as touched (out of the cache prefix) and a [`Notice::PrefillDegraded`] says
/// which.
pub(crate) fn degrade(
    prefill: &str,
    pending: &mut Vec<Pending<'_>>,
    next_message: usize,
    notices: &mut Vec<Notice>,
) {
    let part = Part::text(prefill_enforcement(prefill));
    match pending.last_mut() {
        Some(last) if last.role == wire::Role::USER => {
            last.parts.push(part);
            last.touched = true;
            notices.push(Notice::PrefillDegraded { new_content: false });
        }
        _ => {
            pending.push(Pending {
                role: wire::Role::USER,
                parts: vec![part],
                last: next_message,
                touched: true,
            });
            notices.push(Notice::PrefillDegraded { new_content: true });
        }
    }
}
