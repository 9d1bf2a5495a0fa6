//! What the client's request asks for, kept (session 41's gateway audit): a forced tool at
//! every level, a reply cut by the output limit, streamed log probabilities and the
//! upstream's rate-limit headers.

use chef_ir::ToolCall;
use serde_json::{Value, json};

use crate::{
    chat_reply, chat_says,
    harness::{Reply, Rig, anthropic_tools, chat_tools, encoded, responses_tools, sse, sse_events},
    messages_reply, responses_reply,
};

fn chat_request(user: &str) -> Value {
    json!({"model": "gpt-test", "messages": [{"role": "user", "content": user}],
        "tools": chat_tools()})
}

/// A streamed Chat reply: a chunk with `choice`, then one ending with `finish`, then `[DONE]`.
fn chat_stream(choice: Value, finish: &str) -> String {
    let chunk = |choice: Value| {
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1,
            "model": "gpt-test", "choices": [choice]})
    };
    sse(&[
        ("", chunk(choice)),
        (
            "",
            chunk(json!({"index": 0, "delta": {}, "finish_reason": finish})),
        ),
    ]) + "data: [DONE]\n\n"
}

fn order_args() -> Value {
    json!({"trackingNumber": "737U2663137"})
}

/// At level 3 no real tool is on the wire, so the upstream is told "some tool"; a call of
/// another tool is then answered inside ("call get_order_details", with its code), and the
/// client gets the forced tool only. Anthropic's `disable_parallel_tool_use` stays on the
/// choice, and a Responses reply shows the client its own `tool_choice`.
#[tokio::test]
async fn a_forced_tool_is_the_only_tool_the_client_gets_at_level_3() {
    let other = encoded("cancel_order", order_args());
    let forced = encoded("get_order_details", order_args());
    let rig = Rig::level3(vec![
        Reply::Json(chat_reply(None, &[("c1", &other)])),
        Reply::Json(chat_reply(None, &[("c2", &forced)])),
        Reply::Json(messages_reply(None, &[("m1", &forced)])),
        Reply::Json(responses_reply(None, &[("r1", &forced)])),
    ])
    .await;
    let mut body = chat_request("Where is my order?");
    body["tool_choice"] = json!({"type": "function", "function": {"name": "get_order_details"}});
    let reply = rig.openai_ok("/v1/chat/completions", &body).await;
    let calls = reply["choices"][0]["message"]["tool_calls"]
        .as_array()
        .unwrap();
    assert_eq!(calls.len(), 1, "{reply}");
    assert_eq!(calls[0]["function"]["name"], "get_order_details");
    let seen = rig.script.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].json()["tool_choice"], "required");
    let answer = seen[1].json()["messages"].to_string();
    assert!(
        answer.contains("must call the tool get_order_details, not cancel_order"),
        "{answer}"
    );
    // How to write it behind the dispatcher: `t` with its code.
    let code = forced.arguments["f"].as_str().unwrap();
    assert!(
        answer.contains(&format!("write it as t({{\\\"f\\\":\\\"{code}\\\"")),
        "{answer}"
    );

    let body = json!({"model": "claude-test", "max_tokens": 64,
        "messages": [{"role": "user", "content": "Where is my order?"}],
        "tools": anthropic_tools(),
        "tool_choice": {"type": "tool", "name": "get_order_details",
            "disable_parallel_tool_use": true}});
    let reply = rig.anthropic_ok(&body).await;
    assert_eq!(reply["content"][0]["name"], "get_order_details", "{reply}");
    assert_eq!(
        rig.script.seen()[2].json()["tool_choice"],
        json!({"type": "any", "disable_parallel_tool_use": true})
    );

    let choice = json!({"type": "function", "name": "get_order_details"});
    let body = json!({"model": "gpt-test", "input": "Where is my order?",
        "tools": responses_tools(), "tool_choice": choice});
    let reply = rig.openai_ok("/v1/responses", &body).await;
    assert_eq!(rig.script.seen()[3].json()["tool_choice"], "required");
    assert_eq!(reply["tool_choice"], choice, "{reply}");
}

