//! [`Chat`] and [`Responses`]: this crate's two APIs as [`chef_ir::provider::Provider`]s.
//! Both layouts honour [`ToolPass::Skip`](chef_ir::ToolPass::Skip).

use chef_ir::NameRule;

use crate::{CompileOptions, Error, Tagged, chat, layout, responses};

/// [`chef_ir::provider!`] for one API: its marker, its name, and its module (which names
/// its layout function too).
macro_rules! api {
    ($(#[$meta:meta])* $ty:ident = $name:literal, $api:ident) => {
        chef_ir::provider! {
            $(#[$meta])*
            pub struct $ty = $name, NameRule::OPENAI;
            type Options = CompileOptions; type Error = Error; type Tool<'a> = Tagged<'a, $api::wire::Tool<'a>>;
            fn layout(request, options, pass, offset) { layout::$api(request, options, pass, offset) }
            fn parse_reply(body, names, _history) { $api::parse_response(body, names).map(|parsed| parsed.message) }
            fn parse_request(body) { $api::parse_request(body) }
        }
    };
}

api! {
    /// OpenAI Chat Completions (`POST /v1/chat/completions`) as a
    /// [`Provider`](chef_ir::provider::Provider).
    Chat = "openai", chat
}

api! {
    /// OpenAI Responses (`POST /v1/responses`) as a [`Provider`](chef_ir::provider::Provider).
    Responses = "openai-responses", responses
}
