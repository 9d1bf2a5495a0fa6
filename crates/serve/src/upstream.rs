//! Requests to the upstream API: the URL, the headers forwarded as received, and errors
//! turned into the client's error shape.

use axum::{
    body::Body,
    http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header},
    response::Response,
};
use serde_json::Value;

use crate::{
    Gateway,
    api::{Api, ApiError, Kind, error_body, json_response},
};

/// Request headers never forwarded: hop-by-hop headers, the ones the HTTP client sets
/// itself, and `accept-encoding` (the gateway reads upstream bodies, so they come
/// uncompressed).
const DROPPED: [&str; 11] = [
    "host",
    "content-length",
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "accept-encoding",
];

/// Response headers passed back to the client with a passthrough.
const KEPT_RESPONSE: [&str; 4] = ["content-type", "retry-after", "request-id", "x-request-id"];

/// Upstream response headers passed back on every API reply (the round the client's reply
/// comes from): the request ids (Anthropic's `request-id`, OpenAI's `x-request-id`), the
/// one a client quotes to its provider's support, and what a client paces or retries by
/// (`retry-after-ms`, `x-should-retry`, which the official SDKs read, and the processing
/// time). Rate-limit headers (`x-ratelimit-*`, `anthropic-ratelimit-*`) are kept too, by
/// prefix.
const REPLY_HEADERS: [&str; 5] = [
    "request-id",
    "x-request-id",
    "retry-after-ms",
    "x-should-retry",
    "openai-processing-ms",
];

/// Prefixes of the rate-limit headers passed back (see [`REPLY_HEADERS`]).
const RATE_LIMIT_PREFIXES: [&str; 2] = ["x-ratelimit-", "anthropic-ratelimit-"];

/// The upstream headers `response` carries that go back to the client (see
/// [`REPLY_HEADERS`]).
pub(crate) fn reply_headers(response: &reqwest::Response) -> Vec<(HeaderName, HeaderValue)> {
    response
        .headers()
        .iter()
        .filter(|(name, _)| {
            let name = name.as_str();
            REPLY_HEADERS.contains(&name) || RATE_LIMIT_PREFIXES.iter().any(|p| name.starts_with(p))
        })
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect()
}

/// `out` with `headers` (from [`reply_headers`]) among its headers.
pub(crate) fn with_reply_headers(
    mut out: Response,
    headers: Vec<(HeaderName, HeaderValue)>,
) -> Response {
    for (name, value) in headers {
        out.headers_mut().append(name, value);
    }
    out
}

/// The headers to send upstream: the client's, credentials included, minus [`DROPPED`].
pub(crate) fn forward_headers(headers: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        if DROPPED.contains(&name.as_str()) {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    out
}

/// The upstream base for a client path: Anthropic when the client sent `anthropic-version`
/// or `x-api-key` without `authorization`, else OpenAI.
pub(crate) fn base_for_headers<'g>(gateway: &'g Gateway, headers: &HeaderMap) -> &'g str {
    let anthropic = headers.contains_key("anthropic-version")
        || (headers.contains_key("x-api-key") && !headers.contains_key(header::AUTHORIZATION));
    if anthropic {
        &gateway.config.anthropic_base
    } else {
        &gateway.config.openai_base
    }
}

/// The upstream base of an API.
pub(crate) fn base_for_api(gateway: &Gateway, api: Api) -> &str {
    if api.is_openai() {
        &gateway.config.openai_base
    } else {
        &gateway.config.anthropic_base
    }
}

/// Posts `body` to `api`'s upstream; a response of any status comes back, transport
/// failures and timeouts as errors in the client's shape.
pub(crate) async fn post(
    gateway: &Gateway,
    api: Api,
    headers: &HeaderMap,
    body: Vec<u8>,
) -> Result<reqwest::Response, ApiError> {
    let url = format!("{}{}", base_for_api(gateway, api), api.path());
    let mut headers = forward_headers(headers);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    let request = gateway.client.post(url).headers(headers).body(body);
    match tokio::time::timeout(gateway.config.upstream_timeout, request.send()).await {
        Err(_) => Err(timeout(api)),
        Ok(Err(e)) if e.is_timeout() => Err(timeout(api)),
        Ok(Err(e)) => Err(ApiError::new(api, Kind::Upstream, send_failure(&e))),
        Ok(Ok(response)) => Ok(response),
    }
}

