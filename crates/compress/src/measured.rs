//! What chef's settings did on a real model: the figures of `chef eval` runs.
//!
//! [`MEASURED`] is **generated** from the run files under `docs/eval/` (the JSON Lines
//! `chef eval --out` writes) and the list of runs in `docs/eval/runs.json` that says which
//! model, scenarios and server each file was made with. Nothing in it is typed by hand: a
//! chef-cli test rebuilds it from those files and fails when it differs (rebuild it with
//! `CHEF_BLESS=1 cargo test -p chef-cli measured_table`). [`recommend_level`] quotes it, and
//! the map-style policy is checked against it.
//!
//! [`recommend_level`]: crate::recommend_level

use serde::Serialize;

use crate::options::{Level, MapStyle};

mod generated;

/// One setting measured on one model and one scenario set.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Measured {
    /// The model (`docs/eval/runs.json`'s name for it, e.g. `Qwen2.5-Coder-1.5B-Instruct Q4_K_M`).
    pub model: &'static str,
    /// The model id the requests named (`chef eval --model`), the key
    /// [`select_map_style`](crate::select_map_style) would be asked with.
    pub model_id: &'static str,
    /// The scenario set (e.g. `tool-selection scenarios`, `held-out retrieval requests,
    /// answerable`).
    pub scenarios: &'static str,
    /// Which requests of a run split by answerability the row counts: `Some(true)` those a
    /// tool answers, `Some(false)` those no tool answers (the row then measures abstention,
    /// not the choice of a tool), `None` a run not split.
    pub answerable: Option<bool>,
    /// The catalogue the tools came from (e.g. `the 149 real MCP tools`).
    pub catalogue: &'static str,
    /// The server's context window, in the model's tokens.
    pub context: u32,
    /// The setting as `chef eval --setting` labelled it.
    pub setting: &'static str,
    /// The compression level.
    pub level: Level,
    /// The level-3 map style asked for (`None`: chef's default).
    pub map_style: Option<MapStyle>,
    /// Ranked pruning to this many tools (`None`: every tool offered).
    pub ranked_top: Option<u32>,
    /// With `ranked_top`: the discovery setting (`prune=discover:K`), the ranked tools plus
    /// `find_tools` for what they lack.
    pub discovery: bool,
    /// A compiled (level-4) map was used.
    pub compiled_map: bool,
    /// The reply was constrained with a JSON-schema `response_format` (`--constrain`).
    pub constrained: bool,
    /// Scenarios run.
    pub n: u32,
    /// Scenarios whose first dispatched tool was the expected one (or, where none was
    /// expected, that called none).
    pub right: u32,
    /// Scenarios whose dispatched call validated against the tool's own schema.
    pub args_valid: u32,
    /// The mean prompt tokens of a scenario's first request, rounded, as the server counted
    /// them and `chef eval`'s table prints them (`None` when it reported none).
    pub prompt_tokens: Option<u32>,
    /// The run file, relative to the repository.
    pub source: &'static str,
}

impl Measured {
    /// `right` as a percentage of `n` (0 when `n` is 0).
    pub fn accuracy_pct(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            f64::from(self.right) * 100.0 / f64::from(self.n)
        }
    }

    /// Every tool offered, no compiled map: the plain setting of its level.
    fn is_plain(&self) -> bool {
        self.ranked_top.is_none() && !self.compiled_map
    }
}

/// Every measured setting, generated from `docs/eval/` (see the module docs).
pub const MEASURED: &[Measured] = generated::MEASURED;

/// Whether two rows were measured under the same conditions: one model, catalogue, scenario
/// set, server context and constraint setting.
fn comparable(a: &Measured, b: &Measured) -> bool {
    a.model == b.model
        && a.catalogue == b.catalogue
        && a.scenarios == b.scenarios
        && a.context == b.context
        && a.constrained == b.constrained
}

