//! `resolve` at every level, and one test per leniency rule (spec §4, checklist 89–115).

use chef_compress::{Level, MapStyle, Options, Resolution, ResolveError, compress};
use chef_ir::ToolDefinition;
use serde_json::{Value, json};

use crate::{
    LEVELS, at, expect_call, expect_error, expect_meta, real_tools, resolve_encoded, review_tool,
    styled, svc_search, three, tool, tools3,
};

fn l3() -> chef_compress::Compressed {
    at(&tools3(), Level::Three)
}

/// `t` called with the code (or name) `f` alone, no arguments.
fn by_code(c: &chef_compress::Compressed, f: &str) -> Resolution {
    c.resolve("t", &json!({"f": f}))
}

/// What `q` answers to the search text `s`, which must be a meta answer.
#[track_caller]
fn search(c: &chef_compress::Compressed, s: &str) -> String {
    expect_meta(c.resolve("q", &json!({"s": s})))
}

/// The spec's separator fixture: two gdrive sheet tools and `coding_task_result`.
fn gdrive() -> Vec<ToolDefinition> {
    let sheet = json!({"type": "object", "properties": {"spreadsheet_id": {"type": "string"}, "range": {"type": "string"}}, "required": ["spreadsheet_id", "range"]});
    vec![
        tool(
            "gdrive_sheets_append_rows",
            "Append rows to a sheet.",
            sheet.clone(),
        ),
        tool("gdrive_sheets_update_range", "Update a range.", sheet),
        tool(
            "coding_task_result",
            "Result of a coding task.",
            json!({"type": "object", "properties": {"taskId": {"type": "string"}}, "required": ["taskId"]}),
        ),
    ]
}

fn sheet_args() -> Value {
    json!({"spreadsheet_id": "1AbC", "range": "Log!A1:C1"})
}

/// Asserts a `github_create_issue` call with `args`, encoded at each level and resolved,
/// gives back `args` as the same JSON text.
fn assert_issue_round_trips(args: &Value) {
    for level in LEVELS {
        let c = at(&tools3(), level);
        let got = expect_call(
            resolve_encoded(&c, "github_create_issue", args.clone()),
            "github_create_issue",
        );
        assert_eq!(
            serde_json::to_string(&got).unwrap(),
            serde_json::to_string(args).unwrap(),
            "{level}"
        );
    }
}

#[test]
fn encoded_calls_round_trip_at_every_level() {
    let args = json!({"owner": "o", "repo": "r", "title": "t", "labels": ["a"]});
    assert_issue_round_trips(&args);
}

