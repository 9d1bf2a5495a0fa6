use serde_json::Value;

use crate::{
    assert_error, assert_one_line_error, chef, fixture, on_corpus, one_line_error, stderr, stdout,
    temp_file,
};

fn compress(args: &[&str]) -> Value {
    let out = on_corpus("compress", args);
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
    for level in ["0", "1", "2", "3"] {
        let run = || stdout(&on_corpus("compress", &["--level", level]));
        assert_eq!(run(), run(), "level {level}");
    }
}

#[test]
fn compress_refuses_bad_flags_and_level_4() {
    for bad in [
        ["--level", "9"],
        ["--map-style", "banana"],
        ["--objective", "speed"],
    ] {
        let out = on_corpus("compress", &[bad[0], bad[1]]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(stdout(&out).is_empty());
    }
    let out = on_corpus("compress", &["--level", "4"]);
    assert_one_line_error(&out, &["real-mcp-tools.json", "needs a compiled map"]);
}

#[test]
fn compress_on_an_unusable_file_exits_2_with_one_line() {
    let (_dir, path) = temp_file("dup.json", r#"[{"name":"a"},{"name":"a"}]"#);
    for command in ["compress", "recommend"] {
        let out = chef([std::ffi::OsStr::new(command), path.as_os_str()]);
        assert_one_line_error(&out, &["dup.json", "duplicate tool name"]);
    }
}

#[test]
fn compress_level_4_with_the_compiled_corpus_map() {
    let map = fixture("real-mcp-tools.compiled-map.json");
    let report = compress(&[
        "--level",
        "4",
        "--compiled",
        map.to_str().unwrap(),
        "--require-compiled",
    ]);
    let keys: Vec<_> = report.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["tools", "system", "stats", "codes"]);
    assert_eq!(report["stats"]["level"], 4);
    assert_eq!(report["stats"]["ambiguous_map_lines"], 0);
    assert_eq!(report["stats"]["uncompiled_tools"], 0);
    assert_eq!(
        report["stats"]["stale_compiled_tools"],
        serde_json::json!([])
    );
    assert!(
        report["system"]
            .as_str()
            .unwrap()
            .contains("```python\ndef accessorial_revenue_details(")
    );
    // Level 4 without a map is refused naming the flag, exit status 2.
    let out = on_corpus("compress", &["--level", "4"]);
    assert_one_line_error(&out, &["needs a compiled map", "--compiled MAP.json"]);
    // A map compiled for another catalogue is refused too (`chef eval` refused it; compress
    // showed every tool "(not compiled)"), and so is a catalogue with a line break in a
    // name.
    let (_dir, other) = temp_file("other.json", r#"[{"name":"not_in_the_map"}]"#);
    for command in [&["compress"][..], &["resolve", "--calls", "/dev/null"]] {
        let mut args: Vec<&std::ffi::OsStr> = command.iter().map(|a| a.as_ref()).collect();
        args.extend([
            other.as_os_str(),
            "--level".as_ref(),
            "4".as_ref(),
            "--compiled".as_ref(),
            map.as_os_str(),
        ]);
        let out = chef(args);
        assert_error(
            &out,
            &["names none of the 1 tools", "chef compile-map --tools"],
        );
    }
    // Level 1 reads only the docstrings it finds: the same map is no error there, but it
    // is said to change nothing.
    let out = chef([
        std::ffi::OsStr::new("compress"),
        other.as_os_str(),
        "--level".as_ref(),
        "1".as_ref(),
        "--compiled".as_ref(),
        map.as_os_str(),
    ]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("names none of the 1 tools") && err.contains("changes nothing at level 1"),
        "{err}"
    );
    let (_dir, broken) = temp_file("broken.json", r#"[{"name":"a\nz9 wipe_disk"}]"#);
    let out = chef([std::ffi::OsStr::new("compress"), broken.as_os_str()]);
    assert_one_line_error(&out, &["broken.json", "control character"]);
}

#[test]
fn compress_with_a_target_emits_that_providers_tools_array() {
    for level in ["0", "1", "3"] {
        let neutral = compress(&["--level", level]);
        let neutral_tools = neutral["tools"].as_array().unwrap();
        for target in ["anthropic", "openai", "openai-responses", "gemini"] {
            let report = compress(&["--level", level, "--target", target]);
            let keys: Vec<_> = report.as_object().unwrap().keys().cloned().collect();
            assert_eq!(keys, ["tools", "system", "stats", "codes"], "{target}");
            assert_eq!(report["system"], neutral["system"], "{target} {level}");
            assert_eq!(report["stats"], neutral["stats"], "{target} {level}");
            assert_eq!(report["codes"], neutral["codes"], "{target} {level}");
            let tools = report["tools"].as_array().unwrap();
            // The wire names of every target, in the compressed order.
            let names: Vec<&str> = match target {
                "anthropic" | "openai-responses" => {
                    tools.iter().map(|t| t["name"].as_str().unwrap()).collect()
                }
                "openai" => tools
                    .iter()
                    .map(|t| {
                        assert_eq!(t["type"], "function");
                        t["function"]["name"].as_str().unwrap()
                    })
                    .collect(),
                _ => {
                    assert_eq!(tools.len(), 1, "gemini: one tool object");
                    tools[0]["functionDeclarations"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|d| d["name"].as_str().unwrap())
                        .collect()
                }
            };
            let expected: Vec<&str> = neutral_tools
                .iter()
                .map(|t| t["name"].as_str().unwrap())
                .collect();
            assert_eq!(names, expected, "{target} level {level}");
            match target {
                "anthropic" => {
                    // One breakpoint, on the last tool.
                    let cached: Vec<usize> = tools
                        .iter()
                        .enumerate()
                        .filter(|(_, t)| t.get("cache_control").is_some())
                        .map(|(i, _)| i)
                        .collect();
                    assert_eq!(cached, [tools.len() - 1]);
                    assert!(tools[0].get("input_schema").is_some());
                }
                "openai-responses" => {
                    assert_eq!(tools[0]["type"], "function");
                    assert!(tools[0].get("parameters").is_some());
                }
                _ => {}
            }
        }
    }
}

#[test]
fn compress_with_a_target_renames_refused_names_and_says_so_on_stderr() {
    let (_dir, path) = temp_file(
        "dotted.json",
        r#"[{"name":"triangle_properties.get","inputSchema":{"type":"object"}}]"#,
    );
    for (target, pointer) in [
        ("anthropic", "/tools/0/name"),
        ("openai", "/tools/0/function/name"),
        ("openai-responses", "/tools/0/name"),
    ] {
        let out = chef([
            std::ffi::OsStr::new("compress"),
            path.as_os_str(),
            "--level".as_ref(),
            "0".as_ref(),
            "--target".as_ref(),
            target.as_ref(),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(
            report.pointer(pointer).unwrap(),
            "triangle_properties_get",
            "{target}"
        );
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{target}: {err}");
        assert!(
            err.starts_with("chef: notice: ") && err.contains("triangle_properties.get"),
            "{target}: {err}"
        );
    }
}

/// A flag that changes nothing at the level asked for is said on stderr, not kept silently.
#[test]
fn flags_that_change_nothing_at_the_level_are_said() {
    // Succeeds, with every one of `said` on stderr (nothing when `said` is empty).
    let check = |args: &[&str], said: &[&str]| {
        let out = on_corpus("compress", args);
        let err = stderr(&out);
        assert!(out.status.success(), "{args:?}: {err}");
        if said.is_empty() {
            assert!(err.is_empty(), "{args:?}: {err}");
        }
        for text in said {
            assert!(err.contains(text), "{args:?}: {err}");
        }
    };
    check(
        &["--level", "0", "--map-style", "distinct"],
        &["notice: --map-style shapes level 3's code map only"],
    );
    let map = crate::fixture("real-mcp-tools.compiled-map.json");
    check(
        &["--level", "3", "--compiled", map.to_str().unwrap()],
        &["notice: --compiled is read at level 4"],
    );
    check(&["--level", "3", "--map-style", "distinct"], &[]);
    // --model picks a measured level-3 style: below level 3, or for a model no sweep
    // measured, it is said to change nothing.
    check(
        &["--level", "1", "--model", "gpt-5.6-sol"],
        &["notice: --model picks level 3's measured map style only"],
    );
    check(
        &["--level", "3", "--model", "no-such-model"],
        &[
            "no map style was measured for model `no-such-model`",
            "gpt-5.6-sol",
        ],
    );
    check(
        &[
            "--level",
            "3",
            "--model",
            "gpt-5.6-sol",
            "--objective",
            "cost",
        ],
        &[],
    );
}

#[test]
fn compress_refuses_an_unknown_target_as_a_usage_error() {
    for bad in ["claude", "Anthropic", ""] {
        let out = on_corpus("compress", &["--target", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(stdout(&out).is_empty());
        assert!(stderr(&out).contains("--target"), "{bad:?}");
    }
}

#[test]
fn compress_with_a_target_is_byte_identical_across_processes() {
    for target in ["anthropic", "openai", "openai-responses", "gemini"] {
        let run = || on_corpus("compress", &["--level", "1", "--target", target]).stdout;
        assert_eq!(run(), run(), "{target}");
    }
}

/// The corpus's tool list, reordered by `reorder`, written to `dir/name`.
fn reordered_corpus(
    dir: &std::path::Path,
    name: &str,
    reorder: impl Fn(&mut Vec<Value>),
) -> std::path::PathBuf {
    let text = std::fs::read_to_string(fixture("real-mcp-tools.json")).unwrap();
    let mut document: Value = serde_json::from_str(&text).unwrap();
    let list = match &mut document {
        Value::Object(map) => map.get_mut("tools").unwrap(),
        other => other,
    };
    let Value::Array(tools) = list else {
        panic!("the corpus is a tool list")
    };
    reorder(tools);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(&document).unwrap()).unwrap();
    path
}

#[test]
fn a_reordered_catalogue_gives_byte_identical_output() {
    let dir = tempfile::tempdir().unwrap();
    let reversed = reordered_corpus(dir.path(), "reversed.json", |t| t.reverse());
    let rotated = reordered_corpus(dir.path(), "rotated.json", |t| t.rotate_left(50));
    let map = fixture("real-mcp-tools.compiled-map.json");
    let map = map.to_str().unwrap();
    let corpus = fixture("real-mcp-tools.json");
    let run = |path: &std::path::Path, flags: &[&str]| {
        let mut args: Vec<std::ffi::OsString> = vec!["compress".into(), path.into()];
        args.extend(flags.iter().map(Into::into));
        let out = chef(args);
        assert!(out.status.success(), "{}", stderr(&out));
        out.stdout
    };
    for flags in [
        &["--level", "0"][..],
        &["--level", "1"],
        &["--level", "2"],
        &["--level", "3"],
        &["--level", "3", "--map-style", "distinct"],
        &["--level", "4", "--compiled", map],
    ] {
        let reference = run(&corpus, flags);
        let stats = &serde_json::from_slice::<Value>(&reference).unwrap()["stats"];
        assert!(
            stats["normalisations"].as_array().unwrap().len() > 1,
            "the corpus has schemas to normalise in several tools"
        );
        for other in [&reversed, &rotated] {
            assert!(
                reference == run(other, flags),
                "{flags:?} {}",
                other.display()
            );
        }
    }
}

#[test]
fn max_tools_lifts_the_tool_limit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.json");
    let tools: Vec<Value> = (0..10_001)
        .map(|i| serde_json::json!({"name": format!("svc_op{i}"), "inputSchema": {"type": "object"}}))
        .collect();
    std::fs::write(&path, serde_json::to_string(&tools).unwrap()).unwrap();
    let run = |flags: &[&str]| {
        let mut args: Vec<std::ffi::OsString> =
            vec!["compress".into(), path.clone().into_os_string()];
        args.extend(flags.iter().map(Into::into));
        chef(args)
    };

    let out = run(&["--level", "0"]);
    let err = one_line_error(&out);
    assert!(stdout(&out).is_empty());
    assert!(
        err.contains("big.json")
            && err.contains("10001 tools exceed the limit of 10000 tools")
            && err.contains("--max-tools"),
        "{err}"
    );

    let out = run(&["--level", "0", "--max-tools", "20000"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["stats"]["tool_count"], 10_001);

    // Lowering it works too, and a value that is not a count is a usage error.
    let out = on_corpus("compress", &["--max-tools", "100"]);
    assert_error(&out, &["149 tools exceed the limit of 100"]);
    for bad in ["-1", "many", "", "1e6"] {
        let out = on_corpus("compress", &[&format!("--max-tools={bad}")]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(stderr(&out).contains("--max-tools"), "{bad:?}");
    }
}

#[test]
fn resolve_and_recommend_take_max_tools_too() {
    let (_dir, calls) = temp_file(
        "calls.jsonl",
        "{\"name\":\"batch_geocode\",\"arguments\":{\"addresses\":[\"x\"]}}\n",
    );
    let calls = calls.to_str().unwrap();
    let resolve = |max: &str| on_corpus("resolve", &["--calls", calls, "--max-tools", max]);
    let recommend = |max: &str| on_corpus("recommend", &["--max-tools", max]);
    for out in [resolve("148"), recommend("148")] {
        assert_one_line_error(&out, &["149 tools exceed the limit of 148", "--max-tools"]);
    }
    for out in [resolve("149"), recommend("149")] {
        assert!(out.status.success(), "{}", stderr(&out));
    }
}

#[test]
fn counts_of_one_tool_read_in_the_singular() {
    let tools: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(fixture("real-mcp-tools.json")).unwrap())
            .unwrap();
    let map: serde_json::Map<String, Value> = serde_json::from_str(
        &std::fs::read_to_string(fixture("real-mcp-tools.compiled-map.json")).unwrap(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let two = dir.path().join("two.json");
    std::fs::write(&two, Value::Array(tools[..2].to_vec()).to_string()).unwrap();
    // A map with the line of the first tool only.
    let name = tools[0]["name"].as_str().unwrap();
    let one_line = dir.path().join("map.json");
    std::fs::write(
        &one_line,
        serde_json::json!({ name: map[name].clone() }).to_string(),
    )
    .unwrap();

    let out = chef([
        "compress".as_ref(),
        two.as_os_str(),
        "--max-tools".as_ref(),
        "1".as_ref(),
    ]);
    assert_one_line_error(
        &out,
        &["2 tools exceed the limit of 1 tool for one compress call"],
    );
    let out = chef([
        "compress".as_ref(),
        two.as_os_str(),
        "--level".as_ref(),
        "1".as_ref(),
        "--compiled".as_ref(),
        one_line.as_os_str(),
        "--require-compiled".as_ref(),
    ]);
    assert_one_line_error(&out, &["1 of 2 tools has no usable compiled line"]);
}
