//! `compile_chunked` is `compile` with the body as shared chunks (issue 24, part 3): over a
//! multi-turn session that reuses the history prefix, with tool-result errors, images,
//! thinking, history rewrites and the async variants, on all four targets, a session
//! compiled chunked and its twin compiled contiguous give the same bytes, notices, names,
//! meta and events every turn; and a chunked body on a turn that reuses the prefix holds
//! the cached prefix and tools themselves, not copies.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use chef::{Chef, ChefConfig, ChefEvent, ChunkedPayload, Payload};
use chef_ir::{Content, Message, Target, ToolCall, ToolResult};
use serde_json::json;

// The bench's session (clippy wants the file loaded as a module once).
use super::compile_cache::support;

/// A session and the events it emitted.
fn session() -> (Chef, Arc<Mutex<Vec<ChefEvent>>>) {
    let mut chef = support::session_mixed(ChefConfig::default(), support::Mix::Realistic);
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    chef.subscribe(move |e| sink.lock().expect("not poisoned").push(e.clone()));
    (chef, events)
}

/// What a turn appends after its compile: a tool call, its result (an error one turn in
/// three) and the assistant's answer.
fn reply(turn: usize) -> [Message; 3] {
    let id = format!("chunk_call_{turn}");
    let result = if turn % 3 == 1 {
        ToolResult::error(id.clone(), format!("partner {turn} not found"))
    } else {
        ToolResult::text(id.clone(), format!("[{{\"partner\":{turn},\"ok\":true}}]"))
    };
    [
        Message::assistant_with(vec![
            Content::text(format!("Checking partner {turn}.")),
            Content::ToolCall(ToolCall::new(
                id,
                "accessorial_revenue_details",
                json!({"partner_name": format!("partner {turn}")}),
            )),
        ]),
        Message::tool_results(vec![result]),
        Message::assistant(format!("Partner {turn} checked.")),
    ]
}

/// The history compacted as an overflow would: the first half replaced by a summary.
fn compacted(history: &[Message]) -> Vec<Message> {
    let half = history.len() / 2;
    // Keep the cut at a user message so the kept part starts a turn.
    let from = (half..history.len())
        .find(|&i| {
            history
                .get(i)
                .is_some_and(|m| m.role == chef_ir::Role::User)
        })
        .unwrap_or(history.len());
    let mut out = vec![
        Message::user(format!(
            "Summary of the first {from} messages: partners reviewed."
        )),
        Message::assistant("Noted."),
    ];
    out.extend(history.get(from..).unwrap_or_default().iter().cloned());
    out
}

/// Chunks of `now` that are the very buffers (same address and length) of chunks of
/// `before`, at least 1 KiB long: the cached tools and history prefix.
fn shared_big_chunks(before: &ChunkedPayload, now: &ChunkedPayload) -> Vec<usize> {
    let old: HashSet<(usize, usize)> = before
        .body
        .iter()
        .map(|c| (c.as_ptr() as usize, c.len()))
        .collect();
    now.body
        .iter()
        .filter(|c| c.len() >= 1024 && old.contains(&(c.as_ptr() as usize, c.len())))
        .map(|c| c.len())
        .collect()
}

fn assert_same(target: Target, turn: usize, whole: &Payload, chunked: &ChunkedPayload) {
    assert!(
        chunked.body == whole.body,
        "{target:?} turn {turn}: the chunked body differs from compile's ({} vs {} bytes)",
        chunked.body.len(),
        whole.body.len()
    );
    assert_eq!(
        chunked.body.len(),
        whole.body.len(),
        "{target:?} turn {turn}"
    );
    assert_eq!(chunked.body.to_vec(), whole.body, "{target:?} turn {turn}");
    assert_eq!(chunked.target, whole.target, "{target:?} turn {turn}");
    assert_eq!(chunked.names, whole.names, "{target:?} turn {turn}");
    assert_eq!(chunked.notices, whole.notices, "{target:?} turn {turn}");
    assert_eq!(chunked.meta, whole.meta, "{target:?} turn {turn}");
    let joined: Payload = chunked.clone().into();
    assert_eq!(joined.body, whole.body, "{target:?} turn {turn}");
}

