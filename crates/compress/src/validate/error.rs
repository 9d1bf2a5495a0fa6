//! What goes wrong: a schema that cannot be used ([`SchemaError`]) and arguments that do not
//! fit their schema ([`ArgumentError`], with the typed [`ArgumentProblem`]).

use serde::Serialize;
use serde_json::Number;

/// Where a value sits inside a call's arguments, written as a model writes it:
/// `shipments[2].weight`, `headers["content-type"]`; empty for the argument object itself.
///
/// Compares equal to a `&str` and dereferences to one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct ParamPath(Box<str>);

impl ParamPath {
    /// The path as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is the argument object itself.
    #[must_use]
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<String> for ParamPath {
    fn from(path: String) -> Self {
        Self(path.into_boxed_str())
    }
}

impl From<&str> for ParamPath {
    fn from(path: &str) -> Self {
        Self(path.into())
    }
}

impl std::ops::Deref for ParamPath {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ParamPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for ParamPath {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for ParamPath {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

/// A tool schema that chef refuses, naming the tool.
///
/// Most oddities of schemas found in the wild are normalised instead (see
/// [`normalise_schema`](super::normalise_schema)); these are the ones that cannot be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// The schema is not a JSON object (nor `true`, `false` or `null`).
    #[error("the input schema of tool {tool} is {found}, not a JSON Schema object")]
    NotASchema {
        /// The tool whose schema this is.
        tool: String,
        /// The JSON type found instead (`"a string"`, `"an array"`, ...).
        found: String,
    },
    /// The schema is `false` (or `{"not": {}}`): no call could ever be valid.
    #[error("the input schema of tool {tool} rejects every argument object")]
    RejectsEverything {
        /// The tool whose schema this is.
        tool: String,
    },
    /// The schema's top-level `type` excludes objects, but tool arguments are an object.
    #[error("the input schema of tool {tool} has type {found}; tool arguments are an object")]
    NotAnObjectType {
        /// The tool whose schema this is.
        tool: String,
        /// The declared type, as written.
        found: String,
    },
    /// The schema nests deeper than [`Limits::max_schema_depth`](super::Limits).
    #[error("the input schema of tool {tool} nests deeper than {limit} levels")]
    TooDeep {
        /// The tool whose schema this is.
        tool: String,
        /// The depth limit that was exceeded.
        limit: usize,
    },
    /// The validator could not compile the schema even after normalisation.
    #[error("the input schema of tool {tool} cannot be compiled: {message}")]
    Uncompilable {
        /// The tool whose schema this is.
        tool: String,
        /// The validator's own explanation.
        message: String,
    },
}

impl SchemaError {
    /// The tool whose schema was refused.
    #[must_use]
    pub fn tool(&self) -> &str {
        match self {
            Self::NotASchema { tool, .. }
            | Self::RejectsEverything { tool }
            | Self::NotAnObjectType { tool, .. }
            | Self::TooDeep { tool, .. }
            | Self::Uncompilable { tool, .. } => tool,
        }
    }
}

/// Arguments that do not fit a tool's schema: the tool, the most useful problem, and the
/// other problems worth naming with it.
///
/// [`message`](Self::message) (and `Display`) renders the text written for the model; the
/// calling program matches on [`problem`](Self::problem). Every such error is recoverable:
/// the model can fix its call and try again.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArgumentError {
    /// The tool the arguments were for (its real name).
    pub tool: String,
    /// What is wrong, with the data to act on: the most useful problem.
    pub problem: ArgumentProblem,
    /// Problems with other parameters of the same call, most useful first (at most
    /// [`MAX_FURTHER_PROBLEMS`](super::MAX_FURTHER_PROBLEMS)); see [`also`](Self::also).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    also: Vec<ArgumentProblem>,
}

/// Which bound a number broke (see [`ArgumentProblem::OutOfRange`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// `minimum`: the value must be at least the limit.
    Minimum,
    /// `maximum`: the value must be at most the limit.
    Maximum,
    /// `exclusiveMinimum`: the value must be greater than the limit.
    ExclusiveMinimum,
    /// `exclusiveMaximum`: the value must be less than the limit.
    ExclusiveMaximum,
    /// `multipleOf`: the value must be a multiple of the limit.
    MultipleOf,
}

/// What a size bound counts (see [`ArgumentProblem::TooShort`], [`ArgumentProblem::TooLong`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// Characters of a string (`minLength`, `maxLength`).
    Characters,
    /// Items of an array (`minItems`, `maxItems`).
    Items,
    /// Properties of an object (`minProperties`, `maxProperties`).
    Properties,
}

