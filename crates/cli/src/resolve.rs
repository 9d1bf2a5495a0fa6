//! `chef resolve TOOLS --level N [--map-style S] [--max-tools N]
//! [--compiled MAP.json [--require-compiled]] [--target T] --calls CALLS.jsonl`.
//!
//! The catalogue is compressed as `chef compress` with the same flags would compress it
//! (level 4 needs `--compiled`), and each call is resolved against that. With `--target`,
//! a call may also name a tool as `chef compress --target T` sent it: a name the provider
//! refuses goes on the wire renamed (`timezone.convert` as `timezone_convert` for
//! `openai`), and that wire name resolves to the real tool. A wire name that as written
//! also reaches another tool is an error naming both. At levels 3–4 the real names are not
//! on the wire (`t` and `q` are), and a sanitised real name is accepted there anyway as
//! separator drift.
//!
//! # Format
//!
//! Input: one call per line, `{"name": "t", "arguments": {"f": "a0", "a": {…}}}`, where
//! `arguments` is an object or a JSON string holding one (absent, `null`, `""` and `[]`,
//! as values or inside a string, mean `{}`, as the library reads a model's arguments;
//! anything else gets the library's error line for that call, naming its tool:
//! `Arguments for stripe_list_charges must be a JSON object; received a string that is not
//! JSON.`);
//! blank lines are skipped. Every line is checked before anything is printed: a line that is not a
//! JSON object with a string `name` stops the command with exit status 2 and one line
//! naming the file and line.
//!
//! Output: one JSON line per call, in input order:
//!
//! ```json
//! {"kind":"call","name":"github_create_issue","args":{"owner":"o","repo":"r","title":"t"}}
//! {"kind":"meta","result":"a0 = github_create_issue(owner,repo,title,body?,labels?:string[]) — …"}
//! {"kind":"error","message":"No map code \"zz9\". Search with q(s=…).","recoverable":true}
//! {"kind":"error","message":"Missing required parameter …","recoverable":true,"tool":"github_create_issue"}
//! ```
//!
//! An error about one tool (arguments its schema refuses, a schema that cannot be used)
//! names it in `tool`, the real name, so a program never reads it out of `message`; an
//! error that reached no tool (an unknown name or code) has no `tool`. At levels 0–1 an
//! unknown name is answered with the nearest listed name, as `Chef::route` answers it
//! (`No tool named "raed_file". Did you mean "read_file"?`); levels 3–4 suggest in the
//! library.

use std::path::PathBuf;

use std::io::{self, Write};

use chef_compress::{
    Level, Resolution, ResolveError,
    similarity::{SUGGESTION_FLOOR, add_did_you_mean, nearest_open},
};
use clap::Args;
use serde::Serialize;
use serde_json::Value;

use crate::{
    args::{CompiledFlags, CompressionFlags, parse_target},
    compress::options,
    error::{CliError, json_line_problem},
    tools,
};

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Line<'a> {
    Call {
        name: &'a str,
        args: &'a Value,
    },
    Meta {
        result: &'a str,
    },
    Error {
        message: String,
        recoverable: bool,
        /// The real tool the error is about (refused arguments, an unusable schema).
        #[serde(skip_serializing_if = "Option::is_none")]
        tool: Option<&'a str>,
    },
}

/// Each call's name and its arguments as written (absent: `{}`); the library reads them as
/// it reads a model's, refusing a bag that is not an object for the tool it names.
type Calls = Vec<(String, Value)>;

fn parse_calls(args: &ResolveArgs) -> Result<Calls, CliError> {
    let text = std::fs::read_to_string(&args.calls).map_err(|source| CliError::Read {
        path: args.calls.clone(),
        source,
    })?;
    let bad = |line: usize, problem: String| CliError::Calls {
        path: args.calls.clone(),
        line,
        problem,
    };
    let mut calls = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let value: Value =
            serde_json::from_str(raw).map_err(|e| bad(line, json_line_problem(&e)))?;
        let Value::Object(mut call) = value else {
            return Err(bad(
                line,
                "expected a JSON object {\"name\":…, \"arguments\":…}".to_owned(),
            ));
        };
        let name = match call.remove("name") {
            Some(Value::String(name)) => name,
            Some(_) => return Err(bad(line, "`name` must be a string".to_owned())),
            None => return Err(bad(line, "`name` is missing".to_owned())),
        };
        let arguments = call
            .remove("arguments")
            .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
        calls.push((name, arguments));
    }
    Ok(calls)
}

pub(crate) fn run(args: &ResolveArgs) -> Result<(), CliError> {
    let options = options(&args.tools, &args.compression, &args.compiled)?;
    let definitions = tools::load(&args.tools)?;
    crate::compress::check_compiled_flag(
        &args.compression,
        &args.compiled,
        &args.tools,
        &definitions,
    )?;
    let calls = parse_calls(args)?;
    let compressed =
        chef_compress::compress(&definitions, &options).map_err(|source| CliError::Compress {
            path: args.tools.clone(),
            source,
        })?;
    let names = args
        .target
        .map(|target| compressed.wire_names(target))
        .unwrap_or_default();
    let mut out = io::BufWriter::new(io::stdout().lock());
    for (name, arguments) in &calls {
        let resolution = compressed.resolve_wire(name, arguments, &names);
        let line = match &resolution {
            Resolution::Call { name, args } => Line::Call { name, args },
            Resolution::Meta { result, .. } => Line::Meta { result },
            Resolution::Error(e) => Line::Error {
                message: with_did_you_mean(&compressed, e),
                recoverable: e.recoverable(),
                tool: e.tool(),
            },
        };
        serde_json::to_writer(&mut out, &line).map_err(|e| write_error(e.into()))?;
        out.write_all(b"\n").map_err(write_error)?;
    }
    out.flush().map_err(write_error)
}

/// The error's message, with (at levels 0–1, for a name that reaches no tool) the nearest
/// listed tool name suggested as `Chef::route` suggests it; the library leaves that to the
/// caller at those levels, where names are sent as they are.
fn with_did_you_mean(compressed: &chef_compress::Compressed, error: &ResolveError) -> String {
    let message = error.message();
    let ResolveError::UnknownTool { name, level } = error else {
        return message;
    };
    if !matches!(level, Level::Zero | Level::One) {
        return message;
    }
    let candidates = compressed.tools().iter().map(|t| t.name.as_str());
    let mut message = message;
    if let Some(near) = nearest_open(name, candidates, SUGGESTION_FLOOR, |_| false) {
        add_did_you_mean(&mut message, name, near);
    }
    message
}

fn write_error(e: io::Error) -> CliError {
    match e.kind() {
        io::ErrorKind::BrokenPipe => CliError::BrokenPipe,
        _ => CliError::Write(e),
    }
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
