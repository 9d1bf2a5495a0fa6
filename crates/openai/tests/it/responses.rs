//! Responses compile: checklist sections D and G, reasoning echo, item headers, tool search.

use chef_ir::{
    Attachment, Content, Message, NativeTool, Request, Role, Target, ToolCall, ToolDefinition,
    ToolResult,
};
use chef_openai::{CompileOptions, Notice, PrefillPlacement, prefill_enforcement, responses};
use serde_json::json;

use crate::{
    prefilled_after_tool_result, prefilled_image, responses_bytes, responses_json,
    result_with_image,
};

fn reasoning(id: &str) -> Content {
    Content::Unknown {
        target: Some(Target::OpenAiResponses),
        value: json!({"type":"reasoning","id":id,"summary":[],"encrypted_content":"ENC"}),
    }
}

#[test]
fn system_messages_become_instructions_after_tools_and_before_input() {
    // Checklist 63.
    let request = Request::new(vec![
        Message::system("S1"),
        Message::system("S2"),
        Message::user("hi"),
    ]);
    let text = responses_bytes(&request);
    assert_eq!(
        text,
        r#"{"instructions":"S1\n\nS2","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}"#
    );
    let (body, _) = responses_json(&Request::new(vec![Message::user("hi")]));
    assert!(body.get("instructions").is_none());
}

#[test]
fn positional_system_messages_stay_inline_and_late_ones_are_hoisted_with_a_notice() {
    let request = Request::new(vec![
        Message::system("S"),
        Message::user("q"),
        Message::system("ANN").with_positional(true),
        Message::system("late"),
    ]);
    let (body, notices) = responses_json(&request);
    assert_eq!(body["instructions"], json!("S\n\nlate"));
    assert_eq!(
        body["input"][1],
        json!({"type":"message","role":"system","content":[{"type":"input_text","text":"ANN"}]})
    );
    assert!(notices.contains(&Notice::SystemHoisted { message: 3 }));
}

#[test]
fn tools_are_flat_function_tools() {
    let request = Request::new(vec![Message::user("q")]).with_tools(vec![
        ToolDefinition::new("a.b", json!({"type":"object"})).with_description("D"),
    ]);
    let (body, _) = responses_json(&request);
    assert_eq!(
        body["tools"],
        json!([{"type":"function","name":"a_b","description":"D","parameters":{"type":"object"},"strict":false}])
    );
}

#[test]
fn calls_and_outputs_are_items_joined_by_call_id() {
    // Checklist 64, 66.
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![Content::ToolCall(ToolCall::new(
            "c1",
            "f",
            json!({"x":1}),
        ))]),
        Message::tool_results(vec![ToolResult::text("c1", "r")]),
        Message::assistant_with(vec![
            Content::text("more"),
            Content::ToolCall(ToolCall::new("c2", "f", json!({}))),
        ]),
    ]);
    let (body, _) = responses_json(&request);
    assert_eq!(
        body["input"],
        json!([
            {"type":"message","role":"user","content":[{"type":"input_text","text":"q"}]},
            {"type":"function_call","call_id":"c1","name":"f","arguments":"{\"x\":1}"},
            {"type":"function_call_output","call_id":"c1","output":"r"},
            {"type":"message","role":"assistant","content":[{"type":"output_text","text":"more"}]},
            {"type":"function_call","call_id":"c2","name":"f","arguments":"{}"}
        ])
    );
}

#[test]
fn reasoning_items_are_echoed_verbatim_before_the_turn() {
    // Checklist 65 and 38.
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![reasoning("rs_1"), Content::text("x")]),
        Message::user("again"),
        Message::assistant_with(vec![reasoning("rs_2")]),
    ]);
    let text = responses_bytes(&request);
    assert!(text.contains(
        r#"{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"ENC"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"x"}]}"#
    ));
    // A reasoning-only turn gives the reasoning item and no empty message item.
    assert!(
        text.ends_with(
            r#"{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"ENC"}]}"#
        )
    );
}

