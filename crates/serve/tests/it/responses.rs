//! OpenAI Responses through the gateway.

use chef_ir::ToolCall;
use serde_json::{Value, json};

use crate::{
    harness::{
        OPENAI_RATE_LIMITED, Reply, Rig, last_sse_event, lookup_for, order_call, pieces,
        responses_tools, sse_events, streamed, streamed_lookup_then_call,
        streamed_lookup_then_status, typed_sse, wire_tool_names,
    },
    responses_calling,
};

fn request(user: &str) -> Value {
    json!({"model": "gpt-test", "instructions": "You track orders.", "input": user,
        "tools": responses_tools(), "store": false})
}

#[tokio::test]
async fn a_lookup_is_answered_and_the_call_returns_under_its_real_name() {
    let good = order_call();
    let lookup = lookup_for(&good);
    let rig = Rig::level3(vec![
        responses_calling("call_q", &lookup),
        responses_calling("call_1", &good),
    ])
    .await;
    let body = rig
        .openai_ok("/v1/responses", &request("Where is 737U2663137?"))
        .await;
    let output = body["output"].as_array().unwrap();
    assert_eq!(output.len(), 1);
    assert_eq!(output[0]["type"], "function_call");
    assert_eq!(output[0]["call_id"], "call_1");
    assert_eq!(output[0]["name"], "get_order_details");
    let args: Value = serde_json::from_str(output[0]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"trackingNumber": "737U2663137"}));
    assert_eq!(body["usage"]["total_tokens"], 30);
    let seen = rig.script.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].path, "/v1/responses");
    assert_eq!(wire_tool_names(&seen[0].json()), ["t", "q"]);
    assert_eq!(seen[0].json()["store"], false);
    let second = seen[1].json().to_string();
    assert!(second.contains("function_call_output"), "{second}");
}

fn responses_stream(text: &str, id: &str, call: &ToolCall) -> String {
    responses_stream_shaped(text, id, call, Completed::Whole)
}

/// What the round's `response.completed` and the call's item events hold.
#[derive(Clone, Copy, PartialEq)]
enum Completed {
    /// Every item, as OpenAI sends it.
    Whole,
    /// `output: []`, the call given whole only by its `output_item.done`.
    EmptyOutput,
    /// `output: []`, and the call's `output_item.done` never sent.
    EmptyOutputNoCallDone,
}

