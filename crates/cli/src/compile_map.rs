//! `chef compile-map --tools TOOLS --out MAP.json --endpoint URL --model ID
//! [--concurrency N] [--api-key-env NAME] [--timeout-secs S] [--max-attempts N]
//! [--max-doc-chars N] [--temperature T]`.
//!
//! Asks a model behind any OpenAI-compatible chat-completions endpoint for one Python
//! `def` line per tool ([`chef_compress::compile_tools`]), keeps the lines that verify
//! against the tool's schema, and writes them to `MAP.json`, the file
//! `chef compress --level 4 --compiled MAP.json` reads.
//!
//! # Endpoint
//!
//! Requests are `POST {URL}/chat/completions`; a URL that already ends in
//! `/chat/completions` is used as it is. So `https://api.openai.com/v1`,
//! `http://127.0.0.1:8080/v1` (llama.cpp `llama-server`), `http://127.0.0.1:8000/v1`
//! (vLLM) and `http://127.0.0.1:11434/v1` (Ollama) all work. The body is
//! `{"model":ID,"messages":[{"role":"system",…},{"role":"user",…}]}` (plus `temperature`
//! when given); the reply's `choices[0].message.content` is the model's text.
//!
//! The key is read from the environment variable named by `--api-key-env` (default
//! `CHEF_API_KEY`), never from a flag, and sent as `Authorization: Bearer …`. When the
//! variable is unset or empty no `Authorization` header is sent, which is what local
//! servers expect (a variable named explicitly but unset also gets a notice on stderr).
//!
//! # Failures
//!
//! | reply | outcome |
//! |---|---|
//! | HTTP 429 | retried after `Retry-After` (seconds or an HTTP date, at most 60 s), else backoff |
//! | HTTP 5xx, connection error, no reply within `--timeout-secs`, a 200 whose body is not a chat completion | retried with backoff (0.5 s, 1 s, 2 s, … at most 30 s) |
//! | any of those `--max-attempts` times (default 4) | the tool is rejected with the last reason |
//! | HTTP 401, 403 or 404 | the run stops: no other request is sent, exit status 1 |
//! | other 4xx | the tool is rejected at once |
//! | a line that fails verification (renamed tool, invented or dropped parameter, …) | asked once more with the reason, then rejected |
//! | every tool asked for rejected, none compiled | the summary is printed, then exit status 1 |
//!
//! A rejected tool has no line in `MAP.json`; level 4 renders its bare signature, so it
//! stays callable. Run the command again to retry only the missing tools.
//!
//! # Resuming, and writing `MAP.json`
//!
//! An existing `MAP.json` is read first. Its lines that still verify against the current
//! schemas are kept and not asked for again; lines that no longer fit their tool (stale)
//! are dropped and their tools compiled again; entries for tools not in TOOLS are kept
//! untouched (they may belong to another catalogue). The file is rewritten after every
//! verified line, atomically (a temporary file in the same directory, `fsync`, rename,
//! `fsync` of the directory), so a run that is killed keeps every line verified before it
//! and never leaves a half-written map. Ctrl-C stops the run the same way (exit status 130).
//!
//! # Format
//!
//! `MAP.json` is one compact JSON object, tool name → `def` line, keys in byte order, and a
//! newline. stdout gets one JSON summary line (stderr, when `MAP.json` is stdout itself:
//! `--out /dev/stdout`):
//!
//! ```json
//! {"out":"map.json","tools":149,"compiled":3,"reused":145,"stale":1,"rejected":1,
//!  "fell_back_to_signature":1,"retried":2,"transport_retries":1,"requests":6,"orphaned":0,
//!  "rejections":[{"tool":"x","reason":"invented parameter(s): y"}],"dangling":[]}
//! ```
//!
//! `compiled` counts lines verified in this run, `reused` lines kept from `MAP.json`,
//! `retried` tools asked a second time after a failed verification, `transport_retries`
//! requests sent again after an HTTP or network failure, `requests` every HTTP request,
//! `fell_back_to_signature` tools of TOOLS without a line in the written map, `dangling`
//! docstrings that point at tools missing from TOOLS (advisory).
//!
//! A progress bar (tools done, rejected, retried) is drawn on stderr when it is a terminal.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::{
        Arc, OnceLock,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, SystemTime},
};

