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
//! | `expected` | required: the tools the task calls, in order: names, or `{"name","args"}` objects; `[]`: no tool should be called |
//! | `arguments` | the arguments expected of the first call (else `expected[0].args`) |
//! | `result` | the scripted result of the first dispatched call |
//! | `cannedResults` | scripted results by real tool name (toolgz) |
//! | `toolNames` | offer only these tools of the catalogue, in this order (toolgz subsets) |
//! | `split` | the half the scenario belongs to (`chef eval --split NAME` keeps one) |
//!
//! Other fields (`suite`, `note`, `maxTurns`, …) are ignored.

use std::{
    collections::{BTreeMap, HashMap},
    path::Path,
};

use serde_json::{Map, Value};

use crate::error::{CliError, json_line_problem};

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

/// What is wrong with a scenario file: at a line (JSON Lines, or a whole-file syntax
/// error), or in an item of an array (the message names it `#N`).
#[derive(Debug, PartialEq)]
struct Problem {
    line: Option<usize>,
    message: String,
}

impl Problem {
    fn at(line: usize, message: String) -> Self {
        Self {
            line: Some(line),
            message,
        }
    }

    fn item(message: String) -> Self {
        Self {
            line: None,
            message,
        }
    }
}

/// `object[key]` as a string; absent or `null` is none.
fn string(object: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("\"{key}\" is not a string")),
    }
}

/// `object[key]` as a list of strings; absent or `null` is none.
fn strings(object: &Map<String, Value>, key: &str) -> Result<Option<Vec<String>>, String> {
    let err = || format!("\"{key}\" is not a list of strings");
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned).ok_or_else(err))
            .collect::<Result<_, _>>()
            .map(Some),
        Some(_) => Err(err()),
    }
}

/// `object[key]` as an object; absent or `null` is none.
fn object_field(
    object: &Map<String, Value>,
    key: &str,
) -> Result<Option<Map<String, Value>>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(map)) => Ok(Some(map.clone())),
        Some(_) => Err(format!("\"{key}\" is not an object")),
    }
}

/// One scenario from its JSON value; `fallback_id` when it has no `id`. `item` is its
/// 1-based number in an array (a JSON Lines error is named by its line instead).
fn scenario(value: &Value, fallback_id: String, item: Option<usize>) -> Result<Scenario, String> {
    let number = item.map(|n| format!("scenario #{n}"));
    let Some(raw) = value.as_object() else {
        return Err(match &number {
            Some(number) => format!("{number} is not a JSON object"),
            None => "not a scenario: expected a JSON object".to_owned(),
        });
    };
    let (id, explicit) = match raw.get("id") {
        None | Some(Value::Null) => (fallback_id, false),
        Some(Value::String(s)) if !s.trim().is_empty() => (s.clone(), true),
        Some(Value::Number(n)) => (n.to_string(), true),
        Some(other) => {
            let id = format!("id {other} is not a non-empty string or number");
            return Err(match &number {
                Some(number) => format!("{number}: {id}"),
                None => id,
            });
        }
    };
    // How messages name the scenario: `scenario #2 ("a")`, `scenario #2`, `scenario "a"`.
    let who = match (&number, explicit) {
        (Some(number), true) => format!("{number} ({id:?})"),
        (Some(number), false) => number.clone(),
        (None, _) => format!("scenario {id:?}"),
    };
    let in_scenario = |problem: String| format!("{who}: {problem}");
    let prompt = string(raw, "prompt")
        .map_err(in_scenario)?
        .or(string(raw, "query").map_err(in_scenario)?)
        .filter(|p| !p.trim().is_empty())
        .ok_or_else(|| format!("{who} has no prompt (or query)"))?;
    let entries = match raw.get("expected") {
        Some(Value::Array(entries)) => entries,
        None | Some(Value::Null) => {
            return Err(format!(
                "{who} has no \"expected\": list the tools it should call, or [] when it should call none"
            ));
        }
        Some(_) => {
            return Err(in_scenario(
                "\"expected\" is not a list (of tool names or {\"name\", \"args\"} objects)"
                    .to_owned(),
            ));
        }
    };
    let mut arguments = object_field(raw, "arguments").map_err(in_scenario)?;
    let mut expected = Vec::with_capacity(entries.len());
    for (index, entry) in entries.iter().enumerate() {
        let (name, args) = match entry {
            Value::String(name) => (name.clone(), None),
            Value::Object(call) => match call.get("name") {
                Some(Value::String(name)) => (
                    name.clone(),
                    object_field(call, "args")
                        .map_err(|e| in_scenario(format!("expected[{index}]: {e}")))?,
                ),
                _ => {
                    return Err(in_scenario(format!(
                        "expected[{index}] has no \"name\" string"
                    )));
                }
            },
            _ => {
                return Err(in_scenario(format!(
                    "expected[{index}] is not a tool name or a {{\"name\", \"args\"}} object"
                )));
            }
        };
        if name.trim().is_empty() {
            return Err(in_scenario(format!("expected[{index}] has an empty name")));
        }
        if index == 0 && arguments.is_none() {
            arguments = args;
        }
        expected.push(name);
    }
    if arguments.is_some() && expected.is_empty() {
        return Err(format!(
            "{who} expects arguments but names no expected tool"
        ));
    }
    let canned = object_field(raw, "cannedResults").map_err(in_scenario)?;
    let toolgz = canned.is_some();
    let mut results = BTreeMap::new();
    for (tool, result) in canned.unwrap_or_default() {
        let Value::String(result) = result else {
            return Err(in_scenario(format!(
                "cannedResults[{tool:?}] is not a string"
            )));
        };
        results.insert(tool, result);
    }
    let default_result = match string(raw, "result").map_err(in_scenario)? {
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
        tool_names: strings(raw, "toolNames").map_err(in_scenario)?,
        split: string(raw, "split").map_err(in_scenario)?,
        id,
        prompt,
        expected,
        arguments,
        results,
        default_result,
    })
}

