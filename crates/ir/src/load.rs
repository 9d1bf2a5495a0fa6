//! Loading tool definitions from the shapes users actually hold.
//!
//! Each entry's shape is detected on its own, so one file may mix shapes:
//!
//! | shape | recognised by | schema from |
//! |---|---|---|
//! | [`ToolShape::Gemini`] | `functionDeclarations` (or `function_declarations`) | each declaration's `parameters` |
//! | [`ToolShape::OpenAiChat`] | a `function` object | `function.parameters` |
//! | [`ToolShape::OpenAiResponses`] | `"type": "function"` with a top-level `name` | `parameters` |
//! | [`ToolShape::Mcp`] | `inputSchema` | `inputSchema` |
//! | [`ToolShape::Anthropic`] | `input_schema` | `input_schema` |
//! | [`ToolShape::Bare`] | anything else with a `name` | `parameters`, if any |
//!
//! The document is a JSON array of entries, or an object with a `tools` array (a request
//! body, a Gemini `tools` wrapper), or a single Gemini tool object. A missing schema means
//! `{"type":"object"}`. Fields chef does not model (`server`, `title`, `outputSchema`, …)
//! are ignored. The first unusable entry stops loading with a [`LoadError`] naming its
//! index and the field at fault; duplicate names are an error naming both places.

use std::{collections::HashMap, fmt};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::tool::{ToolAnnotations, ToolDefinition, ToolName};

/// The input shape an entry was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolShape {
    /// MCP `tools/list`: `{name, description, inputSchema}`.
    Mcp,
    /// Anthropic Messages: `{name, description, input_schema}`.
    Anthropic,
    /// OpenAI Chat Completions: `{type:"function", function:{name, description, parameters}}`.
    OpenAiChat,
    /// OpenAI Responses: `{type:"function", name, description, parameters}`.
    OpenAiResponses,
    /// Gemini: `{functionDeclarations:[{name, description, parameters}]}`.
    Gemini,
    /// `{name, description, parameters}` with no wrapper.
    Bare,
}

impl ToolShape {
    /// Every shape, in a fixed order.
    pub const ALL: [Self; 6] = [
        Self::Mcp,
        Self::Anthropic,
        Self::OpenAiChat,
        Self::OpenAiResponses,
        Self::Gemini,
        Self::Bare,
    ];

    /// The shape's name as reports print it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mcp => "mcp",
            Self::Anthropic => "anthropic",
            Self::OpenAiChat => "openai-chat",
            Self::OpenAiResponses => "openai-responses",
            Self::Gemini => "gemini",
            Self::Bare => "bare",
        }
    }
}

impl fmt::Display for ToolShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a tool sits in the loaded document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ToolLocation {
    /// Zero-based index of the entry in the tool list.
    pub index: usize,
    /// For a Gemini entry: the zero-based index within its `functionDeclarations`.
    pub declaration: Option<usize>,
}

impl fmt::Display for ToolLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "index {}", self.index)?;
        if let Some(d) = self.declaration {
            write!(f, " (functionDeclarations[{d}])")?;
        }
        Ok(())
    }
}

/// Why a tool document could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The text is not JSON.
    #[error("not valid JSON at line {line}, column {column}: {message}")]
    Json {
        /// One-based line.
        line: usize,
        /// The column as serde_json reports it (one-based, 0 before a line's first
        /// character, as for an empty file).
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// The document is neither a list of tools nor an object holding one.
    #[error("expected a JSON array of tools or an object with a `tools` array, found {found}")]
    NotAToolList {
        /// The JSON type found.
        found: &'static str,
    },
    /// One entry is unusable.
    #[error("invalid tool at {at}: `{field}` {problem}")]
    InvalidEntry {
        /// Which entry.
        at: ToolLocation,
        /// The field at fault, as a dotted path within the entry (`name`, `function.parameters`).
        field: String,
        /// What is wrong with it.
        problem: String,
    },
    /// An entry is not a JSON object.
    #[error("invalid tool at {at}: expected an object, found {found}")]
    NotAnObject {
        /// Which entry.
        at: ToolLocation,
        /// The JSON type found.
        found: &'static str,
    },
    /// Two entries share a name.
    #[error("duplicate tool name {name:?} at {first} and {second}")]
    DuplicateName {
        /// The shared name.
        name: String,
        /// The first entry with it.
        first: ToolLocation,
        /// The second entry with it.
        second: ToolLocation,
    },
}

/// Tools loaded from one document, with the shape each was written in.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadedTools {
    /// The definitions, in document order.
    pub tools: Vec<ToolDefinition>,
    /// The input shape of each tool (same length and order as `tools`).
    pub shapes: Vec<ToolShape>,
}

