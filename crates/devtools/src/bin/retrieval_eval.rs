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

#![allow(
    clippy::indexing_slicing,
    reason = "serde_json::Value indexing yields Null for a missing key, it never panics"
)]

use std::path::{Path, PathBuf};

use chef_compress::search::{
    Abstention, CatalogIndex,
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
    let text = std::fs::read_to_string(fixture(name))?;
    Ok(chef_ir::load_tools_from_str(&text)?.tools)
}

fn load_labelled(name: &str) -> Result<Vec<LabelledQuery>, Error> {
    let text = std::fs::read_to_string(fixture(name))?;
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        out.push(serde_json::from_str(line)?);
    }
    Ok(out)
}

fn row(label: &str, threshold: &str, m: &Metrics) {
    let abstain = if m.irrelevant == 0 {
        "n/a".to_owned()
    } else {
        format!("{:.1}% of {}", 100.0 * m.true_abstention, m.irrelevant)
    };
    println!(
        "| {label} | {threshold} | {} | {:.3} | {:.3} | {:.3} | {:.1}% | {abstain} |",
        m.relevant,
        m.recall_at_1,
        m.recall_at_5,
        m.mrr,
        100.0 * m.false_abstention,
    );
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
    let part = |split: &str| -> Vec<LabelledQuery> {
        labelled
            .iter()
            .filter(|q| q.split.as_deref() == Some(split))
            .cloned()
            .collect()
    };
    let (calibration, heldout) = (part("calibrate"), part("heldout"));
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

    let scenarios: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("toolgz-scenarios.json"))?)?;
    let mut real_queries = Vec::new();
    let mut synthetic_results: Vec<(CatalogIndex, LabelledQuery)> = Vec::new();
    for scenario in scenarios["scenarios"].as_array().into_iter().flatten() {
        let prompt = scenario["prompt"].as_str().unwrap_or_default();
        let expected: Vec<String> = scenario["expected"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["name"].as_str().map(str::to_owned))
            .collect();
        let query = LabelledQuery::new(prompt, expected);
        match scenario["corpus"].as_str() {
            Some("real-149") => real_queries.push(query),
            Some("synthetic-100") => {
                synthetic_results.push((CatalogIndex::build(&synthetic), query));
            }
            Some("synthetic-100-subset") => {
                let names: Vec<&str> = scenario["toolNames"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                let subset: Vec<ToolDefinition> = names
                    .iter()
                    .filter_map(|n| synthetic.iter().find(|t| t.name == *n).cloned())
                    .collect();
                synthetic_results.push((CatalogIndex::build(&subset), query));
            }
            other => return Err(format!("unknown corpus {other:?}").into()),
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
