//! `explicit`: as `name+required`, but a tool without required parameters ends in ` ()`.
//!
//! `a0 github_create_issue owner,repo,title`, and `b0 stripe_get_balance ()`.

use serde_json::Value;

use super::{LineStyle, push_required};
use crate::compress::Entry;

pub(super) struct Explicit;

impl LineStyle for Explicit {
    /// Contains "takes no required arguments".
    fn legend(&self) -> &'static str {
        "Each line: code, tool name, required args. A line ending in () takes no required arguments: call it with none. "
    }

    fn push_body(&self, e: &Entry, schema: &Value, out: &mut String) {
        if !push_required(e, schema, out) {
            out.push_str(" ()");
        }
    }
}
