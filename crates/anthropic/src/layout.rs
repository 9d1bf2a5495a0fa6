//! The body laid out for a caller that splices bytes into it (see [`chef_ir::layout`]).

use chef_ir::{Request, layout::Layout};

use crate::{CacheAudit, CacheIssue, CompileOptions, Result, compile, wire};

/// The key of a Messages body's messages array.
pub const MESSAGES_KEY: &str = "messages";

/// Compiles `request` (see [`compile`]) into a [`Layout`]: the body without its `tools`
/// member, which goes back last, just before the closing `}`.
///
/// The tools are always converted (their names and notices come from the same pass).
/// `offset` is how many history messages `request` left out in front: a notice about what
/// happened inside one message (a foreign block, an image's file name, a media type, Gemini
/// signatures) is renumbered by it; one that depends on other messages (a hoisted
/// positional system message, the breakpoints) cannot be, and makes
/// [`Layout::notices_shifted`] false for an offset above 0. With `audit`, the request is also checked for volatile content inside its cached
/// prefix, tools included (see [`CacheAudit`]).
///
/// # Errors
///
/// As [`compile`], and when the body cannot be serialised.
pub fn layout<'a>(
    request: &'a Request,
    options: &CompileOptions,
    offset: usize,
    audit: Option<&CacheAudit>,
) -> Result<(Layout<wire::Tool<'a>>, Vec<CacheIssue>)> {
    let mut c = compile(request, options)?;
    let issues = audit.map(|a| a.audit(&c.body)).unwrap_or_default();
    let tools = std::mem::take(&mut c.body.tools);
    let body = c.to_vec()?;
    // Always empty: the tools are always converted here, and their notices
    // (`ToolRenamed` first, `NativeToolLeftOut` and `NoToolBreakpoint` after the messages')
    // are not one contiguous run.
    let no_tool_notices = 0..0;
    let (notices, notices_shifted) = chef_ir::layout::shift_notices(
        &c.notices,
        &no_tool_notices,
        offset,
        crate::Notice::renumber,
    );
    let mut layout = Layout::new(body, MESSAGES_KEY, c.names);
    // The tools field comes last.
    layout.tools_at = layout.body.len().saturating_sub(1);
    layout.tools = tools;
    layout.converted = true;
    layout.notices = notices;
    layout.tool_notices = no_tool_notices;
    layout.notices_shifted = notices_shifted;
    Ok((layout, issues))
}
