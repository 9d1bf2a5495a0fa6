//! `chef demo [--level N] [--prune all|discover:K] [--target T] [--json]`: one screen that
//! shows what chef does for an agent, offline, on the bundled 149-tool corpus. By default
//! it shows the setting a real model did best with (`chef eval`, docs/EVAL.md): level 1 with
//! discovery — the 10 best-ranked real tools and `find_tools` (docs/DISCOVERY.md).
//!
//! A **scripted** model (a fixed list of the calls a model would make; no network, no
//! model) drives a short agent loop through [`chef::Chef::compile`] and the dispatch entry
//! point [`chef::Chef::route`]. Each step prints what went in and what came out; the demo
//! ends with a side-by-side table of the compression levels.

use std::fmt::Write as _;

use chef::{Chef, ChefConfig, PrunePolicy, Routed, ToolGroup, memory::Memory};
use chef_compress::{Level, MapStyle, Options};
use chef_ir::{Content, Message, Target, ToolCall, ToolDefinition, ToolResult};
use serde::Serialize;
use serde_json::{Value, json};

use clap::Args;

use crate::{
    args::{parse_level, parse_target},
    error::CliError,
    output,
};

/// The discovery setting's K when `--prune` does not say (the `chef serve` default).
pub(crate) const DEFAULT_DISCOVER_TOP_K: usize = 10;

/// The bundled corpus: 149 real tools from 14 MCP servers (toolgz fixtures, Apache-2.0).
const CORPUS: &str = include_str!("../../../tests/fixtures/real-mcp-tools.json");

/// The level-4 map a model wrote for the corpus (toolgz fixtures, Apache-2.0).
const COMPILED_MAP: &str = include_str!("../../../tests/fixtures/real-mcp-tools.compiled-map.json");

/// What one step of the demo showed.
#[derive(Debug, Serialize)]
struct Step {
    title: String,
    lines: Vec<String>,
}

/// One row of the closing table.
#[derive(Debug, Serialize)]
struct Row {
    setting: String,
    wire_tools: usize,
    chars: usize,
    o200k_tokens: usize,
    reclaimed_pct: f64,
    model_calls: usize,
    validates_arguments: &'static str,
}

#[derive(Debug, Serialize)]
struct Report {
    scripted_model: bool,
    level: u8,
    /// The discovery setting's K (`None`: every tool is offered).
    discover_top_k: Option<usize>,
    target: &'static str,
    steps: Vec<Step>,
    table: Vec<Row>,
}

fn demo_error(message: impl std::fmt::Display) -> CliError {
    CliError::Demo(message.to_string())
}

pub(crate) fn run(args: &DemoArgs) -> Result<(), CliError> {
    let report = build(args.level, args.discover_top_k(), args.target)?;
    if args.json {
        return output::json_line(&report);
    }
    output::text(&render_text(&report))
}

fn corpus() -> Result<(Vec<ToolDefinition>, Value), CliError> {
    let document: Value = serde_json::from_str(CORPUS).map_err(demo_error)?;
    let tools = chef_ir::load_tools(&document).map_err(demo_error)?.tools;
    Ok((tools, document))
}

/// The demo's request.
const REQUEST: &str = "Which customer sites are active? I want distances in kilometres from now on. And cancel order 999U123.";

/// The discovery row of the closing table: the first request of a session at level 1 with
/// discovery (top `top_k`) for the demo's request, compiled for Anthropic; what the model
/// reads about the tools is the request's `tools` and `system` (chef's preamble and the
/// discovery note; no system prompt is set).
fn discovery_row(
    tools: &[ToolDefinition],
    top_k: usize,
    original_tokens: usize,
) -> Result<Row, CliError> {
    let mut chef = Chef::new(config(Level::One, Some(top_k)));
    chef.register_tools(tools.to_vec()).map_err(demo_error)?;
    chef.push(Message::user(REQUEST));
    let payload = chef.compile(Target::Anthropic).map_err(demo_error)?;
    let body: Value = serde_json::from_slice(&payload.body).map_err(demo_error)?;
    let mut text = body.get("tools").map(Value::to_string).unwrap_or_default();
    if let Some(system) = body.get("system") {
        text.push_str(&system.to_string());
    }
    let o200k_tokens = tokens(&text)?;
    Ok(Row {
        setting: format!("level 1, discovery top {top_k}"),
        wire_tools: payload.meta.wire_tools.len(),
        chars: text.chars().count(),
        o200k_tokens,
        reclaimed_pct: reclaimed(original_tokens, o200k_tokens),
        model_calls: 1,
        validates_arguments: "chef + provider",
    })
}

