//! Offloading large tool results to the context store.
//!
//! A tool result over the session's [`OffloadPolicy`] threshold is stored whole in the
//! context store's `vfs` namespace, under a name made from its content (the same output
//! twice is stored once), and replaced in the history by what the policy keeps — the head
//! and tail, cut at line boundaries, or nothing — with a marker that gives its
//! `context://vfs/…` address and size. The model reads the rest back with the owned
//! `context` tool (`view` with `offset` and `limit` in lines, or `search` inside the entry).
//!
//! Everything here is pure: the same text, address and policy give the same bytes on every
//! run, so an offloaded result is as cache-stable as the one it replaced. The session side
//! (when results are offloaded, the store writes, the lifecycle) is on [`Chef`]:
//! [`set_policy`](crate::OffloadsMut::set_policy), [`store`](crate::OffloadsMut::store),
//! [`flush`](crate::OffloadsMut::flush), [`cleanup`](crate::OffloadsMut::cleanup)
//! and [`reconcile`](crate::OffloadsMut::reconcile).
//!
//! Sizes are counted in characters (Unicode scalar values), never UTF-16 units, or in
//! tokens with the session's tokenizer.
//!
//! ```
//! use chef::offload::{Keep, OffloadPolicy, ToolRule, Limit, preview};
//!
//! let policy = OffloadPolicy::chars(8_000)
//!     .with_keep(Keep::HeadTail { head: 120, tail: 60 })
//!     .with_tool("read_file", ToolRule::Over(Limit::Chars(32_000)))
//!     .with_tool("get_secret", ToolRule::Never);
//! assert_eq!(policy.limit_for(Some("read_file")), Some(Limit::Chars(32_000)));
//! assert_eq!(policy.limit_for(Some("get_secret")), None);
//!
//! let log: String = (1..=1_000).map(|i| format!("line {i}\n")).collect();
//! let text = preview(&log, "context://vfs/0123456789abcdef", &policy.keep);
//! assert!(text.starts_with("[Tool result offloaded: 8,893 characters in 1,000 lines"));
//! assert!(text.contains("line 1\n") && text.contains("line 1000"));
//! assert!(text.contains("[… lines 17–994 not shown …]"));
//! ```
//!
//! Sizes are written with thousands separators (`8,893 characters`); line numbers, which
//! the model passes back as `offset`, are written plain.
//!
//! ```
//! # use chef::offload::{Keep, preview};
//! let log: String = (1..=5_000).map(|i| format!("{i}\n")).collect();
//! let text = preview(&log, "context://vfs/x", &Keep::HeadTail { head: 10, tail: 5 });
//! assert!(text.contains("in 5,000 lines"));
//! assert!(text.contains("view with offset 6 "));
//! assert!(text.contains("[… lines 6–4999 not shown …]"));
//! ```
//!
//! [`Chef`]: crate::Chef

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// The `vfs` namespace offloaded content lives in.
pub const VFS_NAMESPACE: &str = "vfs";

/// A size, in characters or in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// Characters (Unicode scalar values).
    Chars(usize),
    /// Tokens, counted with the session's tokenizer ([`Chef::with_tokenizer`](crate::Chef::with_tokenizer));
    /// without one, with o200k_base when chef is built with the `tokens` feature, else
    /// with the model-free estimate the overflow budget uses.
    Tokens(usize),
}

/// What one tool's results follow, instead of the policy's threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolRule {
    /// Offloaded over this limit.
    Over(Limit),
    /// Never offloaded.
    Never,
}

/// How much of an offloaded result stays in the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Keep {
    /// The first lines that fit in `head` characters and the last lines that fit in `tail`
    /// characters. A first line longer than `head` is cut at `head` characters (a
    /// one-line JSON document still shows its start); a last line longer than `tail` is
    /// not shown.
    HeadTail {
        /// Characters at most from the start.
        head: usize,
        /// Characters at most from the end.
        tail: usize,
    },
    /// Only the marker.
    Nothing,
}

impl Default for Keep {
    /// 1,500 characters of head and 500 of tail.
    fn default() -> Self {
        Self::HeadTail {
            head: 1_500,
            tail: 500,
        }
    }
}

/// A session's offload policy: which tool results are offloaded, and what stays.
///
/// Set with [`OffloadsMut::set_policy`](crate::OffloadsMut::set_policy); snapshots and
/// the journal carry it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OffloadPolicy {
    /// Results whose text is over this are offloaded.
    pub threshold: Limit,
    /// Per-tool rules (by real tool name), in place of the threshold.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, ToolRule>,
    /// What stays in the window.
    #[serde(default)]
    pub keep: Keep,
}

