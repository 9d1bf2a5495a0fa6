//! Generates `chef_compress::MEASURED` (`crates/compress/src/measured/generated.rs`) from
//! the run files under `docs/eval/` and their list, `docs/eval/runs.json`, and checks that
//! the committed table is exactly what they give: the figures `recommend_level` quotes are
//! never typed by hand. `CHEF_BLESS=1 cargo test -p chef-cli measured_table` rewrites it.
//!
//! `runs.json` holds `{"runs": [{"file", "model", "catalogue", "scenarios", "context", "n",
//! "settings"?, "by_answerable"?, "note"?}]}`: `n` is how many scenarios each setting ran
//! (checked); `settings` keeps only those labels of the file (default: all, in order of first
//! appearance), each of which must be a `--setting` spec (not a `name=` label);
//! `by_answerable` splits the file's scenarios into those that expect a tool and those that
//! expect none (two rows per setting). Every `docs/eval/*.jsonl` must be listed.

use std::{fmt::Write as _, path::Path};

use serde::Deserialize;

use super::{
    grade::{Outcome, Record},
    report,
    setting::{self, Prune},
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Runs {
    runs: Vec<Run>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Run {
    file: String,
    model: String,
    catalogue: String,
    scenarios: String,
    context: u32,
    /// Scenarios each setting of the file ran (both halves of `by_answerable` together):
    /// a partial or merged run fails the generation instead of giving a wrong row.
    n: usize,
    #[serde(default)]
    settings: Option<Vec<String>>,
    #[serde(default)]
    by_answerable: bool,
    /// Free text for the reader of `runs.json`; not in the table.
    #[serde(default)]
    #[expect(dead_code, reason = "documentation only")]
    note: Option<String>,
}

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// A Rust string literal.
fn lit(s: &str) -> String {
    format!("{s:?}")
}

fn u32_of(n: usize) -> u32 {
    u32::try_from(n).expect("counts fit in u32")
}

/// One row of the table, for the Markdown summary in docs/EVAL.md.
struct Row {
    model: String,
    scenarios: String,
    context: u32,
    setting: String,
    constrained: bool,
    n: usize,
    right: usize,
    args_valid: usize,
    tokens: Option<u32>,
    /// Every scenario ended in an HTTP error (the server refused the setting, say a prompt
    /// longer than its context).
    refused: bool,
    source: String,
}

/// One chart: a model on a scenario set, one point per setting.
struct Chart {
    model: String,
    catalogue: String,
    context: u32,
    scenarios: String,
    labels: Vec<String>,
    records: Vec<Record>,
}

impl Chart {
    /// `docs/eval/chart-<model>-<scenarios>-<context>.svg`, the words in lower case joined by
    /// `-` (the catalogue is not in the name: two charts differing only in it panic).
    fn file(&self) -> String {
        let slug = |text: &str| -> String {
            text.split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_ascii_lowercase)
                .collect::<Vec<_>>()
                .join("-")
        };
        format!(
            "docs/eval/chart-{}-{}-{}.svg",
            slug(&self.model),
            slug(&self.scenarios),
            self.context
        )
    }

    fn svg(&self) -> String {
        let rows = report::summarize(&self.labels, &self.records);
        report::svg(&rows, &format!("{} — {}", self.model, self.scenarios))
    }
}

/// The generated module's text, the rows in table order, and the charts.
fn generate() -> (String, Vec<Row>, Vec<Chart>) {
    let mut rows = Vec::new();
    let mut charts: Vec<Chart> = Vec::new();
    let list = std::fs::read_to_string(repo().join("docs/eval/runs.json")).unwrap();
    let runs: Runs = serde_json::from_str(&list).unwrap();
    let mut out = String::new();
    let mut any_style = false;
    for run in &runs.runs {
        let source = format!("docs/eval/{}", run.file);
        let text = std::fs::read_to_string(repo().join(&source))
            .unwrap_or_else(|e| panic!("{source}: {e}"));
        let records: Vec<Record> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{source}: {e}")))
            .collect();
        let labels: Vec<String> = match &run.settings {
            Some(labels) => labels.clone(),
            None => {
                let mut seen: Vec<String> = Vec::new();
                for r in &records {
                    if !seen.contains(&r.setting) {
                        seen.push(r.setting.clone());
                    }
                }
                seen
            }
        };
        let groups: Vec<(String, Option<bool>)> = if run.by_answerable {
            vec![
                (format!("{}, answerable", run.scenarios), Some(true)),
                (format!("{}, unanswerable", run.scenarios), Some(false)),
            ]
        } else {
            vec![(run.scenarios.clone(), None)]
        };
        for label in &labels {
            let parsed = setting::parse(label)
                .unwrap_or_else(|e| panic!("{source}: {label:?} is not a --setting spec: {e}"));
            let all: Vec<&Record> = records.iter().filter(|r| &r.setting == label).collect();
            let ids: std::collections::HashSet<&str> =
                all.iter().map(|r| r.scenario.as_str()).collect();
            assert!(
                all.len() == run.n && ids.len() == run.n,
                "{source}: {label} has {} lines for {} scenarios, runs.json says {}",
                all.len(),
                ids.len(),
                run.n
            );
            let model_id = all[0].run.model.clone();
            assert!(
                all.iter().all(|r| r.run.model == model_id),
                "{source}: {label} was run with more than one --model"
            );
            for (scenarios, answerable) in &groups {
                let mine: Vec<Record> = all
                    .iter()
                    .filter(|r| answerable.is_none_or(|a| a != r.expected.is_empty()))
                    .map(|r| (*r).clone())
                    .collect();
                assert!(!mine.is_empty(), "{source}: no record of {label}");
                let constrained = mine[0].run.constrained;
                assert!(
                    mine.iter().all(|r| r.run.constrained == constrained),
                    "{source}: {label} mixes constrained and unconstrained lines"
                );
                // Counted as `chef eval`'s own table counts them; the mean rounded as it
                // prints it (`prompt_tokens_1st`).
                let summary = report::summarize(std::slice::from_ref(label), &mine)
                    .pop()
                    .expect("one row per setting");
                let mean = summary
                    .mean_first_prompt_tokens
                    .map(|t| format!("{t:.0}").parse::<u32>().expect("tokens fit in u32"));
                let (right, valid) = (summary.count(Outcome::Right), summary.args_valid);
                let level = format!("{:?}", parsed.level);
                let style = match parsed.style {
                    None => "None".to_owned(),
                    Some(style) => {
                        any_style = true;
                        format!("Some(MapStyle::{style:?})")
                    }
                };
                let discovery = matches!(parsed.prune, Prune::Discover(_));
                let ranked = match parsed.prune {
                    Prune::Ranked(k) | Prune::Discover(k) => format!("Some({k})"),
                    Prune::All => "None".to_owned(),
                    Prune::Task => panic!("{source}: task pruning has no column in the table"),
                };
                writeln!(
                    out,
                    "    Measured {{ model: {}, model_id: {}, scenarios: {}, answerable: {answerable:?}, catalogue: {}, context: {}, setting: {}, level: Level::{level}, map_style: {style}, ranked_top: {ranked}, discovery: {discovery}, compiled_map: {}, constrained: {constrained}, n: {}, right: {}, args_valid: {}, prompt_tokens: {}, source: {} }},",
                    lit(&run.model),
                    lit(&model_id),
                    lit(scenarios),
                    lit(&run.catalogue),
                    run.context,
                    lit(label),
                    parsed.compiled.is_some(),
                    u32_of(mine.len()),
                    u32_of(right),
                    u32_of(valid),
                    mean.map_or_else(|| "None".to_owned(), |t| format!("Some({t})")),
                    lit(&source),
                )
                .unwrap();
                rows.push(Row {
                    model: run.model.clone(),
                    scenarios: scenarios.clone(),
                    context: run.context,
                    setting: label.clone(),
                    constrained,
                    n: mine.len(),
                    right,
                    args_valid: valid,
                    tokens: mean,
                    refused: summary.count(Outcome::HttpError) == mine.len(),
                    source: source.clone(),
                });
                let point = if constrained {
                    label.clone()
                } else {
                    format!("{label}, unconstrained")
                };
                let chart = match charts.iter_mut().position(|c| {
                    c.model == run.model
                        && c.catalogue == run.catalogue
                        && c.context == run.context
                        && &c.scenarios == scenarios
                }) {
                    Some(i) => &mut charts[i],
                    None => {
                        charts.push(Chart {
                            model: run.model.clone(),
                            catalogue: run.catalogue.clone(),
                            context: run.context,
                            scenarios: scenarios.clone(),
                            labels: Vec::new(),
                            records: Vec::new(),
                        });
                        charts.last_mut().expect("just pushed")
                    }
                };
                assert!(
                    !chart.labels.contains(&point),
                    "{source}: {point} is measured twice for {scenarios}"
                );
                chart.labels.push(point.clone());
                chart.records.extend(mine.into_iter().map(|r| Record {
                    setting: point.clone(),
                    ..r
                }));
            }
        }
    }
    out.push_str("];\n");
    // The imports the rows use, as rustfmt lays them out.
    let imports = match (rows.is_empty(), any_style) {
        (true, _) => "use crate::measured::Measured;",
        (false, false) => "use crate::{measured::Measured, options::Level};",
        (false, true) => {
            "use crate::{\n    measured::Measured,\n    options::{Level, MapStyle},\n};"
        }
    };
    let out = format!(
        "//! Generated from docs/eval/runs.json and the run files it lists by\n\
         //! `CHEF_BLESS=1 cargo test -p chef-cli measured_table`. Do not edit by hand.\n\n\
         {imports}\n\n#[rustfmt::skip]\n\
         pub(crate) const MEASURED: &[Measured] = &[\n{out}"
    );
    let listed: Vec<&str> = runs.runs.iter().map(|r| r.file.as_str()).collect();
    for entry in std::fs::read_dir(repo().join("docs/eval")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            !name.ends_with(".jsonl") || listed.contains(&name.as_str()),
            "docs/eval/{name} is not listed in docs/eval/runs.json"
        );
    }
    let files: std::collections::HashSet<String> = charts.iter().map(Chart::file).collect();
    assert_eq!(files.len(), charts.len(), "two charts would share a file");
    (out, rows, charts)
}

