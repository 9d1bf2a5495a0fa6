//! `chef mcp serve`'s promises on every path (issue 47): a blocklist that matches the way
//! calls do and fails `--check` when an entry matches nothing; the gate before validation;
//! no did-you-mean that teaches a blocked tool; minify's whole schemas; codes that survive
//! a restart; a tool whose server is down says it may return.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::{
    mcp_serve::{call_in, check_fails, check_report, eventually, invoke, server, text, with_proxy},
    temp_file, write_file,
};

/// A config in `dir` fronting the files and git test sets.
fn two_servers(dir: &Path, name: &str, head: &str) -> PathBuf {
    write_file(
        dir,
        name,
        format!(
            "{head}\n[[server]]\nname = \"files\"\ncommand = \"{}\"\n\
             [[server]]\nname = \"git\"\ncommand = \"{}\"\n",
            server("--set files --extra"),
            server("--set git")
        ),
    )
}

/// The code `t`'s map gives `name`.
fn code_in(map: &str, name: &str) -> String {
    map.lines()
        .find_map(|l| {
            let mut words = l.split(' ');
            let code = words.next()?;
            (words.next() == Some(name)).then(|| code.to_owned())
        })
        .unwrap_or_else(|| panic!("no {name} in {map}"))
}

#[test]
fn blocklist_entries_match_upstream_names_and_any_case_or_separators() {
    let dir = tempfile::tempdir().unwrap();
    for mode in ["dispatch", "minify", "search"] {
        let path = two_servers(
            dir.path(),
            &format!("{mode}.toml"),
            &format!("mode = \"{mode}\"\nblocklist = [\"push\", \"Files-Write-File\"]"),
        );
        with_proxy(&path, async |host| {
            let push = if mode == "minify" {
                "Git-Push"
            } else {
                "GIT.PUSH"
            };
            for (name, args) in [
                ("git_push", json!({})),
                (push, json!({})),
                ("files_write_file", json!({"path": "p", "text": "t"})),
            ] {
                let c = call_in(mode, name, args);
                let r = host.call_tool(c.clone()).await.unwrap();
                assert_eq!(r.is_error, Some(true), "{mode} {c:?}: {}", text(&r));
                assert!(text(&r).contains("blocked"), "{mode}: {}", text(&r));
            }
            // The others still run.
            let r = host
                .call_tool(call_in(mode, "git_status", json!({})))
                .await
                .unwrap();
            assert_eq!(text(&r), "status {}", "{mode}");
        });
    }
}

#[test]
fn check_fails_on_a_blocklist_entry_that_matches_no_tool() {
    let dir = tempfile::tempdir().unwrap();
    let path = two_servers(
        dir.path(),
        "typo.toml",
        "blocklist = [\"git_psuh\", \"push\", \"office_*\"]",
    );
    let (report, err) = check_report(&path, &[], 2);
    assert_eq!(
        report["blocklist_unmatched"],
        json!(["git_psuh", "office_*"]),
        "{report}"
    );
    assert!(
        err.contains("\"git_psuh\"") && err.contains("2 entries match no tool"),
        "{err}"
    );
    // Every entry matches: exit 0, no key.
    let path = two_servers(dir.path(), "ok.toml", "blocklist = [\"PUSH\", \"files_*\"]");
    let (report, _) = check_report(&path, &[], 0);
    assert!(report.get("blocklist_unmatched").is_none(), "{report}");
}

