//! Persistence benches: snapshot encode/decode and save/load, memory block rendering.
//!
//! Run with `cargo bench -p chef --bench persistence -- --warm-up-time 1 --measurement-time 3`.
//! The payload stands in for issue 9's session (200 messages, 3 announcements, 10
//! memories); the full session snapshot lands with the compile pipeline.
#![allow(
    clippy::expect_used,
    reason = "a bench with broken setup should stop loudly"
)]

#[path = "support/session200.rs"]
mod support;

use std::hint::black_box;

use chef::ir::Message;
use chef::memory::{MemoryState, MemoryStyle};
use chef::snapshot::{self, Snapshot};
use criterion::{Criterion, criterion_group, criterion_main};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct SessionLike {
    history: Vec<Message>,
    announcements: Vec<(String, String)>,
    blocked_tools: Vec<String>,
    memory: MemoryState,
}

fn session() -> Snapshot<SessionLike> {
    let history = (0..200)
        .map(|i| {
            let text = format!("turn {i}: {}", "lorem ipsum dolor sit amet ".repeat(20));
            if i % 2 == 0 {
                Message::user(text)
            } else {
                Message::assistant(text)
            }
        })
        .collect();
    Snapshot::new(SessionLike {
        history,
        announcements: (0..3)
            .map(|i| (format!("a{i}"), format!("announcement {i}")))
            .collect(),
        blocked_tools: vec!["delete_file".into()],
        memory: support::memory().state(),
    })
    .with_created_turn(200)
}

fn benches(c: &mut Criterion) {
    let snap = session();
    let bytes = snapshot::to_vec(&snap).expect("serializable");
    c.bench_function("snapshot_encode_200_messages", |b| {
        b.iter(|| snapshot::to_vec(black_box(&snap)).expect("serializable"))
    });
    c.bench_function("snapshot_decode_200_messages", |b| {
        b.iter(|| snapshot::from_slice::<SessionLike>(black_box(&bytes)).expect("valid"))
    });
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("session.json");
    c.bench_function("snapshot_save_load_200_messages_with_fsync", |b| {
        b.iter(|| {
            snapshot::save(&path, black_box(&snap)).expect("saved");
            snapshot::load::<SessionLike>(&path).expect("loaded")
        })
    });
    let memory = support::memory();
    c.bench_function("memory_render_block_10_entries", |b| {
        b.iter(|| black_box(&memory).render_block(MemoryStyle::Unified))
    });
}

criterion_group!(persistence, benches);
criterion_main!(persistence);
