//! `chef compress TOOLS [--level N] [--map-style S] [--max-tools N] [--model ID]
//! [--objective O] [--tokens] [--compiled MAP.json [--require-compiled]] [--target T]`.
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
//!
//! With `--target`, `tools` is the provider's own `tools` array for the compressed set,
//! made by that provider crate's envelope function:
//!
//! | target             | `tools`                                                        |
//! |--------------------|----------------------------------------------------------------|
//! | `anthropic`        | `[{name, description, input_schema}]`, one `cache_control` on the last tool |
//! | `openai`           | `[{type:"function", function:{name, description, parameters}}]` |
//! | `openai-responses` | `[{type:"function", name, description, parameters}]`          |
//! | `gemini`           | `[{functionDeclarations:[…]}]`, schemas repaired for Gemini     |
//!
//! `system` stays the preamble text; the envelope puts it in the provider's system slot
//! (Anthropic `system` block, Chat system message, Responses `instructions`, Gemini
//! `systemInstruction`), which is the same text. Names the provider refuses are renamed
//! on the wire; each rename (and any other envelope notice) is one `chef: notice:` line on
//! stderr, so stdout stays one JSON object.

use std::path::{Path, PathBuf};

use chef::ProviderError;
use chef_compress::{Compressed, Level, Objective, Options, validate::Limits};
use chef_ir::{Target, ToolDefinition};
use clap::Args;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::{
    args::{CompiledFlags, CompressionFlags, LimitFlags, parse_target},
    error::CliError,
    output, tools,
};

#[derive(Serialize)]
struct Report<'a> {
    tools: Tools<'a>,
    system: &'a str,
    stats: &'a chef_compress::Stats,
    codes: Map<String, Value>,
}

/// The `tools` field: neutral definitions, or a provider's `tools` array.
#[derive(Serialize)]
#[serde(untagged)]
enum Tools<'a> {
    Neutral(&'a [ToolDefinition]),
    Provider(Value),
}

/// The library limits for the shared `--max-tools` flag.
pub(crate) fn limits(flags: &LimitFlags) -> Limits {
    Limits {
        max_tools: flags.max_tools,
        ..Limits::default()
    }
}

