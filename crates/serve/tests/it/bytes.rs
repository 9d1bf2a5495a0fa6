//! What the gateway sends upstream is what `Chef::compile` makes of the same conversation,
//! byte for byte, with the client's other fields appended; the same request twice gives
//! the same bytes.

use chef::{Chef, ChefConfig};
use chef_compress::Level;
use chef_ir::{Content, Message, Target, ToolResult};
use serde_json::{Value, json};

use crate::{
    chat_says,
    harness::{Rig, anthropic_tools, chat_tools, responses_tools, tool_definitions},
    messages_says, responses_says,
};

fn args() -> Value {
    json!({"trackingNumber": "737U2663137"})
}

/// The library's own compile of the conversation both tests send: a user turn, the
/// model's earlier call (as the model wrote it at level 3), its result, a new user turn.
fn library_body(target: Target, call_id: &str) -> Vec<u8> {
    library_body_at(Level::Three, target, call_id)
}

fn library_body_at(level: Level, target: Target, call_id: &str) -> Vec<u8> {
    library_body_with(level, target, call_id, |_| {})
}

/// The same, with `setup` run on the session once its tools are registered.
fn library_body_with(
    level: Level,
    target: Target,
    call_id: &str,
    setup: impl FnOnce(&mut Chef),
) -> Vec<u8> {
    let mut chef = Chef::new(ChefConfig::default().with_level(level));
    chef.register_tools(tool_definitions()).unwrap();
    setup(&mut chef);
    chef.set_system_prompt(vec![Message::system("You track orders.")]);
    chef.push(Message::user("Where is 737U2663137?"));
    let mut call = chef
        .tools()
        .encode_call("get_order_details", args())
        .unwrap();
    call.id = call_id.into();
    chef.push(Message::assistant_with(vec![Content::ToolCall(call)]));
    chef.push(Message::tool_results(vec![ToolResult::text(
        call_id,
        "In transit.",
    )]));
    chef.push(Message::user("When will it arrive?"));
    chef.compile(target).unwrap().body
}

/// Asserts two bodies are the same bytes, showing them as text when they are not.
fn assert_same_text(sent: &[u8], expected: &[u8], case: &str) {
    assert_eq!(
        String::from_utf8_lossy(sent),
        String::from_utf8_lossy(expected),
        "{case}"
    );
}

fn with_fields(mut body: Vec<u8>, fields: &str) -> Vec<u8> {
    assert_eq!(body.pop(), Some(b'}'));
    body.push(b',');
    body.extend_from_slice(fields.as_bytes());
    body.push(b'}');
    body
}

fn chat_request() -> Value {
    json!({"model": "gpt-test",
        "messages": [
            {"role": "system", "content": "You track orders."},
            {"role": "user", "content": "Where is 737U2663137?"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "get_order_details", "arguments": args().to_string()}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "In transit."},
            {"role": "user", "content": "When will it arrive?"}],
        "tools": chat_tools()})
}