#[test]
fn a_blocked_tool_with_bad_arguments_is_refused_as_blocked_and_never_suggested() {
    let (dir, _map) = temp_file(
        "map.json",
        r#"{"git_push":"def git_push(force):\"update the remote\""}"#,
    );
    for (mode, extra) in [
        ("minify", ""),
        ("dispatch", ""),
        ("search", ""),
        ("dispatch", "compiled_map = \"map.json\""),
    ] {
        let path = two_servers(
            dir.path(),
            &format!("gate-{mode}.toml"),
            &format!("mode = \"{mode}\"\nblocklist = [\"git_push\"]\n{extra}"),
        );
        with_proxy(&path, async |host| {
            let tools = host.list_all_tools().await.unwrap();
            let bad_args = json!({"force": "yes, please"});
            let r = host
                .call_tool(call_in(mode, "git_push", bad_args))
                .await
                .unwrap();
            assert!(text(&r).contains("blocked"), "{mode} {extra}: {}", text(&r));
            assert!(
                !text(&r).contains("boolean"),
                "{mode} {extra}: {}",
                text(&r)
            );
            // Misspellings of the blocked tool: no did-you-mean names it (or its code).
            let code = (mode == "dispatch" && extra.is_empty())
                .then(|| code_in(tools[0].description.as_deref().unwrap(), "git_push"));
            let mut written = vec!["git_pushh".to_owned(), "git_psh".to_owned()];
            if let Some(code) = &code {
                written.push(format!("{code}9"));
            }
            for w in written {
                let r = host.call_tool(call_in(mode, &w, json!({}))).await.unwrap();
                let t = text(&r);
                assert_eq!(r.is_error, Some(true), "{mode} {extra} {w}: {t}");
                assert!(!t.contains("\"git_push\""), "{mode} {extra} {w}: {t}");
                if let Some(code) = &code {
                    assert!(!t.contains(&format!("\"{code}\"")), "{mode} {w}: {t}");
                }
            }
        });
    }
}

/// A catalogue for `--catalogue`: tools with described parameters, defaults and formats.
fn catalogue(extra_first: bool) -> String {
    let mut tools = vec![
        json!({"name": "create_event", "description": "Create a calendar event.",
               "input_schema": {"type": "object", "properties": {
                   "title": {"type": "string", "description": "What the event is called."},
                   "start": {"type": "string", "format": "date-time",
                             "description": "Start time, ISO 8601 (2026-01-31T10:00:00Z)."},
                   "minutes": {"type": "integer", "default": 30,
                               "description": "How long it lasts."}},
                   "required": ["title", "start"]}}),
        json!({"name": "list_events", "description": "List calendar events in a range.",
               "input_schema": {"type": "object", "properties": {
                   "from": {"type": "string", "description": "First day."},
                   "to": {"type": "string", "description": "Last day."}}}}),
        json!({"name": "delete_event", "description": "Delete a calendar event.",
               "input_schema": {"type": "object", "properties": {
                   "id": {"type": "string", "description": "The event's id."}},
                   "required": ["id"]}}),
        json!({"name": "send_mail", "description": "Send an email.",
               "input_schema": {"type": "object", "properties": {
                   "to": {"type": "string"}, "body": {"type": "string"}}}}),
    ];
    if extra_first {
        tools.insert(
            0,
            json!({"name": "add_attendee", "description": "Add someone to an event.",
                   "input_schema": {"type": "object", "properties": {"who": {"type": "string"}}}}),
        );
    }
    serde_json::to_string(&tools).unwrap()
}

fn calendar_config(dir: &Path, mode: &str, catalogue_file: &Path) -> PathBuf {
    write_file(
        dir,
        &format!("cal-{mode}.toml"),
        format!(
            "mode = \"{mode}\"\n[[server]]\nname = \"cal\"\ncommand = \"{}\"\n",
            server(&format!("--catalogue {}", catalogue_file.display()))
        ),
    )
}

