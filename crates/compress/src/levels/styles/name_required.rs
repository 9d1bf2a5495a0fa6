//! `name+required` (the conservative default): code, name and the required parameters.
//!
//! `a0 github_create_issue owner,repo,title`, and `b0 stripe_get_balance` bare.

use serde_json::Value;

use super::{LineStyle, push_required};
use crate::{compress::Entry, options::MapStyle};

/// Legend for the `name+required` style.
const LEGEND: &str = "Each line: code, tool name, required args. ";

pub(super) struct NameRequired;

impl LineStyle for NameRequired {
    fn map_style(&self) -> MapStyle {
        MapStyle::NameRequired
    }

    fn legend(&self) -> &'static str {
        LEGEND
    }

    fn push_body(&self, e: &Entry, schema: &Value, out: &mut String) {
        push_required(e, schema, out);
    }
}
