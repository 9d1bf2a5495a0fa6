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

#[derive(Debug, Args)]
pub(crate) struct SessionsArgs {
    /// The store: `file:///dir` or a directory (file system), or `postgres://…` (needs a
    /// chef built with the `postgres` feature). Required.
    #[arg(long, value_name = "URL", global = true, value_parser = clap::value_parser!(chef::store::StoreUrl))]
    pub(crate) store: Option<chef::store::StoreUrl>,
    #[command(subcommand)]
    pub(crate) command: SessionsCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum SessionsCommand {
    /// List sessions, one JSON line each: id, version, created_turn, bytes.
    Ls,
    /// Print one session's snapshot (the snapshot file format).
    Show {
        /// The session id.
        id: String,
    },
    /// Write sessions (all, or those named) as a JSON Lines bundle.
    Export {
        /// Session ids (default: every session).
        ids: Vec<String>,
        /// Write the bundle here (atomically) instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Read a bundle written by `export` (`-` for stdin) into the store. Every line is
    /// checked before anything is written (a session id on two lines is refused); an
    /// existing session stops the import unless --overwrite is given.
    Import {
        /// The bundle file.
        file: PathBuf,
        /// Replace sessions that already exist in the store.
        #[arg(long)]
        overwrite: bool,
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

#[derive(Debug, Args)]
pub(crate) struct SearchArgs {
    /// A JSON file of tool definitions (MCP, Anthropic, OpenAI, Gemini or bare shapes).
    pub(crate) tools: PathBuf,
    /// A JSON Lines file of requests, one `{"query":"…"}` object per line.
    #[arg(long, required_unless_present_any = ["calibrate", "eval"])]
    pub(crate) queries: Option<PathBuf>,
    /// How many tools to list per request, best first.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) top: u16,
    /// Instead of searching, measure the ranker on a labelled JSON Lines file (one
    /// `{"query":"…","expected":["tool",…]}` per line; `"expected":[]` for a request no
    /// tool answers) and print one JSON object: recall@1, recall@5, MRR (depth 10) and false
    /// abstention (over answerable requests, null without any) and true abstention (over
    /// the others, null without any), for the ranker in use (the bundled hybrid, --model's,
    /// or --lexical) at its abstention setting.
    #[arg(
        long,
        value_name = "LABELS.jsonl",
        conflicts_with_all = ["queries", "calibrate"]
    )]
    pub(crate) eval: Option<PathBuf>,
    /// With --eval: measure only the lines whose `"split"` is NAME (e.g. `heldout`).
    #[arg(long, value_name = "NAME", requires = "eval")]
    pub(crate) split: Option<String>,
    /// Never abstain: rank every request (with --eval, the figures of the ranking alone).
    #[arg(long, conflicts_with = "min_cosine")]
    pub(crate) never_abstain: bool,
    #[command(flatten)]
    pub(crate) dense: DenseFlags,
}

/// The hybrid (BM25F + embedding model) options of `chef search`.
#[derive(Debug, Args)]
pub(crate) struct DenseFlags {
    /// Rank with this local embedding model mixed with BM25F instead of the static model
    /// bundled in chef: a directory holding all-MiniLM-L6-v2 (config.json,
    /// model.safetensors, tokenizer.json) or a static model made by `chef embed distill`.
    /// Nothing is downloaded. Needs a chef built with `--features dense`.
    #[arg(long, value_name = "DIR", conflicts_with = "lexical")]
    pub(crate) model: Option<PathBuf>,
    /// Rank with BM25F alone (and its own abstention rule), not the default hybrid of
    /// BM25F and the bundled static model.
    #[arg(long, conflicts_with_all = ["min_cosine", "dense_weight", "calibrate", "joint", "cosine_only"])]
    pub(crate) lexical: bool,
    /// Where tool vectors are cached [default: $XDG_CACHE_HOME/chef/vectors, else
    /// ~/.cache/chef/vectors].
    #[arg(
        long,
        value_name = "DIR",
        requires = "model",
        conflicts_with = "no_cache"
    )]
    pub(crate) cache: Option<PathBuf>,
    /// Embed the catalogue afresh and keep nothing on disk.
    #[arg(long, requires = "model")]
    pub(crate) no_cache: bool,
    /// Abstain when no tool's cosine with the request reaches this (and, unless
    /// --cosine-only, BM25F abstains too) [default: 0.32 for MiniLM, 0.54 for a static
    /// model (the bundled one included), calibrated on 149 tools; calibrate yours with
    /// --calibrate].
    #[arg(long, value_name = "COSINE", allow_negative_numbers = true)]
    pub(crate) min_cosine: Option<f32>,
    /// Joint abstention, the default: abstain only when the cosine is below --min-cosine
    /// and BM25F's own rule abstains too (the flag is accepted for scripts written when it
    /// was opt-in).
    #[arg(long, conflicts_with = "cosine_only")]
    pub(crate) joint: bool,
    /// Abstain on the cosine alone (below --min-cosine), whatever BM25F finds: refuses
    /// more unanswerable requests, and more answerable ones.
    #[arg(long)]
    pub(crate) cosine_only: bool,
    /// Weight of the model's score in the mix, 0 to 1 [default: 0.6 for MiniLM, 0.4 for a
    /// static model, calibrated on 149 tools].
    #[arg(long, value_name = "W")]
    pub(crate) dense_weight: Option<f32>,
    /// Instead of searching, print the --min-cosine for this catalogue, from a JSON Lines
    /// file of requests known to be irrelevant to it (`{"query":"…"}` per line): the
    /// lowest that abstains on --abstain-share of them, with the abstention rule in use
    /// (joint unless --cosine-only).
    #[arg(long, value_name = "IRRELEVANT.jsonl", conflicts_with = "queries")]
    pub(crate) calibrate: Option<PathBuf>,
    /// With --calibrate: the share of those requests to abstain on, 0 to 1 [default: 0.9].
    #[arg(long, value_name = "SHARE", requires = "calibrate")]
    pub(crate) abstain_share: Option<f32>,
    /// Re-rank the hybrid's best 30 tools with the second stage (a relevance model learned
    /// from public labelled data, compiled in) and abstain on its probability, read from the
    /// request's words that some tool mentions. Opt-in: on held-out data it does not beat
    /// the default (docs/PERFORMANCE.md). With --eval, prints the first stage's line and
    /// then the second stage's.
    #[arg(long, conflicts_with_all = ["lexical", "calibrate"])]
    pub(crate) second_stage: bool,
    /// With --second-stage: abstain when no candidate's probability reaches this, 0 to 1
    /// [default: 0.256, calibrated on 149 tools].
    #[arg(long, value_name = "P", requires = "second_stage")]
    pub(crate) min_relevance: Option<f32>,
}