/// Reads the scenarios of `path`, in file order. Ids must be unique.
pub(crate) fn load(path: &Path) -> Result<Vec<Scenario>, CliError> {
    let text = std::fs::read_to_string(path).map_err(|source| CliError::Read {
        path: path.to_owned(),
        source,
    })?;
    // A leading UTF-8 byte-order mark (an editor's) is not part of the JSON.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let scenarios = parse(text).map_err(|problem| match problem.line {
        Some(line) => CliError::Queries {
            path: path.to_owned(),
            line,
            problem: problem.message,
        },
        None => CliError::Usage(format!("{}: {}", path.display(), problem.message)),
    })?;
    if scenarios.is_empty() {
        return Err(CliError::Usage(format!(
            "{}: holds no scenario",
            path.display()
        )));
    }
    Ok(scenarios)
}

/// The items of a whole-file shape (an array, or an object with `"scenarios"`), none for
/// JSON Lines. A file that starts like a whole-file shape and does not parse as one is an
/// error at serde's position, which is the file's own.
fn whole_file(text: &str) -> Result<Option<Vec<Value>>, Problem> {
    let start = text.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n']);
    let whole = serde_json::from_str::<Value>(text);
    match whole {
        Ok(Value::Array(items)) => Ok(Some(items)),
        Ok(Value::Object(mut object)) if object.contains_key("scenarios") => {
            match object.remove("scenarios") {
                Some(Value::Array(items)) => Ok(Some(items)),
                _ => Err(Problem::item("\"scenarios\" is not an array".to_owned())),
            }
        }
        // One object: JSON Lines of one line.
        Ok(_) => Ok(None),
        Err(e) => {
            let first_line_alone = start
                .lines()
                .next()
                .is_some_and(|l| serde_json::from_str::<Value>(l).is_ok());
            let looks_whole = start.starts_with('[')
                || (start.starts_with('{') && !first_line_alone && text.contains("\"scenarios\""));
            if looks_whole {
                Err(Problem::at(e.line(), json_line_problem(&e)))
            } else {
                // Several lines: JSON Lines.
                Ok(None)
            }
        }
    }
}

