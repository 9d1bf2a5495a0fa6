//! Fuzz harnesses on stable: proptest drives every parser and resolver that sees
//! untrusted bytes with arbitrary bytes, arbitrary JSON and mutated valid documents. The
//! only property is "returns (Ok or a typed Err), never panics".
//!
//! Each harness runs twice: a short version in the default suite, and an `#[ignore]`d
//! `fuzz_*` version with many more cases:
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-shared cargo test --release -p chef --test it -- --ignored fuzz
//! ```
//!
//! The long versions print their case count and duration (run with `--nocapture`).

use std::fmt::Debug;
use std::time::Instant;

use chef::ir::{NameRule, ToolDefinition, ToolName, WireNames};
use chef::{Chef, ChefConfig, SessionState};
use chef_compress::{Level, Options};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value};

use crate::fixtures::{fixture_text, real_tools as fixture_tools};

/// Keys the parsers look for, so generated objects reach past the first `match`.
const KEYS: &[&str] = &[
    "type",
    "properties",
    "required",
    "items",
    "$ref",
    "$defs",
    "definitions",
    "anyOf",
    "oneOf",
    "allOf",
    "enum",
    "const",
    "name",
    "description",
    "inputSchema",
    "input_schema",
    "parameters",
    "function",
    "tools",
    "content",
    "text",
    "tool_use",
    "id",
    "input",
    "role",
    "stop_reason",
    "usage",
    "choices",
    "message",
    "tool_calls",
    "arguments",
    "finish_reason",
    "output",
    "call_id",
    "function_call",
    "candidates",
    "parts",
    "functionCall",
    "args",
    "finishReason",
    "thoughtSignature",
    "additionalProperties",
    "default",
    "format",
    "minimum",
    "maximum",
    "pattern",
    "object",
    "string",
    "array",
    "integer",
    "number",
    "boolean",
    "null",
    "#/$defs/a",
    "#",
    "format",
    "version",
    "state",
    "label",
    "history",
    "tools",
    "memory",
    "assistant",
    "user",
    "tool",
    "stop",
    "end_turn",
    "a",
    "b",
    "x",
];

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(KEYS).prop_map(str::to_owned),
        1 => ".{0,8}",
    ]
}

/// Arbitrary JSON, biased toward the vocabulary of tool files, schemas and replies.
fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f)
            .map(Value::Number)),
        key().prop_map(Value::String),
        ".{0,24}".prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 96, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..8)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Bytes for a parser: raw noise, generated JSON, or a valid `seed` document with one
/// byte changed, a cut, or a splice of generated JSON text.
fn bytes(seeds: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    let seeds = std::sync::Arc::new(seeds);
    let mutate = {
        let seeds = seeds.clone();
        (
            any::<prop::sample::Index>(),
            any::<prop::sample::Index>(),
            any::<u8>(),
            0u8..3,
        )
            .prop_map(move |(which, at, byte, how)| {
                let mut s = which.get(&seeds).clone();
                if s.is_empty() {
                    return s;
                }
                let i = at.index(s.len());
                match how {
                    0 => s[i] = byte,
                    1 => s.truncate(i),
                    _ => {
                        s.remove(i);
                    }
                }
                s
            })
    };
    let splice = {
        let seeds = seeds.clone();
        (
            any::<prop::sample::Index>(),
            any::<prop::sample::Index>(),
            json(),
        )
            .prop_map(move |(which, at, v)| {
                let mut s = which.get(&seeds).clone();
                let i = at.index(s.len() + 1);
                let tail = s.split_off(i);
                s.extend(serde_json::to_vec(&v).unwrap());
                s.extend(tail);
                s
            })
    };
    prop_oneof![
        1 => any::<Vec<u8>>(),
        3 => json().prop_map(|v| serde_json::to_vec(&v).unwrap()),
        3 => mutate,
        2 => splice,
        1 => prop::sample::select(seeds.to_vec()),
    ]
}

