//! compress.md §10.4 schema repairs on the real corpus (checklist 165–166).

use chef_gemini::{CompileOptions, clean_schema, envelope};
use serde_json::{Value, json};

use crate::corpus;

const REJECTED: [&str; 6] = [
    "additionalProperties",
    "$schema",
    "default",
    "examples",
    "$ref",
    "oneOf",
];

#[test]
fn the_real_corpus_comes_out_in_the_subset_gemini_accepts() {
    let tools = corpus();
    let before = tools.clone();
    let env = envelope(&tools, "", &CompileOptions::default()).unwrap();
    assert_eq!(tools, before, "the caller's schemas are never touched");
    let value = serde_json::to_value(&env).unwrap();
    assert_eq!(value["tools"].as_array().unwrap().len(), 1);
    let decls = value["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap();
    assert_eq!(decls.len(), 149);
    for decl in decls {
        let Some(params) = decl.get("parameters") else {
            continue;
        };
        assert_eq!(params["type"], "object", "{}", decl["name"]);
        let mut nodes = Vec::new();
        // Walk only schema positions: properties values, items, anyOf members.
        fn schemas<'v>(node: &'v Value, out: &mut Vec<&'v serde_json::Map<String, Value>>) {
            let Value::Object(map) = node else { return };
            out.push(map);
            if let Some(Value::Object(props)) = map.get("properties") {
                props.values().for_each(|v| schemas(v, out));
            }
            if let Some(items) = map.get("items") {
                schemas(items, out);
            }
            if let Some(Value::Array(members)) = map.get("anyOf") {
                members.iter().for_each(|v| schemas(v, out));
            }
        }
        schemas(params, &mut nodes);
        for node in nodes {
            let ty = node.get("type");
            assert!(
                !matches!(ty, Some(Value::Array(_))),
                "union type in {}",
                decl["name"]
            );
            if ty == Some(&json!("array")) {
                assert!(
                    node.contains_key("items"),
                    "array without items in {}",
                    decl["name"]
                );
            }
            if node.contains_key("enum") {
                assert_eq!(
                    ty,
                    Some(&json!("string")),
                    "enum on a non-string in {}",
                    decl["name"]
                );
            }
            for key in REJECTED {
                assert!(!node.contains_key(key), "{key} in {}", decl["name"]);
            }
            if let Some(Value::Object(props)) = node.get("properties") {
                assert!(!props.is_empty());
                for name in node
                    .get("required")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    assert!(props.contains_key(name.as_str().unwrap()));
                }
            }
        }
    }
}

#[test]
fn the_fixture_repairs_match_compress_10_4() {
    let tools = crate::conversation().tools;
    let triangle = clean_schema(&tools[2].input_schema).unwrap();
    assert_eq!(
        triangle,
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "number"}, "b": {"type": "number"}, "c": {"type": "number"},
                "units": {"type": "string", "nullable": true, "enum": ["cm", "m"]}
            },
            "required": ["a", "b", "c"]
        })
    );
    let weather = clean_schema(&tools[3].input_schema).unwrap();
    assert_eq!(
        weather,
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "days": {"type": "integer", "minimum": 1, "maximum": 7},
                "tags": {"type": "array", "items": {}}
            },
            "required": ["city"]
        })
    );
    // A numeric enum is dropped on the wire; the original keeps it for validation.
    let depth =
        json!({"type": "object", "properties": {"depth": {"type": "number", "enum": [1, 2, 3]}}});
    assert_eq!(
        clean_schema(&depth).unwrap()["properties"]["depth"],
        json!({"type": "number"})
    );
    assert_eq!(depth["properties"]["depth"]["enum"], json!([1, 2, 3]));
}

#[test]
fn cleaning_is_deterministic_and_equals_the_serialised_wire_form() {
    for tool in corpus() {
        let a = clean_schema(&tool.input_schema);
        let b = clean_schema(&tool.input_schema);
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&b).unwrap()
        );
        let wire = chef_gemini::wire::Schema::Cleaned(&tool.input_schema);
        if let Some(a) = a {
            assert_eq!(
                serde_json::to_string(&wire).unwrap(),
                serde_json::to_string(&a).unwrap()
            );
        }
    }
}
