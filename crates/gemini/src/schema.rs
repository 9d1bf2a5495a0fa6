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
//! | `type` is an array (`["string","null"]`) | one non-`null` member: that type; two or more (`["string","array"]`): `anyOf`, one member per type holding that type's keywords (`items` in the array's, `minLength` in the string's, `minimum` in the number's and the integer's; a keyword of a type not in the union is dropped), the rest (`description`) left on the node; `nullable: true` if `null` was a member. A node with its own `anyOf`/`oneOf` keeps the first non-`null` member (compress.md §10.4 takes the first member; keeping them all, and `null` as `nullable`, loses less) |
//! | `type: "array"` without `items` | `items: {}` appended (never an invented item type) |
//! | `items` on a non-array `type` | removed |
//! | `items` as an array (tuple form) | one schema: the member, or `anyOf` of the members |
//! | `enum` of strings and `null` | the strings, and `nullable: true` |
//! | `enum` on a non-string `type`, or with another non-string value | removed, type kept (Gemini: "enum only allowed for STRING type") |
//! | `properties` (and `required`, `minProperties`, `maxProperties`, `propertyOrdering`) on a non-object `type` | removed ("properties: only allowed for OBJECT type") |
//! | `enum` of strings without `type` | `type: "string"` added (Gemini rejects an untyped enum) |
//! | `const` (string) | `enum: [const]` when there is no `enum` |
//! | `const` (number) | `minimum` and `maximum` both the number (and `type` `integer` or `number` when there is none) |
//! | `const` (boolean) | `type: "boolean"` when there is no type (the value itself cannot be said) |
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

use std::rc::Rc;

use serde::{
    Serialize, Serializer,
    ser::{SerializeMap, SerializeSeq},
};
use serde_json::Value;

/// Schemas nested deeper than this are replaced by `{}`.
pub const MAX_DEPTH: usize = 64;

/// Keywords copied as they are.
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
///         "unit": {"type": "string", "nullable": true, "enum": ["cm", "m"]}
///     }
/// }));
/// ```
pub fn clean_schema(schema: &Value) -> Option<Value> {
    let plan = root_plan(schema);
    if !takes_parameters_plan(&plan) {
        return None;
    }
    serde_json::to_value(Entries(&plan)).ok()
}

/// Whether the cleaned schema declares parameters (see [`clean_schema`]'s `None`).
pub(crate) fn takes_parameters(schema: &Value) -> bool {
    // Fast path: own non-empty `properties` survive cleaning (merges only add to them).
    if let Value::Object(map) = schema
        && map
            .iter()
            .any(|(k, v)| k == "properties" && v.as_object().is_some_and(|p| !p.is_empty()))
    {
        return true;
    }
    takes_parameters_plan(&root_plan(schema))
}

/// Serialises a schema cleaned on the fly: the same bytes as [`clean_schema`], with no
/// intermediate copy. Call only when [`takes_parameters`] holds.
pub(crate) struct Root<'a>(pub(crate) &'a Value);

impl Serialize for Root<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let cx = Cx {
            root: self.0,
            refs: None,
        };
        let typed = self
            .0
            .as_object()
            .is_some_and(|m| m.keys().any(|k| k == "type"));
        if typed && is_clean(self.0, 0) {
            return Shallow(self.0, 0, &cx).serialize(serializer);
        }
        Entries(&root_plan(self.0)).serialize(serializer)
    }
}

fn root_plan(schema: &Value) -> Vec<Entry<'_>> {
    let cx = Cx {
        root: schema,
        refs: None,
    };
    let mut plan = plan(schema, 0, &cx);
    if find(&plan, "type").is_none() && find(&plan, "properties").is_some() {
        plan.insert(0, ("type", Val::Str("object")));
    }
    plan
}

