//! Offloading large tool results (issue 21, part 1): a result over the policy is stored
//! whole in the store's `vfs` namespace and replaced by a preview, on every target, byte
//! for byte the same on every run; the model reads it back in ranges through the owned
//! `context` tool; the same output is stored once; a failed write keeps the result whole;
//! snapshots and the journal carry the policy and unwritten results; cleanup and reconcile
//! on the memory, file-system and PostgreSQL backends.

use std::sync::Arc;

use chef::{
    Chef, ChefConfig, ChefEvent, Routed, ToolsMode,
    offload::{EvictReason, Keep, Limit, OffloadCaps, OffloadPolicy, ToolRule},
    store::{Entry, Expect, FsBackend, MemoryBackend, Namespace, StorageBackend},
};
use chef_ir::{Content, Message, Target, ToolCall, ToolResult};
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::{
    faulty::{Fault, Faulty},
    support::{assert_notice, block_on, key, memory_journal, replayed, two_tools},
};

/// A 200 KB access log: 2,600-odd lines, one ERROR line near the middle.
fn big_log() -> String {
    let mut out = String::new();
    let mut i = 0;
    while out.len() < 200 * 1024 {
        if i == 1_300 {
            out.push_str("2026-12-02T10:21:40Z ERROR upstream timed out after 30s (pool=db-7)\n");
        }
        out.push_str(&format!(
            "2026-12-02T10:{:02}:{:02}Z GET /api/v1/items/{i} 200 {}ms\n",
            (i / 60) % 60,
            i % 60,
            (i * 7) % 900
        ));
        i += 1;
    }
    out
}

fn ns() -> Namespace {
    Namespace::new("vfs").unwrap()
}

fn session(store: Arc<dyn StorageBackend>) -> Chef {
    let mut chef =
        Chef::new(ChefConfig::default().with_tools_mode(ToolsMode::Unified)).with_store(store);
    chef.register_tools(two_tools()).unwrap();
    chef.set_system_prompt(vec![Message::system("You read logs.")]);
    chef.offloads_mut()
        .set_policy(Some(OffloadPolicy::chars(8_000)));
    chef
}

/// Pushes a user turn, the model's call of `tool` and its result `text`.
fn push_result(chef: &mut Chef, id: &str, tool: &str, text: &str) {
    push_call(chef, id, tool, ToolResult::text(id, text));
}

/// Pushes a user turn, the model's call of `tool` and its `result`.
fn push_call(chef: &mut Chef, id: &str, tool: &str, result: ToolResult) {
    chef.push(Message::user("What failed?"));
    chef.push(Message::assistant_with(vec![Content::ToolCall(
        ToolCall::new(id, tool, json!({})),
    )]));
    chef.push(Message::tool_results(vec![result]));
}

/// The first tool result of the last message in the history.
fn last_result(chef: &Chef) -> ToolResult {
    chef.history()
        .last()
        .unwrap()
        .tool_results_iter()
        .next()
        .unwrap()
        .clone()
}

fn last_result_text(chef: &Chef) -> String {
    let result = last_result(chef);
    result.content.iter().filter_map(Content::as_text).collect()
}

/// A result of `text`, an image, then `tail`: two text parts around an attachment.
fn with_attachment(id: &str, text: &str, tail: &str) -> ToolResult {
    let mut result = ToolResult::text(id, text);
    result
        .content
        .push(Content::Attachment(chef_ir::Attachment::url(
            "image/png",
            "https://example.com/a.png",
        )));
    result.content.push(Content::text(tail));
    result
}

fn uri_in(preview: &str) -> String {
    let at = preview.find("context://vfs/").unwrap();
    preview[at..]
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '.')
        .collect()
}

/// Calls the owned `context` tool as the model would, through route and handle_tool.
async fn context(chef: &mut Chef, id: &str, args: Value) -> chef::OwnedReply {
    chef.compile(Target::Anthropic).unwrap();
    let call = ToolCall::new(id, "context", args);
    let Routed::Owned(owned) = chef.route(&call) else {
        panic!("context is owned");
    };
    chef.handle_tool(&owned).await.unwrap()
}

