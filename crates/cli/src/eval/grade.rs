//! Mechanical grading: what one scenario's loop did ([`Trace`]) becomes one run-file
//! line ([`Record`]). Pure: no I/O, no clock.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::scenario::Scenario;

/// How a scenario ended, as one word in the run file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Outcome {
    /// The first dispatched call is the expected tool (or, when no tool is expected, the
    /// scenario ended on a reply with no tool call and nothing was dispatched: lookups and
    /// refused calls before it do not count against it).
    Right,
    /// The first dispatched call is another tool (or a tool when none was expected).
    WrongTool,
    /// The model answered without calling a tool.
    NoCall,
    /// `--max-calls` ran out while the model's latest calls were refused (unknown tool
    /// or code, invalid arguments, a blocked tool).
    Malformed,
    /// `--max-calls` ran out while the model was still looking tools up.
    LookupsExhausted,
    /// No reply within `--timeout`.
    Timeout,
    /// The endpoint answered with an HTTP error status, or could not be reached.
    HttpError,
    /// A 200 reply that is not a chat completion.
    Unparsable,
}

/// A call `route` refused for its arguments or schema, with the tool it is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ValidationError {
    /// The real tool, when the error names one.
    pub(crate) tool: Option<String>,
    /// The reply chef gave the model.
    pub(crate) message: String,
}

/// How the loop stopped.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum End {
    /// `route` returned a dispatchable call: the first one, graded.
    Dispatched { tool: String, arguments: Value },
    /// A reply with no tool call.
    NoCall,
    /// `--max-calls` replies without a dispatched call; whether the latest reply had a
    /// call refused.
    Exhausted { last_refused: bool },
    /// The request timed out.
    Timeout { detail: String },
    /// An HTTP error status or a connection failure.
    HttpError { status: Option<u16>, detail: String },
    /// A 200 body that is not a chat completion.
    Unparsable { detail: String },
}

/// What one scenario's requests counted and cost: kept by the loop ([`Trace`]) and
/// written, these keys in this order, into its run-file line ([`Record`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Counts {
    /// Requests sent (each counts, failed ones included).
    pub(crate) model_calls: u32,
    /// Calls answered as lookups (`q`, `describe_op`, toolkit loads).
    pub(crate) lookups: u32,
    /// Calls `route` refused (errors and blocked tools).
    pub(crate) malformed_calls: u32,
    /// Of those, the argument and schema errors.
    pub(crate) validation_errors: Vec<ValidationError>,
    /// Calls recovered from the reply's text (`--recover-text-calls`).
    pub(crate) recovered_text_calls: u32,
    /// Replies the endpoint cut at `--max-tokens` (`finish_reason` `length`; lines
    /// written before this field existed read as 0).
    #[serde(default)]
    pub(crate) cut_replies: u32,
    /// The first reply's `usage.prompt_tokens`.
    pub(crate) first_prompt_tokens: Option<u64>,
    /// Sums over the replies that reported `usage`.
    pub(crate) prompt_tokens: Option<u64>,
    pub(crate) completion_tokens: Option<u64>,
    /// The prompt tokens the server said it read from its prompt cache
    /// (`usage.prompt_tokens_details.cached_tokens`): the first request's, and the sum over
    /// every request that reported it (absent when the server does not say, and in older
    /// lines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) first_cached_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cached_tokens: Option<u64>,
    pub(crate) wall_ms: u64,
}

/// What one scenario's loop did.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Trace {
    pub(crate) end: End,
    pub(crate) counts: Counts,
    /// Whether the latest reply was cut at `--max-tokens`, and the limit it hit.
    pub(crate) last_cut_at: Option<u32>,
    /// Every dispatched call's tool, in order (`--whole-task`).
    pub(crate) calls: Vec<String>,
    /// The task ended on a reply that only repeated answered calls (`--stop-on-repeat`).
    pub(crate) stopped_on_repeat: bool,
    /// Whole tasks: why a later request failed (an HTTP error status, a reply that is not
    /// a completion) after the first call was dispatched; the first call keeps its grade.
    pub(crate) task_error: Option<String>,
    /// What the model wrote, one entry per reply: its text, then each native tool call as
    /// `name(arguments)`, before any recovery or routing (each cut to
    /// [`REPLY_CHARS`] characters).
    pub(crate) replies: Vec<String>,
}

