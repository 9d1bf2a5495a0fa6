//! Measuring retrieval: recall@1, recall@5, MRR and abstention on labelled requests, and
//! calibrating the abstention threshold.
//!
//! A labelled request names the tools that answer it (`expected`); an empty list marks a
//! request that no tool in the catalogue answers, where the right answer is to abstain.
//! The JSON Lines form (`tests/fixtures/retrieval-149.jsonl`) is one object per line:
//!
//! ```json
//! {"query":"which files are in my drive folder","expected":["gdrive_list_files"],"split":"calibrate"}
//! {"query":"bake a chocolate cake","expected":[],"split":"heldout"}
//! ```
//!
//! # Definitions
//!
//! Over the requests with at least one expected tool (abstaining counts as finding none):
//! - recall@k: the share of the expected tools found in the top k, divided by
//!   `min(k, expected)` so that a request needing two tools can still score 1 at k = 1
//!   when it finds one of them;
//! - MRR: the mean of `1 / rank` of the first expected tool in the top 10 (0 if absent);
//! - false abstention: the share of these requests on which the index abstained.
//!
//! Over the requests with no expected tool: true abstention, the share on which it
//! abstained.

use serde::{Deserialize, Serialize};

use crate::search::{Abstention, CatalogIndex, Rerank, RerankScope};

/// The depth MRR looks at.
pub const MRR_DEPTH: usize = 10;

/// One request with the tools that answer it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelledQuery {
    /// The request as a user would type it.
    pub query: String,
    /// The tools that answer it, in the order a task would call them; empty when no tool
    /// in the catalogue answers it.
    #[serde(default)]
    pub expected: Vec<String>,
    /// Which part of a data set the request belongs to (`calibrate` or `heldout`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<String>,
}

impl LabelledQuery {
    /// A request answered by `expected` (empty: answered by nothing).
    pub fn new<I, S>(query: impl Into<String>, expected: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            query: query.into(),
            expected: expected.into_iter().map(Into::into).collect(),
            split: None,
        }
    }
}

/// Retrieval quality over a set of labelled requests.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Metrics {
    /// Requests with at least one expected tool.
    pub relevant: usize,
    /// Requests that no tool answers.
    pub irrelevant: usize,
    /// Mean recall@1 over relevant requests.
    pub recall_at_1: f64,
    /// Mean recall@5 over relevant requests.
    pub recall_at_5: f64,
    /// Mean reciprocal rank (depth [`MRR_DEPTH`]) over relevant requests.
    pub mrr: f64,
    /// Share of relevant requests on which the index abstained (lower is better).
    pub false_abstention: f64,
    /// Share of irrelevant requests on which the index abstained (higher is better).
    pub true_abstention: f64,
}

/// What the index did with one request, before any threshold.
struct Outcome {
    expected: usize,
    /// 1-based ranks (within [`MRR_DEPTH`]) of the expected tools found.
    ranks: Vec<usize>,
    confidence: f32,
    evidence: f32,
    best_score: f32,
    matched_anything: bool,
}

fn outcomes(
    index: &CatalogIndex,
    queries: &[LabelledQuery],
    settings: &Abstention,
) -> Vec<Outcome> {
    let rank_only = Abstention {
        min_coverage: 0.0,
        min_score: 0.0,
        ..*settings
    };
    queries
        .iter()
        .map(|q| {
            let found = index.search_with(&q.query, MRR_DEPTH, &rank_only);
            let ranks = ranks_of(&found.hits, &q.expected);
            Outcome {
                expected: q.expected.len(),
                ranks,
                confidence: found.confidence,
                evidence: found.evidence,
                best_score: found.hits.first().map_or(0.0, |h| h.score),
                matched_anything: !found.hits.is_empty(),
            }
        })
        .collect()
}

fn metrics(outcomes: &[Outcome], abstention: &Abstention) -> Metrics {
    score(outcomes.iter().map(|o| {
        let abstained =
            !o.matched_anything || abstention.abstains(o.confidence, o.evidence, o.best_score);
        (o.expected, o.ranks.as_slice(), abstained)
    }))
}

