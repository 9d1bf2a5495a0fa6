//! The text the model reads for an [`ArgumentProblem`], and the small formatting helpers
//! behind it (paths, previews of values).
//!
//! The top-level messages keep the reference wording (spec §5.4) byte for byte where the
//! reference has one, so a model tuned on it reads the same sentences; nested problems use
//! the same shapes with a path in place of the parameter name.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde_json::Value;

use super::error::{ArgumentProblem, Bound, Measure};

/// The longest value preview (in characters) a message quotes.
const PREVIEW_CHARS: usize = 80;

/// Renders one problem for the model.
pub(crate) fn message(tool: &str, problem: &ArgumentProblem) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = write_message(&mut out, tool, problem);
    out
}

/// Renders the most useful problem, then each further one after "Also:".
pub(crate) fn message_with(
    tool: &str,
    first: &ArgumentProblem,
    also: &[ArgumentProblem],
) -> String {
    let mut out = message(tool, first);
    for (i, problem) in also.iter().enumerate() {
        out.push_str(if i == 0 { " Also: " } else { " " });
        // Writing into a String cannot fail.
        let _ = write_message(&mut out, tool, problem);
    }
    out
}

fn write_message(out: &mut String, tool: &str, problem: &ArgumentProblem) -> std::fmt::Result {
    match problem {
        ArgumentProblem::NotAnObject { received } => write!(
            out,
            "Arguments for {tool} must be a JSON object; received {}.",
            with_article(received)
        ),
        ArgumentProblem::GivenTwice { param } => write!(
            out,
            "Parameter \"{}\" for {tool} was given twice with different values, inside the arguments object and beside it. Send each parameter once, inside it.",
            cut(param, PREVIEW_CHARS)
        ),
        ArgumentProblem::MissingRequired {
            param,
            path,
            required,
            renamed_from,
        } => {
            write!(
                out,
                "Missing required parameter \"{}\" for {tool}. Required: {}.",
                cut(path, PREVIEW_CHARS),
                names(required)
            )?;
            if let Some(from) = renamed_from {
                write!(
                    out,
                    " You passed \"{}\" — did you mean \"{}\"? Rename it.",
                    cut(from, PREVIEW_CHARS),
                    cut(param, PREVIEW_CHARS)
                )?;
            }
            Ok(())
        }
        ArgumentProblem::UnknownParameter {
            path,
            accepted,
            did_you_mean,
            ..
        } => {
            let accepted = if accepted.is_empty() {
                "none".to_owned()
            } else {
                names(accepted)
            };
            write!(
                out,
                "Unknown parameter \"{}\" for {tool}. Accepted: {accepted}.",
                cut(path, PREVIEW_CHARS)
            )?;
            if let Some(guess) = did_you_mean {
                write!(out, " Did you mean \"{}\"?", cut(guess, PREVIEW_CHARS))?;
            }
            Ok(())
        }
        ArgumentProblem::InvalidEnum {
            path,
            allowed,
            received,
            exact,
        } => {
            let values: Vec<String> = allowed.iter().map(enum_member).collect();
            let expected = match values.as_slice() {
                // A runtime may withhold every value (all of them blocked).
                [] => "no value is accepted now".to_owned(),
                [only] => format!("expected exactly {only}"),
                _ => format!("expected one of {}", values.join(", ")),
            };
            write!(
                out,
                "Invalid value for \"{}\" on {tool}: {expected}",
                cut(path, PREVIEW_CHARS)
            )?;
            match exact {
                Some(exact) => write!(out, ". Use exactly \"{exact}\"."),
                None => write!(out, "; received {received}."),
            }
        }
        ArgumentProblem::WrongType {
            path,
            expected,
            received,
        } => {
            let expected: Vec<String> = expected.iter().map(|t| with_article(t)).collect();
            write!(
                out,
                "{} must be {}; received {}.",
                subject(path, tool),
                expected.join(" or "),
                with_article(received)
            )
        }
        ArgumentProblem::OutOfRange {
            path,
            bound,
            limit,
            received,
        } => {
            let relation = match bound {
                Bound::Minimum => "at least",
                Bound::Maximum => "at most",
                Bound::ExclusiveMinimum => "greater than",
                Bound::ExclusiveMaximum => "less than",
                Bound::MultipleOf => "a multiple of",
            };
            write!(
                out,
                "{} must be {relation} {limit}; received {received}.",
                subject(path, tool)
            )
        }
        ArgumentProblem::TooShort {
            path,
            measure,
            limit,
        } => write!(
            out,
            "{} must have at least {}.",
            subject(path, tool),
            counted(*limit, *measure)
        ),
        ArgumentProblem::TooLong {
            path,
            measure,
            limit,
        } => write!(
            out,
            "{} must have at most {}.",
            subject(path, tool),
            counted(*limit, *measure)
        ),
        ArgumentProblem::PatternMismatch {
            path,
            pattern,
            received,
        } => write!(
            out,
            "{} must match the pattern {}; received {received}.",
            subject(path, tool),
            cut(pattern, 200)
        ),
        ArgumentProblem::NoAlternativeMatches {
            path,
            alternatives,
            closest,
        } => {
            write!(
                out,
                "{} matches none of its {alternatives} accepted forms.",
                subject(path, tool)
            )?;
            if let Some(closest) = closest {
                write!(out, " Closest form: {closest}")?;
            }
            Ok(())
        }
        ArgumentProblem::AmbiguousAlternatives { path } => write!(
            out,
            "{} matches more than one of its accepted forms; it must match exactly one.",
            subject(path, tool)
        ),
        ArgumentProblem::DuplicateItems { path } => write!(
            out,
            "{} must not contain duplicate items.",
            subject(path, tool)
        ),
        ArgumentProblem::TooDeep { limit } => write!(
            out,
            "Arguments for {tool} nest deeper than {limit} levels; send a flatter value."
        ),
        ArgumentProblem::TooLarge { path, limit, size } => write!(
            out,
            "{} holds a string or name of {size} bytes; the limit is {limit} bytes.",
            subject(path, tool)
        ),
        ArgumentProblem::Other { path, message, .. } => {
            write!(
                out,
                "{} is invalid: {}",
                subject(path, tool),
                cut(message, 300)
            )?;
            if !out.ends_with('.') {
                out.push('.');
            }
            Ok(())
        }
    }
}

