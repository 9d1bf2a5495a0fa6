//! Fixed text the model reads: dispatcher descriptions, map legends, hints.
//!
//! Our own wording; each carries the facts and phrases the behavioural spec requires.

/// Level-3 `t` description. Contains "map code".
pub(crate) const T_DESC_3: &str =
    "Call a tool by its map code, listed in <toolmap> in the system prompt; arguments go in a.";

/// Level-3 `q` description.
pub(crate) const Q_DESC_3: &str = "Look up the map: c=<map code> gives the tool's full name, description and parameters; s=<keyword> searches the map.";

/// Level-3 legend per map style; each ends with one space.
pub(crate) const LEGEND_NAME_REQUIRED: &str = "Each line: code, tool name, required args. ";
/// Legend for the `explicit` style. Contains "takes no required arguments".
pub(crate) const LEGEND_EXPLICIT: &str = "Each line: code, tool name, required args. A line ending in () takes no required arguments: call it with none. ";
/// Legend for the `signature` style.
pub(crate) const LEGEND_SIGNATURE: &str =
    "Each line: code name(args); ? marks an optional parameter. ";

/// Legend for the `distinct` style.
pub(crate) const LEGEND_DISTINCT: &str = "Each line: code, tool name, required args; after ~, words from the tool's own description or parameters that set it apart from similar tools. ";

/// Level-3 calling convention, after the legend.
pub(crate) const INVOKE_HINT_3: &str = "Call t(f=<code>, a={…}) with the arguments in a. Unsure of a code's parameters? Expand it with q(c=<code>).";

/// Level-2 namespace description, after the real namespace name.
pub(crate) const NAMESPACE_SUFFIX: &str =
    " operations. Call describe_op first if unsure of an operation's parameters.";

/// Level-2 `describe_op` description.
pub(crate) const DESCRIBE_OP_DESC: &str =
    "Returns the full parameter signature and description of one operation.";

/// Level-4 `t` description. Contains "function name", never "map code".
pub(crate) const T_DESC_4: &str = "Call a tool by its function name, exactly as declared in the Python block of the system prompt; arguments go in a.";

/// Level-4 `q` description. Contains "function name".
pub(crate) const Q_DESC_4: &str = "Look up a tool: c=<function name> gives its full description and parameters; s=<keyword> searches the declarations.";

/// Level-4 preamble introduction; ends with `:`.
pub(crate) const INTRO_4: &str = "These are the tools you can call, written as Python declarations. Each docstring says what the tool is for and when to prefer it over a similarly named one:";

/// Level-4 calling convention, after the Python block.
pub(crate) const INVOKE_HINT_4: &str =
    "Call t(f=\"<function name>\", a={…}) with the arguments in a. Search with q(s=<keyword>).";

/// Level-4 docstring of a tool without a usable compiled line.
pub(crate) const NOT_COMPILED: &str = "(not compiled)";
