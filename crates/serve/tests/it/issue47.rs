//! Issue #47, the gateway's items: a request without tools goes upstream without tools,
//! a Responses reply shows the client its own `tools` and `instructions`, an invalid
//! session header is refused, a stalled memory store is bounded, `--check` tries the
//! memory store, and a blocklist entry matches names as calls do.

use chef::store::Op;
use serde_json::{Value, json};

use crate::{
    chat_says,
    harness::{Reply, Rig},
    messages_says, responses_says,
};

/// The tool-less request of each API (`tools` absent, or `[]` when `empty`), with a system
/// prompt and a named `tool_choice` the client chose to send anyway.
fn toolless(path: &str, empty: bool) -> Value {
    let mut body = match path {
        "/v1/chat/completions" => json!({"model": "gpt-test",
            "messages": [{"role": "system", "content": "Write a title."},
                         {"role": "user", "content": "hi"}]}),
        "/v1/responses" => json!({"model": "gpt-test", "instructions": "Write a title.",
            "input": "hi"}),
        _ => json!({"model": "claude-test", "max_tokens": 16, "system": "Write a title.",
            "messages": [{"role": "user", "content": "hi"}]}),
    };
    if empty {
        body["tools"] = json!([]);
    }
    body
}

#[tokio::test]
async fn a_request_without_tools_goes_upstream_without_tools_or_map() {
    let dir = std::env::temp_dir().join(format!("chef-serve-toolless-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // Level 3 and memory: neither the dispatcher, the map nor the memory tools may appear.
    let config = format!("[chef]\nlevel = 3\n[memory]\ndir = \"{}\"\n", dir.display());
    let mut replies = Vec::new();
    for _ in 0..2 {
        replies.extend([chat_says("T"), responses_says("T"), messages_says("T")]);
    }
    let rig = Rig::start(&config, replies).await;
    for empty in [false, true] {
        for path in ["/v1/chat/completions", "/v1/responses", "/v1/messages"] {
            let body = toolless(path, empty);
            let response = if path == "/v1/messages" {
                rig.anthropic(&body).await
            } else {
                rig.openai(path, &body).await
            };
            assert_eq!(response.status(), 200, "{path} empty={empty}");
        }
    }
    let seen = rig.script.seen();
    assert_eq!(seen.len(), 6);
    for seen in &seen {
        let sent = seen.json();
        let text = sent.to_string();
        assert!(sent.get("tools").is_none(), "{}: {text}", seen.path);
        assert!(!text.contains("toolmap"), "{}: {text}", seen.path);
        assert!(!text.contains("memory"), "{}: {text}", seen.path);
        assert!(text.contains("Write a title."), "{}: {text}", seen.path);
    }
    // Only the client's own system text, as it sent it.
    assert_eq!(seen[0].json()["messages"][0]["content"], "Write a title.");
    assert_eq!(seen[1].json()["instructions"], "Write a title.");
    assert_eq!(seen[2].json()["system"][0]["text"], "Write a title.");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_toolless_requests_tool_choice_goes_as_sent() {
    let rig = Rig::level3(vec![chat_says("T")]).await;
    let mut body = toolless("/v1/chat/completions", false);
    body["tool_choice"] = json!("none");
    rig.openai_ok("/v1/chat/completions", &body).await;
    let sent = rig.script.seen()[0].json();
    assert_eq!(sent["tool_choice"], "none");
    assert!(sent.get("tools").is_none(), "{sent}");
}

/// A Responses object as the upstream writes it: it describes the request upstream saw,
/// `t` and `q` with the map in the instructions.
fn upstream_response(status: &str, output: Value) -> Value {
    json!({"id": "resp_e", "object": "response", "created_at": 1, "status": status,
        "instructions": "You track orders.\n\n<toolmap>\nA1 get_order_details\n</toolmap>",
        "model": "gpt-test", "output": output, "parallel_tool_calls": true,
        "tool_choice": "auto",
        "tools": [{"type": "function", "name": "t", "parameters": {"type": "object"}},
                  {"type": "function", "name": "q", "parameters": {"type": "object"}}],
        "usage": if status == "completed" {
            json!({"input_tokens": 10, "output_tokens": 5, "total_tokens": 15})
        } else { Value::Null }})
}

fn responses_request(instructions: Option<&str>) -> Value {
    let mut body = json!({"model": "gpt-test", "input": "Where is 737U2663137?",
        "tools": crate::harness::responses_tools()});
    if let Some(text) = instructions {
        body["instructions"] = json!(text);
    }
    body
}

/// Asserts a response object carries the client's own tools and instructions.
fn assert_client_echo(response: &Value, instructions: &Value) {
    assert_eq!(
        response["tools"],
        crate::harness::responses_tools(),
        "{}",
        response["id"]
    );
    assert_eq!(&response["instructions"], instructions);
    assert!(!response.to_string().contains("toolmap"), "{response}");
}

#[tokio::test]
async fn a_responses_reply_shows_the_client_its_own_tools_and_instructions() {
    let message = json!({"type": "message", "id": "msg_e", "status": "completed",
        "role": "assistant", "content": [{"type": "output_text", "text": "In transit.",
        "annotations": []}]});
    let rig = Rig::level3(vec![
        Reply::Json(upstream_response("completed", json!([message]))),
        Reply::Json(upstream_response("completed", json!([message]))),
    ])
    .await;
    let body = rig
        .openai_ok(
            "/v1/responses",
            &responses_request(Some("You track orders.")),
        )
        .await;
    assert_client_echo(&body, &json!("You track orders."));
    assert_eq!(body["output"][0]["content"][0]["text"], "In transit.");
    // Without instructions: `null`, as the API shows an absent member.
    let body = rig
        .openai_ok("/v1/responses", &responses_request(None))
        .await;
    assert_client_echo(&body, &Value::Null);
    // Upstream did see the compressed request.
    let sent = rig.script.seen()[0].json();
    assert!(sent["instructions"].as_str().unwrap().contains("<toolmap>"));
}

#[tokio::test]
async fn a_streamed_responses_reply_shows_the_client_its_own_tools_and_instructions() {
    let message = json!({"type": "message", "id": "msg_e", "status": "completed",
        "role": "assistant", "content": [{"type": "output_text", "text": "In transit.",
        "annotations": []}]});
    let events = crate::harness::typed_sse(&[
        json!({"type": "response.created", "sequence_number": 0,
            "response": upstream_response("in_progress", json!([]))}),
        json!({"type": "response.in_progress", "sequence_number": 1,
            "response": upstream_response("in_progress", json!([]))}),
        json!({"type": "response.output_item.added", "sequence_number": 2, "output_index": 0,
            "item": {"type": "message", "id": "msg_e", "status": "in_progress",
                     "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "sequence_number": 3, "item_id": "msg_e",
            "output_index": 0, "content_index": 0, "delta": "In transit."}),
        json!({"type": "response.output_item.done", "sequence_number": 4, "output_index": 0,
            "item": message}),
        json!({"type": "response.completed", "sequence_number": 5,
            "response": upstream_response("completed", json!([message]))}),
    ]);
    let rig = Rig::level3(vec![Reply::Sse(crate::harness::pieces(&events, 97))]).await;
    let body = crate::harness::streamed(responses_request(Some("You track orders.")));
    let response = rig.openai("/v1/responses", &body).await;
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    let events: Vec<Value> = crate::harness::sse_events(&text)
        .into_iter()
        .map(|(_, d)| serde_json::from_str(&d).unwrap())
        .collect();
    let with_response: Vec<&Value> = events
        .iter()
        .filter(|e| e.get("response").is_some())
        .collect();
    let kinds: Vec<&str> = with_response
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "response.created",
            "response.in_progress",
            "response.completed"
        ]
    );
    for event in with_response {
        assert_client_echo(&event["response"], &json!("You track orders."));
    }
    assert!(!text.contains("toolmap"), "{text}");
}

/// Posts a tool request of `path` with these `x-chef-session` values (raw bytes).
async fn post_with_sessions(rig: &Rig, path: &str, sessions: &[&[u8]]) -> reqwest::Response {
    let body = match path {
        "/v1/messages" => json!({"model": "claude-test", "max_tokens": 16,
            "messages": [{"role": "user", "content": "hi"}],
            "tools": crate::harness::anthropic_tools()}),
        "/v1/responses" => responses_request(None),
        _ => crate::chat::request("hi"),
    };
    let mut request = rig.http.post(rig.url(path)).json(&body);
    request = if path == "/v1/messages" {
        request
            .header("x-api-key", "sk-ant-test")
            .header("anthropic-version", "2023-06-01")
    } else {
        request.header("authorization", "Bearer sk-test")
    };
    for session in sessions {
        request = request.header(
            "x-chef-session",
            reqwest::header::HeaderValue::from_bytes(session).unwrap(),
        );
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn an_invalid_session_header_is_a_400_in_the_api_shape() {
    let dir = std::env::temp_dir().join(format!("chef-serve-sessions-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let config = format!("[chef]\nlevel = 3\n[memory]\ndir = \"{}\"\n", dir.display());
    let rig = Rig::start(&config, vec![chat_says("ok")]).await;
    let long = "a".repeat(129);
    let bad: [&[u8]; 7] = [
        b"tenant/alice",
        b"../Y",
        long.as_bytes(),
        "alice\u{200b}".as_bytes(),
        b".alice",
        b"",
        b"alice bob",
    ];
    for path in ["/v1/chat/completions", "/v1/responses", "/v1/messages"] {
        for session in bad {
            let response = post_with_sessions(&rig, path, &[session]).await;
            assert_eq!(response.status(), 400, "{path} {session:?}");
            assert!(response.headers().get("x-chef-session").is_none());
            let body: Value = response.json().await.unwrap();
            if path == "/v1/messages" {
                assert_eq!(body["type"], "error", "{body}");
                assert_eq!(body["error"]["type"], "invalid_request_error", "{body}");
            } else {
                assert_eq!(body["error"]["type"], "invalid_request_error", "{body}");
                assert_eq!(body["error"]["code"], "invalid_request", "{body}");
            }
            let message = body["error"]["message"].as_str().unwrap();
            assert!(message.contains("x-chef-session"), "{message}");
        }
        // Two headers are as ambiguous as a bad one.
        let response = post_with_sessions(&rig, path, &[b"alice", b"bob"]).await;
        assert_eq!(response.status(), 400, "{path}");
    }
    // Nothing went upstream, and no session directory was made.
    assert!(rig.script.seen().is_empty());
    assert!(!dir.exists() || std::fs::read_dir(&dir).unwrap().next().is_none());
    // A valid id is used as sent.
    let response = post_with_sessions(&rig, "/v1/chat/completions", &[b"tenant-alice.1_x"]).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-chef-session"], "tenant-alice.1_x");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A memory store that answers from memory, or never answers: every operation
/// (`stall_reads`), or only writes (leases, which write, never finish either).
struct Stalling {
    inner: chef::store::MemoryBackend,
    stall_reads: bool,
}

impl Stalling {
    fn shared(stall_reads: bool) -> chef_serve::SharedStore {
        chef_serve::SharedStore(std::sync::Arc::new(Self {
            inner: chef::store::MemoryBackend::new(),
            stall_reads,
        }))
    }
}

#[async_trait::async_trait]
impl chef::store::Layer for Stalling {
    async fn call(&self, op: Op<'_>) -> chef::store::Result<chef::store::Reply> {
        let read = matches!(op, Op::Get { .. } | Op::List { .. } | Op::Scan { .. });
        if self.stall_reads || !read {
            std::future::pending::<()>().await;
        }
        op.run(&self.inner).await
    }
}

/// Guards a request against hanging forever (the bound under test is 1 s).
async fn within_30_s<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(std::time::Duration::from_secs(30), future)
        .await
        .expect("the gateway hung on a stalled memory store")
}

#[tokio::test]
async fn a_stalled_memory_store_is_a_500_within_the_timeout_and_health_says_so() {
    let rig = Rig::start_with(
        "[chef]\nlevel = 3\n[memory]\ntimeout_secs = 1\n",
        vec![],
        |config| config.memory_store = Some(Stalling::shared(true)),
    )
    .await;
    assert!(rig.metrics().await.contains("chef_memory_store_up 1"));
    let response = within_30_s(post_with_sessions(&rig, "/v1/chat/completions", &[b"s1"])).await;
    assert_eq!(response.status(), 500);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["type"], "server_error", "{body}");
    assert_eq!(body["error"]["code"], "gateway_error", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("memory.timeout_secs"), "{message}");
    let response = within_30_s(post_with_sessions(&rig, "/v1/messages", &[b"s1"])).await;
    assert_eq!(response.status(), 500);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["type"], "error", "{body}");
    assert_eq!(body["error"]["type"], "api_error", "{body}");
    assert!(rig.script.seen().is_empty());

    let metrics = rig.metrics().await;
    assert!(metrics.contains("chef_memory_store_up 0"), "{metrics}");
    assert!(
        metrics.contains("chef_memory_store_timeouts_total 2"),
        "{metrics}"
    );
    let (status, body) = within_30_s(rig.health()).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["status"], "unavailable");
    assert!(
        body["memory"].as_str().unwrap().contains("did not answer"),
        "{body}"
    );
}

#[tokio::test]
async fn a_stalled_memory_write_is_answered_to_the_model_within_the_timeout() {
    let create = chef_ir::ToolCall::new(
        "x",
        "create_memory",
        json!({"key": "lang", "value": "Rust"}),
    );
    let rig = Rig::start_with(
        "[chef]\nlevel = 3\n[memory]\ntimeout_secs = 1\n",
        vec![
            Reply::Json(crate::chat_reply(None, &[("call_m", &create)])),
            chat_says("Noted."),
        ],
        |config| config.memory_store = Some(Stalling::shared(false)),
    )
    .await;
    let response = within_30_s(post_with_sessions(&rig, "/v1/chat/completions", &[b"s1"])).await;
    assert_eq!(response.status(), 200);
    let seen = rig.script.seen();
    assert_eq!(seen.len(), 2);
    let answer = crate::harness::tool_answer(&seen[1].json(), "call_m").clone();
    assert!(
        answer["content"]
            .to_string()
            .contains("The memory store failed"),
        "{answer}"
    );
    let metrics = rig.metrics().await;
    assert!(
        metrics.contains("chef_memory_store_timeouts_total 1"),
        "{metrics}"
    );
    // Reads still answer: health probes with a read.
    let (status, _) = within_30_s(rig.health()).await;
    assert_eq!(status, 200);
    assert!(rig.metrics().await.contains("chef_memory_store_up 1"));
}

#[tokio::test]
async fn health_is_ok_without_memory_and_with_a_working_dir() {
    let rig = Rig::level3(vec![]).await;
    assert_eq!(rig.health().await, (200, json!({"status": "ok"})));
    assert!(!rig.metrics().await.contains("chef_memory_store_up"));
    let dir = std::env::temp_dir().join(format!("chef-serve-health-{}", std::process::id()));
    let rig = Rig::start(&format!("[memory]\ndir = \"{}\"\n", dir.display()), vec![]).await;
    assert_eq!(
        rig.health().await,
        (200, json!({"status": "ok", "memory": "ok"}))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A TCP server that accepts connections and never says a word: a PostgreSQL server as a
/// client sees it once the server is stopped (SIGSTOP): the kernel still accepts.
async fn silent_server() -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    addr
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn a_postgres_server_that_never_answers_is_a_500_within_the_timeout() {
    let addr = silent_server().await;
    let config = format!(
        "[chef]\nlevel = 3\n[memory]\nurl = \"postgres://chef@{addr}/chef\"\ntimeout_secs = 1\n"
    );
    let rig = Rig::start(&config, vec![]).await;
    for _ in 0..2 {
        let response =
            within_30_s(post_with_sessions(&rig, "/v1/chat/completions", &[b"s1"])).await;
        assert_eq!(response.status(), 500);
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], "gateway_error", "{body}");
    }
    assert!(rig.metrics().await.contains("chef_memory_store_up 0"));
    let (status, _) = within_30_s(rig.health()).await;
    assert_eq!(status, 503);
    assert!(rig.script.seen().is_empty());
}

/// Writes `toml` (with upstreams that answer) to a file and runs `chef serve --check` on it
/// in a thread (`cli` makes its own runtime).
async fn check(name: &str, toml: &str) -> Result<(), String> {
    let upstream = Rig::start("", vec![]).await.upstream;
    let dir = std::env::temp_dir().join(format!("chef-serve-check47-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            "[upstream]\nopenai = \"http://{upstream}/v1\"\nanthropic = \"http://{upstream}/v1\"\n{toml}"
        ),
    )
    .unwrap();
    let result = tokio::task::spawn_blocking(move || chef_serve::cli(Some(&path), true));
    within_30_s(result)
        .await
        .unwrap()
        .map_err(|e| e.to_string())
}

#[tokio::test]
async fn check_tries_the_memory_store() {
    // A directory that cannot be made (under a file).
    let file = std::env::temp_dir().join(format!("chef-serve-notadir-{}", std::process::id()));
    std::fs::write(&file, b"").unwrap();
    let err = check(
        "dir",
        &format!("[memory]\ndir = \"{}/sessions\"\n", file.display()),
    )
    .await
    .unwrap_err();
    assert!(err.contains("memory"), "{err}");
    let _ = std::fs::remove_file(&file);
    // A store that never answers fails the check within the timeout.
    if cfg!(feature = "postgres") {
        let addr = silent_server().await;
        let err = check(
            "silent",
            &format!("[memory]\nurl = \"postgres://chef@{addr}/chef\"\ntimeout_secs = 1\n"),
        )
        .await
        .unwrap_err();
        assert!(err.contains("memory"), "{err}");
    }
    // A directory that works passes.
    let dir = std::env::temp_dir().join(format!("chef-serve-okdir-{}", std::process::id()));
    check("okdir", &format!("[memory]\ndir = \"{}\"\n", dir.display()))
        .await
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn memory_urls_that_can_never_work_and_a_zero_timeout_are_refused() {
    let cases = [
        "[memory]\nurl = \"postgres://chef@[bad\"\n",
        "[memory]\nurl = \"postgres://chef@127.0.0.1/chef?sslmode=require\"\n",
        "[memory]\nurl = \"postgres://chef@127.0.0.1/chef?connect_timeout=soon\"\n",
    ];
    for text in cases {
        let err = chef_serve::Config::parse(text).unwrap_err().to_string();
        assert!(err.contains("memory.url"), "{text}: {err}");
    }
    let err = chef_serve::Config::parse("[memory]\ndir = \"/tmp/x\"\ntimeout_secs = 0\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("memory.timeout_secs"), "{err}");
    let config = chef_serve::Config::parse("[memory]\ndir = \"/tmp/x\"\n").unwrap();
    assert_eq!(config.memory_timeout, std::time::Duration::from_secs(5));
}

/// With `CHEF_PG_URL`: a database that does not exist is named in the check's error, with
/// PostgreSQL's own message (the whole cause chain, not "db error").
#[tokio::test]
async fn check_names_a_database_that_does_not_exist() {
    let Ok(url) = std::env::var("CHEF_PG_URL") else {
        eprintln!(
            "\n*** SKIPPED: no PostgreSQL (CHEF_PG_URL unset): --check against a missing database ***\n"
        );
        return;
    };
    if !cfg!(feature = "postgres") {
        return;
    }
    let (base, _) = url.rsplit_once('/').unwrap();
    let missing = format!("{base}/chef_no_such_db_{}", std::process::id());
    let config = chef_serve::Config::parse(&format!("[memory]\nurl = \"{missing}\"\n")).unwrap();
    let gateway = chef_serve::Gateway::new(config).unwrap();
    let err = within_30_s(gateway.check_memory())
        .await
        .unwrap()
        .unwrap_err();
    let err = chef_serve::error_chain(&err);
    assert!(err.contains("does not exist"), "{err}");
    assert!(err.contains("chef_no_such_db_"), "{err}");
    // The real one answers.
    let config = chef_serve::Config::parse(&format!("[memory]\nurl = \"{url}\"\n")).unwrap();
    let gateway = chef_serve::Gateway::new(config).unwrap();
    within_30_s(gateway.check_memory()).await.unwrap().unwrap();
}

/// Issue #47 item 1, the gateway's side: `[chef] blocked` is handed to chef's gate
/// (`chef.tools_mut().set_blocked`), which matches an entry the way calls are matched, ignoring
/// letter case and separators; the gateway adds no matching of its own.
#[tokio::test]
async fn a_blocklist_entry_with_case_and_separator_drift_blocks_the_tool() {
    for entry in [
        "Cancel-Order",
        "CANCEL.ORDER",
        "cancel order",
        "cancelOrder",
    ] {
        let cancel = crate::harness::encoded("cancel_order", json!({"trackingNumber": "1"}));
        let rig = Rig::start(
            &format!("[chef]\nlevel = 3\nblocked = [\"{entry}\"]\n"),
            vec![
                Reply::Json(crate::chat_reply(None, &[("call_c", &cancel)])),
                chat_says("I cannot cancel orders."),
            ],
        )
        .await;
        let body = rig
            .openai_ok("/v1/chat/completions", &crate::chat::request("Cancel 1"))
            .await;
        assert!(
            body["choices"][0]["message"].get("tool_calls").is_none(),
            "{entry}: {body}"
        );
        let seen = rig.script.seen();
        assert_eq!(seen.len(), 2, "{entry}");
        let refusal = crate::harness::tool_answer(&seen[1].json(), "call_c").to_string();
        assert!(refusal.contains("blocked"), "{entry}: {refusal}");
    }
}
