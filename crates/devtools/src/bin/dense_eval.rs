//! Lexical vs hybrid retrieval: recall@1, recall@5, MRR, abstention, query latency and
//! index build time of BM25F alone, BM25F + a static model, and BM25F + MiniLM, and the
//! calibration of each hybrid's dense weight and abstention threshold.
//!
//! Run with (model directories as `.ci/run` prepares them):
//!
//! ```text
//! CHEF_MINILM_DIR=/path/to/all-MiniLM-L6-v2 CHEF_STATIC_DIR=/path/to/static \
//!     cargo run --release -p chef-devtools --features dense --bin dense_eval
//! ```
//!
//! A model whose variable is unset is left out. For each hybrid, the dense weight
//! (`dense::calibrate_weight`) and then `min_cosine` (`dense::calibrate_to_share`, the lowest
//! that refuses 90% of the unanswerable requests, joint abstention) are tuned on the
//! `calibrate` half of `retrieval-149.jsonl` only; the held-out half and the toolgz
//! scenarios are reported with them and were never used for tuning. The lexical index uses
//! its default (`Abstention::CALIBRATED`, itself tuned on the calibrate half).
//!
//! Latency: every request of `retrieval-149.jsonl` (210) searched three times after one
//! warm-up pass, top 5, including embedding the request. Build time: the 149-tool index
//! cold (every tool embedded, into an empty vector cache) and warm (a new embedder over
//! the same on-disk cache, so the vectors are read back instead of computed).

use std::{path::Path, sync::Arc, time::Instant};

use chef_compress::search::{
    Abstention, CatalogIndex,
    dense::{self, Embedder, HybridIndex, HybridOptions},
    eval::{self, LabelledQuery, Metrics},
};
use chef_dense::{CachedEmbedder, VectorCache};
use chef_devtools::{Error, load_labelled, load_tools, metrics_cells, split, toolgz_scenarios};
use chef_ir::ToolDefinition;

/// A ranker under test: the lexical index, or a hybrid (with its weight and threshold set).
enum Ranker {
    Lexical(CatalogIndex),
    Hybrid(HybridIndex),
}

impl Ranker {
    /// The same kind of ranker (same model, weight and threshold) over other tools.
    fn rebuilt(&self, tools: &[ToolDefinition]) -> Result<Self, Error> {
        Ok(match self {
            Self::Lexical(_) => Self::Lexical(CatalogIndex::build(tools)),
            Self::Hybrid(index) => Self::Hybrid(HybridIndex::build(
                tools,
                index.embedder().clone(),
                *index.options(),
            )?),
        })
    }

    /// Metrics with the ranker's own threshold, or never abstaining.
    fn evaluate(&self, queries: &[LabelledQuery], abstain: bool) -> Result<Metrics, Error> {
        Ok(match (self, abstain) {
            (Self::Lexical(index), true) => {
                eval::evaluate(index, queries, &index.options().abstention)
            }
            (Self::Lexical(index), false) => eval::evaluate(index, queries, &Abstention::NEVER),
            (Self::Hybrid(index), true) => {
                dense::evaluate(index, queries, index.options().min_cosine)?
            }
            (Self::Hybrid(index), false) => dense::evaluate(index, queries, -1.0)?,
        })
    }

    fn search(&self, query: &str) -> Result<usize, Error> {
        Ok(match self {
            Self::Lexical(index) => index.search(query, 5).hits.len(),
            Self::Hybrid(index) => index.search(query, 5)?.hits.len(),
        })
    }
}

/// Median and 95th percentile of `samples` (milliseconds).
fn percentiles(samples: &mut [f64]) -> (f64, f64) {
    samples.sort_unstable_by(f64::total_cmp);
    let at = |p: f64| {
        let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
        samples.get(i.min(samples.len().saturating_sub(1))).copied()
    };
    (at(0.5).unwrap_or(f64::NAN), at(0.95).unwrap_or(f64::NAN))
}

fn row(label: &str, data: &str, threshold: &str, m: &Metrics, timing: &str) {
    println!(
        "| {label} | {data} | {threshold} | {} | {timing} |",
        metrics_cells(m)
    );
}

