//! Events the session emits, for logging, metrics and tests.

use chef_ir::Target;

use crate::memory::MemoryEvent;

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
    /// History was summarised to fit the budget.
    Summarized {
        /// Messages replaced by the summary.
        replaced: usize,
    },
}
