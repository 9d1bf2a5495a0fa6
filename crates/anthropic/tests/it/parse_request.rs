//! The input adapter (spec providers.md §6.3, checklist J 90-92) and compile/parse stability.

use chef_anthropic::{PH_CONTINUES, Repair, parse_request};
use chef_ir::{Content, Message, Role, Target, ToolCall, ToolResult, WireNames};
use serde_json::json;

use crate::{compiled, conversation};

fn parse(body: serde_json::Value) -> chef_anthropic::ParsedRequest {
    parse_request(&serde_json::to_vec(&body).unwrap(), &WireNames::default()).unwrap()
}

#[test]
fn top_level_system_then_leading_system_entries_become_system_messages() {
    let parsed = parse(json!({
        "system": [{"type":"text","text":"SYS","cache_control":{"type":"ephemeral"}}],
        "messages": [
            {"role":"system","content":"lead"},
            {"role":"user","content":"hi"},
            {"role":"system","content":"mid"},
            {"role":"user","content":"again"}
        ]
    }));
    let m = &parsed.request.messages;
    assert_eq!(m[0], Message::system("SYS").with_cache_breakpoint(true));
    assert_eq!(m[1], Message::system("lead"));
    assert_eq!(m[2], Message::user("hi"));
    assert_eq!(m[3], Message::user("again"));
    assert_eq!(
        parsed.repairs,
        vec![Repair::MidStreamSystemSkipped { index: 2 }]
    );

    let parsed = parse(json!({"system": "plain", "messages": [{"role":"user","content":"q"}]}));
    assert_eq!(parsed.request.messages[0], Message::system("plain"));
}

#[test]
fn an_assistant_first_gets_a_continuation_and_compaction_blocks_are_kept() {
    let compaction = json!({"type":"compaction","content":"SUMMARY"});
    let parsed = parse(json!({"messages": [
        {"role":"assistant","content":[compaction.clone(), {"type":"text","text":"So far."}]},
        {"role":"user","content":"go on"}
    ]}));
    let m = &parsed.request.messages;
    assert_eq!(m[0], Message::user(PH_CONTINUES));
    assert_eq!(
        m[1].content[0],
        Content::Unknown {
            target: Some(Target::Anthropic),
            value: compaction
        }
    );
    assert_eq!(parsed.repairs, vec![Repair::ContinuationInserted]);
}

#[test]
fn tool_results_split_out_before_the_rest_of_their_user_turn() {
    let doc =
        json!({"type":"document","source":{"type":"text","media_type":"text/plain","data":"DOC"}});
    let parsed = parse(json!({"messages": [
        {"role":"user","content":"q"},
        {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{"b":1,"a":2}}]},
        {"role":"user","content":[
            {"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]},
            doc.clone()
        ]}
    ]}));
    let m = &parsed.request.messages;
    assert_eq!(m.len(), 4);
    let call = m[1].tool_calls().next().unwrap();
    let keys: Vec<&String> = call.arguments.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["b", "a"]);
    assert_eq!(
        m[2],
        Message::tool_results(vec![ToolResult {
            content: vec![Content::text("x"), Content::text("y")],
            ..ToolResult::text("t1", "").with_name("f")
        }])
    );
    // A text-source document has no IR attachment form: kept whole, not re-encoded.
    assert_eq!(m[3].role, Role::User);
    assert_eq!(
        m[3].content,
        vec![Content::Unknown {
            target: Some(Target::Anthropic),
            value: doc
        }]
    );
}

#[test]
fn thinking_signatures_attachments_and_tools_are_read() {
    let parsed = parse(json!({
        "messages": [
            {"role":"user","content":[
                {"type":"text","text":"look"},
                {"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},
                {"type":"document","source":{"type":"url","url":"https://x/c.pdf"},"title":"c.pdf"}
            ]},
            {"role":"assistant","content":[
                {"type":"thinking","thinking":"t","signature":"sig"},
                {"type":"text","text":"ok"}
            ]},
            {"role":"user","content":"thanks"}
        ],
        "tools": [
            {"type":"tool_search_tool_bm25_20251119","name":"tool_search_tool_bm25"},
            {"name":"a","description":"A.","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}},
            {"type":"custom","name":"b","input_schema":{"type":"object"},"defer_loading":true}
        ]
    }));
    let r = &parsed.request;
    assert_eq!(
        r.messages[0].content[1],
        Content::Attachment(chef_ir::Attachment::base64("image/png", "AAAA"))
    );
    assert_eq!(
        r.messages[0].content[2],
        Content::Attachment(
            chef_ir::Attachment::url("application/pdf", "https://x/c.pdf").with_filename("c.pdf")
        )
    );
    assert_eq!(
        r.messages[1].content[0],
        Content::Thinking {
            thinking: "t".into(),
            signature: Some("sig".into())
        }
    );
    assert_eq!(r.native_tools.len(), 1);
    assert_eq!(r.native_tools[0].targets, vec![Target::Anthropic]);
    assert_eq!(r.tools.len(), 2);
    assert_eq!(r.tools[0].description, "A.");
    assert!(r.tools[1].defer_loading);
    assert!(r.prefill.is_none());
}

#[test]
fn a_trailing_assistant_text_turn_is_the_prefill() {
    let parsed = parse(json!({"messages": [
        {"role":"user","content":"q"},
        {"role":"assistant","content":[{"type":"text","text":"{\"a\":"}]}
    ]}));
    assert_eq!(parsed.request.prefill.as_deref(), Some("{\"a\":"));
    assert_eq!(parsed.request.messages, vec![Message::user("q")]);
}

#[test]
fn missing_results_are_repaired_on_input() {
    let parsed = parse(json!({"messages": [
        {"role":"user","content":"q"},
        {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},
        {"role":"user","content":"why no answer?"}
    ]}));
    assert_eq!(
        parsed.repairs,
        vec![Repair::MissingResultInserted {
            tool_call_id: "t1".into()
        }]
    );
    assert_eq!(parsed.request.messages.len(), 4);
}

#[test]
fn bad_shapes_are_typed_errors() {
    for body in [
        json!({}),
        json!({"messages": [{"content": "no role"}]}),
        json!({"messages": [{"role": "robot", "content": "x"}]}),
        json!({"messages": [{"role": "user", "content": 7}]}),
        json!({"system": [{"type":"image","source":{"type":"url","url":"u"}}], "messages": []}),
    ] {
        let bytes = serde_json::to_vec(&body).unwrap();
        assert!(
            matches!(
                parse_request(&bytes, &WireNames::default()),
                Err(chef_anthropic::Error::Shape { .. })
            ),
            "{body}"
        );
    }
}

#[test]
fn compile_parse_compile_is_byte_stable_for_the_fixture() {
    let request = conversation();
    let first = compiled(&request);
    let bytes = first.to_vec().unwrap();
    let parsed = parse_request(&bytes, &first.names).unwrap();
    assert!(parsed.repairs.is_empty(), "{:?}", parsed.repairs);
    let again = compiled(&parsed.request).to_vec().unwrap();
    assert_eq!(
        String::from_utf8(again).unwrap(),
        String::from_utf8(bytes).unwrap()
    );
    // Real names come back.
    assert!(
        parsed
            .request
            .tools
            .iter()
            .any(|t| t.name == "triangle_properties.get")
    );
    let call = parsed
        .request
        .messages
        .iter()
        .flat_map(|m| m.tool_calls())
        .nth(1)
        .unwrap();
    assert_eq!(
        call,
        &ToolCall::new("call_02", "triangle_properties.get", call.arguments.clone())
    );
}
