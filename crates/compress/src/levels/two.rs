//! Level 2: one compound tool per namespace (`ns(op, args)`, named by the alias function)
//! plus `describe_op`; a call names the namespace and the operation.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::{Hidden, LevelCodec, RenderInput, Rendered, wire_tool};
use crate::{
    compress::{Compressed, EncodedCall, Entry, Namespace},
    error::CompressError,
    options::{Level, Options},
    resolve::{
        Resolution, ResolveError, as_object, as_text, merged_bag, not_an_object, unreadable_bag,
        with_description, with_parameters, without,
    },
};

/// Level-2 namespace description, after the real namespace name.
const NAMESPACE_SUFFIX: &str =
    " operations. Call describe_op first if unsure of an operation's parameters.";

/// Level-2 `describe_op` description.
const DESCRIBE_OP_DESC: &str =
    "Returns the full parameter signature and description of one operation.";

/// Namespace collapse.
pub(super) struct Two;

impl LevelCodec for Two {
    fn level(&self) -> Level {
        Level::Two
    }

    /// Names each namespace tool (the alias function, default the namespace) and gives
    /// every member an operation no other member of its namespace shares.
    fn address(&self, entries: &mut [Entry], namespaces: &mut Vec<Namespace>, options: &Options) {
        for ns in namespaces.iter_mut() {
            ns.alias = options.alias(&ns.name);
        }
        distinct_operations(entries, namespaces);
    }

    fn sends_each_tool(&self) -> bool {
        false
    }

    fn render(&self, input: &RenderInput<'_>) -> Result<Rendered, CompressError> {
        let mut aliases: HashMap<&str, &str> = HashMap::new();
        let mut wire = Vec::with_capacity(input.namespaces.len() + 1);
        for ns in input.namespaces {
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
                .filter_map(|&m| input.entries.get(m as usize))
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
                format!("{}{NAMESPACE_SUFFIX}", ns.name),
                schema,
            ));
        }
        wire.push(wire_tool(
            "describe_op",
            DESCRIBE_OP_DESC.to_owned(),
            json!({
                "type": "object",
                "properties": {"ns": {"type": "string"}, "op": {"type": "string"}},
                "required": ["ns", "op"]
            }),
        ));
        Ok(Rendered::tools(wire))
    }

    fn resolve(&self, c: &Compressed, name: &str, args: &Value, _: Hidden<'_>) -> Resolution {
        let args = as_object(Some(args));
        let op = as_text(args.get("op"));
        if name == "describe_op" {
            let ns = as_text(args.get("ns"));
            return match operation(c, namespace_index(c, &ns), &op) {
                Some(e) => Resolution::Meta {
                    name: "describe_op",
                    result: with_parameters(
                        with_description(e.signature(), &e.description),
                        e.schema(),
                    ),
                },
                None => Resolution::Error(ResolveError::UnknownDescribedOperation {
                    ns: ns.into_owned(),
                    op: op.into_owned(),
                }),
            };
        }
        let Some(ns) = namespace_index(c, name) else {
            // No namespace of that name: say so, rather than send the model to the op enum
            // of a tool that does not exist (the reference names it as if it did).
            return Resolution::Error(ResolveError::UnknownTool {
                name: name.to_owned(),
                level: Level::Two,
            });
        };
        match operation(c, Some(ns), &op) {
            // The bag under `args`, with the keys written beside it (other than `op`)
            // merged in: `svc(op="deploy", service="api")` means `service`, and so does
            // `svc(op="deploy", args={…}, dry_run=true)` mean `dry_run`.
            // An `args` that cannot be read is refused even with keys beside it.
            Some(e) if let Some(received) = unreadable_bag(args.get("args")) => {
                not_an_object(e, received)
            }
            Some(e) => match merged_bag(
                &e.name,
                as_object(args.get("args")),
                &without(&args, &["op", "args"]),
            ) {
                Ok(bag) => c.call(e, bag),
                Err(error) => Resolution::Error(error),
            },
            None => Resolution::Error(ResolveError::UnknownOperation {
                name: name.to_owned(),
                op: op.into_owned(),
            }),
        }
    }

    /// A call names a namespace here, never one tool.
    fn tool_for_name<'c>(&self, _c: &'c Compressed, _written: &str) -> Option<&'c Entry> {
        None
    }

    fn encode_call(&self, c: &Compressed, entry: &Entry, args: Value) -> EncodedCall {
        let alias = c
            .namespaces
            .get(entry.ns as usize)
            .map(|ns| ns.alias.clone())
            .unwrap_or_default();
        let mut bag = Map::new();
        bag.insert("op".to_owned(), Value::String(entry.op().to_owned()));
        bag.insert("args".to_owned(), args);
        EncodedCall {
            name: alias,
            args: Value::Object(bag),
        }
    }
}

/// The namespace a call names: by its alias, else by its real name.
fn namespace_index(c: &Compressed, written: &str) -> Option<usize> {
    c.namespaces
        .iter()
        .position(|ns| ns.alias == written)
        .or_else(|| c.namespaces.iter().position(|ns| ns.name == written))
}

fn operation<'c>(c: &'c Compressed, ns: Option<usize>, op: &str) -> Option<&'c Entry> {
    c.namespaces
        .get(ns?)?
        .members
        .iter()
        .filter_map(|&m| c.entries.get(m as usize))
        .find(|e| e.op() == op)
}

/// Gives every tool of a level-2 namespace an operation no other member shares.
///
/// Level 2 addresses a tool as (namespace, operation). The reference keeps duplicate
/// operations (`a_x` and `a.x` both give `x`), which leaves all but one of them unreachable;
/// here each member of a clash takes its full tool name as its operation instead
/// (`a_x`, `a.x`). Names are unique, so repeating until nothing clashes ends.
fn distinct_operations(entries: &mut [Entry], namespaces: &[Namespace]) {
    for ns in namespaces {
        loop {
            let mut count: HashMap<&str, u32, rustc_hash::FxBuildHasher> = HashMap::default();
            for e in ns.members.iter().filter_map(|&m| entries.get(m as usize)) {
                *count.entry(e.op()).or_default() += 1;
            }
            let clashing: Vec<u32> = ns
                .members
                .iter()
                .copied()
                .filter(|&m| {
                    entries
                        .get(m as usize)
                        .is_some_and(|e| count.get(e.op()).is_some_and(|&n| n > 1))
                })
                .collect();
            drop(count);
            if clashing.is_empty() {
                break;
            }
            let mut renamed = false;
            for m in clashing {
                if let Some(e) = entries.get_mut(m as usize)
                    && e.op() != e.name
                {
                    e.op = Some(e.name.clone());
                    renamed = true;
                }
            }
            if !renamed {
                break; // only full names clash, which unique names cannot
            }
        }
    }
}
