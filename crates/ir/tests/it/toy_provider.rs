//! A toy provider built through `chef_ir::provider::Provider` alone: what a new provider
//! crate writes, and what every caller then gets from the trait.

use chef_ir::{
    Content, Message, NameRule, Request, Role, ToolCall, ToolDefinition, ToolPass, WireNames,
    layout::{self, Layout},
    provider::{self, CompileError, Provider},
};
use serde::Serialize;
use serde_json::{Value, json};

/// Tiny Chat: `{"turns":[{"from","say"|"call"}…],"tools":[{"fn","args"}…]}`. The tools go
/// last; calls carry no ids (the reply's call is numbered after the history's).
struct Tiny;

#[derive(Debug, Serialize)]
struct TinyTool<'a> {
    #[serde(rename = "fn")]
    name: &'a str,
    args: &'a Value,
}

#[derive(Debug, thiserror::Error)]
enum TinyError {
    #[error("tiny cannot carry {0} content")]
    Unsupported(&'static str),
    #[error("not tiny JSON")]
    Json(#[from] serde_json::Error),
}

impl Provider for Tiny {
    const NAME: &'static str = "tiny";
    type Options = bool;
    type Tool<'a> = TinyTool<'a>;
    type Error = TinyError;

    fn name_rule() -> NameRule {
        NameRule::GEMINI
    }

    fn layout<'a>(
        request: &'a Request,
        shout: &bool,
        pass: ToolPass,
        _offset: usize,
    ) -> Result<Layout<TinyTool<'a>>, TinyError> {
        let names = WireNames::new(request.tools.iter().map(|t| &t.name), Self::name_rule());
        let mut turns = Vec::new();
        for message in &request.messages {
            for content in &message.content {
                let turn = match content {
                    Content::Text { text, .. } if *shout => {
                        json!({"from": role(message.role), "say": text.to_uppercase()})
                    }
                    Content::Text { text, .. } => json!({"from": role(message.role), "say": text}),
                    Content::ToolCall(call) => {
                        json!({"from": "bot", "call": names.to_wire(call.name.as_str())})
                    }
                    _ => return Err(TinyError::Unsupported("non-text")),
                };
                turns.push(turn);
            }
        }
        let body = serde_json::to_vec(&json!({ "turns": turns }))?;
        let mut layout = Layout::new(body, "turns", names);
        layout.tools_at = layout.body.len() - 1;
        layout.converted = pass == ToolPass::Convert;
        if layout.converted {
            layout.tools = request
                .tools
                .iter()
                .map(|t| TinyTool {
                    name: t.name.as_str(),
                    args: &t.input_schema,
                })
                .collect();
        }
        Ok(layout)
    }

    fn parse_reply(
        body: &[u8],
        names: &WireNames,
        history: &[Message],
    ) -> Result<Message, TinyError> {
        let reply: Value = serde_json::from_slice(body)?;
        let calls = history.iter().flat_map(Message::tool_calls).count();
        Ok(match (reply.get("say"), reply.get("call")) {
            (_, Some(Value::String(wire))) => Message::assistant_with(vec![Content::ToolCall(
                ToolCall::new(format!("tiny-{calls}"), names.to_real(wire), json!({})),
            )]),
            (Some(Value::String(text)), _) => Message::assistant(text.clone()),
            _ => return Err(TinyError::Unsupported("an empty reply")),
        })
    }

    fn parse_request(body: &[u8]) -> Result<Request, TinyError> {
        let value: Value = serde_json::from_slice(body)?;
        let turns = value
            .get("turns")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let messages = turns
            .iter()
            .filter_map(|t| t.get("say").and_then(Value::as_str))
            .map(Message::user)
            .collect();
        Ok(Request::new(messages))
    }
}

fn role(role: Role) -> &'static str {
    match role {
        Role::Assistant => "bot",
        _ => "you",
    }
}

fn request() -> Request {
    Request::new(vec![Message::user("read a file")]).with_tools(vec![ToolDefinition::new(
        "files/read",
        json!({"type": "object"}),
    )])
}

#[test]
fn a_toy_provider_compiles_through_the_trait() {
    let compiled = provider::compile::<Tiny>(&request(), &false).unwrap();
    assert_eq!(
        String::from_utf8(compiled.body).unwrap(),
        r#"{"turns":[{"from":"you","say":"read a file"}],"tools":[{"fn":"files/read","args":{"type":"object"}}]}"#
    );
    assert_eq!(compiled.names.to_wire("files/read"), "files_read");
    let shouted = provider::compile::<Tiny>(&request(), &true).unwrap().body;
    let shouted = String::from_utf8(shouted).unwrap();
    assert!(shouted.contains("READ A FILE"), "{shouted}");
}

#[test]
fn a_toy_body_without_tools_is_its_layout_as_is() {
    let request = Request::new(vec![Message::user("hi")]);
    let compiled = provider::compile::<Tiny>(&request, &false).unwrap();
    assert_eq!(compiled.body, br#"{"turns":[{"from":"you","say":"hi"}]}"#);
}

#[test]
fn skipped_tools_spliced_back_give_the_whole_body() {
    let request = request();
    let whole = provider::compile::<Tiny>(&request, &false).unwrap();
    let skipped = Tiny::layout(&request, &false, ToolPass::Skip, 0).unwrap();
    assert!(skipped.tools.is_empty() && !skipped.converted);
    let converted = Tiny::layout(&request, &false, ToolPass::Convert, 0).unwrap();
    let tools = serde_json::to_vec(&converted.tools).unwrap();
    let (head, tail) = skipped.body.split_at(skipped.tools_at);
    let (before, after) = layout::tools_separators(head, tail);
    let spliced = [head, before, &tools, after, tail].concat();
    assert_eq!(spliced, whole.body);
    // The messages array is where the layout says.
    let (_, spans) = layout::elements(&skipped.body, skipped.messages_key).unwrap();
    assert_eq!(spans.len(), 1);
}

#[test]
fn a_toy_reply_and_request_parse_back_through_the_trait() {
    let request = request();
    let compiled = provider::compile::<Tiny>(&request, &false).unwrap();
    let reply = Tiny::parse_reply(
        br#"{"call":"files_read"}"#,
        &compiled.names,
        &request.messages,
    )
    .unwrap();
    let call = reply.tool_calls().next().unwrap();
    assert_eq!(
        (call.name.as_str(), call.id.as_str()),
        ("files/read", "tiny-0")
    );
    let text = Tiny::parse_reply(br#"{"say":"done"}"#, &compiled.names, &[]).unwrap();
    assert_eq!(text.text(), "done");
    let back = Tiny::parse_request(&compiled.body).unwrap();
    assert_eq!(back.messages, vec![Message::user("read a file")]);
}

#[test]
fn a_toy_provider_refusal_is_a_typed_error() {
    let request = Request::new(vec![Message::assistant_with(vec![Content::Thinking {
        thinking: "hm".into(),
        signature: None,
    }])]);
    let err = provider::compile::<Tiny>(&request, &false).unwrap_err();
    assert!(
        matches!(err, CompileError::Provider(TinyError::Unsupported(_))),
        "{err}"
    );
    let err = Tiny::parse_reply(b"{", &WireNames::default(), &[]).unwrap_err();
    assert!(matches!(err, TinyError::Json(_)));
    assert!(std::error::Error::source(&err).is_some());
    assert_eq!(Tiny::NAME, "tiny");
}
