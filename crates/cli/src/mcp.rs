//! `chef mcp inspect --server NAME=COMMAND ... [--timeout S] [--prefix-format F | --no-prefix] [--tokens] [--out FILE] [--max-tools N]`.
//!
//! Starts every server at once, each as a child process speaking MCP over its stdin and
//! stdout (rmcp's client), lists all its tools (following `nextCursor` pages), renames each
//! tool with the prefix format, and reports the combined catalogue.
//!
//! # Format
//!
//! One JSON object on stdout: one entry per server in the order given; the fields of
//! `chef tools inspect` measured over the combined tool list as compact MCP JSON;
//! chef-compress's `recommend_level` advice for the combined catalogue; and its size at
//! levels 0 to 3 (wire tools plus system preamble; tokens with `--tokens`):
//!
//! ```json
//! {"servers":[{"name":"files","command":"python3 files.py","status":"ok","server":{"name":"files-mcp","version":"1.2.0"},"tools":3},
//!             {"name":"git","command":"git-mcp","status":"failed","error":"no answer within 10s during the MCP handshake"}],
//!  "tools":3,"shapes":{"mcp":3},"chars":812,"bytes":812,"o200k_tokens":201,
//!  "recommend":{"level":1,"reason":"…","tool_count":3,…},
//!  "levels":[{"level":0,"chars":790,"saved_pct":0.0,"o200k_tokens":196},{"level":1,"chars":402,"saved_pct":49.1,"o200k_tokens":110},…]}
//! ```
//!
//! A failed server also gets one line on stderr naming it. `--out` writes the combined
//! catalogue of the servers that answered, as `{"tools":[...]}`, atomically; when `--out`
//! is stdout itself (`--out /dev/stdout > tools.json`), the report goes to stderr, so the
//! catalogue is all stdout holds.
//!
//! When the combined catalogue cannot be compressed (a tool's input schema is refused, or
//! it holds more than `--max-tools` tools), the report still prints: `recommend` and
//! `levels` are `null` and `compress_error` says why (it is absent otherwise).
//!
//! # Exit status
//!
//! 0 when every server answered with a usable tool list; 2 when any failed (the report and
//! `--out` still cover the others) or the combined catalogue cannot be compressed (the
//! report and `--out` are still written); 2 for usage errors; 1 when chef itself fails (the
//! output file cannot be written, the token tables fail to load).
//!
//! # Why chef owns the child process
//!
//! rmcp's client runs over the child's pipes (`transport-async-rw`) rather than rmcp's
//! child-process transport so that chef holds the process: a server that hangs past the
//! timeout is killed and reaped before chef exits (rmcp's transport kills on drop from a
//! spawned task, which a runtime shutting down may never run), and the tail of its stderr
//! is kept for the error message.

use std::{
    collections::{HashMap, HashSet},
    fmt,
    path::{Path, PathBuf},
    process::{ExitStatus, Stdio},
    sync::{
        Arc,
        atomic::{AtomicU8, Ordering},
    },
    time::Duration,
};

use chef_compress::{CompressError, Level, Options, ToolNamespace, validate::Limits};
use chef_ir::LoadError;
use clap::Args;
use rmcp::{
    ServiceError, ServiceExt,
    model::{ClientCapabilities, ClientConfig, Implementation, PaginatedRequestParams, Tool},
    service::ClientInitializeError,
};
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::{io::AsyncReadExt, process::Command, sync::Mutex};

use crate::{
    args::{LimitFlags, parse_timeout},
    compress::limits,
    error::{CliError, compress_hint},
    inspect::CatalogueStats,
    output,
    prefix::NameFormat,
};

/// `--help` text for `chef mcp inspect`.
pub(crate) const LONG_ABOUT: &str = "\
Start MCP servers over stdio, list their tools, and report the combined catalogue.

Each --server NAME=COMMAND starts one server. COMMAND is split into words like a POSIX
shell does (quotes and backslashes; no variables, globs or pipes) and run directly, so
quote it whole:

    chef mcp inspect --server files='python3 files_server.py --root .' \\
                     --server git='uvx mcp-server-git' --out tools.json

Tools are renamed `{server}_{tool}` (change with --prefix-format, or keep their own names
with --no-prefix); two tools that end up with the same name are an error for the second
server. Every server gets --timeout seconds to start, answer the MCP handshake and list
all its tools; one that fails to start, hangs or lists malformed tools is named on stderr
and the others still report.