/// Why sending a request upstream failed, for the client: the connection could not be
/// made, or the upstream took the request and closed the connection without an answer
/// (the request may have been read: the client decides whether to send it again).
fn send_failure(e: &reqwest::Error) -> String {
    if e.is_connect() {
        return "the upstream could not be reached: connection failed".to_owned();
    }
    let mut cause: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(c) = cause {
        if let Some(h) = c.downcast_ref::<hyper::Error>()
            && (h.is_incomplete_message() || h.is_closed() || h.is_canceled())
        {
            return "the upstream closed the connection without answering".to_owned();
        }
        cause = c.source();
    }
    format!("the upstream request failed: {}", transport_reason(e))
}

/// Awaits an upstream transfer within the configured timeout; a failure becomes the
/// client-shaped error `doing: reason` (a timeout, the timeout error).
async fn within_timeout<T>(
    gateway: &Gateway,
    api: Api,
    doing: &str,
    transfer: impl std::future::Future<Output = reqwest::Result<T>>,
) -> Result<T, ApiError> {
    match tokio::time::timeout(gateway.config.upstream_timeout, transfer).await {
        Err(_) => Err(timeout(api)),
        Ok(Err(e)) if e.is_timeout() => Err(timeout(api)),
        Ok(Err(e)) => Err(ApiError::new(
            api,
            Kind::Upstream,
            format!("{doing}: {}", transport_reason(&e)),
        )),
        Ok(Ok(value)) => Ok(value),
    }
}

/// The upstream-timeout error.
pub(crate) fn timeout(api: Api) -> ApiError {
    ApiError::new(
        api,
        Kind::Timeout,
        "the upstream did not answer within the configured timeout (limits.upstream_timeout_secs)",
    )
}

/// A transport error without the URL's query or anything from the request.
pub(crate) fn transport_reason(e: &reqwest::Error) -> &'static str {
    if e.is_connect() {
        "connection failed"
    } else if e.is_timeout() {
        "timed out"
    } else if e.is_body() || e.is_decode() {
        "the response body was cut off"
    } else {
        "request failed"
    }
}

/// Reads a whole upstream body within the timeout.
pub(crate) async fn read_body(
    gateway: &Gateway,
    api: Api,
    response: reqwest::Response,
) -> Result<bytes::Bytes, ApiError> {
    within_timeout(
        gateway,
        api,
        "reading the upstream reply failed",
        response.bytes(),
    )
    .await
}

/// An upstream error status answered to the client: the upstream's own JSON error (same
/// API, so same shape) with its status and `Retry-After`; a body that is not JSON is
/// wrapped in the client's error shape.
pub(crate) async fn error_response(
    gateway: &Gateway,
    api: Api,
    response: reqwest::Response,
) -> Response {
    let status =
        StatusCode::from_u16(response.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let retry_after = response.headers().get("retry-after").cloned();
    let kept = reply_headers(&response);
    let body = read_body(gateway, api, response).await.unwrap_or_default();
    let mut out = match serde_json::from_slice::<Value>(&body) {
        Ok(value) if api.relay().is_error_body(&value) => json_response(status, &value),
        _ => {
            let kind = if status.is_server_error() {
                Kind::Upstream
            } else {
                Kind::InvalidRequest
            };
            let message = format!("the upstream answered {}", status_text(status.as_u16()));
            json_response(status, &error_body(api, kind, &message))
        }
    };
    if let Some(value) = retry_after {
        out.headers_mut().insert(header::RETRY_AFTER, value);
    }
    with_reply_headers(out, kept)
}

/// An HTTP status as a message says it: `429 Too Many Requests`, or the number alone for
/// one without a standard reason (`529`, Anthropic's "overloaded").
pub(crate) fn status_text(code: u16) -> String {
    match StatusCode::from_u16(code)
        .ok()
        .and_then(|s| s.canonical_reason())
    {
        Some(reason) => format!("{code} {reason}"),
        None => code.to_string(),
    }
}

/// Passes a response through: status, the headers that describe the body, and the body
/// streamed as it arrives.
pub(crate) fn passthrough_response(response: reqwest::Response) -> Response {
    let status =
        StatusCode::from_u16(response.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let mut headers = HeaderMap::new();
    for name in KEPT_RESPONSE {
        if let Some(value) = response.headers().get(name) {
            headers.insert(HeaderName::from_static(name), value.clone());
        }
    }
    let mut out = Response::new(Body::from_stream(response.bytes_stream()));
    *out.status_mut() = status;
    *out.headers_mut() = headers;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_is_said_with_its_reason_or_by_its_number() {
        assert_eq!(status_text(429), "429 Too Many Requests");
        // Anthropic's "overloaded" has no standard reason (it read `<unknown status code>`).
        assert_eq!(status_text(529), "529");
    }
}
