//! `ChefConfig::with_answer_tool`: the owned `final_answer` tool through which a model ends
//! its task. Offered last when on, never when off or when the agent has a tool of that
//! name; a call to it becomes the reply's text in `recover_text_calls`, so the loop ends
//! on that reply; the gate holds; `route` of a call that was not recovered tells the model
//! to answer in text. And the rule it shares with `find_tools`: an agent's tool of the
//! same name gives no second entry on the wire, and is the one called.

use chef::{Chef, ChefConfig, PrunePolicy, Routed};
use chef_ir::{Content, Message, Target, ToolCall, ToolDefinition};
use serde_json::json;

fn catalogue() -> Vec<ToolDefinition> {
    ["get_weather", "get_forecast", "send_email", "read_file"]
        .map(|name| ToolDefinition::new(name, json!({"type": "object"})))
        .to_vec()
}

fn session(answer_tool: bool, prune: PrunePolicy) -> Chef {
    let mut chef = Chef::new(
        ChefConfig::default()
            .with_answer_tool(answer_tool)
            .with_prune(prune),
    );
    chef.register_tools(catalogue()).unwrap();
    chef.push(Message::user("Weather in Oslo?"));
    chef
}

fn wire_tools(chef: &mut Chef) -> Vec<String> {
    let payload = chef.compile(Target::OpenAiChat).unwrap();
    payload
        .meta
        .wire_tools
        .iter()
        .map(|t| t.as_str().to_owned())
        .collect()
}

fn discover() -> PrunePolicy {
    PrunePolicy::discover(2)
}

/// A session over [`catalogue`] and an agent tool `(name, its one string parameter, its
/// description)` that has the name of a tool chef offers, with `request` pushed.
fn with_agent_tool(
    config: ChefConfig,
    (name, parameter, what): (&str, &str, &str),
    request: &str,
) -> Chef {
    let mut chef = Chef::new(config);
    let mut tools = catalogue();
    tools.push(
        ToolDefinition::new(
            name,
            json!({"type": "object", "properties": {parameter: {"type": "string"}}}),
        )
        .with_description(what),
    );
    chef.register_tools(tools).unwrap();
    chef.push(Message::user(request));
    chef
}

const ANSWER_TEXT: &str = r#"{"name": "final_answer", "arguments": {"answer": "Sunny in Oslo."}}"#;

#[test]
fn final_answer_is_offered_last_and_only_when_on() {
    let mut on = session(true, PrunePolicy::All);
    // The agent's tools in the compressed (name) order, then chef's.
    assert_eq!(
        wire_tools(&mut on),
        [
            "get_forecast",
            "get_weather",
            "read_file",
            "send_email",
            "final_answer"
        ]
    );
    let mut off = session(false, PrunePolicy::All);
    assert!(!wire_tools(&mut off).contains(&"final_answer".to_owned()));
    // Under discovery it follows find_tools, and the list keeps its place turn after turn.
    let mut found = session(true, discover());
    let first = wire_tools(&mut found);
    assert_eq!(first[first.len() - 2..], ["find_tools", "final_answer"]);
    found.push(Message::assistant("Let me check."));
    found.push(Message::user("And tomorrow?"));
    let second = wire_tools(&mut found);
    assert_eq!(second[second.len() - 2..], ["find_tools", "final_answer"]);
}

