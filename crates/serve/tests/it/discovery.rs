//! Issue 43 through the gateway: its default is the discovery setting (level 1, the 10
//! best-ranked real tools plus `find_tools`), a search by the upstream model is answered
//! inside the gateway, and the tools it finds reach the next upstream request by their real
//! names, after the tools already sent.

use chef_ir::ToolCall;
use serde_json::{Value, json};

use crate::{
    chat_calling, chat_says,
    harness::{Rig, chat_tools, wire_tool_names},
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
