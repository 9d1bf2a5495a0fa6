//! Overflow: budget, summaries that replace the stored history, pinned messages, the
//! circuit breaker, forced windows, archiving, the handoff notice, events and snapshots.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use chef::{
    Chef, ChefConfig, ChefEvent, HandoffBudget, OverflowConfig, OverflowOutcome, Routed,
    Summarizer, SummarizerError, SummaryRequest, ToolsMode,
    memory::{Memory, SetOptions},
    overflow::{HANDOFF_ID, Preserve, SummaryFailure},
    store::{Namespace, StoreKey},
};
use chef_ir::{Content, Message, Role, Target, ToolCall, ToolResult};
use serde_json::json;

use crate::support::{block_on, handoff_config};

/// A summariser that answers from a script and records what it was given.
#[derive(Default)]
struct Scripted {
    answers: Mutex<Vec<Result<String, SummarizerError>>>,
    seen: Mutex<Vec<SummaryRequest>>,
}

impl Scripted {
    fn new(answers: Vec<Result<String, SummarizerError>>) -> Arc<Self> {
        Arc::new(Self {
            answers: Mutex::new(answers.into_iter().rev().collect()),
            seen: Mutex::new(Vec::new()),
        })
    }
    fn calls(&self) -> usize {
        self.seen.lock().map(|s| s.len()).unwrap_or(0)
    }
    fn last(&self) -> SummaryRequest {
        self.seen
            .lock()
            .ok()
            .and_then(|s| s.last().cloned())
            .expect("called")
    }
}

#[async_trait]
impl Summarizer for Scripted {
    async fn summarize(&self, request: &SummaryRequest) -> Result<String, SummarizerError> {
        self.seen.lock().expect("lock").push(request.clone());
        self.answers
            .lock()
            .expect("lock")
            .pop()
            .unwrap_or_else(|| Err(SummarizerError::new("script exhausted")))
    }
}

fn ok(text: &str) -> Result<String, SummarizerError> {
    Ok(format!(
        "<analysis>scratch</analysis>\n<summary>{text}</summary>"
    ))
}

/// A session with a small window over a heuristic count: ten 400-char turns overflow it.
fn chef(window: u64) -> Chef {
    overflowing(OverflowConfig::default().with_context_window(window))
}

/// A 1,000-token window, otherwise the default overflow configuration.
fn window_1000() -> OverflowConfig {
    OverflowConfig::default().with_context_window(1_000)
}

/// A session with this overflow configuration.
fn overflowing(config: OverflowConfig) -> Chef {
    Chef::new(ChefConfig::default().with_overflow(config))
}

fn fill(chef: &mut Chef, turns: usize) {
    for i in 0..turns {
        chef.push(Message::user(format!("question {i}: {}", "q".repeat(400))));
        chef.push(Message::assistant(format!(
            "answer {i}: {}",
            "a".repeat(400)
        )));
    }
}

/// Overflow run after [`fill`]ing `turns` more turns.
fn overflow_after(chef: &mut Chef, turns: usize) -> OverflowOutcome {
    fill(chef, turns);
    block_on(chef.overflow()).expect("overflow")
}

fn texts(chef: &Chef) -> Vec<String> {
    chef.history().iter().map(Message::text).collect()
}

#[test]
fn under_the_trigger_nothing_happens() {
    let mut chef = chef(100_000).with_summarizer(Scripted::new(vec![]));
    fill(&mut chef, 3);
    let before = chef.history().to_vec();
    let outcome = block_on(chef.overflow()).expect("overflow");
    assert!(matches!(outcome, OverflowOutcome::NotNeeded { budget } if !budget.is_over()));
    assert_eq!(chef.history(), before.as_slice());
}

