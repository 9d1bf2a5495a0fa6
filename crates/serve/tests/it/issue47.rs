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
