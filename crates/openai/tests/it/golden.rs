//! Golden files (level 0) and determinism, per target.

use chef_ir::{
    Message, NameRule, NativeTool, Request, Target, ToolDefinition, ToolName, WireNames,
};
use chef_openai::{CompileOptions, chat, responses};
use serde_json::json;

use crate::{
    chat_bytes,
    child::{child_output, print_for_parent},
    real_tools, responses_bytes, tool_heavy,
};

/// Function tools, deferred tools and the search server tools of both providers.
fn tool_search_request() -> Request {
    let tools = real_tools();
    let mut chosen: Vec<ToolDefinition> = tools.into_iter().take(4).collect();
    for tool in chosen.iter_mut().skip(1) {
        tool.defer_loading = true;
    }
    Request::new(vec![Message::system("You are terse."), Message::user("List active locations.")])
        .with_tools(chosen)
        .with_native_tools(vec![
            NativeTool {
                targets: vec![Target::Anthropic],
                value: json!({"type":"tool_search_tool_regex_20251119","name":"tool_search_tool_regex"}),
            },
            NativeTool { targets: vec![Target::OpenAiResponses], value: json!({"type":"tool_search"}) },
        ])
}

#[test]
fn requests_and_notices_for_the_tool_heavy_conversation() {
    let request = tool_heavy();
    let options = CompileOptions::default();
    for (target, bytes, notices) in [
        (
            "chat",
            chat_bytes(&request),
            chat::compile(&request, &options).unwrap().notices,
        ),
        (
            "responses",
            responses_bytes(&request),
            responses::compile(&request, &options).unwrap().notices,
        ),
    ] {
        insta::assert_snapshot!(
            format!("{target}_request_for_the_tool_heavy_conversation"),
            bytes
        );
        insta::assert_debug_snapshot!(
            format!("{target}_notices_for_the_tool_heavy_conversation"),
            notices
        );
    }
}

#[test]
fn chat_request_for_the_tool_heavy_conversation_with_thinking_as_text() {
    let options = CompileOptions::default().with_thinking_as_text(true);
    let request = tool_heavy();
    let compiled = chat::compile(&request, &options).unwrap();
    insta::assert_snapshot!(String::from_utf8(chat::to_vec(&compiled).unwrap()).unwrap());
}

#[test]
fn chat_envelope_of_the_real_tool_corpus() {
    let (bytes, notices) = chat::envelope(&real_tools(), "").unwrap();
    assert!(
        notices
            .iter()
            .all(|n| matches!(n, chef_openai::Notice::ToolRenamed { .. }))
    );
    insta::assert_snapshot!(String::from_utf8(bytes).unwrap());
}

#[test]
fn responses_envelope_of_the_real_tool_corpus() {
    let (bytes, _) = responses::envelope(&real_tools(), "").unwrap();
    insta::assert_snapshot!(String::from_utf8(bytes).unwrap());
}

#[test]
fn envelopes_carry_the_system_preamble() {
    let tools = vec![ToolDefinition::new("a", json!({"type":"object"}))];
    let (bytes, _) = chat::envelope(&tools, "MAP").unwrap();
    assert_eq!(
        String::from_utf8(bytes).unwrap(),
        r#"{"tools":[{"type":"function","function":{"name":"a","parameters":{"type":"object"}}}],"messages":[{"role":"system","content":"MAP"}]}"#
    );
    let (bytes, _) = responses::envelope(&tools, "MAP").unwrap();
    assert_eq!(
        String::from_utf8(bytes).unwrap(),
        r#"{"tools":[{"type":"function","name":"a","parameters":{"type":"object"},"strict":false}],"instructions":"MAP","input":[]}"#
    );
}

#[test]
fn requests_mixing_function_deferred_and_search_tools() {
    let request = tool_search_request();
    for (target, bytes) in [
        ("chat", chat_bytes(&request)),
        ("responses", responses_bytes(&request)),
    ] {
        insta::assert_snapshot!(
            format!("{target}_request_mixing_function_deferred_and_search_tools"),
            bytes
        );
    }
}

#[test]
fn the_same_request_compiles_to_the_same_bytes_twice() {
    let request = tool_heavy();
    assert_eq!(chat_bytes(&request), chat_bytes(&request.clone()));
    assert_eq!(responses_bytes(&request), responses_bytes(&request.clone()));
}

#[test]
fn wire_names_do_not_depend_on_tool_order() {
    let mut tools = real_tools();
    let forward: Vec<ToolName> = tools.iter().map(|t| t.name.clone()).collect();
    tools.reverse();
    let backward: Vec<ToolName> = tools.iter().map(|t| t.name.clone()).collect();
    let a = WireNames::new(&forward, NameRule::OPENAI);
    let b = WireNames::new(&backward, NameRule::OPENAI);
    for name in &forward {
        assert_eq!(a.to_wire(name.as_str()), b.to_wire(name.as_str()));
    }
}

const DUMP_ENV: &str = "CHEF_OPENAI_DUMP_BYTES";

/// Prints the compiled bytes when run as the child of
/// `bytes_are_identical_across_processes`; on its own it checks that both bodies compile.
#[test]
fn dump_bytes_for_another_process() {
    let bytes = format!(
        "{}\n{}",
        chat_bytes(&tool_heavy()),
        responses_bytes(&tool_heavy())
    );
    assert!(bytes.len() > 1000);
    print_for_parent(DUMP_ENV, &bytes);
}

#[test]
fn bytes_are_identical_across_processes() {
    let child = child_output("golden::dump_bytes_for_another_process", DUMP_ENV);
    let here = format!(
        "{}\n{}",
        chat_bytes(&tool_heavy()),
        responses_bytes(&tool_heavy())
    );
    assert_eq!(child, here);
}