Prints one JSON object: per-server status; tools, shapes, chars, bytes (and o200k_tokens
with --tokens) for the combined catalogue; the recommended compression level for it; and
its size at levels 0 to 3. --out FILE writes that catalogue as MCP tools/list JSON for the
other chef commands. When the combined catalogue cannot be compressed (a refused input
schema, more than --max-tools tools), recommend and levels are null and compress_error
says why.

Exit status: 0 if every server answered, 2 if any failed, if the combined catalogue cannot
be compressed or on a usage error, 1 if chef itself failed.";

/// One `--server NAME=COMMAND`.
#[derive(Debug, Clone)]
pub(crate) struct ServerSpec {
    name: String,
    command_line: String,
    argv: Vec<String>,
}

/// Why a `--server` value is unusable.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ServerSpecError {
    #[error("expected NAME=COMMAND, e.g. files='python3 server.py'")]
    NoEquals,
    #[error("the server NAME before `=` is empty")]
    EmptyName,
    #[error(
        "server name {name:?} may hold only letters, digits and `-` (found {found:?}): it becomes part of tool names"
    )]
    BadName { name: String, found: char },
    #[error("server {name:?}: cannot split COMMAND: {source}")]
    Split {
        name: String,
        #[source]
        source: shell_words::ParseError,
    },
    #[error("server {name:?}: COMMAND is empty")]
    EmptyCommand { name: String },
}

/// Parses `NAME=COMMAND` (a clap value parser).
pub(crate) fn parse_server(value: &str) -> Result<ServerSpec, ServerSpecError> {
    let Some((name, command_line)) = value.split_once('=') else {
        return Err(ServerSpecError::NoEquals);
    };
    if name.is_empty() {
        return Err(ServerSpecError::EmptyName);
    }
    if let Some(found) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-'))
    {
        return Err(ServerSpecError::BadName {
            name: name.to_owned(),
            found,
        });
    }
    let argv = shell_words::split(command_line).map_err(|source| ServerSpecError::Split {
        name: name.to_owned(),
        source,
    })?;
    if argv.is_empty() {
        return Err(ServerSpecError::EmptyCommand {
            name: name.to_owned(),
        });
    }
    Ok(ServerSpec {
        name: name.to_owned(),
        command_line: command_line.to_owned(),
        argv,
    })
}

/// Why one server gave no usable tool list.
#[derive(Debug, thiserror::Error)]
enum ServerError {
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the MCP handshake failed: empty command")]
    EmptyCommand,
    #[error("the MCP handshake failed: the child's stdio pipes are missing")]
    NoPipes,
    #[error("the MCP handshake failed: {}", handshake_message(.0))]
    Handshake(#[source] Box<ClientInitializeError>),
    #[error("tools/list failed: {0}")]
    ListTools(#[source] ListError),
    #[error("no answer within {} during {stage}", seconds(*after))]
    Timeout { after: Duration, stage: Stage },
    #[error("the tool list is unusable: {source}")]
    InvalidTools {
        #[source]
        source: LoadError,
    },
    #[error("tool {name:?} is already in the catalogue from server {other:?}")]
    NameCollision { name: String, other: String },
}

/// What a server was doing when it stopped answering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Stage {
    Handshake = 0,
    ListTools = 1,
}

impl Stage {
    fn from_u8(n: u8) -> Self {
        if n == Self::ListTools as u8 {
            Self::ListTools
        } else {
            Self::Handshake
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Handshake => "the MCP handshake",
            Self::ListTools => "tools/list",
        })
    }
}

fn seconds(d: Duration) -> String {
    format!("{}s", d.as_secs_f64())
}

/// A server's failure, with how it exited and the last line it wrote on stderr, if known.
#[derive(Debug)]
struct Failure {
    error: ServerError,
    exit: Option<ExitStatus>,
    stderr: Option<String>,
}

impl Failure {
    fn new(error: ServerError) -> Self {
        Self {
            error,
            exit: None,
            stderr: None,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.error)?;
        match (&self.exit, &self.stderr) {
            (Some(exit), Some(line)) => write!(f, " ({exit}; its stderr: {line})"),
            (Some(exit), None) => write!(f, " ({exit})"),
            (None, Some(line)) => write!(f, " (its stderr: {line})"),
            (None, None) => Ok(()),
        }
    }
}

