//! Level-4 compilation: a model writes one Python `def` line per tool, and every line is
//! verified against the tool's schema before anyone uses it.
//!
//! The library never talks to a model. [`compile_tools`] (feature `compile`) asks a
//! caller-supplied [`Completer`] for each tool's line, a few tools at a time, verifies the
//! answer with [`verify_compiled_line`], asks once more with the problem spelled out when
//! it fails, and otherwise leaves the tool out of the map (level 4 then renders its bare
//! signature, so it stays callable). Each verified line is published the moment it
//! verifies, so a compile that is cancelled or crashes keeps everything finished so far.

mod verify;

#[cfg(feature = "compile")]
mod run;

use std::fmt::Write as _;

use chef_ir::ToolDefinition;
use serde_json::Value;

#[cfg(feature = "compile")]
pub use self::run::{
    CompileOptions, CompileProgress, CompileReport, CompileStats, CompiledSink, Completer,
    CompleterError, ProgressFn, compile_tools,
};
pub use self::verify::{DanglingReference, VerifyError, compiled_docstring, verify_compiled_line};
pub(crate) use self::verify::{dangling_mentions, verify_line};

/// The default target length of a docstring, in characters.
pub const DEFAULT_MAX_DOC_CHARS: usize = 110;

/// The system prompt for the compiling model: what one line must look like, and the
/// rules a line must keep to survive verification.
///
/// ```
/// let prompt = chef_compress::compile_prompt(110);
/// assert!(prompt.contains("name=None"));
/// assert!(prompt.contains("Never name a tool that is not in the inventory"));
/// assert!(!prompt.contains("=0,") && !prompt.contains("=0)"));
/// ```
pub fn compile_prompt(max_doc_chars: usize) -> String {
    format!(
        r#"You write a compact Python index of an agent's tools. For each tool you are given, output exactly one line:
def <tool name>(<parameters>):"<docstring>"

Rules (a line that breaks one is thrown away):
1. Copy the tool name exactly as given. Never rename, shorten or prefix it.
2. Parameters are the tool's real parameter names: required ones first and bare, then optional ones as name=None. Never invent, rename or drop a parameter, and never reorder the required ones. Defaults are always None, never 0 or any other value: a number there reads like a type and makes callers send numbers.
3. A parameter whose name is a Python reserved word (from, class, import, …) or not a Python identifier goes last in a group spelled exactly as the schema spells it: **{{"from":None}}, or **{{"from":...}} when it is required. Never write from_.
4. The docstring is the point of the line. In as few characters as you can, say what the tool does and when to pick it over a similarly named tool. No articles, no pleasantries, do not repeat the tool name, no trailing period. Aim for under {max_doc_chars} characters.
5. Do not describe parameter types, shapes or allowed values: the signature is rebuilt from the schema. Mention a parameter only for what a schema cannot say (two that exclude each other, an order of calls).
6. Never name a tool that is not in the inventory. To contrast, use a real inventory name, or describe the other tool without naming it.
7. Output only the def lines: no code fences, no commentary, no blank lines.

Example input:
github_create_issue — "Create a new issue in a GitHub repository." params: owner*, repo*, title*, body, labels
Example output:
def github_create_issue(owner,repo,title,body=None,labels=None):"open issue as authed user; not for comments or PRs""#
    )
}

/// The inventory header sent with every request: all tool names, so a docstring can
/// only point at tools that exist.
#[cfg(feature = "compile")]
pub(crate) fn roster(names: &[&str]) -> String {
    format!(
        "Tool inventory (names only). Any tool named in a docstring MUST appear here, spelled exactly:\n{}\n\nCompile these:\n\n",
        names.join(", ")
    )
}

/// One tool as the compiling model reads it:
/// `name — "description" params: a*, b, mode:x|y` (`*` marks required; the description's
/// whitespace runs become single spaces, cut at 600 characters).
///
/// ```
/// use chef_compress::describe_for_compile;
/// use chef_ir::ToolDefinition;
/// use serde_json::json;
///
/// let tool = ToolDefinition::new("b_tool", json!({
///     "properties": {"x": {}, "mode": {"enum": ["a", "b"]}},
///     "required": ["x"]
/// }))
/// .with_description(" Multi\n line desc. ");
/// assert_eq!(describe_for_compile(&tool), r#"b_tool — " Multi line desc. " params: x*, mode:a|b"#);
/// ```
pub fn describe_for_compile(tool: &ToolDefinition) -> String {
    let mut prose = String::with_capacity(tool.description.len().min(600));
    let mut in_space = false;
    for c in tool.description.chars() {
        if c.is_whitespace() {
            if !in_space {
                prose.push(' ');
            }
            in_space = true;
        } else {
            prose.push(c);
            in_space = false;
        }
    }
    let prose: String = prose.chars().take(600).collect();
    let schema = &tool.input_schema;
    let required = crate::render::required_names(schema);
    let mut params = String::new();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (i, (key, spec)) in props.iter().enumerate() {
            if i > 0 {
                params.push_str(", ");
            }
            params.push_str(key);
            if required.contains(&key.as_str()) {
                params.push('*');
            }
            if let Some(values) = spec.get("enum").and_then(Value::as_array) {
                params.push(':');
                for (j, v) in values.iter().enumerate() {
                    if j > 0 {
                        params.push('|');
                    }
                    match v {
                        Value::String(s) => params.push_str(s),
                        Value::Null => {}
                        other => {
                            let _ = write!(params, "{other}");
                        }
                    }
                }
            }
        }
    }
    if params.is_empty() {
        params.push_str("(none)");
    }
    format!("{} — \"{prose}\" params: {params}", tool.name.as_str())
}

/// Docstrings of `map` that point at tools missing from `tools` (advisory: the line is
/// still used). A mention is a snake_case name after a redirect word such as `use`,
/// `instead of` or `call`; the tool's own name, its parameters and any tool of the
/// catalogue do not count. In the order of `tools`.
pub fn dangling_references<'a>(
    tools: &[ToolDefinition],
    map: impl Fn(&str) -> Option<&'a str>,
) -> Vec<DanglingReference> {
    let names: std::collections::HashSet<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let mut out = Vec::new();
    for tool in tools {
        let Some(doc) = map(tool.name.as_str()).and_then(compiled_docstring) else {
            continue;
        };
        let props = tool
            .input_schema
            .get("properties")
            .and_then(Value::as_object);
        let mentions = dangling_mentions(doc, |t| {
            names.contains(t) || props.is_some_and(|p| p.contains_key(t))
        });
        if !mentions.is_empty() {
            out.push(DanglingReference {
                tool: tool.name.as_str().to_owned(),
                mentions,
            });
        }
    }
    out
}
