//! Output guardrails: what the model's final answer must look like, the instruction that
//! says so, and a checker for the reply that answers with a typed verdict and a message the
//! model can act on.
//!
//! Two shapes: the answer inside one `<TAG>…</TAG>` pair, or a JSON object valid against a
//! schema (checked with the same validator as tool arguments, so the errors read alike).
//!
//! ```
//! use chef::guardrail::{Guardrail, Verdict};
//! use serde_json::json;
//!
//! let tag = Guardrail::tag("answer")?;
//! assert!(matches!(tag.check("Thinking… <answer>42</answer>"), Verdict::Pass { content } if content == "42"));
//! let Verdict::Fail { retry, .. } = tag.check("42") else { unreachable!() };
//! assert!(retry.contains("<answer>"));
//!
//! let json = Guardrail::json(json!({
//!     "type": "object",
//!     "properties": {"city": {"type": "string"}},
//!     "required": ["city"]
//! }))?;
//! assert!(matches!(json.check("```json\n{\"city\": \"Oslo\"}\n```"), Verdict::Pass { .. }));
//! assert!(matches!(json.check("{\"city\": 5}"), Verdict::Fail { .. }));
//! # Ok::<(), chef::guardrail::GuardrailError>(())
//! ```

use std::sync::Arc;

use chef_compress::validate::ArgumentValidator;
use serde_json::Value;

/// The name the validator's messages give the answer.
const ANSWER: &str = "the answer";

/// What the model's final answer must look like. Serialised (in snapshots) as
/// `{"tag": NAME}` or `{"json_schema": SCHEMA}`; reading one back checks it again.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "Spec", into = "Spec")]
pub enum Guardrail {
    /// The answer inside exactly one `<TAG>…</TAG>` pair.
    Tag {
        /// The tag's name.
        tag: String,
    },
    /// A JSON object valid against `schema` (alone, or in one fenced block).
    Json {
        /// The schema, as given.
        schema: Value,
        /// Its compiled validator.
        validator: Arc<ArgumentValidator>,
    },
}

/// The serialised form of a [`Guardrail`].
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum Spec {
    Tag(String),
    JsonSchema(Value),
}

impl TryFrom<Spec> for Guardrail {
    type Error = GuardrailError;
    fn try_from(spec: Spec) -> Result<Self, GuardrailError> {
        match spec {
            Spec::Tag(tag) => Self::tag(tag),
            Spec::JsonSchema(schema) => Self::json(schema),
        }
    }
}

impl From<Guardrail> for Spec {
    fn from(g: Guardrail) -> Self {
        match g {
            Guardrail::Tag { tag } => Self::Tag(tag),
            Guardrail::Json { schema, .. } => Self::JsonSchema(schema),
        }
    }
}

impl std::fmt::Debug for Guardrail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Tag { tag } => f.debug_struct("Tag").field("tag", tag).finish(),
            Self::Json { schema, .. } => f.debug_struct("Json").field("schema", schema).finish(),
        }
    }
}

impl PartialEq for Guardrail {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Tag { tag: a }, Self::Tag { tag: b }) => a == b,
            (Self::Json { schema: a, .. }, Self::Json { schema: b, .. }) => a == b,
            _ => false,
        }
    }
}

/// Why a guardrail cannot be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum GuardrailError {
    /// A tag name must be an XML name without a namespace: a letter or `_`, then letters,
    /// digits, `_`, `-` or `.`.
    #[error("{tag:?} is not usable as a tag name (a letter or _, then letters, digits, _, - or .)")]
    BadTag {
        /// The name given.
        tag: String,
    },
    /// The schema must describe a JSON object (`"type": "object"`).
    #[error("the guardrail's schema must describe a JSON object (\"type\": \"object\")")]
    NotAnObject,
    /// The validator refused the schema.
    #[error("the guardrail's schema cannot be used: {0}")]
    Schema(#[source] chef_compress::validate::SchemaError),
}

/// What is wrong with a reply.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Problem {
    /// No `<TAG>` at all.
    MissingTag,
    /// A `<TAG>` without its `</TAG>` after it.
    UnclosedTag,
    /// More than one `<TAG>` pair.
    RepeatedTag {
        /// How many opening tags.
        count: usize,
    },
    /// No JSON object could be read from the reply.
    NotJson {
        /// The parser's message.
        error: String,
    },
    /// JSON, but not valid against the schema.
    Schema {
        /// The validator's message for the first problem.
        message: String,
    },
}

/// A reply checked against a guardrail.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Verdict {
    /// The reply holds: `content` is the tag's inner text, or the JSON object's text.
    Pass {
        /// What the guardrail delimits.
        content: String,
    },
    /// The reply does not hold.
    Fail {
        /// What is wrong.
        problem: Problem,
        /// A message for the model: what is wrong and what to send instead.
        retry: String,
    },
}

