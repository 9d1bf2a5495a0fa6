use std::{ffi::OsString, path::Path};

use serde_json::{Value, json};

use crate::{
    assert_error, assert_one_line_error, chef, fixture, stderr, stdout, temp_file, write_file,
};

fn search(tools: &Path, queries: &Path, extra: &[&str]) -> std::process::Output {
    search_with("--queries", tools, queries, extra)
}

/// `chef search TOOLS FLAG FILE EXTRA…`: `--queries` or `--eval` and its file.
fn search_with(flag: &str, tools: &Path, file: &Path, extra: &[&str]) -> std::process::Output {
    let mut args: Vec<OsString> = vec!["search".into(), tools.into(), flag.into(), file.into()];
    args.extend(extra.iter().map(Into::into));
    chef(args)
}

/// Asserts that `run` on the 149 tools and each `(file name, text, problem)` exits 2 with
/// one line naming the file and its problem, and prints nothing.
#[track_caller]
fn assert_unusable_files(
    cases: &[(&str, &str, &str)],
    run: impl Fn(&Path, &Path, &[&str]) -> std::process::Output,
) {
    for (name, text, problem) in cases {
        let (_dir, path) = temp_file(name, text);
        let out = run(&fixture("real-mcp-tools.json"), &path, &[]);
        assert_one_line_error(&out, &[&format!("{name}{problem}")]);
        assert!(
            stdout(&out).is_empty(),
            "nothing is printed before the file is checked"
        );
    }
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
            ": line 2: not valid JSON",
        ),
        (
            "no-query.jsonl",
            "\n\n{\"q\":\"x\"}\n",
            ": line 3: `query` is missing",
        ),
        (
            "number.jsonl",
            "{\"query\":42}\n",
            ": line 1: `query` is not a string",
        ),
        (
            "array.jsonl",
            "[\"query\"]\n",
            ": line 1: expected an object",
        ),
    ];
    assert_unusable_files(&cases, search);
}

