//! The dispatch gate: a runtime blocklist enforced on the real tool a call reaches.
//!
//! The reference checks only the outer name a model wrote, so blocking `delete_file` does
//! not stop `file_ops(action="delete_file")`. chef's gate runs **after** resolution (see
//! the dispatch entry point): whatever route the model takes — another letter
//! case, a namespace action, a compressed dispatcher code, a level-2 compound op, `q` then
//! `t`, an alias, a toolkit tool, surrounding whitespace — the gate sees the real tool
//! name, and also the group (namespace or toolkit) it was reached through.
//!
//! Blocking never edits the tool list the model sees, so the cached prompt prefix is
//! unchanged; pair it with an announcement to tell the model in words.

use serde::{Deserialize, Serialize};

/// The blocklist: names of real tools, namespaces or toolkits that may not be dispatched.
///
/// Entries are stored as given (order and duplicates kept, for `blocked_tools()`), and
/// matched against real names the way the dispatch entry point matches what a model
/// writes: ignoring letter case and separators, so the entry `GDrive_Upload_File` blocks
/// `gdrive_upload_file` (and `gdrive-upload-file`). An entry that reduces to nothing
/// under that rule (`"_"`, say) matches only its exact spelling. Matching loosely can only
/// block more, never less: a typo of case never leaves a tool open. An entry naming a
/// namespace blocks every action of it; an entry naming a toolkit blocks loading it and
/// every tool in it; an entry `load_toolkit` blocks all loading.
///
/// An entry ending in `*` is a prefix: it blocks every name that starts with it, compared
/// in lower case with `-`, `.` and spaces read as `_` (`git_*` and `Git-*` block
/// `git_push` and `git.pull`; `files_*` does not block `filesystem_read`), as in `chef mcp
/// serve`'s blocklist. A `*` anywhere else is no pattern: such an entry matches only its
/// exact spelling (a tool name holds no `*`), so it blocks nothing and is reported as
/// unmatched, rather than being read past like a separator (`*push` would block `push`).
///
/// An entry that matches no registered tool, namespace, toolkit or owned tool is reported
/// by [`ToolsMut::set_blocked`](crate::ToolsMut::set_blocked) and, once per entry, in
/// a compile's notices.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Blocklist {
    entries: Vec<String>,
}

impl Blocklist {
    /// A blocklist of these names.
    pub fn new<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            entries: names.into_iter().map(Into::into).collect(),
        }
    }

    /// The entries as given.
    pub fn entries(&self) -> &[String] {
        &self.entries
    }

    /// True when nothing is blocked.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether `name` (a real tool, namespace or toolkit name) is blocked: some entry
    /// spells it, ignoring letter case and separators.
    pub fn blocks(&self, name: &str) -> bool {
        self.entry_for(name).is_some()
    }

    /// The entry that blocks `name`, if one does.
    pub fn entry_for(&self, name: &str) -> Option<&str> {
        if self.entries.is_empty() {
            return None;
        }
        let key = name_key(name);
        // Only a prefix pattern needs the name's prefix form.
        let mut prefixed: Option<String> = None;
        self.entries
            .iter()
            .find(|e| match entry_kind(e) {
                EntryKind::Prefix(prefix) => prefixed
                    .get_or_insert_with(|| prefix_form(name))
                    .starts_with(&prefix),
                EntryKind::Name => same_name(e, name, &key),
            })
            .map(String::as_str)
    }

    /// The entries (in order, each once) that match none of `names`.
    pub(crate) fn unmatched<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        let mut exact = std::collections::BTreeSet::new();
        let mut keys = std::collections::BTreeSet::new();
        let mut prefixed = Vec::new();
        // Prefix forms only when a prefix entry will read them.
        let prefixes = self
            .entries
            .iter()
            .any(|e| matches!(entry_kind(e), EntryKind::Prefix(_)));
        for name in names {
            exact.insert(name);
            keys.insert(name_key(name));
            if prefixes {
                prefixed.push(prefix_form(name));
            }
        }
        let mut unmatched: Vec<String> = Vec::new();
        for entry in &self.entries {
            let matched = match entry_kind(entry) {
                EntryKind::Prefix(prefix) => prefixed.iter().any(|n| n.starts_with(&prefix)),
                EntryKind::Name => {
                    let key = name_key(entry);
                    exact.contains(entry.as_str())
                        || (!key.is_empty() && !entry.contains('*') && keys.contains(&key))
                }
            };
            if !matched && !unmatched.contains(entry) {
                unmatched.push(entry.clone());
            }
        }
        unmatched
    }

    /// The first of `names` that is blocked.
    pub fn first_blocked<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
        names.into_iter().find(|n| self.blocks(n))
    }
}

