//! Which level-3 map style to use for a model, from measured data.
//!
//! A map style is a pure encoding choice, so the library may pick one for a model the
//! caller names; the level is never picked for the caller. The tables are public so a pick
//! is never a black box: [`POLICY`] holds the measured wins, [`BROKEN`] the (model, style)
//! pairs measured unsafe (currently none; the mechanism is tested with synthetic tables).
//!
//! The tables are checked against what `chef eval` measured ([`MEASURED`](crate::MEASURED),
//! generated from the run files in `docs/eval/`): a map style that beats every other style
//! on a model's tool choice by [`MAP_STYLE_MARGIN_PCT`] points or more ([`style_winner`])
//! must have a row here for that model's id, or the tests fail. Measured so far:
//! Qwen2.5-Coder-1.5B on 18 tool-selection scenarios in all four styles (the generated
//! table in docs/EVAL.md), where no style wins by that margin, so it has no row.

use crate::{
    measured::Measured,
    options::{MapStyle, Objective},
};

/// By how many percentage points of right first tools a level-3 map style must beat every
/// other style measured beside it (see [`map_style_sweeps`](crate::map_style_sweeps) and
/// [`style_winner`]) before the policy must name it for that model. On 18 scenarios that is
/// 3 scenarios; one scenario (5.6 points) is within what a rerun or a reworded prompt moves.
pub const MAP_STYLE_MARGIN_PCT: f64 = 15.0;

/// The style of a sweep that chose the right first tool more often than every other by
/// `margin_pct` percentage points or more; `None` when no style does (a tie at the top
/// included).
pub fn style_winner<'a>(sweep: &[&'a Measured], margin_pct: f64) -> Option<&'a Measured> {
    let mut sorted: Vec<&'a Measured> = sweep.to_vec();
    sorted.sort_by(|a, b| b.accuracy_pct().total_cmp(&a.accuracy_pct()));
    let (best, runner_up) = (sorted.first()?, sorted.get(1)?);
    let lead = best.accuracy_pct() - runner_up.accuracy_pct();
    (lead > 0.0 && lead >= margin_pct).then_some(*best)
}

/// The style used when nothing else applies.
pub const CONSERVATIVE_DEFAULT: MapStyle = MapStyle::NameRequired;

/// One measured (model, objective) → style row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PolicyEntry {
    /// Exact model id (no families, no prefixes).
    pub model: &'static str,
    /// What the row optimises.
    pub objective: Objective,
    /// The style that won.
    pub map_style: MapStyle,
    /// Effect against the default, in percent (negative is better).
    pub effect_pct: f64,
    /// Runs per style in the sweep.
    pub n: u32,
    /// The sweep's id.
    pub sweep: &'static str,
    /// When it was measured.
    pub measured: &'static str,
}

/// A (model, style) pair measured unsafe: requesting it falls back to the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BrokenEntry {
    /// Exact model id.
    pub model: &'static str,
    /// The unsafe style.
    pub map_style: MapStyle,
    /// What went wrong.
    pub reason: &'static str,
    /// Runs in the sweep.
    pub n: u32,
    /// The sweep's id.
    pub sweep: &'static str,
}

/// The measured policy: only `cost` has rows (every occupancy difference measured was
/// within ±3.1%, under the 5% effect-size floor). `grok-4.5` has no row: `explicit`
/// measured +13.2% on cost there.
pub const POLICY: &[PolicyEntry] = &[
    PolicyEntry {
        model: "claude-opus-5",
        objective: Objective::Cost,
        map_style: MapStyle::Explicit,
        effect_pct: -9.0,
        n: 36,
        sweep: "2026-07-26T03-07-25",
        measured: "2026-07-26",
    },
    PolicyEntry {
        model: "gemini-3.1-pro-preview",
        objective: Objective::Cost,
        map_style: MapStyle::Explicit,
        effect_pct: -15.4,
        n: 36,
        sweep: "2026-07-26T03-07-25",
        measured: "2026-07-26",
    },
    PolicyEntry {
        model: "gpt-5.6-sol",
        objective: Objective::Cost,
        map_style: MapStyle::Explicit,
        effect_pct: -20.7,
        n: 36,
        sweep: "2026-07-26T03-07-25",
        measured: "2026-07-26",
    },
];

