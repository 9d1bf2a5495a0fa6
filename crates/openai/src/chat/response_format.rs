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
/// The schema has one branch per tool (`anyOf`; a single tool is its branch alone): an
/// object with exactly two members, both required — `name`, fixed to that tool's wire
/// name (`const`; at compression level 3 the branches are `t` and `q`), and `arguments`,
/// that tool's own input schema, closed: every object of it that lists `properties` and
/// says nothing of `additionalProperties` gets `additionalProperties: false`, and the
/// keywords a constraining server turns into a grammar (`type`, `properties`, `required`,
/// `enum`, `const`, `items`, `anyOf`/`oneOf`/`allOf`, bounds on numbers and lengths) are
/// kept with the descriptions; the rest (`$schema`, `format`, `pattern`, `default`, …) are
/// left out and judged by `resolve` after recovery. So a constrained model cannot write an
/// unknown parameter, leave out a required one or give one the wrong type. `strict` is
/// `false`: OpenAI's strict mode also requires every property to be required, which
/// optional parameters are not (llama.cpp ignores `strict` and enforces the schema by
/// grammar either way). Identical input gives identical bytes.
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
/// let branches = value["json_schema"]["schema"]["anyOf"].as_array().unwrap();
/// assert_eq!(branches[0]["properties"]["name"]["const"], "t");
/// assert_eq!(branches[0]["properties"]["arguments"]["additionalProperties"], false);
/// assert_eq!(branches[1]["properties"]["name"]["const"], "q");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn response_format(tools: &[ToolDefinition], names: &WireNames) -> Option<ResponseFormat> {
    let mut branches: Vec<Value> = tools
        .iter()
        .map(|t| {
            let wire = names.to_wire(t.name.as_str());
            let arguments = if t.input_schema.is_object() {
                closed(&t.input_schema)
            } else {
                json!({"type": "object"})
            };
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "const": wire},
                    "arguments": arguments
                },
                "required": ["name", "arguments"],
                "additionalProperties": false
            })
        })
        .collect();
    let schema = match branches.len() {
        0 => return None,
        1 => branches.pop()?,
        _ => json!({ "anyOf": branches }),
    };
    let mut format = JsonSchemaFormat::new(TOOL_CALL_FORMAT, schema);
    format.description = Some(DESCRIPTION.to_owned());
    format.strict = Some(false);
    Some(ResponseFormat::JsonSchema {
        json_schema: format,
    })
}

/// The member a reply that calls no tool writes under [`response_format_or_answer`].
pub const ANSWER_MEMBER: &str = "answer";

/// [`response_format`] with one more branch, `{"answer": "<text>"}`, for a model that may
/// also finish without a call (a request no tool answers, the end of a task): the reply
/// is then that object as JSON text, which [`chef_ir::recover_text_calls`] leaves as text
/// (it has no `name`). With no tool, the answer is the only branch.
///
/// ```
/// use chef_ir::{ToolDefinition, WireNames};
/// use chef_openai::chat;
/// use serde_json::json;
///
/// let tools = [ToolDefinition::new("get_weather", json!({"type": "object"}))];
/// let format = chat::response_format_or_answer(&tools, &WireNames::default()).unwrap();
/// let value = serde_json::to_value(&format)?;
/// let branches = value["json_schema"]["schema"]["anyOf"].as_array().unwrap();
/// assert_eq!(branches[0]["properties"]["name"]["const"], "get_weather");
/// assert_eq!(branches[1]["required"], json!(["answer"]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn response_format_or_answer(
    tools: &[ToolDefinition],
    names: &WireNames,
) -> Option<ResponseFormat> {
    let answer = json!({
        "type": "object",
        "properties": {ANSWER_MEMBER: {"type": "string"}},
        "required": [ANSWER_MEMBER],
        "additionalProperties": false
    });
    let schema = match response_format(tools, names) {
        None => answer,
        Some(ResponseFormat::JsonSchema { json_schema }) => match json_schema.schema {
            Value::Object(mut object) if object.contains_key("anyOf") => {
                if let Some(Value::Array(branches)) = object.get_mut("anyOf") {
                    branches.push(answer);
                }
                Value::Object(object)
            }
            one => json!({ "anyOf": [one, answer] }),
        },
    };
    let mut format = JsonSchemaFormat::new(TOOL_CALL_FORMAT, schema);
    format.description = Some(ANSWER_DESCRIPTION.to_owned());
    format.strict = Some(false);
    Some(ResponseFormat::JsonSchema {
        json_schema: format,
    })
}

const ANSWER_DESCRIPTION: &str =
    "One call of one of the tools (its name and its arguments), or an answer without a tool.";

/// The keywords [`closed`] keeps, besides `properties`, `items` and the combinators it
/// walks into.
const KEPT: [&str; 12] = [
    "type",
    "required",
    "enum",
    "const",
    "description",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "additionalProperties",
];

/// `schema` with the keywords a grammar is built from, every object that lists its
/// properties closed to them (unless it says otherwise).
fn closed(schema: &Value) -> Value {
    let Some(object) = schema.as_object() else {
        return schema.clone();
    };
    let mut out = serde_json::Map::new();
    for (key, value) in object {
        match key.as_str() {
            "properties" => {
                if let Some(properties) = value.as_object() {
                    let walked = properties
                        .iter()
                        .map(|(name, p)| (name.clone(), closed(p)))
                        .collect();
                    out.insert(key.clone(), Value::Object(walked));
                }
            }
            "items" => {
                out.insert(key.clone(), closed(value));
            }
            "anyOf" | "oneOf" | "allOf" => {
                if let Some(items) = value.as_array() {
                    out.insert(key.clone(), items.iter().map(closed).collect());
                }
            }
            "additionalProperties" if value.is_object() => {
                out.insert(key.clone(), closed(value));
            }
            k if KEPT.contains(&k) => {
                out.insert(key.clone(), value.clone());
            }
            _ => {}
        }
    }
    if out.contains_key("properties") && !out.contains_key("additionalProperties") {
        out.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
    // `required` names only properties that exist (a grammar cannot demand a member it
    // has no rule for).
    if let (Some(Value::Object(properties)), Some(Value::Array(required))) =
        (out.get("properties").cloned(), out.get_mut("required"))
    {
        required.retain(|r| r.as_str().is_some_and(|n| properties.contains_key(n)));
    }
    Value::Object(out)
}