/// Names joined with `, `, each cut to a readable length.
fn names(list: &[String]) -> String {
    let mut out = String::new();
    for (i, name) in list.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&cut(name, PREVIEW_CHARS));
    }
    out
}

/// `Parameter "x" on tool`, or `The arguments for tool` for the root.
fn subject(path: &str, tool: &str) -> String {
    if path.is_empty() {
        format!("The arguments for {tool}")
    } else {
        format!("Parameter \"{}\" on {tool}", cut(path, PREVIEW_CHARS))
    }
}

fn counted(limit: u64, measure: Measure) -> String {
    let (one, many) = match measure {
        Measure::Characters => ("character", "characters"),
        Measure::Items => ("item", "items"),
        Measure::Properties => ("property", "properties"),
    };
    format!("{limit} {}", if limit == 1 { one } else { many })
}

/// `a string`, `an integer`, `null`.
pub(crate) fn with_article(type_name: &str) -> String {
    match type_name {
        "null" => "null".to_owned(),
        t if t.starts_with(['a', 'e', 'i', 'o', 'u']) => format!("an {t}"),
        t => format!("a {t}"),
    }
}

/// An enum member as the reference lists it: strings bare, everything else as JSON.
fn enum_member(v: &Value) -> String {
    match v {
        Value::String(s) => cut(s, PREVIEW_CHARS).into_owned(),
        other => preview(other, PREVIEW_CHARS),
    }
}