#[test]
fn a_final_answer_call_becomes_the_replys_text_and_the_loop_ends() {
    let mut chef = session(true, PrunePolicy::All);
    chef.compile(Target::OpenAiChat).unwrap();
    // Written as text (a constrained small model) ...
    let mut reply = Message::assistant(ANSWER_TEXT);
    chef.recover_text_calls(&mut reply);
    assert_eq!(reply.tool_calls().count(), 0);
    assert_eq!(reply.text(), "Sunny in Oslo.");
    // ... or as a native call, its arguments as JSON text (OpenAI's way).
    let mut native = Message::assistant_with(vec![
        Content::text("Done."),
        Content::ToolCall(ToolCall::new(
            "c1",
            "final_answer",
            json!(r#"{"answer": "Sunny."}"#),
        )),
    ]);
    chef.recover_text_calls(&mut native);
    assert_eq!(native.tool_calls().count(), 0);
    assert_eq!(native.text(), "Done.Sunny.");
    // Other calls are untouched.
    let mut other = Message::assistant(r#"{"name": "get_weather", "arguments": {}}"#);
    assert_eq!(chef.recover_text_calls(&mut other), 1);
    assert_eq!(
        other.tool_calls().next().unwrap().name.as_str(),
        "get_weather"
    );
}

#[test]
fn without_the_setting_a_final_answer_call_is_an_unknown_tool() {
    let mut chef = session(false, PrunePolicy::All);
    chef.compile(Target::OpenAiChat).unwrap();
    let mut reply = Message::assistant(ANSWER_TEXT);
    assert_eq!(chef.recover_text_calls(&mut reply), 1);
    let call = reply.tool_calls().next().cloned().unwrap();
    assert!(matches!(chef.route(&call), Routed::Error { .. }));
}

#[test]
fn a_blocked_final_answer_stays_a_call_and_is_refused() {
    let mut chef = session(true, PrunePolicy::All);
    chef.tools_mut().set_blocked(["final_answer"]);
    chef.compile(Target::OpenAiChat).unwrap();
    let mut reply = Message::assistant(ANSWER_TEXT);
    assert_eq!(chef.recover_text_calls(&mut reply), 1);
    let call = reply.tool_calls().next().cloned().unwrap();
    assert!(
        matches!(chef.route(&call), Routed::Blocked { .. }),
        "a blocked final_answer is never taken as the answer"
    );
    assert!(chef.tools().unmatched_blocked().is_empty());
}

#[test]
fn a_routed_final_answer_tells_the_model_to_reply_in_text() {
    let mut chef = session(true, PrunePolicy::All);
    chef.compile(Target::OpenAiChat).unwrap();
    let call = ToolCall::new("c1", "final_answer", json!({"answer": "Sunny."}));
    match chef.route(&call) {
        Routed::Lookup { reply, .. } => assert!(reply.contains("plain text"), "{reply}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_agent_tool_named_final_answer_is_the_one_offered_and_called() {
    let mut chef = with_agent_tool(
        ChefConfig::default().with_answer_tool(true),
        ("final_answer", "answer", "The agent's own."),
        "Weather in Oslo?",
    );
    let names = wire_tools(&mut chef);
    assert_eq!(names.iter().filter(|n| *n == "final_answer").count(), 1);
    let mut reply = Message::assistant(ANSWER_TEXT);
    assert_eq!(chef.recover_text_calls(&mut reply), 1);
    let call = reply.tool_calls().next().cloned().unwrap();
    let Routed::Call(routed) = chef.route(&call) else {
        panic!("the agent's final_answer is dispatched")
    };
    assert_eq!(routed.name.as_str(), "final_answer");
}

#[test]
fn the_constrained_format_has_a_final_answer_branch() {
    let mut chef = session(true, discover());
    chef.compile(Target::OpenAiChat).unwrap();
    let format = serde_json::to_value(chef.response_format().unwrap()).unwrap();
    let branches = format["json_schema"]["schema"]["anyOf"].as_array().unwrap();
    assert!(
        branches
            .iter()
            .any(|b| b["properties"]["name"]["const"] == "final_answer"),
        "{format}"
    );
}

#[test]
fn an_agent_tool_named_find_tools_is_the_one_offered_and_called_under_discovery() {
    let mut chef = with_agent_tool(
        ChefConfig::default().with_prune(discover()),
        (
            "find_tools",
            "query",
            "Search the agent's own tool registry for a tool.",
        ),
        "Find me a tool to search the registry",
    );
    let names = wire_tools(&mut chef);
    assert!(
        names.iter().filter(|n| *n == "find_tools").count() <= 1,
        "no name goes on the wire twice: {names:?}"
    );
    let call = ToolCall::new("c1", "find_tools", json!({"query": "weather"}));
    match chef.route(&call) {
        // Offered (ranked in the list): the agent's tool is dispatched, not chef's search.
        Routed::Call(routed) => assert_eq!(routed.name.as_str(), "find_tools"),
        // Not among the ranked tools: refused like any tool the list lacks, never
        // answered by chef's search.
        Routed::Error { .. } => assert!(!names.contains(&"find_tools".to_owned())),
        other => panic!("{other:?}"),
    }
}
