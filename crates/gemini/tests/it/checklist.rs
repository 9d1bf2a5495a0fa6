//! providers.md §7 checklist items for Gemini (C29, D39–42, H70–81), adapted to the block
//! IR, plus the deliberate departures the crate documents.

use chef_gemini::{CompileOptions, Error, Notice, SchemaMode, ThinkingMode, prefill_enforcement};
use chef_ir::{
    Attachment, Content, Message, NativeTool, Request, Role, Target, ToolCall, ToolDefinition,
    ToolResult,
};
use serde_json::{Value, json};

use crate::{
    assert_notice, body, compile,
    messages::{assistant_calls as calls, call, user_with},
};

fn with(request: &Request, options: CompileOptions) -> Value {
    serde_json::to_value(&chef_gemini::compile(request, &options).unwrap().body).unwrap()
}

/// A user turn `q`, the assistant's call `id` of `name` (no arguments), and its result.
fn one_call_round(id: &str, name: &str, result: &str) -> Vec<Message> {
    vec![
        Message::user("q"),
        Message::assistant_with(vec![call(id, name, json!({}))]),
        Message::tool_results(vec![ToolResult::text(id, result)]),
    ]
}

/// Compiles `request` with default options, asserting the whole body is `expected`.
#[track_caller]
fn compiles_to(request: &Request, expected: Value) -> chef_gemini::Compiled<'_> {
    let compiled = compile(request);
    assert_eq!(json_body(&compiled), expected);
    compiled
}

/// The compiled body as a JSON value.
fn json_body(compiled: &chef_gemini::Compiled<'_>) -> Value {
    serde_json::to_value(&compiled.body).unwrap()
}

#[test]
fn h70_system_messages_go_to_system_instruction_and_assistant_becomes_model() {
    let request = Request::new(vec![
        Message::system("A").with_cache_breakpoint(true),
        Message::system("B"),
        Message::user("Hello"),
        Message::assistant("Hi"),
    ]);
    assert_eq!(
        body(&request),
        json!({
            "systemInstruction": {"parts": [{"text": "A"}, {"text": "B"}]},
            "contents": [
                {"role": "user", "parts": [{"text": "Hello"}]},
                {"role": "model", "parts": [{"text": "Hi"}]}
            ]
        })
    );
    let plain = body(&Request::new(vec![Message::user("Hi")]));
    assert!(plain.get("systemInstruction").is_none());
    assert!(plain.get("tools").is_none());
}

#[test]
fn h71_h72_results_are_wrapped_as_output_or_error_and_never_reparsed() {
    let request = Request::new(vec![
        Message::user("q"),
        calls(&[("c1", "get_weather"), ("c2", "read"), ("c3", "count")]),
        Message::tool_results(vec![
            ToolResult::text("c1", r#"{"temp":15.0,"unit":"celsius"}"#),
            ToolResult::error("c2", "File not found"),
            ToolResult::text("c3", "42"),
        ]),
    ]);
    let b = body(&request);
    assert_eq!(
        b["contents"][2]["parts"],
        json!([
            {"functionResponse": {"name": "get_weather", "response": {"output": "{\"temp\":15.0,\"unit\":\"celsius\"}"}}},
            {"functionResponse": {"name": "read", "response": {"error": "File not found"}}},
            {"functionResponse": {"name": "count", "response": {"output": "42"}}}
        ])
    );
}

#[test]
fn results_with_several_texts_send_an_array_and_keep_their_attachments() {
    let mut result = ToolResult::text("c1", "first");
    result.content.push(Content::text("second"));
    result
        .content
        .push(Content::Attachment(Attachment::base64("image/png", "AAA")));
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![call("c1", "shot", json!({}))]),
        Message::tool_results(vec![result]),
    ]);
    assert_eq!(
        body(&request)["contents"][2]["parts"],
        json!([
            {"functionResponse": {"name": "shot", "response": {"output": ["first", "second"]}}},
            {"inlineData": {"mimeType": "image/png", "data": "AAA"}}
        ])
    );
}

