//! [`Anthropic`]: this crate as a [`chef_ir::provider::Provider`].

use chef_ir::{NameRule, WireNames};

use crate::{CompileOptions, Error, layout, parse_request, parse_response, wire};

chef_ir::provider! {
    /// Anthropic Messages (`POST /v1/messages`) as a [`Provider`](chef_ir::provider::Provider).
    /// The layout always converts the tools (their names and notices come from the same
    /// pass) and runs no cache audit ([`layout::layout`] takes one).
    pub struct Anthropic = "anthropic", NameRule::ANTHROPIC;
    type Options = CompileOptions; type Error = Error; type Tool<'a> = wire::Tool<'a>;
    fn layout(request, options, _pass, offset) { layout::layout(request, options, offset, None).map(|(layout, _)| layout) }
    fn parse_reply(body, names, _history) { parse_response(body, names).map(|parsed| parsed.message) }
    fn parse_request(body) { parse_request(body, &WireNames::default()).map(|parsed| parsed.request) }
}
