//! `resolve`: translate a model's tool call back to the real tool and validated arguments.
//!
//! This module holds what every level shares: the outcome and error types, the reading of
//! argument bags, validation (`Compressed::call`) and wire names. How a level reads a
//! call is its own (`crate::levels`, one module a level; levels 3–4 in `levels/dispatch.rs`).
//!
//! Resolution never fails for model input: a call the library cannot honour comes back as
//! [`Resolution::Error`] with text written for the model, so the agent loop can hand it
//! straight back and let the model retry.
//!
//! # What the resolver accepts beyond the canonical call
//!
//! Models drift, so at levels 3–4 the resolver also accepts: the whole argument object or
//! the nested bag as a JSON string; flat arguments beside `f`, and keys written beside a
//! non-empty `a` merged into it (the reference lets `a` win and drops them: a `dry_run`
//! beside `a` would run the deploy for real; here they are arguments, and a key inside and
//! beside with different values is refused as
//! [`GivenTwice`](crate::validate::ArgumentProblem::GivenTwice)); a tool's own parameter
//! named `a` or `f` read as that parameter (called by its name or code, a tool that
//! declares `a` is never unwrapped); a code or a real name used as the tool name; a real name in `f`; separator and
//! case drift in names and codes (`gdrive.sheets_append_rows`, `GDrive-Sheets_Append_Rows`)
//! unless two tools normalise to the same key; the lookup tool routed through the
//! dispatcher (`t(f="q", …)`) and the dispatcher nested in itself (one level); `q` with
//! both a code in `c` and a text in `s` searches the text. Near-miss
//! codes, parameter names and enum spellings are not accepted but answered with the exact
//! spelling to use. Levels 0–1 match names exactly.
//!
//! At levels 3–4 the names `t` and `q` belong to the dispatcher: a real tool with one of
//! those names is reachable through its code (`t(f="a0")`), never by its bare name.

use std::borrow::Cow;

use chef_ir::WireNames;
use serde_json::{Map, Value};

use crate::{
    compress::{Compressed, Entry},
    options::Level,
    validate::{ArgumentError, SchemaError},
};

/// The outcome of [`Compressed::resolve`].
#[derive(Debug, Clone, PartialEq)]
pub enum Resolution {
    /// A real tool call: dispatch it.
    Call {
        /// The tool's real name.
        name: String,
        /// The arguments the model sent (after choosing the nested or flat bag; a JSON
        /// string holding an object is parsed; absent, `null`, `""` and `[]` count as
        /// `{}`), validated against the original schema. A bag that cannot be read as an
        /// object (text that is not JSON, a non-empty array, a number) is an
        /// [`ArgumentProblem::NotAnObject`](crate::validate::ArgumentProblem::NotAnObject)
        /// error, never a call without the arguments the model meant.
        args: Value,
    },
    /// The model asked the library a lookup question (`q` or `describe_op`): return
    /// `result` as the tool result; do not dispatch.
    Meta {
        /// The lookup tool used (`q` or `describe_op`).
        name: &'static str,
        /// The answer, for the model.
        result: String,
    },
    /// The call cannot be honoured; return [`ResolveError::message`] to the model.
    Error(ResolveError),
}

