//! The second stage's relevance model: trains it on public labelled data and measures it
//! beside the first stage.
//!
//! ```text
//! python3 scripts/retrieval-sets/pool.py          # target/pool/ (the pooled 421 tools)
//! cargo run --release -p chef-devtools --bin relevance_train
//! ```
//!
//! Training data: NESTFUL's `calibrate` half only (public, Apache-2.0, see
//! tests/fixtures/nestful-NOTICE.md), each request against NESTFUL's 173 tools and against
//! the pooled 421, as written and as its catalogue words, and once more against each
//! catalogue without the request's expected tools (the same words, now unanswerable): the
//! first stage's best [`DEPTH`] candidates, labelled by whether they are expected.
//! The abstention threshold is then picked on retrieval-149's `calibrate` half (90% of its
//! 30 unanswerable requests refused) and every other row is reported with it: nothing was
//! tuned on retrieval-149's held-out half, the pool's held-out requests or NESTFUL's
//! held-out half.

use std::sync::Arc;

use chef_compress::search::{
    dense::{
        self, BundledStatic, Embedder, Example, FEATURE_NAMES, HybridIndex, HybridOptions,
        ModelKind, RelevanceModel, SecondStage,
    },
    eval::{LabelledQuery, Metrics},
};
use chef_devtools::{Error, keywords, load_labelled, load_tools, metrics_cells, read_jsonl, split};
use chef_ir::ToolDefinition;

/// Candidates read per request (the issue's 30).
const DEPTH: usize = 30;

fn build(tools: &[ToolDefinition], model: &Arc<dyn Embedder>) -> Result<HybridIndex, Error> {
    Ok(HybridIndex::build(
        tools,
        model.clone(),
        HybridOptions::for_kind(ModelKind::Static),
    )?)
}

fn keyword_form(queries: &[LabelledQuery]) -> Vec<LabelledQuery> {
    queries
        .iter()
        .map(|q| LabelledQuery {
            query: keywords(&q.query),
            ..q.clone()
        })
        .collect()
}

/// Adds the candidates of `query` on `index`, labelled by `expected`, sharing weight 1.
fn add(
    examples: &mut Vec<Example>,
    index: &HybridIndex,
    query: &str,
    expected: &[String],
) -> Result<(), Error> {
    let candidates = index.candidates(query, DEPTH)?;
    let weight = 1.0 / candidates.len().max(1) as f32;
    for c in candidates {
        examples.push(Example {
            features: c.features,
            relevant: expected.iter().any(|e| e == c.hit.tool.as_str()),
            weight,
        });
    }
    Ok(())
}

fn without(tools: &[ToolDefinition], names: &[String]) -> Vec<ToolDefinition> {
    tools
        .iter()
        .filter(|t| !names.iter().any(|n| n == t.name.as_str()))
        .cloned()
        .collect()
}

fn row(set: &str, ranker: &str, m: &Metrics) {
    println!("| {set} | {ranker} | {} |", metrics_cells(m));
}

/// True abstention of the second stage (and of the first stage's default) on requests
/// made unanswerable by removing their expected tools from `tools`.
fn removed_gold(
    tools: &[ToolDefinition],
    queries: &[LabelledQuery],
    model: &Arc<dyn Embedder>,
    stage: &SecondStage,
) -> Result<(f64, f64), Error> {
    let (mut first, mut second) = (0, 0);
    for q in queries {
        let index = build(&without(tools, &q.expected), model)?;
        first += usize::from(index.search(&q.query, 5)?.abstained);
        second += usize::from(index.search_second_stage(&q.query, 5, stage)?.abstained);
    }
    let n = queries.len().max(1) as f64;
    Ok((first as f64 / n, second as f64 / n))
}

/// One request's outcome under every rule the experiment compares.
struct Outcome {
    expected: Vec<String>,
    first: Vec<String>,
    second: Vec<String>,
    /// Abstention scores, higher = surer: p over the catalogue words' candidates, p over
    /// the request's, the first stage's on the catalogue words and on the request (best
    /// cosine, or 9 where BM25F's own rule answers).
    scores: [f32; 5],
}

const SCORES: [&str; 4] = [
    "p(known words)",
    "p(request)",
    "first stage(known words)",
    "first stage(request)",
];

fn outcome(index: &HybridIndex, q: &LabelledQuery, stage: &SecondStage) -> Result<Outcome, Error> {
    let first: Vec<String> = index
        .search_with(&q.query, 10, f32::NEG_INFINITY)?
        .hits
        .iter()
        .map(|h| h.tool.as_str().to_owned())
        .collect();
    let judged = index.judge(&q.query, stage)?;
    let second = judged
        .ranked
        .iter()
        .take(10)
        .map(|(_, c)| c.hit.tool.as_str().to_owned())
        .collect();
    let p_full = judged.ranked.first().map_or(0.0, |r| r.0);
    let known = index.lexical().known_words(&q.query);
    let fs = |text: &str| -> Result<f32, Error> {
        if text.trim().is_empty() {
            return Ok(-1.0);
        }
        Ok(if index.lexical_abstains(text) {
            index.best_cosine(text)?
        } else {
            9.0
        })
    };
    Ok(Outcome {
        expected: q.expected.clone(),
        first,
        second,
        scores: [
            judged.relevance,
            p_full,
            fs(&known)?,
            fs(&q.query)?,
            judged.relevance.max(p_full),
        ],
    })
}