fn tokens(text: &str) -> Result<usize, CliError> {
    chef_compress::tokens::count_o200k(text).ok_or(CliError::Tokenizer)
}

/// What the model reads about the tools: the wire tools as JSON plus the system preamble.
fn measure(tools: &[ToolDefinition], system: &str) -> Result<(usize, usize), CliError> {
    let mut text = serde_json::to_string(tools).map_err(demo_error)?;
    text.push_str(system);
    Ok((text.chars().count(), tokens(&text)?))
}

/// The compression options of `level`: at level 4 with the bundled compiled map (the
/// closing table's level-4 row reads the same map).
fn options(level: Level) -> Options {
    let options = Options::new().with_level(level);
    if level != Level::Four {
        return options;
    }
    // The map is bundled; were it unreadable, the empty map would surface as compress's
    // own "level 4 needs a compiled map" error, in the loop and in the table alike.
    let compiled: std::collections::BTreeMap<String, String> =
        serde_json::from_str(COMPILED_MAP).unwrap_or_default();
    options.with_compiled(compiled)
}

/// The session settings every step of the demo shares (a resumed session must be made
/// with the same ones to compile the same bytes).
fn config(level: Level, discover: Option<usize>) -> ChefConfig {
    let config = ChefConfig::default()
        .with_compress(options(level))
        .with_tool_change_announcements(true);
    match discover {
        Some(top_k) => config.with_prune(PrunePolicy::discover(top_k)),
        None => config,
    }
}

