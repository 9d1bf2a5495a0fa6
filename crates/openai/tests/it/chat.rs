//! Chat Completions compile: checklist sections D and F, and the quirks chef fixes.

use chef_ir::{Attachment, Content, Message, Request, Role, Target, ToolCall, ToolResult};
use chef_openai::{CompileOptions, Notice, PrefillPlacement, chat, prefill_enforcement};
use serde_json::json;

use crate::{
    chat_bytes, chat_json, chat_json_with, prefilled_after_tool_result, prefilled_image,
    result_with_image,
};

#[test]
fn roles_and_contents_pass_through_unchanged() {
    let request = Request::new(vec![
        Message::system("S"),
        Message::user("u"),
        Message::assistant("a"),
        Message::user("v"),
    ]);
    let (body, notices) = chat_json(&request);
    assert_eq!(
        body,
        json!({"messages":[
            {"role":"system","content":"S"},
            {"role":"user","content":"u"},
            {"role":"assistant","content":"a"},
            {"role":"user","content":"v"}]})
    );
    assert!(notices.is_empty());
    assert_eq!(chat_json(&Request::default()).0, json!({"messages":[]}));
}

#[test]
fn flags_never_reach_the_wire() {
    let request = Request::new(vec![
        Message::system("S")
            .with_cache_breakpoint(true)
            .with_positional(true),
        Message::user("u").with_pinned(true),
    ]);
    let text = chat_bytes(&request);
    assert_eq!(
        text,
        r#"{"messages":[{"role":"system","content":"S"},{"role":"user","content":"u"}]}"#
    );
}

#[test]
fn tools_are_nested_function_tools_under_valid_names() {
    let request = Request::new(vec![Message::user("q")]).with_tools(vec![
        chef_ir::ToolDefinition::new(
            "triangle_properties.get",
            json!({"type":"object","properties":{"b":{},"a":{}}}),
        )
        .with_description("Area.")
        .with_tags(["geo"]),
        chef_ir::ToolDefinition::new("plain", json!({"type":"object"})),
    ]);
    let (body, notices) = chat_json(&request);
    assert_eq!(
        body["tools"],
        json!([
            {"type":"function","function":{"name":"triangle_properties_get","description":"Area.",
              "parameters":{"type":"object","properties":{"b":{},"a":{}}}}},
            {"type":"function","function":{"name":"plain","parameters":{"type":"object"}}}
        ])
    );
    // Schema key order is the authored order (b before a), not sorted.
    let text = serde_json::to_string(&body["tools"]).unwrap();
    assert!(text.find("\"b\"").unwrap() < text.find("\"a\"").unwrap());
    assert!(notices.contains(&Notice::ToolRenamed {
        real: "triangle_properties.get".into(),
        wire: "triangle_properties_get".to_owned()
    }));
}

#[test]
fn a_renamed_tool_notice_reads_as_text_not_as_a_debug_dump() {
    let notice = Notice::ToolRenamed {
        real: "triangle_properties.get".into(),
        wire: "triangle_properties_get".to_owned(),
    };
    assert_eq!(
        notice.to_string(),
        r#"tool "triangle_properties.get" is sent as "triangle_properties_get""#
    );
}

#[test]
fn assistant_calls_carry_compact_json_text_and_results_are_one_message_each() {
    let call_a = ToolCall::new(
        "c1",
        "get.weather",
        json!({"z": 1, "a": {"y": 2, "b": 3.0}}),
    );
    let call_b = ToolCall::new("c2", "echo", json!({"s": "x"}));
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![Content::ToolCall(call_a), Content::ToolCall(call_b)]),
        Message::tool_results(vec![
            ToolResult::text("c1", "sunny"),
            ToolResult::error("c2", "boom"),
        ]),
    ]);
    let (body, notices) = chat_json(&request);
    assert_eq!(
        body["messages"][1],
        json!({"role":"assistant","tool_calls":[
            {"type":"function","id":"c1","function":{"name":"get_weather","arguments":"{\"z\":1,\"a\":{\"y\":2,\"b\":3.0}}"}},
            {"type":"function","id":"c2","function":{"name":"echo","arguments":"{\"s\":\"x\"}"}}]})
    );
    assert_eq!(
        body["messages"][2],
        json!({"role":"tool","content":"sunny","tool_call_id":"c1"})
    );
    assert_eq!(
        body["messages"][3],
        json!({"role":"tool","content":"boom","tool_call_id":"c2"})
    );
    assert!(notices.contains(&Notice::ToolErrorFlagDropped {
        message: 2,
        tool_call_id: "c2".to_owned()
    }));
}

