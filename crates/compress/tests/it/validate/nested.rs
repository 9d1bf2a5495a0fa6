//! Full validation below the top level, and paths written as a model writes them.

use chef_compress::validate::{ArgumentProblem, Bound, Measure};
use serde_json::json;

use super::{assert_message, message, problem, validator};

fn ship() -> chef_compress::validate::ArgumentValidator {
    validator(
        "ship",
        json!({
            "type": "object",
            "properties": {
                "shipments": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 5,
                    "items": {
                        "type": "object",
                        "properties": {
                            "weight": {"type": "number", "exclusiveMinimum": 0, "maximum": 1000},
                            "mode": {"enum": ["AIR", "SEA", "ROAD"]},
                            "ref": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]+$", "maxLength": 12},
                            "crates": {"type": "integer", "multipleOf": 2},
                            "hazmat": {"const": false}
                        },
                        "required": ["weight"],
                        "additionalProperties": false
                    }
                },
                "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
                "contact": {
                    "oneOf": [
                        {"type": "string", "minLength": 3},
                        {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]}
                    ]
                },
                "id": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
            },
            "required": ["shipments"]
        }),
    )
}

#[test]
fn a_valid_nested_call_passes() {
    let v = ship();
    let args = json!({
        "shipments": [{"weight": 10, "mode": "AIR", "ref": "ABC-12", "crates": 4, "hazmat": false}],
        "tags": ["a", "b"],
        "contact": {"email": "x@y"},
        "id": 7
    });
    assert!(v.validate(&args).is_ok(), "{:?}", v.validate(&args));
}

#[test]
fn wrong_type_deep_inside_names_the_path() {
    let v = ship();
    let args = json!({"shipments": [{"weight": 1}, {"weight": 2}, {"weight": "3kg"}]});
    assert_message(
        &v,
        args.clone(),
        "Parameter \"shipments[2].weight\" on ship must be a number; received a string.",
    );
    assert_eq!(
        problem(&v, args),
        ArgumentProblem::WrongType {
            path: "shipments[2].weight".into(),
            expected: vec!["number".into()],
            received: "string".into(),
        }
    );
}

#[test]
fn nested_unknown_key_lists_the_accepted_names_of_that_object() {
    let v = ship();
    let args = json!({"shipments": [{"weight": 1, "Mode": "AIR"}]});
    assert_message(
        &v,
        args,
        "Unknown parameter \"shipments[0].Mode\" for ship. Accepted: weight, mode, ref, crates, \
         hazmat. Did you mean \"mode\"?",
    );
}

#[test]
fn nested_missing_required_suggests_the_rename() {
    let v = ship();
    let args = json!({"shipments": [{"weight": 1}, {"weight_kg": 4}]});
    // `weight_kg` is unknown too; the missing name is the more useful report.
    assert_eq!(
        problem(&v, args.clone()),
        ArgumentProblem::MissingRequired {
            param: "weight".into(),
            path: "shipments[1].weight".into(),
            required: vec!["weight".into()],
            renamed_from: Some("weight_kg".into()),
        }
    );
    assert_message(
        &v,
        args,
        "Missing required parameter \"shipments[1].weight\" for ship. Required: weight. \
         You passed \"weight_kg\" — did you mean \"weight\"? Rename it.",
    );
}

#[test]
fn nested_enum_with_case_slip_gets_the_exact_spelling() {
    let v = ship();
    let args = json!({"shipments": [{"weight": 1, "mode": "Sea"}]});
    assert_message(
        &v,
        args,
        "Invalid value for \"shipments[0].mode\" on ship: expected one of AIR, SEA, ROAD. \
         Use exactly \"SEA\".",
    );
}

#[test]
fn bounds_lengths_and_patterns_are_enforced() {
    let v = ship();
    let cases = [
        (
            json!({"shipments": [{"weight": 0}]}),
            "Parameter \"shipments[0].weight\" on ship must be greater than 0; received 0.",
        ),
        (
            json!({"shipments": [{"weight": 1001}]}),
            "Parameter \"shipments[0].weight\" on ship must be at most 1000; received 1001.",
        ),
        (
            json!({"shipments": [{"weight": 1, "crates": 3}]}),
            "Parameter \"shipments[0].crates\" on ship must be a multiple of 2; received 3.",
        ),
        (
            json!({"shipments": [{"weight": 1, "ref": "abc-1"}]}),
            "Parameter \"shipments[0].ref\" on ship must match the pattern ^[A-Z]{3}-[0-9]+$; \
             received \"abc-1\".",
        ),
        (
            json!({"shipments": [{"weight": 1, "ref": "ABC-1234567890"}]}),
            "Parameter \"shipments[0].ref\" on ship must have at most 12 characters.",
        ),
        (
            json!({"shipments": []}),
            "Parameter \"shipments\" on ship must have at least 1 item.",
        ),
        (
            json!({"shipments": [{"weight": 1}, {"weight": 1}, {"weight": 1}, {"weight": 1}, {"weight": 1}, {"weight": 1}]}),
            "Parameter \"shipments\" on ship must have at most 5 items.",
        ),
        (
            json!({"shipments": [{"weight": 1, "hazmat": true}]}),
            "Invalid value for \"shipments[0].hazmat\" on ship: expected exactly false; received true.",
        ),
        (
            json!({"shipments": [{"weight": 1}], "tags": ["a", "a"]}),
            "Parameter \"tags\" on ship must not contain duplicate items.",
        ),
    ];
    for (args, want) in cases {
        assert_eq!(message(&v, args.clone()), want, "{args}");
    }
    assert!(matches!(
        problem(&v, json!({"shipments": [{"weight": 0}]})),
        ArgumentProblem::OutOfRange {
            bound: Bound::ExclusiveMinimum,
            ..
        }
    ));
    assert!(matches!(
        problem(&v, json!({"shipments": []})),
        ArgumentProblem::TooShort {
            measure: Measure::Items,
            limit: 1,
            ..
        }
    ));
}

