//! Reading a scenario file: the toolgz JSON shape (`tests/fixtures/toolgz-scenarios.json`),
//! a JSON array of scenarios, or JSON Lines (`tests/fixtures/retrieval-149.jsonl` and the
//! eval's own form).
//!
//! Every scenario object may hold:
//!
//! | field | meaning |
//! |---|---|
//! | `id` | unique in the file; default `line-N` (JSON Lines) or `#N` (arrays), 1-based |
//! | `prompt` (or `query`) | the user's message; required |
//! | `expected` | the tools the task calls, in order: names, or `{"name","args"}` objects; `[]`: no tool should be called |
//! | `arguments` | the arguments expected of the first call (else `expected[0].args`) |
//! | `result` | the scripted result of the first dispatched call |
//! | `cannedResults` | scripted results by real tool name (toolgz) |
//! | `toolNames` | offer only these tools of the catalogue, in this order (toolgz subsets) |
//! | `split` | the half the scenario belongs to (`chef eval --split NAME` keeps one) |
//!
//! Other fields (`suite`, `note`, `maxTurns`, …) are ignored.

use std::{collections::BTreeMap, path::Path};

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::CliError;

/// The result a dispatched call gets when the scenario scripts none (JSON Lines).
pub(crate) const DEFAULT_RESULT: &str = "ok";
/// The result toolgz files give a call without a canned result.
const TOOLGZ_DEFAULT_RESULT: &str = r#"{"ok":true}"#;

/// One task for the model.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scenario {
    pub(crate) id: String,
    pub(crate) prompt: String,
    /// The tools the task calls, in order; the first is the one graded. Empty: the right
    /// answer is to call no tool.
    pub(crate) expected: Vec<String>,
    /// Arguments the first call must carry (a subset match).
    pub(crate) arguments: Option<Map<String, Value>>,
    /// Scripted results by real tool name.
    pub(crate) results: BTreeMap<String, String>,
    /// The result of a call without its own entry in `results`.
    pub(crate) default_result: String,
    /// Offer only these tools.
    pub(crate) tool_names: Option<Vec<String>>,
    /// The split the scenario belongs to (`calibrate`, `heldout`, …), if the file says.
    pub(crate) split: Option<String>,
}

impl Scenario {
    /// The scripted result for a dispatched call of `tool`.
    pub(crate) fn result_for(&self, tool: &str) -> &str {
        self.results.get(tool).unwrap_or(&self.default_result)
    }
}

