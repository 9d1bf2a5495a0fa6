//! The three APIs the gateway speaks: their paths, the request fields chef owns, and the
//! error shapes clients expect.

use axum::{
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use chef_ir::Target;
use serde_json::{Value, json};

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

    /// The top-level request fields chef compiles (the rest are kept and sent as received).
    pub fn owned_fields(self) -> &'static [&'static str] {
        match self {
            Self::Chat => &["messages", "tools"],
            Self::Responses => &["input", "instructions", "tools"],
            Self::Messages => &["system", "messages", "tools"],
        }
    }

    /// Whether the client speaks an OpenAI API (error shape, upstream).
    pub fn is_openai(self) -> bool {
        !matches!(self, Self::Messages)
    }
}

/// What went wrong, in terms every API has an error type for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The request is malformed (400).
    InvalidRequest,
    /// The body is too large (413).
    TooLarge,
    /// No such route (404).
    NotFound,
    /// The upstream could not be reached or answered nonsense (502).
    Upstream,
    /// The upstream took too long (504).
    Timeout,
    /// The gateway itself failed (500).
    Internal,
}

impl Kind {
    fn status(self) -> StatusCode {
        match self {
            Self::InvalidRequest => StatusCode::BAD_REQUEST,
            Self::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::Upstream => StatusCode::BAD_GATEWAY,
            Self::Timeout => StatusCode::GATEWAY_TIMEOUT,
            Self::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The error `type` of each API.
    fn type_name(self, api: Api) -> &'static str {
        match (self, api.is_openai()) {
            (Self::InvalidRequest, _) | (Self::NotFound, true) => "invalid_request_error",
            (Self::NotFound, false) => "not_found_error",
            (Self::TooLarge, true) => "invalid_request_error",
            (Self::TooLarge, false) => "request_too_large",
            (Self::Timeout, false) => "timeout_error",
            (Self::Upstream | Self::Internal, false) => "api_error",
            (Self::Upstream | Self::Internal | Self::Timeout, true) => "server_error",
        }
    }

    /// The OpenAI `code`.
    fn code(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::TooLarge => "request_too_large",
            Self::NotFound => "not_found",
            Self::Upstream => "upstream_error",
            Self::Timeout => "upstream_timeout",
            Self::Internal => "gateway_error",
        }
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
        self.kind.status()
    }

    /// The OpenAI `code` of this error.
    pub fn kind_code(&self) -> &'static str {
        self.kind.code()
    }
}

/// `{"error":{"message","type","code"}}` (OpenAI) or
/// `{"type":"error","error":{"type","message"}}` (Anthropic).
pub fn error_body(api: Api, kind: Kind, message: &str) -> Value {
    if api.is_openai() {
        json!({"error": {"message": message, "type": kind.type_name(api), "param": null, "code": kind.code()}})
    } else {
        json!({"type": "error", "error": {"type": kind.type_name(api), "message": message}})
    }
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
