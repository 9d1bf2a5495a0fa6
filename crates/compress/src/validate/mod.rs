//! Argument validation against a tool's whole JSON Schema, with errors written for the model
//! and typed for the program.
//!
//! An [`ArgumentValidator`] is built once per tool: the schema is normalised
//! ([`normalise_schema`]: schemas from the wild use `dict`, `float`, recursive `$ref`,
//! draft-4 and draft-7 forms, ...) and compiled with the `jsonschema` crate as JSON Schema
//! 2020-12. [`ArgumentValidator::validate`] then runs, in order:
//!
//! 1. **Resource limits**, checked without recursion before anything recursive sees the
//!    arguments (see [`Limits`]).
//! 2. **The reference's top-level checks** (spec §5.1), whose messages models already
//!    understand: a required parameter that is absent, `null` or `""` (with the
//!    conditional `if`/`then` requirements whose condition is a `const`/`enum` match);
//!    a key not among the declared properties (when there are any, or `properties` is
//!    declared empty, and the schema does not admit more through `additionalProperties`
//!    or `patternProperties`); a top-level value
//!    outside its `enum` (with the exact spelling for a case slip) or of the wrong type.
//! 3. **Full JSON Schema validation** of everything else: nested objects, array items,
//!    `enum`, `const`, `oneOf`/`anyOf`/`allOf`, numeric and length bounds, `pattern`,
//!    `additionalProperties`, `if`/`then`/`else`, `dependentRequired`, ... Every violation
//!    becomes an [`ArgumentProblem`]; the most useful one is reported (a missing required
//!    name before an unknown key, before a wrong type, before a bad value, before a
//!    mismatched alternative), and [`ArgumentValidator::problems`] returns them all.
//!
//! The error carries the most useful problem and up to [`MAX_FURTHER_PROBLEMS`] others
//! about other parameters ([`ArgumentError::also`]), and its message names them all, so a
//! model that sent an unknown key *and* left out a required one fixes both in one call
//! instead of learning one at a time. A problem with the same root as one already named is
//! left out: a required parameter sent as `null` is missing, not also of the wrong type; a
//! misspelt key that the missing parameter's "did you mean" already names is not also
//! unknown.
//!
//! A flat schema (scalar parameters whose only constraints are `type`, `enum` and numeric
//! or length bounds; most tools) is decided by step 2 plus a bounds check, without running
//! the compiled validator; a property test pins that both decide alike.
//!
//! Deliberate choices beyond the reference: `if`/`then`/`else` follow JSON Schema fully
//! (an `else` applies when the condition fails, and a condition on `pattern` can add a
//! requirement); union types (`["string", "null"]`) are checked; nested objects follow JSON
//! Schema (an unknown nested key is refused only under `additionalProperties: false`; a
//! nested `""` satisfies `required`); `format` is an annotation, as JSON Schema 2020-12
//! makes it, and is not checked.
//!
//! # Messages
//!
//! The reference's templates (spec §5.4) are kept where it has one, byte for byte for its
//! examples, with the parameter's path in place of its name below the top level:
//!
//! ```text
//! Missing required parameter "q" for github_search_issues. Required: q. You passed "query" — did you mean "q"? Rename it.
//! Unknown parameter "shipments[0].Mode" for ship. Accepted: weight, mode. Did you mean "mode"?
//! Invalid value for "event" on github_create_review: expected one of APPROVE, REQUEST_CHANGES, COMMENT. Use exactly "APPROVE".
//! Parameter "shipments[2].weight" on ship must be a number; received a string.
//! Parameter "shipments[0].weight" on ship must be greater than 0; received 0.
//! Parameter "id" on ship must be a string or an integer; received a number.
//! ```
//!
//! # Untrusted schemas
//!
//! Schemas come from third-party servers. The validator is built without remote or file
//! `$ref` retrieval (the crate's default features are off), regular expressions run on the
//! linear-time `regex` engine with a 1 MiB size limit (a pattern it cannot run, such as a
//! look-around, is dropped at normalisation and listed), `$ref` inlining has a budget, and
//! schema nesting is capped. A keyword the validator still refuses is removed where it
//! names it, and listed, rather than refusing the whole tool.
//!
//! # Limits (defaults)
//!
//! | limit | default | on excess |
//! |---|---|---|
//! | [`Limits::max_depth`]: nesting of the arguments (the object itself is 1) | 64 | [`ArgumentProblem::TooDeep`] |
//! | [`Limits::max_string_bytes`]: one string value | 8 MiB | [`ArgumentProblem::TooLarge`] |
//! | [`Limits::max_key_bytes`]: one object key | 4 KiB | [`ArgumentProblem::TooLarge`] |
//! | [`Limits::max_schema_depth`]: nesting of the schema document | 128 | [`SchemaError::TooDeep`] |
//! | [`Limits::max_ref_inline_nodes`]: schema nodes `$ref` inlining may add per tool | 20,000 | the rest stay references (bounded work, no error) |
//! | [`Limits::max_tools`]: tools in one [`compress`](crate::compress) call | 10,000 | [`CompressError::TooManyTools`](crate::CompressError::TooManyTools) |
//! | [`Limits::max_tool_name_bytes`]: one tool name | 1 KiB | [`CompressError::NameTooLong`](crate::CompressError::NameTooLong) |
//!
//! [`compress`](crate::compress) applies [`Options::with_limits`](crate::Options::with_limits)
//! (default: [`Limits::default`]) to the tool set, to every schema it normalises and to
//! every validator `resolve` compiles.
//!
//! ```
//! use chef_compress::validate::{ArgumentProblem, ArgumentValidator};
//! use serde_json::json;
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {"shipments": {"type": "array", "items": {
//!         "type": "object",
//!         "properties": {"weight": {"type": "number", "minimum": 0}},
//!         "required": ["weight"]
//!     }}},
//!     "required": ["shipments"]
//! });
//! let validator = ArgumentValidator::new("ship", &schema)?;
//! assert!(validator.validate(&json!({"shipments": [{"weight": 2.5}]})).is_ok());
//!
//! let error = validator
//!     .validate(&json!({"shipments": [{"weight": 1}, {"weight": 2}, {"weight": "3kg"}]}))
//!     .unwrap_err();
//! assert!(matches!(error.problem, ArgumentProblem::WrongType { ref path, .. } if path == "shipments[2].weight"));
//! assert_eq!(
//!     error.message(),
//!     "Parameter \"shipments[2].weight\" on ship must be a number; received a string."
//! );
//! # Ok::<(), chef_compress::validate::SchemaError>(())
//! ```

mod error;
mod normalise;
mod render;
pub(crate) use self::render::with_article;

use std::collections::HashMap;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{Draft, PatternOptions, ValidationError, ValidationOptions};
use serde_json::{Map, Value};

pub use self::error::{ArgumentError, ArgumentProblem, Bound, Measure, ParamPath, SchemaError};
pub use self::normalise::{
    Normalisation, NormalisedSchema, normalise_schema, normalise_with_limits,
};

pub(crate) use self::normalise::{QUICK_MAX_DEPTH, RootDrops, quick_normalise};
use self::normalise::{is_integer, json_type, open_references};
use self::render::{child, cut, pointer_path, preview, push_index, push_key};
use crate::similarity::{SUGGESTION_FLOOR, nearest};

/// How many problems besides the most useful one a refusal names
/// ([`ArgumentError::also`]): enough for the usual mixed mistakes (a misspelt key, a missing
/// parameter, a number sent as a string) without burying the first.
pub const MAX_FURTHER_PROBLEMS: usize = 3;

/// Resource limits for validation. See the [module docs](self) for the defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Deepest nesting of arrays and objects in the arguments; the argument object is 1.
    pub max_depth: usize,
    /// Largest string value, in bytes of UTF-8.
    pub max_string_bytes: usize,
    /// Largest object key, in bytes of UTF-8.
    pub max_key_bytes: usize,
    /// Deepest nesting of arrays and objects in the schema document.
    pub max_schema_depth: usize,
    /// Most schema nodes that inlining `$ref`s may add to one tool's schema. References
    /// beyond the budget, and recursive ones (cycles), are kept as references, which the
    /// validator follows lazily: bounded work whatever the reference graph.
    pub max_ref_inline_nodes: usize,
    /// Most tools one [`compress`](crate::compress) call accepts.
    pub max_tools: usize,
    /// Longest tool name, in bytes of UTF-8.
    pub max_tool_name_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_depth: 64,
            max_string_bytes: 8 * 1024 * 1024,
            max_key_bytes: 4 * 1024,
            max_schema_depth: 128,
            max_ref_inline_nodes: 20_000,
            max_tools: 10_000,
            max_tool_name_bytes: 1024,
        }
    }
}

