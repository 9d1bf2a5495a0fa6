//! Schema normalisation: turn a tool schema found in the wild into one JSON Schema 2020-12
//! document that the renderer can read and the validator can compile, recording each change.
//!
//! The walk never panics and does bounded work: the input's nesting is measured (without
//! recursion) before anything recurses over it, `$ref` inlining has a budget in nodes and in
//! depth, and a reference that would recurse forever is kept as a reference, which the
//! validator follows lazily, instead of being expanded.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use super::Limits;
use super::error::SchemaError;

/// One change made to a tool's schema to make it usable, as listed in the statistics.
///
/// ```json
/// {"tool": "ship", "path": "properties.shipments.items", "what": "type `dict` read as `object`"}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Normalisation {
    /// The tool whose schema was changed.
    pub tool: String,
    /// Where in the schema, as keywords and property names joined with `.`
    /// (`properties.shipments.items`); empty for the schema itself.
    pub path: String,
    /// What was changed and how it is read now.
    pub what: String,
}

/// A normalised schema and the changes that produced it.
#[derive(Debug, Clone, PartialEq)]
pub struct NormalisedSchema {
    /// The schema as chef uses it, for rendering and validation.
    pub schema: Value,
    /// Every change made, in the order the walk met them.
    pub notes: Vec<Normalisation>,
}

/// Normalises a tool's input schema with the default [`Limits`].
///
/// Accepted and normalised (each change is recorded in [`NormalisedSchema::notes`]):
/// a schema that is `true` or `null` (read as `{"type":"object"}`); a missing `type`
/// (`object` at the top, and where `properties` or `items` show it); non-standard type names
/// (`dict`, `map` → `object`; `float`, `double` → `number`; `int`, `long` → `integer`;
/// `bool` → `boolean`; `str`, `text` → `string`; `list`, `tuple` → `array`; `any` → no type
/// constraint; unknown names are dropped); `type` arrays with such names; OpenAPI `nullable`;
/// `$ref` into `$defs`, `definitions` or anywhere in the document (inlined; a recursive
/// reference stays a reference); unresolvable or external `$ref` (accepts any value); enums
/// whose members contradict the declared type (the type is widened to admit them); a
/// `required` that is a string, holds non-strings or duplicates, or names a property absent
/// from a non-empty `properties` (the property is declared, accepting any value, so the tool
/// stays callable); draft-3 `"required": true` on a property; draft-4 boolean
/// `exclusiveMinimum`/`exclusiveMaximum`; draft-7 tuple `items` and `dependencies`;
/// numeric bounds written as strings; malformed keywords (dropped); regular expressions the
/// linear-time engine cannot run (dropped); a property written as a bare type name
/// (`"count": "int"`).
///
/// # Errors
///
/// [`SchemaError`] naming the tool when the schema is `false`, is not an object at all, has a
/// top-level type other than `object`, or nests deeper than the limit.
///
/// ```
/// use chef_compress::validate::normalise_schema;
/// use serde_json::json;
///
/// let n = normalise_schema("ship", &json!({"properties": {"weight": {"type": "float"}}}))?;
/// assert_eq!(n.schema, json!({"type": "object", "properties": {"weight": {"type": "number"}}}));
/// assert_eq!(n.notes[0].path, "properties.weight");
/// assert_eq!(n.notes[0].what, "type `float` read as `number`");
/// # Ok::<(), chef_compress::validate::SchemaError>(())
/// ```
pub fn normalise_schema(tool: &str, schema: &Value) -> Result<NormalisedSchema, SchemaError> {
    normalise_with_limits(tool, schema, &Limits::default())
}

/// [`normalise_schema`] with explicit limits ([`Limits::max_schema_depth`] and
/// [`Limits::max_ref_inline_nodes`] apply).
///
/// # Errors
///
/// As [`normalise_schema`].
pub fn normalise_with_limits(
    tool: &str,
    schema: &Value,
    limits: &Limits,
) -> Result<NormalisedSchema, SchemaError> {
    if depth_exceeds(schema, limits.max_schema_depth) {
        return Err(SchemaError::TooDeep {
            tool: tool.to_owned(),
            limit: limits.max_schema_depth,
        });
    }
    let mut walk = Walk {
        tool,
        root: schema,
        notes: Vec::new(),
        path: Vec::new(),
        refs: Vec::new(),
        inline_budget: limits.max_ref_inline_nodes,
        kept_refs: 0,
        draft3_required: false,
    };
    let map = match schema {
        Value::Object(map) => map,
        Value::Bool(true) | Value::Null => {
            let what = if schema.is_null() {
                "schema `null` read as an object with no declared parameters"
            } else {
                "schema `true` read as an object with no declared parameters"
            };
            walk.note(what.to_owned());
            let mut object = Map::new();
            object.insert("type".to_owned(), Value::from("object"));
            return Ok(NormalisedSchema {
                schema: Value::Object(object),
                notes: walk.notes,
            });
        }
        Value::Bool(false) => {
            return Err(SchemaError::RejectsEverything {
                tool: tool.to_owned(),
            });
        }
        other => {
            return Err(SchemaError::NotASchema {
                tool: tool.to_owned(),
                found: chef_ir::json_kind(other).to_owned(),
            });
        }
    };
    walk.refs.push("#".to_owned());
    let synthesized = root_reference(map).map(|(reference, merged)| {
        walk.note(format!(
            "top-level reference `{}` inlined",
            preview_str(reference)
        ));
        walk.refs.push(reference.to_owned());
        merged
    });
    let mut out = walk.object(synthesized.as_ref().unwrap_or(map), 0, true);
    walk.root_type(&mut out)?;
    Ok(NormalisedSchema {
        schema: Value::Object(out),
        notes: walk.notes,
    })
}

/// A root that is only a `$ref` (beside definitions and annotations), merged with its target,
/// as zod-to-json-schema and similar generators write it.
fn root_reference(map: &Map<String, Value>) -> Option<(&str, Map<String, Value>)> {
    let reference = map.get("$ref")?.as_str()?;
    let plain = map.keys().all(|k| {
        matches!(
            k.as_str(),
            "$ref" | "$defs" | "definitions" | "$schema" | "$id"
        ) || ANNOTATIONS.contains(&k.as_str())
    });
    if !plain || reference == "#" {
        return None;
    }
    let root = Value::Object(map.clone());
    let Some(Value::Object(target)) = resolve_pointer(&root, reference) else {
        return None;
    };
    let mut merged = target.clone();
    for (k, v) in map {
        if k != "$ref" {
            merged.insert(k.clone(), v.clone());
        }
    }
    Some((reference, merged))
}