#[test]
fn h73_a_result_without_a_name_takes_the_name_of_the_call_it_answers() {
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![call("call_fallback", "lookup", json!({}))]),
        Message::tool_results(vec![ToolResult::text("call_fallback", "x")]),
        Message::tool_results(vec![ToolResult::text("stray", "y")]),
    ]);
    let compiled = compile(&request);
    let b = json_body(&compiled);
    assert_eq!(
        b["contents"][2]["parts"][0]["functionResponse"]["name"],
        "lookup"
    );
    // No call answers "stray": its id is used, and that is reported.
    assert_eq!(
        b["contents"][2]["parts"][1]["functionResponse"]["name"],
        "stray"
    );
    assert_notice(
        &compiled,
        &Notice::ToolResultUnnamed {
            message: 3,
            tool_call_id: "stray".into(),
        },
    );
}

#[test]
fn h74_calls_become_function_call_parts_with_arguments_as_given() {
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![
            Content::text(""),
            call("a", "get_weather", json!({"city": "London"})),
        ]),
        Message::user("again"),
        Message::assistant_with(vec![
            Content::text("Let me check..."),
            call("b", "f", json!({"z": 1, "a": {"y": 2.0, "b": 1e2}})),
            call("c", "g", json!({})),
            call("d", "h", json!({"n": 18446744073709551615u64})),
        ]),
    ]);
    let text = crate::text(&compile(&request));
    // A turn Gemini did not sign: its first call carries the documented stand-in.
    assert!(text.contains(r#"{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"London"}},"thoughtSignature":"skip_thought_signature_validator"}]}"#), "{text}");
    // Key order kept, numbers as serde_json holds them (no trip through doubles).
    assert!(text.contains(r#"{"role":"model","parts":[{"text":"Let me check..."},{"functionCall":{"name":"f","args":{"z":1,"a":{"y":2.0,"b":100.0}}},"thoughtSignature":"skip_thought_signature_validator"},{"functionCall":{"name":"g","args":{}}},{"functionCall":{"name":"h","args":{"n":18446744073709551615}}}]}"#), "{text}");
}

/// A garbled call kept in the history (refused when routed, answered with its error) must
/// not make every later compile fail: its arguments go as `{}`, said by a notice.
#[test]
fn non_object_arguments_go_as_an_empty_object_with_a_notice() {
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![
            call("c", "f", json!("{not json")),
            call("d", "f", json!([1, 2])),
            call("e", "f", json!(null)),
        ]),
    ]);
    let c = chef_gemini::compile(&request, &CompileOptions::default()).unwrap();
    let text = String::from_utf8(chef_gemini::to_vec(&c).unwrap()).unwrap();
    assert!(
        text.contains(r#"[{"functionCall":{"name":"f","args":{}},"thoughtSignature":"skip_thought_signature_validator"},{"functionCall":{"name":"f","args":{}}},{"functionCall":{"name":"f","args":{}}}]"#),
        "{text}"
    );
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

#[test]
fn h75_parallel_results_merge_into_one_user_content_and_roles_alternate() {
    let request = Request::new(vec![
        Message::user("q"),
        calls(&[("1", "a"), ("2", "b"), ("3", "c")]),
        Message::tool_results(vec![ToolResult::text("1", "x")]),
        Message::tool_results(vec![ToolResult::text("2", "y")]),
        Message::tool_results(vec![ToolResult::text("3", "z")]),
    ]);
    let b = body(&request);
    let contents = b["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 3);
    let names: Vec<&str> = contents[2]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["functionResponse"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
    let roles: Vec<&str> = contents
        .iter()
        .map(|c| c["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "model", "user"]);
}

#[test]
fn h76_consecutive_same_role_contents_are_merged() {
    let b = body(&Request::new(vec![Message::user("A"), Message::user("B")]));
    assert_eq!(
        b["contents"],
        json!([{"role": "user", "parts": [{"text": "A"}, {"text": "B"}]}])
    );
    let b = body(&Request::new(vec![
        Message::user("go"),
        Message::assistant("first"),
        Message::assistant("second"),
        Message::user("why"),
    ]));
    assert_eq!(b["contents"].as_array().unwrap().len(), 3);
    assert_eq!(
        b["contents"][1]["parts"],
        json!([{"text": "first"}, {"text": "second"}])
    );
}

#[test]
fn h77_thought_signatures_ride_on_their_parts() {
    let mut signed = ToolCall::new("c1", "f", json!({}));
    signed.thought_signature = Some("S2".into());
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![
            Content::Text {
                text: "t".into(),
                thought_signature: Some("S1".into()),
            },
            Content::ToolCall(signed),
            call("c2", "g", json!({})),
            // An empty text part that carries a signature is kept for it.
            Content::Text {
                text: String::new(),
                thought_signature: Some("S3".into()),
            },
        ]),
    ]);
    assert_eq!(
        body(&request)["contents"][1]["parts"],
        json!([
            {"text": "t", "thoughtSignature": "S1"},
            {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "S2"},
            {"functionCall": {"name": "g", "args": {}}},
            {"text": "", "thoughtSignature": "S3"}
        ])
    );
}

fn thinking_turn() -> Request {
    Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![
            Content::Thinking {
                thinking: "T".into(),
                signature: Some("sig".into()),
            },
            Content::RedactedThinking { data: "xx".into() },
            call("c", "f", json!({})),
        ]),
    ])
}

