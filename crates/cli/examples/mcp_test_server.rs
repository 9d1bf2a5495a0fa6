//! A small MCP server over stdio, built with rmcp, that `chef mcp inspect`'s tests start.
//!
//! Run with `cargo run -p chef-cli --example mcp_test_server -- --set files` and type
//! JSON-RPC lines, or let chef start it:
//!
//! ```sh
//! cargo build -p chef-cli --example mcp_test_server
//! cargo run -p chef-cli -- mcp inspect \
//!     --server files="target/debug/examples/mcp_test_server --set files" \
//!     --server git="target/debug/examples/mcp_test_server --set git --page-size 1"
//! ```
//!
//! Flags:
//!
//! - `--set files|git`: which handful of tools to serve (annotated with MCP hints).
//! - `--page-size N`: answer `tools/list` N tools per page (exercises pagination).
//! - `--loop-cursor`: send the same `nextCursor` on every page (pages that never end).
//! - `--malformed`: skip rmcp and answer by hand, with a `tools/list` result whose tools
//!   are not MCP tools (one has no name, one's schema is a string).
//! - `--crash MESSAGE`: print MESSAGE on stderr and exit 3 before speaking MCP.
//! - `--extra`: more tools for `chef mcp serve`'s tests: `sleep` (waits `seconds`,
//!   sending a progress notification every 50 ms, then `burst` more at once; when
//!   cancelled, it writes the file named
//!   by `$MCP_TEST_CANCELLED_FILE`, if set), `grow` (adds a tool `grown_N` and sends
//!   `tools/list_changed`), `crash` (exits at once, as a killed server would) and `hang`
//!   (blocks the whole server: it answers nothing more, pings included).
//! - `--bad-schema`: one more tool, `broken`, whose input schema is `{"type": "string"}`
//!   (valid JSON, not a usable tool schema).
//! - `--refuse-if FILE`: exit 4 before speaking MCP while FILE exists (a server that does
//!   not come back until the test removes FILE).
//! - `--catalogue FILE [--only-prefix P]`: serve the tools of FILE instead of `--set`'s, a
//!   JSON array of tool definitions (`name`, `description`, and `inputSchema` or
//!   `input_schema`; e.g. `tests/fixtures/real-mcp-tools.json`). With `--only-prefix P`,
//!   only the tools of server P: those whose `server` field is P (name kept), or whose
//!   name starts with `P_` (that prefix stripped), so that a proxy naming the server P
//!   re-adds it. `scripts/proxy-compare/compare.py` runs one such server per prefix.
//!
//! `tools/call` echoes the tool name and arguments back as text.
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "a test server: fails loudly on misuse"
)]

use std::{borrow::Cow, sync::Arc, time::Duration};

use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Cursor,
        Implementation, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
        ServerCapabilities, ServerConfig, Tool, ToolAnnotations, object,
    },
    service::RequestContext,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

struct TestServer {
    tools: std::sync::RwLock<Vec<Tool>>,
    page_size: usize,
    loop_cursor: bool,
}

fn tool(name: impl Into<Cow<'static, str>>, description: &'static str, properties: Value) -> Tool {
    Tool::new(
        name,
        description,
        Arc::new(object(json!({"type": "object", "properties": properties}))),
    )
}

fn tool_set(set: &str) -> Vec<Tool> {
    match set {
        "files" => vec![
            tool(
                "read_file",
                "Read a text file.",
                json!({"path": {"type": "string"}}),
            )
            .with_annotations(ToolAnnotations::with_title("Read file").read_only(true)),
            tool(
                "write_file",
                "Write a text file, replacing it.",
                json!({"path": {"type": "string"}, "text": {"type": "string"}}),
            )
            .with_annotations(
                ToolAnnotations::new()
                    .read_only(false)
                    .destructive(true)
                    .idempotent(true),
            ),
            tool(
                "search",
                "Search file contents.",
                json!({"query": {"type": "string"}, "limit": {"type": "integer"}}),
            )
            .with_annotations(ToolAnnotations::new().read_only(true).open_world(false)),
        ],
        "git" => vec![
            tool("status", "Show the working tree status.", json!({}))
                .with_annotations(ToolAnnotations::new().read_only(true)),
            tool(
                "commit",
                "Record changes.",
                json!({"message": {"type": "string"}}),
            )
            .with_annotations(ToolAnnotations::new().read_only(false).destructive(false)),
            tool(
                "push",
                "Update the remote.",
                json!({"force": {"type": "boolean"}}),
            )
            .with_annotations(ToolAnnotations::new().destructive(true).open_world(true)),
            // Same name as a `files` tool: fine once namespaced, a collision without.
            tool(
                "search",
                "Search the commit log.",
                json!({"query": {"type": "string"}}),
            )
            .with_annotations(ToolAnnotations::new().read_only(true)),
        ],
        other => panic!("unknown tool set {other:?} (files, git)"),
    }
}

