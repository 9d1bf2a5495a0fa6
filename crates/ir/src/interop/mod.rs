//! Conversions between chef-ir types and the types of Rust agent stacks, one module per
//! versioned Cargo feature.
//!
//! The orphan rule puts these conversions here, next to our types: neither rmcp nor
//! async-openai can implement `From<chef_ir::ToolDefinition>`, and no third crate could
//! implement it for them. Each feature is named after the crate *and* the major version
//! it speaks (`rmcp3`, `async_openai043`), so a future rmcp 4 or async-openai 0.44 arrives
//! as a new feature beside the old one instead of a breaking change to it.
//!
//! | feature | module | converts |
//! |---|---|---|
//! | `rmcp3` | `interop::rmcp3` | `rmcp::model::Tool` ↔ [`ToolDefinition`](crate::ToolDefinition), annotations, a routed [`ToolCall`](crate::ToolCall) → `CallToolRequestParams` |
//! | `async_openai043` | `interop::async_openai043` | [`ToolDefinition`](crate::ToolDefinition) → chat-completions and responses tools; their tool calls → [`ToolCall`](crate::ToolCall) |
//!
//! Every feature builds alone (`.ci/run` checks each with `--no-default-features`).

/// A conversion of an owned value by way of the one from a reference:
/// `by_reference!(From<T> for U)` implements `From<T> for U` as `U::from(&t)`, and
/// `by_reference!(TryFrom<T> for U, E)` implements `TryFrom<T> for U` (error `E`) as
/// `U::try_from(&t)`.
#[cfg(any(feature = "async_openai043", feature = "rmcp3"))]
macro_rules! by_reference {
    (From<$from:ty> for $to:ty) => {
        impl From<$from> for $to {
            fn from(value: $from) -> Self {
                Self::from(&value)
            }
        }
    };
    (TryFrom<$from:ty> for $to:ty, $error:ty) => {
        impl TryFrom<$from> for $to {
            type Error = $error;

            fn try_from(value: $from) -> Result<Self, Self::Error> {
                Self::try_from(&value)
            }
        }
    };
}

#[cfg(feature = "async_openai043")]
#[cfg_attr(docsrs, doc(cfg(feature = "async_openai043")))]
pub mod async_openai043;
#[cfg(feature = "rmcp3")]
#[cfg_attr(docsrs, doc(cfg(feature = "rmcp3")))]
pub mod rmcp3;
