use serde_json::Value;

use crate::{chef, stderr, stdout};

#[test]
fn demo_prints_json_with_every_level_row() {
    let out = chef(["demo", "--json", "--level", "1", "--target", "gemini"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["scripted_model"], true);
    assert_eq!(report["target"], "gemini");
    assert_eq!(report["table"].as_array().unwrap().len(), 5);
    let text = report["steps"].to_string();
    assert!(text.contains("REFUSED"), "{text}");
}

#[test]
fn demo_rejects_an_unknown_target() {
    let out = chef(["demo", "--target", "mistral"]);
    assert_eq!(out.status.code(), Some(2));
}
