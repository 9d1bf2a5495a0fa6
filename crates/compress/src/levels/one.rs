//! Level 1 (the default): every tool under its real name, its schema stripped of prose, its
//! description the signature line and first sentence (or a verified compiled docstring).
//! Real names, so the default reading back is this level's.

use super::{
    Advice, LevelCodec, RenderInput, Rendered, Sizes, Unusable, verified_docstring, wire_tool,
};
use crate::{
    error::CompressError,
    options::Level,
    render::{first_sentence, flatten_schema, signature_line},
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

    /// Advised when the block is small and level 1 shrinks it.
    fn advise(&self, sizes: &Sizes) -> Option<Advice> {
        if sizes.tool_count == 0 || !sizes.small() || sizes.level1_grows() {
            return None;
        }
        Some(Advice::new(format!(
            "The block is only {} at level 1, which saves {:.1}%. Level 3 would be smaller, but not by enough to give up the provider's argument validation; move to level 3 when reclaiming the block changes what fits in the context window.",
            sizes.figure, sizes.level1.saved_pct
        )))
    }
}
