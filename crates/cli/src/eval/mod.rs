//! `chef eval --tools TOOLS --scenarios FILE --endpoint URL --model NAME [--setting SPEC …]
//! [--target openai] [--max-calls N] [--timeout S] [--max-tokens N] [--out RUN.jsonl]
//! [--svg CHART.svg] [--api-key-env NAME] [--split NAME] [--limit N]
//! [--recover-text-calls] [--constrain]`.
//!
//! Measures chef settings on a real model: for each (setting, scenario) a [`Chef`] holds
//! the tools at that setting, compiles the harness system prompt and the scenario's
//! prompt for Chat Completions, sends it to the endpoint, parses the reply and routes its
//! calls. A lookup (`q`), a refused call (unknown tool or code, invalid arguments) or a
//! blocked tool is answered with chef's reply and the model is asked again, up to
//! `--max-calls` requests; the first call `route` dispatches is graded and answered with
//! the scenario's scripted result, and the scenario ends. Nothing real is ever
//! dispatched. Grading ([`grade`]) is mechanical, and every scenario gets one line:
//! a timeout, an HTTP error or an unparsable reply is an outcome, never dropped. On a
//! rerun with `--out`, a timeout or connection failure measured nothing and runs again.
//! HTTP 401, 403 and 404, or a first request that cannot connect, stop the run (exit
//! status 1, [`CliError::Endpoint`]); bad input is exit status 2.
//! docs/EVAL.md describes the outcomes, the files and how to run it.

pub(crate) mod grade;
#[cfg(test)]
mod measured_table;
pub(crate) mod report;
pub(crate) mod scenario;
pub(crate) mod setting;

use std::{
    collections::{BTreeSet, HashSet},
    io::Write as _,
    path::{Path, PathBuf},
    time::Instant,
};

use chef::{Chef, RouteError, Routed};
use chef_compress::ResolveError;
use chef_ir::{Message, Target, ToolCall, ToolDefinition, ToolResult};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use reqwest::{StatusCode, header};
use serde_json::{Value, json};

use self::{
    grade::{End, Outcome, Record, RunParams, Trace, ValidationError},
    scenario::Scenario,
    setting::Setting,
};
use crate::{
    args::{TargetFlagError, parse_target, parse_timeout},
    compile_map::{chat_url, snippet},
    error::CliError,
    output, tools,
};

/// The environment variable holding the API key unless `--api-key-env` names another.
pub(crate) const KEY_ENV: &str = "OPENAI_API_KEY";

/// The harness system prompt; chef appends its own preamble (the level-3 tool map, …).
pub(crate) const SYSTEM_PROMPT: &str = "You work in an operations role with access to tools. \
Use the tools to complete the user's request. Do not ask clarifying questions: make \
reasonable assumptions and act. Finish with a one-line summary.";

/// What `answer=note` adds to the system prompt: the constrained format's answer branch,
/// which a model reading only the grammar does not know it may take.
pub(crate) const ANSWER_NOTE: &str = "Each reply is one JSON object: \
{\"name\": \"<tool>\", \"arguments\": {...}} calls a tool; {\"answer\": \"<your one-line \
summary>\"} ends the task, once every part of the request is done or when no tool can do it.";

/// The member `answer=todo` puts first in every branch of the constrained format: the
/// parts of the request still to do, at least one before a call, none before the answer.
pub(crate) const TODO_MEMBER: &str = "still_to_do";

/// The most parts the `answer=todo` list may hold: without a bound the 1.5B model
/// repeats its list until the reply is cut (session 43's pilot).
const TODO_ITEMS: usize = 6;
/// The longest a part of the `answer=todo` list may be, in characters.
const TODO_ITEM_CHARS: usize = 60;

/// `format` (a `response_format` of `Chef::response_format`) with [`TODO_MEMBER`] first
/// in each branch: a non-empty list of strings in a call's branch, an empty one in the
/// answer's.
fn with_todo(mut format: Value) -> Value {
    let Some(schema) = format.pointer_mut("/json_schema/schema") else {
        return format;
    };
    let mut branches = match schema.get_mut("anyOf").map(Value::take) {
        Some(Value::Array(branches)) => branches,
        _ => vec![schema.take()],
    };
    for branch in &mut branches {
        let answer = branch
            .get("properties")
            .is_some_and(|p| p.get(chef::openai::chat::ANSWER_MEMBER).is_some());
        let list = if answer {
            json!({"type": "array", "items": {"type": "string"}, "maxItems": 0})
        } else {
            json!({
                "type": "array",
                "items": {"type": "string", "maxLength": TODO_ITEM_CHARS},
                "minItems": 1,
                "maxItems": TODO_ITEMS
            })
        };
        let Some(object) = branch.as_object_mut() else {
            continue;
        };
        let mut properties = serde_json::Map::new();
        properties.insert(TODO_MEMBER.to_owned(), list);
        if let Some(Value::Object(old)) = object.remove("properties") {
            properties.extend(old);
        }
        object.insert("properties".to_owned(), Value::Object(properties));
        let mut required = vec![json!(TODO_MEMBER)];
        if let Some(Value::Array(old)) = object.remove("required") {
            required.extend(old);
        }
        object.insert("required".to_owned(), Value::Array(required));
    }
    *schema = if branches.len() == 1 {
        branches.pop().unwrap_or_default()
    } else {
        json!({ "anyOf": branches })
    };
    format
}