/// Parses a scenario file's text.
fn parse(text: &str) -> Result<Vec<Scenario>, Problem> {
    // (scenario, where it is: `line N` or `#N`)
    let mut scenarios: Vec<(Scenario, Option<usize>)> = Vec::new();
    match whole_file(text)? {
        Some(items) => {
            for (index, item) in items.iter().enumerate() {
                let scenario = scenario(item, format!("#{}", index + 1), Some(index + 1))
                    .map_err(Problem::item)?;
                scenarios.push((scenario, None));
            }
        }
        None => {
            for (index, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let value: Value = serde_json::from_str(line)
                    .map_err(|e| Problem::at(index + 1, json_line_problem(&e)))?;
                let scenario = scenario(&value, format!("line-{}", index + 1), None)
                    .map_err(|e| Problem::at(index + 1, e))?;
                scenarios.push((scenario, Some(index + 1)));
            }
        }
    }
    let mut ids: HashMap<&str, (usize, Option<usize>)> = HashMap::new();
    for (index, (s, line)) in scenarios.iter().enumerate() {
        if let Some((first, first_line)) = ids.insert(s.id.as_str(), (index, *line)) {
            return Err(match (line, first_line) {
                (Some(line), Some(first_line)) => Problem::at(
                    *line,
                    format!(
                        "scenario id {:?} is used twice (first on line {first_line})",
                        s.id
                    ),
                ),
                _ => Problem::item(format!(
                    "scenario #{}: id {:?} is used twice (first by #{})",
                    index + 1,
                    s.id,
                    first + 1
                )),
            });
        }
    }
    Ok(scenarios.into_iter().map(|(s, _)| s).collect())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_leading_byte_order_mark_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        for text in [
            "\u{feff}{\"prompt\": \"weather?\", \"expected\": [\"get_weather\"]}\n",
            "\u{feff}[{\"prompt\": \"weather?\", \"expected\": [\"get_weather\"]}]",
        ] {
            let path = dir.path().join("s.jsonl");
            std::fs::write(&path, text).unwrap();
            let loaded = load(&path).unwrap();
            assert_eq!(loaded.len(), 1, "{text:?}");
            assert_eq!(loaded[0].expected, ["get_weather"]);
        }
    }

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
            (
                "{\"prompt\":\"a\",\"expected\":[]}\nnot json",
                2,
                "not valid JSON at column 2",
            ),
            (
                "{\"prompt\":\"a\",\"expected\":[]}\n[1]",
                2,
                "not a scenario: expected a JSON object",
            ),
            ("{\"expected\":[\"x\"]}", 1, "no prompt"),
            // A misspelled `expected` is not "no tool should be called".
            (
                "{\"prompt\":\"p\",\"expected\":[]}\n{\"prompt\":\"p\",\"expectd\":[\"x\"]}",
                2,
                "scenario \"line-2\" has no \"expected\": list the tools it should call, or []",
            ),
            (
                "{\"id\":\"a\",\"prompt\":\"p\",\"expected\":[]}\n{\"id\":\"a\",\"prompt\":\"q\",\"expected\":[]}",
                2,
                "used twice (first on line 1)",
            ),
            ("{\"prompt\":\"p\",\"expected\":[\"\"]}", 1, "empty name"),
            (
                "{\"prompt\":\"p\",\"expected\":[],\"arguments\":{\"a\":1}}",
                1,
                "names no expected tool",
            ),
            (
                "{\"prompt\":\"p\",\"expected\":[1]}",
                1,
                "expected[0] is not a tool name or a {\"name\", \"args\"} object",
            ),
            (
                "{\"prompt\":\"p\",\"expected\":[{\"args\":{}}]}",
                1,
                "expected[0] has no \"name\" string",
            ),
            (
                "{\"prompt\":5,\"expected\":[]}",
                1,
                "\"prompt\" is not a string",
            ),
            // A whole-file shape that does not parse: serde's position is the file's.
            (
                "[\n{\"prompt\":\"p\",\"expected\":[]},\n{\"prompt\": }\n]",
                3,
                "not valid JSON at column 12",
            ),
            (
                "{\n \"about\": \"x\",\n \"scenarios\": [\n  {\"prompt\": \"p\" \"expected\": []}\n ]\n}",
                4,
                "not valid JSON at column",
            ),
            (
                "{\"scenarios\": [{\"prompt\":\"p\",\"expected\":[]}",
                1,
                "not valid JSON at column",
            ),
        ] {
            let problem = parse(text).unwrap_err();
            assert_eq!(problem.line, Some(line), "{text}: {problem:?}");
            assert!(problem.message.contains(want), "{text}: {problem:?}");
            for leak in ["untagged", "Raw", " at line "] {
                assert!(!problem.message.contains(leak), "{text}: {problem:?}");
            }
        }
    }

    #[test]
    fn unusable_items_of_an_array_are_named_by_number() {
        for (text, want) in [
            ("{\"scenarios\":{}}", "\"scenarios\" is not an array"),
            ("[{\"prompt\":\"p\"}]", "scenario #1 has no \"expected\""),
            ("[{\"prompt\":\"p\",\"id\":[1]}]", "scenario #1: id [1]"),
            (
                "[{\"prompt\":\"p\",\"expected\":[]},\n{\"prompt\":\"p\",\"expected\":[{\"name\":7}]}]",
                "scenario #2: expected[0] has no \"name\" string",
            ),
            (
                "[{\"prompt\":\"p\",\"expected\":[]}, 3]",
                "scenario #2 is not a JSON object",
            ),
            (
                "[{\"id\":\"w\",\"prompt\":\"p\",\"expected\":5}]",
                "scenario #1 (\"w\"): \"expected\" is not a list",
            ),
            (
                "[{\"id\":\"a\",\"prompt\":\"p\",\"expected\":[]},{\"id\":\"a\",\"prompt\":\"q\",\"expected\":[]}]",
                "scenario #2: id \"a\" is used twice (first by #1)",
            ),
        ] {
            let problem = parse(text).unwrap_err();
            assert_eq!(problem.line, None, "{text}: {problem:?}");
            assert!(problem.message.contains(want), "{text}: {problem:?}");
        }
    }
}
