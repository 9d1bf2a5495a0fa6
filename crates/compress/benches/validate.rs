//! Argument validation speed: a valid call, an unknown parameter (with its "did you mean"),
//! a nested wrong type, and the real corpus's largest schema.
//!
//! Run with `cargo bench -p chef-compress --bench validate -- --warm-up-time 1 --measurement-time 3`.
//!
//! Figures are wall-clock: on a machine shared with other work they include time spent
//! waiting for a core, so compare runs made under similar load.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "bench setup fails loudly"
)]

use std::hint::black_box;

use chef_compress::similarity::{SUGGESTION_FLOOR, nearest};
use chef_compress::validate::{ArgumentValidator, normalise_schema};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

/// Benches refusing `args` and writing the model-facing message, as `name`.
fn bench_refusal_message(c: &mut Criterion, name: &str, v: &ArgumentValidator, args: &Value) {
    c.bench_function(name, |b| {
        b.iter(|| {
            black_box(v)
                .validate(black_box(args))
                .unwrap_err()
                .message()
        })
    });
}

fn search_issues() -> ArgumentValidator {
    ArgumentValidator::new(
        "github_search_issues",
        &json!({
            "type": "object",
            "properties": {
                "q": {"type": "string", "description": "Search query"},
                "sort": {"type": "string", "enum": ["comments", "created", "updated"]},
                "per_page": {"type": "integer", "minimum": 1, "maximum": 100}
            },
            "required": ["q"]
        }),
    )
    .unwrap()
}

fn ship() -> ArgumentValidator {
    ArgumentValidator::new(
        "ship",
        &json!({
            "type": "object",
            "properties": {"shipments": {"type": "array", "items": {
                "type": "object",
                "properties": {"weight": {"type": "number", "minimum": 0}, "mode": {"enum": ["AIR", "SEA"]}},
                "required": ["weight"],
                "additionalProperties": false
            }}},
            "required": ["shipments"]
        }),
    )
    .unwrap()
}

fn bench(c: &mut Criterion) {
    let v = search_issues();
    let valid = json!({"q": "memory leak", "sort": "created", "per_page": 10});
    assert!(v.validate(&valid).is_ok());
    c.bench_function("validate/valid_small", |b| {
        b.iter(|| black_box(&v).validate(black_box(&valid)))
    });

    let unknown = json!({"q": "memory leak", "pageSize": 10});
    assert!(v.validate(&unknown).is_err());
    c.bench_function("validate/unknown_parameter", |b| {
        b.iter(|| black_box(&v).validate(black_box(&unknown)))
    });
    bench_refusal_message(c, "validate/unknown_parameter_message", &v, &unknown);

    let missing = json!({"query": "memory leak"});
    bench_refusal_message(c, "validate/missing_required_message", &v, &missing);

    let s = ship();
    let nested_valid =
        json!({"shipments": [{"weight": 1, "mode": "AIR"}, {"weight": 2}, {"weight": 3}]});
    assert!(s.validate(&nested_valid).is_ok());
    c.bench_function("validate/valid_nested", |b| {
        b.iter(|| black_box(&s).validate(black_box(&nested_valid)))
    });
    let nested_bad = json!({"shipments": [{"weight": 1}, {"weight": 2}, {"weight": "3kg"}]});
    bench_refusal_message(c, "validate/nested_wrong_type_message", &s, &nested_bad);

    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/real-mcp-tools.json"
    ))
    .unwrap();
    let tools: Vec<Value> = serde_json::from_str(&text).unwrap();
    c.bench_function("validate/compile_real_corpus_149", |b| {
        b.iter(|| {
            for tool in &tools {
                let schema = tool.get("input_schema").unwrap();
                black_box(ArgumentValidator::new(tool["name"].as_str().unwrap(), schema).unwrap());
            }
        })
    });

    c.bench_function("validate/normalise_real_corpus_149", |b| {
        b.iter(|| {
            for tool in &tools {
                let schema = tool.get("input_schema").unwrap();
                black_box(normalise_schema(tool["name"].as_str().unwrap(), schema).unwrap());
            }
        })
    });

    let names: Vec<String> = (0..30).map(|i| format!("parameter_name_{i}")).collect();
    c.bench_function("similarity/nearest_30", |b| {
        b.iter(|| {
            nearest(
                black_box("parameterName7"),
                names.iter().map(String::as_str),
                SUGGESTION_FLOOR,
            )
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
