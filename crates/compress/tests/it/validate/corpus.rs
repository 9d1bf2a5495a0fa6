//! Every tool of the real corpus (149 tools) and the synthetic one (100 tools) compiles, and
//! a minimal call built from its required parameters passes.

use chef_compress::validate::{ArgumentProblem, ArgumentValidator};
use serde_json::{Map, Value, json};

use crate::fixture;

fn tools(name: &str) -> Vec<(String, Value)> {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let list: Vec<Value> = serde_json::from_str(&text).unwrap();
    list.into_iter()
        .map(|tool| {
            let name = tool["name"].as_str().unwrap().to_owned();
            let schema = tool
                .get("inputSchema")
                .or_else(|| tool.get("input_schema"))
                .cloned()
                .unwrap_or_else(|| json!({"type": "object"}));
            (name, schema)
        })
        .collect()
}

/// A value that satisfies `schema` (for the shapes the corpora use).
fn sample(schema: &Value, root: &Value, depth: usize) -> Value {
    assert!(depth < 32, "sample recursion");
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    if let Some(Value::Array(members)) = schema.get("enum") {
        return members[0].clone();
    }
    if let Some(Value::String(r)) = schema.get("$ref") {
        let target = root.pointer(r.trim_start_matches('#')).unwrap();
        return sample(target, root, depth + 1);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            return sample(&branches[0], root, depth + 1);
        }
    }
    let t = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(list)) => list[0].as_str().unwrap(),
        _ => "string",
    };
    let min = |key: &str| schema.get(key).and_then(Value::as_u64).unwrap_or(0);
    match t {
        "string" => Value::from("x".repeat(min("minLength").max(1) as usize)),
        "integer" | "number" => {
            let low = schema.get("minimum").and_then(Value::as_f64).unwrap_or(1.0);
            Value::from(low.ceil() as i64)
        }
        "boolean" => Value::Bool(false),
        "null" => Value::Null,
        "array" => {
            let items = schema.get("items").cloned().unwrap_or(json!({}));
            Value::Array(
                (0..min("minItems"))
                    .map(|_| sample(&items, root, depth + 1))
                    .collect(),
            )
        }
        _ => {
            let mut out = Map::new();
            let props = schema.get("properties").cloned().unwrap_or(json!({}));
            for name in schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let name = name.as_str().unwrap();
                let spec = props.get(name).cloned().unwrap_or(json!({}));
                out.insert(name.to_owned(), sample(&spec, root, depth + 1));
            }
            Value::Object(out)
        }
    }
}

fn check_corpus(file: &str, expected: usize) {
    let tools = tools(file);
    assert_eq!(tools.len(), expected);
    for (name, schema) in tools {
        let v = ArgumentValidator::new(&name, &schema)
            .unwrap_or_else(|e| panic!("{file}: {name} does not compile: {e}"));
        let normalised = v.normalised_schema().clone();
        let args = sample(&normalised, &normalised, 0);
        if let Err(error) = v.validate(&args) {
            panic!("{file}: minimal call {args} to {name} refused: {error}");
        }
        // An empty call is either fine or a missing-required report (checklist 93).
        match v.validate(&json!({})) {
            Ok(()) => assert!(v.required().is_empty(), "{name}"),
            Err(e) => assert!(
                matches!(e.problem, ArgumentProblem::MissingRequired { .. }),
                "{name}: {e}"
            ),
        }
        // An invented parameter is refused whenever the tool declares its parameters.
        if !v.parameters().is_empty() {
            let mut extra = args.as_object().unwrap().clone();
            extra.insert("zz_invented".into(), json!(1));
            let error = v.validate(&Value::Object(extra)).unwrap_err();
            assert!(
                error
                    .message()
                    .starts_with("Unknown parameter \"zz_invented\""),
                "{name}: {error}"
            );
        }
    }
}

#[test]
fn every_real_tool_compiles_and_accepts_a_minimal_call() {
    check_corpus("real-mcp-tools.json", 149);
}

#[test]
fn every_synthetic_tool_compiles_and_accepts_a_minimal_call() {
    check_corpus("synthetic-100-tools.json", 100);
}

#[test]
fn the_real_corpus_needs_only_recorded_normalisations() {
    let mut all = Vec::new();
    for (name, schema) in tools("real-mcp-tools.json") {
        let v = ArgumentValidator::new(&name, &schema).unwrap();
        all.extend(v.normalisations().iter().cloned());
    }
    // Every note names its tool and says what happened; the listing is stable.
    for note in &all {
        assert!(!note.tool.is_empty() && !note.what.is_empty());
    }
    let summary: Vec<String> = all
        .iter()
        .map(|n| format!("{}: {}: {}", n.tool, n.path, n.what))
        .collect();
    insta::assert_snapshot!(summary.join("\n"));
}
