//! Anthropic Messages through the gateway.

use chef_ir::ToolCall;
use serde_json::{Value, json};

use crate::{
    harness::{
        BLOCK_CANCEL, Reply, Rig, anthropic_tools, bad_call_for, encoded, last_sse_event,
        lookup_for, order_call, sse_events, streamed, streamed_lookup_then_call,
        streamed_lookup_then_status, typed_sse, wire_tool_names,
    },
    messages_calling, messages_reply, messages_says,
};

fn request(user: &str) -> Value {
    json!({"model": "claude-test", "max_tokens": 1024, "system": "You track orders.",
        "messages": [{"role": "user", "content": user}],
        "tools": anthropic_tools()})
}

#[tokio::test]
async fn a_lookup_and_a_bad_argument_are_resolved_before_the_client_sees_a_call() {
    let good = order_call();
    let lookup = lookup_for(&good);
    let bad = bad_call_for(&good);
    let rig = Rig::level3(vec![
        messages_calling("toolu_q", &lookup),
        messages_calling("toolu_bad", &bad),
        Reply::Json(messages_reply(Some("Checking."), &[("toolu_1", &good)])),
    ])
    .await;
    let body = rig.anthropic_ok(&request("Where is 737U2663137?")).await;
    let content = body["content"].as_array().unwrap();
    assert_eq!(content[0], json!({"type": "text", "text": "Checking."}));
    assert_eq!(
        content[1],
        json!({"type": "tool_use", "id": "toolu_1", "name": "get_order_details",
            "input": {"trackingNumber": "737U2663137"}})
    );
    assert_eq!(body["stop_reason"], "tool_use");
    assert_eq!(
        body["usage"],
        json!({"input_tokens": 30, "output_tokens": 15})
    );

    let seen = rig.script.seen();
    assert_eq!(seen.len(), 3);
    for s in &seen {
        assert_eq!(s.path, "/v1/messages");
        assert_eq!(s.headers["x-api-key"], "sk-ant-test-secret");
        assert_eq!(s.headers["anthropic-version"], "2023-06-01");
        assert_eq!(wire_tool_names(&s.json()), ["t", "q"]);
        assert_eq!(s.json()["max_tokens"], 1024);
    }
    let last = seen[2].json();
    let results: Vec<&Value> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
        .filter(|b| b["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["tool_use_id"], "toolu_q");
    assert!(results[0].get("is_error").is_none_or(|e| e == false));
    assert_eq!(results[1]["tool_use_id"], "toolu_bad");
    assert_eq!(results[1]["is_error"], true);
    assert!(results[1].to_string().contains("trackingNumber"));
}

#[tokio::test]
async fn a_blocked_tool_reached_through_its_code_is_refused() {
    let cancel = encoded("cancel_order", json!({"trackingNumber": "1"}));
    let rig = Rig::start(
        BLOCK_CANCEL,
        vec![
            messages_calling("toolu_c", &cancel),
            messages_says("That tool is blocked."),
        ],
    )
    .await;
    let body: Value = rig
        .anthropic(&request("Cancel order 1"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        body["content"],
        json!([{"type": "text", "text": "That tool is blocked."}])
    );
    assert_eq!(body["stop_reason"], "end_turn");
    let seen = rig.script.seen();
    assert_eq!(seen.len(), 2);
    assert!(seen[1].json().to_string().contains("blocked"));
}

/// The events of one streamed Messages reply: text, then a call in pieces.
fn messages_stream(text: &str, id: &str, call: &ToolCall) -> String {
    let args = serde_json::to_string(&call.arguments).unwrap();
    let (a, b) = args.split_at(args.len() / 2);
    typed_sse(&[
        json!({"type": "message_start", "message": {"id": "msg_s",
            "type": "message", "role": "assistant", "model": "claude-test", "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
        json!({"type": "ping"}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": text}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1,
            "content_block": {"type": "tool_use", "id": id, "name": call.name.as_str(), "input": {}}}),
        json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": a}}),
        json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": b}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": null},
            "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ])
}

#[tokio::test]
async fn streaming_renumbers_blocks_across_rounds_and_emits_real_names() {
    let rig = Rig::level3(streamed_lookup_then_call(
        messages_stream,
        ("Looking.", "toolu_q", 13),
        ("Found.", "toolu_1", 31),
    ))
    .await;
    let body = streamed(request("Where is 737U2663137?"));
    let text = rig.anthropic(&body).await.text().await.unwrap();
    let events: Vec<(String, Value)> = sse_events(&text)
        .into_iter()
        .map(|(e, d)| (e, serde_json::from_str(&d).unwrap()))
        .collect();
    let kinds: Vec<&str> = events.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ],
        "{text}"
    );
    // One message_start only; blocks 0 and 1 are the two rounds' text, block 2 the call.
    assert_eq!(events[2].1["delta"]["text"], "Looking.");
    assert_eq!(events[5].1["index"], 1);
    assert_eq!(events[5].1["delta"]["text"], "Found.");
    assert_eq!(events[7].1["index"], 2);
    assert_eq!(
        events[7].1["content_block"],
        json!({"type": "tool_use", "id": "toolu_1", "name": "get_order_details", "input": {}})
    );
    let partial: Value =
        serde_json::from_str(events[8].1["delta"]["partial_json"].as_str().unwrap()).unwrap();
    assert_eq!(partial, json!({"trackingNumber": "737U2663137"}));
    assert_eq!(events[10].1["delta"]["stop_reason"], "tool_use");
    assert_eq!(events[10].1["usage"]["output_tokens"], 10);
    assert_eq!(events[10].1["usage"]["input_tokens"], 20);
    assert_eq!(rig.script.seen().len(), 2);
}

#[tokio::test]
async fn a_truncated_stream_ends_with_an_error_event() {
    let good = order_call();
    let full = messages_stream("Found.", "toolu_1", &good);
    let cut = full[..full.find("event: message_delta").unwrap()].to_owned();
    let rig = Rig::level3(vec![Reply::Sse(vec![cut]), messages_says("fine")]).await;
    let body = streamed(request("Where is 737U2663137?"));
    let text = rig.anthropic(&body).await.text().await.unwrap();
    let events = sse_events(&text);
    let (event, data) = events.last().unwrap();
    assert_eq!(event, "error");
    let data: Value = serde_json::from_str(data).unwrap();
    assert_eq!(data["type"], "error");
    assert_eq!(data["error"]["type"], "api_error");
    assert!(!text.contains("get_order_details"));
    // The gateway is still up.
    let body: Value = rig.anthropic(&request("again")).await.json().await.unwrap();
    assert_eq!(body["content"][0]["text"], "fine");
}

#[tokio::test]
async fn an_upstream_answering_a_stream_with_whole_json_is_said_so() {
    let rig = Rig::level3(vec![messages_says("whole")]).await;
    let body = streamed(request("Where is 737U2663137?"));
    // The first round: before the client has a status, so a 502 (GATEWAY.md's table).
    let response = rig.anthropic(&body).await;
    assert_eq!(response.status(), 502);
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["error"]["type"], "api_error");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("whole JSON reply"), "{message}");
}

#[tokio::test]
async fn a_client_that_goes_away_between_rounds_cancels_the_next_upstream_request() {
    // Round 1 streams a lookup the gateway answers itself; round 2's request then waits
    // on an upstream that never answers. The client hanging up must end that wait at once,
    // not after `upstream_timeout_secs`.
    let lookup = lookup_for(&order_call());
    let dropped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let rig = Rig::level3(vec![
        Reply::SseNow(vec![messages_stream("Looking.", "toolu_q", &lookup)]),
        Reply::HangFlagged(std::sync::Arc::clone(&dropped)),
    ])
    .await;
    let body = streamed(request("Where is 737U2663137?"));
    let mut response = rig.anthropic(&body).await;
    let first = response.chunk().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("message_start"));
    // Wait until round 2's request has reached the upstream.
    for _ in 0..100 {
        if rig.script.seen().len() == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        rig.script.seen().len(),
        2,
        "round 2 never reached the upstream"
    );
    assert!(!dropped.load(std::sync::atomic::Ordering::SeqCst));
    drop(response);
    assert!(
        soon(&dropped).await,
        "round 2's upstream request was not cancelled after the client went away"
    );
}

/// Whether `flag` is set within two seconds.
async fn soon(flag: &std::sync::atomic::AtomicBool) -> bool {
    for _ in 0..100 {
        if flag.load(std::sync::atomic::Ordering::SeqCst) {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn a_client_that_goes_away_closes_the_upstream_stream() {
    let full = messages_stream("Found.", "toolu_1", &order_call());
    let head = full[..full.find("event: content_block_start").unwrap()].to_owned();
    let dropped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let rig = Rig::level3(vec![Reply::SseThenStall(
        vec![head],
        std::sync::Arc::clone(&dropped),
    )])
    .await;
    let body = streamed(request("Where is 737U2663137?"));
    let mut response = rig.anthropic(&body).await;
    // The message_start arrives; then the client hangs up mid-stream.
    let first = response.chunk().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("message_start"));
    assert!(!dropped.load(std::sync::atomic::Ordering::SeqCst));
    drop(response);
    assert!(
        soon(&dropped).await,
        "the upstream stream was not closed after the client went away"
    );
}

#[tokio::test]
async fn cache_false_sends_no_breakpoint_at_all() {
    for (config, breakpoints) in [("", true), ("[chef]\ncache = false\n", false)] {
        let rig = Rig::start(
            config,
            vec![Reply::Json(messages_reply(Some("Done."), &[]))],
        )
        .await;
        // The client's own markers (on its system block and a message) are not sent
        // either: chef places its own or none (found by session 33's gateway audit).
        let mut body = request("Where is 737U2663137?");
        body["system"] = json!([{"type": "text", "text": "Be brief.",
            "cache_control": {"type": "ephemeral", "ttl": "1h"}}]);
        body["messages"][0]["content"] = json!([{"type": "text", "text": "Where is 737U2663137?",
            "cache_control": {"type": "ephemeral", "ttl": "1h"}}]);
        rig.anthropic_ok(&body).await;
        let sent = rig.script.seen()[0].json().to_string();
        assert_eq!(
            sent.contains("cache_control"),
            breakpoints,
            "{config:?}: {sent}"
        );
        assert!(!sent.contains("\"ttl\""), "{sent}");
    }
}

/// A later round's upstream error reaches the client in the stream with its own type, and
/// the status and Retry-After in its message (the client already has a 200).
#[tokio::test]
async fn a_later_rounds_overload_keeps_its_type_and_retry_after_in_the_stream() {
    let overloaded =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let rig = Rig::level3(streamed_lookup_then_status(
        messages_stream,
        ("Looking.", "toolu_q", 13),
        (529, "30", overloaded),
    ))
    .await;
    let text = rig
        .anthropic(&streamed(request("Where is 737U2663137?")))
        .await
        .text()
        .await
        .unwrap();
    let (event, data) = last_sse_event(&text);
    assert_eq!(event, "error");
    assert_eq!(data["type"], "error");
    assert_eq!(data["error"]["type"], "overloaded_error", "{text}");
    assert_eq!(
        data["error"]["message"],
        "Overloaded (the upstream answered 529 to round 2; Retry-After: 30)"
    );
}

/// An error event the upstream sends inside its stream (Anthropic's overload, mid-reply)
/// reaches the client with its own type.
#[tokio::test]
async fn an_upstream_error_event_keeps_its_type() {
    let body = typed_sse(&[
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
            "role": "assistant", "model": "claude-test", "content": [], "stop_reason": null,
            "usage": {"input_tokens": 5, "output_tokens": 0}}}),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]);
    let rig = Rig::level3(vec![Reply::Sse(vec![body])]).await;
    let text = rig
        .anthropic(&streamed(request("Where is 737U2663137?")))
        .await
        .text()
        .await
        .unwrap();
    let (event, data) = last_sse_event(&text);
    assert_eq!(event, "error");
    assert_eq!(
        data,
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    );
}
