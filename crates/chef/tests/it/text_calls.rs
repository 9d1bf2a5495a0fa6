//! Issue 26: a small model that writes its tool calls as text (llama.cpp never fills the
//! native `tool_calls`) is usable through chef: the reply parsed by the provider crate,
//! its text calls recovered (opt-in), each recovered call routed like a native one, at
//! level 3 on the 149-tool corpus.

use chef::{Chef, ChefConfig, Routed};
use chef_compress::Level;
use chef_ir::{Content, Message, Target, ToolCall, ToolDefinition};
use serde_json::{Value, json};

use crate::fixtures::real_tools;

fn level3() -> Chef {
    let mut chef = Chef::new(ChefConfig::default().with_level(Level::Three));
    chef.register_tools(real_tools()).unwrap();
    chef.push(Message::user(
        "Geocode 1 Main St, then cancel order 999U123.",
    ));
    chef
}

/// A Chat Completions reply whose message holds only `content` (what llama.cpp's server
/// sends when the model writes its call as text).
fn chat_reply(content: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "qwen2.5-coder-1.5b",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop"
        }]
    }))
    .unwrap()
}

fn parse(chef: &mut Chef, content: &str) -> Message {
    let payload = chef.compile(Target::OpenAiChat).unwrap();
    chef::openai::chat::parse_response(&chat_reply(content), &payload.names)
        .unwrap()
        .message
}

#[track_caller]
fn routed_call(chef: &mut Chef, call: &ToolCall) -> (String, Value) {
    match chef.route(call) {
        Routed::Call(c) => (c.name.as_str().to_owned(), c.arguments),
        other => panic!("expected a call, got {other:?}"),
    }
}

#[test]
fn recovered_calls_route_like_native_ones_at_level_3() {
    let mut chef = level3();
    let geocode = chef.tools().code_for("batch_geocode").unwrap();
    let cancel = chef.tools().code_for("cancel_order").unwrap();
    let geocode_args = json!({"addresses": ["1 Main St"]});
    let cancel_args = json!({"trackingNumber": "999U123"});
    let replies = [
        // `t` with a code, in a fenced block with prose around it.
        (
            format!(
                "I'll geocode it first.\n```json\n{}\n```\nThen I'll report back.",
                json!({"name": "t", "arguments": {"f": geocode, "a": geocode_args}})
            ),
            "batch_geocode",
            geocode_args.clone(),
        ),
        // A real name it read in the map, as a bare object with arguments as a string.
        (
            json!({"name": "cancel_order", "arguments": cancel_args.to_string()}).to_string(),
            "cancel_order",
            cancel_args.clone(),
        ),
        // A code used as the function name, in Qwen's tags.
        (
            format!(
                "<tool_call>\n{}\n</tool_call>",
                json!({"name": cancel, "arguments": cancel_args})
            ),
            "cancel_order",
            cancel_args.clone(),
        ),
        // `parameters` instead of `arguments`.
        (
            json!({"name": "t", "parameters": {"f": geocode, "a": geocode_args}}).to_string(),
            "batch_geocode",
            geocode_args.clone(),
        ),
    ];
    for (i, (content, tool, args)) in replies.iter().enumerate() {
        let mut reply = parse(&mut chef, content);
        assert_eq!(
            reply.tool_calls().count(),
            0,
            "llama.cpp filled no tool_calls"
        );
        assert_eq!(chef.recover_text_calls(&mut reply), 1, "{content}");
        let call = reply.tool_calls().next().cloned().unwrap();
        // Ids continue over the conversation: every reply is pushed with its result.
        assert_eq!(call.id.as_str(), format!("text-call-{i}"));
        let (name, arguments) = routed_call(&mut chef, &call);
        assert_eq!((name.as_str(), &arguments), (*tool, args), "{content}");
        chef.push(reply);
        chef.push(Message::tool_results(vec![chef_ir::ToolResult::text(
            call.id.clone(),
            "done",
        )]));
    }
    // The first reply kept its prose around the call.
    let first = chef
        .history()
        .iter()
        .find(|m| m.tool_calls().any(|c| c.id.as_str() == "text-call-0"))
        .unwrap();
    assert_eq!(
        first.text(),
        "I'll geocode it first.\n\nThen I'll report back."
    );
    // The recovered calls compile back as native calls with their results.
    let body = String::from_utf8(chef.compile(Target::OpenAiChat).unwrap().body).unwrap();
    assert!(body.contains("\"tool_call_id\":\"text-call-3\""), "{body}");
}

