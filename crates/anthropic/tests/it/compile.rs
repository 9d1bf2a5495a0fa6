//! Compile rules, one case per behaviour (spec providers.md §3.1, checklist E, C 26-28).

use chef_anthropic::{
    CompileOptions, Error, Notice, compile,
    wire::{Breakpoint, CacheTtl, ThinkingConfig},
};
use chef_ir::{
    Attachment, Content, Message, NativeTool, Request, Role, Target, ToolCall, ToolDefinition,
    ToolResult,
};
use serde_json::{Value, json};

use crate::{
    body, compiled,
    messages::{call, user_with},
};

fn tool(name: &str) -> ToolDefinition {
    ToolDefinition::new(name, json!({"type": "object", "properties": {}}))
}

#[test]
fn system_messages_are_hoisted_and_no_system_key_without_them() {
    let b = body(&Request::new(vec![
        Message::system("A"),
        Message::system("B"),
        Message::user("Hello"),
    ]));
    assert_eq!(
        b["system"],
        json!([{"type":"text","text":"A"},{"type":"text","text":"B"}])
    );
    assert_eq!(b["messages"].as_array().unwrap().len(), 1);

    let b = body(&Request::new(vec![Message::user("Hi")]));
    assert!(b.get("system").is_none());
    assert_eq!(
        b,
        json!({"messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}]})
    );
}

/// The API refuses an empty or blank text block: a blank system message sends no block,
/// and a system prompt of nothing else sends no `system`.
#[test]
fn a_blank_system_message_sends_no_block() {
    let b = body(&Request::new(vec![
        Message::system(""),
        Message::user("Hi"),
    ]));
    assert!(b.get("system").is_none(), "{b}");
    let b = body(&Request::new(vec![
        Message::system(" \n"),
        Message::system("A"),
        Message::user("Hi"),
    ]));
    assert_eq!(b["system"], json!([{"type":"text","text":"A"}]));
}

#[test]
fn a_leading_positional_system_message_is_hoisted_with_a_notice() {
    let request = Request::new(vec![
        Message::system("P").with_positional(true),
        Message::user("u"),
    ]);
    let c = compiled(&request);
    let b: Value = serde_json::to_value(&c.body).unwrap();
    assert_eq!(b["system"], json!([{"type":"text","text":"P"}]));
    assert_eq!(b["messages"].as_array().unwrap().len(), 1);
    assert_eq!(c.notices, vec![Notice::PositionalHoisted { index: 0 }]);
}

#[test]
fn a_positional_system_message_after_a_tool_turn_stays_in_place_in_that_user_turn() {
    let request = Request::new(vec![
        Message::user("u"),
        Message::assistant_with(vec![call("c", "f", json!({}))]),
        Message::tool_results(vec![ToolResult::text("c", "r")]),
        Message::system("DS"),
        Message::system("ANN")
            .with_positional(true)
            .with_cache_breakpoint(true),
    ]);
    let c = compiled(&request);
    let b: Value = serde_json::to_value(&c.body).unwrap();
    assert_eq!(b["system"], json!([{"type":"text","text":"DS"}]));
    assert_eq!(
        b["messages"][2],
        json!({"role":"user","content":[
            {"type":"tool_result","tool_use_id":"c","content":"r"},
            {"type":"text","text":"ANN","cache_control":{"type":"ephemeral"}}
        ]})
    );
    assert!(c.notices.is_empty(), "{:?}", c.notices);
}

#[test]
fn a_positional_system_message_after_an_assistant_turn_is_hoisted() {
    let request = Request::new(vec![
        Message::user("u"),
        Message::assistant("a"),
        Message::system("P").with_positional(true),
        Message::user("v"),
    ]);
    let c = compiled(&request);
    assert_eq!(c.notices, vec![Notice::PositionalHoisted { index: 2 }]);
    let b: Value = serde_json::to_value(&c.body).unwrap();
    assert_eq!(b["system"], json!([{"type":"text","text":"P"}]));
    let roles: Vec<&str> = b["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
}

#[test]
fn system_messages_hold_text_only() {
    let request = Request::new(vec![Message::new(
        Role::System,
        vec![Content::Attachment(Attachment::url(
            "image/png",
            "https://x/a.png",
        ))],
    )]);
    let err = compile(&request, &CompileOptions::default()).unwrap_err();
    assert!(matches!(
        err,
        Error::SystemContent {
            index: 0,
            kind: "attachment"
        }
    ));
}

#[test]
fn tool_results_carry_is_error_and_consecutive_tool_messages_pack_into_one_user_turn() {
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![call("c1", "f", json!({})), call("c2", "g", json!({}))]),
        Message::tool_results(vec![ToolResult::text("c1", "ok")]),
        Message::tool_results(vec![ToolResult::error("c2", "boom")]),
        Message::user("next"),
    ]);
    let b = body(&request);
    let messages = b["messages"].as_array().unwrap();
    // The user message right after the results joins their turn, after them.
    assert_eq!(messages.len(), 3);
    assert_eq!(
        messages[2],
        json!({"role":"user","content":[
            {"type":"tool_result","tool_use_id":"c1","content":"ok"},
            {"type":"tool_result","tool_use_id":"c2","content":"boom","is_error":true},
            {"type":"text","text":"next"}
        ]})
    );
}

