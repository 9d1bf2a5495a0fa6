//! Compile a 200-message, 149-tool request to bytes, against the floor (serialising the
//! already-built wire value with serde_json alone).
//!
//! Run with `cargo bench -p chef-openai --bench compile -- --warm-up-time 1 --measurement-time 3`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "bench setup fails loudly"
)]

use std::hint::black_box;

use chef_ir::{Attachment, Content, Message, Request, ToolCall, ToolResult};
use chef_openai::{CompileOptions, chat, responses};
use criterion::{
    BenchmarkGroup, Criterion, criterion_group, criterion_main, measurement::WallTime,
};
use serde::Serialize;
use serde_json::json;

fn request() -> Request {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/real-mcp-tools.json"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let tools = chef_ir::load_tools_from_str(&text).unwrap().tools;
    let mut messages =
        vec![Message::system("You are a logistics assistant.").with_cache_breakpoint(true)];
    let mut turn = 0;
    while messages.len() < 200 {
        let name = tools[turn % tools.len()].name.clone();
        let id = format!("call_{turn}");
        messages.push(Message::new(
            chef_ir::Role::User,
            vec![
                Content::text(format!(
                    "Question {turn}: what does {name} say about site {turn}?"
                )),
                Content::Attachment(Attachment::url("image/png", "https://example.com/site.png")),
            ],
        ));
        messages.push(Message::assistant_with(vec![
            Content::text("Let me check."),
            Content::ToolCall(ToolCall::new(
                id.as_str(),
                name,
                json!({"site": turn, "schema_only": false}),
            )),
        ]));
        messages.push(Message::tool_results(vec![ToolResult::text(
            id.as_str(),
            format!(
                "{{\"rows\":{turn},\"status\":\"ok\",\"note\":\"{}\"}}",
                "x".repeat(200)
            ),
        )]));
        messages.push(Message::assistant(format!("Site {turn} has {turn} rows.")));
        turn += 1;
    }
    Request::new(messages).with_tools(tools)
}

/// Benches compiling `request` to bytes with `compile_to_bytes`, as `{api}/compile_to_bytes`,
/// and serialising the already-built `body` alone (the floor), as
/// `{api}/floor_serde_json_to_vec`.
fn bench_api(
    group: &mut BenchmarkGroup<'_, WallTime>,
    api: &str,
    request: &Request,
    compile_to_bytes: impl Fn(&Request) -> Vec<u8>,
    body: &impl Serialize,
) {
    group.bench_function(format!("{api}/compile_to_bytes"), |b| {
        b.iter(|| compile_to_bytes(black_box(request)));
    });
    group.bench_function(format!("{api}/floor_serde_json_to_vec"), |b| {
        b.iter(|| serde_json::to_vec(black_box(body)).unwrap());
    });
}

fn bench(c: &mut Criterion) {
    let request = request();
    let options = CompileOptions::default();
    let mut group = c.benchmark_group("openai");

    let chat_bytes = |r: &Request| chat::to_vec(&chat::compile(r, &options).unwrap()).unwrap();
    let built = chat::compile(&request, &options).unwrap();
    bench_api(&mut group, "chat", &request, chat_bytes, &built.body);

    let responses_bytes =
        |r: &Request| responses::to_vec(&responses::compile(r, &options).unwrap()).unwrap();
    let built = responses::compile(&request, &options).unwrap();
    bench_api(
        &mut group,
        "responses",
        &request,
        responses_bytes,
        &built.body,
    );
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