fn extra_tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "sleep",
            "Wait, reporting progress.",
            Arc::new(object(json!({
                "type": "object",
                "properties": {"seconds": {"type": "number"}, "burst": {"type": "integer"}},
                "required": ["seconds"]
            }))),
        ),
        tool("grow", "Add a tool.", json!({})),
        {
            let mut meta = tool("meta", "Say the call's _meta.", json!({}));
            meta.meta = Some(object(json!({"com.example/ui": "resource://meta"})).into());
            meta
        },
        tool("crash", "Exit at once.", json!({})),
        tool("hang", "Stop answering anything.", json!({})),
    ]
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("chef-mcp-test-server", "0.1.0"))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let start: usize = match request.and_then(|r| r.cursor) {
            Some(cursor) => cursor
                .parse()
                .map_err(|_| ErrorData::invalid_params("bad cursor", None))?,
            None => 0,
        };
        let tools = self.tools.read().unwrap().clone();
        let end = (start + self.page_size).min(tools.len());
        let mut result =
            ListToolsResult::with_all_items(tools.get(start..end).unwrap_or_default().to_vec());
        if self.loop_cursor {
            result.next_cursor = Some(Cursor::from("0"));
        } else if end < tools.len() {
            result.next_cursor = Some(Cursor::from(end.to_string()));
        }
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name: Cow<'_, str> = request.name;
        if !self.tools.read().unwrap().iter().any(|t| t.name == name) {
            return Err(ErrorData::invalid_params(format!("no tool {name}"), None));
        }
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        match name.as_ref() {
            "crash" => std::process::exit(1),
            // The request's `_meta` as it came, but the progress token (each hop's own).
            "meta" => {
                let mut meta = context.meta.0.clone();
                meta.remove("progressToken");
                let text = serde_json::to_string(&*meta).expect("a JSON object");
                return Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into());
            }
            // The runtime has one thread: blocking it stops every answer.
            "hang" => std::thread::sleep(Duration::from_secs(3600)),
            "grow" => {
                let added = {
                    let mut tools = self.tools.write().unwrap();
                    let name = format!("grown_{}", tools.len());
                    tools.push(tool(name.clone(), "A tool that grow added.", json!({})));
                    name
                };
                let _ = context.peer.notify_tool_list_changed().await;
                return Ok(CallToolResult::success(vec![ContentBlock::text(added)]).into());
            }
            "sleep" => {
                let seconds = arguments["seconds"].as_f64().unwrap_or(0.0);
                let token = context.meta.get_progress_token();
                let steps = (seconds / 0.05).ceil() as u32;
                for step in 0..steps {
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(50)) => {}
                        () = context.ct.cancelled() => {
                            eprintln!("sleep cancelled");
                            if let Ok(file) = std::env::var("MCP_TEST_CANCELLED_FILE") {
                                std::fs::write(file, "sleep cancelled").expect("marker file");
                            }
                            return Err(ErrorData::internal_error("cancelled", None));
                        }
                    }
                    if let Some(token) = &token {
                        let _ = context
                            .peer
                            .notify_progress(
                                ProgressNotificationParam::new(token.clone(), f64::from(step + 1))
                                    .with_total(f64::from(steps)),
                            )
                            .await;
                    }
                }
                // `burst`: that many notifications at once, then the answer (a proxy must
                // not let the answer overtake them).
                let burst = arguments["burst"].as_u64().unwrap_or(0);
                if let Some(token) = &token {
                    for n in 0..burst {
                        let _ = context
                            .peer
                            .notify_progress(
                                ProgressNotificationParam::new(token.clone(), (n + 1) as f64)
                                    .with_total(burst as f64),
                            )
                            .await;
                    }
                }
                return Ok(CallToolResult::success(vec![ContentBlock::text("slept")]).into());
            }
            _ => {}
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(format!("{name} {arguments}"))]).into())
    }
}