/// Why a model's call could not be resolved, with the data a program acts on.
///
/// [`message`](Self::message) renders the text for the model; `Display` is the same text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// No tool has this name (levels 0–1: exact names only; level 2: no namespace tool of
    /// that name; levels 3–4: not `t`, `q`, a code or a real name).
    #[error("{}", self.message())]
    UnknownTool {
        /// The name the model called.
        name: String,
        /// The level of the compressed set (the message names the recovery path).
        level: Level,
    },
    /// Levels 3–4: `f` names no tool.
    #[error("{}", self.message())]
    UnknownCode {
        /// What the model wrote in `f` (or `c`).
        code: String,
        /// The nearest code, when one is close enough.
        suggestion: Option<String>,
    },
    /// Level 4: `f` (or `q(c=…)`) names no function.
    #[error("{}", self.message())]
    UnknownFunction {
        /// What the model wrote.
        name: String,
        /// The nearest real tool name, when one is close enough.
        suggestion: Option<String>,
    },
    /// Level 2: the namespace tool has no such operation.
    #[error("{}", self.message())]
    UnknownOperation {
        /// The namespace tool the model called.
        name: String,
        /// The op it asked for.
        op: String,
    },
    /// Level 2: `describe_op` found no such operation.
    #[error("{}", self.message())]
    UnknownDescribedOperation {
        /// The namespace asked about.
        ns: String,
        /// The op asked about.
        op: String,
    },
    /// The arguments do not satisfy the tool's schema.
    #[error("{}", self.message())]
    InvalidArguments(Box<ArgumentError>),
    /// The tool's schema was normalised at compress time but the validator refused to
    /// compile it (validators are compiled on a tool's first call); no call to this tool
    /// can be checked, so none is dispatched.
    #[error("{}", self.message())]
    UnusableSchema(Box<SchemaError>),
    /// A lookup (`q(c=…)` at levels 3–4) named a tool the caller hides
    /// ([`Compressed::resolve_hiding`]'s `hidden`, e.g. a blocked tool): its parameters are
    /// not described. A caller with a gate answers it as that gate's refusal.
    #[error("{}", self.message())]
    HiddenTool {
        /// The real name of the tool the lookup reached.
        tool: String,
    },
    /// [`Compressed::resolve_wire`]: the name is the wire name a target gave one tool
    /// (`wire_of`), and as written it also reaches another tool (`reaches`). Nothing is
    /// dispatched: either tool could be meant.
    #[error("{}", self.message())]
    AmbiguousWireName {
        /// The name the model called.
        name: String,
        /// The real tool the target's name table sends under `name`.
        wire_of: String,
        /// The other real tool `name` reaches as written (its exact name, or at levels 3–4
        /// a code or a name with other case or separators).
        reaches: String,
    },
    /// Levels 3–4: the arguments of a call to the dispatcher (`t` or `q`) cannot be read
    /// as a JSON object (text that is not JSON, an array, a number): neither the tool
    /// meant nor its arguments can be known, so nothing is called or looked up.
    #[error("{}", self.message())]
    UnreadableDispatch {
        /// The dispatcher tool the model called (`t` or `q`).
        name: String,
        /// What it sent instead of an object (`"string that is not JSON"`, `"array"`, …).
        received: String,
        /// The level of the compressed set (the message names the calling convention).
        level: Level,
    },
}

impl ResolveError {
    /// The text for the model: what went wrong and how to recover.
    pub fn message(&self) -> String {
        match self {
            Self::UnknownTool { name, level } => {
                format!(
                    "No tool named \"{}\".{}",
                    crate::similarity::shown_name(name),
                    level.unknown_tool_hint()
                )
            }
            Self::UnknownCode { code, .. } if code.trim().is_empty() => {
                "t needs \"f\": the map code of the tool to call, with the tool's arguments in \"a\". Search with q(s=…) to find a code.".to_owned()
            }
            Self::UnknownFunction { name, .. } if name.trim().is_empty() => {
                "t needs \"f\": the name of the function to call, with its arguments in \"a\". Search with q(s=…) to find one.".to_owned()
            }
            Self::UnreadableDispatch {
                name,
                received,
                level,
            } => format!(
                "Arguments for {name} must be a JSON object; received {}.{}",
                crate::validate::with_article(received),
                if name == "q" {
                    " Look a tool up with q(s=<keyword>) or q(c=<code>)."
                } else {
                    level.unknown_tool_hint()
                }
            ),
            Self::UnknownCode { code, suggestion } => {
                let mut m = format!("No map code \"{code}\". Search with q(s=…).");
                if let Some(s) = suggestion {
                    m.push_str(&format!(
                        " Did you mean \"{s}\"? Use it exactly as written in <toolmap>."
                    ));
                }
                m
            }
            Self::UnknownFunction { name, suggestion } => {
                let mut m = format!("No function named \"{name}\". Search with q(s=…).");
                if let Some(s) = suggestion {
                    m.push_str(&format!(" Did you mean \"{s}\"?"));
                }
                m
            }
            Self::UnknownOperation { name, op } if op.is_empty() => format!(
                "The \"{name}\" tool needs an \"op\": one of its op enum, with the operation's arguments in \"args\"."
            ),
            Self::UnknownOperation { name, op } => format!(
                "No operation \"{name}.{op}\". Call describe_op, or check the op enum on the \"{name}\" tool."
            ),
            Self::UnknownDescribedOperation { ns, op } if ns.is_empty() || op.is_empty() => {
                "describe_op needs \"ns\" (a namespace tool's name) and \"op\" (one of its op enum)."
                    .to_owned()
            }
            Self::UnknownDescribedOperation { ns, op } => format!("No operation \"{ns}.{op}\"."),
            Self::InvalidArguments(e) => e.message(),
            Self::HiddenTool { tool } => format!(
                "Tool \"{tool}\" is not available: do the task another way or tell the user."
            ),
            Self::UnusableSchema(e) => format!(
                "Tool \"{}\" cannot be called: its input schema is unusable ({e}). Use another tool.",
                e.tool()
            ),
            Self::AmbiguousWireName {
                name,
                wire_of,
                reaches,
            } => format!(
                "The name \"{name}\" could mean two tools: \"{wire_of}\" (sent to you as \"{name}\") or \"{reaches}\". Nothing was called; call the one you mean by a name that means only it."
            ),
        }
    }

