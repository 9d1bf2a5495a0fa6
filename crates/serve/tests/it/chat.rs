//! OpenAI Chat Completions through the gateway.

use chef_ir::ToolCall;
use serde_json::{Value, json};

use crate::{
    chat_calling, chat_reply, chat_says,
    harness::{
        BLOCK_CANCEL, OPENAI_RATE_LIMITED, Reply, Rig, bad_call_for, chat_calls, chat_tools,
        encoded, last_sse_event, lookup_for, messages, sse, sse_events, streamed,
        streamed_lookup_then_call, streamed_lookup_then_status, tool_answer, wire_tool_names,
    },
};

pub(crate) fn request(user: &str) -> Value {
    json!({"model": "gpt-test", "temperature": 0.2,
        "messages": [{"role": "system", "content": "You track orders."},
                     {"role": "user", "content": user}],
        "tools": chat_tools()})
}

pub(crate) use crate::harness::order_call;

/// Asserts the reply carries exactly one call, `id`, under the real tool name.
fn assert_one_order_call(body: &Value, id: &str) {
    let calls = chat_calls(body);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["id"], id);
    assert_eq!(calls[0]["function"]["name"], "get_order_details");
}

#[tokio::test]
async fn a_t_call_reaches_the_client_under_its_real_name() {
    let call = order_call();
    assert_eq!(call.name.as_str(), "t");
    let rig = Rig::level3(vec![chat_calling("call_1", &call)]).await;
    let body = rig
        .openai_ok("/v1/chat/completions", &request("Where is 737U2663137?"))
        .await;
    assert_one_order_call(&body, "call_1");
    let calls = chat_calls(&body);
    let args: Value =
        serde_json::from_str(calls[0]["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"trackingNumber": "737U2663137"}));
    assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(body["usage"]["total_tokens"], 15);

    let seen = rig.script.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/v1/chat/completions");
    let sent = seen[0].json();
    assert_eq!(wire_tool_names(&sent), ["t", "q"]);
    assert_eq!(sent["model"], "gpt-test");
    assert_eq!(sent["temperature"], 0.2);
    assert!(sent.to_string().contains("<toolmap>"));
    assert!(
        !sent
            .to_string()
            .contains("\"parameters\":{\"type\":\"object\",\"properties\":{\"trackingNumber\"")
    );
    assert_eq!(
        seen[0].headers.get("authorization").unwrap(),
        "Bearer sk-test-secret"
    );
}

#[tokio::test]
async fn a_lookup_and_a_bad_argument_are_answered_inside_the_gateway() {
    let good = order_call();
    let lookup = lookup_for(&good);
    let bad = bad_call_for(&good);
    let rig = Rig::level3(vec![
        Reply::Json(chat_reply(Some("Looking it up."), &[("call_q", &lookup)])),
        chat_calling("call_bad", &bad),
        chat_calling("call_good", &good),
    ])
    .await;
    let body = rig
        .openai_ok("/v1/chat/completions", &request("Where is 737U2663137?"))
        .await;
    let calls = chat_calls(&body);
    assert_eq!(calls[0]["id"], "call_good");
    assert_eq!(calls[0]["function"]["name"], "get_order_details");
    // Usage adds up every round.
    assert_eq!(body["usage"]["prompt_tokens"], 30);
    assert_eq!(body["usage"]["completion_tokens"], 15);

    let seen = rig.script.seen();
    assert_eq!(seen.len(), 3);
    // Round 2 carries the lookup's answer, round 3 the validation error.
    let second = seen[1].json();
    let tool = messages(&second)
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "call_q")
        .unwrap();
    assert!(
        tool["content"].to_string().contains("trackingNumber"),
        "{tool}"
    );
    let third = seen[2].json();
    let error = messages(&third)
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "call_bad")
        .unwrap()
        .to_string();
    assert!(error.contains("trackingNumber"), "{error}");
    // The model's own calls are replayed as it wrote them.
    assert!(third.to_string().contains("\"name\":\"q\""));
}

