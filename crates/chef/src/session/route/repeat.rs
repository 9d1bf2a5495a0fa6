//! The identical refused call sent again: a different, shorter correction, the tool's
//! typed signature on one line.

use chef_compress::ResolveError;
use chef_ir::ToolCall;
use serde_json::Value;

use crate::{
    error::RouteError,
    session::{Chef, routed::Routed},
};

impl Chef {
    /// A call refused for its arguments that repeats the previous refused call exactly, in
    /// a later reply (the model has read the first refusal), gets a different, shorter
    /// correction: the parameters the tool accepts, with their types, as one signature
    /// line (the model did not act on the first text). A repeat within one reply gets the
    /// same text as the first.
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
        let name = call.name.as_str().trim();
        // Which reply this is: the assistant messages so far (results pushed between two
        // calls of one reply, as a loop may, do not make it another reply).
        let seen = self
            .conversation
            .history
            .iter()
            .filter(|m| m.role == chef_ir::Role::Assistant)
            .count();
        match &self.routing.last_refused {
            Some((n, args, at)) if n == name && *args == call.arguments => {
                // The same reply's second copy: the model has not read the first refusal.
                if *at == seen {
                    return;
                }
            }
            _ => {
                self.routing.last_refused = Some((name.to_owned(), call.arguments.clone(), seen));
                return;
            }
        }
        let tool = problem.tool.as_str();
        let find_tools = (tool == crate::owned::FIND_TOOLS).then(crate::owned::find_tools_tool);
        let schema = self
            .tools
            .pruner
            .all_tools()
            .iter()
            .chain(self.tools.pruner.namespaces().iter().flat_map(|g| &g.tools))
            .chain(self.tools.pruner.toolkits().iter().flat_map(|g| &g.tools))
            .chain(&find_tools)
            .find(|t| t.name == tool)
            .map(|t| &t.input_schema);
        if let Some(schema) = schema {
            *reply = repeat_correction(self.sent_name(tool), schema);
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

/// The most enum values the correction spells out for one parameter.
const ENUM_SHOWN: usize = 8;

/// The most characters of one enum value the correction quotes.
const ENUM_CHARS: usize = 40;

/// The correction for the identical refused call sent again: one line, the tool's typed
/// signature in the notation of level 1's signature lines (`?` marks an optional
/// parameter), e.g. `Refused again. Send exactly get_weather(city: string, units?:
/// "c"|"f"); ? = optional: omit, never null.`
///
/// It is a different text from the first refusal, and shorter than listing the schema: one
/// line for every parameter rather than one line each.
pub(crate) fn repeat_correction(tool: &str, schema: &Value) -> String {
    let properties = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut params = Vec::new();
    let mut any_optional = false;
    for (name, property) in properties.into_iter().flatten() {
        let optional = !required.contains(&name.as_str());
        any_optional |= optional;
        let mut shown = compact_type(property, 0);
        // An optional parameter is left out rather than sent as null (the legend says
        // so): its `null` would contradict that.
        if optional && let Some(without) = without_null(&shown) {
            shown = without;
        }
        params.push(format!(
            "{name}{}: {shown}",
            if optional { "?" } else { "" }
        ));
    }
    if params.is_empty() {
        return format!("Refused again. {tool} takes no parameters: send {{}}.");
    }
    let legend = if any_optional {
        "; ? = optional: omit, never null."
    } else {
        "."
    };
    format!(
        "Refused again. Send exactly {tool}({}){legend}",
        params.join(", ")
    )
}

/// `shown` (a [`compact_type`]) without its `null` alternative, when it has one and
/// another; `None` when there is nothing to take out.
fn without_null(shown: &str) -> Option<String> {
    let parts: Vec<&str> = shown.split('|').collect();
    (parts.len() > 1 && parts.contains(&"null")).then(|| {
        parts
            .into_iter()
            .filter(|p| *p != "null")
            .collect::<Vec<_>>()
            .join("|")
    })
}

/// One enum value as the correction quotes it: JSON, a string cut at [`ENUM_CHARS`]
/// characters with `…` inside its quotes.
fn enum_value(value: &Value) -> String {
    match value.as_str() {
        Some(text) => match text.char_indices().nth(ENUM_CHARS) {
            Some((end, _)) => {
                Value::String(format!("{}…", text.get(..end).unwrap_or(text))).to_string()
            }
            None => value.to_string(),
        },
        None => value.to_string(),
    }
}

/// A parameter's type in a few characters: `string`, `number[]`, `"c"|"f"`, `string|null`,
/// `string|string[]`. (`depth` bounds the recursion into array items.)
fn compact_type(property: &Value, depth: usize) -> String {
    if let Some(Value::Array(values)) = property.get("enum") {
        let mut shown: Vec<String> = values.iter().take(ENUM_SHOWN).map(enum_value).collect();
        if values.len() > ENUM_SHOWN {
            shown.push("…".to_owned());
        }
        if !shown.is_empty() {
            return shown.join("|");
        }
    }
    if let Some(constant) = property.get("const") {
        return constant.to_string();
    }
    // `array` with typed items is written `items[]`, alone or among other types.
    let array = || match property.get("items") {
        Some(items)
            if depth < 4 && (items.get("type").is_some() || items.get("enum").is_some()) =>
        {
            let inner = compact_type(items, depth + 1);
            if inner.contains('|') {
                format!("({inner})[]")
            } else {
                format!("{inner}[]")
            }
        }
        _ => "array".to_owned(),
    };
    match property.get("type") {
        Some(Value::String(t)) if t == "array" => array(),
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(types)) => {
            let types: Vec<String> = types
                .iter()
                .filter_map(Value::as_str)
                .map(|t| if t == "array" { array() } else { t.to_owned() })
                .collect();
            if types.is_empty() {
                "any".to_owned()
            } else {
                types.join("|")
            }
        }
        _ => "any".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::repeat_correction;

    #[test]
    fn the_correction_is_one_typed_signature_line() {
        let schema = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "units": {"type": "string", "enum": ["c", "f"]},
                "days": {"type": ["integer", "null"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "modes": {"type": "array", "items": {"enum": ["a", "b"]}},
                "filter": {"type": "object", "properties": {"x": {"type": "string"}}},
                "anything": {},
                "to": {"type": ["string", "array"], "items": {"type": "string"}},
                "since": {"type": ["string", "null"]},
                "long": {"enum": ["x".repeat(50), 3]}
            },
            "required": ["city", "since"]
        });
        // An optional parameter's `null` is not shown (it is left out, as the legend says);
        // a required one's is. Array items show their type among other types too, and a
        // cut enum string keeps its closing quote.
        assert_eq!(
            repeat_correction("get_weather", &schema),
            format!(
                "Refused again. Send exactly get_weather(city: string, units?: \"c\"|\"f\", \
                 days?: integer, tags?: string[], modes?: (\"a\"|\"b\")[], filter?: object, \
                 anything?: any, to?: string|string[], since: string|null, long?: \"{}…\"|3); \
                 ? = optional: omit, never null.",
                "x".repeat(40)
            )
        );
        // Every parameter required: no legend.
        let schema = json!({"properties": {"id": {"type": "integer"}}, "required": ["id"]});
        assert_eq!(
            repeat_correction("get", &schema),
            "Refused again. Send exactly get(id: integer)."
        );
        // No parameters at all.
        assert_eq!(
            repeat_correction("ping", &json!({"type": "object"})),
            "Refused again. ping takes no parameters: send {}."
        );
    }

    #[test]
    fn long_enums_and_deep_arrays_are_cut() {
        let values: Vec<String> = (0..20).map(|i| format!("v{i}")).collect();
        let long = "x".repeat(100);
        let mut deep = json!({"type": "string"});
        for _ in 0..6 {
            deep = json!({"type": "array", "items": deep});
        }
        let schema = json!({"properties": {
            "pick": {"enum": values},
            "word": {"enum": [long]},
            "deep": deep
        }});
        let text = repeat_correction("t", &schema);
        assert!(text.contains("\"v7\"|…,"), "{text}");
        assert!(!text.contains("v8"), "{text}");
        assert!(text.contains(&format!("\"{}…\"", "x".repeat(40))), "{text}");
        assert!(!text.contains(&"x".repeat(41)), "{text}");
        assert!(text.contains("deep?: array[][][][]"), "{text}");
    }
}
