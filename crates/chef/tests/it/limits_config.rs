//! Resource limits are configurable, with documented defaults (issue 11): every limit is a
//! field of `chef_compress::validate::Limits`, set for a session through
//! `ChefConfig::with_compress(Options::new().with_limits(..))`, and each one, exceeded,
//! gives a typed error (or, for `$ref` inlining, bounded work) — with the default and with
//! a configured value.

use chef::{Chef, ChefConfig, ChefError, Routed};
use chef_compress::{
    CompressError, Level, Options, Resolution, ResolveError,
    validate::{ArgumentProblem, Limits, SchemaError},
};
use chef_ir::{Message, Target, ToolCall, ToolDefinition};
use serde_json::{Map, Value, json};

use crate::support::nested;

const LEVELS: [Level; 4] = [Level::Zero, Level::One, Level::Two, Level::Three];

fn limited(limits: Limits) -> Options {
    Options::new().with_limits(limits)
}

/// What compressing `tools` at each level gives, which must be an error.
fn errors_at_every_level(tools: &[ToolDefinition]) -> Vec<CompressError> {
    LEVELS
        .into_iter()
        .map(|level| chef_compress::compress(tools, &Options::new().with_level(level)).unwrap_err())
        .collect()
}

/// Asserts compressing `$tools` fails at every level with an error matching `$pattern`.
macro_rules! assert_refused_at_every_level {
    ($tools:expr, $pattern:pat) => {
        for err in errors_at_every_level($tools) {
            assert!(matches!(err, $pattern), "{err}");
        }
    };
}

fn session(options: Options, tools: Vec<ToolDefinition>) -> Chef {
    let mut chef = Chef::new(ChefConfig::default().with_compress(options));
    chef.register_tools(tools).unwrap();
    chef.push(Message::user("go"));
    chef
}

fn search_tool() -> ToolDefinition {
    ToolDefinition::new(
        "search_docs",
        json!({"type": "object", "properties": {"q": {"type": "string"}, "filter": {}}, "required": ["q"]}),
    )
}