/// `chef embed …`.
#[derive(Debug, Subcommand)]
pub(crate) enum EmbedCommand {
    /// Make a static (model2vec) model from all-MiniLM-L6-v2: embed its vocabulary, PCA,
    /// Zipf weighting. Takes a few minutes. Needs a chef built with `--features dense`.
    Distill(DistillArgs),
}

#[derive(Debug, Args)]
pub(crate) struct DistillArgs {
    /// The MiniLM directory (config.json, model.safetensors, tokenizer.json).
    #[arg(long, value_name = "DIR")]
    pub(crate) from: PathBuf,
    /// Where to write the static model (created if needed).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: PathBuf,
    /// Dimensions to keep (PCA components).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) dims: u16,
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

#[derive(Debug, Args)]
pub(crate) struct McpServeArgs {
    /// The TOML file naming the upstream servers and the mode (see --help).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: PathBuf,
    /// Serve streamable HTTP at http://ADDR/mcp (loopback only) instead of stdio.
    #[arg(long, value_name = "ADDR", conflicts_with = "check")]
    pub(crate) http: Option<std::net::SocketAddr>,
    /// Start every upstream once, report its tools and each mode's size, and exit.
    #[arg(long)]
    pub(crate) check: bool,
    /// With --check: also count o200k_base tokens (offline estimate).
    #[arg(long, requires = "check")]
    pub(crate) tokens: bool,
}

#[derive(Debug, Args)]
pub(crate) struct McpInspectArgs {
    /// A server to start: NAME=COMMAND. Repeat once per server. NAME (letters, digits,
    /// `-`) prefixes its tools; COMMAND is split into words like a POSIX shell does
    /// (quotes and backslashes; no variables, globs or pipes) and run directly.
    #[arg(long = "server", value_name = "NAME=COMMAND", required = true, value_parser = crate::mcp::parse_server)]
    pub(crate) servers: Vec<crate::mcp::ServerSpec>,
    /// How tools are named in the combined catalogue; `{server}` and `{tool}` are replaced.
    #[arg(
        long,
        value_name = "FORMAT",
        default_value = "{server}_{tool}",
        conflicts_with = "no_prefix"
    )]
    pub(crate) prefix_format: String,
    /// Keep each tool's own name (same as --prefix-format '{tool}').
    #[arg(long)]
    pub(crate) no_prefix: bool,
    /// Seconds each server gets to start, answer the MCP handshake and list every tool.
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = crate::mcp::parse_timeout)]
    pub(crate) timeout: std::time::Duration,
    /// Also count o200k_base tokens (offline estimate).
    #[arg(long)]
    pub(crate) tokens: bool,
    /// Write the combined catalogue here as MCP `tools/list` JSON (`{"tools":[...]}`).
    #[arg(long, value_name = "FILE")]
    pub(crate) out: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) limits: LimitFlags,
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
    #[command(flatten)]
    pub(crate) compiled: CompiledFlags,
    /// Emit `tools` in this provider's envelope instead of chef's neutral shape.
    #[arg(long, value_name = "anthropic|openai|openai-responses|gemini", value_parser = parse_target)]
    pub(crate) target: Option<chef_ir::Target>,
}

