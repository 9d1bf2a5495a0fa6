//! Gemini has no prefill: a prefill becomes an instruction in the last user turn (the
//! compile does it, with the text this module writes).

/// The instruction a prefill degrades to (providers.md §0.2 `PREFILL_ENFORCEMENT`): six
/// lines, the prefill quoted verbatim (no escaping), no trailing newline
/// ([`chef_ir::prefill_enforcement`] with
/// [`PrefillWording::Response`](chef_ir::PrefillWording::Response)).
pub fn prefill_enforcement(prefill: &str) -> String {
    chef_ir::prefill_enforcement(prefill, chef_ir::PrefillWording::Response)
}
