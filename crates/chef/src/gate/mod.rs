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
/// matched against real names exactly. An entry naming a namespace blocks every action
/// of it; an entry naming a toolkit blocks loading it and every tool in it; an entry
/// `load_toolkit` blocks all loading.
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

    /// Whether `name` (a real tool, namespace or toolkit name) is blocked.
    pub fn blocks(&self, name: &str) -> bool {
        self.entries.iter().any(|e| e == name)
    }

    /// The first of `names` that is blocked.
    pub fn first_blocked<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
        names.into_iter().find(|n| self.blocks(n))
    }
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
    fn entries_are_kept_verbatim_and_matched_exactly() {
        let b = Blocklist::new(["x", "x", "Delete_File"]);
        assert_eq!(b.entries(), ["x", "x", "Delete_File"]);
        assert!(b.blocks("Delete_File"));
        assert!(!b.blocks("delete_file"));
        assert_eq!(b.first_blocked(["a", "x"]), Some("x"));
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
