//! Response parsing: one realistic response per content kind, unknown kinds kept verbatim
//! and compiled back byte for byte.

use chef_anthropic::{CompileOptions, Error, compile, parse_response, wire::StopReason};
use chef_ir::{Content, Message, NameRule, Request, Target, ToolCall, ToolName, WireNames};
use serde_json::json;

use crate::compiled;

fn names() -> WireNames {
    WireNames::new(
        &[
            ToolName::from("triangle_properties.get"),
            ToolName::from("get_weather"),
        ],
        NameRule::ANTHROPIC,
    )
}

#[test]
fn text_thinking_and_tool_use_parse_into_typed_content_with_real_names() {
    let body = br#"{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5",
      "content":[
        {"type":"thinking","thinking":"Need the area.","signature":"EqQBCkYI"},
        {"type":"redacted_thinking","data":"c2VjcmV0"},
        {"type":"text","text":"Computing."},
        {"type":"tool_use","id":"toolu_01","name":"triangle_properties_get","input":{"c":5,"a":3,"b":4}}
      ],
      "stop_reason":"tool_use","stop_sequence":null,
      "usage":{"input_tokens":1200,"output_tokens":80,"cache_creation_input_tokens":0,"cache_read_input_tokens":1100}}"#;
    let parsed = parse_response(body, &names()).unwrap();
    assert_eq!(parsed.id, "msg_01");
    assert_eq!(parsed.model, "claude-sonnet-4-5");
    assert_eq!(parsed.stop_reason, Some(StopReason::TOOL_USE));
    assert_eq!(parsed.usage.cache_read_input_tokens, Some(1100));
    assert_eq!(
        parsed.message.content,
        vec![
            Content::Thinking {
                thinking: "Need the area.".into(),
                signature: Some("EqQBCkYI".into())
            },
            Content::RedactedThinking {
                data: "c2VjcmV0".into()
            },
            Content::text("Computing."),
            Content::ToolCall(ToolCall::new(
                "toolu_01",
                "triangle_properties.get",
                json!({"c":5,"a":3,"b":4})
            )),
        ]
    );
    // Key order of the arguments is the order in the response.
    let call = parsed.message.tool_calls().next().unwrap();
    let keys: Vec<&String> = call.arguments.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["c", "a", "b"]);
}

const SERVER_USE: &str = r#"{"type":"server_tool_use","id":"srvtoolu_01","name":"web_search","input":{"query":"oslo weather"}}"#;
const SEARCH_RESULT: &str = r#"{"type":"web_search_tool_result","tool_use_id":"srvtoolu_01","content":[{"type":"web_search_result","url":"https://met.no/oslo","title":"Oslo","encrypted_content":"EqgBCioI","page_age":"April 30, 2025"}]}"#;
const CITED_TEXT: &str = r#"{"type":"text","text":"It snows in Oslo.","citations":[{"type":"web_search_result_location","url":"https://met.no/oslo","title":"Oslo","encrypted_index":"Eo8BCioI","cited_text":"Snow"}]}"#;
const TOOL_SEARCH_USE: &str = r#"{"type":"server_tool_use","id":"srvtoolu_02","name":"tool_search_tool_regex","input":{"query":"weather"}}"#;
const TOOL_SEARCH_RESULT: &str = r#"{"type":"tool_search_tool_result","tool_use_id":"srvtoolu_02","content":{"type":"tool_search_tool_search_result","tool_references":[{"type":"tool_reference","tool_name":"get_weather"}]}}"#;

