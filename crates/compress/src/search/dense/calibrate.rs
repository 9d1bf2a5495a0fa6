//! The calibration kit: measure the hybrid on labelled requests, and pick its dense weight
//! and its abstention threshold.

use super::{DenseError, HybridIndex};
use crate::search::eval::{self, LabelledQuery, MRR_DEPTH, Metrics, ranks_of};

/// The threshold that abstains on at least `share` (`0..=1`) of `best_cosines`, the
/// highest cosines of requests known to be irrelevant to a catalogue
/// ([`HybridIndex::best_cosine`]): the smallest value above that share of them, rounded
/// up to 0.001. `-1` (never abstain) when there are none or `share` is 0.
pub fn calibrate_min_cosine(best_cosines: &[f32], share: f32) -> f32 {
    let finite = best_cosines.iter().filter(|c| c.is_finite()).count();
    threshold_above(
        best_cosines,
        (clamp_share(share) * finite as f32).ceil() as usize,
    )
}

/// `share` clamped to `0..=1`; NaN is 1.
fn clamp_share(share: f32) -> f32 {
    if share.is_finite() {
        share.clamp(0.0, 1.0)
    } else {
        1.0
    }
}

/// The smallest threshold, rounded up to 0.001, that abstains on the `count` lowest of the
/// finite `best_cosines`; `-1` (never abstain) for a count of 0 or none to count.
fn threshold_above(best_cosines: &[f32], count: usize) -> f32 {
    let mut sorted: Vec<f32> = best_cosines
        .iter()
        .copied()
        .filter(|c| c.is_finite())
        .collect();
    sorted.sort_unstable_by(f32::total_cmp);
    let Some(&at) = count.checked_sub(1).and_then(|last| sorted.get(last)) else {
        return -1.0;
    };
    // Strictly above the `count`-th smallest, so that it abstains too.
    ((at * 1000.0).floor() + 1.0) / 1000.0
}

/// The threshold that abstains on at least `share` (`0..=1`) of `irrelevant`, requests
/// known to be irrelevant to the index's catalogue, under the index's own abstention rule,
/// and the share it does abstain on (what `chef search --calibrate` prints). Cosine alone
/// ([`HybridOptions::joint`](super::HybridOptions::joint) off): [`calibrate_min_cosine`]
/// over their best cosines. With joint abstention, a request BM25F answers is never
/// abstained on whatever the threshold, and one that shares no word with the catalogue
/// ([`HybridOptions::needs_shared_word`](super::HybridOptions::needs_shared_word)) always
/// is, so the threshold is picked among the others to reach the same count, and the share
/// reached is less than `share` when too few are left. `(-1, 0)` when nothing can be
/// abstained on or `share` is 0.
pub fn calibrate_on_irrelevant<S: AsRef<str>>(
    index: &HybridIndex,
    irrelevant: &[S],
    share: f32,
) -> Result<(f32, f32), DenseError> {
    let joint = index.options().joint;
    let no_word_abstains = joint && index.options().needs_shared_word;
    let mut best = Vec::with_capacity(irrelevant.len());
    // Requests that share no word with the catalogue, when the options ask for one, are
    // abstained on whatever the threshold.
    let mut always = 0;
    for query in irrelevant.iter().map(AsRef::as_ref) {
        if no_word_abstains && index.shares_no_word(query) {
            always += 1;
        } else if !joint || index.lexical_abstains(query) {
            best.push(index.best_cosine(query)?);
        }
    }
    let wanted = (clamp_share(share) * irrelevant.len() as f32).ceil() as usize;
    let threshold = threshold_above(&best, wanted.saturating_sub(always).min(best.len()));
    let abstained = always + best.iter().filter(|&&c| c < threshold).count();
    Ok((threshold, abstained as f32 / irrelevant.len().max(1) as f32))
}

/// The thresholds the labelled calibrations try: -0.10 to 0.95 in steps of 0.01.
fn thresholds() -> impl Iterator<Item = f32> {
    (-10..=95_i8).map(|step| f32::from(step) / 100.0)
}

/// What the hybrid did with one labelled request, before any threshold.
struct Outcome {
    expected: usize,
    ranks: Vec<usize>,
    best_cosine: f32,
    /// See `Scored::lexical_abstains`.
    lexical_abstains: bool,
    /// See `Scored::shares_no_word`.
    shares_no_word: bool,
}

/// The outcomes of `queries` at each of `weights` (one list per weight; `None`: the
/// index's own ranking, as [`HybridIndex::search`] orders it, second stage included);
/// each request is embedded and matched once.
fn outcomes_at(
    index: &HybridIndex,
    queries: &[LabelledQuery],
    weights: &[Option<f32>],
) -> Result<Vec<Vec<Outcome>>, DenseError> {
    let mut per_weight: Vec<Vec<Outcome>> = weights
        .iter()
        .map(|_| Vec::with_capacity(queries.len()))
        .collect();
    for q in queries {
        let scored = index.score(&q.query)?;
        for (&w, outcomes) in weights.iter().zip(per_weight.iter_mut()) {
            outcomes.push(match &scored {
                Some(scored) => Outcome {
                    expected: q.expected.len(),
                    ranks: ranks_of(
                        &match w {
                            Some(w) => index.rank(scored, MRR_DEPTH, w),
                            None => index.ranked(scored, MRR_DEPTH),
                        },
                        &q.expected,
                    ),
                    best_cosine: scored.best_cosine,
                    lexical_abstains: scored.lexical_abstains,
                    shares_no_word: scored.shares_no_word,
                },
                // A blank request: nothing found, always abstains.
                None => Outcome {
                    expected: q.expected.len(),
                    ranks: Vec::new(),
                    best_cosine: f32::NEG_INFINITY,
                    lexical_abstains: true,
                    shares_no_word: true,
                },
            });
        }
    }
    Ok(per_weight)
}