fn argument_problem(options: &Options, args: &Value) -> ArgumentProblem {
    let c = chef_compress::compress(&[search_tool()], options).unwrap();
    match c.resolve("search_docs", args) {
        Resolution::Error(ResolveError::InvalidArguments(e)) => e.problem,
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_defaults_are_the_documented_ones() {
    let d = Limits::default();
    assert_eq!(d.max_depth, 64);
    assert_eq!(d.max_string_bytes, 8 * 1024 * 1024);
    assert_eq!(d.max_key_bytes, 4 * 1024);
    assert_eq!(d.max_schema_depth, 128);
    assert_eq!(d.max_ref_inline_nodes, 20_000);
    assert_eq!(d.max_tools, 10_000);
    assert_eq!(d.max_tool_name_bytes, 1024);
    assert_eq!(Options::new().limits(), d);
    assert_eq!(ChefConfig::default().compress.limits(), d);
}

#[test]
fn argument_nesting_depth_is_configurable() {
    let args = json!({"q": "x", "filter": nested(10)});
    // The default (64) accepts ten levels.
    let c = chef_compress::compress(&[search_tool()], &Options::new()).unwrap();
    assert!(matches!(
        c.resolve("search_docs", &args),
        Resolution::Call { .. }
    ));
    let options = limited(Limits {
        max_depth: 8,
        ..Limits::default()
    });
    assert_eq!(
        argument_problem(&options, &args),
        ArgumentProblem::TooDeep { limit: 8 }
    );
    let mut chef = session(options, vec![search_tool()]);
    let routed = chef.route(&ToolCall::new("c", "search_docs", args));
    assert!(matches!(routed, Routed::Error { .. }), "{routed:?}");
    // Past the default: 100 levels.
    let deep = json!({"q": "x", "filter": nested(100)});
    assert_eq!(
        argument_problem(&Options::new(), &deep),
        ArgumentProblem::TooDeep { limit: 64 }
    );
}

#[test]
fn argument_string_and_key_sizes_are_configurable() {
    let options = limited(Limits {
        max_string_bytes: 1024,
        max_key_bytes: 16,
        ..Limits::default()
    });
    let long = json!({"q": "x".repeat(2048)});
    assert!(matches!(
        argument_problem(&options, &long),
        ArgumentProblem::TooLarge {
            limit: 1024,
            size: 2048,
            ..
        }
    ));
    let c = chef_compress::compress(&[search_tool()], &Options::new()).unwrap();
    assert!(matches!(
        c.resolve("search_docs", &long),
        Resolution::Call { .. }
    ));
    let long_key = json!({"q": "x", "filter": {"k".repeat(40): 1}});
    assert!(matches!(
        argument_problem(&options, &long_key),
        ArgumentProblem::TooLarge {
            limit: 16,
            size: 40,
            ..
        }
    ));
    let mut chef = session(options, vec![search_tool()]);
    let routed = chef.route(&ToolCall::new("c", "search_docs", long));
    assert!(matches!(routed, Routed::Error { .. }), "{routed:?}");
}

#[test]
fn schema_nesting_depth_is_configurable() {
    let mut deep = json!({"type": "object"});
    for _ in 0..6 {
        deep = json!({"type": "object", "properties": {"a": deep}});
    }
    let tools = vec![ToolDefinition::new("deep_tool", deep)];
    assert!(chef_compress::compress(&tools, &Options::new()).is_ok());
    let options = limited(Limits {
        max_schema_depth: 4,
        ..Limits::default()
    });
    let err = chef_compress::compress(&tools, &options).unwrap_err();
    assert!(
        matches!(
            &err,
            CompressError::Schema(SchemaError::TooDeep { limit: 4, .. })
        ),
        "{err}"
    );
    // A session refuses the tool when it is registered, with the same error (it was
    // taken, and every compile failed).
    let mut chef = Chef::new(ChefConfig::default().with_compress(options));
    assert!(matches!(
        chef.register_tools(tools),
        Err(ChefError::Compress(CompressError::Schema(
            SchemaError::TooDeep { .. }
        )))
    ));
}

fn many_tools(n: usize) -> Vec<ToolDefinition> {
    let schema = json!({"type": "object"});
    (0..n)
        .map(|i| ToolDefinition::new(format!("ns{}_tool_{i}", i % 100), schema.clone()))
        .collect()
}

#[test]
fn tool_count_is_configurable() {
    let options = limited(Limits {
        max_tools: 2,
        ..Limits::default()
    });
    let err = chef_compress::compress(&many_tools(3), &options).unwrap_err();
    assert!(
        matches!(err, CompressError::TooManyTools { count: 3, limit: 2 }),
        "{err}"
    );
    assert!(chef_compress::compress(&many_tools(2), &options).is_ok());
    let mut chef = session(options, many_tools(3));
    assert!(matches!(
        chef.compile(Target::Anthropic),
        Err(ChefError::Compress(CompressError::TooManyTools { .. }))
    ));
    // A model call cannot get past an unusable tool set either.
    assert!(matches!(
        chef.route(&ToolCall::new("c", "ns0_tool_0", json!({}))),
        Routed::Error { .. }
    ));
}

#[test]
fn one_hundred_thousand_tools_are_refused_by_default() {
    let tools = many_tools(100_000);
    assert_refused_at_every_level!(
        &tools,
        CompressError::TooManyTools {
            count: 100_000,
            limit: 10_000
        }
    );
    let mut chef = session(Options::new(), tools);
    assert!(matches!(
        chef.compile(Target::Anthropic),
        Err(ChefError::Compress(CompressError::TooManyTools { .. }))
    ));
}

#[test]
fn tool_name_length_is_configurable() {
    let megabyte = "n".repeat(1024 * 1024);
    let tools = vec![
        ToolDefinition::new("ok_tool", json!({"type": "object"})),
        ToolDefinition::new(megabyte.as_str(), json!({"type": "object"})),
    ];
    assert_refused_at_every_level!(
        &tools,
        CompressError::NameTooLong {
            index: 1,
            bytes: 1_048_576,
            limit: 1024
        }
    );
    for err in errors_at_every_level(&tools) {
        // The message does not echo the name.
        assert!(err.to_string().len() < 200);
    }
    let mut chef = Chef::new(ChefConfig::default());
    assert!(matches!(
        chef.register_tools(tools),
        Err(ChefError::Compress(CompressError::NameTooLong { .. }))
    ));
    let options = limited(Limits {
        max_tool_name_bytes: 4,
        ..Limits::default()
    });
    let err = chef_compress::compress(&[search_tool()], &options).unwrap_err();
    assert!(matches!(
        err,
        CompressError::NameTooLong {
            index: 0,
            bytes: 11,
            limit: 4
        }
    ));
}

/// `d0` … `dN`, each referring twice to the one before: inlined in full it would hold
/// 2^N copies of `d0`.
fn exponential_refs(n: usize) -> Value {
    let mut defs = Map::new();
    defs.insert("d0".into(), json!({"type": "string"}));
    for i in 1..=n {
        let prev = format!("#/$defs/d{}", i - 1);
        defs.insert(
            format!("d{i}"),
            json!({"type": "object", "properties": {"l": {"$ref": prev}, "r": {"$ref": prev}}}),
        );
    }
    json!({"type": "object", "$defs": defs, "properties": {"x": {"$ref": format!("#/$defs/d{n}")}}})
}

#[test]
fn ref_inlining_is_bounded_by_a_configurable_budget() {
    let schema = exponential_refs(40);
    let tools = vec![ToolDefinition::new("refs_tool", schema.clone())];
    for budget in [Limits::default().max_ref_inline_nodes, 50] {
        let options = limited(Limits {
            max_ref_inline_nodes: budget,
            ..Limits::default()
        });
        let normalised =
            chef_compress::validate::normalise_with_limits("refs_tool", &schema, &options.limits())
                .unwrap();
        // Bounded: the normalised schema is nowhere near 2^40 nodes.
        let size = serde_json::to_string(&normalised.schema).unwrap().len();
        assert!(size < 4 * 1024 * 1024, "{size} bytes");
        for level in LEVELS {
            let c = chef_compress::compress(&tools, &options.clone().with_level(level)).unwrap();
            for t in c.tools() {
                let _ = c.resolve(t.name.as_str(), &json!({"x": {"l": {}, "r": {}}}));
            }
        }
        let mut chef = session(options, tools.clone());
        assert!(chef.compile(Target::Anthropic).is_ok());
    }
    // A smaller budget inlines less.
    let small = chef_compress::validate::normalise_with_limits(
        "refs_tool",
        &schema,
        &Limits {
            max_ref_inline_nodes: 50,
            ..Limits::default()
        },
    )
    .unwrap();
    let large = chef_compress::validate::normalise_schema("refs_tool", &schema).unwrap();
    let len = |v: &Value| serde_json::to_string(v).unwrap().len();
    assert!(len(&small.schema) < len(&large.schema));
}

#[test]
fn ref_cycles_are_bounded_work_not_errors() {
    // Recursive schemas are legitimate (trees, linked lists): a cycle is kept as a
    // reference and followed lazily, never expanded.
    let schema = json!({
        "type": "object",
        "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}, "v": {"type": "integer"}}}},
        "properties": {"head": {"$ref": "#/$defs/node"}}
    });
    let tools = vec![ToolDefinition::new("list_tool", schema)];
    let mut args = json!({"v": 1});
    for i in 0..40 {
        args = json!({"v": i, "next": args});
    }
    let args = json!({"head": args});
    for level in [Level::Zero, Level::One] {
        let c = chef_compress::compress(&tools, &Options::new().with_level(level)).unwrap();
        assert!(matches!(
            c.resolve("list_tool", &args),
            Resolution::Call { .. }
        ));
        let bad = json!({"head": {"next": {"v": "not a number"}}});
        assert!(matches!(c.resolve("list_tool", &bad), Resolution::Error(_)));
    }
}

#[test]
fn namespace_members_are_validated_with_the_configured_limits() {
    let member = search_tool();
    let args = json!({"action": "search_docs", "args": {"q": "x", "filter": nested(10)}});
    for (max_depth, refused) in [(64, false), (8, true)] {
        let options = limited(Limits {
            max_depth,
            ..Limits::default()
        });
        let mut chef = Chef::new(ChefConfig::default().with_compress(options));
        chef.tools_mut()
            .register_namespaces(vec![chef::ToolGroup::new(
                "docs",
                "Documentation",
                vec![member.clone()],
            )])
            .unwrap();
        let routed = chef.route(&ToolCall::new("c", "docs", args.clone()));
        assert_eq!(
            matches!(routed, Routed::Error { .. }),
            refused,
            "{max_depth}: {routed:?}"
        );
    }
}
