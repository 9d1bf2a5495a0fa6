//! Runtime compile benches (issue 9, "Performance"): one turn of a 200-message session
//! with the 149-tool corpus, 3 announcements and 10 memories, per target, with a plain
//! history, one with 1 tool result in 10 an error, and a realistic one (errors, images in
//! tool results, thinking blocks, pinned messages; issue 24); the plain turn at 200 and
//! 2,000 messages with the body contiguous (`compile`) and chunked (`compile_chunked`,
//! issue 24 part 3); and snapshot save + load (snapshot, encode, decode, restore) of that
//! session without fsync.
//!
//! Run with `cargo bench -p chef --bench compile -- --warm-up-time 1 --measurement-time 3`.
//!
//! A turn is: push a user message, compile to bytes. The assistant's reply is pushed
//! outside the timed section, and every 50 turns the history is reset to its 200 (or
//! 2,000) messages (untimed, followed by one untimed compile) so the session stays at its
//! size.
#![allow(
    clippy::expect_used,
    reason = "a bench with broken setup should stop loudly"
)]

#[path = "support/session200.rs"]
mod support;

use std::hint::black_box;
use std::time::{Duration, Instant};

use chef::{ChefConfig, ir::Message, ir::Target, snapshot};
use criterion::{Criterion, criterion_group, criterion_main};

fn turns(c: &mut Criterion) {
    for (group, mix) in [
        ("compile_turn_200_messages_149_tools", support::Mix::Plain),
        (
            "compile_turn_200_messages_149_tools_errors",
            support::Mix::Errors,
        ),
        (
            "compile_turn_200_messages_149_tools_realistic",
            support::Mix::Realistic,
        ),
    ] {
        turns_of(c, group, mix, 200, Form::Contiguous);
    }
    // Issue 24 part 3: the long session, and the body as chunks.
    for (group, messages, form) in [
        (
            "compile_turn_200_messages_149_tools_chunked",
            200,
            Form::Chunked,
        ),
        (
            "compile_turn_2000_messages_149_tools",
            2000,
            Form::Contiguous,
        ),
        (
            "compile_turn_2000_messages_149_tools_chunked",
            2000,
            Form::Chunked,
        ),
    ] {
        turns_of(c, group, support::Mix::Plain, messages, form);
    }
}

/// The body's form: `compile` or `compile_chunked`.
#[derive(Clone, Copy)]
enum Form {
    Contiguous,
    Chunked,
}

/// One group of turns on `messages` messages in `mix` (the turns themselves push a user
/// message and an assistant reply, as in the plain group).
fn turns_of(c: &mut Criterion, group: &str, mix: support::Mix, messages: usize, form: Form) {
    let mut group = c.benchmark_group(group);
    for target in Target::ALL {
        let mut chef = support::session_sized(ChefConfig::default(), mix, messages);
        let base = chef.history().to_vec();
        chef.compile(target).expect("compiles");
        group.bench_function(format!("{target:?}"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for i in 0..iters {
                    if i % 50 == 0 {
                        chef.set_history(base.clone());
                        chef.compile(target).expect("compiles");
                    }
                    let start = Instant::now();
                    chef.push(Message::user(format!("And partner {i}?")));
                    match form {
                        Form::Contiguous => {
                            let payload = chef.compile(target).expect("compiles");
                            black_box(&payload.body);
                        }
                        Form::Chunked => {
                            let payload = chef.compile_chunked(target).expect("compiles");
                            black_box(&payload.body);
                        }
                    }
                    total += start.elapsed();
                    chef.push(Message::assistant(format!("Partner {i} is in line.")));
                }
                total
            })
        });
    }
    group.finish();
}

/// Save + load as `Chef::save` then `Chef::load` do it, without the file: take the
/// snapshot, encode it, decode it, restore it. Restored into the same session (its tools
/// registered, the usual resume) and into a fresh session with no tools (the tools are
/// parsed).
fn snapshots(c: &mut Criterion) {
    let mut chef = support::session(ChefConfig::default());
    c.bench_function("snapshot_save_load_session_200_no_fsync", |b| {
        b.iter(|| support::save_and_load(&mut chef))
    });
    let bytes = snapshot::to_vec(&chef.snapshot(None)).expect("serializable");
    c.bench_function("snapshot_load_session_200_into_fresh_session", |b| {
        b.iter(|| support::load_into_fresh(black_box(&bytes)))
    });
}

criterion_group!(benches, turns, snapshots);
criterion_main!(benches);
