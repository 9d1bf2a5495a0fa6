//! Load and faults: worker processes drive sessions through a shared store while the test
//! SIGKILLs them at random and starts replacements.
//!
//! Each worker (this test binary re-executed with `CHEF_LOAD_CHILD` set, filtered to the
//! ignored `load_worker` entry point) repeatedly picks an unfinished session, claims its
//! lease, and drives up to three turns: load the session (a real [`Chef`] with memory) from
//! the store, append `turn N` to the history, write memory (`turn-N` and the counter
//! `count`), save with `Expect::Version` of what it loaded. One attempt in ten skips the
//! lease on purpose (a misbehaving worker), so compare-and-set is exercised too: those saves
//! race and some get `Conflict`, which the worker answers by reloading.
//!
//! At the end every session must hold exactly turns 1..=T in order, memory `turn-1..=T`,
//! and `count` = T written exactly T times (`update_count`): nothing lost, nothing
//! duplicated, whatever was killed when.
//!
//! The default test runs a small version against the file-system backend and, when a
//! server is available, PostgreSQL. The full run (8 workers x 200 sessions x 50 turns,
//! PostgreSQL) is `#[ignore]`d:
//!
//! ```text
//! cargo test -p chef --features postgres --release --test it -- --ignored --nocapture store_load::full_load
//! ```

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write as _};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chef::ir::Message;
use chef::memory::{Memory, SetOptions};
use chef::store::{Expect, FsBackend, StorageBackend, StoreError, StoreKey};
use chef::{Chef, ChefConfig, ChefError};

use crate::support::{Rng, child_test};

const CHILD_ENV: &str = "CHEF_LOAD_CHILD";
const LEASE_TTL: Duration = Duration::from_millis(800);

/// What one run does.
#[derive(Debug, Clone)]
struct Plan {
    /// `fs:<dir>` or `pg:<schema>:<url>`.
    backend: String,
    workers: usize,
    sessions: usize,
    turns: usize,
    kills: usize,
    timeout: Duration,
}

fn session_id(i: usize) -> StoreKey {
    StoreKey::new(format!("s{i:04}")).unwrap()
}

async fn open(backend: &str) -> Arc<dyn StorageBackend> {
    if let Some(dir) = backend.strip_prefix("fs:") {
        return Arc::new(FsBackend::open(dir).unwrap());
    }
    #[cfg(feature = "postgres")]
    if let Some(rest) = backend.strip_prefix("pg:") {
        let (schema, url) = rest.split_once(':').unwrap();
        return Arc::new(
            chef::store::PgBackend::connect_with(
                url,
                chef::store::PgOptions::new()
                    .with_schema(schema)
                    .with_max_connections(2),
            )
            .await
            .unwrap(),
        );
    }
    panic!("unknown backend {backend}");
}

fn new_chef() -> Chef {
    Chef::new(ChefConfig::default()).with_memory(Memory::new())
}

/// One turn on `session`: load, apply, save with compare-and-set. `Ok(None)` when the
/// session is complete.
async fn drive_turn(
    store: &dyn StorageBackend,
    id: &StoreKey,
    turns: usize,
) -> Result<Option<usize>, ChefError> {
    let mut chef = new_chef();
    let expect = match chef.load_from_store(store, id).await? {
        Some(v) => Expect::Version(v),
        None => Expect::Absent,
    };
    let done = chef.history().len();
    if done >= turns {
        return Ok(None);
    }
    let n = done + 1;
    chef.push(Message::user(format!("turn {n}")));
    let memory = chef.memory_mut().unwrap();
    memory.set(
        &format!("turn-{n}"),
        format!("wrote {n}"),
        SetOptions::new(),
    )?;
    memory.set("count", n.to_string(), SetOptions::new())?;
    chef.save_to_store(store, id, expect).await?;
    Ok(Some(n))
}

