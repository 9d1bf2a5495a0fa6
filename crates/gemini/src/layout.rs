//! The body laid out for a caller that splices bytes into it (see [`chef_ir::layout`]).

use chef_ir::{Request, ToolPass, layout::Layout};

use crate::{CompileOptions, Notice, Result, compile_with, to_vec_with_tools_at, wire};

/// The key of a `generateContent` body's contents array.
pub const CONTENTS_KEY: &str = "contents";

/// Compiles `request` (see [`compile_with`]) into a [`Layout`]: the body without its
/// `tools` member, which goes back after the system instruction when there is one, else
/// first.
///
/// `offset` is how many history messages `request` left out in front. A notice about what
/// happened inside one message (a positional system message sent as a user content,
/// thinking, a dropped block or file name, a compaction summary) is renumbered by it; one
/// that can change how contents merge or pair (a message skipped, system content moved,
/// an unnamed tool result) is not, and makes [`Layout::notices_shifted`] false.
///
/// # Errors
///
/// As [`compile_with`], and when the body cannot be serialised.
pub fn layout<'a>(
    request: &'a Request,
    options: &CompileOptions,
    pass: ToolPass,
    offset: usize,
) -> Result<Layout<wire::Tool<'a>>> {
    let mut c = compile_with(request, options, pass)?;
    let tools = std::mem::take(&mut c.body.tools);
    let (body, tools_at) = to_vec_with_tools_at(&c)?;
    let (notices, shifted) =
        chef_ir::layout::shift_notices(&c.notices, &c.tool_notices, offset, Notice::renumber);
    let mut layout = Layout::new(body, CONTENTS_KEY, c.names);
    layout.tools_at = tools_at;
    layout.tools = tools;
    layout.converted = pass == ToolPass::Convert;
    layout.notices = notices;
    layout.tool_notices = c.tool_notices;
    layout.notices_shifted = shifted;
    Ok(layout)
}
