use serde_json::{Value, json};

use crate::{
    assert_error, assert_one_line_error, chef, fixture, on_corpus, one_line_error, stderr, stdout,
    temp_file, write_file,
};

/// `chef resolve` on the corpus at `level` (and map style `style`) with the calls in `calls`.
fn resolve(level: &str, style: Option<&str>, calls: &str) -> std::process::Output {
    let mut flags = vec!["--level", level];
    if let Some(style) = style {
        flags.extend(["--map-style", style]);
    }
    resolve_with(&flags, calls)
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
    // Issue 26: an error about one tool names it as a field; one that reached no tool
    // (out[3]) has no `tool` at all.
    assert_eq!(out[4]["tool"], "batch_geocode");
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
        assert_one_line_error(&out, &["calls.jsonl", problem]);
        assert!(stdout(&out).is_empty(), "nothing printed before the check");
    }
}

#[test]
fn a_calls_line_that_is_not_json_names_one_position() {
    let out = resolve("3", None, "{\"name\":\"t\",\"arguments\":{}}\n{1:2}\n");
    let err = one_line_error(&out);
    assert!(
        err.ends_with("calls.jsonl: line 2: not valid JSON at column 2: key must be a string\n"),
        "{err}"
    );
}

/// README: arguments that are not an object are refused for the tool they name, with the
/// library's text and the tool in `tool`, as `Chef::route` refuses them (found by session
/// 34's docs audit: the CLI answered with a text of its own and no `tool`).
#[test]
fn arguments_that_are_not_an_object_get_an_error_line_for_that_call() {
    let calls = [
        json!({"name": "batch_geocode", "arguments": "not json"}),
        json!({"name": "batch_geocode", "arguments": "[1]"}),
        json!({"name": "batch_geocode", "arguments": [1]}),
        json!({"name": "batch_geocode", "arguments": 5}),
        json!({"name": "batch_geocode", "arguments": "{\"addresses\":[\"x\"]}"}),
    ];
    let text: String = calls.iter().map(|c| format!("{c}\n")).collect();
    for level in ["0", "1"] {
        let out = lines(&resolve(level, None, &text));
        assert_eq!(out.len(), 5);
        for (line, received) in [
            (&out[0], "a string that is not JSON"),
            (&out[1], "an array"),
            (&out[2], "an array"),
            (&out[3], "a number"),
        ] {
            assert_eq!(line["kind"], "error", "{line}");
            assert_eq!(line["recoverable"], true, "{line}");
            assert_eq!(line["tool"], "batch_geocode", "{line}");
            assert_eq!(
                line["message"],
                format!("Arguments for batch_geocode must be a JSON object; received {received}."),
                "{line}"
            );
        }
        assert_eq!(out[4]["kind"], "call");
        assert_eq!(out[4]["name"], "batch_geocode");
    }
}

/// README: absent, `null`, `""` and `[]` mean no arguments (found by session 33's CLI
/// audit: `chef resolve` refused `null`, `""` and `[]` as "not a JSON object").
#[test]
fn the_empty_spellings_of_arguments_mean_no_arguments_at_every_level() {
    let spellings = [
        json!(null),
        json!(""),
        json!(" "),
        json!([]),
        json!("null"),
        json!("[]"),
    ];
    for level in ["0", "1"] {
        let mut text = format!("{}\n", json!({"name": "check_health"}));
        for arguments in &spellings {
            text.push_str(&format!(
                "{}\n",
                json!({"name": "check_health", "arguments": arguments})
            ));
        }
        for line in lines(&resolve(level, None, &text)) {
            assert_eq!(
                line,
                json!({"kind": "call", "name": "check_health", "args": {}}),
                "level {level}"
            );
        }
    }
    let mut text = String::new();
    for arguments in &spellings {
        text.push_str(&format!(
            "{}\n",
            json!({"name": "q", "arguments": arguments})
        ));
    }
    let out = lines(&resolve("3", None, &text));
    assert_eq!(out.len(), spellings.len());
    let first = &out[0];
    assert_ne!(first["kind"], "call", "{first}");
    for line in &out {
        assert_eq!(line, first, "each spelling is read as no arguments");
        assert!(
            !line["message"]
                .as_str()
                .unwrap_or_default()
                .contains("not a JSON object"),
            "{line}"
        );
    }
}

/// README: at levels 0–1 a misspelt name is answered with the listed name it meant, as at
/// level 3 (found by session 33's CLI audit: `chef resolve` gave no suggestion at 0–1).
#[test]
fn a_misspelt_name_gets_a_did_you_mean_at_levels_0_and_1() {
    let text = format!(
        "{}\n{}\n",
        json!({"name": "gdrive_raed_file", "arguments": {}}),
        json!({"name": "zzzzzzzz", "arguments": {}}),
    );
    for level in ["0", "1"] {
        let out = lines(&resolve(level, None, &text));
        assert_eq!(
            out,
            [
                json!({"kind": "error", "message": "No tool named \"gdrive_raed_file\". Did you mean \"gdrive_read_file\"?", "recoverable": true}),
                json!({"kind": "error", "message": "No tool named \"zzzzzzzz\".", "recoverable": true}),
            ],
            "level {level}"
        );
    }
}

