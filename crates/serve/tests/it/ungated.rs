//! Calls the gateway cannot route never reach the client: the deprecated `functions`
//! request field is refused, and an upstream reply holding a call shape chef cannot check
//! against the blocklist (a legacy `function_call`, a custom or shell tool call, a second
//! choice) is a 502, whole or streamed, never relayed. The methods the API routes do not
//! take are a 405 in the API's own error shape.

use serde_json::{Value, json};

use crate::{
    chat::request as chat_request,
    chat_reply, chat_says,
    harness::{
        BLOCK_CANCEL, Reply, Rig, anthropic_tools, encoded, order_call, responses_tools, sse,
        streamed, tool_answer, typed_sse,
    },
};

fn messages_request() -> Value {
    json!({"model": "claude-test", "max_tokens": 1024,
        "messages": [{"role": "user", "content": "Cancel ZZ9UNGATED42"}],
        "tools": anthropic_tools()})
}

fn messages_with(content: Value) -> Value {
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": content, "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 5}})
}

fn responses_request() -> Value {
    json!({"model": "gpt-test", "input": "Cancel ZZ9UNGATED42", "tools": responses_tools(),
        "store": false})
}

fn chat_completion(message: Value, extra_choices: Vec<Value>) -> Value {
    let mut choices = vec![json!({"index": 0, "message": message, "finish_reason": "stop"})];
    choices.extend(extra_choices);
    json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test",
        "choices": choices,
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
}

fn responses_reply(output: Value) -> Value {
    json!({"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-test",
        "status": "completed", "output": output,
        "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}})
}

/// Asserts a 502 in the OpenAI error shape whose message names `what`, and that nothing
/// of the blocked call reached the client.
async fn assert_refused(response: reqwest::Response, what: &str, case: &str) {
    assert_eq!(response.status(), 502, "{case}");
    let text = response.text().await.unwrap();
    let body: Value = serde_json::from_str(&text).unwrap();
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(what), "{case}: {message}");
    assert!(message.contains("not relayed"), "{case}: {message}");
    assert!(!text.contains("ZZ9UNGATED42"), "{case}: {text}");
}

#[tokio::test]
async fn the_deprecated_functions_field_is_refused_not_passed_through() {
    let rig = Rig::start(BLOCK_CANCEL, vec![]).await;
    for (key, value) in [
        (
            "functions",
            json!([{"name": "cancel_order", "parameters": {"type": "object"}}]),
        ),
        ("function_call", json!({"name": "cancel_order"})),
    ] {
        let mut body = chat_request("Cancel ZZ9UNGATED42");
        body[key] = value;
        let response = rig.openai("/v1/chat/completions", &body).await;
        assert_eq!(response.status(), 400, "{key}");
        let body: Value = response.json().await.unwrap();
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(key) && message.contains("`tools`"),
            "{message}"
        );
    }
    assert!(rig.script.seen().is_empty());
}

#[tokio::test]
async fn chat_replies_holding_calls_chef_cannot_route_are_a_502() {
    let cancel_args = r#"{"trackingNumber":"ZZ9UNGATED42"}"#;
    let cases = [
        (
            "a legacy function_call",
            chat_completion(
                json!({"role": "assistant", "content": null,
                    "function_call": {"name": "cancel_order", "arguments": cancel_args}}),
                vec![],
            ),
            "legacy `function_call`",
        ),
        (
            "a custom tool call",
            chat_completion(
                json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_c",
                    "type": "custom", "custom": {"name": "cancel_order", "input": cancel_args}}]}),
                vec![],
            ),
            "type `custom`",
        ),
        (
            "a second choice",
            chat_completion(
                json!({"role": "assistant", "content": "Sure."}),
                vec![
                    json!({"index": 1, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": null, "tool_calls": [{"id": "call_c",
                    "type": "function",
                    "function": {"name": "cancel_order", "arguments": cancel_args}}]}}),
                ],
            ),
            "second choice",
        ),
    ];
    for (case, reply, what) in cases {
        let rig = Rig::start(BLOCK_CANCEL, vec![Reply::Json(reply)]).await;
        let response = rig
            .openai("/v1/chat/completions", &chat_request("Cancel ZZ9UNGATED42"))
            .await;
        assert_refused(response, what, case).await;
    }
}

