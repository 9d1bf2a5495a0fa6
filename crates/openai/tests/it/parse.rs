//! Reply parsing: a realistic reply per content kind, unknown kinds kept verbatim and
//! compiled back byte for byte.

use chef_ir::{Content, Message, NameRule, Request, Target, ToolName, WireNames};
use chef_openai::{StopReason, chat, responses};
use serde_json::{Value, json};

use crate::chat_json;

fn names() -> WireNames {
    WireNames::new(
        &[ToolName::from("triangle_properties.get")],
        NameRule::OPENAI,
    )
}

const CHAT_REPLY: &str = r#"{
  "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-x",
  "choices": [{
    "index": 0,
    "message": {
      "role": "assistant",
      "content": "Let me compute.",
      "refusal": null,
      "annotations": [],
      "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "triangle_properties_get", "arguments": "{\"a\":3,\"b\":4.0,\"c\":5}"}},
        {"id": "call_2", "type": "function",
         "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\""}},
        {"id": "call_3", "type": "custom", "custom": {"name": "grep", "input": "foo"}}
      ],
      "audio": {"id": "audio_1", "transcript": "hi"}
    },
    "finish_reason": "tool_calls",
    "logprobs": null
  }],
  "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
            "prompt_tokens_details": {"cached_tokens": 64},
            "completion_tokens_details": {"reasoning_tokens": 5}}
}"#;

#[test]
fn chat_reply_gives_text_calls_with_real_names_and_keeps_the_rest() {
    let parsed = chat::parse_response(CHAT_REPLY.as_bytes(), &names()).unwrap();
    assert_eq!(parsed.stop_reason, Some(StopReason::TOOL_CALLS));
    let usage = parsed.usage.unwrap();
    assert_eq!(
        (
            usage.input_tokens,
            usage.cached_input_tokens,
            usage.output_tokens,
            usage.reasoning_tokens
        ),
        (100, 64, 20, 5)
    );
    let content = &parsed.message.content;
    assert_eq!(content[0], Content::text("Let me compute."));
    let calls: Vec<_> = parsed.message.tool_calls().collect();
    assert_eq!(calls[0].name.as_str(), "triangle_properties.get");
    assert_eq!(calls[0].arguments, json!({"a":3,"b":4.0,"c":5}));
    // Unparseable argument text is kept as the raw string.
    assert_eq!(calls[1].arguments, json!("{\"city\": \"Oslo\""));
    assert_eq!(
        content[3],
        Content::Unknown {
            target: Some(Target::OpenAiChat),
            value: json!({"id":"call_3","type":"custom","custom":{"name":"grep","input":"foo"}})
        }
    );
    assert_eq!(
        content[4],
        Content::Unknown {
            target: Some(Target::OpenAiChat),
            value: json!({"audio":{"id":"audio_1","transcript":"hi"}})
        }
    );
    assert_eq!(content.len(), 5);
}

#[test]
fn a_parsed_chat_reply_compiles_back_to_the_same_message() {
    let parsed = chat::parse_response(CHAT_REPLY.as_bytes(), &names()).unwrap();
    let request = Request::new(vec![Message::user("q"), parsed.message]).with_tools(vec![
        chef_ir::ToolDefinition::new("triangle_properties.get", json!({"type":"object"})),
    ]);
    let (body, _) = chat_json(&request);
    let original: Value = serde_json::from_str(CHAT_REPLY).unwrap();
    let mut expected = original["choices"][0]["message"].clone();
    let map = expected.as_object_mut().unwrap();
    map.remove("refusal");
    map.remove("annotations");
    assert_eq!(body["messages"][1], expected);
}

#[test]
fn a_chat_refusal_is_kept_and_compiles_back_as_a_refusal_part() {
    let reply = r#"{"choices":[{"message":{"role":"assistant","content":null,"refusal":"I can't."},"finish_reason":"stop"}]}"#;
    let parsed = chat::parse_response(reply.as_bytes(), &WireNames::default()).unwrap();
    assert_eq!(parsed.stop_reason, Some(StopReason::STOP));
    let request = Request::new(vec![Message::user("q"), parsed.message]);
    let (body, _) = crate::chat_json(&request);
    assert_eq!(
        body["messages"][1],
        json!({"role":"assistant","content":[{"type":"refusal","refusal":"I can't."}]})
    );
}