#[test]
fn a_200_kb_log_is_offloaded_and_read_back_in_ranges_on_every_target() {
    block_on(async {
        let log = big_log();
        let mut bodies = Vec::new();
        for target in Target::ALL {
            let store: Arc<dyn StorageBackend> = Arc::new(MemoryBackend::new());
            let mut chef = session(Arc::clone(&store));
            push_result(&mut chef, "c1", "weather_now", &log);
            let preview = last_result_text(&chef);
            assert!(preview.starts_with("[Tool result offloaded: "), "{preview}");
            assert!(preview.len() < 2_500, "{}", preview.len());
            let uri = uri_in(&preview);
            // Before the write, the full text waits in the session.
            assert_eq!(chef.offloads().pending().len(), 1);
            let payload = chef.compile_async(target).await.unwrap();
            assert!(chef.offloads().pending().is_empty());
            let body = String::from_utf8(payload.body).unwrap();
            assert!(body.contains("Tool result offloaded"), "{target:?}");
            assert!(
                !body.contains("/api/v1/items/2000 "),
                "{target:?}: the middle left"
            );
            assert!(body.len() < 10_000, "{target:?}: {}", body.len());
            bodies.push(body);
            // Stored whole, under its content address.
            let stored = store
                .get(&ns(), &key(uri.trim_start_matches("context://vfs/")))
                .await
                .unwrap()
                .unwrap();
            assert_eq!(stored.value.content(), log);
            // Read back: a range, then a search inside the entry.
            let r = context(
                &mut chef,
                "v1",
                json!({"command": "view", "path": uri, "offset": 1300, "limit": 3}),
            )
            .await;
            assert!(!r.is_error, "{}", r.text);
            assert!(
                r.text
                    .contains("  1301\t2026-12-02T10:21:40Z ERROR upstream timed out")
            );
            assert!(r.text.contains("lines 1300–1302 of "), "{}", r.text);
            let r = context(
                &mut chef,
                "s1",
                json!({"command": "search", "path": uri, "query": "error"}),
            )
            .await;
            assert!(
                r.text.starts_with("1 matching line for \"error\""),
                "{}",
                r.text
            );
            assert!(r.text.contains("  1301\t"), "{}", r.text);
            // A whole-entry view is capped and says where to read on.
            let r = context(&mut chef, "v2", json!({"command": "view", "path": uri})).await;
            assert!(r.text.len() < 30_000);
            assert!(r.text.contains("; view with offset "), "{}", r.text);
            assert!(r.text.ends_with(" to read on]"), "{}", r.text);
            // The read-back reply is never offloaded again.
            chef.push(Message::assistant_with(vec![Content::ToolCall(
                ToolCall::new("v2", "context", json!({"command": "view", "path": uri})),
            )]));
            chef.push(Message::tool_results(vec![ToolResult::text(
                "v2",
                r.text.clone(),
            )]));
            assert_eq!(last_result_text(&chef), r.text);
        }
        // Byte-identical on every run.
        for (target, first) in Target::ALL.into_iter().zip(&bodies) {
            let mut chef = session(Arc::new(MemoryBackend::new()));
            push_result(&mut chef, "c1", "weather_now", &log);
            let again = String::from_utf8(chef.compile_async(target).await.unwrap().body).unwrap();
            assert_eq!(&again, first, "{target:?}");
        }
    });
}

#[test]
fn the_same_output_twice_is_stored_once() {
    block_on(async {
        let store = Arc::new(MemoryBackend::new());
        let mut chef = session(store.clone());
        let events = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&events);
        let _sub = chef.subscribe(move |e| {
            if let ChefEvent::Offloaded { deduplicated, .. } = e {
                seen.lock().push(*deduplicated);
            }
        });
        let log = big_log();
        push_result(&mut chef, "c1", "weather_now", &log);
        push_result(&mut chef, "c2", "weather_now", &log);
        let report = chef.offloads_mut().flush().await.unwrap();
        assert_eq!(report.stored.len(), 2);
        assert_eq!(report.stored[0], report.stored[1]);
        assert_eq!(report.deduplicated, 1);
        assert_eq!(store.list(&ns(), "").await.unwrap().len(), 1);
        assert_eq!(*events.lock(), vec![false, true]);
        // The explicit offload of the same text finds it too.
        let offloaded = chef.offloads_mut().store(&log).await.unwrap();
        assert!(offloaded.deduplicated);
        assert_eq!(offloaded.uri, report.stored[0]);
        assert_eq!(offloaded.bytes, log.len());
        assert!(offloaded.preview.starts_with("[Tool result offloaded: "));
    });
}