fn responses_stream_shaped(text: &str, id: &str, call: &ToolCall, shape: Completed) -> String {
    let args = serde_json::to_string(&call.arguments).unwrap();
    let response = |status: &str, output: Value| {
        json!({"id": "resp_s", "object": "response", "created_at": 1, "status": status,
            "model": "gpt-test", "output": output,
            "usage": if status == "completed" { json!({"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}) } else { Value::Null }})
    };
    let message = json!({"type": "message", "id": "msg_s", "status": "completed", "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}]});
    let fc = json!({"type": "function_call", "id": "fc_s", "call_id": id, "name": call.name.as_str(),
        "arguments": args, "status": "completed"});
    let mut events = vec![
        json!({"type": "response.created", "sequence_number": 0, "response": response("in_progress", json!([]))}),
        json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
            "item": {"type": "message", "id": "msg_s", "status": "in_progress", "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "sequence_number": 2, "item_id": "msg_s",
            "output_index": 0, "content_index": 0, "delta": text}),
        json!({"type": "response.output_item.done", "sequence_number": 3, "output_index": 0, "item": message}),
        json!({"type": "response.output_item.added", "sequence_number": 4, "output_index": 1,
            "item": {"type": "function_call", "id": "fc_s", "call_id": id, "name": call.name.as_str(), "arguments": "", "status": "in_progress"}}),
        json!({"type": "response.function_call_arguments.delta", "sequence_number": 5,
            "item_id": "fc_s", "output_index": 1, "delta": args}),
        json!({"type": "response.output_item.done", "sequence_number": 6, "output_index": 1, "item": fc}),
        json!({"type": "response.completed", "sequence_number": 7,
            "response": response("completed", json!([message, fc]))}),
    ];
    match shape {
        Completed::Whole => {}
        Completed::EmptyOutput => events[7]["response"]["output"] = json!([]),
        Completed::EmptyOutputNoCallDone => {
            events[7]["response"]["output"] = json!([]);
            events.remove(6);
        }
    }
    typed_sse(&events)
}

/// The client's stream for a streamed request about the order: its text and its events.
async fn streamed_reply(rig: &Rig) -> (String, Vec<Value>) {
    let body = streamed(request("Where is 737U2663137?"));
    let text = rig
        .openai("/v1/responses", &body)
        .await
        .text()
        .await
        .unwrap();
    let events = sse_events(&text)
        .into_iter()
        .map(|(_, d)| serde_json::from_str(&d).unwrap())
        .collect();
    (text, events)
}

fn responses_stream_empty_completed(text: &str, id: &str, call: &ToolCall) -> String {
    responses_stream_shaped(text, id, call, Completed::EmptyOutput)
}

/// Some servers that speak the Responses API end a stream with a `response.completed`
/// whose `output` is empty, the items given only by their events: the call the stream
/// announced is routed and relayed all the same, never dropped.
#[tokio::test]
async fn a_call_missing_from_an_empty_completed_output_is_taken_from_its_item_events() {
    let rig = Rig::level3(streamed_lookup_then_call(
        responses_stream_empty_completed,
        ("Looking.", "call_q", 19),
        ("Found.", "call_1", 41),
    ))
    .await;
    let (text, events) = streamed_reply(&rig).await;
    let last = events.last().unwrap();
    assert_eq!(last["type"], "response.completed", "{text}");
    let output = last["response"]["output"].as_array().unwrap();
    let calls: Vec<&Value> = output
        .iter()
        .filter(|item| item["type"] == "function_call")
        .collect();
    assert_eq!(calls.len(), 1, "{text}");
    assert_eq!(calls[0]["name"], "get_order_details");
    assert_eq!(calls[0]["call_id"], "call_1");
    // The lookup was answered by chef: the upstream saw a second request.
    assert_eq!(rig.script.seen().len(), 2);
}

/// A call the stream announced that neither `response.completed` nor an
/// `output_item.done` holds is an error the client sees, not a reply without the call.
#[tokio::test]
async fn an_announced_call_that_never_arrives_fails_the_stream() {
    let good = order_call();
    let stream =
        responses_stream_shaped("Found.", "call_1", &good, Completed::EmptyOutputNoCallDone);
    let rig = Rig::level3(vec![Reply::Sse(pieces(&stream, 41))]).await;
    let (text, events) = streamed_reply(&rig).await;
    let last = events.last().unwrap();
    assert_eq!(last["type"], "error", "{text}");
    assert!(
        last["message"].as_str().unwrap().contains("call_1"),
        "{text}"
    );
    assert!(
        events.iter().all(|e| e["type"] != "response.completed"),
        "{text}"
    );
}

#[tokio::test]
async fn streaming_emits_text_then_the_real_call_and_one_completed_response() {
    let rig = Rig::level3(streamed_lookup_then_call(
        responses_stream,
        ("Looking.", "call_q", 19),
        ("Found.", "call_1", 41),
    ))
    .await;
    let (text, events) = streamed_reply(&rig).await;
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.output_text.delta",
            "response.output_item.done",
            "response.output_item.added",
            "response.output_text.delta",
            "response.output_item.done",
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.completed"
        ],
        "{text}"
    );
    let sequence: Vec<u64> = events
        .iter()
        .map(|e| e["sequence_number"].as_u64().unwrap())
        .collect();
    assert_eq!(sequence, (0..13).collect::<Vec<_>>());
    assert_eq!(events[6]["output_index"], 1);
    assert_eq!(events[8]["output_index"], 2);
    assert_eq!(events[8]["item"]["name"], "get_order_details");
    let completed = &events[12]["response"];
    assert_eq!(completed["id"], "resp_s");
    let output = completed["output"].as_array().unwrap();
    assert_eq!(output.len(), 3);
    assert_eq!(output[2]["name"], "get_order_details");
    assert_eq!(completed["usage"]["total_tokens"], 30);
    assert!(!text.contains("\"name\":\"q\""));
}

/// A later round's upstream error reaches the client as the stream's error event with its
/// own code, and the status and Retry-After in its message (the client already has a 200).
#[tokio::test]
async fn a_later_rounds_429_keeps_its_code_and_retry_after_in_the_stream() {
    let rig = Rig::level3(streamed_lookup_then_status(
        responses_stream,
        ("Looking.", "fc_q", 13),
        (429, "2", OPENAI_RATE_LIMITED),
    ))
    .await;
    let text = rig
        .openai("/v1/responses", &streamed(request("Where is 737U2663137?")))
        .await
        .text()
        .await
        .unwrap();
    let (event, data) = last_sse_event(&text);
    assert_eq!(event, "error");
    assert_eq!(data["code"], "rate_limit_exceeded", "{text}");
    assert_eq!(
        data["message"],
        "Rate limit reached (the upstream answered 429 Too Many Requests to round 2; Retry-After: 2)"
    );
}

/// An error event the upstream sends inside its stream reaches the client with its own
/// code.
#[tokio::test]
async fn an_upstream_error_event_keeps_its_code() {
    let body = typed_sse(&[json!({"type": "error", "sequence_number": 0,
        "code": "rate_limit_exceeded", "message": "Slow down", "param": null})]);
    let rig = Rig::level3(vec![Reply::Sse(vec![body])]).await;
    let text = rig
        .openai("/v1/responses", &streamed(request("Where is 737U2663137?")))
        .await
        .text()
        .await
        .unwrap();
    let (event, data) = last_sse_event(&text);
    assert_eq!(event, "error");
    assert_eq!(data["code"], "rate_limit_exceeded", "{text}");
    assert_eq!(data["message"], "Slow down", "{text}");
}