/// What a server answered.
struct Listed {
    server: Option<Implementation>,
    tools: Vec<Tool>,
}

#[derive(Debug, Serialize)]
struct Report {
    servers: Vec<ServerReport>,
    #[serde(flatten)]
    stats: CatalogueStats,
    /// `null` when the combined catalogue cannot be compressed (see `compress_error`).
    recommend: Option<chef_compress::Recommendation>,
    /// `null` when the combined catalogue cannot be compressed (see `compress_error`).
    levels: Option<Vec<LevelSize>>,
    /// Why the combined catalogue cannot be compressed; absent when it can.
    #[serde(skip_serializing_if = "Option::is_none")]
    compress_error: Option<String>,
}

/// The combined catalogue's size at one compression level (chef-compress's stats).
#[derive(Debug, Serialize)]
struct LevelSize {
    level: u8,
    /// Wire tools plus system preamble, as compact JSON, in Unicode scalar values.
    chars: usize,
    /// Saving against the uncompressed tools, percent.
    saved_pct: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    o200k_tokens: Option<usize>,
}

/// The levels reported: 0 to 3 (level 4 needs a compiled map, which chef-compress refuses).
const LEVELS: [Level; 4] = [Level::Zero, Level::One, Level::Two, Level::Three];

fn compression(
    tools: &[chef_ir::ToolDefinition],
    tokens: bool,
    limits: Limits,
) -> Result<(chef_compress::Recommendation, Vec<LevelSize>), CompressError> {
    let recommend =
        chef_compress::recommend_level_with_limits(tools, ToolNamespace::split, limits)?;
    let levels = LEVELS
        .into_iter()
        .map(|level| {
            let options = Options::new()
                .with_level(level)
                .with_token_counts(tokens)
                .with_limits(limits);
            let compressed = chef_compress::compress(tools, &options)?;
            let stats = compressed.stats();
            Ok(LevelSize {
                level: level.as_u8(),
                chars: stats.compressed_chars,
                saved_pct: stats.saved_pct,
                o200k_tokens: stats.compressed_tokens,
            })
        })
        .collect::<Result<_, CompressError>>()?;
    Ok((recommend, levels))
}