/// How deep references may be expanded inside one another.
const INLINE_MAX_NESTING: usize = 16;
/// Past this walk depth, references are kept rather than inlined.
const INLINE_MAX_DEPTH: usize = 48;

struct Walk<'a> {
    tool: &'a str,
    root: &'a Value,
    notes: Vec<Normalisation>,
    path: Vec<String>,
    refs: Vec<String>,
    inline_budget: usize,
    kept_refs: usize,
    /// Set by a schema object that carried draft-3 `required: true`, for its parent.
    draft3_required: bool,
}

/// Keywords whose value is one subschema.
const SINGLE: &[&str] = &[
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "contentSchema",
];
/// Keywords whose value is a non-empty array of subschemas.
const LISTS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value is an object of subschemas.
const MAPS: &[&str] = &["dependentSchemas"];
/// Keywords whose value is a number.
const NUMBERS: &[&str] = &["minimum", "maximum", "multipleOf"];
/// Keywords whose value is a non-negative integer.
const COUNTS: &[&str] = &[
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minContains",
    "maxContains",
];
/// Keywords that only annotate: a `$ref` with only these beside it is replaced by its target.
pub(super) const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

impl Walk<'_> {
    fn note(&mut self, what: String) {
        self.notes.push(Normalisation {
            tool: self.tool.to_owned(),
            path: self.path.join("."),
            what,
        });
    }

    fn with_segment<T>(&mut self, segment: &str, f: impl FnOnce(&mut Self) -> T) -> T {
        self.path.push(segment.to_owned());
        let out = f(self);
        self.path.pop();
        out
    }

    /// Normalises any subschema position.
    fn schema(&mut self, node: &Value, depth: usize) -> Value {
        match node {
            Value::Bool(_) => node.clone(),
            Value::Object(map) => Value::Object(self.object(map, depth, false)),
            Value::String(name) => {
                let mut object = Map::new();
                match canonical_type(name) {
                    Some(Canonical::Type(t)) => {
                        self.note(format!(
                            "schema written as the type name `{}`: read as type `{t}`",
                            preview_str(name)
                        ));
                        object.insert("type".to_owned(), Value::from(t));
                    }
                    Some(Canonical::Any) | None => self.note(format!(
                        "schema written as the string `{}`: accepts any value",
                        preview_str(name)
                    )),
                }
                Value::Object(object)
            }
            other => {
                self.note(format!(
                    "{} is not a schema: accepts any value",
                    chef_ir::json_kind(other)
                ));
                Value::Object(Map::new())
            }
        }
    }

    /// Normalises a schema object. `is_root` marks the document root.
    fn object(
        &mut self,
        map: &Map<String, Value>,
        depth: usize,
        is_root: bool,
    ) -> Map<String, Value> {
        if let Some(reference) = map.get("$ref")
            && let Some(inlined) = self.reference(map, reference, depth)
        {
            return inlined;
        }
        let mut out = Map::new();
        let mut types: Option<Vec<&'static str>> = None;
        let mut type_position: Option<usize> = None;
        let mut nullable = false;
        let mut flagged_required: Vec<String> = Vec::new();
        let mut defs_keys: Vec<String> = Vec::new();
        let mut tuple = false;
        for (key, value) in map {
            let key_str = key.as_str();
            match key_str {
                "$ref" => {
                    // Kept (recursive or over budget): `reference` declined to inline it.
                    out.insert(key.clone(), value.clone());
                }
                "type" => {
                    type_position = Some(out.len());
                    types = self.types(value);
                    // Placeholder, replaced once every keyword is seen.
                    out.insert(key.clone(), Value::Null);
                }
                "nullable" => {
                    if value == &Value::Bool(true) {
                        nullable = true;
                        self.note(
                            "OpenAPI `nullable: true` read as type `null` allowed".to_owned(),
                        );
                    } else {
                        self.note("OpenAPI `nullable` removed".to_owned());
                    }
                }
                "properties" | "patternProperties" => match value {
                    Value::Object(props) => {
                        let mut normalised = Map::new();
                        self.path.push(key.clone());
                        for (name, spec) in props {
                            if key_str == "patternProperties" && !pattern_compiles(name) {
                                self.note(format!(
                                    "pattern `{}` cannot run on the linear-time regex engine: dropped",
                                    preview_str(name)
                                ));
                                continue;
                            }
                            self.path.push(name.clone());
                            self.draft3_required = false;
                            let spec = self.schema(spec, depth + 1);
                            if key_str == "properties" && self.draft3_required {
                                flagged_required.push(name.clone());
                            }
                            self.draft3_required = false;
                            self.path.pop();
                            normalised.insert(name.clone(), spec);
                        }
                        self.path.pop();
                        out.insert(key.clone(), Value::Object(normalised));
                    }
                    other => self.with_segment(key_str, |w| {
                        w.note(format!(
                            "`{key_str}` is {}: removed",
                            chef_ir::json_kind(other)
                        ));
                    }),
                },
                "items" => match value {
                    Value::Array(list) => {
                        tuple = true;
                        let items = self.with_segment("items", |w| {
                            w.note("tuple `items` array read as `prefixItems`".to_owned());
                            w.list(list, depth)
                        });
                        out.insert("prefixItems".to_owned(), Value::Array(items));
                    }
                    other => {
                        let items = self.with_segment("items", |w| w.schema(other, depth + 1));
                        out.insert(key.clone(), items);
                    }
                },
                "additionalItems" => {
                    // Only meaningful beside a tuple `items`; handled after the loop.
                }
                "$defs" | "definitions" => match value {
                    Value::Object(_) => {
                        defs_keys.push(key.clone());
                        out.insert(key.clone(), Value::Null);
                    }
                    other => self.with_segment(key_str, |w| {
                        w.note(format!(
                            "`{key_str}` is {}: removed",
                            chef_ir::json_kind(other)
                        ));
                    }),
                },
                "dependencies" => {
                    self.with_segment(key_str, |w| w.dependencies(value, &mut out, depth))
                }
                "required" => {
                    if let Some(required) =
                        self.with_segment("required", |w| w.required(value, is_root))
                    {
                        out.insert(key.clone(), required);
                    }
                }
                "enum" => match value {
                    Value::Array(members) if members.is_empty() => self.with_segment("enum", |w| {
                        w.note("empty `enum` removed".to_owned());
                    }),
                    Value::Array(_) => {
                        out.insert(key.clone(), value.clone());
                    }
                    other => {
                        self.with_segment("enum", |w| {
                            w.note(
                                "`enum` given as a single value read as a one-member list"
                                    .to_owned(),
                            );
                        });
                        out.insert(key.clone(), Value::Array(vec![other.clone()]));
                    }
                },
                "exclusiveMinimum" | "exclusiveMaximum" => {
                    if let Some(v) =
                        self.with_segment(key_str, |w| w.exclusive(key_str, value, map))
                    {
                        out.insert(key.clone(), v);
                    }
                }
                "pattern" => match value {
                    Value::String(pattern) if pattern_compiles(pattern) => {
                        out.insert(key.clone(), value.clone());
                    }
                    Value::String(pattern) => self.with_segment("pattern", |w| {
                        w.note(format!(
                            "pattern `{}` cannot run on the linear-time regex engine: dropped",
                            preview_str(pattern)
                        ));
                    }),
                    other => self.with_segment("pattern", |w| {
                        w.note(format!(
                            "`pattern` is {}: removed",
                            chef_ir::json_kind(other)
                        ));
                    }),
                },
                "format" | "$anchor" | "$dynamicAnchor" | "uniqueItems" => {
                    let well_typed = if key_str == "uniqueItems" {
                        value.is_boolean()
                    } else {
                        value.is_string()
                    };
                    if well_typed {
                        out.insert(key.clone(), value.clone());
                    } else {
                        self.with_segment(key_str, |w| {
                            w.note(format!(
                                "`{key_str}` is {}: removed",
                                chef_ir::json_kind(value)
                            ));
                        });
                    }
                }
                "$schema" => {
                    if let Some(what) = dialect_note(value) {
                        self.with_segment("$schema", |w| w.note(what));
                    }
                }
                "$id" | "id" if value.is_string() || key_str == "$id" => {
                    // Identifiers would re-base references we have already resolved.
                    self.with_segment(key_str, |w| {
                        w.note(format!(
                            "`{key_str}` removed: references are resolved within the document"
                        ));
                    });
                }
                "$dynamicRef" | "$recursiveRef" | "$recursiveAnchor" => {
                    self.with_segment(key_str, |w| {
                        w.note(format!("`{key_str}` is not followed: accepts any value"));
                    })
                }
                _ if SINGLE.contains(&key_str) => match value {
                    Value::Object(_) | Value::Bool(_) => {
                        let v = self.with_segment(key_str, |w| w.schema(value, depth + 1));
                        out.insert(key.clone(), v);
                    }
                    other => self.with_segment(key_str, |w| {
                        w.note(format!(
                            "`{key_str}` is {}: removed",
                            chef_ir::json_kind(other)
                        ));
                    }),
                },
                _ if LISTS.contains(&key_str) => match value {
                    Value::Array(list) if !list.is_empty() => {
                        let v = self.with_segment(key_str, |w| w.list(list, depth));
                        out.insert(key.clone(), Value::Array(v));
                    }
                    other => self.with_segment(key_str, |w| {
                        w.note(format!("`{key_str}` is {}: removed", describe_list(other)));
                    }),
                },
                _ if MAPS.contains(&key_str) => match value {
                    Value::Object(entries) => {
                        let v = self.with_segment(key_str, |w| w.map(entries, depth));
                        out.insert(key.clone(), Value::Object(v));
                    }
                    other => self.with_segment(key_str, |w| {
                        w.note(format!(
                            "`{key_str}` is {}: removed",
                            chef_ir::json_kind(other)
                        ));
                    }),
                },
                _ if NUMBERS.contains(&key_str) => {
                    if let Some(v) = self.with_segment(key_str, |w| w.number(key_str, value)) {
                        out.insert(key.clone(), v);
                    }
                }
                _ if COUNTS.contains(&key_str) => {
                    if let Some(v) = self.with_segment(key_str, |w| w.count(key_str, value)) {
                        out.insert(key.clone(), v);
                    }
                }
                _ => {
                    out.insert(key.clone(), value.clone());
                }
            }
        }

        if tuple {
            if let Some(additional) = map.get("additionalItems") {
                let v = self.with_segment("additionalItems", |w| {
                    w.note("`additionalItems` beside tuple `items` read as `items`".to_owned());
                    w.schema(additional, depth + 1)
                });
                out.insert("items".to_owned(), v);
            }
        } else if map.contains_key("additionalItems") {
            self.with_segment("additionalItems", |w| {
                w.note("`additionalItems` without tuple `items` has no effect: removed".to_owned());
            });
        }

        let own_draft3 = out.get("required") == Some(&Value::Bool(true));
        if own_draft3 {
            out.shift_remove("required");
            self.note("draft-3 `required: true` read as required by the parent object".to_owned());
        }
        self.finish_required(&mut out, flagged_required);
        self.finish_type(&mut out, types, type_position, nullable, is_root);
        self.finish_defs(&mut out, map, &defs_keys, depth, is_root);
        self.draft3_required = own_draft3;
        out
    }

    /// Inlines a `$ref` when it can; `None` means: keep the node (and its `$ref`) as is.
    fn reference(
        &mut self,
        map: &Map<String, Value>,
        reference: &Value,
        depth: usize,
    ) -> Option<Map<String, Value>> {
        let Some(target_ref) = reference.as_str() else {
            let mut rest = map.clone();
            rest.shift_remove("$ref");
            self.with_segment("$ref", |w| {
                w.note(format!(
                    "`$ref` is {}: removed",
                    chef_ir::json_kind(reference)
                ));
            });
            return Some(self.object(&rest, depth, false));
        };
        let resolved = resolve_pointer(self.root, target_ref);
        let Some(target) = resolved else {
            let mut rest = map.clone();
            rest.shift_remove("$ref");
            self.note(format!(
                "reference `{}` cannot be resolved within the document: accepts any value",
                preview_str(target_ref)
            ));
            return Some(self.object(&rest, depth, false));
        };
        let recursive = self.refs.iter().any(|r| r == target_ref);
        let cost = node_count(target);
        let over_budget = cost > self.inline_budget
            || self.refs.len() >= INLINE_MAX_NESTING
            || depth >= INLINE_MAX_DEPTH;
        if recursive || over_budget {
            self.kept_refs += 1;
            self.note(format!(
                "{} reference `{}` kept as a reference",
                if recursive { "recursive" } else { "deep" },
                preview_str(target_ref)
            ));
            // The caller walks the siblings and keeps `$ref` verbatim.
            return None;
        }
        self.inline_budget -= cost;
        self.note(format!("reference `{}` inlined", preview_str(target_ref)));
        self.refs.push(target_ref.to_owned());
        let inlined = self.schema(target, depth);
        self.refs.pop();
        let mut siblings = map.clone();
        siblings.shift_remove("$ref");
        let only_annotations = siblings.keys().all(|k| ANNOTATIONS.contains(&k.as_str()));
        match inlined {
            Value::Object(mut target_map) if only_annotations => {
                for (k, v) in siblings {
                    target_map.insert(k, v);
                }
                Some(target_map)
            }
            Value::Bool(true) => Some(self.object(&siblings, depth, false)),
            other => {
                let mut rest = self.object(&siblings, depth, false);
                match rest.get_mut("allOf") {
                    Some(Value::Array(all)) => all.insert(0, other),
                    _ => {
                        rest.insert("allOf".to_owned(), Value::Array(vec![other]));
                    }
                }
                Some(rest)
            }
        }
    }

    fn list(&mut self, list: &[Value], depth: usize) -> Vec<Value> {
        let mut out = Vec::with_capacity(list.len());
        for (i, item) in list.iter().enumerate() {
            let v = self.with_segment(&i.to_string(), |w| w.schema(item, depth + 1));
            out.push(v);
        }
        out
    }

    fn map(&mut self, entries: &Map<String, Value>, depth: usize) -> Map<String, Value> {
        let mut out = Map::new();
        for (name, item) in entries {
            let v = self.with_segment(name, |w| w.schema(item, depth + 1));
            out.insert(name.clone(), v);
        }
        out
    }

    /// Canonical type names from a `type` value; `None` means no type constraint.
    fn types(&mut self, value: &Value) -> Option<Vec<&'static str>> {
        let names: Vec<&Value> = match value {
            Value::String(_) => vec![value],
            Value::Array(list) => list.iter().collect(),
            other => {
                self.note(format!("`type` is {}: removed", chef_ir::json_kind(other)));
                return None;
            }
        };
        let mut out: Vec<&'static str> = Vec::new();
        let mut any = false;
        for name in names {
            let Some(name) = name.as_str() else {
                self.note(format!("type entry {} removed", preview_value(name)));
                continue;
            };
            match canonical_type(name) {
                Some(Canonical::Type(t)) => {
                    if t != name {
                        self.note(format!("type `{}` read as `{t}`", preview_str(name)));
                    }
                    if out.contains(&t) {
                        if t == name {
                            self.note(format!("duplicate type `{t}` removed"));
                        }
                    } else {
                        out.push(t);
                    }
                }
                Some(Canonical::Any) => {
                    self.note(format!(
                        "type `{}` read as no type constraint",
                        preview_str(name)
                    ));
                    any = true;
                }
                None => {
                    self.note(format!(
                        "unknown type `{}` removed: accepts any value",
                        preview_str(name)
                    ));
                    any = true;
                }
            }
        }
        if any || out.is_empty() {
            None
        } else {
            Some(out)
        }
    }

    /// Settles `type` once every keyword of the node is known.
    fn finish_type(
        &mut self,
        out: &mut Map<String, Value>,
        types: Option<Vec<&'static str>>,
        position: Option<usize>,
        nullable: bool,
        is_root: bool,
    ) {
        let declared = types.is_some();
        let mut types = types.unwrap_or_default();
        if !declared && position.is_none() {
            let inferred = if is_root
                || [
                    "properties",
                    "required",
                    "additionalProperties",
                    "patternProperties",
                ]
                .iter()
                .any(|k| out.contains_key(*k))
            {
                Some("object")
            } else if out.contains_key("items") || out.contains_key("prefixItems") {
                Some("array")
            } else {
                None
            };
            if let Some(t) = inferred {
                self.note(format!("missing `type`: read as `{t}`"));
                types.push(t);
            }
        }
        if !types.is_empty() {
            if let Some(Value::Array(members)) = out.get("enum") {
                let mut widened: Vec<&'static str> = Vec::new();
                for member in members {
                    if !types.iter().any(|t| type_admits(t, member)) {
                        let t = json_type(member);
                        if !types.contains(&t) && !widened.contains(&t) {
                            widened.push(t);
                        }
                    }
                }
                if !widened.is_empty() {
                    self.note(format!(
                        "`enum` has {} members but `type` does not admit them: type widened",
                        widened.join(", ")
                    ));
                    types.extend(widened);
                }
            }
            if nullable && !types.contains(&"null") {
                types.push("null");
            }
        }
        let value = match types.as_slice() {
            [] => None,
            [single] => Some(Value::from(*single)),
            many => Some(Value::Array(many.iter().map(|t| Value::from(*t)).collect())),
        };
        match (value, position) {
            (Some(v), Some(_)) => {
                // Replaces the placeholder in place.
                out.insert("type".to_owned(), v);
            }
            (Some(v), None) => {
                // A `type` we add goes first, where readers look for it.
                insert_first(out, "type", v);
            }
            (None, Some(_)) => {
                out.shift_remove("type");
            }
            (None, None) => {}
        }
    }

    /// Validates a `required` value: strings only, no duplicates.
    fn required(&mut self, value: &Value, is_root: bool) -> Option<Value> {
        match value {
            Value::Array(list) => {
                let mut names: Vec<Value> = Vec::with_capacity(list.len());
                for entry in list {
                    match entry {
                        Value::String(_) if names.contains(entry) => {
                            self.note(format!(
                                "duplicate required name {} removed",
                                preview_value(entry)
                            ));
                        }
                        Value::String(_) => names.push(entry.clone()),
                        other => self.note(format!(
                            "required entry {} is not a name: removed",
                            preview_value(other)
                        )),
                    }
                }
                (!names.is_empty()).then_some(Value::Array(names))
            }
            Value::String(name) => {
                self.note("`required` given as a string read as a one-name list".to_owned());
                Some(Value::Array(vec![Value::from(name.clone())]))
            }
            Value::Bool(true) if !is_root => {
                // Draft-3 form: moved to the parent by the caller.
                Some(Value::Bool(true))
            }
            other => {
                self.note(format!(
                    "`required` is {}: removed",
                    chef_ir::json_kind(other)
                ));
                None
            }
        }
    }

    /// Adds draft-3 flagged names to `required` and declares required names that are absent
    /// from a non-empty `properties`.
    fn finish_required(&mut self, out: &mut Map<String, Value>, flagged: Vec<String>) {
        if !flagged.is_empty() {
            let entry = out
                .entry("required")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(list) = entry {
                for name in flagged {
                    let name = Value::from(name);
                    if !list.contains(&name) {
                        list.push(name);
                    }
                }
            }
        }
        let required: Vec<String> = match out.get("required") {
            Some(Value::Array(list)) => list
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            _ => return,
        };
        let Some(Value::Object(props)) = out.get_mut("properties") else {
            return;
        };
        if props.is_empty() {
            return;
        }
        let mut added = Vec::new();
        for name in required {
            if !props.contains_key(&name) {
                props.insert(name.clone(), Value::Object(Map::new()));
                added.push(name);
            }
        }
        for name in added {
            self.note(format!(
                "required `{}` is not in `properties`: declared, accepting any value",
                preview_str(&name)
            ));
        }
    }

    /// Normalises `$defs`/`definitions`: dropped at the root when every reference was inlined.
    fn finish_defs(
        &mut self,
        out: &mut Map<String, Value>,
        original: &Map<String, Value>,
        keys: &[String],
        depth: usize,
        is_root: bool,
    ) {
        for key in keys {
            if is_root && self.kept_refs == 0 {
                out.shift_remove(key);
                self.with_segment(key, |w| {
                    w.note(format!(
                        "`{key}` removed: every reference to it was inlined"
                    ));
                });
                continue;
            }
            if let Some(Value::Object(entries)) = original.get(key) {
                let v = self.with_segment(key, |w| w.map(entries, depth));
                out.insert(key.clone(), Value::Object(v));
            } else {
                out.shift_remove(key);
            }
        }
    }

    /// Turns draft-7 `dependencies` into `dependentRequired` / `dependentSchemas`.
    fn dependencies(&mut self, value: &Value, out: &mut Map<String, Value>, depth: usize) {
        let Value::Object(entries) = value else {
            self.note(format!(
                "`dependencies` is {}: removed",
                chef_ir::json_kind(value)
            ));
            return;
        };
        let mut required = Map::new();
        let mut schemas = Map::new();
        for (name, dep) in entries {
            match dep {
                Value::Array(names) => {
                    let names: Vec<Value> =
                        names.iter().filter(|n| n.is_string()).cloned().collect();
                    required.insert(name.clone(), Value::Array(names));
                }
                Value::Object(_) | Value::Bool(_) => {
                    let v = self.with_segment(name, |w| w.schema(dep, depth + 1));
                    schemas.insert(name.clone(), v);
                }
                other => self.note(format!(
                    "dependency of `{}` is {}: removed",
                    preview_str(name),
                    chef_ir::json_kind(other)
                )),
            }
        }
        self.note("`dependencies` read as `dependentRequired`/`dependentSchemas`".to_owned());
        if !required.is_empty() {
            out.insert("dependentRequired".to_owned(), Value::Object(required));
        }
        if !schemas.is_empty() {
            out.insert("dependentSchemas".to_owned(), Value::Object(schemas));
        }
    }

    /// Draft-4 boolean exclusive bounds become 2020-12 numeric ones.
    fn exclusive(&mut self, key: &str, value: &Value, map: &Map<String, Value>) -> Option<Value> {
        match value {
            Value::Bool(flag) => {
                let bound = if key == "exclusiveMinimum" {
                    "minimum"
                } else {
                    "maximum"
                };
                match map.get(bound).and_then(number_of) {
                    Some(limit) if *flag => {
                        self.note(format!("draft-4 `{key}: true` read as `{key}: {limit}`"));
                        // The plain bound stays; the exclusive one is stricter and wins.
                        Some(Value::Number(limit))
                    }
                    _ => {
                        self.note(format!("draft-4 `{key}: {flag}` removed"));
                        None
                    }
                }
            }
            other => self.number(key, other),
        }
    }

    fn number(&mut self, key: &str, value: &Value) -> Option<Value> {
        let Some(n) = number_of(value) else {
            self.note(format!("`{key}` is {}: removed", preview_value(value)));
            return None;
        };
        if key == "multipleOf" && n.as_f64().is_none_or(|f| f <= 0.0) {
            self.note(format!("`multipleOf` {n} is not positive: removed"));
            return None;
        }
        if !value.is_number() {
            self.note(format!(
                "`{key}` {} read as the number {n}",
                preview_value(value)
            ));
        }
        Some(Value::Number(n))
    }

    fn count(&mut self, key: &str, value: &Value) -> Option<Value> {
        let parsed = match value {
            Value::Number(n) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 1e18)
                    .map(|f| f as u64)
            }),
            Value::String(s) => s.trim().parse::<u64>().ok(),
            _ => None,
        };
        match parsed {
            Some(count) => {
                if value.as_u64() != Some(count) {
                    self.note(format!("`{key}` {} read as {count}", preview_value(value)));
                }
                Some(Value::from(count))
            }
            None => {
                self.note(format!(
                    "`{key}` {} is not a count: removed",
                    preview_value(value)
                ));
                None
            }
        }
    }

    /// The document root must describe an object.
    fn root_type(&mut self, out: &mut Map<String, Value>) -> Result<(), SchemaError> {
        let types: Vec<&str> = match out.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
            _ => {
                insert_first(out, "type", Value::from("object"));
                self.note("no type constraint at the top: read as `object`".to_owned());
                return Ok(());
            }
        };
        if !types.contains(&"object") {
            return Err(SchemaError::NotAnObjectType {
                tool: self.tool.to_owned(),
                found: types.join(" or "),
            });
        }
        if types.len() > 1 {
            self.note(format!(
                "top-level type `{}` read as `object`: tool arguments are an object",
                types.join(", ")
            ));
            out.insert("type".to_owned(), Value::from("object"));
        }
        Ok(())
    }
}