#[test]
fn minify_advertises_whole_schemas_and_a_code_lookup_describes_every_parameter() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cal.json");
    std::fs::write(&file, catalogue(false)).unwrap();
    with_proxy(calendar_config(dir.path(), "minify", &file), async |host| {
        let tools = host.list_all_tools().await.unwrap();
        let create = tools.iter().find(|t| t.name == "cal_create_event").unwrap();
        let schema = serde_json::to_value(&*create.input_schema).unwrap();
        assert_eq!(
            schema["properties"]["start"],
            json!({"type": "string", "format": "date-time",
                   "description": "Start time, ISO 8601 (2026-01-31T10:00:00Z)."}),
            "{schema}"
        );
        assert_eq!(schema["properties"]["minutes"]["default"], 30, "{schema}");
    });
    for mode in ["dispatch", "search"] {
        with_proxy(calendar_config(dir.path(), mode, &file), async |host| {
            let found = invoke(host, "q", json!({"s": "create event"})).await;
            let code = text(&found)
                .lines()
                .find_map(|l| {
                    l.split_once(" = ")
                        .filter(|(_, sig)| sig.starts_with("cal_create_event"))
                        .map(|(c, _)| c.to_owned())
                })
                .unwrap_or_else(|| panic!("{mode}: {}", text(&found)));
            let r = invoke(host, "q", json!({"c": code})).await;
            let t = text(&r);
            for needle in [
                "Start time, ISO 8601 (2026-01-31T10:00:00Z).",
                "What the event is called.",
                "How long it lasts.",
                "date-time",
                "30",
            ] {
                assert!(t.contains(needle), "{mode}: {needle} not in {t}");
            }
        });
    }
}

#[test]
fn codes_survive_a_restart_in_which_the_upstream_gained_a_tool() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cal.json");
    std::fs::write(&file, catalogue(false)).unwrap();
    let config = calendar_config(dir.path(), "dispatch", &file);
    let map_of = |config: &Path| {
        with_proxy(config, async |host| {
            let tools = host.list_all_tools().await.unwrap();
            tools[0].description.as_deref().unwrap().to_owned()
        })
    };
    let before = map_of(&config);
    // The code file sits beside the config, named after it.
    let codes_file = dir.path().join("cal-dispatch.codes.json");
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(&codes_file).unwrap()).unwrap();
    assert_eq!(saved["version"], 1);
    // A tool sorted before every other one arrives; chef restarts.
    std::fs::write(&file, catalogue(true)).unwrap();
    let after = map_of(&config);
    for name in [
        "cal_create_event",
        "cal_list_events",
        "cal_delete_event",
        "cal_send_mail",
    ] {
        assert_eq!(
            code_in(&before, name),
            code_in(&after, name),
            "{before}\n---\n{after}"
        );
    }
    let new_code = code_in(&after, "cal_add_attendee");
    assert!(
        ![
            "cal_create_event",
            "cal_list_events",
            "cal_delete_event",
            "cal_send_mail"
        ]
        .iter()
        .any(|n| code_in(&before, n) == new_code),
        "{after}"
    );
    // A code file that is not one stops the start with a clear error.
    std::fs::write(&codes_file, "{not json").unwrap();
    check_fails(&config, &["cal-dispatch.codes.json", "not a code table"]);
}

#[test]
fn a_tool_whose_server_is_down_says_it_may_return_by_name_in_every_mode() {
    for mode in ["minify", "dispatch", "search"] {
        let dir = tempfile::tempdir().unwrap();
        let refuse = dir.path().join("refuse");
        let path = write_file(
            dir.path(),
            "down.toml",
            format!(
                "mode = \"{mode}\"\n[[server]]\nname = \"files\"\ncommand = \"{}\"\n\
                 [[server]]\nname = \"git\"\ncommand = \"{}\"\n",
                server(&format!(
                    "--set files --extra --refuse-if {}",
                    refuse.display()
                )),
                server("--set git"),
            ),
        );
        // A call by name: the tool itself in minify, `t` with the name elsewhere.
        let by_name = |name: &str| call_in(mode, name, json!({"path": "x"}));
        with_proxy(&path, async |host| {
            // The first tools/list waits for every upstream's first start: files is up
            // before the refuse file exists (written earlier, a slow start would never
            // come up).
            let tools = host.list_all_tools().await.unwrap();
            let listed = tools.iter().any(|t| {
                t.name == "files_read_file"
                    || t.description
                        .as_deref()
                        .is_some_and(|d| d.contains("files_read_file"))
            });
            // Search mode lists no tool until `q` finds one.
            assert!(listed || mode == "search", "{mode}: {tools:?}");
            std::fs::write(&refuse, "stay down").unwrap();
            let _ = host
                .call_tool(call_in(mode, "files_crash", json!({})))
                .await;
            let mut last = String::new();
            eventually(async || {
                let r = host.call_tool(by_name("files_read_file")).await.unwrap();
                last = text(&r);
                last.contains("not available now")
            })
            .await;
            assert!(
                last.contains("not available now") && last.contains("it may return"),
                "{mode}: {last}"
            );
            // Written with drift, too.
            let r = host.call_tool(by_name("Files-Read-File")).await.unwrap();
            assert!(text(&r).contains("it may return"), "{mode}: {}", text(&r));
        });
    }
}