#[test]
fn tool_results_with_images_become_block_content_and_empty_results_omit_content() {
    let result = ToolResult {
        content: vec![
            Content::text("see image"),
            Content::Attachment(Attachment::base64("image/png", "AAAA")),
        ],
        ..ToolResult::text("c1", "")
    };
    let empty = ToolResult {
        content: vec![],
        ..ToolResult::text("c2", "")
    };
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![call("c1", "f", json!({})), call("c2", "f", json!({}))]),
        Message::tool_results(vec![result, empty]),
    ]);
    let b = body(&request);
    assert_eq!(
        b["messages"][2]["content"],
        json!([
            {"type":"tool_result","tool_use_id":"c1","content":[
                {"type":"text","text":"see image"},
                {"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}
            ]},
            {"type":"tool_result","tool_use_id":"c2"}
        ])
    );
}

#[test]
fn tool_results_cannot_hold_calls() {
    let result = ToolResult {
        content: vec![Content::text("a"), call("x", "f", json!({}))],
        ..ToolResult::text("c1", "")
    };
    let request = Request::new(vec![Message::tool_results(vec![result])]);
    assert!(matches!(
        compile(&request, &CompileOptions::default()).unwrap_err(),
        Error::ToolResultContent { index: 0, .. }
    ));
}

#[test]
fn assistant_blocks_keep_ir_order_with_thinking_signature_and_redacted_thinking() {
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![
            Content::Thinking {
                thinking: "hmm".into(),
                signature: Some("sig".into()),
            },
            Content::RedactedThinking { data: "enc".into() },
            Content::text("Checking..."),
            call("c1", "get_weather", json!({"city": "London"})),
            call("c2", "get_weather", json!({"city": "Paris"})),
        ]),
    ]);
    let b = body(&request);
    assert_eq!(
        b["messages"][1]["content"],
        json!([
            {"type":"thinking","thinking":"hmm","signature":"sig"},
            {"type":"redacted_thinking","data":"enc"},
            {"type":"text","text":"Checking..."},
            {"type":"tool_use","id":"c1","name":"get_weather","input":{"city":"London"}},
            {"type":"tool_use","id":"c2","name":"get_weather","input":{"city":"Paris"}}
        ])
    );
}

#[test]
fn empty_text_beside_other_blocks_is_not_sent() {
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![Content::text(""), call("c", "f", json!({}))]),
    ]);
    let b = body(&request);
    assert_eq!(
        b["messages"][1]["content"],
        json!([{"type":"tool_use","id":"c","name":"f","input":{}}])
    );
}

