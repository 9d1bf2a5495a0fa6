//! Resource limits: pathological inputs through the public entry points (load, compress,
//! resolve, route, compile) give a typed error or bounded work, never a stack overflow,
//! an abort or unbounded memory.

use std::time::Instant;

use chef::{Chef, ChefConfig, Routed};
use chef_compress::{Level, Options, Resolution};
use chef_ir::{Message, Target, ToolCall, ToolDefinition};
use serde_json::json;

use crate::support::{dismantle, nested, obj};

const LEVELS: [Level; 4] = [Level::Zero, Level::One, Level::Two, Level::Three];

/// The same nesting as JSON text.
fn nested_text(depth: usize) -> String {
    format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth))
}

fn tools() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition::new(
            "search_docs",
            json!({"type": "object", "properties": {"a": {}, "q": {"type": "string"}}}),
        ),
        ToolDefinition::new(
            "fs_read",
            json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        ),
        ToolDefinition::new(
            "fs_write",
            json!({"type": "object", "properties": {"path": {"type": "string"}, "a": {}}}),
        ),
    ]
}

fn session() -> Chef {
    let mut chef = Chef::new(ChefConfig::default());
    chef.register_tools(tools()).unwrap();
    chef
}

#[test]
fn arguments_nested_ten_thousand_deep_are_refused_by_resolve_and_route() {
    let args = obj("a", nested(10_000));
    for level in LEVELS {
        let c = chef_compress::compress(&tools(), &Options::new().with_level(level)).unwrap();
        for tool in c.tools() {
            // Never accepted as a call; a dispatcher may answer with its help text.
            let r = c.resolve(tool.name.as_str(), &args);
            assert!(!matches!(r, Resolution::Call { .. }), "{level:?}");
        }
    }
    let mut chef = session();
    let call = ToolCall::new("c1", "search_docs", args);
    let routed = chef.route(&call);
    assert!(matches!(routed, Routed::Error { .. }), "{routed:?}");
    dismantle(call.arguments);
}

#[test]
fn json_text_nested_ten_thousand_deep_is_a_load_error() {
    let text = format!(
        r#"[{{"name":"deep","inputSchema":{{"type":"object","properties":{{"x":{}}}}}}}]"#,
        nested_text(10_000)
    );
    let err = chef_ir::load_tools_from_str(&text).unwrap_err();
    assert!(matches!(err, chef_ir::LoadError::Json { .. }), "{err:?}");
    // The same nesting in a snapshot or a provider reply is a parse error too.
    let body = format!(
        r#"{{"content":[{{"type":"tool_use","id":"t","name":"a","input":{}}}]}}"#,
        nested_text(10_000)
    );
    assert!(chef::snapshot::from_slice::<chef::SessionState>(body.as_bytes()).is_err());
    let names = chef_ir::WireNames::default();
    assert!(chef_anthropic::parse_response(body.as_bytes(), &names).is_err());
    assert!(chef_openai::chat::parse_response(body.as_bytes(), &names).is_err());
    // Not the Responses shape at all; only "no panic, no overflow" is asserted.
    let _ = chef_openai::responses::parse_response(body.as_bytes(), &names);
    assert!(chef_gemini::parse_response(body.as_bytes(), &names, &[]).is_err());
}

#[test]
fn a_schema_nested_ten_thousand_deep_is_refused_at_compress() {
    let mut schema = obj("properties", obj("x", nested(10_000)));
    schema["type"] = json!("object");
    let err = chef_compress::validate::normalise_schema("deep", &schema);
    assert!(err.is_err());
    let mut tools = vec![ToolDefinition::new("deep", schema)];
    for level in LEVELS {
        let r = chef_compress::compress(&tools, &Options::new().with_level(level));
        assert!(r.is_err(), "{level:?}");
    }
    dismantle(std::mem::take(&mut tools[0].input_schema));
}

#[test]
fn a_fifty_megabyte_argument_string_is_refused_without_copies() {
    let big = "x".repeat(50 * 1024 * 1024);
    let args = json!({"q": big});
    let start = Instant::now();
    for level in LEVELS {
        let c = chef_compress::compress(&tools(), &Options::new().with_level(level)).unwrap();
        let r = c.resolve("search_docs", &args);
        assert!(matches!(r, Resolution::Error(_)), "{level:?}");
        let text = match r {
            Resolution::Error(e) => e.to_string(),
            _ => unreachable!(),
        };
        // The message the model reads does not echo the 50 MB back.
        assert!(text.len() < 4096, "{} bytes", text.len());
    }
    let mut chef = session();
    let routed = chef.route(&ToolCall::new("c1", "search_docs", args));
    assert!(matches!(routed, Routed::Error { .. }), "{routed:?}");
    println!("50 MB argument: {:?}", start.elapsed());
}