fn build(level: Level, asked: Option<usize>, target: Target) -> Result<Report, CliError> {
    let (tools, document) = corpus()?;
    let mut steps = Vec::new();
    // Discovery starts above K tools (`PrunePolicy::discovers`): a K that covers the whole
    // catalogue offers every tool and no find_tools, which is `--prune all`'s run.
    let discover = asked.filter(|&top_k| PrunePolicy::discover(top_k).discovers(tools.len()));

    // 1. The tools going in.
    let (chars, toks) = measure(&tools, "")?;
    let servers: std::collections::BTreeSet<&str> = document
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("server").and_then(Value::as_str))
        .collect();
    steps.push(Step {
        title: "Tools going in".into(),
        lines: vec![format!(
            "{} tools from {} MCP servers: {chars} characters, {toks} o200k tokens at the front of every request.",
            tools.len(),
            servers.len()
        )],
    });

    // 2. What compile turns them into at the chosen level.
    let compressed = chef_compress::compress(&tools, &options(level)).map_err(demo_error)?;
    let (c_chars, c_toks) = measure(compressed.tools(), compressed.system())?;
    let mut lines = vec![format!(
        "level {}: {} wire tool(s) [{}], {c_chars} characters, {c_toks} tokens ({:.1}% reclaimed).",
        level.as_u8(),
        compressed.tools().len(),
        compressed
            .tools()
            .iter()
            .take(4)
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        reclaimed(toks, c_toks)
    )];
    for line in compressed
        .system()
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('<'))
        .take(3)
    {
        lines.push(format!("  preamble: {}", clip(line, 96)));
    }
    if discover.is_some() && level.as_u8() >= 3 {
        lines.push(
            "  (the whole catalogue's map; under discovery each request's map holds only its ranked tools, with codes of its own)"
                .to_owned(),
        );
    }
    if let Some(top_k) = discover {
        let ranked = if top_k == 1 {
            "the tool ranked best for the request, by its real name".to_owned()
        } else {
            format!("the {top_k} tools ranked best for the request, by their real names")
        };
        lines.push(format!(
            "with discovery (the default; --prune all turns it off): {ranked}, plus find_tools — see step 3."
        ));
    } else if let Some(top_k) = asked {
        lines.push(format!(
            "--prune discover:{top_k} covers all {} tools: discovery starts above K tools, so every tool is offered by its real name and there is no find_tools; the demo runs as with --prune all.",
            tools.len()
        ));
    }
    steps.push(Step {
        title: "What compile turns them into".into(),
        lines,
    });

    // 3. The scripted agent loop.
    let mut chef = Chef::new(config(level, discover)).with_memory(Memory::new());
    chef.register_tools(tools.clone()).map_err(demo_error)?;
    chef.set_system_prompt(vec![Message::system(
        "You are the operations agent of a logistics company.",
    )]);
    chef.tools_mut().set_blocked(["cancel_order"]);
    chef.push(Message::user(REQUEST));

    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(CliError::Runtime)?;
    let mut turn_lines = Vec::new();
    let payload = chef.compile(target).map_err(demo_error)?;
    // The catalogue's tools, then chef's own (counted apart: the table below compares
    // settings of the catalogue's tools, with find_tools, and without the memory tools).
    let (own, catalogue): (Vec<&chef_ir::ToolName>, Vec<&chef_ir::ToolName>) =
        payload.meta.wire_tools.iter().partition(|n| {
            chef::owned::OWNED_NAMES.contains(&n.as_str()) || n.as_str() == chef::owned::FIND_TOOLS
        });
    let head: Vec<&str> = catalogue.iter().take(4).map(|n| n.as_str()).collect();
    let own = own
        .iter()
        .map(|n| n.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    turn_lines.push(format!(
        "request 1 for {target}: {} bytes, wire tools: {}{} ({} in all: {} of the catalogue's{})",
        payload.body.len(),
        head.join(", "),
        if catalogue.len() > head.len() {
            ", …"
        } else {
            ""
        },
        payload.meta.wire_tools.len(),
        catalogue.len(),
        if own.is_empty() {
            String::new()
        } else {
            format!(", and chef's own {own}")
        }
    ));

    let first_tools = payload.meta.wire_tools.clone();
    let mut script: Vec<ToolCall> = Vec::new();
    if discover.is_some() {
        // The ranked tools lack a distance tool: the model asks for one.
        script.push(ToolCall::new(
            "c0",
            chef::owned::FIND_TOOLS,
            json!({"query": "driving distance between two addresses", "limit": 2}),
        ));
    }
    // Level 3 looks the code up; level 4's map declares function names, so the model
    // calls by name at once.
    if level == Level::Three {
        script.push(ToolCall::new(
            "c0",
            "q",
            json!({"s": "sync the active sites data source"}),
        ));
    }
    // Under discovery a tool the list does not offer (the blocked cancel_order) is called by
    // its real name, as a model that knows of it would.
    let mut encoded =
        |id: &str, name: &str, args: Value| match encode(&mut chef, name, args.clone(), id) {
            Err(_) if discover.is_some() => Ok(ToolCall::new(id, name, args)),
            other => other,
        };
    let typo = encoded("c1", "active_locations", json!({"schema_onyl": true}))?;
    let good = encoded("c2", "active_locations", json!({"schema_only": true}))?;
    let memory = ToolCall::new(
        "c3",
        "create_memory",
        json!({"key": "units", "value": "kilometres", "description": "distance units the user wants"}),
    );
    let cancel = encoded("c4", "cancel_order", json!({"trackingNumber": "999U123"}))?;
    script.extend([typo, good, memory, cancel]);

    for call in &script {
        chef.push(Message::assistant_with(vec![Content::ToolCall(
            call.clone(),
        )]));
        let shown = format!("{}({})", call.name, clip(&call.arguments.to_string(), 70));
        let (reply, is_error, what) = match chef.route(call) {
            Routed::Call(c) => {
                let out = format!("[{} ran: 3 active sites returned]", c.name);
                (
                    out,
                    false,
                    format!("→ resolved to {}({}) → dispatched", c.name, c.arguments),
                )
            }
            Routed::Owned(owned) => {
                let r = runtime
                    .block_on(chef.handle_tool(&owned))
                    .map_err(demo_error)?;
                let what = format!("→ owned tool, answered by chef: {}", r.text);
                (r.text, r.is_error, what)
            }
            other => {
                let label = match &other {
                    Routed::Lookup { .. } if call.name.as_str() == chef::owned::FIND_TOOLS => {
                        "search answered by chef"
                    }
                    Routed::Lookup { .. } => "lookup answered by chef",
                    Routed::Blocked { .. } => "REFUSED by the gate",
                    Routed::Error { .. } => "error fed back to the model (recoverable)",
                    Routed::ToolkitLoaded { .. } => "toolkit loaded",
                    _ => "answered",
                };
                let reply = other.reply().unwrap_or_default().to_owned();
                let what = format!(
                    "→ {label}: {}",
                    clip(reply.lines().next().unwrap_or(""), 110)
                );
                (reply, other.is_error(), what)
            }
        };
        turn_lines.push(format!("model calls {shown}"));
        turn_lines.push(format!("  {what}"));
        let result = if is_error {
            ToolResult::error(call.id.clone(), reply)
        } else {
            ToolResult::text(call.id.clone(), reply)
        };
        chef.push(Message::tool_results(vec![result]));
    }
    let payload = chef.compile(target).map_err(demo_error)?;
    if discover.is_some() {
        let found: Vec<&str> = chef
            .tools()
            .found()
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        turn_lines.push(format!(
            "request 2: the search's finds are callable by their real names: {}; request 1's tool list is its prefix (cache-stable): {}",
            found.join(", "),
            payload.meta.wire_tools.starts_with(&first_tools)
        ));
    }
    let body = String::from_utf8_lossy(&payload.body);
    let gate = if discover.is_some() {
        // Under discovery a blocked tool is not offered at all.
        format!(
            "blocked cancel_order offered: {}",
            payload
                .meta
                .wire_tools
                .iter()
                .any(|n| n.as_str() == "cancel_order")
        )
    } else {
        format!(
            "tool list unchanged by the blocklist: {}",
            payload.meta.wire_tools.len()
                == chef
                    .compile(target)
                    .map_err(demo_error)?
                    .meta
                    .wire_tools
                    .len()
        )
    };
    turn_lines.push(format!(
        "request 2: {} bytes; {gate}; memory 'units' in the request: {}; blocked tools announced: {}",
        payload.body.len(),
        body.contains("kilometres"),
        body.contains("cancel_order") && body.contains("blocked")
    ));
    steps.push(Step {
        title: "A scripted model drives the loop (no model, no network)".into(),
        lines: turn_lines,
    });

    // 4. Namespaces and toolkits: the gate holds through a namespace and a dispatcher code.
    steps.push(two_layer(level, target, &tools, &document)?);

    // 5. Snapshot to disk, load, byte-identical next request.
    let dir = tempfile::tempdir().map_err(|e| demo_error(format!("temp dir: {e}")))?;
    let path = dir.path().join("session.json");
    chef.save(&path, Some("demo")).map_err(demo_error)?;
    let next = chef.compile(target).map_err(demo_error)?.body;
    let mut resumed = Chef::new(config(level, discover)).with_memory(Memory::new());
    resumed.load(&path).map_err(demo_error)?;
    let again = resumed.compile(target).map_err(demo_error)?.body;
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    steps.push(Step {
        title: "Snapshot to disk and back".into(),
        lines: vec![format!(
            "saved {size} bytes atomically; a new session loaded it; next request byte-identical: {}",
            next == again
        )],
    });

    // 6. Overflow: the same session in a small context window, summarised by a scripted
    //    summariser; the stored history is replaced and the old turns archived.
    steps.push(overflow_step(level, discover, target, &path, &runtime)?);

    Ok(Report {
        scripted_model: true,
        level: level.as_u8(),
        discover_top_k: discover,
        target: target.as_str(),
        steps,
        table: table(&tools, toks, discover)?,
    })
}

