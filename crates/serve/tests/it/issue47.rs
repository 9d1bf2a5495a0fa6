//! Issue #47, the gateway's items: a request without tools goes upstream without tools,
//! a Responses reply shows the client its own `tools` and `instructions`, an invalid
//! session header is refused, a stalled memory store is bounded, `--check` tries the
//! memory store, and a blocklist entry matches names as calls do.

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
