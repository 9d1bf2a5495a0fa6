//! `chef recommend TOOLS [--max-tools N]`.
//!
//! # Format
//!
//! One JSON object on stdout, the library's recommendation. `level1_tokens` is the
//! o200k_base count of the level-1 block, the figure `chef compress TOOLS --level 1
//! --tokens` prints as `compressed_tokens` (and `level1_chars` its `compressed_chars`):
//!
//! ```json
//! {"level":3,"reason":"149 tools take 88,829 characters (21,147 o200k_base tokens) at level 1. …",
//!  "tool_count":149,"namespace_count":63,"ops_per_namespace":2.365,"level1_chars":88829,
//!  "level1_tokens":21147,…,"measured":[{"model":"Qwen2.5-Coder-1.5B-Instruct Q4_K_M",…},…]}
//! ```
//!
//! With a level-3 advice, `measured` holds the `chef eval` runs the reason quotes (level 1,
//! level 3, and level 1 with ranked pruning to the top 10, on one model: rows of
//! `chef_compress::MEASURED`, generated from docs/eval/).

use chef_compress::ToolNamespace;

use std::path::PathBuf;

use clap::Args;

use crate::{args::LimitFlags, compress::limits, error::CliError, output, tools};

pub(crate) fn run(args: &RecommendArgs) -> Result<(), CliError> {
    let definitions = tools::load(&args.tools)?;
    let advice = chef_compress::recommend_level_with_limits(
        &definitions,
        ToolNamespace::split,
        limits(&args.limits),
    )
    .map_err(|source| CliError::Compress {
        path: args.tools.clone(),
        source,
    })?;
    output::json_line(&advice)
}

#[derive(Debug, Args)]
pub(crate) struct RecommendArgs {
    /// A JSON file of tool definitions.
    pub(crate) tools: PathBuf,
    #[command(flatten)]
    pub(crate) limits: LimitFlags,
}
