//! Golden files (level 0): every byte that reaches Anthropic for the shared fixtures.

use chef_anthropic::{
    CompileOptions, KeepLoaded, ToolSearch, compile, compose_tool_search, envelope,
};
use chef_ir::{Message, NativeTool, Request, Target, ToolDefinition};
use serde_json::json;

use crate::{compiled, conversation, real_tools};

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap()
}

#[test]
fn conversation_tool_heavy_level_0() {
    let request = conversation();
    let c = compiled(&request);
    insta::assert_snapshot!("conversation_tool_heavy_level_0", text(c.to_vec().unwrap()));
    insta::assert_debug_snapshot!("conversation_tool_heavy_level_0_notices", c.notices);
}

#[test]
fn conversation_tool_heavy_with_thinking_on_degrades_the_prefill() {
    let request = conversation();
    let options = CompileOptions::default()
        .with_model("claude-sonnet-4-5")
        .with_max_tokens(4096)
        .with_thinking(Some(chef_anthropic::wire::ThinkingConfig::enabled(2048)));
    let c = compile(&request, &options).unwrap();
    insta::assert_snapshot!(
        "conversation_tool_heavy_thinking",
        text(c.to_vec().unwrap())
    );
}

#[test]
fn real_mcp_tools_level_0_envelope() {
    let tools = real_tools();
    assert_eq!(tools.len(), 149);
    let env = envelope(&tools, None, &CompileOptions::default());
    insta::assert_snapshot!(
        "real_mcp_tools_level_0",
        serde_json::to_string(&env).unwrap()
    );
}

#[test]
fn envelope_with_a_cached_preamble_and_one_hour_ttl() {
    let tools = [ToolDefinition::new(
        "lookup",
        json!({"type":"object","properties":{"code":{"type":"string"}}}),
    )
    .with_description("Call a tool by code.")];
    let options = CompileOptions::default()
        .with_cache_preamble(true)
        .with_cache_ttl(Some(chef_anthropic::wire::CacheTtl::OneHour));
    let env = envelope(&tools, Some("Tool codes:\nA1 search"), &options);
    insta::assert_snapshot!("envelope_preamble_1h", serde_json::to_string(&env).unwrap());
}

#[test]
fn function_tools_deferred_tools_and_the_search_server_tool() {
    let tools: Vec<ToolDefinition> = real_tools().into_iter().take(6).collect();
    let set = compose_tool_search(tools, KeepLoaded::First(2), ToolSearch::Regex).unwrap();
    let request = set.into_request(
        Request::new(vec![
            Message::system("You route logistics questions.").with_cache_breakpoint(true),
            Message::user("Which hubs are active?"),
        ])
        .with_native_tools(vec![NativeTool {
            targets: vec![Target::OpenAiResponses],
            value: json!({"type": "tool_search"}),
        }]),
    );
    let c = compiled(&request);
    insta::assert_snapshot!("tool_search_mix", text(c.to_vec().unwrap()));
    insta::assert_debug_snapshot!("tool_search_mix_notices", c.notices);
}
