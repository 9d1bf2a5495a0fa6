//! Spec §5: the reference's top-level checks and their exact messages.

use chef_compress::validate::ArgumentProblem;
use serde_json::json;

use super::{assert_message, message, problem, validator};

fn search_issues() -> chef_compress::validate::ArgumentValidator {
    validator(
        "github_search_issues",
        json!({
            "type": "object",
            "properties": {
                "q": {"type": "string"},
                "sort": {"type": "string", "enum": ["comments", "created", "updated"]},
                "per_page": {"type": "integer"}
            },
            "required": ["q"]
        }),
    )
}

#[test]
fn missing_required_with_rename_hint_matches_the_reference() {
    let v = search_issues();
    assert_message(
        &v,
        json!({"query": "memory leak"}),
        "Missing required parameter \"q\" for github_search_issues. Required: q. \
         You passed \"query\" — did you mean \"q\"? Rename it.",
    );
    assert_eq!(
        problem(&v, json!({"query": "memory leak"})),
        ArgumentProblem::MissingRequired {
            param: "q".into(),
            path: "q".into(),
            required: vec!["q".into()],
            renamed_from: Some("query".into()),
        }
    );
}

#[test]
fn missing_required_is_reported_before_unrelated_unknown_keys() {
    let v = search_issues();
    assert_message(
        &v,
        json!({"wibble": 1, "wobble": 2}),
        "Missing required parameter \"q\" for github_search_issues. Required: q.",
    );
}

#[test]
fn unknown_parameter_with_suggestion_matches_the_reference() {
    let v = search_issues();
    assert_message(
        &v,
        json!({"q": "ok", "pageSize": 10}),
        "Unknown parameter \"pageSize\" for github_search_issues. Accepted: q, sort, per_page. \
         Did you mean \"per_page\"?",
    );
    assert!(v.validate(&json!({"q": "ok", "per_page": 10})).is_ok());
}

#[test]
fn unknown_parameter_reports_the_first_unknown_key_in_argument_order() {
    let v = validator(
        "t",
        json!({"type": "object", "properties": {"limit": {"type": "integer"}}}),
    );
    assert_message(
        &v,
        json!({"zzz": 1, "Limit": 5}),
        "Unknown parameter \"zzz\" for t. Accepted: limit.",
    );
    assert_message(
        &v,
        json!({"Limit": 5, "zzz": 1}),
        "Unknown parameter \"Limit\" for t. Accepted: limit. Did you mean \"limit\"?",
    );
}

#[test]
fn wrong_case_enum_value_gets_the_exact_spelling() {
    let v = validator(
        "github_create_review",
        json!({"type": "object", "properties": {
            "event": {"type": "string", "enum": ["APPROVE", "REQUEST_CHANGES", "COMMENT"]}
        }}),
    );
    assert_message(
        &v,
        json!({"event": "approve"}),
        "Invalid value for \"event\" on github_create_review: expected one of APPROVE, \
         REQUEST_CHANGES, COMMENT. Use exactly \"APPROVE\".",
    );
    match problem(&v, json!({"event": "approve"})) {
        ArgumentProblem::InvalidEnum {
            path,
            exact,
            allowed,
            received,
        } => {
            assert_eq!(path, "event");
            assert_eq!(exact.as_deref(), Some("APPROVE"));
            assert_eq!(allowed.len(), 3);
            assert_eq!(received, "\"approve\"");
        }
        other => panic!("unexpected {other:?}"),
    }
    // No case slip: the value received is named instead.
    assert_message(
        &v,
        json!({"event": "LGTM"}),
        "Invalid value for \"event\" on github_create_review: expected one of APPROVE, \
         REQUEST_CHANGES, COMMENT; received \"LGTM\".",
    );
}

