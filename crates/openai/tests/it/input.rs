//! Input adapters (`parse_request`) and history repair: checklist sections I and J.

use chef_ir::{Attachment, Content, Message, Role, Target, ToolCall, ToolResult};
use chef_openai::{PH_CONTINUES, PH_NO_RESULT, chat, repair_history, responses};
use serde_json::json;

fn call(id: &str, name: &str) -> Content {
    Content::ToolCall(ToolCall::new(id, name, json!({})))
}

fn result(id: &str, text: &str) -> Message {
    Message::tool_results(vec![ToolResult::text(id, text)])
}

/// The placeholder result repair adds for call `id` of `name`, which had none.
fn placeholder(id: &str, name: &str) -> Message {
    Message::tool_results(vec![ToolResult::text(id, PH_NO_RESULT).with_name(name)])
}

fn roles(messages: &[Message]) -> Vec<Role> {
    messages.iter().map(|m| m.role).collect()
}

#[test]
fn repair_keeps_valid_histories_and_empty_ones() {
    // Checklist 82.
    assert!(repair_history(Vec::new()).is_empty());
    let valid = vec![
        Message::system("s"),
        Message::user("q"),
        Message::assistant_with(vec![call("c1", "f")]),
        result("c1", "r"),
        Message::assistant("done"),
    ];
    assert_eq!(repair_history(valid.clone()), valid);
}

#[test]
fn repair_removes_orphan_results() {
    // Checklist 83.
    let fixed = repair_history(vec![
        Message::user("u"),
        result("c_nonexistent", "x"),
        Message::assistant("a"),
    ]);
    assert_eq!(fixed, vec![Message::user("u"), Message::assistant("a")]);
    assert_eq!(
        repair_history(vec![result("c1", "x")]),
        vec![Message::user(PH_CONTINUES)]
    );
}

#[test]
fn repair_adds_placeholders_for_missing_results_right_after_the_call() {
    // Checklist 84, 85, 86.
    let fixed = repair_history(vec![
        Message::user("u"),
        Message::assistant_with(vec![call("c1", "a"), call("c2", "b")]),
        result("c1", "r"),
    ]);
    assert_eq!(
        roles(&fixed),
        [Role::User, Role::Assistant, Role::Tool, Role::Tool]
    );
    assert_eq!(fixed[2], placeholder("c2", "b"));
    assert_eq!(fixed[3], result("c1", "r"));

    let fixed = repair_history(vec![
        Message::user("u"),
        Message::assistant_with(vec![call("c1", "f")]),
        Message::user("x"),
        result("c1", "late"),
    ]);
    assert_eq!(fixed[2], placeholder("c1", "f"));
    assert_eq!(fixed[4], result("c1", "late"));

    let fixed = repair_history(vec![
        Message::user("u"),
        result("c1", "early"),
        Message::assistant_with(vec![call("c1", "f")]),
    ]);
    assert_eq!(roles(&fixed), [Role::User, Role::Assistant, Role::Tool]);
    assert_eq!(
        fixed[2].tool_results_iter().next().unwrap().content,
        vec![Content::text(PH_NO_RESULT)]
    );
}

#[test]
fn repair_makes_the_first_turn_a_user_turn() {
    // Checklist 87.
    let fixed = repair_history(vec![
        Message::system("s"),
        Message::assistant("hello"),
        Message::user("hi"),
    ]);
    assert_eq!(fixed[1], Message::user(PH_CONTINUES));
    assert_eq!(
        roles(&fixed),
        [Role::System, Role::User, Role::Assistant, Role::User]
    );
    let kept = vec![
        Message::user("u"),
        Message::tool_results(vec![ToolResult::text("", "x")]),
    ];
    assert_eq!(repair_history(kept.clone()), kept);
    let kept = vec![
        Message::user("u"),
        Message::assistant_with(vec![call("c", "f")]),
        Message::system("s"),
        result("c", "r"),
    ];
    assert_eq!(repair_history(kept.clone()), kept);
}