/// A summariser that writes what a model would, from the span it is given: the requests
/// and the tools called. Deterministic, offline.
struct ScriptedSummarizer;

#[async_trait::async_trait]
impl chef::Summarizer for ScriptedSummarizer {
    async fn summarize(
        &self,
        request: &chef::SummaryRequest,
    ) -> Result<String, chef::SummarizerError> {
        let asks: Vec<String> = request
            .span
            .iter()
            .filter(|m| m.role == chef_ir::Role::User)
            .map(|m| clip(&m.text(), 80))
            .collect();
        let calls: Vec<String> = request
            .span
            .iter()
            .flat_map(Message::tool_calls)
            .map(|c| c.name.as_str().to_owned())
            .collect();
        Ok(format!(
            "<analysis>scripted</analysis><summary>Goal: {}\nTools called: {}.</summary>",
            asks.join(" / "),
            calls.join(", ")
        ))
    }
}

fn overflow_step(
    level: Level,
    discover: Option<usize>,
    target: Target,
    snapshot: &std::path::Path,
    runtime: &tokio::runtime::Runtime,
) -> Result<Step, CliError> {
    let window = 500;
    let mut chef = Chef::new(
        config(level, discover)
            .with_overflow(chef::OverflowConfig::default().with_context_window(window)),
    )
    .with_memory(Memory::new())
    .with_summarizer(std::sync::Arc::new(ScriptedSummarizer));
    chef.load(snapshot).map_err(demo_error)?;
    chef.push(Message::user(
        "Thanks. Now the revenue for partner ACME last month.",
    ));
    let before_messages = chef.history().len();
    let budget = chef.budget();
    let outcome = runtime.block_on(chef.overflow()).map_err(demo_error)?;
    let after = chef.budget().current;
    let archive = match &outcome {
        chef::OverflowOutcome::Summarized { archive, .. } => archive.clone().unwrap_or_default(),
        _ => String::new(),
    };
    let mut lines = vec![
        format!(
            "context window {window} tokens, trigger at 70%: the history takes {} tokens ({} messages), over: {}",
            budget.current,
            before_messages,
            budget.is_over()
        ),
        format!(
            "overflow ran the (scripted) summariser: history {before_messages} → {} messages, {} → {after} tokens; later requests send the summary, not the old turns",
            chef.history().len(),
            budget.current
        ),
    ];
    if let Some(first) = chef.history().first() {
        lines.push(format!(
            "  new first message: {}",
            clip(first.text().lines().nth(3).unwrap_or_default(), 100)
        ));
    }
    lines.push(format!(
        "  the replaced messages were archived first, readable by the model at {archive}"
    ));
    let next = chef.compile(target).map_err(demo_error)?;
    lines.push(format!(
        "  next request for {target}: {} bytes, context window {}",
        next.body.len(),
        next.meta.window
    ));
    Ok(Step {
        title: "Overflow: summarise to fit, keep the original".into(),
        lines,
    })
}

