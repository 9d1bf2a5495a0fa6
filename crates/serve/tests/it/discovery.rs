//! Issue 43 through the gateway: its default is the discovery setting (level 1, the 10
//! best-ranked real tools plus `find_tools`), a search by the upstream model is answered
//! inside the gateway, and the tools it finds reach the next upstream request by their real
//! names, after the tools already sent.

use chef_ir::ToolCall;
use serde_json::{Value, json};

use crate::{
    chat_calling, chat_reply, chat_says,
    harness::{Reply, Rig, anthropic_tools, chat_tools, responses_tools, wire_tool_names},
    messages_reply, messages_says, responses_reply, responses_says,
};

fn request(text: &str) -> Value {
    json!({"model": "gpt-test",
        "messages": [{"role": "user", "content": text}],
        "tools": chat_tools()})
}

#[tokio::test]
async fn the_default_sends_the_best_ranked_real_tools_and_answers_a_search_inside() {
    let search = ToolCall::new("s1", "find_tools", json!({"query": "send an email"}));
    let rig = Rig::start(
        "",
        vec![
            chat_calling("s1", &search),
            chat_says("I can email it now."),
        ],
    )
    .await;
    let reply = rig
        .openai_ok(
            "/v1/chat/completions",
            &request("What is the diesel price in Ohio this week?"),
        )
        .await;
    assert_eq!(
        reply["choices"][0]["message"]["content"],
        "I can email it now."
    );
    let seen = rig.script.seen();
    assert_eq!(seen.len(), 2, "the search is answered inside the gateway");
    let first = wire_tool_names(&seen[0].json());
    assert_eq!(first.len(), 11, "{first:?}");
    assert_eq!(first.last().map(String::as_str), Some("find_tools"));
    assert!(first.iter().any(|n| n == "get_diesel_price"), "{first:?}");
    let second = wire_tool_names(&seen[1].json());
    assert_eq!(second[..first.len()], first[..], "found tools are appended");
    assert!(
        second[first.len()..]
            .iter()
            .any(|n| n == "send_markdown_email"),
        "{second:?}"
    );
    // The search's answer went upstream as the tool result, never to the client.
    let answered = seen[1].json()["messages"].to_string();
    assert!(answered.contains("send_markdown_email("), "{answered}");
}

#[tokio::test]
async fn a_blocked_tool_is_never_found_through_the_gateway() {
    let search = ToolCall::new(
        "s1",
        "find_tools",
        json!({"query": "send a markdown email"}),
    );
    let rig = Rig::start(
        "[chef]\nblocked = [\"send_markdown_email\"]\n",
        vec![chat_calling("s1", &search), chat_says("Done.")],
    )
    .await;
    rig.openai_ok(
        "/v1/chat/completions",
        &request("Email the weekly report to the team"),
    )
    .await;
    let seen = rig.script.seen();
    let second = wire_tool_names(&seen[1].json());
    let answered = seen[1].json()["messages"].to_string();
    assert!(!answered.contains("send_markdown_email("), "{answered}");
    assert!(
        !second.iter().any(|n| n == "send_markdown_email")
            || wire_tool_names(&seen[0].json())
                .iter()
                .any(|n| n == "send_markdown_email"),
        "a blocked tool is never added by a search: {second:?}"
    );
}

/// A client that forces one of its tools gets that tool, not some other one: under
/// discovery the forced tool is kept on the wire beside the ranked ten; forcing a blocked
/// tool is refused before anything goes upstream.
#[tokio::test]
async fn a_forced_tool_stays_on_the_wire_and_a_blocked_one_is_refused() {
    let rig = Rig::start(
        "[chef]\nblocked = [\"send_markdown_email\"]\n",
        vec![chat_says("Here it is."), chat_says("Searching.")],
    )
    .await;
    let mut body = request("What is the diesel price in Ohio this week?");
    body["tool_choice"] = json!({"type": "function", "function": {"name": "scorecard_nps_daily"}});
    rig.openai_ok("/v1/chat/completions", &body).await;
    let seen = rig.script.seen();
    let sent = seen[0].json();
    let names = wire_tool_names(&sent);
    assert!(
        names.iter().any(|n| n == "scorecard_nps_daily"),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n == "get_diesel_price"), "{names:?}");
    assert_eq!(
        sent["tool_choice"],
        json!({"type": "function", "function": {"name": "scorecard_nps_daily"}})
    );

    let mut body = request("Email the weekly report to the team");
    body["tool_choice"] = json!({"type": "function", "function": {"name": "send_markdown_email"}});
    let response = rig.openai("/v1/chat/completions", &body).await;
    assert_eq!(response.status(), 400);
    let error: Value = response.json().await.unwrap();
    let message = error["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("send_markdown_email") && message.contains("blocklist"),
        "{message}"
    );
    assert_eq!(rig.script.seen().len(), 1, "nothing more went upstream");

    // A tool the request does not hold is the client's mistake (it was forced as "some
    // tool"), and OpenAI's `allowed_tools` names a set the gateway cannot keep (found by
    // session 33's gateway audit).
    for choice in [
        json!({"type": "function", "function": {"name": "no_such_tool"}}),
        json!({"type": "allowed_tools", "allowed_tools": {"mode": "required",
            "tools": [{"type": "function", "function": {"name": "send_markdown_email"}}]}}),
    ] {
        let mut body = request("Email the weekly report to the team");
        body["tool_choice"] = choice.clone();
        let response = rig.openai("/v1/chat/completions", &body).await;
        assert_eq!(response.status(), 400, "{choice}");
        let error: Value = response.json().await.unwrap();
        let message = error["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("no_such_tool") || message.contains("allowed_tools"),
            "{message}"
        );
    }
    assert_eq!(rig.script.seen().len(), 1, "nothing more went upstream");
    // chef's own search tool may be forced under discovery.
    let mut body = request("Email the weekly report to the team");
    body["tool_choice"] = json!({"type": "function", "function": {"name": "find_tools"}});
    assert_eq!(
        rig.openai("/v1/chat/completions", &body).await.status(),
        200
    );
}