impl LoadedTools {
    /// How many tools were loaded in each shape, in [`ToolShape::ALL`] order, zeros omitted.
    pub fn shape_counts(&self) -> Vec<(ToolShape, usize)> {
        ToolShape::ALL
            .into_iter()
            .map(|shape| (shape, self.shapes.iter().filter(|s| **s == shape).count()))
            .filter(|(_, n)| *n > 0)
            .collect()
    }
}

/// Parses JSON text and loads the tools in it.
///
/// ```
/// let loaded = chef_ir::load_tools_from_str(r#"[
///   {"name": "a", "inputSchema": {"type": "object"}},
///   {"type": "function", "function": {"name": "b", "parameters": {"type": "object"}}}
/// ]"#)?;
/// assert_eq!(loaded.tools.len(), 2);
/// # Ok::<(), chef_ir::LoadError>(())
/// ```
///
/// A document that is a JSON array is read one entry at a time ([`for_each_tool`]): each
/// tool's schema is moved out of its entry, and no tree of the whole document is built.
/// The tools and every error are the ones [`load_tools`] gives on the parsed document.
pub fn load_tools_from_str(text: &str) -> Result<LoadedTools, LoadError> {
    let mut loaded = LoadedTools::default();
    for_each_tool(text, |tool, shape| {
        loaded.tools.push(tool);
        loaded.shapes.push(shape);
    })?;
    Ok(loaded)
}

/// Parses JSON text and hands each tool in it to `f`, in document order, keeping none of
/// them: for a caller that indexes a large catalogue without holding every schema.
///
/// The tools, their order and every error are those of [`load_tools_from_str`]; a leading
/// UTF-8 byte order mark is skipped. When it
/// returns an error, some tools may already have been handed over: discard them. A JSON
/// array is read one entry at a time (only one entry's tree exists at once); any other
/// document is parsed whole first, as [`load_tools`] reads it.
///
/// ```
/// let mut names = Vec::new();
/// chef_ir::for_each_tool(r#"[{"name": "a"}, {"functionDeclarations": [{"name": "b"}]}]"#, |tool, _| {
///     names.push(tool.name.into_inner());
/// })?;
/// assert_eq!(names, ["a", "b"]);
/// # Ok::<(), chef_ir::LoadError>(())
/// ```
pub fn for_each_tool(
    text: &str,
    f: impl FnMut(ToolDefinition, ToolShape),
) -> Result<(), LoadError> {
    let mut loader = Loader::new(f);
    // A UTF-8 byte order mark (some Windows editors write one) is not JSON, but it says
    // nothing: read past it (RFC 8259 lets a parser ignore it), so error positions count
    // from the text after it.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // serde_json's whitespace: a document starting with `[` is an array (or not JSON).
    if text
        .trim_start_matches([' ', '\n', '\t', '\r'])
        .starts_with('[')
    {
        // The same parser calls as `serde_json::from_str::<Value>`, so a syntax error
        // anywhere is the error the whole parse gives, and it wins over an entry's error
        // (every entry is still parsed after one fails, as the whole parse would).
        let mut de = serde_json::Deserializer::from_str(text);
        serde::Deserializer::deserialize_any(&mut de, Entries(&mut loader))
            .and_then(|()| de.end())
            .map_err(|e| LoadError::from_json(&e))?;
    } else {
        let document: Value = serde_json::from_str(text).map_err(|e| LoadError::from_json(&e))?;
        match document {
            Value::Array(items) => loader.entries(items),
            Value::Object(mut map) => {
                tool_list_of(&map)?;
                match map.swap_remove("tools") {
                    Some(Value::Array(items)) => loader.entries(items),
                    _ => loader.entry(0, Value::Object(map)),
                }
            }
            other => {
                return Err(LoadError::NotAToolList {
                    found: crate::json_kind(&other),
                });
            }
        }
    }
    loader.finish()
}

/// Reads the entries of a top-level array one at a time (see [`for_each_tool`]).
struct Entries<'l, F>(&'l mut Loader<F>);

impl<'de, F: FnMut(ToolDefinition, ToolShape)> serde::de::Visitor<'de> for Entries<'_, F> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON array of tools")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        while let Some(entry) = seq.next_element::<Value>()? {
            self.0.entry(index, entry);
            index += 1;
        }
        Ok(())
    }
}

impl LoadError {
    /// The error for JSON text that did not parse.
    pub fn from_json(error: &serde_json::Error) -> Self {
        Self::Json {
            line: error.line(),
            column: error.column(),
            message: strip_position(&error.to_string()),
        }
    }
}

/// serde_json appends " at line L column C" to its messages; we report those separately.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message.get(..i).unwrap_or(message).to_owned(),
        None => message.to_owned(),
    }
}