#[test]
fn several_calls_in_one_reply_and_a_lookup_route_in_order() {
    let mut chef = level3();
    let cancel = chef.tools().code_for("cancel_order").unwrap();
    let content = format!(
        "<tool_call>\n{}\n</tool_call>\n<tool_call>\n{}\n</tool_call>",
        json!({"name": "q", "arguments": {"c": cancel, "s": "geocode addresses"}}),
        json!({"name": "t", "arguments": {"f": cancel, "a": {}}}),
    );
    let mut reply = parse(&mut chef, &content);
    assert_eq!(chef.recover_text_calls(&mut reply), 2);
    let calls: Vec<ToolCall> = reply.tool_calls().cloned().collect();
    chef.push(reply);
    // `q` with a code and a search text searches the text (item 3).
    match chef.route(&calls[0]) {
        Routed::Lookup { reply, .. } => assert!(reply.contains("batch_geocode"), "{reply}"),
        other => panic!("expected a lookup, got {other:?}"),
    }
    // A recovered call with bad arguments is an argument error naming its tool.
    let routed = chef.route(&calls[1]);
    assert!(routed.is_error(), "{routed:?}");
    assert_eq!(routed.tool(), Some("cancel_order"));
}

#[test]
fn recovery_is_opt_in_and_unparsable_text_stays_text() {
    let mut chef = level3();
    // Single quotes are not JSON (a trailing comma or a comment would be read).
    let content = "```json\n{'name': 't', 'arguments': {'f': 'a0'}}\n```";
    let parsed = parse(&mut chef, content);
    // Without recovery the reply is exactly what the provider crate parsed.
    assert_eq!(parsed.content, vec![Content::text(content)]);
    let mut reply = parsed.clone();
    assert_eq!(chef.recover_text_calls(&mut reply), 0);
    assert_eq!(reply, parsed);
    // Prose with JSON data that is not a call stays text too.
    let data = "The order is {\"name\": \"999U123\", \"status\": \"open\"}.";
    let mut reply = parse(&mut chef, data);
    assert_eq!(chef.recover_text_calls(&mut reply), 0);
    assert_eq!(reply.text(), data);
}

