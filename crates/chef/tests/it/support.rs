//! Set-up shared by the test modules: sessions, a runtime, a seeded generator, and the
//! entry-point plumbing of the tests that re-execute this binary as a child process.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;

use chef::compress::search::dense::{ModelKind, WordTableEmbedder};
use chef::memory::{Memory, SetOptions};
use chef::snapshot::journal::Journal;
use chef::store::{Entry, Expect, MemoryBackend, Namespace, StorageBackend, StoreError, StoreKey};
use chef::{
    Chef, ChefConfig, Payload, ToolGroup, ToolsMode,
    dynamic::{InjectionView, Injections},
};
use chef_compress::{Level, Options};
use chef_ir::{Content, Message, Target, ToolCall, ToolDefinition, ToolResult};
use serde_json::{Map, Value, json};

/// Instantiates every case, an async fn over `Arc<dyn StorageBackend>` in module
/// `crate::$cases`, as one `#[tokio::test]` per backend: modules `memory_backend`,
/// `fs_backend`, `scoped_backend` and, with the `postgres` feature, `pg_backend` (a case returns at once when
/// there is no server; the fixture says so loudly).
macro_rules! backend_suite {
    ($cases:ident, worker_threads = $threads:tt; $($case:ident),* $(,)?) => {
        backend_suite!(@backend memory_backend, $threads,
            Some(crate::store_conformance::memory()), $cases; $($case),*);
        backend_suite!(@backend fs_backend, $threads,
            Some(crate::store_conformance::file_system()), $cases; $($case),*);
        backend_suite!(@backend scoped_backend, $threads,
            Some(crate::store_conformance::scoped().await), $cases; $($case),*);
        #[cfg(feature = "postgres")]
        backend_suite!(@backend pg_backend, $threads,
            crate::pg::fixture().await, $cases; $($case),*);
    };
    (@backend $backend:ident, $threads:tt, $make:expr, $cases:ident; $($case:ident),*) => {
        mod $backend {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = $threads)]
                async fn $case() {
                    // `None`: no server for this backend; the fixture said so loudly.
                    let Some(fixture) = $make else { return };
                    crate::$cases::$case(std::sync::Arc::clone(&fixture.store)).await;
                }
            )*
        }
    };
}

/// Runs `f` to completion on a fresh current-thread runtime.
pub(crate) fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(f)
}

/// A session with the prompt cache off (its markers would only add noise to the text).
pub(crate) fn chef() -> Chef {
    Chef::new(ChefConfig::default().with_cache(false))
}

/// The unified owned tools (`context`) with the handoff tool (`new_context`) offered.
pub(crate) fn handoff_config() -> ChefConfig {
    ChefConfig::default()
        .with_tools_mode(ToolsMode::Unified)
        .with_handoff(true)
}

/// [`chef`] with one user turn, `text`.
pub(crate) fn chef_with_user(text: &str) -> Chef {
    let mut chef = chef();
    chef.push(Message::user(text));
    chef
}

/// A session at compression `level` with `tools` registered and one user turn, `text`.
pub(crate) fn asked_at(level: Level, tools: Vec<ToolDefinition>, text: &str) -> Chef {
    let mut chef = Chef::new(ChefConfig::default().with_level(level));
    chef.register_tools(tools).unwrap();
    chef.push(Message::user(text));
    chef
}

/// The dedupe keys of a compile's cache-audit findings, in order.
pub(crate) fn cache_issue_keys(payload: &Payload) -> Vec<&str> {
    payload
        .meta
        .cache_issues
        .iter()
        .map(|i| i.dedupe_key.as_str())
        .collect()
}

/// Pushes one round of tools: the assistant's call `id` to `name` (no arguments), then its
/// result, `ok`.
pub(crate) fn push_tool_round(chef: &mut Chef, id: &str, name: &str) {
    chef.push(Message::assistant_with(vec![Content::ToolCall(
        ToolCall::new(id, name, json!({})),
    )]));
    chef.push(Message::tool_results(vec![ToolResult::text(id, "ok")]));
}