/// The longest name (in bytes) for which a "did you mean" is computed; longer names are not
/// typos of a parameter, and Levenshtein over them would cost time for nothing.
const MAX_SUGGEST_BYTES: usize = 256;

/// The `jsonschema` options every compiled validator uses.
pub(crate) fn options() -> ValidationOptions<'static> {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .with_pattern_options(PatternOptions::regex().size_limit(1 << 20))
        .should_validate_formats(false)
}

/// Validates one tool's arguments against its (normalised) schema. Build once, use often:
/// the schema is compiled at construction. `Send + Sync`.
pub struct ArgumentValidator {
    tool: String,
    schema: Value,
    notes: Vec<Normalisation>,
    parameters: Vec<String>,
    required: Vec<String>,
    /// Per-parameter checks, aligned with `parameters`.
    top: Vec<TopCheck>,
    /// Name → position, for tools with many parameters (few are scanned).
    index: Option<HashMap<String, usize>>,
    /// Whether undeclared top-level keys are refused (spec §5.1 step 2).
    closed: bool,
    /// Whether the reference checks plus [`TopCheck::extra_valid`] decide validity alone.
    flat: Option<Flat>,
    conditionals: Vec<Conditional>,
    compiled: jsonschema::Validator,
    limits: Limits,
}

impl std::fmt::Debug for ArgumentValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgumentValidator")
            .field("tool", &self.tool)
            .field("parameters", &self.parameters)
            .field("required", &self.required)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

const _: fn() = || {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<ArgumentValidator>();
    assert_send_sync::<ArgumentError>();
    assert_send_sync::<SchemaError>();
};

/// Up to this many parameters, names are found by scanning rather than hashing.
const LINEAR_LOOKUP: usize = 16;

/// The reference's per-parameter check (spec §5.3), plus the bounds a flat schema may add.
struct TopCheck {
    allowed: Option<Vec<Value>>,
    simple_type: Option<&'static str>,
    /// Whether this property uses only keywords [`TopCheck::extra_valid`] decides.
    flat: bool,
    minimum: Option<f64>,
    maximum: Option<f64>,
    exclusive_minimum: Option<f64>,
    exclusive_maximum: Option<f64>,
    min_length: Option<u64>,
    max_length: Option<u64>,
}

/// Keywords that never affect validity: the annotations, and `format` (an annotation in
/// 2020-12, see module docs).
fn inert(keyword: &str) -> bool {
    keyword == "format" || normalise::ANNOTATIONS.contains(&keyword)
}

