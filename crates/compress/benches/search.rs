//! Catalogue search speed: building the index and answering one request over 10,000 tools.
//!
//! Run with:
//!
//! ```text
//! cargo bench -p chef-compress --bench search -- --warm-up-time 1 --measurement-time 3
//! ```
//!
//! The 10,000-tool catalogue replicates the 149 real MCP tools (`real-mcp-tools.json`)
//! under renamed names (`s{n}_{name}`), so every description and schema is real text.
//! Because the builder tokenises each distinct text once, the replicated catalogue is also
//! built a second time with every description (tool and parameter) made unique by a
//! suffix, the worst case where no text repeats.
//!
//! `query 149 tools (second stage on)` is the same request with the opt-in sibling
//! re-ranking (`IndexOptions::rerank`) at the weight its calibration picks.
//!
//! `build 10k tools` uses the default threads (one per core, up to 4, on this catalogue);
//! `build 10k tools (1 thread)` is the same build on the calling thread only.

use std::hint::black_box;

use chef_compress::search::{CatalogIndex, IndexOptions, Rerank, RerankScope};
use chef_ir::ToolDefinition;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;

mod common;
use common::catalogue;

const TOOLS: usize = 10_000;

/// Appends `suffix` to every `description` string in a schema.
fn suffix_descriptions(value: &mut Value, suffix: &str) {
    match value {
        Value::Object(map) => {
            for (key, sub) in map.iter_mut() {
                match sub {
                    Value::String(text) if key == "description" => text.push_str(suffix),
                    _ => suffix_descriptions(sub, suffix),
                }
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| suffix_descriptions(v, suffix)),
        _ => {}
    }
}

fn bench(c: &mut Criterion) {
    let tools = catalogue(TOOLS, 0);
    let real = tools.get(..149).unwrap_or_default();
    c.bench_function("build 149 tools", |b| {
        b.iter(|| CatalogIndex::build(black_box(real)));
    });
    let small = CatalogIndex::build(real);
    c.bench_function("query 149 tools", |b| {
        b.iter(|| {
            small.search(
                black_box("add three new rows to the bottom of the tracker spreadsheet"),
                10,
            )
        });
    });

    // The opt-in second stage's features, each at the weight calibration picks: names,
    // argument evidence (required parameters read at build time, the request's values per
    // query; a request with values), window distinctiveness (the first stage's matches only).
    let rows = "add three new rows to the bottom of the tracker spreadsheet";
    let note = "add a note to order 999U123 saying the customer wants a morning delivery";
    for (label, rerank, request) in [
        (
            "query 149 tools (second stage on)",
            Rerank::names(0.25, RerankScope::Name),
            rows,
        ),
        (
            "query 149 tools (argument evidence on)",
            Rerank::arguments(0.6),
            note,
        ),
        (
            "query 149 tools (distinctiveness on)",
            Rerank::distinct(0.1),
            rows,
        ),
    ] {
        let staged = CatalogIndex::build_with(
            real,
            &IndexOptions {
                rerank,
                ..IndexOptions::default()
            },
        );
        c.bench_function(label, |b| b.iter(|| staged.search(black_box(request), 10)));
    }

    assert_eq!(tools.len(), TOOLS, "the fixture corpus loads");
    c.bench_function("build 10k tools", |b| {
        b.iter(|| CatalogIndex::build(black_box(&tools)));
    });
    let one_thread = IndexOptions {
        threads: 1,
        ..IndexOptions::default()
    };
    c.bench_function("build 10k tools (1 thread)", |b| {
        b.iter(|| CatalogIndex::build_with(black_box(&tools), &one_thread));
    });

    let unique: Vec<ToolDefinition> = tools
        .iter()
        .enumerate()
        .map(|(i, tool)| {
            let mut tool = tool.clone();
            let suffix = format!(" (copy {i})");
            tool.description.push_str(&suffix);
            suffix_descriptions(&mut tool.input_schema, &suffix);
            tool
        })
        .collect();
    c.bench_function("build 10k tools (no text repeats)", |b| {
        b.iter(|| CatalogIndex::build(black_box(&unique)));
    });

    let index = CatalogIndex::build(&tools);
    c.bench_function("query 10k tools (short)", |b| {
        b.iter(|| {
            index.search(
                black_box("add three new rows to the bottom of the tracker spreadsheet"),
                10,
            )
        });
    });
    c.bench_function("query 10k tools (long, common words)", |b| {
        b.iter(|| {
            index.search(
                black_box(
                    "Get the full details of order 735U2663137, then add a note to it saying the \
                     customer called about a damaged item and wants the delivery date and time \
                     rescheduled",
                ),
                10,
            )
        });
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