/// The 1-based ranks (within [`MRR_DEPTH`]) of `expected` tools among `hits`.
pub(crate) fn ranks_of(hits: &[crate::search::Hit], expected: &[String]) -> Vec<usize> {
    hits.iter()
        .enumerate()
        .filter(|(_, h)| expected.iter().any(|e| h.tool.as_str() == e))
        .map(|(i, _)| i + 1)
        .collect()
}

/// The metrics of scored requests, each given as (expected tools, 1-based ranks of the
/// expected tools found, whether the ranker abstained). Shared by the lexical and the
/// hybrid evaluation, so both report the same definitions.
pub(crate) fn score<'a>(outcomes: impl Iterator<Item = (usize, &'a [usize], bool)>) -> Metrics {
    let mut m = Metrics::default();
    let (mut r1, mut r5, mut mrr, mut false_abs, mut true_abs) = (0.0, 0.0, 0.0, 0, 0);
    for (expected, ranks, abstained) in outcomes {
        if expected == 0 {
            m.irrelevant += 1;
            true_abs += usize::from(abstained);
            continue;
        }
        m.relevant += 1;
        if abstained {
            false_abs += 1;
            continue;
        }
        let within = |k: usize| ranks.iter().filter(|&&r| r <= k).count() as f64;
        r1 += within(1) / expected.min(1) as f64;
        r5 += within(5) / expected.min(5) as f64;
        mrr += ranks.first().map_or(0.0, |&r| 1.0 / r as f64);
    }
    let rel = m.relevant.max(1) as f64;
    m.recall_at_1 = r1 / rel;
    m.recall_at_5 = r5 / rel;
    m.mrr = mrr / rel;
    m.false_abstention = false_abs as f64 / rel;
    m.true_abstention = true_abs as f64 / m.irrelevant.max(1) as f64;
    m
}

/// Measures `index` on `queries` with the given threshold.
pub fn evaluate(
    index: &CatalogIndex,
    queries: &[LabelledQuery],
    abstention: &Abstention,
) -> Metrics {
    metrics(&outcomes(index, queries, abstention), abstention)
}

/// Explanation depths tried by [`calibrate`].
pub const CALIBRATION_DEPTHS: [usize; 4] = [1, 2, 3, 5];

/// Sure-evidence levels tried by [`calibrate`] (infinity: off).
pub const CALIBRATION_EVIDENCE: [f32; 8] = [f32::INFINITY, 25.0, 20.0, 15.0, 12.0, 10.0, 8.0, 6.0];

/// The abstention settings that maximise `(recall@5 + true abstention) / 2` on `queries`,
/// with their metrics. Searched: the coverage threshold from 0.00 to 0.95 in steps of
/// 0.01, the unknown-word weight from 0.25 to 1.00 in steps of 0.25, and the explanation
/// depths [`CALIBRATION_DEPTHS`]. Ties go to the earliest setting tried (shallowest depth,
/// lightest unknown weight, lowest threshold). Without irrelevant requests the objective is
/// recall@5 alone, and the threshold is 0.
pub fn calibrate(index: &CatalogIndex, queries: &[LabelledQuery]) -> (Abstention, Metrics) {
    let mut best: Option<(f64, Abstention, Metrics)> = None;
    for explained_by in CALIBRATION_DEPTHS {
        for quarter in 1..=4_u8 {
            for sure_evidence in CALIBRATION_EVIDENCE {
                let settings = Abstention {
                    unknown_weight: f32::from(quarter) / 4.0,
                    explained_by,
                    sure_evidence,
                    ..Abstention::NEVER
                };
                let outcomes = outcomes(index, queries, &settings);
                for step in 0..=95_u8 {
                    let abstention = Abstention {
                        min_coverage: f32::from(step) / 100.0,
                        ..settings
                    };
                    keep_best(&mut best, abstention, metrics(&outcomes, &abstention));
                }
            }
        }
    }
    best.map_or((Abstention::NEVER, Metrics::default()), |(_, a, m)| (a, m))
}

