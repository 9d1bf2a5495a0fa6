//! Compile caches (the tool selection, the lent wire tool list) never change a byte: over
//! 50 turns with changing announcements, memory, blocklist and history, each compile of a
//! long-lived session equals the compile of a fresh session restored from the same state.

#[path = "../../benches/support/session200.rs"]
pub(super) mod support;

use chef::{Channel, Chef, ChefConfig, MemoryPlacement, memory::SetOptions};
use chef_ir::{Message, Target};

fn fresh_compile(chef: &Chef, config: ChefConfig, target: Target) -> Vec<u8> {
    let mut fresh = Chef::new(config).with_memory(support::memory());
    fresh.restore(&chef.snapshot(None)).unwrap();
    fresh.compile(target).unwrap().body
}

fn turns(config: ChefConfig, turns: usize) {
    for target in Target::ALL {
        let mut chef = support::session(config.clone());
        for turn in 0..turns {
            chef.push(Message::user(format!("Turn {turn}: and the next partner?")));
            match turn % 5 {
                0 => {
                    chef.announce("clock", format!("Turn {turn} clock."), Channel::Auto);
                }
                1 => {
                    chef.memory_mut()
                        .unwrap()
                        .set(
                            &format!("turn/{turn}"),
                            format!("noted at turn {turn}"),
                            SetOptions::new(),
                        )
                        .unwrap();
                }
                2 => {
                    chef.retract_announcement("env");
                    chef.tools_mut().set_blocked([format!("tool_{turn}")]);
                }
                3 => {
                    chef.announce("env", format!("cwd {turn}"), Channel::System);
                }
                _ => {}
            }
            let expected = fresh_compile(&chef, config.clone(), target);
            let body = chef.compile(target).unwrap().body;
            assert!(
                body == expected,
                "{target:?} turn {turn}: cached compile differs from a fresh one"
            );
            chef.push(Message::assistant(format!("Turn {turn} answered.")));
        }
    }
}

#[test]
fn cached_compiles_equal_fresh_compiles_over_50_turns() {
    turns(ChefConfig::default(), 50);
}

#[test]
fn cached_compiles_equal_fresh_compiles_with_tail_memory_and_tool_announcements_over_10_turns() {
    turns(
        ChefConfig::default()
            .with_memory_placement(MemoryPlacement::BeforeHistoryTail)
            .with_tool_change_announcements(true),
        10,
    );
}

/// The provider crate's own bytes for the request chef assembles now.
fn provider_bytes(chef: &mut Chef, target: Target) -> Vec<u8> {
    let request = chef.request(target).unwrap();
    let options = chef.config().targets.clone();
    match target {
        Target::Anthropic => chef_anthropic::compile(&request, &options.anthropic)
            .unwrap()
            .to_vec()
            .unwrap(),
        Target::OpenAiChat => chef_openai::chat::to_vec(
            &chef_openai::chat::compile(&request, &options.openai).unwrap(),
        )
        .unwrap(),
        Target::OpenAiResponses => chef_openai::responses::to_vec(
            &chef_openai::responses::compile(&request, &options.openai).unwrap(),
        )
        .unwrap(),
        Target::Gemini => {
            chef_gemini::to_vec(&chef_gemini::compile(&request, &options.gemini).unwrap()).unwrap()
        }
    }
}