#[test]
fn server_tool_blocks_are_kept_verbatim_and_compile_back_byte_for_byte() {
    let body = format!(
        r#"{{"id":"msg_02","type":"message","role":"assistant","model":"m","content":[{SERVER_USE},{SEARCH_RESULT},{CITED_TEXT},{TOOL_SEARCH_USE},{TOOL_SEARCH_RESULT}],"stop_reason":"end_turn","usage":{{"input_tokens":1,"output_tokens":1}}}}"#
    );
    let parsed = parse_response(body.as_bytes(), &names()).unwrap();
    assert_eq!(parsed.message.content.len(), 5);
    for content in &parsed.message.content {
        assert!(
            matches!(
                content,
                Content::Unknown {
                    target: Some(Target::Anthropic),
                    ..
                }
            ),
            "{content:?}"
        );
    }

    let request = Request::new(vec![Message::user("Weather in Oslo?"), parsed.message]);
    let bytes = String::from_utf8(compiled(&request).to_vec().unwrap()).unwrap();
    let expected = format!(
        r#"{{"role":"assistant","content":[{SERVER_USE},{SEARCH_RESULT},{CITED_TEXT},{TOOL_SEARCH_USE},{TOOL_SEARCH_RESULT}]}}"#
    );
    assert!(bytes.contains(&expected), "{bytes}");
}

#[test]
fn unknown_stop_reasons_survive() {
    let body = br#"{"id":"m","type":"message","role":"assistant","content":[],"stop_reason":"model_context_window_exceeded","usage":{"input_tokens":0,"output_tokens":0}}"#;
    let parsed = parse_response(body, &WireNames::default()).unwrap();
    assert_eq!(
        parsed.stop_reason,
        Some(StopReason::new("model_context_window_exceeded"))
    );
    assert_eq!(
        parsed.stop_reason.unwrap().as_str(),
        "model_context_window_exceeded"
    );
}

#[test]
fn an_error_body_is_a_typed_api_error() {
    let body = br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    match parse_response(body, &WireNames::default()).unwrap_err() {
        Error::Api { kind, message } => {
            assert_eq!(kind, "overloaded_error");
            assert_eq!(message, "Overloaded");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_body_that_is_not_json_keeps_the_raw_body() {
    match parse_response(b"<html>502</html>", &WireNames::default()).unwrap_err() {
        Error::InvalidJson { body, .. } => assert_eq!(body, "<html>502</html>"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_malformed_known_block_is_an_error_not_an_unknown() {
    let body = br#"{"id":"m","type":"message","role":"assistant","content":[{"type":"tool_use","name":"f","input":{}}],"usage":{"input_tokens":0,"output_tokens":0}}"#;
    match parse_response(body, &WireNames::default()).unwrap_err() {
        Error::MalformedBlock { kind, path, .. } => {
            assert_eq!(kind, "tool_use");
            assert_eq!(path, "/content/0");
        }
        other => panic!("{other:?}"),
    }
    let body = br#"{"id":"m","type":"message","role":"assistant","content":[{"text":"no type"}],"usage":{"input_tokens":0,"output_tokens":0}}"#;
    assert!(matches!(
        parse_response(body, &WireNames::default()).unwrap_err(),
        Error::Shape { .. }
    ));
}

#[test]
fn a_reply_missing_a_top_level_member_says_where() {
    let body = br#"{"type":"message","role":"assistant","content":[],"usage":{"input_tokens":0,"output_tokens":0}}"#;
    let err = parse_response(body, &WireNames::default()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("unexpected JSON at the top level: ") && text.contains("`id`"),
        "{text}"
    );
}

#[test]
fn the_compiled_names_table_maps_replies_back() {
    let request =
        Request::new(vec![Message::user("q")]).with_tools(vec![chef_ir::ToolDefinition::new(
            "a/b c",
            json!({"type":"object"}),
        )]);
    let c = compile(&request, &CompileOptions::default()).unwrap();
    let wire = c.names.to_wire("a/b c").to_owned();
    let body = format!(
        r#"{{"id":"m","type":"message","role":"assistant","content":[{{"type":"tool_use","id":"t","name":"{wire}","input":{{}}}}],"usage":{{"input_tokens":0,"output_tokens":0}}}}"#
    );
    let parsed = parse_response(body.as_bytes(), &c.names).unwrap();
    assert_eq!(parsed.message.tool_calls().next().unwrap().name, "a/b c");
}