/// The comparison [`recommend_level`](crate::recommend_level) quotes for a block it sends
/// to level 3: a plain level-1 row, a plain level-3 row (default map style) and a level-1
/// row with ranked pruning to the top 10, measured under the same conditions; the latest
/// such rows in `docs/eval/runs.json` order, skipping a level 1 without a prompt-token
/// count (one the server refused because its tools did not fit the context) and rows of
/// requests no tool answers (they measure abstention, not the choice of a tool). `None`
/// when the table has none.
pub(crate) fn quoted_comparison() -> Option<[&'static Measured; 3]> {
    MEASURED.iter().rev().find_map(|base| {
        // No baseline to quote: a level 1 without a prompt-token count (the server refused
        // it, its tools not fitting the context, or reported no usage), or one counting
        // only requests no tool answers (abstention, not tool choice).
        if base.level != Level::One
            || !base.is_plain()
            || base.prompt_tokens.is_none()
            || base.answerable == Some(false)
        {
            return None;
        }
        let mut same = MEASURED.iter().rev().filter(|m| comparable(m, base));
        let level3 = same
            .clone()
            .find(|m| m.level == Level::Three && m.is_plain() && m.map_style.is_none())?;
        let ranked =
            same.find(|m| m.level == Level::One && m.ranked_top == Some(10) && !m.compiled_map)?;
        Some([base, level3, ranked])
    })
}

/// The level-3 map styles measured against each other: the plain level-3 rows of
/// [`MEASURED`] (every tool offered, no compiled map) grouped by the conditions they were
/// measured under (model, catalogue, scenario set, server context, constraint), one row per
/// style (the latest), keeping the groups with two styles or more. A row without a style
/// is chef's default, [`CONSERVATIVE_DEFAULT`](crate::CONSERVATIVE_DEFAULT).
pub fn map_style_sweeps() -> Vec<Vec<&'static Measured>> {
    let mut groups: Vec<Vec<&'static Measured>> = Vec::new();
    for m in MEASURED
        .iter()
        .filter(|m| m.level == Level::Three && m.is_plain())
    {
        match groups
            .iter_mut()
            .find(|g| g.first().is_some_and(|f| comparable(f, m)))
        {
            Some(group) => match group.iter_mut().find(|o| o.map_style == m.map_style) {
                Some(earlier) => *earlier = m,
                None => group.push(m),
            },
            None => groups.push(vec![m]),
        }
    }
    groups.retain(|g| g.len() > 1);
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweeps_hold_one_row_per_style_under_one_set_of_conditions() {
        for sweep in map_style_sweeps() {
            let styles: std::collections::HashSet<_> = sweep.iter().map(|m| m.map_style).collect();
            assert_eq!(styles.len(), sweep.len());
            assert!(sweep.len() >= 2);
            assert!(sweep.iter().all(|m| comparable(m, sweep[0])));
        }
    }

    #[test]
    fn every_row_is_consistent() {
        for m in MEASURED {
            assert!(m.n > 0, "{m:?}");
            assert!(m.right <= m.n && m.args_valid <= m.n, "{m:?}");
            assert!(m.source.starts_with("docs/eval/"), "{m:?}");
            assert!(m.map_style.is_none() || m.level == Level::Three, "{m:?}");
            assert_eq!(m.compiled_map, m.setting.contains("compiled="), "{m:?}");
        }
    }

    #[test]
    fn the_quoted_comparison_is_measured_under_one_set_of_conditions() {
        let [one, three, ranked] = quoted_comparison().expect("a comparison is measured");
        for m in [three, ranked] {
            assert!(comparable(m, one), "{m:?} against {one:?}");
        }
        assert_eq!(one.level, Level::One);
        assert_eq!(three.level, Level::Three);
        assert_eq!(ranked.ranked_top, Some(10));
    }

    #[test]
    fn a_level_1_the_server_refused_is_never_the_quoted_baseline() {
        // The 8,192-token run's level 1 (every tool) was refused on every scenario; it is
        // listed after the 32K runs, so the latest-first search meets it first.
        let refused = MEASURED
            .iter()
            .filter(|m| m.level == Level::One && m.is_plain() && m.prompt_tokens.is_none())
            .count();
        assert!(
            refused > 0,
            "the table has no refused level 1 to skip any more"
        );
        let [one, ..] = quoted_comparison().expect("a comparison is measured");
        assert!(one.prompt_tokens.is_some() && one.right > 0, "{one:?}");
    }

    #[test]
    fn rows_of_requests_no_tool_answers_are_never_quoted() {
        assert!(
            MEASURED
                .iter()
                .any(|m| m.answerable == Some(false) && m.level == Level::Three),
            "the table has no unanswerable level-3 row to skip any more"
        );
        let quoted = quoted_comparison().expect("a comparison is measured");
        assert!(
            quoted.iter().all(|m| m.answerable != Some(false)),
            "{quoted:?}"
        );
    }
}