/// Adds (or replaces) injector `name`, which injects `lines` every turn.
pub(crate) fn inject_lines(chef: &mut Chef, name: &str, lines: &'static [&'static str]) {
    chef.layers_mut()
        .add_injector(name, move |_: &InjectionView<'_>, out: &mut Injections| {
            for line in lines {
                out.push(*line);
            }
            Ok(())
        });
}

/// Two tools a toy embedder tells apart: a ride and the weather.
pub(crate) fn two_tools() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition::new("uber_request", json!({"type": "object"}))
            .with_description("Request a car to a destination."),
        ToolDefinition::new("weather_now", json!({"type": "object"}))
            .with_description("Current weather for a city."),
    ]
}

/// A group (namespace or toolkit) named `name` holding one tool, `tool`, that takes an
/// empty object.
pub(crate) fn one_tool_group(name: &str, tool: &str) -> ToolGroup {
    ToolGroup::new(
        name,
        format!("The {name} group."),
        vec![ToolDefinition::new(tool, json!({"type": "object"}))],
    )
}

/// A two-dimension word table: `car`/`ride` on one axis, `weather`/`rain` on the other.
pub(crate) fn toy_table() -> WordTableEmbedder {
    WordTableEmbedder::new("toy", ModelKind::Static, 2)
        .with_word("car", [1.0, 0.0])
        .with_word("ride", [0.9, 0.1])
        .with_word("weather", [0.0, 1.0])
        .with_word("rain", [0.1, 0.9])
}

/// A memory holding one entry, `key` = `value`, described as `description`.
pub(crate) fn memory_with(key: &str, value: &str, description: &str) -> Memory {
    let mut memory = Memory::new();
    memory
        .set(key, value, SetOptions::new().with_description(description))
        .unwrap();
    memory
}

/// A xorshift generator: the same seed, the same sequence.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n`.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % (n as u64)).unwrap()
    }
}

/// The directory a parent test passed to this process in `env`; `None` when this process
/// was not started by a parent test (the child entry point is then a no-op).
pub(crate) fn child_dir(env: &str) -> Option<PathBuf> {
    std::env::var_os(env).map(PathBuf::from)
}

/// A current-thread runtime without I/O or timers, as the child processes use.
pub(crate) fn bare_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

/// A command that runs this test binary again, only for the ignored entry point `test`,
/// with `value` in the environment variable `env` and stdin closed. The child's own output
/// is not captured (a panic in it reaches its stderr).
pub(crate) fn child_test(test: &str, env: &str, value: impl AsRef<OsStr>) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            test,
            "--exact",
            "--ignored",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(env, value)
        .stdin(Stdio::null());
    command
}

/// The store key `text`, which must be valid.
pub(crate) fn key(text: &str) -> StoreKey {
    StoreKey::new(text).unwrap()
}

/// A journal `id` in a fresh memory store: the store, the id and the journal.
pub(crate) fn memory_journal(id: &str) -> (Arc<dyn StorageBackend>, StoreKey, Journal) {
    let store: Arc<dyn StorageBackend> = Arc::new(MemoryBackend::new());
    let id = key(id);
    let journal = Journal::new(Arc::clone(&store), id.clone());
    (store, id, journal)
}

/// `into`, loaded from the journal `id` in `store` (which must hold one).
pub(crate) async fn replayed(
    store: &Arc<dyn StorageBackend>,
    id: &StoreKey,
    mut into: Chef,
) -> Chef {
    Journal::new(Arc::clone(store), id.clone())
        .load(&mut into)
        .await
        .unwrap()
        .expect("a journal");
    into
}

/// The content stored at `key` of `ns`, which must be present.
pub(crate) async fn content(store: &dyn StorageBackend, ns: &Namespace, key: &StoreKey) -> String {
    store
        .get(ns, key)
        .await
        .unwrap()
        .unwrap()
        .value
        .content()
        .to_owned()
}

