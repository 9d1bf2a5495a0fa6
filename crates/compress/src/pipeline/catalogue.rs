//! The catalogue: tools checked and normalised once ([`Catalogue`]), each held as a shared
//! [`ToolCore`] that every compression of the catalogue reads.

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, OnceLock},
};

use chef_ir::ToolDefinition;
use serde_json::Value;

use super::render;
use crate::compress::{Compressed, SchemaSource, ToolCore};
use crate::{
    error::CompressError,
    options::{Options, ToolNamespace},
    order::compare_names,
    source::{CatalogueText, count_chars},
    validate::{
        Limits, NormalisedSchema, QUICK_MAX_DEPTH, RootDrops, normalise_with_limits,
        quick_normalise,
    },
};

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
///
/// [`compress`]: crate::compress()
pub struct Catalogue {
    /// In input order.
    pub(super) cores: Vec<Arc<ToolCore>>,
    /// How many distinct default namespaces the tools have.
    pub(super) ns_count: usize,
    pub(super) limits: Limits,
    /// The catalogue's JSON text (`serde_json` of the input tools).
    #[cfg_attr(
        not(feature = "tokens"),
        allow(dead_code, reason = "read for token counts")
    )]
    pub(super) text: Arc<Vec<u8>>,
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
    pub(super) fn prepare(
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
            let one = prepare_one(index, tool, &limits)?;
            if !seen.insert(tool.name.as_str()) {
                return Err(CompressError::DuplicateName {
                    name: tool.name.as_str().to_owned(),
                });
            }
            prepared.push(one);
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
    ///
    /// [`compress`]: crate::compress()
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
    ///
    /// [`compress`]: crate::compress()
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

/// One tool's checks and normalised schema (`index`: its place in the list, for errors).
fn prepare_one(
    index: usize,
    tool: &ToolDefinition,
    limits: &Limits,
) -> Result<(Normalised, Vec<crate::validate::Normalisation>), CompressError> {
    let name = tool.name.as_str();
    if name.len() > limits.max_tool_name_bytes {
        return Err(CompressError::NameTooLong {
            index,
            bytes: name.len(),
            limit: limits.max_tool_name_bytes,
        });
    }
    // A blank name is none: no call could name it (a wire name of `_`).
    if name.trim().is_empty() {
        return Err(CompressError::MissingName { index });
    }
    crate::error::check_names(index, tool)?;
    // Most schemas need no change: those are neither copied nor rebuilt here. The quick
    // check accepts no `$ref` and nothing deeper than QUICK_MAX_DEPTH, so it is within the
    // limits whenever the depth limit is at least that.
    let quick = if limits.max_schema_depth >= QUICK_MAX_DEPTH {
        quick_normalise(name, &tool.input_schema)
    } else {
        None
    };
    Ok(match quick {
        Some(quick) => (Normalised::Unchanged { drops: quick.drops }, quick.notes),
        None => {
            let NormalisedSchema { schema, notes } =
                normalise_with_limits(name, &tool.input_schema, limits)?;
            (Normalised::Changed(schema), notes)
        }
    })
}

/// Whether [`compress`](crate::compress) can take `tool`, alone: its name (length, blank,
/// control characters, and its parameters' names) and its input schema (an object schema
/// that some argument object satisfies, within `limits`' nesting). What it checks is what
/// compression refuses of one tool, with the same error; a catalogue's own rules (the
/// count, a name given twice) are not checked here. `index` is the tool's place in its
/// list, for the error.
///
/// A session checks each tool when it is registered (`Chef::register_tools`), so one bad
/// tool is refused there, naming it, rather than failing every later compile.
///
/// # Errors
///
/// The [`CompressError`] compression would give for this tool.
///
/// ```
/// use chef_compress::{check_tool, validate::Limits};
/// use chef_ir::ToolDefinition;
/// use serde_json::json;
///
/// let good = ToolDefinition::new("get_weather", json!({"type": "object"}));
/// assert!(check_tool(0, &good, &Limits::default()).is_ok());
/// let bad = ToolDefinition::new("shout", json!({"type": "string"}));
/// assert!(check_tool(1, &bad, &Limits::default()).is_err());
/// ```
pub fn check_tool(
    index: usize,
    tool: &ToolDefinition,
    limits: &Limits,
) -> Result<(), CompressError> {
    prepare_one(index, tool, limits).map(|_| ())
}

/// How a tool's normalised schema is held while its catalogue is prepared.
pub(super) enum Normalised {
    /// The input schema is already normal (but for dropped top-level keys).
    Unchanged { drops: RootDrops },
    /// Normalisation rewrote it.
    Changed(Value),
}
