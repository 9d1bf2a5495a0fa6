//! `Chef::fork`: a fork compiles exactly what its parent would, shares what was prepared
//! from the tools (no second compression), and changes independently of its parent.

use std::sync::Arc;

use chef::{Chef, ChefConfig, ChefEvent, Routed, announce::Channel};
use chef_compress::{Level, Options};
use chef_ir::{Content, Message, Target, ToolCall, ToolResult};
use parking_lot::Mutex;
use serde_json::json;

use crate::fixtures::real_tools;
use crate::support::memory_with;

/// A session with the 149 real tools at `level`, a blocked tool, an announcement, memory
/// and a conversation with a tool round.
fn session(level: Level) -> Chef {
    let config = ChefConfig::default().with_compress(Options::new().with_level(level));
    let mut chef = Chef::new(config).with_memory(memory_with("tz", "Europe/Oslo", "user's zone"));
    chef.register_tools(real_tools()).unwrap();
    chef.tools_mut().set_blocked(["cancel_order"]);
    chef.announce("freeze", "Orders are frozen today.", Channel::Auto);
    chef.set_system_prompt(vec![Message::system("You track orders.")]);
    chef.push(Message::user("Where is order 737U2663137?"));
    let call = ToolCall::new(
        "call_1",
        "get_order_details",
        json!({"trackingNumber": "737U2663137"}),
    );
    chef.push(Message::assistant_with(vec![Content::ToolCall(call)]));
    chef.push(Message::tool_results(vec![ToolResult::text(
        "call_1",
        "In transit.",
    )]));
    chef
}

fn compress_events(chef: &mut Chef) -> Arc<Mutex<usize>> {
    let seen = Arc::new(Mutex::new(0));
    let sink = Arc::clone(&seen);
    chef.subscribe(move |event| {
        if matches!(event, ChefEvent::Compress { .. }) {
            *sink.lock() += 1;
        }
    });
    seen
}

#[test]
fn a_fork_compiles_the_bytes_its_parent_would_on_every_target_and_level() {
    for level in [Level::Zero, Level::One, Level::Two, Level::Three] {
        for target in Target::ALL {
            let mut parent = session(level);
            parent.compile(target).unwrap();
            let mut fork = parent.fork();
            let mut fresh = session(level);
            fresh.compile(target).unwrap();
            for chef in [&mut parent, &mut fork, &mut fresh] {
                chef.push(Message::user("When will it arrive?"));
            }
            let from_fork = fork.compile(target).unwrap();
            let from_parent = parent.compile(target).unwrap();
            let from_fresh = fresh.compile(target).unwrap();
            assert_eq!(from_fork.body, from_parent.body, "{level:?} {target:?}");
            assert_eq!(from_fork.body, from_fresh.body, "{level:?} {target:?}");
            assert_eq!(from_fork.meta.wire_tools, from_parent.meta.wire_tools);
        }
    }
}

#[test]
fn a_fork_shares_the_prepared_tools_instead_of_compressing_them_again() {
    let mut parent = session(Level::Three);
    let parent_compressions = compress_events(&mut parent);
    parent.compile(Target::OpenAiChat).unwrap();
    assert_eq!(*parent_compressions.lock(), 1);

    let mut fork = parent.fork();
    let fork_compressions = compress_events(&mut fork);
    assert!(
        std::ptr::eq(
            parent.tools().pruner().all_tools().as_ptr(),
            fork.tools().pruner().all_tools().as_ptr()
        ),
        "the tool definitions are shared, not copied"
    );
    // Another target, then the parent's: the compressed selection is reused for both.
    fork.compile(Target::Anthropic).unwrap();
    fork.compile(Target::OpenAiChat).unwrap();
    assert_eq!(
        *fork_compressions.lock(),
        0,
        "the fork compressed the tools again"
    );
    // Subscribers belong to the session they were added to.
    assert_eq!(*parent_compressions.lock(), 1);
}

#[test]
fn forks_change_independently() {
    let mut parent = session(Level::Three);
    let before = parent.compile(Target::Anthropic).unwrap().body;
    let history = parent.history().to_vec();

    let mut fork = parent.fork();
    fork.push(Message::user("Something else."));
    fork.tools_mut().set_blocked(["create_article"]);
    fork.retract_announcement("freeze");
    fork.memory_mut()
        .unwrap()
        .set("tz", "Asia/Tokyo", chef::memory::SetOptions::new())
        .unwrap();
    fork.register_tools(real_tools().into_iter().take(10).collect())
        .unwrap();
    fork.compile(Target::Anthropic).unwrap();

    assert_eq!(parent.history(), history.as_slice());
    assert_eq!(parent.tools().pruner().all_tools().len(), 149);
    assert_eq!(fork.tools().pruner().all_tools().len(), 10);
    assert_eq!(
        parent.memory().unwrap().get("tz").map(|e| e.value()),
        Some("Europe/Oslo")
    );
    assert_eq!(parent.announcements().len(), 1);
    assert_eq!(parent.tools().pruner().blocked_tools(), ["cancel_order"]);
    assert_eq!(parent.compile(Target::Anthropic).unwrap().body, before);

    // And the other way: the parent's changes do not reach a fork made earlier.
    let mut fork = parent.fork();
    let forked = fork.compile(Target::Gemini).unwrap().body;
    parent.push(Message::user("Later."));
    parent.tools_mut().set_blocked(Vec::<String>::new());
    assert_eq!(fork.compile(Target::Gemini).unwrap().body, forked);
}

#[test]
fn a_fork_routes_calls_against_what_its_parent_showed() {
    let mut parent = session(Level::Three);
    parent.compile(Target::OpenAiChat).unwrap();
    let fork = parent.fork();
    // A blocked tool stays blocked in the fork, without a compile of its own.
    let call = |name: &str| ToolCall::new("c", name, json!({"trackingNumber": "737U2663137"}));
    let blocked = fork.check_tool_call(&call("cancel_order"));
    assert!(matches!(blocked, Routed::Blocked { .. }), "{blocked:?}");
    let listed = ToolCall::new(
        "c",
        "get_order_details",
        json!({"trackingNumber": "737U2663137"}),
    );
    let allowed = fork.check_tool_call(&listed);
    assert!(matches!(allowed, Routed::Call(_)), "{allowed:?}");
}
