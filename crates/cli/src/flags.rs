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
