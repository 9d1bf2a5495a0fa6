//! A `response_format` that makes the reply one tool call written as JSON, for models and
//! servers that do not emit native tool calls.
//!
//! Structured Outputs (OpenAI), and llama.cpp's server, which turns the schema into a
//! grammar, constrain the whole reply to a JSON Schema. Built from the turn's wire tools,
//! the reply can only be `{"name": <one of the tools>, "arguments": {…}}`: a bare call
//! object that [`chef_ir::recover_text_calls`] turns into an ordinary tool call.

use chef_ir::{ToolDefinition, WireNames};
use serde_json::{Value, json};

use super::wire::{JsonSchemaFormat, ResponseFormat};

/// The `name` of the JSON schema [`response_format`] builds.
pub const TOOL_CALL_FORMAT: &str = "tool_call";

const DESCRIPTION: &str = "One call of one of the tools: its name and its arguments.";

/// The `response_format` that constrains a Chat Completions reply to one call of one of
/// `tools`, named as the request put them on the wire (`names`: the compile's table, as
/// [`parse_response`](super::parse_response) takes it), or `None` when there is no tool.
///
/// The schema is an object with exactly two members, both required: `name`, a string
/// whose `enum` holds the tools' wire names in order (at compression level 3, `t` and
/// `q`), and `arguments`. With several tools `arguments` is any object (each tool's own
/// schema is checked by `resolve` after recovery); with exactly one tool it is that tool's
/// own input schema. `strict` is `false`: OpenAI's strict mode requires every property
/// required and `additionalProperties: false` on every object, which an open `arguments`
/// object and most tool schemas do not satisfy (llama.cpp ignores `strict` and enforces the
/// schema by grammar either way). Identical input gives identical bytes.
///
/// Add it to the body as `response_format`; the reply's message content is then the call
/// as JSON text, which [`chef_ir::recover_text_calls`] recovers.
///
/// ```
/// use chef_ir::{ToolDefinition, WireNames};
/// use chef_openai::chat;
/// use serde_json::json;
///
/// let tools = [
///     ToolDefinition::new("t", json!({"type": "object", "properties": {"f": {"type": "string"}}})),
///     ToolDefinition::new("q", json!({"type": "object"})),
/// ];
/// let format = chat::response_format(&tools, &WireNames::default()).unwrap();
/// let value = serde_json::to_value(&format)?;
/// assert_eq!(value["type"], "json_schema");
/// assert_eq!(value["json_schema"]["schema"]["properties"]["name"]["enum"], json!(["t", "q"]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn response_format(tools: &[ToolDefinition], names: &WireNames) -> Option<ResponseFormat> {
    let wire: Vec<Value> = tools
        .iter()
        .map(|t| Value::String(names.to_wire(t.name.as_str()).to_owned()))
        .collect();
    let arguments = match tools {
        [] => return None,
        [only] if only.input_schema.is_object() => only.input_schema.clone(),
        _ => json!({"type": "object"}),
    };
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "enum": wire},
            "arguments": arguments
        },
        "required": ["name", "arguments"],
        "additionalProperties": false
    });
    let mut format = JsonSchemaFormat::new(TOOL_CALL_FORMAT, schema);
    format.description = Some(DESCRIPTION.to_owned());
    format.strict = Some(false);
    Some(ResponseFormat::JsonSchema {
        json_schema: format,
    })
}
