//! [`Chat`](crate::Chat) and [`Responses`](crate::Responses) as [`chef_ir::relay::Relay`]s:
//! an OpenAI reply relayed to a client of the same API, whole or streamed.

/// The [`Relay`](chef_ir::relay::Relay) methods both APIs share, through the API module
/// `$api` (`chat` or `responses`): reading a request and a reply, the error shape.
macro_rules! shared_relay {
    ($api:ident) => {
        fn read_request(&self, body: &[u8]) -> Result<chef_ir::Request, RelayError> {
            crate::$api::parse_request(body).map_err(|e| RelayError::Request(Box::new(e)))
        }

        fn read_reply(&self, reply: &Value, names: &WireNames) -> Result<Message, RelayError> {
            check_reply(reply)?;
            let bytes = serde_json::to_vec(reply).map_err(|e| RelayError::Reply(Box::new(e)))?;
            crate::$api::parse_response(&bytes, names)
                .map(|parsed| parsed.message)
                .map_err(|e| RelayError::Reply(Box::new(e)))
        }

        fn error_body(&self, kind: ErrorKind, message: &str) -> Value {
            super::error_body(kind, message)
        }
    };
}

mod chat;
mod responses;

use chef_ir::relay::{CallFate, ErrorKind, RelayError};
use serde_json::{Map, Value, json};

/// The compact JSON text of arguments (OpenAI sends arguments as text).
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        // A string is argument text the model wrote that was not JSON; chef's resolver
        // never validates one, but keep it as it came.
        Value::String(text) => text.clone(),
        other => serde_json::to_string(other).unwrap_or_else(|_| "{}".to_owned()),
    }
}

/// Whether an OpenAI call (a Chat `function`, a Responses `function_call` item) stays in
/// the reply: a client's call does, with its real name and argument text put back in
/// `fields`; one answered before does not, and neither does one the gateway did not route
/// (`read_reply` refuses every call shape it cannot read, so none is expected: a call
/// that was not checked against the blocklist never reaches the client).
fn restore_call(fields: Option<&mut Map<String, Value>>, fate: Option<CallFate>) -> bool {
    match fate {
        Some(CallFate::Client { name, arguments }) => {
            if let Some(fields) = fields {
                fields.insert("name".to_owned(), Value::String(name));
                fields.insert(
                    "arguments".to_owned(),
                    Value::String(arguments_text(&arguments)),
                );
            }
            true
        }
        Some(CallFate::Answered) | None => false,
    }
}

/// `usage` in place of the reply's own.
fn put_usage(reply: &mut Value, usage: Option<&Map<String, Value>>) {
    if let (Some(usage), Some(object)) = (usage, reply.as_object_mut()) {
        object.insert("usage".to_owned(), Value::Object(usage.clone()));
    }
}

/// The message of an OpenAI error body or error event.
fn error_message(body: &Value) -> Option<&str> {
    body.pointer("/error/message")
        .or_else(|| body.pointer("/response/error/message"))
        .or_else(|| body.get("message"))
        .and_then(Value::as_str)
}

/// An error event's [`RelayError::Upstream`].
fn upstream_error(event: &Value) -> RelayError {
    let message = error_message(event).unwrap_or("the upstream reported an error in the stream");
    RelayError::Upstream {
        message: message.to_owned(),
        error: error_as_body(event),
    }
}

/// An error event in OpenAI's error-body shape: a Chat chunk `{"error":{…}}` is one
/// already; a Responses `error` event (`code`, `message`, `param` at its top level) and a
/// `response.failed` (`response.error`) are put in one, their `code` kept.
fn error_as_body(event: &Value) -> Option<Value> {
    if event.get("error").is_some_and(Value::is_object) {
        return Some(event.clone());
    }
    let inner = event
        .pointer("/response/error")
        .filter(|e| e.is_object())
        .unwrap_or(event);
    let message = inner.get("message").and_then(Value::as_str)?;
    let code = inner.get("code").cloned().unwrap_or(Value::Null);
    Some(json!({"error": {
        "message": message,
        "type": code.as_str().unwrap_or("server_error"),
        "param": inner.get("param").cloned().unwrap_or(Value::Null),
        "code": code,
    }}))
}

/// The error `type` OpenAI documents for `kind`.
fn error_type(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidRequest | ErrorKind::NotFound | ErrorKind::TooLarge => {
            "invalid_request_error"
        }
        ErrorKind::Upstream | ErrorKind::Internal | ErrorKind::Timeout => "server_error",
    }
}

/// The gateway's `code` for `kind`.
fn error_code(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidRequest => "invalid_request",
        ErrorKind::TooLarge => "request_too_large",
        ErrorKind::NotFound => "not_found",
        ErrorKind::Upstream => "upstream_error",
        ErrorKind::Timeout => "upstream_timeout",
        ErrorKind::Internal => "gateway_error",
    }
}

/// `{"error":{"message","type","param","code"}}`.
fn error_body(kind: ErrorKind, message: &str) -> Value {
    json!({"error": {"message": message, "type": error_type(kind), "param": null, "code": error_code(kind)}})
}