/// Level, map style and limits, shared by `compress` and `resolve`.
#[derive(Debug, Args)]
pub(crate) struct CompressionFlags {
    /// Compression level (4 needs --compiled).
    #[arg(long, value_name = "0|1|2|3|4", default_value = "1", value_parser = parse_level)]
    pub(crate) level: Level,
    /// Level-3 map style.
    #[arg(long, value_name = "name+required|explicit|signature|distinct", value_parser = parse_map_style)]
    pub(crate) map_style: Option<MapStyle>,
    #[command(flatten)]
    pub(crate) limits: LimitFlags,
}

/// The compiled map, shared by `compress` and `resolve`.
#[derive(Debug, Args)]
pub(crate) struct CompiledFlags {
    /// A compiled map (JSON object: tool name -> `def` line, as `chef compile-map` writes
    /// it), required at level 4, optional at level 1. Lines that no longer fit their tool
    /// are dropped and listed.
    #[arg(long, value_name = "MAP.json")]
    pub(crate) compiled: Option<PathBuf>,
    /// Fail when a tool has no usable compiled line (levels 1 and 4).
    #[arg(long, requires = "compiled")]
    pub(crate) require_compiled: bool,
}

/// Resource limits, shared by every command that compresses a catalogue.
#[derive(Debug, Args)]
pub(crate) struct LimitFlags {
    /// The most tools a catalogue may hold.
    #[arg(long, value_name = "N", default_value_t = chef_compress::validate::Limits::default().max_tools)]
    pub(crate) max_tools: usize,
}

#[derive(Debug, Args)]
pub(crate) struct CompileMapArgs {
    /// A JSON file of tool definitions (MCP, Anthropic, OpenAI, Gemini or bare shapes).
    #[arg(long, value_name = "TOOLS")]
    pub(crate) tools: PathBuf,
    /// The compiled map to write (and to resume from when it exists).
    #[arg(long, value_name = "MAP.json")]
    pub(crate) out: PathBuf,
    /// Base URL of an OpenAI-compatible API (`/chat/completions` is appended unless the
    /// URL already ends with it), e.g. https://api.openai.com/v1 or http://127.0.0.1:8080/v1.
    #[arg(long, value_name = "URL")]
    pub(crate) endpoint: String,
    /// The model id sent with each request.
    #[arg(long, value_name = "ID")]
    pub(crate) model: String,
    /// Requests in flight at once.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub(crate) concurrency: u16,
    /// The environment variable holding the API key [default: CHEF_API_KEY]. Unset or
    /// empty: no Authorization header (local servers).
    #[arg(long, value_name = "NAME")]
    pub(crate) api_key_env: Option<String>,
    /// Seconds one HTTP request may take, reply included.
    #[arg(long, value_name = "SECONDS", default_value = "120", value_parser = crate::mcp::parse_timeout)]
    pub(crate) timeout_secs: std::time::Duration,
    /// HTTP attempts per request (429, 5xx, network errors, timeouts, malformed replies).
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u8).range(1..=10))]
    pub(crate) max_attempts: u8,
    /// The docstring length the prompt asks for, in characters.
    #[arg(long, value_name = "N", default_value_t = chef_compress::DEFAULT_MAX_DOC_CHARS)]
    pub(crate) max_doc_chars: usize,
    /// Sampling temperature sent with each request (omitted by default: some models
    /// accept only their own).
    #[arg(long, value_name = "T")]
    pub(crate) temperature: Option<f32>,
}

