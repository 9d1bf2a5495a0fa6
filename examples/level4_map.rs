//! Level 4: the bundled 149-tool catalogue with a model-compiled map, against level 3.
//!
//! Run with `cargo run -p chef-examples --example level4_map`. Offline: the compiled map is
//! the bundled `tests/fixtures/real-mcp-tools.compiled-map.json` (a model wrote it once;
//! `compile_tools` with your own completer writes one for your catalogue).
//! `cargo test -p chef-examples` runs it too and fails if anything it shows stops holding.
//!
//! What it shows, each step checked:
//! 1. Level 3 (mechanical map of codes) and level 4 (compiled `def` lines, real names):
//!    wire tools, characters, reclaimed %, and how many map lines share their body with
//!    another tool (lookalikes a model can confuse).
//! 2. A call encoded at level 4 and resolved back to the real tool with validated
//!    arguments; a bad argument comes back as text for the model.
//! 3. A schema changes under the map: the compiled line no longer verifies, so it is
//!    dropped (the tool falls back to its bare signature) and reported as stale — never
//!    sent to the model out of date.

mod common;

use std::collections::BTreeMap;

use chef_compress::{Compressed, Level, Options, Resolution, compress};
use chef_ir::ToolDefinition;
use serde_json::{Value, json};

use common::{Error, ensure};

const TOOLS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/real-mcp-tools.json"
);
const MAP: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/real-mcp-tools.compiled-map.json"
);

/// The tool whose schema the example changes.
const CHANGED: &str = "active_locations";

fn describe(label: &str, c: &Compressed) -> String {
    let s = c.stats();
    format!(
        "{label:<9} {:>3} tools -> {} wire tools, {:>6} -> {:>5} chars ({:>4.1}% reclaimed), ambiguous map lines {}",
        s.tool_count,
        s.wire_tool_count,
        s.original_chars,
        s.compressed_chars,
        s.saved_pct,
        s.ambiguous_map_lines.unwrap_or(0)
    )
}

/// The map line the model sees for `name` (the system preamble's line naming it).
fn map_line<'a>(c: &'a Compressed, name: &str) -> Option<&'a str> {
    let needle = format!("def {name}(");
    c.system().lines().find(|l| l.contains(&needle))
}

/// What a call resolved to, as one line.
fn resolution(r: Resolution) -> String {
    match r {
        Resolution::Call { name, args } => format!("call {name}({args})"),
        Resolution::Meta { result, .. } => {
            format!("lookup: {}", result.lines().next().unwrap_or(""))
        }
        Resolution::Error(e) => format!("error for the model: {}", e.message()),
    }
}

/// The run's findings, for the test to check.
#[derive(Debug)]
struct Findings {
    log: Vec<String>,
    ambiguous: (usize, usize),
    call: String,
    bad_call: String,
    stale: Vec<String>,
}

