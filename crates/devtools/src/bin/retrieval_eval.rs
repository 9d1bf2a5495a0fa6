//! Retrieval evaluation: recall@1, recall@5, MRR and abstention of the catalogue index.
//!
//! Run with:
//!
//! ```text
//! cargo run --release -p chef-devtools --bin retrieval_eval
//! cargo run --release -p chef-devtools --bin retrieval_eval -- --misses   # also list misses
//! ```
//!
//! Data (all under `tests/fixtures/`):
//! - `retrieval-149.jsonl`: requests written for the 149-tool corpus `real-mcp-tools.json`,
//!   each with its expected tool, plus requests no tool answers (`"expected": []`). Each
//!   line carries `"split"`: the abstention threshold is calibrated on `calibrate` and the
//!   figures that matter are those on `heldout`, which the calibration never sees.
//! - `toolgz-scenarios.json`: the reference benchmark's prompts, each against its corpus
//!   (`real-149` = `real-mcp-tools.json`, `synthetic-100` = `synthetic-100-tools.json`,
//!   `synthetic-100-subset` = the listed `toolNames` of the synthetic catalogue). Every
//!   scenario has expected tools, so only false abstention applies there.
//! - `nestful-tools.json` and `nestful.jsonl`: the public NESTFUL set (173 tools, 1,300
//!   requests needing 2 to 7 tools each, no unanswerable request), converted by
//!   `scripts/retrieval-sets/fetch-nestful.py`; never tuned on, reported per part.
//!
//! After the tables it prints the curves of the opt-in second stage (sibling re-ranking,
//! `IndexOptions::rerank`) for both name scopes, argument evidence and window
//! distinctiveness, with the weight picked on the calibrate half, then the bundled hybrid
//! with argument evidence and with window distinctiveness at a few weights.

use chef_compress::search::{
    Abstention, CatalogIndex, RerankScope, dense,
    eval::{self, LabelledQuery, Metrics, RerankFeature},
};
use chef_devtools::{Error, load_labelled, load_tools, metrics_cells, split, toolgz_scenarios};

fn row(label: &str, threshold: &str, m: &Metrics) {
    println!("| {label} | {threshold} | {} |", metrics_cells(m));
}

/// Recall@1 / recall@5 / MRR, as the re-ranking tables print them.
fn ranking_cell(m: &Metrics) -> String {
    format!("{:.3} / {:.3} / {:.3}", m.recall_at_1, m.recall_at_5, m.mrr)
}

fn describe(a: &Abstention) -> String {
    format!(
        "{:.2}, unknown {:.2}, depth {}, sure {}",
        a.min_coverage, a.unknown_weight, a.explained_by, a.sure_evidence
    )
}

fn misses(index: &CatalogIndex, queries: &[LabelledQuery], abstention: &Abstention) {
    for q in queries {
        let found = index.search_with(&q.query, 5, abstention);
        let top: Vec<&str> = found.hits.iter().map(|h| h.tool.as_str()).collect();
        let ok = if q.expected.is_empty() {
            found.abstained
        } else {
            top.first()
                .is_some_and(|t| q.expected.iter().any(|e| e == t))
        };
        if !ok {
            println!(
                "  miss {:?} expected {:?} got {:?} (confidence {:.2})",
                q.query, q.expected, top, found.confidence
            );
        }
    }
}

/// The four parts of NESTFUL, as `nestful.jsonl` names them in `source`.
const NESTFUL_SOURCES: [&str; 4] = [
    "nestful-glaive",
    "nestful-sgd",
    "nestful-executable",
    "nestful-complexfuncbench",
];

/// The `source` of every line of `nestful.jsonl`, in order.
fn nestful_sources() -> Result<Vec<String>, Error> {
    let text = std::fs::read_to_string(chef_devtools::fixture("nestful.jsonl"))?;
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let value: serde_json::Value = serde_json::from_str(line)?;
        out.push(
            value
                .get("source")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_owned(),
        );
    }
    Ok(out)
}