#[derive(Debug, Args)]
pub(crate) struct EvalArgs {
    /// A JSON file of tool definitions (MCP, Anthropic, OpenAI, Gemini or bare shapes).
    #[arg(long, value_name = "TOOLS")]
    pub(crate) tools: PathBuf,
    /// The scenarios: a toolgz scenario file (`{"scenarios":[…]}`), a JSON array, or JSON
    /// Lines of `{"id","prompt","expected":["tool",…],"arguments":{…},"result":"…"}`.
    #[arg(long, value_name = "FILE")]
    pub(crate) scenarios: PathBuf,
    /// Base URL of an OpenAI-compatible API (`/chat/completions` is appended unless the
    /// URL already ends with it), e.g. http://127.0.0.1:8080/v1. The key, if any, is read
    /// from OPENAI_API_KEY (or --api-key-env).
    #[arg(long, value_name = "URL")]
    pub(crate) endpoint: String,
    /// The environment variable holding the API key [default: OPENAI_API_KEY]. Unset or
    /// empty: no Authorization header (local servers).
    #[arg(long, value_name = "NAME")]
    pub(crate) api_key_env: Option<String>,
    /// The model id sent with each request.
    #[arg(long, value_name = "NAME")]
    pub(crate) model: String,
    /// A setting to measure, repeatable: comma-separated key=value pairs, `level`
    /// required. Keys: level=0..4, style=name+required|explicit|signature|distinct (level 3
    /// only), prune=all|task|ranked:K|discover:K, compiled=MAP.json (required at level 4, optional at
    /// level 1 for its docstrings, refused at 0, 2 and 3), name=LABEL.
    /// E.g. `level=3,style=distinct`, `level=1,prune=ranked:10`,
    /// `level=4,compiled=map.json`. [default: level=1 and level=3]
    #[arg(long = "setting", value_name = "SPEC", value_parser = crate::eval::setting::parse)]
    pub(crate) settings: Vec<crate::eval::setting::Setting>,
    /// The wire format of the requests; the eval speaks Chat Completions only.
    #[arg(long, value_name = "openai", default_value = "openai", value_parser = parse_eval_target)]
    pub(crate) target: chef_ir::Target,
    /// Model calls per scenario: lookups and refused calls are answered and the model is
    /// asked again, up to this many requests.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=50))]
    pub(crate) max_calls: u32,
    /// Seconds one request may take, reply included; past it the scenario is a timeout.
    #[arg(long, value_name = "S", default_value = "120", value_parser = crate::mcp::parse_timeout)]
    pub(crate) timeout: std::time::Duration,
    /// The most tokens the model may write per request (`max_tokens`): a small model that
    /// does not stop would otherwise write until the context is full. A reply cut short
    /// is graded as what it holds (usually malformed or no call).
    #[arg(long, value_name = "N", default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_tokens: u32,
    /// Append one JSON line per (setting, scenario) here; pairs already in the file are
    /// not run again.
    #[arg(long, value_name = "RUN.jsonl")]
    pub(crate) out: Option<PathBuf>,
    /// Write a chart of accuracy against first-request prompt tokens, one point per
    /// setting.
    #[arg(long, value_name = "CHART.svg")]
    pub(crate) svg: Option<PathBuf>,
    /// Use only the first N scenarios (of those whose tools are in TOOLS, and in --split).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) limit: Option<u32>,
    /// Use only the scenarios whose `"split"` is NAME (e.g. `heldout` of
    /// tests/fixtures/retrieval-149.jsonl).
    #[arg(long, value_name = "NAME")]
    pub(crate) split: Option<String>,
    /// Turn tool calls the model wrote as text (fenced JSON, a bare JSON object,
    /// `<tool_call>` tags) into tool calls before routing them.
    #[arg(long)]
    pub(crate) recover_text_calls: bool,
    /// Send a JSON-schema `response_format` that constrains the reply to one call of the
    /// turn's tools (recover the reply with --recover-text-calls).
    #[arg(long)]
    pub(crate) constrain: bool,
    /// Grade whole tasks: every dispatched call is answered with the scenario's scripted
    /// result and the model goes on, until it answers without a call or --max-calls runs
    /// out; the task succeeds when the expected tools were called in order and no other
    /// tool was (the first call is still graded as without this flag).
    #[arg(long)]
    pub(crate) whole_task: bool,
    /// With --whole-task: end a task at the Nth reply whose calls all repeat calls already
    /// answered in it (same name, equal arguments: the loop chef's guard announces),
    /// grading the calls made until then; the line says `"stopped_on_repeat": true`. With
    /// 2, chef's loop guard (its notice, and no branch for the repeated tools in the
    /// constrained format) has had one reply to act on before the task ends.
    #[arg(long, value_name = "N", requires = "whole_task", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) stop_on_repeat: Option<u32>,
}

