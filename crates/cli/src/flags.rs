//! Command-line flags, parsed by clap.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::{
    compile_map::CompileMapArgs, compress::CompressArgs, demo::DemoArgs, embed::DistillArgs,
    eval::EvalArgs, inspect::InspectArgs, mcp::McpInspectArgs, mcp_serve::McpServeArgs,
    recommend::RecommendArgs, resolve::ResolveArgs, search::SearchArgs, sessions::SessionsArgs,
};

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
    /// Show what chef does for an agent, offline, on the bundled 149-tool corpus (the model
    /// is scripted).
    Demo(DemoArgs),
    /// Work with tool catalogues.
    Tools {
        #[command(subcommand)]
        command: ToolsCommand,
    },
    /// Rank a catalogue's tools for each request in a JSON Lines file, or measure the
    /// ranking on labelled requests (--eval).
    Search(SearchArgs),
    /// Work with embedding models (for `chef search --model`).
    Embed {
        #[command(subcommand)]
        command: EmbedCommand,
    },
    /// Work with live MCP servers.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// Compress a tool catalogue: wire tools, system preamble, stats and codes as JSON.
    Compress(CompressArgs),
    /// Advise a compression level (0, 1 or 3) for a tool catalogue.
    Recommend(RecommendArgs),
    /// Resolve model tool calls (JSON lines) against a compressed catalogue.
    Resolve(ResolveArgs),
    /// Write a level-4 compiled map with a model behind an OpenAI-compatible
    /// chat-completions endpoint; every line is verified, the file is resumable.
    #[command(name = "compile-map")]
    CompileMap(CompileMapArgs),
    /// Measure settings on a model behind an OpenAI-compatible endpoint: an agent loop per
    /// scenario through chef, graded mechanically; JSON Lines per run (resumable), a
    /// summary table and an SVG chart (see docs/EVAL.md).
    #[command(long_about = crate::eval::LONG_ABOUT)]
    Eval(EvalArgs),
    /// Inspect session snapshots kept in a store, and move them between stores.
    Sessions(SessionsArgs),
    /// Run the gateway: OpenAI and Anthropic APIs in front of their upstreams, every
    /// request through a chef session (see docs/GATEWAY.md).
    Serve(ServeArgs),
}

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The gateway's TOML config (default: every setting at its default).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Validate the config and reach each upstream, then exit.
    #[arg(long)]
    pub(crate) check: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ToolsCommand {
    /// Report what a tool file holds: tool count, shapes, size, and optionally tokens.
    Inspect(InspectArgs),
}

/// `chef embed …`.
#[derive(Debug, Subcommand)]
pub(crate) enum EmbedCommand {
    /// Make a static (model2vec) model from all-MiniLM-L6-v2: embed its vocabulary, PCA,
    /// Zipf weighting. Takes a few minutes. Needs a chef built with `--features dense`.
    Distill(DistillArgs),
}

#[derive(Debug, Subcommand)]
pub(crate) enum McpCommand {
    /// Start MCP servers over stdio, list their tools, and report the combined catalogue.
    #[command(long_about = crate::mcp::LONG_ABOUT)]
    Inspect(McpInspectArgs),
    /// Serve MCP to a host in front of many MCP servers: compressed, searchable, validated
    /// and gated.
    #[command(long_about = crate::mcp_serve::LONG_ABOUT)]
    Serve(McpServeArgs),
}
