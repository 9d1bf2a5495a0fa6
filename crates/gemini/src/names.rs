//! Tool names on the wire: the name table under [`NameRule::GEMINI`] and its fast path.

use std::borrow::Cow;

use chef_ir::{Content, NameRule, Request, ToolResult, WireNames};

use crate::notice::Notice;

/// The wire-name table for every tool name the request mentions: offered tools, calls and results.
pub(crate) fn table(request: &Request) -> WireNames {
    let calls = request
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|block| match block {
            Content::ToolCall(call) => Some(&call.name),
            Content::ToolResult(ToolResult {
                name: Some(name), ..
            }) => Some(name),
            _ => None,
        });
    let mut all = request.tools.iter().map(|t| &t.name).chain(calls);
    // Most catalogues need no renaming; skip building the table then.
    if all.clone().all(|n| gemini_accepts(n.as_str())) {
        return WireNames::default();
    }
    WireNames::new(all.by_ref(), NameRule::GEMINI)
}

/// The bytes [`NameRule::GEMINI`] allows after the first: letters, digits, `_`, `-`, `.`
/// and `:`.
static GEMINI_BYTES: [bool; 256] = NameRule::GEMINI.byte_table();

/// [`NameRule::GEMINI`]'s test on bytes, inlined for the hot path (every tool name, every
/// turn): a letter or `_` first, then bytes of [`GEMINI_BYTES`], 64 bytes at most.
fn gemini_accepts(name: &str) -> bool {
    let bytes = name.as_bytes();
    match bytes.split_first() {
        Some((first, rest)) => {
            bytes.len() <= NameRule::GEMINI.max_len
                && (first.is_ascii_alphabetic() || *first == b'_')
                && rest
                    .iter()
                    .all(|b| GEMINI_BYTES.get(usize::from(*b)).copied().unwrap_or(false))
        }
        None => false,
    }
}

/// The wire name, borrowing the real name when it is sent unchanged.
pub(crate) fn wire_name<'a>(names: &WireNames, real: &'a str) -> Cow<'a, str> {
    match names.to_wire(real) {
        wire if std::ptr::eq(wire, real) => Cow::Borrowed(real),
        wire => Cow::Owned(wire.to_owned()),
    }
}

pub(crate) fn renamed(names: &WireNames) -> Vec<Notice> {
    names
        .renamed()
        .map(|(real, wire)| Notice::ToolRenamed {
            real: real.to_owned(),
            wire: wire.to_owned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use chef_ir::NameRule;
    use proptest::prelude::*;

    use super::gemini_accepts;

    proptest! {
        #[test]
        fn the_inlined_name_test_is_the_gemini_rule(name in "[a-zA-Z0-9_.:/ -]{0,70}|\\PC{0,8}") {
            prop_assert_eq!(gemini_accepts(&name), NameRule::GEMINI.accepts(&name));
        }
    }
}