#[derive(Debug, Serialize)]
struct ServerReport {
    name: String,
    command: String,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    server: Option<ServerInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

#[derive(Debug, Serialize)]
struct ServerInfo {
    name: String,
    version: String,
}

pub(crate) fn run(args: &McpInspectArgs) -> Result<(), CliError> {
    // A directory or a missing directory is a usage error, said before any server starts.
    if let Some(path) = &args.out {
        output::check_writable("--out", path)?;
    }
    let format = if args.no_prefix {
        NameFormat::tool_only()
    } else {
        NameFormat::parse(&args.prefix_format).map_err(CliError::PrefixFormat)?
    };
    let mut seen_names = HashSet::new();
    for spec in &args.servers {
        if !seen_names.insert(spec.name.as_str()) {
            return Err(CliError::Usage(format!(
                "server name {:?} is given twice",
                spec.name
            )));
        }
    }

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    let results = runtime.block_on(futures::future::join_all(
        args.servers
            .iter()
            .map(|spec| inspect_server(spec, args.timeout)),
    ));
    drop(runtime);

    let mut catalogue: Vec<Value> = Vec::new();
    let mut owner: HashMap<String, String> = HashMap::new();
    let mut servers = Vec::with_capacity(results.len());
    let mut failed = Vec::new();
    for (spec, result) in args.servers.iter().zip(results) {
        let result = result.and_then(|listed| {
            let tools = namespace(spec, listed.tools, &format, &owner)?;
            Ok((listed.server, tools))
        });
        match result {
            Ok((server, tools)) => {
                servers.push(ServerReport {
                    name: spec.name.clone(),
                    command: spec.command_line.clone(),
                    status: "ok",
                    server: server.map(|s| ServerInfo {
                        name: s.name,
                        version: s.version,
                    }),
                    tools: Some(tools.len()),
                    error: None,
                });
                for (name, tool) in tools {
                    owner.insert(name, spec.name.clone());
                    catalogue.push(tool);
                }
            }
            Err(failure) => {
                servers.push(ServerReport {
                    name: spec.name.clone(),
                    command: spec.command_line.clone(),
                    status: "failed",
                    server: None,
                    tools: None,
                    error: Some(failure.to_string()),
                });
                failed.push((spec.name.clone(), failure));
            }
        }
    }

    let tool_list = Value::Array(catalogue);
    let loaded = chef_ir::load_tools(&tool_list).map_err(CliError::Catalogue)?;
    let wire = tool_list.to_string();
    let stats = CatalogueStats::measure(&loaded, &wire, args.tokens)?;

    if let Some(path) = &args.out {
        let mut document = Map::new();
        document.insert("tools".to_owned(), tool_list);
        write_atomically(path, &Value::Object(document))?;
    }
    // A catalogue that cannot be compressed still gets its report: the compression
    // figures are null and `compress_error` says why.
    let (recommend, levels, compress_error) =
        match compression(&loaded.tools, args.tokens, limits(&args.limits)) {
            Ok((recommend, levels)) => (Some(recommend), Some(levels), None),
            Err(error) => (None, None, Some(error)),
        };
    let report = Report {
        servers,
        stats,
        recommend,
        levels,
        compress_error: compress_error
            .as_ref()
            .map(|e| format!("{}{}", e, compress_hint(e))),
    };
    // A catalogue written to stdout (`--out /dev/stdout > tools.json`) is the whole of
    // stdout: the report goes to stderr then, so the file holds the catalogue alone.
    output::report_json_line(&report, &Vec::from_iter(args.out.as_deref()))?;

    for (name, failure) in &failed {
        eprintln!("chef: mcp server {name:?}: {failure}");
    }
    if let Some(error) = compress_error {
        if failed.is_empty() {
            return Err(CliError::McpCompress(error));
        }
        // Both: the compression on its own line, the failed servers as the last word.
        eprintln!("chef: {}", CliError::McpCompress(error));
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(CliError::McpServersFailed {
            failed: failed.into_iter().map(|(name, _)| name).collect(),
            total: args.servers.len(),
        })
    }
}

/// Checks a server's own tool list, then renames its tools; a name another server
/// already holds fails this server.
fn namespace(
    spec: &ServerSpec,
    tools: Vec<Tool>,
    format: &NameFormat,
    owner: &HashMap<String, String>,
) -> Result<Vec<(String, Value)>, Failure> {
    let fail = Failure::new;
    let own: Vec<Value> = tools
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()
        .map_err(|e| {
            fail(ServerError::InvalidTools {
                source: LoadError::from_json(&e),
            })
        })?;
    chef_ir::load_tools(&Value::Array(own.clone()))
        .map_err(|source| fail(ServerError::InvalidTools { source }))?;

    let mut renamed = Vec::with_capacity(own.len());
    for mut tool in own {
        let own_name = tool
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let name = format.apply(&spec.name, &own_name);
        if let Some(other) = owner.get(&name) {
            return Err(fail(ServerError::NameCollision {
                name,
                other: other.clone(),
            }));
        }
        if let Value::Object(map) = &mut tool {
            map.insert("name".to_owned(), Value::String(name.clone()));
        }
        renamed.push((name, tool));
    }
    Ok(renamed)
}

/// Starts one server, lists its tools within `timeout`, then shuts it down.
async fn inspect_server(spec: &ServerSpec, timeout: Duration) -> Result<Listed, Failure> {
    let (program, args) = match spec.argv.split_first() {
        Some(split) => split,
        None => {
            return Err(Failure::new(ServerError::EmptyCommand));
        }
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| {
            Failure::new(ServerError::Spawn {
                program: program.clone(),
                source,
            })
        })?;

    let stderr_tail = Arc::new(Mutex::new(Vec::<u8>::new()));
    let stderr_task = child.stderr.take().map(|mut pipe| {
        let tail = Arc::clone(&stderr_tail);
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf).await {
                let Some(chunk) = buf.get(..n).filter(|c| !c.is_empty()) else {
                    break;
                };
                let mut tail = tail.lock().await;
                tail.extend_from_slice(chunk);
                let excess = tail.len().saturating_sub(STDERR_TAIL);
                tail.drain(..excess);
            }
        })
    });

    let stage = AtomicU8::new(Stage::Handshake as u8);
    let result = match (child.stdout.take(), child.stdin.take()) {
        (Some(stdout), Some(stdin)) => {
            let session = list_tools(stdout, stdin, &stage);
            match tokio::time::timeout(timeout, session).await {
                Ok(result) => result,
                Err(_) => Err(ServerError::Timeout {
                    after: timeout,
                    stage: Stage::from_u8(stage.load(Ordering::Relaxed)),
                }),
            }
        }
        _ => Err(ServerError::NoPipes),
    };

    // stdin is closed by now (the session dropped it); a polite server exits on EOF.
    let exited = match tokio::time::timeout(GRACE, child.wait()).await {
        Ok(Ok(status)) => Some(status),
        Ok(Err(_)) | Err(_) => {
            let _ = child.kill().await;
            None
        }
    };
    if let Some(task) = stderr_task {
        // A grandchild may still hold the pipe open; then the rest of its stderr is lost.
        let _ = tokio::time::timeout(GRACE, task).await;
    }
    result.map_err(|error| Failure {
        error,
        // A server that exited on its own with a failure: its status tells why.
        exit: exited.filter(|status| !status.success()),
        stderr: last_line(
            &stderr_tail
                .try_lock()
                .map(|t| t.clone())
                .unwrap_or_default(),
        ),
    })
}

