//! The crate's one error type.

/// Everything that can go wrong compiling a request or parsing Gemini JSON.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A tool's input schema is not a JSON object.
    #[error("input schema of tool {tool:?} is not a JSON object")]
    SchemaNotObject {
        /// The tool's real name.
        tool: String,
    },
    /// A native tool aimed at Gemini is not a JSON object (a Gemini `Tool` is one).
    #[error("native tool #{index} is not a JSON object")]
    NativeToolNotObject {
        /// Its index in `Request::native_tools`.
        index: usize,
    },
    /// A `data:` URL attachment that is not base64; Gemini cannot fetch `data:` URLs and
    /// chef does not re-encode percent-encoded payloads.
    #[error("attachment in message {message} is a data: URL without ;base64")]
    UnsupportedDataUrl {
        /// Index of the message in the request.
        message: usize,
    },
    /// A part uses a known field with a value of the wrong shape.
    #[error("malformed {kind} part: {reason}")]
    MalformedPart {
        /// The part's data field (`text`, `functionCall`, …).
        kind: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A part's known field does not read as that field's type.
    #[error("malformed {kind} part: {source}")]
    MalformedPartData {
        /// The part's data field (`inlineData`, `functionCall`, …).
        kind: &'static str,
        /// What serde_json found.
        #[source]
        source: serde_json::Error,
    },
    /// The response carries no candidate (the prompt was blocked, or the body is empty).
    #[error("response has no candidate{}", block_reason.as_ref().map(|r| format!(" (prompt blocked: {r})")).unwrap_or_default())]
    NoCandidate {
        /// `promptFeedback.blockReason`, when Gemini gave one.
        block_reason: Option<String>,
    },
    /// The body is not the JSON we expect; the raw body is kept for diagnosis.
    #[error("invalid Gemini JSON")]
    InvalidJson {
        /// The parser's complaint.
        #[source]
        source: serde_json::Error,
        /// The body as received (lossy UTF-8).
        body: String,
    },
    /// Serialising the wire value failed (cannot happen for values this crate builds).
    #[error("serialising the request failed")]
    Serialize(#[source] serde_json::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
