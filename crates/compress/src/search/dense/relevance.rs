//! The second stage: a relevance estimate for the hybrid's best candidates.
//!
//! The first stage ([`HybridIndex::search`]) ranks every tool by a mix of BM25F and a
//! cosine, and abstains on a threshold over the best cosine, which does not carry over from
//! one catalogue to another: a larger catalogue has more near misses. The second stage
//! reads [`FEATURES`] numbers about each of the first stage's best
//! [`SecondStage::depth`] candidates (the cosine and its margins, BM25F's coverage of the
//! request, the margins over the other candidates, …; [`FEATURE_NAMES`]) and turns
//! them into a probability that the tool answers the request with a logistic model
//! ([`RelevanceModel`]) learned from public labelled data (NESTFUL's calibrate half, see
//! docs/PERFORMANCE.md). Most features are shares and margins, not raw scores, meant to
//! read the same on 100 tools as on 10,000; measured, its threshold carries over from 149
//! tools to 421 no better than the cosine's, so its abstention is opt-in and the hybrid's
//! abstention stays the default (docs/PERFORMANCE.md, "A second stage").
//!
//! Its ranking is the default, inside limits: with the bundled static model
//! ([`HybridOptions::second_stage`](super::HybridOptions::second_stage)) the hybrid's best
//! ten are re-ordered by the probability, the best five among themselves and the next five
//! among themselves ([`REORDERED_BLOCKS`]), so which tools are in the best five and ten,
//! and abstention, stay the first stage's (docs/PERFORMANCE.md, "The second stage by
//! default").
//!
//! The whole stage ([`HybridIndex::search_second_stage`]) re-orders all its candidates by
//! that probability and abstains when no candidate of the
//! request's *catalogue words* ([`CatalogIndex::known_words`](crate::search::CatalogIndex::known_words))
//! reaches [`SecondStage::min_relevance`]: the verdict reads only the words some tool
//! mentions, so words that no tool mentions ("with Bob next Tuesday at 10am") cannot turn
//! a request that finds a tool into "nothing fits".

use super::{DenseError, HybridIndex, index::Scored};
use crate::search::{Hit, SearchResults};

/// The ranks (0-based, end excluded) the default re-ordering
/// ([`HybridOptions::second_stage`](super::HybridOptions::second_stage)) sorts among
/// themselves: the best five, then the next five. Which tools are in the best five and the
/// best ten never changes.
pub const REORDERED_BLOCKS: [std::ops::Range<usize>; 2] = [0..5, 5..10];

/// How many numbers the second stage reads about one candidate.
pub const FEATURES: usize = 9;

/// What each feature is, in order.
pub const FEATURE_NAMES: [&str; FEATURES] = [
    "cosine",
    "cosine minus the catalogue's best cosine",
    "BM25F coverage of the request (IDF share)",
    "BM25F score over the catalogue's best",
    "first-stage hybrid score",
    "1 / (1 + first-stage position)",
    "matched IDF weight in units of the rarest word's (at most 3)",
    "cosine minus the best other candidate's",
    "coverage minus the best other candidate's",
];

/// One candidate of the first stage, with what the second stage reads about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The first stage's hit (its `score` is the hybrid score).
    pub hit: Hit,
    /// The features ([`FEATURE_NAMES`]).
    pub features: [f32; FEATURES],
}

/// A logistic model over [`FEATURES`]: `P(relevant) = 1 / (1 + exp(−(bias + w·x)))`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RelevanceModel {
    /// One weight per feature.
    pub weights: [f32; FEATURES],
    /// The intercept.
    pub bias: f32,
}

impl RelevanceModel {
    /// The model `cargo run --release -p chef-devtools --bin relevance_train` fits to
    /// NESTFUL's calibrate half (public data; see docs/PERFORMANCE.md, "A second stage").
    pub const TRAINED: Self = Self {
        weights: [
            0.988_333_76,
            -1.187_564_3,
            0.619_321_9,
            1.329_286_9,
            1.590_154,
            0.992_729_6,
            0.423_369,
            -1.051_202_2,
            0.059_063_446,
        ],
        bias: -6.291_476,
    };