#[test]
fn broken_argument_text_is_sent_back_byte_for_byte() {
    let raw = "{\"city\": \"Oslo\", ";
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![Content::ToolCall(ToolCall::new("c", "f", json!(raw)))]),
    ]);
    let (body, _) = chat_json(&request);
    assert_eq!(
        body["messages"][1]["tool_calls"][0]["function"]["arguments"],
        json!(raw)
    );
}

#[test]
fn attachments_become_image_url_and_file_parts() {
    let request = Request::new(vec![Message::new(
        Role::User,
        vec![
            Content::text("Look at this"),
            Content::Attachment(Attachment::base64("image/png", "abc")),
            Content::Attachment(Attachment::url("image/jpeg", "https://x/y.jpg")),
            Content::Attachment(
                Attachment::base64("application/pdf", "base64pdfdata").with_filename("doc.pdf"),
            ),
            Content::Attachment(Attachment::url("application/pdf", "file-123")),
        ],
    )]);
    let (body, _) = chat_json(&request);
    assert_eq!(
        body["messages"][0]["content"],
        json!([
            {"type":"text","text":"Look at this"},
            {"type":"image_url","image_url":{"url":"data:image/png;base64,abc"}},
            {"type":"image_url","image_url":{"url":"https://x/y.jpg"}},
            {"type":"file","file":{"file_data":"data:application/pdf;base64,base64pdfdata","filename":"doc.pdf"}},
            {"type":"file","file":{"file_id":"file-123"}}
        ])
    );
}

#[test]
fn a_document_by_url_is_named_in_text_rather_than_sent_as_an_empty_file_part() {
    // The reference sends `{"type":"file","file":{"filename":"y.pdf"}}`, losing the URL.
    let request = Request::new(vec![Message::new(
        Role::User,
        vec![Content::Attachment(
            Attachment::url("application/pdf", "https://x/y.pdf").with_filename("y.pdf"),
        )],
    )]);
    let (body, notices) = chat_json(&request);
    assert_eq!(
        body["messages"][0]["content"],
        json!("[Attachment y.pdf (application/pdf): https://x/y.pdf]")
    );
    assert_any_notice!(notices, Notice::DocumentUrlAsText { .. });
}

#[test]
fn media_in_a_tool_result_moves_to_a_user_message_after_the_tool_messages() {
    let result = result_with_image("c1", "see image");
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![
            Content::ToolCall(ToolCall::new("c1", "f", json!({}))),
            Content::ToolCall(ToolCall::new("c2", "f", json!({}))),
        ]),
        Message::tool_results(vec![result]),
        Message::tool_results(vec![ToolResult::text("c2", "ok")]),
        Message::user("next"),
    ]);
    let (body, notices) = chat_json(&request);
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "tool", "user", "user"]);
    assert_eq!(
        body["messages"][4]["content"],
        json!([{"type":"text","text":"[Media from the result of tool call c1]"},
               {"type":"image_url","image_url":{"url":"data:image/png;base64,AAA"}}])
    );
    assert_any_notice!(notices, Notice::ToolContentMoved { .. });
}

#[test]
fn thinking_is_dropped_by_default_and_textified_on_request() {
    let turn = Message::assistant_with(vec![
        Content::Thinking {
            thinking: "T".to_owned(),
            signature: Some("sig".to_owned()),
        },
        Content::RedactedThinking {
            data: "xx".to_owned(),
        },
        Content::text("ans"),
    ]);
    let request = Request::new(vec![Message::user("q"), turn]);
    let (body, notices) = chat_json(&request);
    assert_eq!(
        body["messages"][1],
        json!({"role":"assistant","content":"ans"})
    );
    assert!(notices.contains(&Notice::ThinkingDropped {
        message: 1,
        blocks: 1
    }));
    assert!(notices.contains(&Notice::RedactedThinkingDropped {
        message: 1,
        blocks: 1
    }));

    let options = CompileOptions::default().with_thinking_as_text(true);
    let (body, notices) = chat_json_with(&request, &options);
    assert_eq!(
        body["messages"][1]["content"],
        json!("<thinking>\nT\n</thinking>\n\nans")
    );
    assert!(notices.contains(&Notice::ThinkingAsText { message: 1 }));
    assert!(notices.contains(&Notice::RedactedThinkingDropped {
        message: 1,
        blocks: 1
    }));
}