#[tokio::test]
async fn chat_upstream_bytes_equal_the_library_compile() {
    let rig = Rig::level3(vec![
        chat_says("Hello."),
        chat_says("Tomorrow."),
        chat_says("Tomorrow."),
    ])
    .await;
    // A different conversation with the same tools first: its session is kept and reused,
    // and must leave nothing behind.
    let mut other = chat_request();
    other["messages"] = json!([{"role": "system", "content": "Another prompt."},
        {"role": "user", "content": "Hello"}]);
    assert_eq!(
        rig.openai("/v1/chat/completions", &other).await.status(),
        200
    );
    for _ in 0..2 {
        let response = rig.openai("/v1/chat/completions", &chat_request()).await;
        assert_eq!(response.status(), 200);
    }
    let mut seen = rig.script.seen();
    seen.remove(0);
    let expected = with_fields(
        library_body(Target::OpenAiChat, "call_1"),
        r#""model":"gpt-test""#,
    );
    assert_same_text(&seen[0].body, &expected, "");
    // Identical client requests, identical upstream bytes.
    assert_eq!(seen[0].body, seen[1].body);
    // The earlier call went upstream as the model wrote it, not under its real name.
    let sent = String::from_utf8_lossy(&seen[0].body);
    assert!(!sent.contains(r#""name":"get_order_details""#), "{sent}");
    // The tool block is counted for every request, reused session or not.
    let metrics = rig.metrics().await;
    // A counter of the tool-block family `unit` (chars or tokens) at `stage`.
    let block = |unit: &str, stage: &str| -> u64 {
        let prefix = format!("chef_tool_block_{unit}_total{{stage=\"{stage}\"}} ");
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .unwrap()
            .parse()
            .unwrap()
    };
    let (before, after) = (block("chars", "before"), block("chars", "after"));
    assert!(before > 20 * after && after > 0, "{before} {after}");
    assert_eq!(before % 3, 0, "three requests, the same tools: {before}");
    // o200k tokens too, counted once for the tool set and reported for every request.
    let (before_tokens, after_tokens) = (block("tokens", "before"), block("tokens", "after"));
    assert!(
        before_tokens > 10 * after_tokens && after_tokens > 0,
        "{before_tokens} {after_tokens}"
    );
    assert_eq!(before_tokens % 3, 0, "{before_tokens}");
    assert!(before_tokens < before, "tokens are fewer than characters");
    assert!(
        metrics.contains("chef_sessions_reused_total 2"),
        "{metrics}"
    );
}

#[tokio::test]
async fn messages_upstream_bytes_equal_the_library_compile() {
    let rig = Rig::level3(vec![messages_says("Tomorrow."), messages_says("Tomorrow.")]).await;
    let request = json!({"model": "claude-test", "max_tokens": 512,
        "system": "You track orders.",
        "messages": [
            {"role": "user", "content": "Where is 737U2663137?"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
                "name": "get_order_details", "input": args()}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "In transit."},
                {"type": "text", "text": "When will it arrive?"}]}],
        "tools": anthropic_tools()});
    for _ in 0..2 {
        let response = rig.anthropic(&request).await;
        assert_eq!(response.status(), 200);
    }
    let seen = rig.script.seen();
    let expected = with_fields(
        library_body(Target::Anthropic, "toolu_1"),
        r#""model":"claude-test","max_tokens":512"#,
    );
    assert_same_text(&seen[0].body, &expected, "");
    assert_eq!(seen[0].body, seen[1].body);
}

#[tokio::test]
async fn every_level_replays_history_as_the_library_compiles_it() {
    for (level, n) in [(Level::Zero, 0), (Level::One, 1), (Level::Two, 2)] {
        let rig = Rig::start(
            &format!("[chef]\nlevel = {n}\nprune = \"all\"\n"),
            vec![chat_says("Tomorrow.")],
        )
        .await;
        let response = rig.openai("/v1/chat/completions", &chat_request()).await;
        assert_eq!(response.status(), 200, "level {n}");
        let expected = with_fields(
            library_body_at(level, Target::OpenAiChat, "call_1"),
            r#""model":"gpt-test""#,
        );
        assert_same_text(&rig.script.seen()[0].body, &expected, &format!("level {n}"));
    }
}

#[tokio::test]
async fn responses_upstream_bytes_equal_the_library_compile() {
    let rig = Rig::level3(vec![responses_says("Tomorrow.")]).await;
    let request = json!({"model": "gpt-test", "instructions": "You track orders.",
        "input": [
            {"role": "user", "content": "Where is 737U2663137?"},
            {"type": "function_call", "call_id": "call_1", "name": "get_order_details",
                "arguments": args().to_string()},
            {"type": "function_call_output", "call_id": "call_1", "output": "In transit."},
            {"role": "user", "content": "When will it arrive?"}],
        "tools": responses_tools(), "store": false});
    let response = rig.openai("/v1/responses", &request).await;
    assert_eq!(response.status(), 200);
    let expected = with_fields(
        library_body(Target::OpenAiResponses, "call_1"),
        r#""model":"gpt-test","store":false"#,
    );
    assert_same_text(&rig.script.seen()[0].body, &expected, "");
}

#[tokio::test]
async fn a_tool_choice_naming_a_real_tool_becomes_any_tool_at_level_3() {
    let rig = Rig::level3(vec![chat_says("ok"), messages_says("ok")]).await;
    let mut request = chat_request();
    request["tool_choice"] = json!({"type": "function", "function": {"name": "get_order_details"}});
    assert_eq!(
        rig.openai("/v1/chat/completions", &request).await.status(),
        200
    );
    let request = json!({"model": "claude-test", "max_tokens": 16,
        "messages": [{"role": "user", "content": "hi"}], "tools": anthropic_tools(),
        "tool_choice": {"type": "tool", "name": "get_order_details"}});
    assert_eq!(rig.anthropic(&request).await.status(), 200);
    let seen = rig.script.seen();
    assert_eq!(seen[0].json()["tool_choice"], "required");
    assert_eq!(seen[1].json()["tool_choice"], json!({"type": "any"}));
}

