//! Property: IR → wire bytes → IR round-trips for the content each API can express.

use chef_ir::{Attachment, Content, Message, Request, Role, Target, ToolCall, ToolResult};
use chef_openai::{CompileOptions, chat, responses};
use proptest::prelude::*;
use serde_json::{Value, json};

fn text() -> impl Strategy<Value = String> {
    // Non-empty: an empty text block is not sent where other content exists.
    "[a-zA-Z0-9 .,!?\"\\\\\n{}é😀-]{1,24}"
}

fn arguments() -> impl Strategy<Value = Value> {
    prop_oneof![
        (text(), any::<i64>(), any::<bool>()).prop_map(
            |(s, n, b)| json!({"s": s, "n": n, "b": b, "nested": {"z": 1, "a": [1.5, null]}})
        ),
        Just(json!({})),
        // Broken argument text the model produced.
        text()
            .prop_filter("not JSON", |t| serde_json::from_str::<Value>(t).is_err())
            .prop_map(Value::String),
    ]
}

fn attachment() -> impl Strategy<Value = Attachment> {
    prop_oneof![
        "[A-Za-z0-9+/]{4,16}".prop_map(|d| Attachment::base64("image/png", d)),
        "[a-z]{1,8}"
            .prop_map(|p| Attachment::url("image/*", format!("https://example.com/{p}.png"))),
    ]
}

/// A valid conversation: system, then turns of user → assistant (text and calls) → one
/// tool message per call.
fn conversation(with_media: bool) -> impl Strategy<Value = Vec<Message>> {
    let turn = (
        text(),
        proptest::collection::vec(attachment(), 0..3),
        proptest::option::of(text()),
        proptest::collection::vec((arguments(), text()), 0..3),
    );
    (text(), proptest::collection::vec(turn, 1..4)).prop_map(move |(system, turns)| {
        let mut messages = vec![Message::system(system)];
        for (t, (user, media, reply, calls)) in turns.into_iter().enumerate() {
            let mut content = vec![Content::text(user)];
            if with_media {
                content.extend(media.into_iter().map(Content::Attachment));
            }
            messages.push(Message::new(Role::User, content));
            let mut assistant = Vec::new();
            if let Some(reply) = reply {
                assistant.push(Content::text(reply));
            }
            let ids: Vec<String> = (0..calls.len()).map(|i| format!("call_{t}_{i}")).collect();
            for (id, (args, _)) in ids.iter().zip(&calls) {
                assistant.push(Content::ToolCall(ToolCall::new(
                    id.as_str(),
                    "tool_x",
                    args.clone(),
                )));
            }
            if assistant.is_empty() {
                assistant.push(Content::text("ok"));
            }
            messages.push(Message::assistant_with(assistant));
            for (id, (_, result)) in ids.iter().zip(calls) {
                messages.push(Message::tool_results(vec![
                    ToolResult::text(id.as_str(), result).with_name("tool_x"),
                ]));
            }
        }
        messages
    })
}

/// `request` compiled for `api` with default options, serialised, and parsed back.
fn through(api: Target, request: &Request) -> Request {
    let options = CompileOptions::default();
    match api {
        Target::OpenAiChat => {
            let bytes = chat::to_vec(&chat::compile(request, &options).unwrap()).unwrap();
            chat::parse_request(&bytes).unwrap()
        }
        Target::OpenAiResponses => {
            let bytes = responses::to_vec(&responses::compile(request, &options).unwrap()).unwrap();
            responses::parse_request(&bytes).unwrap()
        }
        other => panic!("{other} is not an OpenAI API"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn chat_round_trips(messages in conversation(true)) {
        let request = Request::new(messages);
        prop_assert_eq!(through(Target::OpenAiChat, &request).messages, request.messages);
    }

    #[test]
    fn responses_round_trips(messages in conversation(true)) {
        let request = Request::new(messages);
        prop_assert_eq!(through(Target::OpenAiResponses, &request).messages, request.messages);
    }
}
