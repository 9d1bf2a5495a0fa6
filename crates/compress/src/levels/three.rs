//! Level 3: the dispatcher `t` and `q`, and a `<toolmap>` of codes in the system prompt,
//! one line per tool in the selected [`MapStyle`](crate::MapStyle) (see `styles`).

use std::{collections::HashMap, ops::Range};

use super::dispatch::{self, Dialect};
use super::{Advice, Hidden, RenderInput, Rendered, Sizes, styles};
use crate::compress::{Compressed, Entry};
use crate::measured::{Measured, quoted_comparison};
use crate::resolve::{ResolveError, with_description};
use crate::{error::CompressError, options::Level, recommend::thousands};

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

    fn unknown(&self, c: &Compressed, written: &str, hidden: Hidden<'_>) -> ResolveError {
        ResolveError::UnknownCode {
            suggestion: c.suggest_code(written, hidden).map(str::to_owned),
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

    /// Advised when the level-1 block is large enough that reclaiming it changes what
    /// fits; the reason warns about lookalike map lines and quotes measured model runs.
    fn advise(&self, sizes: &Sizes) -> Option<Advice> {
        if sizes.tool_count == 0 || sizes.small() {
            return None;
        }
        let tool_count = sizes.tool_count;
        let (ambiguous, largest) = sizes.level3.lookalikes;
        let mut reason = format!(
            "{tool_count} tools take {} at level 1. Level 3 replaces them with two dispatcher tools (`t` to call, `q` to look up) plus a map of codes in the system prompt, {:.1}% smaller than the original here. The cost is turns: the model may look a tool up before calling it, and the provider no longer checks arguments, so keep chef's validation on. Stay at level 1 if latency matters more than context.",
            sizes.figure, sizes.level3.saved_pct
        );
        #[expect(clippy::cast_precision_loss, reason = "tool counts are small")]
        let share = ambiguous as f64 / tool_count as f64;
        if share >= 0.25 {
            reason.push_str(&format!(
                " Check your map: {ambiguous} of {tool_count} level-3 map lines look like another tool's"
            ));
            if largest > 1 {
                reason.push_str(&format!(", the largest group being {largest}"));
            }
            reason.push_str(". The tool name is then the model's only signal: use the signature map style (`--map-style signature`, `MapStyle::Signature`), or write a compiled map with `chef compile-map` and use level 4 (`chef compress --level 4 --compiled MAP.json`).");
        }
        let mut measured = Vec::new();
        if let Some([one, three, ranked]) = quoted_comparison() {
            reason.push_str(&format!(
                " Measured on {} ({} {}; {}; docs/EVAL.md), the first tool the model dispatched was the right one in {} at level 1, {} at level 3 and {} at level 1 with ranked pruning to the 10 best-ranked tools (prompt tokens of the first request, counted by the model's own tokenizer: {}, {} and {}). Before moving a small model to level 3, measure it with `chef eval`: ranked pruning at level 1 (`chef eval --setting level=1,prune=ranked:10`, `PrunePolicy::Ranked` in the library) may serve it better.",
                one.model,
                one.n,
                one.scenarios,
                one.catalogue,
                right_of(one),
                right_of(three),
                right_of(ranked),
                tokens_of(one),
                tokens_of(three),
                tokens_of(ranked),
            ));
            measured = vec![*one, *three, *ranked];
        }
        Some(Advice { reason, measured })
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

/// "14/18".
fn right_of(m: &Measured) -> String {
    format!("{}/{}", m.right, m.n)
}

/// "27,494", or "not reported".
fn tokens_of(m: &Measured) -> String {
    m.prompt_tokens.map_or_else(
        || "not reported".to_owned(),
        |t| thousands(usize::try_from(t).unwrap_or(usize::MAX)),
    )
}
