//! Conversions to and from [rmcp](https://docs.rs/rmcp) 3.x model types.
//!
//! *Available on crate feature `rmcp3` only.* The feature pulls in rmcp without its
//! default features: the model types, no server, no client, no transport.
//!
//! | from | into | how |
//! |---|---|---|
//! | `rmcp::model::Tool` | [`ToolDefinition`] | `From` (owned or borrowed) |
//! | [`ToolDefinition`] | `rmcp::model::Tool` | `TryFrom`: the schema must be a JSON object |
//! | `rmcp::model::ToolAnnotations` | [`ToolAnnotations`] | `From`, both ways |
//! | a routed [`ToolCall`] | `rmcp::model::CallToolRequestParams` | `TryFrom`, or [`call_tool_params`] to send it under another name |
//!
//! ```
//! use chef_ir::{ToolDefinition, interop::rmcp3};
//! use rmcp::model::{Tool, ToolAnnotations};
//! use serde_json::json;
//!
//! let schema = rmcp::model::object(json!({"type": "object", "properties": {"path": {"type": "string"}}}));
//! let tool = Tool::new("read_file", "Read a file.", schema)
//!     .with_annotations(ToolAnnotations::new().read_only(true));
//!
//! let def = ToolDefinition::from(&tool);
//! assert_eq!(def.annotations.read_only_hint, Some(true));
//!
//! // ... and back, for a server that re-exports chef's catalogue.
//! let again = Tool::try_from(&def)?;
//! assert_eq!(again.annotations, tool.annotations);
//! # Ok::<(), rmcp3::ConversionError>(())
//! ```
//!
//! # What carries over
//!
//! The five MCP hints (`title`, `readOnlyHint`, `destructiveHint`, `idempotentHint`,
//! `openWorldHint`) carry over both ways, so a gate policy can read them from the
//! definition. MCP has two titles, `Tool.title` and `Tool.annotations.title`; chef keeps
//! one, taken from the annotations when they have one and from `Tool.title` otherwise, and
//! writes it back into the annotations. `outputSchema`, `icons` and `_meta` have no place in
//! a [`ToolDefinition`] and are not carried; chef's `tags` and `defer_loading` have no place
//! in an MCP tool and are not written.

use std::sync::Arc;

use rmcp::model::{self as mcp, JsonObject};
use serde_json::Value;

use crate::tool::{ToolAnnotations, ToolCall, ToolDefinition};

/// A value chef cannot express in rmcp's types.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConversionError {
    /// An MCP tool's `inputSchema` must be a JSON object.
    #[error("tool {name:?}: input schema must be a JSON object, found {found}")]
    SchemaNotAnObject {
        /// The tool's name.
        name: String,
        /// The JSON type found.
        found: &'static str,
    },
    /// MCP `tools/call` arguments must be a JSON object (or absent).
    #[error("call to {name:?}: arguments must be a JSON object, found {found}")]
    ArgumentsNotAnObject {
        /// The tool the call was for.
        name: String,
        /// The JSON type found (a string means the model's argument text was not JSON).
        found: &'static str,
    },
}

impl From<&mcp::ToolAnnotations> for ToolAnnotations {
    fn from(a: &mcp::ToolAnnotations) -> Self {
        Self {
            title: a.title.clone(),
            read_only_hint: a.read_only_hint,
            destructive_hint: a.destructive_hint,
            idempotent_hint: a.idempotent_hint,
            open_world_hint: a.open_world_hint,
        }
    }
}

by_reference!(From<mcp::ToolAnnotations> for ToolAnnotations);

impl From<&ToolAnnotations> for mcp::ToolAnnotations {
    fn from(a: &ToolAnnotations) -> Self {
        Self::from_raw(
            a.title.clone(),
            a.read_only_hint,
            a.destructive_hint,
            a.idempotent_hint,
            a.open_world_hint,
        )
    }
}

by_reference!(From<ToolAnnotations> for mcp::ToolAnnotations);

impl From<&mcp::Tool> for ToolDefinition {
    fn from(tool: &mcp::Tool) -> Self {
        let mut annotations = tool
            .annotations
            .as_ref()
            .map(ToolAnnotations::from)
            .unwrap_or_default();
        if annotations.title.is_none() {
            annotations.title.clone_from(&tool.title);
        }
        ToolDefinition::new(
            tool.name.as_ref(),
            Value::Object(tool.input_schema.as_ref().clone()),
        )
        .with_description(tool.description.as_deref().unwrap_or_default())
        .with_annotations(annotations)
    }
}