/// What [`ToolsMut::set_blocked`](crate::ToolsMut::set_blocked) found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BlockReport {
    /// Entries that match no registered tool, namespace, toolkit or owned tool, in
    /// blocklist order: most likely typos. They stay on the blocklist (the tool may be
    /// registered later).
    pub unmatched: Vec<String>,
}

/// Letters and digits only, lower-cased: `Delete-File`, ` delete_file ` and `deleteFile`
/// all give `deletefile`. A letter or digit outside ASCII counts as its ASCII reading
/// (`é` as `e`, a full-width `ｓ` as `s`, `天` as `tian`), so a look-alike spelling reads
/// as the name it imitates, as its wire name does (`chef_ir::WireNames`). The key under
/// which the gate and the blocklist compare names (and `chef mcp serve`'s blocklist,
/// which matches the same way).
///
/// ```
/// assert_eq!(chef::gate::name_key("Office-DB-Drop-Table"), "officedbdroptable");
/// assert_eq!(chef::gate::name_key("ｓｅｎｄ\u{200b}_café"), "sendcafe");
/// ```
pub fn name_key(name: &str) -> String {
    folded(name, None)
}

/// `name` lower-cased, a letter or digit outside ASCII as its ASCII reading, and every
/// other character dropped, or with `between` as `Some(c)` written as one `c` per run:
/// [`name_key`] and [`prefix_form`].
fn folded(name: &str, between: Option<char>) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if c.is_alphanumeric() {
            push_reading(&mut out, c);
        } else if let Some(between) = between
            && !out.ends_with(between)
        {
            out.push(between);
        }
    }
    out
}

/// The ASCII letters and digits of `c`'s reading, lower-cased (`c` itself, lower-cased,
/// when it has none).
fn push_reading(out: &mut String, c: char) {
    let reading = deunicode::deunicode_char(c).unwrap_or("");
    if reading.chars().any(|r| r.is_ascii_alphanumeric()) {
        out.extend(
            reading
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .map(|r| r.to_ascii_lowercase()),
        );
    } else {
        out.extend(c.to_lowercase());
    }
}

/// Whether blocklist `entry` names `name` (whose [`name_key`] is `key`). An entry holding
/// a `*` that is not a prefix pattern's matches only its exact spelling.
fn same_name(entry: &str, name: &str, key: &str) -> bool {
    if key.is_empty() || entry.contains('*') {
        return entry == name;
    }
    entry == name || name_key(entry) == key
}

/// What a blocklist entry is.
enum EntryKind {
    /// A name ([`same_name`]).
    Name,
    /// A prefix pattern: what precedes the trailing `*`, in [`prefix_form`].
    Prefix(String),
}

fn entry_kind(entry: &str) -> EntryKind {
    if !entry.contains('*') {
        return EntryKind::Name;
    }
    match entry.trim().strip_suffix('*') {
        Some(prefix) if !prefix.contains('*') => EntryKind::Prefix(prefix_form(prefix)),
        _ => EntryKind::Name,
    }
}

/// The form prefix patterns compare: lower case, a letter or digit outside ASCII as its
/// ASCII reading (as in [`name_key`]), every other character (`-`, `.`, a space, a dash,
/// a zero-width or no-break space) as `_`, and a run of `_` as one. `files_*` does not
/// block `filesystem_read`, and `send_*` blocks `send–letter` and `send\u{200b}_memo`,
/// which go on the wire as `send_letter` and `send__memo`.
///
/// ```
/// assert_eq!(chef::gate::prefix_form("Send\u{2013}Letter"), "send_letter");
/// assert_eq!(chef::gate::prefix_form("ｓｅｎｄ\u{200b}_memo"), "send_memo");
/// ```
pub fn prefix_form(name: &str) -> String {
    folded(name, Some('_'))
}

