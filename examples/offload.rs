//! Large tool results offloaded to the context store: a coding agent's session whose tools
//! return a 200 KB log, a one-line 60 KB JSON dump and small answers, run twice — without
//! and with an offload policy — and the model reading the log back in ranges.
//!
//! Run with `cargo run -p chef-examples --example offload`. Offline: the "model" is
//! scripted, and the store is a directory under the system's temporary directory.
//! `cargo test -p chef-examples` runs it too and fails if anything it shows stops holding.
//!
//! What it shows, each step checked:
//! 1. `offloads_mut().set_policy`: a result over 8,000 characters is stored whole in the store's
//!    `vfs` namespace (here a `FsBackend`) and replaced by its first and last lines with a
//!    marker giving its `context://vfs/…` address; small results are untouched.
//! 2. The window: o200k tokens of the compiled request on each turn, without and with the
//!    policy (the figures docs/PERFORMANCE.md quotes).
//! 3. The model finds the error with `context` `search` inside the entry, then reads the
//!    lines around it with `view` and `offset`/`limit` — through `route` and
//!    `handle_tool`, gated like every tool.
//! 4. The same output twice is stored once; `offloads_mut().cleanup` evicts by count, keeping
//!    what the history still points to.

mod common;

use std::sync::Arc;

use chef::{
    Chef, ChefConfig, Routed, ToolsMode,
    offload::{OffloadCaps, OffloadPolicy},
    store::{FsBackend, Namespace, StorageBackend},
};
use chef_ir::{Content, Message, Target, ToolCall, ToolDefinition, ToolResult};
use serde_json::json;

use common::{Error, ensure};

fn tools() -> Vec<ToolDefinition> {
    let path =
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]});
    vec![
        ToolDefinition::new("read_log", path.clone()).with_description("Read a log file."),
        ToolDefinition::new(
            "query_db",
            json!({"type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"]}),
        )
        .with_description("Run a read-only SQL query; rows come back as one JSON document."),
        ToolDefinition::new("stat_file", path).with_description("Size and mtime of a file."),
    ]
}

/// A 200 KB access log with one ERROR line.
fn access_log() -> String {
    let mut out = String::new();
    let mut i = 0;
    while out.len() < 200 * 1024 {
        if i == 2_017 {
            out.push_str("10:33:37 ERROR pool db-7 exhausted: 64/64 connections busy\n");
        }
        out.push_str(&format!(
            "10:{:02}:{:02} GET /api/items/{i} 200 {}ms\n",
            (i / 60) % 60,
            i % 60,
            (i * 13) % 700
        ));
        i += 1;
    }
    out
}

/// A 60 KB JSON document on one line.
fn rows() -> String {
    let rows: Vec<_> = (0..900)
        .map(|i| json!({"id": i, "sku": format!("SKU-{i:05}"), "stock": (i * 7) % 31}))
        .collect();
    serde_json::to_string(&json!({"rows": rows})).unwrap_or_default()
}

/// The scripted conversation: (tool, arguments, result) per turn.
fn script() -> Vec<(&'static str, serde_json::Value, String)> {
    vec![
        (
            "read_log",
            json!({"path": "/var/log/api.log"}),
            access_log(),
        ),
        ("query_db", json!({"sql": "select * from stock"}), rows()),
        (
            "stat_file",
            json!({"path": "/var/log/api.log"}),
            "204800 bytes, modified 10:41".to_owned(),
        ),
        (
            "read_log",
            json!({"path": "/var/log/api.log"}),
            access_log(),
        ),
    ]
}

fn tokens(body: &[u8]) -> usize {
    let text = String::from_utf8_lossy(body);
    chef_compress::tokens::count_o200k(&text).unwrap_or(0)
}

fn session(store: Arc<dyn StorageBackend>, policy: Option<OffloadPolicy>) -> Result<Chef, Error> {
    let mut chef =
        Chef::new(ChefConfig::default().with_tools_mode(ToolsMode::Unified)).with_store(store);
    chef.register_tools(tools())?;
    chef.set_system_prompt(vec![Message::system(
        "You are an on-call engineer's assistant.",
    )]);
    chef.offloads_mut().set_policy(policy);
    Ok(chef)
}

/// Runs the conversation; the o200k tokens of each turn's request.
async fn run_turns(chef: &mut Chef) -> Result<Vec<usize>, Error> {
    chef.push(Message::user("The API was slow at 10:33. Find out why."));
    let mut per_turn = Vec::new();
    for (i, (tool, args, result)) in script().into_iter().enumerate() {
        let id = format!("call_{i}");
        chef.push(Message::assistant_with(vec![Content::ToolCall(
            ToolCall::new(id.as_str(), tool, args),
        )]));
        chef.push(Message::tool_results(vec![
            ToolResult::text(id.as_str(), result).with_name(tool),
        ]));
        let payload = chef.compile_async(Target::Anthropic).await?;
        per_turn.push(tokens(&payload.body));
    }
    Ok(per_turn)
}