by_reference!(From<mcp::Tool> for ToolDefinition);

impl TryFrom<&ToolDefinition> for mcp::Tool {
    type Error = ConversionError;

    fn try_from(def: &ToolDefinition) -> Result<Self, Self::Error> {
        let Value::Object(schema) = &def.input_schema else {
            return Err(ConversionError::SchemaNotAnObject {
                name: def.name.as_str().to_owned(),
                found: crate::json_kind(&def.input_schema),
            });
        };
        let description = (!def.description.is_empty()).then(|| def.description.clone().into());
        let tool = mcp::Tool::new_with_raw(
            def.name.as_str().to_owned(),
            description,
            Arc::new(schema.clone()),
        );
        Ok(if def.annotations.is_empty() {
            tool
        } else {
            tool.with_annotations(mcp::ToolAnnotations::from(&def.annotations))
        })
    }
}

by_reference!(TryFrom<ToolDefinition> for mcp::Tool, ConversionError);

/// The `tools/call` parameters for `arguments`, sent to the tool a server knows as `name`.
///
/// Use this when the name the model called differs from the server's own name (chef
/// namespaces MCP tools as `{server}_{tool}`; the server only knows `{tool}`). `null`
/// arguments are sent as absent; any other non-object value is an error.
///
/// ```
/// use chef_ir::interop::rmcp3::call_tool_params;
/// use serde_json::json;
///
/// let params = call_tool_params("read_file", &json!({"path": "README.md"}))?;
/// assert_eq!(params.name, "read_file");
/// assert!(call_tool_params("read_file", &json!("{broken")).is_err());
/// # Ok::<(), chef_ir::interop::rmcp3::ConversionError>(())
/// ```
pub fn call_tool_params(
    name: impl Into<String>,
    arguments: &Value,
) -> Result<mcp::CallToolRequestParams, ConversionError> {
    let name = name.into();
    let arguments: Option<JsonObject> = match arguments {
        Value::Null => None,
        Value::Object(map) => Some(map.clone()),
        other => {
            return Err(ConversionError::ArgumentsNotAnObject {
                found: crate::json_kind(other),
                name,
            });
        }
    };
    let params = mcp::CallToolRequestParams::new(name);
    Ok(match arguments {
        Some(arguments) => params.with_arguments(arguments),
        None => params,
    })
}

/// A routed call (its name is the real tool name the server knows) as `tools/call`
/// parameters. See [`call_tool_params`] to send it under another name.
impl TryFrom<&ToolCall> for mcp::CallToolRequestParams {
    type Error = ConversionError;

    fn try_from(call: &ToolCall) -> Result<Self, Self::Error> {
        call_tool_params(call.name.as_str(), &call.arguments)
    }
}

