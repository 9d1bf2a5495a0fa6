//! `compress`: normalise, sort, group and render the tools at one level.
//!
//! The entry point ([`compress`]) and the steps every compression takes: check the
//! selection, sort it, group it into namespaces, let the level address and render it,
//! count. The catalogue's preparation is in `catalogue`; the output type, its tools' cores
//! and codes are in `crate::compress`; what differs per level is in `crate::levels`, one
//! module a level.

mod catalogue;
#[cfg(test)]
mod levels_contract;

use std::{
    borrow::Cow,
    collections::HashMap,
    sync::{Arc, OnceLock},
};

use chef_ir::ToolDefinition;
use serde_json::Value;

pub use self::catalogue::{Catalogue, check_tool};
use crate::{
    compress::{Code, Compressed, Entry, Namespace, ToolCore},
    error::CompressError,
    levels::{RenderInput, Rendered, codec},
    options::{Options, ToolNamespace},
    policy::select_map_style,
    source::count_chars,
    stats::{Stats, json_chars, saved_pct},
    validate::Normalisation,
};

/// Compresses `tools` at the level and style `options` ask for.
///
/// Pure and deterministic: identical tools (in any order) and options give byte-identical
/// [`tools`](Compressed::tools) and [`system`](Compressed::system). Nothing is fetched,
/// nothing is mutated.
///
/// ```
/// use chef_compress::{compress, Level, Options, Resolution};
/// use chef_ir::ToolDefinition;
/// use serde_json::json;
///
/// let tools = vec![
///     ToolDefinition::new("github_search_issues", json!({
///         "type": "object",
///         "properties": {"q": {"type": "string", "description": "Search query."}},
///         "required": ["q"]
///     }))
///     .with_description("Search issues and pull requests across GitHub."),
/// ];
/// let c = compress(&tools, &Options::new().with_level(Level::Three))?;
/// assert_eq!(c.tools().len(), 2); // t and q
/// assert!(c.system().contains("a0 github_search_issues q"));
///
/// match c.resolve("t", &json!({"f": "a0", "a": {"q": "memory leak"}})) {
///     Resolution::Call { name, args } => {
///         assert_eq!(name, "github_search_issues");
///         assert_eq!(args, json!({"q": "memory leak"}));
///     }
///     other => panic!("{other:?}"),
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn compress(tools: &[ToolDefinition], options: &Options) -> Result<Compressed, CompressError> {
    // One compression: the tools are borrowed for it, not copied into the catalogue.
    let catalogue = Catalogue::prepare(tools, options.limits, false)?;
    let inputs: Vec<&ToolDefinition> = tools.iter().collect();
    render(&catalogue.cores, &inputs, &catalogue, options)
}

