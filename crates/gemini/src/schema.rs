//! Rewriting a tool's JSON Schema into the OpenAPI subset Gemini's `parameters` accepts.
//!
//! Gemini rejects the whole request when any one declaration is invalid, so one odd tool in
//! a catalogue breaks every call. [`clean_schema`] therefore keeps only what Gemini's
//! `Schema` object documents and repairs the forms real MCP servers send. It builds a new
//! value (the caller's schema is never touched); arguments are still validated against the
//! ORIGINAL schema by `chef-compress`, so a constraint removed here is enforced there.
//!
//! # What Gemini accepts (and what is done with the rest)
//!
//! Gemini's `Schema` documents `type`, `format`, `title`, `description`, `nullable`,
//! `enum`, `maxItems`, `minItems`, `properties`, `required`, `minProperties`,
//! `maxProperties`, `minLength`, `maxLength`, `pattern`, `example`, `anyOf`,
//! `propertyOrdering`, `items`, `minimum` and `maximum`. Every other keyword is dropped at
//! every level (`additionalProperties`, `$schema`, `default`, `examples`, `$id`,
//! `$comment`, `not`, `if`/`then`/`else`, `patternProperties`, `uniqueItems`,
//! `exclusiveMinimum`, `multipleOf`, vendor `x-…` keys, …), after these rewrites:
//!
//! | form | repair |
//! |---|---|
//! | `type` is an array (`["string","null"]`) | the first non-`null` member; `nullable: true` if `null` was a member (compress.md §10.4 takes the first member; keeping `null` as `nullable` loses less) |
//! | `type: "array"` without `items` | `items: {}` appended (never an invented item type) |
//! | `items` on a non-array `type` | removed |
//! | `items` as an array (tuple form) | one schema: the member, or `anyOf` of the members |
//! | `enum` on a non-string `type`, or with a non-string value | removed, type kept (Gemini: "enum only allowed for STRING type") |
//! | `enum` of strings without `type` | `type: "string"` added (Gemini rejects an untyped enum) |
//! | `const` (string) | `enum: [const]` when there is no `enum` |
//! | `format` Gemini refuses (`uri`, `email`, …) | removed; kept: `enum`, `date-time` on strings, `int32`, `int64`, `float`, `double` on numbers |
//! | `required` naming a property not in `properties` | that name removed ("property is not defined") |
//! | `properties: {}` | removed ("should be non-empty for OBJECT type") |
//! | `oneOf` | becomes `anyOf` (Gemini has no `oneOf`); dropped if `anyOf` is also present |
//! | `allOf` | its members' keywords merged into the node (properties and `required` united, otherwise the node's own keyword wins) |
//! | local `$ref` (`#/$defs/X`, `#/definitions/X`, any `#/…` pointer) | inlined (the node's own keywords win over the target's); a reference cycle or an unresolvable reference becomes `{}` plus the node's own keywords; `$defs`/`definitions` are then dropped |
//! | boolean schema `true`/`false` | `{}` |
//!
//! Recursion covers every place a schema can sit in that subset: `properties` values,
//! `items`, `anyOf` members (Gemini validates inside `anyOf`: a union `type` there is
//! rejected too), and inlined `$ref`/`allOf`/`oneOf` targets. Nesting deeper than
//! [`MAX_DEPTH`] levels is cut to `{}` so hostile input cannot exhaust the stack.

use serde_json::{Map, Value};

/// Schemas nested deeper than this are replaced by `{}`.
pub const MAX_DEPTH: usize = 64;

/// Keywords copied as they are (after their own checks below).
const PLAIN: [&str; 13] = [
    "title",
    "description",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "minimum",
    "maximum",
    "propertyOrdering",
];