/// Runs `test` on `cases` values of `strategy`; a panic fails with the shrunk input.
fn run<S>(name: &str, cases: u32, strategy: S, test: impl Fn(S::Value))
where
    S: Strategy,
    S::Value: Debug,
{
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 2_000,
        ..Config::default()
    };
    let start = Instant::now();
    let mut runner = TestRunner::new(config);
    let result = runner.run(&strategy, |v| {
        test(v);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
    println!(
        "fuzz {name}: {cases} cases in {:.1} s",
        start.elapsed().as_secs_f64()
    );
}

const SHORT: u32 = 512;

/// One fuzz target as two tests: `$short` runs `$few` cases in the default suite; `$long`,
/// ignored, runs `$many`. `$body` runs the target for `$cases` cases.
macro_rules! fuzz_tests {
    ($short:ident, $long:ident, [$few:expr, $many:expr], |$cases:ident| $body:block) => {
        #[test]
        fn $short() {
            let $cases: u32 = $few;
            $body
        }

        #[test]
        #[ignore = "long fuzz run: cargo test --release -- --ignored fuzz"]
        fn $long() {
            let $cases: u32 = $many;
            $body
        }
    };
}

// ---- tool-file loading -------------------------------------------------------------

fn tool_file_seeds() -> Vec<Vec<u8>> {
    vec![
        fixture_text("real-mcp-tools.json").into_bytes(),
        br#"[{"name":"a","inputSchema":{"type":"object"}},{"type":"function","function":{"name":"b","parameters":{"type":"object","properties":{"x":{"type":"string"}}}}}]"#.to_vec(),
        br#"{"tools":[{"name":"c","input_schema":{"type":"object","required":["q"],"properties":{"q":{"type":"integer"}}}}]}"#.to_vec(),
    ]
}

fn load_tool_file(bytes: Vec<u8>) {
    let text = String::from_utf8_lossy(&bytes);
    let _ = chef::ir::load_tools_from_str(&text);
}

fuzz_tests!(
    tool_file_loading_never_panics,
    fuzz_tool_file_loading,
    [SHORT, 200_000],
    |cases| { run("load", cases, bytes(tool_file_seeds()), load_tool_file) }
);

// ---- schema normalisation ----------------------------------------------------------

fn normalise(schema: Value) {
    if let Ok(n) = chef_compress::validate::normalise_schema("t", &schema) {
        // A normalised schema validates arguments without panicking either.
        let _ = format!("{n:?}");
    }
}

fn schemas() -> impl Strategy<Value = Value> {
    let seeds: Vec<Value> = fixture_tools()
        .into_iter()
        .map(|t| t.input_schema)
        .collect();
    prop_oneof![
        3 => json(),
        2 => prop::sample::select(seeds),
        // `$ref` chains and cycles into generated definitions.
        2 => (prop::collection::vec(json(), 0..4), json()).prop_map(|(defs, root)| {
            let mut defs_map = Map::new();
            for (i, d) in defs.into_iter().enumerate() {
                defs_map.insert(format!("d{i}"), d);
            }
            defs_map.insert("loop".into(), serde_json::json!({"$ref": "#/$defs/loop"}));
            serde_json::json!({
                "type": "object",
                "$defs": defs_map,
                "properties": {"a": {"$ref": "#/$defs/d0"}, "b": {"$ref": "#/$defs/loop"}, "c": root},
            })
        }),
    ]
}

fuzz_tests!(
    schema_normalisation_never_panics,
    fuzz_schema_normalisation,
    [SHORT, 200_000],
    |cases| { run("normalise", cases, schemas(), normalise) }
);

// ---- compress + resolve ------------------------------------------------------------

const LEVELS: [Level; 4] = [Level::Zero, Level::One, Level::Two, Level::Three];

/// `(name, schema)` tools and `(name, arguments)` calls.
type ToolSet = (Vec<(String, Value)>, Vec<(String, Value)>);

/// Arbitrary tool sets through `compress` at every level, then arbitrary calls.
fn tool_sets() -> impl Strategy<Value = ToolSet> {
    let name = prop_oneof![
        4 => "[a-z][a-z0-9_]{0,12}",
        1 => "[a-z_.-]{1,6}",
        1 => ".{0,10}",
    ];
    (
        prop::collection::vec((name, schemas()), 0..12),
        prop::collection::vec((".{0,16}", json()), 0..6),
    )
}

fn compress_and_resolve((tools, calls): ToolSet) {
    let tools: Vec<ToolDefinition> = tools
        .into_iter()
        .map(|(n, s)| ToolDefinition::new(n, s))
        .collect();
    for level in LEVELS {
        let Ok(c) = chef_compress::compress(&tools, &Options::new().with_level(level)) else {
            continue;
        };
        for (name, args) in &calls {
            let _ = c.resolve(name, args);
        }
        for tool in &tools {
            let _ = c.resolve(tool.name.as_str(), &Value::Object(Map::new()));
        }
    }
}

/// Arbitrary names and argument values against the real fixture, compressed once per level.
fn calls_against_fixture() -> impl Strategy<Value = (usize, String, Value)> {
    let tools = fixture_tools();
    let names: Vec<String> = tools.iter().map(|t| t.name.as_str().to_owned()).collect();
    let name = prop_oneof![
        2 => prop::sample::select(names.clone()),
        2 => (prop::sample::select(names), ".{0,3}", any::<prop::sample::Index>()).prop_map(
            |(n, junk, at)| {
                let chars: Vec<char> = n.chars().collect();
                let i = at.index(chars.len() + 1);
                let mut out: String = chars[..i].iter().collect();
                out.push_str(&junk);
                out.extend(&chars[i..]);
                out
            }
        ),
        1 => "[a-z0-9_.:/-]{0,12}",
        1 => ".{0,40}",
    ];
    let args = prop_oneof![
        3 => json(),
        1 => (any::<Vec<u8>>()).prop_map(|b| Value::String(String::from_utf8_lossy(&b).into_owned())),
        2 => (key(), json(), ".{0,20}").prop_map(|(k, v, op)| serde_json::json!({"op": op, "action": k, "args": v, "f": op})),
    ];
    (0usize..4, name, args)
}

fn resolve_fixture(
    compressed: &[chef_compress::Compressed],
) -> impl Fn((usize, String, Value)) + '_ {
    move |(level, name, args)| {
        let c = &compressed[level % compressed.len()];
        if let chef_compress::Resolution::Error(e) = c.resolve(&name, &args) {
            let _ = e.to_string();
        }
        // Also through the level's dispatcher name, if it has one.
        for tool in c.tools() {
            let _ = c.resolve(tool.name.as_str(), &args);
        }
    }
}