use chef_compress::{
    CompileOptions, CompileProgress, CompiledSink, Completer, CompleterError, DanglingReference,
    compile_tools, dangling_references, verify_compiled_line,
};
use chef_ir::ToolDefinition;
use indicatif::{ProgressBar, ProgressStyle};
use reqwest::{StatusCode, header};
use serde::Serialize;
use serde_json::{Value, json};

use clap::Args;

use crate::{args::parse_timeout, error::CliError, output, tools};

/// The environment variable the key is read from unless `--api-key-env` names another.
pub(crate) const DEFAULT_KEY_ENV: &str = "CHEF_API_KEY";

/// The longest wait a `Retry-After` header can ask for.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// The first backoff delay; each further retry doubles it, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// The longest backoff delay.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How much of an error body is quoted in a reason.
const BODY_SNIPPET_CHARS: usize = 200;

/// The chat-completions URL for `--endpoint`: the URL's path gains `/chat/completions`
/// unless it already ends with it. A query string stays where it was, after the path
/// (`…/v1?api-version=X` → `…/v1/chat/completions?api-version=X`).
pub(crate) fn chat_url(endpoint: &str) -> Result<String, CliError> {
    let mut parsed = reqwest::Url::parse(endpoint.trim()).map_err(|e| CliError::EndpointUrl {
        endpoint: endpoint.to_owned(),
        source: Box::new(e),
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(CliError::Usage(format!(
            "--endpoint {endpoint:?} must be an http:// or https:// URL"
        )));
    }
    let path = parsed.path().trim_end_matches('/').to_owned();
    if !path.ends_with("/chat/completions") {
        parsed.set_path(&format!("{path}/chat/completions"));
    } else {
        parsed.set_path(&path);
    }
    parsed.set_fragment(None);
    Ok(parsed.to_string())
}

/// Why one HTTP attempt gave no text.
#[derive(Debug)]
struct Failure {
    message: String,
    kind: FailureKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FailureKind {
    /// Worth sending again, after `Retry-After` when the server gave one.
    Retry(Option<Duration>),
    /// This tool's request is refused; others may still work.
    Reject,
    /// Every request will be refused (bad key, unknown model or path): stop the run.
    Fatal,
}

/// Request counters shared by the client and the progress display.
#[derive(Debug, Default)]
struct Tally {
    requests: AtomicUsize,
    transport_retries: AtomicUsize,
}

/// A [`Completer`] for OpenAI-compatible chat-completions endpoints.
struct ChatClient {
    http: reqwest::Client,
    url: String,
    model: String,
    key: Option<String>,
    temperature: Option<f64>,
    timeout: Duration,
    max_attempts: u32,
    tally: Arc<Tally>,
    /// Set by the first fatal reply; later calls fail without a request.
    fatal: OnceLock<String>,
    bar: ProgressBar,
}

impl ChatClient {
    fn body(&self, system: &str, user: &str) -> Vec<u8> {
        let mut body = json!({
            "model": self.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
        });
        if let (Some(t), Some(object)) = (self.temperature, body.as_object_mut()) {
            object.insert("temperature".to_owned(), json!(t));
        }
        // A `Value` always serializes.
        serde_json::to_vec(&body).unwrap_or_default()
    }

    async fn attempt(&self, body: &[u8]) -> Result<String, Failure> {
        self.tally.requests.fetch_add(1, Ordering::Relaxed);
        let mut request = self
            .http
            .post(&self.url)
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json")
            .body(body.to_vec());
        if let Some(key) = &self.key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.map_err(|e| self.transport(&e))?;
        let status = response.status();
        let retry_after = retry_after(response.headers(), SystemTime::now());
        let bytes = response.bytes().await.map_err(|e| self.transport(&e))?;
        if status.is_success() {
            return reply_text(&bytes).map_err(|problem| Failure {
                message: format!("malformed reply: {problem}"),
                kind: FailureKind::Retry(None),
            });
        }
        let message = format!("HTTP {status}{}", snippet(&bytes));
        let kind = if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
            FailureKind::Retry(retry_after)
        } else if matches!(
            status,
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN | StatusCode::NOT_FOUND
        ) {
            FailureKind::Fatal
        } else {
            FailureKind::Reject
        };
        Err(Failure { message, kind })
    }

    fn transport(&self, e: &reqwest::Error) -> Failure {
        let message = if e.is_timeout() {
            format!("no reply within {}s", self.timeout.as_secs_f64())
        } else if e.is_connect() {
            format!("cannot connect to {}", self.url)
        } else {
            crate::error::chain(e)
        };
        Failure {
            message,
            kind: FailureKind::Retry(None),
        }
    }
}

#[async_trait::async_trait]
impl Completer for ChatClient {
    async fn complete(&self, system: &str, user: &str) -> Result<String, CompleterError> {
        if let Some(fatal) = self.fatal.get() {
            return Err(CompleterError::new(format!("not sent: {fatal}")));
        }
        let body = self.body(system, user);
        let mut attempt = 1;
        loop {
            let failure = match self.attempt(&body).await {
                Ok(text) => return Ok(text),
                Err(failure) => failure,
            };
            match failure.kind {
                FailureKind::Retry(after) if attempt < self.max_attempts => {
                    let delay =
                        after.map_or_else(|| backoff(attempt), |wait| wait.min(MAX_RETRY_AFTER));
                    self.tally.transport_retries.fetch_add(1, Ordering::Relaxed);
                    self.bar.tick();
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                FailureKind::Retry(_) => {
                    return Err(CompleterError::new(format!(
                        "{} ({attempt} attempts)",
                        failure.message
                    )));
                }
                FailureKind::Reject => return Err(CompleterError::new(failure.message)),
                FailureKind::Fatal => {
                    let _ = self.fatal.set(failure.message.clone());
                    return Err(CompleterError::new(failure.message));
                }
            }
        }
    }
}

/// The backoff before attempt `attempt + 1`: 0.5 s, 1 s, 2 s, … at most 30 s.
fn backoff(attempt: u32) -> Duration {
    FIRST_BACKOFF
        .saturating_mul(1u32 << attempt.saturating_sub(1).min(16))
        .min(MAX_BACKOFF)
}

/// A `Retry-After` header as a wait: delta-seconds, or an HTTP date (a date in the past
/// waits 0). `None` when absent or unreadable.
fn retry_after(headers: &header::HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers.get(header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The model's text in a chat-completions reply: `choices[0].message.content`, a string or
/// a list of `{"type":"text","text":…}` parts.
fn reply_text(bytes: &[u8]) -> Result<String, String> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("not JSON ({e}){}", snippet(bytes)))?;
    if let Some(error) = value.get("error") {
        return Err(format!("error object in a 200 reply: {error}"));
    }
    let choice = value
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| "no choices".to_owned())?;
    let content = choice
        .get("message")
        .and_then(|m| m.get("content"))
        .ok_or_else(|| "choices[0] has no message content".to_owned())?;
    match content {
        Value::String(text) => Ok(text.clone()),
        Value::Array(parts) => Ok(parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("")),
        Value::Null => Err("choices[0].message.content is null".to_owned()),
        other => Err(format!("choices[0].message.content is {other}")),
    }
}

/// `": <first 200 characters of the body>"`, or nothing for an empty body.
pub(crate) fn snippet(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return String::new();
    }
    let cut: String = text.chars().take(BODY_SNIPPET_CHARS).collect();
    let more = if cut.len() < text.len() { "…" } else { "" };
    format!(": {cut}{more}")
}

