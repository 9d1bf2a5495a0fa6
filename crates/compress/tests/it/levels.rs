//! What each level puts on the wire (spec §3, checklist 34–65).

use chef_compress::{Level, MapStyle, Options, compress};
use chef_ir::ToolDefinition;
use serde_json::json;

use crate::{at, expect_call, expect_error, expect_meta, styled, svc_search, tool, tools3, wire};

#[test]
fn level_0_is_passthrough_with_no_preamble() {
    let c = at(&tools3(), Level::Zero);
    assert_eq!(c.tools().len(), 3);
    assert_eq!(c.stats().level, Level::Zero);
    assert_eq!(c.system(), "");
    assert!(!c.cache_preamble());
    assert_eq!(c.tools()[0].input_schema, tools3()[0].input_schema);
}

#[test]
fn level_1_keeps_real_names_and_flattened_schemas() {
    let c = at(&tools3(), Level::One);
    assert_eq!(c.tools().len(), 3);
    assert!(!c.cache_preamble());
    for t in c.tools() {
        assert_eq!(t.input_schema["type"], "object");
        assert!(t.input_schema["properties"].is_object());
        assert!(t.input_schema.get("$schema").is_none());
        assert!(t.input_schema.get("additionalProperties").is_none());
    }
    assert_eq!(
        c.tools()[0].description,
        "github_create_issue(owner,repo,title,body?,labels?:string[]) — Create a new issue in a GitHub repository."
    );
    assert_eq!(
        c.tools()[0].input_schema,
        json!({
            "type": "object",
            "properties": {
                "owner": {"type": "string"}, "repo": {"type": "string"}, "title": {"type": "string"},
                "body": {"type": "string"}, "labels": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["owner", "repo", "title"]
        })
    );
}

#[test]
fn level_1_with_an_empty_description_is_the_bare_signature() {
    let c = at(
        &[tool("stripe_get_balance", "", json!({"type": "object"}))],
        Level::One,
    );
    assert_eq!(c.tools()[0].description, "stripe_get_balance()");
}

#[test]
fn level_1_without_the_signature_prefix_is_smaller() {
    let tools = tools3();
    let with = at(&tools, Level::One);
    let without = compress(&tools, &Options::new().with_signature_prefix(false)).unwrap();
    assert_eq!(
        without.tools()[0].description,
        "Create a new issue in a GitHub repository."
    );
    assert!(without.stats().compressed_chars < with.stats().compressed_chars);
    let bare = compress(
        &[tool("x_y", "", json!({"properties": {"a": {}}}))],
        &Options::new().with_signature_prefix(false),
    )
    .unwrap();
    assert_eq!(bare.tools()[0].description, "x_y(a?)");
}

#[test]
fn level_1_is_smaller_than_level_0_on_verbose_tools() {
    let l0 = at(&tools3(), Level::Zero);
    let l1 = at(&tools3(), Level::One);
    assert!(l1.stats().compressed_chars < l1.stats().original_chars);
    assert!(l1.stats().saved_pct > 0.0);
    assert!(l1.stats().compressed_chars < l0.stats().compressed_chars);
}

fn svc_tools() -> Vec<chef_ir::ToolDefinition> {
    vec![
        svc_search(),
        tool(
            "svc_get",
            "Get one record.",
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
        ),
        tool("other_ping", "Ping.", json!({"type": "object"})),
    ]
}

#[test]
fn level_2_has_one_tool_per_namespace_then_describe_op() {
    let c = at(&svc_tools(), Level::Two);
    let names: Vec<_> = c.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["other", "svc", "describe_op"]);
    let svc = &c.tools()[1];
    assert!(svc.description.starts_with("svc "));
    assert_eq!(
        svc.input_schema["properties"]["op"]["enum"],
        json!(["get", "search"])
    );
    assert_eq!(svc.input_schema["required"], json!(["op", "args"]));
    assert_eq!(c.stats().wire_tool_count, 3);
    assert_eq!(c.system(), "");
}

