//! The `chef` binary: inspect, compress and search tool catalogues, resolve calls, and run
//! the demo.
//!
//! The binary is thin: [`flags`] parses the command line with clap, each command module
//! turns flags into library calls, and [`error::CliError`] decides the exit status. Input
//! problems (a missing file, an unusable tool list) exit with status 2 and one line on
//! stderr naming the file and the problem; nothing panics.

mod args;
mod compile_map;
mod compress;
mod demo;
mod embed;
mod error;
mod eval;
mod flags;
mod inspect;
mod mcp;
mod mcp_serve;
mod output;
mod prefix;
mod recommend;
mod resolve;
mod search;
mod sessions;
mod tools;

use std::process::ExitCode;

use clap::Parser;

/// mimalloc rather than the C library's malloc: a server (`chef serve`, `chef mcp serve`)
/// restores and drops sessions whose tool schemas are thousands of small allocations, and a
/// cold restore is about a quarter faster with it (docs/PERFORMANCE.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use crate::{
    error::CliError,
    flags::{Command, EmbedCommand, Flags, McpCommand, ToolsCommand},
};

fn main() -> ExitCode {
    let flags = Flags::parse();
    match run(flags) {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::BrokenPipe) => ExitCode::SUCCESS,
        Err(err) => {
            // Each cause its text does not already say (a store error ends with PostgreSQL's own
            // reason).
            eprintln!("chef: {}", chef_serve::error_chain(&err));
            ExitCode::from(err.exit_code())
        }
    }
}

fn run(flags: Flags) -> Result<(), CliError> {
    match flags.command {
        Command::Demo(args) => demo::run(&args),
        Command::Tools {
            command: ToolsCommand::Inspect(args),
        } => inspect::run(&args),
        Command::Search(args) => search::run(&args),
        Command::Embed {
            command: EmbedCommand::Distill(args),
        } => embed::distill(&args),
        Command::Mcp {
            command: McpCommand::Inspect(args),
        } => mcp::run(&args),
        Command::Mcp {
            command: McpCommand::Serve(args),
        } => mcp_serve::run(&args),
        Command::Compress(args) => compress::run(&args),
        Command::CompileMap(args) => compile_map::run(&args),
        Command::Eval(args) => eval::run(&args),
        Command::Recommend(args) => recommend::run(&args),
        Command::Resolve(args) => resolve::run(&args),
        Command::Sessions(args) => sessions::run(&args),
        Command::Serve(args) => {
            chef_serve::cli(args.config.as_deref(), args.check).map_err(CliError::Serve)
        }
    }
}
