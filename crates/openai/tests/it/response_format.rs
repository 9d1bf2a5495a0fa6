//! Issue 26: the `response_format` that constrains a Chat Completions reply to one call of
//! the request's tools: golden bytes, determinism, wire names, the one-tool schema.
//! Issue 43: one branch per tool, its name fixed and its own schema closed; the answer
//! branch of `response_format_or_answer`.

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
    // The wire name, as the model sees the tool, and its own schema, closed.
    assert_eq!(
        schema["properties"]["name"]["const"],
        json!("timezone_convert")
    );
    let mut closed = tool.input_schema.clone();
    closed["additionalProperties"] = json!(false);
    assert_eq!(schema["properties"]["arguments"], closed);
}

#[test]
fn several_tools_get_one_branch_each_in_order_with_their_own_arguments() {
    let tools: Vec<ToolDefinition> = ["b.read", "a/write", "c"]
        .into_iter()
        .map(|n| ToolDefinition::new(n, json!({"type": "object"})))
        .collect();
    let names = WireNames::new(tools.iter().map(|t| &t.name), NameRule::OPENAI);
    let value = serde_json::to_value(chat::response_format(&tools, &names).unwrap()).unwrap();
    let branches = value["json_schema"]["schema"]["anyOf"].as_array().unwrap();
    let consts: Vec<&Value> = branches
        .iter()
        .map(|b| &b["properties"]["name"]["const"])
        .collect();
    assert_eq!(consts, [&json!("b_read"), &json!("a_write"), &json!("c")]);
    for branch in branches {
        // A schema without properties stays open: resolve judges it after recovery.
        assert_eq!(branch["properties"]["arguments"], json!({"type": "object"}));
        assert_eq!(branch["required"], json!(["name", "arguments"]));
        assert_eq!(branch["additionalProperties"], json!(false));
    }
    assert_eq!(value["json_schema"]["name"], chat::TOOL_CALL_FORMAT);
    assert_eq!(value["json_schema"]["strict"], json!(false));
}

#[test]
fn a_closed_schema_keeps_what_a_grammar_needs_and_drops_the_rest() {
    let tool = ToolDefinition::new(
        "search",
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
            "properties": {
                "q": {"type": "string", "minLength": 1, "pattern": "^.+$", "description": "What to find."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
                "filter": {"type": "object", "properties": {"kind": {"type": "string", "enum": ["a", "b"]}}},
                "tags": {"type": "array", "items": {"type": "object", "properties": {"t": {"type": "string"}}}},
                "extra": {"type": "object", "additionalProperties": {"type": "string"}}
            },
            "required": ["q", "ghost"]}),
    );
    let value = serde_json::to_value(
        chat::response_format(std::slice::from_ref(&tool), &WireNames::default()).unwrap(),
    )
    .unwrap();
    let arguments = &value["json_schema"]["schema"]["properties"]["arguments"];
    assert_eq!(
        *arguments,
        json!({"type": "object",
            "properties": {
                "q": {"type": "string", "minLength": 1, "description": "What to find."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                "filter": {"type": "object", "properties": {"kind": {"type": "string", "enum": ["a", "b"]}}, "additionalProperties": false},
                "tags": {"type": "array", "items": {"type": "object", "properties": {"t": {"type": "string"}}, "additionalProperties": false}},
                "extra": {"type": "object", "additionalProperties": {"type": "string"}}
            },
            "required": ["q"],
            "additionalProperties": false})
    );
}

#[test]
fn the_answer_branch_lets_a_model_finish_without_a_call() {
    let value = serde_json::to_value(
        chat::response_format_or_answer(&dispatcher(), &WireNames::default()).unwrap(),
    )
    .unwrap();
    let branches = value["json_schema"]["schema"]["anyOf"].as_array().unwrap();
    assert_eq!(branches.len(), 3);
    assert_eq!(
        branches[2],
        json!({"type": "object", "properties": {"answer": {"type": "string"}},
            "required": ["answer"], "additionalProperties": false})
    );
    // No tool: the answer alone.
    let alone =
        serde_json::to_value(chat::response_format_or_answer(&[], &WireNames::default()).unwrap())
            .unwrap();
    assert_eq!(
        alone["json_schema"]["schema"]["required"],
        json!(["answer"])
    );
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