fn takes_parameters_plan(plan: &[Entry<'_>]) -> bool {
    let is_object = match find(plan, "type") {
        None => true,
        Some(ty) => ty.as_str() == Some("object"),
    };
    !is_object || find(plan, "properties").is_some() || find(plan, "anyOf").is_some()
}

/// One keyword of a cleaned node, in output order.
type Entry<'a> = (&'a str, Val<'a>);

/// A cleaned keyword's value; sub-schemas are cleaned when they are serialised.
enum Val<'a> {
    /// Copied as it is.
    Raw(&'a Value),
    /// A fixed string (`"object"`, `"string"`).
    Str(&'static str),
    /// `true` (`nullable` from a union type).
    True,
    /// `{}`.
    Empty,
    /// A sub-schema.
    Node(Child<'a>),
    /// `properties`: names and their sub-schemas.
    Props(Vec<(&'a str, Child<'a>)>),
    /// `anyOf` members.
    AnyOf(Vec<Child<'a>>),
    /// A schema that is only `anyOf` these members (`items` from a tuple of several).
    AnyOfSchema(Vec<Child<'a>>),
    /// `required` names.
    Required(Vec<&'a Value>),
    /// `enum: [const]`.
    Const(&'a Value),
    /// `enum`: these of its values (the strings of one that also held `null`).
    Values(Vec<&'a Value>),
    /// `anyOf` made from a union `type`: one cleaned schema per member type, each with
    /// the node's keywords of that type.
    Union(Vec<Vec<Entry<'a>>>),
}

impl Val<'_> {
    fn as_str(&self) -> Option<&str> {
        match self {
            Self::Raw(Value::String(s)) => Some(s),
            Self::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// A sub-schema to clean later, with the context it was found in.
struct Child<'a> {
    node: &'a Value,
    depth: usize,
    cx: Cx<'a>,
}

/// The document (for `$ref`) and the chain of references being inlined (for cycles).
#[derive(Clone)]
struct Cx<'a> {
    root: &'a Value,
    refs: Option<Rc<RefLink<'a>>>,
}

struct RefLink<'a> {
    reference: &'a str,
    up: Option<Rc<RefLink<'a>>>,
}

impl<'a> Cx<'a> {
    fn inlining(&self, reference: &str) -> bool {
        let mut link = self.refs.as_deref();
        while let Some(l) = link {
            if l.reference == reference {
                return true;
            }
            link = l.up.as_deref();
        }
        false
    }

    /// The target of a local, non-cyclic reference.
    fn resolve(&self, reference: &str) -> Option<&'a Value> {
        if self.inlining(reference) {
            return None;
        }
        self.root.pointer(reference.strip_prefix('#')?)
    }

    fn with(&self, reference: &'a str) -> Self {
        Self {
            root: self.root,
            refs: Some(Rc::new(RefLink {
                reference,
                up: self.refs.clone(),
            })),
        }
    }
}

fn find<'p, 'a>(plan: &'p [Entry<'a>], key: &str) -> Option<&'p Val<'a>> {
    plan.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
}

fn remove(plan: &mut Vec<Entry<'_>>, key: &str) {
    plan.retain(|(k, _)| *k != key);
}

fn set<'a>(plan: &mut Vec<Entry<'a>>, key: &'a str, val: Val<'a>) {
    match plan.iter_mut().find(|(k, _)| *k == key) {
        Some(slot) => slot.1 = val,
        None => plan.push((key, val)),
    }
}

fn plan<'a>(node: &'a Value, depth: usize, cx: &Cx<'a>) -> Vec<Entry<'a>> {
    let Value::Object(map) = node else {
        return Vec::new();
    };
    if depth >= MAX_DEPTH {
        return Vec::new();
    }
    // One scan for the keywords that steer the others (a linear scan of a small object is
    // cheaper than hashed look-ups).
    let (mut reference, mut all_of, mut has_any_of, mut has_enum) = (None, None, false, false);
    let mut has_one_of = false;
    for (key, value) in map {
        match (key.as_str(), value) {
            ("$ref", Value::String(r)) => reference = Some(r.as_str()),
            ("allOf", Value::Array(members)) => all_of = Some(members),
            ("anyOf", _) => has_any_of = true,
            ("oneOf", _) => has_one_of = true,
            ("enum", _) => has_enum = true,
            _ => {}
        }
    }
    // A union of two or more types becomes `anyOf` (below), unless the node has its own.
    let mut union: Vec<&'a str> = Vec::new();
    let target = reference.and_then(|r| cx.resolve(r).map(|target| (target, cx.with(r))));
    let inner = target.as_ref().map_or(cx, |(_, with)| with);
    let child = |node: &'a Value| Child {
        node,
        depth: depth + 1,
        cx: inner.clone(),
    };
    let mut out: Vec<Entry<'a>> = Vec::with_capacity(map.len());
    for (key, value) in map {
        match (key.as_str(), value) {
            ("type", Value::Array(members)) => {
                for member in members.iter().filter_map(Value::as_str) {
                    if member != "null" && !union.contains(&member) {
                        union.push(member);
                    }
                }
                if union.len() < 2 || has_any_of || has_one_of {
                    union.clear();
                    if let Some(first) = members.iter().find(|m| *m != "null") {
                        set(&mut out, "type", Val::Raw(first));
                    }
                }
                if members.iter().any(|m| m == "null") {
                    set(&mut out, "nullable", Val::True);
                }
            }
            ("type", Value::String(_))
            | ("nullable", Value::Bool(_))
            | ("format", Value::String(_))
            | ("enum", Value::Array(_)) => {
                set(&mut out, key, Val::Raw(value));
            }
            ("properties", Value::Object(props)) => {
                let props = props.iter().map(|(n, s)| (n.as_str(), child(s))).collect();
                out.push((key, Val::Props(props)));
            }
            ("items", Value::Array(members)) => {
                let val = match members.as_slice() {
                    [] => Val::Empty,
                    [one] => Val::Node(child(one)),
                    many => Val::AnyOfSchema(many.iter().map(child).collect()),
                };
                out.push((key, val));
            }
            ("items", _) => out.push((key, Val::Node(child(value)))),
            ("oneOf", _) if has_any_of => {}
            ("anyOf" | "oneOf", Value::Array(members)) => {
                set(
                    &mut out,
                    "anyOf",
                    Val::AnyOf(members.iter().map(child).collect()),
                );
            }
            ("required", Value::Array(names)) => {
                out.push((key, Val::Required(names.iter().collect())));
            }
            ("const", Value::String(_)) if !has_enum => {
                out.push(("enum", Val::Const(value)));
            }
            (k, _) if PLAIN.contains(&k) => out.push((key, Val::Raw(value))),
            _ => {}
        }
    }
    // A number `const` is the range from it to itself; a boolean one keeps its type (Gemini
    // takes `enum` for strings only).
    match map.get("const") {
        Some(n @ Value::Number(number)) => {
            set(&mut out, "minimum", Val::Raw(n));
            set(&mut out, "maximum", Val::Raw(n));
            if find(&out, "type").is_none() && union.is_empty() {
                let ty = if number.is_f64() { "number" } else { "integer" };
                set(&mut out, "type", Val::Str(ty));
            }
        }
        Some(Value::Bool(_)) if find(&out, "type").is_none() && union.is_empty() => {
            set(&mut out, "type", Val::Str("boolean"));
        }
        _ => {}
    }
    if let Some(members) = all_of {
        for member in members {
            let member = plan(member, depth + 1, inner);
            merge_under(&mut out, member);
        }
    }
    if let Some((target, with)) = &target {
        let target = plan(target, depth + 1, with);
        merge_under(&mut out, target);
    }
    if union.len() >= 2 && find(&out, "type").is_none() {
        split_union(&mut out, &union);
    }
    repair(&mut out);
    out
}

/// The keywords that belong to one JSON type (they move into that type's `anyOf` member).
fn keyword_type(key: &str) -> Option<&'static [&'static str]> {
    Some(match key {
        "minLength" | "maxLength" | "pattern" | "enum" => &["string"],
        "minimum" | "maximum" => &["number", "integer"],
        "items" | "minItems" | "maxItems" => &["array"],
        "properties" | "required" | "minProperties" | "maxProperties" | "propertyOrdering" => {
            &["object"]
        }
        _ => return None,
    })
}

/// Rewrites a node whose `type` was the union `types` as `anyOf`: one member per type,
/// holding `type` and the node's keywords of that type (`items` to the array, `minimum` to
/// the number and the integer, a string `format` to the string, ...), each repaired as a
/// node of its own; what belongs to no type (`description`, `title`, `nullable`) stays.
fn split_union<'a>(out: &mut Vec<Entry<'a>>, types: &[&'a str]) {
    let mut members: Vec<Vec<Entry<'a>>> = types
        .iter()
        .map(|t| vec![("type", Val::Str(static_type(t)))])
        .collect();
    let mut kept = Vec::with_capacity(out.len());
    for (key, val) in out.drain(..) {
        let owners: &[&str] = match (key, &val) {
            ("format", v) => match v.as_str() {
                Some("int32" | "int64" | "float" | "double") => &["number", "integer"],
                _ => &["string"],
            },
            _ => match keyword_type(key) {
                Some(owners) => owners,
                None => {
                    kept.push((key, val));
                    continue;
                }
            },
        };
        // A keyword of a type the union does not hold is dropped, as on a single type.
        let mut targets = members
            .iter_mut()
            .zip(types)
            .filter(|(_, t)| owners.contains(t))
            .map(|(member, _)| member);
        let (first, second) = (targets.next(), targets.next());
        match (first, second, val) {
            (None, _, _) => {}
            // Only plain values go to two members (`minimum` to number and integer).
            (Some(a), Some(b), Val::Raw(v)) => {
                a.push((key, Val::Raw(v)));
                b.push((key, Val::Raw(v)));
            }
            (Some(a), _, val) => a.push((key, val)),
        }
    }
    for member in &mut members {
        repair(member);
    }
    kept.push(("anyOf", Val::Union(members)));
    *out = kept;
}

/// `t` as a `'static` string when it is one of JSON Schema's types (a member that is not
/// is kept as `string`, which Gemini takes).
fn static_type(t: &str) -> &'static str {
    match t {
        "object" => "object",
        "array" => "array",
        "number" => "number",
        "integer" => "integer",
        "boolean" => "boolean",
        _ => "string",
    }
}

/// Adds `extra`'s keywords where `out` has none; `properties` and `required` are united.
fn merge_under<'a>(out: &mut Vec<Entry<'a>>, extra: Vec<Entry<'a>>) {
    for (key, val) in extra {
        let mine = out.iter_mut().find(|(k, _)| *k == key).map(|(_, v)| v);
        match (mine, val) {
            (Some(Val::Props(mine)), Val::Props(theirs)) => {
                for (name, schema) in theirs {
                    if !mine.iter().any(|(n, _)| *n == name) {
                        mine.push((name, schema));
                    }
                }
            }
            (Some(Val::Required(mine)), Val::Required(theirs)) => {
                for name in theirs {
                    if !mine.contains(&name) {
                        mine.push(name);
                    }
                }
            }
            (Some(_), _) => {}
            (None, val) => out.push((key, val)),
        }
    }
}

/// The per-node repairs that need the whole node (see the module table).
fn repair<'a>(out: &mut Vec<Entry<'a>>) {
    let ty: Option<&'a str> = find(out, "type").and_then(|v| match v {
        Val::Raw(Value::String(s)) => Some(s.as_str()),
        Val::Str(s) => Some(*s),
        _ => None,
    });
    let has_items = find(out, "items").is_some();
    match ty {
        Some("array") if !has_items => out.push(("items", Val::Empty)),
        Some("array") | None => {}
        Some(_) => remove(out, "items"),
    }
    // Only an object has properties ("properties: only allowed for OBJECT type").
    if ty.is_some_and(|t| t != "object") {
        for key in [
            "properties",
            "required",
            "minProperties",
            "maxProperties",
            "propertyOrdering",
        ] {
            remove(out, key);
        }
    }
    // `null` among string values means the value may be null: Gemini says that with
    // `nullable`, and takes only strings in `enum`.
    let raw_enum: Option<&'a Value> = match find(out, "enum") {
        Some(Val::Raw(value)) => Some(*value),
        _ => None,
    };
    if let Some(Value::Array(values)) = raw_enum
        && values.iter().any(Value::is_null)
        && values.iter().any(Value::is_string)
        && values.iter().all(|v| v.is_string() || v.is_null())
    {
        let strings: Vec<&'a Value> = values.iter().filter(|v| v.is_string()).collect();
        set(out, "enum", Val::Values(strings));
        set(out, "nullable", Val::True);
    }
    let enum_strings = match find(out, "enum") {
        Some(Val::Values(_)) => Some(true),
        Some(Val::Raw(Value::Array(values))) => Some(values.iter().all(Value::is_string)),
        Some(Val::Const(value)) => Some(value.is_string()),
        _ => None,
    };
    match (enum_strings, ty) {
        (None, _) | (Some(true), Some("string")) => {}
        (Some(true), None) => out.push(("type", Val::Str("string"))),
        (Some(_), _) => remove(out, "enum"),
    }
    if let Some(format) = find(out, "format").and_then(Val::as_str) {
        let keep = match ty {
            Some("string") => matches!(format, "enum" | "date-time"),
            Some("number" | "integer") => matches!(format, "int32" | "int64" | "float" | "double"),
            _ => false,
        };
        if !keep {
            remove(out, "format");
        }
    }
    if matches!(find(out, "properties"), Some(Val::Props(p)) if p.is_empty()) {
        remove(out, "properties");
    }
    let Some(at) = out.iter().position(|(k, _)| *k == "required") else {
        return;
    };
    let names: Option<&[(&str, Child<'_>)]> = match find(out, "properties") {
        Some(Val::Props(props)) => Some(props),
        _ => None,
    };
    let kept = match (names, out.get(at)) {
        (Some(props), Some((_, Val::Required(required)))) => Some(
            required
                .iter()
                .copied()
                .filter(|n| {
                    n.as_str()
                        .is_some_and(|n| props.iter().any(|(p, _)| *p == n))
                })
                .collect::<Vec<_>>(),
        ),
        _ => None,
    };
    match kept {
        Some(kept) => {
            if let Some(slot) = out.get_mut(at) {
                slot.1 = Val::Required(kept);
            }
        }
        None => {
            out.remove(at);
        }
    }
}

