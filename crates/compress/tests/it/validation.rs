//! Validation messages through `resolve` (spec §5, checklist 116–129): text for the model,
//! typed for the program.

use chef_compress::{Level, Resolution, ResolveError};
use serde_json::json;

use crate::{
    LEVELS, at, expect_call, expect_error, resolve_encoded, review_tool, svc_search, tool, tools3,
};

#[test]
fn a_near_miss_for_a_missing_required_parameter_names_both() {
    let c = at(&tools3(), Level::Three);
    let m = expect_error(c.resolve("t", &json!({"f": "a1", "a": {"query": "memory leak"}})));
    assert!(m.contains("query") && m.contains("\"q\""), "{m}");
    assert!(
        m.to_lowercase().contains("did you mean") || m.to_lowercase().contains("rename"),
        "{m}"
    );
    assert!(m.contains("github_search_issues"), "{m}");
}

#[test]
fn unrelated_unknown_keys_still_name_the_required_parameter() {
    let c = at(&tools3(), Level::One);
    let m = expect_error(c.resolve("github_search_issues", &json!({"wibble": 1, "wobble": 2})));
    assert!(m.contains("\"q\""), "{m}");
}

#[test]
fn a_near_miss_unknown_parameter_suggests_the_accepted_name() {
    let c = at(&tools3(), Level::One);
    expect_call(
        c.resolve("github_search_issues", &json!({"q": "ok", "per_page": 10})),
        "github_search_issues",
    );
    let m = expect_error(c.resolve("github_search_issues", &json!({"q": "ok", "pageSize": 10})));
    assert!(m.contains("pageSize") && m.contains("per_page"), "{m}");
}

#[test]
fn a_wrong_case_enum_value_gets_the_exact_spelling() {
    let review = review_tool("");
    let c = at(&[review], Level::One);
    let m = expect_error(c.resolve("github_create_review", &json!({"event": "approve"})));
    assert!(m.contains("APPROVE"), "{m}");
    assert!(m.contains("\"APPROVE\""), "{m}");
}

#[test]
fn empty_or_null_required_values_count_as_missing() {
    let c = at(&tools3(), Level::One);
    for v in [json!(""), json!(null)] {
        let m = expect_error(c.resolve("github_search_issues", &json!({"q": v})));
        assert!(
            m.to_lowercase().contains("required")
                || m.to_lowercase().contains("missing")
                || m.contains("empty"),
            "{m}"
        );
    }
}

#[test]
fn type_checks_name_the_expected_type() {
    let c = at(&[svc_search()], Level::One);
    expect_call(
        c.resolve("svc_search", &json!({"q": "x", "limit": 3})),
        "svc_search",
    );
    for (args, expected) in [
        (json!({"q": "x", "limit": 3.5}), "integer"),
        (json!({"q": "x", "limit": "3"}), "integer"),
        (json!({"q": "x", "ratio": "1"}), "number"),
        (json!({"q": "x", "flag": "true"}), "boolean"),
        (json!({"q": "x", "tags": "a"}), "array"),
        (json!({"q": "x", "opts": [1]}), "object"),
        (json!({"q": "x", "limit": null}), "integer"),
    ] {
        let m = expect_error(c.resolve("svc_search", &args));
        assert!(m.contains(expected), "{args}: {m}");
    }
}

#[test]
fn nested_failures_name_the_parameter_path() {
    let t = tool(
        "ship",
        "",
        json!({"type": "object", "properties": {"shipments": {"type": "array", "items": {"type": "object", "properties": {"weight": {"type": "number", "minimum": 0}}, "required": ["weight"]}}}, "required": ["shipments"]}),
    );
    let c = at(&[t], Level::Three);
    let r = c.resolve(
        "t",
        &json!({"f": "a0", "a": {"shipments": [{"weight": 1}, {"weight": 2}, {"weight": -5}]}}),
    );
    match r {
        Resolution::Error(ResolveError::InvalidArguments(e)) => {
            let m = e.message();
            assert!(m.contains("shipments[2].weight"), "{m}");
            assert_eq!(e.tool, "ship");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_schema_without_properties_accepts_any_keys() {
    let c = at(
        &[tool("free_form", "", json!({"type": "object"}))],
        Level::One,
    );
    expect_call(
        c.resolve("free_form", &json!({"anything": [1, 2], "else": {}})),
        "free_form",
    );
}

#[test]
fn conditional_requirements_are_enforced() {
    let t = tool(
        "m_d",
        "",
        json!({
            "type": "object",
            "properties": {"operation": {"type": "string", "enum": ["list", "delete", "purge"]}, "id": {"type": "string"}, "_confirmed": {"type": "boolean"}},
            "required": ["operation"],
            "allOf": [
                {"if": {"properties": {"operation": {"const": "delete"}}}, "then": {"required": ["_confirmed"]}},
                {"if": {"properties": {"operation": {"enum": ["purge"]}}}, "then": {"required": ["_confirmed", "id"]}}
            ]
        }),
    );
    for level in LEVELS {
        let c = at(std::slice::from_ref(&t), level);
        let call = |args| resolve_encoded(&c, "m_d", args);
        expect_call(call(json!({"operation": "list"})), "m_d");
        let m = expect_error(call(json!({"operation": "delete", "id": "1"})));
        assert!(m.contains("_confirmed"), "{level}: {m}");
        expect_call(
            call(json!({"operation": "delete", "id": "1", "_confirmed": true})),
            "m_d",
        );
        let m = expect_error(call(json!({"operation": "purge", "_confirmed": true})));
        assert!(m.contains("id"), "{level}: {m}");
    }
}