impl Guardrail {
    /// The answer inside one `<tag>…</tag>` pair.
    ///
    /// # Errors
    /// [`GuardrailError::BadTag`] for a name that is not a plain XML name.
    pub fn tag(tag: impl Into<String>) -> Result<Self, GuardrailError> {
        let tag = tag.into();
        let mut chars = tag.chars();
        let first_ok = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')) {
            return Err(GuardrailError::BadTag { tag });
        }
        Ok(Self::Tag { tag })
    }

    /// A JSON object valid against `schema`.
    ///
    /// # Errors
    /// [`GuardrailError::NotAnObject`] unless the schema's `type` is `"object"`;
    /// [`GuardrailError::Schema`] when the validator cannot compile it.
    pub fn json(schema: Value) -> Result<Self, GuardrailError> {
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(GuardrailError::NotAnObject);
        }
        let validator = ArgumentValidator::new(ANSWER, &schema).map_err(GuardrailError::Schema)?;
        Ok(Self::Json {
            schema,
            validator: Arc::new(validator),
        })
    }

    /// The instruction that asks for this shape (deterministic: the same guardrail, the
    /// same bytes).
    pub fn instruction(&self) -> String {
        match self {
            Self::Tag { tag } => format!(
                "Put your final answer inside <{tag}> and </{tag}>, once, with nothing of the answer outside them."
            ),
            Self::Json { schema, .. } => format!(
                "Answer with one JSON object and nothing else, valid against this JSON Schema: {}",
                serde_json::to_string(schema).unwrap_or_default()
            ),
        }
    }

    /// Checks a reply.
    pub fn check(&self, reply: &str) -> Verdict {
        match self {
            Self::Tag { tag } => check_tag(tag, reply),
            Self::Json { validator, .. } => check_json(validator, reply),
        }
    }
}

fn check_tag(tag: &str, reply: &str) -> Verdict {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let count = reply.matches(&open).count();
    let fail = |problem: Problem, what: &str| Verdict::Fail {
        problem,
        retry: format!(
            "Your reply {what}. Send the final answer again, inside {open} and {close}, once."
        ),
    };
    match count {
        0 => fail(Problem::MissingTag, &format!("has no {open}")),
        1 => {
            let start = reply.find(&open).map_or(0, |i| i + open.len());
            match reply.get(start..).and_then(|rest| rest.find(&close)) {
                Some(len) => Verdict::Pass {
                    content: reply.get(start..start + len).unwrap_or_default().to_owned(),
                },
                None => fail(
                    Problem::UnclosedTag,
                    &format!("opens {open} but never closes it"),
                ),
            }
        }
        n => fail(
            Problem::RepeatedTag { count: n },
            &format!("has {open} {n} times"),
        ),
    }
}

/// The JSON text of a reply: the whole reply, or the inside of one fenced block.
fn json_text(reply: &str) -> &str {
    let trimmed = reply.trim();
    if let Some(rest) = trimmed.strip_prefix("```")
        && let Some(body) = rest.strip_suffix("```")
    {
        // Drop the info string (`json`) on the fence's first line.
        return body.split_once('\n').map_or(body, |(_, b)| b).trim();
    }
    trimmed
}

fn check_json(validator: &ArgumentValidator, reply: &str) -> Verdict {
    let text = json_text(reply);
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return Verdict::Fail {
                problem: Problem::NotJson {
                    error: e.to_string(),
                },
                retry: format!(
                    "Your reply is not one JSON object ({e}). Send only the JSON object, nothing before or after it."
                ),
            };
        }
    };
    match validator.validate(&value) {
        Ok(()) => Verdict::Pass {
            content: text.to_owned(),
        },
        Err(e) => {
            let message = e.to_string();
            Verdict::Fail {
                retry: format!("{message} Send the corrected JSON object only."),
                problem: Problem::Schema { message },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn tags_pass_fail_and_say_why() {
        let g = Guardrail::tag("final").unwrap();
        assert_eq!(
            g.check("x <final>a <b> c</final> y"),
            Verdict::Pass {
                content: "a <b> c".into()
            }
        );
        for (reply, problem) in [
            ("none", Problem::MissingTag),
            ("<final>open", Problem::UnclosedTag),
            ("</final><final>", Problem::UnclosedTag),
            (
                "<final>a</final><final>b</final>",
                Problem::RepeatedTag { count: 2 },
            ),
        ] {
            match g.check(reply) {
                Verdict::Fail { problem: p, retry } => {
                    assert_eq!(p, problem, "{reply}");
                    assert!(retry.contains("<final>") && retry.contains("</final>"));
                }
                other => panic!("{reply}: {other:?}"),
            }
        }
        for bad in ["", "1a", "a b", "a>b", "<a"] {
            assert!(Guardrail::tag(bad).is_err(), "{bad}");
        }
        assert_eq!(
            g.instruction(),
            Guardrail::tag("final").unwrap().instruction()
        );
    }

    #[test]
    fn json_is_read_whole_or_fenced_and_validated() {
        let g = Guardrail::json(json!({
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 1}},
            "required": ["n"],
            "additionalProperties": false
        }))
        .unwrap();
        assert!(matches!(g.check(" {\"n\": 2} "), Verdict::Pass { .. }));
        assert!(matches!(
            g.check("```json\n{\"n\": 2}\n```"),
            Verdict::Pass { .. }
        ));
        match g.check("{\"n\": 0}") {
            Verdict::Fail {
                problem: Problem::Schema { message },
                retry,
            } => {
                assert!(message.contains('n'), "{message}");
                assert!(retry.ends_with("Send the corrected JSON object only."));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            g.check("Sure! {\"n\": 2}"),
            Verdict::Fail {
                problem: Problem::NotJson { .. },
                ..
            }
        ));
        assert!(matches!(
            g.check("{}"),
            Verdict::Fail {
                problem: Problem::Schema { .. },
                ..
            }
        ));
        assert_eq!(
            Guardrail::json(json!({"type": "array"})).unwrap_err(),
            GuardrailError::NotAnObject
        );
        assert!(g.instruction().contains("\"required\":[\"n\"]"));
    }
}
