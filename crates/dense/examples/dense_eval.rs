//! Lexical vs hybrid retrieval: recall@1, recall@5, MRR, abstention, latency and index
//! build time of BM25F alone, BM25F + a static model, and BM25F + MiniLM.
//!
//! Run with (model directories as `.ci/run` prepares them):
//!
//! ```text
//! CHEF_MINILM_DIR=/path/to/all-MiniLM-L6-v2 CHEF_STATIC_DIR=/path/to/static \
//!     cargo run --release -p chef-dense --features dense --example dense_eval
//! ```
//!
//! A model whose variable is unset is left out of the table. Thresholds: the lexical index
//! uses its calibrated default; each hybrid's `min_cosine` is calibrated here on the
//! `calibrate` half of `retrieval-149.jsonl` (`dense::calibrate`) and reported with the
//! figures on the `heldout` half, which calibration never sees. Build times are cold (no
//! vector cache).

#![allow(
    clippy::indexing_slicing,
    reason = "serde_json::Value indexing yields Null for a missing key, it never panics"
)]

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::Instant,
};

use chef_compress::search::{
    Abstention, CatalogIndex,
    dense::{self, Embedder, HybridIndex, HybridOptions},
    eval::{self, LabelledQuery, Metrics},
};
use chef_ir::ToolDefinition;
use serde_json::Value;

type Error = Box<dyn std::error::Error>;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

fn load_tools(name: &str) -> Result<Vec<ToolDefinition>, Error> {
    Ok(chef_ir::load_tools_from_str(&std::fs::read_to_string(fixture(name))?)?.tools)
}

/// A ranker under test: the lexical index, or a hybrid with its model.
enum Ranker {
    Lexical(CatalogIndex),
    Hybrid(HybridIndex, f32),
}

impl Ranker {
    fn build(tools: &[ToolDefinition], model: Option<&Arc<dyn Embedder>>) -> Result<Self, Error> {
        Ok(match model {
            None => Self::Lexical(CatalogIndex::build(tools)),
            Some(m) => {
                let options = HybridOptions::for_kind(m.kind());
                let t = options.min_cosine;
                Self::Hybrid(HybridIndex::build(tools, m.clone(), options)?, t)
            }
        })
    }

    /// The same kind of ranker (same model and threshold) over other tools.
    fn rebuilt(&self, tools: &[ToolDefinition]) -> Result<Self, Error> {
        Ok(match self {
            Self::Lexical(_) => Self::Lexical(CatalogIndex::build(tools)),
            Self::Hybrid(index, t) => Self::Hybrid(
                HybridIndex::build(tools, index.embedder().clone(), *index.options())?,
                *t,
            ),
        })
    }

    fn evaluate(&self, queries: &[LabelledQuery]) -> Result<Metrics, Error> {
        Ok(match self {
            Self::Lexical(index) => eval::evaluate(index, queries, &index.options().abstention),
            Self::Hybrid(index, t) => dense::evaluate(index, queries, *t)?,
        })
    }

    fn search(&self, query: &str) -> Result<usize, Error> {
        Ok(match self {
            Self::Lexical(index) => index.search(query, 5).hits.len(),
            Self::Hybrid(index, t) => index.search_with(query, 5, *t)?.hits.len(),
        })
    }
}

fn row(label: &str, threshold: &str, m: &Metrics, latency_ms: f64, build_ms: f64) {
    let abstain = if m.irrelevant == 0 {
        "n/a".to_owned()
    } else {
        format!("{:.1}% of {}", 100.0 * m.true_abstention, m.irrelevant)
    };
    println!(
        "| {label} | {threshold} | {:.3} | {:.3} | {:.3} | {:.1}% | {abstain} | {latency_ms:.2} | {build_ms:.0} |",
        m.recall_at_1,
        m.recall_at_5,
        m.mrr,
        100.0 * m.false_abstention,
    );
}