/// Pairs measured unsafe. Empty: the one style ever measured unsafe was deleted.
pub const BROKEN: &[BrokenEntry] = &[];

/// The outcome of [`select_map_style`]: what is used, and why when it differs from the
/// request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StyleSelection {
    /// The style used.
    pub map_style: MapStyle,
    /// The caller's explicit request, only when it was replaced.
    pub requested_map_style: Option<MapStyle>,
    /// Why it was replaced, only when it was.
    pub fallback_reason: Option<String>,
}

/// Picks the map style with the built-in tables; see [`select_map_style_with`].
///
/// ```
/// use chef_compress::{select_map_style, MapStyle, Objective};
///
/// assert_eq!(select_map_style(None, None, Objective::Occupancy).map_style, MapStyle::NameRequired);
/// assert_eq!(select_map_style(None, Some("gpt-5.6-sol"), Objective::Cost).map_style, MapStyle::Explicit);
/// assert_eq!(select_map_style(None, Some("grok-4.5"), Objective::Cost).map_style, MapStyle::NameRequired);
/// ```
pub fn select_map_style(
    requested: Option<MapStyle>,
    model: Option<&str>,
    objective: Objective,
) -> StyleSelection {
    select_map_style_with(requested, model, objective, POLICY, BROKEN)
}

