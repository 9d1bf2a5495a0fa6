//! Events the session emits, for logging, metrics and tests.

use chef_ir::Target;

use crate::memory::MemoryEvent;

/// Names one subscription of a session ([`Chef::subscribe`](crate::Chef::subscribe),
/// [`Chef::on_compiled`](crate::Chef::on_compiled)), for
/// [`Chef::unsubscribe`](crate::Chef::unsubscribe).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Subscription(pub(crate) u64);

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
    /// A skill became active (by `SkillsMut::activate`, a `load_skill` call, or a restore).
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
