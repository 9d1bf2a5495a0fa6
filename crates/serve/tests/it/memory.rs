//! Memory: the model's `create_memory` answered by the gateway, kept per session id in the
//! configured directory, shown to the model on the session's later requests only.

use chef_ir::ToolCall;
use serde_json::{Value, json};

use crate::{
    chat_calling, chat_says,
    harness::{Rig, chat_tools, tool_answer, wire_tool_names},
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
            chat_calling("call_m", &create),
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
    let second = seen[1].json();
    let answer = tool_answer(&second, "call_m");
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
    // Only the session that wrote memory has a directory: a conversation that never
    // writes leaves nothing behind (one empty directory per conversation before).
    let mut made: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    made.sort();
    assert_eq!(made, ["s1"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_memory_value_over_max_value_chars_is_refused_and_not_saved() {
    let dir = std::env::temp_dir().join(format!("chef-serve-memory-cap-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let long = ToolCall::new(
        "x",
        "create_memory",
        json!({"key": "notes", "value": "0123456789abc"}),
    );
    let rig = Rig::start(
        &format!(
            "[chef]\nlevel = 3\n[memory]\ndir = \"{}\"\nmax_value_chars = 10\n",
            dir.display()
        ),
        vec![
            chat_calling("call_m", &long),
            chat_says("Too long."),
            chat_says("ok"),
        ],
    )
    .await;
    let response = post(&rig, &request("Remember this."), Some("s1")).await;
    assert_eq!(response.status(), 200);
    let answer = tool_answer(&rig.script.seen()[1].json(), "call_m").to_string();
    assert!(
        answer.contains("is 13 characters long; a memory entry holds at most 10"),
        "{answer}"
    );
    // Nothing was saved: the session's next request shows no memory of it.
    let response = post(&rig, &request("What did I say?"), Some("s1")).await;
    assert_eq!(response.status(), 200);
    let third = String::from_utf8_lossy(&rig.script.seen()[2].body).into_owned();
    assert!(!third.contains("0123456789abc"), "{third}");
    let config = chef_serve::Config::parse("[memory]\ndir = \"/tmp/x\"\n").unwrap();
    assert_eq!(
        config.memory_max_value_chars,
        Some(chef::memory::DEFAULT_MAX_VALUE_CHARS)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn without_memory_configured_an_owned_call_is_answered_not_available() {
    let create = create_memory_call();
    let rig = Rig::level3(vec![chat_calling("call_m", &create), chat_says("ok")]).await;
    let response = post(&rig, &request("I write Rust."), None).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().get("x-chef-session").is_none());
    let seen = rig.script.seen();
    assert_eq!(wire_tool_names(&seen[0].json()), ["t", "q"]);
    assert!(seen[1].json().to_string().contains("not available"));
}

/// The PostgreSQL server of `CHEF_PG_URL` (`.ci/run` starts one); `None` after saying
/// loudly that the test is skipped, unless `CHEF_PG_REQUIRED=1`, which makes it fail.
fn pg_url() -> Option<String> {
    match std::env::var("CHEF_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("CHEF_PG_REQUIRED").as_deref() != Ok("1"),
                "CHEF_PG_REQUIRED=1 but CHEF_PG_URL is not set"
            );
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "\n*** SKIPPED: no PostgreSQL (CHEF_PG_URL unset): gateway memory in PostgreSQL ***\n"
            );
            None
        }
    }
}

#[tokio::test]
async fn two_gateways_share_a_sessions_memory_through_postgres() {
    let Some(url) = pg_url() else { return };
    if !cfg!(feature = "postgres") {
        // The config refuses the url: say so, in the test of that refusal below.
        return;
    }
    let session = format!(
        "pg-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let config = format!("[chef]\nlevel = 3\n[memory]\nurl = \"{url}\"\ntools = \"context\"\n");
    let create = ToolCall::new(
        "x",
        "context",
        json!({"command": "create", "path": "context://memory/lang", "file_text": "Rust"}),
    );
    let first = Rig::start(
        &config,
        vec![chat_calling("call_m", &create), chat_says("Noted.")],
    )
    .await;
    let second = Rig::start(&config, vec![chat_says("You use Rust."), chat_says("Hi.")]).await;

    let response = post(&first, &request("I write Rust."), Some(&session)).await;
    assert_eq!(response.status(), 200);
    let seen = first.script.seen();
    let tools = wire_tool_names(&seen[0].json());
    assert!(tools.contains(&"context".to_owned()), "{tools:?}");
    let answer = crate::harness::tool_answer(&seen[1].json(), "call_m").clone();
    assert_eq!(
        answer["content"], "Created context://memory/lang.",
        "{answer}"
    );

    // Another gateway instance, the same database: the same session sees it, another not.
    let response = post(&second, &request("What do I use?"), Some(&session)).await;
    assert_eq!(response.status(), 200);
    let shown = String::from_utf8_lossy(&second.script.seen()[0].body).into_owned();
    assert!(shown.contains("Rust"), "{shown}");
    let other = format!("{session}-other");
    let response = post(&second, &request("What do I use?"), Some(&other)).await;
    assert_eq!(response.status(), 200);
    let shown = String::from_utf8_lossy(&second.script.seen()[1].body).into_owned();
    assert!(!shown.contains("Rust"), "{shown}");
}

#[test]
fn memory_config_is_checked() {
    for (text, key) in [
        (
            "[memory]\ndir = \"/tmp/x\"\nurl = \"postgres://a@b/c\"\n",
            "memory.url",
        ),
        ("[memory]\nurl = \"mysql://a@b/c\"\n", "memory.url"),
        (
            "[memory]\ndir = \"/tmp/x\"\ntools = \"all\"\n",
            "memory.tools",
        ),
    ] {
        let err = chef_serve::Config::parse(text).unwrap_err().to_string();
        assert!(err.contains(key), "{text}: {err}");
    }
    let parsed = chef_serve::Config::parse("[memory]\nurl = \"postgres://a@b/c\"\n");
    assert_eq!(parsed.is_ok(), cfg!(feature = "postgres"), "{parsed:?}");
}