/// A reply of the `answer=todo` format with [`TODO_MEMBER`] taken off its JSON, so
/// recovery reads the call (or the answer) under it. Text that is not such an object is
/// left as it is.
fn strip_todo(reply: &mut Message) {
    for content in &mut reply.content {
        if let chef_ir::Content::Text { text, .. } = content
            && let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(text.trim())
            && object.shift_remove(TODO_MEMBER).is_some()
            && let Ok(rest) = serde_json::to_string(&object)
        {
            *text = rest;
        }
    }
}

/// `chef eval --help`.
pub(crate) const LONG_ABOUT: &str = "\
Measure chef settings on a model behind an OpenAI-compatible chat-completions endpoint.

For each setting and scenario, chef compiles the harness system prompt and the scenario's
prompt with the tools at that setting, sends it (temperature 0), parses the reply and
routes its tool calls. Lookups (q) and refused calls are answered and the model asked
again, up to --max-calls requests; the first dispatched call is graded and answered with
the scenario's scripted result. Nothing real is dispatched.

Outcomes: right, wrong_tool, no_call, malformed, lookups_exhausted, timeout, http_error,
unparsable. Every scenario gets one JSON line in --out (appended; pairs already there are
skipped on a rerun, except timeouts and connection failures, which run again), a summary
table per setting goes to stdout, --svg draws accuracy against first-request prompt
tokens. HTTP 401, 403 and 404, or a first request that cannot connect, stop the run
(exit status 1).
The key is read from OPENAI_API_KEY, or the variable --api-key-env names (unset or
empty: no Authorization header).
See docs/EVAL.md.";

/// A request that got no usable reply.
#[derive(Debug)]
enum SendError {
    /// Recorded as the scenario's outcome.
    Outcome(End),
    /// Every request will be refused (bad key, unknown model or path) or fail (the run's
    /// first request cannot connect): stop the run with this message.
    Fatal(String),
}

/// What every scenario shares.
struct Context<'a> {
    http: reqwest::Client,
    url: String,
    key: Option<String>,
    args: &'a EvalArgs,
    /// Whether a request of this run has already been sent (answered or not).
    sent: std::cell::Cell<bool>,
}

impl Context<'_> {
    async fn send(&self, body: Vec<u8>) -> Result<Vec<u8>, SendError> {
        let mut request = self
            .http
            .post(&self.url)
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json")
            .body(body);
        if let Some(key) = &self.key {
            request = request.bearer_auth(key);
        }
        let first = !self.sent.replace(true);
        let response = match request.send().await {
            Ok(response) => response,
            Err(e) if first && e.is_connect() => {
                return Err(SendError::Fatal(format!(
                    "cannot connect to {} ({}); is the server running?",
                    self.url,
                    crate::error::chain(&e)
                )));
            }
            Err(e) => return Err(self.transport(&e)),
        };
        let status = response.status();
        let bytes = response.bytes().await.map_err(|e| self.transport(&e))?;
        if status.is_success() {
            return Ok(bytes.to_vec());
        }
        let detail = format!("HTTP {status}{}", snippet(&bytes));
        if matches!(
            status,
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN | StatusCode::NOT_FOUND
        ) {
            return Err(SendError::Fatal(format!(
                "{} refused the request: {detail}",
                self.url
            )));
        }
        Err(SendError::Outcome(End::HttpError {
            status: Some(status.as_u16()),
            detail,
        }))
    }

    fn transport(&self, e: &reqwest::Error) -> SendError {
        SendError::Outcome(if e.is_timeout() {
            End::Timeout {
                detail: format!("no reply within {}s", self.args.timeout.as_secs_f64()),
            }
        } else if e.is_connect() {
            End::HttpError {
                status: None,
                detail: format!("cannot connect to {}", self.url),
            }
        } else {
            End::HttpError {
                status: None,
                detail: crate::error::chain(e),
            }
        })
    }

    /// The request body: chef's compiled Chat Completions body with the model,
    /// temperature 0, `max_tokens` and, with `--constrain`, the turn's `response_format`.
    fn body(&self, chef: &Chef, setting: &Setting, compiled: &[u8]) -> Result<Vec<u8>, CliError> {
        let mut body: Value =
            serde_json::from_slice(compiled).map_err(|source| CliError::Json {
                what: "chef compiled an unreadable body",
                source,
            })?;
        if let Some(object) = body.as_object_mut() {
            object.insert("model".to_owned(), json!(self.args.model));
            object.insert("temperature".to_owned(), json!(0));
            object.insert("max_tokens".to_owned(), json!(self.args.max_tokens));
            if self.args.constrain
                && let Some(format) = chef.response_format()
            {
                let format = serde_json::to_value(format).map_err(|source| CliError::Json {
                    what: "cannot serialise the response_format",
                    source,
                })?;
                let format = if setting.answer == setting::Answer::Todo {
                    with_todo(format)
                } else {
                    format
                };
                object.insert("response_format".to_owned(), format);
            }
        }
        serde_json::to_vec(&body).map_err(|e| CliError::Write(e.into()))
    }
}

/// What the model wrote in `reply`: its text, then each tool call as `name(arguments)`,
/// cut to [`grade::REPLY_CHARS`] characters.
fn written(reply: &Message) -> String {
    let mut out = reply.text();
    for call in reply.tool_calls() {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(call.name.as_str());
        out.push('(');
        out.push_str(&call.arguments.to_string());
        out.push(')');
    }
    match out.char_indices().nth(grade::REPLY_CHARS) {
        Some((at, _)) => {
            out.truncate(at);
            out.push('…');
            out
        }
        None => out,
    }
}