/// chef splices the serialised tools of the previous compile into the body while the tool
/// selection is unchanged; the result must be exactly what the provider crate writes.
#[test]
fn spliced_tool_bytes_equal_the_provider_crates_own_bytes() {
    use chef_compress::Level;
    for level in [Level::Zero, Level::One, Level::Three] {
        for system in [true, false] {
            for target in Target::ALL {
                let mut chef = support::session(ChefConfig::default().with_level(level));
                if !system {
                    chef.set_system_prompt(Vec::new());
                }
                for turn in 0..3 {
                    chef.push(Message::user(format!("turn {turn}")));
                    let expected = provider_bytes(&mut chef, target);
                    let got = chef.compile(target).unwrap().body;
                    assert!(
                        got == expected,
                        "{target:?} level {level:?} system {system} turn {turn}:\n{}\n{}",
                        String::from_utf8_lossy(&got),
                        String::from_utf8_lossy(&expected)
                    );
                }
            }
        }
    }
    // No tools at all (nothing to splice), and tools without any system text (Gemini's
    // tools then open the body).
    for with_tools in [false, true] {
        for target in Target::ALL {
            let mut chef = Chef::new(ChefConfig::default());
            if with_tools {
                chef.register_tools(support::corpus()).unwrap();
            }
            chef.push(Message::user("hi"));
            for _ in 0..2 {
                let expected = provider_bytes(&mut chef, target);
                assert_eq!(chef.compile(target).unwrap().body, expected);
            }
        }
    }
}

/// Turns that reuse the serialised history prefix give exactly the provider crate's bytes
/// for the whole request, through tool-call turns, announcements of both channels, memory
/// changes, a pinned message, a caller's system message and a history reset.
#[test]
fn reused_history_prefixes_equal_the_provider_crates_own_bytes() {
    use chef_ir::{Content, ToolCall, ToolResult};
    for target in Target::ALL {
        let mut chef = support::session(ChefConfig::default());
        let mut reused = 0;
        for turn in 0..40 {
            match turn % 4 {
                0 => {
                    chef.push(Message::user(format!("Turn {turn}: next partner?")));
                }
                1 => {
                    chef.push(Message::assistant_with(vec![Content::ToolCall(
                        ToolCall::new(
                            format!("t{turn}"),
                            "accessorial_revenue_details",
                            serde_json::json!({"partner_name": format!("p{turn}")}),
                        ),
                    )]));
                    chef.push(Message::tool_results(vec![ToolResult::text(
                        format!("t{turn}"),
                        "[]",
                    )]));
                }
                2 => {
                    chef.push(Message::assistant(format!("Done with {turn}.")));
                    chef.announce("turn", format!("turn {turn}"), Channel::System);
                }
                _ => {
                    chef.push(Message::user(format!("And {turn}?")).with_pinned(turn % 8 == 3));
                    chef.announce("tail", format!("tail {turn}"), Channel::UserTail);
                }
            }
            if turn == 21 {
                // A caller's system message in the history: no prefix may cover it.
                chef.push(Message::system("Be brief from now on."));
            }
            if turn == 30 {
                chef.memory_mut()
                    .unwrap()
                    .set("late", "value", SetOptions::new())
                    .unwrap();
            }
            if turn == 34 {
                let history = chef.history()[..100].to_vec();
                chef.set_history(history);
            }
            let expected = provider_bytes(&mut chef, target);
            let payload = chef.compile(target).unwrap();
            reused += usize::from(payload.meta.reused_prefix);
            assert_body(&payload, &expected, turn);
        }
        assert!(
            reused >= 15,
            "{target:?}: only {reused} of 40 turns reused a prefix"
        );
    }
}

/// A turn's body equals the provider crate's own bytes; on failure both bodies are shown,
/// with whether the turn reused a history prefix.
fn assert_body(payload: &chef::Payload, expected: &[u8], turn: usize) {
    assert!(
        payload.body == expected,
        "{:?} turn {turn} (reused {}):\n{}\n{}",
        payload.target,
        payload.meta.reused_prefix,
        String::from_utf8_lossy(&payload.body),
        String::from_utf8_lossy(expected)
    );
}

