//! Issue 26: the `response_format` that constrains a Chat Completions reply to one call of
//! the request's tools: golden bytes, determinism, wire names, the one-tool schema.

use chef_ir::{NameRule, ToolDefinition, ToolName, WireNames};
use chef_openai::chat::{self, wire::ResponseFormat};
use serde_json::{Value, json};

fn bytes(format: &ResponseFormat) -> String {
    String::from_utf8(serde_json::to_vec(format).unwrap()).unwrap()
}

/// Level 3's dispatcher as chef-compress sends it (`t` and `q`), without descriptions.
fn dispatcher() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition::new(
            "t",
            json!({"type": "object", "properties": {"f": {"type": "string"}, "a": {"type": "object"}}, "required": ["f"]}),
        ),
        ToolDefinition::new(
            "q",
            json!({"type": "object", "properties": {"c": {"type": "string"}, "s": {"type": "string"}}}),
        ),
    ]
}

#[test]
fn response_format_for_the_level_3_dispatcher() {
    let format = chat::response_format(&dispatcher(), &WireNames::default()).unwrap();
    insta::assert_snapshot!(bytes(&format));
}

#[test]
fn response_format_for_one_tool_uses_its_own_schema() {
    let tool = ToolDefinition::new(
        "timezone.convert",
        json!({"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]}),
    );
    let names = WireNames::new(&[ToolName::from("timezone.convert")], NameRule::OPENAI);
    let format = chat::response_format(std::slice::from_ref(&tool), &names).unwrap();
    insta::assert_snapshot!(bytes(&format));
    let value = serde_json::to_value(&format).unwrap();
    let schema = &value["json_schema"]["schema"];
    // The wire name, as the model sees the tool.
    assert_eq!(
        schema["properties"]["name"]["enum"],
        json!(["timezone_convert"])
    );
    assert_eq!(schema["properties"]["arguments"], tool.input_schema);
}

#[test]
fn several_tools_list_their_wire_names_in_order_with_open_arguments() {
    let tools: Vec<ToolDefinition> = ["b.read", "a/write", "c"]
        .into_iter()
        .map(|n| ToolDefinition::new(n, json!({"type": "object"})))
        .collect();
    let names = WireNames::new(tools.iter().map(|t| &t.name), NameRule::OPENAI);
    let value = serde_json::to_value(chat::response_format(&tools, &names).unwrap()).unwrap();
    let schema = &value["json_schema"]["schema"];
    assert_eq!(
        schema["properties"]["name"]["enum"],
        json!(["b_read", "a_write", "c"])
    );
    assert_eq!(schema["properties"]["arguments"], json!({"type": "object"}));
    assert_eq!(schema["required"], json!(["name", "arguments"]));
    assert_eq!(schema["additionalProperties"], json!(false));
    assert_eq!(value["json_schema"]["name"], chat::TOOL_CALL_FORMAT);
    assert_eq!(value["json_schema"]["strict"], json!(false));
}

#[test]
fn the_bytes_are_deterministic_and_no_tools_give_no_format() {
    let a = bytes(&chat::response_format(&dispatcher(), &WireNames::default()).unwrap());
    let b = bytes(&chat::response_format(&dispatcher(), &WireNames::default()).unwrap());
    assert_eq!(a, b);
    // It reads back as the same wire type.
    let back: ResponseFormat = serde_json::from_str(&a).unwrap();
    assert_eq!(bytes(&back), a);
    assert!(chat::response_format(&[], &WireNames::default()).is_none());
    // A tool whose schema is not an object (a bare `true`) gets an open object.
    let odd = ToolDefinition::new("x", Value::Bool(true));
    let value = serde_json::to_value(chat::response_format(&[odd], &WireNames::default())).unwrap();
    assert_eq!(
        value["json_schema"]["schema"]["properties"]["arguments"],
        json!({"type": "object"})
    );
}