fn outcomes(index: &HybridIndex, queries: &[LabelledQuery]) -> Result<Vec<Outcome>, DenseError> {
    Ok(outcomes_at(index, queries, &[None])?
        .into_iter()
        .next()
        .unwrap_or_default())
}

fn metrics(outcomes: &[Outcome], min_cosine: f32) -> Metrics {
    crate::search::eval::score(outcomes.iter().map(|o| {
        (
            o.expected,
            o.ranks.as_slice(),
            super::index::abstains(
                o.best_cosine,
                min_cosine,
                o.lexical_abstains,
                o.shares_no_word,
            ),
        )
    }))
}

/// Measures the hybrid on labelled requests with the given threshold, with the same
/// definitions as [`eval::evaluate`](crate::search::eval::evaluate).
pub fn evaluate(
    index: &HybridIndex,
    queries: &[LabelledQuery],
    min_cosine: f32,
) -> Result<Metrics, DenseError> {
    Ok(metrics(&outcomes(index, queries)?, min_cosine))
}

/// The threshold (from -0.10 to 0.95 in steps of 0.01, lowest first on ties) that
/// maximises `(recall@5 + true abstention) / 2` on labelled requests, as
/// [`eval::calibrate`](crate::search::eval::calibrate) does for the lexical index, with
/// its metrics. The ranking uses the index's own dense weight.
pub fn calibrate(
    index: &HybridIndex,
    queries: &[LabelledQuery],
) -> Result<(f32, Metrics), DenseError> {
    let outcomes = outcomes(index, queries)?;
    let mut best: Option<(f64, f32, Metrics)> = None;
    for threshold in thresholds() {
        eval::keep_best(&mut best, threshold, metrics(&outcomes, threshold));
    }
    Ok(best.map_or((-1.0, Metrics::default()), |(_, t, m)| (t, m)))
}

/// The share of unanswerable requests the default thresholds abstain on, on the labelled
/// set they were calibrated on ([`calibrate_to_share`]).
pub const DEFAULT_ABSTAIN_SHARE: f32 = 0.9;

/// The lowest threshold (from -0.10 to 0.95 in steps of 0.01) at which the hybrid
/// abstains on at least `share` (`0..=1`) of the unanswerable labelled requests, with its
/// metrics: abstention fixed at a target, at the least cost in recall. This is how the
/// default thresholds are picked ([`ModelKind::default_min_cosine`](super::ModelKind),
/// share 0.9): [`calibrate`]'s objective weighs an unanswerable request as much as an
/// answerable one, so on a set with few unanswerable requests it buys the last of them
/// with several points of recall@5. When no threshold reaches `share` (with joint
/// abstention, a request BM25F answers is never abstained on), the lowest that abstains
/// on the most; without unanswerable requests, `-1` (never abstain).
pub fn calibrate_to_share(
    index: &HybridIndex,
    queries: &[LabelledQuery],
    share: f32,
) -> Result<(f32, Metrics), DenseError> {
    let outcomes = outcomes(index, queries)?;
    if outcomes.iter().all(|o| o.expected > 0) {
        return Ok((-1.0, metrics(&outcomes, -1.0)));
    }
    let share = f64::from(clamp_share(share));
    let mut most: Option<(f32, Metrics)> = None;
    for threshold in thresholds() {
        let m = metrics(&outcomes, threshold);
        if m.true_abstention + 1e-9 >= share {
            return Ok((threshold, m));
        }
        if most
            .as_ref()
            .is_none_or(|(_, b)| m.true_abstention > b.true_abstention + 1e-12)
        {
            most = Some((threshold, m));
        }
    }
    Ok(most.unwrap_or((-1.0, Metrics::default())))
}

/// The dense weights [`calibrate_weight`] tries: 0.0 to 1.0 in steps of 0.1.
pub const CALIBRATION_WEIGHTS: [f32; 11] = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];

/// The metrics (never abstaining) of the hybrid at each weight of
/// [`CALIBRATION_WEIGHTS`], in that order: the curve [`calibrate_weight`] picks from. The
/// first stage's ranking at each weight: the second stage's re-ordering
/// ([`HybridOptions::second_stage`](super::HybridOptions::second_stage)) is not applied,
/// as it was learned at the default weight.
pub fn weight_curve(
    index: &HybridIndex,
    queries: &[LabelledQuery],
) -> Result<Vec<(f32, Metrics)>, DenseError> {
    Ok(CALIBRATION_WEIGHTS
        .iter()
        .copied()
        .zip(outcomes_at(index, queries, &CALIBRATION_WEIGHTS.map(Some))?)
        .map(|(w, outcomes)| (w, metrics(&outcomes, f32::NEG_INFINITY)))
        .collect())
}

/// The dense weight (of [`CALIBRATION_WEIGHTS`]) that maximises the mean of recall@1 and
/// MRR over the answerable labelled requests, never abstaining, with its metrics. Ties go
/// to the lower weight (more lexical). Calibrate the threshold afterwards, at this weight
/// ([`HybridIndex::with_dense_weight`], then [`calibrate`]).
pub fn calibrate_weight(
    index: &HybridIndex,
    queries: &[LabelledQuery],
) -> Result<(f32, Metrics), DenseError> {
    let mut best: Option<(f64, f32, Metrics)> = None;
    for (w, m) in weight_curve(index, queries)? {
        let objective = (m.recall_at_1 + m.mrr) / 2.0;
        if best.as_ref().is_none_or(|(b, _, _)| objective > *b + 1e-12) {
            best = Some((objective, w, m));
        }
    }
    Ok(
        best.map_or((index.options.weight(), Metrics::default()), |(_, w, m)| {
            (w, m)
        }),
    )
}