#[tokio::test]
async fn a_tool_choice_naming_a_tool_on_the_wire_is_kept() {
    let rig = Rig::start("[chef]\nlevel = 1\n", vec![chat_says("ok")]).await;
    let mut request = chat_request();
    let choice = json!({"type": "function", "function": {"name": "get_order_details"}});
    request["tool_choice"] = choice.clone();
    assert_eq!(
        rig.openai("/v1/chat/completions", &request).await.status(),
        200
    );
    assert_eq!(rig.script.seen()[0].json()["tool_choice"], choice);
}

#[tokio::test]
async fn configured_announcements_reach_the_model_as_the_library_places_them() {
    let rig = Rig::start(
        "[chef]\nlevel = 3\n[[chef.announcements]]\nid = \"freeze\"\ntext = \"Orders are frozen today.\"\n",
        vec![
            chat_says("ok"),
            chat_says("ok"),
        ],
    )
    .await;
    for _ in 0..2 {
        assert_eq!(
            rig.openai("/v1/chat/completions", &chat_request())
                .await
                .status(),
            200
        );
    }
    let library = library_body_with(Level::Three, Target::OpenAiChat, "call_1", |chef| {
        chef.announce("freeze", "Orders are frozen today.", chef::Channel::Auto);
    });
    let expected = with_fields(library, r#""model":"gpt-test""#);
    let seen = rig.script.seen();
    assert!(String::from_utf8_lossy(&seen[0].body).contains("Orders are frozen today."));
    for s in &seen {
        assert_same_text(&s.body, &expected, "");
    }
}

/// Under per-task pruning (the default, `discover`) a request whose tools were seen before
/// forks a template that served nothing: its upstream bytes are those of a fresh session,
/// whatever the requests before it asked for.
#[test]
fn a_per_task_template_fork_sends_the_bytes_of_a_fresh_session() {
    let asks = [
        "Where is order 737U2663137?",
        "Create a calendar event for Friday at 10am with Bob",
        "What is the weather in Oslo tomorrow?",
        "Where is order 737U2663137?",
        "List the open pull requests of the repository",
    ];
    for (toml, pooled) in [
        ("", true),
        ("[chef]\nprune = \"ranked\"\ntop_k = 5\n", true),
        ("[chef]\nlevel = 3\n", true),
    ] {
        // One pool per configuration, as the gateway keeps one per policy.
        let pool = chef_serve::session::Pool::default();
        let config = chef_serve::Config::parse(toml).unwrap();
        assert_eq!(chef_serve::session::pooled(&config), pooled, "{toml:?}");
        for (i, ask) in asks.iter().enumerate() {
            let body = serde_json::to_vec(&json!({
                "model": "gpt-test",
                "messages": [{"role": "system", "content": "You help."},
                             {"role": "user", "content": ask}],
                "tools": chat_tools(),
            }))
            .unwrap();
            let api = chef_serve::Api::Chat;
            let mut forked =
                chef_serve::session::prepare_with(&config, api, &body, Some(&pool)).unwrap();
            assert_eq!(forked.reused, i > 0, "{toml:?} {ask}");
            let mut fresh = chef_serve::session::prepare(&config, api, &body).unwrap();
            let (sent, _) = chef_serve::session::compile_round(&mut forked, false).unwrap();
            let (expected, _) = chef_serve::session::compile_round(&mut fresh, false).unwrap();
            assert_same_text(&sent, &expected, &format!("{toml:?} {ask}"));
            pool.release(forked);
        }
    }
}

/// A template is kept per API: the same tool bytes sent to another API are read and
/// checked by that API, as on a fresh gateway, whatever was sent before (the audit's
/// Chat-shaped tools were refused on Messages by a fresh gateway, and taken after one
/// Chat request with the same bytes).
#[tokio::test]
async fn the_same_tool_bytes_from_another_api_are_read_by_that_api() {
    for prune in ["", "[chef]\nprune = \"all\"\n"] {
        let rig = Rig::start(prune, vec![chat_says("ok"), chat_says("ok")]).await;
        let tools = json!([{"type": "function", "function": {"name": "get_weather",
            "description": "Weather for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]);
        let messages = json!({"model": "claude-test", "max_tokens": 64,
            "messages": [{"role": "user", "content": "Weather in Oslo?"}], "tools": tools});
        let chat = json!({"model": "gpt-test",
            "messages": [{"role": "user", "content": "Weather in Oslo?"}], "tools": tools});
        let fresh = rig.anthropic(&messages).await.status();
        assert_eq!(fresh, 400, "{prune}");
        for _ in 0..2 {
            assert_eq!(
                rig.openai("/v1/chat/completions", &chat).await.status(),
                200
            );
            assert_eq!(rig.anthropic(&messages).await.status(), fresh, "{prune}");
        }
    }
}
