//! What a pruning keeps and why: the policy `compile` applies, the combination strategy,
//! each kept tool's reason, and the outcome.

use chef_ir::{ToolDefinition, ToolName};
use serde::{Deserialize, Serialize};

use super::{Pruner, RegistryError};

/// How [`Pruner::prune_by_task_and_allowlist`] combines its two tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Keep a tool that is task-relevant **or** allowlisted.
    #[default]
    Union,
    /// Keep a tool that is task-relevant **and** allowlisted.
    Intersection,
}

/// Why a tool was kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum KeepReason {
    /// The tool has no tags, so it is relevant to every task.
    Universal,
    /// The tool's name occurs in the task.
    NameInTask,
    /// One of the tool's tags occurs in the task.
    TagInTask {
        /// The tag that matched.
        tag: String,
    },
    /// The tool is on the allowlist.
    Allowlisted,
    /// The catalogue index ranked the tool among the top results for the task.
    Ranked {
        /// 1-based rank.
        rank: usize,
        /// The index's score.
        score: f64,
        /// The task's terms that matched the tool.
        matched_terms: Vec<String>,
    },
    /// The policy always keeps this tool.
    AlwaysKept,
    /// The model found the tool with the discovery search tool
    /// ([`PrunePolicy::Discover`]) while working on the current request.
    Found {
        /// What the model searched for.
        query: String,
    },
    /// The conversation holds an answered call of the tool, so it stays offered while
    /// that call is in the history (ranked and discovery pruning).
    Called,
}

impl KeepReason {
    /// The index's score of a [`Ranked`](Self::Ranked) tool; `None` for a tool kept for
    /// another reason.
    pub fn score(&self) -> Option<f64> {
        match self {
            Self::Ranked { score, .. } => Some(*score),
            _ => None,
        }
    }
}

/// Which flat tools `compile` keeps each turn. The task is what
/// [`Tools::pruning_task`](crate::Tools::pruning_task) returns: the latest user request as the
/// conversation states it, or the text set with [`ToolsMut::set_task`](crate::ToolsMut::set_task).
///
/// ```
/// use chef::PrunePolicy;
///
/// // The 8 tools the catalogue index ranks best for the task, plus two always kept.
/// let policy = PrunePolicy::Ranked { top_k: 8, always_keep: vec!["search_docs".into(), "ask_user".into()] };
/// # let _ = policy;
/// ```
///
/// Read from JSON (the Python package's dicts): `top_k` may be left out (10, the setting
/// `chef eval` measured best), and so may `always_keep` (none); a key no policy has is
/// refused, so a misspelt `always_keep` is not silently ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "policy",
    rename_all = "snake_case",
    deny_unknown_fields,
    from = "PolicyRepr"
)]
pub enum PrunePolicy {
    /// Every registered flat tool (the reference's behaviour).
    #[default]
    All,
    /// [`Pruner::prune_by_task`] on the task.
    ByTask,
    /// [`Pruner::allow_only`].
    Allowlist {
        /// The names to keep.
        names: Vec<String>,
    },
    /// [`Pruner::prune_by_task_and_allowlist`] on the task.
    ByTaskAndAllowlist {
        /// The allowlist.
        names: Vec<String>,
    },
    /// [`Pruner::rank_by_task`] on the task, plus tools always kept. When the index
    /// abstains (nothing fits), only the always-kept tools remain.
    Ranked {
        /// How many ranked tools to keep.
        #[serde(default = "default_top_k")]
        top_k: usize,
        /// Tools kept whatever the task (by exact name).
        #[serde(default)]
        always_keep: Vec<String>,
    },
    /// Find, then call by real name: the `top_k` tools the index ranks best for the task,
    /// as [`Ranked`](Self::Ranked) keeps them, plus a library-owned search tool,
    /// [`find_tools`](crate::owned::FIND_TOOLS), through which the model asks for what the
    /// list lacks. The tools a search finds join the list from the next request, by their
    /// real names and schemas, appended after the ranked tools (so the cached prefix of the
    /// request is not rewritten) while the request stays the same; a tool the history
    /// calls stays offered while that call is in the history. When the index abstains
    /// (nothing fits), the model sees no ranked tool, and a search that finds nothing says
    /// so instead of offering unrelated tools. A catalogue of no more than `top_k` tools
    /// (not counting blocked ones) is shown whole, without `find_tools`. A blocked tool is
    /// never offered under this policy (the one place the blocklist edits the list). See
    /// docs/DISCOVERY.md.
    Discover {
        /// How many ranked tools to show before any search.
        #[serde(default = "default_top_k")]
        top_k: usize,
        /// Tools kept whatever the task (by exact name).
        #[serde(default)]
        always_keep: Vec<String>,
    },
}