/// Groups, codes and renders `cores` (a selection of `catalogue`, in the caller's order),
/// whose input definitions are `inputs` (the same length and order).
fn render(
    cores: &[Arc<ToolCore>],
    inputs: &[&ToolDefinition],
    catalogue: &Catalogue,
    options: &Options,
) -> Result<Compressed, CompressError> {
    let selection = select_map_style(options.map_style, options.model(), options.objective);
    let style = selection.map_style;
    let level = codec(options.level);
    let splits = check_selection(cores, options)?;
    level.check(options)?;
    let original_chars = match cores.len() {
        0 => 2,
        n => cores.iter().map(|c| c.chars).sum::<usize>() + n + 1,
    };

    let order = sorted_order(cores, catalogue.len());
    // In code order (tools sorted by name), each tool's notes in the order its schema walk
    // met them: the same list whatever order the tools were given in.
    let normalisations: Vec<Normalisation> = order
        .iter()
        .filter_map(|&at| cores.get(at))
        .flat_map(|c| c.notes.iter().cloned())
        .collect();

    let (mut namespaces, mut entries) = group(cores, &order, &splits, catalogue, options);
    drop(splits);
    level.address(&mut entries, &mut namespaces, options);

    // The input definitions in sorted order.
    let sorted: Vec<&ToolDefinition> = order
        .iter()
        .filter_map(|&at| inputs.get(at).copied())
        .collect();
    let Rendered {
        wire,
        system,
        lookalikes,
        compiled_report,
        l4_lines,
    } = level.render(&RenderInput {
        entries: &entries,
        sorted: &sorted,
        views: &views(&entries, &sorted),
        namespaces: &namespaces,
        style,
        options,
    })?;
    for (m, line) in l4_lines {
        if let Some(e) = entries.get_mut(m as usize) {
            e.l4_line = line;
        }
    }

    let compressed_chars = json_chars(&wire) + count_chars(system.as_bytes());
    let (original_tokens, compressed_tokens) =
        token_counts(options, cores, catalogue, &wire, &system);
    let stats = Stats {
        level: options.level,
        map_style: style,
        requested_map_style: selection.requested_map_style,
        fallback_reason: selection.fallback_reason,
        tool_count: cores.len(),
        wire_tool_count: wire.len(),
        original_chars,
        compressed_chars,
        saved_pct: if cores.is_empty() {
            0.0
        } else {
            saved_pct(original_chars, compressed_chars)
        },
        ambiguous_map_lines: lookalikes.map(|(ambiguous, _)| ambiguous),
        largest_lookalike_group: lookalikes.map(|(_, largest)| largest),
        uncompiled_tools: compiled_report.as_ref().map(|r| r.uncompiled.count),
        orphaned_compiled_entries: compiled_report.as_ref().map(|r| r.orphans.len()),
        orphaned_compiled_names: compiled_report
            .as_ref()
            .map(|r| r.orphans.clone())
            .unwrap_or_default(),
        stale_compiled_tools: compiled_report.map(|r| r.uncompiled.stale),
        normalisations,
        original_tokens,
        compressed_tokens,
    };

    Ok(Compressed {
        level: options.level,
        tools: wire,
        system,
        stats,
        entries,
        namespaces,
        validate: options.validate,
        search_limit: options.search_limit,
        norm_index: OnceLock::new(),
        suggestions: OnceLock::new(),
        search_index: OnceLock::new(),
        dense: None,
        hybrid_index: OnceLock::new(),
        open_index: std::sync::Mutex::new(None),
    })
}

/// Checks that the selection can be compressed as `options` ask, in the caller's order
/// (the first failure wins), and returns each tool's namespace split.
fn check_selection<'a>(
    cores: &'a [Arc<ToolCore>],
    options: &Options,
) -> Result<Vec<Cow<'a, ToolNamespace>>, CompressError> {
    let limits = options.limits;
    if cores.len() > limits.max_tools {
        return Err(CompressError::TooManyTools {
            count: cores.len(),
            limit: limits.max_tools,
        });
    }
    let mut splits: Vec<Cow<'_, ToolNamespace>> = Vec::with_capacity(cores.len());
    for core in cores {
        let split = match &options.namespace_of {
            Some(f) => Cow::Owned(f(&core.name)),
            None => Cow::Borrowed(&core.split),
        };
        if split.ns.is_empty() || split.op.is_empty() {
            return Err(CompressError::InvalidNamespace {
                tool: core.name.clone(),
                ns: split.ns.clone(),
                op: split.op.clone(),
            });
        }
        splits.push(split);
    }
    Ok(splits)
}

