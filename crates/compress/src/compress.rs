//! `compress`: normalise, sort, group and render the tools at one level.

use std::{
    collections::{HashMap, HashSet},
    ops::Range,
    sync::{Arc, OnceLock},
};

use chef_ir::ToolDefinition;
use serde_json::{Map, Value, json};

use crate::{
    compile::{compiled_docstring, verify_line},
    error::{CodeError, CompressError},
    lookup::{CodeSuggestions, NormIndex},
    options::{Level, MapStyle, Options},
    order::compare_names,
    policy::select_map_style,
    render::{
        first_sentence, flatten_schema, push_params, python_signature, required_iter,
        signature_line,
    },
    source::{CatalogueText, count_chars, parse_schema},
    stats::{Stats, json_chars, saved_pct},
    text,
    validate::{
        ArgumentValidator, Limits, NormalisedSchema, QUICK_MAX_DEPTH, RootDrops, SchemaError,
        normalise_with_limits, quick_normalise,
    },
};

/// One input tool after normalisation, in sorted order.
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) description: String,
    /// The normalised schema: what the validator compiles and the search index reads. Set
    /// at compress time when normalisation changed the schema; otherwise parsed from
    /// `source` on first need (most schemas need no change, and most tools of a large
    /// catalogue are never called or searched).
    schema: OnceLock<Value>,
    /// The schema's text in the catalogue's JSON, when it needed no normalisation.
    source: Option<SchemaSource>,
    /// Compiled on first resolve (compiling is most of what a validator costs, and most
    /// tools of a large catalogue are never called).
    validator: OnceLock<Result<ArgumentValidator, SchemaError>>,
    /// Tags and annotation title, for the `q(s=…)` index.
    pub(crate) tags: Vec<String>,
    pub(crate) title: Option<String>,
    pub(crate) ns: u32,
    pub(crate) op: String,
    /// The level-3/4 code; empty below level 3.
    pub(crate) code: String,
    /// The level-4 map line (`def name(sig):"doc"`); empty below level 4.
    pub(crate) l4_line: String,
    /// The limits the validator is compiled with.
    limits: Limits,
}

/// Where an entry's schema can be parsed from.
struct SchemaSource {
    text: Arc<Vec<u8>>,
    range: Range<usize>,
    /// Root keys normalisation drops.
    drops: RootDrops,
}

impl Entry {
    /// The normalised schema, parsed from the catalogue's text on first use when it needed
    /// no normalisation.
    pub(crate) fn schema(&self) -> &Value {
        self.schema.get_or_init(|| match &self.source {
            Some(source) => {
                let mut schema = parse_schema(&source.text, source.range.clone());
                source.drops.apply(&mut schema);
                schema
            }
            // Entries without a source are built with their schema set.
            None => Value::Bool(false),
        })
    }

    /// The tool's validator, compiled on first use; the compile error (a schema the
    /// validator refuses even after normalisation and repair) is kept and returned on every
    /// call.
    pub(crate) fn validator(&self) -> Result<&ArgumentValidator, &SchemaError> {
        self.validator
            .get_or_init(|| {
                let normalised = NormalisedSchema {
                    schema: self.schema().clone(),
                    notes: Vec::new(),
                };
                ArgumentValidator::from_normalised(&self.name, normalised, self.limits)
            })
            .as_ref()
    }

    pub(crate) fn signature(&self) -> String {
        signature_line(&self.name, self.schema())
    }
}

/// One namespace, in order of first appearance in the sorted tool list.
pub(crate) struct Namespace {
    pub(crate) name: String,
    pub(crate) alias: String,
    /// Entry indices, in sorted order; the position is the code's number.
    pub(crate) members: Vec<u32>,
}