/// How much of a server's stderr is kept for the error message.
const STDERR_TAIL: usize = 4096;
/// How long a server gets to exit after its stdin closes, and its stderr to drain.
const GRACE: Duration = Duration::from_secs(1);
/// The longest rmcp error text quoted in a message.
const MESSAGE_LIMIT: usize = 300;

async fn list_tools(
    stdout: tokio::process::ChildStdout,
    stdin: tokio::process::ChildStdin,
    stage: &AtomicU8,
) -> Result<Listed, ServerError> {
    let client = client_config()
        .serve((stdout, stdin))
        .await
        .map_err(|e| ServerError::Handshake(Box::new(e)))?;
    stage.store(Stage::ListTools as u8, Ordering::Relaxed);
    let server = client.peer_info().and_then(|info| info.server_info.clone());
    let (tools, left_out) = list_all(client.peer())
        .await
        .map_err(ServerError::ListTools)?;
    let name = server.as_ref().map_or("a server", |s| s.name.as_str());
    for line in left_out {
        eprintln!("chef: notice: mcp server {name:?}: {line}");
    }
    let _ = client.cancel().await;
    Ok(Listed { server, tools })
}

/// Every tool a server lists, following `nextCursor` page by page, and a line for each
/// listed tool that is not an MCP tool (left out; the others are kept); a cursor seen
/// before means the pages loop. The error is a sentence for the user.
pub(crate) async fn list_all(
    peer: &rmcp::Peer<rmcp::RoleClient>,
) -> Result<(Vec<Tool>, Vec<String>), ListError> {
    let mut tools = Vec::new();
    let mut left_out = Vec::new();
    let mut seen = HashSet::new();
    let mut cursor = None;
    loop {
        let request = rmcp::model::ClientRequest::ListToolsRequest(
            rmcp::model::ListToolsRequest::with_param(
                PaginatedRequestParams::default().with_cursor(cursor.clone()),
            ),
        );
        let result = peer
            .send_request(request)
            .await
            .map_err(|e| ListError::Request(Box::new(e)))?;
        let unexpected = || ListError::Request(Box::new(ServiceError::UnexpectedResponse));
        let next_cursor = match result {
            rmcp::model::ServerResult::ListToolsResult(page) => {
                tools.extend(page.tools);
                page.next_cursor
            }
            // rmcp reads a list with one malformed tool as no tool list at all: read it
            // tool by tool, so one bad tool is left out (and named), not the server.
            rmcp::model::ServerResult::CustomResult(rmcp::model::CustomResult(page)) => {
                let Some(listed) = page.get("tools").and_then(Value::as_array) else {
                    return Err(unexpected());
                };
                for (i, tool) in listed.iter().enumerate() {
                    match <Tool as serde::Deserialize>::deserialize(tool) {
                        Ok(tool) => tools.push(tool),
                        Err(e) => left_out.push(format!(
                            "tools/list: tool {i} ({}) is not an MCP tool ({e}): left out",
                            tool.get("name")
                                .map_or_else(|| "no name".to_owned(), |n| clip(&n.to_string()))
                        )),
                    }
                }
                page.get("nextCursor")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            }
            _ => return Err(unexpected()),
        };
        match next_cursor {
            None => return Ok((tools, left_out)),
            Some(next) if !seen.insert(next.clone()) => return Err(ListError::PagesLoop(next)),
            Some(next) => cursor = Some(next),
        }
    }
}