/// The namespaces (in order of first appearance; members keep the sorted order) and the
/// entries (in sorted order, not yet addressed by the level) of the tools at `order` in
/// `cores`.
fn group(
    cores: &[Arc<ToolCore>],
    order: &[usize],
    splits: &[Cow<'_, ToolNamespace>],
    catalogue: &Catalogue,
    options: &Options,
) -> (Vec<Namespace>, Vec<Entry>) {
    // One pass numbers the namespaces and counts their members, so each list is allocated
    // once. The default split numbers namespaces per catalogue, so a table replaces the map.
    let mut ns_of: HashMap<&str, u32, rustc_hash::FxBuildHasher> = HashMap::default();
    let mut by_id: Vec<u32> = match options.namespace_of {
        Some(_) => Vec::new(),
        None => vec![u32::MAX; catalogue.ns_count],
    };
    let mut firsts: Vec<(usize, u32)> = Vec::new(); // (first member's place in order, size)
    let mut ns_index: Vec<u32> = Vec::with_capacity(order.len());
    for (i, &at) in order.iter().enumerate() {
        let mut number = || {
            firsts.push((i, 0));
            u32::try_from(firsts.len() - 1).unwrap_or(u32::MAX)
        };
        let ni = match (cores.get(at), by_id.is_empty()) {
            (Some(core), false) => match by_id.get_mut(core.ns_id as usize) {
                Some(slot) if *slot == u32::MAX => {
                    *slot = number();
                    *slot
                }
                Some(slot) => *slot,
                None => u32::MAX,
            },
            _ => {
                let ns = splits.get(at).map_or("", |s| s.ns.as_str());
                *ns_of.entry(ns).or_insert_with(number)
            }
        };
        if let Some((_, size)) = firsts.get_mut(ni as usize) {
            *size += 1;
        }
        ns_index.push(ni);
    }
    drop(ns_of);
    drop(by_id);
    let mut namespaces: Vec<Namespace> = firsts
        .iter()
        .map(|&(first, size)| {
            let name = order
                .get(first)
                .and_then(|&at| splits.get(at))
                .map_or(String::new(), |s| s.ns.clone());
            Namespace {
                alias: String::new(),
                name,
                members: Vec::with_capacity(size as usize),
            }
        })
        .collect();
    let mut entries = Vec::with_capacity(cores.len());
    for (i, (&at, &ni)) in order.iter().zip(&ns_index).enumerate() {
        let (Some(core), Some(split), Some(ns)) = (
            cores.get(at),
            splits.get(at),
            namespaces.get_mut(ni as usize),
        ) else {
            continue;
        };
        ns.members.push(u32::try_from(i).unwrap_or(u32::MAX));
        entries.push(Entry {
            core: Arc::clone(core),
            ns: ni,
            op: match split {
                Cow::Owned(split) => Some(split.op.clone()),
                Cow::Borrowed(_) => None,
            },
            code: Code::default(),
            l4_line: String::new(),
        });
    }
    (namespaces, entries)
}

/// The schemas the renderers read, one per entry.
fn views<'a>(entries: &'a [Entry], sorted: &[&'a ToolDefinition]) -> Vec<&'a Value> {
    entries
        .iter()
        .zip(sorted)
        .map(|(e, input)| e.core.view(input))
        .collect()
}

/// The positions of `cores` in name order. Ranks are distinct places in the catalogue's
/// order, so a selection of a good share of it is placed by rank in one pass; a small one
/// sorts its (rank, position) pairs.
fn sorted_order(cores: &[Arc<ToolCore>], catalogue_len: usize) -> Vec<usize> {
    let mut pairs: Vec<(u32, u32)> = cores
        .iter()
        .enumerate()
        .map(|(i, c)| (c.rank, u32::try_from(i).unwrap_or(u32::MAX)))
        .collect();
    if cores.len().saturating_mul(8) >= catalogue_len {
        let mut by_rank = vec![u32::MAX; catalogue_len];
        let mut placed = true;
        for &(rank, i) in &pairs {
            match by_rank.get_mut(rank as usize) {
                Some(slot) if *slot == u32::MAX => *slot = i,
                _ => placed = false,
            }
        }
        if placed {
            return by_rank
                .into_iter()
                .filter(|&i| i != u32::MAX)
                .map(|i| i as usize)
                .collect();
        }
    }
    pairs.sort_unstable();
    pairs.into_iter().map(|(_, i)| i as usize).collect()
}

/// o200k_base token counts of the selection's JSON and of the compressed payload, when
/// `options` ask for them (feature `tokens`; `None` without it).
fn token_counts(
    options: &Options,
    cores: &[Arc<ToolCore>],
    catalogue: &Catalogue,
    wire: &[ToolDefinition],
    system: &str,
) -> (Option<usize>, Option<usize>) {
    #[cfg(feature = "tokens")]
    if options.count_tokens {
        // The selection's own JSON, `serde_json` of its tools, cut from the catalogue's text.
        let mut original = Vec::with_capacity(cores.iter().map(|c| c.object.len() + 1).sum());
        original.push(b'[');
        for (i, core) in cores.iter().enumerate() {
            if i > 0 {
                original.push(b',');
            }
            original.extend_from_slice(catalogue.text.get(core.object.clone()).unwrap_or_default());
        }
        original.push(b']');
        let original = String::from_utf8_lossy(&original);
        let mut compressed = serde_json::to_string(wire).unwrap_or_default();
        compressed.push_str(system);
        return (
            crate::tokens::count_o200k(&original),
            crate::tokens::count_o200k(&compressed),
        );
    }
    #[cfg(not(feature = "tokens"))]
    let _ = (options, cores, catalogue, wire, system);
    (None, None)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{options::Level, validate::SchemaError};

    fn tool(name: &str, schema: Value) -> ToolDefinition {
        ToolDefinition::new(name, schema)
    }

    #[test]
    fn validators_are_compiled_on_first_resolve_only() {
        let tools = [
            tool(
                "a_x",
                json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
            ),
            tool("a_y", json!({"type": "object"})),
        ];
        let c = compress(&tools, &Options::new().with_level(Level::Three)).unwrap();
        assert!(c.entries.iter().all(|e| e.validator.get().is_none()));
        let code = c.code_for("a_x").unwrap().to_owned();
        assert!(matches!(
            c.resolve("t", &json!({"f": code, "a": {"n": "one"}})),
            crate::Resolution::Error(crate::ResolveError::InvalidArguments(_))
        ));
        let compiled: Vec<bool> = c
            .entries
            .iter()
            .map(|e| e.validator.get().is_some())
            .collect();
        assert_eq!(compiled, [true, false]);
    }

    #[test]
    fn a_schema_the_validator_refuses_at_first_resolve_is_a_typed_error_for_the_model() {
        let tools = [tool("a_x", json!({"type": "object"}))];
        let mut c = compress(&tools, &Options::new().with_level(Level::Three)).unwrap();
        // Normalisation and repair leave nothing the validator refuses in practice, so
        // stand in a document it cannot compile for the normalised schema.
        if let Some(e) = c.entries.first_mut() {
            // The catalogue is gone, so the entry holds the only reference to its tool.
            Arc::get_mut(&mut e.core).unwrap().schema = OnceLock::from(json!("not a schema"));
        }
        for _ in 0..2 {
            let crate::Resolution::Error(error) = c.resolve("t", &json!({"f": "a0", "a": {}}))
            else {
                panic!("expected an error");
            };
            assert!(
                matches!(&error, crate::ResolveError::UnusableSchema(e)
                    if matches!(**e, SchemaError::Uncompilable { ref tool, .. } if tool == "a_x")),
                "{error:?}"
            );
            assert!(!error.recoverable());
            assert_eq!(error.tool(), Some("a_x"));
            let message = error.message();
            assert!(message.starts_with("Tool \"a_x\" cannot be called: its input schema is unusable (the input schema of tool a_x cannot be compiled: "), "{message}");
        }
        // Without validation nothing is compiled, and the call goes through.
        let mut c = compress(
            &tools,
            &Options::new().with_level(Level::Three).with_validate(false),
        )
        .unwrap();
        if let Some(e) = c.entries.first_mut() {
            // The catalogue is gone, so the entry holds the only reference to its tool.
            Arc::get_mut(&mut e.core).unwrap().schema = OnceLock::from(json!("not a schema"));
        }
        assert!(matches!(
            c.resolve("t", &json!({"f": "a0"})),
            crate::Resolution::Call { .. }
        ));
    }
}