#[test]
fn pushing_the_result_of_a_blocked_call_emits_no_blocked_event() {
    // Chef looks at the call a pushed result answers (for per-tool rules) without refusing
    // anything: only route, check_tool_call and handle_tool report a blocked call.
    let mut chef = session(Arc::new(MemoryBackend::new()));
    chef.tools_mut().set_blocked(["weather_now"]);
    let blocked = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&blocked);
    let _sub = chef.subscribe(move |e| {
        if let ChefEvent::ToolBlocked { name } = e {
            seen.lock().push(name.clone());
        }
    });
    push_result(&mut chef, "c1", "weather_now", &big_log());
    assert!(blocked.lock().is_empty(), "{:?}", blocked.lock());
    let routed = chef.check_tool_call(&ToolCall::new("c2", "weather_now", json!({})));
    assert!(matches!(routed, Routed::Blocked { .. }), "{routed:?}");
    assert_eq!(*blocked.lock(), ["weather_now"]);
}

#[test]
fn per_tool_rules_keep_and_token_limits_decide() {
    let log = big_log();
    let mut chef = session(Arc::new(MemoryBackend::new()));
    chef.offloads_mut().set_policy(Some(
        OffloadPolicy::chars(8_000)
            .with_tool("uber_request", ToolRule::Never)
            .with_tool("weather_now", ToolRule::Over(Limit::Chars(500_000))),
    ));
    push_result(&mut chef, "c1", "uber_request", &log);
    assert_eq!(last_result_text(&chef), log);
    push_result(&mut chef, "c2", "weather_now", &log);
    assert_eq!(last_result_text(&chef), log);
    // A tool with no rule follows the threshold (a result not matched to a call too).
    chef.push(Message::tool_results(vec![ToolResult::text(
        "c9",
        log.clone(),
    )]));
    assert!(last_result_text(&chef).starts_with("[Tool result offloaded"));

    // Keep nothing: only the marker.
    chef.offloads_mut()
        .set_policy(Some(OffloadPolicy::chars(100).with_keep(Keep::Nothing)));
    push_result(&mut chef, "c3", "weather_now", &log);
    let text = last_result_text(&chef);
    assert!(text.contains("Nothing of it is shown here"));
    assert!(!text.contains('\n'));

    // Tokens: counted with the session's tokenizer (here: one token per 4 bytes).
    let mut chef = session(Arc::new(MemoryBackend::new()))
        .with_tokenizer(Arc::new(|m: &Message| (m.text().len() / 4) as u64));
    chef.offloads_mut()
        .set_policy(Some(OffloadPolicy::tokens(1_000)));
    push_result(&mut chef, "c1", "weather_now", &"x".repeat(3_900));
    assert!(!last_result_text(&chef).starts_with("[Tool result"));
    push_result(&mut chef, "c2", "weather_now", &"y".repeat(4_100));
    assert!(last_result_text(&chef).starts_with("[Tool result offloaded"));

    // Attachments stay in place; the text parts become one preview.
    let result = with_attachment("c4", &log, "tail text");
    chef.push(Message::tool_results(vec![result]));
    let stored = chef.offloads().pending().last().unwrap().clone();
    assert_eq!(stored.content, format!("{log}\ntail text"));
    assert!(stored.original.is_some());
    let last = last_result(&chef);
    assert_eq!(last.content.len(), 2);
    assert!(matches!(last.content[1], Content::Attachment(_)));
}