#[tokio::test]
async fn responses_replies_holding_items_chef_cannot_route_are_a_502() {
    let cases = [
        (
            "a custom tool call",
            responses_reply(json!([{"type": "custom_tool_call", "id": "ctc_1",
                "call_id": "call_c", "name": "cancel_order", "input": "ZZ9UNGATED42"}])),
            "`custom_tool_call` output item",
        ),
        (
            "a local shell call",
            responses_reply(json!([{"type": "local_shell_call", "id": "lsc_1",
                "call_id": "call_s", "status": "completed",
                "action": {"type": "exec", "command": ["rm", "-rf", "/ZZ9UNGATED42"]}}])),
            "`local_shell_call` output item",
        ),
    ];
    for (case, reply, what) in cases {
        let rig = Rig::start(BLOCK_CANCEL, vec![Reply::Json(reply)]).await;
        let response = rig.openai("/v1/responses", &responses_request()).await;
        assert_refused(response, what, case).await;
    }
    // A 200 that is not a Responses reply at all.
    for garbled in [json!({"hello": "world"}), json!([])] {
        let rig = Rig::start(BLOCK_CANCEL, vec![Reply::Json(garbled.clone())]).await;
        let response = rig.openai("/v1/responses", &responses_request()).await;
        assert_eq!(response.status(), 502, "{garbled}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["type"], "server_error", "{body}");
    }
}

/// The client's stream ends on an error event naming `what`, and carries nothing of the
/// call (its argument; a Responses stream does repeat the client's own tools).
fn assert_stream_refused(text: &str, what: &str, case: &str) {
    assert!(text.contains(what), "{case}: {text}");
    assert!(text.contains("not relayed"), "{case}: {text}");
    assert!(!text.contains("ZZ9UNGATED42"), "{case}: {text}");
}

#[tokio::test]
async fn streamed_calls_chef_cannot_route_end_the_stream_on_an_error() {
    let chunk = |delta: Value, index: u64| {
        json!({"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1,
            "model": "gpt-test", "choices": [{"index": index, "delta": delta, "finish_reason": null}]})
    };
    let chat_cases = [
        (
            "a legacy function_call",
            vec![chunk(
                json!({"role": "assistant", "function_call": {"name": "cancel_order",
                "arguments": "{\"trackingNumber\":\"ZZ9UNGATED42\"}"}}),
                0,
            )],
            "legacy `function_call`",
        ),
        (
            "a custom tool call",
            vec![chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_c", "type": "custom",
                "custom": {"name": "cancel_order", "input": "ZZ9UNGATED42"}}]}),
                0,
            )],
            "type `custom`",
        ),
        (
            "a second choice",
            vec![
                chunk(json!({"role": "assistant", "content": ""}), 0),
                chunk(
                    json!({"tool_calls": [{"index": 0, "id": "call_c", "type": "function",
                    "function": {"name": "cancel_order",
                    "arguments": "{\"trackingNumber\":\"ZZ9UNGATED42\"}"}}]}),
                    1,
                ),
            ],
            "second choice",
        ),
    ];
    for (case, chunks, what) in chat_cases {
        let events: Vec<(&str, Value)> = chunks.into_iter().map(|c| ("", c)).collect();
        let mut body = sse(&events);
        body.push_str("data: [DONE]\n\n");
        let rig = Rig::start(BLOCK_CANCEL, vec![Reply::Sse(vec![body])]).await;
        let response = rig
            .openai(
                "/v1/chat/completions",
                &streamed(chat_request("Cancel ZZ9UNGATED42")),
            )
            .await;
        assert_stream_refused(&response.text().await.unwrap(), what, case);
    }

    let item = json!({"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_c",
        "name": "cancel_order", "input": "ZZ9UNGATED42"});
    let response = json!({"id": "resp_1", "object": "response", "created_at": 1,
        "model": "gpt-test", "status": "in_progress", "output": []});
    let events = typed_sse(&[
        json!({"type": "response.created", "sequence_number": 0, "response": response}),
        json!({"type": "response.output_item.added", "sequence_number": 1,
            "output_index": 0, "item": item}),
        json!({"type": "response.output_item.done", "sequence_number": 2,
            "output_index": 0, "item": item}),
    ]);
    let rig = Rig::start(BLOCK_CANCEL, vec![Reply::Sse(vec![events])]).await;
    let response = rig
        .openai("/v1/responses", &streamed(responses_request()))
        .await;
    assert_stream_refused(
        &response.text().await.unwrap(),
        "`custom_tool_call` output item",
        "a streamed custom tool call",
    );
}

