//! IR -> wire -> IR round trips for everything Anthropic can express.

use chef_anthropic::{CompileOptions, compile, parse_request};
use chef_ir::{Attachment, Content, Message, Request, Role, ToolCall, ToolDefinition, ToolResult};
use proptest::prelude::*;
use serde_json::{Value, json};

const NAMES: [&str; 4] = ["search", "triangle_properties.get", "get weather", "x/y"];

fn text() -> impl Strategy<Value = String> {
    // Non-empty, no trailing whitespace (the prefill rule), any Unicode.
    "[a-zA-Z0-9 é漢\"\\\\\n{}<>]{0,12}[a-z0-9.]".prop_map(|s| s)
}

fn args() -> impl Strategy<Value = Value> {
    (any::<i64>(), "[a-z]{0,6}", any::<bool>(), -1.0e6f64..1.0e6).prop_map(
        |(n, s, b, f)| json!({"n": n, "s": s, "nested": {"b": b, "f": f}, "list": [n, s]}),
    )
}

fn attachment() -> impl Strategy<Value = Content> {
    prop_oneof![
        "[A-Za-z0-9+/]{4,12}".prop_map(|d| Attachment::base64("image/png", d)),
        "[a-z]{1,8}"
            .prop_map(|p| Attachment::url("image/*", format!("https://img.example/{p}.png"))),
        (
            "[A-Za-z0-9+/]{4,12}",
            proptest::option::of("[a-z]{1,6}\\.pdf")
        )
            .prop_map(|(d, f)| {
                let a = Attachment::base64("application/pdf", d);
                match f {
                    Some(f) => a.with_filename(f),
                    None => a,
                }
            }),
        "[a-z]{1,8}".prop_map(|p| Attachment::url(
            "application/pdf",
            format!("https://doc.example/{p}.pdf")
        )),
    ]
    .prop_map(Content::Attachment)
}

#[derive(Debug, Clone)]
struct Turn {
    user: Vec<Content>,
    user_cache: bool,
    thinking: Option<(String, String)>,
    redacted: Option<String>,
    server: Option<String>,
    say: String,
    calls: Vec<(usize, Value)>,
    errors: Vec<bool>,
    results: Vec<String>,
    assistant_cache: bool,
    tool_cache: bool,
}

fn turn() -> impl Strategy<Value = Turn> {
    (
        (
            text(),
            proptest::collection::vec(attachment(), 0..3),
            any::<bool>(),
        ),
        (
            proptest::option::of((text(), "[A-Za-z0-9]{4,10}")),
            proptest::option::of("[A-Za-z0-9+/=]{4,16}"),
            proptest::option::of("[a-z ]{1,10}"),
        ),
        text(),
        proptest::collection::vec((0..NAMES.len(), args()), 0..3),
        proptest::collection::vec(any::<bool>(), 3),
        proptest::collection::vec(text(), 3),
        (any::<bool>(), any::<bool>()),
    )
        .prop_map(
            |(
                (t, atts, uc),
                (thinking, redacted, server),
                say,
                calls,
                errors,
                results,
                (ac, tc),
            )| {
                let mut user = vec![Content::text(t)];
                user.extend(atts);
                Turn {
                    user,
                    user_cache: uc,
                    thinking,
                    redacted,
                    server,
                    say,
                    calls,
                    errors,
                    results,
                    assistant_cache: ac,
                    tool_cache: tc,
                }
            },
        )
}

fn request() -> impl Strategy<Value = Request> {
    (
        proptest::collection::vec((text(), any::<bool>()), 0..3),
        proptest::collection::vec(turn(), 1..4),
        text(),
        proptest::option::of(text()),
        proptest::collection::vec(any::<bool>(), NAMES.len()),
    )
        .prop_map(|(system, turns, last, prefill, deferred)| {
            let mut messages: Vec<Message> = system
                .into_iter()
                .map(|(t, c)| Message::system(t).with_cache_breakpoint(c))
                .collect();
            let mut id = 0;
            for turn in turns {
                messages.push(
                    Message::new(Role::User, turn.user).with_cache_breakpoint(turn.user_cache),
                );
                let mut content = Vec::new();
                if let Some((thinking, signature)) = turn.thinking {
                    content.push(Content::Thinking {
                        thinking,
                        signature: Some(signature),
                    });
                }
                if let Some(data) = turn.redacted {
                    content.push(Content::RedactedThinking { data });
                }
                if let Some(query) = turn.server {
                    // A server tool call, kept verbatim.
                    content.push(Content::Unknown {
                        target: Some(chef_ir::Target::Anthropic),
                        value: json!({"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query": query}}),
                    });
                }
                content.push(Content::text(turn.say));
                let mut results = Vec::new();
                for (i, (name, args)) in turn.calls.into_iter().enumerate() {
                    id += 1;
                    let call_id = format!("toolu_{id:03}");
                    content.push(Content::ToolCall(ToolCall::new(
                        call_id.clone(),
                        NAMES[name],
                        args,
                    )));
                    let mut result =
                        ToolResult::text(call_id, turn.results[i].clone()).with_name(NAMES[name]);
                    result.is_error = turn.errors[i];
                    results.push(result);
                }
                messages.push(
                    Message::assistant_with(content).with_cache_breakpoint(turn.assistant_cache),
                );
                if !results.is_empty() {
                    messages.push(
                        Message::tool_results(results).with_cache_breakpoint(turn.tool_cache),
                    );
                }
            }
            messages.push(Message::user(last));
            let tools = NAMES
                .iter()
                .zip(deferred)
                .map(|(name, d)| {
                    ToolDefinition::new(
                        *name,
                        json!({"type":"object","properties":{"q":{"type":"string"}}}),
                    )
                    .with_description(format!("The {name} tool."))
                    .with_defer_loading(d)
                })
                .collect();
            Request {
                messages,
                tools,
                native_tools: vec![],
                prefill,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn ir_to_wire_to_ir_round_trips(request in request()) {
        let compiled = compile(&request, &CompileOptions::default()).unwrap();
        let bytes = compiled.to_vec().unwrap();
        let parsed = parse_request(&bytes, &compiled.names).unwrap();
        prop_assert!(parsed.repairs.is_empty(), "{:?}", parsed.repairs);
        // More than four breakpoints are trimmed to four (the API refuses more): then only
        // the earliest message flags differ.
        let trimmed = compiled
            .notices
            .iter()
            .any(|n| matches!(n, chef_anthropic::Notice::TooManyBreakpoints { .. }));
        prop_assert!(compiled.body.breakpoint_count() <= 4);
        if trimmed {
            let unflag = |r: &Request| {
                let mut r = r.clone();
                for m in &mut r.messages {
                    m.cache_breakpoint = false;
                }
                r
            };
            prop_assert_eq!(unflag(&parsed.request), unflag(&request));
        } else {
            prop_assert_eq!(&parsed.request, &request);
        }
        // And the bytes are a fixed point.
        let again = compile(&parsed.request, &CompileOptions::default()).unwrap().to_vec().unwrap();
        prop_assert_eq!(again, bytes);
    }
}
