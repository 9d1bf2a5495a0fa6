//! The renderers of the five levels: the wire tools, and at levels 3 and 4 the preamble.

use std::{
    collections::{HashMap, HashSet},
    ops::Range,
};

use chef_ir::ToolDefinition;
use serde_json::{Value, json};

use super::{Entry, Namespace};
use crate::{
    compile::{compiled_docstring, verify_line},
    error::CompressError,
    options::{MapStyle, Options},
    render::{first_sentence, flatten_schema, python_signature, signature_line},
    text,
};

fn wire_tool(name: &str, description: String, input_schema: Value) -> ToolDefinition {
    ToolDefinition::new(name, input_schema).with_description(description)
}

pub(super) fn level0(sorted: &[&ToolDefinition]) -> Vec<ToolDefinition> {
    // Original schemas, untouched, in sorted order.
    sorted
        .iter()
        .map(|t| {
            wire_tool(
                t.name.as_str(),
                t.description.clone(),
                t.input_schema.clone(),
            )
        })
        .collect()
}

/// Tools without a usable compiled line, and the stale entries among them.
#[derive(Debug, Default)]
pub(super) struct Unusable {
    pub(super) count: usize,
    pub(super) stale: Vec<String>,
}

/// The verified docstring of `e`'s compiled line; records a missing or stale line.
fn verified_docstring<'a>(
    e: &Entry,
    schema: &Value,
    options: &'a Options,
    unusable: &mut Unusable,
) -> Option<&'a str> {
    let Some(line) = options.compiled.get(&e.name) else {
        unusable.count += 1;
        return None;
    };
    match verify_line(line, &e.name, schema) {
        Ok(()) => compiled_docstring(line),
        Err(problem) => {
            unusable.count += 1;
            unusable.stale.push(format!("{}: {problem}", e.name));
            None
        }
    }
}

pub(super) fn level1(
    entries: &[Entry],
    views: &[&Value],
    options: &Options,
) -> (Vec<ToolDefinition>, Unusable) {
    let signature_prefix = options.signature_prefix;
    let mut unusable = Unusable::default();
    let wire = entries
        .iter()
        .zip(views)
        .map(|(e, &schema)| {
            let compiled = if options.compiled.is_empty() {
                None
            } else {
                verified_docstring(e, schema, options, &mut unusable)
            };
            let purpose = compiled.unwrap_or_else(|| first_sentence(&e.description));
            let description = match (signature_prefix, purpose.is_empty()) {
                (true, false) => format!("{} — {purpose}", signature_line(&e.name, schema)),
                (false, false) => purpose.to_owned(),
                (_, true) => signature_line(&e.name, schema),
            };
            let mut flat = flatten_schema(schema);
            // The view is the input schema; flattening keeps the root keys normalisation
            // would have dropped, so drop them here.
            if let Some(source) = &e.source {
                source.drops.apply(&mut flat);
            }
            wire_tool(&e.name, description, flat)
        })
        .collect();
    (wire, unusable)
}

pub(super) fn level2(
    entries: &[Entry],
    namespaces: &[Namespace],
) -> Result<Vec<ToolDefinition>, CompressError> {
    let mut aliases: HashMap<&str, &str> = HashMap::new();
    let mut wire = Vec::with_capacity(namespaces.len() + 1);
    for ns in namespaces {
        if ns.alias.is_empty() || ns.alias == "describe_op" {
            return Err(CompressError::InvalidAlias {
                ns: ns.name.clone(),
                alias: ns.alias.clone(),
                problem: if ns.alias.is_empty() {
                    "is empty"
                } else {
                    "would shadow the describe_op tool"
                },
            });
        }
        if let Some(first) = aliases.insert(&ns.alias, &ns.name) {
            return Err(CompressError::DuplicateAlias {
                alias: ns.alias.clone(),
                first: first.to_owned(),
                second: ns.name.clone(),
            });
        }
        let ops: Vec<Value> = ns
            .members
            .iter()
            .filter_map(|&m| entries.get(m as usize))
            .map(|e| Value::String(e.op().to_owned()))
            .collect();
        let schema = json!({
            "type": "object",
            "properties": {
                "op": {"type": "string", "enum": ops},
                "args": {"type": "object"}
            },
            "required": ["op", "args"]
        });
        wire.push(wire_tool(
            &ns.alias,
            format!("{}{}", ns.name, text::NAMESPACE_SUFFIX),
            schema,
        ));
    }
    wire.push(wire_tool(
        "describe_op",
        text::DESCRIBE_OP_DESC.to_owned(),
        json!({
            "type": "object",
            "properties": {"ns": {"type": "string"}, "op": {"type": "string"}},
            "required": ["ns", "op"]
        }),
    ));
    Ok(wire)
}

pub(super) fn level3_tools(t_desc: &str, q_desc: &str) -> Vec<ToolDefinition> {
    vec![
        wire_tool(
            "t",
            t_desc.to_owned(),
            json!({
                "type": "object",
                "properties": {"f": {"type": "string"}, "a": {"type": "object"}},
                "required": ["f"]
            }),
        ),
        wire_tool(
            "q",
            q_desc.to_owned(),
            json!({
                "type": "object",
                "properties": {"c": {"type": "string"}, "s": {"type": "string"}}
            }),
        ),
    ]
}