const BEGIN: &str = "<!-- measured:begin (generated by `CHEF_BLESS=1 cargo test -p chef-cli measured_table`; do not edit) -->\n";
const END: &str = "<!-- measured:end -->";

/// The Markdown table of every row, one model and scenario set after another.
fn markdown(rows: &[Row]) -> String {
    let mut out = String::from(
        "| model | scenarios | context | setting | constrained | right | args valid | prompt tokens, 1st request (mean) | run file |\n|---|---|---:|---|---|---:|---:|---:|---|\n",
    );
    for r in rows {
        #[expect(clippy::cast_precision_loss, reason = "scenario counts are small")]
        let pct = r.right as f64 * 100.0 / r.n.max(1) as f64;
        writeln!(
            out,
            "| {} | {} | {} | `{}` | {} | {}/{} ({pct:.0}%) | {}/{} | {} | `{}` |",
            r.model,
            r.scenarios,
            chef_compress::thousands(usize::try_from(r.context).unwrap_or(usize::MAX)),
            r.setting,
            if r.constrained { "yes" } else { "no" },
            r.right,
            r.n,
            r.args_valid,
            r.n,
            r.tokens.map_or_else(
                || if r.refused {
                    "refused by the server (an HTTP error on every scenario)"
                } else {
                    "-"
                }
                .to_owned(),
                |t| chef_compress::thousands(usize::try_from(t).unwrap_or(usize::MAX))
            ),
            r.source.trim_start_matches("docs/eval/"),
        )
        .unwrap();
    }
    out
}