/// A string cut to at most `max` characters, with `…` when cut.
pub(crate) fn cut(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        // Fewer bytes than `max` means fewer characters too: nothing to cut.
        return Cow::Borrowed(s);
    }
    match s.char_indices().nth(max) {
        None => Cow::Borrowed(s),
        Some((at, _)) => {
            let mut out = s.get(..at).unwrap_or_default().to_owned();
            out.push('…');
            Cow::Owned(out)
        }
    }
}

/// A short JSON rendering of a value, bounded in cost: strings are cut before encoding and
/// containers are described rather than serialised.
pub(crate) fn preview(v: &Value, max: usize) -> String {
    match v {
        Value::String(s) => Value::String(cut(s, max).into_owned()).to_string(),
        Value::Array(list) if list.is_empty() => "[]".to_owned(),
        Value::Object(map) if map.is_empty() => "{}".to_owned(),
        Value::Array(list) => format!(
            "an array of {} item{}",
            list.len(),
            if list.len() == 1 { "" } else { "s" }
        ),
        Value::Object(map) => format!(
            "an object with {} key{}",
            map.len(),
            if map.len() == 1 { "" } else { "s" }
        ),
        other => other.to_string(),
    }
}

/// Whether a key can be written bare in a path (`a.b`) rather than quoted (`["a.b"]`).
fn is_plain(key: &str) -> bool {
    !key.is_empty()
        && key.chars().all(|c| {
            !matches!(c, '.' | '[' | ']' | '"' | '\\') && !c.is_whitespace() && !c.is_control()
        })
}

/// Appends a property to a path: `a` + `b` → `a.b`; `a` + `x y` → `a["x y"]`.
pub(crate) fn push_key(path: &mut String, key: &str) {
    if is_plain(key) {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
    } else {
        path.push('[');
        path.push_str(&Value::String(cut(key, PREVIEW_CHARS).into_owned()).to_string());
        path.push(']');
    }
}

/// Appends an array index to a path: `a` + 2 → `a[2]`.
pub(crate) fn push_index(path: &mut String, index: usize) {
    let _ = write!(path, "[{index}]");
}

/// A child path as a new string.
pub(crate) fn child(parent: &str, key: &str) -> String {
    let mut path = parent.to_owned();
    push_key(&mut path, key);
    path
}

/// Renders a JSON Pointer into `instance` as a model-facing path (`/shipments/2/weight` →
/// `shipments[2].weight`), walking the instance so that an object key `"2"` stays a key.
pub(crate) fn pointer_path(pointer: &str, instance: &Value) -> String {
    let mut path = String::new();
    let mut node = Some(instance);
    for raw in pointer.split('/').skip(1) {
        let segment = raw.replace("~1", "/").replace("~0", "~");
        match node {
            Some(Value::Array(list)) => match segment.parse::<usize>() {
                Ok(index) => {
                    push_index(&mut path, index);
                    node = list.get(index);
                }
                Err(_) => {
                    push_key(&mut path, &segment);
                    node = None;
                }
            },
            Some(Value::Object(map)) => {
                node = map.get(&segment);
                push_key(&mut path, &segment);
            }
            _ => {
                push_key(&mut path, &segment);
                node = None;
            }
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_render_as_model_paths() {
        let args =
            json!({"shipments": [{"weight": 1}, {}, {"weight": "x"}], "m": {"2": {"a.b": 1}}});
        assert_eq!(
            pointer_path("/shipments/2/weight", &args),
            "shipments[2].weight"
        );
        assert_eq!(pointer_path("/m/2/a.b", &args), "m.2[\"a.b\"]");
        assert_eq!(pointer_path("", &args), "");
        assert_eq!(pointer_path("/a~1b", &json!({"a/b": 1})), "a/b");
    }

    #[test]
    fn cut_counts_characters() {
        assert_eq!(cut("héllo", 3), "hél…");
        assert_eq!(cut("abc", 3), "abc");
    }
}