/// The `<toolmap>` preamble and the lookalike figures `(ambiguous, largest)`.
pub(super) fn level3_preamble(
    entries: &[Entry],
    views: &[&Value],
    namespaces: &[Namespace],
    style: MapStyle,
) -> (String, (usize, usize)) {
    let mut system = String::with_capacity(entries.len() * 48 + 256);
    system.push_str("<toolmap>\n");
    // Where each line's body (after code and name) sits in `system`, for the lookalike
    // groups, counted once the text is complete.
    let mut bodies: Vec<Range<usize>> = Vec::with_capacity(entries.len());
    let extra_words = match style {
        MapStyle::Distinct => crate::distinct::distinguishing_words(
            &entries
                .iter()
                .zip(views)
                .map(|(e, &schema)| crate::distinct::Subject {
                    name: &e.name,
                    description: &e.description,
                    schema,
                })
                .collect::<Vec<_>>(),
        ),
        _ => Vec::new(),
    };
    let mut first = true;
    for ns in namespaces {
        for &m in &ns.members {
            let (Some(e), Some(&schema)) = (entries.get(m as usize), views.get(m as usize)) else {
                continue;
            };
            if !first {
                system.push('\n');
            }
            first = false;
            e.code.push_to(&mut system);
            system.push(' ');
            system.push_str(&e.name);
            let body_start = system.len();
            // The bodies come from the tool's own schema (`views`), cached per tool.
            match style {
                MapStyle::NameRequired | MapStyle::Explicit | MapStyle::Distinct => {
                    match e.required_line(schema) {
                        Some(required) => {
                            system.push(' ');
                            system.push_str(required);
                        }
                        None if style == MapStyle::Explicit => system.push_str(" ()"),
                        None => {}
                    }
                }
                MapStyle::Signature => {
                    system.push('(');
                    system.push_str(e.params_line(schema));
                    system.push(')');
                }
            }
            if let Some(words) = extra_words.get(m as usize).filter(|w| !w.is_empty()) {
                system.push_str(crate::distinct::SEPARATOR);
                system.push_str(&words.join(" "));
            }
            let skip = usize::from(system.as_bytes().get(body_start) == Some(&b' '));
            bodies.push(body_start + skip..system.len());
        }
    }
    let mut counts: HashMap<&str, usize, rustc_hash::FxBuildHasher> =
        HashMap::with_capacity_and_hasher(bodies.len(), rustc_hash::FxBuildHasher);
    for body in bodies {
        *counts
            .entry(system.get(body).unwrap_or_default())
            .or_default() += 1;
    }
    let (ambiguous, largest) = lookalikes(counts.values().copied());
    drop(counts);
    system.push_str("\n</toolmap>\n");
    system.push_str(match style {
        MapStyle::NameRequired => text::LEGEND_NAME_REQUIRED,
        MapStyle::Explicit => text::LEGEND_EXPLICIT,
        MapStyle::Signature => text::LEGEND_SIGNATURE,
        MapStyle::Distinct => text::LEGEND_DISTINCT,
    });
    system.push_str(text::INVOKE_HINT_3);
    (system, (ambiguous, largest))
}

/// The lookalike figures from how many tools share each map line body: the tools whose
/// body another tool shares, and the size of the largest such group (1 when none repeat).
fn lookalikes(group_sizes: impl Iterator<Item = usize>) -> (usize, usize) {
    group_sizes
        .filter(|&n| n >= 2)
        .fold((0, 1), |(ambiguous, largest), n| {
            (ambiguous + n, largest.max(n))
        })
}

/// A rendered level-4 map line and the index of its entry.
pub(super) type MapLine = (u32, String);

/// What level 4 found in the compiled map.
pub(super) struct CompiledReport {
    pub(super) uncompiled: Unusable,
    /// Map keys naming no tool, sorted.
    pub(super) orphans: Vec<String>,
}

/// The level-4 Python preamble, the lookalike figures, the compiled-map report, and each
/// tool's rendered line by entry index (the caller stores them in the entries, for `q`).
///
/// A tool's line is `def {python signature}:"{docstring}"`: the parameters always come
/// from the current schema; only the docstring comes from a compiled line that verifies.
pub(super) fn level4_preamble(
    entries: &[Entry],
    views: &[&Value],
    namespaces: &[Namespace],
    options: &Options,
) -> (String, (usize, usize), CompiledReport, Vec<MapLine>) {
    let mut unusable = Unusable::default();
    let mut bodies: HashMap<&str, usize> = HashMap::new();
    let mut lines: Vec<(u32, String)> = Vec::with_capacity(entries.len());
    for ns in namespaces {
        for &m in &ns.members {
            let (Some(e), Some(&schema)) = (entries.get(m as usize), views.get(m as usize)) else {
                continue;
            };
            let raw = options.compiled.get(&e.name);
            // Lookalikes: the raw line after its first `(` (even when stale), "" without one.
            let body = raw
                .and_then(|l| l.split_once('(').map(|(_, rest)| rest))
                .unwrap_or_default();
            *bodies.entry(body).or_default() += 1;
            let doc =
                verified_docstring(e, schema, options, &mut unusable).unwrap_or(text::NOT_COMPILED);
            let line = format!("def {}:\"{doc}\"", python_signature(&e.name, schema));
            lines.push((m, line));
        }
    }
    let (ambiguous, largest) = lookalikes(bodies.values().copied());

    let mut system =
        String::with_capacity(lines.iter().map(|(_, l)| l.len() + 1).sum::<usize>() + 256);
    system.push_str(text::INTRO_4);
    system.push_str("\n\n```python\n");
    for (i, (_, line)) in lines.iter().enumerate() {
        if i > 0 {
            system.push('\n');
        }
        system.push_str(line);
    }
    system.push_str("\n```\n");
    system.push_str(text::INVOKE_HINT_4);

    let names: HashSet<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    let orphans = options
        .compiled
        .keys()
        .filter(|k| !names.contains(k.as_str()))
        .cloned()
        .collect();
    (
        system,
        (ambiguous, largest),
        CompiledReport {
            uncompiled: unusable,
            orphans,
        },
        lines,
    )
}
