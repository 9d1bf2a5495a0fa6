use serde_json::{Value, json};

use crate::{chef, fixture, stderr, stdout};

fn resolve(level: &str, style: Option<&str>, calls: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("calls.jsonl");
    std::fs::write(&path, calls).unwrap();
    let mut args: Vec<std::ffi::OsString> = vec![
        "resolve".into(),
        fixture("real-mcp-tools.json").into_os_string(),
        "--level".into(),
        level.into(),
        "--calls".into(),
        path.into_os_string(),
    ];
    if let Some(style) = style {
        args.extend(["--map-style".into(), style.into()]);
    }
    chef(args)
}

fn lines(out: &std::process::Output) -> Vec<Value> {
    assert!(out.status.success(), "{}", stderr(out));
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn resolve_prints_one_line_per_call_in_order() {
    let calls = [
        json!({"name": "t", "arguments": {"f": "f0", "a": {"addresses": ["1 Main St"]}}}),
        json!({"name": "t", "arguments": "{\"f\":\"f0\",\"a\":{\"addresses\":[\"x\"]}}"}),
        json!({"name": "q", "arguments": {"c": "f0"}}),
        json!({"name": "t", "arguments": {"f": "zz9"}}),
        json!({"name": "t", "arguments": {"f": "f0", "a": {"addresses": ["x"], "bogus": 1}}}),
    ];
    let text: String = calls.iter().map(|c| format!("{c}\n\n")).collect();
    let out = lines(&resolve("3", None, &text));
    assert_eq!(out.len(), 5);
    assert_eq!(
        out[0],
        json!({"kind": "call", "name": "batch_geocode", "args": {"addresses": ["1 Main St"]}})
    );
    assert_eq!(out[1]["kind"], "call");
    assert_eq!(out[2]["kind"], "meta");
    assert!(
        out[2]["result"]
            .as_str()
            .unwrap()
            .starts_with("f0 = batch_geocode(addresses:string[])")
    );
    assert_eq!(
        out[3],
        json!({"kind": "error", "message": "No map code \"zz9\". Search with q(s=…).", "recoverable": true})
    );
    assert_eq!(out[4]["kind"], "error");
    assert!(out[4]["message"].as_str().unwrap().contains("bogus"));
}

#[test]
fn resolve_at_level_1_uses_real_names() {
    let text = format!(
        "{}\n",
        json!({"name": "batch_geocode", "arguments": {"addresses": ["x"]}})
    );
    let out = lines(&resolve("1", None, &text));
    assert_eq!(out[0]["kind"], "call");
    let text = format!("{}\n", json!({"name": "f0", "arguments": {}}));
    let out = lines(&resolve("1", None, &text));
    assert_eq!(out[0]["message"], "No tool named \"f0\".");
}

#[test]
fn resolve_with_a_map_style_keeps_codes() {
    let text = format!(
        "{}\n",
        json!({"name": "t", "arguments": {"f": "f0", "a": {"addresses": ["x"]}}})
    );
    let out = lines(&resolve("3", Some("signature"), &text));
    assert_eq!(out[0]["name"], "batch_geocode");
}

#[test]
fn a_bad_calls_line_exits_2_naming_the_line() {
    for (text, problem) in [
        (
            "{\"name\":\"t\",\"arguments\":{}}\nnot json\n",
            "line 2: not valid JSON",
        ),
        ("\n[1,2]\n", "line 2: expected a JSON object"),
        ("{\"arguments\":{}}\n", "line 1: `name` is missing"),
        (
            "{\"name\":\"t\"}\n{\"name\":3}\n",
            "line 2: `name` must be a string",
        ),
    ] {
        let out = resolve("3", None, text);
        assert_eq!(out.status.code(), Some(2), "{text:?}");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("calls.jsonl") && err.contains(problem),
            "{err}"
        );
        assert!(stdout(&out).is_empty(), "nothing printed before the check");
    }
}

#[test]
fn resolve_with_a_missing_calls_file_exits_2() {
    let out = chef([
        std::ffi::OsStr::new("resolve"),
        fixture("real-mcp-tools.json").as_os_str(),
        "--level".as_ref(),
        "3".as_ref(),
        "--calls".as_ref(),
        "/definitely/not/here.jsonl".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/definitely/not/here.jsonl: cannot read"));
}
