//! The level-3 map line styles, one module per [`MapStyle`] behind [`LineStyle`].
//!
//! Level 3 writes each map line as `code name` and then the style's body; a style may add
//! words after [`SEPARATOR`] (computed once per map, over the whole selection), and names
//! the legend the model reads below the map. [`style`] is the one registration point.

mod distinct;
mod explicit;
mod name_required;
mod signature;

use serde_json::Value;

use super::RenderInput;
use crate::{compress::Entry, options::MapStyle};

/// Between a line's body and the words a style adds to it.
pub(crate) const SEPARATOR: &str = " ~ ";

/// The line style of `style`.
pub(crate) fn style(style: MapStyle) -> &'static dyn LineStyle {
    match style {
        MapStyle::NameRequired => &name_required::NameRequired,
        MapStyle::Explicit => &explicit::Explicit,
        MapStyle::Signature => &signature::Signature,
        MapStyle::Distinct => &distinct::Distinct,
    }
}

/// How one map style writes a tool's line.
pub(crate) trait LineStyle: Sync {
    /// The style this renders ([`style`] of it is this one).
    #[cfg_attr(not(test), expect(dead_code, reason = "read by the registry test"))]
    fn map_style(&self) -> MapStyle;

    /// The legend after the map; ends with one space.
    fn legend(&self) -> &'static str;

    /// Appends the body of `e`'s line (after `code name`, a leading space included when
    /// the body has words) to `out`; `schema` is the tool's view.
    fn push_body(&self, e: &Entry, schema: &Value, out: &mut String);

    /// Words to add after [`SEPARATOR`] on each entry's line, by entry index (sorted
    /// order); none by default.
    fn extra_words(&self, input: &RenderInput<'_>) -> Vec<Vec<String>> {
        let _ = input;
        Vec::new()
    }
}

/// ` a,b` for a tool with required parameters `a` and `b`; nothing, and `false`, without.
fn push_required(e: &Entry, schema: &Value, out: &mut String) -> bool {
    match e.required_line(schema) {
        Some(required) => {
            out.push(' ');
            out.push_str(required);
            true
        }
        None => false,
    }
}
