//! Hostile inputs: typed errors or bounded work, never a panic or a stack overflow.

use chef_compress::validate::{ArgumentProblem, ArgumentValidator, Limits, SchemaError};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::{assert_message, message, problem, validator};

/// Builds `{"a": {"a": ... }}` nested `depth` deep without recursion.
fn nested(depth: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..depth {
        let mut m = Map::new();
        m.insert("a".into(), v);
        v = Value::Object(m);
    }
    v
}

/// Takes a deeply nested value apart iteratively (dropping it whole would recurse).
fn dismantle(v: Value) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => stack.extend(m.into_iter().map(|(_, v)| v)),
            Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
}

#[test]
fn arguments_nested_10000_deep_are_refused_without_recursion() {
    let v = validator("t", json!({"type": "object", "properties": {"a": {}}}));
    let args = nested(10_000);
    // A small stack proves the check does not recurse over the arguments.
    let got = std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(128 * 1024)
            .spawn_scoped(s, || {
                v.validate(&args)
                    .map_err(|e| (e.problem.clone(), e.message()))
            })
            .unwrap()
            .join()
            .unwrap()
    });
    let (problem, message) = got.unwrap_err();
    assert_eq!(problem, ArgumentProblem::TooDeep { limit: 64 });
    assert_eq!(
        message,
        "Arguments for t nest deeper than 64 levels; send a flatter value."
    );
    dismantle(args);
}

#[test]
fn the_depth_limit_is_configurable_and_exact() {
    let limits = Limits {
        max_depth: 3,
        ..Limits::default()
    };
    let v = ArgumentValidator::with_limits("t", &json!({"type": "object"}), limits).unwrap();
    assert!(v.validate(&nested(3)).is_ok());
    assert_eq!(
        problem(&v, nested(4)),
        ArgumentProblem::TooDeep { limit: 3 }
    );
}

#[test]
fn a_50_mb_string_is_refused_by_the_size_limit() {
    let v = validator(
        "t",
        json!({"type": "object", "properties": {"blob": {"type": "string", "pattern": "^a+$"}}}),
    );
    let big = "a".repeat(50 * 1024 * 1024);
    let args = json!({"blob": [{"x": big}]});
    let p = problem(&v, args.clone());
    assert_eq!(
        p,
        ArgumentProblem::TooLarge {
            path: "blob[0].x".into(),
            limit: 8 * 1024 * 1024,
            size: 50 * 1024 * 1024
        }
    );
    assert_message(
        &v,
        args,
        "Parameter \"blob[0].x\" on t holds a string or name of 52428800 bytes; the limit is 8388608 bytes.",
    );
}

#[test]
fn a_large_string_under_a_raised_limit_is_validated_in_linear_time() {
    let limits = Limits {
        max_string_bytes: 64 * 1024 * 1024,
        ..Limits::default()
    };
    let v = ArgumentValidator::with_limits(
        "t",
        &json!({"type": "object", "properties": {"blob": {"type": "string", "pattern": "^(a|a)*$", "maxLength": 10}}}),
        limits,
    )
    .unwrap();
    // A pattern that backtracks exponentially elsewhere runs on a linear-time engine here.
    let args = json!({"blob": format!("{}b", "a".repeat(5 * 1024 * 1024))});
    let all = v.problems(&args);
    assert!(
        all.iter()
            .any(|p| matches!(p, ArgumentProblem::PatternMismatch { .. })),
        "{all:?}"
    );
    assert!(
        all.iter()
            .any(|p| matches!(p, ArgumentProblem::TooLong { .. }))
    );
    // Previews of what the model sent stay short.
    for p in &all {
        assert!(format!("{p:?}").len() < 1000);
    }
}

#[test]
fn one_megabyte_names_are_refused_or_cut() {
    let v = validator("t", json!({"type": "object", "properties": {"a": {}}}));
    let name = "n".repeat(1024 * 1024);
    let mut m = Map::new();
    m.insert(name.clone(), json!(1));
    assert!(matches!(
        problem(&v, Value::Object(m)),
        ArgumentProblem::TooLarge {
            size: 1_048_576,
            limit: 4096,
            ..
        }
    ));
    // A schema with a 1 MB parameter name compiles; messages about it stay readable.
    let mut props = Map::new();
    props.insert(name.clone(), json!({"type": "string"}));
    let v = ArgumentValidator::new(
        "t",
        &json!({"type": "object", "properties": props, "required": [name]}),
    )
    .unwrap();
    let msg = message(&v, json!({}));
    assert!(msg.len() < 2000, "{}", msg.len());
    assert!(msg.starts_with("Missing required parameter \"nnnn"));
}

