//! The three APIs the gateway speaks: their paths, the request fields chef owns, and the
//! error shapes clients expect.

use axum::{
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use chef_ir::{
    Target,
    relay::{Relay, RelayError},
};
use serde_json::Value;

/// An API the gateway answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// OpenAI Chat Completions (`POST /v1/chat/completions`).
    Chat,
    /// OpenAI Responses (`POST /v1/responses`).
    Responses,
    /// Anthropic Messages (`POST /v1/messages`).
    Messages,
}

impl Api {
    /// The chef compile target.
    pub fn target(self) -> Target {
        match self {
            Self::Chat => Target::OpenAiChat,
            Self::Responses => Target::OpenAiResponses,
            Self::Messages => Target::Anthropic,
        }
    }

    /// The path after `/v1`.
    pub fn path(self) -> &'static str {
        match self {
            Self::Chat => "/chat/completions",
            Self::Responses => "/responses",
            Self::Messages => "/messages",
        }
    }

    /// A short name for logs and metrics.
    pub fn name(self) -> &'static str {
        match self {
            Self::Chat => "chat",
            Self::Responses => "responses",
            Self::Messages => "messages",
        }
    }

    /// The provider crate's side of relaying this API: the request members chef owns,
    /// reading and rewriting replies, the client's stream.
    pub fn relay(self) -> &'static dyn Relay {
        match self {
            Self::Chat => &chef_openai::Chat,
            Self::Responses => &chef_openai::Responses,
            Self::Messages => &chef_anthropic::Anthropic,
        }
    }

    /// Whether the client speaks an OpenAI API (error shape, upstream).
    pub fn is_openai(self) -> bool {
        !matches!(self, Self::Messages)
    }
}

/// What went wrong, in terms every API has an error type for (its shape in each API is
/// the provider crate's, [`Relay::error_body`]).
pub use chef_ir::relay::ErrorKind as Kind;

/// The status code of `kind`.
fn status(kind: Kind) -> StatusCode {
    match kind {
        Kind::InvalidRequest => StatusCode::BAD_REQUEST,
        Kind::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        Kind::NotFound => StatusCode::NOT_FOUND,
        Kind::Upstream => StatusCode::BAD_GATEWAY,
        Kind::Timeout => StatusCode::GATEWAY_TIMEOUT,
        Kind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// An error answered in the shape of the API the client spoke.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The client's API.
    pub api: Api,
    /// What went wrong.
    pub kind: Kind,
    /// The message (never a body or a credential).
    pub message: String,
}

impl ApiError {
    /// An error of `kind`.
    pub fn new(api: Api, kind: Kind, message: impl Into<String>) -> Self {
        Self {
            api,
            kind,
            message: message.into(),
        }
    }

    /// The JSON body.
    pub fn body(&self) -> Value {
        error_body(self.api, self.kind, &self.message)
    }

    /// The status code.
    pub fn status(&self) -> StatusCode {
        status(self.kind)
    }
}

/// The client's error for a reply or stream the provider crate could not relay.
pub fn relay_error(api: Api, e: RelayError) -> ApiError {
    use std::error::Error as _;
    let message = match &e {
        RelayError::Upstream { message, .. } => message.clone(),
        // The cause, after what failed.
        other => match other.source() {
            Some(source) => format!("{other}: {source}"),
            None => other.to_string(),
        },
    };
    ApiError::new(api, Kind::Upstream, message)
}

/// The error body of `api` (the provider crate's shape).
pub fn error_body(api: Api, kind: Kind, message: &str) -> Value {
    api.relay().error_body(kind, message)
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        json_response(self.status(), &self.body())
    }
}

/// A JSON response with this status.
pub fn json_response(status: StatusCode, body: &impl serde::Serialize) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let mut response = (status, bytes).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