impl TopCheck {
    fn new(spec: &Value) -> Self {
        let allowed = spec.get("enum").and_then(Value::as_array).cloned();
        let simple_type = match spec.get("type").and_then(Value::as_str) {
            Some("string") => Some("string"),
            Some("integer") => Some("integer"),
            Some("number") => Some("number"),
            Some("boolean") => Some("boolean"),
            Some("array") => Some("array"),
            Some("object") => Some("object"),
            _ => None,
        };
        let number = |key: &str| spec.get(key).and_then(Value::as_f64);
        let count = |key: &str| spec.get(key).and_then(Value::as_u64);
        let flat = match spec {
            Value::Object(map) => map.iter().all(|(key, value)| match key.as_str() {
                "type" => simple_type.is_some(),
                "enum" => value
                    .as_array()
                    .is_some_and(|m| m.iter().all(|v| !v.is_array() && !v.is_object())),
                "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                    value.as_f64().is_some()
                }
                "minLength" | "maxLength" => value.as_u64().is_some(),
                other => inert(other),
            }),
            Value::Bool(accepts) => *accepts,
            _ => false,
        };
        Self {
            allowed,
            simple_type,
            flat,
            minimum: number("minimum"),
            maximum: number("maximum"),
            exclusive_minimum: number("exclusiveMinimum"),
            exclusive_maximum: number("exclusiveMaximum"),
            min_length: count("minLength"),
            max_length: count("maxLength"),
        }
    }

    /// The bounds beyond the reference's enum and type checks (those have passed).
    fn extra_valid(&self, value: &Value) -> bool {
        match value {
            Value::Number(n) => {
                let Some(x) = n.as_f64() else {
                    return false;
                };
                self.minimum.is_none_or(|m| x >= m)
                    && self.maximum.is_none_or(|m| x <= m)
                    && self.exclusive_minimum.is_none_or(|m| x > m)
                    && self.exclusive_maximum.is_none_or(|m| x < m)
            }
            Value::String(s) if self.min_length.is_some() || self.max_length.is_some() => {
                let length = s.chars().count() as u64;
                self.min_length.is_none_or(|m| length >= m)
                    && self.max_length.is_none_or(|m| length <= m)
            }
            _ => true,
        }
    }
}

/// A schema whose validity the reference checks and [`TopCheck::extra_valid`] decide
/// without the compiled validator: flat parameters, nothing nested, nothing conditional.
struct Flat {
    /// `additionalProperties: false` with no declared property: every key is refused.
    no_keys: bool,
}

fn is_flat(schema: &Value, top: &[TopCheck]) -> Option<Flat> {
    let map = schema.as_object()?;
    let root_ok = map.iter().all(|(key, value)| match key.as_str() {
        "type" => value == "object",
        "properties" => value.is_object(),
        "required" => value.is_array(),
        "additionalProperties" => value.is_boolean(),
        other => inert(other),
    });
    let declares_none = matches!(map.get("properties"), Some(Value::Object(p)) if p.is_empty());
    (root_ok && top.iter().all(|t| t.flat)).then(|| Flat {
        no_keys: top.is_empty()
            && (map.get("additionalProperties") == Some(&Value::Bool(false))
                || (declares_none && map.get("additionalProperties").is_none())),
    })
}

/// A supported `if`/`then` requirement (spec §5.2).
struct Conditional {
    when: Vec<(String, Vec<Value>)>,
    then_required: Vec<String>,
}

impl ArgumentValidator {
    /// Normalises and compiles a tool's input schema with the default [`Limits`].
    ///
    /// # Errors
    ///
    /// [`SchemaError`] naming the tool when the schema cannot be used.
    pub fn new(tool: &str, schema: &Value) -> Result<Self, SchemaError> {
        Self::with_limits(tool, schema, Limits::default())
    }

    /// Normalises and compiles a tool's input schema with explicit limits.
    ///
    /// # Errors
    ///
    /// [`SchemaError`] naming the tool when the schema cannot be used.
    pub fn with_limits(tool: &str, schema: &Value, limits: Limits) -> Result<Self, SchemaError> {
        let normalised = normalise_with_limits(tool, schema, &limits)?;
        Self::from_normalised(tool, normalised, limits)
    }

    /// Compiles a schema already normalised with [`normalise_schema`] (a caller that
    /// renders schemas at compression time and compiles validators lazily normalises once).
    ///
    /// Keywords the validator still refuses (malformed values of rarely used keywords such
    /// as `dependentRequired`, `$anchor`, `contentEncoding`) are removed one by one and
    /// listed, as are references it cannot follow; [`normalised_schema`](Self::normalised_schema)
    /// is what was compiled.
    ///
    /// # Errors
    ///
    /// [`SchemaError::Uncompilable`] when the validator refuses the schema even so.
    pub fn from_normalised(
        tool: &str,
        mut normalised: NormalisedSchema,
        limits: Limits,
    ) -> Result<Self, SchemaError> {
        let compiled = compile(tool, &mut normalised)?;
        let NormalisedSchema { schema, notes } = normalised;
        let empty = Map::new();
        let props = schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let parameters: Vec<String> = props.keys().cloned().collect();
        let top: Vec<TopCheck> = props.values().map(TopCheck::new).collect();
        let index = (parameters.len() > LINEAR_LOOKUP).then(|| {
            parameters
                .iter()
                .enumerate()
                .map(|(i, p)| (p.clone(), i))
                .collect()
        });
        let flat = is_flat(&schema, &top);
        // The reference refuses undeclared keys whenever any property is declared; so does
        // chef when `properties` is declared empty (a tool that takes no parameters: a key
        // sent to it is a mistake, and not forwarded). A schema without `properties`
        // accepts any keys, and one that explicitly admits more (`additionalProperties`
        // true or a schema, or `patternProperties`) is left to JSON Schema.
        let open = schema.get("patternProperties").is_some()
            || matches!(
                schema.get("additionalProperties"),
                Some(Value::Bool(true) | Value::Object(_))
            );
        let declares_none =
            matches!(schema.get("properties"), Some(Value::Object(p)) if p.is_empty());
        let closed = (!parameters.is_empty() || declares_none) && !open;
        let required = string_list(schema.get("required"));
        let conditionals = conditionals(&schema);
        Ok(Self {
            tool: tool.to_owned(),
            schema,
            notes,
            parameters,
            required,
            top,
            index,
            closed,
            flat,
            conditionals,
            compiled,
            limits,
        })
    }

    /// The tool's name.
    #[must_use]
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The schema as normalised and compiled.
    #[must_use]
    pub fn normalised_schema(&self) -> &Value {
        &self.schema
    }

    /// The changes normalisation made.
    #[must_use]
    pub fn normalisations(&self) -> &[Normalisation] {
        &self.notes
    }

    /// Top-level parameter names, in schema order.
    #[must_use]
    pub fn parameters(&self) -> &[String] {
        &self.parameters
    }

