//! The summary table (stdout) and the chart (SVG) of a run, per setting.

use std::{collections::BTreeMap, fmt::Write as _};

use chef::namespace::escape_xml;

use super::grade::{Outcome, Record};

/// One setting's totals.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub(crate) setting: String,
    pub(crate) scenarios: usize,
    pub(crate) outcomes: BTreeMap<Outcome, usize>,
    /// Scenarios whose first dispatched call validated (right or wrong tool).
    pub(crate) args_valid: usize,
    /// Right-tool scenarios listing expected arguments, and those whose arguments matched.
    pub(crate) args_checked: usize,
    pub(crate) args_matched: usize,
    /// The mean of `first_prompt_tokens` over the scenarios that reported it.
    pub(crate) mean_first_prompt_tokens: Option<f64>,
    pub(crate) median_wall_ms: Option<u64>,
    pub(crate) model_calls: u64,
    pub(crate) lookups: u64,
    /// Whole tasks (`--whole-task` lines only): tasks graded, tasks that succeeded, the
    /// expected calls made in order, the expected calls in all, and the mean prompt tokens
    /// of a whole task (every request summed).
    pub(crate) tasks: Option<Tasks>,
}

/// The whole-task totals of one setting.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tasks {
    pub(crate) graded: usize,
    pub(crate) succeeded: usize,
    /// Tasks whose every expected call was made in order, other calls allowed (toolgz's
    /// order rule; `succeeded` also refuses a call of a tool the task does not need).
    pub(crate) all_steps: usize,
    pub(crate) steps_done: u64,
    pub(crate) steps: u64,
    pub(crate) mean_prompt_tokens: Option<f64>,
    /// The prompt tokens of the requests after each task's first that the server read from
    /// its cache, and those requests' prompt tokens, summed over the tasks whose lines say
    /// (`None` when none does): the prompt-cache reuse across a task's turns.
    pub(crate) cached_later: Option<(u64, u64)>,
}

impl Row {
    pub(crate) fn count(&self, outcome: Outcome) -> usize {
        self.outcomes.get(&outcome).copied().unwrap_or(0)
    }

    /// Right answers as a percentage of the scenarios (0 for none).
    pub(crate) fn accuracy(&self) -> f64 {
        if self.scenarios == 0 {
            return 0.0;
        }
        to_f64(self.count(Outcome::Right)) * 100.0 / to_f64(self.scenarios)
    }
}

#[expect(
    clippy::cast_precision_loss,
    reason = "counts and token sums far below 2^52"
)]
fn to_f64(n: usize) -> f64 {
    n as f64
}