/// Loads the tools in a parsed JSON document; [`ToolShape`] lists the shapes it detects.
pub fn load_tools(document: &Value) -> Result<LoadedTools, LoadError> {
    let entries: &[Value] = match document {
        Value::Array(items) => items,
        Value::Object(map) => match tool_list_of(map)? {
            Some(items) => items,
            None => std::slice::from_ref(document),
        },
        other => {
            return Err(LoadError::NotAToolList {
                found: crate::json_kind(other),
            });
        }
    };
    let mut loaded = LoadedTools::default();
    let mut loader = Loader::new(|tool, shape| {
        loaded.tools.push(tool);
        loaded.shapes.push(shape);
    });
    for (index, entry) in entries.iter().enumerate() {
        loader.entry(index, entry.clone());
    }
    loader.finish()?;
    Ok(loaded)
}

/// The `tools` array of an object document, or `None` when the object is itself one
/// Gemini tool (it has declarations and no `tools`).
fn tool_list_of(map: &Map<String, Value>) -> Result<Option<&[Value]>, LoadError> {
    match map.get("tools") {
        Some(Value::Array(items)) => Ok(Some(items)),
        Some(other) => Err(LoadError::NotAToolList {
            found: crate::json_kind(other),
        }),
        None if has_declarations(map) => Ok(None),
        None => Err(LoadError::NotAToolList { found: "object" }),
    }
}

/// Loads entries in document order and hands each tool to `f` until one fails. The first
/// unusable entry is the error; duplicate names are checked as tools arrive, but reported
/// only when every entry loaded (an unusable entry after a duplicate is the error).
struct Loader<F> {
    f: F,
    seen: HashMap<ToolName, ToolLocation>,
    /// The first unusable entry.
    failed: Option<LoadError>,
    /// The first name seen twice.
    duplicate: Option<LoadError>,
}

impl<F: FnMut(ToolDefinition, ToolShape)> Loader<F> {
    fn new(f: F) -> Self {
        Self {
            f,
            seen: HashMap::new(),
            failed: None,
            duplicate: None,
        }
    }

    fn entries(&mut self, entries: Vec<Value>) {
        for (index, entry) in entries.into_iter().enumerate() {
            self.entry(index, entry);
        }
    }

    /// Loads entry `index`; nothing once an entry has failed.
    fn entry(&mut self, index: usize, entry: Value) {
        if self.failed.is_some() {
            return;
        }
        let Self {
            f, seen, duplicate, ..
        } = self;
        let result = load_entry(index, entry, &mut |tool, shape, at| {
            if duplicate.is_some() {
                return;
            }
            if let Some(first) = seen.insert(tool.name.clone(), at) {
                *duplicate = Some(LoadError::DuplicateName {
                    name: tool.name.as_str().to_owned(),
                    first,
                    second: at,
                });
                return;
            }
            f(tool, shape);
        });
        if let Err(e) = result {
            self.failed = Some(e);
        }
    }

