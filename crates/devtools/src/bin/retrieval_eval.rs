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

use chef_compress::search::{
    Abstention, CatalogIndex,
    eval::{self, LabelledQuery, Metrics},
};
use chef_devtools::{Error, load_labelled, load_tools, metrics_cells, split, toolgz_scenarios};

fn row(label: &str, threshold: &str, m: &Metrics) {
    println!("| {label} | {threshold} | {} |", metrics_cells(m));
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