    /// Top-level required names, in schema order (without conditional requirements).
    #[must_use]
    pub fn required(&self) -> &[String] {
        &self.required
    }

    /// The limits in force.
    #[must_use]
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Checks a call's arguments; `Err` carries the most useful problem and the others
    /// worth naming with it.
    ///
    /// # Errors
    ///
    /// [`ArgumentError`] (boxed: it holds several problems) for the most useful problem
    /// found (see the [module docs](self) for the order), with up to
    /// [`MAX_FURTHER_PROBLEMS`] further problems about other parameters in
    /// [`ArgumentError::also`]. Never panics, whatever `args` holds.
    pub fn validate(&self, args: &Value) -> Result<(), Box<ArgumentError>> {
        let refusal = |problem, also| {
            Box::new(ArgumentError::new(self.tool.clone(), problem).with_also(also))
        };
        if let Some(problem) = self.precheck(args) {
            // The argument object as a whole: nothing else was checked.
            return Err(refusal(problem, Vec::new()));
        }
        let reference = self.reference_problem(args);
        if reference.is_none() && self.passes(args) {
            return Ok(());
        }
        let from_reference = reference.is_some();
        let mut all = self.violations(reference, args);
        // The reference's own problem when it found one (it comes first); else the
        // validator's most useful, the first of equals. The flat check is sound but may be
        // stricter than JSON Schema in corner cases (numbers beyond f64): no error from the
        // full validator means valid.
        let at = if from_reference {
            0
        } else {
            match all.iter().enumerate().min_by_key(|(_, p)| rank(p)) {
                Some((at, _)) => at,
                None => return Ok(()),
            }
        };
        let first = all.remove(at);
        let also = further_problems(&first, all);
        Err(refusal(first, also))
    }

    /// Every problem with a call's arguments: the reference's top-level problem first (if
    /// any), then each JSON Schema violation in the validator's order, one per kind and
    /// path. Empty exactly when [`validate`](Self::validate) succeeds.
    #[must_use]
    pub fn problems(&self, args: &Value) -> Vec<ArgumentProblem> {
        if let Some(problem) = self.precheck(args) {
            return vec![problem];
        }
        self.violations(self.reference_problem(args), args)
    }

    /// `reference` (the reference's top-level problem, if any), then each violation the
    /// compiled validator finds, in its order, one per kind and path.
    fn violations(&self, reference: Option<ArgumentProblem>, args: &Value) -> Vec<ArgumentProblem> {
        let mut out: Vec<ArgumentProblem> = reference.into_iter().collect();
        // `is_valid` stops at the first violation and allocates nothing; collecting them is
        // far dearer, and needless when the reference's problem is the only one.
        if self.compiled.is_valid(args) {
            return out;
        }
        for error in self.compiled.iter_errors(args) {
            let problem = self.convert(&error, args);
            // The reference check and the validator may both see one problem.
            let seen = out.iter().any(|p| {
                std::mem::discriminant(p) == std::mem::discriminant(&problem)
                    && p.path() == problem.path()
            });
            if !seen {
                out.push(problem);
            }
        }
        out
    }

    /// Whether the arguments pass, by the flat check when the schema has one, else the
    /// compiled validator (the reference's checks aside).
    fn passes(&self, args: &Value) -> bool {
        match &self.flat {
            Some(flat) => self.flat_valid(flat, args),
            None => self.compiled.is_valid(args),
        }
    }

    /// The argument object's shape and the resource limits, checked without recursion.
    fn precheck(&self, args: &Value) -> Option<ArgumentProblem> {
        let Value::Object(map) = args else {
            return Some(ArgumentProblem::NotAnObject {
                received: json_type(args).to_owned(),
            });
        };
        let limits = &self.limits;
        // Depth-first over containers only; flat arguments never allocate the stack.
        let mut stack: Vec<(&Value, usize)> = Vec::new();
        if let Some(size) = scan_object(map, 1, limits, &mut stack) {
            return Some(self.too_large(args, size));
        }
        while let Some((node, depth)) = stack.pop() {
            if depth > limits.max_depth {
                return Some(ArgumentProblem::TooDeep {
                    limit: limits.max_depth,
                });
            }
            let oversized = match node {
                Value::Object(map) => scan_object(map, depth, limits, &mut stack),
                Value::Array(list) => scan_values(list.iter(), depth, limits, &mut stack),
                _ => None,
            };
            if let Some(size) = oversized {
                return Some(self.too_large(args, size));
            }
        }
        None
    }

    /// Locates the oversized string or key (the arguments are known to be within depth).
    fn too_large(&self, args: &Value, size: usize) -> ArgumentProblem {
        let limit = if size > self.limits.max_string_bytes {
            self.limits.max_string_bytes
        } else {
            self.limits.max_key_bytes
        };
        let path = find_oversized(args, &self.limits, self.limits.max_depth).unwrap_or_default();
        ArgumentProblem::TooLarge {
            path: path.into(),
            limit,
            size,
        }
    }