/// The map file: read, and written atomically.
struct MapFile {
    path: PathBuf,
    /// The bytes last read or written, to skip writes that change nothing.
    on_disk: Option<Vec<u8>>,
    /// `path` is a FIFO, a device or standard output (`/dev/stdout`, also when the shell
    /// sent it to a file): nothing to resume from (reading it would wait on the stream),
    /// and the map is written once, whole, by [`finish`](Self::finish), not after every
    /// line.
    in_place: bool,
}

impl MapFile {
    /// Reads `path` (absent: an empty map).
    fn open(path: &Path) -> Result<(Self, BTreeMap<String, String>), CliError> {
        let in_place = crate::output::is_stream(path);
        let (on_disk, map) = if in_place {
            (None, BTreeMap::new())
        } else {
            match std::fs::read(path) {
                // An empty file is no map yet (`touch map.json`).
                Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => {
                    (Some(bytes), BTreeMap::new())
                }
                Ok(bytes) => {
                    let map = serde_json::from_slice(&bytes).map_err(|e| {
                        CliError::Usage(format!(
                            "{}: not a compiled map (a JSON object of tool name to `def` line): \
                             {e}; move it away or choose another --out",
                            path.display()
                        ))
                    })?;
                    (Some(bytes), map)
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, BTreeMap::new()),
                Err(source) => {
                    return Err(CliError::Read {
                        path: path.to_owned(),
                        source,
                    });
                }
            }
        };
        let file = Self {
            path: path.to_owned(),
            on_disk,
            in_place,
        };
        Ok((file, map))
    }