/// The text of the tool result in history message `at`.
fn result_text(chef: &Chef, at: usize) -> Result<String, Error> {
    let result = chef
        .history()
        .get(at)
        .and_then(|m| m.tool_results_iter().next())
        .ok_or("no tool result there")?;
    Ok(result.content.iter().filter_map(Content::as_text).collect())
}

/// Runs the example; returns what it printed.
pub fn run() -> Result<String, Error> {
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    runtime.block_on(run_async())
}

async fn call_context(chef: &mut Chef, id: &str, args: serde_json::Value) -> Result<String, Error> {
    chef.compile(Target::Anthropic)?;
    let Routed::Owned(call) = chef.route(&ToolCall::new(id, "context", args)) else {
        return Err("context is an owned tool".into());
    };
    let reply = chef.handle_tool(&call).await?;
    ensure(!reply.is_error, reply.text.clone())?;
    Ok(reply.text)
}

async fn run_async() -> Result<String, Error> {
    let mut out = String::new();
    let dir = tempfile::tempdir()?;
    let store: Arc<dyn StorageBackend> = Arc::new(FsBackend::open(dir.path())?);

    // 1–2. The same conversation without and with a policy.
    let mut plain = session(Arc::new(chef::store::MemoryBackend::new()), None)?;
    let without = run_turns(&mut plain).await?;
    let mut chef = session(Arc::clone(&store), Some(OffloadPolicy::chars(8_000)))?;
    let with = run_turns(&mut chef).await?;
    out.push_str("turn  request tokens without → with offloading\n");
    for (i, (a, b)) in without.iter().zip(&with).enumerate() {
        out.push_str(&format!("{:>4}  {a:>8} → {b:>6}\n", i + 1));
    }
    let (Some(with_last), Some(without_last)) = (with.last(), without.last()) else {
        return Err("no turns".into());
    };
    ensure(
        with_last * 10 < *without_last,
        "offloading saves most of the window",
    )?;
    let preview = result_text(&chef, 2)?;
    let uri: String = preview[preview.find("context://vfs/").ok_or("uri")?..]
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '.')
        .collect();
    out.push_str(&format!(
        "\nthe log in the window now starts:\n{}\n",
        preview.lines().next().unwrap_or("")
    ));
    ensure(
        result_text(&chef, 6)? == "204800 bytes, modified 10:41",
        "small results stay",
    )?;

    // 3. The model searches the entry, then views the lines around the hit.
    let hits = call_context(
        &mut chef,
        "s1",
        json!({"command": "search", "path": uri, "query": "error"}),
    )
    .await?;
    out.push_str(&format!("\ncontext search → {hits}\n"));
    ensure(
        hits.contains("  2018\t10:33:37 ERROR pool db-7 exhausted"),
        "search finds the line",
    )?;
    let view = call_context(
        &mut chef,
        "v1",
        json!({"command": "view", "path": uri, "offset": 2016, "limit": 4}),
    )
    .await?;
    out.push_str(&format!("context view offset 2016 limit 4 →\n{view}\n"));
    ensure(view.contains("lines 2016–2019 of "), "view reads a range")?;

    // 4. Stored once; cleanup keeps what the history points to.
    let vfs = Namespace::new("vfs")?;
    let stored = store.list(&vfs, "").await?.len();
    out.push_str(&format!(
        "\nentries in vfs: {stored} (the log was returned twice)\n"
    ));
    ensure(
        stored == 2,
        "the same log is stored once; the JSON dump is the other",
    )?;
    let report = chef
        .offloads_mut()
        .cleanup(&OffloadCaps::new().with_max_entries(0))
        .await?;
    out.push_str(&format!(
        "cleanup with max_entries 0: {} evicted, {} kept because the history points to them\n",
        report.evicted.len(),
        report.kept_referenced.len()
    ));
    ensure(
        report.evicted.is_empty() && report.kept_referenced.len() == 2,
        "referenced entries are kept",
    )?;
    print!("{out}");
    Ok(out)
}

fn main() -> Result<(), Error> {
    run().map(|_| ())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_example_runs_and_shows_what_it_claims() {
        let text = super::run().unwrap();
        assert!(
            text.contains("the log in the window now starts:\n[Tool result offloaded: "),
            "{text}"
        );
        assert!(text.contains("entries in vfs: 2"), "{text}");
    }
}
