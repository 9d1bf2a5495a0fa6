//! `name+required` (the conservative default): code, name and the required parameters
//! (the trait's default body).
//!
//! `a0 github_create_issue owner,repo,title`, and `b0 stripe_get_balance` bare.

use super::LineStyle;

pub(super) struct NameRequired;

impl LineStyle for NameRequired {
    fn legend(&self) -> &'static str {
        "Each line: code, tool name, required args. "
    }
}