/// Cleans a tool's parameter schema for Gemini's `parameters` field (see the module docs).
///
/// Returns `None` when the tool takes no parameters (an object schema without properties):
/// Gemini rejects `{"type":"object","properties":{}}`, and omitting `parameters` is how it
/// declares a parameterless function. A root without `type` gets `"type": "object"` first.
///
/// ```
/// use serde_json::json;
///
/// let original = json!({
///     "type": "object",
///     "$schema": "http://json-schema.org/draft-07/schema#",
///     "properties": {
///         "tags": {"type": "array"},
///         "depth": {"type": "number", "enum": [1, 2, 3], "default": 1},
///         "unit": {"type": ["string", "null"], "enum": ["cm", "m"]}
///     },
///     "additionalProperties": false
/// });
/// let cleaned = chef_gemini::clean_schema(&original).unwrap();
/// assert_eq!(cleaned, json!({
///     "type": "object",
///     "properties": {
///         "tags": {"type": "array", "items": {}},
///         "depth": {"type": "number"},
///         "unit": {"type": "string", "enum": ["cm", "m"], "nullable": true}
///     }
/// }));
/// ```
pub fn clean_schema(schema: &Value) -> Option<Value> {
    let mut cleaner = Cleaner {
        root: schema,
        refs: Vec::new(),
    };
    let mut out = cleaner.node(schema, 0);
    let has_properties = out
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    let is_object = out.get("type").is_none_or(|t| t == "object");
    if is_object && !has_properties && !out.contains_key("anyOf") {
        return None;
    }
    if !out.contains_key("type") && has_properties {
        let mut typed = Map::with_capacity(out.len() + 1);
        typed.insert("type".to_owned(), Value::String("object".to_owned()));
        typed.extend(std::mem::take(&mut out));
        out = typed;
    }
    Some(Value::Object(out))
}

struct Cleaner<'a> {
    root: &'a Value,
    /// `$ref`s being inlined, innermost last (cycle detection).
    refs: Vec<&'a str>,
}

impl<'a> Cleaner<'a> {
    fn node(&mut self, node: &'a Value, depth: usize) -> Map<String, Value> {
        let Value::Object(map) = node else {
            return Map::new();
        };
        if depth >= MAX_DEPTH {
            return Map::new();
        }
        let mut out = Map::with_capacity(map.len());
        let has_any_of = map.contains_key("anyOf");
        for (key, value) in map {
            match key.as_str() {
                "type" => match value {
                    Value::Array(members) => {
                        let first = members.iter().find(|m| *m != "null");
                        if let Some(first) = first {
                            out.insert("type".to_owned(), first.clone());
                        }
                        if members.iter().any(|m| m == "null") {
                            out.insert("nullable".to_owned(), Value::Bool(true));
                        }
                    }
                    Value::String(_) => {
                        out.insert("type".to_owned(), value.clone());
                    }
                    _ => {}
                },
                "nullable" if value.is_boolean() => {
                    out.insert(key.clone(), value.clone());
                }
                "properties" => {
                    if let Value::Object(props) = value {
                        let cleaned: Map<String, Value> = props
                            .iter()
                            .map(|(name, schema)| {
                                (name.clone(), Value::Object(self.node(schema, depth + 1)))
                            })
                            .collect();
                        out.insert(key.clone(), Value::Object(cleaned));
                    }
                }
                "items" => {
                    let items = match value {
                        Value::Array(members) => self.union(members, depth),
                        other => self.node(other, depth + 1),
                    };
                    out.insert(key.clone(), Value::Object(items));
                }
                "anyOf" | "oneOf" => {
                    if key == "oneOf" && has_any_of {
                        continue;
                    }
                    if let Value::Array(members) = value {
                        let cleaned = members
                            .iter()
                            .map(|m| Value::Object(self.node(m, depth + 1)))
                            .collect();
                        out.insert("anyOf".to_owned(), Value::Array(cleaned));
                    }
                }
                "enum" | "required" if value.is_array() => {
                    out.insert(key.clone(), value.clone());
                }
                "format" if value.is_string() => {
                    out.insert(key.clone(), value.clone());
                }
                "const" if value.is_string() && !map.contains_key("enum") => {
                    out.insert("enum".to_owned(), Value::Array(vec![value.clone()]));
                }
                k if PLAIN.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                _ => {}
            }
        }
        if let Some(Value::Array(members)) = map.get("allOf") {
            for member in members {
                let member = self.node(member, depth + 1);
                merge_under(&mut out, member);
            }
        }
        if let Some(Value::String(reference)) = map.get("$ref") {
            let target = self.resolve(reference, depth);
            merge_under(&mut out, target);
        }
        repair(&mut out);
        out
    }