fn two_layer(
    level: Level,
    target: Target,
    tools: &[ToolDefinition],
    document: &Value,
) -> Result<Step, CliError> {
    let server_of = |name: &str| -> Option<String> {
        document.as_array()?.iter().find_map(|t| {
            (t.get("name")?.as_str()? == name)
                .then(|| t.get("server").and_then(Value::as_str).map(str::to_owned))
                .flatten()
        })
    };
    let group = |server: &str| -> Vec<ToolDefinition> {
        tools
            .iter()
            .filter(|t| server_of(t.name.as_str()).as_deref() == Some(server))
            .cloned()
            .collect()
    };
    let mut chef = Chef::new(config(level, None));
    chef.tools_mut()
        .register_namespaces(vec![ToolGroup::new(
            "orders",
            "FragilePAK order operations.",
            group("fragilepak-api-mcp"),
        )])
        .map_err(demo_error)?;
    chef.tools_mut()
        .register_toolkits(vec![ToolGroup::new(
            "Maps",
            "Google Maps: geocoding, routes, distance matrices, places.",
            group("google-maps-mcp"),
        )])
        .map_err(demo_error)?;
    chef.tools_mut().set_blocked(["cancel_order"]);
    chef.push(Message::user("Cancel 999U123, then plan a route."));
    let payload = chef.compile(target).map_err(demo_error)?;
    let mut lines = vec![format!(
        "two-layer mode: the 10 order tools are one namespace tool `orders`, the 10 Maps tools wait behind `load_toolkit`; wire tools: {}",
        summarize_names(&payload.meta.wire_tools)
    )];
    let action = json!({"action": "cancel_order", "args": {"trackingNumber": "999U123"}});
    let mut attempts = vec![ToolCall::new("n1", "orders", action.clone())];
    if let Some(code) = chef.tools().code_for("orders") {
        attempts.push(ToolCall::new("n2", "t", json!({"f": code, "a": action})));
    }
    for call in attempts {
        let routed = chef.route(&call);
        lines.push(format!(
            "model calls {}({}) → {}",
            call.name,
            clip(&call.arguments.to_string(), 60),
            match &routed {
                Routed::Blocked { reply, .. } => format!("REFUSED: {reply}"),
                other => format!("{other:?}"),
            }
        ));
    }
    let load = encode(
        &mut chef,
        "load_toolkit",
        json!({"toolkit_name": "Maps"}),
        "n3",
    )?;
    let routed = chef.route(&load);
    lines.push(format!(
        "model calls load_toolkit(Maps) → {}",
        clip(routed.reply().unwrap_or_default(), 110)
    ));
    chef.push(Message::tool_results(vec![ToolResult::text(
        "n3",
        routed.reply().unwrap_or_default(),
    )]));
    let payload = chef.compile(target).map_err(demo_error)?;
    let body = String::from_utf8_lossy(&payload.body);
    lines.push(format!(
        "next request: {} wire tools; the load is announced to the model: {}",
        payload.meta.wire_tools.len(),
        body.contains("Toolkit \\\"Maps\\\" is loaded")
    ));
    Ok(Step {
        title: "Namespaces, toolkits and the gate".into(),
        lines,
    })
}

