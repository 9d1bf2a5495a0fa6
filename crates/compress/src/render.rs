//! Rendering primitives: signature lines, prose-free schemas and first sentences.
//!
//! These are pure functions over JSON Schema values. They never fail: a schema from the
//! wild that does not have the expected shape renders less (no hint, no parameters), never
//! a panic.

use serde_json::{Map, Value};

/// Keys [`flatten_schema`] drops: prose and boilerplate that do not constrain decoding.
const DROP: [&str; 8] = [
    "description",
    "$schema",
    "title",
    "examples",
    "default",
    "additionalProperties",
    "$id",
    "$comment",
];

/// One line per parameter of `schema.properties`, in schema order, for a lookup answer:
/// `- name (type, required, format F, default D, one of a|b): description`. Empty when
/// the schema has no properties. What the signature leaves out (descriptions, formats,
/// defaults) is what a model needs to write arguments right.
///
/// ```
/// use chef_compress::parameter_lines;
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {
///         "start": {"type": "string", "format": "date-time", "description": "Start time."},
///         "minutes": {"type": "integer", "default": 30}
///     },
///     "required": ["start"]
/// });
/// assert_eq!(
///     parameter_lines(&schema),
///     "- start (string, required, format date-time): Start time.\n- minutes (integer, default 30)"
/// );
/// ```
pub fn parameter_lines(schema: &Value) -> String {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return String::new();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = String::new();
    for (name, property) in properties {
        if !out.is_empty() {
            out.push('\n');
        }
        let mut facts: Vec<String> = parameter_type(property).into_iter().collect();
        if required.contains(&name.as_str()) {
            facts.push("required".to_owned());
        }
        if let Some(Value::String(format)) = property.get("format") {
            facts.push(format!("format {format}"));
        }
        if let Some(default) = property.get("default") {
            facts.push(format!("default {default}"));
        }
        if let Some(Value::Array(values)) = property.get("enum") {
            let values: Vec<String> = values.iter().map(Value::to_string).collect();
            facts.push(format!("one of {}", values.join(", ")));
        }
        out.push_str("- ");
        out.push_str(name);
        if !facts.is_empty() {
            out.push_str(" (");
            out.push_str(&facts.join(", "));
            out.push(')');
        }
        if let Some(Value::String(d)) = property.get("description")
            && !d.trim().is_empty()
        {
            out.push_str(": ");
            out.push_str(d.trim());
        }
    }
    out
}

/// A parameter's type as [`parameter_lines`] words it: `string`, `array of string`,
/// `string or array`; `None` when its schema names no type.
///
/// ```
/// use chef_compress::parameter_type;
/// use serde_json::json;
///
/// assert_eq!(parameter_type(&json!({"type": "array", "items": {"type": "integer"}})).as_deref(), Some("array of integer"));
/// assert_eq!(parameter_type(&json!({"type": ["string", "null"]})).as_deref(), Some("string or null"));
/// assert_eq!(parameter_type(&json!({"description": "anything"})), None);
/// ```
pub fn parameter_type(property: &Value) -> Option<String> {
    match property.get("type") {
        Some(Value::String(t)) if t == "array" => Some(
            match property.pointer("/items/type").and_then(Value::as_str) {
                Some(item) => format!("array of {item}"),
                None => "array".to_owned(),
            },
        ),
        Some(Value::String(t)) => Some(t.clone()),
        Some(Value::Array(types)) => Some(
            types
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" or "),
        ),
        _ => None,
    }
}

