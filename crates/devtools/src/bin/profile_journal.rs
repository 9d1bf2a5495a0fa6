//! What saving a turn to a session journal costs at 200 and 2,000 messages, and what
//! replaying the journal costs (issue 24, part 2).
//!
//! Run with `cargo run --release -p chef-devtools --bin profile_journal [ROUNDS]`.
//!
//! The session is issue 9's (149 tools, 3 announcements, 10 memories) with its history
//! grown to the size asked. Each round builds it, saves it once (the full record), then
//! plays 128 turns: push one user message, an assistant tool call, its result and an
//! assistant answer, compile (not timed), save (timed). Figures per save:
//!
//! * `delta`: a journal that never compacts, on the in-memory store: the cost before
//!   any I/O (serialising what changed, the checksums, the store call);
//! * `default`: the default compaction policy (a full record after 64 deltas: two per round), so the
//!   figure includes a compaction's share;
//! * `fs+fsync`: the file-system store, every record synced, default policy.
//!
//! Then replay: `read` decodes the journal the 128 turns left (a full record and 63
//! deltas) and `load` restores it into a fresh session with no tools registered.
#![allow(
    clippy::expect_used,
    reason = "a profiler with broken setup should stop loudly"
)]

#[path = "../../../chef/benches/support/session200.rs"]
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use chef::snapshot::journal::{self, CompactPolicy, Journal};
use chef::store::{FsBackend, MemoryBackend, StorageBackend, StoreKey};
use chef::{Chef, ChefConfig, ir::Message, ir::Target};

const TURNS: usize = 128;

fn session(messages: usize) -> Chef {
    let mut chef = support::session(ChefConfig::default());
    for i in 200..messages {
        chef.push(support::message(i));
    }
    chef.compile(Target::Anthropic).expect("compiles");
    chef
}

/// One round: the session, its full record, then `TURNS` timed saves.
fn round(
    rt: &tokio::runtime::Runtime,
    messages: usize,
    backend: Arc<dyn StorageBackend>,
    policy: CompactPolicy,
    saves: &mut Vec<Duration>,
    bytes: &mut Vec<usize>,
) -> (Arc<dyn StorageBackend>, StoreKey) {
    let id = StoreKey::new(format!("profile/{messages}")).expect("valid");
    let mut chef = session(messages);
    let mut journal = Journal::new(Arc::clone(&backend), id.clone()).with_policy(policy);
    rt.block_on(journal.save(&chef)).expect("saves");
    for turn in 0..TURNS {
        let i = messages + turn * 4;
        chef.push(Message::user(format!("Request {i}: and partner {i}?")));
        for k in 1..4 {
            chef.push(support::message(i + k));
        }
        chef.compile(Target::Anthropic).expect("compiles");
        let start = Instant::now();
        let saved = rt.block_on(journal.save(&chef)).expect("saves");
        saves.push(start.elapsed());
        bytes.push(saved.bytes);
    }
    (backend, id)
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn p90(v: &mut [Duration]) -> Duration {
    v.sort_unstable();
    v.get(v.len() * 9 / 10).copied().unwrap_or_default()
}

fn mean(v: &[Duration]) -> Duration {
    v.iter().sum::<Duration>() / u32::try_from(v.len().max(1)).unwrap_or(u32::MAX)
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let never = CompactPolicy::default()
        .with_max_records(u64::MAX)
        .with_max_bytes_percent(u64::MAX / 1_000);
    println!(
        "{rounds} rounds of {TURNS} saved turns; µs per save (p50 / p90 / mean), replay in ms"
    );
    for messages in [200, 2_000] {
        let (mut delta, mut default, mut synced) = (Vec::new(), Vec::new(), Vec::new());
        let mut bytes = Vec::new();
        let mut last = None;
        for _ in 0..rounds {
            round(
                &rt,
                messages,
                Arc::new(MemoryBackend::new()),
                never,
                &mut delta,
                &mut bytes,
            );
            last = Some(round(
                &rt,
                messages,
                Arc::new(MemoryBackend::new()),
                CompactPolicy::default(),
                &mut default,
                &mut Vec::new(),
            ));
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let mut on_disk = None;
        for r in 0..rounds.div_ceil(4) {
            let store = FsBackend::open(dir.path().join(r.to_string())).expect("opens");
            on_disk = Some(round(
                &rt,
                messages,
                Arc::new(store),
                CompactPolicy::default(),
                &mut synced,
                &mut Vec::new(),
            ));
        }
        let mean_bytes = bytes.iter().sum::<usize>() / bytes.len().max(1);
        for (label, v) in [
            ("delta", &mut delta),
            ("default", &mut default),
            ("fs+fsync", &mut synced),
        ] {
            println!(
                "{messages:>5} messages  save {label:<9} {:>8.1} / {:>8.1} / {:>8.1}",
                micros(median(v)),
                micros(p90(v)),
                micros(mean(v)),
            );
        }
        println!("{messages:>5} messages  delta record {mean_bytes} bytes on average");
        for (label, (backend, id)) in [
            ("memory", last.expect("at least one round")),
            ("fs", on_disk.expect("at least one round")),
        ] {
            let replays = rounds.max(5);
            let start = Instant::now();
            for _ in 0..replays {
                std::hint::black_box(
                    rt.block_on(journal::read(backend.as_ref(), &id))
                        .expect("reads"),
                );
            }
            let read = start.elapsed() / u32::try_from(replays).unwrap_or(1);
            let start = Instant::now();
            for _ in 0..replays {
                let mut fresh = Chef::new(ChefConfig::default());
                rt.block_on(Journal::new(Arc::clone(&backend), id.clone()).load(&mut fresh))
                    .expect("loads");
            }
            let load = start.elapsed() / u32::try_from(replays).unwrap_or(1);
            let records = rt
                .block_on(journal::read(backend.as_ref(), &id))
                .expect("reads")
                .expect("a journal")
                .loaded
                .records;
            println!(
                "{messages:>5} messages  replay of {records} records ({label}): read {:.2} ms, load into a fresh session {:.2} ms",
                read.as_secs_f64() * 1e3,
                load.as_secs_f64() * 1e3
            );
        }
    }
}
