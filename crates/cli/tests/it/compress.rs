use serde_json::Value;

use crate::{chef, fixture, stderr, stdout};

fn compress(args: &[&str]) -> Value {
    let corpus = fixture("real-mcp-tools.json");
    let mut all = vec!["compress".into(), corpus.into_os_string()];
    all.extend(args.iter().map(Into::into));
    let out = chef(all);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "one JSON object on one line");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn compress_prints_tools_system_stats_and_codes() {
    let report = compress(&["--level", "3"]);
    let keys: Vec<_> = report.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["tools", "system", "stats", "codes"]);
    let names: Vec<_> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["t", "q"]);
    assert!(
        report["system"]
            .as_str()
            .unwrap()
            .starts_with("<toolmap>\na0 accessorial_revenue_details\n")
    );
    assert_eq!(report["stats"]["level"], 3);
    assert_eq!(report["stats"]["tool_count"], 149);
    assert!(report["stats"]["saved_pct"].as_f64().unwrap() >= 96.0);
    assert_eq!(report["codes"]["accessorial_revenue_details"], "a0");
    assert_eq!(report["codes"]["batch_geocode"], "f0");
    assert_eq!(report["codes"].as_object().unwrap().len(), 149);
    assert!(report["stats"].get("original_tokens").is_none());
}

#[test]
fn compress_defaults_to_level_1_with_empty_codes() {
    let report = compress(&[]);
    assert_eq!(report["stats"]["level"], 1);
    assert_eq!(report["tools"].as_array().unwrap().len(), 149);
    assert_eq!(report["system"], "");
    assert_eq!(report["codes"], serde_json::json!({}));
    assert!(report["tools"][0]["input_schema"].is_object());
}

#[test]
fn compress_with_tokens_reports_both_counts() {
    let report = compress(&["--level", "3", "--tokens"]);
    let original = report["stats"]["original_tokens"].as_u64().unwrap();
    let compressed = report["stats"]["compressed_tokens"].as_u64().unwrap();
    assert!(compressed * 10 < original, "{compressed} {original}");
}

#[test]
fn compress_map_style_model_and_objective() {
    let sig = compress(&["--level", "3", "--map-style", "signature"]);
    assert_eq!(sig["stats"]["map_style"], "signature");
    assert!(
        sig["system"]
            .as_str()
            .unwrap()
            .contains("\nf0 batch_geocode(addresses:string[])\n")
    );
    let distinct = compress(&["--level", "3", "--map-style", "distinct"]);
    assert_eq!(distinct["stats"]["map_style"], "distinct");
    assert_eq!(distinct["stats"]["ambiguous_map_lines"], 0);
    assert!(
        distinct["system"]
            .as_str()
            .unwrap()
            .contains("\na0 accessorial_revenue_details ~ surfaces\n")
    );
    let cost = compress(&[
        "--level",
        "3",
        "--model",
        "gpt-5.6-sol",
        "--objective",
        "cost",
    ]);
    assert_eq!(cost["stats"]["map_style"], "explicit");
    let two = compress(&["--level", "2"]);
    assert_eq!(two["stats"]["wire_tool_count"], 64);
}

#[test]
fn compress_is_byte_identical_across_processes() {
    let corpus = fixture("real-mcp-tools.json");
    for level in ["0", "1", "2", "3"] {
        let run = || {
            stdout(&chef([
                std::ffi::OsStr::new("compress"),
                corpus.as_os_str(),
                "--level".as_ref(),
                level.as_ref(),
            ]))
        };
        assert_eq!(run(), run(), "level {level}");
    }
}

#[test]
fn compress_refuses_bad_flags_and_level_4() {
    let corpus = fixture("real-mcp-tools.json");
    for bad in [
        ["--level", "9"],
        ["--map-style", "banana"],
        ["--objective", "speed"],
    ] {
        let out = chef([
            std::ffi::OsStr::new("compress"),
            corpus.as_os_str(),
            bad[0].as_ref(),
            bad[1].as_ref(),
        ]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(stdout(&out).is_empty());
    }
    let out = chef([
        std::ffi::OsStr::new("compress"),
        corpus.as_os_str(),
        "--level".as_ref(),
        "4".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("real-mcp-tools.json") && err.contains("needs a compiled map"),
        "{err}"
    );
}

#[test]
fn compress_on_an_unusable_file_exits_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dup.json");
    std::fs::write(&path, r#"[{"name":"a"},{"name":"a"}]"#).unwrap();
    for command in ["compress", "recommend"] {
        let out = chef([std::ffi::OsStr::new(command), path.as_os_str()]);
        assert_eq!(out.status.code(), Some(2));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("dup.json") && err.contains("duplicate tool name"),
            "{err}"
        );
    }
}