fn table(
    tools: &[ToolDefinition],
    original_tokens: usize,
    discover: Option<usize>,
) -> Result<Vec<Row>, CliError> {
    let settings: Vec<(String, Options, usize, &'static str)> = vec![
        (
            "level 0 (as-is)".into(),
            Options::new().with_level(Level::Zero),
            1,
            "provider",
        ),
        (
            "level 1 (signatures)".into(),
            Options::new().with_level(Level::One),
            1,
            "provider",
        ),
        (
            "level 3 (dispatcher + map)".into(),
            Options::new()
                .with_level(Level::Three)
                .with_map_style(MapStyle::NameRequired),
            2,
            "chef (resolve)",
        ),
        (
            "level 3, lookalike-free map".into(),
            Options::new()
                .with_level(Level::Three)
                .with_map_style(MapStyle::Distinct),
            2,
            "chef (resolve)",
        ),
        (
            "level 4 (bundled compiled map)".into(),
            options(Level::Four),
            1,
            "chef (resolve)",
        ),
    ];
    let mut rows = vec![discovery_row(
        tools,
        discover.unwrap_or(DEFAULT_DISCOVER_TOP_K),
        original_tokens,
    )?];
    for (setting, options, model_calls, validates) in settings {
        let c = chef_compress::compress(tools, &options).map_err(demo_error)?;
        let (chars, toks) = measure(c.tools(), c.system())?;
        rows.push(Row {
            setting,
            wire_tools: c.tools().len(),
            chars,
            o200k_tokens: toks,
            reclaimed_pct: reclaimed(original_tokens, toks),
            model_calls,
            validates_arguments: validates,
        });
    }
    Ok(rows)
}

fn reclaimed(before: usize, after: usize) -> f64 {
    if before == 0 {
        return 0.0;
    }
    let pct = 100.0 * (1.0 - after as f64 / before as f64);
    (pct * 10.0).round() / 10.0
}

fn encode(chef: &mut Chef, name: &str, args: Value, id: &str) -> Result<ToolCall, CliError> {
    let call = chef
        .tools()
        .encode_call(name, args)
        .ok_or_else(|| demo_error(format!("cannot encode a call of {name}")))?;
    Ok(ToolCall::new(id, call.name, call.arguments))
}

fn summarize_names(names: &[chef_ir::ToolName]) -> String {
    if names.len() <= 6 {
        return names
            .iter()
            .map(|n| n.as_str())
            .collect::<Vec<_>>()
            .join(", ");
    }
    let head: Vec<&str> = names.iter().take(4).map(|n| n.as_str()).collect();
    format!("{}, … ({} in all)", head.join(", "), names.len())
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max).collect();
    out.push('…');
    out
}

