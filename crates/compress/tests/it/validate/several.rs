//! One refusal names every mistake worth fixing (up to a cap), so a model fixes them in one
//! call; problems with one root are named once.

use chef_compress::validate::{ArgumentProblem, MAX_FURTHER_PROBLEMS};
use serde_json::json;

use super::validator;

fn weather() -> chef_compress::validate::ArgumentValidator {
    validator(
        "get_weather",
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
                "units": {"enum": ["metric", "imperial"]},
                "alerts": {"type": "boolean"}
            },
            "required": ["city", "days"],
            "additionalProperties": false
        }),
    )
}

#[test]
fn a_missing_parameter_an_unknown_key_and_a_wrong_type_are_named_in_one_refusal() {
    let v = weather();
    let e = v
        .validate(&json!({"city": "Oslo", "forecast": true, "alerts": "yes"}))
        .unwrap_err();
    assert!(
        matches!(&e.problem, ArgumentProblem::MissingRequired { param, .. } if param == "days"),
        "{e:?}"
    );
    let paths: Vec<&str> = e.also().iter().map(ArgumentProblem::path).collect();
    assert_eq!(paths, ["forecast", "alerts"], "{e:?}");
    assert_eq!(
        e.message(),
        "Missing required parameter \"days\" for get_weather. Required: city, days. Also: \
         Unknown parameter \"forecast\" for get_weather. Accepted: city, days, units, alerts. \
         Parameter \"alerts\" on get_weather must be a boolean; received a string."
    );
}

#[test]
fn one_problem_alone_reads_as_before() {
    let v = weather();
    let e = v
        .validate(&json!({"city": "Oslo", "days": 3, "units": "kelvin"}))
        .unwrap_err();
    assert!(e.also().is_empty(), "{e:?}");
    assert!(!e.message().contains("Also:"), "{}", e.message());
}

#[test]
fn a_required_parameter_sent_as_null_is_missing_and_not_also_of_the_wrong_type() {
    let v = weather();
    let e = v
        .validate(&json!({"city": "Oslo", "days": null}))
        .unwrap_err();
    assert_eq!(e.problem.path(), "days");
    assert!(e.also().is_empty(), "{e:?}");
}

#[test]
fn a_misspelt_key_named_by_did_you_mean_is_not_also_unknown() {
    let v = weather();
    let e = v.validate(&json!({"City": "Oslo", "days": 2})).unwrap_err();
    assert!(
        matches!(&e.problem, ArgumentProblem::MissingRequired { renamed_from: Some(from), .. } if from == "City"),
        "{e:?}"
    );
    assert!(e.also().is_empty(), "{e:?}");
    assert_eq!(
        e.message().matches("\"City\"").count(),
        1,
        "{}",
        e.message()
    );
}

#[test]
fn at_most_the_cap_of_further_problems_most_useful_first() {
    let v = validator(
        "t",
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"},
                "d": {"type": "integer"}, "e": {"type": "integer"}, "f": {"enum": ["x"]}
            },
            "required": ["a"]
        }),
    );
    let e = v
        .validate(&json!({"b": "1", "c": "2", "d": "3", "e": "4", "f": "y"}))
        .unwrap_err();
    assert_eq!(e.problem.path(), "a");
    assert_eq!(e.also().len(), MAX_FURTHER_PROBLEMS, "{e:?}");
    // Wrong types before a value outside an enum, in the validator's order among equals.
    assert!(
        e.also()
            .iter()
            .all(|p| matches!(p, ArgumentProblem::WrongType { .. })),
        "{e:?}"
    );
    // Deterministic: the same call, the same text.
    assert_eq!(
        e.message(),
        v.validate(&json!({"b": "1", "c": "2", "d": "3", "e": "4", "f": "y"}))
            .unwrap_err()
            .message()
    );
}

#[test]
fn nested_problems_are_named_with_their_paths() {
    let v = validator(
        "ship",
        json!({
            "type": "object",
            "properties": {"shipments": {"type": "array", "items": {
                "type": "object",
                "properties": {"weight": {"type": "number"}, "mode": {"enum": ["AIR", "SEA"]}},
                "required": ["weight"]
            }}},
            "required": ["shipments"]
        }),
    );
    let e = v
        .validate(&json!({"shipments": [{"weight": "3kg", "mode": "BIKE"}]}))
        .unwrap_err();
    let mut paths = vec![e.problem.path()];
    paths.extend(e.also().iter().map(ArgumentProblem::path));
    assert_eq!(paths, ["shipments[0].weight", "shipments[0].mode"], "{e:?}");
    assert!(e.message().contains(" Also: "), "{}", e.message());
}

#[test]
fn a_problem_with_the_whole_object_names_nothing_else() {
    let v = weather();
    let e = v.validate(&json!(["Oslo", 3])).unwrap_err();
    assert!(e.also().is_empty(), "{e:?}");
}
