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
    options::{Level, MapStyle, Options, ToolNamespace},
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
        ArgumentValidator, Limits, Normalisation, NormalisedSchema, QUICK_MAX_DEPTH, RootDrops,
        SchemaError, normalise_with_limits, quick_normalise,
    },
};

/// One input tool, checked and normalised once per [`Catalogue`] and shared by every
/// [`Compressed`] made from it (so a schema is parsed, and a validator compiled, at most once
/// per catalogue however many selections of it are compressed).
pub(crate) struct ToolCore {
    /// The input definition, kept by a [`Catalogue`] (level 0 sends it as it is, and the
    /// renderers read its schema when normalisation left it unchanged); `None` when
    /// [`compress`] borrows it from its caller for the one compression it makes.
    tool: Option<ToolDefinition>,
    pub(crate) name: String,
    pub(crate) description: String,
    /// The normalised schema: what the validator compiles and the search index reads. Set
    /// when normalisation changed the schema; otherwise parsed from `source` on first need
    /// (most schemas need no change, and most tools of a large catalogue are never called
    /// or searched).
    schema: OnceLock<Value>,
    /// The schema's text in the catalogue's JSON, when it needed no normalisation.
    source: Option<SchemaSource>,
    /// Compiled on first resolve (compiling is most of what a validator costs, and most
    /// tools of a large catalogue are never called).
    validator: OnceLock<Result<ArgumentValidator, SchemaError>>,
    /// Tags and annotation title, for the `q(s=…)` index.
    pub(crate) tags: Vec<String>,
    pub(crate) title: Option<String>,
    /// The limits the validator is compiled with.
    limits: Limits,
    /// What normalisation changed, for the statistics.
    notes: Vec<Normalisation>,
    /// Characters of the tool's object in the catalogue's JSON (`serde_json` of the
    /// definition): the tool's share of the statistics' `original_chars`.
    chars: usize,
    /// Byte range of that object in the catalogue's text.
    #[cfg_attr(
        not(feature = "tokens"),
        allow(dead_code, reason = "read for token counts")
    )]
    object: Range<usize>,
    /// The name's place in the catalogue's locale-free name order: selections sort by it.
    rank: u32,
    /// The name's default namespace split ([`ToolNamespace::split`]).
    split: ToolNamespace,
    /// That namespace's number in the catalogue (first appearance in input order).
    ns_id: u32,
    /// The map line's body for the required-parameter styles: the required names joined by
    /// `,` (`None` when there are none), rendered on first need.
    required_line: OnceLock<Option<String>>,
    /// The map line's parameter list for the signature style, rendered on first need.
    params_line: OnceLock<String>,
}

/// One tool of a [`Compressed`], in sorted order: the shared core plus what this
/// compression gave it.
pub(crate) struct Entry {
    core: Arc<ToolCore>,
    pub(crate) ns: u32,
    /// The operation when the caller's `namespace_of` gave one; else the core's default.
    op: Option<String>,
    /// The level-3/4 code; empty below level 3.
    pub(crate) code: Code,
    /// The level-4 map line (`def name(sig):"doc"`); empty below level 4.
    pub(crate) l4_line: String,
}

impl Entry {
    /// The operation within the namespace (the level-2 `op` value).
    pub(crate) fn op(&self) -> &str {
        self.op.as_deref().unwrap_or(&self.core.split.op)
    }
}

impl std::ops::Deref for Entry {
    type Target = ToolCore;
    fn deref(&self) -> &ToolCore {
        &self.core
    }
}

/// Where a tool's schema can be parsed from.
struct SchemaSource {
    text: Arc<Vec<u8>>,
    range: Range<usize>,
    /// Root keys normalisation drops.
    drops: RootDrops,
}

impl ToolCore {
    /// The normalised schema, parsed from the catalogue's text on first use when it needed
    /// no normalisation.
    pub(crate) fn schema(&self) -> &Value {
        self.schema.get_or_init(|| match &self.source {
            Some(source) => {
                let mut schema = parse_schema(&source.text, source.range.clone());
                source.drops.apply(&mut schema);
                schema
            }
            // Tools without a source are built with their schema set.
            None => Value::Bool(false),
        })
    }