by_reference!(TryFrom<ToolCall> for mcp::CallToolRequestParams, ConversionError);

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> JsonObject {
        mcp::object(json!({
            "type": "object",
            "properties": {"b": {"type": "string"}, "a": {"type": "integer"}},
            "required": ["b"]
        }))
    }

    #[test]
    fn every_hint_carries_into_the_definition_and_back() {
        let tool = mcp::Tool::new("delete_branch", "Delete a branch.", schema()).with_annotations(
            mcp::ToolAnnotations::with_title("Delete branch")
                .read_only(false)
                .destructive(true)
                .idempotent(true)
                .open_world(false),
        );
        let def = ToolDefinition::from(&tool);
        assert_eq!(def.name, "delete_branch");
        assert_eq!(def.description, "Delete a branch.");
        assert_eq!(
            def.annotations,
            ToolAnnotations {
                title: Some("Delete branch".into()),
                read_only_hint: Some(false),
                destructive_hint: Some(true),
                idempotent_hint: Some(true),
                open_world_hint: Some(false),
            }
        );
        let back = mcp::Tool::try_from(&def).unwrap();
        assert_eq!(back, tool);
    }

    #[test]
    fn schema_key_order_survives_both_ways() {
        let tool = mcp::Tool::new("t", "d", schema());
        let def = ToolDefinition::from(tool.clone());
        assert_eq!(
            def.input_schema.to_string(),
            r#"{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"}},"required":["b"]}"#
        );
        let back = mcp::Tool::try_from(def).unwrap();
        assert_eq!(
            serde_json::to_string(&back).unwrap(),
            serde_json::to_string(&tool).unwrap()
        );
    }

    #[test]
    fn top_level_title_is_used_when_annotations_have_none() {
        let tool = mcp::Tool::new("t", "d", schema()).with_title("Top title");
        let def = ToolDefinition::from(&tool);
        assert_eq!(def.annotations.title.as_deref(), Some("Top title"));

        let both = tool.with_annotations(mcp::ToolAnnotations::with_title("Inner title"));
        assert_eq!(
            ToolDefinition::from(&both).annotations.title.as_deref(),
            Some("Inner title")
        );
    }

    #[test]
    fn absent_description_and_hints_stay_absent() {
        let tool = mcp::Tool::new_with_raw("bare", None, schema());
        let def = ToolDefinition::from(&tool);
        assert_eq!(def.description, "");
        assert!(def.annotations.is_empty());
        let back = mcp::Tool::try_from(&def).unwrap();
        assert_eq!(back.description, None);
        assert_eq!(back.annotations, None);
        let wire = serde_json::to_value(&back).unwrap();
        assert_eq!(
            wire.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["name", "inputSchema"]
        );
    }

    #[test]
    fn a_schema_that_is_not_an_object_is_a_typed_error() {
        let def = ToolDefinition::new("odd", json!(true));
        assert_eq!(
            mcp::Tool::try_from(&def),
            Err(ConversionError::SchemaNotAnObject {
                name: "odd".into(),
                found: "a boolean"
            })
        );
    }

    #[test]
    fn a_routed_call_becomes_call_tool_params() {
        let call = ToolCall::new("call_1", "search", json!({"q": "rust", "limit": 3}));
        let params = mcp::CallToolRequestParams::try_from(&call).unwrap();
        assert_eq!(
            serde_json::to_value(&params).unwrap(),
            json!({"name": "search", "arguments": {"q": "rust", "limit": 3}})
        );

        let no_args = ToolCall::new("call_2", "ping", Value::Null);
        let params = mcp::CallToolRequestParams::try_from(no_args).unwrap();
        assert_eq!(
            serde_json::to_value(&params).unwrap(),
            json!({"name": "ping"})
        );
    }

    #[test]
    fn non_object_arguments_are_a_typed_error_naming_the_tool() {
        let table = [
            (json!("{not json"), "a string"),
            (json!([1, 2]), "an array"),
            (json!(7), "a number"),
            (json!(false), "a boolean"),
        ];
        for (arguments, found) in table {
            let call = ToolCall::new("c", "search", arguments);
            let err = mcp::CallToolRequestParams::try_from(&call).unwrap_err();
            assert_eq!(
                err,
                ConversionError::ArgumentsNotAnObject {
                    name: "search".into(),
                    found
                }
            );
            assert!(err.to_string().contains("\"search\""), "{err}");
        }
    }

    #[test]
    fn the_conversion_agrees_with_the_loader_on_mcp_json() {
        let tool = mcp::Tool::new("write", "Write.", schema()).with_annotations(
            mcp::ToolAnnotations::with_title("Write")
                .destructive(true)
                .open_world(false),
        );
        let wire = serde_json::to_value(vec![&tool]).unwrap();
        let loaded = crate::load_tools(&wire).unwrap();
        assert_eq!(loaded.tools, [ToolDefinition::from(&tool)]);
    }

    proptest::proptest! {
        #[test]
        fn definition_to_tool_and_back_is_lossless_for_what_mcp_holds(
            name in "[a-z_]{1,12}",
            description in ".{0,40}",
            title in proptest::option::of(".{0,12}"),
            hints in proptest::array::uniform4(proptest::option::of(proptest::bool::ANY)),
        ) {
            let [read_only_hint, destructive_hint, idempotent_hint, open_world_hint] = hints;
            let def = ToolDefinition::new(name, Value::Object(schema()))
                .with_description(description)
                .with_annotations(ToolAnnotations {
                    title,
                    read_only_hint,
                    destructive_hint,
                    idempotent_hint,
                    open_world_hint,
                });
            let tool = mcp::Tool::try_from(&def).unwrap();
            proptest::prop_assert_eq!(ToolDefinition::from(&tool), def);
        }
    }

    #[test]
    fn call_tool_params_sends_under_the_servers_own_name() {
        let call = ToolCall::new("c", "files_read", json!({"path": "a"}));
        let params = call_tool_params("read", &call.arguments).unwrap();
        assert_eq!(params.name, "read");
        assert_eq!(params.arguments, Some(mcp::object(json!({"path": "a"}))));
    }
}
