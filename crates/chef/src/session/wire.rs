//! Step 4 of a turn: the assembled IR request to provider bytes, through the provider
//! crates.

use std::sync::Arc;

use chef_ir::{Request, Target, ToolPass, WireNames};

use super::select::TurnTools;
use crate::error::ChefError;

/// Per-target compile settings, passed through to the provider crates.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct TargetOptions {
    /// Anthropic Messages settings (model, max_tokens, thinking, cache TTL, …).
    pub anthropic: chef_anthropic::CompileOptions,
    /// OpenAI settings (Chat Completions and Responses).
    pub openai: chef_openai::CompileOptions,
    /// Gemini settings.
    pub gemini: chef_gemini::CompileOptions,
}

/// The provider's view of one compiled request.
pub(crate) struct Wire {
    pub(crate) body: Vec<u8>,
    pub(crate) names: WireNames,
    pub(crate) notices: Vec<String>,
    pub(crate) cache_issues: Vec<chef_anthropic::CacheIssue>,
}

fn provider<E: std::fmt::Display>(target: Target) -> impl FnOnce(E) -> ChefError {
    move |e| ChefError::Provider {
        target,
        message: e.to_string(),
    }
}

/// The position of `target` in per-target arrays (`[_; 4]`).
pub(crate) fn target_slot(target: Target) -> usize {
    match target {
        Target::Anthropic => 0,
        Target::OpenAiChat => 1,
        Target::OpenAiResponses => 2,
        Target::Gemini => 3,
    }
}

/// A target's serialised tools array and what must accompany it in every body that
/// splices it in.
#[derive(Debug, Clone)]
pub(crate) struct CachedTools {
    bytes: Vec<u8>,
    /// The notices about the tools as declared, for the targets whose crates can leave the
    /// tools out (OpenAI and Gemini): a compile that skips the tools gets them from here,
    /// at the place the provider crate keeps for them.
    notices: Vec<String>,
    /// The renamed tools, `(real, wire)`. A name the provider accepts is always sent as
    /// it is; a refused one is mapped through the whole name table (history calls
    /// included), so the bytes hold only while a compile's table maps these the same way.
    renamed: Vec<(String, String)>,
}

impl CachedTools {
    /// The cache entry for `tools` serialised under `names`, with their notices.
    fn new<T: serde::Serialize>(
        target: Target,
        tools: &[T],
        request: &Request,
        names: &WireNames,
        notices: Vec<String>,
    ) -> Result<Self, ChefError> {
        let renamed = if names.is_identity() {
            Vec::new()
        } else {
            request
                .tools
                .iter()
                .map(|t| t.name.as_str())
                .filter_map(|real| {
                    let wire = names.to_wire(real);
                    (wire != real).then(|| (real.to_owned(), wire.to_owned()))
                })
                .collect()
        };
        Ok(Self {
            bytes: serde_json::to_vec(tools).map_err(provider(target))?,
            notices,
            renamed,
        })
    }

    /// Whether a compile whose name table is `names` sends the tools as these bytes do.
    fn fits(&self, names: &WireNames) -> bool {
        self.renamed
            .iter()
            .all(|(real, wire)| names.to_wire(real) == wire)
    }
}

/// Per target, the serialised tools of the last compile and the tool selection they were
/// made from. While the selection (an `Arc`, held here so its address cannot be reused)
/// is the same, the bytes are spliced into the body instead of serialising the tools
/// again, and (OpenAI, Gemini) the provider crate does not even convert them: the tools
/// are most of a request's bytes and change rarely.
#[derive(Default)]
pub(crate) struct ToolBytes {
    slots: [Option<(Arc<TurnTools>, CachedTools)>; 4],
}

impl ToolBytes {
    /// The cached tools for `key` on `target`, if that is what the slot holds.
    pub(crate) fn get(&self, target: Target, key: &Arc<TurnTools>) -> Option<&CachedTools> {
        self.slots
            .get(target_slot(target))
            .and_then(Option::as_ref)
            .filter(|(k, _)| Arc::ptr_eq(k, key))
            .map(|(_, cached)| cached)
    }