/// Per-scenario metrics averaged (each toolgz prompt weighs the same).
fn mean(all: &[Metrics]) -> Metrics {
    let n = all.len().max(1) as f64;
    let sum = |f: fn(&Metrics) -> f64| all.iter().map(f).sum::<f64>() / n;
    Metrics {
        relevant: all.iter().map(|m| m.relevant).sum(),
        irrelevant: all.iter().map(|m| m.irrelevant).sum(),
        recall_at_1: sum(|m| m.recall_at_1),
        recall_at_5: sum(|m| m.recall_at_5),
        mrr: sum(|m| m.mrr),
        false_abstention: sum(|m| m.false_abstention),
        true_abstention: 0.0,
    }
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

fn main() -> Result<(), Error> {
    let real = load_tools("real-mcp-tools.json")?;
    let synthetic = load_tools("synthetic-100-tools.json")?;
    let labelled = load_labelled("retrieval-149.jsonl")?;
    let (calibration, heldout) = (split(&labelled, "calibrate"), split(&labelled, "heldout"));

    // toolgz scenarios: (corpus, its tools, the request).
    let toolgz: Vec<(String, Vec<ToolDefinition>, LabelledQuery)> =
        toolgz_scenarios(&real, &synthetic)?
            .into_iter()
            .map(|s| (s.corpus, s.tools, s.query))
            .collect();

    let mut models: Vec<(&str, Option<Arc<dyn Embedder>>)> = vec![("lexical (BM25F)", None)];
    if let Some(dir) = std::env::var_os("CHEF_STATIC_DIR") {
        let started = Instant::now();
        let m: Arc<dyn Embedder> = Arc::new(chef_dense::StaticEmbedder::load(Path::new(&dir))?);
        eprintln!("static model loaded in {:.0} ms", ms(started));
        models.push(("static hybrid", Some(m)));
    }
    if let Some(dir) = std::env::var_os("CHEF_MINILM_DIR") {
        let started = Instant::now();
        let m: Arc<dyn Embedder> = Arc::new(chef_dense::MiniLm::load(Path::new(&dir))?);
        eprintln!("MiniLM loaded in {:.0} ms", ms(started));
        models.push(("MiniLM hybrid", Some(m)));
    }

    let mut table = Vec::new();
    // Kept until the end: the toolgz rows rebuild indexes through these caches.
    let mut cache_dirs = Vec::new();
    for (label, model) in &models {
        let Some(model) = model else {
            let started = Instant::now();
            let index = CatalogIndex::build(&real);
            let build = format!("{:.1} (no model)", ms(started));
            table.push((
                label.to_string(),
                "default (`Abstention::CALIBRATED`)".to_owned(),
                Ranker::Lexical(index),
                build,
            ));
            continue;
        };
        let cache_dir = tempfile::tempdir()?;
        let cache_path = cache_dir.path().to_owned();
        cache_dirs.push(cache_dir);
        let cached = |m: &Arc<dyn Embedder>| -> Arc<dyn Embedder> {
            Arc::new(CachedEmbedder::new(
                m.clone(),
                VectorCache::new(&cache_path),
            ))
        };
        let defaults = HybridOptions::for_kind(model.kind());
        let started = Instant::now();
        let index = HybridIndex::build(&real, cached(model), defaults)?;
        let cold = ms(started);
        let started = Instant::now();
        let _warm_index = HybridIndex::build(&real, cached(model), defaults)?;
        let warm = ms(started);

        // Calibration, on the calibrate half only: the weight, then the threshold at it.
        println!(
            "\n{label}: dense weight on the calibrate half (never abstaining; picked by (recall@1 + MRR) / 2)\n"
        );
        println!(
            "| weight | recall@1 | recall@5 | MRR | held-out recall@1 | held-out recall@5 | held-out MRR |"
        );
        println!("|---|---|---|---|---|---|---|");
        let curve = dense::weight_curve(&index, &calibration)?;
        let heldout_curve = dense::weight_curve(&index, &heldout)?;
        for ((w, c), (_, h)) in curve.iter().zip(&heldout_curve) {
            println!(
                "| {w:.1} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |",
                c.recall_at_1, c.recall_at_5, c.mrr, h.recall_at_1, h.recall_at_5, h.mrr
            );
        }
        let (weight, _) = dense::calibrate_weight(&index, &calibration)?;
        let index = index.with_dense_weight(weight);
        let (min_cosine, _) =
            dense::calibrate_to_share(&index, &calibration, dense::DEFAULT_ABSTAIN_SHARE)?;
        let index = index.with_min_cosine(min_cosine);
        println!(
            "\n{label}: calibrated weight {weight:.1}, min_cosine {min_cosine:.2}; code defaults ({}) weight {:.1}, min_cosine {:.2}{}",
            model.kind().as_str(),
            defaults.dense_weight,
            defaults.min_cosine,
            if (weight - defaults.dense_weight).abs() < 1e-6
                && (min_cosine - defaults.min_cosine).abs() < 1e-6
            {
                " (same)"
            } else {
                " (DIFFERENT: update the defaults)"
            }
        );
        let best_cosines: Vec<(f32, bool)> = calibration
            .iter()
            .map(|q| Ok((index.best_cosine(&q.query)?, q.expected.is_empty())))
            .collect::<Result<_, Error>>()?;
        let spread = |irrelevant: bool| {
            let mut v: Vec<f64> = best_cosines
                .iter()
                .filter(|(_, i)| *i == irrelevant)
                .map(|(c, _)| f64::from(*c))
                .collect();
            let (median, p95) = percentiles(&mut v);
            let lo = v.first().copied().unwrap_or(f64::NAN);
            let hi = v.last().copied().unwrap_or(f64::NAN);
            format!("min {lo:.3} median {median:.3} p95 {p95:.3} max {hi:.3}")
        };
        println!(
            "{label}: highest cosine on the calibrate half, answerable: {}; unanswerable: {}",
            spread(false),
            spread(true)
        );
        table.push((
            format!("{label} (w {weight:.1})"),
            format!("min_cosine {min_cosine:.2}"),
            Ranker::Hybrid(index),
            format!("{cold:.0} cold / {warm:.1} warm"),
        ));
    }

    println!(
        "\n| ranker | data | abstention | answerable | recall@1 | recall@5 | MRR | false abstention | true abstention | ms/query median / p95; index build ms |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (label, threshold, ranker, build) in &table {
        // Latency over every request, three passes after a warm-up pass.
        for q in &labelled {
            ranker.search(&q.query)?;
        }
        let mut samples = Vec::with_capacity(labelled.len() * 3);
        for _ in 0..3 {
            for q in &labelled {
                let started = Instant::now();
                ranker.search(&q.query)?;
                samples.push(ms(started));
            }
        }
        let (median, p95) = percentiles(&mut samples);
        let timing = format!("{median:.3} / {p95:.3}; {build}");
        row(
            label,
            "retrieval-149 **held-out**",
            threshold,
            &ranker.evaluate(&heldout, true)?,
            &timing,
        );
        row(
            label,
            "retrieval-149 held-out",
            "none",
            &ranker.evaluate(&heldout, false)?,
            "",
        );
        row(
            label,
            "retrieval-149 calibrate (tuned here)",
            threshold,
            &ranker.evaluate(&calibration, true)?,
            "",
        );
        // toolgz: one index per distinct catalogue, prompts weighted equally.
        for (corpus, name) in [
            ("real-149", "toolgz real-149"),
            ("synthetic", "toolgz synthetic-100 (+subsets)"),
        ] {
            for abstain in [true, false] {
                let mut all = Vec::new();
                for (c, tools, query) in &toolgz {
                    if !c.starts_with(corpus) {
                        continue;
                    }
                    let one = std::slice::from_ref(query);
                    all.push(if c == "real-149" {
                        ranker.evaluate(one, abstain)?
                    } else {
                        ranker.rebuilt(tools)?.evaluate(one, abstain)?
                    });
                }
                row(
                    label,
                    name,
                    if abstain { threshold } else { "none" },
                    &mean(&all),
                    "",
                );
            }
        }
    }
    Ok(())
}