impl Trace {
    /// A trace that ended with `end` and counted nothing yet.
    pub(crate) fn new(end: End) -> Self {
        Self {
            end,
            counts: Counts::default(),
            last_cut_at: None,
            calls: Vec::new(),
            stopped_on_repeat: false,
            task_error: None,
            replies: Vec::new(),
        }
    }
}

/// The most characters of one reply a record keeps.
pub(crate) const REPLY_CHARS: usize = 1000;

/// The flags that change what a scenario measures besides its setting; a rerun resumes
/// only lines made with the same ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RunParams {
    pub(crate) model: String,
    pub(crate) max_calls: u32,
    /// `--max-tokens` (none in lines written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) max_tokens: Option<u32>,
    /// `--recover-text-calls`.
    pub(crate) text_recovery: bool,
    /// `--constrain`.
    pub(crate) constrained: bool,
    /// `--whole-task` (absent in lines written before it existed: first call only).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) whole_task: bool,
    /// `--stop-on-repeat N` (absent when off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) stop_on_repeat: Option<u32>,
}

impl RunParams {
    /// The flags whose values differ from `current`'s, as flag names (`--model`,
    /// `--constrain`, …), for a refused resume.
    pub(crate) fn differences(&self, current: &Self) -> String {
        let mut out = Vec::new();
        if self.model != current.model {
            out.push("--model");
        }
        if self.max_calls != current.max_calls {
            out.push("--max-calls");
        }
        if self.max_tokens.is_some() && self.max_tokens != current.max_tokens {
            out.push("--max-tokens");
        }
        if self.text_recovery != current.text_recovery {
            out.push("--recover-text-calls");
        }
        if self.constrained != current.constrained {
            out.push("--constrain");
        }
        if self.whole_task != current.whole_task {
            out.push("--whole-task");
        }
        if self.stop_on_repeat != current.stop_on_repeat {
            out.push("--stop-on-repeat");
        }
        out.join(", ")
    }

    /// Whether a line made with these flags measured what a run with `current` would:
    /// every flag equal, a line without `max_tokens` taken as made with any.
    pub(crate) fn resumable_by(&self, current: &Self) -> bool {
        self.model == current.model
            && self.max_calls == current.max_calls
            && (self.max_tokens.is_none() || self.max_tokens == current.max_tokens)
            && self.text_recovery == current.text_recovery
            && self.constrained == current.constrained
            && self.whole_task == current.whole_task
            && self.stop_on_repeat == current.stop_on_repeat
    }
}

/// One line of the run file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Record {
    pub(crate) setting: String,
    pub(crate) scenario: String,
    pub(crate) outcome: Outcome,
    /// The expected tools, in order (the first is graded).
    pub(crate) expected: Vec<String>,
    /// The real tool of the first dispatched call.
    pub(crate) first_tool: Option<String>,
    /// Its arguments, as validated.
    pub(crate) arguments: Option<Value>,
    /// A call was dispatched, so its arguments validated against the original schema.
    pub(crate) args_valid: bool,
    /// The expected arguments are a subset of the call's (only when the right tool was
    /// called and the scenario lists arguments).
    pub(crate) args_match: Option<bool>,
    #[serde(flatten)]
    pub(crate) counts: Counts,
    /// The HTTP status of an `http_error` (none for a connection failure).
    pub(crate) http_status: Option<u16>,
    /// Why a timeout, HTTP error or unparsable reply happened.
    pub(crate) detail: Option<String>,
    /// Whole tasks (`--whole-task`): every dispatched call's tool, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) calls: Option<Vec<String>>,
    /// Whole tasks: the expected tools were called in order and no other tool was (for a
    /// request that expects none: no tool was called).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) task_success: Option<bool>,
    /// Whole tasks: how many of the expected calls were made, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) steps_done: Option<u32>,
    /// Whole tasks with `--stop-on-repeat`: the task ended on a reply that only repeated
    /// calls already answered (absent otherwise).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) stopped_on_repeat: bool,
    /// Whole tasks: why a later request failed after the first call was dispatched (an
    /// HTTP error status, a reply that is not a completion); the task is then not a
    /// success, and `outcome` stays the first call's grade. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) task_error: Option<String>,
    /// What the model wrote, one entry per reply (see [`Trace::replies`]).
    #[serde(default)]
    pub(crate) replies: Vec<String>,
    /// What a setting labelled with `name=` is (its spec minus `name`), so that a rerun
    /// under the same label with another definition is refused instead of resumed.
    /// Absent for an unnamed setting, whose label is its spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) spec: Option<String>,
    /// The scenario's prompt, so that a rerun whose scenario file now asks something else
    /// under the same id is refused instead of resumed (absent from lines written before
    /// session 38, which cannot be checked so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) prompt: Option<String>,
    /// The fingerprint of the tools the scenario was offered ([`catalogue_fingerprint`]), so
    /// that a rerun on an edited TOOLS file is refused instead of resumed (absent from
    /// lines written before session 40, which cannot be checked so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) catalogue: Option<String>,
    #[serde(flatten)]
    pub(crate) run: RunParams,
}

