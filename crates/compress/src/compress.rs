//! `compress`: normalise, sort, group and render the tools at one level.

use std::{
    collections::{HashMap, HashSet},
    sync::OnceLock,
};

use chef_ir::ToolDefinition;
use serde_json::{Map, Value, json};

use crate::{
    error::{CodeError, CompressError},
    lookup::{CodeSuggestions, NormIndex},
    options::{Level, MapStyle, Options},
    order::compare_names,
    policy::select_map_style,
    render::{first_sentence, flatten_schema, push_params, required_names, signature_line},
    stats::{Stats, json_chars, saved_pct},
    text,
    validate::ArgumentValidator,
};

/// One input tool after normalisation, in sorted order.
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) validator: ArgumentValidator,
    pub(crate) ns: u32,
    pub(crate) op: String,
    /// The level-3/4 code; empty below level 3.
    pub(crate) code: String,
}

impl Entry {
    /// The normalised schema: what renderers read.
    pub(crate) fn schema(&self) -> &Value {
        self.validator.normalised_schema()
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
/// [`resolve`](Compressed::resolve) against it is cheap (validators are compiled at
/// compress time; the separator-insensitive name index and the did-you-mean index are
/// built once, on first need).
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
    pub(crate) search_text: OnceLock<Vec<(String, String)>>,
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

    // Normalise and check, in input order; the first failure wins.
    let mut seen: HashSet<&str> = HashSet::with_capacity(tools.len());
    let mut prepared = Vec::with_capacity(tools.len());
    let mut normalisations = Vec::new();
    for (index, tool) in tools.iter().enumerate() {
        let name = tool.name.as_str();
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
        let validator = ArgumentValidator::new(name, &tool.input_schema)?;
        normalisations.extend(validator.normalisations().iter().cloned());
        prepared.push((tool, split, validator));
    }
    if options.level == Level::Four {
        return Err(CompressError::NeedsCompiledMap);
    }

    prepared.sort_by(|a, b| compare_names(a.0.name.as_str(), b.0.name.as_str()));

    // Namespaces in order of first appearance; members keep the sorted order.
    let mut namespaces: Vec<Namespace> = Vec::new();
    let mut ns_of: HashMap<String, u32> = HashMap::new();
    let mut entries = Vec::with_capacity(prepared.len());
    for (i, (tool, split, validator)) in prepared.into_iter().enumerate() {
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
        entries.push(Entry {
            name: tool.name.as_str().to_owned(),
            description: tool.description.clone(),
            validator,
            ns: ni,
            op: split.op,
            code: String::new(),
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

    let mut lookalikes = None;
    let (wire, system) = match options.level {
        Level::Zero => (level0(tools, &entries), String::new()),
        Level::One => (level1(&entries, options.signature_prefix), String::new()),
        Level::Two => (level2(&entries, &namespaces)?, String::new()),
        Level::Three | Level::Four => {
            let (system, groups) = level3_preamble(&entries, &namespaces, style);
            lookalikes = Some(groups);
            (level3_tools(), system)
        }
    };

    let original_chars = json_chars(tools);
    let compressed_chars = json_chars(&wire) + system.chars().count();
    let (original_tokens, compressed_tokens) = token_counts(options, tools, &wire, &system);
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
        search_text: OnceLock::new(),
    })
}

#[cfg(feature = "tokens")]
fn token_counts(
    options: &Options,
    tools: &[ToolDefinition],
    wire: &[ToolDefinition],
    system: &str,
) -> (Option<usize>, Option<usize>) {
    if !options.count_tokens {
        return (None, None);
    }
    let original = serde_json::to_string(tools).unwrap_or_default();
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
    _: &[ToolDefinition],
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

fn level1(entries: &[Entry], signature_prefix: bool) -> Vec<ToolDefinition> {
    entries
        .iter()
        .map(|e| {
            let purpose = first_sentence(&e.description);
            let description = match (signature_prefix, purpose.is_empty()) {
                (true, false) => format!("{} — {purpose}", e.signature()),
                (false, false) => purpose.to_owned(),
                (_, true) => e.signature(),
            };
            wire_tool(&e.name, description, flatten_schema(e.schema()))
        })
        .collect()
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

fn level3_tools() -> Vec<ToolDefinition> {
    vec![
        wire_tool(
            "t",
            text::T_DESC_3.to_owned(),
            json!({
                "type": "object",
                "properties": {"f": {"type": "string"}, "a": {"type": "object"}},
                "required": ["f"]
            }),
        ),
        wire_tool(
            "q",
            text::Q_DESC_3.to_owned(),
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
    namespaces: &[Namespace],
    style: MapStyle,
) -> (String, (usize, usize)) {
    let mut system = String::with_capacity(entries.len() * 48 + 256);
    system.push_str("<toolmap>\n");
    // Body of each line after code and name, for the lookalike groups.
    let mut bodies: HashMap<String, usize> = HashMap::new();
    let extra_words = match style {
        MapStyle::Distinct => crate::distinct::distinguishing_words(
            &entries
                .iter()
                .map(|e| crate::distinct::Subject {
                    name: &e.name,
                    description: &e.description,
                    schema: e.schema(),
                })
                .collect::<Vec<_>>(),
        ),
        _ => Vec::new(),
    };
    let mut first = true;
    for ns in namespaces {
        for &m in &ns.members {
            let Some(e) = entries.get(m as usize) else {
                continue;
            };
            if !first {
                system.push('\n');
            }
            first = false;
            let start = system.len();
            system.push_str(&e.code);
            system.push(' ');
            system.push_str(&e.name);
            let body_start = system.len();
            match style {
                MapStyle::NameRequired | MapStyle::Explicit | MapStyle::Distinct => {
                    let required = required_names(e.schema());
                    if required.is_empty() {
                        if style == MapStyle::Explicit {
                            system.push_str(" ()");
                        }
                    } else {
                        system.push(' ');
                        for (i, r) in required.iter().enumerate() {
                            if i > 0 {
                                system.push(',');
                            }
                            system.push_str(r);
                        }
                    }
                }
                MapStyle::Signature => {
                    system.push('(');
                    push_params(&mut system, e.schema());
                    system.push(')');
                }
            }
            if let Some(words) = extra_words.get(m as usize).filter(|w| !w.is_empty()) {
                system.push_str(crate::distinct::SEPARATOR);
                system.push_str(&words.join(" "));
            }
            let body = system
                .get(body_start..)
                .map(|b| b.strip_prefix(' ').unwrap_or(b))
                .unwrap_or_default();
            *bodies.entry(body.to_owned()).or_default() += 1;
            debug_assert!(start < system.len());
        }
    }
    system.push_str("\n</toolmap>\n");
    system.push_str(match style {
        MapStyle::NameRequired => text::LEGEND_NAME_REQUIRED,
        MapStyle::Explicit => text::LEGEND_EXPLICIT,
        MapStyle::Signature => text::LEGEND_SIGNATURE,
        MapStyle::Distinct => text::LEGEND_DISTINCT,
    });
    system.push_str(text::INVOKE_HINT_3);
    let ambiguous = bodies.values().filter(|&&n| n >= 2).sum();
    let largest = bodies
        .values()
        .copied()
        .filter(|&n| n >= 2)
        .max()
        .unwrap_or(1);
    (system, (ambiguous, largest))
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