/// The provider crate's own bytes and notices for the request chef assembles now (the
/// notices folded one line per cause, as chef reports them: `chef::notices::fold`).
pub(super) fn provider_bytes_and_notices(
    chef: &mut Chef,
    target: Target,
) -> (Vec<u8>, Vec<String>) {
    let request = chef.request(target).unwrap();
    let options = chef.config().targets.clone();
    fn strings<N: ToString>(notices: &[N]) -> Vec<String> {
        chef::notices::fold(notices.iter().map(ToString::to_string).collect())
    }
    match target {
        Target::Gemini => {
            let c = chef_gemini::compile(&request, &options.gemini).unwrap();
            (chef_gemini::to_vec(&c).unwrap(), strings(&c.notices))
        }
        Target::OpenAiResponses => {
            let c = chef_openai::responses::compile(&request, &options.openai).unwrap();
            (
                chef_openai::responses::to_vec(&c).unwrap(),
                strings(&c.notices),
            )
        }
        Target::OpenAiChat => {
            let c = chef_openai::chat::compile(&request, &options.openai).unwrap();
            (chef_openai::chat::to_vec(&c).unwrap(), strings(&c.notices))
        }
        Target::Anthropic => {
            let c = chef_anthropic::compile(&request, &options.anthropic).unwrap();
            (c.to_vec().unwrap(), strings(&c.notices))
        }
    }
}

