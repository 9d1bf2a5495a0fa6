//! `chef tools inspect FILE [--tokens]`.
//!
//! # Format
//!
//! One JSON object on stdout:
//!
//! ```json
//! {"file":"tools.json","tools":149,"shapes":{"anthropic":149},"chars":240312,"bytes":243100,"o200k_tokens":61234}
//! ```
//!
//! `chars` and `bytes` measure the file's tool list as compact JSON (what an agent sends
//! today, in the shapes the file uses); `chars` counts Unicode scalar values.
//! `o200k_tokens` appears only with `--tokens`. A catalogue chef cannot use (a tool whose
//! input schema is not an object, a name over 1,024 bytes or holding a control character —
//! what `compress`, `recommend` and the sessions refuse) still gets its report, with
//! `compress_error` saying why, and the exit status is 2.

use std::path::PathBuf;

use chef_ir::LoadedTools;
use serde::Serialize;
use serde_json::{Map, Value};

use clap::Args;

use crate::{error::CliError, output};

#[derive(Debug, Serialize)]
struct Report {
    file: String,
    #[serde(flatten)]
    stats: CatalogueStats,
    /// Why chef cannot use the catalogue (absent when it can).
    #[serde(skip_serializing_if = "Option::is_none")]
    compress_error: Option<String>,
}

/// What a tool catalogue costs as sent: the fields every inspect report shares.
#[derive(Debug, Serialize)]
pub(crate) struct CatalogueStats {
    tools: usize,
    shapes: Map<String, Value>,
    chars: usize,
    bytes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    o200k_tokens: Option<usize>,
}

impl CatalogueStats {
    /// Measures `wire`, the tool list as compact JSON, holding the tools in `loaded`.
    pub(crate) fn measure(
        loaded: &LoadedTools,
        wire: &str,
        tokens: bool,
    ) -> Result<Self, CliError> {
        let o200k_tokens = if tokens {
            Some(chef_compress::tokens::count_o200k(wire).ok_or(CliError::Tokenizer)?)
        } else {
            None
        };
        let shapes = loaded
            .shape_counts()
            .into_iter()
            .map(|(shape, n)| (shape.as_str().to_owned(), Value::from(n)))
            .collect();
        Ok(Self {
            tools: loaded.tools.len(),
            shapes,
            chars: wire.chars().count(),
            bytes: wire.len(),
            o200k_tokens,
        })
    }
}

pub(crate) fn run(args: &InspectArgs) -> Result<(), CliError> {
    let text = std::fs::read_to_string(&args.file).map_err(|source| CliError::Read {
        path: args.file.clone(),
        source,
    })?;
    // A leading byte order mark is skipped, as every other command's reader does.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let document: Value = serde_json::from_str(text).map_err(|e| CliError::Tools {
        path: args.file.clone(),
        source: chef_ir::LoadError::from_json(&e),
    })?;
    let loaded = chef_ir::load_tools(&document).map_err(|source| CliError::Tools {
        path: args.file.clone(),
        source,
    })?;

    let tool_list = match &document {
        Value::Object(map) => map.get("tools").unwrap_or(&document),
        other => other,
    };
    let wire = tool_list.to_string();

    // What `compress`, `recommend` and the sessions refuse of a tool (a schema that is not
    // an object, a name too long or holding a line break…), whatever the count: the
    // report says it and the exit status is 2, as `mcp inspect`'s.
    let limits = chef_compress::validate::Limits::default();
    let compress_error = loaded
        .tools
        .iter()
        .enumerate()
        .find_map(|(index, tool)| chef_compress::check_tool(index, tool, &limits).err());
    output::json_line(&Report {
        file: args.file.display().to_string(),
        stats: CatalogueStats::measure(&loaded, &wire, args.tokens)?,
        compress_error: compress_error.as_ref().map(ToString::to_string),
    })?;
    match compress_error {
        Some(source) => Err(CliError::Compress {
            path: args.file.clone(),
            source,
        }),
        None => Ok(()),
    }
}

#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    /// A JSON file of tool definitions (MCP, Anthropic, OpenAI, Gemini or bare shapes).
    pub(crate) file: PathBuf,
    /// Also count o200k_base tokens (offline estimate).
    #[arg(long)]
    pub(crate) tokens: bool,
}
