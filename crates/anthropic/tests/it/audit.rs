//! The cache audit (spec providers.md §5.3, checklist K 96-97).

use std::borrow::Cow;

use chef_anthropic::{
    CacheAudit, IssueKind, Marker,
    wire::{self, CacheControl, ContentBlock, FunctionTool, Tool},
};
use chef_ir::{Message, Request};
use serde_json::json;

use crate::compiled;

#[test]
fn volatile_system_blocks_before_a_history_breakpoint_are_prefix_issues() {
    let request = Request::new(vec![
        Message::system("S"),
        Message::system("<memory>k</memory>"),
        Message::system("CURRENT TASK STATE:\n<dynamic_state>\n  <a>1</a>\n</dynamic_state>"),
        Message::system("<EPHEMERAL_MESSAGE>wrap</EPHEMERAL_MESSAGE>"),
        Message::user("q").with_cache_breakpoint(true),
        Message::assistant("a"),
    ]);
    let c = compiled(&request);
    let audit = CacheAudit::default().with_marker(Marker::new(
        "<memory>",
        "memory data block",
        "place memory before the history tail",
    ));
    let issues = audit.audit(&c.body);
    let found: Vec<(&str, &str)> = issues
        .iter()
        .map(|i| (i.location.as_str(), i.dedupe_key.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            ("system[1]", "memory data block@prefix"),
            ("system[2]", "dynamic state@prefix"),
            ("system[3]", "guardrail enforce-XML@prefix"),
        ]
    );
    assert!(issues.iter().all(|i| i.kind == IssueKind::VolatilePrefix));
    assert!(
        issues[0]
            .to_string()
            .starts_with("cache audit — system[1]: ")
    );
}

#[test]
fn volatile_text_in_the_last_breakpoint_segment_is_a_tail_issue() {
    let request = Request::new(vec![
        Message::user("q\n\n<dynamic_state>\n  <a>1</a>\n</dynamic_state>")
            .with_cache_breakpoint(true),
    ]);
    let issues = CacheAudit::default().audit(&compiled(&request).body);
    assert_eq!(issues.len(), 1);
    assert_eq!(issues[0].location, "messages[0]");
    assert_eq!(issues[0].dedupe_key, "dynamic state@breakpoint-tail");
    assert_eq!(issues[0].kind, IssueKind::VolatileBreakpointTail);
}

#[test]
fn no_breakpoint_means_no_marker_issues_and_text_after_the_last_breakpoint_is_fine() {
    let request = Request::new(vec![Message::user("<dynamic_state>x</dynamic_state>")]);
    assert!(
        CacheAudit::default()
            .audit(&compiled(&request).body)
            .is_empty()
    );
    let request = Request::new(vec![
        Message::system("S").with_cache_breakpoint(true),
        Message::user("<announcements>x</announcements>"),
    ]);
    assert!(
        CacheAudit::default()
            .audit(&compiled(&request).body)
            .is_empty()
    );
}

#[test]
fn breakpoints_on_deferred_or_tool_search_tools_and_too_many_breakpoints_are_reported() {
    let mut deferred = FunctionTool::new("a", Cow::Owned(json!({"type":"object"})));
    deferred.defer_loading = Some(true);
    deferred.cache_control = Some(CacheControl::EPHEMERAL);
    let search = Tool::Native(Cow::Owned(json!({
        "type":"tool_search_tool_regex_20251119","name":"tool_search_tool_regex",
        "cache_control":{"type":"ephemeral"}
    })));
    let mut cached_text = ContentBlock::text("x");
    if let Some(slot) = cached_text.cache_control_mut() {
        *slot = Some(CacheControl::EPHEMERAL);
    }
    let mut request = wire::Request::new(vec![
        wire::Message::new(
            wire::Role::User,
            vec![cached_text.clone(), cached_text.clone()],
        ),
        wire::Message::new(wire::Role::Assistant, vec![cached_text]),
    ]);
    request.tools = vec![search, Tool::Function(deferred)];
    let kinds: Vec<IssueKind> = CacheAudit::default()
        .audit(&request)
        .into_iter()
        .map(|i| i.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            IssueKind::BreakpointOnToolSearch,
            IssueKind::BreakpointOnDeferredTool,
            IssueKind::TooManyBreakpoints
        ]
    );
}

#[test]
fn the_compiled_fixture_has_no_audit_issue() {
    let request = crate::conversation();
    assert!(
        CacheAudit::default()
            .audit(&compiled(&request).body)
            .is_empty()
    );
}