    /// The probability that a candidate with these features answers the request.
    pub fn probability(&self, features: &[f32; FEATURES]) -> f32 {
        let z: f32 = self.bias
            + self
                .weights
                .iter()
                .zip(features)
                .map(|(w, x)| w * x)
                .sum::<f32>();
        1.0 / (1.0 + (-z).exp())
    }
}

/// The second stage's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SecondStage {
    /// The model.
    pub model: RelevanceModel,
    /// How many of the first stage's best candidates it reads (at least `k`).
    pub depth: usize,
    /// Abstain when no candidate of the request's catalogue words reaches this
    /// probability; 0 never abstains (while some word is known).
    pub min_relevance: f32,
}

impl SecondStage {
    /// [`RelevanceModel::TRAINED`] over 30 candidates, abstaining below 0.256: the lowest
    /// threshold that refuses 90% of retrieval-149's calibrate half's 30 unanswerable
    /// requests ([`calibrate_min_relevance`]).
    pub const DEFAULT: Self = Self {
        model: RelevanceModel::TRAINED,
        depth: 30,
        min_relevance: 0.256,
    };
}

impl Default for SecondStage {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What the second stage found for one request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Judged {
    /// The candidates, most probably relevant first, each with its probability.
    pub ranked: Vec<(f32, Candidate)>,
    /// The abstention score: the highest probability among the candidates of the
    /// request's catalogue words (0 when it has none).
    pub relevance: f32,
}

impl HybridIndex {
    /// The first stage's best `depth` candidates for `query`, with the second stage's
    /// features; empty for a blank request or an empty catalogue.
    pub fn candidates(&self, query: &str, depth: usize) -> Result<Vec<Candidate>, DenseError> {
        let Some(scored) = self.score(query)? else {
            return Ok(Vec::new());
        };
        Ok(self.candidates_of(&scored, depth))
    }

    fn candidates_of(&self, scored: &Scored, depth: usize) -> Vec<Candidate> {
        let hits = self.rank(scored, depth, self.options.weight());
        let best_bm25 = scored
            .lexical
            .scores
            .iter()
            .copied()
            .fold(0.0_f32, f32::max);
        let rarest = self.lexical.unknown_idf.max(f32::EPSILON);
        let total = scored.lexical.total_weight;
        let cosine_of = |h: &Hit| scored.cosines.get(h.index).copied().unwrap_or(0.0);
        let mut out: Vec<Candidate> = hits
            .into_iter()
            .enumerate()
            .map(|(position, hit)| {
                let cosine = cosine_of(&hit);
                let bm25 = scored.lexical.scores.get(hit.index).copied().unwrap_or(0.0);
                let features = [
                    cosine,
                    cosine - scored.best_cosine,
                    hit.coverage,
                    if best_bm25 > 0.0 {
                        bm25 / best_bm25
                    } else {
                        0.0
                    },
                    hit.score,
                    1.0 / (1.0 + position as f32),
                    (hit.coverage * total / rarest).min(3.0),
                    0.0,
                    0.0,
                ];
                Candidate { hit, features }
            })
            .collect();
        // The margins over the best other candidate: (the feature set, the one it reads).
        for (slot, of) in [(7, 0), (8, 2)] {
            let values: Vec<f32> = out
                .iter()
                .map(|c| c.features.get(of).copied().unwrap_or(0.0))
                .collect();
            for (i, (c, &own)) in out.iter_mut().zip(&values).enumerate() {
                let best_other = values
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != i)
                    .map(|(_, v)| *v)
                    .fold(f32::NEG_INFINITY, f32::max);
                if let Some(feature) = c.features.get_mut(slot) {
                    *feature = if best_other.is_finite() {
                        own - best_other
                    } else {
                        own
                    };
                }
            }
        }
        out
    }

