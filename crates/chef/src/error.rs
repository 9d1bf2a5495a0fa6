//! The runtime's errors.

use crate::{
    memory::MemoryError, namespace::NamespaceError, prune::RegistryError, snapshot::SnapshotError,
    store::StoreError,
};

/// Why a session operation failed. Model mistakes are never errors here: they come back
/// as replies in [`Routed`](crate::Routed).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChefError {
    /// A registration was refused.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// The tool set could not be compressed.
    #[error("cannot compress the tool set: {0}")]
    Compress(#[from] chef_compress::CompressError),
    /// A namespace member's schema is unusable.
    #[error("unusable tool schema: {0}")]
    Schema(Box<chef_compress::validate::SchemaError>),
    /// A provider crate could not compile the request.
    #[error("cannot compile for {target}: {message}")]
    Provider {
        /// The target.
        target: chef_ir::Target,
        /// The provider crate's error.
        message: String,
    },
    /// Memory refused an operation.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A snapshot could not be saved or loaded.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// The summariser failed.
    #[error("summarising history failed: {0}")]
    Summarize(String),
    /// Dynamic state could not be set.
    #[error(transparent)]
    DynamicState(#[from] crate::dynamic::DynamicStateError),
    /// A context injector failed, which fails the compile.
    #[error("context injector \"{injector}\" failed: {source}")]
    Inject {
        /// The injector's name.
        injector: String,
        /// What it reported.
        #[source]
        source: crate::dynamic::InjectError,
    },
    /// Two tools of one name would go on the wire (a combination registration could not
    /// see, such as a loaded toolkit's tool named like a level-2 compound tool). Every
    /// provider refuses such a request, so nothing is compiled.
    #[error("two tools named \"{name}\" would be sent; rename one of them")]
    DuplicateWireTool {
        /// The name sent twice.
        name: chef_ir::ToolName,
    },
    /// `handle_tool` was given a tool chef does not own (guard with `owns_tool`).
    #[error("\"{0}\" is not a library-owned tool; check owns_tool() before handle_tool()")]
    NotOwned(String),
}

/// Why a model's call was not routed to a tool. The reply for the model is carried beside
/// it in [`Routed::Error`](crate::Routed::Error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RouteError {
    /// The call has no usable name.
    #[error("missing or empty tool name")]
    Malformed,
    /// The resolver could not map the call to a tool, or its arguments are invalid.
    #[error("{0}")]
    Resolve(String),
    /// A namespace or toolkit call could not be resolved.
    #[error(transparent)]
    Namespace(#[from] NamespaceError),
    /// The call was made against a tool list that has changed since (a registry change
    /// between the compile the model answered and this call), and the tool it named there
    /// is gone or has another schema now. Nothing is dispatched; the next compile shows
    /// the current list.
    #[error("the tool list changed: \"{tool}\" is no longer offered as the model saw it")]
    ToolListChanged {
        /// The tool the call named in the list the model was shown.
        tool: chef_ir::ToolName,
    },
    /// The tool list could not be built (a configuration problem, not the model's).
    #[error("tools unavailable: {0}")]
    Unavailable(String),
}