    /// What the renderers read: the normalised schema where normalisation changed it, else
    /// the input's own (the same document but for a `$schema` or an empty `required`, which
    /// render as their absence does).
    fn view<'a>(&'a self, input: &'a ToolDefinition) -> &'a Value {
        match &self.source {
            Some(_) => &input.input_schema,
            None => self.schema(),
        }
    }

    /// The required parameters of `view` (this tool's [`view`](Self::view)) joined by `,`,
    /// or `None` when there are none.
    fn required_line(&self, view: &Value) -> Option<&str> {
        self.required_line
            .get_or_init(|| {
                let mut required = required_iter(view).peekable();
                required.peek()?;
                let mut line = String::new();
                for (i, r) in required.enumerate() {
                    if i > 0 {
                        line.push(',');
                    }
                    line.push_str(r);
                }
                Some(line)
            })
            .as_deref()
    }

    /// The parameter list of the signature map style (`a,b?:int`) of `view` (this tool's
    /// [`view`](Self::view)).
    fn params_line(&self, view: &Value) -> &str {
        self.params_line.get_or_init(|| {
            let mut line = String::new();
            push_params(&mut line, view);
            line
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
    // One compression: the tools are borrowed for it, not copied into the catalogue.
    let catalogue = Catalogue::prepare(tools, options.limits, false)?;
    let inputs: Vec<&ToolDefinition> = tools.iter().collect();
    render(&catalogue.cores, &inputs, &catalogue, options)
}

/// A tool catalogue checked and normalised once, to compress many times.
///
/// [`compress`] is `Catalogue::with_limits(tools, options.limits())?.compress(options)`. An
/// agent runtime that compresses a different selection of the same registry every turn
/// (task pruning) keeps one `Catalogue` and calls [`compress_subset`](Self::compress_subset):
/// names are checked, schemas normalised, the statistics' character counts taken and the
/// names ordered once, and each schema is parsed and each validator compiled at most once,
/// shared by every [`Compressed`] made from the catalogue. The output is byte-identical to
/// [`compress`] of the same tools.
///
/// ```
/// use chef_compress::{Catalogue, Level, Options, compress};
/// use chef_ir::ToolDefinition;
/// use serde_json::json;
///
/// let tools: Vec<_> = ["github_search", "github_get_issue", "slack_post"]
///     .into_iter()
///     .map(|name| ToolDefinition::new(name, json!({"type": "object"})))
///     .collect();
/// let catalogue = Catalogue::new(&tools)?;
/// let options = Options::new().with_level(Level::Three);
/// let some = catalogue.compress_subset(&[2, 0], &options)?;
/// let direct = compress(&[tools[2].clone(), tools[0].clone()], &options)?;
/// assert_eq!(some.system(), direct.system());
/// assert_eq!(some.stats(), direct.stats());
/// # Ok::<(), chef_compress::CompressError>(())
/// ```
pub struct Catalogue {
    /// In input order.
    cores: Vec<Arc<ToolCore>>,
    /// How many distinct default namespaces the tools have.
    ns_count: usize,
    limits: Limits,
    /// The catalogue's JSON text (`serde_json` of the input tools).
    #[cfg_attr(
        not(feature = "tokens"),
        allow(dead_code, reason = "read for token counts")
    )]
    text: Arc<Vec<u8>>,
}

impl std::fmt::Debug for Catalogue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalogue")
            .field("tools", &self.cores.len())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Catalogue {
    /// Checks and normalises `tools` under the default [`Limits`].
    ///
    /// # Errors
    /// The first problem, in input order: too many tools, an empty, over-long or duplicate
    /// name, or a schema normalisation refuses (each naming the tool).
    pub fn new(tools: &[ToolDefinition]) -> Result<Self, CompressError> {
        Self::with_limits(tools, Limits::default())
    }

    /// Checks and normalises `tools` under `limits` (those of the [`Options`] it will be
    /// compressed with; a compression under other limits prepares the tools again).
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn with_limits(tools: &[ToolDefinition], limits: Limits) -> Result<Self, CompressError> {
        Self::prepare(tools, limits, true)
    }

    /// Checks and normalises `tools`; `keep` keeps a copy of each definition in the
    /// catalogue (else the one compression made from it must be given them).
    fn prepare(
        tools: &[ToolDefinition],
        limits: Limits,
        keep: bool,
    ) -> Result<Self, CompressError> {
        if tools.len() > limits.max_tools {
            return Err(CompressError::TooManyTools {
                count: tools.len(),
                limit: limits.max_tools,
            });
        }
        // Normalise and check, in input order; the first failure wins.
        let mut seen: HashSet<&str, rustc_hash::FxBuildHasher> =
            HashSet::with_capacity_and_hasher(tools.len(), rustc_hash::FxBuildHasher);
        let mut prepared = Vec::with_capacity(tools.len());
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
            // Most schemas need no change: those are neither copied nor rebuilt here. The
            // quick check accepts no `$ref` and nothing deeper than QUICK_MAX_DEPTH, so it
            // is within the limits whenever the depth limit is at least that.
            let quick = if limits.max_schema_depth >= QUICK_MAX_DEPTH {
                quick_normalise(name, &tool.input_schema)
            } else {
                None
            };
            prepared.push(match quick {
                Some(quick) => (Normalised::Unchanged { drops: quick.drops }, quick.notes),
                None => {
                    let NormalisedSchema { schema, notes } =
                        normalise_with_limits(name, &tool.input_schema, &limits)?;
                    (Normalised::Changed(schema), notes)
                }
            });
        }

        // Every schema passed the normaliser's nesting limit, so writing them is bounded.
        let text = CatalogueText::write(tools);
        let mut order: Vec<u32> = (0..u32::try_from(tools.len()).unwrap_or(u32::MAX)).collect();
        order.sort_by(|&a, &b| {
            let name = |i: u32| tools.get(i as usize).map_or("", |t| t.name.as_str());
            compare_names(name(a), name(b))
        });
        let mut rank = vec![0_u32; tools.len()];
        for (r, &i) in order.iter().enumerate() {
            if let Some(slot) = rank.get_mut(i as usize) {
                *slot = u32::try_from(r).unwrap_or(u32::MAX);
            }
        }

        let mut ns_ids: HashMap<String, u32, rustc_hash::FxBuildHasher> = HashMap::default();
        let mut cores = Vec::with_capacity(tools.len());
        for (index, (tool, (normalised, notes))) in tools.iter().zip(prepared).enumerate() {
            let split = ToolNamespace::split(tool.name.as_str());
            let next = u32::try_from(ns_ids.len()).unwrap_or(u32::MAX);
            let ns_id = *ns_ids.entry(split.ns.clone()).or_insert(next);
            let object = text.objects.get(index).cloned().unwrap_or_default();
            let (schema, source) = match normalised {
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
            cores.push(Arc::new(ToolCore {
                name: tool.name.as_str().to_owned(),
                description: tool.description.clone(),
                schema,
                source,
                validator: OnceLock::new(),
                tags: tool.tags.clone(),
                title: tool.annotations.title.clone(),
                limits,
                notes,
                chars: text.bytes.get(object.clone()).map_or(0, count_chars),
                object,
                rank: rank.get(index).copied().unwrap_or(u32::MAX),
                split,
                ns_id,
                required_line: OnceLock::new(),
                params_line: OnceLock::new(),
                tool: keep.then(|| tool.clone()),
            }));
        }
        Ok(Self {
            cores,
            ns_count: ns_ids.len(),
            limits,
            text: text.bytes,
        })
    }

    /// How many tools the catalogue holds.
    pub fn len(&self) -> usize {
        self.cores.len()
    }

    /// Whether the catalogue holds no tool.
    pub fn is_empty(&self) -> bool {
        self.cores.is_empty()
    }

    /// The tools, in input order.
    pub fn tools(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.cores.iter().filter_map(|c| c.tool.as_ref())
    }

    /// Compresses every tool of the catalogue; the same as [`compress`] of its tools.
    ///
    /// # Errors
    /// As [`compress`].
    pub fn compress(&self, options: &Options) -> Result<Compressed, CompressError> {
        if options.limits != self.limits {
            return Self::with_limits(&self.tools().cloned().collect::<Vec<_>>(), options.limits)?
                .compress(options);
        }
        let inputs: Vec<&ToolDefinition> = self.tools().collect();
        render(&self.cores, &inputs, self, options)
    }

    /// Compresses the tools at `indices` (input positions, in the order a `Vec` of them
    /// would be given to [`compress`]); the same as [`compress`] of those tools.
    ///
    /// # Errors
    /// [`CompressError::UnknownToolIndex`] for an index past the end,
    /// [`CompressError::DuplicateName`] for an index given twice, and otherwise as
    /// [`compress`].
    pub fn compress_subset(
        &self,
        indices: &[usize],
        options: &Options,
    ) -> Result<Compressed, CompressError> {
        let mut taken = vec![false; self.cores.len()];
        let mut cores = Vec::with_capacity(indices.len());
        for &index in indices {
            let (Some(core), Some(taken)) = (self.cores.get(index), taken.get_mut(index)) else {
                return Err(CompressError::UnknownToolIndex {
                    index,
                    len: self.cores.len(),
                });
            };
            if std::mem::replace(taken, true) {
                return Err(CompressError::DuplicateName {
                    name: core.name.clone(),
                });
            }
            cores.push(Arc::clone(core));
        }
        let inputs: Vec<&ToolDefinition> = cores.iter().filter_map(|c| c.tool.as_ref()).collect();
        if options.limits != self.limits {
            let tools: Vec<ToolDefinition> = inputs.into_iter().cloned().collect();
            return Self::with_limits(&tools, options.limits)?.compress(options);
        }
        render(&cores, &inputs, self, options)
    }
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
    let limits = options.limits;
    if cores.len() > limits.max_tools {
        return Err(CompressError::TooManyTools {
            count: cores.len(),
            limit: limits.max_tools,
        });
    }

    // The namespace of each tool, checked in the caller's order; the first failure wins.
    let mut splits: Vec<std::borrow::Cow<'_, ToolNamespace>> = Vec::with_capacity(cores.len());
    for core in cores {
        let split = match &options.namespace_of {
            Some(f) => std::borrow::Cow::Owned(f(&core.name)),
            None => std::borrow::Cow::Borrowed(&core.split),
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
    if options.level == Level::Four && options.compiled.is_empty() {
        return Err(CompressError::NeedsCompiledMap);
    }
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

    // Namespaces in order of first appearance; members keep the sorted order. One pass
    // numbers the namespaces and counts their members, so each list is allocated once.
    // The default split numbers namespaces per catalogue, so a table replaces the map.
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
                alias: if options.level == Level::Two {
                    options.alias(&name)
                } else {
                    String::new()
                },
                name,
                members: Vec::with_capacity(size as usize),
            }
        })
        .collect();
    let dispatcher = options.level.is_dispatcher();
    let mut entries = Vec::with_capacity(cores.len());
    for (i, (&at, &ni)) in order.iter().zip(&ns_index).enumerate() {
        let (Some(core), Some(split), Some(ns)) = (
            cores.get(at),
            splits.get(at),
            namespaces.get_mut(ni as usize),
        ) else {
            continue;
        };
        let oi = ns.members.len();
        ns.members.push(u32::try_from(i).unwrap_or(u32::MAX));
        let code = if dispatcher {
            Code::new(ni as usize, oi)
        } else {
            Code::default()
        };
        entries.push(Entry {
            core: Arc::clone(core),
            ns: ni,
            op: match split {
                std::borrow::Cow::Owned(split) => Some(split.op.clone()),
                std::borrow::Cow::Borrowed(_) => None,
            },
            code,
            l4_line: String::new(),
        });
    }
    drop(splits);
    if options.level == Level::Two {
        distinct_operations(&mut entries, &namespaces);
    }

