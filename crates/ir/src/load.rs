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
pub fn load_tools_from_str(text: &str) -> Result<LoadedTools, LoadError> {
    let value: Value = serde_json::from_str(text).map_err(|e| LoadError::from_json(&e))?;
    load_tools(&value)
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
        Value::Object(map) => match map.get("tools") {
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(LoadError::NotAToolList {
                    found: crate::json_kind(other),
                });
            }
            None if has_declarations(map) => std::slice::from_ref(document),
            None => return Err(LoadError::NotAToolList { found: "object" }),
        },
        other => {
            return Err(LoadError::NotAToolList {
                found: crate::json_kind(other),
            });
        }
    };

    let mut loaded = LoadedTools::default();
    let mut locations: Vec<ToolLocation> = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        load_entry(index, entry, &mut loaded, &mut locations)?;
    }

    let mut seen: HashMap<&str, ToolLocation> = HashMap::with_capacity(loaded.tools.len());
    for (tool, at) in loaded.tools.iter().zip(&locations) {
        if let Some(first) = seen.insert(tool.name.as_str(), *at) {
            return Err(LoadError::DuplicateName {
                name: tool.name.as_str().to_owned(),
                first,
                second: *at,
            });
        }
    }
    Ok(loaded)
}

fn has_declarations(map: &Map<String, Value>) -> bool {
    map.contains_key("functionDeclarations") || map.contains_key("function_declarations")
}

fn load_entry(
    index: usize,
    entry: &Value,
    loaded: &mut LoadedTools,
    locations: &mut Vec<ToolLocation>,
) -> Result<(), LoadError> {
    let at = ToolLocation {
        index,
        declaration: None,
    };
    let Value::Object(map) = entry else {
        return Err(LoadError::NotAnObject {
            at,
            found: crate::json_kind(entry),
        });
    };

    if has_declarations(map) {
        let key = if map.contains_key("functionDeclarations") {
            "functionDeclarations"
        } else {
            "function_declarations"
        };
        let Some(Value::Array(declarations)) = map.get(key) else {
            return Err(invalid(at, key, "must be an array"));
        };
        for (d, declaration) in declarations.iter().enumerate() {
            let at = ToolLocation {
                index,
                declaration: Some(d),
            };
            let Value::Object(decl) = declaration else {
                return Err(LoadError::NotAnObject {
                    at,
                    found: crate::json_kind(declaration),
                });
            };
            let tool = read_tool(at, decl, "", Some("parameters"))?;
            loaded.tools.push(tool);
            loaded.shapes.push(ToolShape::Gemini);
            locations.push(at);
        }
        return Ok(());
    }

    let (tool, shape) = if let Some(function) = map.get("function") {
        check_type(at, map, &["function"])?;
        let Value::Object(function) = function else {
            return Err(invalid(
                at,
                "function",
                format!("must be an object, found {}", crate::json_kind(function)),
            ));
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
        check_type(at, map, &["function", "custom"])?;
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
    loaded.tools.push(tool);
    loaded.shapes.push(shape);
    locations.push(at);
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

fn read_tool(
    at: ToolLocation,
    map: &Map<String, Value>,
    prefix: &str,
    schema_key: Option<&str>,
) -> Result<ToolDefinition, LoadError> {
    let field = |name: &str| format!("{prefix}{name}");

    let name = match map.get("name") {
        None | Some(Value::Null) => return Err(invalid(at, &field("name"), "is missing")),
        Some(Value::String(s)) if s.is_empty() => {
            return Err(invalid(at, &field("name"), "is empty"));
        }
        Some(Value::String(s)) => ToolName::new(s.clone()),
        Some(other) => {
            return Err(invalid(
                at,
                &field("name"),
                format!("must be a string, found {}", crate::json_kind(other)),
            ));
        }
    };

    let description = match map.get("description") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(invalid(
                at,
                &field("description"),
                format!("must be a string, found {}", crate::json_kind(other)),
            ));
        }
    };

    let input_schema = match schema_key.and_then(|k| map.get(k).map(|v| (k, v))) {
        None | Some((_, Value::Null)) => ToolDefinition::empty_schema(),
        Some((_, Value::Object(schema))) => Value::Object(schema.clone()),
        Some((key, other)) => {
            return Err(invalid(
                at,
                &field(key),
                format!(
                    "must be a JSON Schema object, found {}",
                    crate::json_kind(other)
                ),
            ));
        }
    };

    let tags = match map.get("tags") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|t| match t {
                Value::String(s) => Ok(s.clone()),
                other => Err(invalid(
                    at,
                    &field("tags"),
                    format!("must hold strings, found {}", crate::json_kind(other)),
                )),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(invalid(
                at,
                &field("tags"),
                format!(
                    "must be an array of strings, found {}",
                    crate::json_kind(other)
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

    let annotations = match map.get("annotations") {
        None | Some(Value::Null) => ToolAnnotations::default(),
        Some(value) => serde_json::from_value(value.clone()).map_err(|e| {
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