fn main() -> Result<(), Error> {
    let real = load_tools("real-mcp-tools.json")?;
    let synthetic = load_tools("synthetic-100-tools.json")?;
    let labelled: Vec<LabelledQuery> = std::fs::read_to_string(fixture("retrieval-149.jsonl"))?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let part = |split: &str| -> Vec<LabelledQuery> {
        labelled
            .iter()
            .filter(|q| q.split.as_deref() == Some(split))
            .cloned()
            .collect()
    };
    let (calibration, heldout) = (part("calibrate"), part("heldout"));

    // toolgz scenarios: (catalogue, request).
    let scenarios: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("toolgz-scenarios.json"))?)?;
    let mut toolgz: Vec<(String, Vec<ToolDefinition>, LabelledQuery)> = Vec::new();
    for scenario in scenarios["scenarios"].as_array().into_iter().flatten() {
        let prompt = scenario["prompt"].as_str().unwrap_or_default();
        let expected: Vec<String> = scenario["expected"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["name"].as_str().map(str::to_owned))
            .collect();
        let query = LabelledQuery::new(prompt, expected);
        let corpus = scenario["corpus"].as_str().unwrap_or_default().to_owned();
        let tools = match corpus.as_str() {
            "real-149" => real.clone(),
            "synthetic-100" => synthetic.clone(),
            "synthetic-100-subset" => scenario["toolNames"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter_map(|n| synthetic.iter().find(|t| t.name == *n).cloned())
                .collect(),
            other => return Err(format!("unknown corpus {other:?}").into()),
        };
        toolgz.push((corpus, tools, query));
    }

    let mut models: Vec<(&str, Option<Arc<dyn Embedder>>)> = vec![("lexical (BM25F)", None)];
    if let Some(dir) = std::env::var_os("CHEF_STATIC_DIR") {
        let started = Instant::now();
        let m: Arc<dyn Embedder> = Arc::new(chef_dense::StaticEmbedder::load(Path::new(&dir))?);
        eprintln!(
            "static model loaded in {:.0} ms",
            started.elapsed().as_secs_f64() * 1e3
        );
        models.push(("static hybrid (w 0.5)", Some(m)));
    }
    if let Some(dir) = std::env::var_os("CHEF_MINILM_DIR") {
        let started = Instant::now();
        let m: Arc<dyn Embedder> = Arc::new(chef_dense::MiniLm::load(Path::new(&dir))?);
        eprintln!(
            "MiniLM loaded in {:.0} ms",
            started.elapsed().as_secs_f64() * 1e3
        );
        models.push(("MiniLM hybrid (w 0.7)", Some(m)));
    }

    println!(
        "| ranker, data | abstention threshold | recall@1 | recall@5 | MRR | false abstention | true abstention | ms/query | index build ms |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (label, model) in &models {
        let started = Instant::now();
        let ranker = Ranker::build(&real, model.as_ref())?;
        let build_ms = started.elapsed().as_secs_f64() * 1e3;
        let (ranker, threshold) = match ranker {
            Ranker::Hybrid(index, _) => {
                let (t, _) = dense::calibrate(&index, &calibration)?;
                (
                    Ranker::Hybrid(index, t),
                    format!("min_cosine {t:.2} (tuned on calibrate)"),
                )
            }
            lexical @ Ranker::Lexical(_) => (lexical, "calibrated default".to_owned()),
        };
        let started = Instant::now();
        for q in &heldout {
            ranker.search(&q.query)?;
        }
        let latency = started.elapsed().as_secs_f64() * 1e3 / heldout.len().max(1) as f64;
        row(
            &format!("{label}, retrieval-149 heldout"),
            &threshold,
            &ranker.evaluate(&heldout)?,
            latency,
            build_ms,
        );
        if let Ranker::Hybrid(index, _) = &ranker {
            row(
                &format!("{label}, retrieval-149 heldout"),
                "none",
                &dense::evaluate(index, &heldout, -1.0)?,
                latency,
                build_ms,
            );
        } else if let Ranker::Lexical(index) = &ranker {
            row(
                &format!("{label}, retrieval-149 heldout"),
                "none",
                &eval::evaluate(index, &heldout, &Abstention::NEVER),
                latency,
                build_ms,
            );
        }

        // toolgz: one index per distinct catalogue, scenarios weighted equally.
        for corpus in ["real-149", "synthetic"] {
            let mut sum = Metrics::default();
            let mut n = 0.0;
            for (c, tools, query) in &toolgz {
                if c.starts_with(corpus) {
                    let m = if c == "real-149" {
                        ranker.evaluate(std::slice::from_ref(query))?
                    } else {
                        ranker
                            .rebuilt(tools)?
                            .evaluate(std::slice::from_ref(query))?
                    };
                    sum.recall_at_1 += m.recall_at_1;
                    sum.recall_at_5 += m.recall_at_5;
                    sum.mrr += m.mrr;
                    sum.false_abstention += m.false_abstention;
                    n += 1.0;
                }
            }
            let n: f64 = if n > 0.0 { n } else { 1.0 };
            sum.recall_at_1 /= n;
            sum.recall_at_5 /= n;
            sum.mrr /= n;
            sum.false_abstention /= n;
            row(
                &format!("{label}, toolgz {corpus} ({n} prompts)"),
                &threshold,
                &sum,
                f64::NAN,
                f64::NAN,
            );
        }
    }
    Ok(())
}