/// [`PrunePolicy`] as it is read: `all` and `by_task` as variants with no fields, so that
/// a key they do not have (`{"policy": "all", "top_k": 5}`) is refused as for the others
/// (serde reads past any key beside a unit variant's tag).
#[derive(Deserialize)]
#[serde(tag = "policy", rename_all = "snake_case", deny_unknown_fields)]
enum PolicyRepr {
    All {},
    ByTask {},
    Allowlist {
        names: Vec<String>,
    },
    ByTaskAndAllowlist {
        names: Vec<String>,
    },
    Ranked {
        #[serde(default = "default_top_k")]
        top_k: usize,
        #[serde(default)]
        always_keep: Vec<String>,
    },
    Discover {
        #[serde(default = "default_top_k")]
        top_k: usize,
        #[serde(default)]
        always_keep: Vec<String>,
    },
}

impl From<PolicyRepr> for PrunePolicy {
    fn from(repr: PolicyRepr) -> Self {
        match repr {
            PolicyRepr::All {} => Self::All,
            PolicyRepr::ByTask {} => Self::ByTask,
            PolicyRepr::Allowlist { names } => Self::Allowlist { names },
            PolicyRepr::ByTaskAndAllowlist { names } => Self::ByTaskAndAllowlist { names },
            PolicyRepr::Ranked { top_k, always_keep } => Self::Ranked { top_k, always_keep },
            PolicyRepr::Discover { top_k, always_keep } => Self::Discover { top_k, always_keep },
        }
    }
}

/// How many ranked tools a policy read without `top_k` keeps: [`DEFAULT_TOP_K`].
fn default_top_k() -> usize {
    DEFAULT_TOP_K
}

/// The `top_k` of a ranked or discovery policy read from JSON without one (and `chef
/// serve`'s): the setting `chef eval` measured best on the 1.5B model (docs/EVAL.md).
pub const DEFAULT_TOP_K: usize = 10;

impl PrunePolicy {
    /// [`Discover`](Self::Discover): the `top_k` tools the index ranks best for the task,
    /// by their real names, plus `find_tools` for the rest; nothing always kept. Find,
    /// then call by real name, with `top_k = 10` is the setting `chef eval` measured best
    /// ([`DEFAULT_TOP_K`], docs/DISCOVERY.md). For tools kept whatever the task, write the
    /// variant with `always_keep`.
    ///
    /// ```
    /// use chef::PrunePolicy;
    ///
    /// assert_eq!(
    ///     PrunePolicy::discover(10),
    ///     PrunePolicy::Discover { top_k: 10, always_keep: vec![] }
    /// );
    /// ```
    pub fn discover(top_k: usize) -> Self {
        Self::Discover {
            top_k,
            always_keep: Vec::new(),
        }
    }

    /// [`Ranked`](Self::Ranked): the `top_k` tools the index ranks best for the task,
    /// nothing always kept and no search tool.
    ///
    /// ```
    /// use chef::PrunePolicy;
    ///
    /// assert_eq!(
    ///     PrunePolicy::ranked(5),
    ///     PrunePolicy::Ranked { top_k: 5, always_keep: vec![] }
    /// );
    /// ```
    pub fn ranked(top_k: usize) -> Self {
        Self::Ranked {
            top_k,
            always_keep: Vec::new(),
        }
    }

    /// Whether the policy offers the discovery search tool for a catalogue of `tools` flat
    /// tools: [`Discover`](Self::Discover) over more tools than its `top_k` (a catalogue
    /// that small is shown whole, and there is nothing to find).
    pub fn discovers(&self, tools: usize) -> bool {
        matches!(self, Self::Discover { top_k, .. } if tools > *top_k)
    }

    /// [`discovers`](Self::discovers) for `pruner`'s flat tools less the ones its
    /// blocklist names (never offered under discovery): a catalogue whose offerable tools
    /// all fit in `top_k` is shown whole, with nothing to find.
    pub(crate) fn discovers_in(&self, pruner: &Pruner) -> bool {
        let Self::Discover { top_k, .. } = self else {
            return false;
        };
        let (tools, blocklist) = (pruner.all_tools(), pruner.blocklist());
        // More offerable tools than `top_k`: the count stops at the first one past it.
        tools.len() > *top_k
            && (blocklist.is_empty()
                || tools
                    .iter()
                    .filter(|t| !blocklist.blocks(t.name.as_str()))
                    .nth(*top_k)
                    .is_some())
    }

    /// Whether the policy ranks on the task ([`Ranked`](Self::Ranked) and
    /// [`Discover`](Self::Discover)): such a list follows the task, so a tool the history
    /// calls stays offered while the call is in the history.
    pub fn ranks(&self) -> bool {
        matches!(self, Self::Ranked { .. } | Self::Discover { .. })
    }

