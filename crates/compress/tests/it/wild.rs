//! Schemas from the wild: normalised (and listed in stats) or refused naming the tool,
//! never a panic, at every level; validation accepts what the normalised schema means.

use chef_compress::{CompressError, Level, MapStyle, Options, Resolution, compress};
use serde_json::{Value, json};

use crate::{LEVELS, expect_call, tool};

fn wild_schemas() -> Vec<(&'static str, Value)> {
    let long = "x".repeat(100_000);
    vec![
        (
            "missing_type",
            json!({"properties": {"a": {"type": "string"}}}),
        ),
        (
            "dict_type",
            json!({"type": "dict", "properties": {"a": {"type": "float"}, "b": {"type": "int"}, "c": {"type": "bool"}, "d": {"type": "tuple"}, "e": {"type": "any"}}}),
        ),
        (
            "type_array",
            json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}),
        ),
        (
            "ref_defs",
            json!({"type": "object", "properties": {"p": {"$ref": "#/$defs/P"}}, "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}}}}),
        ),
        (
            "recursive_ref",
            json!({"type": "object", "properties": {"node": {"$ref": "#/$defs/Node"}}, "$defs": {"Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}}}),
        ),
        (
            "numeric_enum",
            json!({"type": "object", "properties": {"depth": {"type": "number", "enum": [1, 2, 3]}}}),
        ),
        ("no_properties", json!({"type": "object"})),
        (
            "empty_properties",
            json!({"type": "object", "properties": {}}),
        ),
        (
            "huge_description",
            json!({"type": "object", "description": long, "properties": {"a": {"type": "string", "description": long}}}),
        ),
        (
            "non_ascii_names",
            json!({"type": "object", "properties": {"größe": {"type": "string"}, "名前": {"type": "string"}}, "required": ["名前"]}),
        ),
        (
            "required_absent",
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "ghost"]}),
        ),
        ("not_an_object", json!("object")),
        ("null_schema", Value::Null),
    ]
}

#[test]
fn wild_schemas_never_panic_at_any_level_or_style() {
    for (name, schema) in wild_schemas() {
        let tools = vec![tool(
            &format!("wild_{name}"),
            "A tool. From the wild.",
            schema,
        )];
        for level in LEVELS {
            for style in MapStyle::ALL {
                match compress(
                    &tools,
                    &Options::new().with_level(level).with_map_style(style),
                ) {
                    Ok(c) => {
                        let e = c.encode_call(&format!("wild_{name}"), json!({})).unwrap();
                        // Any outcome but a panic; a call or a model-readable error.
                        match c.resolve(&e.name, &e.args) {
                            Resolution::Call { .. } => {}
                            Resolution::Error(err) => assert!(!err.message().is_empty()),
                            Resolution::Meta { .. } => panic!("meta for a call"),
                        }
                    }
                    Err(err @ CompressError::Schema(_)) => {
                        assert!(err.to_string().contains(&format!("wild_{name}")), "{err}");
                    }
                    Err(other) => panic!("{name}: {other}"),
                }
            }
        }
    }
}

#[test]
fn non_standard_type_names_are_normalised_and_listed() {
    let tools = vec![tool(
        "py_tool",
        "",
        json!({"type": "dict", "properties": {"ratio": {"type": "float"}, "n": {"type": "int"}}}),
    )];
    let c = compress(&tools, &Options::new().with_level(Level::One)).unwrap();
    let schema = &c.tools()[0].input_schema;
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["ratio"]["type"], "number");
    assert_eq!(schema["properties"]["n"]["type"], "integer");
    assert!(!c.stats().normalisations.is_empty());
    assert!(c.stats().normalisations.iter().all(|n| n.tool == "py_tool"));
    let stats = serde_json::to_value(c.stats()).unwrap();
    assert!(stats["normalisations"][0].get("path").is_some());
    // Validation accepts what the normalised schema means: a float is a number.
    expect_call(
        c.resolve("py_tool", &json!({"ratio": 0.5, "n": 2})),
        "py_tool",
    );
    assert!(matches!(
        c.resolve("py_tool", &json!({"ratio": "half"})),
        Resolution::Error(_)
    ));
}