    /// The reference's top-level checks (spec §5.1–5.3).
    fn reference_problem(&self, args: &Value) -> Option<ArgumentProblem> {
        let Value::Object(map) = args else {
            return None;
        };
        let declared = !self.parameters.is_empty();
        let is_missing = |key: &str| match map.get(key) {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.is_empty(),
            Some(_) => false,
        };
        let conditional: Vec<&str> = self
            .conditionals
            .iter()
            .filter(|c| c.matches(map))
            .flat_map(|c| c.then_required.iter().map(String::as_str))
            .collect();
        let missing = self
            .required
            .iter()
            .map(String::as_str)
            .chain(conditional.iter().copied())
            .find(|key| is_missing(key));
        if let Some(key) = missing {
            let renamed_from = if declared && key.len() <= MAX_SUGGEST_BYTES {
                let unknown = map
                    .keys()
                    .filter(|k| self.check(k).is_none() && k.len() <= MAX_SUGGEST_BYTES)
                    .map(String::as_str);
                nearest(key, unknown, SUGGESTION_FLOOR).map(str::to_owned)
            } else {
                None
            };
            let required = self
                .required
                .iter()
                .map(String::as_str)
                .chain(conditional.iter().copied())
                .map(str::to_owned)
                .collect();
            return Some(ArgumentProblem::MissingRequired {
                param: key.to_owned(),
                path: child("", key).into(),
                required,
                renamed_from,
            });
        }
        if self.closed
            && let Some(unknown) = map.keys().find(|k| self.check(k).is_none())
        {
            return Some(self.unknown_parameter(unknown, "", &self.parameters));
        }
        for (key, value) in map {
            let Some(check) = self.check(key) else {
                continue;
            };
            if let Some(allowed) = &check.allowed
                && !allowed.iter().any(|member| strictly_equal(member, value))
            {
                return Some(invalid_enum(child("", key).into(), allowed, value));
            }
            if let Some(expected) = check.simple_type {
                let ok = match expected {
                    "string" => value.is_string(),
                    "integer" => is_integer(value),
                    "number" => value.is_number(),
                    "boolean" => value.is_boolean(),
                    "array" => value.is_array(),
                    _ => value.is_object(),
                };
                if !ok {
                    return Some(ArgumentProblem::WrongType {
                        path: child("", key).into(),
                        expected: vec![expected.to_owned()],
                        received: json_type(value).to_owned(),
                    });
                }
            }
        }
        None
    }

    /// The check of a declared top-level parameter.
    fn check(&self, key: &str) -> Option<&TopCheck> {
        let position = match &self.index {
            Some(index) => index.get(key).copied(),
            None => self.parameters.iter().position(|p| p == key),
        };
        position.and_then(|i| self.top.get(i))
    }

    /// Whether a flat schema accepts arguments the reference checks have passed.
    fn flat_valid(&self, flat: &Flat, args: &Value) -> bool {
        let Value::Object(map) = args else {
            return false;
        };
        if flat.no_keys {
            return map.is_empty();
        }
        map.iter()
            .all(|(key, value)| self.check(key).is_none_or(|check| check.extra_valid(value)))
    }

    fn unknown_parameter(&self, key: &str, parent: &str, accepted: &[String]) -> ArgumentProblem {
        let did_you_mean = if key.len() <= MAX_SUGGEST_BYTES {
            nearest(key, accepted.iter().map(String::as_str), SUGGESTION_FLOOR).map(str::to_owned)
        } else {
            None
        };
        ArgumentProblem::UnknownParameter {
            param: cut(key, 200).into_owned(),
            path: child(parent, key).into(),
            accepted: accepted.to_vec(),
            did_you_mean,
        }
    }

