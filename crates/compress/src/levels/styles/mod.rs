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

use self::{
    distinct::Distinct, explicit::Explicit, name_required::NameRequired, signature::Signature,
};
use super::RenderInput;
use crate::{compress::Entry, options::MapStyle};

/// Between a line's body and the words a style adds to it.
pub(crate) const SEPARATOR: &str = " ~ ";

/// The line style of `style`.
pub(crate) fn style(style: MapStyle) -> &'static dyn LineStyle {
    match style {
        MapStyle::NameRequired => &NameRequired,
        MapStyle::Explicit => &Explicit,
        MapStyle::Signature => &Signature,
        MapStyle::Distinct => &Distinct,
    }
}

/// How one map style writes a tool's line.
pub(crate) trait LineStyle: Sync {
    /// The legend after the map; ends with one space.
    fn legend(&self) -> &'static str;

    /// Appends the body of `e`'s line (after `code name`, a leading space included when
    /// the body has words) to `out`; `schema` is the tool's view. By default the required
    /// parameters, comma-joined (` a,b`), and nothing for a tool without any.
    fn push_body(&self, e: &Entry, schema: &Value, out: &mut String) {
        push_required(e, schema, out);
    }

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