    /// Writes `map` unless the file already holds exactly these bytes (a FIFO or device
    /// waits for [`finish`](Self::finish)).
    fn save(&mut self, map: &BTreeMap<String, String>) -> Result<(), CliError> {
        if self.in_place {
            return Ok(());
        }
        self.write(map)
    }

    /// The last write: `map` whole, also to a FIFO or device.
    fn finish(&mut self, map: &BTreeMap<String, String>) -> Result<(), CliError> {
        self.write(map)
    }

    fn write(&mut self, map: &BTreeMap<String, String>) -> Result<(), CliError> {
        let bytes = map_bytes(map);
        if self.on_disk.as_deref() == Some(bytes.as_slice()) {
            return Ok(());
        }
        // The map is the user's own file: a new one is readable like any other output.
        crate::output::write_file_atomic(&self.path, &bytes, false).map_err(|source| {
            CliError::WriteFile {
                path: self.path.clone(),
                source,
            }
        })?;
        self.on_disk = Some(bytes);
        Ok(())
    }
}

/// A compiled map as written: compact JSON, keys in byte order, then a newline.
fn map_bytes(map: &BTreeMap<String, String>) -> Vec<u8> {
    // A map of strings always serializes.
    let mut bytes = serde_json::to_vec(map).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// One rejected tool in the summary.
#[derive(Debug, Serialize)]
struct Rejection {
    tool: String,
    reason: String,
}

/// The summary line on stdout.
#[derive(Debug, Serialize)]
struct Summary {
    out: String,
    tools: usize,
    compiled: usize,
    reused: usize,
    stale: usize,
    rejected: usize,
    fell_back_to_signature: usize,
    retried: usize,
    transport_retries: usize,
    requests: usize,
    orphaned: usize,
    rejections: Vec<Rejection>,
    dangling: Vec<DanglingReference>,
}

/// The existing map split against the current tools.
struct Plan {
    /// Existing lines kept: verified for their tool, or for a tool not in TOOLS.
    keep: BTreeMap<String, String>,
    reused: usize,
    stale: usize,
    orphaned: usize,
    /// Tools without a usable line, in input order.
    todo: Vec<ToolDefinition>,
}

fn plan(tools: &[ToolDefinition], existing: BTreeMap<String, String>) -> Plan {
    let by_name: BTreeMap<&str, &ToolDefinition> =
        tools.iter().map(|t| (t.name.as_str(), t)).collect();
    let mut keep = BTreeMap::new();
    let (mut reused, mut stale, mut orphaned) = (0, 0, 0);
    for (name, line) in existing {
        match by_name.get(name.as_str()) {
            Some(tool) if verify_compiled_line(&line, tool).is_ok() => {
                reused += 1;
                keep.insert(name, line);
            }
            Some(_) => stale += 1,
            None => {
                orphaned += 1;
                keep.insert(name, line);
            }
        }
    }
    let todo = tools
        .iter()
        .filter(|t| !keep.contains_key(t.name.as_str()))
        .cloned()
        .collect();
    Plan {
        keep,
        reused,
        stale,
        orphaned,
        todo,
    }
}

fn progress_bar(total: usize) -> ProgressBar {
    let bar = ProgressBar::new(u64::try_from(total).unwrap_or(u64::MAX));
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} {bar:30} {pos}/{len} tools  {msg}  [{elapsed}]")
    {
        bar.set_style(style);
    }
    bar
}