/// Some OpenAI-compatible servers leave `type` out of a function call: it is read as the
/// call it is, not kept as an unknown value the loop would never run. Another kind of
/// call keeps its own type and stays unknown.
#[test]
fn a_chat_function_call_without_a_type_is_a_call() {
    let reply = r#"{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[
        {"id":"c1","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}},
        {"id":"c2","type":"custom","custom":{"name":"x","input":"y"}}]},"finish_reason":"tool_calls"}]}"#;
    let parsed = chat::parse_response(reply.as_bytes(), &WireNames::default()).unwrap();
    let calls: Vec<_> = parsed.message.tool_calls().collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name.as_str(), "get_weather");
    assert_eq!(calls[0].arguments, json!({"city": "Oslo"}));
}

/// Some OpenAI-compatible servers send `arguments` as the object itself, not its JSON
/// text: the call is read, not the whole reply refused.
#[test]
fn chat_arguments_sent_as_an_object_are_read() {
    let reply = r#"{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[
        {"id":"c1","type":"function","function":{"name":"get_weather","arguments":{"city":"Oslo","days":3}}}]},"finish_reason":"tool_calls"}]}"#;
    let parsed = chat::parse_response(reply.as_bytes(), &WireNames::default()).unwrap();
    let calls: Vec<_> = parsed.message.tool_calls().collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].arguments, json!({"city": "Oslo", "days": 3}));
}

#[test]
fn chat_errors_are_typed() {
    assert!(matches!(
        chat::parse_response(b"{\"choices\":[]}", &WireNames::default()),
        Err(chef_openai::Error::NoChoices)
    ));
    let err = chat::parse_response(b"not json", &WireNames::default()).unwrap_err();
    assert!(matches!(&err, chef_openai::Error::InvalidJson { body, .. } if &**body == "not json"));
    // A known kind with the wrong shape is an error, not an unknown value.
    let bad = r#"{"choices":[{"message":{"role":"assistant","tool_calls":[{"type":"function","id":"c"}]}}]}"#;
    assert!(chat::parse_response(bad.as_bytes(), &WireNames::default()).is_err());
}

const RESPONSES_REPLY: &str = r#"{
  "id": "resp_1", "object": "response", "created_at": 1, "status": "completed", "model": "gpt-x",
  "output": [
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Plan."}], "encrypted_content": "gAAAA=="},
    {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "oslo"}},
    {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
     "content": [{"type": "output_text", "text": "Checking.", "annotations": []},
                 {"type": "refusal", "refusal": "Not that."}]},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "triangle_properties_get",
     "arguments": "{\"a\":3}", "status": "completed"},
    {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "get_weather",
     "arguments": "{oops", "status": "completed"}
  ],
  "usage": {"input_tokens": 50, "input_tokens_details": {"cached_tokens": 10},
            "output_tokens": 30, "output_tokens_details": {"reasoning_tokens": 12}, "total_tokens": 80}
}"#;

#[test]
fn responses_reply_keeps_reasoning_and_unknown_items_verbatim() {
    let parsed = responses::parse_response(RESPONSES_REPLY.as_bytes(), &names()).unwrap();
    assert_eq!(parsed.stop_reason, Some(StopReason::COMPLETED));
    let original: Value = serde_json::from_str(RESPONSES_REPLY).unwrap();
    let content = &parsed.message.content;
    let unknown = |value: &Value| Content::Unknown {
        target: Some(Target::OpenAiResponses),
        value: value.clone(),
    };
    assert_eq!(content[0], unknown(&original["output"][0]));
    assert_eq!(content[1], unknown(&original["output"][1]));
    assert_eq!(
        content[2],
        unknown(&json!({"type":"message","id":"msg_1","status":"completed"}))
    );
    assert_eq!(content[3], Content::text("Checking."));
    assert_eq!(
        content[4],
        unknown(&json!({"type":"refusal","refusal":"Not that."}))
    );
    assert_eq!(
        content[5],
        unknown(&json!({"type":"function_call","id":"fc_1","status":"completed"}))
    );
    let calls: Vec<_> = parsed.message.tool_calls().collect();
    assert_eq!(calls[0].name.as_str(), "triangle_properties.get");
    assert_eq!(calls[0].id.as_str(), "call_1");
    assert_eq!(calls[1].arguments, json!("{oops"));
    assert_eq!(parsed.usage.unwrap().reasoning_tokens, 12);
}