fn main() -> Result<(), Error> {
    let show_misses = std::env::args().any(|a| a == "--misses");
    let real = load_tools("real-mcp-tools.json")?;
    let synthetic = load_tools("synthetic-100-tools.json")?;
    let real_index = CatalogIndex::build(&real);
    let default = real_index.options().abstention;

    let labelled = load_labelled("retrieval-149.jsonl")?;
    let (calibration, heldout) = (split(&labelled, "calibrate"), split(&labelled, "heldout"));
    let (tuned, tuned_metrics) = eval::calibrate(&real_index, &calibration);

    println!(
        "| set | min_coverage | relevant | recall@1 | recall@5 | MRR | false abstention | true abstention |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let never = "none";
    let dflt = format!("{} (default)", describe(&default));
    let tuned_label = format!("{} (tuned here)", describe(&tuned));
    row("retrieval-149 calibrate", &tuned_label, &tuned_metrics);
    row(
        "retrieval-149 calibrate",
        never,
        &eval::evaluate(&real_index, &calibration, &Abstention::NEVER),
    );
    row(
        "retrieval-149 **heldout**",
        never,
        &eval::evaluate(&real_index, &heldout, &Abstention::NEVER),
    );
    row(
        "retrieval-149 **heldout**",
        &dflt,
        &eval::evaluate(&real_index, &heldout, &default),
    );

    let mut real_queries = Vec::new();
    let mut synthetic_results: Vec<(CatalogIndex, LabelledQuery)> = Vec::new();
    for scenario in toolgz_scenarios(&real, &synthetic)? {
        // Scenarios on the synthetic catalogue each get their own index (full or subset).
        match scenario.corpus.as_str() {
            "real-149" => real_queries.push(scenario.query),
            _ => synthetic_results.push((CatalogIndex::build(&scenario.tools), scenario.query)),
        }
    }
    for (label, abstention) in [(never, Abstention::NEVER), (dflt.as_str(), default)] {
        row(
            "toolgz scenarios, real-149",
            label,
            &eval::evaluate(&real_index, &real_queries, &abstention),
        );
        // Scenarios on the synthetic catalogue each have their own index (full or subset),
        // so their metrics are averaged by hand, weighting every scenario equally.
        let mut sum = Metrics::default();
        for (index, query) in &synthetic_results {
            let m = eval::evaluate(index, std::slice::from_ref(query), &abstention);
            sum.relevant += m.relevant;
            sum.recall_at_1 += m.recall_at_1;
            sum.recall_at_5 += m.recall_at_5;
            sum.mrr += m.mrr;
            sum.false_abstention += m.false_abstention;
        }
        let n = synthetic_results.len().max(1) as f64;
        sum.recall_at_1 /= n;
        sum.recall_at_5 /= n;
        sum.mrr /= n;
        sum.false_abstention /= n;
        row("toolgz scenarios, synthetic-100 (+subsets)", label, &sum);
    }

    // NESTFUL (public, never tuned on): one catalogue of 173 tools, 1,300 requests that
    // each need 2 to 7 tools, no unanswerable request.
    let nestful_tools = load_tools("nestful-tools.json")?;
    let nestful = load_labelled("nestful.jsonl")?;
    let nestful_index = CatalogIndex::build(&nestful_tools);
    let sources = nestful_sources()?;
    for (label, abstention) in [(never, Abstention::NEVER), (dflt.as_str(), default)] {
        row(
            "nestful, all (held-out)",
            label,
            &eval::evaluate(&nestful_index, &nestful, &abstention),
        );
        for source in NESTFUL_SOURCES {
            let part: Vec<LabelledQuery> = nestful
                .iter()
                .zip(&sources)
                .filter(|(_, s)| s.as_str() == source)
                .map(|(q, _)| q.clone())
                .collect();
            row(
                &format!("{source} (held-out)"),
                label,
                &eval::evaluate(&nestful_index, &part, &abstention),
            );
        }
    }

    // The second stage (sibling re-ranking): its curves, never abstaining, on every set;
    // the weight is picked on the retrieval-149 calibrate half alone.
    let base = *real_index.options();
    let small: Vec<LabelledQuery> = nestful
        .iter()
        .zip(&sources)
        .filter(|(_, s)| s.as_str() != "nestful-complexfuncbench")
        .map(|(q, _)| q.clone())
        .collect();
    for feature in [
        RerankFeature::Name(RerankScope::Name),
        RerankFeature::Name(RerankScope::Siblings),
        RerankFeature::Arguments,
        RerankFeature::Distinct,
    ] {
        let (picked, _) = eval::calibrate_rerank(&real, &base, &calibration, feature);
        let weight = feature.weight_in(&picked);
        println!(
            "\nre-rank, {feature:?}, depth {}, never abstaining: recall@1 / recall@5 / MRR; picked on the calibrate half: {weight}",
            eval::RERANK_DEPTH,
        );
        println!(
            "| weight | 149 calibrate | 149 held-out | toolgz real-149 | nestful all | nestful w/o complexfuncbench |"
        );
        println!("|---|---|---|---|---|---|");
        let curves = [
            eval::rerank_curve(&real, &base, &calibration, feature),
            eval::rerank_curve(&real, &base, &heldout, feature),
            eval::rerank_curve(&real, &base, &real_queries, feature),
            eval::rerank_curve(&nestful_tools, &base, &nestful, feature),
            eval::rerank_curve(&nestful_tools, &base, &small, feature),
        ];
        for (i, weight) in eval::RERANK_WEIGHTS.iter().enumerate() {
            let cells: Vec<String> = curves
                .iter()
                .map(|c| c.get(i).map_or(String::new(), |(_, m)| ranking_cell(m)))
                .collect();
            println!("| {weight:.2} | {} |", cells.join(" | "));
        }
    }

    // Argument evidence and window distinctiveness on the default ranker (the bundled
    // hybrid, its default weight), never abstaining: does what the lexical curves show
    // carry over to the mixed score?
    let config = dense::DenseConfig::bundled()?;
    for feature in [RerankFeature::Arguments, RerankFeature::Distinct] {
        println!(
            "\nbundled hybrid, {feature:?}, depth {}, never abstaining: recall@1 / recall@5 / MRR",
            eval::RERANK_DEPTH
        );
        println!(
            "| weight | 149 calibrate | 149 held-out | toolgz real-149 | nestful all | nestful w/o complexfuncbench |"
        );
        println!("|---|---|---|---|---|---|");
        for weight in [0.0, 0.15, 0.3, 0.6] {
            let mut options = config.options;
            options.lexical.rerank = feature.at(weight);
            let hybrid = config.clone().with_options(options);
            let (real_hybrid, nestful_hybrid) =
                (hybrid.build(&real)?, hybrid.build(&nestful_tools)?);
            let mut cells = Vec::new();
            for (index, queries) in [
                (&real_hybrid, &calibration),
                (&real_hybrid, &heldout),
                (&real_hybrid, &real_queries),
                (&nestful_hybrid, &nestful),
                (&nestful_hybrid, &small),
            ] {
                let m = dense::evaluate(index, queries, -1.0)?;
                cells.push(ranking_cell(&m));
            }
            println!("| {weight:.2} | {} |", cells.join(" | "));
        }
    }

    if show_misses {
        println!("\ncalibrate misses (threshold none):");
        misses(&real_index, &calibration, &Abstention::NEVER);
        println!("\nheldout misses (default threshold):");
        misses(&real_index, &heldout, &default);
        println!("\ntoolgz real-149 misses:");
        misses(&real_index, &real_queries, &default);
        println!("\ntoolgz synthetic misses:");
        for (index, query) in &synthetic_results {
            misses(index, std::slice::from_ref(query), &default);
        }
    }
    Ok(())
}
