//! Streaming: assembly equals the whole reply, however the bytes are split.

use chef_anthropic::{Assembler, Error, SseDecoder, parse_response};
use chef_ir::{Content, NameRule, Target, ToolName, WireNames};
use proptest::prelude::*;
use serde_json::{Value, json};

fn names() -> WireNames {
    WireNames::new(
        &[ToolName::from("triangle_properties.get")],
        NameRule::ANTHROPIC,
    )
}

const SERVER_RESULT: &str = r#"{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://met.no","title":"Met","encrypted_content":"Eq","page_age":null}]}"#;

fn events() -> Vec<Value> {
    vec![
        json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":50,"output_tokens":1,"cache_read_input_tokens":40}}}),
        json!({"type":"ping"}),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Area of "}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"3-4-5 é漢."}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCkYI"}}),
        json!({"type":"content_block_stop","index":0}),
        json!({"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}),
        json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"query\":"}}),
        json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"oslo\"}"}}),
        json!({"type":"content_block_stop","index":1}),
        json!({"type":"content_block_start","index":2,"content_block":serde_json::from_str::<Value>(SERVER_RESULT).unwrap()}),
        json!({"type":"content_block_stop","index":2}),
        json!({"type":"content_block_start","index":3,"content_block":{"type":"text","text":""}}),
        json!({"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"Computing"}}),
        json!({"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":" now."}}),
        json!({"type":"content_block_stop","index":3}),
        json!({"type":"content_block_start","index":4,"content_block":{"type":"tool_use","id":"toolu_1","name":"triangle_properties_get","input":{}}}),
        json!({"type":"content_block_delta","index":4,"delta":{"type":"input_json_delta","partial_json":""}}),
        json!({"type":"content_block_delta","index":4,"delta":{"type":"input_json_delta","partial_json":"{\"c\": 5, \"a\""}}),
        json!({"type":"content_block_delta","index":4,"delta":{"type":"input_json_delta","partial_json":": 3}"}}),
        json!({"type":"content_block_stop","index":4}),
        json!({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":90}}),
        json!({"type":"message_stop"}),
    ]
}

fn sse() -> String {
    events()
        .iter()
        .map(|e| format!("event: {}\ndata: {}\n\n", e["type"].as_str().unwrap(), e))
        .collect()
}

fn whole() -> Vec<u8> {
    format!(
        r#"{{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"thinking","thinking":"Area of 3-4-5 é漢.","signature":"EqQBCkYI"}},{{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{{"query":"oslo"}}}},{SERVER_RESULT},{{"type":"text","text":"Computing now."}},{{"type":"tool_use","id":"toolu_1","name":"triangle_properties_get","input":{{"c":5,"a":3}}}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{{"input_tokens":50,"output_tokens":90,"cache_read_input_tokens":40}}}}"#
    )
    .into_bytes()
}

fn assemble(chunks: &[&[u8]]) -> chef_anthropic::ParsedResponse {
    let mut decoder = SseDecoder::new();
    let mut assembler = Assembler::new();
    for chunk in chunks {
        for event in decoder.push(chunk).unwrap() {
            assembler.push_sse(&event).unwrap();
        }
    }
    assert!(decoder.finish().unwrap().is_none());
    assert!(assembler.is_stopped());
    assembler.finish(&names()).unwrap()
}

#[test]
fn a_streamed_reply_assembles_into_the_same_parse_as_the_whole_reply() {
    let text = sse();
    let streamed = assemble(&[text.as_bytes()]);
    let whole = parse_response(&whole(), &names()).unwrap();
    assert_eq!(streamed, whole);
    assert_eq!(
        streamed.message.tool_calls().next().unwrap().name,
        "triangle_properties.get"
    );
    assert!(matches!(
        streamed.message.content[2],
        Content::Unknown {
            target: Some(Target::Anthropic),
            ..
        }
    ));
}

#[test]
fn crlf_line_ends_comments_and_multi_line_data_are_handled() {
    let mut decoder = SseDecoder::new();
    let events = decoder
        .push(b": keep-alive\r\nevent: ping\r\ndata: {\"type\":\r\ndata: \"ping\"}\r\n\r\n")
        .unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].event.as_deref(), Some("ping"));
    assert_eq!(events[0].data, "{\"type\":\n\"ping\"}");
}

#[test]
fn broken_streamed_arguments_are_kept_as_raw_text() {
    let mut assembler = Assembler::new();
    for event in [
        json!({"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\": tru"}}),
        json!({"type":"content_block_stop","index":0}),
    ] {
        assembler.push(&event).unwrap();
    }
    let parsed = assembler.finish(&WireNames::default()).unwrap();
    assert_eq!(
        parsed.message.tool_calls().next().unwrap().arguments,
        Value::String("{\"a\": tru".into())
    );
}

#[test]
fn an_error_event_is_an_api_error_and_unknown_events_are_ignored() {
    let mut assembler = Assembler::new();
    assembler
        .push(&json!({"type":"future_event","x":1}))
        .unwrap();
    let err = assembler
        .push(&json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}))
        .unwrap_err();
    assert!(matches!(err, Error::Api { ref kind, .. } if kind == "overloaded_error"));
    let err = Assembler::new()
        .push(&json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}))
        .unwrap_err();
    assert!(matches!(err, Error::Shape { .. }));
}

proptest! {
    #[test]
    fn assembly_ignores_how_the_bytes_are_split(cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..40)) {
        let text = sse();
        let bytes = text.as_bytes();
        let mut points: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        points.push(0);
        points.push(bytes.len());
        points.sort_unstable();
        points.dedup();
        let chunks: Vec<&[u8]> = points.windows(2).map(|w| &bytes[w[0]..w[1]]).collect();
        prop_assert_eq!(assemble(&chunks), assemble(&[bytes]));
    }
}
