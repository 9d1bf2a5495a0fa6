//! Step 4 of a turn: the assembled IR request to provider bytes, through the provider
//! crates.

use std::sync::Arc;

use bytes::Bytes;
use chef_ir::{Request, Target, ToolPass, WireNames, layout::Layout, provider::Provider};

use super::PerTarget;
use crate::error::{ChefError, ProviderError};
use crate::session::{body::ChunkedBody, select::TurnTools};

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
    pub(crate) body: Spliced,
    pub(crate) names: WireNames,
    pub(crate) notices: Vec<String>,
    /// Where the history prefix's notices are in `notices`, with their fold keys.
    pub(crate) prefix_keys: Option<(usize, Arc<[Option<crate::notices::Key>]>)>,
    pub(crate) cache_issues: Vec<chef_anthropic::CacheIssue>,
}

fn provider<E: Into<ProviderError>>(target: Target) -> impl Fn(E) -> ChefError + Copy {
    move |e| ChefError::Provider {
        target,
        source: e.into(),
    }
}

/// A target's serialised tools array and what must accompany it in every body that
/// splices it in.
#[derive(Debug, Clone)]
pub(crate) struct CachedTools {
    /// The serialised tools array (shared with every body spliced from it).
    bytes: Bytes,
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
            bytes: serde_json::to_vec(tools)
                .map_err(|e| ChefError::Provider {
                    target,
                    source: ProviderError::Tools(e),
                })?
                .into(),
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
    slots: PerTarget<(Arc<TurnTools>, CachedTools)>,
}

impl ToolBytes {
    /// The same cached tools (their bytes shared).
    pub(crate) fn fork(&self) -> Self {
        Self {
            slots: self.slots.clone(),
        }
    }

    /// The cached tools for `key` on `target`, if that is what the slot holds.
    pub(crate) fn get(&self, target: Target, key: &Arc<TurnTools>) -> Option<&CachedTools> {
        self.slots
            .get(target)
            .filter(|(k, _)| Arc::ptr_eq(k, key))
            .map(|(_, cached)| cached)
    }

