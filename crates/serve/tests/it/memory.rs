//! Memory: the model's `create_memory` answered by the gateway, kept per session id in the
//! configured directory, shown to the model on the session's later requests only.

use chef_ir::ToolCall;
use serde_json::{Value, json};

use crate::{
    chat_reply, chat_says,
    harness::{Reply, Rig, chat_tools, wire_tool_names},
};

fn request(user: &str) -> Value {
    json!({"model": "gpt-test",
        "messages": [{"role": "system", "content": "You help."}, {"role": "user", "content": user}],
        "tools": chat_tools()})
}

async fn post(rig: &Rig, body: &Value, session: Option<&str>) -> reqwest::Response {
    let mut request = rig
        .http
        .post(rig.url("/v1/chat/completions"))
        .header("authorization", "Bearer sk-test")
        .json(body);
    if let Some(id) = session {
        request = request.header("x-chef-session", id);
    }
    request.send().await.unwrap()
}

/// The model saving that the user writes Rust.
fn create_memory_call() -> ToolCall {
    ToolCall::new(
        "x",
        "create_memory",
        json!({"key": "lang", "value": "Rust"}),
    )
}

#[tokio::test]
async fn memory_the_model_writes_is_kept_for_its_session_only() {
    let dir = std::env::temp_dir().join(format!("chef-serve-memory-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let create = create_memory_call();
    let rig = Rig::start(
        &format!("[chef]\nlevel = 3\n[memory]\ndir = \"{}\"\n", dir.display()),
        vec![
            Reply::Json(chat_reply(None, &[("call_m", &create)])),
            chat_says("Noted."),
            chat_says("You use Rust."),
            chat_says("Hello."),
        ],
    )
    .await;

    let response = post(&rig, &request("I write Rust."), Some("s1")).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-chef-session"], "s1");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["choices"][0]["message"]["content"], "Noted.");
    let seen = rig.script.seen();
    assert_eq!(seen.len(), 2);
    let tools = wire_tool_names(&seen[0].json());
    assert_eq!(&tools[..2], ["t", "q"]);
    assert!(tools.contains(&"create_memory".to_owned()), "{tools:?}");
    let answer = seen[1].json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["tool_call_id"] == "call_m")
        .unwrap()
        .clone();
    assert!(
        !answer.to_string().to_lowercase().contains("error"),
        "{answer}"
    );

    // The same session later: the model is shown what it saved.
    let response = post(&rig, &request("What do I use?"), Some("s1")).await;
    assert_eq!(response.status(), 200);
    let third = String::from_utf8_lossy(&rig.script.seen()[2].body).into_owned();
    assert!(third.contains("Rust"), "{third}");

    // Another conversation (no header: an id derived from it) does not see it.
    let response = post(&rig, &request("Hi"), None).await;
    let id = response.headers()["x-chef-session"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(id.starts_with("c-") && id.len() == 34, "{id}");
    let fourth = String::from_utf8_lossy(&rig.script.seen()[3].body).into_owned();
    assert!(!fourth.contains("Rust"), "{fourth}");
    // The derived id is the same for the same conversation.
    let again = post(&rig, &request("Hi"), None).await;
    assert_eq!(again.headers()["x-chef-session"].to_str().unwrap(), id);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn without_memory_configured_an_owned_call_is_answered_not_available() {
    let create = create_memory_call();
    let rig = Rig::level3(vec![
        Reply::Json(chat_reply(None, &[("call_m", &create)])),
        chat_says("ok"),
    ])
    .await;
    let response = post(&rig, &request("I write Rust."), None).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().get("x-chef-session").is_none());
    let seen = rig.script.seen();
    assert_eq!(wire_tool_names(&seen[0].json()), ["t", "q"]);
    assert!(seen[1].json().to_string().contains("not available"));
}
