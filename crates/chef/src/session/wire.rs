//! Step 4 of a turn: the assembled IR request to provider bytes, through the provider
//! crates.

use std::sync::Arc;

use chef_ir::{Request, Target, WireNames};

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

/// Per target, the serialised tools array of the last compile and the tool selection it
/// was made from. While the selection (an `Arc`, held here so its address cannot be reused)
/// is the same, the bytes are spliced into the body instead of serialising the tools again:
/// the tools are most of a request's bytes and change rarely.
#[derive(Default)]
pub(crate) struct ToolBytes {
    slots: [Option<(Arc<TurnTools>, Vec<u8>)>; 4],
}

impl ToolBytes {
    /// The cached bytes for `key` on `target`, if that is what the slot holds.
    pub(crate) fn get(&self, target: Target, key: &Arc<TurnTools>) -> Option<&[u8]> {
        self.slots
            .get(target_slot(target))
            .and_then(Option::as_ref)
            .filter(|(k, _)| Arc::ptr_eq(k, key))
            .map(|(_, bytes)| bytes.as_slice())
    }

    fn set(&mut self, target: Target, key: &Arc<TurnTools>, bytes: Vec<u8>) {
        if let Some(slot) = self.slots.get_mut(target_slot(target)) {
            *slot = Some((Arc::clone(key), bytes));
        }
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
    /// The serialised tools, when the compile was asked for them (a [`ToolBytes`] miss).
    pub(crate) tools_json: Option<Vec<u8>>,
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
        if let Some(json) = self.tools_json {
            cache.set(target, key, json);
        }
        let body = match (self.tools_at, &self.prefix) {
            (None, None) => self.body,
            (None, Some(prefix)) => write_body(&self.body, None, Some(prefix)),
            (Some(at), prefix) => {
                let bytes = cache.get(target, key).ok_or_else(|| ChefError::Provider {
                    target,
                    message: "the tools were neither serialised nor cached".to_owned(),
                })?;
                write_body(&self.body, Some((at, bytes)), prefix.as_ref())
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

/// Takes the wire tools out of a provider body, serialising them when `serialise` is set.
/// Returns whether there were any, and their JSON.
fn take_tools<T: serde::Serialize>(
    target: Target,
    tools: &mut Vec<T>,
    serialise: bool,
) -> Result<(bool, Option<Vec<u8>>), ChefError> {
    let tools = std::mem::take(tools);
    let json = if serialise && !tools.is_empty() {
        Some(serde_json::to_vec(&tools).map_err(provider(target))?)
    } else {
        None
    };
    Ok((!tools.is_empty(), json))
}

/// Compiles `request` for `target` to bytes, the tools left out (see [`Unspliced`]).
///
/// `offset` is added to the message positions that notices name: the request is the
/// suffix of a longer one whose first `offset` history messages were left out. Only
/// notices known to be local can be renumbered; see [`Unspliced::notices_shifted`].
/// `serialise_tools` asks for the tools' JSON too (when [`ToolBytes`] does not hold it).
pub(crate) fn compile_unspliced(
    target: Target,
    request: &Request,
    options: &TargetOptions,
    audit: bool,
    offset: usize,
    serialise_tools: bool,
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
            let (has_tools, tools_json) = take_tools(target, &mut c.body.tools, serialise_tools)?;
            let body = c.to_vec().map_err(provider(target))?;
            // Anthropic's tools field comes last.
            let tools_at = has_tools.then(|| body.len().saturating_sub(1));
            Ok(Unspliced {
                body,
                prefix: None,
                tools_json,
                tools_at,
                notices_shifted: offset == 0 || c.notices.is_empty(),
                notices: c.notices.iter().map(ToString::to_string).collect(),
                names: c.names,
                cache_issues,
            })
        }
        Target::OpenAiChat => {
            let mut c =
                chef_openai::chat::compile(request, &options.openai).map_err(provider(target))?;
            let (has_tools, tools_json) = take_tools(target, &mut c.body.tools, serialise_tools)?;
            let body = chef_openai::chat::to_vec(&c).map_err(provider(target))?;
            // OpenAI's tools field comes first.
            Ok(Unspliced {
                body,
                prefix: None,
                tools_json,
                tools_at: has_tools.then_some(1),
                notices_shifted: offset == 0 || c.notices.is_empty(),
                notices: c.notices.iter().map(ToString::to_string).collect(),
                names: c.names,
                cache_issues: Vec::new(),
            })
        }
        Target::OpenAiResponses => {
            let mut c = chef_openai::responses::compile(request, &options.openai)
                .map_err(provider(target))?;
            let (has_tools, tools_json) = take_tools(target, &mut c.body.tools, serialise_tools)?;
            let body = chef_openai::responses::to_vec(&c).map_err(provider(target))?;
            // A system message after the conversation started is folded into
            // `instructions` wherever it is (system-placed dynamic state): local, so its
            // notice can be renumbered.
            let mut notices_shifted = true;
            let notices = c
                .notices
                .iter()
                .map(|n| {
                    let mut n = n.clone();
                    match &mut n {
                        chef_openai::Notice::SystemHoisted { message } => *message += offset,
                        _ => notices_shifted &= offset == 0,
                    }
                    n.to_string()
                })
                .collect();
            Ok(Unspliced {
                body,
                prefix: None,
                tools_json,
                tools_at: has_tools.then_some(1),
                notices_shifted,
                notices,
                names: c.names,
                cache_issues: Vec::new(),
            })
        }
        Target::Gemini => {
            let mut c = chef_gemini::compile(request, &options.gemini).map_err(provider(target))?;
            let (has_tools, tools_json) = take_tools(target, &mut c.body.tools, serialise_tools)?;
            let body = chef_gemini::to_vec(&c).map_err(provider(target))?;
            // Gemini's tools field follows the system instruction, when there is one.
            let tools_at = if has_tools {
                Some(match &c.body.system_instruction {
                    Some(system) => {
                        let len = serde_json::to_vec(system).map_err(provider(target))?.len();
                        1 + b"\"systemInstruction\":".len() + len + 1
                    }
                    None => 1,
                })
            } else {
                None
            };
            // A positional system message becomes a user content wherever it is: local, so
            // its notice can be renumbered.
            let mut notices_shifted = true;
            let notices = c
                .notices
                .iter()
                .map(|n| {
                    let mut n = n.clone();
                    match &mut n {
                        chef_gemini::Notice::PositionalSystemAsUser { message } => {
                            *message += offset;
                        }
                        _ => notices_shifted &= offset == 0,
                    }
                    n.to_string()
                })
                .collect();
            Ok(Unspliced {
                body,
                prefix: None,
                tools_json,
                tools_at,
                notices,
                notices_shifted,
                names: c.names,
                cache_issues: Vec::new(),
            })
        }
    }
}

/// The Anthropic cache audit with chef's own volatile markers added (the memory block).
fn cache_audit() -> chef_anthropic::CacheAudit {
    chef_anthropic::CacheAudit::default().with_marker(chef_anthropic::Marker::new(
        "<memory>",
        "memory",
        "use MemoryPlacement::BeforeHistoryTail so that memory rides the last user turn",
    ))
}