#[test]
fn breakpoints_land_on_the_last_block_that_can_carry_one() {
    let request = Request::new(vec![
        Message::system("S").with_cache_breakpoint(true),
        user_with(
            "look",
            vec![Attachment::url("image/png", "https://x/a.png")],
        )
        .with_cache_breakpoint(true),
        Message::assistant_with(vec![
            Content::Thinking {
                thinking: "t".into(),
                signature: Some("s".into()),
            },
            call("c", "f", json!({})),
        ])
        .with_cache_breakpoint(true),
        Message::tool_results(vec![ToolResult::text("c", "r")]).with_cache_breakpoint(true),
    ]);
    let c = compiled(&request);
    let b: Value = serde_json::to_value(&c.body).unwrap();
    let eph = json!({"type":"ephemeral"});
    assert_eq!(b["system"][0]["cache_control"], eph);
    assert_eq!(b["messages"][0]["content"][1]["cache_control"], eph);
    assert!(
        b["messages"][0]["content"][0]
            .get("cache_control")
            .is_none()
    );
    assert_eq!(b["messages"][1]["content"][1]["cache_control"], eph);
    assert!(
        b["messages"][1]["content"][0]
            .get("cache_control")
            .is_none()
    );
    assert_eq!(b["messages"][2]["content"][0]["cache_control"], eph);
    assert_eq!(
        c.last_breakpoint(),
        Some(Breakpoint::Message { index: 2, block: 0 })
    );
    assert!(
        c.notices.is_empty(),
        "4 breakpoints are allowed: {:?}",
        c.notices
    );
}

#[test]
fn a_breakpoint_on_a_message_of_thinking_only_is_reported() {
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![Content::RedactedThinking { data: "x".into() }])
            .with_cache_breakpoint(true),
    ]);
    let c = compiled(&request);
    assert_eq!(c.notices, vec![Notice::BreakpointDropped { message: 1 }]);
    assert_eq!(c.last_breakpoint(), None);
}

#[test]
fn more_than_four_breakpoints_are_reported() {
    let mut messages = Vec::new();
    for i in 0..5 {
        messages.push(Message::user(format!("u{i}")).with_cache_breakpoint(true));
        messages.push(Message::assistant("a"));
    }
    let request = Request::new(messages);
    let c = compiled(&request);
    assert_eq!(c.notices, vec![Notice::TooManyBreakpoints { count: 5 }]);
    // The API refuses more than four: the earliest is left out, the last one kept.
    assert_eq!(c.body.breakpoint_count(), 4);
    let marked: Vec<usize> = c
        .body
        .messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.content.iter().any(|b| b.cache_control().is_some()))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(marked, vec![2, 4, 6, 8], "{marked:?}");
}