/// Session 40's context audit: a result over the threshold that the head and tail would
/// show whole was kept whole with a marker added (3,000 characters became 3,132). It is
/// kept as it is, and nothing is stored.
#[test]
fn a_result_head_and_tail_would_show_whole_is_kept_as_it_is() {
    let mut chef = session(Arc::new(MemoryBackend::new()));
    chef.offloads_mut()
        .set_policy(Some(OffloadPolicy::chars(1_000).with_keep(
            Keep::HeadTail {
                head: 1_500,
                tail: 500,
            },
        )));
    let text = "line of the log\n".repeat(100);
    assert!(text.chars().count() > 1_000);
    push_result(&mut chef, "c1", "weather_now", &text);
    assert_eq!(last_result_text(&chef), text);
    assert!(chef.offloads().pending().is_empty());
    // One line longer than the head is still offloaded: its start is shown.
    let long = "x".repeat(3_000);
    push_result(&mut chef, "c2", "weather_now", &long);
    assert!(last_result_text(&chef).starts_with("[Tool result offloaded"));
}

#[test]
fn offloading_at_push_keeps_the_history_prefix_reusable() {
    block_on(async {
        for target in Target::ALL {
            let mut reused = Vec::new();
            for policy in [false, true] {
                let mut chef = session(Arc::new(MemoryBackend::new()));
                if !policy {
                    chef.offloads_mut().set_policy(None);
                }
                let mut count = 0;
                for turn in 0..12 {
                    let log = format!("turn {turn}\n{}", big_log());
                    push_result(&mut chef, &format!("c{turn}"), "weather_now", &log);
                    let payload = chef.compile_async(target).await.unwrap();
                    count += usize::from(payload.meta.reused_prefix);
                    chef.push(Message::assistant(format!("Answered {turn}.")));
                }
                reused.push(count);
            }
            // Offloading replaces a result as it is appended: every turn that reused the
            // history prefix without a policy reuses it with one.
            assert!(reused[0] > 0, "{target:?}");
            assert_eq!(reused[0], reused[1], "{target:?}");
        }
    });
}

#[test]
fn a_flush_cut_short_leaves_the_unwritten_results_pending() {
    block_on(async {
        let stall = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let mut chef = session(Faulty::over(
            Arc::new(MemoryBackend::new()),
            Fault::StallVfs(Arc::clone(&stall)),
        ));
        push_result(&mut chef, "c1", "weather_now", &big_log());
        push_result(&mut chef, "c2", "weather_now", &format!("{}x", big_log()));
        assert_eq!(chef.offloads().pending().len(), 2);
        let cut = tokio::time::timeout(
            std::time::Duration::from_millis(50),
            chef.offloads_mut().flush(),
        )
        .await;
        assert!(cut.is_err(), "the stalled write cannot finish");
        assert_eq!(chef.offloads().pending().len(), 2, "nothing lost");
        stall.store(false, std::sync::atomic::Ordering::SeqCst);
        let report = chef.offloads_mut().flush().await.unwrap();
        assert_eq!(report.stored.len(), 2);
        assert!(chef.offloads().pending().is_empty());
    });
}

#[test]
fn a_failed_write_keeps_the_full_result_and_says_so() {
    block_on(async {
        for target in Target::ALL {
            let mut chef = session(Faulty::over(
                Arc::new(MemoryBackend::new()),
                Fault::RefuseVfs,
            ));
            let failed = Arc::new(Mutex::new(Vec::new()));
            let seen = Arc::clone(&failed);
            let _sub = chef.subscribe(move |e| {
                if let ChefEvent::OffloadFailed { error, .. } = e {
                    seen.lock().push(error.clone());
                }
            });
            let log = big_log();
            // Text split over two parts with an attachment between: restored exactly.
            let result = with_attachment("c1", &log, "second part");
            let original = result.content.clone();
            push_call(&mut chef, "c1", "weather_now", result);
            assert!(last_result_text(&chef).starts_with("[Tool result offloaded"));
            let payload = chef.compile_async(target).await.unwrap();
            assert_eq!(last_result(&chef).content, original, "{target:?}");
            assert!(
                payload
                    .notices
                    .iter()
                    .any(|n| n.contains("offloading the result of call c1 (weather_now) failed")),
                "{target:?}: {:?}",
                payload.notices
            );
            let body = String::from_utf8(payload.body).unwrap();
            assert!(body.contains("/api/v1/items/2000 "), "{target:?}");
            assert_eq!(failed.lock().len(), 1);
            assert!(failed.lock()[0].contains("store i/o failed"));
            // The explicit offload reports the failure to its caller.
            assert!(chef.offloads_mut().store("x").await.is_err());
        }
    });
}