/// `crc32:` and eight hex digits over the tools' JSON (names, descriptions, schemas, in
/// order): what a run line records of the catalogue it was measured on.
pub(crate) fn catalogue_fingerprint(tools: &[chef_ir::ToolDefinition]) -> String {
    let mut hasher = crc32fast::Hasher::new();
    // Serialising a tool list to a Vec cannot fail (string keys, finite numbers).
    if let Ok(bytes) = serde_json::to_vec(tools) {
        hasher.update(&bytes);
    }
    format!("crc32:{:08x}", hasher.finalize())
}

impl Record {
    /// Whether the endpoint was never reached or never answered (a timeout, a connection
    /// failure): the line measured nothing, and a rerun runs its pair again.
    pub(crate) fn transport_failure(&self) -> bool {
        match self.outcome {
            Outcome::Timeout => true,
            Outcome::HttpError => self.http_status.is_none(),
            _ => false,
        }
    }
}

/// `args_match` of a line made earlier, graded again against `scenario`'s expected
/// arguments as they are now (as [`grade`] grades it: only for the right first tool and
/// a scenario that lists arguments).
pub(crate) fn regrade_args(record: &Record, scenario: &Scenario) -> Option<bool> {
    if record.outcome != Outcome::Right || record.first_tool.is_none() {
        return None;
    }
    let actual = record.arguments.as_ref()?;
    scenario
        .arguments
        .as_ref()
        .map(|want| arguments_match(want, actual))
}

/// Grades one scenario's trace under `setting`.
pub(crate) fn grade(run: &RunParams, setting: &str, scenario: &Scenario, trace: Trace) -> Record {
    let expected_first = scenario.expected.first();
    let mut first_tool = None;
    let mut arguments = None;
    let mut args_match = None;
    let mut http_status = None;
    let mut detail = None;
    let outcome = match trace.end {
        End::Dispatched {
            tool,
            arguments: args,
        } => {
            let outcome = if expected_first == Some(&tool) {
                args_match = scenario
                    .arguments
                    .as_ref()
                    .map(|want| arguments_match(want, &args));
                Outcome::Right
            } else {
                Outcome::WrongTool
            };
            first_tool = Some(tool);
            arguments = Some(args);
            outcome
        }
        End::NoCall if expected_first.is_none() => Outcome::Right,
        End::NoCall => Outcome::NoCall,
        End::Exhausted { last_refused: true } => Outcome::Malformed,
        End::Exhausted {
            last_refused: false,
        } => Outcome::LookupsExhausted,
        End::Timeout { detail: d } => {
            detail = Some(d);
            Outcome::Timeout
        }
        End::HttpError { status, detail: d } => {
            http_status = status;
            detail = Some(d);
            Outcome::HttpError
        }
        End::Unparsable { detail: d } => {
            detail = Some(d);
            Outcome::Unparsable
        }
    };
    if matches!(
        outcome,
        Outcome::NoCall | Outcome::Malformed | Outcome::LookupsExhausted
    ) {
        detail = cut_detail(trace.last_cut_at);
    }
    let (calls, task_success, steps_done) = if run.whole_task {
        let (success, steps) = task_grade(&scenario.expected, &trace.calls);
        let success = success && trace.task_error.is_none();
        (Some(trace.calls), Some(success), Some(steps))
    } else {
        (None, None, None)
    };
    Record {
        spec: None,
        catalogue: None,
        prompt: Some(scenario.prompt.clone()),
        calls,
        task_success,
        steps_done,
        stopped_on_repeat: trace.stopped_on_repeat,
        task_error: trace.task_error,
        setting: setting.to_owned(),
        scenario: scenario.id.clone(),
        outcome,
        expected: scenario.expected.clone(),
        args_valid: first_tool.is_some(),
        first_tool,
        arguments,
        args_match,
        counts: trace.counts,
        http_status,
        detail,
        replies: trace.replies,
        run: run.clone(),
    }
}