/// A session holding `tools` at `setting`, with the system prompt.
fn session(setting: &Setting, tools: Vec<ToolDefinition>) -> Result<Chef, CliError> {
    let mut chef = Chef::new(setting.config()?);
    chef.register_tools(tools)
        .map_err(|source| CliError::Registry {
            setting: setting.label.clone(),
            source: Box::new(source),
        })?;
    let prompt = if setting.answer == setting::Answer::Note {
        format!("{SYSTEM_PROMPT} {ANSWER_NOTE}")
    } else {
        SYSTEM_PROMPT.to_owned()
    };
    chef.set_system_prompt(vec![Message::system(prompt)]);
    Ok(chef)
}

/// The catalogue's tools a scenario offers: its `toolNames` in that order, else all.
fn tools_for(all: &[ToolDefinition], scenario: &Scenario) -> Vec<ToolDefinition> {
    match &scenario.tool_names {
        Some(names) => names
            .iter()
            .filter_map(|n| all.iter().find(|t| t.name.as_str() == n))
            .cloned()
            .collect(),
        None => all.to_vec(),
    }
}

/// Whether a refused call was refused for its arguments or its tool's schema.
fn validation_error(error: &RouteError) -> bool {
    matches!(
        error,
        RouteError::Resolve(ResolveError::InvalidArguments(_) | ResolveError::UnusableSchema(_))
    )
}

/// How a whole task ends when a request fails: after the first call was dispatched, a
/// failure the endpoint answered (an HTTP status, a body that is not a completion) ends
/// the task unsuccessfully and leaves the first call its grade (`task_error`); a timeout or
/// connection failure, and any failure before the first call, is the record's outcome
/// (the former are run again on resume: nothing was measured).
fn later_failure(trace: &mut Trace, first: &mut Option<End>, end: End) -> End {
    let answered = match &end {
        End::HttpError {
            status: Some(_),
            detail,
        }
        | End::Unparsable { detail } => Some(detail),
        _ => None,
    };
    match (first.take(), answered) {
        (Some(first), Some(detail)) => {
            trace.task_error = Some(format!("request {}: {detail}", trace.counts.model_calls));
            first
        }
        _ => end,
    }
}