#[test]
fn a_summary_replaces_the_stored_history_so_the_next_compile_is_small() {
    let summarizer = Scripted::new(vec![ok("Goal: answer ten questions.")]);
    let mut chef = chef(1_000).with_summarizer(summarizer.clone());
    fill(&mut chef, 10);
    let full = chef.compile(Target::Anthropic).expect("compile").body.len();
    let outcome = block_on(chef.overflow()).expect("overflow");
    let OverflowOutcome::Summarized {
        replaced,
        pinned_kept,
        window,
        archive,
    } = outcome
    else {
        panic!("expected a summary, got {outcome:?}");
    };
    // Recent-turns (no tokenizer): the last turn (the last assistant answer) is kept, and
    // so is the latest user message, the request in hand, verbatim after the summary (the
    // reference folds it into the summary).
    assert_eq!((replaced, pinned_kept, window), (19, 1, 1));
    assert_eq!(archive.as_deref(), Some("context://archive/window-0.json"));
    let history = texts(&chef);
    assert_eq!(history.len(), 3);
    assert!(history[0].contains("<summary>\nGoal: answer ten questions.\n</summary>"));
    assert!(history[0].contains("context://archive/window-0.json"));
    assert!(history[1].starts_with("question 9"));
    assert!(history[2].starts_with("answer 9"));
    assert_eq!(chef.history()[0].role, Role::User);
    // The summariser saw the 18 replaced messages, not the request or the kept tail.
    let request = summarizer.last();
    assert_eq!(request.span.len(), 18);
    assert_eq!(request.window, 0);
    assert!(request.instruction.contains("<summary>"));
    // The next compile sends the summary, not the history again.
    let payload = chef.compile(Target::Anthropic).expect("compile");
    assert!(
        payload.body.len() * 4 < full,
        "{} vs {full}",
        payload.body.len()
    );
    assert_eq!(payload.meta.window, 1);
    // And nothing was lost: the archive holds the replaced messages verbatim.
    let stored = block_on(chef.store().get(
        &Namespace::ARCHIVE,
        &StoreKey::new("window-0.json").expect("key"),
    ))
    .expect("get")
    .expect("archived");
    let archived: Vec<Message> = serde_json::from_str(stored.value.content()).expect("json");
    assert_eq!(
        archived.len(),
        18,
        "the replaced messages; the request stays in the history"
    );
    assert!(archived[0].text().starts_with("question 0"));
}

#[test]
fn pinned_turns_stay_verbatim_right_after_the_summary() {
    let mut chef = chef(1_000).with_summarizer(Scripted::new(vec![ok("summary")]));
    fill(&mut chef, 2);
    // A tool turn with its result pinned: the call is kept too (pinning widens to the turn).
    chef.push(Message::assistant_with(vec![Content::ToolCall(
        ToolCall::new("c1", "read_file", json!({"path": "spec.md"})),
    )]));
    chef.push(Message::tool_results(vec![ToolResult::text("c1", "THE SPEC")]).with_pinned(true));
    let outcome = overflow_after(&mut chef, 6);
    // The pinned turn, then the latest request, both in their original order.
    assert!(matches!(
        outcome,
        OverflowOutcome::Summarized { pinned_kept: 3, .. }
    ));
    let history = chef.history();
    assert_eq!(history.len(), 5);
    assert_eq!(history[1].tool_calls().count(), 1);
    assert!(history[2].pinned);
    assert_eq!(history[3].role, Role::User);
    assert_eq!(history[4].role, Role::Assistant);
}

