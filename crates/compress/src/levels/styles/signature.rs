//! `signature`: code and the full signature line, so the model needs no lookups.
//!
//! `a0 github_create_issue(owner,repo,title,body?,labels?:string[])`.

use serde_json::Value;

use super::LineStyle;
use crate::compress::Entry;

pub(super) struct Signature;

impl LineStyle for Signature {
    fn legend(&self) -> &'static str {
        "Each line: code name(args); ? marks an optional parameter. "
    }

    /// `(a,b?:int)`: every parameter, `?` on the optional ones, with type hints.
    fn push_body(&self, e: &Entry, schema: &Value, out: &mut String) {
        out.push('(');
        out.push_str(e.params_line(schema));
        out.push(')');
    }
}
