//! Compile a 200-message, 149-tool request to bytes, against the floor of serialising the
//! already-built wire value.
//!
//! Run with `cargo bench -p chef-anthropic --bench compile -- --warm-up-time 1 --measurement-time 3`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    missing_docs,
    reason = "bench setup fails loudly"
)]

use std::hint::black_box;

use chef_anthropic::{CompileOptions, compile};
use chef_ir::{Content, Message, Request, ToolCall, ToolResult};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

fn request() -> Request {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/real-mcp-tools.json"
    );
    let tools = chef_ir::load_tools_from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap()
        .tools;
    let mut messages =
        vec![Message::system("You are a logistics assistant.").with_cache_breakpoint(true)];
    let mut i = 0;
    while messages.len() < 200 {
        let tool = &tools[i % tools.len()].name;
        messages.push(Message::user(format!(
            "Question {i}: what does the {tool} source say about hub {i}? Please be precise and cite rows."
        )));
        messages.push(Message::assistant_with(vec![
            Content::text(format!("Looking up {tool} for hub {i}.")),
            Content::ToolCall(ToolCall::new(
                format!("toolu_{i:04}"),
                tool.clone(),
                json!({"hub": i, "limit": 50, "filters": {"active": true, "region": "north"}}),
            )),
        ]));
        messages.push(Message::tool_results(vec![ToolResult::text(
            format!("toolu_{i:04}"),
            format!(
                "{{\"rows\":[{{\"hub\":{i},\"status\":\"ok\",\"volume\":{}}}]}}",
                i * 17
            ),
        )]));
        messages.push(Message::assistant(format!(
            "Hub {i} is active with volume {}.",
            i * 17
        )));
        i += 1;
    }
    messages.truncate(200);
    Request::new(messages).with_tools(tools)
}

fn bench(c: &mut Criterion) {
    let request = request();
    let options = CompileOptions::default();
    let built = compile(&request, &options).unwrap();
    let bytes = built.to_vec().unwrap().len();
    eprintln!("request body: {bytes} bytes");

    let mut group = c.benchmark_group("anthropic");
    group.bench_function("compile_to_bytes", |b| {
        b.iter(|| {
            let compiled = compile(black_box(&request), &options).unwrap();
            black_box(compiled.to_vec().unwrap())
        });
    });
    group.bench_function("floor_serialize_built_wire", |b| {
        b.iter(|| black_box(serde_json::to_vec(black_box(&built.body)).unwrap()));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