    fn set(&mut self, target: Target, key: &Arc<TurnTools>, cached: CachedTools) {
        if let Some(slot) = self.slots.get_mut(target_slot(target)) {
            *slot = Some((Arc::clone(key), cached));
        }
    }
}

/// What a compile does about the tools' bytes.
#[derive(Clone, Copy)]
pub(crate) enum ToolsWanted<'c> {
    /// Splice these (a [`ToolBytes`] hit); serialised afresh if this compile's name table
    /// maps the tools differently.
    Cached(&'c CachedTools),
    /// Serialise them (a miss).
    Serialise,
    /// Only the body without them, and the notices about messages, are wanted (prefix
    /// probes): the OpenAI targets and Gemini skip the tools; Anthropic converts them.
    Omit,
}

impl<'c> ToolsWanted<'c> {
    /// For a [`ToolBytes`] lookup.
    pub(crate) fn from_cache(cached: Option<&'c CachedTools>) -> Self {
        cached.map_or(Self::Serialise, Self::Cached)
    }

    /// Whether a provider crate that can skip the tools should convert them.
    fn convert(self) -> bool {
        matches!(self, Self::Serialise)
    }
}

/// History-prefix elements to insert into a messages array at byte offset `at`: with a
/// comma before them when elements precede `at`, else after them.
#[derive(Debug, Clone)]
pub(crate) struct PrefixInsert {
    pub(crate) at: usize,
    pub(crate) bytes: Arc<[u8]>,
    pub(crate) comma_before: bool,
}

impl PrefixInsert {
    /// Bytes the insertion adds.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len() + 1
    }
}

/// Appends `bytes` in pieces of at most 2 KiB.
///
/// Large copies go through `memcpy`'s `rep movsb` path, whose speed on the AMD machines we
/// measured on depends on how source and destination happen to be placed: the same ~140 KB
/// body copy took from 3 to over 25 µs from run to run. Pieces below glibc's `rep movsb`
/// threshold take the vector loop, which does not vary.
fn extend_in_pieces(out: &mut Vec<u8>, bytes: &[u8]) {
    for piece in bytes.chunks(2048) {
        out.extend_from_slice(piece);
    }
}

