//! A bare tool set (and a system preamble) in Gemini's shape, and the function
//! declarations it shares with [`compile`](fn@crate::compile).

use std::borrow::Cow;

use chef_ir::{NameRule, ToolDefinition, WireNames};
use serde::Serialize;

use crate::{
    error::{Error, Result},
    names::{renamed, wire_name},
    notice::Notice,
    options::{CompileOptions, SchemaMode},
    schema::takes_parameters,
    wire::{self, Part},
};

/// Function tools (and a system preamble) in Gemini's shape, ready to merge into a body.
///
/// Serialises as `{"systemInstruction":{"parts":[{"text":preamble}]},
/// "tools":[{"functionDeclarations":[…]}]}`; either key is absent when empty.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Envelope<'a> {
    /// The preamble as a system instruction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_instruction: Option<wire::Content<'a>>,
    /// One tool object holding every function declaration.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<wire::Tool<'a>>,
    /// Real ↔ wire tool names.
    #[serde(skip)]
    pub names: WireNames,
    /// Renamed and deferred tools.
    #[serde(skip)]
    pub notices: Vec<Notice>,
}

/// Wraps tool definitions (level-0 tools, or a compressed tool set) and an optional system
/// preamble in Gemini's shape: compress.md §10.4 `forGemini`.
///
/// ```
/// use chef_ir::ToolDefinition;
/// use serde_json::json;
///
/// let tools = [ToolDefinition::new("lookup.get", json!({
///     "type": "object", "properties": {"q": {"type": "string"}}, "additionalProperties": false
/// }))];
/// let env = chef_gemini::envelope(&tools, "", &Default::default())?;
/// assert_eq!(serde_json::to_string(&env)?,
///     r#"{"tools":[{"functionDeclarations":[{"name":"lookup.get","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}]}]}"#);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn envelope<'a>(
    tools: &'a [ToolDefinition],
    preamble: &'a str,
    options: &CompileOptions,
) -> Result<Envelope<'a>> {
    let names = if tools
        .iter()
        .all(|t| NameRule::GEMINI.accepts(t.name.as_str()))
    {
        WireNames::default()
    } else {
        WireNames::new(tools.iter().map(|t| &t.name), NameRule::GEMINI)
    };
    let mut notices = renamed(&names);
    let decls = declarations(tools, &names, options, &mut notices)?;
    let system_instruction =
        (!preamble.is_empty()).then(|| wire::Content::without_role(vec![Part::text(preamble)]));
    Ok(Envelope {
        system_instruction,
        tools: if decls.is_empty() {
            Vec::new()
        } else {
            vec![wire::Tool::FunctionDeclarations(decls)]
        },
        names,
        notices,
    })
}

/// The function declarations for `tools`, with a notice per deferred tool.
pub(crate) fn declarations<'a>(
    tools: &'a [ToolDefinition],
    names: &WireNames,
    options: &CompileOptions,
    notices: &mut Vec<Notice>,
) -> Result<Vec<wire::FunctionDeclaration<'a>>> {
    let mut decls = Vec::with_capacity(tools.len());
    for tool in tools {
        if !tool.input_schema.is_object() {
            return Err(Error::SchemaNotObject {
                tool: tool.name.to_string(),
            });
        }
        if tool.defer_loading {
            notices.push(Notice::DeferLoadingIgnored {
                tool: tool.name.to_string(),
            });
        }
        let mut decl = wire::FunctionDeclaration::new(wire_name(names, tool.name.as_str()));
        decl.description =
            (!tool.description.is_empty()).then_some(Cow::Borrowed(tool.description.as_str()));
        match options.schema {
            SchemaMode::Parameters => {
                decl.parameters = takes_parameters(&tool.input_schema)
                    .then_some(wire::Schema::Cleaned(&tool.input_schema));
            }
            SchemaMode::JsonSchema => {
                decl.parameters_json_schema = Some(Cow::Borrowed(&tool.input_schema));
            }
        }
        decls.push(decl);
    }
    Ok(decls)
}