    /// Turns one `jsonschema` error into a problem for the model.
    fn convert(&self, error: &ValidationError<'_>, args: &Value) -> ArgumentProblem {
        let path: ParamPath = pointer_path(error.instance_path().as_str(), args).into();
        let schema_path = error.schema_path().as_str();
        let instance = error.instance();
        match error.kind() {
            ValidationErrorKind::Required { property } => {
                let param = property.as_str().unwrap_or_default().to_owned();
                let object_schema = schema_at(&self.schema, parent_pointer(schema_path));
                let declared = object_schema
                    .and_then(|s| s.get("properties"))
                    .and_then(Value::as_object);
                let required = string_list(object_schema.and_then(|s| s.get("required")));
                let renamed_from = match (instance.as_ref(), declared) {
                    (Value::Object(map), Some(props)) if param.len() <= MAX_SUGGEST_BYTES => {
                        let unknown = map
                            .keys()
                            .filter(|k| {
                                !props.contains_key(k.as_str()) && k.len() <= MAX_SUGGEST_BYTES
                            })
                            .map(String::as_str);
                        nearest(&param, unknown, SUGGESTION_FLOOR).map(str::to_owned)
                    }
                    _ => None,
                };
                ArgumentProblem::MissingRequired {
                    path: child(&path, &param).into(),
                    param,
                    required: if required.is_empty() {
                        vec![property.as_str().unwrap_or_default().to_owned()]
                    } else {
                        required
                    },
                    renamed_from,
                }
            }
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                let object_schema = schema_at(&self.schema, parent_pointer(schema_path));
                let accepted: Vec<String> = object_schema
                    .and_then(|s| s.get("properties"))
                    .and_then(Value::as_object)
                    .map(|props| props.keys().cloned().collect())
                    .unwrap_or_default();
                let key = unexpected.first().map(String::as_str).unwrap_or_default();
                self.unknown_parameter(key, &path, &accepted)
            }
            ValidationErrorKind::Type { kind } => ArgumentProblem::WrongType {
                path,
                expected: match kind {
                    TypeKind::Single(t) => vec![t.to_string()],
                    // In the schema's own order, as the author listed them.
                    TypeKind::Multiple(set) => {
                        let declared = string_list(
                            schema_at(&self.schema, parent_pointer(schema_path))
                                .and_then(|s| s.get("type")),
                        );
                        if declared.is_empty() {
                            set.iter().map(|t| t.to_string()).collect()
                        } else {
                            declared
                        }
                    }
                },
                received: json_type(instance).to_owned(),
            },
            ValidationErrorKind::Enum { options } => {
                let allowed = options.as_array().cloned().unwrap_or_default();
                invalid_enum(path, &allowed, instance)
            }
            ValidationErrorKind::Constant { expected_value } => invalid_enum(
                path,
                std::slice::from_ref(expected_value.as_ref()),
                instance,
            ),
            ValidationErrorKind::Minimum { limit } => {
                out_of_range(path, Bound::Minimum, limit, instance)
            }
            ValidationErrorKind::Maximum { limit } => {
                out_of_range(path, Bound::Maximum, limit, instance)
            }
            ValidationErrorKind::ExclusiveMinimum { limit } => {
                out_of_range(path, Bound::ExclusiveMinimum, limit, instance)
            }
            ValidationErrorKind::ExclusiveMaximum { limit } => {
                out_of_range(path, Bound::ExclusiveMaximum, limit, instance)
            }
            ValidationErrorKind::MultipleOf { multiple_of, .. } => {
                let limit = whole_number(*multiple_of);
                out_of_range(path, Bound::MultipleOf, &limit, instance)
            }
            ValidationErrorKind::MinLength { limit } => {
                too_short(path, Measure::Characters, *limit)
            }
            ValidationErrorKind::MaxLength { limit } => too_long(path, Measure::Characters, *limit),
            ValidationErrorKind::MinItems { limit } => too_short(path, Measure::Items, *limit),
            ValidationErrorKind::MaxItems { limit } => too_long(path, Measure::Items, *limit),
            ValidationErrorKind::MinProperties { limit } => {
                too_short(path, Measure::Properties, *limit)
            }
            ValidationErrorKind::MaxProperties { limit } => {
                too_long(path, Measure::Properties, *limit)
            }
            ValidationErrorKind::Pattern { pattern } => ArgumentProblem::PatternMismatch {
                path,
                pattern: pattern.clone(),
                received: preview(instance, 80),
            },
            ValidationErrorKind::UniqueItems => ArgumentProblem::DuplicateItems { path },
            ValidationErrorKind::OneOfMultipleValid { .. } => {
                ArgumentProblem::AmbiguousAlternatives { path }
            }
            ValidationErrorKind::AnyOf { context }
            | ValidationErrorKind::OneOfNotValid { context } => {
                self.alternatives(path, context, args)
            }
            ValidationErrorKind::FalseSchema => {
                // `properties: {x: false}` and the like: the key may not be sent at all.
                ArgumentProblem::Other {
                    path,
                    keyword: "false".to_owned(),
                    message: "no value is accepted here; leave it out".to_owned(),
                }
            }
            other => ArgumentProblem::Other {
                path,
                keyword: other.keyword().to_owned(),
                message: match other {
                    ValidationErrorKind::Contains => {
                        "it must contain at least one item of the accepted kind".to_owned()
                    }
                    ValidationErrorKind::Not { .. } => {
                        "its value is of a kind that is not allowed here".to_owned()
                    }
                    ValidationErrorKind::PropertyNames { error } => {
                        format!(
                            "it has a key that is not allowed: {}",
                            cut(&error.to_string(), 200)
                        )
                    }
                    _ => cut(&error.masked().to_string(), 300).into_owned(),
                },
            },
        }
    }

    /// `anyOf`/`oneOf` with no matching alternative: a union of types when every alternative
    /// failed only on its type, else the closest alternative's own problem.
    fn alternatives(
        &self,
        path: ParamPath,
        context: &[Vec<ValidationError<'static>>],
        args: &Value,
    ) -> ArgumentProblem {
        let branches: Vec<Vec<ArgumentProblem>> = context
            .iter()
            .map(|errors| errors.iter().map(|e| self.convert(e, args)).collect())
            .collect();
        let mut union: Vec<String> = Vec::new();
        let mut received = None;
        let only_types = branches.iter().all(|problems| match problems.as_slice() {
            [
                ArgumentProblem::WrongType {
                    path: p,
                    expected,
                    received: r,
                },
            ] if *p == path => {
                for t in expected {
                    if !union.contains(t) {
                        union.push(t.clone());
                    }
                }
                received = Some(r.clone());
                true
            }
            _ => false,
        });
        if only_types && let Some(received) = received {
            return ArgumentProblem::WrongType {
                path,
                expected: union,
                received,
            };
        }
        // The closest alternative is one whose type fits (its problems are deeper than a
        // type mismatch of the value itself), then the one with the fewest problems.
        let closest = branches
            .iter()
            .filter(|problems| !problems.is_empty())
            .min_by_key(|problems| {
                let wrong_kind = problems
                    .iter()
                    .any(|p| matches!(p, ArgumentProblem::WrongType { path: p, .. } if *p == path));
                (wrong_kind, problems.len())
            })
            .and_then(|problems| problems.iter().min_by_key(|p| rank(p)))
            .map(|problem| render::message(&self.tool, problem));
        ArgumentProblem::NoAlternativeMatches {
            path,
            alternatives: context.len(),
            closest,
        }
    }
}

impl Conditional {
    fn matches(&self, args: &Map<String, Value>) -> bool {
        self.when.iter().all(|(key, accepted)| {
            args.get(key)
                .is_some_and(|v| accepted.iter().any(|a| strictly_equal(a, v)))
        })
    }
}

/// The supported `if`/`then` subset (spec §5.2): the root's own `if`, then each `allOf`
/// element with an `if`; a condition is a non-empty `properties` whose every entry has a
/// `const` or an `enum`. Anything else can never add a requirement in the reference, so it is
/// left to the full validator.
fn conditionals(schema: &Value) -> Vec<Conditional> {
    let branches = std::iter::once(schema).chain(
        schema
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten(),
    );
    let mut out = Vec::new();
    for branch in branches {
        let Some(condition) = branch.get("if") else {
            continue;
        };
        let Some(props) = condition.get("properties").and_then(Value::as_object) else {
            continue;
        };
        if props.is_empty() {
            continue;
        }
        let mut when = Vec::with_capacity(props.len());
        for (key, spec) in props {
            let accepted = if let Some(c) = spec.get("const") {
                vec![c.clone()]
            } else if let Some(Value::Array(members)) = spec.get("enum") {
                members.clone()
            } else {
                when.clear();
                break;
            };
            when.push((key.clone(), accepted));
        }
        if when.is_empty() {
            continue;
        }
        let then_required = string_list(branch.get("then").and_then(|t| t.get("required")));
        if !then_required.is_empty() {
            out.push(Conditional {
                when,
                then_required,
            });
        }
    }
    out
}

/// How many malformed keywords compilation removes before giving up on a schema.
const MAX_REPAIRS: usize = 32;