/// The result of [`compress`]: what to send, and how to read the model's calls back.
///
/// Build it once, outside the agent loop; it is immutable, `Send + Sync`, and
/// [`resolve`](Compressed::resolve) against it is cheap. Schemas are normalised at
/// compress time (rendering needs them); each tool's validator is compiled on the first
/// resolve of a call to it, and the separator-insensitive name index, the did-you-mean
/// index and the `q(s=…)` search index are built once, on first need.
pub struct Compressed {
    pub(crate) level: Level,
    pub(crate) tools: Vec<ToolDefinition>,
    pub(crate) system: String,
    pub(crate) stats: Stats,
    pub(crate) entries: Vec<Entry>,
    pub(crate) namespaces: Vec<Namespace>,
    pub(crate) validate: bool,
    pub(crate) search_limit: usize,
    pub(crate) norm_index: OnceLock<NormIndex>,
    pub(crate) suggestions: OnceLock<CodeSuggestions>,
    pub(crate) search_index: OnceLock<crate::search::CatalogIndex>,
    /// The embedding model for `q(s=…)`, when configured ([`Compressed::with_embedder`]).
    pub(crate) dense: Option<crate::search::dense::DenseConfig>,
    /// The hybrid index, built on the first search; `None` if the model failed.
    pub(crate) hybrid_index: OnceLock<Option<crate::search::dense::HybridIndex>>,
}

