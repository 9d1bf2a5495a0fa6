//! The proxy's blocklist: entries matched the way the host's calls are.
//!
//! A call reaches a tool with case and separator drift (`Files-Read-File` reaches
//! `files_read_file`), so an entry must match the same way, or a user who writes the
//! upstream's own spelling leaves the tool open. An entry blocks a tool when it names:
//! - the tool's prefixed name (`office_delete_file`) or its upstream name on any server
//!   (`delete_file` blocks `office_delete_file` and `archive_delete_file`), ignoring letter
//!   case and separators (`Office-DB-Drop-Table` blocks `office_db_drop_table`);
//! - or, ending in `*`, a prefix of either name, compared in chef's prefix form
//!   ([`chef::gate::prefix_form`]: lower case, every separator read as `_`; `Git-*` blocks
//!   `git_push`, and `files_*` does not block `filesystem_read`).
//!
//! Matching loosely can only block more. An entry that matches no tool of the upstreams
//! is most likely a typo: `--check` fails on it and `serve` logs it as an error.

use chef::gate::{name_key, prefix_form};

/// One entry, prepared for matching.
#[derive(Debug, Clone)]
enum Pattern {
    /// Letters and digits only, lower-cased (empty: match the exact spelling only).
    Name { key: String, exact: String },
    /// A prefix: lower case, separators as `_`.
    Prefix(String),
}

/// The blocklist of `chef-mcp.toml`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Blocklist {
    entries: Vec<(String, Pattern)>,
}

impl Blocklist {
    pub(crate) fn new(entries: &[String]) -> Self {
        let entries = entries
            .iter()
            .map(|e| {
                let trimmed = e.trim();
                let pattern = match trimmed.strip_suffix('*') {
                    Some(prefix) => Pattern::Prefix(prefix_form(prefix)),
                    None => Pattern::Name {
                        key: name_key(trimmed),
                        exact: trimmed.to_owned(),
                    },
                };
                (e.clone(), pattern)
            })
            .collect();
        Self { entries }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry that blocks the tool the host sees as `name`, whose upstream calls it
    /// `upstream`.
    pub(crate) fn entry_for(&self, name: &str, upstream: &str) -> Option<&str> {
        // Every call asks: an empty blocklist answers without building the forms.
        if self.entries.is_empty() {
            return None;
        }
        let tool = Forms::of(name, upstream);
        self.entries
            .iter()
            .find(|(_, pattern)| tool.matches(pattern))
            .map(|(entry, _)| entry.as_str())
    }

    /// The entries (in order, each once) that match none of `tools` (host name, upstream
    /// name).
    pub(crate) fn unmatched<'a>(
        &self,
        tools: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Vec<String> {
        let tools: Vec<Forms<'_>> = tools
            .into_iter()
            .map(|(name, upstream)| Forms::of(name, upstream))
            .collect();
        let mut out: Vec<String> = Vec::new();
        for (entry, pattern) in &self.entries {
            if !tools.iter().any(|t| t.matches(pattern)) && !out.contains(entry) {
                out.push(entry.clone());
            }
        }
        out
    }
}

/// A tool's two names in the forms patterns compare.
struct Forms<'a> {
    names: [&'a str; 2],
    keys: [String; 2],
    prefixes: [String; 2],
}

impl<'a> Forms<'a> {
    fn of(name: &'a str, upstream: &'a str) -> Self {
        Self {
            names: [name, upstream],
            keys: [name_key(name), name_key(upstream)],
            prefixes: [prefix_form(name), prefix_form(upstream)],
        }
    }

    fn matches(&self, pattern: &Pattern) -> bool {
        match pattern {
            Pattern::Name { key, exact } if key.is_empty() => self.names.contains(&exact.as_str()),
            Pattern::Name { key, .. } => self.keys.contains(key),
            Pattern::Prefix(prefix) => self.prefixes.iter().any(|f| f.starts_with(prefix.as_str())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[&str]) -> Blocklist {
        Blocklist::new(&entries.iter().map(|e| (*e).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn entries_match_the_way_calls_do() {
        let b = list(&["delete_file", "Office-DB-Drop-Table", "Git-*", "files_*"]);
        // The upstream's own name, on any server.
        assert_eq!(
            b.entry_for("office_delete_file", "delete_file"),
            Some("delete_file")
        );
        assert_eq!(
            b.entry_for("archive_delete_file", "Delete-File"),
            Some("delete_file")
        );
        // The prefixed name in another case and separator style.
        assert_eq!(
            b.entry_for("office_db_drop_table", "db_drop_table"),
            Some("Office-DB-Drop-Table")
        );
        // Prefixes ignore case, and read separators alike, but keep word ends.
        assert_eq!(b.entry_for("git_push", "push"), Some("Git-*"));
        assert_eq!(b.entry_for("files_read", "read"), Some("files_*"));
        assert_eq!(b.entry_for("filesystem_read", "read"), None);
        assert_eq!(b.entry_for("office_read_file", "read_file"), None);
    }

    #[test]
    fn unmatched_entries_are_named_once_in_order() {
        let b = list(&["nope", "git_push", "x*", "nope"]);
        let tools = [("git_push", "push"), ("files_read", "read")];
        assert_eq!(b.unmatched(tools.iter().copied()), ["nope", "x*"]);
        assert!(list(&[]).unmatched(tools.iter().copied()).is_empty());
    }

    #[test]
    fn an_entry_of_separators_only_matches_its_exact_spelling() {
        let b = list(&["_"]);
        assert_eq!(b.entry_for("_", "x"), Some("_"));
        assert_eq!(b.entry_for("a_b", "a_b"), None);
    }
}