/// Why a server's tool list could not be read (`tools/list`, page by page).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ListError {
    /// The request failed; `Display` is rmcp's error in a sentence for the user.
    #[error("{}", service_message(.0))]
    Request(#[source] Box<ServiceError>),
    /// The server sent the same `nextCursor` twice.
    #[error("the server sent nextCursor {:?} twice: its pages loop", clip(.0))]
    PagesLoop(String),
}

fn service_message(error: &ServiceError) -> String {
    match error {
        // rmcp could not read the result as a tool list.
        ServiceError::UnexpectedResponse => "the reply is not an MCP tool list".to_owned(),
        ServiceError::TransportClosed => "the server closed the connection".to_owned(),
        other => clip(&other.to_string()),
    }
}

/// rmcp's handshake errors, without the transport's type name.
pub(crate) fn handshake_message(error: &ClientInitializeError) -> String {
    match error {
        ClientInitializeError::TransportError { error, context } => {
            format!("cannot {context}: {}", error.error)
        }
        ClientInitializeError::ConnectionClosed(context) => {
            format!("the server closed the connection ({context})")
        }
        other => clip(&other.to_string()),
    }
}

pub(crate) fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("chef", env!("CARGO_PKG_VERSION")),
    )
}

pub(crate) fn clip(text: &str) -> String {
    match text.char_indices().nth(MESSAGE_LIMIT) {
        Some((i, _)) => format!("{}…", text.get(..i).unwrap_or(text)),
        None => text.to_owned(),
    }
}

pub(crate) fn last_line(bytes: &[u8]) -> Option<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .rev()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map(clip)
}

/// Writes `value` as compact JSON plus a newline over `path` (see
/// [`output::write_atomic`]), so a reader never sees half a catalogue.
fn write_atomically(path: &Path, value: &Value) -> Result<(), CliError> {
    let mut bytes = serde_json::to_vec(value).map_err(|e| CliError::WriteFile {
        path: path.to_owned(),
        source: e.into(),
    })?;
    bytes.push(b'\n');
    output::write_atomic(path, &bytes)
}

#[derive(Debug, Args)]
pub(crate) struct McpInspectArgs {
    /// A server to start: NAME=COMMAND. Repeat once per server. NAME (letters, digits,
    /// `-`) prefixes its tools; COMMAND is split into words like a POSIX shell does
    /// (quotes and backslashes; no variables, globs or pipes) and run directly.
    #[arg(long = "server", value_name = "NAME=COMMAND", required = true, value_parser = parse_server)]
    pub(crate) servers: Vec<ServerSpec>,
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
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = parse_timeout)]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_specs_parse_and_split_like_a_shell() {
        let spec = parse_server(r#"files=python3 "my server.py" --root 'a b'"#).unwrap();
        assert_eq!(spec.name, "files");
        assert_eq!(spec.argv, ["python3", "my server.py", "--root", "a b"]);
        assert_eq!(spec.command_line, r#"python3 "my server.py" --root 'a b'"#);
        // Only the first `=` separates; later ones belong to the command.
        let spec = parse_server("env=env A=1 server").unwrap();
        assert_eq!(spec.argv, ["env", "A=1", "server"]);
    }

    #[test]
    fn bad_server_specs_say_what_is_wrong() {
        let table = [
            ("python3 server.py", "expected NAME=COMMAND"),
            ("=server", "NAME before `=` is empty"),
            ("my server=x", "only letters, digits and `-`"),
            ("a_b=x", "only letters, digits and `-`"),
            ("files=", "COMMAND is empty"),
            ("files='unclosed", "cannot split COMMAND"),
        ];
        for (value, problem) in table {
            let err = parse_server(value).unwrap_err().to_string();
            assert!(err.contains(problem), "{value:?}: {err}");
        }
    }

    #[test]
    fn last_line_skips_blank_lines_and_clips() {
        assert_eq!(last_line(b"one\ntwo\n\n  \n"), Some("two".to_owned()));
        assert_eq!(last_line(b""), None);
        let long = "x".repeat(MESSAGE_LIMIT + 10);
        assert_eq!(
            last_line(long.as_bytes()).unwrap().chars().count(),
            MESSAGE_LIMIT + 1
        );
    }
}