struct Entries<'p, 'a>(&'p [Entry<'a>]);

impl Serialize for Entries<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, val) in self.0 {
            map.serialize_entry(key, val)?;
        }
        map.end()
    }
}

impl Serialize for Child<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if is_clean(self.node, self.depth) {
            return Shallow(self.node, self.depth, &self.cx).serialize(serializer);
        }
        Entries(&plan(self.node, self.depth, &self.cx)).serialize(serializer)
    }
}

/// A node [`is_clean`] accepted, serialised key by key as it is, with its sub-schemas
/// cleaned in turn: the same bytes as planning it, without allocating.
struct Shallow<'n, 'a>(&'a Value, usize, &'n Cx<'a>);

impl Serialize for Shallow<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Self(node, depth, cx) = *self;
        let Value::Object(map) = node else {
            return serializer.serialize_map(Some(0))?.end();
        };
        let child = |node| Child {
            node,
            depth: depth + 1,
            cx: cx.clone(),
        };
        let mut out = serializer.serialize_map(Some(map.len()))?;
        for (key, value) in map {
            match (key.as_str(), value) {
                ("properties", Value::Object(_)) | ("anyOf", Value::Array(_)) => {
                    out.serialize_entry(key, &Children(value, depth + 1, cx))?;
                }
                ("items", _) => out.serialize_entry(key, &child(value))?,
                _ => out.serialize_entry(key, value)?,
            }
        }
        out.end()
    }
}