#[test]
fn sync_compiles_say_what_is_pending_and_what_the_model_cannot_reach() {
    let mut chef = session(Arc::new(MemoryBackend::new()));
    push_result(&mut chef, "c1", "weather_now", &big_log());
    let payload = chef.compile(Target::Anthropic).unwrap();
    assert_notice(&payload, "1 offloaded result(s) not yet written");
    let mut legacy = Chef::new(ChefConfig::default());
    legacy
        .offloads_mut()
        .set_policy(Some(OffloadPolicy::chars(10)));
    legacy.push(Message::user("hi"));
    let payload = legacy.compile(Target::Anthropic).unwrap();
    assert_notice(&payload, "the context tool is not offered");
}

#[test]
fn snapshots_and_the_journal_carry_the_policy_and_unwritten_results() {
    block_on(async {
        for target in Target::ALL {
            let store: Arc<dyn StorageBackend> = Arc::new(MemoryBackend::new());
            let mut chef = session(Arc::clone(&store));
            chef.offloads_mut()
                .set_policy(Some(OffloadPolicy::chars(5_000).with_keep(
                    Keep::HeadTail {
                        head: 300,
                        tail: 100,
                    },
                )));
            push_result(&mut chef, "c1", "weather_now", &big_log());
            // Not flushed: the snapshot holds the full text.
            let snapshot = chef.snapshot(Some("mid"));
            assert_eq!(snapshot.payload.offload_pending.len(), 1);
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("s.json");
            chef.save(&path, None).unwrap();

            let mut resumed = Chef::new(ChefConfig::default().with_tools_mode(ToolsMode::Unified))
                .with_store(Arc::clone(&store));
            resumed.load(&path).unwrap();
            assert_eq!(resumed.offloads().policy(), chef.offloads().policy());
            assert_eq!(resumed.offloads().pending(), chef.offloads().pending());
            let a = chef.compile_async(target).await.unwrap().body;
            let b = resumed.compile_async(target).await.unwrap().body;
            assert_eq!(a, b, "{target:?}");
            // The policy still applies after the resume.
            push_result(&mut resumed, "c2", "weather_now", &"z\n".repeat(4_000));
            assert!(last_result_text(&resumed).starts_with("[Tool result offloaded"));

            // Journal: a delta carries the policy and the unwritten result.
            let (backend, id, mut journal) = memory_journal("s1");
            let mut live = session(Arc::clone(&store));
            live.push(Message::user("hello"));
            journal.save(&live).await.unwrap();
            live.offloads_mut()
                .set_policy(Some(OffloadPolicy::chars(1_000).with_keep(Keep::Nothing)));
            push_result(&mut live, "c1", "weather_now", &big_log());
            journal.save(&live).await.unwrap();
            let into = Chef::new(ChefConfig::default().with_tools_mode(ToolsMode::Unified))
                .with_store(Arc::clone(&store));
            let mut replayed = replayed(&backend, &id, into).await;
            assert_eq!(replayed.offloads().policy(), live.offloads().policy());
            assert_eq!(replayed.offloads().pending(), live.offloads().pending());
            assert_eq!(
                live.compile(target).unwrap().body,
                replayed.compile(target).unwrap().body,
                "{target:?}"
            );
        }
    });
}