#[tokio::test]
async fn a_blocked_tool_is_refused_inside_the_gateway() {
    let cancel = encoded("cancel_order", json!({"trackingNumber": "737U2663137"}));
    let rig = Rig::start(
        BLOCK_CANCEL,
        vec![
            chat_calling("call_c", &cancel),
            chat_says("I cannot cancel orders."),
        ],
    )
    .await;
    let body = rig
        .openai_ok("/v1/chat/completions", &request("Cancel 737U2663137"))
        .await;
    assert!(body["choices"][0]["message"].get("tool_calls").is_none());
    assert_eq!(
        body["choices"][0]["message"]["content"],
        "I cannot cancel orders."
    );
    let seen = rig.script.seen();
    assert_eq!(seen.len(), 2);
    let refusal = tool_answer(&seen[1].json(), "call_c").to_string();
    assert!(refusal.contains("blocked"), "{refusal}");
}

/// Chat chunks of one reply: text in two deltas, then a call whose arguments arrive in
/// pieces.
pub(crate) fn chat_stream(text: &str, id: &str, call: &ToolCall) -> String {
    let head = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1,
            "model": "gpt-test", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let args = serde_json::to_string(&call.arguments).unwrap();
    let (a, b) = args.split_at(args.len() / 2);
    let mut events = vec![(
        "",
        head(json!({"role": "assistant", "content": ""}), Value::Null),
    )];
    if !text.is_empty() {
        let (x, y) = text.split_at(text.len() / 2);
        events.push(("", head(json!({"content": x}), Value::Null)));
        events.push(("", head(json!({"content": y}), Value::Null)));
    }
    events.push((
        "",
        head(
            json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
                "function": {"name": call.name.as_str(), "arguments": a}}]}),
            Value::Null,
        ),
    ));
    events.push((
        "",
        head(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": b}}]}),
            Value::Null,
        ),
    ));
    events.push(("", head(json!({}), json!("tool_calls"))));
    events.push((
        "",
        json!({"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1,
            "model": "gpt-test", "choices": [],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}),
    ));
    let mut out = sse(&events);
    out.push_str("data: [DONE]\n\n");
    out
}

#[tokio::test]
async fn streaming_holds_call_deltas_and_emits_real_names() {
    let rig = Rig::level3(streamed_lookup_then_call(
        chat_stream,
        ("Let me check.", "call_q", 17),
        ("Found it.", "call_1", 23),
    ))
    .await;
    let mut body = streamed(request("Where is 737U2663137?"));
    body["stream_options"] = json!({"include_usage": true});
    let response = rig.openai("/v1/chat/completions", &body).await;
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let text = response.text().await.unwrap();
    let events = sse_events(&text);
    assert_eq!(events.last().unwrap().1, "[DONE]");
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|(_, d)| serde_json::from_str(d).unwrap())
        .collect();
    let content: String = chunks
        .iter()
        .filter_map(|c| {
            c.pointer("/choices/0/delta/content")
                .and_then(Value::as_str)
        })
        .collect();
    // Two rounds' texts with the break a whole reply puts between them.
    assert_eq!(content, "Let me check.\n\nFound it.");
    let calls: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| c.pointer("/choices/0/delta/tool_calls/0"))
        .collect();
    assert_eq!(calls.len(), 1, "{text}");
    assert_eq!(calls[0]["function"]["name"], "get_order_details");
    assert_eq!(calls[0]["id"], "call_1");
    assert_eq!(calls[0]["index"], 0);
    assert!(!text.contains("\"name\":\"q\"") && !text.contains("\"name\":\"t\""));
    let finish: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| {
            c.pointer("/choices/0/finish_reason")
                .filter(|f| !f.is_null())
        })
        .collect();
    assert_eq!(finish, [&json!("tool_calls")]);
    let usage = chunks.iter().find_map(|c| c.get("usage")).unwrap();
    assert_eq!(usage["total_tokens"], 30);
    // Two upstream rounds, both streamed, with usage asked for.
    let seen = rig.script.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].json()["stream"], true);
}