#[test]
fn alternatives_report_a_type_union_or_the_closest_form() {
    let v = ship();
    assert_message(
        &v,
        json!({"shipments": [{"weight": 1}], "id": 1.5}),
        "Parameter \"id\" on ship must be a string or an integer; received a number.",
    );
    let msg = message(
        &v,
        json!({"shipments": [{"weight": 1}], "contact": {"mail": "x"}}),
    );
    assert!(
        msg.starts_with("Parameter \"contact\" on ship matches none of its 2 accepted forms."),
        "{msg}"
    );
    assert!(
        msg.contains("Missing required parameter \"contact.email\""),
        "{msg}"
    );
    assert!(
        v.validate(&json!({"shipments": [{"weight": 1}], "contact": "abcd"}))
            .is_ok()
    );
    let v = validator(
        "t",
        json!({"type": "object", "properties": {"n": {"oneOf": [{"type": "integer"}, {"minimum": 0}]}}}),
    );
    assert_eq!(
        problem(&v, json!({"n": 3})),
        ArgumentProblem::AmbiguousAlternatives { path: "n".into() }
    );
    assert_message(
        &v,
        json!({"n": 3}),
        "Parameter \"n\" on t matches more than one of its accepted forms; it must match exactly one.",
    );
}

#[test]
fn keys_that_are_not_identifiers_are_quoted_in_paths() {
    let v = validator(
        "t",
        json!({"type": "object", "properties": {
            "headers": {"type": "object", "additionalProperties": {"type": "string"}},
            "m": {"type": "object", "properties": {"2": {"type": "string"}}}
        }}),
    );
    assert_message(
        &v,
        json!({"headers": {"content-type": 5}}),
        "Parameter \"headers.content-type\" on t must be a string; received an integer.",
    );
    assert_message(
        &v,
        json!({"headers": {"x y": 5}}),
        "Parameter \"headers[\"x y\"]\" on t must be a string; received an integer.",
    );
    // An object key that looks like an index stays a key.
    assert_message(
        &v,
        json!({"m": {"2": 5}}),
        "Parameter \"m.2\" on t must be a string; received an integer.",
    );
}

#[test]
fn problems_lists_every_violation_while_validate_picks_one() {
    let v = ship();
    let args = json!({"shipments": [{"weight": "x", "mode": "BIKE"}], "tags": [1]});
    let all = v.problems(&args);
    assert!(all.len() >= 3, "{all:?}");
    let paths: Vec<&str> = all.iter().map(ArgumentProblem::path).collect();
    assert!(paths.contains(&"shipments[0].weight"));
    assert!(paths.contains(&"shipments[0].mode"));
    assert!(paths.contains(&"tags[0]"));
    assert!(
        v.problems(&json!({"shipments": [{"weight": 1}]}))
            .is_empty()
    );
}

#[test]
fn if_then_else_applies_inside_nested_objects() {
    let v = validator(
        "t",
        json!({"type": "object", "properties": {"pay": {
            "type": "object",
            "properties": {"method": {"enum": ["card", "bank"]}, "card": {"type": "string"}, "iban": {"type": "string"}},
            "if": {"properties": {"method": {"const": "card"}}},
            "then": {"required": ["card"]},
            "else": {"required": ["iban"]}
        }}}),
    );
    assert!(
        v.validate(&json!({"pay": {"method": "card", "card": "4111"}}))
            .is_ok()
    );
    assert!(
        v.validate(&json!({"pay": {"method": "bank", "iban": "DE00"}}))
            .is_ok()
    );
    assert_message(
        &v,
        json!({"pay": {"method": "bank"}}),
        "Missing required parameter \"pay.iban\" for t. Required: iban.",
    );
}

#[test]
fn other_keywords_are_explained_in_words() {
    let v = validator(
        "t",
        json!({"type": "object", "properties": {
            "list": {"type": "array", "contains": {"const": "x"}},
            "n": {"not": {"type": "string"}},
            "m": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}},
            "gone": false,
            "d": {"type": "object", "dependentRequired": {"a": ["b"]}},
            "u": {"type": "object", "unevaluatedProperties": false, "properties": {"a": {}}}
        }}),
    );
    let cases = [
        (
            json!({"list": ["y"]}),
            "Parameter \"list\" on t is invalid: it must contain at least one item of the accepted kind.",
        ),
        (
            json!({"n": "s"}),
            "Parameter \"n\" on t is invalid: its value is of a kind that is not allowed here.",
        ),
        (
            json!({"m": {"A1": 1}}),
            "Parameter \"m\" on t is invalid: it has a key that is not allowed: \"A1\" does not match \"^[a-z]+$\".",
        ),
        (
            json!({"gone": 1}),
            "Parameter \"gone\" on t is invalid: no value is accepted here; leave it out.",
        ),
        (
            json!({"d": {"a": 1}}),
            "Missing required parameter \"d.b\" for t. Required: b.",
        ),
        (
            json!({"u": {"a": 1, "b": 2}}),
            "Unknown parameter \"u.b\" for t. Accepted: a.",
        ),
    ];
    for (args, want) in cases {
        assert_eq!(message(&v, args.clone()), want, "{args}");
    }
    assert!(matches!(
        problem(&v, json!({"n": "s"})),
        ArgumentProblem::Other { ref keyword, .. } if keyword == "not"
    ));
}
