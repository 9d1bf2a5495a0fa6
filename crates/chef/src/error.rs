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
    #[error("cannot compile for {target}: {source}")]
    Provider {
        /// The target.
        target: chef_ir::Target,
        /// The provider crate's error.
        #[source]
        source: ProviderError,
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
    /// Summarising the history failed around the summariser: its archive could not be
    /// written.
    #[error("summarising history failed: {0}")]
    Summarize(#[source] ArchiveError),
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
    /// `handle_tool` was given a tool chef does not own (guard with `chef.tools().owns`).
    #[error(
        "\"{0}\" is not a library-owned tool; check chef.tools().owns(name) before handle_tool()"
    )]
    NotOwned(String),
    /// `SkillsMut::activate` was given a name no registered skill has.
    #[error("no skill named \"{name}\" is registered (registered: {})", available.join(", "))]
    UnknownSkill {
        /// The name given.
        name: String,
        /// The registered names, in order.
        available: Vec<String>,
    },
}

/// Why a provider crate could not compile a request (the `source` of
/// [`ChefError::Provider`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// From `chef-anthropic`.
    #[error(transparent)]
    Anthropic(#[from] chef_anthropic::Error),
    /// From `chef-openai` (Chat Completions or Responses).
    #[error(transparent)]
    OpenAi(#[from] chef_openai::Error),
    /// From `chef-gemini`.
    #[error(transparent)]
    Gemini(#[from] chef_gemini::Error),
    /// The tools could not be serialised.
    #[error("cannot serialise the tools: {0}")]
    Tools(#[source] serde_json::Error),
    /// A body with tools was finished without their bytes (a runtime bug, reported rather
    /// than sent).
    #[error("the tools were neither serialised nor cached")]
    ToolsMissing,
}

/// Why the summarised span could not be archived (the source of
/// [`ChefError::Summarize`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArchiveError {
    /// The replaced messages could not be serialised.
    #[error("cannot serialise the archived messages: {0}")]
    Serialize(#[source] serde_json::Error),
    /// Every archive key for the window was taken.
    #[error("no free archive key for window {window}")]
    NoFreeKey {
        /// The window whose span was archived.
        window: u64,
    },
}

/// Why a model's call was not routed to a tool. The reply for the model is carried beside
/// it in [`Routed::Error`](crate::Routed::Error).
///
/// Equality compares the typed causes; two [`Unavailable`](Self::Unavailable) errors are
/// equal when their causes read the same.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum RouteError {
    /// The call has no usable name.
    #[error("missing or empty tool name")]
    Malformed,
    /// The resolver could not map the call to a tool, or its arguments are invalid.
    #[error(transparent)]
    Resolve(#[from] chef_compress::ResolveError),
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
    Unavailable(#[source] std::sync::Arc<ChefError>),
}

impl RouteError {
    /// The real tool this error is about, where it is about one: the tool whose arguments
    /// were refused or whose schema is unusable ([`ResolveError::tool`]), or the tool that
    /// is no longer offered as the model saw it. `None` for a call that reached no tool.
    ///
    /// [`ResolveError::tool`]: chef_compress::ResolveError::tool
    #[must_use]
    pub fn tool(&self) -> Option<&str> {
        match self {
            Self::Resolve(e) => e.tool(),
            Self::ToolListChanged { tool } => Some(tool.as_str()),
            Self::Malformed | Self::Namespace(_) | Self::Unavailable(_) => None,
        }
    }
}

impl PartialEq for RouteError {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Malformed, Self::Malformed) => true,
            (Self::Resolve(a), Self::Resolve(b)) => a == b,
            (Self::Namespace(a), Self::Namespace(b)) => a == b,
            (Self::ToolListChanged { tool: a }, Self::ToolListChanged { tool: b }) => a == b,
            (Self::Unavailable(a), Self::Unavailable(b)) => {
                std::sync::Arc::ptr_eq(a, b) || a.to_string() == b.to_string()
            }
            _ => false,
        }
    }
}