#[test]
fn three_failures_open_the_breaker_until_the_history_is_cleared() {
    let summarizer = Scripted::new(vec![
        Err(SummarizerError::new("model down")),
        Ok("   ".to_owned()),
        Ok("x".repeat(5_000)), // longer than what it replaces: the shrink guard refuses it
        ok("finally"),
    ]);
    let mut chef = chef(1_000).with_summarizer(summarizer.clone());
    fill(&mut chef, 10);
    let before = chef.history().to_vec();
    let reasons: Vec<SummaryFailure> = (0..3)
        .map(|i| match block_on(chef.overflow()).expect("overflow") {
            OverflowOutcome::Failed { reason, failures } => {
                assert_eq!(failures, i + 1);
                reason
            }
            other => panic!("expected a failure, got {other:?}"),
        })
        .collect();
    assert!(matches!(reasons[0], SummaryFailure::Summarizer(_)));
    assert_eq!(reasons[1], SummaryFailure::Empty);
    assert!(matches!(reasons[2], SummaryFailure::NoShrink { .. }));
    assert_eq!(chef.history(), before.as_slice(), "failures change nothing");
    // Open: the summariser is not called again, forced or not.
    chef.request_new_context();
    assert_eq!(
        block_on(chef.overflow()).expect("overflow"),
        OverflowOutcome::BreakerOpen { failures: 3 }
    );
    assert_eq!(summarizer.calls(), 3);
    assert!(
        !chef.new_context_requested(),
        "the request is consumed anyway"
    );
    // A new window resets it.
    chef.clear_history();
    fill(&mut chef, 10);
    assert!(matches!(
        block_on(chef.overflow()).expect("overflow"),
        OverflowOutcome::Summarized { .. }
    ));
    assert_eq!(chef.overflow_state().consecutive_failures, 0);
}

/// Session 40's context audit: from Python nothing closed an open breaker (there is no
/// `clear_history` there), so three transient failures ended overflow for good. Setting
/// the summariser again closes it, and keeps the history.
#[test]
fn setting_the_summarizer_again_closes_an_open_breaker() {
    let summarizer = Scripted::new(vec![
        Err(SummarizerError::new("model down")),
        Err(SummarizerError::new("model down")),
        Err(SummarizerError::new("model down")),
        ok("back"),
    ]);
    let mut chef = chef(1_000).with_summarizer(summarizer.clone());
    fill(&mut chef, 10);
    for _ in 0..3 {
        assert!(matches!(
            block_on(chef.overflow()).expect("overflow"),
            OverflowOutcome::Failed { .. }
        ));
    }
    assert!(matches!(
        block_on(chef.overflow()).expect("overflow"),
        OverflowOutcome::BreakerOpen { failures: 3 }
    ));
    chef.set_summarizer(Some(summarizer.clone()));
    assert_eq!(chef.overflow_state().consecutive_failures, 0);
    assert!(matches!(
        block_on(chef.overflow()).expect("overflow"),
        OverflowOutcome::Summarized { .. }
    ));
    assert_eq!(summarizer.calls(), 4);
}

/// Session 40's context audit: with no tokenizer the reported usage alone was read, so a
/// large result pushed after the report never triggered an overflow. The larger of the
/// report and the estimate is read.
#[test]
fn a_result_pushed_after_the_reported_usage_counts() {
    let mut chef = chef(1_000);
    fill(&mut chef, 1);
    chef.report_token_usage(100);
    let before = chef.budget();
    assert!(!before.is_over(), "{before:?}");
    chef.push(Message::user("word ".repeat(4_000)));
    let after = chef.budget();
    assert!(after.current > 1_000 && after.is_over(), "{after:?}");
}

#[test]
fn new_context_forces_a_summary_of_everything_before_the_last_turn() {
    let summarizer = Scripted::new(vec![ok("short")]);
    // No context window at all: only forced overflows happen.
    let mut chef = Chef::new(handoff_config()).with_summarizer(summarizer.clone());
    fill(&mut chef, 2);
    chef.push(Message::user("next task"));
    assert!(matches!(
        block_on(chef.overflow()).expect("overflow"),
        OverflowOutcome::NotNeeded { .. }
    ));
    // The model asks through the owned tool; the next compile_async acts on it.
    let call = ToolCall::new("n1", "new_context", json!({}));
    let Routed::Owned(owned) = chef.route(&call) else {
        panic!("new_context is owned");
    };
    let reply = block_on(chef.handle_tool(&owned)).expect("handled");
    assert_eq!(reply.text, "Starting a new context window.");
    assert!(chef.new_context_requested());
    let payload = block_on(chef.compile_async(Target::OpenAiChat)).expect("compile");
    assert!(!chef.new_context_requested());
    assert_eq!(payload.meta.window, 1);
    assert_eq!(texts(&chef).len(), 2);
    assert_eq!(texts(&chef)[1], "next task");
    // A single turn: nothing to do, and the request is still consumed.
    chef.set_history(vec![Message::user("only")]);
    chef.request_new_context();
    assert_eq!(
        block_on(chef.overflow()).expect("overflow"),
        OverflowOutcome::NothingToCompress
    );
    assert!(!chef.new_context_requested());
    // An empty history under the trigger needs nothing; asked for a new window, it has
    // nothing to compress.
    chef.set_history(Vec::new());
    assert!(matches!(
        block_on(chef.overflow()).expect("overflow"),
        OverflowOutcome::NotNeeded { .. }
    ));
    chef.request_new_context();
    assert_eq!(
        block_on(chef.overflow()).expect("overflow"),
        OverflowOutcome::NothingToCompress
    );
}

