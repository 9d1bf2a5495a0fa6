//! [`Compressed`]: one compression's output, and how to read the model's calls back.

use std::sync::{Arc, OnceLock};

use chef_ir::ToolDefinition;
use serde_json::Value;

use super::{
    Code, ToolCore,
    lookup::{CodeSuggestions, NormIndex},
};
use crate::{error::CodeError, options::Level, order::compare_names, stats::Stats};

/// One tool of a [`Compressed`], in sorted order: the shared core plus what this
/// compression gave it.
pub(crate) struct Entry {
    pub(crate) core: Arc<ToolCore>,
    pub(crate) ns: u32,
    /// The operation when the caller's `namespace_of` gave one (or level 2 gave a full
    /// name to tell clashing operations apart); else the core's default.
    pub(crate) op: Option<String>,
    /// The level-3/4 code; empty below level 3.
    pub(crate) code: Code,
    /// The level-4 map line (`def name(sig):"doc"`); empty below level 4.
    pub(crate) l4_line: String,
}

impl Entry {
    /// The operation within the namespace (the level-2 `op` value).
    pub(crate) fn op(&self) -> &str {
        self.op.as_deref().unwrap_or(&self.core.split.op)
    }
}

impl std::ops::Deref for Entry {
    type Target = ToolCore;
    fn deref(&self) -> &ToolCore {
        &self.core
    }
}

/// A free place in a pinned namespace: a code reserved for a tool that is not here.
pub(crate) const HOLE: u32 = u32::MAX;

/// One namespace, in order of first appearance in the sorted tool list.
pub(crate) struct Namespace {
    pub(crate) name: String,
    pub(crate) alias: String,
    /// Entry indices, in sorted order; the position is the code's number. With pinned
    /// codes, `HOLE` marks a place reserved for a tool that is not in this compression.
    pub(crate) members: Vec<u32>,
}

/// The result of [`compress`]: what to send, and how to read the model's calls back.
///
/// Build it once, outside the agent loop; it is immutable, `Send + Sync`, and
/// [`resolve`](Compressed::resolve) against it is cheap. Schemas are normalised at
/// compress time (rendering needs them); each tool's validator is compiled on the first
/// resolve of a call to it, and the separator-insensitive name index, the did-you-mean
/// index and the `q(s=…)` search index are built once, on first need.
///
/// [`compress`]: crate::compress()
pub struct Compressed {
    pub(crate) level: Level,
    pub(crate) tools: Vec<ToolDefinition>,
    pub(crate) system: String,
    pub(crate) stats: Stats,
    pub(crate) entries: Vec<Entry>,
    pub(crate) namespaces: Vec<Namespace>,
    pub(crate) validate: bool,
    pub(crate) search_limit: usize,
    pub(crate) norm_index: OnceLock<NormIndex>,
    pub(crate) suggestions: OnceLock<CodeSuggestions>,
    pub(crate) search_index: OnceLock<crate::search::CatalogIndex>,
    /// The embedding model for `q(s=…)`, when configured ([`Compressed::with_embedder`]).
    pub(crate) dense: Option<crate::search::dense::DenseConfig>,
    /// The hybrid index, built on the first search; `None` if the model failed.
    pub(crate) hybrid_index: OnceLock<Option<crate::search::dense::HybridIndex>>,
    /// The index of the tools a `q(s=…)` search may list when some are hidden (blocked),
    /// with which tools it holds ([`Compressed::search_hits_open`]).
    pub(crate) open_index: std::sync::Mutex<Option<OpenIndexEntry>>,
}

/// Which entries an open index holds, and the index.
pub(crate) type OpenIndexEntry = (Vec<bool>, std::sync::Arc<super::lookup::OpenIndex>);

impl std::fmt::Debug for Compressed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compressed")
            .field("level", &self.level)
            .field("tools", &self.tools.len())
            .field("system", &self.system.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

/// A call as a model would emit it (see [`Compressed::encode_call`]).
#[derive(Debug, Clone, PartialEq)]
pub struct EncodedCall {
    /// The wire tool name.
    pub name: String,
    /// The wire arguments.
    pub args: Value,
}

impl Compressed {
    /// The level used.
    pub fn level(&self) -> Level {
        self.level
    }

    /// The wire tools to send, in the neutral shape (`{name, description, input_schema}`).
    pub fn tools(&self) -> &[ToolDefinition] {
        &self.tools
    }

    /// Text to append to the system prompt; empty at levels 0–2.
    pub fn system(&self) -> &str {
        &self.system
    }

    /// Whether the preamble should sit behind a cache breakpoint (levels 3–4).
    pub fn cache_preamble(&self) -> bool {
        self.level.is_dispatcher()
    }

    /// What the compression did.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// `(real name, code)` in code order; empty below level 3.
    pub fn codes(&self) -> impl Iterator<Item = (&str, &str)> {
        self.code_order()
            .filter(|e| !e.code.is_empty())
            .map(|e| (e.name.as_str(), e.code.as_str()))
    }

    /// The level-3 code of a real tool.
    ///
    /// ```
    /// # use chef_compress::{compress, Level, Options};
    /// # use chef_ir::ToolDefinition;
    /// # use serde_json::json;
    /// let tools = [ToolDefinition::new("slack_post", json!({"type": "object"}))];
    /// let c = compress(&tools, &Options::new().with_level(Level::Three))?;
    /// assert_eq!(c.code_for("slack_post")?, "a0");
    /// let c1 = compress(&tools, &Options::new())?;
    /// assert_eq!(c1.code_for("slack_post").unwrap_err().to_string(), "no code for slack_post (level 1)");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn code_for(&self, name: &str) -> Result<&str, CodeError> {
        let entry = self.entry_by_name(name);
        if !self.level.is_dispatcher() {
            return Err(CodeError::NoCodeAtLevel {
                name: name.to_owned(),
                level: self.level,
            });
        }
        entry
            .map(|e| e.code.as_str())
            .ok_or_else(|| CodeError::UnknownTool {
                name: name.to_owned(),
            })
    }

    /// The entry with exactly this real name (entries are sorted by the total order).
    pub(crate) fn entry_by_name(&self, name: &str) -> Option<&Entry> {
        self.entries
            .binary_search_by(|e| compare_names(&e.name, name))
            .ok()
            .and_then(|i| self.entries.get(i))
    }

    /// Entries in code order (namespace order, then sorted order within a namespace).
    pub(crate) fn code_order(&self) -> impl Iterator<Item = &Entry> {
        self.namespaces
            .iter()
            .flat_map(|ns| ns.members.iter())
            .filter_map(|&m| self.entries.get(m as usize))
    }
}