    fn finish(self) -> Result<(), LoadError> {
        match self.failed.or(self.duplicate) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

fn has_declarations(map: &Map<String, Value>) -> bool {
    map.contains_key("functionDeclarations") || map.contains_key("function_declarations")
}

/// Loads one entry, handing each of its tools (one, or a Gemini entry's declarations) to
/// `push` with its shape and place.
fn load_entry(
    index: usize,
    entry: Value,
    push: &mut impl FnMut(ToolDefinition, ToolShape, ToolLocation),
) -> Result<(), LoadError> {
    let at = ToolLocation {
        index,
        declaration: None,
    };
    let Value::Object(mut map) = entry else {
        return Err(LoadError::NotAnObject {
            at,
            found: crate::json_kind(&entry),
        });
    };

    if has_declarations(&map) {
        let key = if map.contains_key("functionDeclarations") {
            "functionDeclarations"
        } else {
            "function_declarations"
        };
        let Some(Value::Array(declarations)) = map.swap_remove(key) else {
            return Err(invalid(at, key, "must be an array"));
        };
        for (d, declaration) in declarations.into_iter().enumerate() {
            let at = ToolLocation {
                index,
                declaration: Some(d),
            };
            let Value::Object(decl) = declaration else {
                return Err(LoadError::NotAnObject {
                    at,
                    found: crate::json_kind(&declaration),
                });
            };
            let tool = read_tool(at, decl, "", Some("parameters"))?;
            push(tool, ToolShape::Gemini, at);
        }
        return Ok(());
    }

    let (tool, shape) = if map.contains_key("function") {
        check_type(at, &map, &["function"])?;
        let function = match map.swap_remove("function") {
            Some(Value::Object(function)) => function,
            other => {
                return Err(invalid(
                    at,
                    "function",
                    format!(
                        "must be an object, found {}",
                        other.as_ref().map_or("null", crate::json_kind)
                    ),
                ));
            }
        };
        (
            read_tool(at, function, "function.", Some("parameters"))?,
            ToolShape::OpenAiChat,
        )
    } else if map.get("type").and_then(Value::as_str) == Some("function") {
        (
            read_tool(at, map, "", Some("parameters"))?,
            ToolShape::OpenAiResponses,
        )
    } else {
        check_type(at, &map, &["function", "custom"])?;
        match (map.get("inputSchema"), map.get("input_schema")) {
            (Some(a), Some(b)) if a != b => {
                return Err(invalid(
                    at,
                    "input_schema",
                    "differs from `inputSchema`; give the schema once",
                ));
            }
            (Some(_), _) => (read_tool(at, map, "", Some("inputSchema"))?, ToolShape::Mcp),
            (None, Some(_)) => (
                read_tool(at, map, "", Some("input_schema"))?,
                ToolShape::Anthropic,
            ),
            (None, None) => (read_tool(at, map, "", Some("parameters"))?, ToolShape::Bare),
        }
    };
    push(tool, shape, at);
    Ok(())
}

/// A `type` other than the accepted ones marks a provider-native tool (web search, tool
/// search, …), which is not a function tool and has no schema to load.
fn check_type(
    at: ToolLocation,
    map: &Map<String, Value>,
    accepted: &[&str],
) -> Result<(), LoadError> {
    match map.get("type") {
        None => Ok(()),
        Some(Value::String(t)) if accepted.contains(&t.as_str()) => Ok(()),
        Some(other) => Err(invalid(
            at,
            "type",
            format!(
                "is {other}, not a function tool (provider-native tools are passed as native tools, not loaded)"
            ),
        )),
    }
}

/// The tool of one entry (or declaration), its fields moved out of `map`.
fn read_tool(
    at: ToolLocation,
    mut map: Map<String, Value>,
    prefix: &str,
    schema_key: Option<&str>,
) -> Result<ToolDefinition, LoadError> {
    let field = |name: &str| format!("{prefix}{name}");

    let name = match map.swap_remove("name") {
        None | Some(Value::Null) => return Err(invalid(at, &field("name"), "is missing")),
        Some(Value::String(s)) if s.is_empty() => {
            return Err(invalid(at, &field("name"), "is empty"));
        }
        Some(Value::String(s)) => ToolName::new(s),
        Some(other) => {
            return Err(invalid(
                at,
                &field("name"),
                format!("must be a string, found {}", crate::json_kind(&other)),
            ));
        }
    };

    let description = match map.swap_remove("description") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s,
        Some(other) => {
            return Err(invalid(
                at,
                &field("description"),
                format!("must be a string, found {}", crate::json_kind(&other)),
            ));
        }
    };

    let input_schema = match schema_key.and_then(|k| map.swap_remove(k).map(|v| (k, v))) {
        None | Some((_, Value::Null)) => ToolDefinition::empty_schema(),
        Some((_, schema @ Value::Object(_))) => schema,
        Some((key, other)) => {
            return Err(invalid(
                at,
                &field(key),
                format!(
                    "must be a JSON Schema object, found {}",
                    crate::json_kind(&other)
                ),
            ));
        }
    };

    let tags = match map.swap_remove("tags") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .into_iter()
            .map(|t| match t {
                Value::String(s) => Ok(s),
                other => Err(invalid(
                    at,
                    &field("tags"),
                    format!("must hold strings, found {}", crate::json_kind(&other)),
                )),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(invalid(
                at,
                &field("tags"),
                format!(
                    "must be an array of strings, found {}",
                    crate::json_kind(&other)
                ),
            ));
        }
    };

    let mut defer_loading = false;
    for key in ["defer_loading", "deferLoading"] {
        match map.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Bool(b)) => defer_loading |= *b,
            Some(other) => {
                return Err(invalid(
                    at,
                    &field(key),
                    format!("must be a boolean, found {}", crate::json_kind(other)),
                ));
            }
        }
    }

    let annotations = match map.swap_remove("annotations") {
        None | Some(Value::Null) => ToolAnnotations::default(),
        Some(value) => serde_json::from_value(value).map_err(|e| {
            invalid(
                at,
                &field("annotations"),
                format!("is not an MCP annotations object: {e}"),
            )
        })?,
    };

    Ok(ToolDefinition {
        name,
        description,
        input_schema,
        tags,
        defer_loading,
        annotations,
    })
}

fn invalid(at: ToolLocation, field: &str, problem: impl Into<String>) -> LoadError {
    LoadError::InvalidEntry {
        at,
        field: field.to_owned(),
        problem: problem.into(),
    }
}