/// A whole task's grade: whether the `expected` tools were called in order with no other
/// call among `calls`, and how many expected calls were made in order. Each call must be
/// the next expected step or repeat a step already made: a call of a tool the task does
/// not need is a stray, and so is a call of a later step's tool before its turn (sending
/// the email before fetching what it should say).
pub(crate) fn task_grade(expected: &[String], calls: &[String]) -> (bool, u32) {
    let mut done = 0_usize;
    let mut stray = false;
    for call in calls {
        if expected.get(done) == Some(call) {
            done += 1;
        } else if !expected.iter().take(done).any(|made| made == call) {
            stray = true;
        }
    }
    (
        done == expected.len() && !stray,
        u32::try_from(done).unwrap_or(u32::MAX),
    )
}

/// Why a scenario that ended without a dispatched call may have: its last reply was cut
/// at `--max-tokens`.
fn cut_detail(limit: Option<u32>) -> Option<String> {
    limit.map(|n| format!("the last reply was cut at --max-tokens {n}"))
}

/// Whether every expected argument is in `actual` with a matching value: two strings
/// match after trimming and lower-casing, two numbers when they are the same number (`3`
/// and `3.0`: a benchmark written from Python says `3.0`), any other value must be equal,
/// numbers inside it compared the same way (the number 12 does not match the string
/// "12"). Keys `actual` has beyond those are ignored.
pub(crate) fn arguments_match(expected: &Map<String, Value>, actual: &Value) -> bool {
    let Some(actual) = actual.as_object() else {
        return expected.is_empty();
    };
    expected
        .iter()
        .all(|(key, want)| match (want, actual.get(key)) {
            (Value::String(w), Some(Value::String(a))) => {
                w.trim().to_lowercase() == a.trim().to_lowercase()
            }
            (w, Some(a)) => same_value(w, a),
            (_, None) => false,
        })
}