    /// The real tool this error is about, where it is about one tool: the tool whose
    /// arguments were refused ([`InvalidArguments`](Self::InvalidArguments)), whose
    /// schema is unusable ([`UnusableSchema`](Self::UnusableSchema)), or the hidden tool a
    /// lookup reached ([`HiddenTool`](Self::HiddenTool)).
    ///
    /// `None` when the call reached no tool (an unknown name, code, function or
    /// operation) or could mean two ([`AmbiguousWireName`](Self::AmbiguousWireName), whose
    /// fields name both). The model-facing [`message`](Self::message) names the tool too;
    /// a program reads it here instead of parsing the text.
    ///
    /// ```
    /// # use chef_compress::{compress, Level, Options, Resolution};
    /// # use chef_ir::ToolDefinition;
    /// # use serde_json::json;
    /// let tools = [ToolDefinition::new("timezone.convert", json!({
    ///     "type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]
    /// }))];
    /// let c = compress(&tools, &Options::new().with_level(Level::Three))?;
    /// let Resolution::Error(e) = c.resolve("t", &json!({"f": "a0", "a": {}})) else { panic!() };
    /// assert_eq!(e.tool(), Some("timezone.convert"));
    /// let Resolution::Error(e) = c.resolve("t", &json!({"f": "zz9"})) else { panic!() };
    /// assert_eq!(e.tool(), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn tool(&self) -> Option<&str> {
        match self {
            Self::InvalidArguments(e) => Some(&e.tool),
            Self::UnusableSchema(e) => Some(e.tool()),
            Self::HiddenTool { tool } => Some(tool),
            Self::UnknownTool { .. }
            | Self::UnknownCode { .. }
            | Self::UnknownFunction { .. }
            | Self::UnknownOperation { .. }
            | Self::UnknownDescribedOperation { .. }
            | Self::AmbiguousWireName { .. }
            | Self::UnreadableDispatch { .. } => None,
        }
    }

    /// Whether the model can plausibly succeed by retrying. Errors about the model's input
    /// are recoverable; a tool whose schema cannot be compiled is not (no retry of that
    /// tool can succeed).
    pub fn recoverable(&self) -> bool {
        match self {
            Self::UnknownTool { .. }
            | Self::UnknownCode { .. }
            | Self::UnknownFunction { .. }
            | Self::UnknownOperation { .. }
            | Self::UnknownDescribedOperation { .. }
            | Self::InvalidArguments(_)
            | Self::HiddenTool { .. }
            | Self::AmbiguousWireName { .. }
            | Self::UnreadableDispatch { .. } => true,
            Self::UnusableSchema(_) => false,
        }
    }
}