/// The child's entry point; a no-op unless the parent test started this process.
#[test]
#[ignore = "entry point of the worker processes that store_load tests spawn"]
fn load_worker() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    // sessions|turns|backend
    let mut parts = spec.splitn(3, '|');
    let sessions: usize = parts.next().unwrap().parse().unwrap();
    let turns: usize = parts.next().unwrap().parse().unwrap();
    let backend = parts.next().unwrap().to_owned();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let pid = std::process::id();
    let holder = format!("worker-{pid}");
    let mut rng = Rng(u64::from(pid).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut out = std::io::stdout().lock();
    runtime.block_on(async {
        let store = open(&backend).await;
        let mut open_sessions: Vec<usize> = (0..sessions).collect();
        while !open_sessions.is_empty() {
            let pick = rng.below(open_sessions.len());
            let index = open_sessions[pick];
            let id = session_id(index);
            let rogue = rng.below(10) == 0;
            let lease = if rogue {
                None
            } else {
                match store.claim_lease(&id, &holder, LEASE_TTL).await {
                    Ok(lease) => Some(lease),
                    Err(StoreError::Leased { .. }) => {
                        writeln!(out, "L").unwrap();
                        if open_sessions.len() < 4 {
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                        continue;
                    }
                    Err(e) => panic!("{e}"),
                }
            };
            for _ in 0..3 {
                let started = Instant::now();
                match drive_turn(&*store, &id, turns).await {
                    Ok(Some(_)) => {
                        writeln!(out, "T {}", started.elapsed().as_micros()).unwrap();
                    }
                    Ok(None) => {
                        open_sessions.swap_remove(pick);
                        break;
                    }
                    Err(ChefError::Snapshot(e)) if e.is_conflict() => {
                        writeln!(out, "C").unwrap();
                        break;
                    }
                    Err(e) => panic!("{e}"),
                }
            }
            if let Some(lease) = lease {
                store.release_lease(&lease).await.unwrap();
            }
        }
    });
}

/// Figures from one run.
#[derive(Debug, Default)]
struct Stats {
    turns: u64,
    conflicts: u64,
    leased: u64,
    latencies_us: Vec<u64>,
}

fn spawn_worker(plan: &Plan, stats: &Arc<Mutex<Stats>>) -> Child {
    let spec = format!("{}|{}|{}", plan.sessions, plan.turns, plan.backend);
    let mut child = child_test("store_load::load_worker", CHILD_ENV, spec)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let stats = Arc::clone(stats);
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let mut s = stats.lock().unwrap();
            match line.split_once(' ') {
                Some(("T", us)) => {
                    if let Ok(us) = us.parse() {
                        s.turns += 1;
                        s.latencies_us.push(us);
                    }
                }
                _ if line == "C" => s.conflicts += 1,
                _ if line == "L" => s.leased += 1,
                _ => {}
            }
        }
    });
    child
}