/// One line naming a tool and its parameters: `name(a,b?:x|y,c?:string[],d?:{})`.
///
/// One parameter per key of `schema.properties`, in schema order; `?` marks a parameter
/// not in `required`; a hint follows `:` for an enum (values joined by `|`), an array
/// (`T[]` from `items.type`, `{}[]` for untyped items with properties, `[]` otherwise) or
/// an object (`{}`). Required names absent from `properties` are not shown.
///
/// ```
/// use chef_compress::signature_line;
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {
///         "location": {"type": "string"},
///         "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
///         "days": {"type": "integer"}
///     },
///     "required": ["location"]
/// });
/// assert_eq!(signature_line("get_weather", &schema), "get_weather(location,unit?:celsius|fahrenheit,days?)");
/// ```
pub fn signature_line(name: &str, schema: &Value) -> String {
    let mut line = String::with_capacity(name.len() + 32);
    line.push_str(name);
    line.push('(');
    push_params(&mut line, schema);
    line.push(')');
    line
}

/// The Python form of [`signature_line`] (level 4): parameters whose names are not Python
/// identifiers move, in order, into one trailing `**{"key":None}` group (`...` instead of
/// `None` when required); the others keep `?` and hints.
///
/// `send_email(to,subject,attachments?:object[],**{"from":None})`
pub(crate) fn python_signature(name: &str, schema: &Value) -> String {
    let mut line = String::with_capacity(name.len() + 32);
    line.push_str(name);
    line.push('(');
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        let required = required_names(schema);
        let mut first = true;
        let mut keyword: Vec<(&str, bool)> = Vec::new();
        for (key, spec) in properties {
            let is_required = required.iter().any(|r| r == key);
            if !is_python_identifier(key) {
                keyword.push((key, is_required));
                continue;
            }
            if !first {
                line.push(',');
            }
            first = false;
            line.push_str(key);
            if !is_required {
                line.push('?');
            }
            push_hint(&mut line, spec);
        }
        if !keyword.is_empty() {
            if !first {
                line.push(',');
            }
            line.push_str("**{");
            for (i, (key, is_required)) in keyword.iter().enumerate() {
                if i > 0 {
                    line.push(',');
                }
                line.push_str(&Value::String((*key).to_owned()).to_string());
                line.push(':');
                line.push_str(if *is_required { "..." } else { "None" });
            }
            line.push('}');
        }
    }
    line.push(')');
    line
}

/// Appends the comma-separated parameter list of `schema` to `out`.
pub(crate) fn push_params(out: &mut String, schema: &Value) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required = required_names(schema);
    for (i, (key, spec)) in properties.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(key);
        if !required.iter().any(|r| r == key) {
            out.push('?');
        }
        push_hint(out, spec);
    }
}

/// The string entries of `schema.required`, in order (non-strings skipped), without
/// collecting them.
pub(crate) fn required_iter(schema: &Value) -> impl Iterator<Item = &str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// The string entries of `schema.required`, in order (non-strings skipped).
pub(crate) fn required_names(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn push_hint(out: &mut String, spec: &Value) {
    if let Some(values) = spec.get("enum").and_then(Value::as_array) {
        out.push(':');
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                out.push('|');
            }
            push_enum_value(out, v);
        }
        return;
    }
    match spec.get("type").and_then(Value::as_str) {
        Some("array") => {
            out.push(':');
            if let Some(items) = spec.get("items") {
                match items.get("type") {
                    Some(Value::String(t)) => out.push_str(t),
                    Some(Value::Array(types)) => {
                        for (i, t) in types.iter().enumerate() {
                            if i > 0 {
                                out.push(',');
                            }
                            push_enum_value(out, t);
                        }
                    }
                    Some(other) => push_enum_value(out, other),
                    None if items.get("properties").is_some() => out.push_str("{}"),
                    None => {}
                }
            }
            out.push_str("[]");
        }
        Some("object") => out.push_str(":{}"),
        _ => {}
    }
}

/// Enum values as text: strings verbatim, `null` as nothing, everything else as JSON.
fn push_enum_value(out: &mut String, v: &Value) {
    match v {
        Value::String(s) => out.push_str(s),
        Value::Null => {}
        other => out.push_str(&other.to_string()),
    }
}

/// The schema with prose and boilerplate removed, keeping everything that constrains
/// decoding (types, enums, required, item types, nested properties, combinators).
///
/// Dropped at the top level and inside `properties`/`items` and the `anyOf`/`oneOf`/`allOf`
/// of nested schemas (top-level combinators are copied verbatim):
/// `description`, `$schema`, `title`, `examples`, `default`, `additionalProperties`, `$id`,
/// `$comment`. Property *names* are never dropped. Other keys (`$defs`, `if`, `const`, …)
/// are copied verbatim. A missing top-level `type` becomes `"object"` (appended last); a
/// non-object schema becomes `{"type":"object"}`. Idempotent.
///
/// ```
/// use chef_compress::flatten_schema;
/// use serde_json::json;
///
/// let flat = flatten_schema(&json!({
///     "$schema": "http://json-schema.org/draft-07/schema#",
///     "type": "object",
///     "properties": {"q": {"type": "string", "description": "The query."}},
///     "required": ["q"],
///     "additionalProperties": false
/// }));
/// assert_eq!(flat, json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}));
/// ```
pub fn flatten_schema(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return chef_ir::ToolDefinition::empty_schema();
    };
    let mut out = flatten_members(map, false);
    let has_type = out.get("type").is_some_and(|t| match t {
        Value::Null | Value::Bool(false) => false,
        Value::String(s) => !s.is_empty(),
        Value::Number(n) => n.as_f64() != Some(0.0),
        _ => true,
    });
    if !has_type {
        out.shift_remove("type");
        out.insert("type".to_owned(), Value::String("object".to_owned()));
    }
    Value::Object(out)
}

