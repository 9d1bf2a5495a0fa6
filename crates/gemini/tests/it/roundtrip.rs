//! Property: IR → Gemini bytes → IR gives the conversation back, for everything Gemini can
//! express (with call ids sent, native thinking, and verbatim JSON Schemas).

use chef_gemini::{CompileOptions, SchemaMode, ThinkingMode};
use chef_ir::{
    Attachment, Content, Message, Request, Role, Target, ToolCall, ToolDefinition, ToolResult,
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 .,:;!?\"\\\\/\n\u{e9}\u{4e2d}\u{1f600}]{1,24}"
}

fn name() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_.:-]{0,20}"
}

fn signature() -> impl Strategy<Value = Option<String>> {
    proptest::option::of("[A-Za-z0-9+/=]{4,16}")
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e9f64..1e9).prop_map(Value::from),
        text().prop_map(Value::String),
        Just(Value::Null),
    ]
}

fn args() -> impl Strategy<Value = Value> {
    let value = leaf().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec(("[a-z]{1,6}", inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    });
    proptest::collection::vec(("[a-z_]{1,8}", value), 0..5)
        .prop_map(|kv| Value::Object(kv.into_iter().collect()))
}

fn attachment() -> impl Strategy<Value = Content> {
    prop_oneof![
        ("image/(png|jpeg)", "[A-Za-z0-9+/]{4,20}").prop_map(|(m, d)| Attachment::base64(m, d)),
        (
            "application/pdf",
            "(https://x\\.test|gs://bucket)/[a-z]{1,8}\\.pdf"
        )
            .prop_map(|(m, u)| Attachment::url(m, u)),
    ]
    .prop_map(Content::Attachment)
}

fn user_turn() -> impl Strategy<Value = Message> {
    proptest::collection::vec(
        prop_oneof![3 => text().prop_map(Content::text), 1 => attachment()],
        1..4,
    )
    .prop_map(|content| Message::new(Role::User, content))
}

/// An assistant turn and, when it calls tools, the tool message answering every call.
fn assistant_turn() -> impl Strategy<Value = Vec<Message>> {
    let block = prop_oneof![
        (text(), signature()).prop_map(|(text, thought_signature)| Content::Text {
            text,
            thought_signature
        }),
        (text(), signature()).prop_map(|(thinking, signature)| Content::Thinking {
            thinking,
            signature
        }),
        text().prop_map(|code| Content::Unknown {
            target: Some(Target::Gemini),
            value: json!({"executableCode": {"language": "PYTHON", "code": code}}),
        }),
    ];
    let call = (
        name(),
        args(),
        signature(),
        proptest::collection::vec(text(), 1..3),
        any::<bool>(),
    );
    (
        proptest::collection::vec(block, 0..3),
        proptest::collection::vec(call, 0..3),
    )
        .prop_filter("a turn says something", |(b, c)| {
            !b.is_empty() || !c.is_empty()
        })
        .prop_map(|(blocks, calls)| {
            let mut content = blocks;
            let mut results = Vec::new();
            for (i, (name, arguments, sig, texts, is_error)) in calls.into_iter().enumerate() {
                let id = format!("call_{i}_{name}");
                let mut call = ToolCall::new(id.clone(), name.clone(), arguments);
                call.thought_signature = sig;
                content.push(Content::ToolCall(call));
                results.push(ToolResult {
                    tool_call_id: id.into(),
                    name: Some(name.into()),
                    content: texts.into_iter().map(Content::text).collect(),
                    is_error,
                });
            }
            let mut turn = vec![Message::new(Role::Assistant, content)];
            if !results.is_empty() {
                turn.push(Message::tool_results(results));
            }
            turn
        })
}

fn conversation() -> impl Strategy<Value = Request> {
    let tool = (name(), text(), args()).prop_map(|(n, d, props)| {
        ToolDefinition::new(n, json!({"type": "object", "properties": props})).with_description(d)
    });
    (
        proptest::collection::vec(text(), 0..3),
        proptest::collection::vec((user_turn(), assistant_turn()), 1..5),
        proptest::collection::vec(tool, 0..3),
    )
        .prop_map(|(system, turns, tools)| {
            let mut messages: Vec<Message> = system.into_iter().map(Message::system).collect();
            for (user, assistant) in turns {
                messages.push(user);
                messages.extend(assistant);
            }
            Request::new(messages).with_tools(tools)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn ir_to_gemini_to_ir_round_trips(request in conversation()) {
        let options = CompileOptions::default()
            .with_call_ids(true)
            .with_thinking(ThinkingMode::Native)
            .with_schema(SchemaMode::JsonSchema);
        let compiled = chef_gemini::compile(&request, &options).unwrap();
        // (The stand-in signature on an unsigned turn's first call raises no notice, and
        // parsing reads it back as no signature.)
        prop_assert!(compiled.notices.is_empty(), "{:?}", compiled.notices);
        let bytes = chef_gemini::to_vec(&compiled).unwrap();
        let back = chef_gemini::parse_request(&bytes).unwrap();
        prop_assert_eq!(&back.messages, &request.messages);
        prop_assert_eq!(&back.tools, &request.tools);
        // And the parsed request compiles to the same bytes again.
        let again = chef_gemini::to_vec(&chef_gemini::compile(&back, &options).unwrap()).unwrap();
        prop_assert_eq!(again, bytes);
    }
}