/// What the model wrote beside a search the gateway answered inside reaches a whole reply
/// too, before the final round's text, as it reaches a streamed one.
#[tokio::test]
async fn a_whole_reply_keeps_the_text_of_the_rounds_answered_inside() {
    let search = ToolCall::new("s1", "find_tools", json!({"query": "send an email"}));
    let ask = "Email the weekly report to the team";

    let rig = Rig::start(
        "",
        vec![
            Reply::Json(chat_reply(Some("Let me look."), &[("s1", &search)])),
            chat_says("Done."),
        ],
    )
    .await;
    let reply = rig.openai_ok("/v1/chat/completions", &request(ask)).await;
    // Chat has one text: the rounds' texts are joined with a paragraph break, as a
    // stream's deltas spell them.
    assert_eq!(
        reply["choices"][0]["message"]["content"],
        "Let me look.\n\nDone."
    );
    // A round that wrote nothing adds no break.
    let rig = Rig::start(
        "",
        vec![
            Reply::Json(chat_reply(None, &[("s1", &search)])),
            chat_says("Done."),
        ],
    )
    .await;
    let reply = rig.openai_ok("/v1/chat/completions", &request(ask)).await;
    assert_eq!(reply["choices"][0]["message"]["content"], "Done.");

    let rig = Rig::start(
        "",
        vec![
            Reply::Json(messages_reply(Some("Let me look."), &[("s1", &search)])),
            messages_says("Done."),
        ],
    )
    .await;
    let body = json!({"model": "claude-test", "max_tokens": 1024,
        "messages": [{"role": "user", "content": ask}], "tools": anthropic_tools()});
    let reply = rig.anthropic_ok(&body).await;
    assert_eq!(
        reply["content"],
        json!([{"type": "text", "text": "Let me look."}, {"type": "text", "text": "Done."}])
    );
    assert_eq!(reply["stop_reason"], "end_turn");

    let rig = Rig::start(
        "",
        vec![
            Reply::Json(responses_reply(Some("Let me look."), &[("s1", &search)])),
            responses_says("Done."),
        ],
    )
    .await;
    let body = json!({"model": "gpt-test", "input": ask, "tools": responses_tools()});
    let reply = rig.openai_ok("/v1/responses", &body).await;
    let texts: Vec<&str> = reply["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["Let me look.", "Done."]);
}

/// The upstream's request id reaches the client on an API reply: the round whose reply it
/// gets (whole), the first round (a stream, whose headers go out with it), or the round
/// that failed. Anthropic's `request-id` likewise.
#[tokio::test]
async fn the_upstreams_request_id_reaches_the_client() {
    let search = ToolCall::new("s1", "find_tools", json!({"query": "send an email"}));
    let ask = "Email the weekly report to the team";
    let json_with = |id: &'static str, name: &'static str, body: &Value| {
        Reply::Status(
            200,
            vec![("content-type", "application/json"), (name, id)],
            body.to_string(),
        )
    };
    let id_of = |r: &reqwest::Response, name: &str| {
        r.headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };

    // Whole: two rounds, the second one's id.
    let rig = Rig::start(
        "",
        vec![
            json_with(
                "req_1",
                "x-request-id",
                &chat_reply(None, &[("s1", &search)]),
            ),
            json_with("req_2", "x-request-id", &chat_reply(Some("Done."), &[])),
        ],
    )
    .await;
    let r = rig.openai("/v1/chat/completions", &request(ask)).await;
    assert_eq!(r.status(), 200);
    assert_eq!(id_of(&r, "x-request-id").as_deref(), Some("req_2"));

    // A stream: the first round's.
    let sse = crate::harness::sse(&[(
        "",
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": {"content": "Hi."}, "finish_reason": "stop"}]}),
    )]) + "data: [DONE]\n\n";
    let rig = Rig::start(
        "",
        vec![Reply::Status(
            200,
            vec![
                ("content-type", "text/event-stream"),
                ("x-request-id", "req_s"),
            ],
            sse,
        )],
    )
    .await;
    let r = rig
        .openai(
            "/v1/chat/completions",
            &crate::harness::streamed(request(ask)),
        )
        .await;
    assert_eq!(r.status(), 200);
    assert_eq!(id_of(&r, "x-request-id").as_deref(), Some("req_s"));
    assert!(r.text().await.unwrap().contains("Hi."));

    // An upstream error: its own id with it.
    let rig = Rig::start(
        "",
        vec![Reply::Status(
            429,
            vec![
                ("content-type", "application/json"),
                ("x-request-id", "req_e"),
            ],
            crate::harness::OPENAI_RATE_LIMITED.to_owned(),
        )],
    )
    .await;
    let r = rig.openai("/v1/chat/completions", &request(ask)).await;
    assert_eq!(r.status(), 429);
    assert_eq!(id_of(&r, "x-request-id").as_deref(), Some("req_e"));

    // Anthropic's header name.
    let rig = Rig::start(
        "",
        vec![json_with(
            "req_a",
            "request-id",
            &messages_reply(Some("Done."), &[]),
        )],
    )
    .await;
    let body = json!({"model": "claude-test", "max_tokens": 1024,
        "messages": [{"role": "user", "content": ask}], "tools": anthropic_tools()});
    let r = rig.anthropic(&body).await;
    assert_eq!(r.status(), 200);
    assert_eq!(id_of(&r, "request-id").as_deref(), Some("req_a"));
    assert_eq!(id_of(&r, "x-request-id"), None);
}
