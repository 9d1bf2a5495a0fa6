//! `--setting SPEC`: one configuration of chef to evaluate.
//!
//! A spec is comma-separated `key=value` pairs, `level` required:
//!
//! | key | values | default |
//! |---|---|---|
//! | `level` | `0`–`4` | required |
//! | `style` | `name+required`, `explicit`, `signature`, `distinct`; level 3 only | chef's default |
//! | `prune` | `all`, `task`, `ranked:K`, `discover:K` (the K best-ranked tools and `find_tools`; `discover:0` is `find_tools` alone at first, what `chef mcp serve`'s discover mode shows a host) | `all` |
//! | `compiled` | a compiled map (`chef compile-map` writes one); required at level 4, optional at level 1 (its docstrings), refused at 0, 2 and 3 | none |
//! | `answer` | `tool` (chef's `final_answer`, through which the model ends its task: `ChefConfig::with_answer_tool`), `note` (the system prompt also describes the constrained format's `{"answer": …}` branch), `todo` (with `--constrain`, each reply first lists the parts of the request still to do, `"still_to_do": […]`: a call with one or more, the answer with none) or `none` | `none` |
//! | `name` | the label in the run file, the table and the chart | the spec without `name` |
//!
//! So `level=3,style=distinct`, `level=1,prune=ranked:10`, `level=4,compiled=map.json`.

use std::{collections::BTreeMap, path::PathBuf};

use chef::{ChefConfig, PrunePolicy};
use chef_compress::{Level, MapStyle, Options};

use crate::error::CliError;

/// How tools are pruned before compression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Prune {
    /// Every tool.
    All,
    /// chef's task pruning on the scenario's prompt.
    Task,
    /// The K tools that rank best for the prompt.
    Ranked(usize),
    /// The K tools that rank best, plus `find_tools` for what they lack (the discovery
    /// setting, `PrunePolicy::Discover`).
    Discover(usize),
}

/// One parsed `--setting`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Setting {
    /// The label: `name=`, else the spec as given minus `name`.
    pub(crate) label: String,
    /// The spec as given minus `name`: what the setting is, whatever its label.
    pub(crate) spec: String,
    pub(crate) level: Level,
    pub(crate) style: Option<MapStyle>,
    pub(crate) prune: Prune,
    pub(crate) compiled: Option<PathBuf>,
    /// How the model is given a way to end its task (`answer=`).
    pub(crate) answer: Answer,
}

/// A setting's `answer=`: what, beyond the constrained format's `{"answer": …}` branch, lets
/// the model end its task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Answer {
    /// Nothing more (`none`).
    #[default]
    None,
    /// chef's `final_answer` tool (`tool`: `ChefConfig::with_answer_tool`).
    Tool,
    /// The system prompt describes the branch (`note`: [`super::ANSWER_NOTE`]).
    Note,
    /// Every reply of the constrained format first lists the parts of the request still
    /// to do, [`super::TODO_MEMBER`]: a call with at least one, the answer with none, so
    /// the model ends its task by its own list (`todo`; harness only, `--constrain`).
    Todo,
}

/// The settings used when no `--setting` is given: level 1 and level 3.
pub(crate) fn defaults() -> Vec<Setting> {
    ["level=1", "level=3"]
        .into_iter()
        .filter_map(|s| parse(s).ok())
        .collect()
}