impl OffloadPolicy {
    /// Offload results over `n` characters, keeping [`Keep::default`].
    pub fn chars(n: usize) -> Self {
        Self {
            threshold: Limit::Chars(n),
            tools: BTreeMap::new(),
            keep: Keep::default(),
        }
    }

    /// Offload results over `n` tokens, keeping [`Keep::default`].
    pub fn tokens(n: usize) -> Self {
        Self {
            threshold: Limit::Tokens(n),
            ..Self::chars(0)
        }
    }

    /// Sets what stays in the window.
    #[must_use]
    pub fn with_keep(mut self, keep: Keep) -> Self {
        self.keep = keep;
        self
    }

    /// Sets one tool's rule (replacing any).
    #[must_use]
    pub fn with_tool(mut self, name: impl Into<String>, rule: ToolRule) -> Self {
        self.tools.insert(name.into(), rule);
        self
    }

    /// The limit a result of `tool` is measured against (`None`: never offloaded).
    pub fn limit_for(&self, tool: Option<&str>) -> Option<Limit> {
        match tool.and_then(|t| self.tools.get(t)) {
            Some(ToolRule::Over(limit)) => Some(*limit),
            Some(ToolRule::Never) => None,
            None => Some(self.threshold),
        }
    }
}

/// The store key of `content`: the first 16 hex digits of its SHA-256, or all 64 when
/// `full` (used when the short name is taken by other content).
pub fn content_key(content: &str, full: bool) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(content.as_bytes());
    let mut hex = String::with_capacity(64);
    for byte in digest.iter().take(if full { 32 } else { 8 }) {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// The `context://vfs/…` address of a key.
pub fn vfs_uri(key: &str) -> String {
    format!("context://{VFS_NAMESPACE}/{key}")
}

/// The lines of `text` as byte ranges without their `\n`. A trailing `\n` ends the last
/// line rather than starting another; empty text has no lines.
pub(crate) fn line_ranges(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        if b == b'\n' {
            out.push((start, i));
            start = i + 1;
        }
    }
    if start < text.len() {
        out.push((start, text.len()));
    }
    out
}

/// How many lines `text` has: a trailing `\n` ends the last line rather than starting
/// another; empty text has none.
pub fn line_count(text: &str) -> usize {
    let newlines = text.bytes().filter(|&b| b == b'\n').count();
    if text.is_empty() || text.ends_with('\n') {
        newlines
    } else {
        newlines + 1
    }
}

/// The words of the marker that name where the content is (`stored whole at URI.`): what
/// the session looks for to find a preview in the history.
pub(crate) const STORED_AT: &str = "stored whole at ";

/// `stored whole at URI.`, as the marker writes it.
pub(crate) fn stored_at(uri: &str) -> String {
    format!("{STORED_AT}{uri}.")
}

/// A number with thousands separators (`204,800`), as the marker prints sizes.
pub(crate) fn grouped(n: usize) -> String {
    chef_compress::thousands(n)
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", grouped(n), if n == 1 { one } else { many })
}

/// The byte index after the first `n` characters of `s` (its length when shorter).
fn char_boundary(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
}

/// What a preview shows of `text` (split into `lines`): whole lines from the start, the
/// start of a first line longer than the head, whole lines from the end.
struct Layout<'t> {
    head_lines: usize,
    cut_first: Option<&'t str>,
    tail_lines: usize,
}

fn layout<'t>(text: &'t str, lines: &[(usize, usize)], keep: &Keep) -> Layout<'t> {
    let (head, tail) = match *keep {
        Keep::Nothing => (0, 0),
        Keep::HeadTail { head, tail } => (head, tail),
    };
    // Whole lines from the start within `head` characters (each with its newline).
    let mut head_lines = 0;
    let mut used = 0;
    for &(s, e) in lines {
        let cost = text[s..e].chars().count() + 1;
        if used + cost > head {
            break;
        }
        used += cost;
        head_lines += 1;
    }
    // A first line that fits in the head by its characters (only its newline overflows)
    // is shown whole, never marked as cut.
    if head_lines == 0
        && lines
            .first()
            .is_some_and(|&(s, e)| head > 0 && text[s..e].chars().count() <= head)
    {
        head_lines = 1;
    }
    // A first line longer than the head: its start.
    let cut_first = lines
        .first()
        .filter(|_| head_lines == 0 && head > 0)
        .map(|&(s, e)| &text[s..s + char_boundary(&text[s..e], head)]);
    // Whole lines from the end within `tail` characters, never overlapping the head.
    let mut tail_lines = 0;
    let mut used = 0;
    let first_free = if cut_first.is_some() { 1 } else { head_lines };
    for &(s, e) in lines.iter().skip(first_free).rev() {
        let cost = text[s..e].chars().count() + 1;
        if used + cost > tail {
            break;
        }
        used += cost;
        tail_lines += 1;
    }
    Layout {
        head_lines,
        cut_first,
        tail_lines,
    }
}