/// The tools of a catalogue file (a JSON array of tool definitions), all or server
/// `prefix`'s: those whose `server` field is `prefix`, or whose name starts with
/// `{prefix}_` (stripped).
fn catalogue_tools(file: &str, prefix: Option<&str>) -> Vec<Tool> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file}: {e}"));
    let defs: Vec<Value> = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut tools = Vec::new();
    for def in defs {
        let full = def["name"].as_str().expect("a tool name").to_owned();
        let name = match prefix {
            None => full,
            Some(p) if def["server"].as_str() == Some(p) => full,
            Some(p) => match full.strip_prefix(&format!("{p}_")) {
                Some(rest) => rest.to_owned(),
                None => continue,
            },
        };
        let schema = def
            .get("inputSchema")
            .or_else(|| def.get("input_schema"))
            .cloned()
            .unwrap_or_else(|| json!({"type": "object"}));
        let mut tool = Tool::new(name, "", Arc::new(object(schema)));
        tool.description = def["description"]
            .as_str()
            .map(|d| Cow::Owned(d.to_owned()));
        tools.push(tool);
    }
    assert!(!tools.is_empty(), "no tools in {file} for {prefix:?}");
    tools
}

/// Answers by hand: a valid handshake, then a `tools/list` that is not a tool list.
async fn serve_malformed() {
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut stdout = tokio::io::stdout();
    while let Some(line) = lines.next_line().await.expect("stdin") {
        let message: Value = serde_json::from_str(&line).expect("json-rpc line");
        let Some(id) = message.get("id").cloned() else {
            continue; // a notification
        };
        let result = match message["method"].as_str() {
            Some("initialize") => json!({
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "malformed", "version": "0"}
            }),
            Some("tools/list") => json!({
                "tools": [
                    {"name": "fine", "inputSchema": {"type": "object"}},
                    {"description": "no name here", "inputSchema": "not a schema"}
                ]
            }),
            _ => json!({}),
        };
        let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
        stdout
            .write_all(format!("{reply}\n").as_bytes())
            .await
            .expect("stdout");
        stdout.flush().await.expect("stdout");
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut set = String::from("files");
    let mut page_size = usize::MAX;
    let mut loop_cursor = false;
    let mut extra = false;
    let mut bad_schema = false;
    let mut catalogue: Option<String> = None;
    let mut only_prefix: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--set" => set = args.next().expect("--set NAME"),
            "--page-size" => {
                page_size = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|n| *n > 0)
                    .expect("--page-size N (N > 0)");
            }
            "--loop-cursor" => loop_cursor = true,
            "--malformed" => return serve_malformed().await,
            "--extra" => extra = true,
            "--bad-schema" => bad_schema = true,
            "--catalogue" => catalogue = Some(args.next().expect("--catalogue FILE")),
            "--only-prefix" => only_prefix = Some(args.next().expect("--only-prefix P")),
            "--refuse-if" => {
                let file = args.next().expect("--refuse-if FILE");
                if std::path::Path::new(&file).exists() {
                    eprintln!("refusing to start while {file} exists");
                    std::process::exit(4);
                }
            }
            "--start-delay" => {
                let seconds: f64 = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--start-delay SECONDS");
                tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
            }
            "--crash" => {
                eprintln!("{}", args.next().unwrap_or_default());
                std::process::exit(3);
            }
            "--help" | "-h" => {
                println!(
                    "mcp_test_server: a small MCP server over stdio for chef's tests\n\
                     flags: --set files|git, --page-size N, --loop-cursor, --malformed, \
                     --extra, --bad-schema, --refuse-if FILE, --start-delay SECONDS, \
                     --crash MESSAGE, \
                     --catalogue FILE [--only-prefix P] (see the top of \
                     crates/cli/examples/mcp_test_server.rs)"
                );
                return;
            }
            other => {
                eprintln!("mcp_test_server: unknown flag {other:?} (try --help)");
                std::process::exit(2);
            }
        }
    }
    let mut tools = match &catalogue {
        Some(file) => catalogue_tools(file, only_prefix.as_deref()),
        None => {
            assert!(only_prefix.is_none(), "--only-prefix needs --catalogue");
            tool_set(&set)
        }
    };
    if extra {
        tools.extend(extra_tools());
    }
    if bad_schema {
        tools.push(Tool::new(
            "broken",
            "A tool whose schema is not an object schema.",
            Arc::new(object(json!({"type": "string"}))),
        ));
    }
    let server = TestServer {
        tools: std::sync::RwLock::new(tools),
        page_size,
        loop_cursor,
    };
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .expect("MCP handshake");
    running.waiting().await.expect("server loop");
}