#[test]
fn reference_cycles_compile_and_validate_in_bounded_time() {
    let schemas = [
        json!({"type": "object", "properties": {"x": {"$ref": "#"}}}),
        json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"$ref": "#/$defs/a"}}}),
        json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}},
               "$defs": {"a": {"type": "object", "properties": {"b": {"$ref": "#/$defs/b"}}},
                         "b": {"type": "array", "items": {"$ref": "#/$defs/a"}}}}),
        json!({"type": "object", "properties": {"x": {"allOf": [{"$ref": "#/properties/x"}]}}}),
        json!({"type": "object", "properties": {"x": {"$ref": "#/properties/x"}}}),
        json!({"$ref": "#"}),
        json!({"type": "object", "$ref": "#", "properties": {"x": {}}}),
        json!({"$ref": "#/$defs/r", "$defs": {"r": {"$ref": "#"}}}),
        json!({"anyOf": [{"$ref": "#"}, {"type": "object"}]}),
    ];
    for schema in schemas {
        let v = ArgumentValidator::new("t", &schema).unwrap_or_else(|e| panic!("{schema}: {e}"));
        let _ = v.validate(&json!({"x": {"x": {"b": [{"b": []}]}}}));
        let _ = v.problems(&json!({"x": [1, {"b": 2}]}));
    }
}

#[test]
fn exponential_reference_fan_out_is_bounded() {
    // Each definition references the next twice: inlining everything would copy 2^40 nodes.
    let mut defs = Map::new();
    for i in 0..40 {
        defs.insert(
            format!("d{i}"),
            json!({"type": "object", "properties": {
                "l": {"$ref": format!("#/$defs/d{}", i + 1)},
                "r": {"$ref": format!("#/$defs/d{}", i + 1)}
            }}),
        );
    }
    defs.insert("d40".into(), json!({"type": "string"}));
    let schema =
        json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/d0"}}, "$defs": defs});
    let v = ArgumentValidator::new("t", &schema).unwrap();
    assert!(serde_json::to_string(v.normalised_schema()).unwrap().len() < 20_000_000);
    assert!(v.validate(&json!({"root": {"l": {"r": {}}}})).is_ok());
    assert!(v.validate(&json!({"root": {"l": {"r": 5}}})).is_err());
}

#[test]
fn schemas_nested_too_deep_are_refused() {
    let mut schema = json!({"type": "string"});
    for _ in 0..200 {
        schema = json!({"type": "object", "properties": {"a": schema}});
    }
    let error = ArgumentValidator::new("deep", &schema).unwrap_err();
    assert_eq!(
        error,
        SchemaError::TooDeep {
            tool: "deep".into(),
            limit: 128
        }
    );
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[a-zA-Z0-9_ .ÄÖ名-]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        "[a-z_]{1,8}",
                        Just("weight".to_owned()),
                        Just("mode".to_owned()),
                        Just("shipments".to_owned())
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn arbitrary_arguments_never_panic_the_validator(args in arb_json()) {
        let schemas = [
            json!({"type": "object", "properties": {
                "shipments": {"type": "array", "items": {"type": "object",
                    "properties": {"weight": {"type": "number", "minimum": 0}, "mode": {"enum": ["AIR", "SEA"]}},
                    "required": ["weight"], "additionalProperties": false}},
                "mode": {"type": "string", "pattern": "^[A-Z]+$"},
                "weight": {"oneOf": [{"type": "integer"}, {"type": "string", "maxLength": 3}]}
            }, "required": ["shipments"]}),
            json!({"type": "object", "properties": {"x": {"$ref": "#"}, "mode": {"const": 1}}}),
            json!({}),
        ];
        for schema in &schemas {
            let v = ArgumentValidator::new("p", schema).unwrap();
            let result = v.validate(&args);
            let all = v.problems(&args);
            match result {
                Ok(()) => prop_assert!(all.is_empty()),
                Err(e) => {
                    prop_assert!(!all.is_empty());
                    prop_assert!(!e.message().is_empty());
                }
            }
        }
    }
}

/// JSON whose object keys are mostly JSON Schema keywords, so that random values land in
/// keyword positions.
fn arb_schema() -> impl Strategy<Value = Value> {
    let keyword = prop::sample::select(vec![
        "type",
        "properties",
        "required",
        "items",
        "enum",
        "const",
        "$ref",
        "$defs",
        "definitions",
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "if",
        "then",
        "else",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "additionalProperties",
        "patternProperties",
        "prefixItems",
        "dependencies",
        "dependentRequired",
        "nullable",
        "$schema",
        "$id",
        "uniqueItems",
        "contains",
        "propertyNames",
        "multipleOf",
        "minItems",
        "a",
        "b",
    ])
    .prop_map(str::to_owned);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-5i64..50).prop_map(Value::from),
        prop::sample::select(vec![
            "string",
            "object",
            "dict",
            "float",
            "int",
            "any",
            "#",
            "#/$defs/a",
            "#/definitions/b",
            "#/properties/a",
            "^[a-z]+$",
            "(?=x)",
            "a",
            "b",
            "http://x/y.json",
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 48, 5, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((keyword.clone(), inner), 0..5)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]
    #[test]
    fn arbitrary_schemas_never_panic(schema in arb_schema(), args in arb_json()) {
        match ArgumentValidator::new("wild", &schema) {
            Ok(v) => {
                let _ = v.validate(&args);
                let _ = v.validate(&json!({}));
                let _ = v.problems(&args);
                prop_assert!(v.normalisations().iter().all(|n| n.tool == "wild"));
            }
            Err(e) => prop_assert_eq!(e.tool(), "wild"),
        }
    }
}
