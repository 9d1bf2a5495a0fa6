//! Compose a compressed tool set with a provider's native tool search (issue 12).
//!
//! Native tool search defers whole tool definitions: tools marked `defer_loading` stay
//! out of the model's context until the provider's search tool (run on the provider's
//! side) finds them. It composes with compression level 1 (signature lines shorten the
//! loaded tools, search hides the rest), and with levels 0 and 2. It does not compose
//! with a dispatcher (levels 3 and 4): there the `t`/`q` pair is the entry point and
//! discovery already runs through `q`, so deferring either hides the way in. That
//! combination is refused with [`ToolSearchError::DispatcherLevel`].
//!
//! Documented targets:
//!
//! * Anthropic Messages: `tool_search_tool_regex_20251119` or
//!   `tool_search_tool_bm25_20251119` beside `defer_loading` tools; at least one tool must
//!   stay loaded, and the compiler never puts `cache_control` on a deferred tool.
//! * OpenAI Responses: `{"type":"tool_search"}` beside `defer_loading` function tools.
//!
//! OpenAI Chat Completions and Gemini document no deferred loading: compiling a composed
//! set for them sends every tool loaded and reports the left-out search tool (and, on
//! Chat, the ignored deferral) as notices. See `docs/PROVIDERS.md`.

use chef_compress::{Compressed, Level};
use chef_ir::Target;

pub use chef_anthropic::{KeepLoaded, ToolSearch as AnthropicSearch, ToolSearchSet};

/// Which provider's search tool to compose with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchTool {
    /// Anthropic's tool-search server tool (regex or BM25).
    Anthropic(AnthropicSearch),
    /// OpenAI Responses' `{"type":"tool_search"}`.
    OpenAiResponses,
}

impl SearchTool {
    /// The target whose API documents this search tool.
    pub fn target(self) -> Target {
        match self {
            Self::Anthropic(_) => Target::Anthropic,
            Self::OpenAiResponses => Target::OpenAiResponses,
        }
    }
}

/// Why a tool set cannot be composed with tool search.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolSearchError {
    /// The set was compressed to a dispatcher; its `t`/`q` tools are the entry point and
    /// cannot be deferred.
    #[error(
        "tool search does not compose with compression level {level}: the dispatcher is already the entry point for discovery"
    )]
    DispatcherLevel {
        /// The compression level of the set.
        level: Level,
    },
    /// No tool would stay loaded; the API refuses an all-deferred tool list.
    #[error("tool search needs at least one tool that stays loaded")]
    AllToolsDeferred,
    /// A tool to keep loaded is not in the compressed set.
    #[error("tool {name} to keep loaded is not in the tool set")]
    UnknownLoadedTool {
        /// The name.
        name: chef_ir::ToolName,
    },
    /// The provider crate refused the composition for another reason.
    #[error("cannot compose tool search: {0}")]
    Provider(String),
}

/// Keeps the `keep` tools of a compressed set loaded, marks the rest `defer_loading`, and
/// adds `search` as a native tool for its target.
///
/// Put the result in a request with [`ToolSearchSet::into_request`]; the compressed
/// preamble (empty below level 3) is unchanged.
///
/// ```
/// use chef::compress::{Level, Options, compress};
/// use chef::ir::ToolDefinition;
/// use chef::tool_search::{AnthropicSearch, KeepLoaded, SearchTool, compose_tool_search};
/// use serde_json::json;
///
/// let tools: Vec<ToolDefinition> = ["a", "b", "c"]
///     .into_iter()
///     .map(|n| ToolDefinition::new(n, json!({"type": "object"})))
///     .collect();
/// let compressed = compress(&tools, &Options::new().with_level(Level::One))?;
/// let set = compose_tool_search(
///     &compressed,
///     KeepLoaded::First(1),
///     SearchTool::Anthropic(AnthropicSearch::Bm25),
/// )?;
/// let deferred: Vec<bool> = set.tools.iter().map(|t| t.defer_loading).collect();
/// assert_eq!(deferred, [false, true, true]);
/// assert_eq!(set.server_tool.value["type"], "tool_search_tool_bm25_20251119");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`ToolSearchError::DispatcherLevel`] at levels 3 and 4,
/// [`ToolSearchError::AllToolsDeferred`] when no tool stays loaded,
/// [`ToolSearchError::UnknownLoadedTool`] when a kept name is not in the set.
pub fn compose_tool_search(
    compressed: &Compressed,
    keep: KeepLoaded<'_>,
    search: SearchTool,
) -> Result<ToolSearchSet, ToolSearchError> {
    let level = compressed.level();
    if level.is_dispatcher() {
        return Err(ToolSearchError::DispatcherLevel { level });
    }
    let anthropic = match search {
        SearchTool::Anthropic(kind) => kind,
        // The deferral rules are the same; the server tool is replaced below.
        SearchTool::OpenAiResponses => AnthropicSearch::Regex,
    };
    let mut set = chef_anthropic::compose_tool_search(compressed.tools().to_vec(), keep, anthropic)
        .map_err(|e| match e {
            chef_anthropic::Error::AllToolsDeferred => ToolSearchError::AllToolsDeferred,
            chef_anthropic::Error::UnknownLoadedTool { name } => {
                ToolSearchError::UnknownLoadedTool { name }
            }
            other => ToolSearchError::Provider(other.to_string()),
        })?;
    if search == SearchTool::OpenAiResponses {
        set.server_tool = chef_openai::responses::tool_search();
    }
    Ok(set)
}
