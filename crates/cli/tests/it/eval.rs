//! `chef eval` against a chat-completions server started on 127.0.0.1 inside the test
//! ([`scripted_http`](crate::scripted_http), shared with `compile_map.rs`) that replies per
//! scenario from a script — right and wrong tools, lookups, refused calls, garbage, text calls, hangs
//! and errors — so the harness's grading is checked before any real model is used.

use std::{
    collections::HashMap,
    net::TcpStream,
    path::{Path, PathBuf},
    process::{Command, Output},
    sync::Mutex,
    thread,
    time::Duration,
};

use serde_json::{Value, json};

use crate::{
    assert_error,
    scripted_http::{Request, Script, Scripted, respond},
    stderr, stdout,
};

/// What the server answers to one request.
#[derive(Debug, Clone)]
enum Reply {
    /// A native call of this real tool with these arguments, written as the request's
    /// tools call it: `t(f=<code>, a=args)` when the request offers `t`, else by name.
    Call(&'static str, Value),
    /// A native `q(c=<code of this tool>)` lookup.
    Lookup(&'static str),
    /// A native call with this wire name and these arguments, as they are.
    Wire(&'static str, Value),
    /// Assistant text, no native call.
    Text(&'static str),
    /// Assistant text cut at the token limit (`finish_reason` `length`).
    Cut(&'static str),
    /// 200 with this body as it is.
    Raw(&'static str),
    /// This status with an error body.
    Status(u16),
    /// Read the request, answer nothing for this long, then close.
    Hang(Duration),
}

/// One request the server saw.
#[derive(Debug, Clone)]
struct Seen {
    prompt: String,
    authorization: Option<String>,
    body: Value,
}

/// A scripted chat-completions server. Each prompt's replies are used in order, the last
/// one repeating; an unscripted prompt gets text and no call.
type Server = Scripted<Seen>;

impl Server {
    fn start(script: &[(&str, Vec<Reply>)]) -> Self {
        Self::launch(
            script
                .iter()
                .map(|(prompt, replies)| (*prompt, replies.clone())),
            |stream, request, seen, script| handle(stream, &request, seen, script),
        )
    }
}

/// A message's text: a string, or the concatenated text parts.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// The level-3 code of `tool` in the request's `<toolmap>` (`a1 get_weather city`).
fn code_of(body: &Value, tool: &str) -> String {
    let system: String = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "system")
        .map(|m| text_of(&m["content"]))
        .collect();
    system
        .lines()
        .find_map(|l| {
            let mut words = l.split_whitespace();
            let code = words.next()?;
            (words.next() == Some(tool)).then(|| code.to_owned())
        })
        .unwrap_or_else(|| panic!("no code for {tool} in {system}"))
}

fn offers(body: &Value, wire_name: &str) -> bool {
    body["tools"]
        .as_array()
        .is_some_and(|tools| tools.iter().any(|t| t["function"]["name"] == wire_name))
}

fn handle(stream: TcpStream, request: &Request, seen: &Mutex<Vec<Seen>>, script: &Script<Reply>) {
    let body: Value = serde_json::from_slice(&request.body).unwrap();
    let prompt = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .map(|m| text_of(&m["content"]))
        .unwrap();
    // Each prompt's script runs once per kind of request (level 3's `t`/`q`, or real
    // names), so two settings each see it from the start.
    let coded = offers(&body, "t");
    let reply = script
        .next_from(
            &prompt,
            &format!("{prompt}\u{0}{coded}"),
            Reply::Text("done"),
        )
        .unwrap_or(Reply::Text("unscripted"));
    // A prompt cache like a server's: the bytes this request shares, from its start, with
    // the one before it.
    let cached = {
        let seen = seen.lock().unwrap();
        let last = seen.last().map(|s| s.body.to_string()).unwrap_or_default();
        let now = body.to_string();
        last.bytes()
            .zip(now.bytes())
            .take_while(|(a, b)| a == b)
            .count()
            / 4
    };
    seen.lock().unwrap().push(Seen {
        prompt,
        authorization: request.authorization.clone(),
        body: body.clone(),
    });
    let tokens = request.body.len() / 4;
    let usage = json!({"prompt_tokens": tokens, "completion_tokens": 7, "total_tokens": tokens + 7,
        "prompt_tokens_details": {"cached_tokens": cached.min(tokens)}});
    let finished = |message: Value, finish: &str| {
        json!({"id": "c1", "object": "chat.completion", "choices": [
            {"index": 0, "message": message, "finish_reason": finish}
        ], "usage": usage})
        .to_string()
    };
    let completion = |message: Value| finished(message, "stop");
    let call = |name: &str, args: &Value| {
        completion(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": name, "arguments": args.to_string()}}
        ]}))
    };
    let (status, text) = match reply {
        Reply::Call(tool, args) if coded => (
            200,
            call("t", &json!({"f": code_of(&body, tool), "a": args})),
        ),
        Reply::Call(tool, args) => (200, call(tool, &args)),
        Reply::Lookup(tool) if coded => (200, call("q", &json!({"c": code_of(&body, tool)}))),
        // Without a map there is no `q`: the lookup is a call of an unknown tool.
        Reply::Lookup(tool) => (200, call("q", &json!({"c": tool}))),
        Reply::Wire(name, args) => (200, call(name, &args)),
        Reply::Text(text) => (
            200,
            completion(json!({"role": "assistant", "content": text})),
        ),
        Reply::Cut(text) => (
            200,
            finished(json!({"role": "assistant", "content": text}), "length"),
        ),
        Reply::Raw(text) => (200, text.to_owned()),
        Reply::Status(status) => (
            status,
            json!({"error": {"message": "scripted failure"}}).to_string(),
        ),
        Reply::Hang(time) => {
            thread::sleep(time);
            return;
        }
    };
    respond(stream, status, &[], &text);
}

fn tools_json() -> Value {
    json!([
        {"name": "get_weather", "description": "Current weather for a city.", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}, "units": {"type": "string", "enum": ["metric", "imperial"]}}, "required": ["city"]}},
        {"name": "get_time", "description": "Current time in a time zone.", "input_schema": {"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]}},
        {"name": "send_email", "description": "Send an email.", "input_schema": {"type": "object", "properties": {"to": {"type": "string"}, "body": {"type": "string"}}, "required": ["to", "body"]}}
    ])
}

const FENCED: &str =
    "```json\n{\"name\": \"t\", \"arguments\": {\"f\": \"a1\", \"a\": {\"city\": \"Oslo\"}}}\n```";

/// The scenarios (JSON Lines) and the script for each, keyed by prompt.
fn scenarios() -> (String, Vec<(&'static str, Vec<Reply>)>) {
    let oslo = || json!({"city": "Oslo"});
    let rows: Vec<(&str, &str, Value, Vec<Reply>)> = vec![
        (
            "right",
            "weather in Oslo, please",
            json!({"expected": ["get_weather"], "arguments": {"city": "oslo"}, "result": "12 C", "split": "heldout"}),
            vec![Reply::Call("get_weather", oslo())],
        ),
        (
            "wrong",
            "what is the weather in Bergen",
            json!({"expected": ["get_weather"], "split": "heldout"}),
            vec![Reply::Call("get_time", json!({"tz": "Europe/Oslo"}))],
        ),
        (
            "lookup",
            "what time is it in Oslo",
            json!({"expected": ["get_time"], "arguments": {"tz": "Europe/Oslo"}, "split": "calibrate"}),
            vec![
                Reply::Lookup("get_time"),
                Reply::Call("get_time", json!({"tz": "Europe/Oslo"})),
            ],
        ),
        (
            "corrected",
            "email bob that I am late",
            json!({"expected": ["send_email"]}),
            vec![
                Reply::Call("send_email", json!({"to": "bob"})),
                Reply::Call("send_email", json!({"to": "bob", "body": "late"})),
            ],
        ),
        (
            "garbage",
            "garbage please",
            json!({"expected": ["get_time"]}),
            vec![Reply::Raw("<html>not a completion</html>")],
        ),
        (
            "silent",
            "say nothing useful",
            json!({"expected": ["get_time"]}),
            vec![Reply::Text("I would rather not.")],
        ),
        (
            "fenced",
            "weather in Oslo as text",
            json!({"expected": ["get_weather"]}),
            vec![Reply::Text(FENCED)],
        ),
        (
            "hang",
            "this one hangs",
            json!({"expected": ["get_time"]}),
            vec![Reply::Hang(Duration::from_secs(3))],
        ),
        (
            "fail",
            "the server fails",
            json!({"expected": ["get_time"]}),
            vec![Reply::Status(500)],
        ),
        (
            "badcode",
            "call a code that does not exist",
            json!({"expected": ["get_time"]}),
            vec![Reply::Wire("t", json!({"f": "zz9", "a": {}}))],
        ),
        (
            "curious",
            "only ever look things up",
            json!({"expected": ["get_time"]}),
            vec![Reply::Lookup("get_time")],
        ),
        (
            "none",
            "tell me a joke",
            json!({"expected": []}),
            vec![Reply::Text("Why did the chicken cross the road?")],
        ),
    ];
    let mut lines = String::new();
    let mut script = Vec::new();
    for (id, prompt, mut fields, replies) in rows {
        fields["id"] = json!(id);
        fields["prompt"] = json!(prompt);
        lines.push_str(&fields.to_string());
        lines.push('\n');
        script.push((prompt, replies));
    }
    (lines, script)
}

fn files(dir: &Path) -> (PathBuf, PathBuf) {
    let tools = dir.join("tools.json");
    std::fs::write(&tools, tools_json().to_string()).unwrap();
    let (lines, _) = scenarios();
    let scenarios = dir.join("scenarios.jsonl");
    std::fs::write(&scenarios, lines).unwrap();
    (tools, scenarios)
}

/// `chef eval` on these files against `endpoint`, as model `scripted-1`, with no key.
fn eval_command(tools: &Path, scenarios: &Path, endpoint: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_chef"));
    cmd.arg("eval")
        .arg("--tools")
        .arg(tools)
        .arg("--scenarios")
        .arg(scenarios)
        .args(["--endpoint", endpoint, "--model", "scripted-1"])
        .env_remove("OPENAI_API_KEY");
    cmd
}

/// [`eval_command`] on the scripted scenarios written into `dir`, with a 0.5 s timeout.
fn command(dir: &Path, endpoint: &str, extra: &[&str]) -> Command {
    let (tools, scenarios) = files(dir);
    let mut cmd = eval_command(&tools, &scenarios, endpoint);
    cmd.args(["--timeout", "0.5"]).args(extra);
    cmd
}

fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn by_scenario(records: &[Value]) -> HashMap<String, Value> {
    records
        .iter()
        .map(|r| (r["scenario"].as_str().unwrap().to_owned(), r.clone()))
        .collect()
}

#[track_caller]
fn success(out: &Output) -> String {
    assert!(out.status.success(), "{}", stderr(out));
    stdout(out)
}

/// A test's scripted server, its scratch directory and the run file in it (`run.jsonl`).
struct Rig {
    server: Server,
    dir: tempfile::TempDir,
    run: PathBuf,
}

impl Rig {
    /// The server on the script of [`scenarios`].
    fn scripted() -> Self {
        Self::start(&scenarios().1)
    }

    /// The server on `script`.
    fn start(script: &[(&str, Vec<Reply>)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run.jsonl");
        Self {
            server: Server::start(script),
            dir,
            run,
        }
    }

    /// [`command`] in the rig's directory against its server.
    fn command(&self, extra: &[&str]) -> Command {
        command(self.dir.path(), &self.server.endpoint(), extra)
    }

    /// [`Rig::command`] writing its records to the run file.
    fn to_run(&self, extra: &[&str]) -> Command {
        let mut cmd = self.command(extra);
        cmd.arg("--out").arg(&self.run);
        cmd
    }

    /// Runs [`Rig::to_run`].
    fn eval(&self, extra: &[&str]) -> Output {
        self.to_run(extra).output().unwrap()
    }

    /// The prompts of the requests the server saw after the first `sent`.
    fn prompts_since(&self, sent: usize) -> Vec<String> {
        self.server.seen()[sent..]
            .iter()
            .map(|s| s.prompt.clone())
            .collect()
    }
}

#[test]
fn every_scripted_reply_is_graded_as_what_it_is() {
    let rig = Rig::scripted();
    let table = success(&rig.eval(&["--setting", "level=3"]));
    let records = records(&rig.run);
    assert_eq!(records.len(), 12, "one line per scenario, none dropped");
    let r = by_scenario(&records);
    let outcome = |id: &str| r[id]["outcome"].as_str().unwrap().to_owned();
    for (id, want) in [
        ("right", "right"),
        ("wrong", "wrong_tool"),
        ("lookup", "right"),
        ("corrected", "right"),
        ("garbage", "unparsable"),
        ("silent", "no_call"),
        ("fenced", "no_call"),
        ("hang", "timeout"),
        ("fail", "http_error"),
        ("badcode", "malformed"),
        ("curious", "lookups_exhausted"),
        ("none", "right"),
    ] {
        assert_eq!(outcome(id), want, "{id}: {}", r[id]);
        assert_eq!(r[id]["setting"], "level=3");
    }
    // The right call: graded on the real tool, arguments matched ignoring case.
    assert_eq!(r["right"]["first_tool"], "get_weather");
    assert_eq!(r["right"]["arguments"], json!({"city": "Oslo"}));
    assert_eq!(r["right"]["args_valid"], true);
    assert_eq!(r["right"]["args_match"], true);
    assert_eq!(r["right"]["model_calls"], 1);
    assert!(r["right"]["first_prompt_tokens"].as_u64().unwrap() > 50);
    assert_eq!(r["right"]["completion_tokens"], 7);
    assert_eq!(r["wrong"]["first_tool"], "get_time");
    assert_eq!(r["wrong"]["args_match"], Value::Null);
    // A lookup, then the call: two model calls, one lookup, tokens summed.
    assert_eq!(
        (
            &r["lookup"]["model_calls"],
            &r["lookup"]["lookups"],
            &r["lookup"]["args_match"]
        ),
        (&json!(2), &json!(1), &json!(true))
    );
    assert_eq!(r["lookup"]["completion_tokens"], 14);
    assert!(
        r["lookup"]["prompt_tokens"].as_u64().unwrap()
            > r["lookup"]["first_prompt_tokens"].as_u64().unwrap()
    );
    // A validation error, then the corrected call.
    assert_eq!(r["corrected"]["model_calls"], 2);
    assert_eq!(r["corrected"]["malformed_calls"], 1);
    let errors = r["corrected"]["validation_errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["tool"], "send_email");
    assert!(
        errors[0]["message"].as_str().unwrap().contains("body"),
        "{}",
        errors[0]
    );
    assert_eq!(
        r["corrected"]["arguments"],
        json!({"to": "bob", "body": "late"})
    );
    // Failures keep why.
    assert!(
        r["garbage"]["detail"]
            .as_str()
            .unwrap()
            .contains("not a completion")
    );
    assert_eq!(r["fail"]["http_status"], 500);
    assert!(
        r["hang"]["detail"]
            .as_str()
            .unwrap()
            .contains("no reply within 0.5s")
    );
    assert_eq!(r["hang"]["model_calls"], 1);
    // Refused twice: the budget of two calls is spent.
    assert_eq!(
        (
            &r["badcode"]["model_calls"],
            &r["badcode"]["malformed_calls"]
        ),
        (&json!(2), &json!(2))
    );
    assert_eq!(r["badcode"]["validation_errors"], json!([]));
    assert_eq!(
        (&r["curious"]["model_calls"], &r["curious"]["lookups"]),
        (&json!(2), &json!(2))
    );
    assert_eq!(r["fenced"]["recovered_text_calls"], 0);
    // What the model wrote is kept, so a miss can be read afterwards.
    assert_eq!(r["fenced"]["replies"], json!([FENCED]));
    assert_eq!(r["silent"]["replies"], json!(["I would rather not."]));
    // Every request is chef's compiled body with the model and temperature 0, no key.
    for seen in rig.server.seen() {
        assert_eq!(seen.body["model"], "scripted-1");
        assert_eq!(seen.body["temperature"], 0);
        assert!(seen.body.get("response_format").is_none());
        assert!(offers(&seen.body, "t") && offers(&seen.body, "q"));
        assert_eq!(seen.authorization, None);
    }
    // The lookup's answer went back to the model as a tool message.
    let second = rig
        .server
        .seen()
        .into_iter()
        .filter(|s| s.prompt == "what time is it in Oslo")
        .nth(1)
        .unwrap();
    let tool_msg = second.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    assert!(
        text_of(&tool_msg["content"]).contains("get_time"),
        "{tool_msg}"
    );
    // The summary table counts the same.
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 2, "{table}");
    let cells: Vec<&str> = lines[1].split_whitespace().collect();
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    let cell = |name: &str| cells[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(cells[0], "level=3");
    assert_eq!(cell("right"), "4/12");
    assert_eq!(cell("args_valid"), "4/12");
    assert_eq!(cell("args_match"), "2/2");
    assert_eq!(cell("wrong_tool"), "1");
    assert_eq!(cell("malformed"), "1");
    assert_eq!(cell("no_call"), "2");
    assert_eq!(cell("lookups_exhausted"), "1");
    assert_eq!(cell("timeout"), "1");
    assert_eq!(cell("http_error"), "1");
    assert_eq!(cell("unparsable"), "1");
    assert_eq!(cell("calls"), "16");
    assert_eq!(cell("lookups"), "3");
}

#[test]
fn a_call_written_as_text_counts_only_when_recovered() {
    let rig = Rig::scripted();
    success(&rig.eval(&[
        "--setting",
        "level=3",
        "--recover-text-calls",
        "--constrain",
        "--limit",
        "7",
    ]));
    let r = by_scenario(&records(&rig.run));
    assert_eq!(r.len(), 7, "--limit 7");
    assert_eq!(r["fenced"]["outcome"], "right", "{}", r["fenced"]);
    assert_eq!(r["fenced"]["recovered_text_calls"], 1);
    assert_eq!(r["fenced"]["first_tool"], "get_weather");
    assert_eq!(r["silent"]["outcome"], "no_call");
    for seen in rig.server.seen() {
        let branches = &seen.body["response_format"]["json_schema"]["schema"]["anyOf"];
        let names: Vec<&Value> = (0..2)
            .map(|i| &branches[i]["properties"]["name"]["const"])
            .collect();
        assert_eq!(names, [&json!("t"), &json!("q")]);
    }
}

#[test]
fn a_reply_cut_at_the_token_limit_is_counted_and_said() {
    let prompt = "book the cheapest truck for these forty shipments";
    let server = Server::start(&[(
        prompt,
        vec![Reply::Cut(
            "```json\n{\"name\": \"send_email\", \"arguments\": {\"to\": \"ops\", \"body\": \"ship",
        )],
    )]);
    let dir = tempfile::tempdir().unwrap();
    let scenarios = dir.path().join("cut.jsonl");
    std::fs::write(
        &scenarios,
        json!({"id": "cut", "prompt": prompt, "expected": ["send_email"]}).to_string(),
    )
    .unwrap();
    let (tools, _) = files(dir.path());
    let run = dir.path().join("run.jsonl");
    let out = eval_command(&tools, &scenarios, &server.endpoint())
        .args([
            "--setting",
            "level=1",
            "--recover-text-calls",
            "--max-tokens",
            "64",
        ])
        .arg("--out")
        .arg(&run)
        .output()
        .unwrap();
    success(&out);
    let r = by_scenario(&records(&run));
    assert_eq!(r["cut"]["outcome"], "no_call", "{}", r["cut"]);
    assert_eq!(r["cut"]["cut_replies"], 1);
    assert_eq!(
        r["cut"]["detail"],
        "the last reply was cut at --max-tokens 64"
    );
    assert_eq!(server.seen()[0].body["max_tokens"], 64);
}

#[test]
fn split_keeps_only_the_scenarios_of_that_half() {
    let rig = Rig::scripted();
    success(&rig.eval(&["--setting", "level=1", "--split", "heldout"]));
    let r = by_scenario(&records(&rig.run));
    let mut ids: Vec<&str> = r.keys().map(String::as_str).collect();
    ids.sort_unstable();
    assert_eq!(ids, ["right", "wrong"]);
    assert_eq!(rig.server.seen().len(), 2);

    let none = rig
        .command(&["--setting", "level=1", "--split", "validation"])
        .output()
        .unwrap();
    assert_error(&none, &[r#"no scenario has "split": "validation""#]);
    assert_eq!(rig.server.seen().len(), 2, "nothing sent");
}

#[test]
fn a_second_run_sends_nothing_for_finished_pairs_and_draws_the_same_chart() {
    let rig = Rig::scripted();
    let Rig { server, dir, run } = &rig;
    let svg = dir.path().join("chart.svg");
    let flags = [
        "--setting",
        "level=1",
        "--setting",
        "level=3,name=coded",
        "--limit",
        "3",
    ];
    let go = || rig.to_run(&flags).arg("--svg").arg(&svg).output().unwrap();
    let first_table = success(&go());
    let first_svg = std::fs::read_to_string(&svg).unwrap();
    let sent = server.seen().len();
    // right (1 call) + wrong (1) + lookup: level 1 has no `q`, so the scripted lookup is
    // a refused call there and the second reply a right call (2); the same at level 3.
    assert_eq!(sent, 8, "{first_table}");
    let first = records(run);
    assert_eq!(first.len(), 6);
    let level1: Vec<&Value> = first.iter().filter(|r| r["setting"] == "level=1").collect();
    assert_eq!(level1.len(), 3);
    assert!(server.seen().iter().any(|s| offers(&s.body, "get_weather")));

    let again = go();
    let second_table = success(&again);
    assert_eq!(server.seen().len(), sent, "no request for a finished pair");
    assert!(
        stderr(&again).contains("6 of 6 runs are already in the run file"),
        "{}",
        stderr(&again)
    );
    assert_eq!(records(run), first, "nothing appended");
    assert_eq!(second_table, first_table);
    let second_svg = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(second_svg, first_svg, "same records, same bytes");
    assert_well_formed(&first_svg);
    assert!(first_svg.contains(">level=1 ("), "{first_svg}");
    assert!(first_svg.contains(">coded ("), "{first_svg}");

    // A run killed mid-line: the cut line is dropped and only its pair runs again.
    let text = std::fs::read_to_string(run).unwrap();
    let cut = text.len() - 20;
    std::fs::write(run, &text[..cut]).unwrap();
    let third = go();
    success(&third);
    assert!(
        stderr(&third).contains("incomplete last line"),
        "{}",
        stderr(&third)
    );
    let after = records(run);
    assert_eq!(after.len(), 6);
    assert_eq!(after[..5], first[..5]);
    assert_eq!(
        (&after[5]["setting"], &after[5]["scenario"]),
        (&json!("coded"), &json!("lookup"))
    );
    let rerun = rig.prompts_since(sent);
    assert!(!rerun.is_empty());
    assert!(
        rerun.iter().all(|p| p == "what time is it in Oslo"),
        "{rerun:?}"
    );
}

/// Every element opened is closed, in order, and the document is one `<svg>` element.
fn assert_well_formed(svg: &str) {
    let mut stack: Vec<String> = Vec::new();
    let mut rest = svg;
    let mut roots = 0;
    while let Some(start) = rest.find('<') {
        let end = rest[start..].find('>').expect("tag closes") + start;
        let tag = &rest[start + 1..end];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name), "mismatched </{name}>");
        } else {
            let name = tag.split_whitespace().next().unwrap().trim_end_matches('/');
            if stack.is_empty() {
                roots += 1;
            }
            if !tag.ends_with('/') {
                stack.push(name.to_owned());
            }
        }
        assert!(!rest[start + 1..end].contains('<'), "stray < in {tag}");
        rest = &rest[end + 1..];
    }
    assert!(stack.is_empty(), "unclosed {stack:?}");
    assert_eq!(roots, 1);
    assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
}

#[test]
fn a_refused_key_stops_the_run_and_bad_flags_send_nothing() {
    let rig = Rig::start(&[("weather in Oslo, please", vec![Reply::Status(401)])]);
    let Rig { server, run, .. } = &rig;
    let out = rig
        .to_run(&["--setting", "level=3"])
        .env("OPENAI_API_KEY", "sk-test-secret")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("401"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("sk-test-secret"));
    assert_eq!(server.seen().len(), 1, "stopped at the first refusal");
    assert_eq!(
        server.seen()[0].authorization.as_deref(),
        Some("Bearer sk-test-secret")
    );
    assert_eq!(
        std::fs::read_to_string(run).unwrap(),
        "",
        "no line for a refused run"
    );
    // Another variable, named by --api-key-env, is used instead of OPENAI_API_KEY.
    let out = rig
        .command(&["--setting", "level=3"])
        .args(["--api-key-env", "CHEF_EVAL_TEST_KEY"])
        .env("CHEF_EVAL_TEST_KEY", "sk-other")
        .env("OPENAI_API_KEY", "sk-test-secret")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(server.seen().len(), 2);
    assert_eq!(
        server.seen()[1].authorization.as_deref(),
        Some("Bearer sk-other")
    );

    for (extra, want) in [
        (vec!["--setting", "level=4"], "compiled=MAP.json"),
        (vec!["--setting", "level=3,prune=x"], "ranked:K"),
        (vec!["--target", "anthropic"], "--target openai only"),
        (
            vec!["--setting", "level=3", "--setting", "level=3"],
            "labelled",
        ),
    ] {
        assert_error(&rig.command(&extra).output().unwrap(), &[want]);
    }
    // A level-4 map compiled for another catalogue names none of these tools.
    let other = crate::fixture("real-mcp-tools.compiled-map.json");
    let setting = format!("level=4,compiled={}", other.display());
    assert_error(
        &rig.command(&["--setting", &setting]).output().unwrap(),
        &["names none of the 3 tools", "chef compile-map"],
    );
    assert_eq!(server.seen().len(), 2, "no request for unusable flags");
}

#[test]
fn the_toolgz_scenarios_run_on_the_149_tool_corpus_at_two_levels() {
    let daily = "I need the day-by-day Lost Freight rollup for each FC, not the weekly one. Pull that data source.";
    let detail = "Give me the row-level eDemand records, one row per order — not the weekly summary numbers.";
    let server = Server::start(&[
        (daily, vec![Reply::Call("scorecard_lf_daily", json!({}))]),
        (detail, vec![Reply::Call("scorecard_lf_daily", json!({}))]),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.jsonl");
    let out = eval_command(
        &crate::fixture("real-mcp-tools.json"),
        &crate::fixture("toolgz-scenarios.json"),
        &server.endpoint(),
    )
    .args([
        "--setting",
        "level=1",
        "--setting",
        "level=3,style=distinct",
    ])
    .args(["--limit", "2", "--out"])
    .arg(&run)
    .output()
    .unwrap();
    success(&out);
    assert!(
        stderr(&out)
            .contains("10 scenario(s) name tools that are not in TOOLS and are skipped: acc-"),
        "{}",
        stderr(&out)
    );
    let records = records(&run);
    let got: Vec<(&str, &str, &str)> = records
        .iter()
        .map(|r| {
            (
                r["setting"].as_str().unwrap(),
                r["scenario"].as_str().unwrap(),
                r["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("level=1", "real-daily-vs-weekly", "right"),
            ("level=1", "real-rollup-vs-detail", "wrong_tool"),
            ("level=3,style=distinct", "real-daily-vs-weekly", "right"),
            (
                "level=3,style=distinct",
                "real-rollup-vs-detail",
                "wrong_tool"
            ),
        ]
    );
    // Level 1 sends 149 tools, level 3 two and a map: its first request is far smaller.
    let tokens = |i: usize| records[i]["first_prompt_tokens"].as_u64().unwrap();
    assert!(tokens(2) * 3 < tokens(0), "{} vs {}", tokens(2), tokens(0));
    let level1 = server
        .seen()
        .into_iter()
        .find(|s| !offers(&s.body, "t"))
        .unwrap();
    assert_eq!(level1.body["tools"].as_array().unwrap().len(), 149);
}

#[test]
fn an_endpoint_that_cannot_be_reached_stops_the_run_before_any_line() {
    // A port nothing listens on: bound, then closed.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.jsonl");
    let out = command(dir.path(), &endpoint, &["--setting", "level=1"])
        .arg("--out")
        .arg(&run)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot connect to"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "", "no table for a run that measured nothing");
    assert_eq!(
        std::fs::read_to_string(&run).unwrap(),
        "",
        "no line written"
    );
}

#[test]
fn a_rerun_runs_again_the_pairs_that_timed_out_or_could_not_connect() {
    let rig = Rig::scripted();
    let Rig { server, run, .. } = &rig;
    // right … hang, fail: a timeout and an HTTP 500.
    let go = || rig.eval(&["--setting", "level=1", "--limit", "9"]);
    success(&go());
    let first = by_scenario(&records(run));
    assert_eq!(first["hang"]["outcome"], "timeout");
    assert_eq!(first["fail"]["outcome"], "http_error");
    // As if the server had been down when "right" ran.
    let text = std::fs::read_to_string(run).unwrap();
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            let mut r: Value = serde_json::from_str(l).unwrap();
            if r["scenario"] == "right" {
                r["outcome"] = json!("http_error");
                r["http_status"] = Value::Null;
                r["detail"] = json!("cannot connect to the endpoint");
            }
            format!("{r}\n")
        })
        .collect();
    std::fs::write(run, lines.concat()).unwrap();
    let sent = server.seen().len();

    let again = go();
    let table = success(&again);
    assert!(
        stderr(&again).contains("2 run(s) in the run file timed out or could not connect"),
        "{}",
        stderr(&again)
    );
    assert_eq!(
        rig.prompts_since(sent),
        ["weather in Oslo, please", "this one hangs"],
        "only the unmeasured pairs run again (an HTTP 500 is an answer)"
    );
    let after = records(run);
    assert_eq!(after.len(), 11, "two lines appended");
    assert_eq!(after[9]["scenario"], "right");
    assert_eq!(after[9]["outcome"], "right");
    assert!(table.contains("level=1"), "{table}");

    // A third run finds "right" measured and only "hang" unmeasured.
    let sent = server.seen().len();
    success(&go());
    assert_eq!(rig.prompts_since(sent), ["this one hangs"]);
}

/// A named setting keeps its definition in its lines: a rerun that gives the same name to
/// another setting is refused before any request (the eval audit found it resumed, and
/// reported level 1's figures under the level-3 definition); the same definition resumes.
#[test]
fn a_rerun_that_redefines_a_named_setting_is_refused() {
    let rig = Rig::scripted();
    success(&rig.eval(&["--setting", "level=1,name=mine", "--limit", "2"]));
    let first = records(&rig.run);
    assert!(first.iter().all(|r| r["spec"] == "level=1"), "{first:?}");
    let sent = rig.server.seen().len();
    let again = rig.eval(&["--setting", "level=3,name=mine", "--limit", "2"]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(
        stderr(&again)
            .contains("setting mine was run as level=1, and this run defines it as level=3"),
        "{}",
        stderr(&again)
    );
    assert_eq!(rig.server.seen().len(), sent, "nothing sent");
    success(&rig.eval(&["--setting", "level=1,name=mine", "--limit", "2"]));
    assert_eq!(rig.server.seen().len(), sent, "resumed: nothing sent");
    // An unnamed setting's label is its spec: no `spec` member.
    let rig = Rig::scripted();
    success(&rig.eval(&["--setting", "level=1", "--limit", "1"]));
    assert!(records(&rig.run)[0].get("spec").is_none());
}

/// `--out /dev/stdout` with standard output on a pipe (as `| jq` has it): the run file is
/// not read back (a pipe holds no earlier run, and reading it would wait for ever), the
/// records are the output, one JSON line each, and the summary table goes to standard
/// error. Found by the eval audit: the run hung with no output.
#[test]
fn out_to_dev_stdout_on_a_pipe_streams_json_lines_and_the_table_to_stderr() {
    let rig = Rig::scripted();
    let mut child = rig
        .command(&[
            "--setting",
            "level=1",
            "--limit",
            "3",
            "--out",
            "/dev/stdout",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("chef eval --out /dev/stdout did not finish");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let text = success(&out);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines.iter().all(|r| r["setting"] == "level=1"));
    assert!(stderr(&out).contains("level=1"), "{}", stderr(&out));
}

/// `--svg /dev/stdout > chart.svg`: standard output is a regular file. The chart is
/// written through stdout (a rename beside the file would leave the shell's descriptor on
/// an unlinked copy, and the table in it), and the table goes to stderr, so the file holds
/// the chart alone. Found by session 41's README audit.
#[test]
fn svg_to_dev_stdout_redirected_to_a_file_leaves_the_chart_alone_in_it() {
    let rig = Rig::scripted();
    let chart = rig.dir.path().join("chart.svg");
    let out = rig
        .command(&[
            "--setting",
            "level=1",
            "--limit",
            "2",
            "--svg",
            "/dev/stdout",
        ])
        .stdout(std::fs::File::create(&chart).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(svg.trim_end().ends_with("</svg>"), "{svg}");
    assert!(stderr(&out).contains("level=1"), "{}", stderr(&out));
    let names: Vec<_> = std::fs::read_dir(rig.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains("deleted")), "{names:?}");
}

#[test]
fn an_unwritable_out_or_svg_path_is_refused_before_any_request() {
    let rig = Rig::scripted();
    let missing = rig.dir.path().join("no-such-dir");
    for (flag, path, want) in [
        ("--svg", missing.join("chart.svg"), "does not exist"),
        ("--out", missing.join("run.jsonl"), "does not exist"),
        ("--svg", rig.dir.path().to_path_buf(), "is a directory"),
    ] {
        let out = rig
            .command(&["--setting", "level=1"])
            .arg(flag)
            .arg(&path)
            .output()
            .unwrap();
        assert_error(&out, &[flag, want]);
    }
    assert_eq!(rig.server.seen().len(), 0, "nothing sent");
}

/// `--out X --svg X` (or `./X`, or a link to X) would overwrite the records with the chart;
/// it is refused before any request and the run file is untouched (found by session 33's
/// CLI audit: the results were lost).
#[test]
fn out_and_svg_naming_the_same_file_are_refused_before_any_request() {
    let rig = Rig::scripted();
    let dotted = rig.dir.path().join(".").join("run.jsonl");
    let mut svgs = vec![rig.run.clone(), dotted.clone()];
    #[cfg(unix)]
    {
        let link = rig.dir.path().join("link.svg");
        std::os::unix::fs::symlink("run.jsonl", &link).unwrap();
        svgs.push(link);
    }
    // Neither exists yet, then the run file holds records.
    for svg in &svgs {
        let out = rig
            .to_run(&["--setting", "level=1"])
            .arg("--svg")
            .arg(svg)
            .output()
            .unwrap();
        assert_error(&out, &["--out", "--svg", "are the same file"]);
    }
    assert_eq!(rig.server.seen().len(), 0, "nothing sent");
    assert!(!rig.run.exists(), "nothing written");
    success(&rig.eval(&["--setting", "level=1", "--limit", "1"]));
    let before = std::fs::read(&rig.run).unwrap();
    let sent = rig.server.seen().len();
    for svg in &svgs {
        let out = rig
            .to_run(&["--setting", "level=1", "--limit", "1"])
            .arg("--svg")
            .arg(svg)
            .output()
            .unwrap();
        assert_error(&out, &["are the same file"]);
    }
    assert_eq!(rig.server.seen().len(), sent, "nothing sent");
    assert_eq!(std::fs::read(&rig.run).unwrap(), before, "records kept");
}

/// Neither output may be one of the run's inputs (session 38's CLI audit: `--svg` named as
/// the scenarios file replaced it by the chart), and a key no header can carry is said
/// before any request.
#[test]
fn an_output_naming_an_input_or_a_key_with_a_line_break_is_refused_before_any_request() {
    let rig = Rig::scripted();
    let (tools, scenarios) = files(rig.dir.path());
    let before = std::fs::read(&scenarios).unwrap();
    for (flag, path) in [
        ("--svg", &scenarios),
        ("--svg", &tools),
        ("--out", &scenarios),
    ] {
        let out = rig
            .command(&["--setting", "level=1"])
            .arg(flag)
            .arg(path)
            .output()
            .unwrap();
        assert_error(&out, &[flag, "would overwrite its own input"]);
    }
    assert_eq!(std::fs::read(&scenarios).unwrap(), before, "input kept");
    let out = rig
        .command(&["--setting", "level=1"])
        .env("OPENAI_API_KEY", "sk-a\nb")
        .output()
        .unwrap();
    assert_error(&out, &["OPENAI_API_KEY", "cannot carry"]);
    assert_eq!(rig.server.seen().len(), 0, "nothing sent");
}

#[test]
fn a_rerun_with_another_max_tokens_is_refused_and_old_lines_without_it_are_kept() {
    let rig = Rig::scripted();
    let Rig { server, run, .. } = &rig;
    let go = |max_tokens: &str| {
        rig.eval(&[
            "--setting",
            "level=1",
            "--limit",
            "1",
            "--max-tokens",
            max_tokens,
        ])
    };
    success(&go("512"));
    let first = records(run);
    assert_eq!(first[0]["max_tokens"], 512);
    let sent = server.seen().len();

    let other = go("64");
    assert_error(
        &other,
        &["--max-tokens 512", "(this run differs in --max-tokens)"],
    );
    assert_eq!(server.seen().len(), sent, "nothing sent");

    // A line whose scenario now expects other tools was made for another request under
    // that id (a JSON Lines file edited or reordered): refused, nothing sent.
    let mut moved = first[0].clone();
    moved["expected"] = serde_json::json!(["some_other_tool"]);
    std::fs::write(run, format!("{moved}\n")).unwrap();
    let changed = go("512");
    assert_error(
        &changed,
        &[
            "was run expecting [\"some_other_tool\"]",
            "the file changed since",
        ],
    );
    assert_eq!(server.seen().len(), sent, "nothing sent");
    // So is a line whose scenario now asks another prompt under that id (session 38's
    // CLI audit: it was resumed as if measured on the new prompt).
    let mut asked = first[0].clone();
    assert!(asked["prompt"].is_string(), "{asked}");
    asked["prompt"] = serde_json::json!("an older question");
    std::fs::write(run, format!("{asked}\n")).unwrap();
    assert_error(
        &go("512"),
        &[
            "was run on the prompt \"an older question\"",
            "the file changed since",
        ],
    );
    assert_eq!(server.seen().len(), sent, "nothing sent");
    // And a line measured on another tool catalogue (the TOOLS file edited since: session
    // 39's eval audit found it resumed silently).
    let mut catalogue = first[0].clone();
    let fingerprint = catalogue["catalogue"].as_str().unwrap().to_owned();
    assert!(
        fingerprint.starts_with("crc32:") && fingerprint.len() == 14,
        "{fingerprint}"
    );
    catalogue["catalogue"] = serde_json::json!("crc32:00000000");
    std::fs::write(run, format!("{catalogue}\n")).unwrap();
    assert_error(
        &go("512"),
        &[
            "was run on a tool catalogue (crc32:00000000) that is not the one given now",
            &format!("({fingerprint})"),
            "the TOOLS file changed since",
        ],
    );
    assert_eq!(server.seen().len(), sent, "nothing sent");
    // A line written before the catalogue was recorded cannot be checked: resumed.
    let mut unrecorded = first[0].clone();
    unrecorded.as_object_mut().unwrap().remove("catalogue");
    std::fs::write(run, format!("{unrecorded}\n")).unwrap();
    success(&go("512"));
    assert_eq!(server.seen().len(), sent, "the old line is reused");
    std::fs::write(run, format!("{}\n", first[0])).unwrap();

    // A line written before max_tokens was recorded is resumed under any --max-tokens.
    let mut old = first[0].clone();
    old.as_object_mut().unwrap().remove("max_tokens");
    std::fs::write(run, format!("{old}\n")).unwrap();
    success(&go("64"));
    assert_eq!(server.seen().len(), sent, "the old line is reused");
    assert_eq!(records(run), [old]);
}

/// Issue 43, item 4: `--whole-task` answers every dispatched call with its scripted result
/// and grades the whole task — the expected tools in order, nothing else — beside the
/// first call, with the prompt tokens of every request summed.
#[test]
fn whole_tasks_are_graded_call_by_call_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools.json");
    std::fs::write(&tools, tools_json().to_string()).unwrap();
    let rows = [
        json!({"id": "chain", "prompt": "weather in Oslo then email bob", "expected": ["get_weather", "send_email"]}),
        json!({"id": "swapped", "prompt": "time in Oslo then email bob", "expected": ["get_time", "send_email"]}),
        json!({"id": "stray", "prompt": "weather then time then email", "expected": ["get_weather", "send_email"]}),
        json!({"id": "half", "prompt": "weather and then email, stop early", "expected": ["get_weather", "send_email"]}),
        json!({"id": "nothing", "prompt": "tell me a joke, no tools", "expected": []}),
        json!({"id": "failed", "prompt": "weather, then the server fails", "expected": ["get_weather", "send_email"]}),
        json!({"id": "garbled", "prompt": "weather, then a reply that is not a completion", "expected": ["get_weather", "send_email"]}),
    ];
    let lines: String = rows.iter().map(|r| format!("{r}\n")).collect();
    let scenarios = dir.path().join("tasks.jsonl");
    std::fs::write(&scenarios, lines).unwrap();
    let mail = || json!({"to": "bob", "body": "hi"});
    let server = Server::start(&[
        (
            "weather in Oslo then email bob",
            vec![
                Reply::Call("get_weather", json!({"city": "Oslo"})),
                Reply::Call("send_email", mail()),
                Reply::Text("Done."),
            ],
        ),
        (
            "time in Oslo then email bob",
            vec![
                Reply::Call("send_email", mail()),
                Reply::Call("get_time", json!({"tz": "Europe/Oslo"})),
                Reply::Text("Done."),
            ],
        ),
        (
            "weather then time then email",
            vec![
                Reply::Call("get_weather", json!({"city": "Oslo"})),
                Reply::Call("get_time", json!({"tz": "UTC"})),
                Reply::Call("send_email", mail()),
                Reply::Text("Done."),
            ],
        ),
        (
            "weather and then email, stop early",
            vec![
                Reply::Call("get_weather", json!({"city": "Oslo"})),
                Reply::Text("Here is the weather."),
            ],
        ),
        ("tell me a joke, no tools", vec![Reply::Text("A joke.")]),
        (
            "weather, then the server fails",
            vec![
                Reply::Call("get_weather", json!({"city": "Oslo"})),
                Reply::Status(500),
            ],
        ),
        (
            "weather, then a reply that is not a completion",
            vec![
                Reply::Call("get_weather", json!({"city": "Oslo"})),
                Reply::Raw(r#"{"nothing": "here"}"#),
            ],
        ),
    ]);
    let run = dir.path().join("run.jsonl");
    let out = eval_command(&tools, &scenarios, &server.endpoint())
        .args([
            "--setting",
            "level=1",
            "--whole-task",
            "--max-calls",
            "6",
            "--out",
        ])
        .arg(&run)
        .output()
        .unwrap();
    success(&out);
    let r = by_scenario(&records(&run));
    let task = |id: &str| {
        (
            r[id]["task_success"].clone(),
            r[id]["steps_done"].clone(),
            r[id]["calls"].clone(),
        )
    };
    assert_eq!(
        task("chain"),
        (json!(true), json!(2), json!(["get_weather", "send_email"]))
    );
    assert_eq!(
        r["chain"]["outcome"], "right",
        "the first call is still graded"
    );
    assert_eq!(r["chain"]["model_calls"], 3);
    assert_eq!(task("swapped").0, json!(false));
    assert_eq!(r["swapped"]["outcome"], "wrong_tool");
    assert_eq!(
        task("stray").0,
        json!(false),
        "a tool the task does not call"
    );
    assert_eq!(task("stray").1, json!(2));
    assert_eq!(
        task("half"),
        (json!(false), json!(1), json!(["get_weather"]))
    );
    assert_eq!(task("nothing"), (json!(true), json!(0), json!([])));
    // A later request that fails ends the task unsuccessfully; the first call keeps its
    // grade, and the failure is said in `task_error`.
    for id in ["failed", "garbled"] {
        assert_eq!(r[id]["outcome"], "right", "{id}");
        assert_eq!(r[id]["first_tool"], "get_weather", "{id}");
        assert_eq!(task(id), (json!(false), json!(1), json!(["get_weather"])));
        let error = r[id]["task_error"].as_str().unwrap();
        assert!(error.starts_with("request 2: "), "{error}");
    }
    assert!(r["failed"]["task_error"].as_str().unwrap().contains("500"));
    assert!(r["chain"].get("task_error").is_none());
    // Every request's prompt tokens count toward the task.
    let first = r["chain"]["first_prompt_tokens"].as_u64().unwrap();
    assert!(r["chain"]["prompt_tokens"].as_u64().unwrap() > 2 * first);
    // The server's cached tokens are kept: a task's later requests begin with the earlier
    // ones, so most of their prompt is read from the cache.
    let all = r["chain"]["cached_tokens"].as_u64().unwrap();
    let at_first = r["chain"]["first_cached_tokens"].as_u64().unwrap();
    let later = r["chain"]["prompt_tokens"].as_u64().unwrap() - first;
    assert!(all - at_first > later / 2, "{all} {at_first} {later}");
    // The summary table reports the tasks beside the first call.
    let table = stdout(&out);
    assert!(table.contains("task_success"), "{table}");
    assert!(table.contains("cached_later"), "{table}");
    assert!(table.contains("2/7"), "{table}");
    // Every expected call in order, other calls allowed: chain, stray and nothing.
    let lines: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    let column = lines
        .iter()
        .find_map(|l| l.iter().position(|c| *c == "all_steps"))
        .expect("an all_steps column");
    let row = lines
        .iter()
        .find(|l| l.first() == Some(&"level=1"))
        .expect("the setting's row");
    assert_eq!(row.get(column), Some(&"3/7"), "{table}");
    assert!(table.contains("8/12"), "{table}");
    // A rerun without --whole-task does not resume these lines.
    let out = eval_command(&tools, &scenarios, &server.endpoint())
        .args(["--setting", "level=1", "--max-calls", "6", "--out"])
        .arg(&run)
        .output()
        .unwrap();
    assert_error(&out, &["--whole-task"]);
}

/// `--stop-on-repeat`: a whole task ends at the first reply that only repeats answered
/// calls (the loop chef's guard announces), graded on the calls made until then; without
/// it the model is asked again until `--max-calls`.
#[test]
fn stop_on_repeat_ends_a_task_at_the_loop_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools.json");
    std::fs::write(&tools, tools_json().to_string()).unwrap();
    let row = json!({"id": "loop", "prompt": "weather in Oslo then email bob", "expected": ["get_weather", "send_email"]});
    let scenarios = dir.path().join("tasks.jsonl");
    std::fs::write(&scenarios, format!("{row}\n")).unwrap();
    let mail = || json!({"to": "bob", "body": "hi"});
    // A server per run: the scripted replies of a prompt are served in turn.
    let server = || {
        Server::start(&[(
            "weather in Oslo then email bob",
            vec![
                Reply::Call("get_weather", json!({"city": "Oslo"})),
                Reply::Call("send_email", mail()),
                Reply::Call("send_email", mail()),
                Reply::Call("send_email", mail()),
                Reply::Call("send_email", mail()),
                Reply::Call("send_email", mail()),
            ],
        )])
    };
    let run = |extra: &[&str], name: &str| {
        let server = server();
        let path = dir.path().join(name);
        let out = eval_command(&tools, &scenarios, &server.endpoint())
            .args(["--setting", "level=1", "--whole-task", "--max-calls", "6"])
            .args(extra)
            .arg("--out")
            .arg(&path)
            .output()
            .unwrap();
        success(&out);
        records(&path).remove(0)
    };
    let stopped = run(&["--stop-on-repeat", "1"], "stop.jsonl");
    assert_eq!(stopped["stopped_on_repeat"], true, "{stopped}");
    assert_eq!(stopped["model_calls"], 3, "{stopped}");
    assert_eq!(stopped["calls"], json!(["get_weather", "send_email"]));
    assert_eq!(stopped["task_success"], true);
    assert_eq!(stopped["stop_on_repeat"], 1, "the flag is recorded");
    // At 2 the first repeat is answered (chef's loop guard gets one reply), the second
    // ends the task.
    let second = run(&["--stop-on-repeat", "2"], "stop2.jsonl");
    assert_eq!(second["stopped_on_repeat"], true, "{second}");
    assert_eq!(second["model_calls"], 4, "{second}");
    assert_eq!(
        second["calls"],
        json!(["get_weather", "send_email", "send_email"])
    );
    assert_eq!(second["task_success"], true, "repeats of an expected tool");
    // A rerun with another N does not resume these lines.
    let server = server();
    let out = eval_command(&tools, &scenarios, &server.endpoint())
        .args(["--setting", "level=1", "--whole-task", "--max-calls", "6"])
        .args(["--stop-on-repeat", "3", "--out"])
        .arg(dir.path().join("stop2.jsonl"))
        .output()
        .unwrap();
    assert_error(&out, &["--stop-on-repeat 2"]);
    let looped = run(&[], "loop.jsonl");
    assert!(looped.get("stopped_on_repeat").is_none(), "{looped}");
    assert_eq!(looped["model_calls"], 6, "{looped}");
    // The flag needs --whole-task.
    let out = eval_command(&tools, &scenarios, &server.endpoint())
        .args(["--setting", "level=1", "--stop-on-repeat", "1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--whole-task"));
}
