//! Compose a tool set for Anthropic's native tool search.
//!
//! Anthropic's tool search defers whole tool definitions: tools marked `defer_loading`
//! stay out of the model's context until the search server tool returns a reference to
//! them. Two API rules shape the composition: at least one tool must stay loaded, and a
//! cache breakpoint may not sit on a deferred tool (compile never puts one there).
//!
//! This helper only composes; whether to compose belongs to the caller. With a dispatcher
//! tool set (compression level 3) discovery already happens through the dispatcher, and
//! deferring on top of it hides the entry point: the runtime refuses that combination.

use chef_ir::{NativeTool, Request, Target, ToolDefinition, ToolName};
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// Which tool-search server tool to add.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolSearch {
    /// `tool_search_tool_regex_20251119`: the model writes regular expressions.
    Regex,
    /// `tool_search_tool_bm25_20251119`: the model writes natural-language queries.
    Bm25,
}

impl ToolSearch {
    /// The server tool's `type`.
    pub fn kind(self) -> &'static str {
        match self {
            Self::Regex => "tool_search_tool_regex_20251119",
            Self::Bm25 => "tool_search_tool_bm25_20251119",
        }
    }

    /// The server tool's `name`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Regex => "tool_search_tool_regex",
            Self::Bm25 => "tool_search_tool_bm25",
        }
    }

    /// The server tool, for Anthropic only: `{"type":"…","name":"…"}`.
    pub fn server_tool(self) -> NativeTool {
        let mut value = Map::new();
        value.insert("type".to_owned(), Value::String(self.kind().to_owned()));
        value.insert("name".to_owned(), Value::String(self.name().to_owned()));
        NativeTool {
            targets: vec![Target::Anthropic],
            value: Value::Object(value),
        }
    }
}

/// Which tools stay loaded; every other tool is deferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeepLoaded<'a> {
    /// The first `n` tools, in request order (put the most used first).
    First(usize),
    /// The tools with these names.
    Named(&'a [ToolName]),
}

/// A tool set composed for tool search: the function tools with `defer_loading` set, and
/// the search server tool.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolSearchSet {
    /// The function tools, in their original order.
    pub tools: Vec<ToolDefinition>,
    /// The search server tool.
    pub server_tool: NativeTool,
}

impl ToolSearchSet {
    /// Puts the composed tools into a request (replacing its function tools, appending the
    /// server tool to its native tools).
    pub fn into_request(self, mut request: Request) -> Request {
        request.tools = self.tools;
        request.native_tools.push(self.server_tool);
        request
    }
}

/// Marks every tool not kept loaded `defer_loading` and adds the search server tool.
///
/// Fails with [`Error::AllToolsDeferred`] when no tool would stay loaded (the API refuses
/// that), and with [`Error::UnknownLoadedTool`] when a kept name is not in `tools`.
///
/// ```
/// use chef_anthropic::{KeepLoaded, ToolSearch, compose_tool_search};
/// use chef_ir::ToolDefinition;
/// use serde_json::json;
///
/// let tools: Vec<ToolDefinition> = ["a", "b", "c"]
///     .into_iter()
///     .map(|n| ToolDefinition::new(n, json!({"type": "object"})))
///     .collect();
/// let set = compose_tool_search(tools, KeepLoaded::First(1), ToolSearch::Regex)?;
/// let deferred: Vec<bool> = set.tools.iter().map(|t| t.defer_loading).collect();
/// assert_eq!(deferred, [false, true, true]);
/// assert_eq!(set.server_tool.value["name"], "tool_search_tool_regex");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn compose_tool_search(
    mut tools: Vec<ToolDefinition>,
    keep: KeepLoaded<'_>,
    search: ToolSearch,
) -> Result<ToolSearchSet> {
    if let KeepLoaded::Named(names) = keep
        && let Some(missing) = names.iter().find(|n| !tools.iter().any(|t| &t.name == *n))
    {
        return Err(Error::UnknownLoadedTool {
            name: missing.clone(),
        });
    }
    let mut loaded = 0;
    for (i, tool) in tools.iter_mut().enumerate() {
        let keep = match keep {
            KeepLoaded::First(n) => i < n,
            KeepLoaded::Named(names) => names.contains(&tool.name),
        };
        tool.defer_loading = !keep;
        loaded += usize::from(keep);
    }
    if loaded == 0 {
        return Err(Error::AllToolsDeferred);
    }
    Ok(ToolSearchSet {
        tools,
        server_tool: search.server_tool(),
    })
}
