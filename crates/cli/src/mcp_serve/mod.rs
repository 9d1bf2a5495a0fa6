//! `chef mcp serve --config chef-mcp.toml [--http ADDR] [--check [--tokens]]`: one MCP server in
//! front of many.
//!
//! The host (Claude Code, Cursor, any MCP client) connects to chef over stdio (or streamable
//! HTTP on loopback with `--http`); chef starts the configured upstream servers, names their
//! tools `{server}_{tool}`, and shows them to the host as the mode says (`minify`,
//! `dispatch`, `search`; see [`config`]). Every call is resolved by chef (codes, names with
//! case or separator drift, argument repair), validated against the tool's original schema,
//! gated by the blocklist and forwarded to its upstream; results, errors and progress come
//! back as the upstream sent them. Logs go to stderr (`RUST_LOG`, default `info`): stdout is
//! the stdio transport.

mod codes;
pub(crate) use codes::CodeFileError;
pub(crate) mod config;
mod found;
pub(crate) use config::ConfigError;
mod gate;
pub(crate) mod hub;
mod jsonrpc;
mod sessions;
mod upstream;

use std::{collections::BTreeMap, net::SocketAddr, path::PathBuf, sync::Arc};

use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, Implementation, ListResourcesResult,
        ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
        ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
        ServerConfig,
    },
    service::{NotificationContext, RequestContext},
};
use serde_json::json;

use self::hub::Hub;
use clap::Args;

use crate::error::{CliError, CommandError};

/// `--help` text for `chef mcp serve`.
pub(crate) const LONG_ABOUT: &str = "\
Serve MCP to a host (Claude Code, Cursor, Claude Desktop, VS Code, any MCP client) in front of
the upstream MCP servers named in a TOML file, with chef's compression, search, validation
and blocklist.

    chef mcp serve --config chef-mcp.toml              # MCP over stdio (what hosts start)
    chef mcp serve --config chef-mcp.toml --http 127.0.0.1:8931   # streamable HTTP at /mcp
    chef mcp serve --config chef-mcp.toml --check      # start upstreams, list, report, exit

