//! Level 1 (the default): every tool under its real name, its schema stripped of prose, its
//! description the signature line and first sentence (or a verified compiled docstring).
//! Real names, so the default reading back is this level's.

use super::{
    Advice, LevelCodec, RenderInput, Rendered, Sizes, Unusable, verified_docstring, wire_tool,
};
use crate::{
    error::CompressError,
    measured::{Measured, quoted_comparison},
    options::Level,
    render::{first_sentence, flatten_schema, signature_line},
    stats::thousands,
};

/// Signature lines.
pub(super) struct One;

impl LevelCodec for One {
    fn level(&self) -> Level {
        Level::One
    }

    fn render(&self, input: &RenderInput<'_>) -> Result<Rendered, CompressError> {
        let options = input.options;
        let signature_prefix = options.signature_prefix;
        let mut unusable = Unusable::default();
        let wire = input
            .entries
            .iter()
            .zip(input.views)
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
        // An empty compiled map asks for nothing at level 1.
        if !options.compiled.is_empty() {
            unusable.require(options, input.entries.len())?;
        }
        Ok(Rendered::tools(wire))
    }

    /// Advised when the block is small and level 1 shrinks it, and for a large block with
    /// discovery: the K best-ranked real tools plus `find_tools` (the setting the measured
    /// model runs favour; the reason names level 3 for when context is the binding
    /// constraint, warns about lookalike map lines and quotes the runs).
    fn advise(&self, sizes: &Sizes) -> Option<Advice> {
        if sizes.tool_count == 0 {
            return None;
        }
        if !sizes.small() {
            return Some(large_catalogue(sizes));
        }
        if sizes.level1_grows() {
            return None;
        }
        Some(Advice::new(format!(
            "The block is only {} at level 1, which saves {:.1}%. Level 3 would be smaller, but not by enough to give up the provider's argument validation; move to level 3 when reclaiming the block changes what fits in the context window.",
            sizes.figure, sizes.level1.saved_pct
        )))
    }
}

/// How many ranked tools the large-catalogue advice shows before any search.
pub(crate) const DISCOVER_TOP: usize = 10;

/// The advice for a block too large to send whole every turn: level 1 with discovery.
fn large_catalogue(sizes: &Sizes) -> Advice {
    let tool_count = sizes.tool_count;
    let (ambiguous, largest) = sizes.level3.lookalikes;
    let mut reason = format!(
        "{tool_count} tools take {} at level 1, too many to send whole every turn. Send the {DISCOVER_TOP} that rank best for each request, by their real names at level 1, and let the model find the rest: `PrunePolicy::discover({DISCOVER_TOP})` in the library, `prune = \"discover\"` in `chef serve` (its default), `chef eval --setting level=1,prune=discover:{DISCOVER_TOP}` to measure it (docs/DISCOVERY.md). The provider keeps checking arguments, and the prompt shrinks to the tools the request needs. When context is the binding constraint, level 3 replaces every tool with two dispatcher tools (`t` to call, `q` to look up) plus a map of codes in the system prompt, {:.1}% smaller than the original here; the cost is turns (the model may look a tool up before calling it) and the provider no longer checks arguments, so keep chef's validation on.",
        sizes.figure, sizes.level3.saved_pct
    );
    #[expect(clippy::cast_precision_loss, reason = "tool counts are small")]
    let share = ambiguous as f64 / tool_count as f64;
    if share >= 0.25 {
        reason.push_str(&format!(
            " Check your map if you use level 3: {ambiguous} of {tool_count} level-3 map lines look like another tool's"
        ));
        if largest > 1 {
            reason.push_str(&format!(", the largest group being {largest}"));
        }
        reason.push_str(". The tool name is then the model's only signal: use the signature map style (`--map-style signature`, `MapStyle::Signature`), or write a compiled map with `chef compile-map` and use level 4 (`chef compress --level 4 --compiled MAP.json`).");
    }
    let mut measured = Vec::new();
    if let Some([one, three, ranked]) = quoted_comparison() {
        reason.push_str(&format!(
            " Measured on {} ({} {}; {}; docs/EVAL.md), the first tool the model dispatched was the right one in {} at level 1, {} at level 3 and {} at level 1 with ranked pruning to the 10 best-ranked tools (prompt tokens of the first request, counted by the model's own tokenizer: {}, {} and {}). Measure your own model with `chef eval`.",
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
    Advice {
        reason,
        measured,
        discover_top: Some(DISCOVER_TOP),
    }
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
