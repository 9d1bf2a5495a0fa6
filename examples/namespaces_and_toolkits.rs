//! Namespaces and lazy toolkits: the two-layer tool mode, end to end.
//!
//! Run with `cargo run -p chef-examples --example namespaces_and_toolkits`. Offline: the
//! "model" is a script of the calls a model would make. `cargo test -p chef-examples` runs
//! it too and fails if anything it shows stops holding.
//!
//! What it shows, each step checked:
//! 1. Two namespaces (`file_ops`, `git`) and two lazy toolkits (`Weather`, `Email`) compile
//!    to three wire tools — one per namespace plus `load_toolkit` — and a toolkit directory
//!    in the system prompt.
//! 2. A namespace action is routed to the real tool, with its arguments validated against
//!    the member's own schema (which never goes on the wire).
//! 3. A blocked tool reached through the namespace, and a blocked toolkit, are refused.
//! 4. `load_toolkit` loads `Weather`; the next compile sends its tools *after* the stable
//!    tools, whose bytes do not move (the request's byte prefix is unchanged), and the load
//!    is announced to the model.

#[macro_use]
mod common;

use chef::{Chef, ChefConfig, Payload, Routed, ToolGroup};
use chef_ir::{Content, Message, Target, ToolCall, ToolDefinition, ToolResult};
use serde_json::{Value, json};

use common::{Error, ensure};

/// The target compiled here. OpenAI Chat Completions puts `tools` first in the body, so
/// the stable tools are a literal byte prefix of every request.
const TARGET: Target = Target::OpenAiChat;

/// `value[key]`, or `null` when absent (indexing a `Value` is fine, but lints ask for `get`).
fn at<'a>(value: &'a Value, key: &str) -> &'a Value {
    static NULL: Value = Value::Null;
    value.get(key).unwrap_or(&NULL)
}

fn tool(name: &str, description: &str, props: Value, required: &[&str]) -> ToolDefinition {
    ToolDefinition::new(
        name,
        json!({"type": "object", "properties": props, "required": required}),
    )
    .with_description(description)
}