/// One compare-and-set increment of the counter stored at `key` in the memory namespace:
/// reads it (absent: 0), then writes `entry(n + 1)` expecting the version it read. Returns
/// the new count, or the store's error (a conflict when another writer came first).
pub(crate) async fn increment_counter(
    store: &dyn StorageBackend,
    key: &StoreKey,
    entry: impl FnOnce(u64) -> Entry,
) -> Result<u64, StoreError> {
    let read = store.get(&Namespace::MEMORY, key).await.unwrap();
    let n = read
        .as_ref()
        .map_or(0, |r| r.value.content().parse::<u64>().unwrap())
        + 1;
    store
        .put(
            &Namespace::MEMORY,
            key,
            entry(n),
            Expect::from_read(read.as_ref()),
        )
        .await?;
    Ok(n)
}

/// `{"a":{"a":...{"a":1}}}`, `depth` objects deep, built without recursion.
pub(crate) fn nested(depth: usize) -> Value {
    (0..depth).fold(json!(1), |v, _| obj("a", v))
}

/// Drops a deeply nested value without recursion. serde_json's `Drop` for `Value` recurses,
/// so a caller that builds a 10,000-deep value must also take it apart; chef's job is only
/// to never clone, serialise or drop such a value recursively itself.
pub(crate) fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => stack.extend(map.into_values()),
            Value::Array(list) => stack.extend(list),
            _ => {}
        }
    }
}

/// `{key: value}` without `json!` (which clones its arguments recursively).
pub(crate) fn obj(key: &str, value: Value) -> Value {
    let mut m = Map::new();
    m.insert(key.into(), value);
    Value::Object(m)
}

/// Increments the counter at `key` by one (see [`increment_counter`]), retrying after each
/// conflict; returns how many conflicts it retried.
pub(crate) async fn increment_retrying(store: &dyn StorageBackend, key: &StoreKey) -> u64 {
    let mut conflicts = 0;
    loop {
        match increment_counter(store, key, |n| Entry::new(n.to_string())).await {
            Ok(_) => return conflicts,
            Err(e) if e.is_conflict() => conflicts += 1,
            Err(e) => panic!("{e}"),
        }
    }
}

/// A snapshot file whose JSON a test edited (and re-serialised), with its checksum made
/// again over the edited bytes: the file a writer of such content would leave, so the
/// checks behind the checksum (field shapes, tools, versions) are what the test reaches.
pub(crate) fn resealed(file: &[u8]) -> Vec<u8> {
    let text = std::str::from_utf8(file).expect("a snapshot file is UTF-8");
    let (covered, _) = text
        .trim_end()
        .rsplit_once(r#","checksum":"crc32:"#)
        .expect("a version-2 file ends with its checksum");
    format!(
        "{covered},\"checksum\":\"crc32:{:08x}\"}}\n",
        crc32fast::hash(covered.as_bytes())
    )
    .into_bytes()
}

/// Compression at `level` for the real tools; at level four with their compiled map,
/// `real-mcp-tools.compiled-map.json`.
pub(crate) fn corpus_options(level: Level) -> Options {
    let options = Options::new().with_level(level);
    if level != Level::Four {
        return options;
    }
    let text = std::fs::read_to_string(crate::fixture("real-mcp-tools.compiled-map.json")).unwrap();
    let map: Map<String, Value> = serde_json::from_str(&text).unwrap();
    options.with_compiled(
        map.into_iter()
            .map(|(k, v)| (k, v.as_str().unwrap().to_owned())),
    )
}

/// The names of the tools a compile for `target` sends, in wire order.
pub(crate) fn wire_names(chef: &mut Chef, target: Target) -> Vec<String> {
    chef.compile(target)
        .unwrap()
        .meta
        .wire_tools
        .iter()
        .map(|n| n.as_str().to_owned())
        .collect()
}

/// Asserts that `resumed` compiles the same bytes as `live` for every target.
pub(crate) fn assert_same_bytes(resumed: &mut Chef, live: &mut Chef) {
    for target in Target::ALL {
        assert_eq!(
            String::from_utf8(resumed.compile(target).unwrap().body).unwrap(),
            String::from_utf8(live.compile(target).unwrap().body).unwrap(),
            "{target:?}"
        );
    }
}

/// Asserts that one of a compile's notices contains `needle`.
pub(crate) fn assert_notice(payload: &Payload, needle: &str) {
    assert!(
        payload.notices.iter().any(|n| n.contains(needle)),
        "{needle:?} is in none of {:?}",
        payload.notices
    );
}