/// Gemini and the OpenAI targets leave the tools out of a compile while chef holds their
/// bytes (`chef_gemini::compile_with`, `chef_openai::{chat,responses}::compile_with` with
/// `ToolPass::Skip`), and put the cached tool notices back; Anthropic converts them and
/// splices the cached bytes. Each turn must still give the provider crate's full
/// compile: the same body and the same notices, for tools whose schema Gemini needs
/// cleaned, a deferred tool (a notice every turn but on Anthropic), a tool name the
/// provider refuses (renamed, a notice), and a call in the history that takes the
/// renamed tool's first-choice wire name (the cached bytes no longer fit and are made
/// again).
#[test]
fn turns_with_cached_tool_bytes_equal_a_full_compile_with_its_notices() {
    use chef_ir::{Content, ToolCall, ToolDefinition, ToolResult};
    use serde_json::json;
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "path": {"type": "string", "default": "/", "examples": ["/etc"]},
            "mode": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "depth": {"type": ["integer", "null"], "exclusiveMinimum": 0}
        },
        "required": ["path"],
        "additionalProperties": false
    });
    let tools = vec![
        ToolDefinition::new("files/read", schema.clone()).with_description("Reads a file."),
        ToolDefinition::new("files.list", schema.clone()).with_defer_loading(true),
        ToolDefinition::new("clock", json!({"type": "object"})),
    ];
    for target in Target::ALL {
        let mut chef = Chef::new(ChefConfig::default());
        chef.register_tools(tools.clone()).unwrap();
        chef.set_system_prompt(vec![Message::system("You read files.")]);
        let mut seen = Vec::new();
        for turn in 0..8 {
            chef.push(Message::user(format!("turn {turn}")));
            if turn == 5 {
                // `files_read` is a name the provider accepts: "files/read" must now be
                // sent under another name, and the cached tool bytes no longer hold.
                chef.push(Message::assistant_with(vec![Content::ToolCall(
                    ToolCall::new("c5", "files_read", json!({"path": "/"})),
                )]));
                chef.push(Message::tool_results(vec![ToolResult::text("c5", "gone")]));
                chef.push(Message::user("and now?"));
            }
            let (body, notices) = provider_bytes_and_notices(&mut chef, target);
            let payload = chef.compile(target).unwrap();
            assert!(
                payload.body == body,
                "{target:?} turn {turn}:\n{}\n{}",
                String::from_utf8_lossy(&payload.body),
                String::from_utf8_lossy(&body)
            );
            assert_eq!(payload.notices, notices, "{target:?} turn {turn}");
            seen.push((body, notices));
        }
        let (first, first_notices) = seen.first().unwrap();
        let (last, last_notices) = seen.last().unwrap();
        let text = String::from_utf8_lossy(first);
        // The tools were there, renamed, and (Gemini) cleaned.
        assert!(
            text.contains(r#""name":"files_read""#),
            "{target:?}: {text}"
        );
        assert!(String::from_utf8_lossy(last).contains(r#""name":"files_read_"#));
        if target == Target::Gemini {
            assert!(!text.contains("additionalProperties") && !text.contains("$schema"));
            assert!(text.contains(r#""nullable":true"#), "{text}");
        }
        for notices in [first_notices, last_notices] {
            // Anthropic sends `defer_loading` as it is; the others say they cannot.
            assert_eq!(
                notices.iter().any(|n| n.contains("defer_loading")),
                target != Target::Anthropic,
                "{target:?}: {notices:?}"
            );
            assert!(
                notices.iter().any(|n| n.contains("files/read")),
                "{target:?}: {notices:?}"
            );
        }
    }
}

/// The realistic turns that once cost history-prefix reuse: 1 tool result in 10 an error
/// (OpenAI has no error flag: a notice per error result), a tool result with an image (Chat
/// moves it to a user message), thinking blocks (dropped or sent as text elsewhere than
/// Anthropic), Gemini thought signatures and a pinned message. Every turn must give the
/// provider crate's own bytes *and notices*, and on every target most turns must reuse
/// the prefix, whose notices are put back in their place.
#[test]
fn error_results_images_and_thinking_keep_prefix_reuse_with_the_full_notices() {
    use chef_ir::{Attachment, Content, ToolCall, ToolResult};
    for target in Target::ALL {
        let mut chef = support::session(ChefConfig::default());
        let (mut reused, mut with_notices, turns) = (0, 0, 60);
        for turn in 0..turns {
            let id = format!("v{turn}");
            chef.push(
                Message::user(format!("Turn {turn}: and the next partner?")).with_pinned(turn == 7),
            );
            let mut assistant = Vec::new();
            if turn % 3 == 0 {
                assistant.push(Content::Thinking {
                    thinking: format!("Partner {turn} needs a lookup."),
                    signature: Some(format!("sig{turn}")),
                });
            }
            assistant.push(Content::ToolCall(ToolCall::new(
                id.clone(),
                "accessorial_revenue_details",
                serde_json::json!({"partner_name": format!("p{turn}")}),
            )));
            chef.push(Message::assistant_with(assistant));
            let result = match turn % 10 {
                4 => ToolResult::error(id, "partner not found"),
                8 => ToolResult {
                    content: vec![
                        Content::text("chart attached"),
                        Content::Attachment(Attachment::base64("image/png", "iVBORw0KGgo=")),
                    ],
                    ..ToolResult::text(id, "")
                },
                _ => ToolResult::text(id, "[]"),
            };
            chef.push(Message::tool_results(vec![result]));
            if turn % 5 == 2 {
                chef.push(Message::new(
                    chef_ir::Role::Assistant,
                    vec![Content::Text {
                        text: format!("Signed answer {turn}."),
                        thought_signature: Some(format!("g{turn}")),
                    }],
                ));
            } else {
                chef.push(Message::assistant(format!("Answered {turn}.")));
            }
            let (body, notices) = provider_bytes_and_notices(&mut chef, target);
            let payload = chef.compile(target).unwrap();
            reused += usize::from(payload.meta.reused_prefix);
            with_notices += usize::from(!notices.is_empty());
            assert_body(&payload, &body, turn);
            assert_eq!(
                payload.notices, notices,
                "{target:?} turn {turn} (reused {})",
                payload.meta.reused_prefix
            );
        }
        // Prefixes are re-made now and then (each time checked against a full compile);
        // every other turn reuses one.
        assert!(
            reused >= turns * 3 / 4,
            "{target:?}: only {reused} of {turns} turns reused a prefix"
        );
        if target != Target::Anthropic {
            assert!(
                with_notices > turns / 2,
                "{target:?}: the variants gave no notice"
            );
        }
    }
}

/// A loop whose every turn ends in an error result (a blocked call, a validation error):
/// OpenAI has no error flag, and each compile says so once, naming how many results, not
/// once per result.
#[test]
fn error_results_give_one_notice_per_cause_not_one_per_result() {
    use chef_ir::{Content, ToolCall, ToolResult};
    for target in [Target::OpenAiChat, Target::OpenAiResponses] {
        let mut chef = Chef::new(ChefConfig::default());
        chef.push(Message::user("Go."));
        let mut last = Vec::new();
        for turn in 0..30 {
            let id = format!("call_{turn}");
            let call = ToolCall::new(id.as_str(), "lookup", serde_json::json!({}));
            chef.push(Message::assistant_with(vec![Content::ToolCall(call)]));
            chef.push(Message::tool_results(vec![ToolResult::error(
                id, "refused",
            )]));
            last = chef.compile(target).unwrap().notices;
        }
        let errors: Vec<&String> = last.iter().filter(|n| n.contains("is an error")).collect();
        assert_eq!(errors.len(), 1, "{target:?}: {last:?}");
        assert!(
            errors[0].contains("(and 29 more like it: messages "),
            "{target:?}: {}",
            errors[0]
        );
    }
}

/// A loop that moves on from calls without their results (the user interrupted; one
/// result of two was pushed) gets requests every provider takes: each such call is closed
/// with a placeholder result just before the turn that moved on, each compile says so
/// once, and the history prefix is still reused (the placeholders are the same bytes in
/// a prefix and in a full compile).
#[test]
fn interrupted_calls_get_placeholder_results_and_keep_prefix_reuse() {
    use chef_ir::{Content, ToolCall, ToolResult};
    for target in Target::ALL {
        let mut chef = support::session(ChefConfig::default());
        let (mut reused, turns) = (0, 40);
        for turn in 0..turns {
            chef.push(Message::user(format!("Turn {turn}: and the next partner?")));
            let call = |n: usize| {
                Content::ToolCall(ToolCall::new(
                    format!("v{turn}_{n}"),
                    "accessorial_revenue_details",
                    serde_json::json!({"partner_name": format!("p{turn}")}),
                ))
            };
            chef.push(Message::assistant_with(vec![call(0), call(1)]));
            let interrupted = turn % 4 == 1;
            if !interrupted {
                chef.push(Message::tool_results(vec![ToolResult::text(
                    format!("v{turn}_0"),
                    "[]",
                )]));
                chef.push(Message::tool_results(vec![ToolResult::text(
                    format!("v{turn}_1"),
                    "[]",
                )]));
                chef.push(Message::assistant(format!("Answered {turn}.")));
            } else if turn % 8 == 1 {
                // One result of two, then the user moves on.
                chef.push(Message::tool_results(vec![ToolResult::text(
                    format!("v{turn}_0"),
                    "[]",
                )]));
            }
            let (body, notices) = provider_bytes_and_notices(&mut chef, target);
            let payload = chef.compile(target).unwrap();
            reused += usize::from(payload.meta.reused_prefix);
            assert_body(&payload, &body, turn);
            let said: Vec<&String> = payload
                .notices
                .iter()
                .filter(|n| n.contains("got no result before the conversation went on"))
                .collect();
            // Said at the compile after the turn that moved on, once.
            let expected = if turn % 4 == 2 {
                if (turn - 1) % 8 == 1 { 1 } else { 2 }
            } else {
                0
            };
            assert_eq!(said.len(), expected, "{target:?} turn {turn}: {said:?}");
            // The provider's notices, numbered as in a full compile (placeholders count).
            let others: Vec<String> = payload
                .notices
                .iter()
                .filter(|n| !n.contains("got no result before the conversation went on"))
                .cloned()
                .collect();
            assert_eq!(others, notices, "{target:?} turn {turn}");
            let text = String::from_utf8(payload.body).unwrap();
            if turn >= 2 {
                assert!(
                    text.contains(chef_ir::PH_NO_RESULT),
                    "{target:?} turn {turn}"
                );
            }
        }
        assert!(
            reused >= turns * 3 / 4,
            "{target:?}: only {reused} of {turns} turns reused a prefix"
        );
    }
}