/// Whether [`preview`] would show every line of `text` whole (head and tail cover it): an
/// offload would then only add its marker, so the result is kept as it is.
pub(crate) fn shows_every_line(text: &str, keep: &Keep) -> bool {
    let lines = line_ranges(text);
    let l = layout(text, &lines, keep);
    l.head_lines + l.tail_lines >= lines.len() && l.cut_first.is_none()
}

/// What replaces an offloaded text in the history: the marker, then what `keep` keeps.
/// Pure: the same arguments always give the same bytes.
pub fn preview(text: &str, uri: &str, keep: &Keep) -> String {
    let chars = text.chars().count();
    let lines = line_ranges(text);
    let total = lines.len();
    let mut out = format!(
        "[Tool result offloaded: {} in {}, {} ",
        plural(chars, "character", "characters"),
        plural(total, "line", "lines"),
        stored_at(uri),
    );
    let Layout {
        head_lines,
        cut_first,
        tail_lines,
    } = layout(text, &lines, keep);
    let shown_head = if cut_first.is_some() { 1 } else { head_lines };
    let hidden_from = shown_head + 1; // 1-based first line not shown in full
    let hidden_to = total - tail_lines; // 1-based last line not shown
    if head_lines + tail_lines >= total && cut_first.is_none() {
        out.push_str("Every line is shown below.]");
    } else if head_lines == 0 && tail_lines == 0 && cut_first.is_none() {
        let _ = write!(
            out,
            "Nothing of it is shown here: read it with the context tool (view with offset \
             and limit in lines, or search with a query).]"
        );
    } else {
        let mut shown = Vec::new();
        if let Some(first) = cut_first {
            shown.push(format!(
                "the first {} of line 1",
                plural(first.chars().count(), "character", "characters")
            ));
        } else if head_lines > 0 {
            shown.push(range("line", "lines", 1, head_lines));
        }
        if tail_lines > 0 {
            shown.push(range("line", "lines", hidden_to + 1, total));
        }
        let _ = write!(
            out,
            "Shown: {}. Read the rest with the context tool: view with offset {} (and a \
             limit), or search with a query.]",
            shown.join(" and "),
            if cut_first.is_some() { 1 } else { hidden_from }
        );
    }
    let emit_lines = |out: &mut String, from: usize, to: usize| {
        for &(s, e) in lines.iter().take(to).skip(from) {
            out.push('\n');
            out.push_str(&text[s..e]);
        }
    };
    if let Some(first) = cut_first {
        out.push('\n');
        out.push_str(first);
        if hidden_to >= 1 {
            let _ = write!(
                out,
                "\n[… the rest of line 1{} not shown …]",
                if hidden_to >= 2 {
                    format!(" and {}", range("line", "lines", 2, hidden_to))
                } else {
                    String::new()
                }
            );
        }
    } else {
        emit_lines(&mut out, 0, head_lines);
        if hidden_from <= hidden_to && (head_lines > 0 || tail_lines > 0) {
            let _ = write!(
                out,
                "\n[… {} not shown …]",
                range("line", "lines", hidden_from, hidden_to)
            );
        }
    }
    emit_lines(&mut out, total - tail_lines, total);
    out
}

/// A line range. Line numbers are addresses the model passes back (`offset`), so they are
/// written plain, never with thousands separators.
fn range(one: &str, many: &str, from: usize, to: usize) -> String {
    if from == to {
        format!("{one} {from}")
    } else {
        format!("{many} {from}–{to}")
    }
}

/// A result offloaded by the session whose store write has not happened yet (see
/// [`OffloadsMut::flush`](crate::OffloadsMut::flush)). Snapshots carry these, so a
/// result is never lost between its push and its write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PendingOffload {
    /// The store key in the `vfs` namespace.
    pub key: String,
    /// The full text.
    pub content: String,
    /// The real tool whose result this was, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The tool call the result answered.
    pub call_id: String,
    /// The result's content blocks when they were not the single text block `content`
    /// (several text blocks, attachments): what goes back into the history if the write
    /// fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<Vec<chef_ir::Content>>,
}