/// One row per setting, in `settings` order, from the records of those settings.
pub(crate) fn summarize(settings: &[String], records: &[Record]) -> Vec<Row> {
    settings
        .iter()
        .map(|setting| {
            let mine: Vec<&Record> = records.iter().filter(|r| &r.setting == setting).collect();
            let mut outcomes = BTreeMap::new();
            for r in &mine {
                *outcomes.entry(r.outcome).or_insert(0) += 1;
            }
            let tokens: Vec<u64> = mine
                .iter()
                .filter_map(|r| r.counts.first_prompt_tokens)
                .collect();
            let mean_first_prompt_tokens = (!tokens.is_empty()).then(|| {
                let sum: u64 = tokens.iter().sum();
                to_f64(usize::try_from(sum).unwrap_or(usize::MAX)) / to_f64(tokens.len())
            });
            let mut walls: Vec<u64> = mine.iter().map(|r| r.counts.wall_ms).collect();
            walls.sort_unstable();
            let median_wall_ms = median(&walls);
            let checked: Vec<bool> = mine.iter().filter_map(|r| r.args_match).collect();
            let graded: Vec<&&Record> = mine.iter().filter(|r| r.task_success.is_some()).collect();
            let tasks = (!graded.is_empty()).then(|| {
                let totals: Vec<u64> = graded
                    .iter()
                    .filter_map(|r| r.counts.prompt_tokens)
                    .collect();
                Tasks {
                    graded: graded.len(),
                    // Graded again from the calls, so lines made before a change of
                    // the rule count by the rule of today.
                    // (A task a later request failed in is no success, whatever its
                    // calls.)
                    succeeded: graded
                        .iter()
                        .filter(|r| match &r.calls {
                            Some(calls) => {
                                super::grade::task_grade(&r.expected, calls).0
                                    && r.task_error.is_none()
                            }
                            None => r.task_success == Some(true),
                        })
                        .count(),
                    // A request that expects no call has no step to make: it counts
                    // only when no tool was called.
                    all_steps: graded
                        .iter()
                        .filter(|r| match (&r.calls, r.expected.is_empty()) {
                            (Some(calls), true) => calls.is_empty(),
                            (None, true) => r.task_success == Some(true),
                            (_, false) => {
                                steps_done(r).is_some_and(|done| done as usize == r.expected.len())
                            }
                        })
                        .count(),
                    steps_done: graded
                        .iter()
                        .map(|r| u64::from(steps_done(r).unwrap_or(0)))
                        .sum(),
                    steps: graded.iter().map(|r| r.expected.len() as u64).sum(),
                    mean_prompt_tokens: (!totals.is_empty()).then(|| {
                        let sum: u64 = totals.iter().sum();
                        to_f64(usize::try_from(sum).unwrap_or(usize::MAX)) / to_f64(totals.len())
                    }),
                    cached_later: cached_later(&graded),
                }
            });
            Row {
                setting: setting.clone(),
                scenarios: mine.len(),
                outcomes,
                args_valid: mine.iter().filter(|r| r.args_valid).count(),
                args_checked: checked.len(),
                args_matched: checked.iter().filter(|m| **m).count(),
                mean_first_prompt_tokens,
                median_wall_ms,
                model_calls: mine.iter().map(|r| u64::from(r.counts.model_calls)).sum(),
                lookups: mine.iter().map(|r| u64::from(r.counts.lookups)).sum(),
                tasks,
            }
        })
        .collect()
}

/// The expected calls a task made in order, graded again from its calls (the stored
/// count of a line without them).
fn steps_done(record: &Record) -> Option<u32> {
    match &record.calls {
        Some(calls) => Some(super::grade::task_grade(&record.expected, calls).1),
        None => record.steps_done,
    }
}

/// [`Tasks::cached_later`] of `records`.
fn cached_later(records: &[&&Record]) -> Option<(u64, u64)> {
    let mut said = false;
    let (mut cached, mut prompt) = (0_u64, 0_u64);
    for r in records {
        let (Some(all), Some(first), Some(total), Some(first_total)) = (
            r.counts.cached_tokens,
            r.counts.first_cached_tokens,
            r.counts.prompt_tokens,
            r.counts.first_prompt_tokens,
        ) else {
            continue;
        };
        said = true;
        cached += all.saturating_sub(first);
        prompt += total.saturating_sub(first_total);
    }
    said.then_some((cached, prompt))
}

/// The middle value of a sorted list (the lower of the two middle ones for an even
/// length), `None` when empty.
fn median(sorted: &[u64]) -> Option<u64> {
    sorted.get(sorted.len().saturating_sub(1) / 2).copied()
}