#[test]
fn item_headers_restore_ids_that_pair_reasoning_with_its_items() {
    let header = |value| Content::Unknown {
        target: Some(Target::OpenAiResponses),
        value,
    };
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![
            reasoning("rs_1"),
            header(json!({"type":"message","id":"msg_1","status":"completed"})),
            Content::text("checking"),
            header(json!({"type":"function_call","id":"fc_1","status":"completed"})),
            Content::ToolCall(ToolCall::new("call_1", "f", json!({}))),
        ]),
    ]);
    let (body, _) = responses_json(&request);
    assert_eq!(
        body["input"][2],
        json!({"type":"message","role":"assistant","content":[{"type":"output_text","text":"checking"}],"id":"msg_1","status":"completed"})
    );
    assert_eq!(
        body["input"][3],
        json!({"type":"function_call","call_id":"call_1","name":"f","arguments":"{}","id":"fc_1","status":"completed"})
    );
    assert_eq!(body["input"].as_array().unwrap().len(), 4);
}

#[test]
fn empty_user_and_assistant_messages_still_say_something() {
    // Checklist 68.
    let request = Request::new(vec![
        Message::user(""),
        Message::assistant(""),
        Message::user("x"),
    ]);
    let (body, _) = responses_json(&request);
    assert_eq!(
        body["input"][0]["content"],
        json!([{"type":"input_text","text":""}])
    );
    assert_eq!(
        body["input"][1],
        json!({"type":"message","role":"assistant","content":[{"type":"output_text","text":""}]})
    );
}

#[test]
fn user_attachments_become_input_image_and_input_file() {
    // Checklist 67.
    let request = Request::new(vec![Message::new(
        Role::User,
        vec![
            Content::Attachment(Attachment::base64("image/png", "AAA")),
            Content::Attachment(Attachment::url("image/png", "https://x/i.png")),
            Content::Attachment(
                Attachment::url("application/pdf", "data:application/pdf;base64,PDF")
                    .with_filename("a.pdf"),
            ),
            Content::Attachment(Attachment::url("application/pdf", "https://x/b.pdf")),
            Content::Attachment(Attachment::url("application/pdf", "file-9")),
        ],
    )]);
    let (body, _) = responses_json(&request);
    assert_eq!(
        body["input"][0]["content"],
        json!([
            {"type":"input_image","image_url":"data:image/png;base64,AAA"},
            {"type":"input_image","image_url":"https://x/i.png"},
            {"type":"input_file","file_data":"data:application/pdf;base64,PDF","filename":"a.pdf"},
            {"type":"input_file","file_url":"https://x/b.pdf"},
            {"type":"input_file","file_id":"file-9"}
        ])
    );
}

#[test]
fn media_in_a_tool_result_stays_in_its_output() {
    let result = result_with_image("c", "chart");
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![Content::ToolCall(ToolCall::new("c", "f", json!({})))]),
        Message::tool_results(vec![result]),
    ]);
    let (body, _) = responses_json(&request);
    assert_eq!(
        body["input"][2]["output"],
        json!([{"type":"input_text","text":"chart"},{"type":"input_image","image_url":"data:image/png;base64,AAA"}])
    );
}

#[test]
fn thinking_and_flags_never_appear() {
    // Checklist 69.
    let request = Request::new(vec![
        Message::user("q").with_cache_breakpoint(true),
        Message::assistant_with(vec![
            Content::Thinking {
                thinking: "T".to_owned(),
                signature: None,
            },
            Content::text("a"),
        ]),
    ]);
    let compiled = responses::compile(&request, &CompileOptions::default()).unwrap();
    let text = String::from_utf8(responses::to_vec(&compiled).unwrap()).unwrap();
    assert!(!text.contains("thinking") && !text.contains("cache") && !text.contains("\"T\""));
    assert!(compiled.notices.contains(&Notice::ThinkingDropped {
        message: 1,
        blocks: 1
    }));
}