    /// Re-orders the first stage's `hits` (best first) by the trained model's probability,
    /// within each of [`REORDERED_BLOCKS`]; a stable sort, so ties keep the first stage's
    /// order, and hits past the last block stay where they are. The probabilities are read
    /// over the best [`SecondStage::DEFAULT`] `depth` candidates of `scored`, as in
    /// training; a hit outside them counts as 0.
    pub(super) fn reorder_blocks(&self, scored: &Scored, hits: &mut [Hit]) {
        if hits.len() < 2 {
            return;
        }
        let model = SecondStage::DEFAULT.model;
        let judged: Vec<(usize, f32)> = self
            .candidates_of(scored, SecondStage::DEFAULT.depth)
            .iter()
            .map(|c| (c.hit.index, model.probability(&c.features)))
            .collect();
        let probability = |hit: &Hit| {
            judged
                .iter()
                .find(|(index, _)| *index == hit.index)
                .map_or(0.0, |&(_, p)| p)
        };
        for block in REORDERED_BLOCKS {
            let end = block.end.min(hits.len());
            if let Some(part) = hits.get_mut(block.start..end) {
                part.sort_by(|a, b| probability(b).total_cmp(&probability(a)));
            }
        }
    }

    /// The second stage on `query`: its candidates ranked by probability, and the
    /// abstention score read from the request's catalogue words.
    pub fn judge(&self, query: &str, stage: &SecondStage) -> Result<Judged, DenseError> {
        let candidates = self.candidates(query, stage.depth)?;
        let mut ranked: Vec<(f32, Candidate)> = candidates
            .into_iter()
            .map(|c| (stage.model.probability(&c.features), c))
            .collect();
        // Stable: ties keep the first stage's order.
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        let known = self.lexical.known_words(query);
        let relevance = if known.is_empty() {
            0.0
        } else {
            self.candidates(&known, stage.depth)?
                .iter()
                .map(|c| stage.model.probability(&c.features))
                .fold(0.0_f32, f32::max)
        };
        Ok(Judged { ranked, relevance })
    }

    /// The best `k` tools for `query` by the second stage, or none when its abstention
    /// score ([`Judged::relevance`]) is below [`SecondStage::min_relevance`]. A hit's
    /// `score` is its probability; `confidence` is the abstention score.
    pub fn search_second_stage(
        &self,
        query: &str,
        k: usize,
        stage: &SecondStage,
    ) -> Result<SearchResults, DenseError> {
        let stage = SecondStage {
            depth: stage.depth.max(k),
            ..*stage
        };
        let judged = self.judge(query, &stage)?;
        let abstained =
            k == 0 || judged.ranked.is_empty() || judged.relevance < stage.min_relevance;
        let evidence = judged
            .ranked
            .iter()
            .map(|(_, c)| c.features[6] * self.lexical.unknown_idf)
            .fold(0.0_f32, f32::max);
        let hits = if abstained {
            Vec::new()
        } else {
            judged
                .ranked
                .into_iter()
                .take(k)
                .map(|(p, c)| Hit { score: p, ..c.hit })
                .collect()
        };
        Ok(SearchResults {
            hits,
            abstained,
            confidence: judged.relevance,
            evidence,
        })
    }
}

/// One training example: a candidate's features, whether it answers its request, and how
/// much it counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Example {
    /// The candidate's features.
    pub features: [f32; FEATURES],
    /// Whether the candidate answers its request.
    pub relevant: bool,
    /// Its weight in the loss (a request's candidates usually share 1).
    pub weight: f32,
}