/// Cleanup and reconcile on one backend.
async fn lifecycle_on(store: Arc<dyn StorageBackend>) {
    let mut chef = session(Arc::clone(&store));
    let evicted = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&evicted);
    let _sub = chef.subscribe(move |e| {
        if let ChefEvent::OffloadEvicted { reason, .. } = e {
            seen.lock().push(*reason);
        }
    });
    // Three results, oldest first (the clock moves between them).
    let texts: Vec<String> = (0..3)
        .map(|i| format!("result {i}\n").repeat(2_000))
        .collect();
    let mut uris = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        let offloaded = chef.offloads_mut().store(text).await.unwrap();
        uris.push(offloaded.uri);
        if i < 2 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }
    // One more, referenced by the history.
    push_result(
        &mut chef,
        "c1",
        "weather_now",
        &"referenced\n".repeat(2_000),
    );
    let referenced = uri_in(&last_result_text(&chef));
    chef.offloads_mut().flush().await.unwrap();
    assert_eq!(store.list(&ns(), "").await.unwrap().len(), 4);

    // Nothing to do without caps.
    let report = chef
        .offloads_mut()
        .cleanup(&OffloadCaps::new())
        .await
        .unwrap();
    assert!(report.evicted.is_empty());
    assert_eq!(report.kept, 4);

    // Keep two: the referenced entry is the newest; the next newest stays.
    let report = chef
        .offloads_mut()
        .cleanup(&OffloadCaps::new().with_max_entries(2))
        .await
        .unwrap();
    let gone: Vec<&str> = report.evicted.iter().map(|e| e.uri.as_str()).collect();
    assert_eq!(gone, vec![uris[0].as_str(), uris[1].as_str()]);
    assert!(
        report
            .evicted
            .iter()
            .all(|e| e.reason == EvictReason::Count)
    );
    assert_eq!(report.kept, 2);
    assert_eq!(
        *evicted.lock(),
        vec![EvictReason::Count, EvictReason::Count]
    );

    // A byte cap below one entry: the referenced one is kept and said so.
    let report = chef
        .offloads_mut()
        .cleanup(&OffloadCaps::new().with_max_bytes(10))
        .await
        .unwrap();
    assert_eq!(report.evicted.len(), 1);
    assert_eq!(report.evicted[0].uri, uris[2]);
    assert_eq!(report.evicted[0].reason, EvictReason::Bytes);
    assert_eq!(report.kept_referenced, vec![referenced.clone()]);

    // Age, evicting referenced entries too.
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let report = chef
        .offloads_mut()
        .cleanup(
            &OffloadCaps::new()
                .with_max_age(std::time::Duration::from_millis(10))
                .evicting_referenced(),
        )
        .await
        .unwrap();
    assert_eq!(report.evicted.len(), 1);
    assert_eq!(report.evicted[0].reason, EvictReason::Age);
    assert!(store.list(&ns(), "").await.unwrap().is_empty());
    // The model reading an evicted entry is told plainly.
    let r = context(
        &mut chef,
        "v1",
        json!({"command": "view", "path": referenced}),
    )
    .await;
    assert!(
        r.is_error && r.text.contains("nothing is stored at"),
        "{}",
        r.text
    );

    // Reconcile adopts what an earlier process left without bookkeeping.
    let left = "left behind\n".repeat(100);
    let left_key = chef::offload::content_key(&left, false);
    store
        .put(
            &ns(),
            &key(&left_key),
            Entry::new(left.clone()),
            Expect::Absent,
        )
        .await
        .unwrap();
    store
        .put(
            &ns(),
            &key("0123456789abcdef"),
            Entry::new("not its hash"),
            Expect::Absent,
        )
        .await
        .unwrap();
    let report = chef.offloads_mut().reconcile().await.unwrap();
    assert_eq!(report.entries, 2);
    assert_eq!(report.adopted.len(), 2);
    assert_eq!(
        report.mismatched,
        vec!["context://vfs/0123456789abcdef".to_owned()]
    );
    let again = chef.offloads_mut().reconcile().await.unwrap();
    assert!(again.adopted.is_empty());
    let adopted = store.get(&ns(), &key(&left_key)).await.unwrap().unwrap();
    assert_eq!(adopted.value.meta()["bytes"], json!(left.len()));
}