fn flatten_properties(value: &Value) -> Value {
    match value {
        Value::Object(props) => Value::Object(
            props
                .iter()
                .map(|(k, v)| (k.clone(), flatten_property(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn flatten_property(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(flatten_members(map, true)),
        Value::Array(items) => Value::Array(items.iter().map(flatten_property).collect()),
        other => other.clone(),
    }
}

/// A schema object's members without the prose ones ([`DROP`]), with `properties` and
/// `items` flattened, and, in a nested schema (not at the top level), the options of
/// `anyOf`, `oneOf` and `allOf` too.
fn flatten_members(map: &Map<String, Value>, nested: bool) -> Map<String, Value> {
    let mut out = Map::with_capacity(map.len() + 1);
    for (key, value) in map {
        if DROP.contains(&key.as_str()) {
            continue;
        }
        let flat = match (key.as_str(), value) {
            ("properties", _) => flatten_properties(value),
            ("items", _) => flatten_property(value),
            ("anyOf" | "oneOf" | "allOf", Value::Array(options)) if nested => {
                Value::Array(options.iter().map(flatten_property).collect())
            }
            _ => value.clone(),
        };
        out.insert(key.clone(), flat);
    }
    out
}

/// The shortest prefix of `text` ending in `.`, `!` or `?` that is followed by whitespace
/// or the end, trimmed; the whole text (trimmed) when there is none.
///
/// ```
/// use chef_compress::first_sentence;
/// assert_eq!(first_sentence("Hello. World"), "Hello.");
/// assert_eq!(first_sentence("v1.2 is great. Yes"), "v1.2 is great.");
/// assert_eq!(first_sentence("No punctuation"), "No punctuation");
/// ```
pub fn first_sentence(text: &str) -> &str {
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if matches!(c, '.' | '!' | '?') {
            let ends = match chars.peek() {
                None => true,
                Some((_, next)) => next.is_whitespace(),
            };
            if ends {
                return text.get(..i + 1).unwrap_or(text).trim();
            }
        }
    }
    text.trim()
}

/// Python's reserved words: a parameter named one cannot be written bare in a `def` line.
const RESERVED: [&str; 37] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield", "match", "case",
];

/// True when `key` can be written as a bare Python parameter: ASCII identifier, not a
/// reserved word (`_` and `type` are fine; `from`, `user-id`, `é` are not).
pub(crate) fn is_python_identifier(key: &str) -> bool {
    let mut bytes = key.bytes();
    let head_ok = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    head_ok && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_') && !RESERVED.contains(&key)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn first_sentence_table() {
        let cases = [
            ("Hello. World", "Hello."),
            ("e.g. foo bar", "e.g."),
            ("v1.2 is great. Yes", "v1.2 is great."),
            ("What?yes. ok", "What?yes."),
            ("Wait!! Now", "Wait!!"),
            ("Dots... more", "Dots..."),
            ("Line one\nLine two. Three", "Line one\nLine two."),
            ("  Hi. there", "Hi."),
            ("No punctuation", "No punctuation"),
            ("", ""),
            ("Ünïcode… ok. Then", "Ünïcode… ok."),
        ];
        for (input, want) in cases {
            assert_eq!(first_sentence(input), want, "{input:?}");
        }
    }

    #[test]
    fn signature_hints_table() {
        let cases = [
            (json!({}), "f()"),
            (json!({"properties": {}}), "f()"),
            (
                json!({"properties": {"labels": {"type": "array", "items": {"type": "string"}}}}),
                "f(labels?:string[])",
            ),
            (
                json!({"properties": {"s": {"type": "array"}, "t": {"type": "object"}}, "required": ["s", "t"]}),
                "f(s:[],t:{})",
            ),
            (
                json!({"properties": {"a": {"type": "array", "items": {"properties": {"x": {}}}}}}),
                "f(a?:{}[])",
            ),
            (
                json!({"properties": {"a": {"type": "array", "items": {"type": "object"}}}}),
                "f(a?:object[])",
            ),
            (
                json!({"properties": {"a": {"type": "array", "items": {}}}}),
                "f(a?:[])",
            ),
            (
                json!({"properties": {"a": {"type": "array", "items": {"type": ["string", "null"]}}}}),
                "f(a?:string,null[])",
            ),
            (
                json!({"properties": {"n": {"type": "integer", "enum": [1, 2, 3]}}}),
                "f(n?:1|2|3)",
            ),
            (
                json!({"properties": {"n": {"type": "array", "enum": ["x"]}}}),
                "f(n?:x)",
            ),
            (
                json!({"properties": {"n": {"enum": ["x", null, 3, true]}}}),
                "f(n?:x||3|true)",
            ),
            (json!({"properties": {"n": {"enum": []}}}), "f(n?:)"),
            (
                json!({"properties": {"u": {"type": ["string", "null"]}, "v": 7}}),
                "f(u?,v?)",
            ),
            (
                json!({"properties": {"to": {}, "from": {}, "subject": {}, "attachments": {"type": "array", "items": {"type": "object"}}}, "required": ["to", "subject", "ghost"]}),
                "f(to,from?,subject,attachments?:object[])",
            ),
        ];
        for (schema, want) in cases {
            assert_eq!(signature_line("f", &schema), want, "{schema}");
        }
    }

    #[test]
    fn python_signatures_move_keyword_names_to_a_trailing_group() {
        let email = |required: serde_json::Value| {
            json!({
                "properties": {"to": {}, "from": {}, "subject": {}, "attachments": {"type": "array", "items": {"type": "object"}}},
                "required": required
            })
        };
        assert_eq!(
            python_signature("send_email", &email(json!(["to", "subject"]))),
            r#"send_email(to,subject,attachments?:object[],**{"from":None})"#
        );
        assert_eq!(
            python_signature("send_email", &email(json!(["to", "subject", "from"]))),
            r#"send_email(to,subject,attachments?:object[],**{"from":...})"#
        );
        assert_eq!(
            python_signature(
                "x_y",
                &json!({"properties": {"from": {}, "ok": {"type": "array", "items": {"type": "string"}}, "user-id": {}, "class": {}}, "required": ["class"]})
            ),
            r#"x_y(ok?:string[],**{"from":None,"user-id":None,"class":...})"#
        );
        assert_eq!(
            python_signature("f", &json!({"properties": {"from": {}}})),
            r#"f(**{"from":None})"#
        );
        assert_eq!(python_signature("f", &json!({})), "f()");
    }

    #[test]
    fn flatten_keeps_constraints_and_drops_prose() {
        let schema = json!({
            "$schema": "x",
            "properties": {
                "description": {"type": "string", "description": "a property named description"},
                "filter": {"type": "object", "title": "t", "properties": {"field": {"type": "string", "description": "d"}}},
                "u": {"anyOf": [{"type": "string", "description": "d"}, {"type": "null"}]}
            },
            "allOf": [{"if": {"properties": {"x": {"const": 1, "description": "kept"}}}}],
            "additionalProperties": false
        });
        let flat = flatten_schema(&schema);
        assert_eq!(
            flat,
            json!({
                "properties": {
                    "description": {"type": "string"},
                    "filter": {"type": "object", "properties": {"field": {"type": "string"}}},
                    "u": {"anyOf": [{"type": "string"}, {"type": "null"}]}
                },
                "allOf": [{"if": {"properties": {"x": {"const": 1, "description": "kept"}}}}],
                "type": "object"
            })
        );
        // `type` is appended last when missing.
        assert_eq!(
            flat.as_object().unwrap().keys().next_back().unwrap(),
            "type"
        );
        assert_eq!(flatten_schema(&flat), flat, "idempotent");
        assert_eq!(flatten_schema(&Value::Null), json!({"type": "object"}));
        assert_eq!(flatten_schema(&json!("x")), json!({"type": "object"}));
    }
}