/// Why a `--setting` spec is unusable.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SettingError {
    #[error("{0}")]
    Level(#[source] chef_compress::UnsupportedLevel),
    #[error("{0}")]
    MapStyle(#[source] chef_compress::UnsupportedMapStyle),
    /// A spec chef itself refuses (the message quotes it).
    #[error("{0}")]
    Invalid(String),
}

fn invalid(message: String) -> SettingError {
    SettingError::Invalid(message)
}

/// Parses a spec (clap's value parser for `--setting`).
pub(crate) fn parse(spec: &str) -> Result<Setting, SettingError> {
    let mut level = None;
    let mut style = None;
    let mut prune = Prune::All;
    let mut compiled = None;
    let mut answer = Answer::None;
    let mut name = None;
    let mut label_parts = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| invalid(format!("{part:?} is not key=value (in setting {spec:?})")))?;
        let (key, value) = (key.trim(), value.trim());
        if !seen.insert(key.to_owned()) {
            return Err(invalid(format!("{key} given twice in setting {spec:?}")));
        }
        match key {
            "level" => {
                level = Some(value.parse::<Level>().map_err(SettingError::Level)?);
            }
            "style" => {
                style = Some(value.parse::<MapStyle>().map_err(SettingError::MapStyle)?);
            }
            "prune" => prune = parse_prune(value)?,
            "answer" => {
                answer = match value {
                    "tool" => Answer::Tool,
                    "note" => Answer::Note,
                    "todo" => Answer::Todo,
                    "none" => Answer::None,
                    _ => {
                        return Err(invalid(format!(
                            "answer={value:?}: expected tool, note, todo or none (in setting {spec:?})"
                        )));
                    }
                };
            }
            "compiled" if !value.is_empty() => compiled = Some(PathBuf::from(value)),
            "name" if !value.is_empty() => name = Some(value.to_owned()),
            "compiled" | "name" => {
                return Err(invalid(format!("{key} is empty in setting {spec:?}")));
            }
            other => {
                return Err(invalid(format!(
                    "unknown key {other:?} in setting {spec:?} (expected level, style, prune, answer, compiled or name)"
                )));
            }
        }
        if key != "name" {
            label_parts.push(format!("{key}={value}"));
        }
    }
    let level = level.ok_or_else(|| invalid(format!("setting {spec:?} has no level=N")))?;
    if style.is_some() && level != Level::Three {
        return Err(invalid(format!(
            "setting {spec:?}: style= applies only at level 3 (the tool map's style); \
             remove it or use level=3"
        )));
    }
    if compiled.is_some() && !matches!(level, Level::One | Level::Four) {
        return Err(invalid(format!(
            "setting {spec:?}: compiled= applies only at level 4 (the compiled map) and \
             level 1 (its docstrings); remove it or use level=1 or level=4"
        )));
    }
    if level == Level::Four && compiled.is_none() {
        return Err(invalid(format!(
            "setting {spec:?}: level 4 needs compiled=MAP.json (`chef compile-map` writes one)"
        )));
    }
    let spec_text = label_parts.join(",");
    Ok(Setting {
        label: name.unwrap_or_else(|| spec_text.clone()),
        spec: spec_text,
        level,
        style,
        prune,
        compiled,
        answer,
    })
}

fn parse_prune(value: &str) -> Result<Prune, SettingError> {
    match value {
        "all" => Ok(Prune::All),
        "task" => Ok(Prune::Task),
        _ => {
            // `discover:0` is the search tool alone (chef mcp serve's discover mode); a
            // ranked list of nothing is not a setting.
            let (make, k, least): (fn(usize) -> Prune, _, _) = match (
                value.strip_prefix("ranked:"),
                value.strip_prefix("discover:"),
            ) {
                (Some(k), _) => (Prune::Ranked, k, 1),
                (_, Some(k)) => (Prune::Discover, k, 0),
                _ => (Prune::Ranked, "", 1),
            };
            let k = k
                .parse::<usize>()
                .ok()
                .filter(|k| *k >= least)
                .ok_or_else(|| {
                    invalid(format!(
                        "prune={value:?}: expected all, task, ranked:K (K at least 1) or \
                         discover:K (K at least 0)"
                    ))
                })?;
            Ok(make(k))
        }
    }
}

