//! Policies: per route (`/ROUTE/v1/…`) and per client key, each with its own chef
//! settings; level 4 from a compiled map; templates kept per policy.

use serde_json::json;

use crate::{
    chat::request,
    chat_says,
    harness::{Rig, wire_tool_names},
};

/// The SHA-256 of the harness's OpenAI key, `sk-test-secret`.
fn harness_key() -> String {
    chef_serve::config::key_fingerprint("sk-test-secret")
}

fn compiled_map_path() -> String {
    format!(
        "{}/../../tests/fixtures/real-mcp-tools.compiled-map.json",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[tokio::test]
async fn a_route_selects_its_policy_and_the_default_stays_as_configured() {
    let config = format!(
        "[chef]\nlevel = 3\n\
         [[policy]]\nname = \"native\"\nroute = \"native\"\nlevel = 1\n\
         [[policy]]\nname = \"strict\"\nroute = \"strict\"\nblocked = [\"get_order_details\"]\n\
         [[policy]]\nname = \"compiled\"\nroute = \"l4\"\nlevel = 4\ncompiled_map = \"{}\"\n",
        compiled_map_path()
    );
    let rig = Rig::start(
        &config,
        vec![
            chat_says("a"),
            chat_says("b"),
            chat_says("c"),
            chat_says("d"),
        ],
    )
    .await;
    let body = request("Where is 737U2663137?");
    for path in [
        "/v1/chat/completions",
        "/native/v1/chat/completions",
        "/strict/v1/chat/completions",
        "/l4/v1/chat/completions",
    ] {
        rig.openai_ok(path, &body).await;
    }
    let seen = rig.script.seen();
    assert_eq!(seen.len(), 4);
    // Every route reaches the same upstream path.
    assert!(seen.iter().all(|s| s.path == "/v1/chat/completions"));
    // Default: level 3.
    assert_eq!(wire_tool_names(&seen[0].json()), ["t", "q"]);
    // Level 1: every tool on the wire under its own name.
    let native = wire_tool_names(&seen[1].json());
    assert_eq!(native.len(), 149);
    assert!(native.contains(&"get_order_details".to_owned()));
    // The strict policy inherits level 3 and adds a blocked tool: the tool list is the
    // same, the gate is not.
    assert_eq!(wire_tool_names(&seen[2].json()), ["t", "q"]);
    // Level 4: the compiled lines are what the model reads.
    let l4 = seen[3].json().to_string();
    assert!(l4.contains("def get_order_details("), "{l4}");
    assert!(
        !seen[0]
            .json()
            .to_string()
            .contains("def get_order_details(")
    );
}

#[tokio::test]
async fn a_blocked_tool_of_one_route_is_refused_there_only() {
    let call = crate::harness::order_call();
    let config = "[chef]\nlevel = 3\n\
                  [[policy]]\nname = \"strict\"\nroute = \"strict\"\nblocked = [\"get_order_details\"]\n";
    let reply = crate::chat_reply(None, &[("call_1", &call)]);
    let rig = Rig::start(
        config,
        vec![
            crate::harness::Reply::Json(reply.clone()),
            crate::harness::Reply::Json(reply),
            chat_says("I cannot look that order up."),
        ],
    )
    .await;
    let body = request("Where is 737U2663137?");
    let open = rig.openai_ok("/v1/chat/completions", &body).await;
    assert_eq!(
        open["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
        "get_order_details"
    );
    let strict = rig.openai_ok("/strict/v1/chat/completions", &body).await;
    assert_eq!(
        strict["choices"][0]["message"]["content"],
        "I cannot look that order up."
    );
    // The refusal went back upstream as a tool result inside the gateway.
    let seen = rig.script.seen();
    assert_eq!(seen.len(), 3);
    assert!(
        seen[2].json().to_string().contains("blocked"),
        "{}",
        seen[2].json()
    );
}

#[tokio::test]
async fn a_client_key_selects_its_policy() {
    let config = format!(
        "[chef]\nlevel = 3\n[[policy]]\nname = \"by-key\"\nkeys = [\"{}\"]\nlevel = 1\n",
        harness_key()
    );
    let rig = Rig::start(&config, vec![chat_says("a"), chat_says("b")]).await;
    let body = request("Where is 737U2663137?");
    // The harness sends `Bearer sk-test-secret`: the keyed policy (level 1).
    rig.openai_ok("/v1/chat/completions", &body).await;
    // Another key: the default (level 3).
    let other = rig
        .openai_with_key("/v1/chat/completions", "sk-someone-else", &body)
        .await;
    assert_eq!(other.status(), 200);
    let seen = rig.script.seen();
    assert_eq!(wire_tool_names(&seen[0].json()).len(), 149);
    assert_eq!(wire_tool_names(&seen[1].json()), ["t", "q"]);
    // The key reaches the upstream as it came, and is in no config or log.
    assert_eq!(
        seen[0].headers.get("authorization").unwrap(),
        "Bearer sk-test-secret"
    );
}

#[tokio::test]
async fn an_unknown_route_is_a_404_in_the_api_shape() {
    let rig = Rig::start(
        "[[policy]]\nname = \"a\"\nroute = \"a\"\nlevel = 1\n",
        vec![],
    )
    .await;
    let response = rig
        .openai("/nope/v1/chat/completions", &request("Hi"))
        .await;
    assert_eq!(response.status(), 404);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["error"]["type"], "invalid_request_error");
    assert_eq!(body["error"]["code"], "not_found");
    let response = rig
        .http
        .post(rig.url("/nope/v1/messages"))
        .header("x-api-key", "k")
        .header("anthropic-version", "2023-06-01")
        .json(&json!({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "Hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["type"], "error");
    assert_eq!(body["error"]["type"], "not_found_error");
    assert!(rig.script.seen().is_empty());
}

#[tokio::test]
async fn a_routes_other_paths_pass_through() {
    let rig = Rig::start(
        "[[policy]]\nname = \"a\"\nroute = \"a\"\nlevel = 1\n",
        vec![chat_says("x")],
    )
    .await;
    let response = rig.get_with_key("/a/v1/models", "k").await;
    assert_eq!(response.status(), 200);
    assert_eq!(rig.script.seen()[0].path, "/v1/models");
}

#[test]
fn policy_config_errors_name_their_key() {
    let key = harness_key();
    for (text, named) in [
        ("[[policy]]\nname = \"a\"\nlevel = 1\n", "policy.a.route"),
        ("[[policy]]\nname = \"a b\"\nroute = \"x\"\n", "policy.name"),
        (
            "[[policy]]\nname = \"a\"\nroute = \"v1\"\n",
            "policy.a.route",
        ),
        (
            "[[policy]]\nname = \"a\"\nroute = \"x\"\n[[policy]]\nname = \"b\"\nroute = \"x\"\n",
            "policy.b.route",
        ),
        (
            "[[policy]]\nname = \"a\"\nroute = \"x\"\n[[policy]]\nname = \"a\"\nroute = \"y\"\n",
            "policy.a.name",
        ),
        (
            "[[policy]]\nname = \"a\"\nkeys = [\"sk-live-123\"]\n",
            "policy.a.keys",
        ),
        (
            "[[policy]]\nname = \"a\"\nroute = \"x\"\nlevel = 4\n",
            "policy.a.level",
        ),
        (
            "[[policy]]\nname = \"a\"\nroute = \"x\"\nprune = \"ranked\"\n",
            "policy.a.top_k",
        ),
        (
            "[[policy]]\nname = \"a\"\nroute = \"x\"\nlevle = 1\n",
            "levle",
        ),
        ("[chef]\nlevel = 4\n", "chef.level"),
        (
            "[chef]\nlevel = 3\ncompiled_map = \"/no/such/map.json\"\n",
            "chef.compiled_map",
        ),
    ] {
        let err = chef_serve::Config::parse(text).unwrap_err().to_string();
        assert!(err.contains(named), "{text}: {err}");
    }
    // A policy inherits what it does not set.
    let config = chef_serve::Config::parse(&format!(
        "[chef]\nlevel = 2\nblocked = [\"x\"]\ncache = false\n\
         [[policy]]\nname = \"a\"\nroute = \"r\"\nkeys = [\"{key}\"]\nblocked = [\"y\"]\n"
    ))
    .unwrap();
    let policy = &config.policies[0].config;
    assert_eq!(policy.level, chef_compress::Level::Two);
    assert!(!policy.cache);
    assert_eq!(policy.blocked, ["y"]);
    assert_eq!(config.blocked, ["x"]);
    assert_eq!(config.policy_for(Some("r"), None), Some(0));
    assert_eq!(config.policy_for(None, Some("sk-test-secret")), Some(0));
    assert_eq!(config.policy_for(None, Some("other")), None);
    assert_eq!(config.policy_for(Some("zz"), Some("sk-test-secret")), None);
}