#[test]
fn without_a_summarizer_older_turns_are_archived_and_readable() {
    let mut chef = Chef::new(
        ChefConfig::default()
            .with_tools_mode(ToolsMode::Unified)
            .with_overflow(window_1000()),
    );
    let outcome = overflow_after(&mut chef, 10);
    let OverflowOutcome::Dropped {
        dropped, archive, ..
    } = outcome
    else {
        panic!("expected a drop, got {outcome:?}");
    };
    assert_eq!(dropped, 18, "the latest request stays");
    let uri = archive.expect("archived");
    assert!(texts(&chef)[0].contains(&uri));
    // The model reads it back through the context tool.
    let call = ToolCall::new("v1", "context", json!({"command": "view", "path": uri}));
    let Routed::Owned(owned) = chef.route(&call) else {
        panic!("context is owned");
    };
    let reply = block_on(chef.handle_tool(&owned)).expect("handled");
    assert!(!reply.is_error, "{}", reply.text);
    assert!(reply.text.contains("question 0"));
}

#[test]
fn a_reported_usage_over_the_trigger_triggers_and_is_consumed() {
    let mut chef = chef(10_000).with_summarizer(Scripted::new(vec![ok("s")]));
    fill(&mut chef, 3);
    assert!(!chef.budget().is_over());
    chef.report_token_usage(9_000);
    assert!(chef.budget().is_over());
    assert!(matches!(
        block_on(chef.overflow()).expect("overflow"),
        OverflowOutcome::Summarized { .. }
    ));
    assert_eq!(chef.overflow_state().reported_tokens, None);
}

#[test]
fn a_tokenizer_keeps_recent_turns_within_a_ratio_of_the_trigger() {
    let summarizer = Scripted::new(vec![ok("s")]);
    // 100 tokens per message; trigger 700; keep within 0.3 × 700 = 210 → two messages.
    let mut chef = overflowing(window_1000().with_preserve(Preserve::Ratio(0.3)))
        .with_tokenizer(Arc::new(|_: &Message| 100))
        .with_summarizer(summarizer.clone());
    fill(&mut chef, 4);
    assert_eq!(chef.budget().current, 800);
    assert!(matches!(
        block_on(chef.overflow()).expect("overflow"),
        OverflowOutcome::Summarized { replaced: 6, .. }
    ));
    assert_eq!(chef.history().len(), 3);
}

#[test]
fn large_tool_results_reach_the_summarizer_as_a_stub() {
    let summarizer = Scripted::new(vec![ok("s")]);
    let mut chef = overflowing(window_1000().with_tool_result_stub_threshold(100))
        .with_summarizer(summarizer.clone());
    chef.push(Message::assistant_with(vec![Content::ToolCall(
        ToolCall::new("c1", "fetch_page", json!({})),
    )]));
    chef.push(Message::tool_results(vec![ToolResult::text(
        "c1",
        "p".repeat(3_000),
    )]));
    overflow_after(&mut chef, 2);
    let span = summarizer.last().span;
    let stub: String = span[1]
        .tool_results_iter()
        .flat_map(|r| r.content.iter().filter_map(Content::as_text))
        .collect();
    assert_eq!(
        stub,
        "[Tool fetch_page returned 3000 chars; omitted before summarization]"
    );
}

