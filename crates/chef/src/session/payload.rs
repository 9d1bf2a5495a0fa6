//! What a compile returns: [`Payload`] and its bookkeeping.

use super::body::ChunkedBody;
use crate::prune::KeepReason;
use chef_ir::{Target, ToolName, WireNames};

/// One compiled request, ready to send.
///
/// `B` is the body's form: a contiguous `Vec<u8>` from [`Chef::compile`](crate::Chef::compile) (the default),
/// or a [`ChunkedBody`] from [`Chef::compile_chunked`](crate::Chef::compile_chunked) ([`ChunkedPayload`]), which shares
/// the bytes chef caches across turns instead of copying them. Both hold the same bytes,
/// and everything else in the payload is the same for either.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Payload<B = Vec<u8>> {
    /// The target.
    pub target: Target,
    /// The request body (compact JSON).
    pub body: B,
    /// Real ↔ wire tool names, for parsing the reply.
    pub names: WireNames,
    /// What the provider crate could not express as asked, plus chef's own notices
    /// (blocklist entries that match nothing, a pending overflow step, offloads, skills,
    /// the cache audit), one line per cause: repeats
    /// that differ only in the message and ids they name (one per error result in a
    /// loop) are folded into the first, which says how many more and which messages
    /// ([`notices::fold`](crate::notices::fold)).
    pub notices: Vec<String>,
    /// Bookkeeping about this compile (never sent).
    pub meta: PayloadMeta,
}

/// A compiled request whose body is a [`ChunkedBody`]: see [`Chef::compile_chunked`](crate::Chef::compile_chunked).
pub type ChunkedPayload = Payload<ChunkedBody>;

impl<B> Payload<B> {
    /// The payload with its body changed by `f`.
    pub(super) fn map_body<C>(self, f: impl FnOnce(B) -> C) -> Payload<C> {
        Payload {
            target: self.target,
            body: f(self.body),
            names: self.names,
            notices: self.notices,
            meta: self.meta,
        }
    }
}

impl From<ChunkedPayload> for Payload {
    /// The payload with its body joined (one copy).
    fn from(payload: ChunkedPayload) -> Self {
        payload.map_body(|body| body.to_vec())
    }
}

/// Bookkeeping about one compile.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct PayloadMeta {
    /// The turn this compile belongs to (0-based).
    pub turn: u64,
    /// The sent tools' names as chef names them, in order, before the target's name rule
    /// (`timezone.convert` here may travel as `timezone_convert`; see
    /// [`Payload::names`]).
    pub wire_tools: Vec<ToolName>,
    /// Why each kept flat tool was kept.
    /// Then the tools offered beyond the policy's own, in the order they joined:
    /// [`KeepReason::Found`] (a `find_tools` search) and [`KeepReason::Called`] (the
    /// history calls them).
    pub kept: Vec<(ToolName, KeepReason)>,
    /// Memory keys injected.
    pub memory_keys: Vec<String>,
    /// Memory keys that expired at this compile.
    pub expired_memory_keys: Vec<String>,
    /// The context window this compile belongs to (see [`crate::overflow`]).
    pub window: u64,
    /// Cache-audit findings for this compile (Anthropic, with
    /// [`ChefConfig::with_cache_audit`](crate::ChefConfig::with_cache_audit)).
    pub cache_issues: Vec<chef_anthropic::CacheIssue>,
    /// The name of the skill active at this compile.
    pub active_skill: Option<String>,
    /// Whether the body reused the serialised history prefix of earlier turns instead of
    /// compiling the whole history (the bytes are the same either way). An optimisation's
    /// trace for chef's own tests and profilers, not part of the supported API.
    #[doc(hidden)]
    pub reused_prefix: bool,
}