#[test]
fn a_parsed_responses_reply_compiles_back_item_for_item() {
    let parsed = responses::parse_response(RESPONSES_REPLY.as_bytes(), &names()).unwrap();
    let request = Request::new(vec![Message::user("q"), parsed.message]).with_tools(vec![
        chef_ir::ToolDefinition::new("triangle_properties.get", json!({"type":"object"})),
    ]);
    let (body, _) = crate::responses_json(&request);
    let original: Value = serde_json::from_str(RESPONSES_REPLY).unwrap();
    let output = original["output"].as_array().unwrap();
    let input = &body["input"].as_array().unwrap()[1..];
    assert_eq!(input.len(), output.len());
    // Reasoning and unknown items: byte for byte.
    assert_eq!(
        serde_json::to_string(&input[0]).unwrap(),
        serde_json::to_string(&output[0]).unwrap()
    );
    assert_eq!(
        serde_json::to_string(&input[1]).unwrap(),
        serde_json::to_string(&output[1]).unwrap()
    );
    // Typed items: same fields (annotations dropped), ids kept for pairing.
    let mut message = output[2].clone();
    message["content"][0]
        .as_object_mut()
        .unwrap()
        .remove("annotations");
    assert_eq!(input[2], message);
    assert_eq!(input[3], output[3]);
    assert_eq!(input[4], output[4]);
}

#[test]
fn an_incomplete_response_reports_why() {
    let reply = r#"{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}"#;
    let parsed = responses::parse_response(reply.as_bytes(), &WireNames::default()).unwrap();
    assert_eq!(parsed.stop_reason, Some(StopReason::MAX_OUTPUT_TOKENS));
    assert!(parsed.message.content.is_empty());
}

const CITED_REPLY: &str = r#"{"status":"completed","output":[
  {"type":"message","id":"msg_9","status":"completed","role":"assistant","content":[
    {"type":"output_text","text":"Oslo is cold.","annotations":[{"type":"url_citation","start_index":0,"end_index":4,"url":"https://yr.no","title":"Yr"}],"logprobs":[]}
  ]}
]}"#;

#[test]
fn citations_survive_a_round_trip_while_the_text_is_unchanged() {
    let parsed = responses::parse_response(CITED_REPLY.as_bytes(), &WireNames::default()).unwrap();
    assert_eq!(parsed.message.text(), "Oslo is cold.");
    let original: Value = serde_json::from_str(CITED_REPLY).unwrap();
    let request = Request::new(vec![Message::user("q"), parsed.message.clone()]);
    let (body, _) = crate::responses_json(&request);
    assert_eq!(
        serde_json::to_string(&body["input"][1]["content"]).unwrap(),
        serde_json::to_string(&original["output"][0]["content"]).unwrap()
    );
    assert_eq!(body["input"][1]["id"], json!("msg_9"));

    // Edited text: the citation offsets no longer hold, so the rebuilt part is sent.
    let mut edited = parsed.message;
    for block in &mut edited.content {
        if let Content::Text { text, .. } = block {
            *text = "Oslo is mild.".to_owned();
        }
    }
    let request = Request::new(vec![Message::user("q"), edited]);
    let (body, _) = crate::responses_json(&request);
    assert_eq!(
        body["input"][1]["content"],
        json!([{"type":"output_text","text":"Oslo is mild."}])
    );
}

/// An error body, an empty object and a failed response are not replies: each is an
/// error, never an empty assistant message (the Python audit's loop took an error body
/// for "done").
#[test]
fn a_responses_error_body_or_failure_is_an_error_not_an_empty_reply() {
    for body in [r#"{"error":{"message":"rate limited"}}"#, "{}"] {
        assert!(
            matches!(
                responses::parse_response(body.as_bytes(), &WireNames::default()),
                Err(chef_openai::Error::InvalidJson { .. })
            ),
            "{body}"
        );
    }
    let failed = r#"{"id":"resp_1","object":"response","status":"failed","output":[],
        "error":{"code":"server_error","message":"The model failed"}}"#;
    match responses::parse_response(failed.as_bytes(), &WireNames::default()) {
        Err(chef_openai::Error::ResponseFailed { message }) => {
            assert_eq!(message, "The model failed");
        }
        other => panic!("{other:?}"),
    }
    // `"error": null` is a response that did not fail.
    let ok = r#"{"id":"resp_1","object":"response","status":"completed","error":null,
        "output":[{"type":"message","id":"m1","status":"completed","role":"assistant",
        "content":[{"type":"output_text","text":"hi","annotations":[]}]}]}"#;
    assert!(responses::parse_response(ok.as_bytes(), &WireNames::default()).is_ok());
}