fn render_text(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "chef demo — level {}, target {}. The model below is SCRIPTED: a fixed list of the calls a model would make. Offline; nothing is sent anywhere.\n",
        report.level, report.target
    );
    for (i, step) in report.steps.iter().enumerate() {
        let _ = writeln!(out, "{}. {}", i + 1, step.title);
        for line in &step.lines {
            let _ = writeln!(out, "   {line}");
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "{:<32} {:>10} {:>9} {:>8} {:>10} {:>11}  who validates arguments",
        "setting", "wire tools", "chars", "tokens", "reclaimed", "model calls"
    );
    for row in &report.table {
        let _ = writeln!(
            out,
            "{:<32} {:>10} {:>9} {:>8} {:>9.1}% {:>11}  {}",
            row.setting,
            row.wire_tools,
            row.chars,
            row.o200k_tokens,
            row.reclaimed_pct,
            row.model_calls,
            row.validates_arguments
        );
    }
    let _ = writeln!(
        out,
        "\nTokens are o200k_base estimates of the tools + preamble, not a provider's own count. \"model calls\" is what the scripted task needs at that level (level 3 adds a q lookup; level 4's map shows real names; with discovery, a tool the ranked list lacks costs one find_tools call). The discovery row is the demo's first request (its ranked tools, find_tools and chef's note). On a real model, discovery is the setting that chose best (docs/EVAL.md)."
    );
    out
}

#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Compression level for the agent loop (4: with the bundled compiled map).
    #[arg(long, value_name = "0|1|2|3|4", default_value = "1", value_parser = parse_level)]
    pub(crate) level: Level,
    /// Which tools each request offers: `discover:K` (the K tools ranked best for the
    /// request, by their real names, plus `find_tools`; the default at levels 0 and 1,
    /// with K = 10) or `all` (every tool; the default at levels 2 and 3).
    #[arg(long, value_name = "all|discover:K", value_parser = parse_demo_prune)]
    pub(crate) prune: Option<DemoPrune>,
    /// Provider the requests are compiled for.
    #[arg(long, value_name = "anthropic|openai|openai-responses|gemini", default_value = "anthropic", value_parser = parse_target)]
    pub(crate) target: chef_ir::Target,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `chef demo --prune`: every tool, or discovery with its K.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DemoPrune {
    All,
    Discover(usize),
}

impl DemoArgs {
    /// The discovery setting's K for this run (`None`: every tool is offered).
    pub(crate) fn discover_top_k(&self) -> Option<usize> {
        match self.prune {
            Some(DemoPrune::All) => None,
            Some(DemoPrune::Discover(k)) => Some(k),
            None => (self.level.as_u8() <= 1).then_some(DEFAULT_DISCOVER_TOP_K),
        }
    }
}

/// A `chef demo --prune` value clap cannot take.
#[derive(Debug, thiserror::Error)]
#[error("--prune {given:?}: {why}")]
struct DemoPruneError {
    given: String,
    why: &'static str,
}

fn parse_demo_prune(s: &str) -> Result<DemoPrune, DemoPruneError> {
    if s == "all" {
        return Ok(DemoPrune::All);
    }
    let refuse = |why| DemoPruneError {
        given: s.to_owned(),
        why,
    };
    let k = s
        .strip_prefix("discover:")
        .ok_or_else(|| refuse("expected all or discover:K"))?;
    match k.parse::<usize>() {
        Ok(k) if k >= 1 => Ok(DemoPrune::Discover(k)),
        Ok(_) => Err(refuse("K is at least 1")),
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => {
            Err(refuse("K is too large (the demo has 149 tools)"))
        }
        Err(_) => Err(refuse("K is a whole number (discover:10)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_shows_every_step_at_every_level() {
        let settings = [
            (Level::Zero, None),
            (Level::One, None),
            (Level::Two, None),
            (Level::Three, None),
            (Level::Zero, Some(10)),
            (Level::One, Some(10)),
            (Level::One, Some(3)),
        ];
        for (level, discover) in settings {
            let report = build(level, discover, Target::Anthropic).unwrap();
            let text = render_text(&report);
            for step in [
                "SCRIPTED",
                "REFUSED",
                "Created context://memory/units.",
                "error fed back to the model",
                "next request byte-identical: true",
                "the load is announced to the model: true",
                "over: true",
                "archive/window-0.json",
            ] {
                assert!(text.contains(step), "{step:?} missing at {level:?}: {text}");
            }
            if discover.is_some() {
                for step in [
                    "search answered by chef",
                    "callable by their real names: ",
                    "(cache-stable): true",
                ] {
                    assert!(text.contains(step), "{step:?} missing at {level:?}: {text}");
                }
            }
        }
    }
}