/// Tool results packed into one user turn may carry several breakpoints: the earlier ones
/// of that turn go too, so four remain and the last is kept.
#[test]
fn too_many_breakpoints_in_the_last_turn_leave_four() {
    let messages = vec![
        Message::system("s").with_cache_breakpoint(true),
        Message::user("q"),
        Message::assistant_with(vec![
            Content::ToolCall(ToolCall::new("c1", "f", json!({}))),
            Content::ToolCall(ToolCall::new("c2", "f", json!({}))),
        ]),
        Message::tool_results(vec![ToolResult::text("c1", "one")]).with_cache_breakpoint(true),
        Message::tool_results(vec![ToolResult::text("c2", "two")]).with_cache_breakpoint(true),
        Message::user("go on").with_cache_breakpoint(true),
    ];
    let request = Request::new(messages).with_tools(vec![tool("f")]);
    let options = CompileOptions::default().with_cache_tools(true);
    let c = chef_anthropic::compile(&request, &options).unwrap();
    assert_eq!(c.notices, vec![Notice::TooManyBreakpoints { count: 5 }]);
    assert_eq!(c.body.breakpoint_count(), 4);
    let text = serde_json::to_string(&c.body).unwrap();
    assert!(text.contains(r#""text":"go on","cache_control""#), "{text}");
    assert!(
        text.contains(r#""system":[{"type":"text","text":"s","cache_control""#),
        "{text}"
    );
}

#[test]
fn too_many_breakpoints_keep_the_tools_the_last_system_block_and_the_last_message() {
    let mut messages = vec![
        Message::system("s0").with_cache_breakpoint(true),
        Message::system("s1").with_cache_breakpoint(true),
    ];
    for i in 0..3 {
        messages.push(Message::user(format!("u{i}")).with_cache_breakpoint(true));
        messages.push(Message::assistant("a"));
    }
    messages.push(Message::user("last").with_cache_breakpoint(true));
    let request = Request::new(messages).with_tools(vec![tool("f")]);
    let options = CompileOptions::default().with_cache_tools(true);
    let c = chef_anthropic::compile(&request, &options).unwrap();
    assert_eq!(c.notices, vec![Notice::TooManyBreakpoints { count: 7 }]);
    assert_eq!(c.body.breakpoint_count(), 4);
    let text = serde_json::to_string(&c.body).unwrap();
    assert_eq!(
        c.last_breakpoint().map(|b| format!("{b:?}")).as_deref(),
        Some("Message { index: 6, block: 0 }"),
        "{text}"
    );
    assert!(
        c.body.system.last().unwrap().cache_control.is_some(),
        "{text}"
    );
    assert!(c.body.tools.iter().any(|t| t.has_cache_control()), "{text}");
}

#[test]
fn cache_ttl_is_written_on_every_breakpoint_chef_places() {
    let request = Request::new(vec![
        Message::system("S").with_cache_breakpoint(true),
        Message::user("u"),
    ])
    .with_tools(vec![tool("a")]);
    let options = CompileOptions::default().with_cache_ttl(Some(CacheTtl::OneHour));
    let b = serde_json::to_value(compile(&request, &options).unwrap().body).unwrap();
    let hour = json!({"type":"ephemeral","ttl":"1h"});
    assert_eq!(b["system"][0]["cache_control"], hour);
    assert_eq!(b["tools"][0]["cache_control"], hour);
}

#[test]
fn exactly_one_tool_breakpoint_on_the_last_tool_that_is_not_deferred() {
    let request = Request::new(vec![Message::user("u")]).with_tools(vec![
        tool("a"),
        tool("b"),
        tool("c").with_defer_loading(true),
        tool("d").with_defer_loading(true),
    ]);
    let b = body(&request);
    let tools = b["tools"].as_array().unwrap();
    let marked: Vec<&str> = tools
        .iter()
        .filter(|t| t.get("cache_control").is_some())
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(marked, ["b"]);
    assert_eq!(tools[2]["defer_loading"], json!(true));
    assert!(tools[0].get("defer_loading").is_none());
}

#[test]
fn no_tool_breakpoint_when_every_function_tool_is_deferred_or_caching_is_off() {
    let request =
        Request::new(vec![Message::user("u")]).with_tools(vec![tool("a").with_defer_loading(true)]);
    let c = compiled(&request);
    assert_eq!(c.notices, vec![Notice::NoToolBreakpoint]);
    assert!(!c.body.tools[0].has_cache_control());

    let request = Request::new(vec![Message::user("u")]).with_tools(vec![tool("a")]);
    let c = compile(&request, &CompileOptions::default().with_cache_tools(false)).unwrap();
    assert!(c.notices.is_empty());
    assert!(!c.body.tools[0].has_cache_control());
}

#[test]
fn native_tools_for_anthropic_go_first_verbatim_and_others_are_left_out_with_a_notice() {
    let search =
        json!({"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"});
    let openai_only = json!({"type": "web_search_preview"});
    let request = Request::new(vec![Message::user("u")])
        .with_tools(vec![tool("a"), tool("b").with_defer_loading(true)])
        .with_native_tools(vec![
            NativeTool {
                targets: vec![Target::OpenAiResponses],
                value: openai_only,
            },
            NativeTool {
                targets: vec![Target::Anthropic, Target::OpenAiResponses],
                value: search.clone(),
            },
        ]);
    let c = compiled(&request);
    assert_eq!(
        c.notices,
        vec![Notice::NativeToolLeftOut {
            index: 0,
            targets: vec![Target::OpenAiResponses]
        }]
    );
    let b: Value = serde_json::to_value(&c.body).unwrap();
    assert_eq!(
        b["tools"],
        json!([
            search,
            {"name":"a","input_schema":{"type":"object","properties":{}},"cache_control":{"type":"ephemeral"}},
            {"name":"b","input_schema":{"type":"object","properties":{}},"defer_loading":true}
        ])
    );
}

#[test]
fn refused_tool_names_are_mapped_in_tools_and_calls_and_reported() {
    let request = Request::new(vec![
        Message::user("u"),
        Message::assistant_with(vec![call("c", "triangle_properties.get", json!({}))]),
        Message::tool_results(vec![
            ToolResult::text("c", "r").with_name("triangle_properties.get"),
        ]),
    ])
    .with_tools(vec![tool("triangle_properties.get")]);
    let c = compiled(&request);
    let b: Value = serde_json::to_value(&c.body).unwrap();
    assert_eq!(b["tools"][0]["name"], "triangle_properties_get");
    assert_eq!(
        b["messages"][1]["content"][0]["name"],
        "triangle_properties_get"
    );
    assert!(c.notices.contains(&Notice::ToolRenamed {
        real: "triangle_properties.get".into(),
        wire: "triangle_properties_get".into()
    }));
    assert_eq!(
        c.names.to_real("triangle_properties_get"),
        "triangle_properties.get"
    );
}

#[test]
fn arguments_keep_key_order_and_number_text_without_a_trip_through_doubles() {
    let args: Value =
        serde_json::from_str(r#"{"z":1,"a":{"y":2,"b":3},"big":12345678901234567890,"f":1.5}"#)
            .unwrap();
    let request = Request::new(vec![
        Message::user("u"),
        Message::assistant_with(vec![call("c", "f", args)]),
    ]);
    let text = String::from_utf8(compiled(&request).to_vec().unwrap()).unwrap();
    assert!(
        text.contains(r#""input":{"z":1,"a":{"y":2,"b":3},"big":12345678901234567890,"f":1.5}"#),
        "{text}"
    );
}

#[test]
fn attachments_map_to_image_and_document_blocks() {
    let request = Request::new(vec![user_with(
        "",
        vec![
            Attachment::url("image/png", "https://x/a.png"),
            Attachment::url("application/pdf", "http://x/a.pdf").with_filename("a.pdf"),
            Attachment::base64("application/pdf", "JVBE"),
            Attachment::url("image/jpeg", "data:image/jpeg;base64,/9j/"),
            Attachment::base64("text/plain", "aGk="),
        ],
    )]);
    let c = compiled(&request);
    let b: Value = serde_json::to_value(&c.body).unwrap();
    assert_eq!(
        b["messages"][0]["content"],
        json!([
            {"type":"image","source":{"type":"url","url":"https://x/a.png"}},
            {"type":"document","source":{"type":"url","url":"http://x/a.pdf"},"title":"a.pdf"},
            {"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBE"}},
            {"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/"}},
            {"type":"document","source":{"type":"base64","media_type":"text/plain","data":"aGk="}}
        ])
    );
    assert_eq!(
        c.notices,
        vec![Notice::UnsupportedMediaType {
            message: 0,
            media_type: "text/plain".into()
        }]
    );
}

#[test]
fn an_image_file_name_is_reported_not_silently_lost() {
    let request = Request::new(vec![Message::new(
        Role::User,
        vec![Content::Attachment(
            Attachment::base64("image/png", "AAAA").with_filename("site.png"),
        )],
    )]);
    assert_eq!(
        compiled(&request).notices,
        vec![Notice::ImageFilenameDropped {
            message: 0,
            filename: "site.png".into()
        }]
    );
}

#[test]
fn prefill_is_a_trailing_assistant_text_block() {
    let request = Request::new(vec![Message::user("q")]).with_prefill("PRE");
    let b = body(&request);
    assert_eq!(
        b["messages"][1],
        json!({"role":"assistant","content":[{"type":"text","text":"PRE"}]})
    );
}

#[test]
fn prefill_trailing_whitespace_is_trimmed_and_reported() {
    let request = Request::new(vec![Message::user("q")]).with_prefill("{\"a\": \n");
    let c = compiled(&request);
    assert_eq!(
        c.notices,
        vec![Notice::PrefillTrimmed {
            removed: " \n".into()
        }]
    );
    let b: Value = serde_json::to_value(&c.body).unwrap();
    assert_eq!(b["messages"][1]["content"][0]["text"], "{\"a\":");

    let request = Request::new(vec![Message::user("q")]).with_prefill("  ");
    let c = compiled(&request);
    assert_eq!(c.body.messages.len(), 1);
    assert!(c.notices.contains(&Notice::PrefillEmpty));
}

#[test]
fn with_thinking_on_the_prefill_degrades_into_the_last_user_turn_keeping_attachments() {
    let request = Request::new(vec![user_with(
        "u",
        vec![Attachment::base64("image/png", "AAAA")],
    )])
    .with_prefill("<answer>");
    let options = CompileOptions::default().with_thinking(Some(ThinkingConfig::enabled(2048)));
    let c = compile(&request, &options).unwrap();
    assert_eq!(c.notices, vec![Notice::PrefillDegraded]);
    let b: Value = serde_json::to_value(&c.body).unwrap();
    assert_eq!(
        b["thinking"],
        json!({"type":"enabled","budget_tokens":2048})
    );
    let messages = b["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1);
    let content = messages[0]["content"].as_array().unwrap();
    assert_eq!(content.len(), 3);
    assert_eq!(content[1]["type"], "image");
    assert!(
        content[2]["text"]
            .as_str()
            .unwrap()
            .contains("<reply_prefix><answer></reply_prefix>")
    );
}

#[test]
fn model_and_max_tokens_lead_the_body_when_set() {
    let request = Request::new(vec![Message::user("q")]);
    let options = CompileOptions::default()
        .with_model("claude-sonnet-4-5")
        .with_max_tokens(1024);
    let text = String::from_utf8(compile(&request, &options).unwrap().to_vec().unwrap()).unwrap();
    assert!(text.starts_with(r#"{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":"#));
}

#[test]
fn foreign_unknown_content_is_left_out_with_a_notice_and_anthropic_unknown_is_verbatim() {
    let server = json!({"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}});
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![
            Content::Unknown {
                target: Some(Target::Anthropic),
                value: server.clone(),
            },
            Content::Unknown {
                target: Some(Target::Gemini),
                value: json!({"executableCode": {}}),
            },
        ]),
    ]);
    let c = compiled(&request);
    assert_eq!(
        c.notices,
        vec![Notice::ForeignContentLeftOut {
            message: 1,
            target: Some(Target::Gemini)
        }]
    );
    let b: Value = serde_json::to_value(&c.body).unwrap();
    assert_eq!(b["messages"][1]["content"], json!([server]));
}

#[test]
fn absent_optional_fields_stay_absent() {
    let text = String::from_utf8(
        compiled(&Request::new(vec![Message::user("q")]).with_tools(vec![
            ToolDefinition::new("t", json!({"type":"object"})).with_tags(["x"]),
        ]))
        .to_vec()
        .unwrap(),
    )
    .unwrap();
    for key in [
        "system",
        "description",
        "defer_loading",
        "tags",
        "thinking",
        "model",
        "null",
    ] {
        assert!(!text.contains(key), "{key} in {text}");
    }
}

#[test]
fn tool_search_composition_refuses_an_all_deferred_set_and_unknown_names() {
    use chef_anthropic::{KeepLoaded, ToolSearch, compose_tool_search};
    let tools = vec![tool("a"), tool("b")];
    assert!(matches!(
        compose_tool_search(tools.clone(), KeepLoaded::First(0), ToolSearch::Bm25),
        Err(Error::AllToolsDeferred)
    ));
    assert!(matches!(
        compose_tool_search(
            tools.clone(),
            KeepLoaded::Named(&["zz".into()]),
            ToolSearch::Bm25
        ),
        Err(Error::UnknownLoadedTool { .. })
    ));
    let set =
        compose_tool_search(tools, KeepLoaded::Named(&["b".into()]), ToolSearch::Bm25).unwrap();
    let request = set.into_request(Request::new(vec![Message::user("u")]));
    let b = body(&request);
    assert_eq!(
        b["tools"],
        json!([
            {"type":"tool_search_tool_bm25_20251119","name":"tool_search_tool_bm25"},
            {"name":"a","input_schema":{"type":"object","properties":{}},"defer_loading":true},
            {"name":"b","input_schema":{"type":"object","properties":{}},"cache_control":{"type":"ephemeral"}}
        ])
    );
}

#[test]
fn the_typed_wire_request_reads_back_what_compile_wrote_byte_for_byte() {
    let request = crate::conversation();
    let bytes = compiled(&request).to_vec().unwrap();
    let typed: chef_anthropic::wire::Request<'_> = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(serde_json::to_vec(&typed).unwrap(), bytes);
}

#[test]
fn the_typed_wire_request_accepts_string_content_and_string_system() {
    let typed: chef_anthropic::wire::Request<'_> = serde_json::from_str(
        r#"{"model":"m","max_tokens":5,"system":"S","messages":[{"role":"user","content":"hi"}]}"#,
    )
    .unwrap();
    assert_eq!(
        serde_json::to_string(&typed).unwrap(),
        r#"{"model":"m","max_tokens":5,"system":[{"type":"text","text":"S"}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}"#
    );
}

#[test]
fn gemini_thought_signatures_are_reported_once_per_message() {
    let mut signed_call = ToolCall::new("c", "f", json!({}));
    signed_call.thought_signature = Some("sig".into());
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![
            Content::Text {
                text: "t".into(),
                thought_signature: Some("s0".into()),
            },
            Content::ToolCall(signed_call),
        ]),
    ]);
    let c = compiled(&request);
    assert_eq!(
        c.notices,
        vec![Notice::ThoughtSignatureDropped { message: 1 }]
    );
    assert!(
        !String::from_utf8(c.to_vec().unwrap())
            .unwrap()
            .contains("sig")
    );
}

#[test]
fn a_renamed_tool_notice_reads_as_text_not_as_a_debug_dump() {
    let request = Request::new(vec![Message::user("hi")]).with_tools(vec![tool("weather.current")]);
    let c = compile(&request, &CompileOptions::default()).unwrap();
    let text: Vec<String> = c.notices.iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        [r#"tool "weather.current" is sent as "weather_current""#]
    );
}

/// A garbled call kept in the history (refused when routed, answered with its error) is
/// sent with `input: {}`: the API takes only an object there. `null` means `{}` and needs
/// no notice.
#[test]
fn non_object_arguments_go_as_an_empty_object_with_a_notice() {
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![
            Content::ToolCall(ToolCall::new("c", "f", json!("{not json"))),
            Content::ToolCall(ToolCall::new("d", "f", json!([1, 2]))),
            Content::ToolCall(ToolCall::new("e", "f", json!(null))),
        ]),
    ]);
    let c = compiled(&request);
    let text = String::from_utf8(c.to_vec().unwrap()).unwrap();
    for id in ["c", "d", "e"] {
        assert!(
            text.contains(&format!(
                r#"{{"type":"tool_use","id":"{id}","name":"f","input":{{}}}}"#
            )),
            "{text}"
        );
    }
    assert_eq!(
        c.notices,
        vec![
            Notice::ArgumentsNotAnObject {
                message: 1,
                call_id: "c".into()
            },
            Notice::ArgumentsNotAnObject {
                message: 1,
                call_id: "d".into()
            },
        ]
    );
}

