use chef_ir::{
    Attachment, Content, Message, NativeTool, Request, Role, Target, ToolAnnotations, ToolCall,
    ToolDefinition, ToolResult,
};
use proptest::prelude::*;
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Value, json};

fn roundtrip<T>(value: &T) -> String
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let text = serde_json::to_string(value).unwrap();
    let back: T = serde_json::from_str(&text).unwrap();
    assert_eq!(&back, value, "round trip changed the value: {text}");
    assert_eq!(serde_json::to_string(&back).unwrap(), text, "bytes changed");
    text
}

#[test]
fn every_type_round_trips_through_json() {
    roundtrip(&Role::Tool);
    roundtrip(&Target::OpenAiResponses);
    roundtrip(&Attachment::base64("image/png", "iVBORw0KGgo=").with_filename("a.png"));
    roundtrip(&Attachment::url(
        "application/pdf",
        "https://example.com/a.pdf",
    ));
    roundtrip(&ToolCall::new(
        "c1",
        "get_weather",
        json!({"city": "Oslo", "days": 3}),
    ));
    roundtrip(&ToolResult::error("c1", "no such city").with_name("get_weather"));
    roundtrip(&ToolAnnotations {
        title: Some("Weather".into()),
        read_only_hint: Some(true),
        destructive_hint: Some(false),
        idempotent_hint: None,
        open_world_hint: Some(true),
    });
    roundtrip(
        &ToolDefinition::new("t", json!({"type": "object"}))
            .with_description("d")
            .with_tags(["x"])
            .with_defer_loading(true),
    );
    roundtrip(&NativeTool {
        targets: vec![Target::Anthropic],
        value: json!({"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}),
    });
    for content in [
        Content::text("hi"),
        Content::Text {
            text: "signed".into(),
            thought_signature: Some("sig".into()),
        },
        Content::Attachment(Attachment::base64("image/png", "AAAA")),
        Content::ToolCall(ToolCall {
            thought_signature: Some("ts".into()),
            ..ToolCall::new("c2", "x", json!({}))
        }),
        Content::ToolResult(ToolResult::text("c2", "ok")),
        Content::Thinking {
            thinking: "hmm".into(),
            signature: Some("s".into()),
        },
        Content::RedactedThinking {
            data: "opaque".into(),
        },
        Content::Unknown {
            target: Some(Target::Anthropic),
            value: json!({"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"q": "x"}}),
        },
    ] {
        roundtrip(&content);
    }
    let request = Request::new(vec![
        Message::system("sys").with_cache_breakpoint(true),
        Message::system("note").with_positional(true),
        Message::user("hi").with_pinned(true),
        Message::assistant_with(vec![
            Content::Thinking {
                thinking: "t".into(),
                signature: None,
            },
            Content::ToolCall(ToolCall::new("c", "f", json!({"a": [1, 2.5, null]}))),
        ]),
        Message::tool_results(vec![ToolResult::text("c", "done")]),
    ])
    .with_tools(vec![ToolDefinition::new("f", json!({"type": "object"}))])
    .with_prefill("{");
    roundtrip(&request);
}

#[test]
fn absent_optional_fields_stay_absent() {
    let text = serde_json::to_string(&Message::user("hi")).unwrap();
    assert_eq!(
        text,
        r#"{"role":"user","content":[{"type":"text","text":"hi"}]}"#
    );
    let tool = serde_json::to_string(&ToolDefinition::new("t", json!({"type": "object"}))).unwrap();
    assert_eq!(
        tool,
        r#"{"name":"t","description":"","input_schema":{"type":"object"}}"#
    );
    assert_eq!(
        serde_json::to_string(&Request::default()).unwrap(),
        r#"{"messages":[]}"#
    );
}

#[test]
fn schemas_keep_their_authored_property_order() {
    let text = r#"{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"number"},"10":{},"9":{}}}"#;
    let schema: Value = serde_json::from_str(text).unwrap();
    let tool = ToolDefinition::new("t", schema);
    let out = serde_json::to_string(&tool.input_schema).unwrap();
    assert_eq!(
        out, text,
        "preserve_order must be on for the whole workspace"
    );
}

fn arb_content() -> impl Strategy<Value = Content> {
    let text = ".{0,40}";
    prop_oneof![
        text.prop_map(Content::text),
        (text, text).prop_map(|(t, s)| Content::Thinking {
            thinking: t,
            signature: Some(s),
        }),
        ("[a-z_]{1,12}", "[a-z0-9]{1,8}", text).prop_map(|(name, id, v)| {
            Content::ToolCall(ToolCall::new(id, name, json!({ "v": v })))
        }),
        ("[a-z0-9]{1,8}", text, any::<bool>()).prop_map(|(id, t, err)| {
            let r = ToolResult::text(id, t);
            Content::ToolResult(ToolResult { is_error: err, ..r })
        }),
        text.prop_map(|d| Content::Attachment(Attachment::base64("image/png", d))),
    ]
}

fn arb_message() -> impl Strategy<Value = Message> {
    (
        prop_oneof![
            Just(Role::System),
            Just(Role::User),
            Just(Role::Assistant),
            Just(Role::Tool)
        ],
        proptest::collection::vec(arb_content(), 0..5),
        any::<(bool, bool, bool)>(),
    )
        .prop_map(|(role, content, (c, p, pin))| {
            Message::new(role, content)
                .with_cache_breakpoint(c)
                .with_positional(p)
                .with_pinned(pin)
        })
}

proptest! {
    #[test]
    fn any_message_round_trips(message in arb_message()) {
        let text = serde_json::to_string(&message).unwrap();
        let back: Message = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back, message);
    }
}

#[test]
fn the_shared_provider_fixture_is_a_valid_request() {
    let text = std::fs::read_to_string(crate::fixture("conversation-tool-heavy.json")).unwrap();
    let request: Request = serde_json::from_str(&text).unwrap();
    assert_eq!(request.tools.len(), 5);
    assert!(request.tools.iter().any(|t| t.defer_loading));
    assert_eq!(
        request
            .messages
            .iter()
            .flat_map(Message::tool_calls)
            .count(),
        3
    );
    roundtrip(&request);
}