#[test]
fn h78_thinking_is_dropped_by_default_and_reported() {
    let request = thinking_turn();
    let compiled = compile(&request);
    let text = crate::text(&compiled);
    assert!(!text.contains("thought"), "{text}");
    assert_notice(&compiled, &Notice::ThinkingDropped { message: 1 });
    assert_notice(&compiled, &Notice::RedactedThinkingDropped { message: 1 });
}

#[test]
fn h78_thinking_as_text_is_a_text_part_before_the_call() {
    let request = thinking_turn();
    let options = CompileOptions::default().with_thinking(ThinkingMode::AsText);
    let compiled = chef_gemini::compile(&request, &options).unwrap();
    let b = json_body(&compiled);
    assert_eq!(
        b["contents"][1]["parts"],
        json!([{"text": "<thinking>\nT\n</thinking>\n\n"}, {"functionCall": {"name": "f", "args": {}}}])
    );
    assert_notice(&compiled, &Notice::ThinkingSignatureDropped { message: 1 });
}

#[test]
fn native_thinking_is_a_thought_part_with_its_signature() {
    let options = CompileOptions::default().with_thinking(ThinkingMode::Native);
    let b = with(&thinking_turn(), options);
    assert_eq!(
        b["contents"][1]["parts"][0],
        json!({"text": "T", "thought": true, "thoughtSignature": "sig"})
    );
}

