//! Save a session to disk, resume it in a new process, and get byte-identical requests.
//!
//! Run with `cargo run -p chef-examples --example snapshot_resume`. Offline. The example
//! re-executes its own binary (`std::env::current_exe()` with the argument `resume PATH`):
//! that second process shares no memory with the first, builds a session with the same
//! configuration, loads the snapshot and compiles. `cargo test -p chef-examples` runs it
//! too (as a plain binary, `harness = false`) and fails if the processes disagree.
//!
//! What it shows, each step checked:
//! 1. A session with namespaces, a toolkit the model loaded, a blocklist, announcements,
//!    a memory the model wrote through `create_memory`, and a conversation, is saved to
//!    disk atomically (`Chef::save`).
//! 2. The first process compiles its next request for each of the four targets; the new
//!    process loads the file (`Chef::load`) and compiles the same four. Every request is
//!    byte-identical across the process boundary: the child writes its bytes to disk and
//!    prints their FNV-1a hashes, and the parent compares both.

mod common;

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use chef::{Channel, Chef, ChefConfig, Routed, ToolGroup, memory::Memory};
use chef_ir::{Content, Message, Target, ToolCall, ToolDefinition, ToolResult};
use serde_json::json;

use common::{Error, ensure};

/// FNV-1a, 64 bits: a small, fixed hash, the same in every process and on every machine.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The configuration both processes build their session with: a snapshot holds state,
/// not configuration.
fn new_session() -> Chef {
    Chef::new(ChefConfig::default().with_tool_change_announcements(true)).with_memory(Memory::new())
}

fn tool(name: &str, description: &str, param: &str) -> ToolDefinition {
    ToolDefinition::new(
        name,
        json!({"type": "object", "properties": {param: {"type": "string"}}, "required": [param]}),
    )
    .with_description(description)
}

/// The bytes of the next request for each target, compiled in a fixed order.
fn next_requests(chef: &mut Chef) -> Result<Vec<(Target, Vec<u8>)>, Error> {
    Target::ALL
        .into_iter()
        .map(|target| Ok((target, chef.compile(target)?.body)))
        .collect()
}

fn request_file(dir: &Path, target: Target) -> PathBuf {
    dir.join(format!("next-{}.json", target.as_str()))
}

/// The first process: build a session, take a few turns, save it, compile, and compare with
/// what a new process makes of the file.
async fn first_process(dir: &Path) -> Result<Vec<String>, Error> {
    let mut log = Vec::new();
    let mut chef = new_session();
    chef.tools_mut().register_namespaces(vec![ToolGroup::new(
        "file_ops",
        "Read and delete files in the project.",
        vec![
            tool("read_file", "Read a file.", "path"),
            tool("delete_file", "Delete a file.", "path"),
        ],
    )])?;
    chef.tools_mut().register_toolkits(vec![ToolGroup::new(
        "Weather",
        "Forecasts and current conditions.",
        vec![tool("get_weather", "Current weather for a city.", "city")],
    )])?;
    chef.set_system_prompt(vec![Message::system("You are a careful assistant.")]);
    chef.tools_mut().set_blocked(["delete_file"]);
    chef.announce("deadline", "Reply before 17:00.", Channel::UserTail);
    chef.push(Message::user(
        "Check Oslo's weather and remember that I use metric units.",
    ));

    // Two turns of a scripted model: load a toolkit, write a memory.
    let script = [
        ToolCall::new("c1", "load_toolkit", json!({"toolkit_name": "Weather"})),
        ToolCall::new(
            "c2",
            "create_memory",
            json!({"key": "units", "value": "metric"}),
        ),
    ];
    for call in script {
        chef.compile(Target::Anthropic)?;
        chef.push(Message::assistant_with(vec![Content::ToolCall(
            call.clone(),
        )]));
        let text = match chef.route(&call) {
            Routed::Owned(owned) => chef.handle_tool(&owned).await?.text,
            Routed::ToolkitLoaded { reply, .. } => reply,
            other => return Err(format!("unexpected outcome: {other:?}").into()),
        };
        log.push(format!("  {} -> {text}", call.name));
        chef.push(Message::tool_results(vec![ToolResult::text(call.id, text)]));
    }
    ensure(
        chef.tools().loaded_toolkits() == ["Weather"],
        "the toolkit is loaded",
    )?;
    ensure(
        chef.memory().is_some_and(|m| m.entries().count() == 1),
        "the memory was written",
    )?;

    let path = dir.join("session.json");
    chef.save(&path, Some("after two turns"))?;
    log.push(format!(
        "saved {} ({} bytes) at turn {}",
        path.display(),
        std::fs::metadata(&path)?.len(),
        chef.turn()
    ));
    let mine = next_requests(&mut chef)?;

    let output = Command::new(std::env::current_exe()?)
        .arg("resume")
        .arg(&path)
        .output()?;
    let stdout = String::from_utf8(output.stdout)?;
    ensure(
        output.status.success(),
        format!(
            "the resumed process failed ({}): {stdout}{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ),
    )?;
    let child_pid = stdout
        .lines()
        .find_map(|l| l.strip_prefix("resumed in process "))
        .ok_or_else(|| format!("no report from the resumed process: {stdout}"))?;
    log.push(format!(
        "process {} (this one) and process {child_pid} (resumed from the file):",
        std::process::id()
    ));
    for (target, bytes) in &mine {
        let hash = format!("{:016x}", fnv1a(bytes));
        let reported = format!("{} {} bytes fnv1a {hash}", target.as_str(), bytes.len());
        ensure(
            stdout.lines().any(|l| l == reported),
            format!("{target}: the resumed process reported otherwise: {stdout}"),
        )?;
        let theirs = std::fs::read(request_file(dir, *target))?;
        ensure(
            &theirs == bytes,
            format!("{target}: the next requests differ across processes"),
        )?;
        log.push(format!("  {reported}: byte-identical in both"));
    }
    Ok(log)
}

/// The second process: a fresh session with the same configuration, the snapshot loaded.
fn resumed_process(path: &Path) -> Result<(), Error> {
    let mut chef = new_session();
    chef.load(path)?;
    let dir = path.parent().ok_or("the snapshot has no directory")?;
    println!("resumed in process {}", std::process::id());
    for (target, bytes) in next_requests(&mut chef)? {
        std::fs::write(request_file(dir, target), &bytes)?;
        println!(
            "{} {} bytes fnv1a {:016x}",
            target.as_str(),
            bytes.len(),
            fnv1a(&bytes)
        );
    }
    Ok(())
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    if let (Some("resume"), Some(path)) = (args.get(1).map(String::as_str), args.get(2)) {
        return resumed_process(Path::new(path));
    }
    let dir = tempfile::tempdir()?;
    let log = tokio::runtime::Builder::new_current_thread()
        .build()?
        .block_on(first_process(dir.path()))?;
    for line in log {
        println!("{line}");
    }
    Ok(())
}
