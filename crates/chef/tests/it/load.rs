//! Load (issue 11): many concurrent sessions on one tokio runtime share one store, each
//! running a scripted agent loop of many turns with memory writes. Measures compiles per
//! second, turns per second and compile latency; checks that no update is lost and that
//! nothing deadlocks.
//!
//! Every turn of every session:
//!
//! 1. reloads memory from the store (other sessions' writes), pushes a user message and
//!    compiles for Anthropic (the timed step; 149 real tools at level 1, the team's memory
//!    entries in the system layer, history growing by four messages a turn);
//! 2. plays the model's two tool calls through [`Chef::route`] and [`Chef::handle_tool`]:
//!    - `modify_memory` (or `create_memory` the first time) on a **team key** shared by ten
//!      sessions, then [`Memory::persist`](chef::memory::Memory::persist) with
//!      compare-and-set; on a conflict the session reloads, re-applies and persists again;
//!    - the `context` tool appending a line to the session's own `notes/` log in the store
//!      (the store's compare-and-set through the owned tool);
//! 3. pushes the assistant's calls, the tool results and a closing assistant message.
//!
//! Afterwards: every team key's `update_count` equals sessions-per-key × turns (no lost
//! update), every log holds exactly its turns in order, and the whole run finished under a
//! timeout (no deadlock).
//!
//! Default suite: a short run per backend. Full runs (`#[ignore]`d, release):
//!
//! ```text
//! cargo test --release -p chef --test it -- --ignored load_1000 --nocapture --test-threads 1
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use chef::memory::Memory;
use chef::store::{FsBackend, MemoryBackend, Namespace, StorageBackend, StoreKey};
use chef::{Chef, ChefConfig, Routed};
use chef_ir::{Content, Message, Target, ToolCall, ToolDefinition, ToolResult};
use serde_json::json;

use crate::fixtures::real_tools;

/// Sessions that share one team memory key.
const SESSIONS_PER_KEY: usize = 10;

#[derive(Debug, Clone, Copy)]
enum Backend {
    Memory,
    Fs,
}

/// What one run measured.
struct Figures {
    sessions: usize,
    turns: usize,
    wall: Duration,
    /// Every compile's latency, sorted.
    compiles: Vec<Duration>,
    /// Compare-and-set conflicts that sessions retried.
    conflicts: u64,
}

impl Figures {
    fn quantile(&self, q: f64) -> Duration {
        let n = self.compiles.len();
        let at = ((n as f64 * q).ceil() as usize).clamp(1, n) - 1;
        self.compiles[at]
    }

    fn report(&self, backend: Backend) -> String {
        let secs = self.wall.as_secs_f64();
        let n = self.compiles.len();
        format!(
            "{backend:?} backend: {} sessions x {} turns = {n} compiles in {secs:.1} s wall: \
             {:.0} compiles/s, {:.0} turns/s; compile latency p50 {:?}, p99 {:?}, max {:?}; \
             {} compare-and-set conflicts retried",
            self.sessions,
            self.turns,
            n as f64 / secs,
            (self.sessions * self.turns) as f64 / secs,
            self.quantile(0.5),
            self.quantile(0.99),
            self.compiles[n - 1],
            self.conflicts,
        )
    }
}

fn team_key(session: usize) -> String {
    format!("team_{}", session / SESSIONS_PER_KEY)
}

/// Routes a scripted call; it must reach an owned tool.
async fn owned(chef: &mut Chef, call: &ToolCall) -> String {
    let Routed::Owned(owned) = chef.route(call) else {
        panic!("{call:?} was not routed to an owned tool");
    };
    let reply = chef.handle_tool(&owned).await.unwrap();
    assert!(!reply.is_error, "{}", reply.text);
    reply.text
}

/// One session's agent loop; returns its compile latencies and conflicts.
async fn session(
    s: usize,
    turns: usize,
    tools: Vec<ToolDefinition>,
    store: Arc<dyn StorageBackend>,
) -> (Vec<Duration>, u64) {
    let mut chef = Chef::new(ChefConfig::default())
        .with_memory(Memory::new())
        .with_store(Arc::clone(&store));
    chef.register_tools(tools).unwrap();
    chef.set_system_prompt(vec![Message::system("You are a support agent.")]);
    let key = team_key(s);
    let log = format!("notes/s{s}/log");
    let mut latencies = Vec::with_capacity(turns);
    let mut conflicts = 0;
    for t in 0..turns {
        // Pick up what the other sessions wrote (the memory block shows the team's facts).
        chef.memory_mut().unwrap().load(&*store).await.unwrap();
        chef.push(Message::user(format!("Session {s}, request {t}.")));
        let start = Instant::now();
        let payload = chef.compile(Target::Anthropic).unwrap();
        latencies.push(start.elapsed());
        assert!(!payload.body.is_empty());

        // The memory write: compare-and-set on a key ten sessions share.
        let memory_call = loop {
            let exists = chef.memory().unwrap().get(&key).is_some();
            let call = if exists {
                ToolCall::new(
                    format!("m{t}"),
                    "modify_memory",
                    json!({"action": "update", "key": key, "value": format!("s{s} t{t}")}),
                )
            } else {
                ToolCall::new(
                    format!("m{t}"),
                    "create_memory",
                    json!({"key": key, "value": format!("s{s} t{t}")}),
                )
            };
            owned(&mut chef, &call).await;
            match chef.memory_mut().unwrap().persist(&*store).await {
                Ok(_) => break call,
                Err(e) if e.is_conflict() => {
                    conflicts += 1;
                    chef.memory_mut().unwrap().load(&*store).await.unwrap();
                }
                Err(e) => panic!("persist: {e}"),
            }
        };

        // The session's own log in the store, through the context tool.
        let args = if t == 0 {
            json!({"command": "create", "path": log, "file_text": "turn 0"})
        } else {
            json!({"command": "insert", "path": log, "insert_line": t, "insert_text": format!("turn {t}")})
        };
        let notes_call = ToolCall::new(format!("n{t}"), "context", args);
        let notes_reply = owned(&mut chef, &notes_call).await;

        chef.push(Message::assistant_with(vec![
            Content::ToolCall(memory_call.clone()),
            Content::ToolCall(notes_call.clone()),
        ]));
        chef.push(Message::tool_results(vec![
            ToolResult::text(memory_call.id.clone(), "Updated."),
            ToolResult::text(notes_call.id.clone(), notes_reply),
        ]));
        chef.push(Message::assistant(format!("Done with request {t}.")));
        tokio::task::yield_now().await;
    }
    (latencies, conflicts)
}