#[test]
fn a_lookup_never_describes_or_ranks_a_blocked_tool() {
    let dir = tempfile::tempdir().unwrap();
    for mode in ["dispatch", "search"] {
        let path = two_servers(
            dir.path(),
            &format!("q-{mode}.toml"),
            &format!("mode = \"{mode}\"\nblocklist = [\"git_push\"]"),
        );
        with_proxy(&path, async |host| {
            let r = invoke(host, "q", json!({"c": "git_push"})).await;
            let t = text(&r);
            assert_eq!(r.is_error, Some(true), "{mode}: {t}");
            assert!(t.contains("blocked") && !t.contains("force"), "{mode}: {t}");
            let r = invoke(host, "q", json!({"s": "push commits to the remote"})).await;
            let t = text(&r);
            assert!(!t.contains("git_push"), "{mode}: {t}");
            // An allowed tool is still described and ranked.
            let r = invoke(host, "q", json!({"c": "git_status"})).await;
            assert_ne!(r.is_error, Some(true), "{mode}: {}", text(&r));
        });
    }
}

/// Raw JSON-RPC lines to `chef mcp serve` over stdio, and the line each one gets back.
#[test]
fn malformed_json_rpc_gets_the_spec_s_errors_with_its_id_and_never_silence() {
    use std::io::{BufRead, Write};
    let dir = tempfile::tempdir().unwrap();
    let path = two_servers(dir.path(), "rpc.toml", "mode = \"dispatch\"");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_chef"))
        .args(["mcp", "serve", "--config"])
        .arg(&path)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    stdin
        .write_all(
            concat!(
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                "\n"
            )
            .as_bytes(),
        )
        .unwrap();
    let init: Value =
        serde_json::from_str(&rx.recv_timeout(std::time::Duration::from_secs(30)).unwrap())
            .unwrap();
    assert_eq!(init["id"], 1, "{init}");
    let mut exchange = |line: &[u8]| -> Value {
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        // The server's own notifications (a tool list change as upstreams come up) are
        // not answers.
        let reply = std::iter::from_fn(|| rx.recv_timeout(std::time::Duration::from_secs(30)).ok())
            .find(|l| !l.contains(r#""method":"notifications/"#))
            .unwrap_or_else(|| {
                panic!(
                    "no answer to {}",
                    String::from_utf8_lossy(&line[..line.len().min(80)])
                )
            });
        serde_json::from_str(&reply).unwrap()
    };
    let huge = {
        let mut line = br#"{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"t","arguments":{"x":""#.to_vec();
        line.resize(17 * 1024 * 1024, b'x');
        line.extend_from_slice(br#""}}}"#);
        line
    };
    for (line, id, code) in [
        (b"this is not json".to_vec(), Value::Null, -32700),
        (br#"{"jsonrpc":"2.0","id":7}"#.to_vec(), json!(7), -32600),
        (
            br#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":7}"#.to_vec(),
            json!(8),
            -32600,
        ),
        (
            br#"{"jsonrpc":"1.0","id":9,"method":"tools/list"}"#.to_vec(),
            json!(9),
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":"eleven","method":"tools/call","params":{"arguments":{}}}"#
                .to_vec(),
            json!("eleven"),
            -32602,
        ),
        (
            br#"{"jsonrpc":"2.0","id":12,"method":"no/such/method"}"#.to_vec(),
            json!(12),
            -32601,
        ),
        (huge, Value::Null, -32600),
    ] {
        let reply = exchange(&line);
        assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
        assert_eq!(reply["id"], id, "{reply}");
        assert_eq!(reply["error"]["code"], code, "{reply}");
    }
    // A batch: one error per element, each with its id.
    let reply = exchange(br#"[{"jsonrpc":"2.0","id":10,"method":"tools/list"}]"#);
    assert_eq!(reply[0]["id"], 10, "{reply}");
    assert_eq!(reply[0]["error"]["code"], -32600, "{reply}");
    // And the connection still serves.
    let reply = exchange(br#"{"jsonrpc":"2.0","id":13,"method":"tools/list"}"#);
    assert_eq!(reply["id"], 13, "{reply}");
    assert_eq!(reply["result"]["tools"][0]["name"], "t", "{reply}");
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn an_upstream_tool_whose_name_holds_whitespace_or_control_characters_is_left_out() {
    let (dir, file) = temp_file(
        "odd-names.json",
        r#"[{"name": "two\nlines", "description": "A.", "input_schema": {"type": "object"}},
            {"name": "tab\there", "description": "B.", "input_schema": {"type": "object"}},
            {"name": "bell\u0007", "description": "C.", "input_schema": {"type": "object"}},
            {"name": "rea\u202ed_file", "description": "D.", "input_schema": {"type": "object"}},
            {"name": "ok.tool-2", "description": "Fine.", "input_schema": {"type": "object"}}]"#,
    );
    let path = calendar_config(dir.path(), "minify", &file);
    let (report, _) = check_report(&path, &[], 0);
    let left_out: Vec<&str> = report["left_out"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let left_out = left_out.join("\n");
    // Named as Rust's debug form writes them: escaped, on one line.
    for name in [
        r#""two\nlines""#,
        r#""tab\there""#,
        r#""bell\u{7}""#,
        r#""rea\u{202e}d_file""#,
    ] {
        assert!(left_out.contains(name), "{name}: {report}");
    }
    assert!(
        left_out.contains("whitespace, a control character or an invisible format character"),
        "{report}"
    );
    assert_eq!(report["modes"][0]["tools"], 1, "{report}");
}

/// Two listed tools whose names differ only in case: a call in a third case reaches
/// neither (either could be meant), and the answer is not "not available now" (both are
/// listed) but the nearest of them to call by its exact name.
#[test]
fn a_call_between_two_names_that_differ_only_in_case_is_not_called_gone() {
    let (dir, file) = temp_file(
        "case-pair.json",
        r#"[{"name": "Get_Event", "description": "One.", "input_schema": {"type": "object"}},
            {"name": "get_event", "description": "Two.", "input_schema": {"type": "object"}}]"#,
    );
    with_proxy(calendar_config(dir.path(), "minify", &file), async |host| {
        let r = invoke(host, "CAL_GET_EVENT", json!({})).await;
        let reply = text(&r);
        assert_eq!(r.is_error, Some(true), "{reply}");
        assert!(!reply.contains("not available"), "{reply}");
        assert!(
            reply.starts_with("No tool named \"CAL_GET_EVENT\". Did you mean \"cal_Get_Event\"?"),
            "{reply}"
        );
        // Each exact name still reaches its own tool.
        for name in ["cal_Get_Event", "cal_get_event"] {
            let r = invoke(host, name, json!({})).await;
            assert_ne!(r.is_error, Some(true), "{name}: {}", text(&r));
        }
    });
}

#[test]
fn an_upstream_tool_with_an_empty_name_is_left_out() {
    let (dir, file) = temp_file(
        "empty-name.json",
        r#"[{"name": "", "description": "Nameless.", "input_schema": {"type": "object"}},
            {"name": "ok_tool", "description": "Fine.", "input_schema": {"type": "object"}}]"#,
    );
    let path = calendar_config(dir.path(), "minify", &file);
    let (report, _) = check_report(&path, &[], 0);
    let left_out = report["left_out"].to_string();
    assert!(left_out.contains("empty name"), "{report}");
    // minify shows the one tool left (without the fix: two, one of them named `cal_`).
    assert_eq!(report["modes"][0]["mode"], "minify", "{report}");
    assert_eq!(report["modes"][0]["tools"], 1, "{report}");
}