/// The sub-schemas of a `properties` object or an `anyOf` array, each cleaned.
struct Children<'n, 'a>(&'a Value, usize, &'n Cx<'a>);

impl Serialize for Children<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Self(value, depth, cx) = *self;
        let child = |node| Child {
            node,
            depth,
            cx: cx.clone(),
        };
        match value {
            Value::Object(props) => {
                let mut map = serializer.serialize_map(Some(props.len()))?;
                for (name, schema) in props {
                    map.serialize_entry(name, &child(schema))?;
                }
                map.end()
            }
            Value::Array(members) => {
                let mut seq = serializer.serialize_seq(Some(members.len()))?;
                for member in members {
                    seq.serialize_element(&child(member))?;
                }
                seq.end()
            }
            other => other.serialize(serializer),
        }
    }
}

/// Whether cleaning would keep every keyword of `node` and repair nothing at its level (its
/// sub-schemas are cleaned on their own), so that it can be serialised key by key
/// ([`Shallow`]). Allocation-free; the common case.
fn is_clean(node: &Value, depth: usize) -> bool {
    let Value::Object(map) = node else {
        return false;
    };
    if depth >= MAX_DEPTH {
        return false;
    }
    let (mut ty, mut items, mut has_enum, mut format, mut props, mut required) =
        (None, false, false, None, None, None);
    for (key, value) in map {
        let ok = match (key.as_str(), value) {
            ("type", Value::String(t)) => {
                ty = Some(t.as_str());
                true
            }
            ("nullable", Value::Bool(_)) => true,
            ("properties", Value::Object(p)) => {
                props = Some(p);
                !p.is_empty()
            }
            ("items", Value::Object(_)) => {
                items = true;
                true
            }
            ("anyOf", Value::Array(_)) => true,
            ("enum", Value::Array(values)) => {
                has_enum = true;
                values.iter().all(Value::is_string)
            }
            ("required", Value::Array(names)) => {
                required = Some(names);
                true
            }
            ("format", Value::String(f)) => {
                format = Some(f.as_str());
                true
            }
            (k, _) => PLAIN.contains(&k),
        };
        if !ok {
            return false;
        }
    }
    let items_ok = match ty {
        Some("array") => items,
        Some(_) => !items,
        None => true,
    };
    let format_ok = matches!(
        (format, ty),
        (None, _)
            | (Some("enum" | "date-time"), Some("string"))
            | (
                Some("int32" | "int64" | "float" | "double"),
                Some("number" | "integer")
            )
    );
    let required_ok = match (required, props) {
        (None, _) => true,
        (Some(names), Some(props)) => names
            .iter()
            .all(|n| n.as_str().is_some_and(|n| props.contains_key(n))),
        (Some(_), None) => false,
    };
    let properties_ok = props.is_none() || ty.is_none_or(|t| t == "object");
    items_ok && format_ok && required_ok && properties_ok && (!has_enum || ty == Some("string"))
}