#[test]
fn arguments_come_back_byte_identical_in_key_order() {
    let args: Value =
        serde_json::from_str(r#"{"title":"t","repo":"r","owner":"o","body":"ü 😀 \u0001"}"#)
            .unwrap();
    assert_issue_round_trips(&args);
}

#[test]
fn missing_required_and_unknown_parameters_are_errors_at_every_level() {
    for level in LEVELS {
        let c = at(&tools3(), level);
        let e = c.encode_call("github_search_issues", json!({})).unwrap();
        let m = expect_error(c.resolve(&e.name, &e.args));
        assert!(m.to_lowercase().contains("required"), "{level}: {m}");
        let e = c
            .encode_call("github_search_issues", json!({"q": "x", "bogus": 1}))
            .unwrap();
        let m = expect_error(c.resolve(&e.name, &e.args));
        assert!(
            m.to_lowercase().contains("unknown parameter"),
            "{level}: {m}"
        );
    }
}

#[test]
fn hallucinated_tool_names_are_recoverable_errors() {
    for level in LEVELS {
        let c = at(&tools3(), level);
        let m = expect_error(c.resolve("totally_made_up", &json!({})));
        assert!(m.len() > 10, "{m}");
    }
    assert_eq!(
        expect_error(at(&tools3(), Level::One).resolve("github.search_issues", &json!({"q": "x"}))),
        "No tool named \"github.search_issues\"."
    );
    assert_eq!(
        expect_error(l3().resolve("totally_made_up", &json!({}))),
        "No tool named \"totally_made_up\". Invoke tools with t(f=<code>)."
    );
}

#[test]
fn every_real_tool_at_every_level_with_empty_args_only_ever_misses_required() {
    let tools = real_tools();
    for level in LEVELS {
        let c = at(&tools, level);
        for t in &tools {
            let e = c.encode_call(t.name.as_str(), json!({})).unwrap();
            match c.resolve(&e.name, &e.args) {
                Resolution::Call { name, .. } => assert_eq!(name, t.name.as_str()),
                Resolution::Error(err) => {
                    assert!(
                        err.message().starts_with("Missing required"),
                        "{level} {}: {}",
                        t.name,
                        err.message()
                    );
                }
                Resolution::Meta { .. } => panic!("meta for {}", t.name),
            }
        }
    }
}

#[test]
fn level_1_is_exact_and_unaffected_by_code_handling() {
    let c = at(&tools3(), Level::One);
    expect_call(
        c.resolve("github_search_issues", &json!({"q": "x"})),
        "github_search_issues",
    );
    expect_error(c.resolve("a1", &json!({"q": "x"})));
    expect_error(c.resolve("GitHub_Search_Issues", &json!({"q": "x"})));
    let c0 = at(&[svc_search()], Level::Zero);
    assert_eq!(
        expect_error(c0.resolve("svc.search", &json!({"q": "x"}))),
        "No tool named \"svc.search\"."
    );
}

// ---- Leniency catalogue (spec §4.6), one test per rule ----

#[test]
fn leniency_1_whole_argument_object_as_a_json_string() {
    let c = l3();
    let args = expect_call(
        c.resolve("t", &json!(r#"{"f":"a1","a":{"q":"x"}}"#)),
        "github_search_issues",
    );
    assert_eq!(args, json!({"q": "x"}));
    let c1 = at(&tools3(), Level::One);
    let args = expect_call(
        c1.resolve("github_search_issues", &json!(r#"{"q":"x"}"#)),
        "github_search_issues",
    );
    assert_eq!(args, json!({"q": "x"}));
    // A string holding an array is not an object: it becomes {} and misses `q`.
    expect_error(c1.resolve("github_search_issues", &json!("[1,2]")));
}

#[test]
fn leniency_2_nested_bag_as_a_json_string() {
    let c = l3();
    let args = expect_call(
        c.resolve(
            "t",
            &json!({"f": "b0", "a": "{\"channel\":\"C1\",\"text\":\"hi\"}"}),
        ),
        "slack_post_message",
    );
    assert_eq!(args["channel"], "C1");
    // The reference reads unparsable text as `{}` and answers "Missing required"; chef
    // says what is wrong (see `an_unreadable_argument_bag_is_refused_not_read_as_empty`).
    let m = expect_error(c.resolve("t", &json!({"f": "b0", "a": "not json at all"})));
    assert!(m.contains("received a string that is not JSON"), "{m}");
}

#[test]
fn leniency_3_flat_arguments_beside_f() {
    let args = expect_call(
        l3().resolve("t", &json!({"f": "a1", "q": "leak"})),
        "github_search_issues",
    );
    assert_eq!(args, json!({"q": "leak"}));
}

/// The reference lets a non-empty `a` win and drops the flat keys beside it; chef merges
/// them (a flag beside `a` is an argument the model meant) and refuses a key written in
/// both places with different values, which no reading can settle.
#[test]
fn leniency_4_keys_beside_a_non_empty_a_are_merged_and_a_conflict_is_refused() {
    let args = expect_call(
        l3().resolve(
            "t",
            &json!({"f": "a1", "a": {"q": "leak"}, "sort": "created"}),
        ),
        "github_search_issues",
    );
    assert_eq!(args, json!({"q": "leak", "sort": "created"}));
    let conflict = l3().resolve(
        "t",
        &json!({"f": "a1", "a": {"q": "from-a"}, "q": "from-flat"}),
    );
    let Resolution::Error(ResolveError::InvalidArguments(e)) = &conflict else {
        panic!("{conflict:?}")
    };
    assert!(
        e.message()
            .contains("\"q\" for github_search_issues was given twice"),
        "{e:?}"
    );
}

/// An empty `a` falls back to the flat keys. An `a` that cannot be read is refused even
/// with flat keys beside it (the reference reads the flat keys and drops `a`: whatever the
/// model put in it, a `dry_run` say, would be lost).
#[test]
fn leniency_5_empty_a_falls_back_to_flat_keys_and_an_unreadable_one_is_refused() {
    for a in [json!({}), json!(""), json!(null), json!([])] {
        let args = expect_call(
            l3().resolve("t", &json!({"f": "a1", "a": a, "q": "x"})),
            "github_search_issues",
        );
        assert_eq!(args, json!({"q": "x"}));
    }
    for a in [json!("garbage"), json!("{'sort': 'created'}"), json!(7)] {
        let refused = l3().resolve("t", &json!({"f": "a1", "a": a, "q": "x"}));
        let Resolution::Error(ResolveError::InvalidArguments(e)) = &refused else {
            panic!("{a}: {refused:?}")
        };
        assert!(e.message().contains("must be a JSON object"), "{e:?}");
    }
}

/// A deliberate departure from the reference (spec §4.2): a bag the model wrote that
/// cannot be read as an object (text that is not JSON, a non-empty array, a number) is
/// refused when nothing else carries arguments, instead of being read as `{}`: a tool
/// with only optional parameters would otherwise run without the filter the model meant
/// ("list the charges of cus_123" dispatched as "list every charge"). The empty
/// spellings (absent, null, "", []) still mean no arguments, and flat keys still win
/// over an unreadable `a` (leniency 5).
#[test]
fn an_unreadable_argument_bag_is_refused_not_read_as_empty() {
    let list = ToolDefinition::new(
        "stripe_list_charges",
        json!({"type": "object", "properties": {"customer": {"type": "string"}}}),
    );
    let garbled = [
        (json!("customer=cus_123"), "string that is not JSON"),
        (json!("{customer: cus_123"), "string that is not JSON"),
        (json!(["cus_123"]), "array"),
        (json!("[\"cus_123\"]"), "array"),
        (json!(7), "number"),
    ];
    for level in LEVELS {
        let c = at(std::slice::from_ref(&list), level);
        // The call as the model writes it at this level, with `bag` as its argument bag.
        let encoded = c
            .encode_call("stripe_list_charges", json!({"customer": "cus_1"}))
            .unwrap();
        let with_bag = |bag: &Value| {
            let mut args = encoded.args.clone();
            match ["args", "a"].into_iter().find(|k| args.get(*k).is_some()) {
                Some(key) => {
                    args[key] = bag.clone();
                    args
                }
                None => bag.clone(),
            }
        };
        for (bag, received) in &garbled {
            let resolved = c.resolve(&encoded.name, &with_bag(bag));
            let Resolution::Error(ResolveError::InvalidArguments(e)) = &resolved else {
                panic!("{level:?} {bag}: {resolved:?}");
            };
            let message = e.message();
            assert!(
                message.contains(&format!("received a {received}"))
                    || message.contains(&format!("received an {received}")),
                "{level:?} {bag}: {message}"
            );
            assert!(message.contains("stripe_list_charges"), "{message}");
        }
        for empty in [json!(null), json!(""), json!([]), json!({})] {
            assert_eq!(
                expect_call(
                    c.resolve(&encoded.name, &with_bag(&empty)),
                    "stripe_list_charges"
                ),
                json!({}),
                "{level:?} {empty}"
            );
        }
    }
}

/// Keys written beside the wrapper that holds a call's arguments (`a` at level 3, `args`
/// at level 2) are the call's arguments too, never dropped: `dry_run` beside `a` would
/// otherwise run a deploy for real. The same key inside and beside with different values
/// is refused. A tool's own parameter named `a` or `f` is that parameter, not the wrapper.
#[test]
fn keys_beside_the_wrapper_are_arguments_and_a_tools_own_a_or_f_is_its_parameter() {
    let deploy = ToolDefinition::new(
        "svc_deploy",
        json!({"type": "object", "properties": {"service": {"type": "string"}, "dry_run": {"type": "boolean"}}, "required": ["service"], "additionalProperties": false}),
    );
    let add = ToolDefinition::new(
        "math_add",
        json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}),
    );
    let open = ToolDefinition::new(
        "file_open",
        json!({"type": "object", "properties": {"f": {"type": "string"}, "mode": {"type": "string"}}, "required": ["f"]}),
    );
    let tools = [deploy, add, open];
    let want = json!({"service": "api", "dry_run": true});

    let c3 = at(&tools, Level::Three);
    let code = |name: &str| c3.code_for(name).unwrap().to_owned();
    let (d, m, o) = (code("svc_deploy"), code("math_add"), code("file_open"));
    for (name, args) in [
        (
            "t",
            json!({"f": d, "a": {"service": "api"}, "dry_run": true}),
        ),
        (
            "t",
            json!({"f": d, "a": {"service": "api", "dry_run": true}}),
        ),
        ("t", json!({"f": d, "service": "api", "dry_run": true})),
        // Written the same inside and beside: one value, kept.
        (
            "t",
            json!({"f": d, "a": {"service": "api", "dry_run": true}, "dry_run": true}),
        ),
        (
            "svc_deploy",
            json!({"a": {"service": "api"}, "dry_run": true}),
        ),
        (
            d.as_str(),
            json!({"a": {"service": "api"}, "dry_run": true}),
        ),
    ] {
        assert_eq!(
            expect_call(c3.resolve(name, &args), "svc_deploy"),
            want,
            "{name} {args}"
        );
    }
    let twice = c3.resolve(
        "t",
        &json!({"f": d, "a": {"service": "api", "dry_run": false}, "dry_run": true}),
    );
    let Resolution::Error(ResolveError::InvalidArguments(e)) = &twice else {
        panic!("{twice:?}")
    };
    assert!(
        e.message()
            .contains("\"dry_run\" for svc_deploy was given twice"),
        "{}",
        e.message()
    );

    let sum = json!({"a": 1, "b": 2});
    for (name, args) in [
        ("math_add", json!({"a": 1, "b": 2})),
        (m.as_str(), json!({"a": 1, "b": 2})),
        ("t", json!({"f": m, "a": 1, "b": 2})),
        ("t", json!({"f": m, "a": {"a": 1, "b": 2}})),
    ] {
        assert_eq!(
            expect_call(c3.resolve(name, &args), "math_add"),
            sum,
            "{name} {args}"
        );
    }
    let path = json!({"f": "/tmp/x", "mode": "r"});
    for (name, args) in [
        ("file_open", json!({"f": "/tmp/x", "mode": "r"})),
        ("t", json!({"f": o, "a": {"f": "/tmp/x", "mode": "r"}})),
    ] {
        assert_eq!(
            expect_call(c3.resolve(name, &args), "file_open"),
            path,
            "{name} {args}"
        );
    }

    let c2 = at(&tools, Level::Two);
    let encoded = c2
        .encode_call("svc_deploy", json!({"service": "api"}))
        .unwrap();
    let op = encoded.args["op"].clone();
    for args in [
        json!({"op": op, "args": {"service": "api"}, "dry_run": true}),
        json!({"op": op, "service": "api", "dry_run": true}),
    ] {
        assert_eq!(
            expect_call(c2.resolve(&encoded.name, &args), "svc_deploy"),
            want,
            "{args}"
        );
    }
    // An `args` that cannot be read is refused even with keys beside it.
    let garbled = json!({"op": op, "args": "{'dry_run': true}", "service": "api"});
    let refused = c2.resolve(&encoded.name, &garbled);
    assert!(
        matches!(
            &refused,
            Resolution::Error(ResolveError::InvalidArguments(_))
        ),
        "{refused:?}"
    );
}

#[test]
fn leniency_6_code_used_as_the_tool_name() {
    let c = l3();
    for args in [
        json!({"q": "memory leak"}),
        json!({"a": {"q": "memory leak"}}),
        json!({"f": "zz9", "a": "{\"q\":\"memory leak\"}"}),
    ] {
        let got = expect_call(c.resolve("a1", &args), "github_search_issues");
        assert_eq!(got, json!({"q": "memory leak"}), "{args}");
    }
}

#[test]
fn leniency_7_real_tool_name_used_as_the_tool_name() {
    let c = at(&[svc_search()], Level::Three);
    let args = expect_call(c.resolve("svc_search", &json!({"q": "x"})), "svc_search");
    assert_eq!(args, json!({"q": "x"}));
}

#[test]
fn leniency_8_real_name_instead_of_a_code_in_f() {
    let c = at(&gdrive(), Level::Three);
    expect_call(
        c.resolve(
            "t",
            &json!({"f": "gdrive_sheets_append_rows", "a": sheet_args()}),
        ),
        "gdrive_sheets_append_rows",
    );
}

#[test]
fn leniency_9_separator_and_case_drift_in_names_and_codes() {
    for style in MapStyle::ALL {
        let c = styled(&gdrive(), style);
        for sep in [".", ":", "/", "-", " ", ""] {
            let f = format!("gdrive{sep}sheets_append_rows");
            expect_call(
                c.resolve("t", &json!({"f": f, "a": sheet_args()})),
                "gdrive_sheets_append_rows",
            );
        }
        expect_call(
            c.resolve(
                "t",
                &json!({"f": "GDrive.Sheets_Append_Rows", "a": sheet_args()}),
            ),
            "gdrive_sheets_append_rows",
        );
        expect_call(
            c.resolve("gdrive.sheets_append_rows", &sheet_args()),
            "gdrive_sheets_append_rows",
        );
        let meta = expect_meta(c.resolve("q", &json!({"c": "coding.task_result"})));
        assert!(meta.starts_with("coding.task_result = "), "{meta}");
        let code = c.code_for("coding_task_result").unwrap().to_uppercase();
        expect_call(
            c.resolve("t", &json!({"f": code, "a": {"taskId": "1"}})),
            "coding_task_result",
        );
    }
}

#[test]
fn leniency_9_names_that_normalise_to_two_tools_resolve_to_neither() {
    let tools = vec![tool("a_b", "", json!({})), tool("a.b", "", json!({}))];
    let c = at(&tools, Level::Three);
    expect_error(by_code(&c, "ab"));
    expect_error(by_code(&c, "A-B"));
    expect_error(by_code(&c, "A_B"));
    let code = c.code_for("a_b").unwrap().to_owned();
    expect_call(by_code(&c, &code), "a_b");
    // Deliberately unlike the reference (which resolves neither real name here): a name
    // written exactly as the catalogue has it names one tool, so it resolves, in `f` and
    // as the tool name.
    expect_call(by_code(&c, "a_b"), "a_b");
    expect_call(by_code(&c, "a.b"), "a.b");
    expect_call(c.resolve("a.b", &json!({})), "a.b");
}

#[test]
fn leniency_10_lookup_tool_routed_through_the_dispatcher() {
    for style in MapStyle::ALL {
        let c = styled(&gdrive(), style);
        let m = expect_meta(c.resolve("t", &json!({"f": "q", "a": {"s": "append"}})));
        assert!(m.contains("gdrive_sheets_append_rows"), "{m}");
        let code = c.code_for("coding_task_result").unwrap();
        let m = expect_meta(c.resolve("t", &json!({"f": "q", "a": {"c": code}})));
        assert!(m.contains("coding_task_result"), "{m}");
        let m = expect_meta(c.resolve("t", &json!({"f": "q", "s": "append"})));
        assert!(m.contains("gdrive_sheets_append_rows"), "{m}");
    }
}

#[test]
fn leniency_11_dispatcher_nested_in_itself_one_level() {
    let c = at(&gdrive(), Level::Three);
    let code = c.code_for("gdrive_sheets_append_rows").unwrap();
    let args = expect_call(
        c.resolve("t", &json!({"f": "t", "a": {"f": code, "a": sheet_args()}})),
        "gdrive_sheets_append_rows",
    );
    assert_eq!(args, sheet_args());
    expect_error(c.resolve("t", &json!({"f": "zzz", "a": {}})));
    // Only one level is unwrapped.
    expect_error(c.resolve(
        "t",
        &json!({"f": "t", "a": {"f": "t", "a": {"f": code, "a": sheet_args()}}}),
    ));
}

#[test]
fn leniency_12_near_miss_codes_get_a_suggestion_not_a_call() {
    let c = l3();
    assert_eq!(
        expect_error(by_code(&c, "a0x")),
        "No map code \"a0x\". Search with q(s=…). Did you mean \"a0\"? Use it exactly as written in <toolmap>."
    );
    assert_eq!(
        expect_error(by_code(&c, "zz9")),
        "No map code \"zz9\". Search with q(s=…)."
    );
    let m = expect_error(by_code(&c, "a0 github_create_issue"));
    assert!(
        m.ends_with("Did you mean \"a0\"? Use it exactly as written in <toolmap>."),
        "{m}"
    );
    match by_code(&c, "b00") {
        Resolution::Error(ResolveError::UnknownCode { code, suggestion }) => {
            assert_eq!(code, "b00");
            assert_eq!(suggestion.as_deref(), Some("b0"));
        }
        other => panic!("{other:?}"),
    }
    let m = expect_error(by_code(&c, "gdrive.delete_everything"));
    assert!(
        m.contains("No map code") || m.contains("Did you mean"),
        "{m}"
    );
}

#[test]
fn near_miss_suggestions_agree_with_a_full_scan() {
    use chef_compress::similarity::{nearest, similarity};
    let tools: Vec<_> = (0..60)
        .map(|i| tool(&format!("n{}_op{}", i % 30, i), "", json!({})))
        .collect();
    let c = at(&tools, Level::Three);
    let codes: Vec<String> = c.codes().map(|(_, code)| code.to_owned()).collect();
    for written in [
        "a0x", "b", "0", "1", "ab1x", "xab1", "a01", "zz9", "___", "a 1", "b0.", "ab0", "AB1",
        "c1 n2_op", "x", "bb", "ba1",
    ] {
        let expected = nearest(written, codes.iter().map(String::as_str), 55);
        let got = match by_code(&c, written) {
            Resolution::Error(ResolveError::UnknownCode { suggestion, .. }) => suggestion,
            Resolution::Call { .. } => continue,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            got.as_deref(),
            expected,
            "{written:?} (score {:?})",
            expected.map(|e| similarity(written, e))
        );
    }
}

#[test]
fn leniency_13_near_miss_parameter_names_are_answered_not_remapped() {
    let m = expect_error(l3().resolve("t", &json!({"f": "a1", "a": {"query": "memory leak"}})));
    assert!(m.contains("query") && m.contains("\"q\""), "{m}");
}

#[test]
fn leniency_14_wrong_case_enum_values_are_answered_with_the_exact_spelling() {
    let review = review_tool("Review.");
    let c = at(&[review], Level::Three);
    let m = expect_error(c.resolve("t", &json!({"f": "a0", "a": {"event": "approve"}})));
    assert!(m.contains("APPROVE"), "{m}");
}

#[test]
fn leniency_15_level_2_accepts_the_raw_namespace_under_an_alias() {
    let options = Options::new()
        .with_level(Level::Two)
        .with_alias_of(|ns| format!("{ns}_tools"));
    let c = compress(&[svc_search()], &options).unwrap();
    expect_call(
        c.resolve("svc", &json!({"op": "search", "args": {"q": "x"}})),
        "svc_search",
    );
    expect_call(
        c.resolve("svc_tools", &json!({"op": "search", "args": {"q": "x"}})),
        "svc_search",
    );
    expect_meta(c.resolve("describe_op", &json!({"ns": "svc", "op": "search"})));
}

#[test]
fn not_accepted_capitalised_meta_names_and_unknown_codes() {
    let c = l3();
    expect_error(c.resolve("T", &json!({"f": "a0"})));
    expect_error(c.resolve("Q", &json!({"s": "x"})));
    expect_error(c.resolve("zz9", &json!({"f": "zz9", "a": {}})));
}

// ---- q ----

#[test]
fn q_expands_a_code_to_signature_and_full_description() {
    let c = l3();
    assert_eq!(
        expect_meta(c.resolve("q", &json!({"c": "a1"}))),
        "a1 = github_search_issues(q,sort?:comments|created|updated,per_page?) — Search issues and pull requests across all of GitHub using a query string.\n\n\
         Parameters:\n\
         - q (string, required): Search query using GitHub search syntax.\n\
         - sort (string, one of \"comments\", \"created\", \"updated\"): Sort field.\n\
         - per_page (integer): Results per page (max 100)."
    );
    let m = expect_meta(c.resolve("q", &json!({"c": "a0"})));
    assert!(m.contains("github_create_issue"));
    assert_eq!(
        expect_error(c.resolve("q", &json!({"c": "zz99"}))),
        "No map code \"zz99\". Search with q(s=…)."
    );
    // A blank or absent search text leaves the lookup to `c`.
    for s in [json!(""), json!("  "), json!(null), json!(0)] {
        assert!(
            expect_meta(c.resolve("q", &json!({"c": "b0", "s": s})))
                .starts_with("b0 = slack_post_message("),
            "{s}"
        );
    }
}

/// Issue 26: a small model called `q` with a code (or a real name) in `c` beside the
/// question it meant in `s`; the text is searched, not the code looked up and the
/// question dropped.
#[test]
fn q_with_a_code_and_a_search_text_searches_the_text() {
    let c = l3();
    let search = search(&c, "slack");
    assert_eq!(search, "b0 = slack_post_message(channel,text,thread_ts?)");
    for code in ["a0", "github_create_issue", "zz99", ""] {
        let both = json!({"c": code, "s": "slack"});
        assert_eq!(expect_meta(c.resolve("q", &both)), search, "{both}");
        // Routed through the dispatcher, nested or flat.
        assert_eq!(
            expect_meta(c.resolve("t", &json!({"f": "q", "a": both}))),
            search
        );
        assert_eq!(
            expect_meta(c.resolve("t", &json!({"f": "q", "c": code, "s": "slack"}))),
            search
        );
    }
    // The lookup alone still expands the code, and an unknown one is still an error.
    assert!(
        expect_meta(c.resolve("q", &json!({"c": "a0"}))).starts_with("a0 = github_create_issue(")
    );
    expect_error(c.resolve("q", &json!({"c": "zz99"})));
    // A question nothing fits is answered as a search, never as a code error.
    assert_eq!(
        expect_meta(c.resolve("q", &json!({"c": "a0", "s": "bake a cake"}))),
        "No matches for \"bake a cake\"."
    );
}

/// `q(s=…)` ranks with the catalogue index (issue 4): best first, case-insensitive, and
/// "No matches" when the index abstains; a blank request lists tools in code order.
#[test]
fn q_ranks_tools_best_first_and_lists_code_order_when_blank() {
    let c = l3();
    let m = search(&c, "slack");
    assert_eq!(m, "b0 = slack_post_message(channel,text,thread_ts?)");
    let m = search(&c, "search for issues");
    assert!(m.starts_with("a1 = github_search_issues("), "{m}");
    let m = search(&c, "open a new issue");
    assert!(m.starts_with("a0 = github_create_issue("), "{m}");
    let m = search(&c, "GITHUB");
    assert_eq!(m.lines().count(), 2, "{m}");
    assert!(m.lines().all(|l| l.contains("github_")), "{m}");
    assert_eq!(
        search(&c, "nothing-like-this"),
        "No matches for \"nothing-like-this\"."
    );
    let all = expect_meta(c.resolve("q", &json!({})));
    let codes: Vec<&str> = all
        .lines()
        .map(|l| l.split(" = ").next().unwrap())
        .collect();
    assert_eq!(
        codes,
        ["a0", "a1", "b0"],
        "empty search lists all in code order"
    );
    assert_eq!(search(&c, "  "), all);
}

#[test]
fn search_limit_caps_the_hits() {
    let c = compress(&tools3(), &three().with_search_limit(1)).unwrap();
    assert_eq!(
        search(&c, ""),
        "a0 = github_create_issue(owner,repo,title,body?,labels?:string[])"
    );
    let none = compress(&tools3(), &three().with_search_limit(0)).unwrap();
    assert_eq!(search(&none, "github"), "No matches for \"github\".");
}

#[test]
fn validation_off_passes_any_arguments() {
    let c = compress(&tools3(), &three().with_validate(false)).unwrap();
    let args = expect_call(
        c.resolve("t", &json!({"f": "a1", "a": {"bogus": 1}})),
        "github_search_issues",
    );
    assert_eq!(args, json!({"bogus": 1}));
}

#[test]
fn an_absent_f_is_an_unknown_code_with_no_suggestion() {
    for args in [json!({}), json!({"f": ""}), json!({"a": {"owner": "o"}})] {
        let Resolution::Error(e) = l3().resolve("t", &args) else {
            panic!("{args}");
        };
        assert!(
            matches!(&e, ResolveError::UnknownCode { code, suggestion: None } if code.is_empty()),
            "{e:?}"
        );
        // The model is told what `t` needs, not that the code "" does not exist.
        assert_eq!(
            e.message(),
            "t needs \"f\": the map code of the tool to call, with the tool's arguments in \"a\". Search with q(s=…) to find a code."
        );
    }
}

#[test]
fn dispatcher_arguments_that_cannot_be_read_are_refused_naming_no_tool() {
    let l4 = compress(
        &tools3(),
        &Options::new().with_level(Level::Four).with_compiled(
            tools3()
                .iter()
                .map(|t| (t.name.to_string(), format!("def {}(): \"x\"", t.name)))
                .collect::<std::collections::BTreeMap<_, _>>(),
        ),
    )
    .unwrap();
    for (c, hint) in [
        (l3(), "Invoke tools with t(f=<code>)."),
        (l4, "Invoke tools with t(f=<function name>)."),
    ] {
        for (raw, received) in [
            (json!("not json at all"), "a string that is not JSON"),
            (
                json!("{\"f\": \"a0\", \"a\": {"),
                "a string that is not JSON",
            ),
            (json!("[1, 2]"), "an array"),
            (json!([1, 2]), "an array"),
            (json!(7), "a number"),
        ] {
            let Resolution::Error(e) = c.resolve("t", &raw) else {
                panic!("{raw}");
            };
            assert!(
                matches!(&e, ResolveError::UnreadableDispatch { name, .. } if name == "t"),
                "{e:?}"
            );
            assert_eq!(e.tool(), None);
            assert!(e.recoverable());
            assert_eq!(
                e.message(),
                format!("Arguments for t must be a JSON object; received {received}. {hint}")
            );
            // `q` is not answered with a listing of the map either.
            let Resolution::Error(e) = c.resolve("q", &raw) else {
                panic!("q {raw}");
            };
            assert_eq!(
                e.message(),
                format!(
                    "Arguments for q must be a JSON object; received {received}. Look a tool up with q(s=<keyword>) or q(c=<code>)."
                )
            );
        }
        // The empty spellings of "no arguments" still list the map.
        for empty in [json!(null), json!(""), json!([]), json!({})] {
            assert!(
                matches!(c.resolve("q", &empty), Resolution::Meta { .. }),
                "{empty}"
            );
        }
    }
}

#[test]
fn a_real_tool_named_t_or_q_is_reachable_only_through_its_code() {
    let tools = vec![
        tool(
            "t",
            "A tool called t.",
            json!({"type": "object", "properties": {"x": {"type": "integer"}}}),
        ),
        tool("q", "A tool called q.", json!({"type": "object"})),
    ];
    let c = at(&tools, Level::Three);
    let code = c.code_for("t").unwrap().to_owned();
    let args = expect_call(c.resolve("t", &json!({"f": code, "a": {"x": 1}})), "t");
    assert_eq!(args, json!({"x": 1}));
    let code = c.code_for("q").unwrap().to_owned();
    expect_call(by_code(&c, &code), "q");
    // The bare name `q` is the lookup tool.
    search(&c, "called");
}

/// Issue 4: `q(s=…)` at level 3/4 answers with the ranked codes and lines; the reference's
/// substring search finds nothing for a real question.
#[test]
fn q_answers_a_real_question_with_the_ranked_tools() {
    let tools = real_tools();
    let c = at(&tools, Level::Three);
    let question = "which customer sites are active?";
    assert!(
        !tools
            .iter()
            .any(|t| t.name.as_str().contains(question) || t.description.contains(question)),
        "a substring search would find it"
    );
    let m = search(&c, question);
    let first = m.lines().next().unwrap();
    let code = c.code_for("get_active_locations").unwrap();
    let other = c.code_for("active_locations").unwrap();
    assert!(
        first.starts_with(&format!("{code} = get_active_locations("))
            || first.starts_with(&format!("{other} = active_locations(")),
        "{m}"
    );
    assert!(m.lines().count() <= Options::new().search_limit(), "{m}");
    // Every line is `code = signature` for the tool the code names.
    for line in m.lines() {
        let (code, signature) = line.split_once(" = ").unwrap();
        let name = signature.split('(').next().unwrap();
        assert_eq!(c.code_for(name).unwrap(), code, "{line}");
    }
    // A request nothing in the catalogue fits: the index abstains.
    assert_eq!(
        search(&c, "bake a chocolate cake"),
        "No matches for \"bake a chocolate cake\"."
    );
}

/// Code order: fewer letters first, then the letters, then the number.
fn code_order_key(code: &str) -> (usize, String, u64) {
    let letters: String = code.chars().take_while(char::is_ascii_lowercase).collect();
    let number = code[letters.len()..].parse().unwrap_or(u64::MAX);
    (letters.len(), letters, number)
}

/// Issue 47, item 12: `resolve_hiding` never suggests a hidden tool's code, and its
/// suggestion is what scoring every code gives: the nearest code of a tool not hidden
/// (first in code order on ties, at least 55), and none when the hidden tool's code is at
/// least as near — the model meant the hidden tool, and another is not what it asked for.
#[test]
fn near_miss_codes_never_suggest_a_hidden_tool_nor_swap_it_for_another() {
    use chef_compress::similarity::{SUGGESTION_FLOOR, similarity};
    let tools = crate::real_tools();
    let c = at(&tools, Level::Three);
    let mut coded: Vec<(String, String)> = tools
        .iter()
        .map(|t| {
            let name = t.name.as_str().to_owned();
            (c.code_for(&name).unwrap().to_owned(), name)
        })
        .collect();
    coded.sort_by_key(|(code, _)| code_order_key(code));
    let (mut suggested, mut withheld) = (0, 0);
    for (i, (hidden_code, hidden_name)) in coded.iter().enumerate().step_by(7) {
        let hidden = |n: &str| n == hidden_name;
        // Near misses of the hidden code, and of a code a few places on (nearer another
        // tool, unless it is an affix of the hidden one).
        let (other, _) = &coded[(i + 5) % coded.len()];
        let written = [
            format!("{hidden_code}x"),
            format!("x{hidden_code}"),
            format!("{hidden_code}0"),
            hidden_code[..hidden_code.len() - 1].to_owned(),
            format!("{hidden_code} {hidden_name}"),
            format!("{other}x"),
            format!("x{other}"),
        ];
        for w in &written {
            let Resolution::Error(e) = c.resolve_hiding("t", &json!({"f": w}), &hidden) else {
                continue;
            };
            let expected = coded
                .iter()
                .filter(|(_, name)| name != hidden_name)
                .map(|(code, _)| (similarity(w, code), code))
                .fold(None::<(u8, &String)>, |best, (score, code)| match best {
                    Some((top, _)) if top >= score => best,
                    _ => Some((score, code)),
                })
                .filter(|(score, _)| {
                    *score >= SUGGESTION_FLOOR && *score > similarity(w, hidden_code)
                })
                .map(|(_, code)| code.clone());
            // A shorter code may be another tool's (then its arguments are judged).
            if let ResolveError::UnknownCode { suggestion, .. } = e {
                assert_ne!(suggestion.as_deref(), Some(hidden_code.as_str()), "{w}");
                assert_eq!(suggestion, expected, "{w}");
                if suggestion.is_some() {
                    suggested += 1;
                } else if similarity(w, hidden_code) >= SUGGESTION_FLOOR {
                    withheld += 1;
                }
            }
        }
    }
    assert!(suggested > 3, "only {suggested} suggestions");
    assert!(
        withheld > 10,
        "only {withheld} near misses of a hidden code"
    );
    // Nothing hidden: the hidden tool's own code is suggested, as before.
    let (code, _) = &coded[0];
    match c.resolve("t", &json!({"f": format!("{code}x")})) {
        Resolution::Error(ResolveError::UnknownCode { suggestion, .. }) => {
            assert_eq!(suggestion.as_deref(), Some(code.as_str()));
        }
        other => panic!("{other:?}"),
    }
}

/// Level 3: `t(f=…)` takes real names too, so a misspelt name is answered with the name it
/// meant when no code is near; never a hidden tool's, and not a sibling's when the hidden
/// one is the nearest.
#[test]
fn level_3_answers_a_misspelt_name_with_the_name() {
    let tools = crate::real_tools();
    let c = at(&tools, Level::Three);
    let Resolution::Error(e) = c.resolve("t", &json!({"f": "gdrive_upload_files"})) else {
        panic!()
    };
    assert!(
        e.message().contains("Did you mean \"gdrive_upload_file\"?"),
        "{e}"
    );
    let hidden = |n: &str| n == "gdrive_upload_file";
    let Resolution::Error(e) = c.resolve_hiding("t", &json!({"f": "gdrive_upload_files"}), &hidden)
    else {
        panic!()
    };
    assert!(!e.message().contains("Did you mean"), "{e}");
}

/// Level 4: a misspelt function name is never answered with a hidden tool's name, through
/// `t(f=…)` and through `q(c=…)`, nor with another tool's when the hidden one is nearer;
/// a name nearer another tool still gets that one.
#[test]
fn near_miss_functions_never_suggest_a_hidden_tool() {
    let tools = crate::real_tools();
    let map: std::collections::BTreeMap<String, String> = tools
        .iter()
        .map(|t| {
            let n = t.name.as_str();
            (n.to_owned(), format!("def {n}(): \"{n}\""))
        })
        .collect();
    let c = compress(
        &tools,
        &Options::new().with_level(Level::Four).with_compiled(map),
    )
    .unwrap();
    let hidden = |n: &str| n == "gdrive_upload_file";
    for w in [
        "gdrive_upload_files",
        "gdrive_uplod_file",
        "gdrive_uplaod_file",
        "upload_file",
        "GDrive-Upload-Files",
    ] {
        for (name, args) in [("t", json!({"f": w})), ("q", json!({"c": w}))] {
            let plain = c.resolve(name, &args);
            let Resolution::Error(e) = c.resolve_hiding(name, &args, &hidden) else {
                panic!("{w}: {plain:?}");
            };
            match &e {
                ResolveError::UnknownFunction { suggestion, .. } => {
                    assert_eq!(suggestion.as_deref(), None, "{w}");
                }
                other => panic!("{w}: {other:?}"),
            }
            assert!(!e.message().contains("\"gdrive_upload_file\""), "{e}");
        }
    }
    // A misspelling nearer an open tool is still answered with it.
    let Resolution::Error(e) = c.resolve_hiding("t", &json!({"f": "gdrive_downlod_file"}), &hidden)
    else {
        panic!()
    };
    assert!(
        e.message()
            .contains("Did you mean \"gdrive_download_file\"?"),
        "{e}"
    );
    // Without hiding, the probe's misspelling is taught the blocked name.
    let Resolution::Error(e) = c.resolve("t", &json!({"f": "gdrive_upload_files"})) else {
        panic!()
    };
    assert!(
        e.message().contains("Did you mean \"gdrive_upload_file\"?"),
        "{e}"
    );
}

/// `q(s=…)` among the tools not hidden: a hidden (blocked) tool costs no place, and when
/// it is the only tool that fits, nothing does: the model gets "No matches", not the
/// next-ranked tools (which would also tell it a hidden tool matched).
#[test]
fn a_search_never_ranks_a_hidden_tool_nor_offers_others_in_its_place() {
    let tools = crate::real_tools();
    let c = at(&tools, Level::Three);
    let search = |s: &str, hidden: &dyn Fn(&str) -> bool| -> String {
        match c.resolve_hiding("q", &json!({"s": s}), hidden) {
            Resolution::Meta { result, .. } => result,
            other => panic!("{other:?}"),
        }
    };
    let none = |_: &str| false;
    // Only the hidden tool fits: nothing is listed.
    let summarize = |n: &str| n == "summarize_document";
    assert!(search("summarize this document", &none).contains("summarize_document"));
    assert_eq!(
        search("summarize this document", &summarize),
        "No matches for \"summarize this document\"."
    );
    // Others fit too: they are listed, as many as before (the hidden tool costs no place).
    let health = |n: &str| n == "health_check";
    let open = search("health check of the service", &none);
    let hidden = search("health check of the service", &health);
    assert!(open.contains("= health_check()"), "{open}");
    assert!(!hidden.contains("health_check"), "{hidden}");
    assert!(hidden.contains("= check_health()"), "{hidden}");
    assert_eq!(open.lines().count(), hidden.lines().count(), "{hidden}");
    // A blank search lists the first open tools in code order.
    let first = |n: &str| n == tools[0].name.as_str();
    let blank = search("", &first);
    assert!(
        !blank.contains(&format!("= {}(", tools[0].name.as_str())),
        "{blank}"
    );
    assert_eq!(blank.lines().count(), search("", &none).lines().count());
}
