//! The crate's error type.

/// What went wrong compiling a request or parsing Anthropic JSON.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A system message holds content the `system` slot cannot carry (only text can).
    #[error("system message {index} holds {kind} content; Anthropic system prompts are text only")]
    SystemContent {
        /// Index of the message in the IR request.
        index: usize,
        /// The content kind found.
        kind: &'static str,
    },
    /// A tool result holds content a `tool_result` block cannot carry.
    #[error(
        "tool result in message {index} holds {kind} content, which a tool_result cannot carry"
    )]
    ToolResultContent {
        /// Index of the message in the IR request.
        index: usize,
        /// The content kind found.
        kind: &'static str,
    },
    /// The body (a request's or a reply's) is not JSON, or not JSON the parser can read
    /// (it nests deeper than serde_json's limit of 128).
    #[error("the body is not JSON")]
    InvalidJson {
        /// The parser's complaint.
        #[source]
        source: serde_json::Error,
        /// The body as received (lossy UTF-8).
        body: String,
    },
    /// The JSON does not have the shape the Messages API documents.
    #[error("unexpected JSON at {path}: {reason}")]
    Shape {
        /// A JSON-pointer-like path to the offending value.
        path: String,
        /// What was expected.
        reason: String,
    },
    /// A block with a known `type` did not decode.
    #[error("malformed `{kind}` block at {path}")]
    MalformedBlock {
        /// The block's `type`.
        kind: String,
        /// Where it is.
        path: String,
        /// The decoder's complaint.
        #[source]
        source: serde_json::Error,
    },
    /// The API answered with an error body.
    #[error("anthropic API error {kind}: {message}")]
    Api {
        /// The error `type`, e.g. `overloaded_error`.
        kind: String,
        /// The error `message`.
        message: String,
    },
    /// Tool search was asked to defer every tool; the API needs at least one loaded.
    #[error("tool search needs at least one tool that stays loaded")]
    AllToolsDeferred,
    /// A tool to keep loaded is not in the tool set.
    #[error("tool {name} to keep loaded is not in the tool set")]
    UnknownLoadedTool {
        /// The name.
        name: chef_ir::ToolName,
    },
    /// Serialising the wire value failed.
    #[error("could not serialise the request")]
    Serialize(#[source] serde_json::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A [`Error::Shape`]; an empty `path` (the JSON pointer of the whole document) is
    /// written `the top level`, so the message never reads `at :`.
    pub(crate) fn shape(path: impl Into<String>, reason: impl Into<String>) -> Self {
        let path = path.into();
        Self::Shape {
            path: if path.is_empty() {
                "the top level".to_owned()
            } else {
                path
            },
            reason: reason.into(),
        }
    }
}