/// What Anthropic refuses is never sent, and each change is said: thinking it did not sign
/// (a foreign model's thought), blank text, a message left with nothing, trailing
/// whitespace ending the final assistant turn, and call ids outside `^[a-zA-Z0-9_-]+$`
/// (a Gemini call's, an OpenAI-compatible server's), which are rewritten alike in the call
/// and its result so the two still pair.
#[test]
fn what_the_api_refuses_is_left_out_or_rewritten_with_a_notice() {
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![
            Content::Thinking {
                thinking: "a foreign thought".into(),
                signature: None,
            },
            Content::text("Checking."),
            call(
                "gemini-fc-files.read-0",
                "get_weather",
                json!({"city": "Oslo"}),
            ),
        ]),
        Message::tool_results(vec![ToolResult::text("gemini-fc-files.read-0", "5C")]),
        Message::assistant("   "),
        Message::user("  "),
        Message::user("and now?"),
        Message::assistant("The answer is "),
    ]);
    let compiled = compile(&request, &CompileOptions::default()).unwrap();
    let b: serde_json::Value = serde_json::from_slice(&compiled.to_vec().unwrap()).unwrap();
    let messages = b["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4, "{b}");
    let wire_id = messages[1]["content"][1]["id"].as_str().unwrap();
    assert!(wire_id.starts_with("gemini-fc-files_read-0_"), "{wire_id}");
    assert!(
        wire_id
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
    );
    assert_eq!(
        messages[1]["content"][0],
        json!({"type": "text", "text": "Checking."})
    );
    assert_eq!(messages[2]["content"][0]["tool_use_id"], wire_id);
    assert_eq!(
        messages[3],
        json!({"role": "assistant", "content": [{"type": "text", "text": "The answer is"}]})
    );
    // The blank user turn went, so "and now?" joined the tool results' turn.
    assert_eq!(messages[2]["content"][1]["text"], "and now?");
    let notices: Vec<String> = compiled.notices.iter().map(ToString::to_string).collect();
    let said = |needle: &str| notices.iter().any(|n| n.contains(needle));
    assert!(
        said("thinking without a signature in message 1"),
        "{notices:?}"
    );
    assert!(
        said("tool call id \"gemini-fc-files.read-0\" in message 1"),
        "{notices:?}"
    );
    assert!(
        said("message 3 has nothing Anthropic accepts"),
        "{notices:?}"
    );
    assert!(
        said("message 4 has nothing Anthropic accepts"),
        "{notices:?}"
    );
    assert!(
        said("trailing whitespace \" \" cut from the final assistant message 6"),
        "{notices:?}"
    );

    // A user turn of nothing but blank text is sent as it is (the API refuses it, naming
    // it): leaving it out would make the request empty, start it with the assistant, or
    // end it on the assistant's turn, which the API would read as a prefill.
    for request in [
        Request::new(vec![Message::user(" ")]),
        Request::new(vec![
            Message::user("q"),
            Message::assistant("a"),
            Message::user(""),
        ]),
    ] {
        let compiled = compile(&request, &CompileOptions::default()).unwrap();
        let b: serde_json::Value = serde_json::from_slice(&compiled.to_vec().unwrap()).unwrap();
        let last = b["messages"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last["role"], "user", "{b}");
        assert!(
            last["content"][0]["text"]
                .as_str()
                .unwrap()
                .trim()
                .is_empty(),
            "{b}"
        );
        assert!(
            !compiled
                .notices
                .iter()
                .any(|n| matches!(n, Notice::EmptyMessageSkipped { .. })),
            "{:?}",
            compiled.notices
        );
    }
}