    // The input definitions in sorted order, and the schemas the renderers read.
    let sorted: Vec<&ToolDefinition> = order
        .iter()
        .filter_map(|&at| inputs.get(at).copied())
        .collect();
    let views: Vec<&Value> = entries
        .iter()
        .zip(&sorted)
        .map(|(e, input)| e.core.view(input))
        .collect();
    let mut lookalikes = None;
    let mut compiled_report = None;
    let mut l4_lines = Vec::new();
    let (wire, system) = match options.level {
        Level::Zero => (level0(&sorted), String::new()),
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
    })
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

/// How a tool's normalised schema is held while its catalogue is prepared.
enum Normalised {
    /// The input schema is already normal (but for dropped top-level keys).
    Unchanged { drops: RootDrops },
    /// Normalisation rewrote it.
    Changed(Value),
}

#[cfg(feature = "tokens")]
fn token_counts(
    options: &Options,
    cores: &[Arc<ToolCore>],
    catalogue: &Catalogue,
    wire: &[ToolDefinition],
    system: &str,
) -> (Option<usize>, Option<usize>) {
    if !options.count_tokens {
        return (None, None);
    }
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
    (
        crate::tokens::count_o200k(&original),
        crate::tokens::count_o200k(&compressed),
    )
}

#[cfg(not(feature = "tokens"))]
fn token_counts(
    _: &Options,
    _: &[Arc<ToolCore>],
    _: &Catalogue,
    _: &[ToolDefinition],
    _: &str,
) -> (Option<usize>, Option<usize>) {
    (None, None)
}