/// One scenario's agent loop under one setting.
async fn run_one(
    cx: &Context<'_>,
    setting: &Setting,
    tools: Vec<ToolDefinition>,
    scenario: &Scenario,
) -> Result<Trace, CliError> {
    let started = Instant::now();
    let mut chef = session(setting, tools)?;
    chef.push(Message::user(scenario.prompt.clone()));
    let mut trace = Trace::new(End::NoCall);
    let mut last_refused = false;
    // Whole tasks: the first dispatched call, graded as the first call when the task ends
    // on an answer or on --max-calls.
    let mut first: Option<End> = None;
    // Replies whose calls all repeated answered calls (`--stop-on-repeat`).
    let mut repeats = 0_u32;
    trace.end = loop {
        if trace.counts.model_calls >= cx.args.max_calls {
            break first.take().unwrap_or(End::Exhausted { last_refused });
        }
        let payload = chef.compile(Target::OpenAiChat).map_err(|e| {
            CliError::Usage(format!(
                "setting {}: scenario {}: chef cannot compile the request: {e}",
                setting.label, scenario.id
            ))
        })?;
        let body = cx.body(&chef, setting, &payload.body)?;
        trace.counts.model_calls += 1;
        let bytes = match cx.send(body).await {
            Ok(bytes) => bytes,
            Err(SendError::Outcome(end)) => break later_failure(&mut trace, &mut first, end),
            Err(SendError::Fatal(message)) => return Err(CliError::Endpoint(message)),
        };
        let parsed = match chef::openai::chat::parse_response(&bytes, &payload.names) {
            Ok(parsed) => parsed,
            Err(e) => {
                // With the decoder's cause: which field did not have the shape expected.
                let end = End::Unparsable {
                    detail: format!("{}{}", chef_serve::error_chain(&e), snippet(&bytes)),
                };
                break later_failure(&mut trace, &mut first, end);
            }
        };
        if parsed.stop_reason.as_ref() == Some(&chef::openai::StopReason::LENGTH) {
            trace.counts.cut_replies += 1;
            trace.last_cut_at = Some(cx.args.max_tokens);
        } else {
            trace.last_cut_at = None;
        }
        if let Some(usage) = parsed.usage {
            // The cached share only where the server says it (`cached_tokens` in the reply):
            // the parsed usage reads a missing count as 0.
            let says_cached = bytes.windows(15).any(|w| w == b"\"cached_tokens\"");
            if trace.counts.model_calls == 1 {
                trace.counts.first_prompt_tokens = Some(usage.input_tokens);
                trace.counts.first_cached_tokens = says_cached.then_some(usage.cached_input_tokens);
            }
            if says_cached {
                trace.counts.cached_tokens =
                    Some(trace.counts.cached_tokens.unwrap_or(0) + usage.cached_input_tokens);
            }
            trace.counts.prompt_tokens =
                Some(trace.counts.prompt_tokens.unwrap_or(0) + usage.input_tokens);
            trace.counts.completion_tokens =
                Some(trace.counts.completion_tokens.unwrap_or(0) + usage.output_tokens);
        }
        let mut reply = parsed.message;
        trace.replies.push(written(&reply));
        if setting.answer == setting::Answer::Todo {
            strip_todo(&mut reply);
        }
        if cx.args.recover_text_calls {
            let recovered = chef.recover_text_calls(&mut reply);
            trace.counts.recovered_text_calls += u32::try_from(recovered).unwrap_or(u32::MAX);
        }
        let calls: Vec<ToolCall> = reply.tool_calls().cloned().collect();
        chef.push(reply);
        if calls.is_empty() {
            break first.take().unwrap_or(End::NoCall);
        }
        if let Some(limit) = cx.args.stop_on_repeat
            && chef.repeated_calls().is_some()
        {
            // The model only repeats what it already has: the loop, not a next step.
            repeats += 1;
            if repeats >= limit {
                trace.stopped_on_repeat = true;
                break first.take().unwrap_or(End::NoCall);
            }
        }
        let mut results = Vec::with_capacity(calls.len());
        let mut dispatched = None;
        last_refused = false;
        for call in &calls {
            match chef.route(call) {
                Routed::Call(call) if cx.args.whole_task => {
                    // The task goes on: every dispatched call gets its scripted result.
                    trace.calls.push(call.name.as_str().to_owned());
                    if first.is_none() {
                        first = Some(End::Dispatched {
                            tool: call.name.as_str().to_owned(),
                            arguments: call.arguments.clone(),
                        });
                    }
                    let result = scenario.result_for(call.name.as_str()).to_owned();
                    results.push(ToolResult::text(call.id, result));
                }
                Routed::Call(call) => {
                    dispatched = Some(call);
                    break;
                }
                Routed::Lookup { id, reply } | Routed::ToolkitLoaded { id, reply, .. } => {
                    trace.counts.lookups += 1;
                    results.push(ToolResult::text(id, reply));
                }
                Routed::Blocked { id, reply, .. } => {
                    trace.counts.malformed_calls += 1;
                    last_refused = true;
                    results.push(ToolResult::error(id, reply));
                }
                Routed::Error { id, error, reply } => {
                    trace.counts.malformed_calls += 1;
                    last_refused = true;
                    if validation_error(&error) {
                        trace.counts.validation_errors.push(ValidationError {
                            tool: error.tool().map(str::to_owned),
                            message: reply.clone(),
                        });
                    }
                    results.push(ToolResult::error(id, reply));
                }
                Routed::Owned(call) => {
                    // No library-owned tool is configured in an eval; refuse rather than
                    // run one.
                    trace.counts.malformed_calls += 1;
                    last_refused = true;
                    results.push(ToolResult::error(
                        call.id,
                        format!("{} is not available here.", call.name),
                    ));
                }
            }
        }
        if let Some(call) = dispatched {
            let result = scenario.result_for(call.name.as_str()).to_owned();
            chef.push(Message::tool_results(vec![ToolResult::text(
                call.id.clone(),
                result,
            )]));
            break End::Dispatched {
                tool: call.name.as_str().to_owned(),
                arguments: call.arguments,
            };
        }
        chef.push(Message::tool_results(results));
    };
    trace.counts.wall_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    Ok(trace)
}

/// The run file: records read at the start, lines appended as scenarios finish.
struct RunFile {
    path: std::path::PathBuf,
    file: std::fs::File,
    /// The file's last line is a whole record without its `\n` (written by hand, or by
    /// an editor that drops the final newline): the next append starts with one.
    unterminated: bool,
    /// The run file is a FIFO or device (`/dev/stdout` on a pipe): nothing to read back,
    /// and nothing to sync to disk.
    in_place: bool,
}