#[test]
fn conditional_requirements_are_listed_with_duplicates() {
    let v = validator(
        "m_d",
        json!({
            "type": "object",
            "properties": {
                "operation": {"type": "string", "enum": ["list", "delete", "purge"]},
                "id": {"type": "string"},
                "_c": {"type": "boolean"}
            },
            "required": ["operation"],
            "allOf": [
                {"if": {"properties": {"operation": {"const": "delete"}}}, "then": {"required": ["_c"]}},
                {"if": {"properties": {"operation": {"enum": ["delete", "purge"]}}}, "then": {"required": ["_c", "id"]}},
                {"if": {"properties": {"operation": {"const": "delete"}}}, "then": {"required": ["_c"]}}
            ]
        }),
    );
    assert_message(
        &v,
        json!({"operation": "delete", "id": "x"}),
        "Missing required parameter \"_c\" for m_d. Required: operation, _c, _c, id, _c.",
    );
    assert!(v.validate(&json!({"operation": "list"})).is_ok());
    assert!(
        v.validate(&json!({"operation": "delete", "id": "x", "_c": true}))
            .is_ok()
    );
    assert_message(
        &v,
        json!({"operation": "purge", "_c": true}),
        "Missing required parameter \"id\" for m_d. Required: operation, _c, id.",
    );
}

#[test]
fn missing_required_lists_every_required_name() {
    let v = validator(
        "github_create_issue",
        json!({"type": "object", "properties": {
            "owner": {"type": "string"}, "repo": {"type": "string"},
            "title": {"type": "string"}, "body": {"type": "string"}
        }, "required": ["owner", "repo", "title"]}),
    );
    assert_message(
        &v,
        json!({"owner": "o", "repo": "r"}),
        "Missing required parameter \"title\" for github_create_issue. Required: owner, repo, title.",
    );
}

#[test]
fn null_and_empty_string_count_as_missing_for_required_parameters() {
    let v = search_issues();
    for args in [json!({"q": ""}), json!({"q": null}), json!({})] {
        assert!(
            matches!(problem(&v, args.clone()), ArgumentProblem::MissingRequired { ref param, .. } if param == "q"),
            "{args}"
        );
    }
}

#[test]
fn type_checks_follow_the_reference_table() {
    let v = validator(
        "t",
        json!({"type": "object", "properties": {
            "i": {"type": "integer"}, "n": {"type": "number"}, "b": {"type": "boolean"},
            "a": {"type": "array"}, "o": {"type": "object"}, "s": {"type": "string"}
        }}),
    );
    assert!(v.validate(&json!({"i": 3})).is_ok());
    assert!(v.validate(&json!({"i": 3.0})).is_ok());
    let table = [
        (
            json!({"i": 3.5}),
            "Parameter \"i\" on t must be an integer; received a number.",
        ),
        (
            json!({"i": "3"}),
            "Parameter \"i\" on t must be an integer; received a string.",
        ),
        (
            json!({"n": "1"}),
            "Parameter \"n\" on t must be a number; received a string.",
        ),
        (
            json!({"b": "true"}),
            "Parameter \"b\" on t must be a boolean; received a string.",
        ),
        (
            json!({"a": "a"}),
            "Parameter \"a\" on t must be an array; received a string.",
        ),
        (
            json!({"o": [1]}),
            "Parameter \"o\" on t must be an object; received an array.",
        ),
        (
            json!({"o": null}),
            "Parameter \"o\" on t must be an object; received null.",
        ),
        (
            json!({"s": 1}),
            "Parameter \"s\" on t must be a string; received an integer.",
        ),
    ];
    for (args, want) in table {
        assert_eq!(message(&v, args.clone()), want, "{args}");
        assert!(message(&v, args).contains(" must be "));
    }
}

#[test]
fn enum_and_type_are_checked_independently() {
    // The reference checks the enum, then the type; chef widens a contradictory type so the
    // enum's own members stay callable (a deliberate fix, recorded as a normalisation).
    let v = validator(
        "t",
        json!({"type": "object", "properties": {"x": {"type": "string", "enum": [1, 2]}}}),
    );
    assert!(v.validate(&json!({"x": 1})).is_ok());
    assert!(matches!(
        problem(&v, json!({"x": "1"})),
        ArgumentProblem::InvalidEnum { .. }
    ));
    assert!(
        v.normalisations()
            .iter()
            .any(|n| n.path == "properties.x" && n.what.contains("widened"))
    );
}