/// Reads an argument bag: an object as itself, a string holding a JSON object as that
/// object, anything else (other JSON, garbage text, arrays, null) as `{}`.
///
/// The result is always a `Value::Object`; borrowing the model's own value keeps the
/// canonical path free of copies until the validated call is returned.
pub(crate) fn as_object(value: Option<&Value>) -> Cow<'_, Value> {
    match value {
        Some(object @ Value::Object(_)) => Cow::Borrowed(object),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(object @ Value::Object(_)) => Cow::Owned(object),
            _ => Cow::Owned(empty()),
        },
        _ => Cow::Owned(empty()),
    }
}

fn empty() -> Value {
    Value::Object(Map::new())
}

/// The keys of an argument object (empty for a non-object, which `as_object` never gives).
fn map(value: &Value) -> Option<&Map<String, Value>> {
    value.as_object()
}

pub(crate) fn is_empty(value: &Value) -> bool {
    map(value).is_none_or(Map::is_empty)
}

/// A JSON value as the model would read it in a message: strings bare, others as JSON.
pub(crate) fn as_text(value: Option<&Value>) -> Cow<'_, str> {
    match value {
        Some(Value::String(s)) => Cow::Borrowed(s),
        Some(other) => Cow::Owned(other.to_string()),
        None => Cow::Borrowed(""),
    }
}

/// The bag without the dispatcher's own keys `f` and `a`.
pub(crate) fn flat_args(args: &Value) -> Value {
    without(args, &["f", "a"])
}

/// `args` (an object) without the keys in `drop`.
pub(crate) fn without(args: &Value, drop: &[&str]) -> Value {
    Value::Object(
        map(args)
            .into_iter()
            .flatten()
            .filter(|(k, _)| !drop.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    )
}

/// The argument bag of a call written through a wrapper (the dispatcher's `a`, level 2's
/// `args`): the wrapped object with the keys the model wrote beside the wrapper merged in
/// (`t(f=…, a={"service": "api"}, dry_run=true)` means `dry_run` too; dropping it would run
/// the tool without what the model asked for). `beside` is the call's arguments with the
/// wrapper's own keys already left out. A key written inside and beside with different
/// values is refused ([`ArgumentProblem::GivenTwice`](crate::validate::ArgumentProblem)):
/// which one the model meant cannot be told.
pub(crate) fn merged_bag<'v>(
    tool: &str,
    wrapped: Cow<'v, Value>,
    beside: &Value,
) -> Result<Cow<'v, Value>, ResolveError> {
    let Some(extra) = map(beside).filter(|m| !m.is_empty()) else {
        return Ok(wrapped);
    };
    // `wrapped` is an object ([`as_object`]'s).
    let mut inner = match wrapped.into_owned() {
        Value::Object(inner) => inner,
        _ => Map::new(),
    };
    for (key, value) in extra {
        match inner.get(key) {
            Some(existing) if existing != value => {
                return Err(ResolveError::InvalidArguments(Box::new(
                    crate::validate::ArgumentError::new(
                        tool,
                        crate::validate::ArgumentProblem::GivenTwice { param: key.clone() },
                    ),
                )));
            }
            Some(_) => {}
            None => {
                inner.insert(key.clone(), value.clone());
            }
        }
    }
    Ok(Cow::Owned(Value::Object(inner)))
}

/// Whether `schema` declares a top-level property `key` (a tool's own parameter named
/// like a wrapper key, `a` or `f`, is that parameter, never the wrapper).
pub(crate) fn declares(schema: &Value, key: &str) -> bool {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.contains_key(key))
}

/// What the model wrote for an argument bag when it cannot be read as an object and is
/// not empty, named as an error names it: text that is not a JSON object, a non-empty
/// array, a number, a boolean. `None` for an object, a string holding one, and the empty
/// spellings of "no arguments" (absent, `null`, `""`, `[]`).
///
/// [`as_object`] reads every such value as `{}`; a call whose bag comes out empty while
/// the model wrote one of these is refused ([`Compressed::call_read`]) instead of being
/// dispatched without the arguments the model meant (a filter dropped from a "list"
/// call runs it over everything).
pub(crate) fn unreadable_bag(value: Option<&Value>) -> Option<&'static str> {
    match value? {
        Value::String(text) => {
            let text = text.trim();
            if text.is_empty() {
                return None;
            }
            match serde_json::from_str::<Value>(text) {
                Ok(parsed) => unreadable_kind(&parsed),
                Err(_) => Some("string that is not JSON"),
            }
        }
        other => unreadable_kind(other),
    }
}