#[test]
fn level_2_resolves_ops_and_describes_them() {
    let c = at(&svc_tools(), Level::Two);
    let meta = expect_meta(c.resolve("describe_op", &json!({"ns": "svc", "op": "search"})));
    assert!(meta.starts_with("svc_search(q,limit?,ratio?,flag?,tags?:[],opts?:{},mode?:FAST|SLOW) — Search the service."), "{meta}");
    assert_eq!(
        expect_error(c.resolve("describe_op", &json!({"ns": "svc", "op": "zz"}))),
        "No operation \"svc.zz\"."
    );
    // A missing `op` (or `ns`) is said to be missing, not read as an operation named "".
    assert_eq!(
        expect_error(c.resolve("describe_op", &json!({"op": "search"}))),
        "describe_op needs \"ns\" (a namespace tool's name) and \"op\" (one of its op enum)."
    );
    assert!(
        expect_error(c.resolve("svc", &json!({"args": {"q": "x"}})))
            .starts_with("The \"svc\" tool needs an \"op\""),
    );
    let args = expect_call(
        c.resolve("svc", &json!({"op": "search", "args": {"q": "x"}})),
        "svc_search",
    );
    assert_eq!(args, json!({"q": "x"}));
    // `args` as a JSON string.
    let args = expect_call(
        c.resolve("svc", &json!({"op": "search", "args": "{\"q\":\"x\"}"})),
        "svc_search",
    );
    assert_eq!(args, json!({"q": "x"}));
    // Flat arguments beside `op` are the call's arguments (deliberately unlike the
    // reference, which validates `{}` and so runs a tool whose parameters are optional
    // without what the model wrote), and so are keys beside `args`.
    let args = expect_call(
        c.resolve("svc", &json!({"op": "search", "q": "x"})),
        "svc_search",
    );
    assert_eq!(args, json!({"q": "x"}));
    assert_eq!(
        expect_error(c.resolve("svc", &json!({"op": "nope"}))),
        "No operation \"svc.nope\". Call describe_op, or check the op enum on the \"svc\" tool."
    );
    // A namespace that does not exist is an unknown tool, not an op to look up on it
    // (deliberately unlike the reference).
    assert_eq!(
        expect_error(c.resolve("zzz", &json!({"op": "weather"}))),
        "No tool named \"zzz\"."
    );
}

#[test]
fn level_2_aliases_name_the_wire_tools_and_real_names_still_resolve() {
    let options = Options::new()
        .with_level(Level::Two)
        .with_alias_of(|ns| ns.to_uppercase());
    let c = compress(&svc_tools(), &options).unwrap();
    let names: Vec<_> = c.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["OTHER", "SVC", "describe_op"]);
    assert!(
        c.tools()[1].description.starts_with("svc "),
        "real namespace name first"
    );
    let encoded = c.encode_call("svc_search", json!({"q": "x"})).unwrap();
    assert_eq!(encoded.name, "SVC");
    assert_eq!(encoded.args, json!({"op": "search", "args": {"q": "x"}}));
    for name in ["SVC", "svc"] {
        expect_call(
            c.resolve(name, &json!({"op": "search", "args": {"q": "x"}})),
            "svc_search",
        );
        expect_meta(c.resolve("describe_op", &json!({"ns": name, "op": "get"})));
    }
}

#[test]
fn level_2_refuses_duplicate_or_shadowing_aliases() {
    let dup = Options::new()
        .with_level(Level::Two)
        .with_alias_of(|_| "same".to_owned());
    let err = compress(&svc_tools(), &dup).unwrap_err().to_string();
    assert!(err.contains("same wire name"), "{err}");
    let shadow = Options::new()
        .with_level(Level::Two)
        .with_alias_of(|_| "describe_op".to_owned());
    let err = compress(&svc_tools(), &shadow).unwrap_err().to_string();
    assert!(err.contains("describe_op"), "{err}");
}

#[test]
fn level_3_has_two_dispatcher_tools_and_a_cached_map() {
    let c = at(&tools3(), Level::Three);
    let names: Vec<_> = c.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["t", "q"]);
    assert!(c.cache_preamble());
    assert!(c.system().starts_with("<toolmap>\n"));
    assert_eq!(
        c.tools()[0].input_schema["properties"]["f"],
        json!({"type": "string"})
    );
    assert_eq!(c.tools()[0].input_schema["required"], json!(["f"]));
    assert!(c.tools()[0].description.contains("map code"));
    let q = &c.tools()[1].input_schema;
    assert_eq!(
        q["properties"],
        json!({"c": {"type": "string"}, "s": {"type": "string"}})
    );
    assert!(q.get("required").is_none());
    let lines: Vec<_> = c.system().lines().collect();
    assert_eq!(
        &lines[1..4],
        [
            "a0 github_create_issue owner,repo,title",
            "a1 github_search_issues q",
            "b0 slack_post_message channel,text"
        ]
    );
    assert_eq!(lines[4], "</toolmap>");
    assert!(!c.system().ends_with('\n'));
}

/// TOOLS3 and `stripe_get_balance` (described `description`), which requires nothing.
fn tools3_and_balance(description: &str) -> Vec<ToolDefinition> {
    let mut tools = tools3();
    tools.push(tool(
        "stripe_get_balance",
        description,
        json!({"type": "object", "properties": {"currency": {"type": "string"}}}),
    ));
    tools
}

#[test]
fn default_style_omits_optional_names_and_leaves_bare_lines_bare() {
    let tools = tools3_and_balance("Balance.");
    let c = at(&tools, Level::Three);
    assert!(!c.system().contains("body"));
    assert!(c.system().contains("\nc0 stripe_get_balance\n"));
    let named = styled(&tools, MapStyle::NameRequired);
    assert_eq!(named.system(), c.system());
}

#[test]
fn explicit_style_marks_tools_with_no_required_arguments() {
    let mut tools = tools3_and_balance("");
    tools.push(tool("svc_needs_none", "", json!({})));
    let default = at(&tools, Level::Three);
    let explicit = styled(&tools, MapStyle::Explicit);
    let map = explicit.system();
    assert!(map.contains("\nc0 stripe_get_balance ()\n"), "{map}");
    assert!(map.contains("\nd0 svc_needs_none ()\n"), "{map}");
    assert!(map.contains("a0 github_create_issue owner,repo,title\n"));
    assert!(map.contains("takes no required arguments"));
    let map_part = |s: &str| s.split("</toolmap>").next().unwrap().len();
    assert_eq!(map_part(map), map_part(default.system()) + 6);
}