#[tokio::test]
async fn streaming_without_usage_asked_gets_no_usage_chunk() {
    let good = order_call();
    let rig = Rig::level3(vec![Reply::Sse(vec![chat_stream("", "call_1", &good)])]).await;
    let body = streamed(request("Where is 737U2663137?"));
    let text = rig
        .openai("/v1/chat/completions", &body)
        .await
        .text()
        .await
        .unwrap();
    assert!(!text.contains("\"usage\""), "{text}");
    assert!(text.contains("get_order_details"));
    // Upstream was asked for usage all the same (to add up rounds).
    assert_eq!(
        rig.script.seen()[0].json()["stream_options"]["include_usage"],
        true
    );
}

#[tokio::test]
async fn a_reply_mixing_a_lookup_and_a_real_call_is_answered_whole_inside_first() {
    let good = order_call();
    let lookup = lookup_for(&good);
    let mixed = chat_reply(None, &[("call_q", &lookup), ("call_early", &good)]);
    let rig = Rig::level3(vec![
        Reply::Json(mixed.clone()),
        chat_calling("call_1", &good),
    ])
    .await;
    let body = rig
        .openai_json("/v1/chat/completions", &request("Where is 737U2663137?"))
        .await;
    assert_one_order_call(&body, "call_1");
    // The model heard both answers: the lookup, and that its early call was not run.
    let seen = rig.script.seen();
    assert_eq!(seen.len(), 2);
    let second = seen[1].json();
    let answer = |id: &str| tool_answer(&second, id)["content"].to_string();
    assert!(answer("call_q").contains("trackingNumber"));
    assert!(answer("call_early").contains("Not run"));

    // With no round left, the client's call goes out and the lookup is dropped.
    let rig = Rig::start(
        "[chef]\nlevel = 3\n[limits]\nmax_internal_rounds = 1\n",
        vec![Reply::Json(mixed)],
    )
    .await;
    let body = rig
        .openai_json("/v1/chat/completions", &request("Where is 737U2663137?"))
        .await;
    assert_one_order_call(&body, "call_early");
}

/// A later round's upstream error reaches the client in the stream with its own type and
/// code, and the status and Retry-After in its message (the client already has a 200).
#[tokio::test]
async fn a_later_rounds_429_keeps_its_type_and_retry_after_in_the_stream() {
    let rig = Rig::level3(streamed_lookup_then_status(
        chat_stream,
        ("Let me check.", "call_q", 17),
        (429, "7", OPENAI_RATE_LIMITED),
    ))
    .await;
    let response = rig
        .openai(
            "/v1/chat/completions",
            &streamed(request("Where is 737U2663137?")),
        )
        .await;
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    let (_, last) = last_sse_event(&text);
    assert_eq!(last["error"]["type"], "rate_limit_error", "{text}");
    assert_eq!(last["error"]["code"], "rate_limit_exceeded", "{text}");
    assert_eq!(
        last["error"]["message"],
        "Rate limit reached (the upstream answered 429 Too Many Requests to round 2; Retry-After: 7)"
    );
    // The first round's text went out before the error.
    assert!(text.contains(" check."), "{text}");
}

/// An error chunk the upstream sends inside its stream reaches the client with its own
/// type and code.
#[tokio::test]
async fn an_upstream_error_chunk_keeps_its_type_and_code() {
    let error = json!({"error": {"message": "The server had an error", "type": "server_error",
        "param": null, "code": "internal_error"}});
    let body = sse(&[("", error.clone())]);
    let rig = Rig::level3(vec![Reply::Sse(vec![body])]).await;
    let text = rig
        .openai(
            "/v1/chat/completions",
            &streamed(request("Where is 737U2663137?")),
        )
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(last_sse_event(&text).1, error);
}
