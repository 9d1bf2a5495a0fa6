//! `recommend_level`: advice on which level suits a tool set (0, 1 or 3; never 2 or 4).
//!
//! The decision rests on the size of the level-1 block, not the tool count: a tool can be
//! 20 tokens or 460. It is measured in characters, which every build has and which do not
//! depend on a provider's tokenizer: below 21,000 characters reclaiming the block does not
//! change what fits, so keeping the provider's own argument validation is worth more.
//!
//! # Token figures
//!
//! With the `tokens` feature the level-1 block is also counted in o200k_base tokens,
//! exactly as [`Stats::compressed_tokens`](crate::Stats::compressed_tokens) counts it (the
//! figure `chef compress --level 1 --tokens` prints), and the reason quotes that count.
//! Without it there is no token figure: the reason quotes characters only.

use std::collections::HashSet;

use chef_ir::ToolDefinition;
use serde::Serialize;

use crate::{
    error::CompressError,
    levels::{Advice, Measure, Sizes, codec},
    measured::Measured,
    options::{Level, Options, ToolNamespace},
    pipeline::compress,
    stats::thousands,
    validate::Limits,
};

/// Advice from [`recommend_level`].
///
/// # Format
///
/// ```json
/// {"level":1,"reason":"149 tools take 88,829 characters (21,147 o200k_base tokens) at level 1, too many to send whole every turn. …",
///  "tool_count":149,"namespace_count":63,"ops_per_namespace":2.365,"level1_chars":88829,
///  "level1_tokens":21147,"level1_saved_pct":45.7,"level3_saved_pct":96.5,
///  "ambiguous_map_lines":101,"discover_top":10,
///  "measured":[{"model":"Qwen2.5-Coder-1.5B-Instruct Q4_K_M","model_id":"qwen1.5b",
///    "scenarios":"held-out retrieval requests, answerable","answerable":true,
///    "catalogue":"the 149 real MCP tools","context":32768,"setting":"level=1","level":1,
///    "map_style":null,"ranked_top":null,"discovery":false,"compiled_map":false,"constrained":true,"n":75,
///    "right":42,"args_valid":59,"prompt_tokens":27473,"source":"docs/eval/session15-1.5b-heldout.jsonl"},…]}
/// ```
///
/// `discover_top` (only for a large catalogue) is how many best-ranked tools to show with
/// `find_tools`; `measured` (only then) holds the three model runs the reason quotes.
///
/// `level1_tokens` is present only with the `tokens` feature:
///
/// ```json
/// {"level":1,"reason":"149 tools take 88,829 characters at level 1, too many …","tool_count":149,…}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Recommendation {
    /// The advised level: 0, 1 or 3.
    pub level: Level,
    /// Why, in prose for a human.
    pub reason: String,
    /// Number of tools.
    pub tool_count: usize,
    /// Distinct namespaces under the namespace function.
    pub namespace_count: usize,
    /// `tool_count / namespace_count` (0 when there are none).
    pub ops_per_namespace: f64,
    /// Characters of the level-1 block (wire tools as JSON plus the preamble), as
    /// [`Stats::compressed_chars`](crate::Stats::compressed_chars) counts them; the
    /// decision rests on this.
    pub level1_chars: usize,
    /// o200k_base tokens of the level-1 block, as
    /// [`Stats::compressed_tokens`](crate::Stats::compressed_tokens) counts them (feature
    /// `tokens`; `None` without it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level1_tokens: Option<usize>,
    /// Level-1 character saving, percent of the tools as given
    /// ([`Stats::original_chars`](crate::Stats::original_chars): chef's neutral shape,
    /// annotations and every other member counted); where `reason` says level 1 would grow
    /// the block, it compares level 1 with level 0 instead.
    pub level1_saved_pct: f64,
    /// Level-3 character saving, percent of the tools as given.
    pub level3_saved_pct: f64,
    /// Level-3 map lines shared with another tool.
    pub ambiguous_map_lines: usize,
    /// With a level-1 advice for a large catalogue: show this many best-ranked real tools
    /// and let the model find the rest (`PrunePolicy::discover(top_k)`, the
    /// discovery setting; docs/DISCOVERY.md). `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discover_top: Option<usize>,
    /// With the large-catalogue advice, the model runs the reason quotes: level 1, level 3
    /// and level 1 with ranked pruning to the top 10, measured under the same conditions (rows of
    /// [`MEASURED`](crate::MEASURED), generated from `chef eval` runs). Empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub measured: Vec<Measured>,
}

