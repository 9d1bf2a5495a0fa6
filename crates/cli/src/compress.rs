//! `chef compress TOOLS [--level N] [--map-style S] [--model ID] [--objective O] [--tokens]
//! [--compiled MAP.json [--require-compiled]]`.
//!
//! # Format
//!
//! One JSON object on stdout:
//!
//! ```json
//! {"tools":[{"name":"t","description":"…","input_schema":{…}},…],"system":"<toolmap>…",
//!  "stats":{"level":3,"map_style":"name+required",…},"codes":{"github_create_issue":"a0",…}}
//! ```
//!
//! `tools` are in chef's neutral shape (`{name, description, input_schema}`); `codes` maps
//! each real name to its level-3 code in code order and is empty below level 3.

use chef_compress::{Compressed, Options};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::{
    error::CliError,
    flags::{CompressArgs, CompressionFlags},
    output, tools,
};

#[derive(Serialize)]
struct Report<'a> {
    tools: &'a [chef_ir::ToolDefinition],
    system: &'a str,
    stats: &'a chef_compress::Stats,
    codes: Map<String, Value>,
}

/// The library options for the shared level/style flags.
pub(crate) fn options(flags: &CompressionFlags) -> Options {
    let options = Options::new().with_level(flags.level);
    match flags.map_style {
        Some(style) => options.with_map_style(style),
        None => options,
    }
}

/// Reads a compiled map: a JSON object of tool name -> compiled line.
pub(crate) fn load_compiled(
    path: &std::path::Path,
) -> Result<std::collections::BTreeMap<String, String>, CliError> {
    let text = std::fs::read_to_string(path).map_err(|source| CliError::Read {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| {
        CliError::Usage(format!(
            "{}: not a compiled map (a JSON object of tool name to `def` line): {e}",
            path.display()
        ))
    })
}

pub(crate) fn run(args: &CompressArgs) -> Result<(), CliError> {
    let definitions = tools::load(&args.tools)?;
    let mut options = options(&args.compression).with_token_counts(args.tokens);
    if let Some(model) = &args.model {
        options = options.with_model(model.clone());
    }
    if let Some(objective) = args.objective {
        options = options.with_objective(objective);
    }
    if let Some(path) = &args.compiled {
        options = options
            .with_compiled(load_compiled(path)?)
            .with_require_compiled(args.require_compiled);
    }
    let compressed: Compressed =
        chef_compress::compress(&definitions, &options).map_err(|source| CliError::Compress {
            path: args.tools.clone(),
            source,
        })?;
    if args.tokens && compressed.stats().original_tokens.is_none() {
        return Err(CliError::Tokenizer);
    }
    let codes = compressed
        .codes()
        .map(|(name, code)| (name.to_owned(), Value::String(code.to_owned())))
        .collect();
    output::json_line(&Report {
        tools: compressed.tools(),
        system: compressed.system(),
        stats: compressed.stats(),
        codes,
    })
}