#[test]
fn the_handoff_notice_shows_once_per_window_and_is_never_stored() {
    let config = ChefConfig::default()
        .with_tools_mode(ToolsMode::Unified)
        .with_overflow(
            OverflowConfig::default()
                .with_context_window(2_000)
                .with_handoff(HandoffBudget::new(500).expect("budget")),
        );
    let mut chef = Chef::new(config).with_summarizer(Scripted::new(vec![ok("s")]));
    chef.push(Message::user("hello"));
    let quiet = String::from_utf8(chef.compile(Target::Anthropic).expect("c").body).expect("utf8");
    assert!(!quiet.contains(HANDOFF_ID));
    fill(&mut chef, 4); // ~1,130 tokens of a 1,400 trigger: within the 500-token budget
    let first = String::from_utf8(chef.compile(Target::Anthropic).expect("c").body).expect("utf8");
    assert!(first.contains(HANDOFF_ID), "{first}");
    assert!(first.contains("call new_context"));
    assert!(
        chef.announcements().is_empty(),
        "never a standing announcement"
    );
    assert!(!chef.retract_announcement(HANDOFF_ID));
    // Once per window.
    let again = String::from_utf8(chef.compile(Target::Anthropic).expect("c").body).expect("utf8");
    assert!(!again.contains(HANDOFF_ID));
    // It rides the snapshot: a restored session does not repeat it in the same window.
    let snapshot = chef.snapshot(None);
    assert_eq!(snapshot.payload.overflow.handoff_noticed_window, Some(0));
    // A new window can show it again.
    chef.request_new_context();
    block_on(chef.overflow()).expect("overflow");
    fill(&mut chef, 4);
    let next = String::from_utf8(chef.compile(Target::Anthropic).expect("c").body).expect("utf8");
    assert!(next.contains(HANDOFF_ID));
}

#[test]
fn handoff_prompts_are_validated() {
    assert!(HandoffBudget::new(0).is_err());
    let budget = HandoffBudget::new(10).expect("budget");
    assert!(budget.clone().with_prompt("   ").is_err());
    assert!(budget.clone().with_prompt(&"x".repeat(2_001)).is_err());
    assert_eq!(
        budget
            .with_prompt("  {n_remaining} left  ")
            .expect("ok")
            .prompt(),
        "{n_remaining} left"
    );
}

#[test]
fn overflow_emits_start_summary_and_end_events() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let mut chef = chef(1_000).with_summarizer(Scripted::new(vec![ok("s")]));
    let sink = Arc::clone(&events);
    chef.subscribe(move |e| sink.lock().expect("lock").push(e.clone()));
    overflow_after(&mut chef, 10);
    let events = events.lock().expect("lock").clone();
    assert!(matches!(
        events.as_slice(),
        [
            ChefEvent::CompressStart {
                history_len: 20,
                forced: false,
                ..
            },
            ChefEvent::Summarized {
                replaced: 19,
                window: 1
            },
            ChefEvent::CompressEnd { compressed: true },
        ]
    ));
}

#[test]
fn memory_changes_reach_session_subscribers_whenever_memory_was_attached() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let mut chef = Chef::new(ChefConfig::default());
    let sink = Arc::clone(&events);
    chef.subscribe(move |e| sink.lock().expect("lock").push(e.clone()));
    let mut chef = chef.with_memory(Memory::new());
    chef.memory_mut()
        .expect("memory")
        .set("lang", "Rust", SetOptions::new())
        .expect("set");
    let sink = Arc::clone(&events);
    chef.subscribe(move |e| sink.lock().expect("lock").push(e.clone()));
    chef.memory_mut()
        .expect("memory")
        .set("lang", "Rust 2024", SetOptions::new())
        .expect("set");
    let memory_events = events
        .lock()
        .expect("lock")
        .iter()
        .filter(|e| matches!(e, ChefEvent::Memory(_)))
        .count();
    // One event for the first write, two (both subscribers) for the second.
    assert_eq!(memory_events, 3);
}