fn bar_message(p: CompileProgress, tally: &Tally) -> String {
    format!(
        "rejected {} · retried {} · transport retries {}",
        p.rejected,
        p.retried,
        tally.transport_retries.load(Ordering::Relaxed)
    )
}

/// Refuses, before any request, a key no `Authorization` header can carry (a line break
/// pasted with it): no retry could send it.
pub(crate) fn check_api_key(key_env: &str, key: Option<&str>) -> Result<(), CliError> {
    match key {
        Some(key) if reqwest::header::HeaderValue::from_str(&format!("Bearer {key}")).is_err() => {
            Err(CliError::Usage(format!(
                "{key_env} holds a character an HTTP header cannot carry (a line break, a \
                 control character): set it to the key alone"
            )))
        }
        _ => Ok(()),
    }
}

pub(crate) fn run(args: &CompileMapArgs) -> Result<(), CliError> {
    let tools = tools::load(&args.tools)?;
    // The checks `chef compress` makes (names empty, repeated, over 1 KiB or holding a
    // control character; schemas it cannot read): a map for a catalogue level 4 refuses
    // would cost a request per tool and never be used.
    chef_compress::Catalogue::new(&tools).map_err(|source| CliError::Compress {
        path: args.tools.clone(),
        source,
    })?;
    let url = chat_url(&args.endpoint)?;
    let key_env = args.api_key_env.as_deref().unwrap_or(DEFAULT_KEY_ENV);
    let key = std::env::var(key_env).ok().filter(|k| !k.is_empty());
    if key.is_none() && args.api_key_env.is_some() {
        eprintln!("chef: notice: {key_env} is not set; sending no Authorization header");
    }
    check_api_key(key_env, key.as_deref())?;
    let (mut file, existing) = MapFile::open(&args.out)?;
    let plan = plan(&tools, existing);
    let mut map = plan.keep.clone();
    // Stale lines leave the file before any request, so it never holds a line that is
    // wrong for the current tools.
    file.save(&map)?;

    let tally = Arc::new(Tally::default());
    let mut rejections = Vec::new();
    let (mut compiled, mut retried) = (0, 0);
    let mut outcome = Ok(());
    if !plan.todo.is_empty() {
        let http = reqwest::Client::builder()
            .timeout(args.timeout_secs)
            .user_agent(concat!("chef/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(CliError::HttpClient)?;
        let bar = progress_bar(plan.todo.len());
        let client = ChatClient {
            http,
            url: url.clone(),
            model: args.model.clone(),
            key,
            temperature: args.temperature,
            timeout: args.timeout_secs,
            max_attempts: u32::from(args.max_attempts),
            tally: Arc::clone(&tally),
            fatal: OnceLock::new(),
            bar: bar.clone(),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(CliError::Runtime)?;
        let sink = CompiledSink::new();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let options = CompileOptions::new()
            .with_concurrency(usize::from(args.concurrency))
            .with_max_doc_chars(args.max_doc_chars)
            .with_sink(sink.clone())
            .with_progress(move |p| {
                let _ = tx.send(p);
            });
        let result = runtime.block_on(async {
            let compile = compile_tools(&plan.todo, &client, &options);
            tokio::pin!(compile);
            let interrupt = tokio::signal::ctrl_c();
            tokio::pin!(interrupt);
            loop {
                tokio::select! {
                    biased;
                    Some(p) = rx.recv() => {
                        bar.set_position(u64::try_from(p.done).unwrap_or(u64::MAX));
                        bar.set_message(bar_message(p, &tally));
                        let verified = sink.snapshot();
                        if verified.keys().any(|k| !map.contains_key(k)) {
                            map.extend(verified);
                            if let Err(e) = file.save(&map) {
                                // Stop spending requests on lines that cannot be kept.
                                break Err(e);
                            }
                        }
                    }
                    report = &mut compile => break Ok(Some(report)),
                    _ = &mut interrupt => break Ok(None),
                }
            }
        });
        bar.finish_and_clear();
        drop(runtime);
        // Whatever happened, every verified line reaches the file.
        map.extend(sink.snapshot());
        file.save(&map)?;
        let kept = || {
            format!(
                "{} verified line(s) kept in {}",
                map.len(),
                args.out.display()
            )
        };
        match result? {
            None => outcome = Err(CliError::Interrupted(kept())),
            Some(report) => {
                let report = report.map_err(|source| CliError::Compress {
                    path: args.tools.clone(),
                    source,
                })?;
                compiled = report.stats.compiled;
                retried = report.stats.retried;
                if let Some(fatal) = client.fatal.get() {
                    outcome = Err(CliError::Endpoint(format!(
                        "{url} refused the request: {fatal}; {}",
                        kept()
                    )));
                } else if compiled == 0
                    && report
                        .rejected
                        .iter()
                        .all(|(_, reason)| reason.starts_with("model call failed"))
                    && let Some((_, reason)) = report.rejected.first()
                {
                    outcome = Err(CliError::Endpoint(format!(
                        "no usable reply from {url}: {reason}; {}",
                        kept()
                    )));
                } else if compiled == 0 && report.rejected.len() == plan.todo.len() {
                    // The model answered, but not one line it wrote verified: a map of bare
                    // signatures is not what was asked for, whatever a script does next.
                    outcome = Err(CliError::Endpoint(format!(
                        "no line {} wrote verified: all {} tool(s) asked for were rejected \
                         (the summary's \"rejections\" says why; a larger model usually does \
                         better); {}",
                        args.model,
                        plan.todo.len(),
                        kept()
                    )));
                }
                rejections = report
                    .rejected
                    .into_iter()
                    .map(|(tool, reason)| Rejection { tool, reason })
                    .collect();
            }
        }
    }
    // Every verified line reaches the file, also when the run stops early.
    file.finish(&map)?;

    // The summary is printed however the run ended (a run whose every request failed
    // exits 1 after it), so a script reads the same line from every run.
    let fell_back = tools
        .iter()
        .filter(|t| !map.contains_key(t.name.as_str()))
        .count();
    let dangling = dangling_references(&tools, |n| map.get(n).map(String::as_str));
    let summary = Summary {
        out: args.out.display().to_string(),
        tools: tools.len(),
        compiled,
        reused: plan.reused,
        stale: plan.stale,
        rejected: rejections.len(),
        fell_back_to_signature: fell_back,
        retried,
        transport_retries: tally.transport_retries.load(Ordering::Relaxed),
        requests: tally.requests.load(Ordering::Relaxed),
        orphaned: plan.orphaned,
        rejections,
        dangling,
    };
    // A map written to stdout (`--out /dev/stdout > map.json`) is the whole of stdout:
    // the summary goes to stderr then, so the file holds the map alone.
    output::report_json_line(&summary, &[&args.out])?;
    outcome
}

#[derive(Debug, Args)]
pub(crate) struct CompileMapArgs {
    /// A JSON file of tool definitions (MCP, Anthropic, OpenAI, Gemini or bare shapes).
    #[arg(long, value_name = "TOOLS")]
    pub(crate) tools: PathBuf,
    /// The compiled map to write (and to resume from when it exists).
    #[arg(long, value_name = "MAP.json")]
    pub(crate) out: PathBuf,
    /// Base URL of an OpenAI-compatible API (`/chat/completions` is appended to its path
    /// unless the path already ends with it; a query string is kept after it), e.g. https://api.openai.com/v1 or http://127.0.0.1:8080/v1.
    #[arg(long, value_name = "URL")]
    pub(crate) endpoint: String,
    /// The model id sent with each request.
    #[arg(long, value_name = "ID", value_parser = crate::args::not_blank)]
    pub(crate) model: String,
    /// Requests in flight at once.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub(crate) concurrency: u16,
    /// The environment variable holding the API key [default: CHEF_API_KEY]. Unset or
    /// empty: no Authorization header (local servers).
    #[arg(long, value_name = "NAME")]
    pub(crate) api_key_env: Option<String>,
    /// Seconds one HTTP request may take, reply included.
    #[arg(long, value_name = "SECONDS", default_value = "120", value_parser = parse_timeout)]
    pub(crate) timeout_secs: std::time::Duration,
    /// HTTP attempts per request (429, 5xx, network errors, timeouts, malformed replies).
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u8).range(1..=10))]
    pub(crate) max_attempts: u8,
    /// The docstring length the prompt asks for, in characters.
    #[arg(long, value_name = "N", default_value_t = chef_compress::DEFAULT_MAX_DOC_CHARS, value_parser = crate::args::at_least_one)]
    pub(crate) max_doc_chars: usize,
    /// Sampling temperature sent with each request, 0 to 2 (omitted by default: some
    /// models accept only their own).
    #[arg(long, value_name = "T", value_parser = temperature)]
    pub(crate) temperature: Option<f64>,
}