impl RunFile {
    /// Opens `path` for appending and returns its records. A last line cut short (a run
    /// killed mid-write) is removed; any other unreadable line is an error. A last record
    /// that lacks its final newline is kept, and the next append writes the newline first.
    fn open(path: &Path) -> Result<(Self, Vec<Record>), CliError> {
        // A FIFO or device (`/dev/stdout` on a pipe) holds no earlier run: reading it
        // would wait for bytes that never come.
        let in_place = output::in_place(path);
        let read = if in_place {
            Err(std::io::ErrorKind::NotFound.into())
        } else {
            std::fs::read(path)
        };
        let (records, unterminated) = match read {
            Ok(bytes) => Self::read(path, &bytes)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Vec::new(), false),
            Err(source) => {
                return Err(CliError::Read {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|source| CliError::WriteFile {
                path: path.to_owned(),
                source,
            })?;
        Ok((
            Self {
                path: path.to_owned(),
                file,
                unterminated,
                in_place,
            },
            records,
        ))
    }

    /// The records of a run file's bytes, and whether the file (once a cut last line is
    /// removed) ends without a newline. Lines are split on bytes, not text, so a line cut
    /// inside a multi-byte character is still removed exactly.
    fn read(path: &Path, bytes: &[u8]) -> Result<(Vec<Record>, bool), CliError> {
        let mut records = Vec::new();
        let mut unterminated = !bytes.is_empty() && !bytes.ends_with(b"\n");
        let lines: Vec<&[u8]> = bytes.split_inclusive(|b| *b == b'\n').collect();
        for (index, line) in lines.iter().enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<Record>(line) {
                Ok(record) => records.push(record),
                Err(_) if index + 1 == lines.len() && !line.ends_with(b"\n") => {
                    let keep = bytes.len().saturating_sub(line.len());
                    output::write_atomic(path, bytes.get(..keep).unwrap_or_default())?;
                    // What is kept ends with the line before's newline, or is empty.
                    unterminated = false;
                    eprintln!(
                        "chef: notice: {}: dropped an incomplete last line (its scenario runs again)",
                        path.display()
                    );
                }
                Err(e) => {
                    return Err(CliError::Queries {
                        path: path.to_owned(),
                        line: index + 1,
                        problem: format!(
                            "not a chef eval record ({e}); move the file away or choose another --out"
                        ),
                    });
                }
            }
        }
        Ok((records, unterminated))
    }

    /// Appends one record as one write (after the newline the last line lacked, if it
    /// did), and flushes it to disk.
    fn append(&mut self, record: &Record) -> Result<(), CliError> {
        let mut line = Vec::new();
        if self.unterminated {
            line.push(b'\n');
        }
        serde_json::to_writer(&mut line, record).map_err(|e| CliError::Write(e.into()))?;
        line.push(b'\n');
        let err = |source| CliError::WriteFile {
            path: self.path.clone(),
            source,
        };
        self.file.write_all(&line).map_err(err)?;
        self.unterminated = false;
        if self.in_place {
            return Ok(());
        }
        self.file.sync_data().map_err(err)
    }
}

fn progress_bar(total: usize) -> ProgressBar {
    let bar = ProgressBar::new(u64::try_from(total).unwrap_or(u64::MAX));
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} {bar:30} {pos}/{len} scenarios  {msg}  [{elapsed}]")
    {
        bar.set_style(style);
    }
    bar
}

/// Keeps the scenarios whose expected tools (and `toolNames`) are all in the catalogue;
/// names the others in one notice.
fn in_catalogue(all: Vec<Scenario>, tools: &[ToolDefinition]) -> Vec<Scenario> {
    let names: HashSet<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let (keep, skipped): (Vec<_>, Vec<_>) = all.into_iter().partition(|s| {
        s.expected.iter().all(|n| names.contains(n.as_str()))
            && s.tool_names
                .iter()
                .flatten()
                .all(|n| names.contains(n.as_str()))
    });
    if !skipped.is_empty() {
        let ids: Vec<&str> = skipped.iter().take(5).map(|s| s.id.as_str()).collect();
        let more = if skipped.len() > ids.len() {
            ", …"
        } else {
            ""
        };
        eprintln!(
            "chef: notice: {} scenario(s) name tools that are not in TOOLS and are skipped: {}{more}",
            skipped.len(),
            ids.join(", ")
        );
    }
    keep
}

/// A setting's compiled map must name tools of this catalogue: a map compiled for another
/// one would leave every tool `(not compiled)` and measure nothing the map says (refused,
/// exit 2). Tools the map leaves out are said on stderr.
fn check_compiled_map(
    setting: &Setting,
    tools: &[ToolDefinition],
    tools_path: &Path,
) -> Result<(), CliError> {
    let Some(path) = &setting.compiled else {
        return Ok(());
    };
    let map = crate::compress::load_compiled(path)?;
    crate::compress::check_map_covers(
        &format!("setting {}: ", setting.label),
        path,
        &map,
        tools_path,
        tools,
    )
}