/// Anthropic runs an MCP connector's tools and its server tools itself: a request that
/// declares MCP servers is refused before anything goes upstream, and a reply holding such
/// a call or its result (an upstream that ran one anyway) is a 502, whole or streamed.
#[tokio::test]
async fn messages_mcp_servers_and_server_tool_blocks_never_reach_the_client() {
    let rig = Rig::start(BLOCK_CANCEL, vec![]).await;
    for tools in [Some(anthropic_tools()), None] {
        let mut body = messages_request();
        body["mcp_servers"] = json!([{"type": "url", "url": "https://mcp.example/sse",
            "name": "orders"}]);
        match tools {
            Some(tools) => body["tools"] = tools,
            None => {
                body.as_object_mut().unwrap().remove("tools");
            }
        }
        let response = rig.anthropic(&body).await;
        assert_eq!(response.status(), 400);
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["type"], "invalid_request_error", "{body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("`mcp_servers`"), "{message}");
    }
    // `null` is no connector.
    let mut body = messages_request();
    body["mcp_servers"] = Value::Null;
    let rig = Rig::start(
        BLOCK_CANCEL,
        vec![Reply::Json(messages_with(
            json!([{"type": "text", "text": "Hi"}]),
        ))],
    )
    .await;
    assert_eq!(rig.anthropic(&body).await.status(), 200);

    let mcp_use = json!({"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "cancel_order",
        "server_name": "orders", "input": {"trackingNumber": "ZZ9UNGATED42"}});
    let mcp_result = json!({"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1",
        "is_error": false, "content": [{"type": "text", "text": "ZZ9UNGATED42 cancelled"}]});
    let server_use = json!({"type": "server_tool_use", "id": "srvtoolu_1",
        "name": "web_search", "input": {"query": "ZZ9UNGATED42"}});
    let cases = [
        (
            "an MCP call",
            json!([mcp_use, mcp_result]),
            "`mcp_tool_use` content block",
        ),
        (
            "an MCP result",
            json!([mcp_result]),
            "`mcp_tool_result` content block",
        ),
        (
            "a server tool's call",
            json!([server_use]),
            "`server_tool_use` content block",
        ),
        (
            "a block without a type",
            json!([{"text": "ZZ9UNGATED42"}]),
            "without a `type`",
        ),
    ];
    for (case, content, what) in cases {
        let rig = Rig::start(
            BLOCK_CANCEL,
            vec![Reply::Json(messages_with(content.clone()))],
        )
        .await;
        let response = rig.anthropic(&messages_request()).await;
        assert_eq!(response.status(), 502, "{case}");
        let text = response.text().await.unwrap();
        let body: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(body["error"]["type"], "api_error", "{case}: {body}");
        assert!(text.contains(what), "{case}: {text}");
        assert!(text.contains("not relayed"), "{case}: {text}");
        assert!(!text.contains("ZZ9UNGATED42"), "{case}: {text}");
    }

    let start = json!({"type": "message_start", "message": {"id": "msg_s", "type": "message",
        "role": "assistant", "model": "claude-test", "content": [], "stop_reason": null,
        "usage": {"input_tokens": 10, "output_tokens": 1}}});
    let events = typed_sse(&[
        start,
        json!({"type": "content_block_start", "index": 0, "content_block": mcp_use}),
        json!({"type": "content_block_stop", "index": 0}),
    ]);
    let rig = Rig::start(BLOCK_CANCEL, vec![Reply::Sse(vec![events])]).await;
    let response = rig.anthropic(&streamed(messages_request())).await;
    assert_stream_refused(
        &response.text().await.unwrap(),
        "`mcp_tool_use` content block",
        "a streamed MCP call",
    );
}

#[tokio::test]
async fn other_methods_on_an_api_route_are_a_405_in_its_shape() {
    let rig = Rig::start("", vec![]).await;
    for (path, anthropic) in [
        ("/v1/chat/completions", false),
        ("/v1/responses", false),
        ("/v1/messages", true),
    ] {
        let response = rig.http.get(rig.url(path)).send().await.unwrap();
        assert_eq!(response.status(), 405, "{path}");
        assert_eq!(response.headers()["allow"], "POST", "{path}");
        let body: Value = response.json().await.unwrap();
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(path) && message.contains("POST"),
            "{message}"
        );
        assert_eq!(body["type"] == "error", anthropic, "{body}");
    }
    assert!(rig.script.seen().is_empty());
}

/// A function call without `type` (some OpenAI-compatible servers leave it out) is read as
/// the function call it is: routed, gated and validated like any other, not refused and
/// not passed through unrouted.
#[tokio::test]
async fn a_function_call_without_a_type_is_routed_and_gated() {
    let untyped = |id: &str, call: &chef_ir::ToolCall| {
        let mut reply = chat_reply(None, &[(id, call)]);
        reply["choices"][0]["message"]["tool_calls"][0]
            .as_object_mut()
            .unwrap()
            .remove("type");
        Reply::Json(reply)
    };
    let cancel = encoded("cancel_order", json!({"trackingNumber": "ZZ9UNGATED42"}));
    let rig = Rig::start(
        BLOCK_CANCEL,
        vec![
            untyped("call_c", &cancel),
            chat_says("I cannot cancel orders."),
        ],
    )
    .await;
    let body = rig
        .openai_ok("/v1/chat/completions", &chat_request("Cancel ZZ9UNGATED42"))
        .await;
    assert!(
        body["choices"][0]["message"].get("tool_calls").is_none(),
        "{body}"
    );
    let seen = rig.script.seen();
    assert_eq!(seen.len(), 2);
    let refusal = tool_answer(&seen[1].json(), "call_c").to_string();
    assert!(refusal.contains("blocked"), "{refusal}");

    let good = order_call();
    let rig = Rig::start(BLOCK_CANCEL, vec![untyped("call_1", &good)]).await;
    let body = rig
        .openai_ok(
            "/v1/chat/completions",
            &chat_request("Where is 737U2663137?"),
        )
        .await;
    let call = &body["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "get_order_details", "{body}");
}