chef-mcp.toml:

    mode = \"discover\"        # discover (default): find_tools; what it finds joins the
                             #   list by real name ({server}_{tool}), hosts are told
                             # minify: every tool, short descriptions, full schemas
                             # dispatch: t (its description holds the code map) and q
                             # search: t and q only; q returns the tools' signatures
    blocklist = [\"git_push\", \"shell_*\"]   # refused when called; the list does not change
                             # (upstream or prefixed names, any case or separators;
                             # an entry that matches no tool fails --check)
    call_timeout = 60        # seconds (also: start_timeout, ping_interval, search_limit,
                             # found_limit, map_style, compiled_map, prefix_format,
                             # code_file)
    [[server]]
    name = \"files\"
    command = \"npx -y @modelcontextprotocol/server-filesystem .\"
    env = { DEBUG = \"0\" }
    [[server]]
    name = \"remote\"
    url = \"https://mcp.example.com/mcp\"     # streamable HTTP; headers = { ... } optional

Tools are named {server}_{tool}. An upstream that fails to start, dies, or stops answering
pings is restarted with
a growing pause (0.5 s doubling to 30 s); meanwhile its tools are withdrawn and the host
is sent tools/list_changed. Codes never move: a tool that stays keeps its code, and a code
is never given to another tool, across restarts too (code_file, default beside the config:
chef-mcp.codes.json). The resource chef://status shows every upstream's state.

--check starts every upstream once, prints one JSON object (per server: status and tools;
per mode: tools advertised and their size, o200k tokens with --tokens; blocklist entries
that match no tool) and exits: 0 if every upstream answered, 2 if any failed, a blocklist
entry matches no tool, or the config is invalid.";

/// The handler one host connection talks to.
#[derive(Clone)]
struct Host {
    hub: Arc<Hub>,
}

const STATUS_URI: &str = "chef://status";

impl ServerHandler for Host {
    /// The protocol versions with an `initialize` handshake (up to 2025-11-25). The proxy
    /// is built on that session: a host is added when it says it is initialized, and is
    /// told of list changes by `notifications/tools/list_changed`. 2026-07-28 replaced
    /// both (per-request `_meta`, `subscriptions/listen`), so it is not offered: a host
    /// that asks `server/discover` hears these versions and starts with `initialize`.
    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(ProtocolVersion::known_up_to(
            &ProtocolVersion::LATEST_WITH_INITIALIZE,
        ))
    }

    fn get_info(&self) -> ServerConfig {
        // The names as `prefix_format` makes them (`{server}_{tool}` by default).
        let format = &self.hub.config.prefix_format;
        let instructions = match self.hub.config.mode {
            config::Mode::Minify => format!("Tools from several MCP servers, named {format}."),
            config::Mode::Dispatch => {
                "Tools from several MCP servers behind two tools: call one with t(f=<code from t's map>, a={arguments}); search with q(s=\"what you need\").".to_owned()
            }
            config::Mode::Search => {
                "Tools from several MCP servers behind two tools: find one with q(s=\"what you need\"), then call it with t(f=<code>, a={arguments}).".to_owned()
            }
            config::Mode::Discover => format!(
                "Tools from several MCP servers, found on demand: call find_tools(query=\"what you need\"); the tools it finds join your tool list by their real names ({format}), and you call them directly."
            ),
        };
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("chef-mcp", env!("CARGO_PKG_VERSION")))
        .with_instructions(instructions)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.hub.add_host(context.peer);
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        no_cursor(request.as_ref())?;
        self.hub.wait_ready().await;
        let view = self.hub.view();
        Ok(ListToolsResult::with_all_items(view.advertised.to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let ct = context.ct.clone();
        self.hub
            .call(request, context.peer.clone(), &context.meta, async move {
                ct.cancelled().await;
            })
            .await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        no_cursor(request.as_ref())?;
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(STATUS_URI, "status")
                .with_description("Every upstream MCP server's state: up (with its tool count), starting, or down (why, and when chef tries again).")
                .with_mime_type("text/plain"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != STATUS_URI {
            return Err(ErrorData::resource_not_found(
                format!("no resource {}; chef serves {STATUS_URI}", request.uri),
                None,
            ));
        }
        Ok(ReadResourceResult::new(vec![ResourceContents::text(
            self.hub.status_text(),
            STATUS_URI,
        )])
        .into())
    }
}

/// A list request with a cursor: chef lists everything in one page and never gives a
/// cursor, so any cursor is one it did not give, and is refused as the MCP specification
/// asks (-32602) rather than answered with the first page again.
fn no_cursor(request: Option<&PaginatedRequestParams>) -> Result<(), ErrorData> {
    match request.and_then(|r| r.cursor.as_deref()) {
        None => Ok(()),
        Some(cursor) => Err(ErrorData::invalid_params(
            format!(
                "invalid cursor \"{}\": chef mcp serve lists everything in one page and gives no cursor",
                chef_compress::similarity::shown_name(cursor)
            ),
            None,
        )),
    }
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,rmcp=warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

/// Why `chef mcp serve` stopped, past reading its config.
#[derive(Debug, thiserror::Error)]
pub(crate) enum McpServeError {
    #[error("chef mcp serve: MCP handshake with the host failed: {0}")]
    HostHandshake(#[source] Box<rmcp::service::ServerInitializeError>),
    #[error("chef mcp serve: cannot listen on {addr}: {source}")]
    Listen {
        addr: std::net::SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("chef mcp serve: the HTTP server stopped: {0}")]
    Http(#[source] std::io::Error),
    /// `--check`: the catalogue cannot be compressed in one of the modes.
    #[error("chef mcp serve: {0}")]
    Compress(#[source] chef_compress::CompressError),
}

impl From<McpServeError> for CliError {
    fn from(error: McpServeError) -> Self {
        Self::Command(CommandError::failure(error))
    }
}

impl From<ConfigError> for CliError {
    fn from(error: ConfigError) -> Self {
        Self::Command(CommandError::usage(error))
    }
}

impl From<CodeFileError> for CliError {
    fn from(error: CodeFileError) -> Self {
        Self::Command(CommandError::usage(error))
    }
}

/// `chef mcp serve`.
pub(crate) fn run(args: &McpServeArgs) -> Result<(), CliError> {
    let config = config::read(&args.config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    if args.check {
        return runtime.block_on(check(config, args.tokens));
    }
    init_logging();
    runtime.block_on(serve(config, args.http))
}

async fn serve(config: config::Config, http: Option<SocketAddr>) -> Result<(), CliError> {
    // Held while the proxy serves: one process per code file.
    let _code_file = config.code_file.as_deref().map(codes::hold).transpose()?;
    let max_sessions = config.http_max_sessions;
    let hub = Hub::new(config)?;
    for spec in hub.config.servers.clone() {
        tokio::spawn(upstream::supervise(Arc::clone(&hub), spec));
    }
    match http {
        None => {
            let host = Host {
                hub: Arc::clone(&hub),
            };
            let running = host
                .serve(jsonrpc::front(tokio::io::stdin(), tokio::io::stdout()))
                .await
                .map_err(|e| McpServeError::HostHandshake(Box::new(e)))?;
            let _ = running.waiting().await;
            Ok(())
        }
        Some(addr) => {
            use rmcp::transport::streamable_http_server::{
                StreamableHttpServerConfig, StreamableHttpService,
            };
            if !addr.ip().is_loopback() {
                return Err(CliError::Usage(format!(
                    "--http {addr}: chef mcp serve listens on loopback only (127.0.0.1 or ::1)"
                )));
            }
            let factory_hub = Arc::clone(&hub);
            let service = StreamableHttpService::new(
                move || {
                    Ok(Host {
                        hub: Arc::clone(&factory_hub),
                    })
                },
                Arc::new(sessions::Capped::new(max_sessions)),
                // The transport spec asks a server to check `Origin`: a browser page on
                // another site (DNS rebinding aside, which the loopback `Host` check
                // stops) is refused; a page served from loopback, and a client that sends
                // no `Origin` (every MCP host), are not.
                StreamableHttpServerConfig::default().with_allowed_origins(LOOPBACK_ORIGINS),
            );
            let router = axum::Router::new()
                .nest_service("/mcp", service)
                .layer(axum::middleware::from_fn(jsonrpc::http_front));
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|source| McpServeError::Listen { addr, source })?;
            let local = listener.local_addr().unwrap_or(addr);
            tracing::info!("serving MCP at http://{local}/mcp");
            eprintln!("chef mcp serve: http://{local}/mcp");
            // A header timeout and a connection cap (an audit held 20,000 idle connections
            // open and ran the process out of file descriptors), and Nagle off (a call over
            // a keep-alive connection waited ~40 ms for delayed acknowledgements).
            chef_serve::serve_router(
                listener,
                router,
                chef_serve::Connections::default(),
                std::future::pending(),
            )
            .await
            .map_err(|e| McpServeError::Http(e).into())
        }
    }
}

/// The browser origins `--http` accepts: pages served from loopback, any port.
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "https://localhost:*",
    "http://127.0.0.1:*",
    "https://127.0.0.1:*",
    "http://[::1]:*",
    "https://[::1]:*",
];

/// `--check`: start each upstream once, list, report every mode's size, stop.
async fn check(config: config::Config, tokens: bool) -> Result<(), CliError> {
    let hub = Hub::new(config.clone())?;
    let mut servers = Vec::new();
    let mut lists: BTreeMap<String, Vec<rmcp::model::Tool>> = BTreeMap::new();
    let mut failed = Vec::new();
    for spec in &config.servers {
        match upstream::list_once(&hub, spec).await {
            Ok(tools) => {
                // Quoted as every name chef reports: control and invisible characters
                // escaped (a bidirectional override would spoof a name on a terminal).
                servers.push(json!({"name": spec.name, "status": "ok", "tools": tools.iter().map(|t| chef_compress::similarity::shown_name(&t.name).into_owned()).collect::<Vec<_>>()}));
                lists.insert(spec.name.clone(), tools);
            }
            Err(e) => {
                failed.push(spec.name.clone());
                eprintln!("chef: mcp server {:?}: {e}", spec.name);
                servers
                    .push(json!({"name": spec.name, "status": "failed", "error": e.to_string()}));
            }
        }
    }
    let (report, left_out) = Hub::check_report(&config, &lists).map_err(McpServeError::Compress)?;
    let mut modes: Vec<serde_json::Value> = Vec::with_capacity(report.len());
    for (mode, count, text) in &report {
        let mut m = serde_json::Map::new();
        m.insert("mode".into(), json!(mode.as_str()));
        m.insert("tools".into(), json!(count));
        m.insert("bytes".into(), json!(text.len()));
        if tokens {
            let n = chef_compress::tokens::count_o200k(text).ok_or(CliError::Tokenizer)?;
            m.insert("o200k_tokens".into(), json!(n));
        }
        modes.push(serde_json::Value::Object(m));
    }
    let mut out = json!({
        "mode": config.mode.as_str(),
        "servers": servers,
        "modes": modes,
    });
    if !left_out.is_empty() {
        for line in &left_out {
            eprintln!("chef: {line}");
        }
        if let Some(map) = out.as_object_mut() {
            map.insert("left_out".to_owned(), json!(left_out));
        }
    }
    let unmatched = Hub::unmatched_blocklist(&config, &lists);
    if !unmatched.is_empty() {
        for entry in &unmatched {
            eprintln!(
                "chef: blocklist entry {entry:?} matches no tool of the upstreams that answered: it would block nothing"
            );
        }
        if let Some(map) = out.as_object_mut() {
            map.insert("blocklist_unmatched".to_owned(), json!(unmatched));
        }
    }
    crate::output::json_line(&out)?;
    if !failed.is_empty() {
        return Err(CliError::McpServersFailed {
            failed,
            total: config.servers.len(),
        });
    }
    if !unmatched.is_empty() {
        return Err(CliError::BlocklistUnmatched { entries: unmatched });
    }
    Ok(())
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
