//! Golden files (insta): the exact bytes sent to Gemini for the shared fixtures.

use chef_gemini::{CompileOptions, envelope};
use chef_ir::{Message, NativeTool, Request, Target, ToolDefinition};
use serde_json::json;

use crate::{compile, conversation, corpus, text};

#[test]
fn gemini_request_for_the_tool_heavy_conversation() {
    let request = conversation();
    let compiled = compile(&request);
    insta::assert_snapshot!("conversation_tool_heavy", text(&compiled));
    let notices: Vec<String> = compiled.notices.iter().map(ToString::to_string).collect();
    insta::assert_snapshot!("conversation_tool_heavy_notices", notices.join("\n"));
}

#[test]
fn gemini_envelope_for_the_real_mcp_tools() {
    let tools = corpus();
    let env = envelope(&tools, "", &CompileOptions::default()).unwrap();
    assert!(env.names.is_identity());
    insta::assert_snapshot!(
        "real_mcp_tools_level0",
        serde_json::to_string(&env).unwrap()
    );
}

#[test]
fn gemini_envelope_with_a_preamble() {
    let tools = [ToolDefinition::new(
        "t",
        json!({"type": "object", "properties": {"c": {"type": "string"}}}),
    )
    .with_description("Dispatch.")];
    let env = envelope(
        &tools,
        "<toolmap>\na0 = search\n</toolmap>",
        &CompileOptions::default(),
    )
    .unwrap();
    insta::assert_snapshot!(
        "envelope_with_preamble",
        serde_json::to_string(&env).unwrap()
    );
}

/// Issue 12: function tools, deferred tools and provider search tools in one request.
#[test]
fn gemini_request_mixing_function_deferred_and_native_tools() {
    let mut tools = conversation().tools;
    tools.push(
        ToolDefinition::new(
            "archive_fetch",
            json!({"type": "object", "properties": {"id": {"type": "string"}}}),
        )
        .with_defer_loading(true),
    );
    let request = Request::new(vec![Message::system("Be brief."), Message::user("Find the Oslo hub.")])
        .with_tools(tools)
        .with_native_tools(vec![
            NativeTool {
                targets: vec![Target::Anthropic],
                value: json!({"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}),
            },
            NativeTool {
                targets: vec![Target::Gemini],
                value: json!({"googleSearch": {}}),
            },
        ]);
    let compiled = compile(&request);
    insta::assert_snapshot!("mixed_native_tools", text(&compiled));
    let notices: Vec<String> = compiled.notices.iter().map(ToString::to_string).collect();
    insta::assert_snapshot!("mixed_native_tools_notices", notices.join("\n"));
}
