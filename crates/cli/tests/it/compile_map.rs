//! `chef compile-map` against a chat-completions server started on 127.0.0.1 inside the
//! test ([`scripted_http`](crate::scripted_http)) with a scripted reply per tool and
//! request.

use std::{
    collections::BTreeMap,
    net::TcpStream,
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
    sync::Mutex,
    thread,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::{
    assert_error, chef,
    scripted_http::{Request, Script, Scripted, respond},
    stderr, stdout,
};

/// What the server does with one request.
#[derive(Debug, Clone)]
enum Reply {
    /// 200 with a chat completion whose content is the correct line for the tool.
    Good,
    /// 200 with a chat completion whose content is this text.
    Content(&'static str),
    /// 200 with this body as it is.
    Raw(&'static str),
    /// This status, with a `Retry-After` header when given.
    Status(u16, Option<&'static str>),
    /// Read the request, answer nothing for this long, then close.
    Hang(Duration),
}

/// One request the server saw.
#[derive(Debug, Clone)]
struct Seen {
    tool: String,
    path: String,
    authorization: Option<String>,
    body: Value,
    at: Instant,
}

/// A scripted chat-completions server. Each tool's replies are used in order, the last
/// one repeating; a tool without a script gets `Good`.
type Server = Scripted<Seen>;

impl Server {
    fn start(script: &[(&str, &[Reply])]) -> Self {
        Self::launch(
            script
                .iter()
                .map(|(tool, replies)| (*tool, replies.to_vec())),
            handle,
        )
    }

    fn requests_for(&self, tool: &str) -> Vec<Seen> {
        self.seen().into_iter().filter(|s| s.tool == tool).collect()
    }
}

fn handle(stream: TcpStream, request: Request, seen: &Mutex<Vec<Seen>>, script: &Script<Reply>) {
    let body: Value = serde_json::from_slice(&request.body).unwrap();
    let user = body["messages"][1]["content"].as_str().unwrap().to_owned();
    // The tool asked for is the last `name — "…" params: …` line.
    let tool_line = user
        .lines()
        .rev()
        .find(|l| l.contains(" — \""))
        .unwrap()
        .to_owned();
    let tool = tool_line.split(' ').next().unwrap().to_owned();
    let reply = script.next(&tool, Reply::Good).unwrap_or(Reply::Good);
    seen.lock().unwrap().push(Seen {
        tool: tool.clone(),
        path: request.path,
        authorization: request.authorization,
        body,
        at: Instant::now(),
    });
    let completion = |content: &str| {
        json!({"id": "c1", "object": "chat.completion", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ]})
        .to_string()
    };
    let (status, retry_after, body) = match reply {
        Reply::Good => (200, None, completion(&good_line(&tool, &tool_line))),
        Reply::Content(text) => (200, None, completion(text)),
        Reply::Raw(text) => (200, None, text.to_owned()),
        Reply::Status(status, retry_after) => (
            status,
            retry_after,
            json!({"error": {"message": "scripted failure"}}).to_string(),
        ),
        Reply::Hang(time) => {
            thread::sleep(time);
            return;
        }
    };
    let headers: Vec<(&str, &str)> = retry_after
        .map(|after| ("Retry-After", after))
        .into_iter()
        .collect();
    respond(stream, status, &headers, &body);
}

/// The right line for a tool, from its prompt line `name — "…" params: a*, b`: required
/// parameters bare, the others `=None`.
fn good_line(tool: &str, tool_line: &str) -> String {
    let params = tool_line.rsplit_once("params: ").unwrap().1;
    let params: Vec<String> = params
        .split(", ")
        .filter(|p| *p != "(none)")
        .map(|p| {
            let name = p.split(':').next().unwrap();
            match name.strip_suffix('*') {
                Some(required) => required.to_owned(),
                None => format!("{name}=None"),
            }
        })
        .collect();
    format!("def {tool}({}):\"doc of {tool}\"", params.join(","))
}

/// Tools sharing one schema (owner, repo, title required; body optional).
fn tools_json(names: &[&str]) -> Value {
    let schema = json!({"type": "object", "properties": {"owner": {"type": "string"}, "repo": {"type": "string"}, "title": {"type": "string"}, "body": {"type": "string"}}, "required": ["owner", "repo", "title"]});
    Value::Array(
        names
            .iter()
            .map(
                |n| json!({"name": n, "description": format!("Tool {n}."), "input_schema": schema}),
            )
            .collect(),
    )
}

/// A temporary directory holding `tools.json`: the tools `names` ([`tools_json`]).
fn catalogue(names: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_json(&dir.path().join("tools.json"), &tools_json(names));
    dir
}

fn write_json(path: &Path, value: &Value) {
    std::fs::write(path, value.to_string()).unwrap();
}

fn read_map(path: &Path) -> BTreeMap<String, String> {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The `chef compile-map` command for `dir/tools.json` -> `dir/map.json`, no key in the
/// environment.
fn command(dir: &Path, endpoint: &str, extra: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_chef"));
    cmd.arg("compile-map")
        .arg("--tools")
        .arg(dir.join("tools.json"))
        .arg("--out")
        .arg(dir.join("map.json"))
        .args(["--endpoint", endpoint, "--model", "scripted-1"])
        .args(extra)
        .env_remove("CHEF_API_KEY");
    cmd
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap()
}

fn summary(out: &Output) -> Value {
    assert!(out.status.success(), "{}", stderr(out));
    let text = stdout(out);
    assert_eq!(text.lines().count(), 1, "one summary line: {text}");
    serde_json::from_str(&text).unwrap()
}

/// Asserts each `(key, count)` of the run's summary.
#[track_caller]
fn assert_counts(report: &Value, expected: &[(&str, u64)]) {
    for (key, count) in expected {
        assert_eq!(report[key], *count, "{key}");
    }
}

#[test]
fn every_failure_has_a_clear_outcome_and_nothing_verified_is_lost() {
    let names = [
        "a_good",
        "b_malformed",
        "c_no_choices",
        "d_renamed",
        "e_invented",
        "f_http_500",
        "g_http_429",
        "h_hang",
    ];
    let dir = catalogue(&names);
    let server = Server::start(&[
        (
            "b_malformed",
            &[Reply::Raw("<html>bad gateway</html>"), Reply::Good],
        ),
        (
            "c_no_choices",
            &[Reply::Raw(r#"{"object":"chat.completion","choices":[]}"#)],
        ),
        (
            "d_renamed",
            &[
                Reply::Content(r#"def create_issue(owner,repo,title):"x""#),
                Reply::Good,
            ],
        ),
        (
            "e_invented",
            &[Reply::Content(
                r#"def e_invented(owner,repo,title,assignee=None):"x""#,
            )],
        ),
        ("f_http_500", &[Reply::Status(500, None), Reply::Good]),
        ("g_http_429", &[Reply::Status(429, Some("1")), Reply::Good]),
        ("h_hang", &[Reply::Hang(Duration::from_secs(4))]),
    ]);
    let out = run(&mut command(
        dir.path(),
        &server.endpoint(),
        &["--timeout-secs", "0.5", "--max-attempts", "2"],
    ));
    let report = summary(&out);

    // Verified lines, and only those, are in the map.
    let map = read_map(&dir.path().join("map.json"));
    assert_eq!(
        map.keys().collect::<Vec<_>>(),
        [
            "a_good",
            "b_malformed",
            "d_renamed",
            "f_http_500",
            "g_http_429"
        ]
    );
    assert_eq!(
        map["d_renamed"],
        r#"def d_renamed(owner,repo,title,body=None):"doc of d_renamed""#
    );
    let reasons: BTreeMap<&str, &str> = report["rejections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["tool"].as_str().unwrap(), r["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(
        reasons.keys().copied().collect::<Vec<_>>(),
        ["c_no_choices", "e_invented", "h_hang"]
    );
    assert_eq!(
        reasons["c_no_choices"],
        "model call failed: malformed reply: no choices (2 attempts)"
    );
    assert_eq!(reasons["e_invented"], "invented parameter(s): assignee");
    assert_eq!(
        reasons["h_hang"],
        "model call failed: no reply within 0.5s (2 attempts)"
    );
    assert_counts(
        &report,
        &[
            ("tools", 8),
            ("compiled", 5),
            ("reused", 0),
            ("rejected", 3),
            ("fell_back_to_signature", 3),
        ],
    );
    assert_eq!(report["retried"], 2, "d_renamed and e_invented asked twice");
    assert_eq!(
        report["transport_retries"], 5,
        "b, c, f, g and h each sent twice"
    );
    assert_eq!(report["requests"], 15);
    assert_eq!(server.seen().len(), 15);

    // The second ask after a failed verification says why.
    let renamed = server.requests_for("d_renamed");
    let second = renamed[1].body["messages"][1]["content"].as_str().unwrap();
    assert!(
        second.contains("was rejected: renamed the tool to create_issue"),
        "{second}"
    );
    // 429 waited for its Retry-After (1 s; the backoff alone would be 0.5 s).
    let limited = server.requests_for("g_http_429");
    let waited = limited[1].at - limited[0].at;
    assert!(waited >= Duration::from_millis(950), "{waited:?}");
    // The wire: path, model, roles, no key.
    let first = &server.seen()[0];
    assert_eq!(first.path, "/v1/chat/completions");
    assert_eq!(first.authorization, None);
    assert_eq!(first.body["model"], "scripted-1");
    assert_eq!(first.body["messages"][0]["role"], "system");
    assert!(
        first.body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("Never name a tool")
    );
    assert!(first.body.get("temperature").is_none());

    // The map works at level 4: the rejected tools render as bare signatures.
    let compressed = chef([
        "compress".as_ref(),
        dir.path().join("tools.json").as_os_str(),
        "--level".as_ref(),
        "4".as_ref(),
        "--compiled".as_ref(),
        dir.path().join("map.json").as_os_str(),
    ]);
    assert!(compressed.status.success(), "{}", stderr(&compressed));
    let compressed: Value = serde_json::from_str(&stdout(&compressed)).unwrap();
    assert_eq!(compressed["stats"]["uncompiled_tools"], 3);
    assert_eq!(compressed["stats"]["stale_compiled_tools"], json!([]));
}

#[test]
fn a_run_where_no_line_verifies_prints_its_summary_and_exits_1() {
    let dir = catalogue(&["a_one", "b_two"]);
    let server = Server::start(&[
        (
            "a_one",
            &[Reply::Content(r#"def a_one(owner):"drops two""#)],
        ),
        (
            "b_two",
            &[Reply::Content(r#"def renamed(owner,repo,title):"x""#)],
        ),
    ]);
    let out = run(&mut command(dir.path(), &server.endpoint(), &[]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_counts(
        &report,
        &[
            ("compiled", 0),
            ("rejected", 2),
            ("fell_back_to_signature", 2),
        ],
    );
    let err = stderr(&out);
    assert!(
        err.contains("no line scripted-1 wrote verified") && err.contains("all 2 tool(s)"),
        "{err}"
    );
    assert!(read_map(&dir.path().join("map.json")).is_empty());

    // One tool of two verifying is a partial map, not a failed run.
    std::fs::remove_file(dir.path().join("map.json")).unwrap();
    let server = Server::start(&[("a_one", &[Reply::Content(r#"def a_one(owner):"drops""#)])]);
    let report = summary(&run(&mut command(dir.path(), &server.endpoint(), &[])));
    assert_counts(&report, &[("compiled", 1), ("rejected", 1)]);
}

#[test]
fn a_second_run_compiles_only_missing_and_stale_tools() {
    let names = ["a_one", "b_two", "c_three", "d_four"];
    let dir = catalogue(&names);
    let first = Server::start(&[("b_two", &[Reply::Content(r#"def b_two(owner):"drops two"#)])]);
    let report = summary(&run(&mut command(dir.path(), &first.endpoint(), &[])));
    assert_eq!(
        (report["compiled"].as_u64(), report["rejected"].as_u64()),
        (Some(3), Some(1))
    );
    let before = read_map(&dir.path().join("map.json"));
    assert_eq!(before.len(), 3);
    // A new map is an ordinary output file (README: `rw-r--r--`), not owner-only.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let meta = std::fs::metadata(dir.path().join("map.json")).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o644);
    }

    // d_four gains a required parameter: its line is stale now.
    let mut tools = tools_json(&names);
    tools[3]["input_schema"]["properties"]["milestone"] = json!({"type": "integer"});
    tools[3]["input_schema"]["required"] = json!(["owner", "repo", "title", "milestone"]);
    write_json(&dir.path().join("tools.json"), &tools);
    // An entry for a tool of another catalogue is kept as it is.
    let mut seeded = before.clone();
    seeded.insert("zz_other".into(), r#"def zz_other():"elsewhere""#.into());
    write_json(&dir.path().join("map.json"), &json!(seeded));

    let second = Server::start(&[]);
    let report = summary(&run(&mut command(dir.path(), &second.endpoint(), &[])));
    let asked: Vec<String> = second
        .seen()
        .into_iter()
        .map(|s| s.tool)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(asked, ["b_two", "d_four"]);
    assert_eq!(
        second.seen().len(),
        2,
        "one request per missing or stale tool"
    );
    assert_counts(
        &report,
        &[
            ("reused", 2),
            ("stale", 1),
            ("orphaned", 1),
            ("compiled", 2),
            ("fell_back_to_signature", 0),
        ],
    );
    let after = read_map(&dir.path().join("map.json"));
    assert_eq!(after["a_one"], before["a_one"], "kept byte for byte");
    assert_eq!(after["c_three"], before["c_three"]);
    assert_eq!(after["zz_other"], r#"def zz_other():"elsewhere""#);
    assert_eq!(
        after["d_four"],
        r#"def d_four(owner,repo,title,body=None,milestone):"doc of d_four""#
    );

    // Nothing left to do: no request at all (the endpoint is not even listening).
    let closed = second.endpoint();
    drop(second);
    let report = summary(&run(&mut command(dir.path(), &closed, &[])));
    assert_counts(&report, &[("requests", 0), ("reused", 4)]);
    let bytes = std::fs::read_to_string(dir.path().join("map.json")).unwrap();
    assert!(bytes.ends_with("}\n") && bytes.lines().count() == 1);
}

#[test]
fn a_killed_run_keeps_every_line_verified_before_it() {
    let names = ["a_quick", "b_quick", "z_slow"];
    let dir = catalogue(&names);
    let server = Server::start(&[("z_slow", &[Reply::Hang(Duration::from_secs(30))])]);
    let mut child = command(dir.path(), &server.endpoint(), &["--timeout-secs", "60"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let map_path = dir.path().join("map.json");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let done = std::fs::read_to_string(&map_path)
            .ok()
            .and_then(|t| serde_json::from_str::<BTreeMap<String, String>>(&t).ok())
            .is_some_and(|m| m.len() == 2);
        if done && server.requests_for("z_slow").len() == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "the quick tools never landed");
        thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let map = read_map(&map_path);
    assert_eq!(map.keys().collect::<Vec<_>>(), ["a_quick", "b_quick"]);
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [map_path.clone(), dir.path().join("tools.json")],
        "no temporary file left"
    );

    let again = Server::start(&[]);
    let report = summary(&run(&mut command(dir.path(), &again.endpoint(), &[])));
    assert_counts(&report, &[("reused", 2), ("compiled", 1)]);
    assert_eq!(again.seen().len(), 1);
    assert_eq!(read_map(&map_path).len(), 3);
}

#[test]
fn the_key_comes_from_the_environment_and_endpoints_may_name_the_path() {
    let dir = catalogue(&["a_one"]);
    let server = Server::start(&[]);
    summary(&run(
        command(dir.path(), &server.endpoint(), &[]).env("CHEF_API_KEY", "sk-default")
    ));
    std::fs::remove_file(dir.path().join("map.json")).unwrap();
    let full = format!("{}/chat/completions", server.endpoint());
    let out = run(command(
        dir.path(),
        &full,
        &["--api-key-env", "MY_KEY", "--temperature", "0"],
    )
    .env("MY_KEY", "sk-mine")
    .env("CHEF_API_KEY", "sk-default"));
    summary(&out);
    std::fs::remove_file(dir.path().join("map.json")).unwrap();
    let unset = run(&mut command(
        dir.path(),
        &server.endpoint(),
        &["--api-key-env", "NOT_SET_ANYWHERE"],
    ));
    summary(&unset);
    assert!(
        stderr(&unset).contains("NOT_SET_ANYWHERE is not set"),
        "{}",
        stderr(&unset)
    );

    let seen = server.seen();
    assert_eq!(seen.len(), 3);
    assert!(seen.iter().all(|s| s.path == "/v1/chat/completions"));
    assert_eq!(seen[0].authorization.as_deref(), Some("Bearer sk-default"));
    assert_eq!(seen[1].authorization.as_deref(), Some("Bearer sk-mine"));
    assert_eq!(seen[1].body["temperature"], 0.0);
    assert_eq!(seen[2].authorization, None);
}

#[test]
fn a_refused_key_stops_the_run_and_keeps_the_map() {
    let names = ["a_one", "b_two", "c_three", "d_four"];
    let dir = catalogue(&names);
    let kept = r#"def a_one(owner,repo,title):"kept""#;
    write_json(&dir.path().join("map.json"), &json!({"a_one": kept}));
    let server = Server::start(&[
        ("b_two", &[Reply::Status(401, None)]),
        ("c_three", &[Reply::Status(401, None)]),
        ("d_four", &[Reply::Status(401, None)]),
    ]);
    let out = run(&mut command(
        dir.path(),
        &server.endpoint(),
        &["--concurrency", "1"],
    ));
    assert_eq!(out.status.code(), Some(1));
    // The summary line comes however the run ended.
    let summary: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(
        (summary["compiled"].as_u64(), summary["reused"].as_u64()),
        (Some(0), Some(1))
    );
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("HTTP 401"), "{err}");
    assert!(err.contains("1 verified line(s) kept"), "{err}");
    assert_eq!(server.seen().len(), 1, "no request after the refusal");
    assert_eq!(read_map(&dir.path().join("map.json"))["a_one"], kept);
}

#[test]
fn unusable_flags_and_maps_are_refused_before_any_request() {
    let dir = catalogue(&["a_one"]);
    let out = run(&mut command(dir.path(), "ftp://127.0.0.1/v1", &[]));
    assert_error(&out, &["must be an http:// or https:// URL"]);

    std::fs::write(dir.path().join("map.json"), "not json").unwrap();
    let server = Server::start(&[]);
    let out = run(&mut command(dir.path(), &server.endpoint(), &[]));
    assert_error(&out, &["not a compiled map"]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("map.json")).unwrap(),
        "not json"
    );
    assert!(server.seen().is_empty());

    let out = run(&mut command(
        dir.path(),
        &server.endpoint(),
        &["--concurrency", "0"],
    ));
    assert_eq!(out.status.code(), Some(2));
}

/// `chef compile-map --out /dev/stdout` of `dir`'s tools.json against `server`.
fn to_dev_stdout(dir: &std::path::Path, server: &Server) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_chef"));
    command
        .arg("compile-map")
        .arg("--tools")
        .arg(dir.join("tools.json"))
        .args(["--out", "/dev/stdout", "--endpoint", &server.endpoint()])
        .args(["--model", "scripted-1"])
        .env_remove("CHEF_API_KEY")
        .stdin(Stdio::null());
    command
}

/// `--out /dev/stdout > map.json`: standard output is a regular file. The map is written
/// once, whole, through stdout, and the summary goes to stderr. Before, the first atomic
/// write replaced `map.json` (the shell's descriptor then wrote `{}` into an unlinked
/// copy) and each later one made a file named `map.json (deleted)`. Found by session 41's
/// README audit.
#[test]
fn out_to_dev_stdout_redirected_to_a_file_leaves_the_map_alone_in_it() {
    let dir = catalogue(&["a_one", "b_two"]);
    let server = Server::start(&[]);
    let map_path = dir.path().join("map.json");
    let out = to_dev_stdout(dir.path(), &server)
        .stdout(std::fs::File::create(&map_path).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&map_path).unwrap();
    let map: BTreeMap<String, String> = serde_json::from_str(&text).unwrap();
    assert_eq!(map.len(), 2, "{text}");
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(stderr(&out).contains("\"compiled\":2"), "{}", stderr(&out));
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["map.json", "tools.json"]);
}

/// `--out /dev/stdout` (a device) is written once, whole, with nothing read to resume
/// from (it had waited forever on its own stdout), and the summary goes to stderr; a catalogue `chef compress` refuses is
/// refused before any request; a key no header can carry is said at once, not retried.
#[test]
fn a_device_out_an_unusable_catalogue_and_a_broken_key_are_handled_before_requests() {
    let dir = catalogue(&["a_one", "b_two"]);
    let server = Server::start(&[]);
    let out = to_dev_stdout(dir.path(), &server).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let mut lines = text.lines();
    let map: BTreeMap<String, String> = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(map.len(), 2, "{text}");
    // The map is all stdout holds: the summary went to stderr.
    assert_eq!(lines.count(), 0, "{text}");
    let summary = stderr(&out);
    assert!(
        summary
            .lines()
            .any(|l| l.starts_with("{\"out\":\"/dev/stdout\"")),
        "{summary}"
    );
    let sent = server.seen().len();

    let mut bad = tools_json(&["ok"]);
    bad[0]["input_schema"]["properties"]["p\nz9 wipe_disk"] = json!({"type": "string"});
    write_json(&dir.path().join("tools.json"), &bad);
    let out = run(&mut command(dir.path(), &server.endpoint(), &[]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("control character"),
        "{}",
        stderr(&out)
    );

    write_json(&dir.path().join("tools.json"), &tools_json(&["a_one"]));
    let out = run(command(dir.path(), &server.endpoint(), &[]).env("CHEF_API_KEY", "sk-a\nb"));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot carry"), "{}", stderr(&out));
    assert_eq!(server.seen().len(), sent, "nothing more sent");
}