/// Forcing a tool the ranking already offers changes nothing on the wire (it added an
/// eleventh, unrelated tool); one the ranking left out joins the ranked ten.
#[tokio::test]
async fn forcing_a_ranked_tool_adds_no_other_tool() {
    let rig = Rig::start("", vec![chat_says("a"), chat_says("b"), chat_says("c")]).await;
    let ask = "What is the diesel price in Ohio this week?";
    rig.openai_ok("/v1/chat/completions", &chat_request(ask))
        .await;
    let mut body = chat_request(ask);
    body["tool_choice"] = json!({"type": "function", "function": {"name": "get_diesel_price"}});
    rig.openai_ok("/v1/chat/completions", &body).await;
    body["tool_choice"] = json!({"type": "function", "function": {"name": "scorecard_nps_daily"}});
    rig.openai_ok("/v1/chat/completions", &body).await;
    let seen = rig.script.seen();
    let names = |i: usize| crate::harness::wire_tool_names(&seen[i].json());
    assert!(
        names(0).iter().any(|n| n == "get_diesel_price"),
        "{:?}",
        names(0)
    );
    assert_eq!(names(1), names(0));
    let third = names(2);
    assert_eq!(third.len(), names(0).len() + 1, "{third:?}");
    assert!(
        third.iter().any(|n| n == "scorecard_nps_daily"),
        "{third:?}"
    );
}

/// A named `tool_choice` in a request without tools is refused (it cannot be honoured), and
/// so is forcing chef's own tool where it is not offered (`find_tools` with every tool
/// offered, a memory tool without `[memory]`): both became "some tool" before.
#[tokio::test]
async fn a_forced_tool_that_cannot_be_on_the_wire_is_refused() {
    let rig = Rig::start("[chef]\nprune = \"all\"\n", vec![]).await;
    let body = json!({"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}],
        "tools": [], "tool_choice": {"type": "function", "function": {"name": "get_diesel_price"}}});
    let response = rig.openai("/v1/chat/completions", &body).await;
    assert_eq!(response.status(), 400);
    let error: Value = response.json().await.unwrap();
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("has no tools"),
        "{error}"
    );
    for name in ["find_tools", "create_memory"] {
        let mut body = chat_request("hi");
        body["tool_choice"] = json!({"type": "function", "function": {"name": name}});
        let response = rig.openai("/v1/chat/completions", &body).await;
        assert_eq!(response.status(), 400, "{name}");
        let error: Value = response.json().await.unwrap();
        let message = error["error"]["message"].as_str().unwrap();
        assert!(message.contains("does not offer"), "{message}");
    }
    assert!(rig.script.seen().is_empty(), "nothing went upstream");
}

/// A forced `find_tools` is forced at the first round only: it is answered inside, and
/// forcing it again would ask for it until the rounds ran out.
#[tokio::test]
async fn a_forced_search_is_forced_once() {
    let search = ToolCall::new("s1", "find_tools", json!({"query": "diesel price"}));
    let rig = Rig::start(
        "",
        vec![
            Reply::Json(chat_reply(None, &[("s1", &search)])),
            chat_says("Found it."),
        ],
    )
    .await;
    let mut body = chat_request("What is the diesel price in Ohio this week?");
    body["tool_choice"] = json!({"type": "function", "function": {"name": "find_tools"}});
    let reply = rig.openai_ok("/v1/chat/completions", &body).await;
    assert_eq!(reply["choices"][0]["message"]["content"], "Found it.");
    let seen = rig.script.seen();
    assert_eq!(
        seen[0].json()["tool_choice"],
        json!({"type": "function", "function": {"name": "find_tools"}})
    );
    assert_eq!(seen[1].json()["tool_choice"], "auto");
}