#[test]
fn a_ref_cycle_is_bounded_work() {
    let schemas = [
        json!({"type": "object", "$defs": {"n": {"$ref": "#/$defs/n"}}, "properties": {"a": {"$ref": "#/$defs/n"}}}),
        json!({"type": "object", "$defs": {"p": {"$ref": "#/$defs/q"}, "q": {"$ref": "#/$defs/p"}}, "properties": {"a": {"$ref": "#/$defs/p"}}}),
        json!({"type": "object", "properties": {"a": {"$ref": "#"}}}),
        json!({"type": "object", "definitions": {"node": {"type": "object", "properties": {"next": {"$ref": "#/definitions/node"}}}}, "properties": {"a": {"$ref": "#/definitions/node"}}}),
    ];
    let args = json!({"a": {"next": {"next": {"next": {"next": {}}}}}});
    for schema in schemas {
        let _ = chef_compress::validate::normalise_schema("cyclic", &schema);
        let tools = vec![ToolDefinition::new("cyclic", schema)];
        for level in LEVELS {
            if let Ok(c) = chef_compress::compress(&tools, &Options::new().with_level(level)) {
                for tool in c.tools() {
                    let _ = c.resolve(tool.name.as_str(), &args);
                    let _ = c.resolve(tool.name.as_str(), &obj("a", nested(200)));
                }
            }
        }
        let mut chef = Chef::new(ChefConfig::default());
        if chef.register_tools(tools).is_ok() {
            let _ = chef.route(&ToolCall::new("c", "cyclic", args.clone()));
            for target in Target::ALL {
                let _ = chef.compile(target);
            }
        }
    }
}

/// Compresses `tools` at every level, then registers them in a new session, printing how
/// long each took and whether it succeeded; returns the session.
fn timed_compress_and_register(tools: Vec<ToolDefinition>) -> Chef {
    for level in LEVELS {
        let start = Instant::now();
        let r = chef_compress::compress(&tools, &Options::new().with_level(level));
        println!(
            "compress {level:?}: ok={} in {:?}",
            r.is_ok(),
            start.elapsed()
        );
    }
    let mut chef = Chef::new(ChefConfig::default());
    let start = Instant::now();
    let r = chef.register_tools(tools);
    println!("register: ok={} in {:?}", r.is_ok(), start.elapsed());
    chef
}

#[test]
fn a_one_megabyte_tool_name() {
    let name = "n".repeat(1024 * 1024);
    let text = format!(r#"[{{"name":"{name}","inputSchema":{{"type":"object"}}}}]"#);
    let start = Instant::now();
    let loaded = chef_ir::load_tools_from_str(&text);
    println!(
        "load: {:?} in {:?}",
        loaded.as_ref().map(|l| l.tools.len()),
        start.elapsed()
    );
    let tools = vec![ToolDefinition::new(name.clone(), json!({"type": "object"}))];
    let mut chef = timed_compress_and_register(tools);
    let _ = chef.route(&ToolCall::new("c", name.as_str(), json!({})));
    for target in Target::ALL {
        let start = Instant::now();
        let r = chef.compile(target);
        println!(
            "compile {target:?}: ok={} in {:?}",
            r.is_ok(),
            start.elapsed()
        );
    }
}

/// Bounded, linear work (about a minute in a debug build, so not in the default suite).
#[test]
#[ignore = "slow in debug: cargo test --release -p chef --test it -- --ignored load_"]
fn load_one_hundred_thousand_tools() {
    let tools: Vec<ToolDefinition> = (0..100_000)
        .map(|i| {
            ToolDefinition::new(
                format!("ns{}_tool_{i}", i % 100),
                json!({"type": "object", "properties": {"q": {"type": "string"}}}),
            )
        })
        .collect();
    let text = serde_json::to_string(&tools).unwrap();
    let start = Instant::now();
    let loaded = chef_ir::load_tools_from_str(&text);
    println!(
        "load: {:?} in {:?}",
        loaded
            .as_ref()
            .map(|l| l.tools.len())
            .map_err(|e| e.to_string()),
        start.elapsed()
    );
    let mut chef = timed_compress_and_register(tools);
    chef.push(Message::user("hi"));
    let start = Instant::now();
    let r = chef.compile(Target::Anthropic);
    println!("compile: ok={} in {:?}", r.is_ok(), start.elapsed());
}
