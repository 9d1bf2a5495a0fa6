//! [`Gemini`]: this crate as a [`chef_ir::provider::Provider`].

use chef_ir::NameRule;

use crate::{CompileOptions, Error, layout, parse_request, parse_response, wire};

chef_ir::provider! {
    /// Gemini `generateContent` as a [`Provider`](chef_ir::provider::Provider). Its layout
    /// honours [`ToolPass::Skip`](chef_ir::ToolPass::Skip); replies name calls by the
    /// history they answer.
    pub struct Gemini = "gemini", NameRule::GEMINI;
    type Options = CompileOptions; type Error = Error; type Tool<'a> = wire::Tool<'a>;
    fn layout(request, options, pass, offset) { layout::layout(request, options, pass, offset) }
    fn parse_reply(body, names, history) { parse_response(body, names, history).map(|parsed| parsed.message) }
    fn parse_request(body) { parse_request(body) }
}
