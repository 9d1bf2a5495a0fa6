//! The Rust side of the Python bindings' byte-identity test and turn benchmark.
//!
//! `session_script SCRIPT.json` drives a session through chef's Rust API from a JSON
//! script and prints one line per observable step: `compile TARGET HEX-OF-BODY`,
//! `route KIND NAME`, `calls N`. crates/python/tests/test_bytes.py drives the same script
//! through the Python API and compares the lines, so every target's body must be
//! byte-identical from both languages.
//!
//! `session_script --bench TURNS TARGET` times TURNS agent turns (push the user's message,
//! compile, parse the provider's reply, route its call, push the result) over the 149
//! real tools at level 3 and prints the mean per turn; crates/python/bench/turn.py does
//! the same turns from Python (docs/PERFORMANCE.md, "Python bindings").
//!
//! A script is `{"config": {"level", "tools_mode", "cache", "memory"}, "steps": [...]}`;
//! each step is an object with `op` and its arguments (see `run_step`). Paths in
//! `register_tools {"file": …}` are relative to the repository root.

use std::{path::PathBuf, time::Instant};

use chef::{Chef, ChefConfig, PrunePolicy, Routed, ToolGroup, ToolsMode, memory::Memory};
use chef_compress::Level;
use chef_ir::{Message, Target, ToolCall, ToolDefinition, ToolResult, WireNames};
use serde_json::{Value, json};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn str_of<'a>(step: &'a Value, key: &str) -> Result<&'a str> {
    step.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("step without \"{key}\": {step}").into())
}

fn target_of(step: &Value) -> Result<Target> {
    let name = str_of(step, "target")?;
    Target::from_name(name).ok_or_else(|| format!("unknown target {name}").into())
}

fn tools_of(step: &Value) -> Result<Vec<ToolDefinition>> {
    // `tools`, then the tools of `file` (a registration replaces the registry, so a
    // script registers everything in one step).
    let mut all = match step.get("tools") {
        Some(tools) => chef_ir::load_tools(tools)?.tools,
        None => Vec::new(),
    };
    if let Some(file) = step.get("file").and_then(Value::as_str) {
        let doc: Value = serde_json::from_slice(&std::fs::read(root().join(file))?)?;
        all.extend(chef_ir::load_tools(&doc)?.tools);
    }
    Ok(all)
}

fn groups_of(step: &Value) -> Result<Vec<ToolGroup>> {
    let mut out = Vec::new();
    for g in step
        .get("groups")
        .and_then(Value::as_array)
        .ok_or("no groups")?
    {
        let tools = chef_ir::load_tools(g.get("tools").ok_or("group without tools")?)?.tools;
        out.push(ToolGroup::new(
            str_of(g, "name")?,
            g.get("description").and_then(Value::as_str).unwrap_or(""),
            tools,
        ));
    }
    Ok(out)
}

fn new_chef(config: &Value) -> Result<Chef> {
    let level = config.get("level").and_then(Value::as_u64).unwrap_or(1);
    let level = Level::try_from(u8::try_from(level)?).map_err(|_| "bad level")?;
    let mode = match config.get("tools_mode").and_then(Value::as_str) {
        Some("unified") => ToolsMode::Unified,
        _ => ToolsMode::Legacy,
    };
    let cache = config.get("cache").and_then(Value::as_bool).unwrap_or(true);
    let announce = config
        .get("announce_tool_changes")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut options = chef_compress::Options::new().with_level(level);
    if let Some(file) = config.get("compiled").and_then(Value::as_str) {
        let map: std::collections::BTreeMap<String, String> =
            serde_json::from_slice(&std::fs::read(root().join(file))?)?;
        options = options.with_compiled(map);
    }
    let mut chef = Chef::new(
        ChefConfig::default()
            .with_compress(options)
            .with_tools_mode(mode)
            .with_cache(cache)
            .with_tool_change_announcements(announce),
    );
    if config.get("memory").and_then(Value::as_bool) == Some(true) {
        chef = chef.with_memory(Memory::new());
    }
    Ok(chef)
}