#[test]
fn unusable_tool_files_and_missing_files_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let queries = write_file(dir.path(), "q.jsonl", "{\"query\":\"x\"}\n");
    let bad_tools = write_file(dir.path(), "tools.json", "[{\"description\":\"no name\"}]");

    let out = search(&bad_tools, &queries, &[]);
    assert_error(&out, &["tools.json"]);

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
fn threshold_flags_conflict_with_lexical_ranking() {
    let dir = tempfile::tempdir().unwrap();
    let queries = write_file(dir.path(), "q.jsonl", "{\"query\":\"bake a cake\"}\n");
    let tools = fixture("real-mcp-tools.json");
    // The cosine flags are about the hybrid: with --lexical they are a usage error.
    for extra in [
        &["--min-cosine", "0.4"][..],
        &["--dense-weight", "0.5"],
        &["--joint"],
        &["--cosine-only"],
    ] {
        let mut args = vec!["--lexical"];
        args.extend_from_slice(extra);
        let out = search(&tools, &queries, &args);
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(stderr(&out).contains("--lexical"), "{}", stderr(&out));
    }
    let out = chef([
        OsString::from("search"),
        tools.clone().into(),
        "--calibrate".into(),
        queries.clone().into(),
        "--lexical".into(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    // The vector cache is only for a --model (the bundled model needs none).
    let out = search(&tools, &queries, &["--no-cache"]);
    assert_error(&out, &["--model"]);
    // Without --lexical, --min-cosine needs no --model: the bundled model ranks.
    let out = search(&tools, &queries, &["--min-cosine", "0.4"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // A cosine lies in [-1, 1]: a bound outside it is refused, not read as "abstain on
    // every query".
    for bad in ["2", "-1.5", "NaN"] {
        let out = search(&tools, &queries, &["--min-cosine", bad]);
        assert_error(&out, &["--min-cosine must be between -1 and 1"]);
    }
}

fn evaluate(tools: &Path, labels: &Path, extra: &[&str]) -> std::process::Output {
    search_with("--eval", tools, labels, extra)
}

/// The figures `--eval` prints, as the library computes them (what `retrieval_eval`
/// reports), for the requests of `split` in `retrieval-149.jsonl`.
fn library_metrics(
    split: &str,
    abstention: &chef_compress::search::Abstention,
) -> chef_compress::search::eval::Metrics {
    use chef_compress::search::{CatalogIndex, eval};
    let tools = chef_ir::load_tools_from_str(
        &std::fs::read_to_string(fixture("real-mcp-tools.json")).unwrap(),
    )
    .unwrap()
    .tools;
    let labelled: Vec<eval::LabelledQuery> =
        std::fs::read_to_string(fixture("retrieval-149.jsonl"))
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .filter(|q: &eval::LabelledQuery| q.split.as_deref() == Some(split))
            .collect();
    eval::evaluate(&CatalogIndex::build(&tools), &labelled, abstention)
}

fn assert_figures(out: &std::process::Output, m: &chef_compress::search::eval::Metrics) {
    assert!(out.status.success(), "{}", stderr(out));
    let got = lines(&stdout(out));
    assert_eq!(got.len(), 1, "one JSON object");
    let got = &got[0];
    let close = |key: &str, want: f64| {
        let v = got[key].as_f64().unwrap();
        assert!((v - want).abs() < 1e-6, "{key}: {v} vs {want}");
    };
    assert_eq!(got["relevant"], m.relevant);
    assert_eq!(got["irrelevant"], m.irrelevant);
    close("recall_at_1", m.recall_at_1);
    close("recall_at_5", m.recall_at_5);
    close("mrr", m.mrr);
    close("false_abstention", m.false_abstention);
    close("true_abstention", m.true_abstention);
}

#[test]
fn eval_prints_the_figures_retrieval_eval_computes() {
    use chef_compress::search::Abstention;
    let tools = fixture("real-mcp-tools.json");
    let labels = fixture("retrieval-149.jsonl");

    let out = evaluate(&tools, &labels, &["--split", "heldout", "--lexical"]);
    let m = library_metrics("heldout", &Abstention::CALIBRATED);
    assert_figures(&out, &m);
    let got = &lines(&stdout(&out))[0];
    assert_eq!(got["ranker"], "lexical");
    assert_eq!(got["abstention"], "default");
    assert_eq!(got["tools"], 149);
    assert_eq!(got["requests"], 105);
    // The held-out row of docs/PERFORMANCE.md (lexical, default abstention).
    assert_eq!((m.relevant, m.irrelevant), (75, 30));
    assert_eq!(
        format!("{:.3}/{:.3}/{:.3}", m.recall_at_1, m.recall_at_5, m.mrr),
        "0.800/0.820/0.815"
    );
    assert_eq!(
        format!(
            "{:.1}/{:.1}",
            100.0 * m.false_abstention,
            100.0 * m.true_abstention
        ),
        "16.0/90.0"
    );

    let out = evaluate(
        &tools,
        &labels,
        &["--split", "calibrate", "--never-abstain", "--lexical"],
    );
    assert_figures(&out, &library_metrics("calibrate", &Abstention::NEVER));
    assert_eq!(lines(&stdout(&out))[0]["abstention"], "none");

    // Without --lexical the bundled static model ranks with BM25F (the hybrid), with
    // its calibrated threshold and joint abstention, its best ten re-ordered by the second
    // stage: the held-out rows of docs/PERFORMANCE.md, by default, with the cosine alone
    // deciding, and in the hybrid's own order (--first-stage: recall@5 and abstention
    // the same, a lower recall@1 and MRR).
    for (extra, abstention, order, figures) in [
        (
            &[][..],
            "min_cosine 0.54, joint",
            Value::from("second-stage"),
            ["0.867", "0.960", "0.908", "0.027", "0.867"],
        ),
        (
            &["--joint"],
            "min_cosine 0.54, joint",
            Value::from("second-stage"),
            ["0.867", "0.960", "0.908", "0.027", "0.867"],
        ),
        (
            &["--cosine-only"],
            "min_cosine 0.54",
            Value::from("second-stage"),
            ["0.800", "0.893", "0.841", "0.093", "0.933"],
        ),
        (
            &["--first-stage"],
            "min_cosine 0.54, joint",
            Value::Null,
            ["0.840", "0.960", "0.896", "0.027", "0.867"],
        ),
        (
            &["--first-stage", "--cosine-only"],
            "min_cosine 0.54",
            Value::Null,
            ["0.773", "0.893", "0.829", "0.093", "0.933"],
        ),
    ] {
        let mut args = vec!["--split", "heldout"];
        args.extend_from_slice(extra);
        let out = evaluate(&tools, &labels, &args);
        assert!(out.status.success(), "{}", stderr(&out));
        let got = &lines(&stdout(&out))[0];
        assert_eq!(got["ranker"], "hybrid");
        assert!(
            got["model"]
                .as_str()
                .unwrap()
                .starts_with("static-bundled:"),
            "{got}"
        );
        assert_eq!(got["abstention"], abstention, "{extra:?}");
        assert_eq!(got["order"], order, "{extra:?}");
        let figure = |key: &str| format!("{:.3}", got[key].as_f64().unwrap());
        assert_eq!(
            [
                "recall_at_1",
                "recall_at_5",
                "mrr",
                "false_abstention",
                "true_abstention"
            ]
            .map(figure),
            figures,
            "{extra:?}"
        );
    }

    // The whole file: both halves, and the same bytes on a second run.
    let a = evaluate(&tools, &labels, &[]);
    let b = evaluate(&tools, &labels, &[]);
    assert_eq!(a.stdout, b.stdout);
    assert_eq!(lines(&stdout(&a))[0]["requests"], 210);
}

#[test]
fn eval_without_irrelevant_requests_reports_no_true_abstention() {
    let (_dir, labels) = temp_file(
        "l.jsonl",
        "{\"query\":\"add three new rows to the bottom of the tracker spreadsheet\",\"expected\":[\"gdrive_sheets_append_rows\"]}\n",
    );
    let out = evaluate(&fixture("real-mcp-tools.json"), &labels, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let got = &lines(&stdout(&out))[0];
    assert_eq!(got["relevant"], 1);
    assert_eq!(got["true_abstention"], Value::Null);
    assert_eq!(got["recall_at_1"], 1.0);
}

#[test]
fn unusable_label_files_exit_2_naming_file_and_line() {
    let cases = [
        (
            "not-json.jsonl",
            "{\"query\":\"ok\",\"expected\":[]}\n{",
            ": line 2: not valid JSON",
        ),
        ("array.jsonl", "[1]\n", ": line 1: expected an object"),
        (
            "expected.jsonl",
            "\n{\"query\":\"x\",\"expected\":\"reverse_geocode\"}\n",
            ": line 2: not a labelled request",
        ),
        (
            "unknown.jsonl",
            "{\"query\":\"x\",\"expected\":[\"no_such_tool\"]}\n",
            ": line 1: expected tool \"no_such_tool\" is not in the catalogue",
        ),
        // A misspelt `expected` is not a request no tool answers.
        (
            "misspelt.jsonl",
            "{\"query\":\"x\",\"expected\":[]}\n{\"query\":\"x\",\"expect\":[\"reverse_geocode\"]}\n",
            ": line 2: no \"expected\"",
        ),
    ];
    assert_unusable_files(&cases, evaluate);
    // --eval and --queries are two different commands.
    let (_dir, path) = temp_file("l.jsonl", "{\"query\":\"x\",\"expected\":[]}\n");
    let out = chef([
        OsString::from("search"),
        fixture("real-mcp-tools.json").into(),
        "--eval".into(),
        path.clone().into(),
        "--queries".into(),
        path.into(),
    ]);
    assert_eq!(out.status.code(), Some(2));
}

/// `--calibrate` picks the threshold under the rule in use: with joint abstention only
/// among the unanswerable requests BM25F also refuses, so it is higher than the cosine
/// alone's; `abstains` is the share refused at it (the figures of docs/PERFORMANCE.md's
/// `--calibrate` on retrieval-149's 60 unanswerable requests).
#[test]
fn calibrate_prints_the_threshold_for_the_rule_in_use() {
    let irrelevant: String = std::fs::read_to_string(fixture("retrieval-149.jsonl"))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["expected"].as_array().is_some_and(Vec::is_empty))
        .map(|v| format!("{}\n", serde_json::json!({ "query": v["query"] })))
        .collect();
    let (_dir, queries) = temp_file("irrelevant.jsonl", &irrelevant);
    let tools = fixture("real-mcp-tools.json");
    for (extra, joint, min_cosine, abstains) in [
        (None, true, 0.575, 0.9),
        (Some("--cosine-only"), false, 0.531, 0.917),
    ] {
        let mut args = vec![
            OsString::from("search"),
            tools.clone().into(),
            "--calibrate".into(),
            queries.clone().into(),
        ];
        args.extend(extra.map(OsString::from));
        let out = chef(args);
        assert!(out.status.success(), "{}", stderr(&out));
        let got = &lines(&stdout(&out))[0];
        assert_eq!(got["irrelevant"], 60, "{got}");
        assert_eq!(got["joint"], joint, "{got}");
        assert_eq!(
            got["min_cosine"].as_f64().map(|c| (c * 1000.0).round()),
            Some((min_cosine * 1000.0_f64).round()),
            "{got}"
        );
        assert_eq!(
            got["abstains"].as_f64().map(|a| (a * 1000.0).round()),
            Some((abstains * 1000.0_f64).round()),
            "{got}"
        );
    }
}

#[test]
fn split_and_abstain_share_need_their_flag_even_with_queries() {
    let (_dir, queries) = temp_file("q.jsonl", "{\"query\":\"bake a cake\"}\n");
    let tools = fixture("real-mcp-tools.json");
    let out = search(&tools, &queries, &["--split", "heldout"]);
    assert_one_line_error(&out, &["--split", "needs --eval"]);
    assert!(stdout(&out).is_empty());
    let out = search(&tools, &queries, &["--abstain-share", "0.5"]);
    assert_one_line_error(&out, &["--abstain-share", "needs --calibrate"]);
    assert!(stdout(&out).is_empty());
}

#[test]
fn eval_with_nothing_to_measure_exits_2_and_figures_over_no_request_are_null() {
    let tools = fixture("real-mcp-tools.json");
    // A split no line has (a typo): nothing to measure.
    let out = evaluate(
        &tools,
        &fixture("retrieval-149.jsonl"),
        &["--split", "heldot", "--lexical"],
    );
    assert_one_line_error(
        &out,
        &["retrieval-149.jsonl", "\"heldot\"", "nothing to measure"],
    );
    assert!(stdout(&out).is_empty());
    let (_dir, empty) = temp_file("empty.jsonl", "\n");
    let out = evaluate(&tools, &empty, &["--lexical"]);
    assert_one_line_error(&out, &["empty.jsonl", "nothing to measure"]);

    // Only unanswerable requests: the figures over answerable ones are null, not 0.
    let (_dir, labels) = temp_file(
        "l.jsonl",
        "{\"query\":\"bake a chocolate cake\",\"expected\":[]}\n",
    );
    let out = evaluate(&tools, &labels, &["--lexical"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let got = &lines(&stdout(&out))[0];
    assert_eq!(got["relevant"], 0, "{got}");
    for key in ["recall_at_1", "recall_at_5", "mrr", "false_abstention"] {
        assert_eq!(got[key], Value::Null, "{key}: {got}");
    }
    assert!(got["true_abstention"].is_number(), "{got}");

    // --calibrate on a file with no request.
    let out = chef([
        OsString::from("search"),
        tools.into(),
        "--calibrate".into(),
        empty.into(),
    ]);
    assert_one_line_error(&out, &["empty.jsonl", "no request", "--calibrate"]);
    assert!(stdout(&out).is_empty());
}

/// `--eval --second-stage` prints the default line (the hybrid, its best ten in the second
/// stage's order) and then the whole second stage's: the held-out rows of
/// docs/PERFORMANCE.md ("A second stage", "The second stage by default"), at its threshold
/// and never abstaining.
#[test]
fn eval_with_the_second_stage_prints_it_beside_the_first() {
    let tools = fixture("real-mcp-tools.json");
    let labels = fixture("retrieval-149.jsonl");
    for (extra, first, second) in [
        (
            &["--split", "heldout", "--second-stage"][..],
            "0.867/0.960/0.908/2.7/86.7",
            "0.800/0.847/0.821/13.3/86.7",
        ),
        (
            &["--split", "heldout", "--second-stage", "--never-abstain"][..],
            "0.880/0.973/0.921/0.0/0.0",
            "0.880/0.967/0.921/0.0/0.0",
        ),
    ] {
        let out = evaluate(&tools, &labels, extra);
        assert!(out.status.success(), "{}", stderr(&out));
        let got = lines(&stdout(&out));
        assert_eq!(got.len(), 2, "two JSON objects");
        let row = |v: &Value| {
            let f = |key: &str| v[key].as_f64().unwrap();
            format!(
                "{:.3}/{:.3}/{:.3}/{:.1}/{:.1}",
                f("recall_at_1"),
                f("recall_at_5"),
                f("mrr"),
                100.0 * f("false_abstention"),
                100.0 * f("true_abstention")
            )
        };
        assert_eq!(got[0]["ranker"], "hybrid");
        assert_eq!(got[1]["ranker"], "second-stage");
        assert_eq!(
            (row(&got[0]), row(&got[1])),
            (first.to_owned(), second.to_owned())
        );
    }
    let out = evaluate(&tools, &labels, &["--min-relevance", "0.3"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "--min-relevance needs --second-stage"
    );
    for conflicting in [
        ["--first-stage", "--second-stage"],
        ["--first-stage", "--lexical"],
    ] {
        let out = evaluate(&tools, &labels, &conflicting);
        assert_eq!(out.status.code(), Some(2), "{conflicting:?}");
    }
}