fn session() -> Result<Chef, Error> {
    let path = json!({"path": {"type": "string", "description": "Path from the repo root."}});
    let mut chef = Chef::new(ChefConfig::default().with_tool_change_announcements(true));
    chef.tools_mut().register_namespaces(vec![
        ToolGroup::new(
            "file_ops",
            "Read and change files in the project.",
            vec![
                tool("read_file", "Read a file.", path.clone(), &["path"]),
                tool(
                    "write_file",
                    "Write a file.",
                    json!({"path": {"type": "string"}, "text": {"type": "string"}}),
                    &["path", "text"],
                ),
                tool("delete_file", "Delete a file.", path, &["path"]),
            ],
        ),
        ToolGroup::new(
            "git",
            "Version control.",
            vec![
                tool(
                    "git_status",
                    "Show the working tree status.",
                    json!({}),
                    &[],
                ),
                tool(
                    "git_commit",
                    "Commit staged changes.",
                    json!({"message": {"type": "string"}}),
                    &["message"],
                ),
            ],
        ),
    ])?;
    chef.tools_mut().register_toolkits(vec![
        ToolGroup::new(
            "Weather",
            "Forecasts and current conditions.",
            vec![
                tool(
                    "get_weather",
                    "Current weather for a city.",
                    json!({"city": {"type": "string"}}),
                    &["city"],
                ),
                tool(
                    "get_forecast",
                    "Forecast for the next days.",
                    json!({"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "maximum": 7}}),
                    &["city"],
                ),
            ],
        ),
        ToolGroup::new(
            "Email",
            "Send mail on the user's behalf.",
            vec![tool(
                "send_email",
                "Send an email.",
                json!({"to": {"type": "string"}, "body": {"type": "string"}}),
                &["to", "body"],
            )],
        ),
    ])?;
    chef.set_system_prompt(vec![Message::system("You are a careful repo assistant.")]);
    chef.tools_mut().set_blocked(["delete_file", "Email"]);
    Ok(chef)
}

/// What one scripted call came to: the outcome's kind, the real tool, the reply.
#[derive(Debug)]
struct Step {
    outcome: &'static str,
    detail: String,
}

/// Routes one model call the way an agent loop does, records it in the history, and
/// reports what happened. Only `Routed::Call` would reach the agent's own code.
fn step(chef: &mut Chef, call: ToolCall) -> Step {
    chef.push(Message::assistant_with(vec![Content::ToolCall(
        call.clone(),
    )]));
    let routed = chef.route(&call);
    let (outcome, detail, text) = match &routed {
        Routed::Call(c) => {
            let via = c.via.as_deref().unwrap_or("-");
            let text = format!("{} ran with {}", c.name, c.arguments);
            (
                "call",
                format!("{} via {via} {}", c.name, c.arguments),
                text,
            )
        }
        Routed::ToolkitLoaded { toolkit, tools, .. } => {
            let names: Vec<&str> = tools.iter().map(|t| t.as_str()).collect();
            let reply = routed.reply().unwrap_or_default().to_owned();
            (
                "toolkit_loaded",
                format!("{toolkit}: {}", names.join(", ")),
                reply,
            )
        }
        Routed::Blocked { name, reply, .. } => {
            ("blocked", format!("{name}: {reply}"), reply.clone())
        }
        Routed::Error { reply, .. } => ("error", reply.clone(), reply.clone()),
        Routed::Lookup { reply, .. } => ("lookup", reply.clone(), reply.clone()),
        Routed::Owned(o) => ("owned", o.name.clone(), String::new()),
    };
    let result = if routed.is_error() {
        ToolResult::error(call.id, text)
    } else {
        ToolResult::text(call.id, text)
    };
    chef.push(Message::tool_results(vec![result]));
    Step { outcome, detail }
}

fn parse(body: &[u8]) -> Result<Value, Error> {
    Ok(serde_json::from_slice(body)?)
}

/// Compiles turn `turn`, logs its size and wire tools, and returns the payload, its parsed
/// body and the wire tools' names.
fn compile_turn(
    chef: &mut Chef,
    turn: usize,
    log: &mut Vec<String>,
) -> Result<(Payload, Value, Vec<String>), Error> {
    let payload = chef.compile(TARGET)?;
    let body = parse(&payload.body)?;
    let tools = names(&body);
    log.push(format!(
        "turn {turn}: {} bytes, wire tools {tools:?}",
        payload.body.len()
    ));
    Ok((payload, body, tools))
}

fn names(body: &Value) -> Vec<String> {
    at(body, "tools")
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| at(at(t, "function"), "name").as_str().map(str::to_owned))
        .collect()
}

/// `{"tools":[` followed by the first `n` tools exactly as they appear in `body`.
fn tools_prefix(body: &Value, n: usize) -> Result<String, Error> {
    let tools = at(body, "tools").as_array().ok_or("no tools in the body")?;
    let first = tools.get(..n).ok_or("fewer tools than expected")?;
    let parts: Result<Vec<String>, _> = first.iter().map(serde_json::to_string).collect();
    Ok(format!("{{\"tools\":[{}", parts?.join(",")))
}

fn run() -> Result<Vec<String>, Error> {
    let mut log = Vec::new();
    let mut chef = session()?;
    chef.push(Message::user(
        "Read the README, then check tomorrow's weather in Oslo and mail it to Ann.",
    ));

    // Turn 0: the namespaces and the loader are the only wire tools.
    let (first, body0, tools0) = compile_turn(&mut chef, 0, &mut log)?;
    ensure(
        tools0 == ["file_ops", "git", "load_toolkit"],
        format!("turn 0 tools: {tools0:?}"),
    )?;
    let directory = chef.tools().directory_xml();
    log.push(format!(
        "toolkit directory in the system prompt:\n{directory}"
    ));
    ensure(
        directory.contains("Weather") && String::from_utf8(first.body.clone())?.contains("Weather"),
        "the directory names the toolkits and is compiled into the request",
    )?;

    let script = [
        // A namespace action, routed to the real tool.
        ToolCall::new(
            "c1",
            "file_ops",
            json!({"action": "read_file", "args": {"path": "README.md"}}),
        ),
        // The member's schema is enforced though it is not on the wire.
        ToolCall::new("c2", "file_ops", json!({"action": "read_file", "args": {}})),
        // A blocked tool reached through the namespace.
        ToolCall::new(
            "c3",
            "file_ops",
            json!({"action": "delete_file", "args": {"path": "old.log"}}),
        ),
        // A toolkit tool before its toolkit is loaded.
        ToolCall::new("c4", "get_weather", json!({"city": "Oslo"})),
        ToolCall::new("c5", "load_toolkit", json!({"toolkit_name": "Weather"})),
        // A blocked toolkit.
        ToolCall::new("c6", "load_toolkit", json!({"toolkit_name": "Email"})),
    ];
    let mut steps = Vec::new();
    for call in script {
        let name = call.name.as_str().to_owned();
        let s = step(&mut chef, call);
        log.push(format!("  {name} -> {}: {}", s.outcome, s.detail));
        steps.push(s);
    }
    let kinds: Vec<&str> = steps.iter().map(|s| s.outcome).collect();
    ensure(
        kinds
            == [
                "call",
                "error",
                "blocked",
                "error",
                "toolkit_loaded",
                "blocked",
            ],
        format!("outcomes: {kinds:?}"),
    )?;
    ensure(
        steps
            .first()
            .is_some_and(|s| s.detail.starts_with("read_file via file_ops")),
        "the namespace action reaches read_file",
    )?;
    ensure(
        steps
            .get(2)
            .is_some_and(|s| s.detail.starts_with("delete_file:")),
        "the gate names the member, not the namespace",
    )?;

    // Turn 1: the Weather tools follow the stable tools; nothing before them moved.
    let (second, _, tools1) = compile_turn(&mut chef, 1, &mut log)?;
    ensure(
        tools1
            == [
                "file_ops",
                "git",
                "load_toolkit",
                "get_forecast",
                "get_weather",
            ],
        format!("turn 1 tools: {tools1:?}"),
    )?;
    let prefix = tools_prefix(&body0, tools0.len())?;
    ensure(
        first.body.starts_with(prefix.as_bytes()) && second.body.starts_with(prefix.as_bytes()),
        "the stable tools are a byte prefix of both requests",
    )?;
    log.push(format!(
        "the first {} bytes (the stable tools) are identical in both requests",
        prefix.len()
    ));
    let text1 = String::from_utf8(second.body.clone())?;
    ensure(
        text1.contains("Toolkit \\\"Weather\\\" is loaded"),
        "the load is announced",
    )?;
    log.push("the load is announced to the model in the tail".to_owned());

    // The loaded tools are ordinary tools now, gated on their toolkit too.
    let s = step(
        &mut chef,
        ToolCall::new("c7", "get_weather", json!({"city": "Oslo"})),
    );
    log.push(format!("  get_weather -> {}: {}", s.outcome, s.detail));
    ensure(
        s.outcome == "call" && s.detail.starts_with("get_weather via Weather"),
        format!("get_weather after the load: {s:?}"),
    )?;
    chef.tools_mut()
        .set_blocked(["delete_file", "Email", "Weather"]);
    let s = step(
        &mut chef,
        ToolCall::new("c8", "get_forecast", json!({"city": "Oslo"})),
    );
    log.push(format!(
        "  get_forecast (Weather blocked) -> {}: {}",
        s.outcome, s.detail
    ));
    ensure(
        s.outcome == "blocked" && s.detail.starts_with("Weather:"),
        format!("a tool of a blocked toolkit: {s:?}"),
    )?;
    Ok(log)
}

fn main() -> Result<(), Error> {
    common::print_log(&run()?);
    Ok(())
}

log_test!(
    namespaces_route_toolkits_load_after_the_stable_tools_and_the_gate_holds,
    [
        r#"wire tools ["file_ops", "git", "load_toolkit"]"#,
        "file_ops -> call: read_file via file_ops",
        "file_ops -> blocked: delete_file: Tool \"delete_file\" is currently blocked.",
        "load_toolkit -> toolkit_loaded: Weather: get_weather, get_forecast",
        "load_toolkit -> blocked: Email:",
        r#"["file_ops", "git", "load_toolkit", "get_forecast", "get_weather"]"#,
    ]
);