/// Compiles a normalised schema, removing what the validator refuses (see
/// [`ArgumentValidator::from_normalised`]).
fn compile(
    tool: &str,
    normalised: &mut NormalisedSchema,
) -> Result<jsonschema::Validator, SchemaError> {
    let mut first_error: Option<String> = None;
    let mut repairs = 0;
    let mut opened = false;
    loop {
        let error = match options().build(&normalised.schema) {
            Ok(compiled) => return Ok(compiled),
            Err(error) => error,
        };
        let message = cut(&error.to_string(), 300).into_owned();
        let pointer = error.instance_path().as_str().to_owned();
        first_error.get_or_insert_with(|| message.clone());
        if repairs < MAX_REPAIRS
            && !pointer.is_empty()
            && remove_at(&mut normalised.schema, &pointer)
        {
            repairs += 1;
            let path: Vec<String> = pointer
                .split('/')
                .skip(1)
                .map(|s| s.replace("~1", "/").replace("~0", "~"))
                .collect();
            let keyword = path.last().cloned().unwrap_or_default();
            normalised.notes.push(Normalisation {
                tool: tool.to_owned(),
                path: path.join("."),
                what: format!("`{}` is malformed ({message}): removed", cut(&keyword, 80)),
            });
        } else if !opened {
            opened = true;
            open_references(normalised, tool);
        } else {
            return Err(SchemaError::Uncompilable {
                tool: tool.to_owned(),
                message: first_error.unwrap_or(message),
            });
        }
    }
}

/// Removes the value at a JSON Pointer from its parent; `false` when there is none.
fn remove_at(root: &mut Value, pointer: &str) -> bool {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return false;
    };
    let last = last.replace("~1", "/").replace("~0", "~");
    match root.pointer_mut(parent) {
        Some(Value::Object(map)) => map.shift_remove(&last).is_some(),
        Some(Value::Array(list)) => match last.parse::<usize>() {
            Ok(i) if i < list.len() => {
                list.remove(i);
                true
            }
            _ => false,
        },
        _ => false,
    }
}

/// Checks an object's keys and scalar values against the size limits and queues its
/// containers; `Some(size)` for the first oversized key or string.
fn scan_object<'a>(
    map: &'a Map<String, Value>,
    depth: usize,
    limits: &Limits,
    stack: &mut Vec<(&'a Value, usize)>,
) -> Option<usize> {
    if let Some(key) = map.keys().find(|k| k.len() > limits.max_key_bytes) {
        return Some(key.len());
    }
    scan_values(map.values(), depth, limits, stack)
}

fn scan_values<'a>(
    values: impl Iterator<Item = &'a Value>,
    depth: usize,
    limits: &Limits,
    stack: &mut Vec<(&'a Value, usize)>,
) -> Option<usize> {
    for value in values {
        match value {
            Value::String(s) if s.len() > limits.max_string_bytes => return Some(s.len()),
            Value::Array(_) | Value::Object(_) => stack.push((value, depth + 1)),
            _ => {}
        }
    }
    None
}

/// The string entries of a `required`-like list.
fn string_list(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// JavaScript `===` on JSON: numbers by value, containers never equal.
fn strictly_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => false,
        _ => a == b,
    }
}

fn invalid_enum(path: ParamPath, allowed: &[Value], received: &Value) -> ArgumentProblem {
    let exact = received.as_str().and_then(|r| {
        allowed
            .iter()
            .filter_map(Value::as_str)
            .find(|member| member.to_lowercase() == r.to_lowercase())
            .map(str::to_owned)
    });
    ArgumentProblem::InvalidEnum {
        path,
        allowed: allowed.to_vec(),
        received: preview(received, 80),
        exact,
    }
}

/// A string, array or object smaller than its lower bound (`minLength`, `minItems`,
/// `minProperties`).
fn too_short(path: ParamPath, measure: Measure, limit: u64) -> ArgumentProblem {
    ArgumentProblem::TooShort {
        path,
        measure,
        limit,
    }
}

/// A string, array or object larger than its upper bound (`maxLength`, `maxItems`,
/// `maxProperties`).
fn too_long(path: ParamPath, measure: Measure, limit: u64) -> ArgumentProblem {
    ArgumentProblem::TooLong {
        path,
        measure,
        limit,
    }
}

fn out_of_range(path: ParamPath, bound: Bound, limit: &Value, instance: &Value) -> ArgumentProblem {
    ArgumentProblem::OutOfRange {
        path,
        bound,
        limit: match limit {
            Value::Number(n) => n.clone(),
            _ => serde_json::Number::from(0),
        },
        received: preview(instance, 80),
    }
}

/// A float as JSON, whole numbers without a fraction (`2`, not `2.0`).
fn whole_number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "whole and within i64 range"
        )]
        Value::from(f as i64)
    } else {
        Value::from(f)
    }
}

/// Which problem to report first when several are found (lower is more useful).
/// The problems of `rest` worth naming beside `first` in the same refusal: most useful
/// first, one per path, none with the same root as one already named, at most
/// [`MAX_FURTHER_PROBLEMS`]. None after a problem with the argument object as a whole (not
/// an object, too deep, too large): nothing else was checked.
fn further_problems(
    first: &ArgumentProblem,
    mut rest: Vec<ArgumentProblem>,
) -> Vec<ArgumentProblem> {
    if rank(first) == 0 {
        return Vec::new();
    }
    // Stable: equal ranks keep the validator's order, which is deterministic.
    rest.sort_by_key(rank);
    let mut out: Vec<ArgumentProblem> = Vec::new();
    for problem in rest {
        if out.len() == MAX_FURTHER_PROBLEMS {
            break;
        }
        if !std::iter::once(first)
            .chain(&out)
            .any(|seen| same_root(seen, &problem))
        {
            out.push(problem);
        }
    }
    out
}

/// Whether two problems come from one mistake: they are about the same place (a required
/// parameter sent as `null` is missing and of the wrong type), or one is a missing
/// parameter whose "did you mean" names the other, a misspelt key.
fn same_root(a: &ArgumentProblem, b: &ArgumentProblem) -> bool {
    fn misspelt(missing: &ArgumentProblem, unknown: &ArgumentProblem) -> bool {
        matches!(
            (missing, unknown),
            (
                ArgumentProblem::MissingRequired { renamed_from: Some(from), .. },
                ArgumentProblem::UnknownParameter { param: key, .. },
            ) if key == from
        )
    }
    a.path() == b.path() || misspelt(a, b) || misspelt(b, a)
}