#[test]
fn chat_request_parses_into_the_ir() {
    // Checklist 88, with chef's choices: developer and mid-stream system messages are kept,
    // and a custom tool call is kept verbatim instead of dropped.
    let body = json!({
        "model": "gpt-x",
        "messages": [
            {"role":"system","content":"S"},
            {"role":"user","content":[
                {"type":"text","text":"a"},
                {"type":"image_url","image_url":{"url":"data:image/jpeg;base64,JJJ"}},
                {"type":"file","file":{"file_id":"file-1","filename":"f.pdf"}},
                {"type":"input_audio","input_audio":{"data":"AAA","format":"wav"}}
            ]},
            {"role":"system","content":"mid"},
            {"role":"assistant","content":null,"tool_calls":[
                {"id":"c","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}},
                {"id":"d","type":"custom","custom":{"name":"g","input":"raw"}}
            ]},
            {"role":"tool","tool_call_id":"c","content":[{"type":"text","text":"r"}]},
            {"role":"tool","tool_call_id":"d","content":"rd"}
        ],
        "tools": [
            {"type":"function","function":{"name":"f","description":"F","parameters":{"type":"object"}}},
            {"type":"web_search"}
        ]
    });
    let request = chat::parse_request(&serde_json::to_vec(&body).unwrap()).unwrap();
    let m = &request.messages;
    assert_eq!(m[0], Message::system("S"));
    assert_eq!(
        m[1].content,
        vec![
            Content::text("a"),
            Content::Attachment(Attachment::base64("image/jpeg", "JJJ")),
            Content::Attachment(
                Attachment::url("application/pdf", "file-1").with_filename("f.pdf")
            ),
            Content::Unknown {
                target: Some(Target::OpenAiChat),
                value: json!({"type":"input_audio","input_audio":{"data":"AAA","format":"wav"}})
            },
        ]
    );
    assert_eq!(m[2], Message::system("mid").with_positional(true));
    assert_eq!(
        m[3].tool_calls().next().unwrap(),
        &ToolCall::new("c", "f", json!({"x":1}))
    );
    assert_eq!(
        m[3].content[1],
        Content::Unknown {
            target: Some(Target::OpenAiChat),
            value: body["messages"][3]["tool_calls"][1].clone()
        }
    );
    assert_eq!(
        m[4],
        Message::tool_results(vec![ToolResult::text("c", "r").with_name("f")])
    );
    // `d` was a custom call: its result has no function call to answer, so repair drops it.
    assert_eq!(m.len(), 5);
    assert_eq!(request.tools[0].name.as_str(), "f");
    assert_eq!(request.tools[0].description, "F");
    assert_eq!(request.native_tools[0].targets, vec![Target::OpenAiChat]);
}

#[test]
fn chat_request_is_repaired() {
    // Checklist 89.
    let body = json!({"messages":[
        {"role":"user","content":"q"},
        {"role":"tool","tool_call_id":"ghost","content":"x"},
        {"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}
    ]});
    let request = chat::parse_request(&serde_json::to_vec(&body).unwrap()).unwrap();
    assert_eq!(
        roles(&request.messages),
        [Role::User, Role::Assistant, Role::Tool]
    );
    assert_eq!(
        request.messages[2]
            .tool_results_iter()
            .next()
            .unwrap()
            .content,
        vec![Content::text(PH_NO_RESULT)]
    );
}

#[test]
fn responses_request_parses_into_the_ir() {
    // Checklist 95.
    let rs = json!({"type":"reasoning","id":"rs","summary":[]});
    let rs2 = json!({"type":"reasoning","id":"rs2","summary":[]});
    let body = json!({
        "instructions": "INSTR",
        "input": [
            {"role":"user","content":"hi"},
            rs,
            {"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},
            {"type":"function_call","call_id":"c2","name":"g","arguments":"{\"a\":1}"},
            {"type":"function_call_output","call_id":"c2","output":"r2"},
            {"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"r1"}]},
            {"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]},
            {"type":"message","role":"system","content":[{"type":"input_text","text":"mid"}]},
            {"type":"message","role":"developer","content":"dev"},
            rs2
        ],
        "tools": [{"type":"function","name":"f","parameters":{"type":"object"},"defer_loading":true},{"type":"tool_search"}]
    });
    let request = responses::parse_request(&serde_json::to_vec(&body).unwrap()).unwrap();
    let unknown = |v: &serde_json::Value| Content::Unknown {
        target: Some(Target::OpenAiResponses),
        value: v.clone(),
    };
    let expected = vec![
        Message::system("INSTR"),
        Message::user("hi"),
        Message::assistant_with(vec![
            unknown(&rs),
            Content::ToolCall(ToolCall::new("c1", "f", json!({}))),
            Content::ToolCall(ToolCall::new("c2", "g", json!({"a":1}))),
        ]),
        Message::tool_results(vec![ToolResult::text("c1", "r1").with_name("f")]),
        Message::tool_results(vec![ToolResult::text("c2", "r2").with_name("g")]),
        Message::assistant("done"),
        Message::system("mid").with_positional(true),
        Message::system("dev").with_positional(true),
        Message::assistant_with(vec![unknown(&rs2)]),
    ];
    assert_eq!(request.messages, expected);
    assert!(request.tools[0].defer_loading);
    assert_eq!(request.native_tools[0].value, json!({"type":"tool_search"}));
}

#[test]
fn a_string_input_is_one_user_message() {
    let request = responses::parse_request(br#"{"input":"hello"}"#).unwrap();
    assert_eq!(request.messages, vec![Message::user("hello")]);
}

#[test]
fn a_request_that_is_not_json_is_a_typed_error() {
    assert!(matches!(
        chat::parse_request(b"[1"),
        Err(chef_openai::Error::InvalidJson { .. })
    ));
    assert!(matches!(
        responses::parse_request(b"{\"input\":5}"),
        Err(chef_openai::Error::InvalidJson { .. })
    ));
}
