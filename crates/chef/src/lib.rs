//! chef: a context-engineering runtime for LLM agents.
//!
//! The agent loop calls chef once per turn. chef selects the tools the model sees
//! (registry, task pruning, namespaces, lazy toolkits, library-owned tools), compresses
//! them, compiles a cache-stable request for the target provider, and routes every call
//! the model makes through one dispatch entry point, where a gate that cannot be bypassed
//! refuses blocked tools.
//!
//! * [`Chef`]: one agent session — tools, conversation, announcements, memory;
//!   [`Chef::compile`] once per turn, [`Chef::route`] for every call the model makes.
//! * [`prune`], [`namespace`], [`gate`], [`owned`]: the tool registry and pruning,
//!   namespaces and lazy toolkits, the blocklist, the library-owned tools.
//! * [`announce`]: standing notes that tell the model what changed.
//! * [`dynamic`]: dynamic state and injected context, the per-turn blocks of the tail.
//! * [`store`]: the namespaced, versioned [`StorageBackend`](store::StorageBackend) trait
//!   with compare-and-set writes, an in-memory and a file-system backend.
//! * [`memory`]: the session's memory entries (TTL in turns, validation hook, change
//!   events, the rendered memory block), persisted through a store.
//! * [`offload`]: large tool results stored in the context store and replaced by a preview.
//! * [`skills`]: `SKILL.md` skills: loading, the listing, the active skill's instructions.
//! * [`snapshot`]: the versioned on-disk envelope for session snapshots, saved atomically.
//! * [`tool_search`]: a compressed tool set composed with a provider's native tool search.
//!
//! ```
//! use chef::memory::{Memory, MemoryStyle, SetOptions};
//!
//! let mut memory = Memory::new();
//! memory.set("lang", "Rust", SetOptions::new())?;
//! assert!(memory.render_block(MemoryStyle::Unified).is_some());
//! # Ok::<(), chef::memory::MemoryError>(())
//! ```

pub mod announce;
mod arguments;
pub mod dynamic;
mod error;
pub mod events;
mod fsutil;
pub mod gate;
pub mod guardrail;
pub mod memory;
pub mod namespace;
pub mod notices;
pub mod offload;
pub mod overflow;
pub mod owned;
pub mod prune;
mod session;
pub mod skills;
pub mod snapshot;
pub mod store;
pub mod tool_search;

pub use bytes;
pub use chef_anthropic as anthropic;
pub use chef_compress as compress;
pub use chef_gemini as gemini;
pub use chef_ir as ir;
pub use chef_openai as openai;

pub use crate::{
    announce::{Announcement, Announcements, Channel},
    error::{ArchiveError, ChefError, ProviderError, RouteError},
    events::{ChefEvent, Subscription},
    gate::{BlockReport, Blocklist},
    namespace::{NamespaceCall, NamespaceError, ToolGroup},
    overflow::{
        Budget, HandoffBudget, OverflowConfig, OverflowOutcome, Summarizer, SummarizerError,
        SummaryRequest, Tokenizer,
    },
    owned::{OwnedReply, ToolsMode},
    prune::{
        CompiledGroups, KeepReason, PrunePolicy, PruneResult, Pruner, RegistryError, Strategy,
    },
    session::{
        ANCHOR_LINE, Chef, ChefConfig, ChunkedBody, ChunkedPayload, Compiled, FoundTool, Layers,
        LayersMut, MemoryPlacement, Offloads, OffloadsMut, OwnedCall, Payload, PayloadMeta,
        REPEATED_CALL_ID, RestoreOptions, Routed, RoutedCall, SessionSkills, SessionState,
        SkillsMut, TargetOptions, Tools, ToolsMut,
    },
};

/// README.md's Rust examples, compiled as doctests so the README cannot drift.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