/// The library options for the shared level, style, limit and compiled-map flags of the
/// command compressing the catalogue at `tools`.
///
/// Level 4 without `--compiled`, or with a map that holds no line, is a usage error naming
/// the flag (the library's own refusal does not know the command line).
pub(crate) fn options(
    tools: &Path,
    flags: &CompressionFlags,
    compiled: &CompiledFlags,
) -> Result<Options, CliError> {
    let mut options = Options::new()
        .with_level(flags.level)
        .with_limits(limits(&flags.limits));
    if let Some(style) = flags.map_style {
        if flags.level != Level::Three {
            // Said, not silently kept: `chef eval` refuses `style` below or above level 3.
            eprintln!(
                "chef: notice: --map-style shapes level 3's code map only; it changes nothing at level {}",
                flags.level.as_u8()
            );
        }
        options = options.with_map_style(style);
    }
    if compiled.compiled.is_some() && !matches!(flags.level, Level::One | Level::Four) {
        eprintln!(
            "chef: notice: --compiled is read at level 4 (its map) and level 1 (its docstrings) only; it changes nothing at level {}",
            flags.level.as_u8()
        );
    }
    match &compiled.compiled {
        Some(path) => {
            let map = load_compiled(path)?;
            if flags.level == Level::Four && map.is_empty() {
                return Err(CliError::Usage(format!(
                    "{}: the compiled map is empty; level 4 needs one `def` line per tool (`chef compile-map` writes them)",
                    path.display()
                )));
            }
            options = options
                .with_compiled(map)
                .with_require_compiled(compiled.require_compiled);
        }
        None if flags.level == Level::Four => {
            return Err(CliError::Usage(format!(
                "{}: level 4 needs a compiled map: pass --compiled MAP.json (`chef compile-map` writes one)",
                tools.display()
            )));
        }
        None => {}
    }
    Ok(options)
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

/// A compiled map must name tools of the catalogue it is used with: one compiled for
/// another catalogue would leave every tool `(not compiled)` (refused, exit 2, `what`
/// leading the message). Tools the map leaves out are said on stderr.
pub(crate) fn check_map_covers(
    what: &str,
    map_path: &std::path::Path,
    map: &std::collections::BTreeMap<String, String>,
    tools_path: &std::path::Path,
    tools: &[chef_ir::ToolDefinition],
) -> Result<(), CliError> {
    let covered = tools
        .iter()
        .filter(|t| map.contains_key(t.name.as_str()))
        .count();
    if covered == 0 && !tools.is_empty() {
        return Err(CliError::Usage(format!(
            "{what}{} names none of the {} tools of {} (its {} lines were compiled for another catalogue?); compile one with `chef compile-map --tools {} --out MAP --endpoint URL --model ID`",
            map_path.display(),
            tools.len(),
            tools_path.display(),
            map.len(),
            tools_path.display(),
        )));
    }
    if covered < tools.len() {
        eprintln!(
            "chef: notice: {what}{} of the {} tools have no line in {} and are shown uncompiled",
            tools.len() - covered,
            tools.len(),
            map_path.display()
        );
    }
    Ok(())
}

/// [`check_map_covers`] for `--compiled` at level 4. Level 1 reads only the docstrings it
/// finds, so a map that names none of the tools is not refused there, but said: it
/// changes nothing.
pub(crate) fn check_compiled_flag(
    flags: &CompressionFlags,
    compiled: &CompiledFlags,
    tools_path: &std::path::Path,
    tools: &[chef_ir::ToolDefinition],
) -> Result<(), CliError> {
    match &compiled.compiled {
        Some(path) if flags.level == Level::Four => {
            let map = load_compiled(path)?;
            check_map_covers("", path, &map, tools_path, tools)
        }
        Some(path) if flags.level == Level::One => {
            let map = load_compiled(path)?;
            if !tools.is_empty() && !tools.iter().any(|t| map.contains_key(t.name.as_str())) {
                eprintln!(
                    "chef: notice: {} names none of the {} tools of {} (compiled for another catalogue?): it changes nothing at level 1",
                    path.display(),
                    tools.len(),
                    tools_path.display()
                );
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// What `--model` does not do, said rather than silently ignored: it picks a measured map
/// style, so it changes nothing below or above level 3, and nothing for a model (and
/// objective) no sweep measured — the default style is used then. `None` when it picks.
fn model_notice(model: &str, level: Level, objective: Option<Objective>) -> Option<String> {
    if level != Level::Three {
        return Some(format!(
            "--model picks level 3's measured map style only; it changes nothing at level {}",
            level.as_u8()
        ));
    }
    let objective = objective.unwrap_or_default();
    if chef_compress::POLICY
        .iter()
        .any(|row| row.model == model && row.objective == objective)
    {
        return None;
    }
    let mut measured: Vec<String> = chef_compress::POLICY
        .iter()
        .map(|row| format!("{} ({})", row.model, row.objective))
        .collect();
    measured.sort_unstable();
    measured.dedup();
    Some(format!(
        "no map style was measured for model `{model}` with objective {objective}; the \
         default `{}` is used. Measured by the toolgz sweep of 2026-07-26, not by chef (exact model ids, objective): {}",
        chef_compress::CONSERVATIVE_DEFAULT,
        if measured.is_empty() {
            "none".to_owned()
        } else {
            measured.join(", ")
        }
    ))
}

pub(crate) fn run(args: &CompressArgs) -> Result<(), CliError> {
    let mut options =
        options(&args.tools, &args.compression, &args.compiled)?.with_token_counts(args.tokens);
    let definitions = tools::load(&args.tools)?;
    check_compiled_flag(&args.compression, &args.compiled, &args.tools, &definitions)?;
    if let Some(model) = &args.model {
        if let Some(notice) = model_notice(model, args.compression.level, args.objective) {
            eprintln!("chef: notice: {notice}");
        }
        options = options.with_model(model.clone());
    }
    if let Some(objective) = args.objective {
        if args.model.is_none() {
            eprintln!(
                "chef: notice: --objective {objective} changes nothing without --model: it says \
                 what a model-specific map style pick optimises"
            );
        }
        options = options.with_objective(objective);
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
    let tools = match args.target {
        None => Tools::Neutral(compressed.tools()),
        Some(target) => {
            let (tools, notices) =
                envelope(&compressed, target).map_err(|source| CliError::Envelope {
                    path: args.tools.clone(),
                    target,
                    source,
                })?;
            for notice in notices {
                eprintln!("chef: notice: {notice}");
            }
            Tools::Provider(tools)
        }
    };
    output::json_line(&Report {
        tools,
        system: compressed.system(),
        stats: compressed.stats(),
        codes,
    })
}

/// The provider `tools` array for a compressed set, and the envelope's notices as text.
/// The error is the provider crate's, or the tools' JSON that would not (de)serialise.
fn envelope(
    compressed: &Compressed,
    target: Target,
) -> Result<(Value, Vec<String>), ProviderError> {
    let tools = compressed.tools();
    let preamble = compressed.system();
    match target {
        Target::Anthropic => {
            let options = chef_anthropic::CompileOptions::default()
                .with_cache_preamble(compressed.cache_preamble());
            let env = chef_anthropic::envelope(tools, Some(preamble), &options);
            let notices = env
                .names
                .renamed()
                .map(|(real, wire)| format!("tool {real:?} is sent as {wire:?}"))
                .collect();
            let value = serde_json::to_value(&env.tools).map_err(ProviderError::Tools)?;
            Ok((value, notices))
        }
        Target::OpenAiChat | Target::OpenAiResponses => {
            let (bytes, notices) = if target == Target::OpenAiChat {
                chef_openai::chat::envelope(tools, preamble)
            } else {
                chef_openai::responses::envelope(tools, preamble)
            }?;
            let mut body: Value = serde_json::from_slice(&bytes).map_err(ProviderError::Tools)?;
            let value = body
                .get_mut("tools")
                .map(Value::take)
                .unwrap_or_else(|| Value::Array(Vec::new()));
            Ok((value, notices.iter().map(ToString::to_string).collect()))
        }
        Target::Gemini => {
            let env =
                chef_gemini::envelope(tools, preamble, &chef_gemini::CompileOptions::default())?;
            let value = serde_json::to_value(&env.tools).map_err(ProviderError::Tools)?;
            Ok((value, env.notices.iter().map(ToString::to_string).collect()))
        }
    }
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

fn parse_objective(s: &str) -> Result<Objective, chef_compress::UnsupportedObjective> {
    s.parse()
}