#[test]
fn a_recovered_wire_name_is_the_real_tool() {
    let mut chef = Chef::new(ChefConfig::default().with_level(Level::One));
    chef.register_tools(vec![ToolDefinition::new(
        "timezone.convert",
        json!({"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]}),
    )])
    .unwrap();
    chef.push(Message::user("Oslo time?"));
    let mut reply = parse(
        &mut chef,
        "{\"name\": \"timezone_convert\", \"arguments\": {\"tz\": \"Europe/Oslo\"}}",
    );
    assert_eq!(chef.recover_text_calls(&mut reply), 1);
    let call = reply.tool_calls().next().cloned().unwrap();
    // Mapped to the real name in the reply itself, so the history never holds the
    // wire name (which would rename the tool on the next compile).
    assert_eq!(call.name.as_str(), "timezone.convert");
    assert_eq!(routed_call(&mut chef, &call).0, "timezone.convert");
}

/// Issue 26, item 5: the turn's `response_format` (golden bytes), added to the compiled
/// body; a reply that follows it (the call as the message's JSON content) is recovered and
/// routed.
#[test]
fn a_constrained_reply_is_recovered_and_routed() {
    let mut chef = level3();
    let payload = chef.compile(Target::OpenAiChat).unwrap();
    let format = chef.response_format().unwrap();
    let bytes = serde_json::to_vec(&format).unwrap();
    insta::assert_snapshot!(String::from_utf8(bytes.clone()).unwrap());
    assert_eq!(
        serde_json::to_vec(&chef.response_format().unwrap()).unwrap(),
        bytes
    );
    // One branch per wire tool of the body, in its order.
    let format = serde_json::to_value(&format).unwrap();
    let schema = format["json_schema"]["schema"].clone();
    let body: Value = serde_json::from_slice(&payload.body).unwrap();
    let wire: Vec<Value> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].clone())
        .collect();
    let branches: Vec<Value> = schema["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["properties"]["name"]["const"].clone())
        .collect();
    assert_eq!(branches, wire);
    // The user adds it (and the model) to the body.
    let mut sent = body;
    sent["model"] = json!("qwen2.5-coder-1.5b");
    sent["response_format"] = format;
    assert_eq!(sent["response_format"]["type"], "json_schema");
    // A reply the schema allows, as llama.cpp returns it: the call is the content.
    let code = chef.tools().code_for("batch_geocode").unwrap();
    let content = json!({"name": "t", "arguments": {"f": code, "a": {"addresses": ["1 Main St"]}}})
        .to_string();
    let reply_value: Value = serde_json::from_str(&content).unwrap();
    chef_compress::validate::ArgumentValidator::new("tool_call", &schema)
        .unwrap()
        .validate(&reply_value)
        .unwrap();
    let mut reply = chef::openai::chat::parse_response(&chat_reply(&content), &payload.names)
        .unwrap()
        .message;
    assert_eq!(chef.recover_text_calls(&mut reply), 1);
    assert_eq!(reply.content.len(), 1, "nothing but the call");
    let call = reply.tool_calls().next().cloned().unwrap();
    let (name, args) = routed_call(&mut chef, &call);
    assert_eq!(
        (name.as_str(), args),
        ("batch_geocode", json!({"addresses": ["1 Main St"]}))
    );
}

/// Calls written the Python way (Llama 3.2's pythonic calls, or a small model's
/// `find_tools(query=…)`; session 41's unconstrained pilot ended a task on one) are
/// recovered when the whole reply is such calls of tools the request offered; prose that
/// mentions a call, or a name the request did not offer, stays text.
#[test]
fn pythonic_calls_of_offered_tools_are_recovered() {
    let mut chef = Chef::new(
        ChefConfig::default()
            .with_level(Level::One)
            .with_prune(chef::PrunePolicy::discover(5)),
    );
    chef.register_tools(real_tools()).unwrap();
    chef.push(Message::user("What is the diesel price in Ohio this week?"));
    let mut reply = parse(
        &mut chef,
        "find_tools(query=\"schedule an order\", limit=2)",
    );
    assert_eq!(chef.recover_text_calls(&mut reply), 1);
    let call = reply.tool_calls().next().cloned().unwrap();
    assert_eq!(call.name.as_str(), "find_tools");
    chef.push(reply);
    assert!(matches!(chef.route(&call), Routed::Lookup { .. }));

    let mut reply = parse(&mut chef, "[get_diesel_price()]");
    assert_eq!(chef.recover_text_calls(&mut reply), 1);
    let call = reply.tool_calls().next().cloned().unwrap();
    chef.push(reply);
    let Routed::Call(routed) = chef.route(&call) else {
        panic!("{call:?}");
    };
    assert_eq!(routed.name.as_str(), "get_diesel_price");

    // Values passed by position take the parameters in the order the model read them
    // (session 42's unconstrained run ended tasks on `find_tools("convert distance")`).
    let mut reply = parse(&mut chef, "find_tools(\"diesel prices\", 3)");
    assert_eq!(chef.recover_text_calls(&mut reply), 1);
    let call = reply.tool_calls().next().cloned().unwrap();
    assert_eq!(
        call.arguments,
        json!({"query": "diesel prices", "limit": 3})
    );
    chef.push(reply);
    assert!(matches!(chef.route(&call), Routed::Lookup { .. }));

    for text in [
        "You could call get_diesel_price() for that.",
        "print(value='x')",
        "find_tools('a', 1, 'more than it takes', 4)",
    ] {
        let mut reply = parse(&mut chef, text);
        assert_eq!(chef.recover_text_calls(&mut reply), 0, "{text}");
        assert!(
            matches!(&reply.content[..], [Content::Text { .. }]),
            "{text}"
        );
    }
}