fn threshold(irrelevant: &[f32], share: f64) -> f32 {
    let mut v = irrelevant.to_vec();
    v.sort_by(f32::total_cmp);
    let k = ((share * v.len() as f64).ceil() as usize).max(1);
    // No irrelevant request: a threshold nothing reaches.
    v.get(k - 1).map_or(f32::INFINITY, |x| x + 1e-6)
}

fn cells(outcomes: &[Outcome], second: bool, score: usize, tau: f32) -> String {
    let (mut rel, mut irr, mut r1, mut r5, mut mrr, mut fa, mut ta) =
        (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for o in outcomes {
        let abst = o.scores.get(score).is_none_or(|&x| x < tau);
        if o.expected.is_empty() {
            irr += 1.0;
            ta += f64::from(u8::from(abst));
            continue;
        }
        rel += 1.0;
        if abst {
            fa += 1.0;
            continue;
        }
        let list = if second { &o.second } else { &o.first };
        let ranks: Vec<usize> = list
            .iter()
            .enumerate()
            .filter(|(_, t)| o.expected.contains(t))
            .map(|(i, _)| i + 1)
            .collect();
        let within = |k: usize| ranks.iter().filter(|&&r| r <= k).count() as f64;
        r1 += within(1) / o.expected.len().min(1) as f64;
        r5 += within(5) / o.expected.len().min(5) as f64;
        mrr += ranks.first().map_or(0.0, |&r| 1.0 / r as f64);
    }
    let rel1 = f64::max(rel, 1.0);
    format!(
        "{:.3} | {:.3} | {:.3} | {:.1}% | {}",
        r1 / rel1,
        r5 / rel1,
        mrr / rel1,
        100.0 * fa / rel1,
        if irr > 0.0 {
            format!("{:.1}% of {irr}", 100.0 * ta / irr)
        } else {
            "n/a".to_owned()
        }
    )
}

fn experiment(
    sets: &[(&str, &HybridIndex, Vec<LabelledQuery>)],
    calibrate: (&HybridIndex, &[LabelledQuery]),
    stage: &SecondStage,
) -> Result<(), Error> {
    let cal: Vec<Outcome> = calibrate
        .1
        .iter()
        .filter(|q| q.expected.is_empty())
        .map(|q| outcome(calibrate.0, q, stage))
        .collect::<Result<_, _>>()?;
    let taus: Vec<f32> = (0..SCORES.len())
        .map(|s| {
            let scores: Vec<f32> = cal
                .iter()
                .filter_map(|o| o.scores.get(s).copied())
                .collect();
            threshold(&scores, 0.9)
        })
        .collect();
    for (s, t) in SCORES.iter().zip(&taus) {
        println!("threshold {s}: {t}");
    }
    println!(
        "| set | ranking | abstention | recall@1 | recall@5 | MRR | false abst. | true abst. |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (set, index, queries) in sets {
        let outcomes: Vec<Outcome> = queries
            .iter()
            .map(|q| outcome(index, q, stage))
            .collect::<Result<_, _>>()?;
        for second in [false, true] {
            let ranking = if second { "second" } else { "first" };
            println!(
                "| {set} | {ranking} | never | {} |",
                cells(&outcomes, second, 0, f32::NEG_INFINITY)
            );
            for (s, name) in SCORES.iter().enumerate() {
                println!(
                    "| {set} | {ranking} | {name} | {} |",
                    cells(
                        &outcomes,
                        second,
                        s,
                        taus.get(s).copied().unwrap_or(f32::INFINITY)
                    )
                );
            }
        }
    }
    Ok(())
}

fn main() -> Result<(), Error> {
    let l2: f64 = std::env::var("L2")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1e-3);
    let iterations: usize = std::env::var("ITER")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let model: Arc<dyn Embedder> = BundledStatic::shared()?;
    let real = load_tools("real-mcp-tools.json")?;
    let nestful_tools = load_tools("nestful-tools.json")?;
    let pooled: Vec<ToolDefinition> = {
        let text = std::fs::read_to_string("target/pool/pooled-tools.json")
            .map_err(|e| format!("target/pool/pooled-tools.json: {e} (run pool.py first)"))?;
        chef_ir::load_tools_from_str(&text)?.tools
    };
    let r149 = load_labelled("retrieval-149.jsonl")?;
    let nestful = load_labelled("nestful.jsonl")?;
    let nestful_train = split(&nestful, "calibrate");
    let nestful_heldout = split(&nestful, "heldout");

    let mut examples = Vec::new();
    for (name, tools) in [("nestful-173", &nestful_tools), ("pooled-421", &pooled)] {
        let index = build(tools, &model)?;
        for q in &nestful_train {
            add(&mut examples, &index, &q.query, &q.expected)?;
            let known = index.lexical().known_words(&q.query);
            add(&mut examples, &index, &known, &q.expected)?;
            let reduced = build(&without(tools, &q.expected), &model)?;
            add(&mut examples, &reduced, &q.query, &[])?;
            let known = reduced.lexical().known_words(&q.query);
            add(&mut examples, &reduced, &known, &[])?;
        }
        eprintln!("{name}: {} examples so far", examples.len());
    }
    let trained = dense::train(&examples, l2, iterations);
    println!(
        "trained (l2 {l2}, {iterations} iterations, {} examples):",
        examples.len()
    );
    for (w, name) in trained.weights.iter().zip(FEATURE_NAMES) {
        println!("  {w:>10.5}  {name}");
    }
    println!("  {:>10.5}  bias", trained.bias);
    println!(
        "RelevanceModel {{ weights: {:?}, bias: {:?} }}",
        trained.weights, trained.bias
    );
    let relevance = RelevanceModel { ..trained };

    let real_index = build(&real, &model)?;
    let calibrate_half = split(&r149, "calibrate");
    let irrelevant: Vec<&str> = calibrate_half
        .iter()
        .filter(|q| q.expected.is_empty())
        .map(|q| q.query.as_str())
        .collect();
    let mut stage = SecondStage {
        model: relevance,
        depth: DEPTH,
        min_relevance: 0.0,
    };
    let never = stage;
    stage.min_relevance = dense::calibrate_min_relevance(&real_index, &irrelevant, &stage, 0.9)?;
    println!(
        "min_relevance {} (refuses 90% of retrieval-149 calibrate's {} unanswerable)",
        stage.min_relevance,
        irrelevant.len()
    );

    let pool_index = build(&pooled, &model)?;
    let nestful_index = build(&nestful_tools, &model)?;
    let pool_heldout = read_jsonl("target/pool/heldout.jsonl")?;
    let heldout = split(&r149, "heldout");
    println!(
        "| set | ranker | answerable | recall@1 | recall@5 | MRR | false abst. | true abst. |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let sets: [(&str, &HybridIndex, Vec<LabelledQuery>); 7] = [
        (
            "retrieval-149 calibrate",
            &real_index,
            calibrate_half.clone(),
        ),
        ("retrieval-149 held-out", &real_index, heldout.clone()),
        (
            "retrieval-149 held-out, keywords",
            &real_index,
            keyword_form(&heldout),
        ),
        ("pooled 421 held-out", &pool_index, pool_heldout.clone()),
        (
            "pooled 421 held-out, keywords",
            &pool_index,
            keyword_form(&pool_heldout),
        ),
        (
            "NESTFUL held-out (173)",
            &nestful_index,
            nestful_heldout.clone(),
        ),
        (
            "NESTFUL held-out, keywords",
            &nestful_index,
            keyword_form(&nestful_heldout),
        ),
    ];
    if std::env::var_os("EXPERIMENT").is_some() {
        return experiment(&sets, (&real_index, &calibrate_half), &stage);
    }
    for (set, index, queries) in &sets {
        row(
            set,
            "first stage, default",
            &dense::evaluate(index, queries, index.options().min_cosine)?,
        );
        // What ships with the bundled model: the first stage's tools and abstention, its
        // best ten in the second stage's order (ranks 1-5 and 6-10 each sorted).
        let ordered = (*index).clone().with_second_stage(true);
        row(
            set,
            "first stage, second-stage order (shipped)",
            &dense::evaluate(&ordered, queries, index.options().min_cosine)?,
        );
        row(
            set,
            "first stage, never abstaining",
            &dense::evaluate(index, queries, f32::NEG_INFINITY)?,
        );
        row(
            set,
            "second stage",
            &dense::evaluate_second_stage(index, queries, &stage)?,
        );
        row(
            set,
            "second stage, never abstaining",
            &dense::evaluate_second_stage(index, queries, &never)?,
        );
    }
    let (first, second) = removed_gold(&nestful_tools, &nestful_heldout, &model, &stage)?;
    println!(
        "NESTFUL held-out, expected tools removed ({}): true abstention first stage {:.1}%, second stage {:.1}%",
        nestful_heldout.len(),
        100.0 * first,
        100.0 * second
    );
    let (first, second) = removed_gold(&pooled, &nestful_heldout, &model, &stage)?;
    println!(
        "NESTFUL held-out on the pooled 421, expected tools removed: first stage {:.1}%, second stage {:.1}%",
        100.0 * first,
        100.0 * second
    );
    Ok(())
}