/// Picks the map style against caller-supplied tables.
///
/// 1. An explicit request is honoured, unless `broken` lists exactly (model, style): then
///    the default is used and the reason says why.
/// 2. Otherwise, with a model: the first `policy` row with exactly that model and
///    objective.
/// 3. Otherwise the default.
pub fn select_map_style_with(
    requested: Option<MapStyle>,
    model: Option<&str>,
    objective: Objective,
    policy: &[PolicyEntry],
    broken: &[BrokenEntry],
) -> StyleSelection {
    let plain = |map_style| StyleSelection {
        map_style,
        requested_map_style: None,
        fallback_reason: None,
    };
    if let Some(style) = requested {
        let refused =
            model.and_then(|m| broken.iter().find(|b| b.model == m && b.map_style == style));
        return match refused {
            Some(b) => StyleSelection {
                map_style: CONSERVATIVE_DEFAULT,
                requested_map_style: Some(style),
                fallback_reason: Some(format!(
                    "map style \"{style}\" is measured unsafe on {}: {} (n={}, sweep {}). Using \"{CONSERVATIVE_DEFAULT}\" instead.",
                    b.model, b.reason, b.n, b.sweep
                )),
            },
            None => plain(style),
        };
    }
    if let Some(m) = model
        && let Some(row) = policy
            .iter()
            .find(|p| p.model == m && p.objective == objective)
    {
        return plain(row.map_style);
    }
    plain(CONSERVATIVE_DEFAULT)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SYNTHETIC_BROKEN: &[BrokenEntry] = &[BrokenEntry {
        model: "some-model-1",
        map_style: MapStyle::Explicit,
        reason: "answered with no tool call",
        n: 36,
        sweep: "2026-01-01",
    }];

    /// The selection for an occupancy request, with `some-model-1`'s explicit style
    /// recorded as broken.
    fn with_broken(requested: Option<MapStyle>, model: Option<&str>) -> StyleSelection {
        select_map_style_with(
            requested,
            model,
            Objective::Occupancy,
            POLICY,
            SYNTHETIC_BROKEN,
        )
    }

    #[test]
    fn every_policy_row_is_selected_for_its_model_and_objective() {
        for row in POLICY {
            let s = select_map_style(None, Some(row.model), row.objective);
            assert_eq!(s.map_style, row.map_style, "{}", row.model);
            assert_eq!(s.requested_map_style, None);
            assert_eq!(s.fallback_reason, None);
        }
        for (model, objective) in [
            ("grok-4.5", Objective::Cost),
            ("gpt-5.6-sol", Objective::Occupancy),
            ("gpt-5.7", Objective::Cost),
            ("GPT-5.6-SOL", Objective::Cost),
        ] {
            assert_eq!(
                select_map_style(None, Some(model), objective).map_style,
                CONSERVATIVE_DEFAULT,
                "{model}"
            );
        }
    }

    #[test]
    fn no_measured_style_wins_by_the_margin_without_a_policy_row() {
        for sweep in crate::map_style_sweeps() {
            let Some(winner) = style_winner(&sweep, MAP_STYLE_MARGIN_PCT) else {
                continue;
            };
            let style = winner.map_style.unwrap_or(CONSERVATIVE_DEFAULT);
            if style == CONSERVATIVE_DEFAULT {
                continue;
            }
            assert!(
                POLICY
                    .iter()
                    .any(|p| p.model == winner.model_id && p.map_style == style),
                "{style} wins on {} ({}) by at least {MAP_STYLE_MARGIN_PCT} points ({}): add a policy row for it",
                winner.model,
                winner.model_id,
                winner.source
            );
        }
    }

    /// A synthetic sweep row: `right` of 18 with `style`.
    fn row(style: Option<MapStyle>, right: u32) -> Measured {
        let mut m = *crate::MEASURED.first().expect("the table has rows");
        m.map_style = style;
        m.right = right;
        m.n = 18;
        m
    }

    #[test]
    fn a_style_wins_only_by_the_margin_and_never_on_a_tie() {
        let (a, b, c) = (
            row(None, 5),
            row(Some(MapStyle::Signature), 8),
            row(Some(MapStyle::Distinct), 4),
        );
        let winner = style_winner(&[&a, &b, &c], MAP_STYLE_MARGIN_PCT).unwrap();
        assert_eq!(winner.map_style, Some(MapStyle::Signature));
        let close = row(Some(MapStyle::Explicit), 6);
        assert_eq!(style_winner(&[&a, &b, &close], MAP_STYLE_MARGIN_PCT), None);
        let tie = row(Some(MapStyle::Explicit), 8);
        assert_eq!(style_winner(&[&b, &tie], 0.0), None, "a tie at the top");
        assert_eq!(style_winner(&[&b], 0.0), None, "one style is no sweep");
    }

    #[test]
    fn an_explicit_style_is_honoured_even_against_a_policy_row() {
        let s = select_map_style(
            Some(MapStyle::Signature),
            Some("gpt-5.6-sol"),
            Objective::Cost,
        );
        assert_eq!(s.map_style, MapStyle::Signature);
        assert_eq!(s.requested_map_style, None);
    }

    #[test]
    fn a_broken_pair_falls_back_and_says_why() {
        let s = with_broken(Some(MapStyle::Explicit), Some("some-model-1"));
        assert_eq!(s.map_style, CONSERVATIVE_DEFAULT);
        assert_eq!(s.requested_map_style, Some(MapStyle::Explicit));
        let reason = s.fallback_reason.unwrap();
        assert!(reason.contains("some-model-1"), "{reason}");
        assert!(reason.contains("n=36"), "{reason}");
        assert!(reason.contains("sweep 2026-01-01"), "{reason}");
        for (style, model) in [
            (MapStyle::Explicit, Some("other-model")),
            (MapStyle::Explicit, None),
            (MapStyle::Signature, Some("some-model-1")),
        ] {
            let s = with_broken(Some(style), model);
            assert_eq!(s.map_style, style);
            assert_eq!(s.requested_map_style, None);
            assert_eq!(s.fallback_reason, None);
        }
    }
}