#[test]
fn h79_attachments_become_inline_data_or_file_data() {
    let request = Request::new(vec![user_with(
        "look",
        vec![
            Attachment::base64("image/png", "AAA").with_filename("a.png"),
            Attachment::url("image/jpeg", "https://x.test/a.jpg"),
            Attachment::url("application/pdf", "gs://bucket/c.pdf"),
            Attachment::url("", "data:image/gif;base64,R0lG"),
        ],
    )]);
    let compiled = compile(&request);
    assert_eq!(
        json_body(&compiled)["contents"][0]["parts"],
        json!([
            {"text": "look"},
            {"inlineData": {"mimeType": "image/png", "data": "AAA"}},
            {"fileData": {"mimeType": "image/jpeg", "fileUri": "https://x.test/a.jpg"}},
            {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://bucket/c.pdf"}},
            {"inlineData": {"mimeType": "image/gif", "data": "R0lG"}}
        ])
    );
    assert_notice(&compiled, &Notice::FilenameDropped { message: 0 });
    let bad = Request::new(vec![Message::new(
        Role::User,
        vec![Content::Attachment(Attachment::url(
            "text/plain",
            "data:text/plain,hi%20there",
        ))],
    )]);
    assert!(matches!(
        chef_gemini::compile(&bad, &CompileOptions::default()),
        Err(Error::UnsupportedDataUrl { message: 0 })
    ));
}

#[test]
fn assistant_attachments_are_sent_not_dropped() {
    let request = Request::new(vec![
        Message::user("draw"),
        Message::assistant_with(vec![Content::Attachment(Attachment::base64(
            "image/png",
            "IMG",
        ))]),
    ]);
    assert_eq!(
        body(&request)["contents"][1]["parts"],
        json!([{"inlineData": {"mimeType": "image/png", "data": "IMG"}}])
    );
}

#[test]
fn c29_a_positional_system_message_becomes_user_content_in_place() {
    let request = Request::new(vec![
        Message::user("u"),
        Message::system("ANN").with_positional(true),
        Message::system("SYS"),
    ]);
    let compiled = compiles_to(
        &request,
        json!({
            "systemInstruction": {"parts": [{"text": "SYS"}]},
            "contents": [{"role": "user", "parts": [{"text": "u"}, {"text": "ANN"}]}]
        }),
    );
    assert_notice(&compiled, &Notice::PositionalSystemAsUser { message: 1 });
}

#[test]
fn d39_prefill_is_a_new_part_on_the_last_user_turn_and_attachments_survive() {
    let request = Request::new(vec![user_with(
        "u",
        vec![
            Attachment::base64("image/png", "AAA"),
            Attachment::url("application/pdf", "gs://b/c.pdf"),
        ],
    )])
    .with_prefill("PRE");
    let compiled = compile(&request);
    assert_eq!(
        json_body(&compiled)["contents"],
        json!([{"role": "user", "parts": [
            {"text": "u"},
            {"inlineData": {"mimeType": "image/png", "data": "AAA"}},
            {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://b/c.pdf"}},
            {"text": prefill_enforcement("PRE")}
        ]}])
    );
    assert_notice(&compiled, &Notice::PrefillDegraded { new_content: false });
}

#[test]
fn d40_prefill_without_a_user_turn_adds_one_instead_of_touching_the_system_instruction() {
    let request = Request::new(vec![Message::system("S")]).with_prefill("PRE");
    let compiled = compiles_to(
        &request,
        json!({
            "systemInstruction": {"parts": [{"text": "S"}]},
            "contents": [{"role": "user", "parts": [{"text": prefill_enforcement("PRE")}]}]
        }),
    );
    assert_notice(&compiled, &Notice::PrefillDegraded { new_content: true });
}

#[test]
fn d41_prefill_lands_on_the_last_user_turn_only() {
    let request = Request::new(vec![
        Message::user("greet"),
        Message::assistant("first reply"),
        Message::user("translate"),
    ])
    .with_prefill("<lang=fr>");
    let b = body(&request);
    let contents = b["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 3);
    assert_eq!(contents[0]["parts"], json!([{"text": "greet"}]));
    assert_eq!(contents[1]["parts"], json!([{"text": "first reply"}]));
    assert_eq!(contents[2]["parts"][0], json!({"text": "translate"}));
    assert!(
        contents[2]["parts"][1]["text"]
            .as_str()
            .unwrap()
            .contains("\"<lang=fr>\"")
    );
}

#[test]
fn d42_prefill_after_tool_results_never_rewrites_an_earlier_turn() {
    let request = Request::new(one_call_round("c", "f", "r")).with_prefill("PRE");
    let b = body(&request);
    assert_eq!(b["contents"][0]["parts"], json!([{"text": "q"}]));
    assert_eq!(
        b["contents"][2]["parts"],
        json!([
            {"functionResponse": {"name": "f", "response": {"output": "r"}}},
            {"text": prefill_enforcement("PRE")}
        ])
    );
    // The prefill after a model turn becomes a new user turn.
    let after_model =
        Request::new(vec![Message::user("q"), Message::assistant("a")]).with_prefill("P");
    let b = body(&after_model);
    assert_eq!(
        b["contents"][2],
        json!({"role": "user", "parts": [{"text": prefill_enforcement("P")}]})
    );
}

#[test]
fn prefill_enforcement_quotes_the_prefill_verbatim() {
    let text = prefill_enforcement("say \"hi\"\n");
    let lines: Vec<&str> = text.split('\n').collect();
    assert_eq!(
        lines[0],
        r#"<ephemeral_message type="prefill_enforcement">"#
    );
    assert_eq!(lines[2], "\"say \"hi\"");
    assert_eq!(lines[3], "\"");
    assert_eq!(*lines.last().unwrap(), "</ephemeral_message>");
}

#[test]
fn all_function_declarations_share_one_tool_object_and_native_tools_follow() {
    let request = Request::new(vec![Message::user("q")])
        .with_tools(vec![
            ToolDefinition::new("a", json!({"type": "object", "properties": {"x": {"type": "string"}}}))
                .with_description("A."),
            ToolDefinition::new("b", json!({"type": "object"})).with_defer_loading(true),
        ])
        .with_native_tools(vec![
            NativeTool {
                targets: vec![Target::Gemini],
                value: json!({"googleSearch": {}}),
            },
            NativeTool {
                targets: vec![Target::Anthropic],
                value: json!({"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}),
            },
            NativeTool {
                targets: vec![Target::Gemini, Target::OpenAiResponses],
                value: json!({"codeExecution": {}}),
            },
        ]);
    let compiled = compile(&request);
    assert_eq!(
        json_body(&compiled)["tools"],
        json!([
            {"functionDeclarations": [
                {"name": "a", "description": "A.", "parameters": {"type": "object", "properties": {"x": {"type": "string"}}}},
                {"name": "b"}
            ]},
            {"googleSearch": {}},
            {"codeExecution": {}}
        ])
    );
    assert_notice(
        &compiled,
        &Notice::NativeToolLeftOut {
            index: 1,
            targets: vec![Target::Anthropic],
        },
    );
    assert_notice(&compiled, &Notice::DeferLoadingIgnored { tool: "b".into() });
    let bad = Request::new(vec![]).with_native_tools(vec![NativeTool {
        targets: vec![Target::Gemini],
        value: json!("googleSearch"),
    }]);
    assert!(matches!(
        chef_gemini::compile(&bad, &CompileOptions::default()),
        Err(Error::NativeToolNotObject { index: 0 })
    ));
}

#[test]
fn json_schema_mode_sends_the_schema_verbatim() {
    let schema = json!({"type": "object", "properties": {"x": {"type": ["string", "null"]}}, "additionalProperties": false});
    let request = Request::new(vec![Message::user("q")])
        .with_tools(vec![ToolDefinition::new("a", schema.clone())]);
    let b = with(
        &request,
        CompileOptions::default().with_schema(SchemaMode::JsonSchema),
    );
    assert_eq!(
        b["tools"][0]["functionDeclarations"][0],
        json!({"name": "a", "parametersJsonSchema": schema})
    );
}

#[test]
fn refused_names_are_mapped_everywhere_and_reported() {
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![call("c", "my tool/v2", json!({}))]),
        Message::tool_results(vec![ToolResult::text("c", "r").with_name("my tool/v2")]),
    ])
    .with_tools(vec![ToolDefinition::new(
        "my tool/v2",
        json!({"type": "object"}),
    )]);
    let compiled = compile(&request);
    let wire = compiled.names.to_wire("my tool/v2").to_owned();
    assert_ne!(wire, "my tool/v2");
    assert!(chef_ir::NameRule::GEMINI.accepts(&wire));
    let b = json_body(&compiled);
    assert_eq!(
        b["tools"][0]["functionDeclarations"][0]["name"],
        wire.as_str()
    );
    assert_eq!(
        b["contents"][1]["parts"][0]["functionCall"]["name"],
        wire.as_str()
    );
    assert_eq!(
        b["contents"][2]["parts"][0]["functionResponse"]["name"],
        wire.as_str()
    );
    assert_notice(
        &compiled,
        &Notice::ToolRenamed {
            real: "my tool/v2".into(),
            wire: wire.clone(),
        },
    );
    // Dots and colons are fine on Gemini: no renaming.
    let dotted = Request::new(vec![]).with_tools(vec![ToolDefinition::new("a.b:c", json!({}))]);
    assert!(compile(&dotted).names.is_identity());
}

#[test]
fn call_ids_are_sent_only_when_asked() {
    let request = Request::new(one_call_round("c1", "f", "r"));
    assert!(!crate::text(&compile(&request)).contains("c1"));
    let b = with(&request, CompileOptions::default().with_call_ids(true));
    assert_eq!(b["contents"][1]["parts"][0]["functionCall"]["id"], "c1");
    assert_eq!(b["contents"][2]["parts"][0]["functionResponse"]["id"], "c1");
}

#[test]
fn what_gemini_cannot_take_is_left_out_and_reported() {
    let request = Request::new(vec![
        Message::user("q"),
        Message::assistant_with(vec![Content::RedactedThinking { data: "x".into() }]),
        Message::assistant_with(vec![
            Content::Unknown {
                target: Some(Target::Anthropic),
                value: json!({"type": "server_tool_use"}),
            },
            Content::Unknown {
                target: Some(Target::Gemini),
                value: json!({"executableCode": {"language": "PYTHON", "code": "print(1)"}}),
            },
        ]),
        Message::user(""),
    ]);
    let compiled = compile(&request);
    let b = json_body(&compiled);
    assert_eq!(
        b["contents"],
        json!([
            {"role": "user", "parts": [{"text": "q"}]},
            {"role": "model", "parts": [{"executableCode": {"language": "PYTHON", "code": "print(1)"}}]}
        ])
    );
    for notice in [
        Notice::RedactedThinkingDropped { message: 1 },
        Notice::EmptyMessageSkipped { message: 1 },
        Notice::ContentDropped {
            message: 2,
            target: Some(Target::Anthropic),
        },
        Notice::EmptyMessageSkipped { message: 3 },
    ] {
        assert!(compiled.notices.contains(&notice), "{notice}");
    }
}

#[test]
fn the_cache_prefix_ends_with_the_last_breakpoint_message() {
    let conversation = crate::conversation();
    let compiled = compile(&conversation);
    // Breakpoint on message 7 (model); contents 0..6 hold messages 1..=7; the last
    // content (message 8 plus the prefill) is volatile.
    assert_eq!(compiled.body.contents.len(), 7);
    assert_eq!(compiled.cache_prefix, Some(6));
    // A system message after the breakpoint makes systemInstruction volatile.
    let mut late = Request::new(vec![
        Message::user("a").with_cache_breakpoint(true),
        Message::system("late"),
    ]);
    assert_eq!(compile(&late).cache_prefix, None);
    late.messages.pop();
    // The breakpoint's content is the last one: the next user message would merge into it.
    assert_eq!(compile(&late).cache_prefix, Some(0));
    late.messages.push(Message::assistant("b"));
    assert_eq!(compile(&late).cache_prefix, Some(1));
    // Prefill appended to the breakpoint's own content: that content is not stable.
    let mut prefilled = Request::new(vec![
        Message::user("a"),
        Message::assistant("b"),
        Message::user("c").with_cache_breakpoint(true),
    ])
    .with_prefill("P");
    assert_eq!(compile(&prefilled).cache_prefix, Some(2));
    prefilled.messages.push(Message::assistant("d"));
    assert_eq!(compile(&prefilled).cache_prefix, Some(3));
    prefilled.messages.truncate(3);
    prefilled.messages.push(Message::tool_results(vec![]));
    assert_eq!(compile(&prefilled).cache_prefix, Some(2));
    assert_eq!(
        compile(&Request::new(vec![Message::user("a")])).cache_prefix,
        None
    );
}

#[test]
fn the_callers_request_is_not_modified() {
    let conversation = crate::conversation();
    let before = conversation.clone();
    let _ = compile(&conversation);
    assert_eq!(conversation, before);
}

#[test]
fn h80_an_anthropic_compaction_summary_survives_as_text() {
    let request = Request::new(vec![Message::new(
        Role::User,
        vec![
            Content::Unknown {
                target: Some(Target::Anthropic),
                value: json!({"type": "compaction", "content": "SUM"}),
            },
            Content::text("u"),
        ],
    )]);
    let compiled = compile(&request);
    assert_eq!(
        json_body(&compiled)["contents"][0]["parts"],
        json!([{"text": format!("{}\nSUM", chef_gemini::COMPACTION_HEADER)}, {"text": "u"}])
    );
    assert_notice(&compiled, &Notice::CompactionAsText { message: 0 });
}

#[test]
fn non_text_system_content_moves_to_a_user_turn_in_place() {
    let request = Request::new(vec![
        Message::new(
            Role::System,
            vec![
                Content::text("S"),
                Content::Attachment(Attachment::base64("application/pdf", "PDF")),
            ],
        ),
        Message::user("q"),
    ]);
    let compiled = compiles_to(
        &request,
        json!({
            "systemInstruction": {"parts": [{"text": "S"}]},
            "contents": [{"role": "user", "parts": [
                {"inlineData": {"mimeType": "application/pdf", "data": "PDF"}},
                {"text": "q"}
            ]}]
        }),
    );
    assert_notice(&compiled, &Notice::SystemContentMoved { message: 0 });
}
