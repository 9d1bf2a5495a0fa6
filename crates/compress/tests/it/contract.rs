//! Input contract: levels, styles, names, namespaces, schema sources (spec §1, checklist 1–15).

use std::str::FromStr;

use chef_compress::{CompressError, Level, MapStyle, Objective, Options, ToolNamespace, compress};
use chef_ir::ToolDefinition;
use serde_json::json;

use crate::{LEVELS, at, expect_call, tool, tools3, wire};

#[test]
fn levels_parse_exactly_and_unknown_levels_are_refused() {
    assert_eq!(Level::from_str("3").unwrap(), Level::Three);
    assert_eq!(Level::try_from(0).unwrap(), Level::Zero);
    for bad in ["9", "03", " 3", "three", "", "-1"] {
        let err = Level::from_str(bad).unwrap_err();
        assert!(err.to_string().contains("unsupported level"), "{err}");
    }
    assert!(
        Level::try_from(9)
            .unwrap_err()
            .to_string()
            .contains("unsupported level: 9")
    );
    assert_eq!(Options::new().level(), Level::One, "absent level means 1");
}

#[test]
fn unknown_and_historic_map_styles_are_refused() {
    for bad in [
        "banana", "name", "terse", "nocode", "grouped", "compact", "optional", "",
    ] {
        let err = MapStyle::from_str(bad).unwrap_err().to_string();
        assert!(err.contains("unsupported map style"), "{err}");
        assert!(err.contains("name+required, explicit, signature"), "{err}");
    }
    for style in MapStyle::ALL {
        assert_eq!(MapStyle::from_str(style.as_str()).unwrap(), style);
    }
    assert!(Objective::from_str("speed").is_err());
}

#[test]
fn duplicate_and_missing_names_are_refused() {
    let dup = vec![tool("a_x", "", json!({})), tool("a_x", "", json!({}))];
    let err = compress(&dup, &Options::new()).unwrap_err();
    assert!(matches!(err, CompressError::DuplicateName { ref name } if name == "a_x"));
    assert!(err.to_string().contains("duplicate tool name"));

    let missing = vec![tool("ok", "", json!({})), tool("", "x", json!({}))];
    let err = compress(&missing, &Options::new()).unwrap_err();
    assert!(matches!(err, CompressError::MissingName { index: 1 }));
    assert!(err.to_string().contains("tool is missing a name"));
}

#[test]
fn a_namespace_function_returning_empty_parts_is_refused_naming_the_tool() {
    for (ns, op) in [("", "x"), ("a", "")] {
        let options = Options::new()
            .with_level(Level::Two)
            .with_namespace_of(move |_| ToolNamespace::new(ns, op));
        let err = compress(&tools3(), &options).unwrap_err().to_string();
        assert!(err.contains("must return { ns, op }"), "{err}");
        assert!(err.contains("non-empty strings"), "{err}");
        assert!(err.contains("github_create_issue"), "{err}");
        assert!(err.contains("server_of(name)"), "{err}");
    }
}

#[test]
fn a_custom_namespace_function_groups_at_level_2() {
    let options = Options::new()
        .with_level(Level::Two)
        .with_namespace_of(|name| ToolNamespace::new(name.split('_').next().unwrap(), name));
    let c = compress(&tools3(), &options).unwrap();
    let names: Vec<_> = c.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["github", "slack", "describe_op"]);
    let args = json!({"op": "github_search_issues", "args": {"q": "x"}});
    expect_call(c.resolve("github", &args), "github_search_issues");
}

#[test]
fn a_tool_without_a_schema_works_at_level_3() {
    let tools = vec![ToolDefinition::new("bare", ToolDefinition::empty_schema())];
    let c = at(&tools, Level::Three);
    assert_eq!(c.tools().len(), 2);
    let code = c.code_for("bare").unwrap().to_owned();
    expect_call(c.resolve("t", &json!({"f": code, "a": {}})), "bare");
}

#[test]
fn an_empty_tool_list_compresses_at_every_level() {
    for level in LEVELS {
        let c = at(&[], level);
        assert_eq!(c.stats().tool_count, 0);
        assert_eq!(c.stats().saved_pct, 0.0);
    }
}

#[test]
fn level_4_needs_a_compiled_map() {
    let err = compress(&tools3(), &Options::new().with_level(Level::Four)).unwrap_err();
    assert!(matches!(err, CompressError::NeedsCompiledMap));
    let text = err.to_string();
    assert!(text.contains("needs a compiled map"), "{text}");
    assert!(text.contains("chef compile-map"), "{text}");
    assert!(text.contains("Options::with_compiled"), "{text}");
}

#[test]
fn level_0_drops_extra_fields_but_keeps_the_schema_byte_for_byte() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"x": {"type": "string", "description": "kept"}},
        "additionalProperties": false
    });
    let t = tool("a_b", "d", schema.clone())
        .with_tags(["t"])
        .with_defer_loading(true);
    let c = at(&[t], Level::Zero);
    assert_eq!(
        serde_json::to_value(c.tools()).unwrap(),
        json!([{"name": "a_b", "description": "d", "input_schema": schema}])
    );
    assert_eq!(
        serde_json::to_string(&c.tools()[0].input_schema).unwrap(),
        serde_json::to_string(&schema).unwrap()
    );
}

#[test]
fn mcp_and_anthropic_shapes_of_the_same_tool_compress_identically() {
    let mcp = r#"[{"name":"a_b","description":"Do it. More.","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}}]"#;
    let anthropic = r#"[{"name":"a_b","description":"Do it. More.","input_schema":{"type":"object","properties":{"x":{"type":"string"}}}}]"#;
    let a = chef_ir::load_tools_from_str(mcp).unwrap().tools;
    let b = chef_ir::load_tools_from_str(anthropic).unwrap().tools;
    assert_eq!(wire(&at(&a, Level::One)), wire(&at(&b, Level::One)));
    assert_eq!(
        at(&a, Level::One).tools()[0].description,
        "a_b(x?) — Do it."
    );
}

#[test]
fn an_invalid_namespace_fails_even_at_level_1() {
    let options = Options::new().with_namespace_of(|_| ToolNamespace::new("", ""));
    assert!(matches!(
        compress(&tools3(), &options),
        Err(CompressError::InvalidNamespace { .. })
    ));
}
