//! Parsing Gemini replies and request bodies (providers.md §6.4, checklist J93–94, §4).

use chef_gemini::{Error, PH_CONTINUES, PH_NO_RESULT, parse_request, parse_response, wire};
use chef_ir::{
    Attachment, Content, Message, NameRule, Request, Role, Target, ToolCall, ToolName, ToolResult,
    WireNames,
};
use serde_json::{Value, json};

fn reply(parts: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "candidates": [{
            "content": {"role": "model", "parts": parts},
            "finishReason": "STOP",
            "index": 0,
            "safetyRatings": []
        }],
        "usageMetadata": {"promptTokenCount": 120, "candidatesTokenCount": 30, "totalTokenCount": 170, "thoughtsTokenCount": 20},
        "modelVersion": "gemini-3.1-pro-preview",
        "responseId": "resp-1"
    }))
    .unwrap()
}

#[test]
fn a_reply_parses_part_by_part() {
    let body = reply(json!([
        {"text": "Planning the lookups.", "thought": true, "thoughtSignature": "T1"},
        {"text": "Checking both.", "thoughtSignature": "S1"},
        {"functionCall": {"name": "get_weather", "args": {"city": "Oslo", "days": 1.0}}, "thoughtSignature": "S2"},
        {"functionCall": {"name": "get_weather", "args": {"city": "Bergen"}}},
        {"functionCall": {"id": "fc-7", "name": "ping"}},
        {"inlineData": {"mimeType": "image/png", "data": "iVBOR"}},
        {"fileData": {"fileUri": "gs://b/out.csv"}},
        {"executableCode": {"language": "PYTHON", "code": "print(6)"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "6\n"}},
        {"text": "with metadata", "partMetadata": {"k": 1}}
    ]));
    let parsed = parse_response(&body, &WireNames::default(), &[]).unwrap();
    assert_eq!(parsed.finish_reason, Some(wire::FinishReason::STOP));
    let usage = parsed.usage.unwrap();
    assert_eq!(usage.prompt_token_count, Some(120));
    assert_eq!(usage.thoughts_token_count, Some(20));
    assert_eq!(
        parsed.model_version.as_deref(),
        Some("gemini-3.1-pro-preview")
    );
    assert_eq!(parsed.response_id.as_deref(), Some("resp-1"));
    assert_eq!(parsed.metadata.get("safetyRatings"), Some(&json!([])));
    let mut weather = ToolCall::new(
        "gemini-fc-get_weather-0",
        "get_weather",
        json!({"city": "Oslo", "days": 1.0}),
    );
    weather.thought_signature = Some("S2".into());
    assert_eq!(
        parsed.message,
        Message::new(
            Role::Assistant,
            vec![
                Content::Thinking {
                    thinking: "Planning the lookups.".into(),
                    signature: Some("T1".into())
                },
                Content::Text {
                    text: "Checking both.".into(),
                    thought_signature: Some("S1".into())
                },
                Content::ToolCall(weather),
                Content::ToolCall(ToolCall::new(
                    "gemini-fc-get_weather-1",
                    "get_weather",
                    json!({"city": "Bergen"})
                )),
                Content::ToolCall(ToolCall::new("fc-7", "ping", json!({}))),
                Content::Attachment(Attachment::base64("image/png", "iVBOR")),
                Content::Attachment(Attachment::url("", "gs://b/out.csv")),
                Content::Unknown {
                    target: Some(Target::Gemini),
                    value: json!({"executableCode": {"language": "PYTHON", "code": "print(6)"}})
                },
                Content::Unknown {
                    target: Some(Target::Gemini),
                    value: json!({"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "6\n"}})
                },
                Content::Unknown {
                    target: Some(Target::Gemini),
                    value: json!({"text": "with metadata", "partMetadata": {"k": 1}})
                },
            ]
        )
    );
}

#[test]
fn a_parsed_reply_compiles_back_byte_for_byte() {
    let parts = json!([
        {"text": "Checking.", "thoughtSignature": "S1"},
        {"functionCall": {"name": "get_weather", "args": {"city": "Oslo", "n": 1.50, "big": 12345678901234567890u64}}, "thoughtSignature": "S2"},
        {"executableCode": {"language": "PYTHON", "code": "print(6)"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "6\n"}},
        {"inlineData": {"mimeType": "image/png", "data": "iVBOR", "displayName": "x"}},
        {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://b/c.pdf"}}
    ]);
    let parsed = parse_response(&reply(parts.clone()), &WireNames::default(), &[]).unwrap();
    let request = Request::new(vec![Message::user("q"), parsed.message]);
    let compiled = crate::compile(&request);
    let sent = serde_json::to_string(&compiled.body.contents[1].parts).unwrap();
    assert_eq!(sent, serde_json::to_string(&parts).unwrap());
}

#[test]
fn ids_continue_the_conversation_count_and_never_collide() {
    let history = vec![
        Message::user("q"),
        Message::assistant_with(vec![Content::ToolCall(ToolCall::new(
            "gemini-fc-f-0",
            "f",
            json!({}),
        ))]),
        Message::assistant_with(vec![Content::ToolCall(ToolCall::new(
            "gemini-fc-f-2",
            "f",
            json!({}),
        ))]),
    ];
    let body = reply(
        json!([{"functionCall": {"name": "f", "args": {}}}, {"functionCall": {"name": "f", "args": {}}}]),
    );
    let parsed = parse_response(&body, &WireNames::default(), &history).unwrap();
    let ids: Vec<&str> = parsed.message.tool_calls().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["gemini-fc-f-3", "gemini-fc-f-4"]);
}

#[test]
fn wire_names_map_back_to_real_names() {
    let names = [ToolName::from("my tool/v2")];
    let table = WireNames::new(&names, NameRule::GEMINI);
    let wire_name = table.to_wire("my tool/v2").to_owned();
    let body = reply(
        json!([{"functionCall": {"name": wire_name, "args": {}}}, {"functionCall": {"name": "invented", "args": {}}}]),
    );
    let parsed = parse_response(&body, &table, &[]).unwrap();
    let names: Vec<&str> = parsed
        .message
        .tool_calls()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["my tool/v2", "invented"]);
}

#[test]
fn blocked_empty_and_malformed_replies_are_typed_errors() {
    let blocked = br#"{"promptFeedback":{"blockReason":"SAFETY"}}"#;
    assert!(matches!(
        parse_response(blocked, &WireNames::default(), &[]),
        Err(Error::NoCandidate { block_reason: Some(ref r) }) if r == "SAFETY"
    ));
    let not_json = b"<html>502</html>";
    match parse_response(not_json, &WireNames::default(), &[]) {
        Err(Error::InvalidJson { body, .. }) => assert_eq!(body, "<html>502</html>"),
        other => panic!("{other:?}"),
    }
    let wrong = reply(json!([{"functionCall": {"name": 7}}]));
    assert!(parse_response(&wrong, &WireNames::default(), &[]).is_err());
    let wrong = reply(json!([{"text": "x", "thought": "yes"}]));
    assert!(parse_response(&wrong, &WireNames::default(), &[]).is_err());
    // A candidate with no content (finished for safety) is an empty message.
    let safety = br#"{"candidates":[{"finishReason":"SAFETY"}]}"#;
    let parsed = parse_response(safety, &WireNames::default(), &[]).unwrap();
    assert!(parsed.message.content.is_empty());
    assert_eq!(parsed.finish_reason, Some(wire::FinishReason::SAFETY));
}

#[test]
fn unknown_part_shapes_stay_unknown_and_serialise_unchanged() {
    for raw in [
        json!({"inlineData": {"mimeType": "image/png", "data": "A"}, "thoughtSignature": "s"}),
        json!({"functionCall": {"name": "f", "args": {}}, "thought": true}),
        json!({"functionCall": {"name": "f", "args": {}, "partialArgs": []}}),
        json!({"text": "a", "inlineData": {"mimeType": "x", "data": "y"}}),
        json!({"thoughtSignature": "only"}),
        json!({"toolCall": {"id": "t1"}}),
    ] {
        let part: wire::Part<'static> = serde_json::from_value(raw.clone()).unwrap();
        assert!(matches!(part, wire::Part::Unknown(_)), "{raw}");
        assert_eq!(serde_json::to_value(&part).unwrap(), raw);
    }
}

#[test]
fn absent_optional_fields_stay_absent() {
    let request = Request::new(vec![Message::user("hi")]);
    let text = crate::text(&crate::compile(&request));
    assert_eq!(
        text,
        r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#
    );
    let decl: wire::FunctionDeclaration<'static> =
        serde_json::from_value(json!({"name": "f"})).unwrap();
    assert_eq!(serde_json::to_string(&decl).unwrap(), r#"{"name":"f"}"#);
    let resp: wire::Response = serde_json::from_value(json!({"candidates": []})).unwrap();
    assert_eq!(serde_json::to_string(&resp).unwrap(), "{}");
}

fn request_body(value: Value) -> Request {
    parse_request(&serde_json::to_vec(&value).unwrap()).unwrap()
}

#[test]
fn j93_same_name_calls_get_counted_ids_and_responses_pair_fifo() {
    let request = request_body(json!({
        "contents": [
            {"role": "user", "parts": [{"text": "weather in two cities"}]},
            {"role": "model", "parts": [
                {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}},
                {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}}
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "get_weather", "response": {"output": "cold"}}},
                {"functionResponse": {"name": "get_weather", "response": {"temp": 25}}}
            ]},
            {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"error": "down"}}}]}
        ]
    }));
    let m = &request.messages;
    assert_eq!(m.len(), 5);
    let ids: Vec<&str> = m
        .iter()
        .flat_map(Message::tool_calls)
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(
        ids,
        [
            "gemini-fc-get_weather-0",
            "gemini-fc-get_weather-1",
            "gemini-fc-get_weather-2"
        ]
    );
    assert_eq!(
        m[2],
        Message::tool_results(vec![
            ToolResult::text("gemini-fc-get_weather-0", "cold").with_name("get_weather"),
            ToolResult::text("gemini-fc-get_weather-1", r#"{"temp":25}"#).with_name("get_weather"),
        ])
    );
    assert_eq!(
        m[4],
        Message::tool_results(vec![
            ToolResult::error("gemini-fc-get_weather-2", "down").with_name("get_weather")
        ])
    );
}