/// What [`OffloadsMut::flush`](crate::OffloadsMut::flush) did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct FlushReport {
    /// Results written to the store (addresses, in push order).
    pub stored: Vec<String>,
    /// Of those, the ones whose content the store already held (nothing new written).
    pub deduplicated: usize,
    /// Results the store refused, put back whole into the history: address and why.
    pub kept_whole: Vec<(String, String)>,
}

/// What [`OffloadsMut::store`](crate::OffloadsMut::store) stored.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Offloaded {
    /// The `context://vfs/…` address.
    pub uri: String,
    /// Characters stored.
    pub chars: usize,
    /// Bytes stored (UTF-8).
    pub bytes: usize,
    /// Lines stored.
    pub lines: usize,
    /// Whether the store already held this content (nothing new was written).
    pub deduplicated: bool,
    /// The text to put in the window instead ([`preview`] with the session's keep).
    pub preview: String,
}

/// Caps for [`OffloadsMut::cleanup`](crate::OffloadsMut::cleanup). An entry's age counts
/// from the last time its content was offloaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct OffloadCaps {
    /// Evict entries older than this.
    pub max_age: Option<std::time::Duration>,
    /// Keep at most this many entries (the newest).
    pub max_entries: Option<usize>,
    /// Keep at most this many bytes of content (the newest first).
    pub max_bytes: Option<u64>,
    /// Evict entries the session's history still points to as well (off: they are kept,
    /// and still count toward `max_entries` and `max_bytes`, so older entries nothing points
    /// to are evicted in their place).
    pub evict_referenced: bool,
}

impl OffloadCaps {
    /// No caps.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the maximum age.
    #[must_use]
    pub fn with_max_age(mut self, age: std::time::Duration) -> Self {
        self.max_age = Some(age);
        self
    }

    /// Sets the maximum number of entries.
    #[must_use]
    pub fn with_max_entries(mut self, n: usize) -> Self {
        self.max_entries = Some(n);
        self
    }

    /// Sets the maximum bytes.
    #[must_use]
    pub fn with_max_bytes(mut self, n: u64) -> Self {
        self.max_bytes = Some(n);
        self
    }

    /// Lets cleanup evict entries the history still points to.
    #[must_use]
    pub fn evicting_referenced(mut self) -> Self {
        self.evict_referenced = true;
        self
    }
}

/// Why cleanup evicted an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EvictReason {
    /// Older than `max_age`.
    Age,
    /// Beyond `max_entries`.
    Count,
    /// Beyond `max_bytes`.
    Bytes,
}

impl std::fmt::Display for EvictReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Age => "older than the maximum age",
            Self::Count => "over the maximum number of entries",
            Self::Bytes => "over the maximum bytes",
        })
    }
}

/// One entry cleanup evicted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Evicted {
    /// Its address.
    pub uri: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Why.
    pub reason: EvictReason,
}

/// What [`OffloadsMut::cleanup`](crate::OffloadsMut::cleanup) did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct CleanupReport {
    /// Entries evicted, oldest first.
    pub evicted: Vec<Evicted>,
    /// Entries kept.
    pub kept: usize,
    /// Bytes kept.
    pub kept_bytes: u64,
    /// Entries over a cap that were kept because the history points to them.
    pub kept_referenced: Vec<String>,
    /// Entries another writer changed while cleanup ran (left in place).
    pub skipped_changed: Vec<String>,
}

/// What [`OffloadsMut::reconcile`](crate::OffloadsMut::reconcile) found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ReconcileReport {
    /// Entries in the `vfs` namespace.
    pub entries: usize,
    /// Their bytes.
    pub bytes: u64,
    /// Entries without chef's bookkeeping (left by an earlier process or another writer),
    /// now given it, with their age counted from now.
    pub adopted: Vec<String>,
    /// Entries whose content does not match their content-addressed name (left alone).
    pub mismatched: Vec<String>,
}

/// The meta keys chef keeps on an offloaded entry.
pub(crate) mod meta {
    /// Unix milliseconds of the last offload of this content.
    pub(crate) const USED_MS: &str = "offloaded_ms";
    /// Bytes of content.
    pub(crate) const BYTES: &str = "bytes";
    /// Characters of content.
    pub(crate) const CHARS: &str = "chars";
    /// Lines of content.
    pub(crate) const LINES: &str = "lines";
    /// The tool whose result it was.
    pub(crate) const TOOL: &str = "tool";
}