#[test]
fn resolve_with_a_missing_calls_file_exits_2() {
    let out = on_corpus(
        "resolve",
        &["--level", "3", "--calls", "/definitely/not/here.jsonl"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/definitely/not/here.jsonl: cannot read"));
}

/// `chef resolve` on the corpus with extra flags and the calls in `calls`.
fn resolve_with(flags: &[&str], calls: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "calls.jsonl", calls);
    let mut args: Vec<std::ffi::OsString> = vec![
        "resolve".into(),
        fixture("real-mcp-tools.json").into_os_string(),
        "--calls".into(),
        path.into_os_string(),
    ];
    args.extend(flags.iter().map(Into::into));
    chef(args)
}

#[test]
fn resolve_at_level_4_with_the_compiled_corpus_map() {
    let map = fixture("real-mcp-tools.compiled-map.json");
    let calls = [
        json!({"name": "t", "arguments": {"f": "batch_geocode", "a": {"addresses": ["1 Main St"]}}}),
        json!({"name": "q", "arguments": {"c": "batch_geocode"}}),
        json!({"name": "t", "arguments": {"f": "batch_geocode", "a": {}}}),
        json!({"name": "t", "arguments": {"f": "batch_geocod", "a": {"addresses": ["x"]}}}),
    ];
    let text: String = calls.iter().map(|c| format!("{c}\n")).collect();
    let out = lines(&resolve_with(
        &[
            "--level",
            "4",
            "--compiled",
            map.to_str().unwrap(),
            "--require-compiled",
        ],
        &text,
    ));
    assert_eq!(out.len(), 4);
    assert_eq!(
        out[0],
        json!({"kind": "call", "name": "batch_geocode", "args": {"addresses": ["1 Main St"]}})
    );
    assert_eq!(out[1]["kind"], "meta");
    let meta = out[1]["result"].as_str().unwrap();
    assert!(
        meta.starts_with("def batch_geocode(")
            && meta.contains(
                "\"geocode up to 100 addresses at once; single address use geocode_address\""
            ),
        "the compiled line's docstring: {meta}"
    );
    assert_eq!(out[2]["kind"], "error", "a required argument is missing");
    assert!(out[2]["message"].as_str().unwrap().contains("addresses"));
    assert_eq!(
        out[3],
        json!({"kind": "error", "message": "No function named \"batch_geocod\". Search with q(s=…). Did you mean \"batch_geocode\"?", "recoverable": true})
    );
}

#[test]
fn resolve_at_level_4_without_a_map_names_the_missing_flag() {
    let text = format!(
        "{}\n",
        json!({"name": "t", "arguments": {"f": "batch_geocode"}})
    );
    let out = resolve_with(&["--level", "4"], &text);
    let err = one_line_error(&out);
    assert!(stdout(&out).is_empty());
    assert!(
        err.starts_with("chef: ")
            && err.contains("real-mcp-tools.json")
            && err.contains("level 4 needs a compiled map")
            && err.contains("--compiled MAP.json"),
        "{err}"
    );

    // A map that holds no line is refused the same way, naming the map file.
    let dir = tempfile::tempdir().unwrap();
    let empty = write_file(dir.path(), "empty-map.json", "{}");
    let out = resolve_with(
        &["--level", "4", "--compiled", empty.to_str().unwrap()],
        &text,
    );
    assert_one_line_error(&out, &["empty-map.json", "the compiled map is empty"]);

    // A map that is not a map: one line naming it.
    std::fs::write(&empty, "[1]").unwrap();
    let out = resolve_with(
        &["--level", "4", "--compiled", empty.to_str().unwrap()],
        &text,
    );
    let err = one_line_error(&out);
    assert!(err.contains("not a compiled map"), "{err}");
}

/// Issue 26: `--target` accepts the names that target was sent (a dotted or slashed name
/// sanitised), as `chef compress --target` reports them.
#[test]
fn resolve_with_a_target_accepts_that_target_s_wire_names() {
    let (dir, tools) = temp_file(
        "tools.json",
        json!({"tools": [
            {"name": "timezone.convert", "inputSchema": {"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]}},
            {"name": "files/read", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}
        ]})
        .to_string(),
    );
    let calls = [
        json!({"name": "timezone_convert", "arguments": {"tz": "UTC"}}),
        json!({"name": "files_read", "arguments": "{\"path\":\"/x\"}"}),
        json!({"name": "timezone.convert", "arguments": {"tz": "UTC"}}),
    ];
    let text: String = calls.iter().map(|c| format!("{c}\n")).collect();
    let calls_path = write_file(dir.path(), "calls.jsonl", text);
    let run = |flags: &[&str]| {
        let mut args: Vec<std::ffi::OsString> = vec![
            "resolve".into(),
            tools.clone().into_os_string(),
            "--calls".into(),
            calls_path.clone().into_os_string(),
        ];
        args.extend(flags.iter().map(Into::into));
        chef(args)
    };
    for target in ["openai", "openai-responses", "anthropic"] {
        let out = lines(&run(&["--level", "1", "--target", target]));
        assert_eq!(
            out[0],
            json!({"kind": "call", "name": "timezone.convert", "args": {"tz": "UTC"}}),
            "{target}"
        );
        assert_eq!(out[1]["name"], "files/read", "{target}");
        assert_eq!(out[2]["name"], "timezone.convert", "{target}");
    }
    // Without --target the wire names are unknown at level 1, as before, and told the
    // name they meant (dots separate words in the similarity since session 38).
    let out = lines(&run(&["--level", "1"]));
    assert_eq!(
        out[0]["message"],
        "No tool named \"timezone_convert\". Did you mean \"timezone.convert\"?"
    );
    // Gemini accepts the dot, so only the slash was renamed for it.
    let out = lines(&run(&["--level", "1", "--target", "gemini"]));
    assert_eq!(out[0]["kind"], "error");
    assert_eq!(out[1]["name"], "files/read");
    // At level 3 a sanitised name is separator drift, with or without --target.
    let out = lines(&run(&["--level", "3", "--target", "openai"]));
    assert_eq!(out[0]["name"], "timezone.convert");
    // The target is parsed as `chef compress --target` parses it.
    let out = run(&["--level", "1", "--target", "openai-chat"]);
    assert_error(&out, &["unknown target"]);
}
