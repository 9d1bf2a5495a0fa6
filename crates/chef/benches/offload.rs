//! Offload benches: what one large tool result costs when the session offloads it.
//!
//! Run with `cargo bench -p chef --bench offload -- --warm-up-time 1 --measurement-time 3`.
//!
//! * `offload_push_200kb`: `push` of a 200 KB tool result under a policy (hash, preview,
//!   finding its call, the history append) — what the loop pays synchronously.
//! * `push_200kb_without_policy`: the same push without a policy, for comparison.
//! * `offload_flush_200kb_memory` / `offload_flush_200kb_fs`: writing it to the in-memory
//!   and the file-system store (new content every iteration; the file-system write fsyncs).
//! * `offload_view_range_200kb`: the model's `context` view of 40 lines of it.
#![allow(
    clippy::expect_used,
    reason = "a bench with broken setup should stop loudly"
)]

use std::hint::black_box;
use std::sync::Arc;

use chef::ir::{Content, Message, Target, ToolCall, ToolResult};
use chef::offload::OffloadPolicy;
use chef::store::{FsBackend, MemoryBackend, StorageBackend};
use chef::{Chef, ChefConfig, Routed, ToolsMode};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;

fn log(seed: usize) -> String {
    let mut out = format!("run {seed}\n");
    let mut i = 0;
    while out.len() < 200 * 1024 {
        out.push_str(&format!(
            "10:{:02}:{:02} GET /api/items/{i} 200 {}ms\n",
            (i / 60) % 60,
            i % 60,
            (i * 13) % 700
        ));
        i += 1;
    }
    out
}

fn session(store: Arc<dyn StorageBackend>, policy: bool) -> Chef {
    let mut chef =
        Chef::new(ChefConfig::default().with_tools_mode(ToolsMode::Unified)).with_store(store);
    chef.register_tools(vec![chef::ir::ToolDefinition::new(
        "read_log",
        json!({"type": "object"}),
    )])
    .expect("tools");
    if policy {
        chef.offloads_mut()
            .set_policy(Some(OffloadPolicy::chars(8_000)));
    }
    // A realistic history before the result: 50 turns.
    for i in 0..50 {
        chef.push(Message::user(format!("question {i}")));
        chef.push(Message::assistant(format!("answer {i}")));
    }
    chef.push(Message::assistant_with(vec![Content::ToolCall(
        ToolCall::new("c1", "read_log", json!({})),
    )]));
    chef
}

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let text = log(0);
    let result = Message::tool_results(vec![ToolResult::text("c1", text.clone())]);
    // Pushing the result, with the offload policy and without.
    for (name, policy) in [
        ("offload_push_200kb", true),
        ("push_200kb_without_policy", false),
    ] {
        let template = session(Arc::new(MemoryBackend::new()), policy);
        c.bench_function(name, |b| {
            b.iter_batched(
                || (template.fork(), result.clone()),
                |(mut chef, message)| {
                    chef.push(message);
                    chef
                },
                BatchSize::SmallInput,
            );
        });
    }
    let mut seed = 0;
    let dir = tempfile::tempdir().expect("tempdir");
    let stores: [(&str, Arc<dyn StorageBackend>); 2] = [
        ("offload_flush_200kb_memory", Arc::new(MemoryBackend::new())),
        (
            "offload_flush_200kb_fs",
            Arc::new(FsBackend::open(dir.path()).expect("fs")),
        ),
    ];
    for (name, store) in stores {
        let template = session(store, true);
        c.bench_function(name, |b| {
            b.iter_batched(
                || {
                    // New content every iteration: a write, never a deduplication.
                    seed += 1;
                    let mut chef = template.fork();
                    chef.push(Message::tool_results(vec![ToolResult::text(
                        "c1",
                        log(seed),
                    )]));
                    chef
                },
                |mut chef| {
                    runtime
                        .block_on(chef.offloads_mut().flush())
                        .expect("flush");
                    chef
                },
                BatchSize::SmallInput,
            );
        });
    }
    let mut chef = session(Arc::new(MemoryBackend::new()), true);
    chef.push(Message::tool_results(vec![ToolResult::text(
        "c1",
        text.clone(),
    )]));
    runtime
        .block_on(chef.offloads_mut().flush())
        .expect("flush");
    chef.compile(Target::Anthropic).expect("compile");
    let uri = format!("context://vfs/{}", chef::offload::content_key(&text, false));
    let routed = chef.route(&ToolCall::new(
        "v1",
        "context",
        json!({"command": "view", "path": uri, "offset": 2000, "limit": 40}),
    ));
    let call = match routed {
        Routed::Owned(call) => Some(call),
        _ => None,
    }
    .expect("context is owned");
    c.bench_function("offload_view_range_200kb", |b| {
        b.iter(|| {
            runtime
                .block_on(chef.handle_tool(black_box(&call)))
                .expect("view")
        });
    });
}

criterion_group!(offload, benches);
criterion_main!(offload);
