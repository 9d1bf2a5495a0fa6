//! Concurrency and load: many sessions on one multi-threaded runtime share one store;
//! every turn compiles, writes memory through the owned tools, and persists with
//! compare-and-set, retrying on conflict. No update is lost, nothing deadlocks.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chef::memory::Memory;
use chef::store::{MemoryBackend, StorageBackend};
use chef::{Chef, ChefConfig, Routed};
use chef_ir::{Message, Target, ToolCall};
use serde_json::json;

/// Runs `sessions` sessions of `turns` turns; returns every compile latency.
fn run(sessions: usize, turns: usize) -> Vec<Duration> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async move {
        let store: Arc<dyn StorageBackend> = Arc::new(MemoryBackend::new());
        let mut tasks = tokio::task::JoinSet::new();
        for s in 0..sessions {
            let store = store.clone();
            tasks.spawn(async move {
                let mut chef = Chef::new(ChefConfig::default())
                    .with_memory(Memory::new())
                    .with_store(store.clone());
                let mut latencies = Vec::with_capacity(turns);
                for t in 0..turns {
                    chef.push(Message::user(format!("session {s} turn {t}")));
                    let start = Instant::now();
                    chef.compile(Target::Anthropic).unwrap();
                    latencies.push(start.elapsed());
                    // Each session owns one key and also bumps a shared key.
                    for (key, value) in [
                        (format!("s{s}"), format!("{t}")),
                        ("shared".to_owned(), format!("{s}-{t}")),
                    ] {
                        loop {
                            let exists = chef.memory().unwrap().get(&key).is_some();
                            let (tool, args) = if exists {
                                (
                                    "modify_memory",
                                    json!({"action": "update", "key": key, "value": value}),
                                )
                            } else {
                                ("create_memory", json!({"key": key, "value": value}))
                            };
                            let Routed::Owned(owned) = chef.route(&ToolCall::new("m", tool, args))
                            else {
                                panic!("not owned")
                            };
                            let reply = chef.handle_tool(&owned).await.unwrap();
                            assert!(!reply.is_error, "{}", reply.text);
                            match chef.memory_mut().unwrap().persist(&*store).await {
                                Ok(_) => break,
                                Err(e) if e.is_conflict() => {
                                    chef.memory_mut().unwrap().load(&*store).await.unwrap();
                                }
                                Err(e) => panic!("{e}"),
                            }
                        }
                    }
                    chef.push(Message::assistant("ok"));
                    tokio::task::yield_now().await;
                }
                latencies
            });
        }
        let all = tokio::time::timeout(Duration::from_secs(600), async {
            let mut all = Vec::new();
            while let Some(r) = tasks.join_next().await {
                all.extend(r.unwrap());
            }
            all
        })
        .await
        .expect("deadlock: sessions did not finish");
        // No lost update: every session's own key holds its last turn.
        let mut memory = Memory::new();
        memory.load(&*store).await.unwrap();
        for s in 0..sessions {
            let entry = memory.get(&format!("s{s}")).unwrap();
            assert_eq!(entry.value(), format!("{}", turns - 1));
        }
        let shared = memory.get("shared").unwrap();
        // Every write of the shared key landed once (compare-and-set, retried on conflict).
        assert_eq!(
            shared.update_count(),
            (sessions * turns) as u64,
            "lost update"
        );
        all
    })
}

#[test]
fn fifty_sessions_share_one_store_without_lost_updates() {
    let latencies = run(50, 20);
    assert_eq!(latencies.len(), 1000);
}

#[test]
#[ignore = "load run: cargo test --release -p chef --test it -- --ignored load_"]
fn load_a_thousand_sessions_of_a_hundred_turns() {
    let start = Instant::now();
    let mut latencies = run(1000, 100);
    let elapsed = start.elapsed();
    latencies.sort();
    let n = latencies.len();
    let p = |q: f64| latencies[((n as f64 * q) as usize).min(n - 1)];
    println!(
        "{n} compiles in {:.1} s: {:.0} compiles/s (wall, whole run); p50 {:?}, p99 {:?}, max {:?}",
        elapsed.as_secs_f64(),
        n as f64 / elapsed.as_secs_f64(),
        p(0.5),
        p(0.99),
        latencies[n - 1]
    );
}