/// Keeps `setting` as a calibration's `best` when its metrics `m` score higher on the
/// objective, `(recall@5 + true abstention) / 2` (recall@5 alone without irrelevant
/// requests); on a tie the setting tried first stays.
pub(crate) fn keep_best<T>(best: &mut Option<(f64, T, Metrics)>, setting: T, m: Metrics) {
    let objective = if m.irrelevant == 0 {
        m.recall_at_5
    } else {
        (m.recall_at_5 + m.true_abstention) / 2.0
    };
    if best.as_ref().is_none_or(|(b, _, _)| objective > *b + 1e-12) {
        *best = Some((objective, setting, m));
    }
}

/// The name weights [`calibrate_rerank`] tries: 0.00 to 0.60 in steps of 0.05.
pub const RERANK_WEIGHTS: [f32; 13] = [
    0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6,
];

/// The depth [`calibrate_rerank`] re-ranks to.
pub const RERANK_DEPTH: usize = Rerank::DEFAULT_DEPTH;

/// The second stage's features, as [`rerank_curve`] and [`calibrate_rerank`] vary them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RerankFeature {
    /// The unasked share of the name ([`Rerank::name_weight`]) in this scope.
    Name(RerankScope),
    /// Argument evidence ([`Rerank::argument_weight`]).
    Arguments,
    /// Window distinctiveness ([`Rerank::distinct_weight`]).
    Distinct,
}

impl RerankFeature {
    /// The setting with this feature at `weight` and the others off (depth
    /// [`RERANK_DEPTH`]).
    pub fn at(self, weight: f32) -> Rerank {
        match self {
            Self::Name(scope) => Rerank::names(weight, scope),
            Self::Arguments => Rerank::arguments(weight),
            Self::Distinct => Rerank::distinct(weight),
        }
    }

    /// This feature's weight in `rerank` (what [`at`](Self::at) set).
    pub fn weight_in(self, rerank: &Rerank) -> f32 {
        match self {
            Self::Name(_) => rerank.name_weight,
            Self::Arguments => rerank.argument_weight,
            Self::Distinct => rerank.distinct_weight,
        }
    }
}

impl From<RerankScope> for RerankFeature {
    fn from(scope: RerankScope) -> Self {
        Self::Name(scope)
    }
}

/// The metrics, never abstaining, of the index over `tools` (built with `options`) with the
/// second stage's `feature` at each weight of [`RERANK_WEIGHTS`] (depth [`RERANK_DEPTH`]),
/// in that order: the curve [`calibrate_rerank`] picks from. The index is built once, with
/// the feature on, so argument evidence is gathered.
pub fn rerank_curve(
    tools: &[chef_ir::ToolDefinition],
    options: &crate::search::IndexOptions,
    queries: &[LabelledQuery],
    feature: impl Into<RerankFeature>,
) -> Vec<(Rerank, Metrics)> {
    let feature = feature.into();
    // Any weight above 0 builds the index with what the feature reads.
    let built = crate::search::IndexOptions {
        rerank: feature.at(1.0),
        ..*options
    };
    let mut index = CatalogIndex::build_with(tools, &built);
    RERANK_WEIGHTS
        .iter()
        .map(|&weight| {
            let rerank = feature.at(weight);
            index.options.rerank = rerank;
            (rerank, evaluate(&index, queries, &Abstention::NEVER))
        })
        .collect()
}

/// The second-stage setting (of [`rerank_curve`]) that maximises the mean of recall@1 and
/// MRR over the answerable requests, never abstaining, with its metrics; ties go to the
/// lighter weight. The objective is that of the hybrid's weight
/// ([`dense::calibrate_weight`](crate::search::dense::calibrate_weight)): the stage orders,
/// it does not decide whether to answer.
pub fn calibrate_rerank(
    tools: &[chef_ir::ToolDefinition],
    options: &crate::search::IndexOptions,
    queries: &[LabelledQuery],
    feature: impl Into<RerankFeature>,
) -> (Rerank, Metrics) {
    let mut best: Option<(f64, Rerank, Metrics)> = None;
    for (rerank, m) in rerank_curve(tools, options, queries, feature) {
        let objective = (m.recall_at_1 + m.mrr) / 2.0;
        if best.as_ref().is_none_or(|(b, _, _)| objective > *b + 1e-12) {
            best = Some((objective, rerank, m));
        }
    }
    best.map_or((Rerank::OFF, Metrics::default()), |(_, r, m)| (r, m))
}