/// One thing wrong with a call's arguments.
///
/// Paths name a value inside the arguments the way a model writes it: `shipments[2].weight`
/// (the empty string is the argument object itself). Names that are not plain identifiers
/// are quoted: `headers["content-type"]`. Values the model sent are carried as short JSON
/// previews (long strings are cut with `…`), never as copies of what may be megabytes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ArgumentProblem {
    /// The arguments are not a JSON object.
    NotAnObject {
        /// The JSON type received (`"array"`, `"string"`, ...).
        received: String,
    },
    /// A parameter written twice with different values: inside the wrapper that holds a
    /// call's arguments (the dispatcher's `a`, level 2's `args`) and beside it.
    GivenTwice {
        /// The parameter's name.
        param: String,
    },
    /// A required parameter is absent (at the top level, `null` and `""` count as absent).
    MissingRequired {
        /// The missing parameter's name.
        param: String,
        /// Its full path (equal to `param` at the top level).
        path: ParamPath,
        /// Every required name of the object it belongs to, in order (at the top level
        /// followed by the conditional requirements that apply, duplicates kept).
        required: Vec<String>,
        /// An unknown key the model sent that looks like this parameter.
        renamed_from: Option<String>,
    },
    /// A key the schema does not accept.
    UnknownParameter {
        /// The unknown key.
        param: String,
        /// Its full path (equal to `param` at the top level).
        path: ParamPath,
        /// The names the object at that path accepts, in schema order.
        accepted: Vec<String>,
        /// The accepted name it most resembles, if one is close.
        did_you_mean: Option<String>,
    },
    /// A value outside the parameter's `enum` (or not equal to its `const`).
    InvalidEnum {
        /// Where the value is.
        path: ParamPath,
        /// The accepted values.
        allowed: Vec<serde_json::Value>,
        /// A preview of the value received.
        received: String,
        /// The accepted spelling of a string that differs only in letter case.
        exact: Option<String>,
    },
    /// A value of the wrong JSON type.
    WrongType {
        /// Where the value is.
        path: ParamPath,
        /// The accepted JSON types (`string`, `integer`, `number`, `boolean`, `array`,
        /// `object`, `null`).
        expected: Vec<String>,
        /// The JSON type received.
        received: String,
    },
    /// A number outside a bound.
    OutOfRange {
        /// Where the value is.
        path: ParamPath,
        /// Which bound.
        bound: Bound,
        /// The bound's value.
        limit: Number,
        /// A preview of the value received.
        received: String,
    },
    /// A string, array or object smaller than its lower bound.
    TooShort {
        /// Where the value is.
        path: ParamPath,
        /// What is counted.
        measure: Measure,
        /// The least accepted count.
        limit: u64,
    },
    /// A string, array or object larger than its upper bound.
    TooLong {
        /// Where the value is.
        path: ParamPath,
        /// What is counted.
        measure: Measure,
        /// The greatest accepted count.
        limit: u64,
    },
    /// A string that does not match the parameter's `pattern`.
    PatternMismatch {
        /// Where the value is.
        path: ParamPath,
        /// The pattern, as written in the schema.
        pattern: String,
        /// A preview of the value received.
        received: String,
    },
    /// A value matching none of the alternatives of a `oneOf` or `anyOf`.
    NoAlternativeMatches {
        /// Where the value is.
        path: ParamPath,
        /// How many alternatives there are.
        alternatives: usize,
        /// The closest alternative's own problem, rendered, if one could be picked.
        closest: Option<String>,
    },
    /// A value matching more than one alternative of a `oneOf`.
    AmbiguousAlternatives {
        /// Where the value is.
        path: ParamPath,
    },
    /// An array with repeated items under `uniqueItems`.
    DuplicateItems {
        /// Where the array is.
        path: ParamPath,
    },
    /// The arguments nest deeper than the validator's limit.
    TooDeep {
        /// The depth limit (the argument object itself is depth 1).
        limit: usize,
    },
    /// A string or key larger than the validator's size limit.
    TooLarge {
        /// Where the value is (for an oversized key: the object holding it).
        path: ParamPath,
        /// The limit, in bytes of UTF-8.
        limit: usize,
        /// The size received, in bytes of UTF-8.
        size: usize,
    },
    /// Any other violation, with the validator's own words.
    Other {
        /// Where the value is.
        path: ParamPath,
        /// The JSON Schema keyword that failed.
        keyword: String,
        /// The validator's message (cut to a readable length).
        message: String,
    },
}

