//! Flat pruning with the reference semantics: a tool is relevant to a task when it has no
//! tags, when its lowercased name occurs in the lowercased task, or when one of its
//! lowercased tags does; the allowlist matches names ignoring case.

use std::collections::BTreeSet;

use chef_ir::ToolDefinition;

use super::{KeepReason, PruneResult, Pruner, Strategy};

impl Pruner {
    /// Keeps the tools relevant to `task` (reference semantics; untagged tools always kept).
    pub fn prune_by_task(&self, task: &str) -> PruneResult {
        let task = task.to_lowercase();
        self.filter(|tool| relevance(tool, &task))
    }

    /// Keeps the tools whose name is on `names` (case-insensitive exact match).
    pub fn allow_only<S: AsRef<str>>(&self, names: &[S]) -> PruneResult {
        let allowed = lowercase_set(names);
        self.filter(|tool| {
            allowed
                .contains(&tool.name.as_str().to_lowercase())
                .then_some(KeepReason::Allowlisted)
        })
    }

    /// Combines [`Self::prune_by_task`] and [`Self::allow_only`] by the strategy.
    pub fn prune_by_task_and_allowlist<S: AsRef<str>>(
        &self,
        task: &str,
        names: &[S],
    ) -> PruneResult {
        let task = task.to_lowercase();
        let allowed = lowercase_set(names);
        let strategy = self.strategy;
        self.filter(|tool| {
            let relevant = relevance(tool, &task);
            let listed = allowed.contains(&tool.name.as_str().to_lowercase());
            match (strategy, relevant, listed) {
                (Strategy::Union, Some(reason), _) => Some(reason),
                (Strategy::Union, None, true) | (Strategy::Intersection, Some(_), true) => {
                    Some(KeepReason::Allowlisted)
                }
                _ => None,
            }
        })
    }
    pub(super) fn filter(
        &self,
        keep: impl Fn(&ToolDefinition) -> Option<KeepReason>,
    ) -> PruneResult {
        let mut tools = Vec::new();
        let mut reasons = Vec::new();
        let mut removed = Vec::new();
        for tool in self.flat.iter() {
            match keep(tool) {
                Some(reason) => {
                    tools.push(tool.clone());
                    reasons.push(reason);
                }
                None => removed.push(tool.name.clone()),
            }
        }
        PruneResult::new(self.flat.len(), tools, reasons, removed)
    }
}

fn lowercase_set<S: AsRef<str>>(names: &[S]) -> BTreeSet<String> {
    names.iter().map(|n| n.as_ref().to_lowercase()).collect()
}

fn relevance(tool: &ToolDefinition, lowered_task: &str) -> Option<KeepReason> {
    if tool.tags.is_empty() {
        return Some(KeepReason::Universal);
    }
    if lowered_task.contains(&tool.name.as_str().to_lowercase()) {
        return Some(KeepReason::NameInTask);
    }
    tool.tags
        .iter()
        .find(|tag| lowered_task.contains(&tag.to_lowercase()))
        .map(|tag| KeepReason::TagInTask { tag: tag.clone() })
}