#[derive(Debug, Deserialize)]
struct Raw {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    query: Option<String>,
    #[serde(default)]
    expected: Vec<RawExpected>,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
    #[serde(default)]
    result: Option<String>,
    #[serde(default, rename = "cannedResults")]
    canned_results: Option<BTreeMap<String, String>>,
    #[serde(default, rename = "toolNames")]
    tool_names: Option<Vec<String>>,
    #[serde(default)]
    split: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawExpected {
    Name(String),
    Call {
        name: String,
        #[serde(default)]
        args: Option<Map<String, Value>>,
    },
}

fn scenario(raw: Raw, fallback_id: String) -> Result<Scenario, String> {
    let id = match raw.id {
        None | Some(Value::Null) => fallback_id,
        Some(Value::String(s)) if !s.trim().is_empty() => s,
        Some(Value::Number(n)) => n.to_string(),
        Some(other) => return Err(format!("id {other} is not a non-empty string or number")),
    };
    let prompt = raw
        .prompt
        .or(raw.query)
        .filter(|p| !p.trim().is_empty())
        .ok_or_else(|| format!("scenario {id:?} has no prompt (or query)"))?;
    let mut arguments = raw.arguments;
    let mut expected = Vec::with_capacity(raw.expected.len());
    for (index, entry) in raw.expected.into_iter().enumerate() {
        let (name, args) = match entry {
            RawExpected::Name(name) => (name, None),
            RawExpected::Call { name, args } => (name, args),
        };
        if name.trim().is_empty() {
            return Err(format!(
                "scenario {id:?}: expected[{index}] has an empty name"
            ));
        }
        if index == 0 && arguments.is_none() {
            arguments = args;
        }
        expected.push(name);
    }
    if arguments.is_some() && expected.is_empty() {
        return Err(format!(
            "scenario {id:?} expects arguments but names no expected tool"
        ));
    }
    let toolgz = raw.canned_results.is_some();
    let mut results = raw.canned_results.unwrap_or_default();
    let default_result = match raw.result {
        Some(result) => {
            if let Some(first) = expected.first() {
                results
                    .entry(first.clone())
                    .or_insert_with(|| result.clone());
            }
            result
        }
        None if toolgz => TOOLGZ_DEFAULT_RESULT.to_owned(),
        None => DEFAULT_RESULT.to_owned(),
    };
    Ok(Scenario {
        id,
        prompt,
        expected,
        arguments,
        results,
        default_result,
        tool_names: raw.tool_names,
        split: raw.split,
    })
}

/// Reads the scenarios of `path`, in file order. Ids must be unique.
pub(crate) fn load(path: &Path) -> Result<Vec<Scenario>, CliError> {
    let text = std::fs::read_to_string(path).map_err(|source| CliError::Read {
        path: path.to_owned(),
        source,
    })?;
    let scenarios = parse(&text).map_err(|(line, problem)| CliError::Queries {
        path: path.to_owned(),
        line,
        problem,
    })?;
    if scenarios.is_empty() {
        return Err(CliError::Usage(format!(
            "{}: holds no scenario",
            path.display()
        )));
    }
    Ok(scenarios)
}

/// Parses a scenario file's text; an error carries its 1-based line (1 for whole-file
/// shapes).
fn parse(text: &str) -> Result<Vec<Scenario>, (usize, String)> {
    let list = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(mut object)) if object.contains_key("scenarios") => {
            match object.remove("scenarios") {
                Some(Value::Array(items)) => Some(items),
                _ => return Err((1, "\"scenarios\" is not an array".to_owned())),
            }
        }
        Ok(Value::Array(items)) => Some(items),
        // One object, or several lines: JSON Lines.
        _ => None,
    };
    let mut scenarios = Vec::new();
    match list {
        Some(items) => {
            for (index, item) in items.into_iter().enumerate() {
                let raw: Raw = serde_json::from_value(item)
                    .map_err(|e| (1, format!("scenario #{}: {e}", index + 1)))?;
                scenarios.push(scenario(raw, format!("#{}", index + 1)).map_err(|e| (1, e))?);
            }
        }
        None => {
            for (index, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let raw: Raw = serde_json::from_str(line)
                    .map_err(|e| (index + 1, format!("not a scenario object: {e}")))?;
                scenarios.push(
                    scenario(raw, format!("line-{}", index + 1)).map_err(|e| (index + 1, e))?,
                );
            }
        }
    }
    let mut ids = std::collections::HashSet::new();
    for s in &scenarios {
        if !ids.insert(s.id.as_str()) {
            return Err((1, format!("scenario id {:?} is used twice", s.id)));
        }
    }
    Ok(scenarios)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn fixture(name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures")
            .join(name);
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn the_toolgz_fixture_loads_with_canned_results_and_expected_arguments() {
        let all = parse(&fixture("toolgz-scenarios.json")).unwrap();
        assert_eq!(all.len(), 28);
        let first = &all[0];
        assert_eq!(first.id, "real-daily-vs-weekly");
        assert_eq!(first.expected, ["scorecard_lf_daily"]);
        assert_eq!(
            first.result_for("scorecard_lf_daily"),
            r#"{"rows":412,"grain":"daily"}"#
        );
        assert_eq!(first.result_for("other"), r#"{"ok":true}"#);
        let append = all
            .iter()
            .find(|s| s.id == "real-overwrite-vs-append")
            .unwrap();
        assert_eq!(
            append.arguments.as_ref().unwrap()["spreadsheet_id"],
            json!("1AbC")
        );
        assert!(all.iter().any(|s| s.tool_names.is_some()));
    }

    #[test]
    fn the_retrieval_fixture_loads_as_json_lines_with_line_ids() {
        let all = parse(&fixture("retrieval-149.jsonl")).unwrap();
        assert_eq!(all.len(), 210);
        assert_eq!(all[0].id, "line-1");
        assert_eq!(all[0].expected, ["accessorial_revenue_details"]);
        assert_eq!(all[0].result_for("accessorial_revenue_details"), "ok");
        assert!(all.iter().any(|s| s.expected.is_empty()));
        assert_eq!(all[0].split.as_deref(), Some("calibrate"));
        assert_eq!(all[1].split.as_deref(), Some("heldout"));
        let heldout = all
            .iter()
            .filter(|s| s.split.as_deref() == Some("heldout"))
            .count();
        assert_eq!(heldout, 105);
    }

    #[test]
    fn the_eval_json_lines_form_carries_arguments_and_a_result() {
        let text = r#"{"id":"w","prompt":"Weather in Oslo?","expected":["get_weather"],"arguments":{"city":"Oslo"},"result":"12 C"}

{"prompt":"hi","expected":[]}"#;
        let all = parse(text).unwrap();
        assert_eq!(
            all[0].arguments,
            Some(json!({"city": "Oslo"}).as_object().unwrap().clone())
        );
        assert_eq!(all[0].result_for("get_weather"), "12 C");
        assert_eq!(all[1].id, "line-3");
    }

    #[test]
    fn unusable_scenarios_name_their_line() {
        for (text, line, want) in [
            ("{\"prompt\":\"a\"}\nnot json", 2, "not a scenario object"),
            ("{\"expected\":[\"x\"]}", 1, "no prompt"),
            (
                "{\"id\":\"a\",\"prompt\":\"p\"}\n{\"id\":\"a\",\"prompt\":\"q\"}",
                1,
                "used twice",
            ),
            ("{\"prompt\":\"p\",\"expected\":[\"\"]}", 1, "empty name"),
            (
                "{\"prompt\":\"p\",\"arguments\":{\"a\":1}}",
                1,
                "names no expected tool",
            ),
            ("{\"scenarios\":{}}", 1, "not an array"),
            ("[{\"prompt\":\"p\",\"id\":[1]}]", 1, "id"),
        ] {
            let (got_line, problem) = parse(text).unwrap_err();
            assert_eq!(got_line, line, "{text}");
            assert!(problem.contains(want), "{text}: {problem}");
        }
    }
}