    /// One schema for a tuple-form `items`.
    fn union(&mut self, members: &'a [Value], depth: usize) -> Map<String, Value> {
        let mut cleaned: Vec<Map<String, Value>> =
            members.iter().map(|m| self.node(m, depth + 1)).collect();
        match cleaned.len() {
            0 => Map::new(),
            1 => cleaned.pop().unwrap_or_default(),
            _ => {
                let mut out = Map::new();
                out.insert(
                    "anyOf".to_owned(),
                    Value::Array(cleaned.into_iter().map(Value::Object).collect()),
                );
                out
            }
        }
    }

    /// The cleaned target of a local `$ref`, or `{}` for a cycle or a reference that does
    /// not resolve in this document.
    fn resolve(&mut self, reference: &'a str, depth: usize) -> Map<String, Value> {
        if self.refs.contains(&reference) {
            return Map::new();
        }
        let Some(pointer) = reference.strip_prefix('#') else {
            return Map::new();
        };
        let Some(target) = self.root.pointer(pointer) else {
            return Map::new();
        };
        self.refs.push(reference);
        let out = self.node(target, depth + 1);
        self.refs.pop();
        out
    }
}

/// Adds `extra`'s keywords to `out` where `out` has none; `properties` and `required` are
/// united.
fn merge_under(out: &mut Map<String, Value>, extra: Map<String, Value>) {
    for (key, value) in extra {
        match (key.as_str(), out.get_mut(&key), value) {
            ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                for (name, schema) in theirs {
                    mine.entry(name).or_insert(schema);
                }
            }
            ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                for name in theirs {
                    if !mine.contains(&name) {
                        mine.push(name);
                    }
                }
            }
            (_, Some(_), _) => {}
            (_, None, value) => {
                out.insert(key, value);
            }
        }
    }
}