/// `--temperature`: a number from 0 to 2, sent as written (an `f64`, so `0.3` is sent as
/// `0.3`, not as the nearest `f32`).
fn temperature(text: &str) -> Result<f64, String> {
    let t: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("not a number: {text:?}"))?;
    if (0.0..=2.0).contains(&t) {
        Ok(t)
    } else {
        Err(format!("must be from 0 to 2, not {text}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_temperature_is_a_number_from_0_to_2_sent_as_written() {
        assert_eq!(temperature("0.3"), Ok(0.3));
        assert_eq!(json!(temperature("0.3").unwrap()).to_string(), "0.3");
        assert_eq!(temperature(" 2 "), Ok(2.0));
        for bad in ["nan", "inf", "-0.1", "2.5", "warm", ""] {
            assert!(temperature(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn endpoints_gain_the_chat_completions_path_once() {
        for (given, want) in [
            (
                "https://api.openai.com/v1",
                "https://api.openai.com/v1/chat/completions",
            ),
            (
                "http://127.0.0.1:8080/v1/",
                "http://127.0.0.1:8080/v1/chat/completions",
            ),
            (
                "http://localhost:11434/v1/chat/completions",
                "http://localhost:11434/v1/chat/completions",
            ),
            // A query string stays after the path.
            (
                "https://x.example/openai/v1?api-version=2025-01-01",
                "https://x.example/openai/v1/chat/completions?api-version=2025-01-01",
            ),
            (
                "https://x.example/v1/chat/completions/?k=1",
                "https://x.example/v1/chat/completions?k=1",
            ),
            (
                "http://127.0.0.1:8080",
                "http://127.0.0.1:8080/chat/completions",
            ),
        ] {
            assert_eq!(chat_url(given).unwrap(), want);
        }
        for bad in ["ftp://host/v1", "not a url", ""] {
            assert!(
                matches!(
                    chat_url(bad),
                    Err(CliError::Usage(_) | CliError::EndpointUrl { .. })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn replies_yield_their_content_or_say_what_is_wrong() {
        let ok = br#"{"choices":[{"message":{"role":"assistant","content":"def f():\"x\""}}]}"#;
        assert_eq!(reply_text(ok).unwrap(), "def f():\"x\"");
        let parts = br#"{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]}"#;
        assert_eq!(reply_text(parts).unwrap(), "ab");
        for (body, want) in [
            (&b"<html>oops</html>"[..], "not JSON"),
            (br#"{"choices":[]}"#, "no choices"),
            (br#"{"object":"chat.completion"}"#, "no choices"),
            (br#"{"choices":[{"text":"x"}]}"#, "no message content"),
            (
                br#"{"choices":[{"message":{"content":null}}]}"#,
                "content is null",
            ),
            (br#"{"error":{"message":"busy"}}"#, "error object"),
        ] {
            let err = reply_text(body).unwrap_err();
            assert!(err.contains(want), "{err}");
        }
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let mut headers = header::HeaderMap::new();
        assert_eq!(retry_after(&headers, now), None);
        headers.insert(header::RETRY_AFTER, header::HeaderValue::from_static("7"));
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(7)));
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        headers.insert(header::RETRY_AFTER, later.parse().unwrap());
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(30)));
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(30));
        headers.insert(header::RETRY_AFTER, earlier.parse().unwrap());
        assert_eq!(retry_after(&headers, now), Some(Duration::ZERO));
        headers.insert(
            header::RETRY_AFTER,
            header::HeaderValue::from_static("soon"),
        );
        assert_eq!(retry_after(&headers, now), None);
    }

    #[test]
    fn backoff_doubles_up_to_a_cap() {
        let got: Vec<u64> = (1..=9)
            .map(|a| u64::try_from(backoff(a).as_millis()).unwrap())
            .collect();
        assert_eq!(
            got,
            [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]
        );
        assert_eq!(backoff(u32::MAX), MAX_BACKOFF);
    }

    #[test]
    fn plans_keep_verified_and_foreign_lines_and_recompile_stale_ones() {
        let tool = |name: &str, required: &[&str]| {
            ToolDefinition::new(
                name,
                json!({"type": "object", "properties": {"a": {}, "b": {}}, "required": required}),
            )
        };
        let tools = [
            tool("f_one", &["a"]),
            tool("f_two", &["a", "b"]),
            tool("f_three", &[]),
        ];
        let existing: BTreeMap<String, String> = [
            ("f_one", r#"def f_one(a,b=None):"ok""#),
            ("f_two", r#"def f_two(a):"stale: b is required now""#),
            ("other", r#"def other():"another catalogue""#),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let plan = plan(&tools, existing);
        assert_eq!((plan.reused, plan.stale, plan.orphaned), (1, 1, 1));
        assert_eq!(plan.keep.keys().collect::<Vec<_>>(), ["f_one", "other"]);
        let todo: Vec<_> = plan.todo.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(todo, ["f_two", "f_three"]);
    }

    #[test]
    fn maps_are_written_whole_with_sorted_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("map.json");
        let (mut file, map) = MapFile::open(&path).unwrap();
        assert!(map.is_empty());
        let mut map = BTreeMap::new();
        map.insert("z_last".to_owned(), r#"def z_last():"z""#.to_owned());
        map.insert("a_first".to_owned(), r#"def a_first():"a""#.to_owned());
        file.save(&map).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "{\"a_first\":\"def a_first():\\\"a\\\"\",\"z_last\":\"def z_last():\\\"z\\\"\"}\n"
        );
        let (_, again) = MapFile::open(&path).unwrap();
        assert_eq!(again, map);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["map.json"], "no temporary file left behind");
        std::fs::write(&path, "[1,2]").unwrap();
        assert!(
            matches!(MapFile::open(&path), Err(CliError::Usage(m)) if m.contains("not a compiled map"))
        );
        // An empty file (`--out /dev/stdout > map.json`, `touch`) is no map yet.
        std::fs::write(&path, "").unwrap();
        let (_, empty) = MapFile::open(&path).unwrap();
        assert!(empty.is_empty());
    }
}