#[test]
fn a_compile_that_should_have_overflowed_says_so() {
    let mut chef = chef(1_000);
    fill(&mut chef, 10);
    let payload = chef.compile(Target::Gemini).expect("compile");
    assert!(
        payload
            .notices
            .iter()
            .any(|n| n.contains("over the overflow trigger"))
    );
}

#[test]
fn overflow_state_survives_save_and_load_and_the_next_request_is_identical() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.json");
    let mut chef = chef(1_000).with_summarizer(Scripted::new(vec![
        Err(SummarizerError::new("once")),
        ok("s"),
    ]));
    fill(&mut chef, 10);
    block_on(chef.overflow()).expect("failure");
    block_on(chef.overflow()).expect("summary");
    chef.push(Message::user("go on"));
    chef.report_token_usage(123);
    chef.save(&path, None).expect("save");
    let mut other = self::chef(1_000);
    other.load(&path).expect("load");
    assert_eq!(other.overflow_state(), chef.overflow_state());
    assert_eq!(other.overflow_state().window, 1);
    assert_eq!(
        other.compile(Target::Anthropic).expect("c").body,
        chef.compile(Target::Anthropic).expect("c").body
    );
}

#[test]
fn a_summariser_set_on_a_built_session_is_used_and_can_be_cleared() {
    let mut chef = chef(1_000);
    let summarizer = Scripted::new(vec![ok("Goal: set later.")]);
    chef.set_summarizer(Some(summarizer.clone()));
    let outcome = overflow_after(&mut chef, 10);
    assert!(
        matches!(outcome, OverflowOutcome::Summarized { .. }),
        "{outcome:?}"
    );
    assert_eq!(summarizer.calls(), 1);
    assert!(texts(&chef)[0].contains("Goal: set later."));
    chef.set_summarizer(None);
    let outcome = overflow_after(&mut chef, 10);
    assert!(
        matches!(outcome, OverflowOutcome::Dropped { .. }),
        "{outcome:?}"
    );
    assert_eq!(summarizer.calls(), 1);
}

/// The request in hand survives every window, and an earlier window's lead message is
/// summarised again, never kept as if it were a request; after `clear_history` a lone
/// first request is kept too.
#[test]
fn the_latest_request_survives_window_after_window() {
    let summarizer = Scripted::new(vec![ok("one"), ok("two"), ok("three")]);
    let mut chef = chef(1_000).with_summarizer(summarizer);
    fill(&mut chef, 10);
    assert!(matches!(
        block_on(chef.overflow()).expect("overflow"),
        OverflowOutcome::Summarized { .. }
    ));
    // More work on the same request, past the window again.
    for i in 0..10 {
        chef.push(Message::assistant(format!("step {i}: {}", "s".repeat(400))));
    }
    assert!(matches!(
        block_on(chef.overflow()).expect("overflow"),
        OverflowOutcome::Summarized { pinned_kept: 1, .. }
    ));
    let history = texts(&chef);
    assert!(
        history[0].contains("<summary>\ntwo\n</summary>"),
        "{}",
        history[0]
    );
    assert!(history[1].starts_with("question 9"), "{}", history[1]);
    assert_eq!(
        history.iter().filter(|t| t.contains("<summary>")).count(),
        1,
        "the first lead was summarised, not kept"
    );
    // A new window by hand: its first message is the request, and it is kept.
    chef.clear_history();
    chef.push(Message::user("the only request"));
    for i in 0..10 {
        chef.push(Message::assistant(format!("step {i}: {}", "s".repeat(400))));
    }
    assert!(matches!(
        block_on(chef.overflow()).expect("overflow"),
        OverflowOutcome::Summarized { pinned_kept: 1, .. }
    ));
    assert_eq!(texts(&chef)[1], "the only request");
}