/// The per-node repairs that need the whole node (see the module table).
fn repair(out: &mut Map<String, Value>) {
    let ty = out.get("type").and_then(Value::as_str).map(str::to_owned);
    match ty.as_deref() {
        Some("array") => {
            out.entry("items")
                .or_insert_with(|| Value::Object(Map::new()));
        }
        Some(_) => {
            out.remove("items");
        }
        None => {}
    }
    if let Some(Value::Array(values)) = out.get("enum") {
        let all_strings = values.iter().all(Value::is_string);
        match ty.as_deref() {
            Some("string") if all_strings => {}
            None if all_strings => {
                out.insert("type".to_owned(), Value::String("string".to_owned()));
            }
            _ => {
                out.remove("enum");
            }
        }
    }
    if let Some(Value::String(format)) = out.get("format") {
        let keep = match ty.as_deref() {
            Some("string") => matches!(format.as_str(), "enum" | "date-time"),
            Some("number" | "integer") => {
                matches!(format.as_str(), "int32" | "int64" | "float" | "double")
            }
            _ => false,
        };
        if !keep {
            out.remove("format");
        }
    }
    if out
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
    {
        out.remove("properties");
    }
    match (out.get("properties"), out.get("required")) {
        (Some(Value::Object(props)), Some(Value::Array(required))) => {
            let kept: Vec<Value> = required
                .iter()
                .filter(|name| name.as_str().is_some_and(|n| props.contains_key(n)))
                .cloned()
                .collect();
            out.insert("required".to_owned(), Value::Array(kept));
        }
        (None, Some(_)) => {
            out.remove("required");
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn clean(v: Value) -> Value {
        clean_schema(&json!({"type": "object", "properties": {"x": v}})).unwrap()["properties"]["x"]
            .clone()
    }

    #[test]
    fn repairs_table() {
        let cases = [
            (
                json!({"type": "array"}),
                json!({"type": "array", "items": {}}),
            ),
            (
                json!({"type": "string", "items": {}}),
                json!({"type": "string"}),
            ),
            (
                json!({"type": "integer", "enum": [1, 2]}),
                json!({"type": "integer"}),
            ),
            (
                json!({"enum": ["a", "b"]}),
                json!({"enum": ["a", "b"], "type": "string"}),
            ),
            (json!({"enum": ["a", 1]}), json!({})),
            (
                json!({"type": ["string", "array"]}),
                json!({"type": "string"}),
            ),
            (
                json!({"type": ["null", "integer"]}),
                json!({"type": "integer", "nullable": true}),
            ),
            (
                json!({"type": "string", "format": "uri"}),
                json!({"type": "string"}),
            ),
            (
                json!({"type": "string", "format": "date-time"}),
                json!({"type": "string", "format": "date-time"}),
            ),
            (
                json!({"type": "integer", "format": "int64"}),
                json!({"type": "integer", "format": "int64"}),
            ),
            (
                json!({"const": "x"}),
                json!({"enum": ["x"], "type": "string"}),
            ),
            (
                json!({"oneOf": [{"type": "string"}, {"type": ["integer", "null"]}]}),
                json!({"anyOf": [{"type": "string"}, {"type": "integer", "nullable": true}]}),
            ),
            (
                json!({"type": "object", "properties": {}, "required": ["a"]}),
                json!({"type": "object"}),
            ),
            (
                json!({"type": "object", "properties": {"a": {}}, "required": ["a", "b"]}),
                json!({"type": "object", "properties": {"a": {}}, "required": ["a"]}),
            ),
            (
                json!({"type": "array", "items": [{"type": "string"}]}),
                json!({"type": "array", "items": {"type": "string"}}),
            ),
            (json!(true), json!({})),
            (
                json!({"x-vendor": 1, "default": 2, "examples": [], "not": {}, "uniqueItems": true, "description": "d"}),
                json!({"description": "d"}),
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(clean(input.clone()), expected, "input {input}");
        }
    }

    #[test]
    fn local_refs_are_inlined_and_cycles_cut() {
        let schema = json!({
            "type": "object",
            "$defs": {
                "Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}, "v": {"type": "string"}}},
            },
            "properties": {"root": {"$ref": "#/$defs/Node", "description": "the root"}, "ext": {"$ref": "https://x/y"}},
        });
        let cleaned = clean_schema(&schema).unwrap();
        assert_eq!(
            cleaned,
            json!({"type": "object", "properties": {
                "root": {"description": "the root", "type": "object", "properties": {
                    "child": {},
                    "v": {"type": "string"}
                }},
                "ext": {}
            }})
        );
    }

    #[test]
    fn all_of_members_are_merged() {
        let cleaned = clean(json!({
            "allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"b": {"type": "number"}}, "required": ["b"]}
            ],
            "description": "merged"
        }));
        assert_eq!(
            cleaned,
            json!({"description": "merged", "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "number"}},
                "required": ["a", "b"]})
        );
    }

    #[test]
    fn parameterless_tools_have_no_parameters() {
        assert_eq!(clean_schema(&json!({"type": "object"})), None);
        assert_eq!(
            clean_schema(&json!({"type": "object", "properties": {}})),
            None
        );
        assert_eq!(clean_schema(&json!({})), None);
    }

    #[test]
    fn a_root_without_type_becomes_an_object() {
        let cleaned = clean_schema(&json!({"properties": {"a": {"type": "string"}}})).unwrap();
        assert_eq!(
            cleaned,
            json!({"type": "object", "properties": {"a": {"type": "string"}}})
        );
    }

    #[test]
    fn hostile_nesting_is_cut() {
        let mut v = json!({"type": "string"});
        for _ in 0..200 {
            v = json!({"type": "object", "properties": {"a": v}});
        }
        let cleaned = clean_schema(&v).unwrap();
        assert!(serde_json::to_string(&cleaned).unwrap().len() < 64 * 40);
    }
}