/// Replaces every `$ref` left in a normalised schema by "accepts any value" (its siblings
/// stay), recording each. Used when the validator cannot follow a kept reference, for
/// instance one that pointed at a tuple `items` now read as `prefixItems`.
pub(crate) fn open_references(normalised: &mut NormalisedSchema, tool: &str) {
    let mut stack: Vec<(&mut Value, String)> = vec![(&mut normalised.schema, String::new())];
    while let Some((node, path)) = stack.pop() {
        match node {
            Value::Object(map) => {
                if let Some(reference) = map.shift_remove("$ref") {
                    normalised.notes.push(Normalisation {
                        tool: tool.to_owned(),
                        path: path.clone(),
                        what: format!(
                            "reference {} cannot be followed: accepts any value",
                            preview_value(&reference)
                        ),
                    });
                }
                for (key, child) in map.iter_mut() {
                    let child_path = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    stack.push((child, child_path));
                }
            }
            Value::Array(list) => {
                for (i, child) in list.iter_mut().enumerate() {
                    stack.push((child, format!("{path}.{i}")));
                }
            }
            _ => {}
        }
    }
}

/// Inserts a key at the front of a map (serde_json's `Map` keeps insertion order).
fn insert_first(map: &mut Map<String, Value>, key: &str, value: Value) {
    let rest = std::mem::take(map);
    map.insert(key.to_owned(), value);
    for (k, v) in rest {
        if k != key {
            map.insert(k, v);
        }
    }
}

