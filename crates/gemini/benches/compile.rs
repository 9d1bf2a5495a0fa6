//! Compile a 200-message, 149-tool request to Gemini bytes, against the floor
//! (serialising the already-built wire value with serde_json alone).
//!
//! Run with `cargo bench -p chef-gemini --bench compile -- --warm-up-time 1 --measurement-time 3`.
#![allow(
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "bench setup fails loudly"
)]

use std::hint::black_box;

use chef_ir::{Message, Request};
use criterion::{Criterion, criterion_group, criterion_main};

fn request() -> Request {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/");
    let tools = chef_ir::load_tools_from_str(
        &std::fs::read_to_string(format!("{root}real-mcp-tools.json")).expect("corpus"),
    )
    .expect("tools")
    .tools;
    let conversation: Request = serde_json::from_str(
        &std::fs::read_to_string(format!("{root}conversation-tool-heavy.json")).expect("fixture"),
    )
    .expect("conversation");
    let turns: Vec<&Message> = conversation
        .messages
        .iter()
        .filter(|m| m.role != chef_ir::Role::System)
        .collect();
    let mut messages = vec![conversation.messages[0].clone()];
    while messages.len() < 200 {
        messages.extend(turns.iter().map(|m| (*m).clone()));
    }
    messages.truncate(200);
    Request::new(messages).with_tools(tools)
}

fn bench(c: &mut Criterion) {
    let request = request();
    let options = chef_gemini::CompileOptions::default();
    let compiled = chef_gemini::compile(&request, &options).expect("compile");
    let bytes = chef_gemini::to_vec(&compiled).expect("bytes");
    eprintln!("request body: {} bytes", bytes.len());
    c.bench_function("gemini/compile_to_bytes", |b| {
        b.iter(|| {
            let compiled = chef_gemini::compile(black_box(&request), &options).expect("compile");
            chef_gemini::to_vec(&compiled).expect("bytes")
        });
    });
    // The floor: the same wire JSON, fully built, serialised by serde_json alone.
    let built: serde_json::Value = serde_json::to_value(&compiled.body).expect("value");
    assert_eq!(serde_json::to_vec(&built).expect("bytes"), bytes);
    c.bench_function("gemini/floor_serde_json_to_vec", |b| {
        b.iter(|| serde_json::to_vec(black_box(&built)).expect("bytes"));
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