/// Whether a `vfs` key has the shape of a content-addressed name (16 or 64 lowercase hex).
pub(crate) fn is_content_key(key: &str) -> bool {
    (key.len() == 16 || key.len() == 64)
        && key
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_counts() {
        assert_eq!(line_count(""), 0);
        assert_eq!(line_count("a"), 1);
        assert_eq!(line_count("a\n"), 1);
        assert_eq!(line_count("a\n\nb"), 3);
        assert_eq!(line_ranges("a\nbc\n"), vec![(0, 1), (2, 4)]);
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_000), "1,000");
        assert_eq!(grouped(204_800), "204,800");
        assert_eq!(grouped(1_234_567), "1,234,567");
    }

    #[test]
    fn keys_are_content_addressed() {
        let a = content_key("hello", false);
        assert_eq!(a, "2cf24dba5fb0a30e");
        assert_eq!(content_key("hello", true).len(), 64);
        assert!(content_key("hello", true).starts_with(&a));
        assert!(is_content_key(&a));
        assert!(!is_content_key("notes"));
        assert_eq!(vfs_uri(&a), "context://vfs/2cf24dba5fb0a30e");
    }

    #[test]
    fn head_and_tail_snap_to_lines() {
        let text = "one\ntwo\nthree\nfour\nfive\n";
        let p = preview(
            text,
            "context://vfs/x",
            &Keep::HeadTail { head: 8, tail: 5 },
        );
        assert_eq!(
            p,
            "[Tool result offloaded: 24 characters in 5 lines, stored whole at context://vfs/x. \
             Shown: lines 1–2 and line 5. Read the rest with the context tool: view with \
             offset 3 (and a limit), or search with a query.]\none\ntwo\n[… lines 3–4 not \
             shown …]\nfive"
        );
    }

    #[test]
    fn nothing_kept() {
        let p = preview("a\nb", "context://vfs/x", &Keep::Nothing);
        assert!(p.starts_with("[Tool result offloaded: 3 characters in 2 lines"));
        assert!(p.contains("Nothing of it is shown here"));
        assert!(!p.contains('\n'));
    }

    #[test]
    fn one_long_line_shows_its_start() {
        let json = format!("{{\"rows\":[{}]}}", "1,".repeat(500));
        let p = preview(&json, "u", &Keep::HeadTail { head: 10, tail: 10 });
        assert!(p.contains("Shown: the first 10 characters of line 1."));
        assert!(p.ends_with("\n{\"rows\":[1\n[… the rest of line 1 not shown …]"));
        // Multi-byte text is cut at a character boundary.
        let p = preview(&"é".repeat(50), "u", &Keep::HeadTail { head: 3, tail: 0 });
        assert!(p.contains("\nééé\n"));
    }

    #[test]
    fn everything_fits() {
        let p = preview("a\nb\n", "u", &Keep::HeadTail { head: 100, tail: 0 });
        assert!(p.contains("Every line is shown below."));
        assert!(p.ends_with("\na\nb"));
        let p = preview("a\nb\n", "u", &Keep::HeadTail { head: 2, tail: 2 });
        assert!(p.contains("Every line is shown below."));
        assert!(p.ends_with("\na\nb"));
    }

    #[test]
    fn a_first_line_of_exactly_head_characters_is_shown_whole_not_cut() {
        let p = preview("abc", "u", &Keep::HeadTail { head: 3, tail: 0 });
        assert!(p.contains("Every line is shown below."), "{p}");
        assert!(p.ends_with("\nabc"), "{p}");
        let p = preview("abc\ndef\nghi", "u", &Keep::HeadTail { head: 3, tail: 0 });
        assert!(p.contains("Shown: line 1."), "{p}");
        assert!(!p.contains("rest of line 1"), "{p}");
        assert!(p.ends_with("\nabc\n[… lines 2–3 not shown …]"), "{p}");
    }

    #[test]
    fn tail_only() {
        let p = preview("a\nb\nc", "u", &Keep::HeadTail { head: 0, tail: 2 });
        assert!(
            p.contains("Shown: line 3. Read the rest with the context tool: view with offset 1")
        );
        assert!(p.ends_with("\n[… lines 1–2 not shown …]\nc"), "{p}");
    }

    #[test]
    fn policy_rules() {
        let p = OffloadPolicy::tokens(100).with_tool("x", ToolRule::Never);
        assert_eq!(p.limit_for(None), Some(Limit::Tokens(100)));
        assert_eq!(p.limit_for(Some("y")), Some(Limit::Tokens(100)));
        assert_eq!(p.limit_for(Some("x")), None);
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(
            json,
            r#"{"threshold":{"tokens":100},"tools":{"x":"never"},"keep":{"head_tail":{"head":1500,"tail":500}}}"#
        );
        assert_eq!(serde_json::from_str::<OffloadPolicy>(&json).unwrap(), p);
    }
}