/// One insertion [`write_body`] makes.
enum Insert<'a> {
    /// `"tools":<json>` between top-level members: just after `{` or just before the
    /// closing `}`, with the comma on the side that needs it.
    Tools(&'a [u8]),
    /// History-prefix elements inside the messages array.
    Prefix(&'a PrefixInsert),
}

/// `body` with the tools and the prefix elements inserted, in one copy.
fn write_body(
    body: &[u8],
    tools: Option<(usize, &[u8])>,
    prefix: Option<&PrefixInsert>,
) -> Vec<u8> {
    let extra = tools.map_or(0, |(_, t)| t.len() + 10) + prefix.map_or(0, PrefixInsert::len);
    let mut out = Vec::with_capacity(body.len() + extra);
    // At most two insertions, written in offset order.
    let mut inserts = [
        tools.map(|(at, json)| (at, Insert::Tools(json))),
        prefix.map(|p| (p.at, Insert::Prefix(p))),
    ];
    if let [Some((a, _)), Some((b, _))] = &inserts
        && b < a
    {
        inserts.swap(0, 1);
    }
    let mut cursor = 0;
    for (at, insert) in inserts.into_iter().flatten() {
        let at = at.min(body.len()).max(cursor);
        extend_in_pieces(&mut out, body.get(cursor..at).unwrap_or_default());
        cursor = at;
        match insert {
            Insert::Tools(json) => {
                let (head, tail) = body.split_at(at);
                let at_end = tail == b"}";
                if at_end && head.len() > 1 {
                    out.push(b',');
                }
                out.extend_from_slice(b"\"tools\":");
                extend_in_pieces(&mut out, json);
                if !at_end && tail.len() > 1 {
                    out.push(b',');
                }
            }
            Insert::Prefix(p) if p.comma_before => {
                out.push(b',');
                extend_in_pieces(&mut out, &p.bytes);
            }
            Insert::Prefix(p) => {
                extend_in_pieces(&mut out, &p.bytes);
                out.push(b',');
            }
        }
    }
    extend_in_pieces(&mut out, body.get(cursor..).unwrap_or_default());
    out
}

/// A provider body with its `tools` field left out, and where to put it back.
pub(crate) struct Unspliced {
    pub(crate) body: Vec<u8>,
    /// History-prefix elements to insert into `body`'s messages array (a suffix compile;
    /// see `incremental`), written together with the tools so the body is copied once.
    pub(crate) prefix: Option<PrefixInsert>,
    /// Where the tools are inserted (`None`: the request has no tools).
    pub(crate) tools_at: Option<usize>,
    /// The serialised tools, when this compile made them (a [`ToolBytes`] miss, or cached
    /// bytes that no longer fit the name table).
    pub(crate) fresh_tools: Option<CachedTools>,
    pub(crate) names: WireNames,
    pub(crate) notices: Vec<String>,
    /// Whether every notice could be renumbered by the message offset given (always true
    /// for an offset of 0 or no notices).
    pub(crate) notices_shifted: bool,
    pub(crate) cache_issues: Vec<chef_anthropic::CacheIssue>,
}

impl Unspliced {
    /// The body without the tools, with the prefix inserted, and where the tools go in it:
    /// what a full compile's `body` and `tools_at` are (for checking a prefix).
    pub(crate) fn without_tools(&self) -> (std::borrow::Cow<'_, [u8]>, Option<usize>) {
        match &self.prefix {
            None => (std::borrow::Cow::Borrowed(&self.body), self.tools_at),
            Some(p) => (
                std::borrow::Cow::Owned(write_body(&self.body, None, Some(p))),
                self.tools_at
                    .map(|t| if t >= p.at { t + p.len() } else { t }),
            ),
        }
    }

    /// The finished body, with the tools bytes spliced in: those this compile serialised
    /// (which then replace the cached ones) or the cached ones.
    pub(crate) fn finish(
        self,
        target: Target,
        cache: &mut ToolBytes,
        key: &Arc<TurnTools>,
    ) -> Result<Wire, ChefError> {
        if let Some(fresh) = self.fresh_tools {
            cache.set(target, key, fresh);
        }
        let body = match (self.tools_at, &self.prefix) {
            (None, None) => self.body,
            (None, Some(prefix)) => write_body(&self.body, None, Some(prefix)),
            (Some(at), prefix) => {
                let cached = cache.get(target, key).ok_or_else(|| ChefError::Provider {
                    target,
                    message: "the tools were neither serialised nor cached".to_owned(),
                })?;
                write_body(&self.body, Some((at, &cached.bytes)), prefix.as_ref())
            }
        };
        Ok(Wire {
            body,
            names: self.names,
            notices: self.notices,
            cache_issues: self.cache_issues,
        })
    }
}

/// Takes the wire tools out of a provider body that converted them, and serialises them
/// unless `wanted` holds cached bytes that fit `names`. Returns whether there were any,
/// and the fresh cache entry.
fn take_tools<T: serde::Serialize>(
    target: Target,
    request: &Request,
    tools: &mut Vec<T>,
    names: &WireNames,
    wanted: ToolsWanted<'_>,
) -> Result<(bool, Option<CachedTools>), ChefError> {
    let tools = std::mem::take(tools);
    let serialise = match wanted {
        ToolsWanted::Cached(cached) => !cached.fits(names),
        ToolsWanted::Serialise => true,
        ToolsWanted::Omit => false,
    };
    let fresh = if serialise && !tools.is_empty() {
        Some(CachedTools::new(
            target,
            &tools,
            request,
            names,
            Vec::new(),
        )?)
    } else {
        None
    };
    Ok((!tools.is_empty(), fresh))
}

/// For a provider crate that can skip the tools: whether cached bytes turned out not to
/// fit this compile's name table, so the tools need converting after all.
fn refits(wanted: ToolsWanted<'_>, names: &WireNames) -> bool {
    matches!(wanted, ToolsWanted::Cached(cached) if !cached.fits(names))
}

/// After a compile by a provider crate that can skip the tools (`tools` is what it
/// converted, `converted` whether it was asked to): whether the body has tools, the fresh
/// cache entry when they were converted, and the notices, with the cached tool notices
/// put back where the provider crate left room for them when it skipped the tools.
fn skippable_tools<T: serde::Serialize>(
    target: Target,
    request: &Request,
    (tools, converted): (Vec<T>, bool),
    names: &WireNames,
    wanted: ToolsWanted<'_>,
    notices: &mut Vec<String>,
    tool_notices: &std::ops::Range<usize>,
) -> Result<(bool, Option<CachedTools>), ChefError> {
    match wanted {
        ToolsWanted::Cached(cached) if !converted => {
            let at = tool_notices.start.min(notices.len());
            notices.splice(at..at, cached.notices.iter().cloned());
            Ok((true, None))
        }
        ToolsWanted::Omit => Ok((!tools.is_empty(), None)),
        ToolsWanted::Cached(_) | ToolsWanted::Serialise => {
            let fresh = if tools.is_empty() {
                None
            } else {
                let own = notices
                    .get(tool_notices.clone())
                    .unwrap_or_default()
                    .to_vec();
                Some(CachedTools::new(target, &tools, request, names, own)?)
            };
            Ok((!tools.is_empty(), fresh))
        }
    }
}

/// Compiles `request` for `target` to bytes, the tools left out (see [`Unspliced`]).
///
/// `offset` is added to the message positions that notices name: the request is the
/// suffix of a longer one whose first `offset` history messages were left out. Only
/// notices known to be local can be renumbered; see [`Unspliced::notices_shifted`].
/// `tools` says whether the tools' bytes are cached, wanted, or not needed.
pub(crate) fn compile_unspliced(
    target: Target,
    request: &Request,
    options: &TargetOptions,
    audit: bool,
    offset: usize,
    tools: ToolsWanted<'_>,
) -> Result<Unspliced, ChefError> {
    match target {
        Target::Anthropic => {
            let mut c =
                chef_anthropic::compile(request, &options.anthropic).map_err(provider(target))?;
            let cache_issues = if audit {
                cache_audit().audit(&c.body)
            } else {
                Vec::new()
            };
            let (has_tools, fresh_tools) =
                take_tools(target, request, &mut c.body.tools, &c.names, tools)?;
            let body = c.to_vec().map_err(provider(target))?;
            // Anthropic's tools field comes last.
            let tools_at = has_tools.then(|| body.len().saturating_sub(1));
            Ok(Unspliced {
                body,
                prefix: None,
                fresh_tools,
                tools_at,
                notices_shifted: offset == 0 || c.notices.is_empty(),
                notices: c.notices.iter().map(ToString::to_string).collect(),
                names: c.names,
                cache_issues,
            })
        }
        Target::OpenAiChat => {
            let (mut c, converted) = compile_skipping(
                tools,
                |pass| {
                    chef_openai::chat::compile_with(request, &options.openai, pass)
                        .map_err(provider(target))
                },
                |c| &c.names,
            )?;
            let wire_tools = std::mem::take(&mut c.body.tools);
            let body = chef_openai::chat::to_vec(&c).map_err(provider(target))?;
            skippable(
                target,
                request,
                tools,
                Skippable {
                    body,
                    // OpenAI's tools field comes first.
                    tools_at: 1,
                    tools: (wire_tools, converted),
                    names: c.names,
                    notices: openai_notices(&c.notices, &c.tool_notices, offset),
                    tool_notices: c.tool_notices,
                },
            )
        }
        Target::OpenAiResponses => {
            let (mut c, converted) = compile_skipping(
                tools,
                |pass| {
                    chef_openai::responses::compile_with(request, &options.openai, pass)
                        .map_err(provider(target))
                },
                |c| &c.names,
            )?;
            let wire_tools = std::mem::take(&mut c.body.tools);
            let body = chef_openai::responses::to_vec(&c).map_err(provider(target))?;
            skippable(
                target,
                request,
                tools,
                Skippable {
                    body,
                    tools_at: 1,
                    tools: (wire_tools, converted),
                    names: c.names,
                    notices: openai_notices(&c.notices, &c.tool_notices, offset),
                    tool_notices: c.tool_notices,
                },
            )
        }
        Target::Gemini => {
            let (mut c, converted) = compile_skipping(
                tools,
                |pass| {
                    chef_gemini::compile_with(request, &options.gemini, pass)
                        .map_err(provider(target))
                },
                |c| &c.names,
            )?;
            let wire_tools = std::mem::take(&mut c.body.tools);
            // Gemini's tools field follows the system instruction, when there is one.
            let (body, at) = chef_gemini::to_vec_with_tools_at(&c).map_err(provider(target))?;
            // A positional system message becomes a user content wherever it is: local.
            let notices =
                shifted_notices(&c.notices, &c.tool_notices, offset, |n, offset| match n {
                    chef_gemini::Notice::PositionalSystemAsUser { message } => {
                        *message += offset;
                        true
                    }
                    _ => false,
                });
            skippable(
                target,
                request,
                tools,
                Skippable {
                    body,
                    tools_at: at,
                    tools: (wire_tools, converted),
                    names: c.names,
                    notices,
                    tool_notices: c.tool_notices,
                },
            )
        }
    }
}

/// Compiles through a provider crate that can skip the tools: skipped while the cached
/// bytes serve; converted when they are wanted, or when this turn's name table turns out
/// not to fit the cached bytes (a second pass). Returns the compile and whether it
/// converted the tools. `names` reads a compile's name table.
fn compile_skipping<C>(
    wanted: ToolsWanted<'_>,
    compile: impl Fn(ToolPass) -> Result<C, ChefError>,
    names: impl Fn(&C) -> &WireNames,
) -> Result<(C, bool), ChefError> {
    if wanted.convert() {
        return Ok((compile(ToolPass::Convert)?, true));
    }
    let c = compile(ToolPass::Skip)?;
    if refits(wanted, names(&c)) {
        return Ok((compile(ToolPass::Convert)?, true));
    }
    Ok((c, false))
}

/// Notices as text, renumbered by `offset` where `renumber` can (it returns whether it
/// did), and whether all of them hold at that offset. Notices about the tools name no
/// message: they hold at any offset.
fn shifted_notices<N: Clone + std::fmt::Display>(
    notices: &[N],
    tool_notices: &std::ops::Range<usize>,
    offset: usize,
    renumber: impl Fn(&mut N, usize) -> bool,
) -> (Vec<String>, bool) {
    let mut all = true;
    let text = notices
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let mut n = n.clone();
            if !tool_notices.contains(&i) && !renumber(&mut n, offset) {
                all &= offset == 0;
            }
            n.to_string()
        })
        .collect();
    (text, all)
}

