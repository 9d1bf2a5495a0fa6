use serde_json::Value;

use crate::{
    chef, on_corpus,
    recommend_support::{NEVER_SAID, thousands},
    stderr, stdout,
};

#[test]
fn recommend_prints_level_and_reason_first() {
    let out = on_corpus("recommend", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let advice: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let keys: Vec<_> = advice.as_object().unwrap().keys().cloned().collect();
    assert_eq!(&keys[..2], ["level", "reason"]);
    assert_eq!(advice["level"], 1);
    assert_eq!(advice["discover_top"], 10);
    assert!(
        advice["reason"]
            .as_str()
            .unwrap()
            .starts_with("149 tools take ")
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

#[test]
fn recommend_counts_o200k_tokens_as_compress_prints_them() {
    let out = on_corpus("recommend", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let advice: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let out = on_corpus("compress", &["--level", "1", "--tokens"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let tokens = report["stats"]["compressed_tokens"].as_u64().unwrap();
    let chars = report["stats"]["compressed_chars"].as_u64().unwrap();
    assert_eq!(advice["level1_tokens"].as_u64(), Some(tokens));
    assert_eq!(advice["level1_chars"].as_u64(), Some(chars));
    let reason = advice["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(&format!(
            "149 tools take {} characters ({} o200k_base tokens) at level 1,",
            thousands(chars),
            thousands(tokens)
        )),
        "{reason}"
    );
}

#[test]
fn recommend_names_real_commands_and_flags() {
    let out = on_corpus("recommend", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let advice: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let reason = advice["reason"].as_str().unwrap();
    // The corpus has lookalike map lines, so the reason gives its advice about the map.
    assert!(reason.contains("Check your map"), "{reason}");
    assert!(reason.contains("--map-style signature"), "{reason}");
    assert!(reason.contains("`chef compile-map`"), "{reason}");
    assert!(
        reason.contains("`chef compress --level 4 --compiled MAP.json`"),
        "{reason}"
    );
    // No JavaScript spelling, no command that does not exist, no figures from elsewhere.
    for gone in NEVER_SAID {
        assert!(!reason.contains(gone), "{gone:?} in {reason}");
    }
    // Every `chef …` command the reason names is one the binary knows.
    for command in reason.split("`chef ").skip(1) {
        let name = command.split([' ', '`']).next().unwrap();
        let out = chef([name, "--help"]);
        assert!(out.status.success(), "`chef {name}` in {reason}");
    }
}
