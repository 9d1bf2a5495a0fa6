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
        let key = name_key(name);
        self.entries
            .iter()
            .find(|e| same_name(e, name, &key))
            .map(String::as_str)
    }

    /// The entries (in order, each once) that match none of `names`.
    pub(crate) fn unmatched<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        let mut exact = std::collections::BTreeSet::new();
        let mut keys = std::collections::BTreeSet::new();
        for name in names {
            exact.insert(name);
            keys.insert(name_key(name));
        }
        let mut unmatched: Vec<String> = Vec::new();
        for entry in &self.entries {
            let key = name_key(entry);
            let matched =
                exact.contains(entry.as_str()) || (!key.is_empty() && keys.contains(&key));
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
/// all give `deletefile`. The key under which the gate, the blocklist and the resolver's
/// lenient name matching compare names (and `chef mcp serve`'s blocklist, which matches
/// the same way).
///
/// ```
/// assert_eq!(chef::gate::name_key("Office-DB-Drop-Table"), "officedbdroptable");
/// ```
pub fn name_key(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Whether blocklist `entry` names `name` (whose [`name_key`] is `key`).
fn same_name(entry: &str, name: &str, key: &str) -> bool {
    if key.is_empty() {
        return entry == name;
    }
    entry == name || name_key(entry) == key
}

/// The text returned to the model for a blocked call.
pub fn blocked_reason(name: &str) -> String {
    format!("Tool \"{name}\" is currently blocked.")
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
    fn reasons_are_written_for_the_model() {
        assert_eq!(
            blocked_reason("delete_file"),
            "Tool \"delete_file\" is currently blocked."
        );
    }
}