/// [`shifted_notices`] for both OpenAI targets. A system message after the conversation
/// started is folded into Responses' `instructions` wherever it is (system-placed
/// dynamic state): local, so its notice is renumbered. Chat keeps system messages inline
/// and never reports it.
fn openai_notices(
    notices: &[chef_openai::Notice],
    tool_notices: &std::ops::Range<usize>,
    offset: usize,
) -> (Vec<String>, bool) {
    shifted_notices(notices, tool_notices, offset, |n, offset| match n {
        chef_openai::Notice::SystemHoisted { message } => {
            *message += offset;
            true
        }
        _ => false,
    })
}

/// What a compile through a provider crate that can skip the tools hands to
/// [`skippable`].
struct Skippable<T> {
    /// The body, without tools.
    body: Vec<u8>,
    /// Where the tools go in it.
    tools_at: usize,
    /// The tools it converted, and whether it was asked to.
    tools: (Vec<T>, bool),
    names: WireNames,
    /// The notices as text, and whether they hold at the compile's offset.
    notices: (Vec<String>, bool),
    tool_notices: std::ops::Range<usize>,
}

/// The [`Unspliced`] of a compile by a provider crate that can skip the tools.
fn skippable<T: serde::Serialize>(
    target: Target,
    request: &Request,
    wanted: ToolsWanted<'_>,
    compiled: Skippable<T>,
) -> Result<Unspliced, ChefError> {
    let Skippable {
        body,
        tools_at,
        tools,
        names,
        notices: (mut notices, notices_shifted),
        tool_notices,
    } = compiled;
    let (has_tools, fresh_tools) = skippable_tools(
        target,
        request,
        tools,
        &names,
        wanted,
        &mut notices,
        &tool_notices,
    )?;
    Ok(Unspliced {
        body,
        prefix: None,
        fresh_tools,
        tools_at: has_tools.then_some(tools_at),
        notices,
        notices_shifted,
        names,
        cache_issues: Vec::new(),
    })
}

