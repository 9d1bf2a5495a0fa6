use std::{ffi::OsString, path::Path};

use serde_json::{Value, json};

use crate::{assert_one_line_error, chef, fixture, stderr, stdout, temp_file, write_file};

fn search(tools: &Path, queries: &Path, extra: &[&str]) -> std::process::Output {
    let mut args: Vec<OsString> = vec![
        "search".into(),
        tools.into(),
        "--queries".into(),
        queries.into(),
    ];
    args.extend(extra.iter().map(Into::into));
    chef(args)
}

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn search_ranks_tools_per_request_and_abstains_on_nonsense() {
    let (_dir, queries) = temp_file(
        "q.jsonl",
        concat!(
            "{\"query\":\"add three new rows to the bottom of the tracker spreadsheet\"}\n",
            "\n",
            "{\"query\":\"bake a chocolate cake\",\"note\":\"extra keys are ignored\"}\n",
            "{\"query\":\"turn these geographic coordinates into a human readable street address\"}\n",
        ),
    );
    let out = search(&fixture("real-mcp-tools.json"), &queries, &["--top", "3"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let answers = lines(&stdout(&out));
    assert_eq!(answers.len(), 3);
    assert_eq!(
        answers[0]["query"],
        "add three new rows to the bottom of the tracker spreadsheet"
    );
    assert_eq!(answers[0]["tools"][0], "gdrive_sheets_append_rows");
    assert_eq!(answers[0]["tools"].as_array().unwrap().len(), 3);
    assert_eq!(
        answers[1],
        json!({"query": "bake a chocolate cake", "tools": []})
    );
    assert_eq!(answers[2]["tools"][0], "reverse_geocode");
    // Exactly these two keys, in this order.
    assert!(stdout(&out).starts_with("{\"query\":"));
    assert_eq!(answers[0].as_object().unwrap().len(), 2);
}

#[test]
fn search_output_is_byte_identical_across_runs_and_defaults_to_five() {
    let queries = fixture("retrieval-149.jsonl");
    let tools = fixture("real-mcp-tools.json");
    let a = search(&tools, &queries, &[]);
    let b = search(&tools, &queries, &[]);
    assert!(a.status.success(), "{}", stderr(&a));
    assert_eq!(a.stdout, b.stdout);
    let answers = lines(&stdout(&a));
    assert_eq!(answers.len(), 210);
    assert!(
        answers
            .iter()
            .all(|a| a["tools"].as_array().unwrap().len() <= 5)
    );
    assert!(
        answers
            .iter()
            .any(|a| a["tools"].as_array().unwrap().len() == 5)
    );
}

#[test]
fn unusable_request_files_exit_2_naming_file_and_line() {
    let cases = [
        (
            "not-json.jsonl",
            "{\"query\":\"ok\"}\n{\"query\":",
            ":2: not valid JSON",
        ),
        (
            "no-query.jsonl",
            "\n\n{\"q\":\"x\"}\n",
            ":3: `query` is missing",
        ),
        (
            "number.jsonl",
            "{\"query\":42}\n",
            ":1: `query` is not a string",
        ),
        ("array.jsonl", "[\"query\"]\n", ":1: expected an object"),
    ];
    for (name, text, problem) in cases {
        let (_dir, path) = temp_file(name, text);
        let out = search(&fixture("real-mcp-tools.json"), &path, &[]);
        assert_one_line_error(&out, &[&format!("{name}{problem}")]);
        assert!(
            stdout(&out).is_empty(),
            "nothing is printed before the file is checked"
        );
    }
}

#[test]
fn unusable_tool_files_and_missing_files_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let queries = write_file(dir.path(), "q.jsonl", "{\"query\":\"x\"}\n");
    let bad_tools = write_file(dir.path(), "tools.json", "[{\"description\":\"no name\"}]");

    let out = search(&bad_tools, &queries, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("tools.json"), "{}", stderr(&out));

    let out = search(&dir.path().join("absent.json"), &queries, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("absent.json: cannot read"));

    let out = search(
        &fixture("real-mcp-tools.json"),
        &dir.path().join("absent.jsonl"),
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("absent.jsonl: cannot read"));

    let binary = write_file(dir.path(), "binary.jsonl", [0xff, 0xfe, 0x00]);
    let out = search(&fixture("real-mcp-tools.json"), &binary, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("binary.jsonl"));

    let out = search(&fixture("real-mcp-tools.json"), &queries, &["--top", "0"]);
    assert_eq!(out.status.code(), Some(2), "--top must be at least 1");
}

#[test]
fn an_empty_request_file_prints_nothing() {
    let (_dir, queries) = temp_file("empty.jsonl", "");
    let out = search(&fixture("synthetic-100-tools.json"), &queries, &[]);
    assert!(out.status.success());
    assert!(stdout(&out).is_empty());
}

#[test]
fn search_with_a_model_dir_that_holds_no_model_exits_2_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let queries = write_file(dir.path(), "q.jsonl", "{\"query\":\"book a ride\"}\n");
    let model = dir.path().join("no-model-here");
    std::fs::create_dir(&model).unwrap();
    let out = search(
        &fixture("real-mcp-tools.json"),
        &queries,
        &["--model", model.to_str().unwrap(), "--no-cache"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("no-model-here"), "{err}");
    // Without the `dense` feature chef says so; with it, the missing file is named.
    assert!(
        err.contains("without the `dense` feature") || err.contains("missing config.json"),
        "{err}"
    );
    assert!(stdout(&out).is_empty());
}

#[test]
fn calibrate_and_cache_flags_need_a_model() {
    let dir = tempfile::tempdir().unwrap();
    let queries = write_file(dir.path(), "q.jsonl", "{\"query\":\"bake a cake\"}\n");
    let tools = fixture("real-mcp-tools.json");
    let out = chef([
        OsString::from("search"),
        tools.clone().into(),
        "--calibrate".into(),
        queries.clone().into(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--model"), "{}", stderr(&out));
    let out = search(&tools, &queries, &["--min-cosine", "0.4"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--model"), "{}", stderr(&out));
}
