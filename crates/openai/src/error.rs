//! The one error type of this crate.

use chef_ir::Role;

/// Everything that can go wrong compiling a request or parsing a reply.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes are not the JSON shape the OpenAI API documents. `body` keeps the raw
    /// text (lossily decoded) so the caller can log what came back.
    #[error("{what} is not valid OpenAI JSON")]
    InvalidJson {
        /// What was being parsed (`"chat completion"`, `"responses request"`, …).
        what: &'static str,
        /// The raw body.
        body: Box<str>,
        /// The decoder's complaint.
        #[source]
        source: serde_json::Error,
    },
    /// A value carries a tag we model (`"type":"function"`, `"type":"message"`, …) but
    /// its fields do not match the documented shape. The parsers do not return it today:
    /// such a value surfaces as [`Error::InvalidJson`], whose source names the kind.
    #[error("{kind} {tag:?} does not have the documented shape")]
    CorruptKnownKind {
        /// The kind of value (`"tool"`, `"content part"`, `"item"`, …).
        kind: &'static str,
        /// The tag that was recognised.
        tag: String,
        /// The decoder's complaint.
        #[source]
        source: serde_json::Error,
    },
    /// A chat completion response has no `choices`.
    #[error("the chat completion has no choices")]
    NoChoices,
    /// A Responses reply says the model failed (`status` `failed`, an `error` object).
    #[error("the response failed: {message}")]
    ResponseFailed {
        /// The error's `message` (or the error object's JSON text when it has none).
        message: String,
    },
    /// A content block sits in a message whose role cannot carry it (a tool call outside
    /// an assistant message, a tool result outside a tool message).
    #[error("message {message}: a {kind} cannot appear in a {role:?} message")]
    MisplacedContent {
        /// Index of the IR message.
        message: usize,
        /// The message's role.
        role: Role,
        /// The content kind (`"tool call"`, `"tool result"`).
        kind: &'static str,
    },
    /// The wire value could not be serialised (a JSON map with non-string keys cannot
    /// occur in values built from `serde_json::Value`, so this is not expected).
    #[error("the request body cannot be serialised")]
    Serialize(#[source] serde_json::Error),
    /// Tool-call arguments could not be serialised.
    #[error("message {message}: the arguments of call {call_id:?} cannot be serialised")]
    Arguments {
        /// Index of the IR message.
        message: usize,
        /// The call's id.
        call_id: String,
        /// The serialiser's complaint.
        #[source]
        source: serde_json::Error,
    },
}

impl Error {
    pub(crate) fn invalid_json(
        what: &'static str,
        bytes: &[u8],
        source: serde_json::Error,
    ) -> Self {
        Self::InvalidJson {
            what,
            body: String::from_utf8_lossy(bytes).into(),
            source,
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