/// Advises a level for `tools` (0, 1 or 3).
///
/// It advises; it does not act: pass the answer back in as
/// [`Options::with_level`](crate::Options::with_level).
///
/// ```
/// use chef_compress::{recommend_level, Level};
/// use chef_ir::ToolDefinition;
/// use serde_json::json;
///
/// let tools: Vec<_> = (0..3)
///     .map(|i| ToolDefinition::new(format!("svc_op{i}"), json!({
///         "type": "object",
///         "properties": {"id": {"type": "string", "description": "The id of the record to operate on, as returned by the list operation."}},
///         "required": ["id"]
///     })).with_description("Does one thing to a record. The record must exist; otherwise the call fails with a not-found error and nothing changes."))
///     .collect();
/// let advice = recommend_level(&tools)?;
/// assert_eq!(advice.level, Level::One);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn recommend_level(tools: &[ToolDefinition]) -> Result<Recommendation, CompressError> {
    recommend_level_with(tools, ToolNamespace::split)
}

/// [`recommend_level`] with a caller's namespace split, used only for the reported
/// namespace figures (`namespace_count`, `ops_per_namespace`).
pub fn recommend_level_with(
    tools: &[ToolDefinition],
    namespace_of: impl Fn(&str) -> ToolNamespace,
) -> Result<Recommendation, CompressError> {
    recommend_level_with_limits(tools, namespace_of, Limits::default())
}

/// [`recommend_level_with`] under `limits` for the compressions it measures, for
/// catalogues beyond the default [`Limits::max_tools`].
///
/// ```
/// use chef_compress::{recommend_level_with_limits, CompressError, ToolNamespace, validate::Limits};
/// use chef_ir::ToolDefinition;
/// use serde_json::json;
///
/// let tools: Vec<_> = (0..3)
///     .map(|i| ToolDefinition::new(format!("svc_op{i}"), json!({"type": "object"})))
///     .collect();
/// let two = Limits { max_tools: 2, ..Limits::default() };
/// let refused = recommend_level_with_limits(&tools, ToolNamespace::split, two);
/// assert!(matches!(refused, Err(CompressError::TooManyTools { count: 3, limit: 2 })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn recommend_level_with_limits(
    tools: &[ToolDefinition],
    namespace_of: impl Fn(&str) -> ToolNamespace,
    limits: Limits,
) -> Result<Recommendation, CompressError> {
    let tool_count = tools.len();
    let namespaces: HashSet<String> = tools
        .iter()
        .map(|t| namespace_of(t.name.as_str()).ns)
        .collect();
    let namespace_count = namespaces.len();
    #[expect(clippy::cast_precision_loss, reason = "tool counts are small")]
    let ops_per_namespace = if namespace_count == 0 {
        0.0
    } else {
        tool_count as f64 / namespace_count as f64
    };

    let base = Options::new().with_limits(limits);
    let l1 = compress(tools, &count_tokens(base.clone().with_level(Level::One)))?;
    let l3 = compress(tools, &base.clone().with_level(Level::Three))?;
    let l0 = compress(tools, &base.with_level(Level::Zero))?;
    let l1_stats = l1.stats();
    let l3_stats = l3.stats();
    let chars = l1_stats.compressed_chars;
    let tokens = l1_stats.compressed_tokens;
    let figure = match tokens {
        Some(n) => format!(
            "{} characters ({} o200k_base tokens)",
            thousands(chars),
            thousands(n)
        ),
        None => format!("{} characters", thousands(chars)),
    };
    let ambiguous = l3_stats.ambiguous_map_lines.unwrap_or(0);

    // Each level's size rule (in its module) says whether these sizes make it the one.
    let sizes = Sizes {
        tool_count,
        level0_chars: l0.stats().compressed_chars,
        level1: Measure::of(l1_stats),
        level3: Measure::of(l3_stats),
        figure,
    };
    let (
        level,
        Advice {
            reason,
            measured,
            discover_top,
        },
    ) = Level::ALL
        .into_iter()
        .find_map(|level| codec(level).advise(&sizes).map(|advice| (level, advice)))
        .unwrap_or_else(|| {
            // The rules partition every case (a test checks it); keep the default if not.
            (
                Level::default(),
                Advice {
                    reason: format!(
                        "No level's size rule matched {} at level 1; level {} is the default.",
                        sizes.figure,
                        Level::default()
                    ),
                    measured: Vec::new(),
                    discover_top: None,
                },
            )
        });

    Ok(Recommendation {
        level,
        reason,
        tool_count,
        namespace_count,
        ops_per_namespace,
        level1_chars: chars,
        level1_tokens: tokens,
        level1_saved_pct: l1_stats.saved_pct,
        level3_saved_pct: l3_stats.saved_pct,
        ambiguous_map_lines: ambiguous,
        discover_top,
        measured,
    })
}

/// `options` with o200k_base token counts on (feature `tokens`).
#[cfg(feature = "tokens")]
fn count_tokens(options: Options) -> Options {
    options.with_token_counts(true)
}

/// `options` unchanged: without the `tokens` feature there is no counter.
#[cfg(not(feature = "tokens"))]
fn count_tokens(options: Options) -> Options {
    options
}