impl ArgumentProblem {
    /// The path the problem is about (`""` for the argument object as a whole).
    #[must_use]
    pub fn path(&self) -> &str {
        match self {
            Self::NotAnObject { .. } | Self::TooDeep { .. } => "",
            Self::GivenTwice { param } => param,
            Self::MissingRequired { path, .. }
            | Self::UnknownParameter { path, .. }
            | Self::InvalidEnum { path, .. }
            | Self::WrongType { path, .. }
            | Self::OutOfRange { path, .. }
            | Self::TooShort { path, .. }
            | Self::TooLong { path, .. }
            | Self::PatternMismatch { path, .. }
            | Self::NoAlternativeMatches { path, .. }
            | Self::AmbiguousAlternatives { path }
            | Self::DuplicateItems { path }
            | Self::TooLarge { path, .. }
            | Self::Other { path, .. } => path.as_str(),
        }
    }
}

impl ArgumentError {
    /// An error about `tool`'s arguments with one problem.
    #[must_use]
    pub fn new(tool: impl Into<String>, problem: ArgumentProblem) -> Self {
        Self {
            tool: tool.into(),
            problem,
            also: Vec::new(),
        }
    }

    /// The same error naming `also` after its first problem.
    #[must_use]
    pub fn with_also(mut self, also: Vec<ArgumentProblem>) -> Self {
        self.also = also;
        self
    }

    /// Problems with other parameters of the same call, most useful first; the message
    /// names them after the first, so the model can fix them all in one call. Empty when
    /// the first is the only one, or is about the argument object as a whole.
    #[must_use]
    pub fn also(&self) -> &[ArgumentProblem] {
        &self.also
    }

    /// Every problem named: [`problem`](Self::problem), then [`also`](Self::also).
    pub fn problems(&self) -> impl Iterator<Item = &ArgumentProblem> {
        std::iter::once(&self.problem).chain(self.also())
    }

    /// Every problem named, to edit in place (a caller that hides names from the model).
    pub fn problems_mut(&mut self) -> impl Iterator<Item = &mut ArgumentProblem> {
        std::iter::once(&mut self.problem).chain(&mut self.also)
    }

    /// The text written for the model: the tool, where, what was expected and what came,
    /// for each problem named.
    #[must_use]
    pub fn message(&self) -> String {
        super::render::message_with(&self.tool, &self.problem, self.also())
    }

    /// Always `true`: the model can correct its arguments and call again.
    #[must_use]
    pub fn recoverable(&self) -> bool {
        true
    }
}

impl std::fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for ArgumentError {}