/// Why a blocklist entry can never match as meant: a `*` that is not its last character
/// (only a trailing `*` is a pattern), or `**`. A configuration refuses such an entry.
///
/// ```
/// use chef::gate::pattern_error;
///
/// assert!(pattern_error("git_*").is_none());
/// assert!(pattern_error("delete_file").is_none());
/// assert!(pattern_error("*_delete").is_some());
/// ```
pub fn pattern_error(entry: &str) -> Option<String> {
    let trimmed = entry.trim();
    (trimmed.trim_end_matches('*').contains('*') || trimmed.ends_with("**")).then(|| {
        format!(
            "blocklist entry {entry:?}: only a `*` at the end is a pattern (a prefix, e.g. \
             \"git_*\"); name each tool, or the prefix they share"
        )
    })
}

/// The text returned to the model for a blocked call.
pub fn blocked_reason(name: &str) -> String {
    // A name the model wrote (a prefix pattern blocks names no tool has) is quoted as
    // every refusal quotes one: escaped, and cut at 200 characters.
    format!(
        "Tool \"{}\" is currently blocked.",
        chef_compress::similarity::shown_name(name)
    )
}

/// The text returned to the model for a call without a usable name.
pub const MALFORMED_CALL_REASON: &str = "Tool call rejected: missing or empty tool name.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_kept_verbatim_and_matched_ignoring_case_and_separators() {
        let b = Blocklist::new(["x", "x", "GDrive_Upload_File", "_"]);
        assert_eq!(b.entries(), ["x", "x", "GDrive_Upload_File", "_"]);
        assert!(b.blocks("GDrive_Upload_File"));
        // Deliberate: the reference matches exactly, which leaves `gdrive_upload_file`
        // open when the entry is written with other case.
        assert!(b.blocks("gdrive_upload_file"));
        assert!(b.blocks("gdrive-upload-file"));
        assert_eq!(
            b.entry_for("GDRIVE.UPLOAD.FILE"),
            Some("GDrive_Upload_File")
        );
        assert!(!b.blocks("gdrive_upload"));
        // An entry without letters or digits matches its exact spelling only.
        assert!(b.blocks("_"));
        assert!(!b.blocks("-"));
        assert_eq!(b.first_blocked(["a", "X"]), Some("X"));
        assert!(Blocklist::default().is_empty());
    }

    #[test]
    fn a_trailing_star_is_a_prefix_and_any_other_star_matches_nothing_loosely() {
        let b = Blocklist::new(["Git-*", "*push", "send_*_email"]);
        assert_eq!(b.entry_for("git_push"), Some("Git-*"));
        assert_eq!(b.entry_for("git.pull"), Some("Git-*"));
        assert!(!b.blocks("github_search"));
        // Not read past like a separator.
        assert!(!b.blocks("push"));
        assert!(!b.blocks("sendemail"));
        assert!(!b.blocks("send"));
        let files = Blocklist::new(["files_*"]);
        assert!(!files.blocks("filesystem_read"));
        assert!(files.blocks("FILES-read"));
        assert_eq!(
            b.unmatched(["git_push", "push", "send_markdown_email"]),
            ["*push", "send_*_email"]
        );
        assert!(pattern_error("*push").is_some());
        assert!(pattern_error("git_**").is_some());
        assert!(pattern_error(" git_* ").is_none());
    }

    /// Look-alike characters (a dash, a zero-width or no-break space, full-width letters,
    /// accents) read as what they imitate, for whole names and prefixes alike (session 38's
    /// gateway audit: `send_*` let `send–letter` through, offered upstream as
    /// `send_letter`).
    #[test]
    fn look_alike_spellings_are_blocked_as_what_they_imitate() {
        let prefix = Blocklist::new(["send_*"]);
        for name in [
            "send\u{200b}_memo",
            "send\u{2013}letter",
            "send\u{00a0}fax",
            "SEND\u{200c}NOTE_x",
            "ｓｅｎｄ_parcel",
        ] {
            assert!(prefix.blocks(name), "{name:?}");
        }
        assert!(!prefix.blocks("sendmail"));
        let whole = Blocklist::new(["cafe_menu", "send_letter"]);
        assert!(whole.blocks("café_menu"));
        assert!(whole.blocks("ｓｅｎｄ\u{2013}letter"));
        assert!(!whole.blocks("cafe_menus"));
    }

    #[test]
    fn reasons_are_written_for_the_model() {
        assert_eq!(
            blocked_reason("delete_file"),
            "Tool \"delete_file\" is currently blocked."
        );
    }
}
