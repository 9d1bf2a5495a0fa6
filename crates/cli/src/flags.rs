//! Command-line flags, parsed by clap.

use std::path::PathBuf;

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
    /// Rank a catalogue's tools for each request in a JSON Lines file.
    Search(SearchArgs),
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
pub(crate) struct SearchArgs {
    /// A JSON file of tool definitions (MCP, Anthropic, OpenAI, Gemini or bare shapes).
    pub(crate) tools: PathBuf,
    /// A JSON Lines file of requests, one `{"query":"…"}` object per line.
    #[arg(long)]
    pub(crate) queries: PathBuf,
    /// How many tools to list per request, best first.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) top: u16,
}
