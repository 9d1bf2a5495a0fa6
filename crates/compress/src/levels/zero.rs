//! Level 0: every tool as it came, in sorted order; no preamble. Real names, so the
//! default reading back (the call names the tool) is this level's.

use super::{Advice, LevelCodec, RenderInput, Rendered, Sizes, wire_tool};
use crate::{error::CompressError, options::Level};

/// Passthrough.
pub(super) struct Zero;

impl LevelCodec for Zero {
    fn level(&self) -> Level {
        Level::Zero
    }

    fn render(&self, input: &RenderInput<'_>) -> Result<Rendered, CompressError> {
        // Original schemas, untouched, in sorted order; but a schema that is not an object
        // (`null`, `true`: any arguments) goes as the normaliser reads it (the object
        // schema it means), since no provider takes `null` or `true` for a tool's
        // parameters.
        Ok(Rendered::tools(
            input
                .sorted
                .iter()
                .zip(input.views)
                .map(|(t, view)| {
                    let schema = if t.input_schema.is_object() {
                        &t.input_schema
                    } else {
                        *view
                    };
                    wire_tool(t.name.as_str(), t.description.clone(), schema.clone())
                })
                .collect(),
        ))
    }

    /// Advised when there is nothing to compress, or when the block is small and level 1
    /// would make it larger (the descriptions are already terse).
    fn advise(&self, sizes: &Sizes) -> Option<Advice> {
        if sizes.tool_count == 0 {
            return Some(Advice::new(
                "There are no tools, so there is nothing to compress: leave the tools alone.",
            ));
        }
        if !sizes.small() || !sizes.level1_grows() {
            return None;
        }
        let figure = &sizes.figure;
        Some(Advice::new(format!(
            "Level 1 would make this block {:.1}% LARGER than level 0 (the tools as they are): the descriptions are already terse, so the signature line it adds is pure overhead. Leave the tools alone. {}",
            sizes.level1_growth_pct(),
            if sizes.level3.saved_pct > 0.0 {
                format!(
                    "Level 3 does compress this ({:.1}% smaller than the tools as given), but at {figure} the block is too small to be worth giving up provider-side argument validation.",
                    sizes.level3.saved_pct
                )
            } else {
                format!(
                    "Level 3 would not help either: its dispatcher tools and map make this block {:.1}% larger than the tools as given.",
                    sizes.level3.saved_pct.abs()
                )
            },
        )))
    }
}
