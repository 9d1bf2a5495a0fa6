//! The hybrid ranker with the bundled static model: embedding a request, answering one over
//! 149, 1,729 and 10,000 tools (the catalogue's vectors made beforehand; as shipped, with
//! the best ten in the second stage's order, and in the first stage's order alone; the
//! lexical index alone beside it, and the whole second stage over the best 30: `search_second_stage`, which
//! runs the first stage twice, on the request and on its catalogue words, and the model's
//! probabilities alone over 30 candidates), and building the index (which embeds every
//! tool).
//!
//! ```text
//! cargo bench -p chef-compress --features bundled-model --bench hybrid -- --warm-up-time 1 --measurement-time 3
//! ```
//!
//! The larger catalogues replicate the 149 real MCP tools under renamed names, as the
//! `search` bench does; 1,729 is the size of issue 23's held-out benchmark.

use std::{hint::black_box, sync::Arc};

use chef_compress::search::dense::{BundledStatic, DenseConfig, Embedder, SecondStage};
use criterion::{Criterion, criterion_group, criterion_main};

mod common;
use common::catalogue;

const SHORT: &str = "add three new rows to the bottom of the tracker spreadsheet";

fn bench(c: &mut Criterion) {
    let Ok(model) = BundledStatic::shared() else {
        eprintln!("the bundled model does not load: nothing measured");
        return;
    };
    c.bench_function("bundled: embed one request", |b| {
        b.iter(|| model.embed(black_box(&[SHORT])));
    });
    let config = DenseConfig::new(Arc::clone(&model) as Arc<dyn Embedder>);
    let real = catalogue(149, 149);
    c.bench_function("hybrid: build 149 tools", |b| {
        b.iter(|| config.build(black_box(&real)));
    });
    for n in [149, 1_729, 10_000] {
        let tools = catalogue(n, 149);
        assert_eq!(tools.len(), n, "the fixture corpus loads");
        let Ok(index) = config.build(&tools) else {
            eprintln!("the hybrid index does not build: nothing measured");
            return;
        };
        // What ships with the bundled model (the best ten in the second stage's order),
        // and the first stage's order alone beside it.
        c.bench_function(&format!("hybrid: query {n} tools"), |b| {
            b.iter(|| index.search(black_box(SHORT), 10));
        });
        let first = index.clone().with_second_stage(false);
        c.bench_function(
            &format!("hybrid, first-stage order: query {n} tools"),
            |b| {
                b.iter(|| first.search(black_box(SHORT), 10));
            },
        );
        c.bench_function(&format!("lexical: query {n} tools"), |b| {
            b.iter(|| index.lexical().search(black_box(SHORT), 10));
        });
        let stage = SecondStage::DEFAULT;
        c.bench_function(
            &format!("second stage: query {n} tools, 30 candidates"),
            |b| {
                b.iter(|| index.search_second_stage(black_box(SHORT), 10, &stage));
            },
        );
        if n == 149 {
            let candidates = index.candidates(SHORT, stage.depth).unwrap_or_default();
            c.bench_function("second stage: the model alone over 30 candidates", |b| {
                b.iter(|| {
                    black_box(&candidates)
                        .iter()
                        .map(|c| stage.model.probability(&c.features))
                        .fold(0.0_f32, f32::max)
                });
            });
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
