//! Level 3: the dispatcher `t` and `q`, and a `<toolmap>` of codes in the system prompt,
//! one line per tool in the selected [`MapStyle`](crate::MapStyle) (see `styles`).

use std::{collections::HashMap, ops::Range};

use super::dispatch::{self, Dialect};
use super::{Advice, Hidden, RenderInput, Rendered, Sizes, styles};
use crate::compress::{Compressed, Entry};
use crate::resolve::{ResolveError, with_description};
use crate::{error::CompressError, options::Level};

/// Level-3 `t` description. Contains "map code".
const T_DESC: &str =
    "Call a tool by its map code, listed in <toolmap> in the system prompt; arguments go in a.";

/// Level-3 `q` description.
const Q_DESC: &str = "Look up the map: c=<map code> gives the tool's full name, description and parameters; s=<keyword> searches the map.";

/// Level-3 calling convention, after the legend.
const INVOKE_HINT: &str = "Call t(f=<code>, a={…}) with the arguments in a. Unsure of a code's parameters? Expand it with q(c=<code>).";

/// Dispatcher plus a mechanical map.
pub(super) struct Three;

impl Dialect for Three {
    fn level(&self) -> Level {
        Level::Three
    }

    fn render(&self, input: &RenderInput<'_>) -> Result<Rendered, CompressError> {
        let (system, lookalikes) = preamble(input);
        Ok(Rendered {
            system,
            lookalikes: Some(lookalikes),
            ..Rendered::tools(dispatch::tools(T_DESC, Q_DESC))
        })
    }

    fn unknown_tool_hint(&self) -> &'static str {
        " Invoke tools with t(f=<code>)."
    }

    /// The nearest code, else (`f` takes real names too) the nearest real name; neither
    /// when a hidden tool's code or name is at least as near (see
    /// [`nearest_open`](crate::similarity::nearest_open)).
    fn unknown(&self, c: &Compressed, written: &str, hidden: Hidden<'_>) -> ResolveError {
        use crate::similarity::{SUGGESTION_FLOOR, nearest_open, similarity};
        let suggestion =
            c.suggest_code(written, hidden)
                .map(str::to_owned)
                .or_else(|| {
                    let near_hidden_code = c.entries.iter().any(|e| {
                        hidden(&e.name) && similarity(written, &e.code) >= SUGGESTION_FLOOR
                    });
                    if near_hidden_code {
                        return None;
                    }
                    let names = c.entries.iter().map(|e| e.name.as_str());
                    nearest_open(written, names, SUGGESTION_FLOOR, hidden).map(str::to_owned)
                });
        ResolveError::UnknownCode {
            suggestion,
            code: written.to_owned(),
        }
    }

    fn describe(&self, written: &str, e: &Entry) -> String {
        with_description(format!("{written} = {}", e.signature()), &e.description)
    }

    fn push_hit(&self, e: &Entry, out: &mut String) {
        out.push_str(&e.code);
        out.push_str(" = ");
        out.push_str(&e.signature());
    }

    /// Never advised by size alone: for a large catalogue the measured runs favour level 1
    /// with discovery (see level 1's rule, which names level 3 for when context is the
    /// binding constraint; docs/DISCOVERY.md).
    fn advise(&self, _sizes: &Sizes) -> Option<Advice> {
        None
    }
}

/// The `<toolmap>` preamble and the lookalike figures `(ambiguous, largest)`.
fn preamble(input: &RenderInput<'_>) -> (String, (usize, usize)) {
    let style = styles::style(input.style);
    let entries = input.entries;
    let mut system = String::with_capacity(entries.len() * 48 + 256);
    system.push_str("<toolmap>\n");
    // Where each line's body (after code and name) sits in `system`, for the lookalike
    // groups, counted once the text is complete.
    let mut bodies: Vec<Range<usize>> = Vec::with_capacity(entries.len());
    let extra_words = style.extra_words(input);
    for (i, (m, e, schema)) in input.code_order().enumerate() {
        if i > 0 {
            system.push('\n');
        }
        e.code.push_to(&mut system);
        system.push(' ');
        system.push_str(&e.name);
        let body_start = system.len();
        // The bodies come from the tool's own schema (`views`), cached per tool.
        style.push_body(e, schema, &mut system);
        if let Some(words) = extra_words.get(m as usize).filter(|w| !w.is_empty()) {
            system.push_str(styles::SEPARATOR);
            system.push_str(&words.join(" "));
        }
        let skip = usize::from(system.as_bytes().get(body_start) == Some(&b' '));
        bodies.push(body_start + skip..system.len());
    }
    let mut counts: HashMap<&str, usize, rustc_hash::FxBuildHasher> =
        HashMap::with_capacity_and_hasher(bodies.len(), rustc_hash::FxBuildHasher);
    for body in bodies {
        *counts
            .entry(system.get(body).unwrap_or_default())
            .or_default() += 1;
    }
    let lookalikes = dispatch::lookalikes(counts.values().copied());
    drop(counts);
    system.push_str("\n</toolmap>\n");
    system.push_str(style.legend());
    system.push_str(INVOKE_HINT);
    (system, lookalikes)
}