#[test]
fn j94_signatures_are_kept_and_missing_results_get_named_placeholders() {
    let request = request_body(json!({
        "systemInstruction": {"parts": [{"text": "S1"}, {"text": "S2"}]},
        "contents": [
            {"role": "user", "parts": [{"text": "q"}, {"inlineData": {"mimeType": "image/png", "data": "A"}}]},
            {"role": "model", "parts": [
                {"text": "t", "thoughtSignature": "S0"},
                {"functionCall": {"name": "f", "args": {"a": 1}}, "thoughtSignature": "SC"}
            ]},
            {"role": "user", "parts": [{"text": "never mind"}]}
        ],
        "tools": [
            {"functionDeclarations": [{"name": "f", "description": "F.", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}, {"name": "g"}]},
            {"googleSearch": {}}
        ]
    }));
    let m = &request.messages;
    assert_eq!(m[0], Message::system("S1"));
    assert_eq!(m[1], Message::system("S2"));
    assert_eq!(
        m[2].content,
        vec![
            Content::text("q"),
            Content::Attachment(Attachment::base64("image/png", "A"))
        ]
    );
    let mut call = ToolCall::new("gemini-fc-f-0", "f", json!({"a": 1}));
    call.thought_signature = Some("SC".into());
    assert_eq!(
        m[3].content,
        vec![
            Content::Text {
                text: "t".into(),
                thought_signature: Some("S0".into())
            },
            Content::ToolCall(call)
        ]
    );
    assert_eq!(
        m[4],
        Message::tool_results(vec![
            ToolResult::text("gemini-fc-f-0", PH_NO_RESULT).with_name("f")
        ])
    );
    assert_eq!(m[5], Message::user("never mind"));
    assert_eq!(request.tools.len(), 2);
    assert_eq!(request.tools[0].description, "F.");
    assert_eq!(request.tools[1].input_schema, json!({"type": "object"}));
    assert_eq!(request.native_tools[0].value, json!({"googleSearch": {}}));
    assert_eq!(request.native_tools[0].targets, vec![Target::Gemini]);
}