fn parse_reply(
    chef: &Chef,
    target: Target,
    bytes: &[u8],
    names: &WireNames,
) -> Result<chef_ir::Message> {
    Ok(match target {
        Target::Anthropic => chef::anthropic::parse_response(bytes, names)?.message,
        Target::OpenAiChat => chef::openai::chat::parse_response(bytes, names)?.message,
        Target::OpenAiResponses => chef::openai::responses::parse_response(bytes, names)?.message,
        Target::Gemini => chef::gemini::parse_response(bytes, names, chef.history())?.message,
    })
}

fn kind(routed: &Routed) -> &'static str {
    match routed {
        Routed::Call(_) => "call",
        Routed::Owned(_) => "owned",
        Routed::ToolkitLoaded { .. } => "toolkit_loaded",
        Routed::Lookup { .. } => "lookup",
        Routed::Blocked { .. } => "blocked",
        _ => "rejected",
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// `value[key]`, or `null` when it is missing.
fn field<'a>(value: &'a Value, key: &str) -> &'a Value {
    value.get(key).unwrap_or(&Value::Null)
}

struct Run {
    chef: Chef,
    names: Option<(Target, WireNames)>,
}

fn run_step(run: &mut Run, step: &Value, out: &mut Vec<String>) -> Result<()> {
    let chef = &mut run.chef;
    match str_of(step, "op")? {
        "register_tools" => {
            chef.register_tools(tools_of(step)?)?;
        }
        "register_namespaces" => {
            chef.tools_mut().register_namespaces(groups_of(step)?)?;
        }
        "register_toolkits" => {
            chef.tools_mut().register_toolkits(groups_of(step)?)?;
        }
        "set_system_prompt" => {
            chef.set_system_prompt(vec![Message::system(str_of(step, "text")?)]);
        }
        "set_blocked_tools" => {
            let names: Vec<String> = serde_json::from_value(field(step, "names").clone())?;
            chef.tools_mut().set_blocked(names);
        }
        "set_prune_policy" => {
            let policy: PrunePolicy = serde_json::from_value(field(step, "policy").clone())?;
            chef.tools_mut().set_prune_policy(policy);
        }
        "set_task" => {
            chef.tools_mut()
                .set_task(step.get("task").and_then(Value::as_str));
        }
        "push" => {
            chef.push(serde_json::from_value(field(step, "message").clone())?);
        }
        "push_user" => {
            chef.push(Message::user(str_of(step, "text")?));
        }
        "push_reply" => {
            let target = target_of(step)?;
            let bytes = serde_json::to_vec(field(step, "reply"))?;
            let names = match &run.names {
                Some((t, names)) if *t == target => names.clone(),
                _ => WireNames::default(),
            };
            let message = parse_reply(chef, target, &bytes, &names)?;
            out.push(format!("calls {}", message.tool_calls().count()));
            chef.push(message);
        }
        "push_tool_result" => {
            let id = str_of(step, "call_id")?;
            let text = str_of(step, "text")?;
            let result = if step.get("is_error").and_then(Value::as_bool) == Some(true) {
                ToolResult::error(id, text)
            } else {
                ToolResult::text(id, text)
            };
            chef.push(Message::tool_results(vec![result]));
        }
        "memory_set" => {
            chef.memory_mut().ok_or("no memory")?.set(
                str_of(step, "key")?,
                str_of(step, "value")?,
                chef::memory::SetOptions::new(),
            )?;
        }
        "route" => {
            let call = field(step, "call");
            let routed = chef.route(&ToolCall::new(
                str_of(call, "id")?,
                str_of(call, "name")?,
                call.get("arguments").cloned().unwrap_or_else(|| json!({})),
            ));
            let name = match &routed {
                Routed::Call(c) => c.name.as_str().to_owned(),
                Routed::Blocked { name, .. } => name.clone(),
                Routed::ToolkitLoaded { toolkit, .. } => toolkit.clone(),
                other => other.tool().unwrap_or("-").to_owned(),
            };
            out.push(format!("route {} {name}", kind(&routed)));
        }
        "compile" => {
            let target = target_of(step)?;
            let payload = chef.compile(target)?;
            out.push(format!("compile {target} {}", hex(&payload.body)));
            run.names = Some((target, payload.names));
        }
        other => return Err(format!("unknown op {other}").into()),
    }
    Ok(())
}

