//! The session of issue 9's performance section, shared by the compile bench, the peak-RSS
//! example and the splice byte-identity test: 200 history messages (user text, assistant
//! tool calls, tool results, assistant text), the 149-tool corpus, 3 announcements and
//! 10 memories.
#![allow(dead_code, reason = "each includer uses a part of it")]

use chef::{
    Channel, Chef, ChefConfig,
    ir::{Attachment, Content, Message, ToolCall, ToolResult},
    memory::{Memory, SetOptions},
};
use serde_json::json;

/// The 149 tools of `tests/fixtures/real-mcp-tools.json`.
pub(crate) fn corpus() -> Vec<chef::ir::ToolDefinition> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/real-mcp-tools.json"
    );
    let text = std::fs::read_to_string(path).expect("fixture readable");
    chef::ir::load_tools_from_str(&text)
        .expect("fixture loads")
        .tools
}

/// One history message of a realistic mix, cycling user text → assistant tool call →
/// tool result → assistant text.
pub(crate) fn message(i: usize) -> Message {
    match i % 4 {
        0 => Message::user(format!(
            "Request {i}: please look at the accessorial revenue for partner {i} and \
             summarise anything unusual in last month's invoices."
        )),
        1 => Message::assistant_with(vec![
            Content::text(format!("Looking up partner {i}.")),
            Content::ToolCall(ToolCall::new(
                format!("call_{i}"),
                "accessorial_revenue_details",
                json!({"partner_name": format!("partner {i}"), "start_date": "2026-10-01", "limit": 50}),
            )),
        ]),
        2 => Message::tool_results(vec![ToolResult::text(
            format!("call_{}", i - 1),
            format!(
                "[{{\"partner_name\":\"partner {i}\",\"accessorial_code\":\"DET\",\"accessorial_revenue\":{}.5,\"accessorial_cost\":{}.25}}]",
                i * 13,
                i * 7
            ),
        )]),
        _ => Message::assistant(format!(
            "Partner {i}: detention charges are {}% above the three-month average; the rest is in line.",
            i % 17
        )),
    }
}

/// What the history's tool results and assistant turns hold besides the plain mix.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Mix {
    /// [`message`] as it is.
    Plain,
    /// One tool result in ten an error (what a blocked call or a validation error gives).
    Errors,
    /// Errors as above, one tool result in ten with an image, thinking before one tool
    /// call in three, and one user message in twenty pinned.
    Realistic,
}

/// Message `i` of the plain mix, changed as `mix` says.
pub(crate) fn message_mixed(i: usize, mix: Mix) -> Message {
    let mut m = message(i);
    let (call, errors, media) = (
        i / 4,
        !matches!(mix, Mix::Plain),
        matches!(mix, Mix::Realistic),
    );
    match i % 4 {
        0 if media && call % 20 == 9 => m = m.with_pinned(true),
        1 if media && call % 3 == 0 => m.content.insert(
            0,
            Content::Thinking {
                thinking: format!("Partner {i} needs the revenue lookup."),
                signature: Some(format!("sig-{i}")),
            },
        ),
        2 => {
            if let Some(Content::ToolResult(result)) = m.content.first_mut() {
                if errors && call % 10 == 4 {
                    result.is_error = true;
                } else if media && call % 10 == 8 {
                    result.content.push(Content::Attachment(Attachment::base64(
                        "image/png",
                        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGBgAAAABQABpfZFQAAAAABJRU5ErkJggg==",
                    )));
                }
            }
        }
        _ => {}
    }
    m
}

/// Ten memory entries.
pub(crate) fn memory() -> Memory {
    let mut memory = Memory::new();
    for i in 0..10 {
        memory
            .set(
                &format!("fact/{i:02}"),
                format!("value {i}: {}", "some remembered detail ".repeat(4)),
                SetOptions::new().with_description(format!("fact number {i}")),
            )
            .expect("valid key");
    }
    memory
}

/// The session: system prompt, 149 tools, 200 messages, 3 announcements, 10 memories.
pub(crate) fn session(config: ChefConfig) -> Chef {
    session_mixed(config, Mix::Plain)
}

/// [`session`] with its history in the given mix.
pub(crate) fn session_mixed(config: ChefConfig, mix: Mix) -> Chef {
    session_sized(config, mix, 200)
}

/// [`session_mixed`] with `messages` history messages instead of 200 (the 2,000-message
/// turn of issue 24).
pub(crate) fn session_sized(config: ChefConfig, mix: Mix, messages: usize) -> Chef {
    let mut chef = Chef::new(config).with_memory(memory());
    chef.register_tools(corpus()).expect("unique names");
    chef.set_system_prompt(vec![Message::system(
        "You are a logistics analyst. Answer from the data sources; cite the tool you used.",
    )]);
    for i in 0..messages {
        chef.push(message_mixed(i, mix));
    }
    chef.announce("env", "Working directory: /srv/reports", Channel::UserTail);
    chef.announce("clock", "It is 2026-11-29 21:00 UTC.", Channel::Auto);
    chef.announce(
        "policy",
        "Never share partner cost figures outside finance.",
        Channel::System,
    );
    chef
}

/// Save + load as `Chef::save` then `Chef::load` do it, without the file: take the
/// snapshot, encode it, decode it, restore it into the same session (the usual resume).
pub(crate) fn save_and_load(chef: &mut Chef) {
    let bytes = chef::snapshot::to_vec(&chef.snapshot(None)).expect("serializable");
    let read = chef::snapshot::from_slice::<chef::SessionState>(std::hint::black_box(&bytes))
        .expect("valid");
    chef.restore(&read).expect("restores");
}

/// Decodes a snapshot file's bytes and restores them into a new session with no tools
/// registered (the cold load the `compile` and `snapshot_alloc` benches time).
pub(crate) fn load_into_fresh(bytes: &[u8]) -> Chef {
    let read = chef::snapshot::from_slice::<chef::SessionState>(bytes).expect("valid");
    let mut fresh = Chef::new(ChefConfig::default());
    fresh.restore(&read).expect("restores");
    fresh
}
