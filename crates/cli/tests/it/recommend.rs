use serde_json::Value;

use crate::{chef, fixture, stderr, stdout};

#[test]
fn recommend_prints_level_and_reason_first() {
    let out = chef([
        std::ffi::OsStr::new("recommend"),
        fixture("real-mcp-tools.json").as_os_str(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let advice: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let keys: Vec<_> = advice.as_object().unwrap().keys().cloned().collect();
    assert_eq!(&keys[..2], ["level", "reason"]);
    assert_eq!(advice["level"], 3);
    assert!(
        advice["reason"]
            .as_str()
            .unwrap()
            .starts_with("149 tools take ~")
    );
    assert_eq!(advice["tool_count"], 149);
}

#[test]
fn recommend_on_a_small_terse_catalogue_says_leave_them_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("terse.json");
    let tools: Vec<Value> = (0..20)
        .map(|i| serde_json::json!({"name": format!("svc{i}_op"), "description": format!("Operation {i}."), "input_schema": {"type": "object", "properties": {"id": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["id"]}}))
        .collect();
    std::fs::write(&path, serde_json::to_string(&tools).unwrap()).unwrap();
    let out = chef([std::ffi::OsStr::new("recommend"), path.as_os_str()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let advice: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(advice["level"], 0);
    assert!(advice["reason"].as_str().unwrap().contains("LARGER"));
}