#[test]
fn request_history_is_repaired() {
    // A response before any call is an orphan; a model turn first gets a user turn before it.
    let request = request_body(json!({
        "contents": [
            {"role": "user", "parts": [{"functionResponse": {"id": "x", "name": "f", "response": {"output": "r"}}}]},
            {"role": "model", "parts": [{"text": "hello"}]},
            {"role": "user", "parts": [{"text": "hi"}]}
        ]
    }));
    assert_eq!(
        request.messages,
        vec![
            Message::user(PH_CONTINUES),
            Message::assistant("hello"),
            Message::user("hi")
        ]
    );
}

#[test]
fn explicit_ids_are_used_and_responses_before_other_text_come_first() {
    let request = request_body(json!({
        "contents": [
            {"role": "user", "parts": [{"text": "q"}]},
            {"role": "model", "parts": [{"functionCall": {"id": "a1", "name": "f", "args": {}}}]},
            {"role": "user", "parts": [
                {"text": "also this"},
                {"functionResponse": {"id": "a1", "name": "f", "response": {"output": "r"}}}
            ]}
        ]
    }));
    assert_eq!(
        request.messages[2],
        Message::tool_results(vec![ToolResult::text("a1", "r").with_name("f")])
    );
    assert_eq!(request.messages[3], Message::user("also this"));
}

#[test]
fn a_compiled_request_parses_back_to_the_same_conversation() {
    let conversation = crate::conversation();
    let compiled = chef_gemini::compile(
        &conversation,
        &chef_gemini::CompileOptions::default().with_call_ids(true),
    )
    .unwrap();
    let parsed = parse_request(&chef_gemini::to_vec(&compiled).unwrap()).unwrap();
    let tool_results: Vec<&ToolResult> = parsed
        .messages
        .iter()
        .flat_map(Message::tool_results_iter)
        .collect();
    let original: Vec<&ToolResult> = conversation
        .messages
        .iter()
        .flat_map(Message::tool_results_iter)
        .collect();
    assert_eq!(tool_results, original);
    let calls: Vec<&str> = parsed
        .messages
        .iter()
        .flat_map(Message::tool_calls)
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(calls, ["call_01", "call_02", "call_03"]);
    // The user's attachments survive the whole trip (the filename aside).
    let attachments = parsed.messages[1]
        .content
        .iter()
        .filter(|c| matches!(c, Content::Attachment(_)))
        .count();
    assert_eq!(attachments, 2);
}
