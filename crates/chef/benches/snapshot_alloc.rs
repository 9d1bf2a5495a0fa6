//! A cold restore (issue 24, item 4) with the allocator the `chef` binary ships with.
//!
//! `snapshot_load_session_200_into_fresh_session` of the `compile` bench, in a binary whose
//! global allocator is mimalloc, as the `chef` binary's is (`chef serve` and `chef mcp
//! serve` are the hosts that restore sessions cold). A library user picks the allocator of
//! their own binary; the `compile` bench measures the same work with the C library's
//! malloc.
//!
//! Run with `cargo bench -p chef --bench snapshot_alloc -- --warm-up-time 1 --measurement-time 3`.

#![allow(
    clippy::expect_used,
    reason = "a bench with broken setup should stop loudly"
)]

#[path = "support/session200.rs"]
mod support;

use std::hint::black_box;

use chef::{ChefConfig, snapshot};
use criterion::{Criterion, criterion_group, criterion_main};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn snapshots(c: &mut Criterion) {
    let chef = support::session(ChefConfig::default());
    let bytes = snapshot::to_vec(&chef.snapshot(None)).expect("serializable");
    c.bench_function(
        "snapshot_load_session_200_into_fresh_session_mimalloc",
        |b| b.iter(|| support::load_into_fresh(black_box(&bytes))),
    );
    c.bench_function("snapshot_save_load_session_200_no_fsync_mimalloc", |b| {
        let mut chef = support::session(ChefConfig::default());
        b.iter(|| support::save_and_load(&mut chef))
    });
}

criterion_group!(benches, snapshots);
criterion_main!(benches);
