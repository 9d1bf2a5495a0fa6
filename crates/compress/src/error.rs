//! The errors of compression and of the code helpers.

use crate::options::Level;

/// Why [`compress`](crate::compress) refused its input.
///
/// Checks run in a fixed order and the first failure wins: the tool count; then per tool,
/// in input order, an over-long name, a missing name, a duplicate name and an unusable
/// schema; then each tool's namespace split; then the level-4 requirement; then level-2
/// aliases and the compiled-line requirement.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompressError {
    /// More tools than [`Limits::max_tools`](crate::validate::Limits::max_tools).
    #[error(
        "{count} {} the limit of {limit} {} for one compress call",
        if *count == 1 { "tool exceeds" } else { "tools exceed" },
        if *limit == 1 { "tool" } else { "tools" }
    )]
    TooManyTools {
        /// Tools given.
        count: usize,
        /// The configured limit.
        limit: usize,
    },
    /// A tool name longer than
    /// [`Limits::max_tool_name_bytes`](crate::validate::Limits::max_tool_name_bytes).
    #[error("tool name at index {index} is {bytes} bytes long, over the limit of {limit} bytes")]
    NameTooLong {
        /// Zero-based index in the input.
        index: usize,
        /// The name's length in bytes.
        bytes: usize,
        /// The configured limit.
        limit: usize,
    },
    /// A tool name, or the name of one of its parameters, holds a control character (a
    /// line break, a tab, a NUL): the signature lines, the level-3 map and `q`'s answers
    /// show these names one per line, where a line break would write lines of its own.
    #[error(
        "tool {} at index {index}: {} holds a line break, a control character or an invisible formatting character, which names may not hold",
        crate::similarity::shown_name(tool),
        match parameter {
            Some(p) => format!("the name of its parameter {}", crate::similarity::shown_name(p)),
            None => "its name".to_owned(),
        }
    )]
    ControlCharacter {
        /// Zero-based index in the input.
        index: usize,
        /// The tool's name as given.
        tool: String,
        /// The parameter whose name holds one, when it is a parameter's.
        parameter: Option<String>,
    },
    /// A tool has an empty or blank name.
    #[error("tool is missing a name (index {index}): its name is empty or blank")]
    MissingName {
        /// Zero-based index in the input.
        index: usize,
    },
    /// Two tools share a name (or a selection names one tool twice).
    #[error("duplicate tool name: {name}")]
    DuplicateName {
        /// The shared name.
        name: String,
    },
    /// A selection of a [`Catalogue`](crate::Catalogue) names a position past its end.
    #[error("tool index {index} is out of range: the catalogue holds {len} tools")]
    UnknownToolIndex {
        /// The position asked for.
        index: usize,
        /// How many tools the catalogue holds.
        len: usize,
    },
    /// The caller's namespace function returned an empty namespace or operation.
    #[error(
        "namespace_of(\"{tool}\") must return {{ ns, op }} with non-empty strings, got {{ ns: {ns:?}, op: {op:?} }}; for example |name| ToolNamespace::new(server_of(name), name)"
    )]
    InvalidNamespace {
        /// The tool whose split was refused.
        tool: String,
        /// The namespace returned.
        ns: String,
        /// The operation returned.
        op: String,
    },
    /// A tool's schema cannot be used (it names the tool).
    #[error(transparent)]
    Schema(#[from] crate::validate::SchemaError),
    /// Level 2: the alias function gave two namespaces the same wire name.
    #[error("alias_of gives namespaces {first:?} and {second:?} the same wire name {alias:?}")]
    DuplicateAlias {
        /// The shared alias.
        alias: String,
        /// The first namespace with it.
        first: String,
        /// The second namespace with it.
        second: String,
    },
    /// Level 2: the alias function gave a namespace an unusable wire name.
    #[error("alias_of(\"{ns}\") returned {alias:?}, which {problem}")]
    InvalidAlias {
        /// The namespace.
        ns: String,
        /// The alias returned.
        alias: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// Level 4 was asked for without a compiled map.
    #[error(
        "level 4 needs a compiled map: write one with `chef compile-map` (or `compile_tools` with your own model) and pass it with `chef compress --compiled MAP.json` or `Options::with_compiled`; levels 0–3 need nothing"
    )]
    NeedsCompiledMap,
    /// `require_compiled` is on and some tools have no usable compiled line.
    #[error("{}", require_compiled_message(*uncompiled, *tool_count, stale))]
    MissingCompiledLines {
        /// Tools without a usable line (missing or stale).
        uncompiled: usize,
        /// All tools.
        tool_count: usize,
        /// `"{name}: {problem}"` for each stale line, in code order.
        stale: Vec<String>,
    },
}

fn require_compiled_message(uncompiled: usize, tool_count: usize, stale: &[String]) -> String {
    let verb = if uncompiled == 1 { "has" } else { "have" };
    let mut m = format!(
        "require_compiled: {uncompiled} of {tool_count} tools {verb} no usable compiled line. Re-run `chef compile-map`."
    );
    for s in stale {
        m.push_str("\n  stale: ");
        m.push_str(s);
    }
    m
}

/// Why a real tool name has no code or cannot be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodeError {
    /// Codes exist only at levels 3 and 4.
    #[error("no code for {name} (level {level})")]
    NoCodeAtLevel {
        /// The tool asked about.
        name: String,
        /// The level of the compressed set.
        level: Level,
    },
    /// The name is not one of the compressed tools.
    #[error("no tool named {name:?} in this compressed set")]
    UnknownTool {
        /// The name asked about.
        name: String,
    },
}

/// [`CompressError::ControlCharacter`](crate::CompressError::ControlCharacter) when `tool`'s
/// name, or a parameter name anywhere in its schema (a key of any `properties`), holds a
/// control character, a Unicode line or paragraph separator or an invisible formatting
/// character (zero-width, bidirectional); `index` is the tool's place in its list. Every
/// catalogue check runs it ([`Catalogue::new`](crate::Catalogue::new), `compile_tools`,
/// chef's registry).
///
/// ```
/// use chef_compress::check_names;
/// use chef_ir::ToolDefinition;
/// use serde_json::json;
///
/// let good = ToolDefinition::new("read_file", json!({"type": "object", "properties": {"path": {}}}));
/// assert!(check_names(0, &good).is_ok());
/// let bad = ToolDefinition::new("read_file", json!({"type": "object", "properties": {"p\nz9 wipe": {}}}));
/// assert!(check_names(3, &bad).unwrap_err().to_string().contains("p\\nz9 wipe"));
/// ```
///
/// # Errors
/// The tool's name first, else the first such parameter name found.
pub fn check_names(
    index: usize,
    tool: &chef_ir::ToolDefinition,
) -> Result<(), crate::CompressError> {
    let error = |parameter: Option<String>| crate::CompressError::ControlCharacter {
        index,
        tool: tool.name.as_str().to_owned(),
        parameter,
    };
    if tool
        .name
        .as_str()
        .chars()
        .any(crate::similarity::unshowable)
    {
        return Err(error(None));
    }
    // Iterative: a hostile schema may nest deeper than the stack.
    let mut stack = vec![&tool.input_schema];
    while let Some(node) = stack.pop() {
        match node {
            serde_json::Value::Object(object) => {
                if let Some(serde_json::Value::Object(properties)) = object.get("properties")
                    && let Some(name) = properties
                        .keys()
                        .find(|k| k.chars().any(crate::similarity::unshowable))
                {
                    return Err(error(Some(name.clone())));
                }
                stack.extend(object.values());
            }
            serde_json::Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    Ok(())
}
