use serde_json::Value;

use crate::{assert_one_line_error, chef, fixture, stderr, stdout, write_file};

#[test]
fn inspect_reports_the_bundled_corpus() {
    let out = chef(
        ["tools", "inspect"]
            .map(Into::into)
            .into_iter()
            .chain([fixture("real-mcp-tools.json").into_os_string()])
            .chain(["--tokens".into()]),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["tools"], 149);
    assert_eq!(report["shapes"], serde_json::json!({"anthropic": 149}));
    assert!(report["chars"].as_u64().unwrap() > 100_000);
    let tokens = report["o200k_tokens"].as_u64().unwrap();
    assert!((20_000..100_000).contains(&tokens), "{tokens}");
}

#[test]
fn inspect_without_tokens_omits_the_count() {
    let out = chef([
        "tools".into(),
        "inspect".into(),
        fixture("synthetic-100-tools.json").into_os_string(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["tools"], 100);
    assert_eq!(report["shapes"], serde_json::json!({"mcp": 100}));
    assert!(report.get("o200k_tokens").is_none());
}

#[test]
fn a_bad_file_exits_2_with_one_line_naming_file_and_problem() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "missing-name.json",
            r#"[{"name":"a"},{"description":"x"}]"#,
            "index 1: `name` is missing",
        ),
        ("not-json.json", "[{", "not valid JSON at line 1"),
        ("wrong-top.json", "42", "found a number"),
        (
            "dup.json",
            r#"[{"name":"a"},{"name":"a"}]"#,
            "duplicate tool name \"a\"",
        ),
    ];
    for (name, text, problem) in cases {
        let path = write_file(dir.path(), name, text);
        let out = chef([
            "tools".into(),
            "inspect".into(),
            path.clone().into_os_string(),
        ]);
        assert_one_line_error(&out, &[name, problem]);
        assert!(stdout(&out).is_empty());
    }
    let out = chef(["tools", "inspect", "/definitely/not/here.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/definitely/not/here.json: cannot read"));
}

/// A catalogue `compress` refuses is reported with `compress_error` and exit status 2 (it
/// was reported as fine), and a leading byte order mark is read past, as `compress` reads
/// it. Found by session 41's README audit.
#[test]
fn a_catalogue_chef_cannot_use_is_said_so_and_a_bom_is_read_past() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(5000);
    for (name, text, problem) in [
        (
            "string-schema.json",
            r#"[{"name":"x","inputSchema":{"type":"string"}}]"#.to_owned(),
            "has type string",
        ),
        (
            "long-name.json",
            format!(r#"[{{"name":"{long}"}}]"#),
            "over the limit",
        ),
        (
            "line-break.json",
            r#"[{"name":"a\nb"}]"#.to_owned(),
            "line break",
        ),
    ] {
        let path = write_file(dir.path(), name, &text);
        let out = chef(["tools".into(), "inspect".into(), path.into_os_string()]);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
        let report: Value = serde_json::from_str(&stdout(&out))
            .unwrap_or_else(|e| panic!("{name}: {e}: {}", stderr(&out)));
        assert_eq!(report["tools"], 1, "{name}");
        let said = report["compress_error"].as_str().unwrap();
        assert!(said.contains(problem), "{name}: {said}");
        assert!(stderr(&out).contains(problem), "{name}: {}", stderr(&out));
    }
    let path = write_file(dir.path(), "bom.json", "\u{feff}[{\"name\":\"a\"}]");
    let out = chef(["tools".into(), "inspect".into(), path.into_os_string()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["tools"], 1);
    assert!(report.get("compress_error").is_none());
}

#[test]
fn help_and_version_work() {
    let out = chef(["--help"]);
    assert!(out.status.success());
    assert!(stdout(&out).contains("tools"));
    let out = chef(["--version"]);
    assert!(out.status.success());
    assert_eq!(
        stdout(&out).trim(),
        concat!("chef ", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn unknown_flags_are_usage_errors_not_panics() {
    let out = chef(["tools", "inspect"]);
    assert_eq!(out.status.code(), Some(2));
    let out = chef(["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
}
