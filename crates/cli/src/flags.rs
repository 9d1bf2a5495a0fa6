//! Command-line flags, parsed by clap.

use std::path::PathBuf;

use chef_compress::{Level, MapStyle, Objective};
use clap::{Args, Parser, Subcommand};

/// chef: a context-engineering runtime for LLM agents.
///
/// Prunes, compresses and gates the tools an agent offers a model, and compiles
/// cache-stable requests for Anthropic, OpenAI and Gemini.
#[derive(Debug, Parser)]
#[command(name = "chef", version, about, long_about = None)]
pub(crate) struct Flags {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Work with tool catalogues.
    Tools {
        #[command(subcommand)]
        command: ToolsCommand,
    },
    /// Compress a tool catalogue: wire tools, system preamble, stats and codes as JSON.
    Compress(CompressArgs),
    /// Advise a compression level (0, 1 or 3) for a tool catalogue.
    Recommend(RecommendArgs),
    /// Resolve model tool calls (JSON lines) against a compressed catalogue.
    Resolve(ResolveArgs),
}

#[derive(Debug, Subcommand)]
pub(crate) enum ToolsCommand {
    /// Report what a tool file holds: tool count, shapes, size, and optionally tokens.
    Inspect(InspectArgs),
}

#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    /// A JSON file of tool definitions (MCP, Anthropic, OpenAI, Gemini or bare shapes).
    pub(crate) file: PathBuf,
    /// Also count o200k_base tokens (offline estimate).
    #[arg(long)]
    pub(crate) tokens: bool,
}

#[derive(Debug, Args)]
pub(crate) struct CompressArgs {
    /// A JSON file of tool definitions (MCP, Anthropic, OpenAI, Gemini or bare shapes).
    pub(crate) tools: PathBuf,
    #[command(flatten)]
    pub(crate) compression: CompressionFlags,
    /// Exact model id: picks the measured map style for it (see --objective).
    #[arg(long, value_name = "ID")]
    pub(crate) model: Option<String>,
    /// What a model-specific style pick optimises.
    #[arg(long, value_name = "occupancy|cost", value_parser = parse_objective)]
    pub(crate) objective: Option<Objective>,
    /// Also report o200k_base token counts of the original and compressed payload.
    #[arg(long)]
    pub(crate) tokens: bool,
}

/// Level and map style, shared by `compress` and `resolve`.
#[derive(Debug, Args)]
pub(crate) struct CompressionFlags {
    /// Compression level.
    #[arg(long, value_name = "0|1|2|3", default_value = "1", value_parser = parse_level)]
    pub(crate) level: Level,
    /// Level-3 map style.
    #[arg(long, value_name = "name+required|explicit|signature", value_parser = parse_map_style)]
    pub(crate) map_style: Option<MapStyle>,
}

#[derive(Debug, Args)]
pub(crate) struct RecommendArgs {
    /// A JSON file of tool definitions.
    pub(crate) tools: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct ResolveArgs {
    /// A JSON file of tool definitions.
    pub(crate) tools: PathBuf,
    #[command(flatten)]
    pub(crate) compression: CompressionFlags,
    /// JSON lines, one call each: {"name": ..., "arguments": an object or a JSON string}.
    #[arg(long, value_name = "CALLS.jsonl")]
    pub(crate) calls: PathBuf,
}

fn parse_level(s: &str) -> Result<Level, String> {
    s.parse()
        .map_err(|e: chef_compress::UnsupportedLevel| e.to_string())
}

fn parse_map_style(s: &str) -> Result<MapStyle, String> {
    s.parse()
        .map_err(|e: chef_compress::UnsupportedMapStyle| e.to_string())
}

fn parse_objective(s: &str) -> Result<Objective, String> {
    s.parse()
        .map_err(|e: chef_compress::UnsupportedObjective| e.to_string())
}