fn run() -> Result<Findings, Error> {
    let mut tools = chef_ir::load_tools_from_str(&std::fs::read_to_string(TOOLS)?)?.tools;
    let map: BTreeMap<String, String> = serde_json::from_str(&std::fs::read_to_string(MAP)?)?;
    let mut log = vec![format!(
        "{} tools, compiled map of {} lines",
        tools.len(),
        map.len()
    )];

    let l3 = compress(&tools, &Options::new().with_level(Level::Three))?;
    let l4 = compress(
        &tools,
        &Options::new()
            .with_level(Level::Four)
            .with_compiled(map.clone()),
    )?;
    log.push(describe("level 3", &l3));
    log.push(describe("level 4", &l4));
    let ambiguous = (
        l3.stats().ambiguous_map_lines.unwrap_or(0),
        l4.stats().ambiguous_map_lines.unwrap_or(0),
    );
    ensure(
        l4.stats()
            .stale_compiled_tools
            .as_ref()
            .is_some_and(Vec::is_empty),
        "the bundled map verifies against the bundled tools",
    )?;
    ensure(
        ambiguous.1 < ambiguous.0,
        format!("the compiled map has fewer lookalike lines: {ambiguous:?}"),
    )?;
    let line = map_line(&l4, CHANGED).ok_or("no level-4 line for the tool")?;
    log.push(format!("level-4 line: {line}"));
    let compiled_doc = map
        .get(CHANGED)
        .and_then(|l| l.split_once("):"))
        .map(|(_, doc)| doc.to_owned())
        .ok_or("the map has no line for the tool")?;
    ensure(
        line.contains(&compiled_doc),
        "level 4 sends the compiled docstring",
    )?;

    // A model's call at level 4, and back.
    let encoded = l4.encode_call(CHANGED, json!({"schema_only": true}))?;
    log.push(format!("model writes {}({})", encoded.name, encoded.args));
    let call = resolution(l4.resolve(&encoded.name, &encoded.args));
    log.push(format!("  -> {call}"));
    ensure(
        call == format!("call {CHANGED}({{\"schema_only\":true}})"),
        format!("resolved: {call}"),
    )?;
    let mut bad_args = encoded.args.clone();
    if let Some(a) = bad_args.get_mut("a") {
        *a = json!({"schema_only": "yes please"});
    }
    let bad_call = resolution(l4.resolve(&encoded.name, &bad_args));
    log.push(format!(
        "model writes {}({bad_args})\n  -> {bad_call}",
        encoded.name
    ));
    ensure(
        bad_call.starts_with("error for the model:"),
        "a bad argument is refused with a message",
    )?;

    // The tool's schema changes under the map: a new required parameter.
    let tool = tools
        .iter_mut()
        .find(|t| t.name == CHANGED)
        .ok_or("the tool is not in the catalogue")?;
    add_required_param(tool, "region")?;
    let after = compress(
        &tools,
        &Options::new().with_level(Level::Four).with_compiled(map),
    )?;
    let stale = after
        .stats()
        .stale_compiled_tools
        .clone()
        .unwrap_or_default();
    log.push(describe("changed", &after));
    log.push(format!("stale compiled lines: {stale:?}"));
    let line = map_line(&after, CHANGED).ok_or("no level-4 line after the change")?;
    log.push(format!("level-4 line now: {line}"));
    ensure(
        stale.len() == 1 && stale.iter().all(|s| s.starts_with(CHANGED)),
        "exactly the changed tool's line is stale",
    )?;
    ensure(
        !line.contains(&compiled_doc) && line.contains("region"),
        "the stale line is dropped for the bare signature, which has the new parameter",
    )?;
    ensure(
        after.stats().uncompiled_tools == Some(1),
        "one tool is rendered without its compiled docstring",
    )?;
    Ok(Findings {
        log,
        ambiguous,
        call,
        bad_call,
        stale,
    })
}

fn add_required_param(tool: &mut ToolDefinition, name: &str) -> Result<(), Error> {
    let schema = tool
        .input_schema
        .as_object_mut()
        .ok_or("the schema is not an object")?;
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        props.insert(
            name.to_owned(),
            json!({"type": "string", "description": "Region code."}),
        );
    }
    match schema.get_mut("required") {
        Some(Value::Array(required)) => required.push(json!(name)),
        _ => {
            schema.insert("required".to_owned(), json!([name]));
        }
    }
    Ok(())
}

fn main() -> Result<(), Error> {
    let f = run()?;
    for line in &f.log {
        println!("{line}");
    }
    println!(
        "\nin short: lookalike map lines {} at level 3, {} at level 4; {}; {}; stale: {}",
        f.ambiguous.0,
        f.ambiguous.1,
        f.call,
        f.bad_call,
        f.stale.join(", ")
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn level_4_reads_real_names_resolves_calls_and_drops_stale_lines() {
        let f = super::run().unwrap();
        assert!(
            f.ambiguous.0 > 0 && f.ambiguous.1 < f.ambiguous.0,
            "{:?}",
            f.ambiguous
        );
        assert_eq!(f.call, r#"call active_locations({"schema_only":true})"#);
        assert!(f.bad_call.contains("schema_only"), "{}", f.bad_call);
        assert_eq!(f.stale.len(), 1);
        assert!(f.stale[0].contains("region"), "{:?}", f.stale);
        assert!(
            f.log[0].starts_with("149 tools, compiled map of "),
            "{:?}",
            f.log
        );
    }
}