#[test]
fn prefill_is_appended_to_the_last_user_message() {
    // Checklist 30.
    let request = Request::new(vec![Message::system("S"), Message::user("Help me.")])
        .with_prefill("<thinking>\n1. ");
    let (body, notices) = chat_json(&request);
    assert_eq!(body["messages"].as_array().unwrap().len(), 2);
    assert_eq!(
        body["messages"][1]["content"],
        json!(format!(
            "Help me.\n\n{}",
            prefill_enforcement("<thinking>\n1. ")
        ))
    );
    assert!(notices.contains(&Notice::PrefillDegraded {
        into: PrefillPlacement::Appended { wire_index: 1 }
    }));
}

#[test]
fn prefill_after_a_system_message_lands_there() {
    // Checklist 31.
    let request = Request::new(vec![Message::system("S")]).with_prefill("X");
    let (body, _) = chat_json(&request);
    assert_eq!(
        body["messages"],
        json!([{"role":"system","content": format!("S\n\n{}", prefill_enforcement("X"))}])
    );
}

#[test]
fn prefill_never_loses_attachments_issue_7() {
    // Checklist 32: the reference replaces the parts with a string and loses the image.
    let (body, _) = chat_json(&prefilled_image(Some("u")));
    assert_eq!(
        body["messages"][0]["content"],
        json!([
            {"type":"text","text": format!("u\n\n{}", prefill_enforcement("PRE"))},
            {"type":"image_url","image_url":{"url":"data:image/png;base64,AAA"}}
        ])
    );
    // Media only: a text part is added after the media.
    let (body, _) = chat_json(&prefilled_image(None));
    assert_eq!(
        body["messages"][0]["content"][1],
        json!({"type":"text","text": prefill_enforcement("PRE")})
    );
}

#[test]
fn prefill_after_tool_results_does_not_rewrite_an_earlier_user_turn() {
    // Checklist 33 quirk: the reference appends to `q`, changing a cached message.
    let (body, notices) = chat_json(&prefilled_after_tool_result());
    assert_eq!(body["messages"][0], json!({"role":"user","content":"q"}));
    assert_eq!(
        body["messages"][3],
        json!({"role":"system","content": prefill_enforcement("PRE")})
    );
    assert!(notices.contains(&Notice::PrefillDegraded {
        into: PrefillPlacement::NewSystemMessage { wire_index: 3 }
    }));
    // No messages at all: the instruction is still sent.
    let (body, _) = chat_json(&Request::default().with_prefill(""));
    assert_eq!(
        body["messages"],
        json!([{"role":"system","content": prefill_enforcement("")}])
    );
}

#[test]
fn prefill_enforcement_quotes_the_prefill_without_escaping() {
    // Checklist 35.
    let text = prefill_enforcement("say \"hi\"\n");
    let lines: Vec<&str> = text.split('\n').collect();
    assert_eq!(lines[2], "\"say \"hi\"");
    assert_eq!(lines[3], "\"");
    assert_eq!(lines.len(), 7);
}

#[test]
fn native_tools_pass_through_only_for_their_target() {
    let request = Request::new(vec![Message::user("q")])
        .with_tools(vec![chef_ir::ToolDefinition::new("a", json!({"type":"object"})).with_defer_loading(true)])
        .with_native_tools(vec![
            chef_ir::NativeTool { targets: vec![Target::OpenAiChat], value: json!({"type":"web_search","z":1,"a":2}) },
            chef_ir::NativeTool {
                targets: vec![Target::Anthropic],
                value: json!({"type":"tool_search_tool_regex_20251119","name":"tool_search_tool_regex"}),
            },
        ]);
    let (body, notices) = chat_json(&request);
    assert_eq!(body["tools"][1], json!({"type":"web_search","z":1,"a":2}));
    assert_eq!(body["tools"].as_array().unwrap().len(), 2);
    assert!(body["tools"][0]["function"].get("defer_loading").is_none());
    assert!(notices.contains(&Notice::NativeToolLeftOut {
        index: 1,
        targets: vec![Target::Anthropic]
    }));
    assert!(notices.contains(&Notice::DeferLoadingIgnored {
        tools: vec!["a".into()]
    }));
}

#[test]
fn foreign_unknown_content_is_left_out_with_a_notice() {
    let request = Request::new(vec![Message::assistant_with(vec![
        Content::text("a"),
        Content::Unknown {
            target: Some(Target::Anthropic),
            value: json!({"type":"server_tool_use"}),
        },
    ])]);
    let (body, notices) = chat_json(&request);
    assert_eq!(
        body["messages"][0],
        json!({"role":"assistant","content":"a"})
    );
    assert!(notices.contains(&Notice::ForeignContentDropped {
        message: 0,
        target: Some(Target::Anthropic)
    }));
}

