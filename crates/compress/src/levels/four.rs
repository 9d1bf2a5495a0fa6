//! Level 4: the dispatcher `t` and `q`, and a Python block of `def` lines in the system
//! prompt whose docstrings come from a model-compiled map (verified at every compress).
//! The model calls tools by their real names (`t(f="github_create_issue")`); codes never
//! appear, though they still resolve.

use std::collections::{HashMap, HashSet};

use super::dispatch::{self, Dialect};
use super::{CompiledReport, Hidden, MapLine, RenderInput, Rendered, Unusable, verified_docstring};
use crate::compress::{Compressed, Entry};
use crate::options::{Level, Options};
use crate::{error::CompressError, render::python_signature, resolve::ResolveError};

/// Level-4 `t` description. Contains "function name", never "map code".
const T_DESC: &str = "Call a tool by its function name, exactly as declared in the Python block of the system prompt; arguments go in a.";

/// Level-4 `q` description. Contains "function name".
const Q_DESC: &str = "Look up a tool: c=<function name> gives its full description and parameters; s=<keyword> searches the declarations.";

/// Level-4 preamble introduction; ends with `:`.
const INTRO: &str = "These are the tools you can call, written as Python declarations. Each docstring says what the tool is for and when to prefer it over a similarly named one:";

/// Level-4 calling convention, after the Python block.
const INVOKE_HINT: &str =
    "Call t(f=\"<function name>\", a={…}) with the arguments in a. Search with q(s=<keyword>).";

/// Level-4 docstring of a tool without a usable compiled line.
const NOT_COMPILED: &str = "(not compiled)";

/// Dispatcher plus a compiled Python map.
pub(super) struct Four;

impl Dialect for Four {
    fn level(&self) -> Level {
        Level::Four
    }

    fn check(&self, options: &Options) -> Result<(), CompressError> {
        if options.compiled.is_empty() {
            return Err(CompressError::NeedsCompiledMap);
        }
        Ok(())
    }

    fn render(&self, input: &RenderInput<'_>) -> Result<Rendered, CompressError> {
        let (system, lookalikes, report, l4_lines) = preamble(input);
        report
            .uncompiled
            .require(input.options, input.entries.len())?;
        Ok(Rendered {
            system,
            lookalikes: Some(lookalikes),
            compiled_report: Some(report),
            l4_lines,
            ..Rendered::tools(dispatch::tools(T_DESC, Q_DESC))
        })
    }

    fn unknown_tool_hint(&self) -> &'static str {
        " Invoke tools with t(f=<function name>)."
    }

    fn unknown(&self, c: &Compressed, written: &str, hidden: Hidden<'_>) -> ResolveError {
        ResolveError::UnknownFunction {
            suggestion: suggest_function(c, written, hidden),
            name: written.to_owned(),
        }
    }

    fn describe(&self, _written: &str, e: &Entry) -> String {
        format!("{}\n\nFull description: {}", e.l4_line, e.description)
    }

    /// The declaration as the map shows it; codes never appear at level 4.
    fn push_hit(&self, e: &Entry, out: &mut String) {
        out.push_str(&e.l4_line);
    }

    /// The function name the map declares: the model never sees a code here.
    fn call_key<'e>(&self, e: &'e Entry) -> &'e str {
        e.name.as_str()
    }
}

/// Level 4's did-you-mean for a function name: the nearest real tool name (the model
/// sees names here, not codes), else the tool of the nearest code; never a `hidden` tool,
/// and nothing when the nearest name is a hidden tool's
/// ([`nearest_open`](crate::similarity::nearest_open)).
fn suggest_function(
    c: &Compressed,
    written: &str,
    hidden: &dyn Fn(&str) -> bool,
) -> Option<String> {
    use crate::similarity::{Nearest, SUGGESTION_FLOOR, nearest_among};
    let names = c.entries.iter().map(|e| e.name.as_str());
    match nearest_among(written, names, SUGGESTION_FLOOR, hidden) {
        Nearest::Open(name) => Some(name.to_owned()),
        // The model meant the hidden tool.
        Nearest::Withheld => None,
        Nearest::Nothing => c
            .suggest_code(written, hidden)
            .and_then(|code| c.lookup(code))
            .map(|e| e.name.as_str().to_owned()),
    }
}

/// The Python preamble, the lookalike figures, the compiled-map report, and each tool's
/// rendered line by entry index (the caller stores them in the entries, for `q`).
///
/// A tool's line is `def {python signature}:"{docstring}"`: the parameters always come
/// from the current schema; only the docstring comes from a compiled line that verifies.
fn preamble(input: &RenderInput<'_>) -> (String, (usize, usize), CompiledReport, Vec<MapLine>) {
    let options = input.options;
    let mut unusable = Unusable::default();
    let mut bodies: HashMap<&str, usize> = HashMap::new();
    let mut lines: Vec<MapLine> = Vec::with_capacity(input.entries.len());
    for (m, e, schema) in input.code_order() {
        let raw = options.compiled.get(&e.name);
        // Lookalikes: the raw line after its first `(` (even when stale), "" without one.
        let body = raw
            .and_then(|l| l.split_once('(').map(|(_, rest)| rest))
            .unwrap_or_default();
        *bodies.entry(body).or_default() += 1;
        let doc = verified_docstring(e, schema, options, &mut unusable).unwrap_or(NOT_COMPILED);
        let line = format!("def {}:\"{doc}\"", python_signature(&e.name, schema));
        lines.push((m, line));
    }
    let lookalikes = dispatch::lookalikes(bodies.values().copied());

    let mut system =
        String::with_capacity(lines.iter().map(|(_, l)| l.len() + 1).sum::<usize>() + 256);
    system.push_str(INTRO);
    system.push_str("\n\n```python\n");
    for (i, (_, line)) in lines.iter().enumerate() {
        if i > 0 {
            system.push('\n');
        }
        system.push_str(line);
    }
    system.push_str("\n```\n");
    system.push_str(INVOKE_HINT);

    let names: HashSet<&str> = input.entries.iter().map(|e| e.name.as_str()).collect();
    let orphans = options
        .compiled
        .keys()
        .filter(|k| !names.contains(k.as_str()))
        .cloned()
        .collect();
    (
        system,
        lookalikes,
        CompiledReport {
            uncompiled: unusable,
            orphans,
        },
        lines,
    )
}
