//! An agent loop whose tools come from a live MCP server: listed through rmcp, compiled by
//! chef, routed through the gate, and dispatched back to the server as real `tools/call`s.
//!
//! Run with `cargo run -p chef-cli --example mcp_agent_loop`. Offline: the example starts
//! itself a second time as a small stdio MCP server (`--serve`), and the "model" is a
//! script of the calls a model would make.
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "an example: fails loudly"
)]

use std::{process::Stdio, sync::Arc};

use chef::{Chef, ChefConfig, Routed};
use chef_ir::{Message, Target, ToolCall, ToolDefinition, interop::rmcp3::call_tool_params};
use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
        ContentBlock, Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
        ServerConfig, Tool, ToolAnnotations, object,
    },
    service::RequestContext,
};
use serde_json::json;
use tokio::process::Command;

/// The MCP server side: two file tools that echo what they were asked.
struct Files;

impl ServerHandler for Files {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("files", "0.1.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = |props| {
            Arc::new(object(
                json!({"type": "object", "properties": props, "required": ["path"]}),
            ))
        };
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new(
                "read_file",
                "Read a text file.",
                schema(json!({"path": {"type": "string"}})),
            )
            .with_annotations(ToolAnnotations::new().read_only(true)),
            Tool::new(
                "delete_file",
                "Delete a file.",
                schema(json!({"path": {"type": "string"}})),
            )
            .with_annotations(ToolAnnotations::new().destructive(true)),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default());
        let text = format!("{} ran on the MCP server with {arguments}", request.name);
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

/// The agent side. Returns what happened, one line per step.
async fn agent() -> Vec<String> {
    // This binary itself plays the server.
    let exe = std::env::current_exe().expect("own path");
    let mut child = Command::new(exe)
        .arg("--serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start the MCP server");
    let transport = (
        child.stdout.take().expect("stdout"),
        child.stdin.take().expect("stdin"),
    );
    let client = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("chef-example", "0.1.0"),
    )
    .serve(transport)
    .await
    .expect("MCP handshake");

    // MCP tools → chef tools, namespaced by server; destructive ones blocked by policy.
    let listed = client.list_tools(None).await.expect("tools/list").tools;
    let mut blocked = Vec::new();
    let tools: Vec<ToolDefinition> = listed
        .iter()
        .map(|tool| {
            let mut def = ToolDefinition::from(tool);
            def.name = format!("files_{}", tool.name).into();
            if def.annotations.destructive_hint == Some(true) {
                blocked.push(def.name.as_str().to_owned());
            }
            def
        })
        .collect();
    let mut chef = Chef::new(ChefConfig::default());
    chef.register_tools(tools).expect("register");
    chef.tools_mut().set_blocked(blocked);
    chef.push(Message::user("Read notes.txt, then delete it."));
    let payload = chef.compile(Target::OpenAiChat).expect("compile");

    let mut log = vec![format!(
        "compiled {} bytes with tools {:?}",
        payload.body.len(),
        payload.meta.wire_tools
    )];
    let script = [
        ToolCall::new("c1", "files_read_file", json!({"path": "notes.txt"})),
        ToolCall::new("c2", "files_delete_file", json!({"path": "notes.txt"})),
    ];
    for call in script {
        let line = match chef.route(&call) {
            Routed::Call(routed) => {
                // Back to the server under its own name.
                let name = routed.name.as_str().trim_start_matches("files_").to_owned();
                let params = call_tool_params(name, &routed.arguments).expect("object arguments");
                let result = client.call_tool(params).await.expect("tools/call");
                let text = result
                    .content
                    .iter()
                    .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                    .collect::<Vec<_>>()
                    .join(" ");
                format!("{} → dispatched: {text}", call.name)
            }
            other => format!("{} → {}", call.name, other.reply().unwrap_or_default()),
        };
        log.push(line);
    }
    let _ = client.cancel().await;
    log
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if std::env::args().any(|a| a == "--serve") {
        let running = Files
            .serve(rmcp::transport::stdio())
            .await
            .expect("MCP handshake");
        running.waiting().await.expect("server loop");
        return;
    }
    for line in agent().await {
        println!("{line}");
    }
}