#[test]
fn a_schema_without_properties_accepts_any_keys_and_empty_properties_none() {
    let v = validator("t", json!({"type": "object"}));
    assert!(v.validate(&json!({"anything": 1, "else": [true]})).is_ok());
    // DIFFERS (deliberate): `properties` declared empty is a tool that takes no
    // parameters; a key sent to it is refused (the reference accepts any).
    let v = validator("git_status", json!({"type": "object", "properties": {}}));
    assert!(v.validate(&json!({})).is_ok());
    assert_eq!(
        v.validate(&json!({"path": "/etc/passwd"}))
            .unwrap_err()
            .message(),
        "Unknown parameter \"path\" for git_status. Accepted: none."
    );
    // Unless the schema admits more explicitly.
    let v = validator(
        "t",
        json!({"type": "object", "properties": {}, "additionalProperties": true}),
    );
    assert!(v.validate(&json!({"anything": 1})).is_ok());
}

#[test]
fn union_types_are_checked_in_full() {
    // The reference skips the type check of a union; full validation checks it.
    let v = validator(
        "t",
        json!({"type": "object", "properties": {"x": {"type": ["string", "null"]}}}),
    );
    assert!(v.validate(&json!({"x": "a"})).is_ok());
    assert!(v.validate(&json!({"x": null})).is_ok());
    assert_message(
        &v,
        json!({"x": 5}),
        "Parameter \"x\" on t must be a string or null; received an integer.",
    );
}

#[test]
fn conditions_follow_json_schema_beyond_the_reference_subset() {
    // The reference never lets a `pattern` condition add a requirement and never applies
    // `else`; full validation does both, as JSON Schema says.
    let v = validator(
        "t",
        json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "force": {"type": "boolean"}, "dry": {"type": "boolean"}},
            "if": {"properties": {"path": {"pattern": "^/etc/"}}, "required": ["path"]},
            "then": {"required": ["force"]},
            "else": {"required": ["dry"]}
        }),
    );
    assert!(
        v.validate(&json!({"path": "/etc/x", "force": true}))
            .is_ok()
    );
    assert_message(
        &v,
        json!({"path": "/etc/x"}),
        "Missing required parameter \"force\" for t. Required: force.",
    );
    assert!(v.validate(&json!({"path": "/home/x", "dry": true})).is_ok());
    assert!(matches!(
        problem(&v, json!({"path": "/home/x"})),
        ArgumentProblem::MissingRequired { ref param, .. } if param == "dry"
    ));
}

#[test]
fn arguments_that_are_not_an_object_are_refused() {
    let v = search_issues();
    assert_message(
        &v,
        json!([1, 2]),
        "Arguments for github_search_issues must be a JSON object; received an array.",
    );
}

#[test]
fn every_error_is_recoverable_and_displays_its_message() {
    let v = search_issues();
    let error = v.validate(&json!({})).unwrap_err();
    assert!(error.recoverable());
    assert_eq!(error.to_string(), error.message());
    assert_eq!(error.tool, "github_search_issues");
}

#[test]
fn the_typed_error_serialises_with_a_kind_tag() {
    let v = search_issues();
    let error = v.validate(&json!({"q": "ok", "pageSize": 10})).unwrap_err();
    assert_eq!(
        serde_json::to_value(&error).unwrap(),
        json!({
            "tool": "github_search_issues",
            "problem": {
                "kind": "unknown_parameter",
                "param": "pageSize",
                "path": "pageSize",
                "accepted": ["q", "sort", "per_page"],
                "did_you_mean": "per_page"
            }
        })
    );
}