#[test]
fn chunked_bodies_equal_contiguous_ones_and_share_the_cached_prefix() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    for target in Target::ALL {
        let (mut contiguous, contiguous_events) = session();
        let (mut chunked, chunked_events) = session();
        let mut previous: Option<ChunkedPayload> = None;
        let (mut reused, mut shared_turns, mut both_reused) = (0, 0, 0);
        for turn in 0..60 {
            if turn == 20 || turn == 45 {
                // A history rewrite (compaction) in both.
                let history = compacted(contiguous.history());
                contiguous.set_history(history.clone());
                chunked.set_history(history);
            }
            if turn == 33 {
                contiguous.clear_history();
                chunked.clear_history();
                for i in 0..40 {
                    let m = support::message_mixed(i, support::Mix::Errors);
                    contiguous.push(m.clone());
                    chunked.push(m);
                }
            }
            let ask = Message::user(format!("And partner {turn}?"));
            contiguous.push(ask.clone());
            chunked.push(ask);
            let (whole, parts) = if turn % 5 == 4 {
                (
                    runtime
                        .block_on(contiguous.compile_async(target))
                        .expect("compiles"),
                    runtime
                        .block_on(chunked.compile_chunked_async(target))
                        .expect("compiles"),
                )
            } else {
                (
                    contiguous.compile(target).expect("compiles"),
                    chunked.compile_chunked(target).expect("compiles"),
                )
            };
            assert_same(target, turn, &whole, &parts);
            assert!(
                parts.body.chunks().iter().all(|c| !c.is_empty()),
                "{target:?} turn {turn}"
            );
            reused += usize::from(parts.meta.reused_prefix);
            if let Some(before) = previous.as_ref().filter(|b| b.meta.reused_prefix)
                && parts.meta.reused_prefix
            {
                // The tools' bytes are the same buffer every turn. While the same prefix
                // serves (it is grown to a later cut once its suffix is long), its bytes are
                // the same buffer too, and what this turn compiled afresh is a small part of
                // the body.
                both_reused += 1;
                let shared = shared_big_chunks(before, &parts);
                assert!(
                    !shared.is_empty(),
                    "{target:?} turn {turn}: the tools were not shared"
                );
                if shared.len() >= 2 {
                    let fresh = parts.body.len() - shared.iter().sum::<usize>();
                    assert!(
                        fresh * 3 < parts.body.len(),
                        "{target:?} turn {turn}: {fresh} fresh bytes of {}",
                        parts.body.len()
                    );
                    shared_turns += 1;
                }
            }
            previous = Some(parts);
            for m in reply(turn) {
                contiguous.push(m.clone());
                chunked.push(m);
            }
        }
        assert_eq!(contiguous.turn(), chunked.turn(), "{target:?}");
        assert!(
            reused >= 40,
            "{target:?}: {reused} of 60 turns reused the prefix"
        );
        assert!(both_reused >= 30, "{target:?}: {both_reused}");
        assert!(
            shared_turns * 3 >= both_reused * 2,
            "{target:?}: the prefix was shared on {shared_turns} of {both_reused} turns"
        );
        let a = contiguous_events.lock().expect("not poisoned");
        let b = chunked_events.lock().expect("not poisoned");
        assert!(!a.is_empty(), "{target:?}");
        assert_eq!(*a, *b, "{target:?}: the events differ");
    }
}

/// A compile that fails changes nothing, in either form, and fails the same way.
#[test]
fn a_failed_chunked_compile_fails_as_compile_does_and_changes_nothing() {
    let (mut contiguous, _) = session();
    let (mut chunked, _) = session();
    for chef in [&mut contiguous, &mut chunked] {
        chef.compile(Target::OpenAiChat).expect("compiles");
        chef.layers_mut().add_injector(
            "failing",
            |_: &chef::dynamic::InjectionView<'_>, _: &mut chef::dynamic::Injections| {
                Err(chef::dynamic::InjectError::from("down"))
            },
        );
    }
    let a = contiguous.compile(Target::OpenAiChat).unwrap_err();
    let b = chunked.compile_chunked(Target::OpenAiChat).unwrap_err();
    assert_eq!(a.to_string(), b.to_string());
    assert_eq!(contiguous.turn(), chunked.turn());
    for chef in [&mut contiguous, &mut chunked] {
        chef.layers_mut().remove_injector("failing");
    }
    let whole = contiguous.compile(Target::OpenAiChat).expect("compiles");
    let parts = chunked
        .compile_chunked(Target::OpenAiChat)
        .expect("compiles");
    assert_same(Target::OpenAiChat, 1, &whole, &parts);
}

/// A long conversation's prefix is grown to a later cut when its suffix gets long (only the
/// messages between the cuts are compiled): every turn, reused or grown, is the provider
/// crate's own full compile, bytes and notices, and no turn after the first compiles the
/// whole history.
#[test]
fn grown_prefixes_give_the_provider_crates_own_bytes() {
    for target in Target::ALL {
        let mut chef = support::session_sized(ChefConfig::default(), support::Mix::Realistic, 400);
        chef.compile(target).expect("compiles");
        let (mut reused, mut grown, turns) = (0, 0, 40);
        let mut previous: Option<ChunkedPayload> = None;
        for turn in 0..turns {
            chef.push(Message::user(format!("And partner {turn}?")));
            let (body, notices) =
                super::compile_cache::provider_bytes_and_notices(&mut chef, target);
            let payload = chef.compile_chunked(target).expect("compiles");
            assert!(payload.body == body, "{target:?} turn {turn}");
            assert_eq!(payload.notices, notices, "{target:?} turn {turn}");
            reused += usize::from(payload.meta.reused_prefix);
            if let Some(before) = &previous {
                // A reused turn whose only shared big chunk is the tools: a new prefix.
                grown += usize::from(shared_big_chunks(before, &payload).len() == 1);
            }
            previous = Some(payload);
            for m in reply(turn) {
                chef.push(m);
            }
        }
        assert_eq!(
            reused, turns,
            "{target:?}: every turn reuses or grows the prefix"
        );
        assert!(grown >= 2, "{target:?}: the prefix grew {grown} times");
    }
}