#[test]
fn cleanup_and_reconcile_on_the_memory_backend() {
    block_on(lifecycle_on(Arc::new(MemoryBackend::new())));
}

#[test]
fn cleanup_and_reconcile_on_the_file_system_backend() {
    let dir = tempfile::tempdir().unwrap();
    block_on(lifecycle_on(Arc::new(FsBackend::open(dir.path()).unwrap())));
    // An offload made by one process is read by the next.
    block_on(async {
        let store: Arc<dyn StorageBackend> = Arc::new(FsBackend::open(dir.path()).unwrap());
        let mut first = session(Arc::clone(&store));
        push_result(&mut first, "c1", "weather_now", &big_log());
        first.offloads_mut().flush().await.unwrap();
        let uri = uri_in(&last_result_text(&first));
        let mut next = session(Arc::new(FsBackend::open(dir.path()).unwrap()));
        let r = context(
            &mut next,
            "v1",
            json!({"command": "view", "path": uri, "offset": 1, "limit": 1}),
        )
        .await;
        assert!(
            r.text
                .starts_with("     1\t2026-12-02T10:00:00Z GET /api/v1/items/0 200 0ms")
        );
    });
}

#[cfg(feature = "postgres")]
#[test]
fn cleanup_and_reconcile_on_postgresql() {
    block_on(async {
        let Some((store, _guard)) = crate::pg::backend().await else {
            return;
        };
        lifecycle_on(store).await;
    });
}

/// Issue 47, item 11: a `Never` rule holds when the tool is blocked between its call and
/// its result. The result's tool is found the way `route` names it, blocked or not: at
/// levels 2 and 3 the wire name (`uber`, `t`) is no tool, so a gated look-up lost the rule
/// and the 200 kB result the rule says must never be stored was queued for the store.
#[test]
fn a_never_rule_holds_when_the_tool_is_blocked_between_its_call_and_its_result() {
    use chef_compress::Level;
    let log = big_log();
    for level in [Level::Zero, Level::One, Level::Two, Level::Three] {
        let store: Arc<dyn StorageBackend> = Arc::new(MemoryBackend::new());
        let mut chef = Chef::new(
            ChefConfig::default()
                .with_tools_mode(ToolsMode::Unified)
                .with_level(level),
        )
        .with_store(Arc::clone(&store));
        chef.register_tools(two_tools()).unwrap();
        chef.offloads_mut().set_policy(Some(
            OffloadPolicy::chars(8_000).with_tool("uber_request", ToolRule::Never),
        ));
        chef.push(Message::user("A car to the station."));
        chef.compile(Target::OpenAiChat).unwrap();
        let call = chef.tools().encode_call("uber_request", json!({})).unwrap();
        assert!(
            matches!(chef.route(&call), Routed::Call(_)),
            "{level:?}: {call:?}"
        );
        chef.push(Message::assistant_with(vec![Content::ToolCall(
            call.clone(),
        )]));
        // Blocked after the call was dispatched, before its result comes back.
        chef.tools_mut().set_blocked(["uber_request"]);
        chef.push(Message::tool_results(vec![ToolResult::text(
            call.id.clone(),
            log.clone(),
        )]));
        assert!(
            last_result_text(&chef) == log,
            "{level:?}: the result of a Never tool was offloaded"
        );
        assert!(chef.offloads().pending().is_empty(), "{level:?}");
        block_on(chef.offloads_mut().flush()).unwrap();
        let stored = block_on(store.list(&ns(), "")).unwrap();
        assert!(stored.is_empty(), "{level:?}: {stored:?}");
        // Another tool's result still follows the threshold.
        let other = chef.tools().encode_call("weather_now", json!({})).unwrap();
        let other = ToolCall::new("c2", other.name.as_str(), other.arguments.clone());
        chef.push(Message::assistant_with(vec![Content::ToolCall(other)]));
        chef.push(Message::tool_results(vec![ToolResult::text(
            "c2",
            log.clone(),
        )]));
        assert!(
            last_result_text(&chef).starts_with("[Tool result offloaded"),
            "{level:?}"
        );
    }
}