/// The Anthropic cache audit with chef's own volatile markers added (the memory block).
fn cache_audit() -> chef_anthropic::CacheAudit {
    chef_anthropic::CacheAudit::default().with_marker(chef_anthropic::Marker::new(
        "<memory>",
        "memory",
        "use MemoryPlacement::BeforeHistoryTail so that memory rides the last user turn",
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use chef_ir::{Message, Request, Target, ToolDefinition};
    use serde_json::json;

    use super::{TargetOptions, ToolsWanted, compile_unspliced, write_body};

    /// A request whose tools give notices on every target that can skip them: a deferred
    /// tool, a refused name, a schema Gemini cleans.
    fn request() -> Request {
        let schema = json!({
            "type": "object",
            "properties": {"path": {"type": ["string", "null"], "default": "/"}},
            "additionalProperties": false
        });
        Request::new(vec![
            Message::system("Read files."),
            Message::user("hi"),
            Message::system("Positional.").with_positional(true),
        ])
        .with_tools(vec![
            ToolDefinition::new("files/read", schema.clone()),
            ToolDefinition::new("files.list", schema).with_defer_loading(true),
        ])
    }

    #[test]
    fn a_compile_from_cached_tools_skips_them_and_equals_a_full_one() {
        let request = request();
        let options = TargetOptions::default();
        for target in [Target::Gemini, Target::OpenAiResponses, Target::OpenAiChat] {
            for offset in [0, 3] {
                let full = compile_unspliced(
                    target,
                    &request,
                    &options,
                    false,
                    offset,
                    ToolsWanted::Serialise,
                )
                .unwrap();
                let cached = full.fresh_tools.clone().unwrap();
                assert!(!cached.notices.is_empty(), "{target:?}: {:?}", full.notices);
                let hit = compile_unspliced(
                    target,
                    &request,
                    &options,
                    false,
                    offset,
                    ToolsWanted::Cached(&cached),
                )
                .unwrap();
                // Nothing converted: no fresh bytes.
                assert!(hit.fresh_tools.is_none(), "{target:?}");
                assert_eq!(hit.notices, full.notices, "{target:?}");
                assert_eq!(hit.notices_shifted, full.notices_shifted, "{target:?}");
                assert_eq!(hit.names, full.names, "{target:?}");
                let splice = |u: &super::Unspliced| {
                    write_body(&u.body, u.tools_at.map(|at| (at, &cached.bytes[..])), None)
                };
                assert_eq!(splice(&hit), splice(&full), "{target:?}");
            }
        }
    }

    #[test]
    fn cached_tools_that_no_longer_fit_the_name_table_are_made_again() {
        let request = request();
        let options = TargetOptions::default();
        for target in Target::ALL {
            let first =
                compile_unspliced(target, &request, &options, false, 0, ToolsWanted::Serialise)
                    .unwrap();
            let cached = first.fresh_tools.unwrap();
            // A call named as "files/read" was sent takes that wire name from it.
            let mut later = request.clone();
            later
                .messages
                .push(Message::assistant_with(vec![chef_ir::Content::ToolCall(
                    chef_ir::ToolCall::new("c1", "files_read", json!({})),
                )]));
            let hit = compile_unspliced(
                target,
                &later,
                &options,
                false,
                0,
                ToolsWanted::Cached(&cached),
            )
            .unwrap();
            let fresh = hit.fresh_tools.unwrap();
            assert_ne!(fresh.bytes, cached.bytes, "{target:?}");
        }
    }
}