    /// Applies the policy to the registry for `task`.
    pub fn apply(&self, pruner: &Pruner, task: &str) -> Result<PruneResult, RegistryError> {
        Ok(match self {
            Self::All => pruner.filter(|_| Some(KeepReason::Universal)),
            Self::ByTask => pruner.prune_by_task(task),
            Self::Allowlist { names } => pruner.allow_only(names),
            Self::ByTaskAndAllowlist { names } => pruner.prune_by_task_and_allowlist(task, names),
            Self::Ranked { top_k, always_keep } | Self::Discover { top_k, always_keep } => {
                let ranked = pruner.rank_by_task(task, *top_k);
                let mut tools = Vec::new();
                let mut reasons = Vec::new();
                for tool in pruner.all_tools() {
                    if always_keep.iter().any(|n| n == tool.name.as_str()) {
                        tools.push(tool.clone());
                        reasons.push(KeepReason::AlwaysKept);
                    }
                }
                for (tool, reason) in ranked.tools.into_iter().zip(ranked.reasons) {
                    if !tools.iter().any(|t: &ToolDefinition| t.name == tool.name) {
                        tools.push(tool);
                        reasons.push(reason);
                    }
                }
                PruneResult::keeping(pruner.all_tools(), tools, reasons)
            }
        })
    }
}

/// The outcome of a pruning operation.
#[derive(Debug, Clone, PartialEq)]
pub struct PruneResult {
    /// The kept tools, in registration order (ranked pruning: best first; under
    /// [`PrunePolicy::Ranked`] the always-kept tools come first, in registration order,
    /// then the ranked ones).
    pub tools: Vec<ToolDefinition>,
    /// Why each kept tool was kept (same order as `tools`).
    pub reasons: Vec<KeepReason>,
    /// Names of registered tools that were not kept, in registration order.
    pub removed: Vec<ToolName>,
    /// `tools.len()`.
    pub kept: usize,
    /// The number of registered flat tools.
    pub total: usize,
}

impl PruneResult {
    /// Of `total` registered tools, `tools` kept (each for its reason) and the others
    /// `removed`.
    pub(super) fn new(
        total: usize,
        tools: Vec<ToolDefinition>,
        reasons: Vec<KeepReason>,
        removed: Vec<ToolName>,
    ) -> Self {
        Self {
            kept: tools.len(),
            total,
            tools,
            reasons,
            removed,
        }
    }

    /// Of the registered tools `all`, `tools` kept (each for its reason); the others, in
    /// registration order, are removed.
    pub(super) fn keeping(
        all: &[ToolDefinition],
        tools: Vec<ToolDefinition>,
        reasons: Vec<KeepReason>,
    ) -> Self {
        let removed = all
            .iter()
            .filter(|t| !tools.iter().any(|k| k.name == t.name))
            .map(|t| t.name.clone())
            .collect();
        Self::new(all.len(), tools, reasons, removed)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use serde_json::json;

    use super::{DEFAULT_TOP_K, PrunePolicy};

    #[test]
    fn a_policy_read_from_json_defaults_top_k_and_always_keep_and_refuses_unknown_keys() {
        let read = |v: serde_json::Value| serde_json::from_value::<PrunePolicy>(v);
        assert_eq!(
            read(json!({"policy": "discover"})).unwrap(),
            PrunePolicy::Discover {
                top_k: DEFAULT_TOP_K,
                always_keep: Vec::new()
            }
        );
        assert_eq!(
            read(json!({"policy": "ranked", "top_k": 8})).unwrap(),
            PrunePolicy::Ranked {
                top_k: 8,
                always_keep: Vec::new()
            }
        );
        let e = read(json!({"policy": "discover", "top_k": 5, "alwayskeep": ["a"]}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("alwayskeep"), "{e}");
        // Nor do `all` and `by_task` take keys they do not have (serde would read past a
        // unit variant's).
        for extra in [
            json!({"policy": "all", "top_k": 5}),
            json!({"policy": "by_task", "names": ["a"]}),
        ] {
            let e = read(extra.clone()).unwrap_err().to_string();
            assert!(e.contains("unknown field"), "{extra}: {e}");
        }
        assert_eq!(read(json!({"policy": "all"})).unwrap(), PrunePolicy::All);
        assert!(read(json!({"policy": "everything"})).is_err());
        // What a policy writes, it reads back.
        for policy in [
            PrunePolicy::All,
            PrunePolicy::ByTask,
            PrunePolicy::Allowlist {
                names: vec!["a".into()],
            },
            PrunePolicy::ByTaskAndAllowlist {
                names: vec!["a".into()],
            },
            PrunePolicy::Ranked {
                top_k: 3,
                always_keep: vec!["a".into()],
            },
            PrunePolicy::Discover {
                top_k: 4,
                always_keep: Vec::new(),
            },
        ] {
            assert_eq!(
                read(serde_json::to_value(&policy).unwrap()).unwrap(),
                policy
            );
        }
    }
}
