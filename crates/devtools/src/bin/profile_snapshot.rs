//! Where snapshot save + load of issue 9's session spends its time, part by part.
//!
//! Run with `cargo run --release -p chef-devtools --bin profile_snapshot [ROUNDS [PART]]`.
//! With PART, only the parts whose label starts with it run (for a profiler, say
//! `valgrind --tool=callgrind target/release/profile_snapshot 20 "save + load"`).
#![allow(
    clippy::expect_used,
    reason = "an example with broken setup should stop loudly"
)]

#[path = "../../../chef/benches/support/session200.rs"]
mod support;

use std::time::Instant;

use chef::{ChefConfig, snapshot};

fn main() {
    let rounds: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let mut chef = support::session(ChefConfig::default());
    let state = chef.snapshot(None);
    let bytes = snapshot::to_vec(&state).expect("serializable");
    let tools = serde_json::to_vec(&state.payload.tools).expect("tools");
    let history = serde_json::to_vec(&state.payload.history).expect("history");
    println!(
        "snapshot {} bytes: tools {} bytes, history {} bytes",
        bytes.len(),
        tools.len(),
        history.len()
    );
    let only = std::env::args().nth(2).unwrap_or_default();
    let time = |label: &str, f: &mut dyn FnMut()| {
        if !label.starts_with(&only) {
            return;
        }
        let start = Instant::now();
        for _ in 0..rounds {
            f();
        }
        println!(
            "{label:<28} {:>8.1} µs",
            start.elapsed().as_secs_f64() * 1e6 / f64::from(rounds)
        );
    };
    time("snapshot()", &mut || {
        std::hint::black_box(chef.snapshot(None));
    });
    time("to_vec(snapshot)", &mut || {
        std::hint::black_box(snapshot::to_vec(&state).expect("ok"));
    });
    time("from_slice(snapshot)", &mut || {
        std::hint::black_box(snapshot::from_slice::<chef::SessionState>(&bytes).expect("ok"));
    });
    let read = snapshot::from_slice::<chef::SessionState>(&bytes).expect("ok");
    time("restore (same tools)", &mut || {
        chef.restore(&read).expect("restores");
    });
    time("restore (no tools)", &mut || {
        let mut fresh = chef::Chef::new(ChefConfig::default());
        fresh.restore(&read).expect("restores");
        std::hint::black_box(fresh);
    });
    time("load into fresh (cold)", &mut || {
        let read = snapshot::from_slice::<chef::SessionState>(&bytes).expect("ok");
        let mut fresh = chef::Chef::new(ChefConfig::default());
        fresh.restore(&read).expect("restores");
        std::hint::black_box(fresh);
    });
    if "teardown".starts_with(&only) || only.is_empty() {
        let sessions: Vec<chef::Chef> = (0..rounds)
            .map(|_| {
                let read = snapshot::from_slice::<chef::SessionState>(&bytes).expect("ok");
                let mut fresh = chef::Chef::new(ChefConfig::default());
                fresh.restore(&read).expect("restores");
                fresh
            })
            .collect();
        let start = Instant::now();
        drop(sessions);
        println!(
            "{:<28} {:>8.1} µs",
            "teardown of a cold load",
            start.elapsed().as_secs_f64() * 1e6 / f64::from(rounds)
        );
    }
    // Another session of the process holds the catalogue (a gateway resuming sessions).
    let mut holder = chef::Chef::new(ChefConfig::default());
    holder.restore(&read).expect("restores");
    time("load into fresh (catalogue held)", &mut || {
        let read = snapshot::from_slice::<chef::SessionState>(&bytes).expect("ok");
        let mut fresh = chef::Chef::new(ChefConfig::default());
        fresh.restore(&read).expect("restores");
        std::hint::black_box(fresh);
    });
    drop(holder);
    time("save + load (same tools)", &mut || {
        let bytes = snapshot::to_vec(&chef.snapshot(None)).expect("ok");
        let read = snapshot::from_slice::<chef::SessionState>(&bytes).expect("ok");
        chef.restore(&read).expect("restores");
    });
    time("tools: to_vec", &mut || {
        std::hint::black_box(serde_json::to_vec(&state.payload.tools).expect("ok"));
    });
    time("tools: from_slice", &mut || {
        std::hint::black_box(
            serde_json::from_slice::<Vec<chef::ir::ToolDefinition>>(&tools).expect("ok"),
        );
    });
    time("history: to_vec", &mut || {
        std::hint::black_box(serde_json::to_vec(&state.payload.history).expect("ok"));
    });
    time("history: from_slice", &mut || {
        std::hint::black_box(
            serde_json::from_slice::<Vec<chef::ir::Message>>(&history).expect("ok"),
        );
    });
}