/// A list of sub-schemas, as a JSON array.
struct Members<'b, 'a>(&'b [Child<'a>]);

impl Serialize for Members<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for child in self.0 {
            seq.serialize_element(child)?;
        }
        seq.end()
    }
}

impl Serialize for Val<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Raw(value) => value.serialize(serializer),
            Self::Str(s) => serializer.serialize_str(s),
            Self::True => serializer.serialize_bool(true),
            Self::Empty => serializer.serialize_map(Some(0))?.end(),
            Self::Node(child) => child.serialize(serializer),
            Self::Props(props) => {
                let mut map = serializer.serialize_map(Some(props.len()))?;
                for (name, child) in props {
                    map.serialize_entry(name, child)?;
                }
                map.end()
            }
            Self::AnyOf(members) => Members(members).serialize(serializer),
            Self::AnyOfSchema(members) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("anyOf", &Members(members))?;
                map.end()
            }
            Self::Required(names) => names.serialize(serializer),
            Self::Const(value) => [value].serialize(serializer),
            Self::Values(values) => values.serialize(serializer),
            Self::Union(members) => {
                let mut seq = serializer.serialize_seq(Some(members.len()))?;
                for member in members {
                    seq.serialize_element(&Entries(member))?;
                }
                seq.end()
            }
        }
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
                json!({"enum": ["a", "b", null]}),
                json!({"enum": ["a", "b"], "nullable": true, "type": "string"}),
            ),
            (
                json!({"type": "string", "enum": [null, "a"]}),
                json!({"type": "string", "enum": ["a"], "nullable": true}),
            ),
            (
                json!({"type": "string", "properties": {"a": {"type": "string"}}, "required": ["a"]}),
                json!({"type": "string"}),
            ),
            (
                json!({"type": ["string", "array"]}),
                json!({"anyOf": [{"type": "string"}, {"type": "array", "items": {}}]}),
            ),
            // The real catalogue's `to`: a recipient or a list of them. Each member gets
            // its type's keywords; the description stays on the node.
            (
                json!({"type": ["string", "array"], "items": {"type": "string"}, "description": "Recipients"}),
                json!({"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}], "description": "Recipients"}),
            ),
            (
                json!({"type": ["integer", "string", "null"], "minimum": 1, "maxLength": 8, "format": "uri", "enum": ["a", 2]}),
                json!({"nullable": true, "anyOf": [{"type": "integer", "minimum": 1}, {"type": "string", "maxLength": 8}]}),
            ),
            (
                json!({"type": ["number", "integer"], "minimum": 0, "format": "int32"}),
                json!({"anyOf": [{"type": "number", "minimum": 0, "format": "int32"}, {"type": "integer", "minimum": 0, "format": "int32"}]}),
            ),
            (
                json!({"type": ["object", "boolean"], "properties": {"a": {"type": "string"}}, "required": ["a", "b"]}),
                json!({"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}, {"type": "boolean"}]}),
            ),
            // A number `const` is a range of one; a boolean one keeps its type.
            (
                json!({"const": 5}),
                json!({"minimum": 5, "maximum": 5, "type": "integer"}),
            ),
            (
                json!({"type": "number", "minimum": 0, "const": 2.5, "maximum": 9}),
                json!({"type": "number", "minimum": 2.5, "maximum": 2.5}),
            ),
            (json!({"const": true}), json!({"type": "boolean"})),
            // The same type twice is one type; a node with its own `anyOf` keeps the first.
            (
                json!({"type": ["string", "string", "null"]}),
                json!({"type": "string", "nullable": true}),
            ),
            (
                json!({"type": ["string", "integer"], "anyOf": [{"minLength": 1}]}),
                json!({"type": "string", "anyOf": [{"minLength": 1}]}),
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
            (
                json!({"type": "array", "items": [{"type": "string"}, {"type": "number", "x-v": 1}]}),
                json!({"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "number"}]}}),
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

    /// Every sub-schema `is_clean` accepts serialises through the fast path exactly as
    /// through the full planner, so the fast path never changes a byte.
    #[test]
    fn the_clean_fast_path_matches_the_planner_on_the_real_corpus() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/real-mcp-tools.json"
        ))
        .unwrap();
        let tools: Value = serde_json::from_str(&text).unwrap();
        fn walk(node: &Value, root: &Value, clean: &mut usize, total: &mut usize) {
            if node.is_object() {
                *total += 1;
                if is_clean(node, 1) {
                    *clean += 1;
                    let cx = Cx { root, refs: None };
                    let planned = serde_json::to_string(&Entries(&plan(node, 1, &cx))).unwrap();
                    let shallow = serde_json::to_string(&Shallow(node, 1, &cx)).unwrap();
                    assert_eq!(planned, shallow);
                }
            }
            match node {
                Value::Object(map) => map.values().for_each(|v| walk(v, root, clean, total)),
                Value::Array(items) => items.iter().for_each(|v| walk(v, root, clean, total)),
                _ => {}
            }
        }
        let (mut clean, mut total) = (0, 0);
        for tool in tools.as_array().unwrap() {
            let schema = &tool["input_schema"];
            walk(schema, schema, &mut clean, &mut total);
        }
        assert!(clean > total / 2, "{clean} of {total}");
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