enum Canonical {
    Type(&'static str),
    Any,
}

/// Maps a type name, standard or not, to a JSON Schema type.
fn canonical_type(name: &str) -> Option<Canonical> {
    let lower = name.trim().to_ascii_lowercase();
    let t = match lower.as_str() {
        "string" | "str" | "text" | "char" | "character" | "varchar" | "date" | "datetime"
        | "date-time" | "time" | "uuid" | "email" | "uri" | "url" => "string",
        "integer" | "int" | "long" | "short" | "int8" | "int16" | "int32" | "int64" | "uint"
        | "uint8" | "uint16" | "uint32" | "uint64" | "i32" | "i64" | "u32" | "u64" | "bigint" => {
            "integer"
        }
        "number" | "float" | "double" | "decimal" | "real" | "num" | "numeric" | "float32"
        | "float64" | "f32" | "f64" => "number",
        "boolean" | "bool" => "boolean",
        "array" | "list" | "tuple" | "set" | "sequence" | "seq" | "vec" | "vector" => "array",
        "object" | "dict" | "dictionary" | "map" | "hash" | "hashmap" | "record" | "struct"
        | "obj" | "json" => "object",
        "null" | "none" | "nil" => "null",
        "any" | "mixed" | "unknown" | "*" => return Some(Canonical::Any),
        _ => return None,
    };
    Some(Canonical::Type(t))
}

/// Whether a JSON Schema type admits a value.
fn type_admits(t: &str, v: &Value) -> bool {
    match t {
        "string" => v.is_string(),
        "integer" => is_integer(v),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        _ => true,
    }
}

/// A number with no fractional part (`3` and `3.0`).
pub(crate) fn is_integer(v: &Value) -> bool {
    match v {
        Value::Number(n) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

/// The JSON Schema type name of a value (`integer` for whole numbers).
pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) if is_integer(v) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn describe_list(v: &Value) -> &'static str {
    match v {
        Value::Array(_) => "an empty list",
        other => chef_ir::json_kind(other),
    }
}

/// A number, or a string holding one.
fn number_of(v: &Value) -> Option<Number> {
    match v {
        Value::Number(n) => Some(n.clone()),
        Value::String(s) => {
            let s = s.trim();
            if let Ok(i) = s.parse::<i64>() {
                return Some(Number::from(i));
            }
            s.parse::<f64>().ok().and_then(Number::from_f64)
        }
        _ => None,
    }
}

/// Whether the validator's regex engine (linear-time `regex`) accepts a pattern.
fn pattern_compiles(pattern: &str) -> bool {
    let mut schema = Map::new();
    schema.insert("pattern".to_owned(), Value::from(pattern));
    super::options().build(&Value::Object(schema)).is_ok()
}

/// Resolves a local JSON Pointer reference (`#`, `#/$defs/x`, percent- and `~`-escaped).
fn resolve_pointer<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let fragment = reference.strip_prefix('#')?;
    if fragment.is_empty() {
        return Some(root);
    }
    let fragment = fragment.strip_prefix('/')?;
    let mut node = root;
    for raw in fragment.split('/') {
        let segment = percent_decode(raw)?.replace("~1", "/").replace("~0", "~");
        node = match node {
            Value::Object(map) => map.get(&segment)?,
            Value::Array(list) => list.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// How many JSON nodes a value holds, counted without recursion.
fn node_count(v: &Value) -> usize {
    let mut count = 0;
    let mut stack = vec![v];
    while let Some(node) = stack.pop() {
        count += 1;
        match node {
            Value::Array(list) => stack.extend(list),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    count
}

/// Whether a value nests deeper than `limit` containers, measured without recursion.
pub(crate) fn depth_exceeds(v: &Value, limit: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(v, 1)];
    while let Some((node, depth)) = stack.pop() {
        let is_container = node.is_array() || node.is_object();
        if is_container && depth > limit {
            return true;
        }
        match node {
            Value::Array(list) => stack.extend(list.iter().map(|c| (c, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|c| (c, depth + 1))),
            _ => {}
        }
    }
    false
}

/// A string cut to a readable length for a note.
fn preview_str(s: &str) -> String {
    super::render::cut(s, 80).into_owned()
}

/// A value as short JSON for a note.
fn preview_value(v: &Value) -> String {
    super::render::preview(v, 80)
}

/// What [`quick_normalise`] found: the schema is already normal, apart from top-level keys
/// that normalisation drops (`$schema`, an empty `required`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Quick {
    /// The root keys normalisation removes: the normalised schema is the input without
    /// them.
    pub(crate) drops: RootDrops,
    /// The notes normalisation would record (only the `$schema` one can occur).
    pub(crate) notes: Vec<Normalisation>,
}

/// Top-level keys that normalisation removes from a schema that is otherwise normal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct RootDrops {
    /// `$schema` (always removed; noted unless it names draft 2020-12).
    pub(crate) dialect: bool,
    /// `"required": []` (removed silently).
    pub(crate) empty_required: bool,
}

impl RootDrops {
    /// Removes the keys from a parsed copy of the input schema.
    pub(crate) fn apply(self, schema: &mut Value) {
        if let Value::Object(map) = schema {
            if self.dialect {
                map.shift_remove("$schema");
            }
            if self.empty_required {
                map.shift_remove("required");
            }
        }
    }
}

/// Past this nesting (of JSON values, the root being 1) [`quick_normalise`] gives up, well
/// inside both [`Limits::max_schema_depth`]'s default and serde_json's parser limit (128),
/// so a schema it accepts can be written and parsed back with bounded recursion.
pub(crate) const QUICK_MAX_DEPTH: usize = 64;

/// Tells, without building anything, whether [`normalise_schema`] would return `schema`
/// unchanged (but for a dropped top-level `$schema`) and record no other note.
///
/// Conservative: `None` means "not sure" and the caller runs the full normalisation. It
/// accepts the shapes well-formed tool schemas use (standard type names, `properties`,
/// `items`, a `required` list naming declared properties, enums the type admits, numeric
/// and length bounds, the combinators, annotations) and refuses everything normalisation
/// would rewrite or must inspect further (`$ref`, `pattern`, non-standard names, …). The
/// unit tests check its answer against [`normalise_schema`] on every fixture schema and on
/// generated ones.
pub(crate) fn quick_normalise(tool: &str, schema: &Value) -> Option<Quick> {
    let Value::Object(map) = schema else {
        return None;
    };
    let mut root_type = None;
    let mut dialect = None;
    let mut empty_required = false;
    for (key, value) in map {
        match key.as_str() {
            "type" => root_type = value.as_str(),
            "$schema" => dialect = Some(value),
            "required" => empty_required = value.as_array().is_some_and(Vec::is_empty),
            _ => {}
        }
    }
    if root_type != Some("object") || !quick_object(map, 1, true) {
        return None;
    }
    let mut notes = Vec::new();
    if let Some(what) = dialect.and_then(dialect_note) {
        notes.push(Normalisation {
            tool: tool.to_owned(),
            path: "$schema".to_owned(),
            what,
        });
    }
    Some(Quick {
        drops: RootDrops {
            dialect: dialect.is_some(),
            empty_required,
        },
        notes,
    })
}

/// The note for a `$schema` keyword, which normalisation always removes; `None` when it
/// names draft 2020-12 (removed silently).
fn dialect_note(value: &Value) -> Option<String> {
    let known = value.as_str().is_some_and(|s| s.contains("2020-12"));
    (!known).then(|| {
        format!(
            "`$schema` {} removed: read as JSON Schema 2020-12",
            preview_value(value)
        )
    })
}

/// A standard type name, which normalisation keeps as written.
fn is_standard_type(name: &str) -> bool {
    matches!(
        name,
        "string" | "integer" | "number" | "boolean" | "array" | "object" | "null"
    )
}

/// A subschema position: `true`/`false` are kept as they are.
fn quick_schema(v: &Value, depth: usize) -> bool {
    match v {
        Value::Bool(_) => true,
        Value::Object(map) => quick_object(map, depth, false),
        _ => false,
    }
}

/// A value normalisation copies verbatim (annotation, default, enum member), checked only
/// for nesting.
fn quick_shallow(v: &Value, depth: usize) -> bool {
    if depth > QUICK_MAX_DEPTH {
        return false;
    }
    match v {
        Value::Array(list) => list.iter().all(|x| quick_shallow(x, depth + 1)),
        Value::Object(map) => map.values().all(|x| quick_shallow(x, depth + 1)),
        _ => true,
    }
}

/// One schema object at nesting `depth`; `is_root` allows what normalisation drops from the
/// root only (`$schema`, an empty `required`).
fn quick_object(map: &Map<String, Value>, depth: usize, is_root: bool) -> bool {
    if depth > QUICK_MAX_DEPTH {
        return false;
    }
    let mut types: &[Value] = &[];
    let mut has_type = false;
    // Read in the one pass over the keys (each `Map::get` would hash the key).
    let mut infers_type = false;
    let mut members: Option<&Vec<Value>> = None;
    let mut required: Option<&Vec<Value>> = None;
    let mut properties: Option<&Map<String, Value>> = None;
    for (key, value) in map {
        let ok = match key.as_str() {
            "type" => {
                has_type = true;
                match value {
                    Value::String(name) => {
                        types = std::slice::from_ref(value);
                        is_standard_type(name)
                    }
                    // One name in a list is rewritten as a plain string; duplicates are
                    // removed.
                    Value::Array(list) if list.len() >= 2 => {
                        types = list;
                        list.iter().enumerate().all(|(i, t)| {
                            t.as_str().is_some_and(is_standard_type)
                                && list.get(..i).is_some_and(|before| !before.contains(t))
                        })
                    }
                    _ => false,
                }
            }
            "properties" => value.as_object().is_some_and(|props| {
                infers_type = true;
                properties = Some(props);
                props.values().all(|spec| quick_schema(spec, depth + 2))
            }),
            "items" => {
                infers_type = true;
                matches!(value, Value::Object(_) | Value::Bool(_)) && quick_schema(value, depth + 1)
            }
            "required" => value.as_array().is_some_and(|list| {
                infers_type = true;
                required = Some(list);
                (is_root || !list.is_empty())
                    && list.iter().enumerate().all(|(i, name)| {
                        name.is_string()
                            && list.get(..i).is_some_and(|before| !before.contains(name))
                    })
            }),
            "enum" => value.as_array().is_some_and(|list| {
                members = Some(list);
                !list.is_empty() && quick_shallow(value, depth + 1)
            }),
            "format" => value.is_string(),
            "uniqueItems" => value.is_boolean(),
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => value.is_number(),
            "multipleOf" => value.as_f64().is_some_and(|f| f > 0.0),
            "$schema" => is_root && quick_shallow(value, depth + 1),
            "description" | "title" | "default" | "examples" | "const" | "deprecated"
            | "readOnly" | "writeOnly" | "$comment" | "contentEncoding" | "contentMediaType" => {
                quick_shallow(value, depth + 1)
            }
            k if SINGLE.contains(&k) => {
                infers_type |= k == "additionalProperties";
                matches!(value, Value::Object(_) | Value::Bool(_)) && quick_schema(value, depth + 1)
            }
            k if LISTS.contains(&k) => value.as_array().is_some_and(|list| {
                infers_type |= k == "prefixItems";
                !list.is_empty() && list.iter().all(|s| quick_schema(s, depth + 2))
            }),
            k if COUNTS.contains(&k) => value.as_u64().is_some(),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    // Normalisation infers a missing type from `properties`, `required`,
    // `additionalProperties`, `patternProperties` (refused above), `items` or `prefixItems`.
    if !has_type && infers_type {
        return false;
    }
    // Enum members the type does not admit widen the type.
    if let Some(members) = members
        && !types.is_empty()
        && !members.iter().all(|m| {
            types
                .iter()
                .any(|t| t.as_str().is_some_and(|t| type_admits(t, m)))
        })
    {
        return false;
    }
    // Required names absent from a non-empty `properties` are declared.
    if let (Some(required), Some(props)) = (required, properties)
        && !props.is_empty()
        && !required
            .iter()
            .all(|name| name.as_str().is_some_and(|n| props.contains_key(n)))
    {
        return false;
    }
    true
}

#[cfg(test)]
mod quick_tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// `quick_normalise` may only answer when its answer is what the full normaliser gives.
    fn agrees(schema: &Value) -> bool {
        let Some(quick) = quick_normalise("t", schema) else {
            return false;
        };
        let full = normalise_schema("t", schema).unwrap();
        let mut expected = schema.clone();
        quick.drops.apply(&mut expected);
        // Compared as text: `Map` equality ignores key order, the output does not.
        assert_eq!(
            serde_json::to_string(&full.schema).unwrap(),
            serde_json::to_string(&expected).unwrap(),
            "{schema}"
        );
        assert_eq!(full.notes, quick.notes, "{schema}");
        true
    }

    fn fixture_schemas(file: &str) -> Vec<Value> {
        let path = format!("{}/../../tests/fixtures/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(path).unwrap();
        chef_ir::load_tools_from_str(&text)
            .unwrap()
            .tools
            .into_iter()
            .map(|t| t.input_schema)
            .collect()
    }

    #[test]
    fn the_fast_path_takes_most_real_schemas_and_agrees_with_normalisation() {
        let real = fixture_schemas("real-mcp-tools.json");
        let quick = real.iter().filter(|s| agrees(s)).count();
        assert!(quick >= 140, "{quick} of {}", real.len());
        for file in ["synthetic-100-tools.json", "synthetic-100-tools-nsop.json"] {
            for schema in fixture_schemas(file) {
                agrees(&schema);
            }
        }
    }

    #[test]
    fn the_fast_path_declines_what_normalisation_rewrites() {
        let declined = [
            json!({"properties": {"a": {"type": "string"}}}),
            json!({"type": "dict"}),
            json!({"type": ["object"]}),
            json!({"type": ["object", "null"]}),
            json!({"type": "object", "properties": {"a": {"type": "float"}}}),
            json!({"type": "object", "properties": {"a": {"type": ["string", "string"]}}}),
            json!({"type": "object", "properties": {"a": {"type": ["string"]}}}),
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {}}}),
            json!({"type": "object", "properties": {"a": {"type": "number", "enum": ["x"]}}}),
            json!({"type": "object", "properties": {"a": {"enum": []}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "^a"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "ghost"]}),
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "a"]}),
            json!({"type": "object", "properties": {"a": {"type": "object", "required": []}}}),
            json!({"type": "object", "required": "a"}),
            json!({"type": "object", "properties": {"a": {"type": "string", "required": true}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "nullable": true}}}),
            json!({"type": "object", "properties": {"a": {"items": {"type": "string"}}}}),
            json!({"type": "object", "properties": {"a": {"type": "array", "items": [{}]}}}),
            json!({"type": "object", "properties": {"a": {"type": "integer", "minimum": "1"}}}),
            json!({"type": "object", "properties": {"a": {"type": "integer", "multipleOf": 0}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "maxLength": 1.5}}}),
            json!({"type": "object", "properties": {"a": {"type": "integer", "exclusiveMinimum": true, "minimum": 1}}}),
            json!({"type": "object", "properties": {"a": {"$schema": "x"}}}),
            json!({"type": "object", "$id": "x"}),
            json!({"type": "object", "id": "x"}),
            json!({"type": "object", "properties": {"a": "int"}}),
            json!({"type": "object", "properties": {"a": 3}}),
            json!({"type": "object", "anyOf": []}),
            json!({"type": "object", "dependencies": {"a": ["b"]}}),
            json!({"type": "object", "additionalItems": false}),
            json!({"type": "object", "properties": []}),
            json!("object"),
            json!(true),
            json!(null),
        ];
        for schema in &declined {
            assert!(quick_normalise("t", schema).is_none(), "{schema}");
        }
    }

    #[test]
    fn the_fast_path_reports_the_dialect_note_as_normalisation_does() {
        for schema in [
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}),
            json!({"type": "object", "$schema": "https://json-schema.org/draft/2020-12/schema"}),
            json!({"type": "object", "$schema": 7, "properties": {"a": {"type": "string"}}}),
        ] {
            assert!(agrees(&schema), "{schema}");
        }
        let quick = quick_normalise("t", &json!({"$schema": "x", "type": "object"})).unwrap();
        assert!(quick.drops.dialect);
        assert_eq!(quick.notes[0].path, "$schema");
    }

    #[test]
    fn deep_schemas_take_the_full_path() {
        let mut deep = json!({"type": "string"});
        for _ in 0..40 {
            deep = json!({"type": "object", "properties": {"a": deep}});
        }
        assert!(quick_normalise("t", &deep).is_none());
        let mut default = json!(1);
        for _ in 0..70 {
            default = json!([default]);
        }
        let schema = json!({"type": "object", "default": default});
        assert!(quick_normalise("t", &schema).is_none());
    }

    /// Schema-like documents mixing standard and non-standard shapes.
    fn schema_like() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(json!("string")),
            Just(json!("object")),
            Just(json!("integer")),
            Just(json!("float")),
            Just(json!(["string", "null"])),
            Just(json!(["string", "string"])),
            Just(json!(1)),
            Just(json!(1.5)),
            Just(json!(-1)),
            Just(json!(0)),
            Just(json!(true)),
            Just(json!(null)),
            Just(json!("a")),
            Just(json!(["a", "b"])),
            Just(json!(["a", 1])),
            Just(json!([])),
            Just(json!({})),
        ];
        let keys = prop_oneof![
            Just("type"),
            Just("properties"),
            Just("items"),
            Just("required"),
            Just("enum"),
            Just("description"),
            Just("default"),
            Just("minimum"),
            Just("maxLength"),
            Just("multipleOf"),
            Just("additionalProperties"),
            Just("anyOf"),
            Just("format"),
            Just("uniqueItems"),
            Just("a"),
            Just("b"),
            Just("$schema"),
            Just("const"),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::vec((keys.clone(), inner), 0..6).prop_map(|pairs| {
                    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn whenever_the_fast_path_answers_normalisation_agrees(mut schema in schema_like()) {
            // Half the cases start from a plausible root so the fast path gets exercised.
            if let Value::Object(map) = &mut schema
                && map.len() % 2 == 0
            {
                map.insert("type".to_owned(), json!("object"));
            }
            agrees(&schema);
        }
    }
}
