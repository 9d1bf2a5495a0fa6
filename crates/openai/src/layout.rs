//! Both OpenAI bodies laid out for a caller that splices bytes into them (see
//! [`chef_ir::layout`]).

use chef_ir::{Request, ToolPass, layout::Layout};

use crate::{CompileOptions, Notice, Result, Tagged, chat, responses};

/// The key of a Chat Completions body's messages array.
pub const CHAT_MESSAGES_KEY: &str = "messages";
/// The key of a Responses body's input items.
pub const RESPONSES_INPUT_KEY: &str = "input";

/// A public `layout` function of one API: `$api::compile_with`, the tools taken out,
/// `$api::to_vec`, and [`finish`] with the body's array key.
macro_rules! api_layout {
    ($(#[$doc:meta])* $api:ident, $key:ident) => {
        $(#[$doc])*
        pub fn $api<'a>(
            request: &'a Request,
            options: &CompileOptions,
            pass: ToolPass,
            offset: usize,
        ) -> Result<Layout<Tagged<'a, $api::wire::Tool<'a>>>> {
            let mut c = $api::compile_with(request, options, pass)?;
            let tools = std::mem::take(&mut c.body.tools);
            let body = $api::to_vec(&c)?;
            let tool_notices = c.tool_notices;
            Ok(finish(body, $key, (tools, pass), c.names, &c.notices, tool_notices, offset))
        }
    };
}

api_layout! {
    /// Compiles `request` for Chat Completions (see [`chat::compile_with`]) into a [`Layout`]:
    /// the body without its `tools` member, which goes back first, just after the opening `{`.
    ///
    /// `offset` is how many history messages `request` left out in front: each notice about
    /// one message is renumbered by it; a degraded prefill's notice, which names a position in
    /// the wire messages, cannot be, and makes [`Layout::notices_shifted`] false.
    ///
    /// # Errors
    ///
    /// As [`chat::compile_with`], and when the body cannot be serialised.
    chat, CHAT_MESSAGES_KEY
}

api_layout! {
    /// Compiles `request` for Responses (see [`responses::compile_with`]) into a [`Layout`]:
    /// the body without its `tools` member, which goes back first, just after the opening `{`.
    ///
    /// `offset` is how many history messages `request` left out in front: each notice about
    /// one message is renumbered by it (a system message hoisted into `instructions` too,
    /// [`Notice::SystemHoisted`]); a degraded prefill's notice cannot be, as for [`chat()`].
    ///
    /// # Errors
    ///
    /// As [`responses::compile_with`], and when the body cannot be serialised.
    responses, RESPONSES_INPUT_KEY
}

/// The layout both targets share: tools first, notices renumbered where they are local.
fn finish<T>(
    body: Vec<u8>,
    key: &'static str,
    (tools, pass): (Vec<T>, ToolPass),
    names: chef_ir::WireNames,
    notices: &[Notice],
    tool_notices: std::ops::Range<usize>,
    offset: usize,
) -> Layout<T> {
    let (text, shifted) =
        chef_ir::layout::shift_notices(notices, &tool_notices, offset, Notice::renumber);
    let mut layout = Layout::new(body, key, names);
    // The tools field comes first.
    layout.tools_at = 1;
    layout.tools = tools;
    layout.converted = pass == ToolPass::Convert;
    layout.notices = text;
    layout.tool_notices = tool_notices;
    layout.notices_shifted = shifted;
    layout
}