fn compressed_fixture() -> Vec<chef_compress::Compressed> {
    let tools = fixture_tools();
    LEVELS
        .iter()
        .map(|l| chef_compress::compress(&tools, &Options::new().with_level(*l)).unwrap())
        .collect()
}

fuzz_tests!(
    compress_and_resolve_arbitrary_tool_sets_never_panic,
    fuzz_compress_arbitrary_tool_sets,
    [128, 20_000],
    |cases| { run("compress", cases, tool_sets(), compress_and_resolve) }
);

fuzz_tests!(
    resolve_with_arbitrary_names_and_arguments_never_panics,
    fuzz_resolve,
    [SHORT, 200_000],
    |cases| {
        let compressed = compressed_fixture();
        run(
            "resolve",
            cases,
            calls_against_fixture(),
            resolve_fixture(&compressed),
        )
    }
);

// ---- snapshot loading --------------------------------------------------------------

fn snapshot_seeds() -> Vec<Vec<u8>> {
    let mut chef = Chef::new(ChefConfig::default());
    chef.register_tools(fixture_tools()).unwrap();
    chef.push(chef::ir::Message::user("hello"));
    let empty = Chef::new(ChefConfig::default());
    vec![
        chef::snapshot::to_vec(&chef.snapshot(Some("full"))).unwrap(),
        chef::snapshot::to_vec(&empty.snapshot(None)).unwrap(),
    ]
}

fn load_snapshot(bytes: Vec<u8>) {
    if let Ok(snapshot) = chef::snapshot::from_slice::<SessionState>(&bytes) {
        // Whatever parses must also restore into a session without panicking.
        let mut chef = Chef::new(ChefConfig::default());
        let _ = chef.restore(&snapshot);
    }
}

fuzz_tests!(
    snapshot_loading_never_panics,
    fuzz_snapshot_loading,
    [SHORT, 150_000],
    |cases| { run("snapshot", cases, bytes(snapshot_seeds()), load_snapshot) }
);

// ---- provider response parsing -----------------------------------------------------

fn response_seeds() -> Vec<Vec<u8>> {
    [
        r#"{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"tu_1","name":"get_weather","input":{"city":"Paris"}}],"stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":4}}"#,
        r#"{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}"#,
        r#"{"id":"r1","object":"response","status":"completed","model":"m","output":[{"type":"message","id":"m1","role":"assistant","content":[{"type":"output_text","text":"hi"}]},{"type":"function_call","id":"fc1","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"}],"usage":{"input_tokens":1,"output_tokens":2}}"#,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"},{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"c2ln"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":1}}"#,
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect()
}

fn parse_everywhere(names: &(WireNames, WireNames)) -> impl Fn(Vec<u8>) + '_ {
    move |bytes| {
        let _ = chef_anthropic::parse_response(&bytes, &names.0);
        let _ = chef_openai::chat::parse_response(&bytes, &names.1);
        let _ = chef_openai::responses::parse_response(&bytes, &names.1);
        let _ = chef_gemini::parse_response(&bytes, &names.0, &[]);
    }
}

fn wire_names() -> (WireNames, WireNames) {
    let names: Vec<ToolName> = fixture_tools().into_iter().map(|t| t.name).collect();
    (
        WireNames::new(&names, NameRule::ANTHROPIC),
        WireNames::new(&names, NameRule::OPENAI),
    )
}

fuzz_tests!(
    provider_response_parsing_never_panics,
    fuzz_provider_response_parsing,
    [SHORT, 250_000],
    |cases| {
        let names = wire_names();
        run(
            "parse",
            cases,
            bytes(response_seeds()),
            parse_everywhere(&names),
        )
    }
);