/// docs/EVAL.md with its generated section replaced by `table`.
fn with_table(doc: &str, table: &str) -> String {
    let start = doc
        .find(BEGIN)
        .expect("docs/EVAL.md has the measured:begin marker")
        + BEGIN.len();
    let end = doc[start..]
        .find(END)
        .expect("docs/EVAL.md has the measured:end marker")
        + start;
    format!("{}{table}{}", &doc[..start], &doc[end..])
}

#[test]
fn measured_table_is_generated_from_docs_eval() {
    let path = repo().join("crates/compress/src/measured/generated.rs");
    let doc_path = repo().join("docs/EVAL.md");
    let (want, rows, charts) = generate();
    let doc = std::fs::read_to_string(&doc_path).unwrap();
    let want_doc = with_table(&doc, &markdown(&rows));
    if std::env::var("CHEF_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, &want).unwrap();
        std::fs::write(&doc_path, &want_doc).unwrap();
        for chart in &charts {
            std::fs::write(repo().join(chart.file()), chart.svg()).unwrap();
        }
        return;
    }
    let generated: Vec<String> = charts.iter().map(Chart::file).collect();
    for entry in std::fs::read_dir(repo().join("docs/eval")).unwrap() {
        let name = format!("docs/eval/{}", entry.unwrap().file_name().to_string_lossy());
        assert!(
            !name.ends_with(".svg") || generated.contains(&name),
            "{name} is not generated from docs/eval/runs.json: remove it"
        );
    }
    for chart in &charts {
        let have = std::fs::read_to_string(repo().join(chart.file())).unwrap_or_default();
        assert!(
            have == chart.svg(),
            "{} is not what docs/eval gives; rebuild it with `CHEF_BLESS=1 cargo test -p chef-cli measured_table`",
            chart.file()
        );
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{} is not what docs/eval gives; rebuild it with `CHEF_BLESS=1 cargo test -p chef-cli measured_table`",
        path.display()
    );
    assert!(
        doc == want_doc,
        "docs/EVAL.md's measured table is not what docs/eval gives; rebuild it with `CHEF_BLESS=1 cargo test -p chef-cli measured_table`"
    );
}
