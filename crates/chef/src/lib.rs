//! chef: a context-engineering runtime for LLM agents.
//!
//! The agent loop calls chef once per turn. chef selects the tools the model sees
//! (registry, task pruning, namespaces, lazy toolkits, library-owned tools), compresses
//! them, compiles a cache-stable request for the target provider, and routes every call
//! the model makes through one dispatch entry point, where a gate that cannot be bypassed
//! refuses blocked tools.
//!
//! This crate is being built up issue by issue; today it holds the tool registry and
//! pruning ([`prune`]), namespaces and toolkits ([`namespace`]), the blocklist ([`gate`])
//! and the library-owned tool definitions ([`owned`]).

pub mod announce;
mod error;
pub mod events;
pub mod gate;
pub mod namespace;
pub mod owned;
pub mod prune;
mod session;

pub use chef_compress as compress;
pub use chef_ir as ir;

pub use crate::{
    announce::{Announcement, Announcements, Channel},
    error::{ChefError, RouteError},
    events::ChefEvent,
    gate::Blocklist,
    namespace::{NamespaceCall, NamespaceError, ToolGroup},
    owned::ToolsMode,
    prune::{KeepReason, PrunePolicy, PruneResult, Pruner, RegistryError, Strategy},
    session::{
        ANCHOR_LINE, Chef, ChefConfig, MemoryPlacement, OwnedCall, Payload, PayloadMeta, Routed,
        RoutedCall, TargetOptions,
    },
};
