//! `chef recommend TOOLS`.
//!
//! # Format
//!
//! One JSON object on stdout, the library's recommendation:
//!
//! ```json
//! {"level":3,"reason":"149 tools take ~42,713 tokens at level 1. …","tool_count":149,
//!  "namespace_count":63,"ops_per_namespace":2.365,"level1_tokens":42713,…}
//! ```

use crate::{error::CliError, flags::RecommendArgs, output, tools};

pub(crate) fn run(args: &RecommendArgs) -> Result<(), CliError> {
    let definitions = tools::load(&args.tools)?;
    let advice =
        chef_compress::recommend_level(&definitions).map_err(|source| CliError::Compress {
            path: args.tools.clone(),
            source,
        })?;
    output::json_line(&advice)
}
