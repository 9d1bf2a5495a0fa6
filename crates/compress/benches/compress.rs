//! Compression and resolution speed.
//!
//! Run with `cargo bench -p chef-compress --bench compress -- --warm-up-time 1 --measurement-time 3`.
//!
//! Large catalogues are the real 149-tool corpus replicated with renamed tools
//! (`{name}_r{k}`), so schemas and prose stay realistic.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "bench harness fails loudly"
)]

use std::hint::black_box;

use chef_compress::{Catalogue, Compressed, Level, Options, Resolution, compress};
use chef_ir::ToolDefinition;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::json;

fn corpus() -> Vec<ToolDefinition> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/real-mcp-tools.json"
    );
    let text = std::fs::read_to_string(path).unwrap();
    chef_ir::load_tools_from_str(&text).unwrap().tools
}

fn catalogue(n: usize) -> Vec<ToolDefinition> {
    let base = corpus();
    (0..n)
        .map(|i| {
            let mut t = base[i % base.len()].clone();
            let k = i / base.len();
            if k > 0 {
                t.name = format!("{}_r{k}", t.name).into();
            }
            t
        })
        .collect()
}

fn level3(tools: &[ToolDefinition]) -> Compressed {
    compress(tools, &Options::new().with_level(Level::Three)).unwrap()
}

fn bench_compress(c: &mut Criterion) {
    let mut group = c.benchmark_group("compress_level3");
    for n in [149, 1_200, 10_000] {
        let tools = catalogue(n);
        group.bench_with_input(BenchmarkId::from_parameter(n), &tools, |b, tools| {
            b.iter(|| level3(black_box(tools)));
        });
    }
    group.finish();

    // The runtime's path: the catalogue prepared once (names checked, schemas normalised,
    // sizes counted, names ordered), then compressed per selection.
    let mut group = c.benchmark_group("catalogue_level3");
    let options = Options::new().with_level(Level::Three);
    for n in [149, 1_200, 10_000] {
        let catalogue = Catalogue::new(&catalogue(n)).unwrap();
        group.bench_with_input(
            BenchmarkId::from_parameter(n),
            &catalogue,
            |b, catalogue| {
                b.iter(|| black_box(catalogue).compress(&options).unwrap());
            },
        );
    }
    group.finish();

    let mut group = c.benchmark_group("catalogue_prepare");
    for n in [149, 1_200, 10_000] {
        let tools = catalogue(n);
        group.bench_with_input(BenchmarkId::from_parameter(n), &tools, |b, tools| {
            b.iter(|| Catalogue::new(black_box(tools)).unwrap());
        });
    }
    group.finish();

    // A task-pruned turn: 30 of the 149 tools.
    let tools = corpus();
    let catalogue = Catalogue::new(&tools).unwrap();
    let picks: Vec<usize> = (0..tools.len()).step_by(5).collect();
    c.bench_function("catalogue_level3_subset_30_of_149", |b| {
        b.iter(|| {
            catalogue
                .compress_subset(black_box(&picks), &options)
                .unwrap()
        });
    });
}

fn bench_resolve(c: &mut Criterion) {
    let tools = corpus();
    let compressed = level3(&tools);
    let code = compressed.code_for("batch_geocode").unwrap().to_owned();
    let valid = json!({"f": code, "a": {"addresses": ["1 Main St, Springfield"]}});
    let invalid = json!({"f": code, "a": {"addresses": ["1 Main St"], "adresses": 1}});
    assert!(matches!(
        compressed.resolve("t", &valid),
        Resolution::Call { .. }
    ));
    assert!(matches!(
        compressed.resolve("t", &invalid),
        Resolution::Error(_)
    ));
    c.bench_function("resolve_valid", |b| {
        b.iter(|| compressed.resolve(black_box("t"), black_box(&valid)));
    });
    c.bench_function("resolve_unknown_parameter", |b| {
        b.iter(|| compressed.resolve(black_box("t"), black_box(&invalid)));
    });

    let big = level3(&catalogue(10_000));
    let near_miss = json!({"f": "c1x", "a": {}});
    match big.resolve("t", &near_miss) {
        Resolution::Error(e) => assert!(e.message().contains("Did you mean"), "{}", e.message()),
        other => panic!("{other:?}"),
    }
    c.bench_function("did_you_mean_10000", |b| {
        b.iter(|| big.resolve(black_box("t"), black_box(&near_miss)));
    });
}

criterion_group!(benches, bench_compress, bench_resolve);
criterion_main!(benches);
