//! Namespaces and lazy toolkits: the two-layer tool mode.
//!
//! A **namespace** folds a group of tools into one wire tool whose `action` parameter names
//! the sub-tool and whose `args` object carries its arguments. A **lazy toolkit** is a group
//! the model loads on demand through the `load_toolkit` tool; the toolkits on offer are
//! listed in a directory ([`Pruner::directory_xml`](crate::prune::Pruner::directory_xml))
//! that [`Chef`](crate::Chef) adds to its own system message at compile; place it in a
//! system prompt yourself only when you use the pruner without a `Chef`.
//!
//! Groups are one level deep: [`ToolGroup::tools`] holds plain tool definitions, and a
//! member named like another group is refused at registration
//! ([`RegistryError::NestedGroup`](crate::prune::RegistryError::NestedGroup)). Everything rendered here depends only on the
//! registered groups, so the compiled tools are byte-identical from turn to turn.

mod error;

use chef_ir::{ToolDefinition, ToolName};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

pub use self::error::NamespaceError;

/// The name of the toolkit loader tool.
pub const LOAD_TOOLKIT: &str = "load_toolkit";

/// A named group of tools: a namespace or a lazy toolkit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolGroup {
    /// The group's name (the wire tool name of a namespace, the toolkit name of a toolkit).
    pub name: String,
    /// What the group is for.
    pub description: String,
    /// The member tools, in order.
    pub tools: Vec<ToolDefinition>,
}

impl ToolGroup {
    /// A group with a name, a description and members.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        tools: Vec<ToolDefinition>,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            tools,
        }
    }
}

/// A namespace call resolved to its sub-tool.
#[derive(Debug, Clone, PartialEq)]
pub struct NamespaceCall {
    /// The namespace the model called.
    pub group: String,
    /// The sub-tool the action names.
    pub tool_name: ToolName,
    /// The sub-tool's arguments.
    pub args: Value,
}

/// The wire tool for a namespace: `action` (an enum of the members) and `args`.
///
/// The description lists every action with its parameters. Members whose schema is a
/// JSON Schema object are documented from its `properties` (required ones marked); the
/// reference's flat `{param: {type, description}}` maps are read as well.
pub fn namespace_tool(group: &ToolGroup) -> ToolDefinition {
    let mut description = format!("{}\n\nAvailable actions:\n", group.description);
    let docs: Vec<String> = group.tools.iter().map(action_doc).collect();
    description.push_str(&docs.join("\n"));
    let actions: Vec<Value> = group
        .tools
        .iter()
        .map(|t| Value::String(t.name.as_str().to_owned()))
        .collect();
    let schema = json!({
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": actions,
                "description": "The action to run; each is described in this tool's description."
            },
            "args": {
                "type": "object",
                "description": "The arguments of the chosen action, as listed in this tool's description."
            }
        },
        "required": ["action"],
        "additionalProperties": true
    });
    ToolDefinition::new(group.name.as_str(), schema).with_description(description)
}

fn action_doc(tool: &ToolDefinition) -> String {
    let mut doc = format!("- {}: {}", tool.name, tool.description);
    let Value::Object(schema) = &tool.input_schema else {
        return doc;
    };
    let (params, required): (Option<&Map<String, Value>>, Vec<&str>) =
        match schema.get("properties") {
            Some(Value::Object(props)) => (
                Some(props),
                schema
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default(),
            ),
            // A flat parameter map (the reference's sub-tool convention), unless this is a
            // property-less JSON Schema such as {"type": "object"}.
            _ if schema.get("type").is_some_and(Value::is_string) => (None, Vec::new()),
            _ => (Some(schema), Vec::new()),
        };
    let params = params.into_iter().flatten();
    for (key, spec) in params {
        let ty = spec.get("type").and_then(Value::as_str).unwrap_or("any");
        doc.push_str(&format!("\n    - {key} ({ty}"));
        if required.contains(&key.as_str()) {
            doc.push_str(", required");
        }
        doc.push(')');
        if let Some(d) = spec
            .get("description")
            .and_then(Value::as_str)
            .filter(|d| !d.is_empty())
        {
            doc.push_str(": ");
            doc.push_str(d);
        }
    }
    doc
}

/// The `load_toolkit` wire tool for the registered toolkits.
pub fn load_toolkit_tool(toolkits: &[ToolGroup]) -> ToolDefinition {
    let names: Vec<Value> = toolkits
        .iter()
        .map(|k| Value::String(k.name.clone()))
        .collect();
    let schema = json!({
        "type": "object",
        "properties": {
            "toolkit_name": {
                "type": "string",
                "enum": names,
                "description": "The toolkit to load, as named in <available_toolkits>."
            }
        },
        "required": ["toolkit_name"]
    });
    ToolDefinition::new(LOAD_TOOLKIT, schema).with_description(
        "Load a toolkit to make its tools callable. The toolkits on offer, and the tools \
         each holds, are listed in <available_toolkits> in the system prompt. Loaded tools \
         stay available for the rest of the session.",
    )
}