pub(crate) fn run(args: &EvalArgs) -> Result<(), CliError> {
    debug_assert_eq!(args.target, Target::OpenAiChat);
    if let Some(path) = &args.out {
        output::check_writable("--out", path)?;
    }
    if let Some(path) = &args.svg {
        output::check_writable("--svg", path)?;
    }
    if let (Some(out), Some(svg)) = (&args.out, &args.svg)
        && output::same_file(out, svg)
    {
        return Err(CliError::Usage(format!(
            "--out {} and --svg {} are the same file: the chart would overwrite the run's records; give two paths",
            out.display(),
            svg.display()
        )));
    }
    // Nor may an output be one of the run's inputs: it would be replaced.
    let inputs = [("--tools", &args.tools), ("--scenarios", &args.scenarios)];
    for (flag, written) in [("--out", &args.out), ("--svg", &args.svg)] {
        let Some(written) = written else { continue };
        if let Some((input, path)) = inputs.iter().find(|(_, p)| output::same_file(written, p)) {
            return Err(CliError::Usage(format!(
                "{flag} {} is {input} {}: the run would overwrite its own input; give another path",
                written.display(),
                path.display()
            )));
        }
    }
    let tools = tools::load(&args.tools)?;
    let mut scenarios = scenario::load(&args.scenarios)?;
    if let Some(split) = &args.split {
        scenarios.retain(|s| s.split.as_deref() == Some(split.as_str()));
        if scenarios.is_empty() {
            return Err(CliError::Usage(format!(
                "{}: no scenario has \"split\": {split:?}",
                args.scenarios.display()
            )));
        }
    }
    let mut scenarios = in_catalogue(scenarios, &tools);
    if scenarios.is_empty() {
        return Err(CliError::Usage(format!(
            "{}: no scenario's tools are in {}",
            args.scenarios.display(),
            args.tools.display()
        )));
    }
    if let Some(limit) = args.limit {
        scenarios.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    }
    let settings = if args.settings.is_empty() {
        setting::defaults()
    } else {
        args.settings.clone()
    };
    let mut labels = Vec::with_capacity(settings.len());
    for setting in &settings {
        if labels.contains(&setting.label) {
            return Err(CliError::Usage(format!(
                "two settings are labelled {:?}; give one a name=LABEL",
                setting.label
            )));
        }
        labels.push(setting.label.clone());
        check_compiled_map(setting, &tools, &args.tools)?;
        // Every setting must compile before any request is sent.
        let mut chef = session(setting, tools.clone())?;
        chef.push(Message::user("check"));
        chef.compile(Target::OpenAiChat).map_err(|e| {
            CliError::Usage(format!(
                "setting {}: chef cannot compile the tools: {e}",
                setting.label
            ))
        })?;
    }
    let url = chat_url(&args.endpoint)?;
    let key_env = args.api_key_env.as_deref().unwrap_or(KEY_ENV);
    let key = std::env::var(key_env).ok().filter(|k| !k.is_empty());
    if key.is_none() && args.api_key_env.is_some() {
        eprintln!("chef: notice: {key_env} is not set or empty; sending no Authorization header");
    }
    crate::compile_map::check_api_key(key_env, key.as_deref())?;

    let (mut file, earlier) = match &args.out {
        Some(path) => {
            let (file, records) = RunFile::open(path)?;
            (Some(file), records)
        }
        None => (None, Vec::new()),
    };
    let params = RunParams {
        model: args.model.clone(),
        max_calls: args.max_calls,
        max_tokens: Some(args.max_tokens),
        text_recovery: args.recover_text_calls,
        constrained: args.constrain,
        whole_task: args.whole_task,
        stop_on_repeat: args.stop_on_repeat,
    };
    let ids: BTreeSet<&str> = scenarios.iter().map(|s| s.id.as_str()).collect();
    let mut records: Vec<Record> = Vec::new();
    let mut done = HashSet::new();
    let mut retried = HashSet::new();
    for record in earlier {
        if !labels.contains(&record.setting) || !ids.contains(record.scenario.as_str()) {
            continue;
        }
        if record.transport_failure() {
            // The endpoint was not reached or did not answer: nothing was measured.
            retried.insert((record.setting, record.scenario));
            continue;
        }
        // A line whose scenario now expects other tools was made for another request
        // under the same id (a JSON Lines file reordered or edited: ids are `line-N`).
        let now = scenarios.iter().find(|s| s.id == record.scenario);
        if let (Some(now), Some(was)) = (now, record.prompt.as_deref())
            && now.prompt != was
        {
            return Err(CliError::Usage(format!(
                "{}: scenario {} was run on the prompt {:?}, and the scenario file now holds {:?} under that id; \
                 the file changed since: choose another --out (ids of JSON Lines files are line numbers)",
                args.out.as_deref().unwrap_or(Path::new("")).display(),
                record.scenario,
                crate::mcp::clip(was),
                crate::mcp::clip(&now.prompt),
            )));
        }
        if let (Some(now), Some(was)) = (now, record.catalogue.as_deref()) {
            let fingerprint = grade::catalogue_fingerprint(&tools_for(&tools, now));
            if fingerprint != was {
                return Err(CliError::Usage(format!(
                    "{}: scenario {} was run on a tool catalogue ({was}) that is not the one given now ({fingerprint}); \
                     the TOOLS file changed since (a name, a description or a schema): choose another --out",
                    args.out.as_deref().unwrap_or(Path::new("")).display(),
                    record.scenario,
                )));
            }
        }
        if let Some(now) = now
            && now.expected != record.expected
        {
            return Err(CliError::Usage(format!(
                "{}: scenario {} was run expecting {:?}, and the scenario file now expects {:?} under that id; \
                 the file changed since: choose another --out (ids of JSON Lines files are line numbers)",
                args.out.as_deref().unwrap_or(Path::new("")).display(),
                record.scenario,
                record.expected,
                now.expected,
            )));
        }
        // A named setting whose definition changed since: its lines measured another
        // setting (lines written before the spec was recorded cannot be checked).
        if let (Some(was), Some(now)) = (
            record.spec.as_deref(),
            settings.iter().find(|s| s.label == record.setting),
        ) && was != now.spec
        {
            return Err(CliError::Usage(format!(
                "{}: setting {} was run as {was}, and this run defines it as {}; label this setting differently (name=LABEL) or choose another --out",
                args.out.as_deref().unwrap_or(Path::new("")).display(),
                record.setting,
                now.spec,
            )));
        }
        if !record.run.resumable_by(&params) {
            let differ = record.run.differences(&params);
            let RunParams {
                model,
                max_calls,
                max_tokens,
                text_recovery,
                constrained,
                whole_task,
                stop_on_repeat,
            } = &record.run;
            return Err(CliError::Usage(format!(
                "{}: setting {} was run with --model {model} --max-calls {max_calls}{}{}{}{}{} (this run differs in {differ}); \
                 rerun with those flags, label this setting differently (name=LABEL) or choose another --out",
                args.out.as_deref().unwrap_or(Path::new("")).display(),
                record.setting,
                max_tokens
                    .map(|n| format!(" --max-tokens {n}"))
                    .unwrap_or_default(),
                if *text_recovery {
                    " --recover-text-calls"
                } else {
                    ""
                },
                if *constrained { " --constrain" } else { "" },
                if *whole_task { " --whole-task" } else { "" },
                stop_on_repeat
                    .map(|n| format!(" --stop-on-repeat {n}"))
                    .unwrap_or_default(),
            )));
        }
        // The expected arguments are graded again from the line's call: a scenario file
        // whose arguments changed is measured by what it asks now.
        let mut record = record;
        if let Some(now) = now {
            record.args_match = grade::regrade_args(&record, now);
        }
        if done.insert((record.setting.clone(), record.scenario.clone())) {
            records.push(record);
        }
    }
    let todo: Vec<(&Setting, &Scenario)> = settings
        .iter()
        .flat_map(|setting| scenarios.iter().map(move |s| (setting, s)))
        .filter(|(setting, s)| !done.contains(&(setting.label.clone(), s.id.clone())))
        .collect();
    let retried = retried.difference(&done).count();
    if retried > 0 {
        eprintln!(
            "chef: notice: {retried} run(s) in the run file timed out or could not connect; running them again"
        );
    }
    if !done.is_empty() {
        eprintln!(
            "chef: notice: {} of {} runs are already in the run file; running {}",
            done.len(),
            done.len() + todo.len(),
            todo.len()
        );
    }

    if !todo.is_empty() {
        let http = reqwest::Client::builder()
            .timeout(args.timeout)
            .user_agent(concat!("chef/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(CliError::HttpClient)?;
        let cx = Context {
            http,
            url,
            key,
            args,
            sent: std::cell::Cell::new(false),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(CliError::Runtime)?;
        let bar = progress_bar(todo.len());
        let result = runtime.block_on(async {
            let (mut right, mut failed) = (0_usize, 0_usize);
            for (setting, scenario) in &todo {
                let offered = tools_for(&tools, scenario);
                let catalogue = grade::catalogue_fingerprint(&offered);
                let trace = run_one(&cx, setting, offered, scenario).await?;
                let mut record = grade::grade(&params, &setting.label, scenario, trace);
                record.catalogue = Some(catalogue);
                if setting.label != setting.spec {
                    record.spec = Some(setting.spec.clone());
                }
                match record.outcome {
                    Outcome::Right => right += 1,
                    Outcome::Timeout | Outcome::HttpError | Outcome::Unparsable => failed += 1,
                    _ => {}
                }
                if let Some(file) = file.as_mut() {
                    file.append(&record)?;
                }
                records.push(record);
                bar.inc(1);
                bar.set_message(format!(
                    "{} · right {right} · failed {failed}",
                    setting.label
                ));
            }
            Ok::<(), CliError>(())
        });
        bar.finish_and_clear();
        result?;
    }

    let rows = report::summarize(&labels, &records);
    // The table first: a chart that cannot be written after all loses nothing else. When
    // the run file or the chart is standard output (`--out /dev/stdout`,
    // `--svg /dev/stdout > chart.svg`), the table goes to standard error, so stdout holds
    // JSON Lines or the chart alone.
    let table = report::table(&rows);
    let outputs: Vec<&Path> = [args.out.as_deref(), args.svg.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    output::report_text(&table, &outputs)?;
    if let Some(path) = &args.svg {
        let title = format!("chef eval: {}, {} scenarios", args.model, scenarios.len());
        output::write_atomic(path, report::svg(&rows, &title).as_bytes())?;
    }
    Ok(())
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
    /// Base URL of an OpenAI-compatible API (`/chat/completions` is appended to its path
    /// unless the path already ends with it; a query string is kept after it), e.g.
    /// http://127.0.0.1:8080/v1. The key, if any, is read from OPENAI_API_KEY (or
    /// --api-key-env).
    #[arg(long, value_name = "URL")]
    pub(crate) endpoint: String,
    /// The environment variable holding the API key [default: OPENAI_API_KEY]. Unset or
    /// empty: no Authorization header (local servers).
    #[arg(long, value_name = "NAME")]
    pub(crate) api_key_env: Option<String>,
    /// The model id sent with each request.
    #[arg(long, value_name = "NAME", value_parser = crate::args::not_blank)]
    pub(crate) model: String,
    /// A setting to measure, repeatable: comma-separated key=value pairs, `level`
    /// required. Keys: level=0..4, style=name+required|explicit|signature|distinct (level 3
    /// only), prune=all|task|ranked:K|discover:K, answer=tool|note|todo|none (chef's
    /// final_answer tool, through which the model ends its task; or a system-prompt note
    /// describing the constrained format's answer branch; or, with --constrain, a list of
    /// the request's parts still to do that each reply begins with, the answer allowed only
    /// when it is empty), compiled=MAP.json (required at level 4, optional
    /// at level 1 for its docstrings, refused at 0, 2 and 3), name=LABEL.
    /// E.g. `level=3,style=distinct`, `level=1,prune=ranked:10`,
    /// `level=4,compiled=map.json`. [default: level=1 and level=3]
    #[arg(long = "setting", value_name = "SPEC", value_parser = setting::parse)]
    pub(crate) settings: Vec<Setting>,
    /// The wire format of the requests; the eval speaks Chat Completions only.
    #[arg(long, value_name = "openai", default_value = "openai", value_parser = parse_eval_target)]
    pub(crate) target: chef_ir::Target,
    /// Model calls per scenario: lookups and refused calls are answered and the model is
    /// asked again, up to this many requests.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=50))]
    pub(crate) max_calls: u32,
    /// Seconds one request may take, reply included; past it the scenario is a timeout.
    #[arg(long, value_name = "S", default_value = "120", value_parser = parse_timeout)]
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
    /// `<tool_call>` tags, or a whole reply of `name(key=value)` calls of offered tools)
    /// into tool calls before routing them.
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

fn parse_eval_target(s: &str) -> Result<chef_ir::Target, TargetFlagError> {
    match parse_target(s)? {
        chef_ir::Target::OpenAiChat => Ok(chef_ir::Target::OpenAiChat),
        other => Err(TargetFlagError::NotChat(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_todo_format_puts_the_list_first_and_gates_the_answer_on_an_empty_one() {
        let tool = |name: &str| {
            ToolDefinition::new(
                name,
                json!({"type": "object", "properties": {"q": {"type": "string"}}}),
            )
        };
        let mut chef =
            Chef::new(chef::ChefConfig::default().with_prune(chef::PrunePolicy::discover(1)));
        chef.register_tools(vec![tool("get_news"), tool("send_sms")])
            .unwrap();
        chef.push(Message::user("Get the news, then text it to me."));
        chef.compile(Target::OpenAiChat).unwrap();
        let format = serde_json::to_value(chef.response_format().unwrap()).unwrap();
        let format = with_todo(format);
        let branches = format["json_schema"]["schema"]["anyOf"].as_array().unwrap();
        assert!(branches.len() >= 3, "{format}");
        for branch in branches {
            let first = branch["properties"]
                .as_object()
                .unwrap()
                .keys()
                .next()
                .unwrap();
            assert_eq!(first, TODO_MEMBER);
            assert_eq!(branch["required"][0], json!(TODO_MEMBER));
            let list = &branch["properties"][TODO_MEMBER];
            if branch["properties"].get("answer").is_some() {
                assert_eq!(list["maxItems"], json!(0));
            } else {
                assert_eq!(list["minItems"], json!(1));
            }
        }
        // One branch alone is a schema, not an anyOf of one.
        let one = json!({"type": "json_schema", "json_schema": {"name": "x", "schema": {
            "type": "object", "properties": {"name": {"const": "f"}}, "required": ["name"]}}});
        let one = with_todo(one);
        assert_eq!(
            one["json_schema"]["schema"]["required"],
            json!([TODO_MEMBER, "name"])
        );

        let mut reply = Message::assistant(
            "{\"still_to_do\": [\"text it\"], \"name\": \"send_sms\", \"arguments\": {\"q\": \"hi\"}}",
        );
        strip_todo(&mut reply);
        assert_eq!(
            reply.text(),
            r#"{"name":"send_sms","arguments":{"q":"hi"}}"#
        );
        let mut prose = Message::assistant("Done: {\"still_to_do\": []}");
        strip_todo(&mut prose);
        assert_eq!(prose.text(), "Done: {\"still_to_do\": []}");
    }

    fn line(scenario: &str) -> String {
        let record = grade::grade(
            &RunParams {
                model: "m".to_owned(),
                max_calls: 2,
                max_tokens: Some(512),
                text_recovery: false,
                constrained: false,
                whole_task: false,
                stop_on_repeat: None,
            },
            "level=3",
            &Scenario {
                id: scenario.to_owned(),
                prompt: "p".to_owned(),
                expected: vec!["a".to_owned()],
                arguments: None,
                results: std::collections::BTreeMap::new(),
                default_result: "ok".to_owned(),
                tool_names: None,
                split: None,
            },
            Trace {
                counts: grade::Counts {
                    model_calls: 1,
                    wall_ms: 1,
                    ..grade::Counts::default()
                },
                ..Trace::new(End::Unparsable {
                    detail: "réponse coupée …".to_owned(),
                })
            },
        );
        format!("{}\n", serde_json::to_string(&record).unwrap())
    }

    #[test]
    fn a_run_file_cut_inside_a_character_loses_only_its_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.jsonl");
        let whole = format!("{}{}", line("one"), line("two"));
        // Cut inside the three bytes of "…" in the second line.
        let cut = whole.rfind('…').unwrap() + 1;
        std::fs::write(&path, &whole.as_bytes()[..cut]).unwrap();
        let (mut file, records) = RunFile::open(&path).unwrap();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].scenario, "one");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), line("one"));
        file.append(&records[0]).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{}{}", line("one"), line("one"))
        );
    }

    /// Found by session 33's CLI audit: the new record was appended on the same line and
    /// the file could not be resumed again.
    #[test]
    fn a_last_record_without_its_newline_is_kept_and_the_next_goes_on_a_line_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.jsonl");
        let whole = format!("{}{}", line("one"), line("two"));
        std::fs::write(&path, whole.trim_end_matches('\n')).unwrap();
        let (mut file, records) = RunFile::open(&path).unwrap();
        assert_eq!(records.len(), 2);
        file.append(&records[0]).unwrap();
        file.append(&records[1]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, format!("{whole}{whole}"));
        let (_, again) = RunFile::open(&path).unwrap();
        assert_eq!(again.len(), 4);
    }

    #[test]
    fn a_broken_line_before_the_last_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.jsonl");
        std::fs::write(
            &path,
            format!("{}{{\"x\":1}}\n{}", line("one"), line("two")),
        )
        .unwrap();
        let Err(CliError::Queries { line, problem, .. }) = RunFile::open(&path) else {
            panic!("a broken line must be refused");
        };
        assert_eq!(line, 2);
        assert!(problem.contains("not a chef eval record"), "{problem}");
    }
}