/// [`unreadable_bag`] of a JSON value (a string here is one a JSON text held).
fn unreadable_kind(value: &Value) -> Option<&'static str> {
    match value {
        Value::Null | Value::Object(_) => None,
        Value::Array(items) if items.is_empty() => None,
        Value::Array(_) => Some("array"),
        Value::String(_) => Some("JSON string"),
        Value::Number(_) => Some("number"),
        Value::Bool(_) => Some("boolean"),
    }
}

/// The refusal of a call of `entry` whose argument bag cannot be read (`received`,
/// [`unreadable_bag`]'s kind):
/// [`ArgumentProblem::NotAnObject`](crate::validate::ArgumentProblem::NotAnObject).
pub(crate) fn not_an_object(entry: &Entry, received: &str) -> Resolution {
    Resolution::Error(ResolveError::InvalidArguments(Box::new(
        crate::validate::ArgumentError::new(
            entry.name.to_string(),
            crate::validate::ArgumentProblem::NotAnObject {
                received: received.to_owned(),
            },
        ),
    )))
}

impl Compressed {
    /// [`call`](Self::call), unless `args` came out empty while the model wrote a bag that
    /// cannot be read (`unreadable`, [`unreadable_bag`] of what it wrote, asked only then:
    /// a bag that came out full is never parsed twice): that is refused as
    /// [`ArgumentProblem::NotAnObject`](crate::validate::ArgumentProblem::NotAnObject), so
    /// the model resends its arguments instead of the tool running without them.
    pub(crate) fn call_read(
        &self,
        entry: &Entry,
        args: Cow<'_, Value>,
        unreadable: impl FnOnce() -> Option<&'static str>,
    ) -> Resolution {
        if is_empty(&args)
            && let Some(received) = unreadable()
        {
            return not_an_object(entry, received);
        }
        self.call(entry, args)
    }

    /// The call of `entry` with `args`, validated against its schema (when validation is
    /// on): what every level's reading back ends in.
    pub(crate) fn call(&self, entry: &Entry, args: Cow<'_, Value>) -> Resolution {
        if self.validate {
            let checked = match entry.validator() {
                Ok(validator) => validator.validate(&args),
                Err(e) => {
                    return Resolution::Error(ResolveError::UnusableSchema(Box::new(e.clone())));
                }
            };
            if let Err(e) = checked {
                return Resolution::Error(ResolveError::InvalidArguments(e));
            }
        }
        Resolution::Call {
            name: entry.name.clone(),
            args: args.into_owned(),
        }
    }
}

/// `text`, then every parameter of `schema` with its type, format, default and
/// description (a code lookup answers what the signature leaves out).
pub(crate) fn with_parameters(text: String, schema: &Value) -> String {
    let lines = crate::render::parameter_lines(schema);
    if lines.is_empty() {
        text
    } else {
        format!("{text}\n\nParameters:\n{lines}")
    }
}

/// `{head} — {description}`, or just `head` when there is no description.
pub(crate) fn with_description(head: String, description: &str) -> String {
    if description.is_empty() {
        head
    } else {
        format!("{head} — {description}")
    }
}

/// The real name for `name` when `names` says it is the wire name a target gave a tool,
/// else `name` itself. `reaches` says which tool `name`, as written, reaches in the tool set
/// the call is resolved against (asked only when `name` is a renamed tool's wire name).
///
/// # Errors
/// [`ResolveError::AmbiguousWireName`] when it reaches another tool than the one renamed
/// to it: nothing is guessed.
pub fn real_name_of_wire<'a>(
    name: &'a str,
    names: &'a WireNames,
    reaches: impl FnOnce() -> Option<&'a str>,
) -> Result<&'a str, ResolveError> {
    let real = names.to_real(name);
    if real == name {
        return Ok(name);
    }
    match reaches() {
        Some(other) if other != real => Err(ResolveError::AmbiguousWireName {
            name: name.to_owned(),
            wire_of: real.to_owned(),
            reaches: other.to_owned(),
        }),
        _ => Ok(real),
    }
}