#[test]
fn signature_style_shows_every_parameter() {
    let c = styled(&tools3(), MapStyle::Signature);
    assert!(
        c.system()
            .contains("\na0 github_create_issue(owner,repo,title,body?,labels?:string[])\n")
    );
    assert!(c.system().contains("? marks an optional parameter"));
}

#[test]
fn map_style_does_not_change_levels_0_to_2() {
    for level in [Level::Zero, Level::One, Level::Two] {
        let plain = at(&tools3(), level);
        let styled = compress(
            &tools3(),
            &Options::new()
                .with_level(level)
                .with_map_style(MapStyle::Signature),
        )
        .unwrap();
        assert_eq!(wire(&plain), wire(&styled));
        assert_eq!(styled.stats().map_style, MapStyle::Signature);
    }
}

#[test]
fn every_style_round_trips_encoded_calls() {
    for style in MapStyle::ALL {
        let c = styled(&tools3(), style);
        let args = json!({"channel": "C1", "text": "hi"});
        let e = c.encode_call("slack_post_message", args.clone()).unwrap();
        assert_eq!(e.name, "t");
        assert_eq!(
            expect_call(c.resolve(&e.name, &e.args), "slack_post_message"),
            args
        );
    }
}

#[test]
fn zero_tools_at_level_3_still_has_the_legend() {
    let c = at(&[], Level::Three);
    assert!(c.system().starts_with("<toolmap>\n\n</toolmap>\n"));
    assert!(c.system().contains("t(f=<code>"));
    assert_eq!(c.stats().largest_lookalike_group, Some(1));
    assert_eq!(c.stats().ambiguous_map_lines, Some(0));
}

#[test]
fn code_for_exists_only_at_dispatcher_levels() {
    let c = at(&tools3(), Level::Three);
    assert_eq!(c.code_for("slack_post_message").unwrap(), "b0");
    assert!(c.code_for("nope").is_err());
    let c1 = at(&tools3(), Level::One);
    assert_eq!(
        c1.code_for("slack_post_message").unwrap_err().to_string(),
        "no code for slack_post_message (level 1)"
    );
    let codes: Vec<_> = c.codes().collect();
    assert_eq!(
        codes,
        [
            ("github_create_issue", "a0"),
            ("github_search_issues", "a1"),
            ("slack_post_message", "b0")
        ]
    );
    assert_eq!(c1.codes().count(), 0);
}

#[test]
fn level_2_gives_tools_that_split_alike_their_full_names_as_operations() {
    // DIFFERS from the reference, which keeps duplicate operations: `a` splits to (a, a)
    // and `a.a` to (a, a), so one of them could never be called. Each member of a clash
    // takes its full name as its operation; the rest keep theirs.
    let tools = [
        crate::tool("a", "", serde_json::json!({"type": "object"})),
        crate::tool("a.a", "", serde_json::json!({"type": "object"})),
        crate::tool("a_b", "", serde_json::json!({"type": "object"})),
    ];
    let c = chef_compress::compress(
        &tools,
        &chef_compress::Options::new().with_level(chef_compress::Level::Two),
    )
    .unwrap();
    assert_eq!(
        c.tools()[0].input_schema["properties"]["op"]["enum"],
        serde_json::json!(["a", "b", "a.a"])
    );
    for (op, name) in [("a", "a"), ("a.a", "a.a"), ("b", "a_b")] {
        let call = serde_json::json!({"op": op, "args": {}});
        assert_eq!(
            crate::expect_call(c.resolve("a", &call), name),
            serde_json::json!({})
        );
    }
}

/// Level 0 sends the schemas as written, but a schema that is not an object (`null`, `true`:
/// any arguments) goes as `{"type": "object"}`: providers refuse `null` parameters (it went
/// on the wire as `"parameters": null`; found by session 41's library audit).
#[test]
fn level_0_sends_a_null_or_true_schema_as_an_object_schema() {
    use chef_ir::ToolDefinition;
    let tools = vec![
        ToolDefinition::new("a_null", serde_json::Value::Null),
        ToolDefinition::new("b_true", serde_json::json!(true)),
        ToolDefinition::new(
            "c_kept",
            serde_json::json!({"type": "object", "required": "x"}),
        ),
    ];
    let c = chef_compress::compress(
        &tools,
        &chef_compress::Options::new().with_level(chef_compress::Level::Zero),
    )
    .unwrap();
    let schemas: Vec<_> = c.tools().iter().map(|t| t.input_schema.clone()).collect();
    assert_eq!(
        schemas,
        [
            serde_json::json!({"type": "object"}),
            serde_json::json!({"type": "object"}),
            // Anything else goes as written.
            serde_json::json!({"type": "object", "required": "x"}),
        ]
    );
}
