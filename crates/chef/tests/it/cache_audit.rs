//! The opt-in Anthropic cache audit: volatile content at or before the last breakpoint.

use chef::{
    Chef, ChefConfig,
    memory::{Memory, SetOptions},
};
use chef_ir::{Message, Target};

use crate::support::cache_issue_keys;

#[test]
fn the_cache_audit_reports_volatile_content_in_the_cached_prefix_once() {
    use chef::{Channel, MemoryPlacement};
    let build = |audit: bool| {
        let mut chef = Chef::new(
            ChefConfig::default()
                .with_memory_placement(MemoryPlacement::AfterSystem)
                .with_cache_audit(audit),
        )
        .with_memory(Memory::new());
        chef.memory_mut()
            .expect("memory")
            .set("lang", "Rust", SetOptions::new())
            .expect("set");
        chef.set_system_prompt(vec![Message::system("You help.")]);
        chef.announce("clock", "It is noon.", Channel::UserTail);
        // The caller asks for a breakpoint on the turn that receives the tail stitch.
        chef.push(Message::user("hi").with_cache_breakpoint(true));
        chef
    };
    let mut audited = build(true);
    let first = audited.compile(Target::Anthropic).expect("compile");
    let keys = cache_issue_keys(&first);
    // Memory in the system layers sits before that breakpoint; announcements share it.
    assert_eq!(keys, ["memory@prefix", "announcements@breakpoint-tail"]);
    assert!(
        first.notices.iter().any(|n| n.starts_with("cache audit")),
        "{:?}",
        first.notices
    );
    // Reported once per session; the findings stay in meta.
    let second = audited.compile(Target::Anthropic).expect("compile");
    assert!(!second.meta.cache_issues.is_empty());
    assert!(
        !second.notices.iter().any(|n| n.starts_with("cache audit")),
        "{:?}",
        second.notices
    );
    // The audit never changes the request, and is off by default.
    let mut plain = build(false);
    let body = plain.compile(Target::Anthropic).expect("compile");
    assert_eq!(body.body, first.body);
    assert!(body.meta.cache_issues.is_empty());
    // Other targets are not audited.
    assert!(
        build(true)
            .compile(Target::OpenAiChat)
            .expect("c")
            .meta
            .cache_issues
            .is_empty()
    );
}