/// Fits a [`RelevanceModel`] to `examples` by full-batch gradient descent on the weighted
/// log loss with an L2 penalty `l2` (over standardised features; the result is mapped
/// back to raw features). Deterministic: the same examples give the same bits.
pub fn train(examples: &[Example], l2: f64, iterations: usize) -> RelevanceModel {
    let total: f64 = examples
        .iter()
        .map(|e| f64::from(e.weight))
        .sum::<f64>()
        .max(1e-12);
    let mut mean = [0.0_f64; FEATURES];
    let mut sd = [0.0_f64; FEATURES];
    for e in examples {
        for (m, x) in mean.iter_mut().zip(&e.features) {
            *m += f64::from(e.weight) * f64::from(*x) / total;
        }
    }
    for e in examples {
        for ((s, m), x) in sd.iter_mut().zip(&mean).zip(&e.features) {
            *s += f64::from(e.weight) * (f64::from(*x) - m).powi(2) / total;
        }
    }
    for s in &mut sd {
        *s = if *s > 1e-12 { s.sqrt() } else { 1.0 };
    }
    let z: Vec<[f64; FEATURES]> = examples
        .iter()
        .map(|e| {
            let mut z = [0.0; FEATURES];
            for (((z, x), m), s) in z.iter_mut().zip(&e.features).zip(&mean).zip(&sd) {
                *z = (f64::from(*x) - m) / s;
            }
            z
        })
        .collect();
    let mut w = [0.0_f64; FEATURES];
    let mut b = 0.0_f64;
    let rate = 0.5;
    for _ in 0..iterations {
        let mut gw = [0.0_f64; FEATURES];
        let mut gb = 0.0;
        for (e, z) in examples.iter().zip(&z) {
            let s: f64 = b + w.iter().zip(z).map(|(w, x)| w * x).sum::<f64>();
            let p = 1.0 / (1.0 + (-s).exp());
            let err = (p - f64::from(u8::from(e.relevant))) * f64::from(e.weight) / total;
            gb += err;
            for (g, x) in gw.iter_mut().zip(z) {
                *g += err * x;
            }
        }
        b -= rate * gb;
        for (w, g) in w.iter_mut().zip(gw) {
            *w -= rate * (g + l2 * *w);
        }
    }
    let mut weights = [0.0_f32; FEATURES];
    let mut bias = b;
    for (((out, w), m), s) in weights.iter_mut().zip(&w).zip(&mean).zip(&sd) {
        *out = (w / s) as f32;
        bias -= w * m / s;
    }
    RelevanceModel {
        weights,
        bias: bias as f32,
    }
}

/// Measures the second stage on labelled requests at its [`SecondStage::min_relevance`]
/// (the definitions of [`crate::search::eval`]).
pub fn evaluate_second_stage(
    index: &HybridIndex,
    queries: &[crate::search::eval::LabelledQuery],
    stage: &SecondStage,
) -> Result<crate::search::eval::Metrics, DenseError> {
    let depth = crate::search::eval::MRR_DEPTH;
    let mut outcomes = Vec::with_capacity(queries.len());
    for q in queries {
        let found = index.search_second_stage(&q.query, depth, stage)?;
        let ranks = crate::search::eval::ranks_of(&found.hits, &q.expected);
        outcomes.push((q.expected.len(), ranks, found.abstained));
    }
    Ok(crate::search::eval::score(
        outcomes.iter().map(|(e, r, a)| (*e, r.as_slice(), *a)),
    ))
}

/// The lowest [`SecondStage::min_relevance`], rounded up to 0.001, that abstains on at
/// least `share` of `irrelevant`, requests known to be irrelevant to the index's catalogue.
pub fn calibrate_min_relevance<S: AsRef<str>>(
    index: &HybridIndex,
    irrelevant: &[S],
    stage: &SecondStage,
    share: f32,
) -> Result<f32, DenseError> {
    let mut scores = Vec::with_capacity(irrelevant.len());
    for q in irrelevant {
        scores.push(index.judge(q.as_ref(), stage)?.relevance);
    }
    Ok(super::calibrate_min_cosine(&scores, share).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(x: f32, relevant: bool) -> Example {
        let mut features = [0.0; FEATURES];
        features[0] = x;
        features[3] = 0.5;
        Example {
            features,
            relevant,
            weight: 1.0,
        }
    }

    #[test]
    fn training_separates_what_one_feature_separates_and_is_deterministic() {
        let examples: Vec<Example> = (0..40)
            .map(|i| {
                let x = i as f32 / 40.0;
                example(x, x > 0.5)
            })
            .collect();
        let model = train(&examples, 1e-3, 2000);
        assert_eq!(model, train(&examples, 1e-3, 2000));
        assert!(model.weights[0] > 0.0, "{model:?}");
        // A constant feature gets no weight.
        assert!(model.weights[3].abs() < 1e-6, "{model:?}");
        let p = |x: f32| model.probability(&example(x, false).features);
        assert!(p(0.9) > 0.8 && p(0.1) < 0.2, "{} {}", p(0.9), p(0.1));
        assert!(p(0.6) > p(0.4));
    }
}