/// JSON equality with numbers compared by value (`3` equals `3.0`); integers beyond
/// 2^53 are compared exactly, not through a double.
fn same_value(want: &Value, got: &Value) -> bool {
    match (want, got) {
        (Value::Number(w), Value::Number(g)) => {
            match (w.as_i64(), g.as_i64(), w.as_u64(), g.as_u64()) {
                (Some(w), Some(g), ..) => w == g,
                (.., Some(w), Some(g)) => w == g,
                _ => w.as_f64().zip(g.as_f64()).is_some_and(|(w, g)| w == g),
            }
        }
        (Value::Array(w), Value::Array(g)) => {
            w.len() == g.len() && w.iter().zip(g).all(|(w, g)| same_value(w, g))
        }
        (Value::Object(w), Value::Object(g)) => {
            w.len() == g.len()
                && w.iter()
                    .all(|(k, w)| g.get(k).is_some_and(|g| same_value(w, g)))
        }
        _ => want == got,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    #[test]
    fn numbers_match_by_value_at_any_depth() {
        use serde_json::json;
        let want = |v: serde_json::Value| v.as_object().unwrap().clone();
        assert!(super::arguments_match(
            &want(json!({"days": 3.0})),
            &json!({"days": 3})
        ));
        assert!(super::arguments_match(
            &want(json!({"days": 3})),
            &json!({"days": 3.0})
        ));
        assert!(super::arguments_match(
            &want(json!({"box": {"w": [1, 2.5]}})),
            &json!({"box": {"w": [1.0, 2.5]}, "extra": 1})
        ));
        assert!(!super::arguments_match(
            &want(json!({"days": 3})),
            &json!({"days": 3.5})
        ));
        assert!(!super::arguments_match(
            &want(json!({"days": 12})),
            &json!({"days": "12"})
        ));
        assert!(!super::arguments_match(
            &want(json!({"n": 9_007_199_254_740_993_u64})),
            &json!({"n": 9_007_199_254_740_992_u64})
        ));
    }

    #[test]
    fn a_task_succeeds_when_its_tools_are_called_in_order_and_no_other() {
        let v = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
        let expected = v(&["a", "b", "c"]);
        assert_eq!(
            super::task_grade(&expected, &v(&["a", "b", "c"])),
            (true, 3)
        );
        assert_eq!(
            super::task_grade(&expected, &v(&["a", "a", "b", "c"])),
            (true, 3)
        );
        assert_eq!(
            super::task_grade(&expected, &v(&["a", "c", "b"])),
            (false, 2)
        );
        assert_eq!(super::task_grade(&expected, &v(&["a", "b"])), (false, 2));
        // A later step's tool called before its turn is a stray, not a repeat.
        assert_eq!(
            super::task_grade(&expected, &v(&["b", "a", "b", "c"])),
            (false, 3)
        );
        assert_eq!(
            super::task_grade(&expected, &v(&["a", "b", "a", "c", "c"])),
            (true, 3)
        );
        assert_eq!(
            super::task_grade(&expected, &v(&["a", "x", "b", "c"])),
            (false, 3)
        );
        assert_eq!(super::task_grade(&[], &[]), (true, 0));
        assert_eq!(super::task_grade(&[], &v(&["a"])), (false, 0));
    }

    use serde_json::json;

    use super::*;

    fn scenario(expected: &[&str], arguments: Option<Value>) -> Scenario {
        Scenario {
            id: "s1".to_owned(),
            prompt: "do it".to_owned(),
            expected: expected.iter().map(|s| (*s).to_owned()).collect(),
            arguments: arguments.map(|a| a.as_object().unwrap().clone()),
            results: BTreeMap::new(),
            default_result: "ok".to_owned(),
            tool_names: None,
            split: None,
        }
    }

    fn trace(end: End) -> Trace {
        Trace {
            counts: Counts {
                model_calls: 1,
                first_prompt_tokens: Some(100),
                prompt_tokens: Some(100),
                completion_tokens: Some(10),
                wall_ms: 5,
                ..Counts::default()
            },
            replies: vec!["```json\n{\"name\": \"t\"}\n```".to_owned()],
            ..Trace::new(end)
        }
    }

    fn grade(setting: &str, scenario: &Scenario, trace: Trace) -> Record {
        let run = RunParams {
            model: "m".to_owned(),
            max_calls: 2,
            max_tokens: Some(512),
            text_recovery: false,
            constrained: true,
            whole_task: false,
            stop_on_repeat: None,
        };
        super::grade(&run, setting, scenario, trace)
    }

    fn dispatched(tool: &str, arguments: Value) -> End {
        End::Dispatched {
            tool: tool.to_owned(),
            arguments,
        }
    }

    #[test]
    fn every_ending_gets_its_own_outcome() {
        let weather = scenario(&["get_weather"], None);
        let nothing = scenario(&[], None);
        let cases = [
            (
                &weather,
                dispatched("get_weather", json!({})),
                Outcome::Right,
            ),
            (
                &weather,
                dispatched("get_time", json!({})),
                Outcome::WrongTool,
            ),
            (
                &nothing,
                dispatched("get_time", json!({})),
                Outcome::WrongTool,
            ),
            (&weather, End::NoCall, Outcome::NoCall),
            (&nothing, End::NoCall, Outcome::Right),
            (
                &weather,
                End::Exhausted { last_refused: true },
                Outcome::Malformed,
            ),
            (
                &weather,
                End::Exhausted {
                    last_refused: false,
                },
                Outcome::LookupsExhausted,
            ),
            (
                &weather,
                End::Timeout {
                    detail: "no reply within 1s".to_owned(),
                },
                Outcome::Timeout,
            ),
            (
                &weather,
                End::HttpError {
                    status: Some(500),
                    detail: "HTTP 500".to_owned(),
                },
                Outcome::HttpError,
            ),
            (
                &weather,
                End::Unparsable {
                    detail: "not JSON".to_owned(),
                },
                Outcome::Unparsable,
            ),
        ];
        for (scenario, end, want) in cases {
            let record = grade("level=3", scenario, trace(end.clone()));
            assert_eq!(record.outcome, want, "{end:?}");
            assert_eq!(
                record.args_valid,
                matches!(end, End::Dispatched { .. }),
                "{end:?}"
            );
            assert_eq!(record.setting, "level=3");
            assert_eq!(record.scenario, "s1");
        }
    }

    #[test]
    fn failures_keep_their_reason_and_status() {
        let record = grade(
            "x",
            &scenario(&["a"], None),
            trace(End::HttpError {
                status: Some(503),
                detail: "HTTP 503: busy".to_owned(),
            }),
        );
        assert_eq!(record.http_status, Some(503));
        assert_eq!(record.detail.as_deref(), Some("HTTP 503: busy"));
        assert_eq!(record.first_tool, None);
    }

    #[test]
    fn only_the_first_expected_tool_is_graded() {
        let two_step = scenario(&["get_options", "schedule"], None);
        let first = grade("x", &two_step, trace(dispatched("get_options", json!({}))));
        assert_eq!(first.outcome, Outcome::Right);
        let second = grade("x", &two_step, trace(dispatched("schedule", json!({}))));
        assert_eq!(second.outcome, Outcome::WrongTool);
    }

    #[test]
    fn expected_arguments_are_matched_as_a_subset_on_the_right_tool_only() {
        let s = scenario(&["get_weather"], Some(json!({"city": " oslo ", "days": 3})));
        let right = grade(
            "x",
            &s,
            trace(dispatched(
                "get_weather",
                json!({"city": "Oslo", "days": 3, "units": "metric"}),
            )),
        );
        assert_eq!(right.args_match, Some(true));
        assert_eq!(right.first_tool.as_deref(), Some("get_weather"));
        let wrong_value = grade(
            "x",
            &s,
            trace(dispatched(
                "get_weather",
                json!({"city": "Oslo", "days": "3"}),
            )),
        );
        assert_eq!(wrong_value.args_match, Some(false));
        let wrong_tool = grade(
            "x",
            &s,
            trace(dispatched("get_time", json!({"city": "Oslo", "days": 3}))),
        );
        assert_eq!(wrong_tool.args_match, None);
        let no_args = grade(
            "x",
            &scenario(&["get_weather"], None),
            trace(dispatched("get_weather", json!({}))),
        );
        assert_eq!(no_args.args_match, None);
        // A line resumed against a scenario whose expected arguments changed is graded
        // by what the scenario asks now (it kept the grade it was run with before).
        let bergen = scenario(&["get_weather"], Some(json!({"city": "Bergen"})));
        assert_eq!(regrade_args(&right, &bergen), Some(false));
        assert_eq!(regrade_args(&right, &s), Some(true));
        assert_eq!(
            regrade_args(&right, &scenario(&["get_weather"], None)),
            None
        );
        assert_eq!(regrade_args(&wrong_tool, &bergen), None);
    }

    #[test]
    fn argument_matching_follows_the_toolgz_rule() {
        let want = |v: Value| v.as_object().unwrap().clone();
        for (expected, actual, matches) in [
            (json!({"a": "X "}), json!({"a": "x"}), true),
            (json!({"a": 12}), json!({"a": "12"}), false),
            (json!({"a": 12}), json!({"a": 12, "b": 1}), true),
            (json!({"a": [1, 2]}), json!({"a": [1, 2]}), true),
            (json!({"a": {"b": "X"}}), json!({"a": {"b": "x"}}), false),
            (json!({"a": 1}), json!({}), false),
            (json!({"a": 1}), json!("not an object"), false),
            (json!({}), json!(null), true),
        ] {
            assert_eq!(
                arguments_match(&want(expected.clone()), &actual),
                matches,
                "{expected} vs {actual}"
            );
        }
    }

    #[test]
    fn records_round_trip_through_their_json_line() {
        let record = grade(
            "level=1",
            &scenario(&["a"], None),
            trace(dispatched("a", json!({"x": 1}))),
        );
        let line = serde_json::to_string(&record).unwrap();
        assert!(line.contains(r#""outcome":"right""#), "{line}");
        assert!(
            line.ends_with(
                r#""model":"m","max_calls":2,"max_tokens":512,"text_recovery":false,"constrained":true}"#
            ),
            "{line}"
        );
        let back: Record = serde_json::from_str(&line).unwrap();
        assert_eq!(back, record);
        for (outcome, word) in [
            (Outcome::Right, "right"),
            (Outcome::WrongTool, "wrong_tool"),
            (Outcome::NoCall, "no_call"),
            (Outcome::Malformed, "malformed"),
            (Outcome::LookupsExhausted, "lookups_exhausted"),
            (Outcome::Timeout, "timeout"),
            (Outcome::HttpError, "http_error"),
            (Outcome::Unparsable, "unparsable"),
        ] {
            assert_eq!(serde_json::to_value(outcome).unwrap(), json!(word));
        }
    }
}