fn run(backend: Backend, sessions: usize, turns: usize, timeout: Duration) -> Figures {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn StorageBackend> = match backend {
        Backend::Memory => Arc::new(MemoryBackend::new()),
        Backend::Fs => Arc::new(FsBackend::open(dir.path()).unwrap()),
    };
    let tools = real_tools();
    let figures = rt.block_on(async {
        let start = Instant::now();
        let mut tasks = tokio::task::JoinSet::new();
        for s in 0..sessions {
            tasks.spawn(session(s, turns, tools.clone(), Arc::clone(&store)));
        }
        let (mut compiles, conflicts) = tokio::time::timeout(timeout, async {
            let mut compiles = Vec::with_capacity(sessions * turns);
            let mut conflicts = 0;
            while let Some(done) = tasks.join_next().await {
                let (latencies, c) = done.unwrap();
                compiles.extend(latencies);
                conflicts += c;
            }
            (compiles, conflicts)
        })
        .await
        .expect("deadlock: the sessions did not finish in time");
        let wall = start.elapsed();
        compiles.sort();
        check_no_lost_update(&*store, sessions, turns).await;
        Figures {
            sessions,
            turns,
            wall,
            compiles,
            conflicts,
        }
    });
    if let Backend::Fs = backend {
        // No temporary file survives a run.
        let mut stack = vec![dir.path().to_path_buf()];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let entry = entry.unwrap();
                let name = entry.file_name().to_string_lossy().into_owned();
                assert!(!name.starts_with(".tmp-"), "temp file left: {name}");
                if entry.file_type().unwrap().is_dir() {
                    stack.push(entry.path());
                }
            }
        }
    }
    figures
}

async fn check_no_lost_update(store: &dyn StorageBackend, sessions: usize, turns: usize) {
    let mut memory = Memory::new();
    memory.load(store).await.unwrap();
    let mut total = 0;
    for first in (0..sessions).step_by(SESSIONS_PER_KEY) {
        let key = team_key(first);
        let writers = SESSIONS_PER_KEY.min(sessions - first);
        let entry = memory.get(&key).unwrap();
        assert_eq!(
            entry.update_count(),
            (writers * turns) as u64,
            "lost update on {key}"
        );
        total += entry.update_count();
    }
    assert_eq!(total, (sessions * turns) as u64);
    let notes = Namespace::new("notes").unwrap();
    for s in 0..sessions {
        let key = StoreKey::new(format!("s{s}/log")).unwrap();
        let entry = store.get(&notes, &key).await.unwrap().unwrap();
        let expected: Vec<String> = (0..turns).map(|t| format!("turn {t}")).collect();
        assert_eq!(
            entry.value.content(),
            expected.join("\n"),
            "session {s}'s log"
        );
    }
}

fn short(backend: Backend, sessions: usize, turns: usize) {
    let figures = run(backend, sessions, turns, Duration::from_secs(300));
    assert_eq!(figures.compiles.len(), sessions * turns);
    println!("{}", figures.report(backend));
}

#[test]
fn load_short_memory_backend_loses_no_update() {
    short(Backend::Memory, 20, 5);
}

#[test]
fn load_short_fs_backend_loses_no_update() {
    short(Backend::Fs, 10, 3);
}

/// Peak resident set size of this process (Linux), for the report.
fn peak_rss() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l.trim_start_matches("VmHWM:").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

fn full(backend: Backend) {
    let sessions = env_or("CHEF_LOAD_SESSIONS", 1000);
    let turns = env_or("CHEF_LOAD_TURNS", 100);
    let figures = run(backend, sessions, turns, Duration::from_secs(3600));
    assert_eq!(figures.compiles.len(), sessions * turns);
    println!("{}; peak RSS {}", figures.report(backend), peak_rss());
}

/// A size from the environment (to try smaller runs), or the issue's figure.
fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
#[ignore = "load run (release): cargo test --release -p chef --test it -- --ignored load_1000"]
fn load_1000_sessions_of_100_turns_memory_backend() {
    full(Backend::Memory);
}

#[test]
#[ignore = "load run (release): cargo test --release -p chef --test it -- --ignored load_1000"]
fn load_1000_sessions_of_100_turns_fs_backend() {
    full(Backend::Fs);
}