#[test]
fn a_tool_call_in_a_user_message_is_a_typed_error() {
    let request = Request::new(vec![Message::new(
        Role::User,
        vec![Content::ToolCall(ToolCall::new("c", "f", json!({})))],
    )]);
    let err = chat::compile(&request, &CompileOptions::default()).unwrap_err();
    assert!(matches!(
        err,
        chef_openai::Error::MisplacedContent {
            message: 0,
            kind: "tool call",
            ..
        }
    ));
}

#[test]
fn the_stable_prefix_ends_after_the_last_breakpoint_message() {
    let request = Request::new(vec![
        Message::system("S").with_cache_breakpoint(true),
        Message::user("q"),
        Message::assistant("a").with_cache_breakpoint(true),
        Message::user("next"),
    ]);
    let compiled = chat::compile(&request, &CompileOptions::default()).unwrap();
    assert_eq!(compiled.stable_messages, Some(3));
    let (bytes, prefix) = chat::to_vec_with_prefix(&compiled).unwrap();
    let prefix = prefix.unwrap();
    assert!(
        String::from_utf8(bytes[..prefix].to_vec())
            .unwrap()
            .ends_with(r#"{"role":"assistant","content":"a"}"#)
    );
    // The prefix is the same bytes when only later messages change.
    let mut longer = request.clone();
    longer.messages[3] = Message::user("something else entirely");
    let other = chat::compile(&longer, &CompileOptions::default()).unwrap();
    let (other_bytes, other_prefix) = chat::to_vec_with_prefix(&other).unwrap();
    assert_eq!(other_prefix, Some(prefix));
    assert_eq!(other_bytes[..prefix], bytes[..prefix]);
}

#[test]
fn hand_written_bytes_equal_serde_json_of_the_body() {
    let request = crate::tool_heavy();
    let compiled = chat::compile(&request, &CompileOptions::default()).unwrap();
    assert_eq!(
        chat::to_vec(&compiled).unwrap(),
        serde_json::to_vec(&compiled.body).unwrap()
    );
}

#[test]
fn an_anthropic_compaction_summary_is_carried_as_text() {
    // Checklist 61: the summary must survive a switch of target.
    let compaction = Content::Unknown {
        target: Some(Target::Anthropic),
        value: json!({"type":"compaction","content":"SUM"}),
    };
    let request = Request::new(vec![
        Message::new(Role::User, vec![compaction.clone(), Content::text("u")]),
        Message::assistant_with(vec![compaction, Content::text("ans")]),
    ]);
    let (body, notices) = chat_json(&request);
    let summary = format!("{}\nSUM", chef_openai::COMPACTION_HEADER);
    assert_eq!(
        body["messages"][0]["content"],
        json!([{"type":"text","text":summary},{"type":"text","text":"u"}])
    );
    assert_eq!(
        body["messages"][1]["content"],
        json!([{"type":"text","text":summary},{"type":"text","text":"ans"}])
    );
    assert!(notices.contains(&Notice::CompactionAsText { message: 0 }));
    let (body, _) = crate::responses_json(&request);
    assert_eq!(
        body["input"][0]["content"][0],
        json!({"type":"input_text","text":summary})
    );
    assert_eq!(
        body["input"][1]["content"][0],
        json!({"type":"output_text","text":summary})
    );
}

/// Chat Completions refuses a call id over 40 characters ("string too long"); an id made
/// elsewhere (a Gemini call's id names its tool) is sent shortened, alike in the call and
/// its result, with a notice.
#[test]
fn call_ids_over_forty_characters_are_shortened_alike_in_call_and_result() {
    let long = "gemini-fc-a_rather_long_tool_name_for_reports-0";
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![Content::ToolCall(ToolCall::new(long, "f", json!({})))]),
        Message::tool_results(vec![ToolResult::text(long, "done")]),
    ]);
    let (body, notices) = chat_json(&request);
    let id = body["messages"][1]["tool_calls"][0]["id"].as_str().unwrap();
    assert_eq!(id.len(), 40, "{id}");
    assert!(id.starts_with("gemini-fc-a_rather_long_tool_na_"), "{id}");
    assert_eq!(body["messages"][2]["tool_call_id"], id);
    assert_eq!(
        notices,
        vec![Notice::CallIdRewritten {
            message: 1,
            id: long.to_owned(),
            wire: id.to_owned(),
        }]
    );
    // An id that fits is sent as it is.
    let (body, notices) = chat_json(&Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![Content::ToolCall(ToolCall::new(
            "call_1",
            "f",
            json!({}),
        ))]),
    ]));
    assert_eq!(body["messages"][1]["tool_calls"][0]["id"], "call_1");
    assert!(notices.is_empty());
}