/// A reply cut by the output limit goes to the client as cut: its stop reason kept, a
/// half-written call left out, nothing answered inside or asked again (it was "corrected"
/// in a second round and reported as a normal stop).
#[tokio::test]
async fn a_reply_cut_by_the_output_limit_reaches_the_client_as_cut() {
    let chat_cut = json!({"id": "c", "object": "chat.completion", "created": 1,
        "model": "gpt-test", "choices": [{"index": 0, "finish_reason": "length",
        "message": {"role": "assistant", "content": "Let me check",
            "tool_calls": [{"id": "x", "type": "function",
                "function": {"name": "get_diesel_price", "arguments": "{\"state\": \"O"}}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}});
    let messages_cut = json!({"id": "m", "type": "message", "role": "assistant",
        "model": "claude-test", "stop_reason": "max_tokens", "stop_sequence": null,
        "content": [{"type": "text", "text": "Let me check"}],
        "usage": {"input_tokens": 10, "output_tokens": 5}});
    let responses_cut = json!({"id": "r", "object": "response", "created_at": 1,
        "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
        "model": "gpt-test", "output": [{"type": "function_call", "id": "fc", "call_id": "x",
            "name": "get_diesel_price", "arguments": "{\"state\": \"O", "status": "incomplete"}],
        "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}});
    let streamed = chat_stream(
        json!({"index": 0, "delta": {"role": "assistant",
            "tool_calls": [{"index": 0, "id": "x", "type": "function",
                "function": {"name": "get_diesel_price", "arguments": "{\"sta"}}]},
            "finish_reason": null}),
        "length",
    );
    let rig = Rig::start(
        "",
        vec![
            Reply::Json(chat_cut),
            Reply::Json(messages_cut),
            Reply::Json(responses_cut),
            Reply::Sse(vec![streamed]),
        ],
    )
    .await;
    let ask = "What is the diesel price in Ohio this week?";
    let reply = rig
        .openai_ok("/v1/chat/completions", &chat_request(ask))
        .await;
    assert_eq!(reply["choices"][0]["finish_reason"], "length", "{reply}");
    assert!(
        reply["choices"][0]["message"].get("tool_calls").is_none(),
        "{reply}"
    );
    assert_eq!(reply["choices"][0]["message"]["content"], "Let me check");

    let body = json!({"model": "claude-test", "max_tokens": 5,
        "messages": [{"role": "user", "content": ask}], "tools": anthropic_tools()});
    let reply = rig.anthropic_ok(&body).await;
    assert_eq!(reply["stop_reason"], "max_tokens", "{reply}");

    let body = json!({"model": "gpt-test", "input": ask, "tools": responses_tools()});
    let reply = rig.openai_ok("/v1/responses", &body).await;
    assert_eq!(reply["status"], "incomplete", "{reply}");
    assert!(
        !reply["output"].to_string().contains("function_call"),
        "{reply}"
    );

    let mut body = chat_request(ask);
    body["stream"] = json!(true);
    let text = rig
        .openai("/v1/chat/completions", &body)
        .await
        .text()
        .await
        .unwrap();
    let reasons: Vec<Value> = sse_events(&text)
        .iter()
        .filter_map(|(_, data)| serde_json::from_str::<Value>(data).ok())
        .filter_map(|chunk| chunk.pointer("/choices/0/finish_reason").cloned())
        .filter(|r| !r.is_null())
        .collect();
    assert_eq!(reasons, [json!("length")], "{text}");
    assert!(!text.contains("get_diesel_price"), "{text}");
    assert_eq!(
        rig.script.seen().len(),
        4,
        "one round each, nothing asked again"
    );
}

/// Streamed Chat text keeps the token log probabilities the upstream sent with it (they
/// went out as `null`).
#[tokio::test]
async fn streamed_logprobs_reach_the_client() {
    let logprobs = json!({"content": [{"token": "Hi", "logprob": -0.1, "bytes": [72, 105],
        "top_logprobs": []}]});
    let streamed = chat_stream(
        json!({"index": 0, "delta": {"role": "assistant", "content": "Hi"},
            "logprobs": logprobs, "finish_reason": null}),
        "stop",
    );
    let rig = Rig::start("", vec![Reply::Sse(vec![streamed])]).await;
    let mut body = chat_request("hi");
    body["stream"] = json!(true);
    body["logprobs"] = json!(true);
    let text = rig
        .openai("/v1/chat/completions", &body)
        .await
        .text()
        .await
        .unwrap();
    let first: Value = sse_events(&text)
        .iter()
        .filter_map(|(_, data)| serde_json::from_str::<Value>(data).ok())
        .find(|chunk| chunk.pointer("/choices/0/delta/content").is_some())
        .unwrap();
    assert_eq!(first["choices"][0]["logprobs"], logprobs, "{text}");
}

/// The upstream's rate-limit and retry headers reach the client (the SDKs read
/// `x-should-retry`; clients pace themselves by `x-ratelimit-*`), on a success and on an
/// error.
#[tokio::test]
async fn rate_limit_headers_reach_the_client() {
    let ok = serde_json::to_string(&chat_reply(Some("ok"), &[])).unwrap();
    let rig = Rig::start(
        "",
        vec![
            Reply::Status(
                200,
                vec![
                    ("content-type", "application/json"),
                    ("x-ratelimit-remaining-requests", "99"),
                    ("x-request-id", "req_1"),
                    ("openai-processing-ms", "12"),
                ],
                ok,
            ),
            Reply::Status(
                429,
                vec![
                    ("x-ratelimit-remaining-tokens", "0"),
                    ("retry-after-ms", "1500"),
                    ("x-should-retry", "true"),
                ],
                r#"{"error":{"message":"slow down","type":"rate_limit"}}"#.to_owned(),
            ),
        ],
    )
    .await;
    for (status, want) in [
        (
            200,
            [
                ("x-ratelimit-remaining-requests", "99"),
                ("x-request-id", "req_1"),
                ("openai-processing-ms", "12"),
            ],
        ),
        (
            429,
            [
                ("x-ratelimit-remaining-tokens", "0"),
                ("retry-after-ms", "1500"),
                ("x-should-retry", "true"),
            ],
        ),
    ] {
        let response = rig
            .openai("/v1/chat/completions", &chat_request("hi"))
            .await;
        assert_eq!(response.status(), status);
        for (name, value) in want {
            assert_eq!(response.headers()[name], value, "{status} {name}");
        }
    }
}
