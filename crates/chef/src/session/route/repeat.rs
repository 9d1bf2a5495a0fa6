//! The identical refused call sent again: a shorter correction, the parameters the tool
//! accepts and nothing else.

use chef_compress::ResolveError;
use chef_ir::ToolCall;
use serde_json::Value;

use crate::{
    error::RouteError,
    session::{Chef, routed::Routed},
};

impl Chef {
    /// A call refused for its arguments that repeats the previous refused call exactly
    /// gets a shorter, different correction: the parameters the tool accepts, with their
    /// types, and nothing else (the model did not act on the longer text).
    pub(super) fn correct_repeat(&mut self, call: &ToolCall, routed: &mut Routed) {
        let Routed::Error {
            error: RouteError::Resolve(ResolveError::InvalidArguments(problem)),
            reply,
            ..
        } = routed
        else {
            self.routing.last_refused = None;
            return;
        };
        // Cloning and comparing recurse: arguments nested past any real schema (a hostile
        // call) are not remembered.
        if nested_deeper_than(&call.arguments, REPEAT_DEPTH) {
            self.routing.last_refused = None;
            return;
        }
        let this = (call.name.as_str().trim().to_owned(), call.arguments.clone());
        if self.routing.last_refused.as_ref() != Some(&this) {
            self.routing.last_refused = Some(this);
            return;
        }
        let tool = problem.tool.as_str();
        let schema = self
            .tools
            .pruner
            .all_tools()
            .iter()
            .chain(self.tools.pruner.namespaces().iter().flat_map(|g| &g.tools))
            .chain(self.tools.pruner.toolkits().iter().flat_map(|g| &g.tools))
            .find(|t| t.name == tool)
            .map(|t| &t.input_schema);
        if let Some(schema) = schema {
            *reply = repeat_correction(tool, schema);
        }
    }
}

/// How deep a refused call's arguments may nest for it to be remembered.
const REPEAT_DEPTH: usize = 64;

/// Whether `value` nests arrays and objects more than `limit` deep (without recursion).
fn nested_deeper_than(value: &Value, limit: usize) -> bool {
    let mut stack = vec![(value, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        if depth > limit {
            return true;
        }
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    false
}

/// The correction for the identical refused call sent again: the accepted parameters,
/// each with its type and whether it is required, on one line each.
pub(crate) fn repeat_correction(tool: &str, schema: &Value) -> String {
    let properties = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut lines = Vec::new();
    for (name, property) in properties.into_iter().flatten() {
        let kind = chef_compress::parameter_type(property).unwrap_or_else(|| "any".to_owned());
        let mut line = format!("{name}: {kind}");
        if let Some(Value::Array(values)) = property.get("enum") {
            let values: Vec<String> = values.iter().map(Value::to_string).collect();
            line.push_str(&format!(", one of {}", values.join(", ")));
        }
        line.push_str(if required.contains(&name.as_str()) {
            ", required"
        } else {
            ", optional (leave it out rather than send null)"
        });
        lines.push(line);
    }
    if lines.is_empty() {
        return format!(
            "The same call was refused again. {tool} takes no parameters: call it with {{}}."
        );
    }
    format!(
        "The same call was refused again; do not repeat it. {tool} accepts only these \
         parameters, no others:\n{}",
        lines.join("\n")
    )
}