    fn set(&mut self, target: Target, key: &Arc<TurnTools>, cached: CachedTools) {
        self.slots.set(target, Some((Arc::clone(key), cached)));
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
    pub(crate) bytes: Bytes,
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

/// One insertion [`pieces`] makes.
enum Insert<'a> {
    /// `"tools":<json>` between top-level members: just after `{` or just before the
    /// closing `}`, with the comma on the side that needs it.
    Tools(&'a Bytes),
    /// History-prefix elements inside the messages array.
    Prefix(&'a PrefixInsert),
}

/// One piece of a spliced body, in body order (see [`pieces`]).
enum Piece<'a> {
    /// `body[range]` of the freshly compiled body.
    Fresh(std::ops::Range<usize>),
    /// A separator.
    Static(&'static [u8]),
    /// Cached bytes: the tools or the history prefix.
    Cached(&'a Bytes),
}

/// The pieces of `body` with the tools and the prefix elements inserted, in order, to
/// `each`: the one description of a spliced body that both its contiguous and its chunked
/// form are written from. Empty fresh ranges are left out.
fn pieces<'a>(
    body: &[u8],
    tools: Option<(usize, &'a Bytes)>,
    prefix: Option<&'a PrefixInsert>,
    mut each: impl FnMut(Piece<'a>),
) {
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
        if cursor < at {
            each(Piece::Fresh(cursor..at));
        }
        cursor = at;
        match insert {
            Insert::Tools(json) => {
                let (head, tail) = body.split_at(at);
                let (before, after) = chef_ir::layout::tools_separators(head, tail);
                each(Piece::Static(before));
                each(Piece::Cached(json));
                if !after.is_empty() {
                    each(Piece::Static(after));
                }
            }
            Insert::Prefix(p) if p.comma_before => {
                each(Piece::Static(b","));
                each(Piece::Cached(&p.bytes));
            }
            Insert::Prefix(p) => {
                each(Piece::Cached(&p.bytes));
                each(Piece::Static(b","));
            }
        }
    }
    if cursor < body.len() {
        each(Piece::Fresh(cursor..body.len()));
    }
}

/// `body` with the tools and the prefix elements inserted, in one copy.
fn write_body(
    body: &[u8],
    tools: Option<(usize, &Bytes)>,
    prefix: Option<&PrefixInsert>,
) -> Vec<u8> {
    let extra = tools.map_or(0, |(_, t)| t.len() + 10) + prefix.map_or(0, PrefixInsert::len);
    let mut out = Vec::with_capacity(body.len() + extra);
    pieces(body, tools, prefix, |piece| match piece {
        Piece::Fresh(range) => extend_in_pieces(&mut out, body.get(range).unwrap_or_default()),
        Piece::Static(bytes) => out.extend_from_slice(bytes),
        Piece::Cached(bytes) => extend_in_pieces(&mut out, bytes),
    });
    out
}

/// A finished body not yet written out: the fresh body and the cached bytes it takes, to
/// be made contiguous ([`Spliced::into_vec`], one copy) or chunked
/// ([`Spliced::into_chunks`], no copy of the body or the cached bytes).
pub(crate) struct Spliced {
    body: Vec<u8>,
    tools: Option<(usize, Bytes)>,
    prefix: Option<PrefixInsert>,
}

impl Spliced {
    /// The body's length in bytes.
    pub(crate) fn len(&self) -> usize {
        let mut len = 0;
        pieces(
            &self.body,
            self.tools.as_ref().map(|(at, b)| (*at, b)),
            self.prefix.as_ref(),
            |piece| {
                len += match piece {
                    Piece::Fresh(range) => range.len(),
                    Piece::Static(bytes) => bytes.len(),
                    Piece::Cached(bytes) => bytes.len(),
                };
            },
        );
        len
    }

    /// Calls `each` with the body's bytes in order, piece by piece, copying nothing.
    pub(crate) fn for_each_piece(&self, mut each: impl FnMut(&[u8])) {
        let body = &self.body;
        pieces(
            body,
            self.tools.as_ref().map(|(at, b)| (*at, b)),
            self.prefix.as_ref(),
            |piece| match piece {
                Piece::Fresh(range) => each(body.get(range).unwrap_or_default()),
                Piece::Static(bytes) => each(bytes),
                Piece::Cached(bytes) => each(bytes),
            },
        );
    }

    /// The contiguous body: the fresh body itself when nothing is inserted, else one copy.
    pub(crate) fn into_vec(self) -> Vec<u8> {
        match (&self.tools, &self.prefix) {
            (None, None) => self.body,
            (tools, prefix) => write_body(
                &self.body,
                tools.as_ref().map(|(at, b)| (*at, b)),
                prefix.as_ref(),
            ),
        }
    }

    /// The chunked body: slices of the fresh body and the cached bytes, shared.
    pub(crate) fn into_chunks(self) -> ChunkedBody {
        let Self {
            body,
            tools,
            prefix,
        } = self;
        let fresh = Bytes::from(body);
        let mut chunks = Vec::with_capacity(8);
        pieces(
            &fresh,
            tools.as_ref().map(|(at, b)| (*at, b)),
            prefix.as_ref(),
            |piece| {
                chunks.push(match piece {
                    Piece::Fresh(range) => fresh.slice(range),
                    Piece::Static(bytes) => Bytes::from_static(bytes),
                    Piece::Cached(bytes) => bytes.clone(),
                });
            },
        );
        ChunkedBody::from_chunks(chunks)
    }
}

/// A provider body with its `tools` field left out, and where to put it back.
pub(crate) struct Unspliced {
    pub(crate) body: Vec<u8>,
    /// History-prefix elements to insert into `body`'s messages array (a suffix compile;
    /// see `prefix`), written together with the tools so the body is copied once.
    pub(crate) prefix: Option<PrefixInsert>,
    /// Where the tools are inserted (`None`: the request has no tools).
    pub(crate) tools_at: Option<usize>,
    /// The serialised tools, when this compile made them (a [`ToolBytes`] miss, or cached
    /// bytes that no longer fit the name table).
    pub(crate) fresh_tools: Option<CachedTools>,
    pub(crate) names: WireNames,
    pub(crate) notices: Vec<String>,
    /// How many of `notices` are about the tools as declared, converted or put back from
    /// the cache (they follow the renamed-tool notices; 0 when the tools were left out).
    pub(crate) tool_notices: usize,
    /// Whether every notice could be renumbered by the message offset given (always true
    /// for an offset of 0 or no notices).
    pub(crate) notices_shifted: bool,
    /// The key of the body's messages array (from the provider crate).
    pub(crate) messages_key: &'static str,
    pub(crate) cache_issues: Vec<chef_anthropic::CacheIssue>,
    /// Where the history prefix's notices were put in `notices`, with their fold keys.
    pub(crate) prefix_keys: Option<(usize, Arc<[Option<crate::notices::Key>]>)>,
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
    /// (which then replace the cached ones) or the cached ones. Nothing is copied yet: the
    /// caller writes the [`Spliced`] body out in the form it wants.
    pub(crate) fn finish(
        self,
        target: Target,
        cache: &mut ToolBytes,
        key: &Arc<TurnTools>,
    ) -> Result<Wire, ChefError> {
        if let Some(fresh) = self.fresh_tools {
            cache.set(target, key, fresh);
        }
        let tools = match self.tools_at {
            None => None,
            Some(at) => {
                let cached = cache.get(target, key).ok_or(ChefError::Provider {
                    target,
                    source: ProviderError::ToolsMissing,
                })?;
                Some((at, cached.bytes.clone()))
            }
        };
        let body = Spliced {
            body: self.body,
            tools,
            prefix: self.prefix,
        };
        Ok(Wire {
            body,
            names: self.names,
            notices: self.notices,
            prefix_keys: self.prefix_keys,
            cache_issues: self.cache_issues,
        })
    }
}

/// Whether the layout holds tools, and the fresh cache entry when the tools' bytes are
/// (re)made. Cached bytes that fit `names` serve as they are: when the provider crate
/// skipped the tools, their notices are put back where it left room for them (and
/// `layout.tool_notices` then covers them).
fn tools_of<T: serde::Serialize>(
    target: Target,
    request: &Request,
    layout: &mut Layout<T>,
    wanted: ToolsWanted<'_>,
) -> Result<(bool, Option<CachedTools>), ChefError> {
    let tools = std::mem::take(&mut layout.tools);
    match wanted {
        ToolsWanted::Omit => Ok((!tools.is_empty(), None)),
        ToolsWanted::Cached(cached) if cached.fits(&layout.names) => {
            if !layout.converted {
                let at = layout.tool_notices.start.min(layout.notices.len());
                layout
                    .notices
                    .splice(at..at, cached.notices.iter().cloned());
                layout.tool_notices = at..at + cached.notices.len();
            }
            Ok((!layout.converted || !tools.is_empty(), None))
        }
        ToolsWanted::Cached(_) | ToolsWanted::Serialise => {
            let fresh = if tools.is_empty() {
                None
            } else {
                let own = layout
                    .notices
                    .get(layout.tool_notices.clone())
                    .unwrap_or_default()
                    .to_vec();
                Some(CachedTools::new(
                    target,
                    &tools,
                    request,
                    &layout.names,
                    own,
                )?)
            };
            Ok((!tools.is_empty(), fresh))
        }
    }
}

/// Compiles `request` for `target` to bytes, the tools left out (see [`Unspliced`]).
///
/// `offset` is added to the message positions that notices name: the request is the
/// suffix of a longer one whose first `offset` history messages were left out. Only
/// notices the provider crate knows to be local are renumbered; see
/// [`Unspliced::notices_shifted`]. `tools` says whether the tools' bytes are cached,
/// wanted, or not needed.
pub(crate) fn compile_unspliced(
    target: Target,
    request: &Request,
    options: &TargetOptions,
    audit: bool,
    offset: usize,
    tools: ToolsWanted<'_>,
) -> Result<Unspliced, ChefError> {
    match target {
        // The cache audit reads the body before its tools are taken out: Anthropic's own
        // layout runs it when asked.
        Target::Anthropic if audit => {
            let (layout, cache_issues) = chef_anthropic::layout::layout(
                request,
                &options.anthropic,
                offset,
                Some(&cache_audit()),
            )
            .map_err(provider(target))?;
            unspliced(target, request, tools, layout, cache_issues)
        }
        Target::Anthropic => {
            via::<chef_anthropic::Anthropic>(target, request, &options.anthropic, offset, tools)
        }
        Target::OpenAiChat => {
            via::<chef_openai::Chat>(target, request, &options.openai, offset, tools)
        }
        Target::OpenAiResponses => {
            via::<chef_openai::Responses>(target, request, &options.openai, offset, tools)
        }
        Target::Gemini => {
            via::<chef_gemini::Gemini>(target, request, &options.gemini, offset, tools)
        }
    }
}

/// The [`Unspliced`] of a compile through provider `P`: the tools skipped while the cached
/// bytes serve (a provider that cannot skip them converts them anyway); converted when
/// they are wanted, or when this turn's name table turns out not to fit the cached bytes
/// (a second pass).
fn via<P: Provider>(
    target: Target,
    request: &Request,
    options: &P::Options,
    offset: usize,
    wanted: ToolsWanted<'_>,
) -> Result<Unspliced, ChefError>
where
    ProviderError: From<P::Error>,
{
    let compile = |pass| P::layout(request, options, pass, offset).map_err(provider(target));
    let mut compiled = compile(if wanted.convert() {
        ToolPass::Convert
    } else {
        ToolPass::Skip
    })?;
    if !compiled.converted
        && matches!(wanted, ToolsWanted::Cached(cached) if !cached.fits(&compiled.names))
    {
        compiled = compile(ToolPass::Convert)?;
    }
    unspliced(target, request, wanted, compiled, Vec::new())
}

/// The [`Unspliced`] of a provider crate's layout.
fn unspliced<T: serde::Serialize>(
    target: Target,
    request: &Request,
    wanted: ToolsWanted<'_>,
    mut layout: Layout<T>,
    cache_issues: Vec<chef_anthropic::CacheIssue>,
) -> Result<Unspliced, ChefError> {
    let (has_tools, fresh_tools) = tools_of(target, request, &mut layout, wanted)?;
    Ok(Unspliced {
        body: layout.body,
        prefix: None,
        fresh_tools,
        tools_at: has_tools.then_some(layout.tools_at),
        tool_notices: layout.tool_notices.len(),
        notices: layout.notices,
        notices_shifted: layout.notices_shifted,
        names: layout.names,
        messages_key: layout.messages_key,
        cache_issues,
        prefix_keys: None,
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
                    write_body(&u.body, u.tools_at.map(|at| (at, &cached.bytes)), None)
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