/// The toolkit directory for the system prompt, or `""` when there are no toolkits.
///
/// ```text
/// <available_toolkits>
///   <toolkit name="Weather" tools="get_weather, get_forecast">Weather data</toolkit>
/// </available_toolkits>
/// ```
///
/// Unlike the reference, names and descriptions are XML-escaped (`&`, `<`, `>`, `"`, `'`),
/// so a description cannot close the element or inject markup.
pub fn directory_xml(toolkits: &[ToolGroup]) -> String {
    if toolkits.is_empty() {
        return String::new();
    }
    let mut xml = String::from("<available_toolkits>");
    for kit in toolkits {
        let tools: Vec<&str> = kit.tools.iter().map(|t| t.name.as_str()).collect();
        xml.push_str(&format!(
            "\n  <toolkit name=\"{}\" tools=\"{}\">{}</toolkit>",
            escape_xml(&kit.name),
            escape_xml(&tools.join(", ")),
            escape_xml(&kit.description)
        ));
    }
    xml.push_str("\n</available_toolkits>");
    xml
}

/// Escapes the five XML special characters.
pub fn escape_xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// Resolves a namespace call to its sub-tool.
///
/// `arguments` may be an object or a JSON string. The action must name a member exactly.
/// The sub-tool's arguments are `args` when it is an object (or a JSON string holding
/// one); when `args` is absent, the remaining top-level keys are taken as the arguments, so
/// `{"action":"read_file","path":"a"}` works too.
pub fn resolve_namespace(
    namespaces: &[ToolGroup],
    name: &str,
    arguments: &Value,
) -> Result<NamespaceCall, NamespaceError> {
    let Some(group) = namespaces.iter().find(|g| g.name == name) else {
        return Err(NamespaceError::NotANamespace {
            name: name.to_owned(),
            available: namespaces.iter().map(|g| g.name.clone()).collect(),
        });
    };
    let parsed;
    let arguments = match arguments {
        Value::String(text) => {
            parsed =
                serde_json::from_str::<Value>(text).map_err(|e| NamespaceError::BadArguments {
                    group: group.name.clone(),
                    problem: format!("the arguments are not valid JSON ({e})"),
                })?;
            &parsed
        }
        other => other,
    };
    let Value::Object(map) = arguments else {
        return Err(NamespaceError::BadArguments {
            group: group.name.clone(),
            problem: "the arguments must be a JSON object with \"action\" and \"args\"".into(),
        });
    };
    let action = map.get("action").and_then(Value::as_str).unwrap_or("");
    let Some(tool) = group.tools.iter().find(|t| t.name == action) else {
        return Err(NamespaceError::UnknownAction {
            group: group.name.clone(),
            action: action.to_owned(),
            available: group.tools.iter().map(|t| t.name.clone()).collect(),
        });
    };
    // The action's arguments: `args` (an object, or a JSON text of one), with the keys
    // written beside it merged in; `args` absent, `null`, `""` or `[]` means only those.
    // An `args` that cannot be read, or a key inside and beside with different values, is
    // refused: the action must not run without what the model wrote.
    let bad = |problem: String| NamespaceError::BadArguments {
        group: group.name.clone(),
        problem,
    };
    let mut args = match map.get("args") {
        Some(Value::Object(args)) => args.clone(),
        Some(Value::String(text)) if text.trim().is_empty() => Map::new(),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(args)) => args,
            _ => {
                return Err(bad(
                    "\"args\" must be a JSON object; received a string that is not one".into(),
                ));
            }
        },
        None | Some(Value::Null) => Map::new(),
        Some(Value::Array(items)) if items.is_empty() => Map::new(),
        Some(other) => {
            let kind = match other {
                Value::Array(_) => "an array",
                Value::Number(_) => "a number",
                _ => "a boolean",
            };
            return Err(bad(format!(
                "\"args\" must be a JSON object; received {kind}"
            )));
        }
    };
    for (key, value) in map {
        if key == "action" || key == "args" {
            continue;
        }
        match args.get(key) {
            Some(inside) if inside != value => {
                let key: String = if key.chars().count() > 80 {
                    key.chars().take(80).chain(['…']).collect()
                } else {
                    key.clone()
                };
                return Err(bad(format!(
                    "\"{key}\" was given twice with different values, inside \"args\" and beside it; send each argument once, inside \"args\""
                )));
            }
            Some(_) => {}
            None => {
                args.insert(key.clone(), value.clone());
            }
        }
    }
    let args = Value::Object(args);
    Ok(NamespaceCall {
        group: group.name.clone(),
        tool_name: tool.name.clone(),
        args,
    })
}

/// The tools of a toolkit, found by case-insensitive name.
pub fn extract_toolkit<'a>(
    toolkits: &'a [ToolGroup],
    name: &str,
) -> Result<&'a ToolGroup, NamespaceError> {
    let wanted = name.trim().to_lowercase();
    toolkits
        .iter()
        .find(|k| k.name.to_lowercase() == wanted)
        .ok_or_else(|| NamespaceError::UnknownToolkit {
            name: name.to_owned(),
            available: toolkits.iter().map(|k| k.name.clone()).collect(),
        })
}

#[cfg(test)]
mod tests;