impl Setting {
    /// The chef configuration for this setting, its compiled map read from disk.
    pub(crate) fn config(&self) -> Result<ChefConfig, CliError> {
        let mut options = Options::new().with_level(self.level);
        if let Some(style) = self.style {
            options = options.with_map_style(style);
        }
        if let Some(path) = &self.compiled {
            let map: BTreeMap<String, String> = crate::compress::load_compiled(path)?;
            if self.level == Level::Four && map.is_empty() {
                return Err(CliError::Usage(format!(
                    "{}: the compiled map is empty; level 4 needs one `def` line per tool",
                    path.display()
                )));
            }
            options = options.with_compiled(map);
        }
        let prune = match self.prune {
            Prune::All => PrunePolicy::All,
            Prune::Task => PrunePolicy::ByTask,
            Prune::Ranked(top_k) => PrunePolicy::ranked(top_k),
            Prune::Discover(top_k) => PrunePolicy::discover(top_k),
        };
        Ok(ChefConfig::default()
            .with_compress(options)
            .with_prune(prune)
            .with_answer_tool(self.answer == Answer::Tool))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_into_settings_with_readable_labels() {
        let s = parse("level=3, style=distinct").unwrap();
        assert_eq!(
            (s.label.as_str(), s.level, s.style, &s.prune),
            (
                "level=3,style=distinct",
                Level::Three,
                Some(MapStyle::Distinct),
                &Prune::All
            )
        );
        let s = parse("level=1,prune=ranked:10,name=small").unwrap();
        assert_eq!((s.label.as_str(), &s.prune), ("small", &Prune::Ranked(10)));
        let s = parse("level=4,compiled=map.json").unwrap();
        assert_eq!(s.compiled, Some(PathBuf::from("map.json")));
        let s = parse("level=1,compiled=map.json").unwrap();
        assert_eq!(s.compiled, Some(PathBuf::from("map.json")));
        assert_eq!(parse("prune=task,level=0").unwrap().prune, Prune::Task);
        assert_eq!(
            parse("level=1,prune=discover:8").unwrap().prune,
            Prune::Discover(8)
        );
        assert_eq!(
            parse("level=1,prune=discover:0").unwrap().prune,
            Prune::Discover(0)
        );
        let s = parse("level=1,prune=discover:10,answer=tool").unwrap();
        assert_eq!(
            (s.label.as_str(), s.answer == Answer::Tool),
            ("level=1,prune=discover:10,answer=tool", true)
        );
        assert!(s.config().unwrap().answer_tool);
        assert!(parse("level=1,answer=none").unwrap().answer != Answer::Tool);
        assert_eq!(parse("level=1,answer=note").unwrap().answer, Answer::Note);
        // docs/EVAL.md's settings table names every value (found by session 33's CLI
        // audit: `note` was missing).
        let eval_md = include_str!("../../../../docs/EVAL.md");
        let row = eval_md
            .lines()
            .find(|l| l.starts_with("| `answer` |"))
            .expect("EVAL.md has an `answer` row");
        for value in ["tool", "note", "todo", "none"] {
            assert!(parse(&format!("level=1,answer={value}")).is_ok(), "{value}");
            assert!(
                row.contains(&format!("`{value}` (")) || row.contains(&format!("or `{value}`")),
                "{value}: {row}"
            );
        }
        assert!(!parse("level=1").unwrap().config().unwrap().answer_tool);
        let labels: Vec<_> = defaults().into_iter().map(|s| s.label).collect();
        assert_eq!(labels, ["level=1", "level=3"]);
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        for (spec, want) in [
            ("style=distinct", "no level"),
            ("level=9", "9"),
            ("level=3,style=fancy", "fancy"),
            ("level=3,prune=ranked:0", "ranked:K"),
            ("level=3,prune=some", "ranked:K"),
            ("level=1,prune=discover:-1", "discover:K"),
            ("level=1,prune=discover:x", "discover:K"),
            ("level=3,colour=red", "unknown key"),
            ("level=3,level=1", "twice"),
            ("level3", "not key=value"),
            ("level=4", "compiled=MAP.json"),
            ("level=1,name=", "empty"),
            ("level=1,style=distinct", "style= applies only at level 3"),
            ("level=4,compiled=m.json,style=signature", "only at level 3"),
            (
                "level=3,compiled=m.json",
                "compiled= applies only at level 4",
            ),
            ("level=0,compiled=m.json", "level 1"),
            ("level=2,compiled=m.json", "compiled="),
            ("level=1,answer=yes", "expected tool, note, todo or none"),
        ] {
            let err = parse(spec).unwrap_err().to_string();
            assert!(err.contains(want), "{spec}: {err}");
        }
    }
}