#[derive(Debug, Args)]
pub(crate) struct RecommendArgs {
    /// A JSON file of tool definitions.
    pub(crate) tools: PathBuf,
    #[command(flatten)]
    pub(crate) limits: LimitFlags,
}

#[derive(Debug, Args)]
pub(crate) struct ResolveArgs {
    /// A JSON file of tool definitions.
    pub(crate) tools: PathBuf,
    #[command(flatten)]
    pub(crate) compression: CompressionFlags,
    #[command(flatten)]
    pub(crate) compiled: CompiledFlags,
    /// JSON lines, one call each: {"name": ..., "arguments": an object or a JSON string}.
    #[arg(long, value_name = "CALLS.jsonl")]
    pub(crate) calls: PathBuf,
    /// Also accept the tool names this provider was sent (`chef compress --target`): a name
    /// it refuses, such as `timezone.convert`, goes on the wire renamed (`timezone_convert`).
    #[arg(long, value_name = "anthropic|openai|openai-responses|gemini", value_parser = parse_target)]
    pub(crate) target: Option<chef_ir::Target>,
}

#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Compression level for the agent loop.
    #[arg(long, value_name = "0|1|2|3", default_value = "1", value_parser = parse_level)]
    pub(crate) level: Level,
    /// Which tools each request offers: `discover:K` (the K tools ranked best for the
    /// request, by their real names, plus `find_tools`; the default at levels 0 and 1,
    /// with K = 10) or `all` (every tool; the default at levels 2 and 3).
    #[arg(long, value_name = "all|discover:K", value_parser = parse_demo_prune)]
    pub(crate) prune: Option<DemoPrune>,
    /// Provider the requests are compiled for.
    #[arg(long, value_name = "anthropic|openai|openai-responses|gemini", default_value = "anthropic", value_parser = parse_target)]
    pub(crate) target: chef_ir::Target,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `chef demo --prune`: every tool, or discovery with its K.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DemoPrune {
    All,
    Discover(usize),
}

impl DemoArgs {
    /// The discovery setting's K for this run (`None`: every tool is offered).
    pub(crate) fn discover_top_k(&self) -> Option<usize> {
        match self.prune {
            Some(DemoPrune::All) => None,
            Some(DemoPrune::Discover(k)) => Some(k),
            None => (self.level.as_u8() <= 1).then_some(crate::demo::DEFAULT_DISCOVER_TOP_K),
        }
    }
}

/// A `chef demo --prune` value clap cannot take.
#[derive(Debug, thiserror::Error)]
#[error("--prune {0:?}: expected all or discover:K (K at least 1)")]
struct DemoPruneError(String);

fn parse_demo_prune(s: &str) -> Result<DemoPrune, DemoPruneError> {
    if s == "all" {
        return Ok(DemoPrune::All);
    }
    s.strip_prefix("discover:")
        .and_then(|k| k.parse::<usize>().ok())
        .filter(|k| *k >= 1)
        .map(DemoPrune::Discover)
        .ok_or_else(|| DemoPruneError(s.to_owned()))
}

/// A `--target` value clap cannot take.
#[derive(Debug, thiserror::Error)]
enum TargetFlagError {
    #[error("unknown target {0:?} (expected anthropic, openai, openai-responses or gemini)")]
    Unknown(String),
    #[error("chef eval sends Chat Completions requests: --target openai only (not {0})")]
    NotChat(chef_ir::Target),
}

fn parse_target(s: &str) -> Result<chef_ir::Target, TargetFlagError> {
    chef_ir::Target::from_name(s).ok_or_else(|| TargetFlagError::Unknown(s.to_owned()))
}

fn parse_eval_target(s: &str) -> Result<chef_ir::Target, TargetFlagError> {
    match parse_target(s)? {
        chef_ir::Target::OpenAiChat => Ok(chef_ir::Target::OpenAiChat),
        other => Err(TargetFlagError::NotChat(other)),
    }
}

fn parse_level(s: &str) -> Result<Level, chef_compress::UnsupportedLevel> {
    s.parse()
}

fn parse_map_style(s: &str) -> Result<MapStyle, chef_compress::UnsupportedMapStyle> {
    s.parse()
}

fn parse_objective(s: &str) -> Result<Objective, chef_compress::UnsupportedObjective> {
    s.parse()
}