impl std::fmt::Debug for Compressed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compressed")
            .field("level", &self.level)
            .field("tools", &self.tools.len())
            .field("system", &self.system.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

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
    let selection = select_map_style(options.map_style, options.model(), options.objective);
    let style = selection.map_style;

    let limits = options.limits;
    if tools.len() > limits.max_tools {
        return Err(CompressError::TooManyTools {
            count: tools.len(),
            limit: limits.max_tools,
        });
    }

    // Normalise and check, in input order; the first failure wins.
    let mut seen: HashSet<&str> = HashSet::with_capacity(tools.len());
    let mut prepared = Vec::with_capacity(tools.len());
    let mut normalisations = Vec::new();
    for (index, tool) in tools.iter().enumerate() {
        let name = tool.name.as_str();
        if name.len() > limits.max_tool_name_bytes {
            return Err(CompressError::NameTooLong {
                index,
                bytes: name.len(),
                limit: limits.max_tool_name_bytes,
            });
        }
        if name.is_empty() {
            return Err(CompressError::MissingName { index });
        }
        if !seen.insert(name) {
            return Err(CompressError::DuplicateName {
                name: name.to_owned(),
            });
        }
        let split = options.namespace(name);
        if split.ns.is_empty() || split.op.is_empty() {
            return Err(CompressError::InvalidNamespace {
                tool: name.to_owned(),
                ns: split.ns,
                op: split.op,
            });
        }
        // Most schemas need no change: those are neither copied nor rebuilt here. The quick
        // check accepts no `$ref` and nothing deeper than QUICK_MAX_DEPTH, so it is within
        // the limits whenever the depth limit is at least that.
        let quick = if limits.max_schema_depth >= QUICK_MAX_DEPTH {
            quick_normalise(name, &tool.input_schema)
        } else {
            None
        };
        let schema = match quick {
            Some(quick) => {
                normalisations.extend(quick.notes);
                Normalised::Unchanged { drops: quick.drops }
            }
            None => {
                let NormalisedSchema { schema, notes } =
                    normalise_with_limits(name, &tool.input_schema, &limits)?;
                normalisations.extend(notes);
                Normalised::Changed(schema)
            }
        };
        prepared.push((index, tool, split, schema));
    }
    if options.level == Level::Four && options.compiled.is_empty() {
        return Err(CompressError::NeedsCompiledMap);
    }

    // Every schema passed the normaliser's nesting limit, so writing them is bounded.
    let text = CatalogueText::write(tools);
    let original_chars = text.chars();

    prepared.sort_by(|a, b| compare_names(a.1.name.as_str(), b.1.name.as_str()));

    // Namespaces in order of first appearance; members keep the sorted order.
    let mut namespaces: Vec<Namespace> = Vec::new();
    let mut ns_of: HashMap<String, u32, rustc_hash::FxBuildHasher> = HashMap::default();
    let mut entries = Vec::with_capacity(prepared.len());
    let mut inputs = Vec::with_capacity(prepared.len());
    for (i, (index, tool, split, schema)) in prepared.into_iter().enumerate() {
        let ni = match ns_of.get(&split.ns) {
            Some(&ni) => ni,
            None => {
                let ni = u32::try_from(namespaces.len()).unwrap_or(u32::MAX);
                ns_of.insert(split.ns.clone(), ni);
                namespaces.push(Namespace {
                    alias: if options.level == Level::Two {
                        options.alias(&split.ns)
                    } else {
                        String::new()
                    },
                    name: split.ns,
                    members: Vec::new(),
                });
                ni
            }
        };
        if let Some(ns) = namespaces.get_mut(ni as usize) {
            ns.members.push(u32::try_from(i).unwrap_or(u32::MAX));
        }
        let (schema, source) = match schema {
            Normalised::Changed(schema) => (OnceLock::from(schema), None),
            Normalised::Unchanged { drops } => (
                OnceLock::new(),
                text.schemas.get(index).map(|range| SchemaSource {
                    text: Arc::clone(&text.bytes),
                    range: range.clone(),
                    drops,
                }),
            ),
        };
        inputs.push(tool);
        entries.push(Entry {
            name: tool.name.as_str().to_owned(),
            description: tool.description.clone(),
            schema,
            source,
            validator: OnceLock::new(),
            tags: tool.tags.clone(),
            title: tool.annotations.title.clone(),
            ns: ni,
            op: split.op,
            code: String::new(),
            l4_line: String::new(),
            limits,
        });
    }

    if options.level.is_dispatcher() {
        for (ni, ns) in namespaces.iter().enumerate() {
            let prefix = code_prefix(ni);
            for (oi, &member) in ns.members.iter().enumerate() {
                if let Some(entry) = entries.get_mut(member as usize) {
                    entry.code = format!("{prefix}{oi}");
                }
            }
        }
    }

    // What the renderers read: the normalised schema where normalisation changed it, else
    // the input's own (the same document but for a top-level `$schema`, which no
    // renderer reads).
    let views: Vec<&Value> = entries
        .iter()
        .zip(&inputs)
        .map(|(e, tool)| e.schema.get().unwrap_or(&tool.input_schema))
        .collect();
    let mut lookalikes = None;
    let mut compiled_report = None;
    let mut l4_lines = Vec::new();
    let (wire, system) = match options.level {
        Level::Zero => (level0(tools, &entries), String::new()),
        Level::One => {
            let (wire, unusable) = level1(&entries, &views, options);
            if options.require_compiled && !options.compiled.is_empty() && unusable.count > 0 {
                return Err(CompressError::MissingCompiledLines {
                    uncompiled: unusable.count,
                    tool_count: entries.len(),
                    stale: unusable.stale,
                });
            }
            (wire, String::new())
        }
        Level::Two => (level2(&entries, &namespaces)?, String::new()),
        Level::Three => {
            let (system, groups) = level3_preamble(&entries, &views, &namespaces, style);
            lookalikes = Some(groups);
            (level3_tools(text::T_DESC_3, text::Q_DESC_3), system)
        }
        Level::Four => {
            let (system, groups, report, lines) =
                level4_preamble(&entries, &views, &namespaces, options);
            l4_lines = lines;
            if options.require_compiled && report.uncompiled.count > 0 {
                return Err(CompressError::MissingCompiledLines {
                    uncompiled: report.uncompiled.count,
                    tool_count: entries.len(),
                    stale: report.uncompiled.stale,
                });
            }
            lookalikes = Some(groups);
            compiled_report = Some(report);
            (level3_tools(text::T_DESC_4, text::Q_DESC_4), system)
        }
    };

    drop(views);
    for (m, line) in l4_lines {
        if let Some(e) = entries.get_mut(m as usize) {
            e.l4_line = line;
        }
    }

    let compressed_chars = json_chars(&wire) + count_chars(system.as_bytes());
    let (original_tokens, compressed_tokens) = token_counts(options, &text, &wire, &system);
    let stats = Stats {
        level: options.level,
        map_style: style,
        requested_map_style: selection.requested_map_style,
        fallback_reason: selection.fallback_reason,
        tool_count: tools.len(),
        wire_tool_count: wire.len(),
        original_chars,
        compressed_chars,
        saved_pct: if tools.is_empty() {
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
    })
}

/// How compress holds a tool's normalised schema before building its entry.
enum Normalised {
    /// The input schema is already normal (but for dropped top-level keys).
    Unchanged { drops: RootDrops },
    /// Normalisation rewrote it.
    Changed(Value),
}

#[cfg(feature = "tokens")]
fn token_counts(
    options: &Options,
    original: &CatalogueText,
    wire: &[ToolDefinition],
    system: &str,
) -> (Option<usize>, Option<usize>) {
    if !options.count_tokens {
        return (None, None);
    }
    let original = String::from_utf8_lossy(&original.bytes);
    let mut compressed = serde_json::to_string(wire).unwrap_or_default();
    compressed.push_str(system);
    (
        crate::tokens::count_o200k(&original),
        crate::tokens::count_o200k(&compressed),
    )
}

