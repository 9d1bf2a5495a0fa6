//! What the discovery setting ([`PrunePolicy::Discover`](super::PrunePolicy::Discover))
//! remembers between turns: the tools the model's searches found, the request a search
//! found nothing for, and the order the extra tools were sent in. Plain data, saved in a
//! snapshot (see [`SessionState::discovery`](crate::snapshot::SessionState::discovery)) so
//! a resumed session sends the same tools in the same order.

use chef_ir::ToolName;
use serde::{Deserialize, Serialize};

/// A tool a `find_tools` call returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoundTool {
    /// The tool's real name.
    pub name: ToolName,
    /// What the model searched for.
    pub query: String,
    /// The request ([`Tools::pruning_task`](crate::Tools::pruning_task)) the search was made
    /// for: the tool is offered while the request stays this one.
    pub task: String,
}

/// The discovery setting's memory of a session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DiscoveryState {
    /// Tools `find_tools` found, with the request each was found for, in the order found.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub found: Vec<FoundTool>,
    /// The request for which a search found nothing: the constrained format then leaves
    /// `find_tools` out, so a model cannot search in a loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub searched_in_vain: Option<String>,
    /// The extra tools (found or called) in the order the latest compile sent them, after
    /// the stable and owned tools: a resumed session keeps that order, so its next request
    /// is byte-identical.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_order: Vec<ToolName>,
}

impl DiscoveryState {
    /// Whether there is nothing to remember (a session that never searched).
    pub fn is_empty(&self) -> bool {
        self.found.is_empty() && self.searched_in_vain.is_none() && self.extra_order.is_empty()
    }
}