fn script(path: &str) -> Result<()> {
    let script: Value = serde_json::from_slice(&std::fs::read(path)?)?;
    let mut run = Run {
        chef: new_chef(field(&script, "config"))?,
        names: None,
    };
    let mut out = Vec::new();
    for step in field(&script, "steps").as_array().ok_or("no steps")? {
        run_step(&mut run, step, &mut out)?;
    }
    for line in out {
        println!("{line}");
    }
    Ok(())
}

/// The provider reply of the benchmark's turn `i`: one `t` call of `code` (level 3).
pub fn bench_reply(target: Target, i: usize, code: &str) -> Value {
    let id = format!("call_{i}");
    let args = json!({"f": code, "a": {"trackingNumber": format!("7{i:010}")}});
    match target {
        Target::Anthropic => {
            json!({"id": format!("msg_{i}"), "type": "message", "role": "assistant",
            "model": "m", "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1},
            "content": [{"type": "tool_use", "id": id, "name": "t", "input": args}]})
        }
        Target::OpenAiChat => json!({"id": "c", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
            "content": null, "tool_calls": [{"id": id, "type": "function",
            "function": {"name": "t", "arguments": args.to_string()}}]}}]}),
        Target::OpenAiResponses => json!({"id": "r", "object": "response", "model": "m",
            "status": "completed", "output": [{"type": "function_call", "id": "fc", "call_id": id,
            "name": "t", "arguments": args.to_string()}]}),
        _ => {
            json!({"candidates": [{"index": 0, "finishReason": "STOP", "content": {"role": "model",
            "parts": [{"functionCall": {"name": "t", "args": args}}]}}]})
        }
    }
}

fn bench(turns: usize, target: Target) -> Result<()> {
    let tools: Value = serde_json::from_slice(&std::fs::read(
        root().join("tests/fixtures/real-mcp-tools.json"),
    )?)?;
    let mut chef = Chef::new(ChefConfig::default().with_level(Level::Three));
    chef.register_tools(chef_ir::load_tools(&tools)?.tools)?;
    chef.set_system_prompt(vec![Message::system("You track freight orders.")]);
    chef.push(Message::user("Warm-up."));
    chef.compile(target)?;
    let code = chef.tools().code_for("cancel_order").ok_or("no code")?;
    let replies: Vec<Vec<u8>> = (0..turns)
        .map(|i| serde_json::to_vec(&bench_reply(target, i, &code)))
        .collect::<std::result::Result<_, _>>()?;
    let start = Instant::now();
    let mut bytes = 0usize;
    for (i, reply) in replies.iter().enumerate() {
        chef.push(Message::user(format!("Turn {i}: cancel the next order.")));
        let payload = chef.compile(target)?;
        bytes += payload.body.len();
        let message = parse_reply(&chef, target, reply, &payload.names)?;
        let calls: Vec<ToolCall> = message.tool_calls().cloned().collect();
        chef.push(message);
        for call in calls {
            let Routed::Call(c) = chef.route(&call) else {
                return Err("the bench call was not routed".into());
            };
            chef.push(Message::tool_results(vec![ToolResult::text(
                c.id,
                "cancelled",
            )]));
        }
    }
    let elapsed = start.elapsed();
    println!(
        "rust {target}: {turns} turns, {:.1} us/turn, mean body {} bytes",
        elapsed.as_secs_f64() * 1e6 / turns as f64,
        bytes / turns.max(1)
    );
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag, turns, target] if flag == "--bench" => {
            let target = Target::from_name(target).ok_or("unknown target")?;
            bench(turns.parse()?, target)
        }
        [path] => script(path),
        _ => Err("usage: session_script SCRIPT.json | session_script --bench TURNS TARGET".into()),
    }
}
