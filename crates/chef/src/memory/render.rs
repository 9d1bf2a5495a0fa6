//! The memory block the model reads.

use std::fmt::Write as _;

use super::MemoryEntry;

/// Which wording the memory block uses: the one for the unified `context` tool, or the one
/// for the legacy `create_memory` / `modify_memory` tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MemoryStyle {
    /// The unified `context` tool (`context://memory/<key>`).
    #[default]
    Unified,
    /// The legacy memory tools.
    Legacy,
}

impl MemoryStyle {
    /// The first line of the block.
    pub fn header(self) -> &'static str {
        match self {
            Self::Unified => "Memory (context://memory/*) currently holds:",
            Self::Legacy => "You recall the following from previous conversations:",
        }
    }
}

/// Render `entries`, in the order given, as the memory block: header line, `<memory>` data,
/// then key guidance. `None` when `entries` is empty (no block at all).
///
/// `allowed` is the configured allow-list: when it is non-empty the guidance names the
/// writable keys, otherwise it names the rendered keys.
pub(crate) fn render_block(
    entries: &[&MemoryEntry],
    style: MemoryStyle,
    allowed: Option<&[String]>,
) -> Option<String> {
    if entries.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(
        256 + entries
            .iter()
            .map(|e| e.value().len() + e.key().as_str().len() + 128)
            .sum::<usize>(),
    );
    out.push_str(style.header());
    out.push('\n');
    out.push_str("<memory>\n");
    for (i, entry) in entries.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        push_entry(&mut out, entry);
    }
    out.push_str("</memory>");
    let (kind, keys, advice) = match allowed {
        Some(allowed) if !allowed.is_empty() => {
            let keys = escaped_list(allowed.iter().map(String::as_str));
            match style {
                MemoryStyle::Unified => (
                    "Writable",
                    keys,
                    "A write to any other key under context://memory/ is refused.",
                ),
                MemoryStyle::Legacy => ("Allowed", keys, "The memory tools refuse any other key."),
            }
        }
        _ => (
            "Existing",
            escaped_list(entries.iter().map(|e| e.key().as_str())),
            match style {
                MemoryStyle::Unified => {
                    "To change one of these facts, edit context://memory/<key> with the context tool instead of creating a second key for it."
                }
                MemoryStyle::Legacy => {
                    "To change one of these facts, update its key with modify_memory instead of creating a second key for it."
                }
            },
        ),
    };
    let _ = write!(out, "\n\n{kind} memory keys: {keys}. {advice}");
    Some(out)
}

fn push_entry(out: &mut String, entry: &MemoryEntry) {
    out.push_str("<entry key=\"");
    escape_into(out, entry.key().as_str(), true);
    out.push_str("\">\n");
    if let Some(description) = entry.description() {
        out.push_str("<description>\n");
        escape_into(out, description, false);
        out.push_str("\n</description>\n");
    }
    let _ = write!(
        out,
        "<metadata>\n- updated_turn={}\n- update_count={}\n</metadata>\n",
        entry.updated_turn(),
        entry.update_count()
    );
    out.push_str("<value>\n");
    escape_into(out, entry.value(), false);
    out.push_str("\n</value>\n</entry>\n");
}

/// Keys joined with `, `, escaped like the rest of the block.
fn escaped_list<'a>(keys: impl Iterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for (i, key) in keys.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        escape_into(&mut out, key, false);
    }
    out
}

/// Escape `&`, `<`, `>` (and `"` inside an attribute), so that no key, description or value
/// can close the element it sits in or forge another entry.
fn escape_into(out: &mut String, text: &str, attribute: bool) {
    // Copy runs of ordinary text whole; the special characters are ASCII, so every split
    // point is a char boundary.
    let mut start = 0;
    for (i, byte) in text.bytes().enumerate() {
        let replacement = match byte {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' if attribute => "&quot;",
            _ => continue,
        };
        out.push_str(text.get(start..i).unwrap_or_default());
        out.push_str(replacement);
        start = i + 1;
    }
    out.push_str(text.get(start..).unwrap_or_default());
}
