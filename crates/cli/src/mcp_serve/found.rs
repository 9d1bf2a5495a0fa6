//! Discover mode's found tools: the list `find_tools` grows, bounded by `found_limit`.
//!
//! The list keeps the order tools were first found (so a later search appends and the
//! host's cached prefix of the list stays put); when it is full, the tool least recently
//! found or called leaves it. A tool that left is still callable by name, and a search
//! that finds it again lists it again.

use std::collections::HashMap;

/// The found tools in the order listed, with when each was last found or called.
#[derive(Debug, Default)]
pub(crate) struct Found {
    names: Vec<String>,
    last_used: HashMap<String, u64>,
    clock: u64,
}

impl Found {
    /// The tools listed after `find_tools`, in the order found.
    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }

    /// Records that `name` was called: it leaves the list after the tools used less lately.
    /// Nothing for a tool not in the list.
    pub(crate) fn touch(&mut self, name: &str) {
        if let Some(used) = self.last_used.get_mut(name) {
            self.clock += 1;
            *used = self.clock;
        }
    }

    /// Records one search's finds, best first, keeping at most `limit` tools listed (at
    /// least the best `limit` of this search); returns whether the list changed.
    pub(crate) fn record(&mut self, finds: &[String], limit: usize) -> bool {
        let before = self.names.clone();
        // The best find is the most recent, so it is the last of this search to leave.
        for name in finds.iter().rev() {
            self.clock += 1;
            self.last_used.insert(name.clone(), self.clock);
        }
        for name in finds {
            if !self.names.contains(name) {
                self.names.push(name.clone());
            }
        }
        while self.names.len() > limit.max(1) {
            let Some(oldest) = self
                .names
                .iter()
                .enumerate()
                .min_by_key(|(_, n)| self.last_used.get(n.as_str()).copied().unwrap_or(0))
                .map(|(at, _)| at)
            else {
                break;
            };
            let name = self.names.remove(oldest);
            self.last_used.remove(&name);
        }
        self.names != before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn finds_append_in_order_and_a_repeat_search_changes_nothing() {
        let mut found = Found::default();
        assert!(found.record(&names(&["a", "b"]), 4));
        assert!(found.record(&names(&["c", "a"]), 4));
        assert_eq!(found.names(), names(&["a", "b", "c"]));
        assert!(!found.record(&names(&["a", "c"]), 4));
        assert!(!found.record(&[], 4));
    }

    #[test]
    fn a_full_list_drops_the_tool_least_recently_found_or_called() {
        let mut found = Found::default();
        found.record(&names(&["a", "b", "c"]), 3);
        // Within one search the best find counts as the most recent: `c`, then `b`, then
        // `a`; `a` is then called.
        found.touch("a");
        assert!(found.record(&names(&["d"]), 3));
        assert_eq!(found.names(), names(&["a", "b", "d"]));
        assert!(found.record(&names(&["e"]), 3));
        assert_eq!(found.names(), names(&["a", "d", "e"]));
        // `c`, which left, is listed again when found again; `a`, called before `d` and
        // `e` were found, leaves.
        assert!(found.record(&names(&["c"]), 3));
        assert_eq!(found.names(), names(&["d", "e", "c"]));
    }

    #[test]
    fn a_search_larger_than_the_limit_keeps_its_best_finds() {
        let mut found = Found::default();
        found.record(&names(&["x"]), 2);
        found.record(&names(&["a", "b", "c"]), 2);
        assert_eq!(found.names(), names(&["a", "b"]));
        // A call of a tool no longer listed changes nothing.
        found.touch("x");
        assert_eq!(found.names(), names(&["a", "b"]));
    }
}