fn rank(problem: &ArgumentProblem) -> u8 {
    match problem {
        ArgumentProblem::NotAnObject { .. }
        | ArgumentProblem::GivenTwice { .. }
        | ArgumentProblem::TooDeep { .. }
        | ArgumentProblem::TooLarge { .. } => 0,
        ArgumentProblem::MissingRequired { .. } => 1,
        ArgumentProblem::UnknownParameter { .. } => 2,
        ArgumentProblem::WrongType { .. } => 3,
        ArgumentProblem::InvalidEnum { .. } => 4,
        ArgumentProblem::OutOfRange { .. }
        | ArgumentProblem::TooShort { .. }
        | ArgumentProblem::TooLong { .. }
        | ArgumentProblem::PatternMismatch { .. }
        | ArgumentProblem::DuplicateItems { .. } => 5,
        ArgumentProblem::NoAlternativeMatches { .. }
        | ArgumentProblem::AmbiguousAlternatives { .. } => 6,
        ArgumentProblem::Other { .. } => 7,
    }
}

/// `/properties/a/required` → `/properties/a`.
fn parent_pointer(pointer: &str) -> &str {
    pointer.rsplit_once('/').map_or("", |(parent, _)| parent)
}

/// The subschema at a validator schema path, following `$ref` segments through the document.
fn schema_at<'a>(root: &'a Value, pointer: &str) -> Option<&'a Value> {
    let mut node = root;
    for raw in pointer.split('/').skip(1) {
        let segment = raw.replace("~1", "/").replace("~0", "~");
        if segment == "$ref"
            && let Some(Value::String(reference)) = node.get("$ref")
        {
            node = resolve_local(root, reference)?;
            continue;
        }
        node = match node {
            Value::Object(map) => map.get(&segment)?,
            Value::Array(list) => list.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

fn resolve_local<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let fragment = reference.strip_prefix('#')?;
    if fragment.is_empty() {
        return Some(root);
    }
    root.pointer(fragment)
}

/// The path of the first oversized string or key (for [`ArgumentProblem::TooLarge`]).
fn find_oversized(args: &Value, limits: &Limits, max_depth: usize) -> Option<String> {
    let mut stack: Vec<(&Value, String, usize)> = vec![(args, String::new(), 1)];
    while let Some((node, path, depth)) = stack.pop() {
        if depth > max_depth {
            continue;
        }
        match node {
            Value::String(s) if s.len() > limits.max_string_bytes => return Some(path),
            Value::Object(map) => {
                for (key, value) in map.iter().rev() {
                    if key.len() > limits.max_key_bytes {
                        return Some(path);
                    }
                    let mut p = path.clone();
                    push_key(&mut p, key);
                    stack.push((value, p, depth + 1));
                }
            }
            Value::Array(list) => {
                for (i, value) in list.iter().enumerate().rev() {
                    let mut p = path.clone();
                    push_index(&mut p, i);
                    stack.push((value, p, depth + 1));
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_stays_cheap_to_return() {
        // `validate` returns the error boxed, so `Result<(), _>` is one pointer wide
        // whatever the error holds (and clippy's `result_large_err` stays quiet).
        assert_eq!(
            std::mem::size_of::<Result<(), Box<ArgumentError>>>(),
            std::mem::size_of::<usize>()
        );
    }

    fn flat_schema() -> Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "n": {"type": "number", "minimum": -5, "exclusiveMaximum": 10, "description": "d"},
                "i": {"type": "integer", "exclusiveMinimum": 0, "maximum": 3},
                "s": {"type": "string", "minLength": 2, "maxLength": 4, "format": "email"},
                "e": {"enum": ["a", "B", 1, null]},
                "b": {"type": "boolean"}
            },
            "required": ["s"],
            "additionalProperties": false
        })
    }

    #[test]
    fn flat_schemas_take_the_fast_path_and_nested_ones_do_not() {
        let v = ArgumentValidator::new("t", &flat_schema()).unwrap();
        assert!(v.flat.is_some());
        let nested = serde_json::json!({"type": "object", "properties": {"a": {"type": "array", "items": {}}}});
        assert!(ArgumentValidator::new("t", &nested).unwrap().flat.is_none());
        let union = serde_json::json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}});
        assert!(ArgumentValidator::new("t", &union).unwrap().flat.is_none());
    }

    proptest::proptest! {
        /// The fast path decides exactly as the reference checks plus the compiled
        /// validator do.
        #[test]
        fn the_fast_path_agrees_with_the_full_validator(
            n in proptest::option::of(-20.0f64..20.0),
            i in proptest::option::of(-2i64..6),
            s in proptest::option::of("[a-zé]{0,6}"),
            e in proptest::option::of(proptest::sample::select(vec![
                Value::from("a"), Value::from("b"), Value::from(1), Value::from(1.0),
                Value::from(2), Value::Null, Value::from(true),
            ])),
            extra in proptest::bool::ANY,
        ) {
            let v = ArgumentValidator::new("t", &flat_schema()).unwrap();
            let mut args = Map::new();
            if let Some(n) = n { args.insert("n".into(), Value::from(n)); }
            if let Some(i) = i { args.insert("i".into(), Value::from(i)); }
            if let Some(s) = s { args.insert("s".into(), Value::from(s)); }
            if let Some(e) = e { args.insert("e".into(), e); }
            if extra { args.insert("x".into(), Value::from(1)); }
            let args = Value::Object(args);
            let fast = v.validate(&args).is_ok();
            let full = v.reference_problem(&args).is_none() && v.compiled.is_valid(&args);
            proptest::prop_assert_eq!(fast, full, "{}", args);
        }
    }

    #[test]
    fn schema_paths_follow_references() {
        let root = serde_json::json!({"$defs": {"n": {"properties": {"a": {"type": "string"}}}},
            "properties": {"x": {"$ref": "#/$defs/n"}}});
        let found = schema_at(&root, "/properties/x/$ref/properties/a");
        assert_eq!(found, Some(&serde_json::json!({"type": "string"})));
    }
}