/// The summary table: a header and one line per setting, columns aligned.
pub(crate) fn table(rows: &[Row]) -> String {
    let header = [
        "setting",
        "right",
        "args_valid",
        "args_match",
        "wrong_tool",
        "malformed",
        "no_call",
        "lookups_exhausted",
        "timeout",
        "http_error",
        "unparsable",
        "prompt_tokens_1st",
        "median_ms",
        "calls",
        "lookups",
    ];
    let whole = rows.iter().any(|r| r.tasks.is_some());
    let mut header: Vec<&str> = header.to_vec();
    if whole {
        header.extend([
            "task_success",
            "all_steps",
            "steps_done",
            "prompt_tokens_task",
            "cached_later",
        ]);
    }
    let mut lines: Vec<Vec<String>> = vec![header.iter().map(|h| (*h).to_owned()).collect()];
    for row in rows {
        let n = row.scenarios;
        let mut line = vec![
            row.setting.clone(),
            format!("{}/{n}", row.count(Outcome::Right)),
            format!("{}/{n}", row.args_valid),
            format!("{}/{}", row.args_matched, row.args_checked),
            row.count(Outcome::WrongTool).to_string(),
            row.count(Outcome::Malformed).to_string(),
            row.count(Outcome::NoCall).to_string(),
            row.count(Outcome::LookupsExhausted).to_string(),
            row.count(Outcome::Timeout).to_string(),
            row.count(Outcome::HttpError).to_string(),
            row.count(Outcome::Unparsable).to_string(),
            row.mean_first_prompt_tokens
                .map_or_else(|| "-".to_owned(), |t| format!("{t:.0}")),
            row.median_wall_ms
                .map_or_else(|| "-".to_owned(), |t| t.to_string()),
            row.model_calls.to_string(),
            row.lookups.to_string(),
        ];
        if whole {
            match &row.tasks {
                Some(t) => line.extend([
                    format!("{}/{}", t.succeeded, t.graded),
                    format!("{}/{}", t.all_steps, t.graded),
                    format!("{}/{}", t.steps_done, t.steps),
                    t.mean_prompt_tokens
                        .map_or_else(|| "-".to_owned(), |m| format!("{m:.0}")),
                    match t.cached_later {
                        Some((cached, prompt)) if prompt > 0 => format!(
                            "{:.0}%",
                            to_f64(usize::try_from(cached).unwrap_or(usize::MAX)) * 100.0
                                / to_f64(usize::try_from(prompt).unwrap_or(usize::MAX))
                        ),
                        _ => "-".to_owned(),
                    },
                ]),
                None => line.extend([
                    "-".to_owned(),
                    "-".to_owned(),
                    "-".to_owned(),
                    "-".to_owned(),
                ]),
            }
        }
        lines.push(line);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            lines
                .iter()
                .filter_map(|l| l.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for line in &lines {
        let cells: Vec<String> = line
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;

/// The smallest 1, 2 or 5 × 10^k at least `x` (1 for `x` ≤ 1).
fn nice_ceiling(x: f64) -> f64 {
    let mut step = 1.0;
    loop {
        for m in [1.0, 2.0, 5.0] {
            if m * step >= x {
                return m * step;
            }
        }
        step *= 10.0;
        if step > 1e15 {
            return x;
        }
    }
}

/// The chart: accuracy (% right) against the mean prompt tokens of the first request,
/// one labelled point per setting. The same rows give the same bytes. A setting whose
/// endpoint reported no usage sits at 0 tokens, labelled "(no usage)".
pub(crate) fn svg(rows: &[Row], title: &str) -> String {
    let max_tokens = rows
        .iter()
        .filter_map(|r| r.mean_first_prompt_tokens)
        .fold(0.0_f64, f64::max);
    // At least 5, so that the five tick steps are whole numbers of tokens (an endpoint
    // that reports no usage put every point at 0, and the ticks read `0 0 0 1 1 1`).
    let x_max = nice_ceiling((max_tokens * 1.1).max(5.0));
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let x_of = |t: f64| LEFT + t / x_max * plot_w;
    let y_of = |pct: f64| TOP + (100.0 - pct) / 100.0 * plot_h;
    let mut s = String::new();
    // `write!` into a String cannot fail.
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH:.0}" height="{HEIGHT:.0}" viewBox="0 0 {WIDTH:.0} {HEIGHT:.0}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        s,
        r#"<rect x="0" y="0" width="{WIDTH:.0}" height="{HEIGHT:.0}" fill="white"/>"#
    );
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
        WIDTH / 2.0,
        escape_xml(title)
    );
    // Axes.
    let _ = writeln!(
        s,
        r#"<line x1="{LEFT:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="black"/>"#,
        TOP + plot_h,
        LEFT + plot_w,
        TOP + plot_h
    );
    let _ = writeln!(
        s,
        r#"<line x1="{LEFT:.1}" y1="{TOP:.1}" x2="{LEFT:.1}" y2="{:.1}" stroke="black"/>"#,
        TOP + plot_h
    );
    for i in 0..=5_u32 {
        let f = f64::from(i) / 5.0;
        let (x, tokens) = (LEFT + f * plot_w, f * x_max);
        let _ = writeln!(
            s,
            r#"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="black"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{tokens:.0}</text>"#,
            TOP + plot_h,
            TOP + plot_h + 5.0,
            TOP + plot_h + 20.0
        );
        let (y, pct) = (y_of(f * 100.0), f * 100.0);
        let _ = writeln!(
            s,
            r##"<line x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#dddddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{pct:.0}%</text>"##,
            LEFT,
            LEFT + plot_w,
            LEFT - 8.0,
            y + 4.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">prompt tokens of the first request (mean, from the endpoint's usage)</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 15.0
    );
    let _ = writeln!(
        s,
        r#"<text x="18" y="{:.1}" text-anchor="middle" transform="rotate(-90 18 {:.1})">right first tool (% of scenarios)</text>"#,
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0
    );
    // Points drawn so far, so that the labels of settings at the same point are stacked
    // instead of written over each other.
    let mut drawn: Vec<(f64, f64)> = Vec::with_capacity(rows.len());
    for row in rows {
        let (x, label) = match row.mean_first_prompt_tokens {
            Some(t) => (x_of(t), escape_xml(&row.setting)),
            None => (
                x_of(0.0),
                format!("{} (no usage)", escape_xml(&row.setting)),
            ),
        };
        let y = y_of(row.accuracy());
        let same = drawn
            .iter()
            .filter(|(dx, dy)| (dx - x).abs() < 1.0 && (dy - y).abs() < 1.0)
            .count();
        drawn.push((x, y));
        let _ = writeln!(
            s,
            r##"<circle cx="{x:.1}" cy="{y:.1}" r="5" fill="#1f77b4"/><text x="{:.1}" y="{:.1}">{label} ({:.1}%, n={})</text>"##,
            x + 8.0,
            y - 8.0 + 14.0 * same as f64,
            row.accuracy(),
            row.scenarios
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn record(
        setting: &str,
        scenario: &str,
        outcome: Outcome,
        tokens: Option<u64>,
        wall: u64,
    ) -> Record {
        serde_json::from_value(json!({
            "setting": setting, "scenario": scenario, "outcome": outcome,
            "expected": ["a"], "first_tool": null, "arguments": null,
            "args_valid": matches!(outcome, Outcome::Right | Outcome::WrongTool),
            "args_match": if outcome == Outcome::Right { json!(true) } else { json!(null) },
            "model_calls": 1, "lookups": 0, "malformed_calls": 0, "validation_errors": [],
            "recovered_text_calls": 0, "first_prompt_tokens": tokens, "prompt_tokens": tokens,
            "completion_tokens": 1, "wall_ms": wall, "http_status": null, "detail": null,
            "model": "m", "max_calls": 2, "text_recovery": false, "constrained": false
        }))
        .unwrap()
    }

    fn rows() -> Vec<Row> {
        let records = [
            record("level=1", "a", Outcome::Right, Some(1000), 30),
            record("level=1", "b", Outcome::WrongTool, Some(1200), 10),
            record("level=1", "c", Outcome::Timeout, None, 20),
            record("level=3", "a", Outcome::Right, Some(300), 5),
            record("other", "a", Outcome::Right, Some(1), 1),
        ];
        summarize(&["level=1".to_owned(), "level=3".to_owned()], &records)
    }

    #[test]
    fn rows_count_each_setting_on_its_own() {
        let rows = rows();
        assert_eq!(rows.len(), 2);
        let l1 = &rows[0];
        assert_eq!(l1.scenarios, 3);
        assert_eq!(
            (
                l1.count(Outcome::Right),
                l1.count(Outcome::WrongTool),
                l1.count(Outcome::Timeout)
            ),
            (1, 1, 1)
        );
        assert_eq!((l1.args_valid, l1.args_checked, l1.args_matched), (2, 1, 1));
        assert_eq!(l1.mean_first_prompt_tokens, Some(1100.0));
        assert_eq!(l1.median_wall_ms, Some(20));
        assert!((l1.accuracy() - 100.0 / 3.0).abs() < 1e-9);
        assert_eq!(rows[1].accuracy(), 100.0);
        assert_eq!(median(&[1, 2, 3, 4]), Some(2));
        assert_eq!(median(&[]), None);
    }

    /// `all_steps` of a request that expects no call: only when no tool was called (the
    /// eval audit found every such request counted, whatever the model did).
    #[test]
    fn a_task_expecting_no_call_makes_all_steps_only_without_a_call() {
        let task = |scenario: &str, calls: &[&str]| -> Record {
            let mut r = record("level=1", scenario, Outcome::Right, Some(10), 1);
            r.expected = Vec::new();
            r.calls = Some(calls.iter().map(|c| (*c).to_owned()).collect());
            r.task_success = Some(calls.is_empty());
            r.steps_done = Some(0);
            r
        };
        let records = [task("quiet", &[]), task("busy", &["list_files"])];
        let rows = summarize(&["level=1".to_owned()], &records);
        let tasks = rows[0].tasks.as_ref().unwrap();
        assert_eq!((tasks.graded, tasks.succeeded, tasks.all_steps), (2, 1, 1));
    }

    /// Every task column is graded again from the line's calls: a stored `steps_done` or
    /// `task_success` (an older grader's, or edited) does not feed the table, and a task a
    /// later request failed in is no success whatever its calls.
    #[test]
    fn task_columns_are_graded_again_from_the_calls() {
        let task = |scenario: &str, calls: &[&str], stored: (bool, u32), error: bool| {
            let mut r = record("level=1", scenario, Outcome::Right, Some(10), 1);
            r.expected = vec!["a".to_owned(), "b".to_owned()];
            r.calls = Some(calls.iter().map(|c| (*c).to_owned()).collect());
            (r.task_success, r.steps_done) = (Some(stored.0), Some(stored.1));
            r.task_error = error.then(|| "HTTP 500".to_owned());
            r
        };
        let records = [
            task("done", &["a", "b"], (false, 0), false),
            task("half", &["a"], (true, 2), false),
            task("failed later", &["a", "b"], (true, 2), true),
        ];
        let rows = summarize(&["level=1".to_owned()], &records);
        let tasks = rows[0].tasks.as_ref().unwrap();
        assert_eq!(
            (
                tasks.graded,
                tasks.succeeded,
                tasks.all_steps,
                tasks.steps_done,
                tasks.steps
            ),
            (3, 1, 2, 5, 6)
        );
    }

    #[test]
    fn the_table_aligns_its_columns() {
        let text = table(&rows());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("setting  right  args_valid"), "{text}");
        assert!(lines[1].starts_with("level=1  1/3    2/3"), "{text}");
        assert!(lines[2].starts_with("level=3  1/1    1/1"), "{text}");
    }

    #[test]
    fn the_chart_is_deterministic_well_formed_and_labelled() {
        let a = svg(&rows(), "chef eval <m&m>");
        assert_eq!(a, svg(&rows(), "chef eval <m&m>"));
        assert!(a.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(a.ends_with("</svg>\n"));
        assert!(a.contains("chef eval &lt;m&amp;m&gt;"));
        assert!(a.contains("level=1 (33.3%, n=3)"), "{a}");
        assert!(a.contains("level=3 (100.0%, n=1)"), "{a}");
        assert_eq!(a.matches("<circle").count(), 2);
        // x axis: 1100 × 1.1 rounds up to 2000.
        assert!(a.contains(">2000</text>"), "{a}");
        assert_eq!(nice_ceiling(0.0), 1.0);
        assert_eq!(nice_ceiling(1210.0), 2000.0);
        assert_eq!(nice_ceiling(330.0), 500.0);
    }

    /// Session 39's eval audit: without usage every tick read `0 0 0 1 1 1`, and two
    /// settings at the same point wrote their labels over each other.
    #[test]
    fn ticks_are_whole_and_distinct_and_labels_at_one_point_are_stacked() {
        let records = [
            record("a", "s", Outcome::Right, None, 1),
            record("b", "s", Outcome::Right, None, 1),
        ];
        let rows = summarize(&["a".to_owned(), "b".to_owned()], &records);
        let chart = svg(&rows, "no usage");
        let ticks: Vec<&str> = chart
            .lines()
            .filter(|l| l.contains("text-anchor=\"middle\">") && l.starts_with("<line"))
            .filter_map(|l| l.rsplit_once("\">")?.1.strip_suffix("</text>"))
            .collect();
        assert_eq!(ticks, ["0", "1", "2", "3", "4", "5"], "{chart}");
        let label_y = |label: &str| -> f64 {
            let line = chart.lines().find(|l| l.contains(label)).unwrap();
            let at = line.find("<text x=").unwrap();
            let y = line[at..].split('"').nth(3).unwrap();
            y.parse().unwrap()
        };
        assert_eq!(
            label_y("b (no usage)") - label_y("a (no usage)"),
            14.0,
            "{chart}"
        );
    }
}