#[cfg(not(feature = "tokens"))]
fn token_counts(
    _: &Options,
    _: &CatalogueText,
    _: &[ToolDefinition],
    _: &str,
) -> (Option<usize>, Option<usize>) {
    (None, None)
}

/// The letters of namespace `ni`: `a`…`z`, then `aa`…`zz`, then `aaa`… (bijective base 26,
/// so codes never run out and never collide).
pub(crate) fn code_prefix(ni: usize) -> String {
    let mut letters = Vec::with_capacity(3);
    let mut n = ni + 1;
    while n > 0 {
        n -= 1;
        letters.push(b'a' + u8::try_from(n % 26).unwrap_or(0));
        n /= 26;
    }
    letters.reverse();
    String::from_utf8(letters).unwrap_or_default()
}

fn wire_tool(name: &str, description: String, input_schema: Value) -> ToolDefinition {
    ToolDefinition::new(name, input_schema).with_description(description)
}

fn level0(tools: &[ToolDefinition], entries: &[Entry]) -> Vec<ToolDefinition> {
    // Original schemas, untouched, in sorted order.
    let by_name: HashMap<&str, &ToolDefinition> =
        tools.iter().map(|t| (t.name.as_str(), t)).collect();
    entries
        .iter()
        .filter_map(|e| by_name.get(e.name.as_str()))
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
struct Unusable {
    count: usize,
    stale: Vec<String>,
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

fn level1(
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

fn level2(
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
            .map(|e| Value::String(e.op.clone()))
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

fn level3_tools(t_desc: &str, q_desc: &str) -> Vec<ToolDefinition> {
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
fn level3_preamble(
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
            system.push_str(&e.code);
            system.push(' ');
            system.push_str(&e.name);
            let body_start = system.len();
            match style {
                MapStyle::NameRequired | MapStyle::Explicit | MapStyle::Distinct => {
                    let mut required = required_iter(schema).peekable();
                    if required.peek().is_none() {
                        if style == MapStyle::Explicit {
                            system.push_str(" ()");
                        }
                    } else {
                        system.push(' ');
                        for (i, r) in required.enumerate() {
                            if i > 0 {
                                system.push(',');
                            }
                            system.push_str(r);
                        }
                    }
                }
                MapStyle::Signature => {
                    system.push('(');
                    push_params(&mut system, schema);
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
    let ambiguous = counts.values().filter(|&&n| n >= 2).sum();
    let largest = counts
        .values()
        .copied()
        .filter(|&n| n >= 2)
        .max()
        .unwrap_or(1);
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

/// A rendered level-4 map line and the index of its entry.
type MapLine = (u32, String);

/// What level 4 found in the compiled map.
struct CompiledReport {
    uncompiled: Unusable,
    /// Map keys naming no tool, sorted.
    orphans: Vec<String>,
}

/// The level-4 Python preamble, the lookalike figures, the compiled-map report, and each
/// tool's rendered line by entry index (the caller stores them in the entries, for `q`).
///
/// A tool's line is `def {python signature}:"{docstring}"`: the parameters always come
/// from the current schema; only the docstring comes from a compiled line that verifies.
fn level4_preamble(
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
    let ambiguous = bodies.values().filter(|&&n| n >= 2).sum();
    let largest = bodies
        .values()
        .copied()
        .filter(|&n| n >= 2)
        .max()
        .unwrap_or(1);

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

/// A call as a model would emit it (see [`Compressed::encode_call_for_test`]).
#[derive(Debug, Clone, PartialEq)]
pub struct EncodedCall {
    /// The wire tool name.
    pub name: String,
    /// The wire arguments.
    pub args: Value,
}

impl Compressed {
    /// The level used.
    pub fn level(&self) -> Level {
        self.level
    }

    /// The wire tools to send, in the neutral shape (`{name, description, input_schema}`).
    pub fn tools(&self) -> &[ToolDefinition] {
        &self.tools
    }

    /// Text to append to the system prompt; empty at levels 0–2.
    pub fn system(&self) -> &str {
        &self.system
    }

    /// Whether the preamble should sit behind a cache breakpoint (levels 3–4).
    pub fn cache_preamble(&self) -> bool {
        self.level.is_dispatcher()
    }

    /// What the compression did.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// `(real name, code)` in code order; empty below level 3.
    pub fn codes(&self) -> impl Iterator<Item = (&str, &str)> {
        self.code_order()
            .filter(|e| !e.code.is_empty())
            .map(|e| (e.name.as_str(), e.code.as_str()))
    }

    /// The level-3 code of a real tool.
    ///
    /// ```
    /// # use chef_compress::{compress, Level, Options};
    /// # use chef_ir::ToolDefinition;
    /// # use serde_json::json;
    /// let tools = [ToolDefinition::new("slack_post", json!({"type": "object"}))];
    /// let c = compress(&tools, &Options::new().with_level(Level::Three))?;
    /// assert_eq!(c.code_for("slack_post")?, "a0");
    /// let c1 = compress(&tools, &Options::new())?;
    /// assert_eq!(c1.code_for("slack_post").unwrap_err().to_string(), "no code for slack_post (level 1)");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn code_for(&self, name: &str) -> Result<&str, CodeError> {
        let entry = self.entry_by_name(name);
        if !self.level.is_dispatcher() {
            return Err(CodeError::NoCodeAtLevel {
                name: name.to_owned(),
                level: self.level,
            });
        }
        entry
            .map(|e| e.code.as_str())
            .ok_or_else(|| CodeError::UnknownTool {
                name: name.to_owned(),
            })
    }

    /// Builds the raw call a model would emit to invoke `name` with `args` (a test aid):
    /// `name(args)` at levels 0–1, `alias(op, args)` at level 2, `t(f=code, a=args)` at 3.
    /// [`resolve`](Self::resolve) of the result gives back `Call { name, args }`.
    pub fn encode_call_for_test(&self, name: &str, args: Value) -> Result<EncodedCall, CodeError> {
        let entry = self
            .entry_by_name(name)
            .ok_or_else(|| CodeError::UnknownTool {
                name: name.to_owned(),
            })?;
        Ok(match self.level {
            Level::Zero | Level::One => EncodedCall {
                name: entry.name.clone(),
                args,
            },
            Level::Two => {
                let alias = self
                    .namespaces
                    .get(entry.ns as usize)
                    .map(|ns| ns.alias.clone())
                    .unwrap_or_default();
                let mut bag = Map::new();
                bag.insert("op".to_owned(), Value::String(entry.op.clone()));
                bag.insert("args".to_owned(), args);
                EncodedCall {
                    name: alias,
                    args: Value::Object(bag),
                }
            }
            Level::Three | Level::Four => {
                let mut bag = Map::new();
                bag.insert("f".to_owned(), Value::String(entry.code.clone()));
                bag.insert("a".to_owned(), args);
                EncodedCall {
                    name: "t".to_owned(),
                    args: Value::Object(bag),
                }
            }
        })
    }

    /// The entry with exactly this real name (entries are sorted by the total order).
    pub(crate) fn entry_by_name(&self, name: &str) -> Option<&Entry> {
        self.entries
            .binary_search_by(|e| compare_names(&e.name, name))
            .ok()
            .and_then(|i| self.entries.get(i))
    }

    /// Entries in code order (namespace order, then sorted order within a namespace).
    pub(crate) fn code_order(&self) -> impl Iterator<Item = &Entry> {
        self.namespaces
            .iter()
            .flat_map(|ns| ns.members.iter())
            .filter_map(|&m| self.entries.get(m as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            e.schema = OnceLock::from(json!("not a schema"));
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
            e.schema = OnceLock::from(json!("not a schema"));
        }
        assert!(matches!(
            c.resolve("t", &json!({"f": "a0"})),
            crate::Resolution::Call { .. }
        ));
    }

    #[test]
    fn code_prefixes_are_bijective_base_26() {
        assert_eq!(code_prefix(0), "a");
        assert_eq!(code_prefix(25), "z");
        assert_eq!(code_prefix(26), "aa");
        assert_eq!(code_prefix(27), "ab");
        assert_eq!(code_prefix(51), "az");
        assert_eq!(code_prefix(52), "ba");
        assert_eq!(code_prefix(701), "zz");
        assert_eq!(code_prefix(702), "aaa");
    }
}
