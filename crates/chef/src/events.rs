//! Events the session emits, for logging, metrics and tests.

use chef_ir::{Target, WireNames};

use crate::{memory::MemoryEvent, session::PayloadMeta};

/// Names one subscription of a session ([`Chef::subscribe`](crate::Chef::subscribe),
/// [`Chef::on_compiled`](crate::Chef::on_compiled)), for
/// [`Chef::unsubscribe`](crate::Chef::unsubscribe).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Subscription(pub(crate) u64);

/// A compiled request as [`Chef::on_compiled`](crate::Chef::on_compiled) subscribers see
/// it, borrowed from the compile: the body is read in place (the pieces the chunked body is
/// made of), never copied for them.
pub struct Compiled<'a> {
    /// The target.
    pub target: Target,
    pub(crate) body: &'a crate::session::compiler::Spliced,
    /// Real ↔ wire tool names.
    pub names: &'a WireNames,
    /// The provider crate's notices (as [`Payload::notices`](crate::Payload::notices)).
    pub notices: &'a [String],
    /// The compile's bookkeeping (as [`Payload::meta`](crate::Payload::meta)).
    pub meta: &'a PayloadMeta,
}

impl Compiled<'_> {
    /// The body's length in bytes.
    pub fn body_len(&self) -> usize {
        self.body.len()
    }

    /// Calls `each` with the body's bytes in order (the pieces of
    /// [`ChunkedBody`](crate::ChunkedBody)); together they are exactly the bytes
    /// [`Chef::compile`](crate::Chef::compile) returns.
    pub fn for_each_chunk(&self, each: impl FnMut(&[u8])) {
        self.body.for_each_piece(each);
    }

    /// The body as one buffer (a copy).
    pub fn body_to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.body.len());
        self.for_each_chunk(|piece| out.extend_from_slice(piece));
        out
    }
}

impl std::fmt::Debug for Compiled<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiled")
            .field("target", &self.target)
            .field("body_len", &self.body_len())
            .field("notices", &self.notices)
            .field("meta", &self.meta)
            .finish_non_exhaustive()
    }
}

/// Something that happened in a session.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ChefEvent {
    /// A compile started.
    CompileStart {
        /// The target.
        target: Target,
        /// The turn being compiled (0-based).
        turn: u64,
    },
    /// A compile finished.
    CompileDone {
        /// The target.
        target: Target,
        /// The size of the request body in bytes.
        bytes: usize,
    },
    /// The tool set was (re)compressed because the tools changed.
    Compress {
        /// Wire tools sent.
        wire_tools: usize,
        /// Characters of the original tools.
        original_chars: usize,
        /// Characters of the compressed tools and preamble.
        compressed_chars: usize,
        /// o200k_base tokens of the original tools, when the compression options count
        /// them (`Options::with_token_counts`, feature `tokens`).
        original_tokens: Option<usize>,
        /// o200k_base tokens of the compressed tools and preamble, when counted.
        compressed_tokens: Option<usize>,
    },
    /// Memory changed (set, deleted or expired).
    Memory(MemoryEvent),
    /// An owned tool changed memory.
    MemoryWritten {
        /// The owned tool that wrote.
        tool: String,
    },
    /// An announcement was added, changed or retracted.
    AnnouncementChanged {
        /// Its id.
        id: String,
        /// False when it was retracted.
        present: bool,
    },
    /// A call reached a blocked tool and was refused.
    ToolBlocked {
        /// The blocked name.
        name: String,
    },
    /// The overflow step decided to run (over the trigger, or forced).
    CompressStart {
        /// Messages in the history.
        history_len: usize,
        /// Tokens the history takes.
        current_tokens: u64,
        /// The trigger (`None` without a context window).
        trigger: Option<f64>,
        /// Whether a new context window was requested.
        forced: bool,
    },
    /// The overflow step ended (after [`ChefEvent::CompressStart`]).
    CompressEnd {
        /// Whether the stored history was replaced.
        compressed: bool,
    },
    /// History was summarised (or archived and dropped) to fit the budget.
    Summarized {
        /// Messages replaced (pinned ones included).
        replaced: usize,
        /// The new context window.
        window: u64,
    },
    /// A summary was not used (the history is unchanged).
    SummaryFailed {
        /// Why.
        reason: String,
        /// Failures in a row, this one included.
        failures: u32,
    },
    /// A tool result (or a caller's text) was stored in the `vfs` namespace (see
    /// [`crate::offload`]).
    Offloaded {
        /// Its `context://vfs/…` address.
        uri: String,
        /// Bytes of content.
        bytes: usize,
        /// The real tool whose result it was, when known.
        tool: Option<String>,
        /// The store already held this content (nothing new was written).
        deduplicated: bool,
    },
    /// A pending offload could not be stored; the full result went back into the history.
    OffloadFailed {
        /// The address it would have had.
        uri: String,
        /// The store's error.
        error: String,
    },
    /// A skill became active (by `activate_skill`, a `load_skill` call, or a restore).
    SkillActivated {
        /// Its name.
        name: String,
    },
    /// The active skill ended or was replaced by another.
    SkillDeactivated {
        /// Its name.
        name: String,
    },
    /// Cleanup evicted an offloaded entry.
    OffloadEvicted {
        /// Its address.
        uri: String,
        /// Its size in bytes.
        bytes: u64,
        /// Why.
        reason: crate::offload::EvictReason,
    },
}