/// A level-3/4 code, held inline: namespace letters then the decimal position (`a0`,
/// `ab12`). The longest possible (`usize::MAX` of each) is 14 letters and 20 digits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Code {
    bytes: [u8; 34],
    len: u8,
}

impl Default for Code {
    fn default() -> Self {
        Self {
            bytes: [0; 34],
            len: 0,
        }
    }
}

impl Code {
    /// The code of operation `oi` of namespace `ni`.
    pub(crate) fn new(ni: usize, oi: usize) -> Self {
        let mut code = Self::default();
        // Letters: bijective base 26 (`a`…`z`, `aa`…), written backwards then reversed.
        let mut n = ni + 1;
        let mut letters = 0;
        while n > 0 && letters < 14 {
            n -= 1;
            code.push(b'a' + u8::try_from(n % 26).unwrap_or(0));
            letters += 1;
            n /= 26;
        }
        code.bytes.get_mut(..letters).map(<[u8]>::reverse);
        let start = letters;
        let mut n = oi;
        loop {
            code.push(b'0' + u8::try_from(n % 10).unwrap_or(0));
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let end = usize::from(code.len);
        code.bytes.get_mut(start..end).map(<[u8]>::reverse);
        code
    }

    fn push(&mut self, byte: u8) {
        if let Some(slot) = self.bytes.get_mut(usize::from(self.len)) {
            *slot = byte;
            self.len += 1;
        }
    }

    /// Appends the code to `out` (ASCII, so no UTF-8 check is needed).
    pub(crate) fn push_to(&self, out: &mut String) {
        let bytes = self.bytes.get(..usize::from(self.len)).unwrap_or_default();
        out.extend(bytes.iter().map(|&b| char::from(b)));
    }

    /// The code as text.
    pub(crate) fn as_str(&self) -> &str {
        // Only ASCII letters and digits are ever pushed.
        std::str::from_utf8(self.bytes.get(..usize::from(self.len)).unwrap_or_default())
            .unwrap_or_default()
    }
}

impl std::ops::Deref for Code {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq<str> for Code {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::fmt::Debug for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

/// The letters of namespace `ni`: `a`…`z`, then `aa`…`zz`, then `aaa`… (bijective base 26,
/// so codes never run out and never collide).
#[cfg(test)]
fn code_prefix(ni: usize) -> String {
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

fn level0(sorted: &[&ToolDefinition]) -> Vec<ToolDefinition> {
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
                bag.insert("op".to_owned(), Value::String(entry.op().to_owned()));
                bag.insert("args".to_owned(), args);
                EncodedCall {
                    name: alias,
                    args: Value::Object(bag),
                }
            }
            Level::Three | Level::Four => {
                let mut bag = Map::new();
                bag.insert(
                    "f".to_owned(),
                    Value::String(entry.code.as_str().to_owned()),
                );
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

    #[test]
    fn codes_are_the_namespace_letters_and_the_decimal_position() {
        for (ni, oi) in [
            (0, 0),
            (25, 9),
            (26, 10),
            (27, 1234567),
            (701, 3),
            (702, 99),
        ] {
            assert_eq!(
                Code::new(ni, oi).as_str(),
                format!("{}{oi}", code_prefix(ni))
            );
        }
        let longest = Code::new(usize::MAX - 1, usize::MAX);
        assert_eq!(
            longest.as_str(),
            format!("{}{}", code_prefix(usize::MAX - 1), usize::MAX)
        );
        assert_eq!(Code::default().as_str(), "");
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