/// Run the plan; returns the figures after checking every session.
fn run(plan: &Plan) -> Stats {
    let stats = Arc::new(Mutex::new(Stats::default()));
    let started = Instant::now();
    let mut workers: Vec<Child> = (0..plan.workers)
        .map(|_| spawn_worker(plan, &stats))
        .collect();
    let mut rng = Rng(0x5EED_1234_ABCD_0001);
    let mut kills = 0;
    let mut exits: HashMap<usize, bool> = HashMap::new();
    loop {
        assert!(
            started.elapsed() < plan.timeout,
            "load run timed out after {:?}",
            plan.timeout
        );
        std::thread::sleep(Duration::from_millis(50 + rng.next() % 250));
        if kills < plan.kills {
            let victim = rng.below(workers.len());
            if !exits.contains_key(&victim) {
                let _ = workers[victim].kill(); // SIGKILL
                let _ = workers[victim].wait();
                workers[victim] = spawn_worker(plan, &stats);
                kills += 1;
            }
        }
        for (i, w) in workers.iter_mut().enumerate() {
            if let Some(status) = w.try_wait().unwrap() {
                exits.entry(i).or_insert_with(|| {
                    assert!(status.success(), "worker {i} failed: {status}");
                    true
                });
            }
        }
        if exits.len() == workers.len() {
            break;
        }
    }
    let elapsed = started.elapsed();
    // Every session holds exactly its turns, in order, once each.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = open(&plan.backend).await;
        for i in 0..plan.sessions {
            let mut chef = new_chef();
            assert!(
                chef.load_from_store(&*store, &session_id(i))
                    .await
                    .unwrap()
                    .is_some()
            );
            let history: Vec<String> = chef.history().iter().map(Message::text).collect();
            let want: Vec<String> = (1..=plan.turns).map(|n| format!("turn {n}")).collect();
            assert_eq!(history, want, "session {i}");
            let memory = chef.memory().unwrap();
            assert_eq!(memory.len(), plan.turns + 1, "session {i}");
            for n in 1..=plan.turns {
                assert_eq!(
                    memory.get(&format!("turn-{n}")).unwrap().value(),
                    format!("wrote {n}")
                );
            }
            let count = memory.get("count").unwrap();
            assert_eq!(count.value(), plan.turns.to_string());
            assert_eq!(count.update_count(), plan.turns as u64, "session {i}");
        }
    });
    let mut stats = std::mem::take(&mut *stats.lock().unwrap());
    stats.latencies_us.sort_unstable();
    let p = |q: f64| {
        let idx = ((stats.latencies_us.len() as f64 - 1.0) * q).round() as usize;
        stats.latencies_us.get(idx).copied().unwrap_or(0)
    };
    let committed = (plan.sessions * plan.turns) as f64;
    let _ = writeln!(
        std::io::stderr(),
        "store_load [{}]: {} workers x {} sessions x {} turns, {kills} SIGKILLs: {:.1} s, \
         {:.0} committed turns/s, turn latency p50 {:.1} ms p99 {:.1} ms, \
         {} conflicts, {} lease refusals, {} turns reported by workers",
        plan.backend.split(':').next().unwrap_or(""),
        plan.workers,
        plan.sessions,
        plan.turns,
        elapsed.as_secs_f64(),
        committed / elapsed.as_secs_f64(),
        p(0.5) as f64 / 1000.0,
        p(0.99) as f64 / 1000.0,
        stats.conflicts,
        stats.leased,
        stats.turns,
    );
    stats
}

/// Runs the plan `plan` makes for a backend on a fresh PostgreSQL schema; `None` (nothing
/// run) when there is no server.
#[cfg(feature = "postgres")]
async fn run_on_postgres(plan: impl FnOnce(String) -> Plan) -> Option<Stats> {
    let (_store, guard) = crate::pg::backend().await?;
    let plan = plan(format!("pg:{}:{}", guard.schema, guard.url));
    Some(
        tokio::task::spawn_blocking(move || run(&plan))
            .await
            .unwrap(),
    )
}

#[test]
fn killed_workers_lose_and_duplicate_no_turn_on_the_file_system() {
    let dir = tempfile::tempdir().unwrap();
    let stats = run(&Plan {
        backend: format!("fs:{}", dir.path().display()),
        workers: 4,
        sessions: 12,
        turns: 6,
        kills: 4,
        timeout: Duration::from_secs(120),
    });
    // Reported turns can fall short of committed ones (a worker killed between its save
    // and its report), never exceed them.
    assert!(stats.turns <= 12 * 6);
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_workers_lose_and_duplicate_no_turn_on_postgres() {
    let plan = |backend| Plan {
        backend,
        workers: 4,
        sessions: 24,
        turns: 8,
        kills: 6,
        timeout: Duration::from_secs(120),
    };
    if let Some(stats) = run_on_postgres(plan).await {
        assert!(stats.turns <= 24 * 8);
    }
}

/// The issue's full run: 8 worker processes x 200 sessions x 50 turns on PostgreSQL.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the full load run (about a minute); run on purpose, see the module docs"]
async fn full_load() {
    run_on_postgres(|backend| Plan {
        backend,
        workers: 8,
        sessions: 200,
        turns: 50,
        kills: 40,
        timeout: Duration::from_secs(1200),
    })
    .await;
}