#[test]
fn prefill_lands_on_the_last_user_item_keeping_its_media() {
    // Checklist 36.
    let (body, notices) = responses_json(&prefilled_image(Some("")));
    assert_eq!(
        body["input"][0]["content"],
        json!([
            {"type":"input_text","text": format!("\n\n{}", prefill_enforcement("PRE"))},
            {"type":"input_image","image_url":"data:image/png;base64,AAA"}
        ])
    );
    assert!(notices.contains(&Notice::PrefillDegraded {
        into: PrefillPlacement::Appended { wire_index: 0 }
    }));
    let (body, _) = responses_json(&prefilled_image(None));
    assert_eq!(
        body["input"][0]["content"][1],
        json!({"type":"input_text","text": prefill_enforcement("PRE")})
    );
}

#[test]
fn prefill_with_no_input_goes_to_instructions() {
    // Checklist 37.
    let request = Request::new(vec![Message::system("S")]).with_prefill("PRE");
    let (body, _) = responses_json(&request);
    assert_eq!(body["input"], json!([]));
    assert_eq!(
        body["instructions"],
        json!(format!("S\n\n{}", prefill_enforcement("PRE")))
    );
}

#[test]
fn prefill_after_tool_output_is_a_new_system_item() {
    let (body, _) = responses_json(&prefilled_after_tool_result());
    assert_eq!(body["input"][0]["content"][0]["text"], json!("q"));
    assert_eq!(
        body["input"][3],
        json!({"type":"message","role":"system","content":[{"type":"input_text","text": prefill_enforcement("PRE")}]})
    );
}

#[test]
fn defer_loading_is_sent_only_beside_the_tool_search_tool() {
    let tools = vec![
        ToolDefinition::new("loaded", json!({"type":"object"})),
        ToolDefinition::new("deferred", json!({"type":"object"})).with_defer_loading(true),
    ];
    let search = NativeTool {
        targets: vec![Target::OpenAiResponses],
        value: json!({"type":"tool_search"}),
    };
    let request = Request::new(vec![Message::user("q")])
        .with_tools(tools.clone())
        .with_native_tools(vec![search]);
    let (body, notices) = responses_json(&request);
    assert_eq!(
        body["tools"],
        json!([
            {"type":"function","name":"loaded","parameters":{"type":"object"},"strict":false},
            {"type":"function","name":"deferred","parameters":{"type":"object"},"strict":false,"defer_loading":true},
            {"type":"tool_search"}
        ])
    );
    assert!(
        !notices
            .iter()
            .any(|n| matches!(n, Notice::DeferLoadingIgnored { .. }))
    );

    let request = Request::new(vec![Message::user("q")]).with_tools(tools);
    let (body, notices) = responses_json(&request);
    assert!(body["tools"][1].get("defer_loading").is_none());
    assert!(notices.contains(&Notice::DeferLoadingIgnored {
        tools: vec!["deferred".into()]
    }));
}

#[test]
fn the_stable_prefix_covers_tools_instructions_and_items_through_the_breakpoint() {
    let request = Request::new(vec![
        Message::system("S").with_cache_breakpoint(true),
        Message::user("q").with_cache_breakpoint(true),
        Message::assistant("a"),
    ]);
    let compiled = responses::compile(&request, &CompileOptions::default()).unwrap();
    assert_eq!(compiled.stable_items, Some(1));
    let (bytes, prefix) = responses::to_vec_with_prefix(&compiled).unwrap();
    let head = String::from_utf8(bytes[..prefix.unwrap()].to_vec()).unwrap();
    assert!(head.ends_with(r#"{"type":"input_text","text":"q"}]}"#));
    assert_eq!(
        responses::to_vec(&compiled).unwrap(),
        serde_json::to_vec(&compiled.body).unwrap()
    );
}
