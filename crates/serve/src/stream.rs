//! Streaming (SSE) requests.
//!
//! Each upstream round is read as it arrives: text (and thinking, and any other block that
//! is not a function call) is passed to the client at once, renumbered so the client sees
//! one reply; function-call deltas are held. When a round ends, its reply is assembled into
//! the same JSON a whole reply would be, parsed and routed exactly as a non-streaming one;
//! the final round's calls are then emitted whole, under their real names, in the
//! client's event format, followed by the stop reason and the usage of every round.
//!
//! A client that goes away ends the task, which drops the upstream response (closing that
//! connection). The SSE lines are cut by `chef_ir::sse::SseDecoder`; what the events mean,
//! and the client's events, are the provider crate's [`RelayStream`]: this module reads
//! and writes no wire JSON of its own.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use axum::{
    body::Body,
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::Response,
};
use bytes::Bytes;
use chef_ir::{
    WireNames,
    relay::{RelayError, RelayStream},
    sse::SseDecoder,
};
use futures::StreamExt as _;
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use crate::{
    Clock, Gateway,
    api::{Api, ApiError, Kind, relay_error},
    decide_round, reply, rounds_exhausted,
    session::{Prepared, all_internal, compile_round, internal_results, parse_reply},
    upstream,
};

/// Starts a streaming request: the first upstream round is sent before the client gets a
/// status, so an upstream refusal (401, 429, 5xx) reaches the client as that status.
pub(crate) async fn run(
    gateway: Arc<Gateway>,
    mut prepared: Prepared,
    headers: HeaderMap,
    clock: &mut Clock,
) -> Result<Response, ApiError> {
    let api = prepared.api;
    // From the request's arrival: reading and preparing it count too.
    let started = clock.started;
    let (body, names) = compile_round(&mut prepared, true)?;
    let t0 = Instant::now();
    let first = upstream::post(&gateway, api, &headers, body).await;
    clock.upstream += t0.elapsed();
    let first = first?;
    if !first.status().is_success() {
        let out = upstream::error_response(&gateway, api, first).await;
        clock.upstream += t0.elapsed();
        gateway.metrics.round(t0.elapsed());
        return Ok(out);
    }
    // Told before the client has a status, so it is a 502 (a later round's, once the
    // stream has begun, is an error event).
    if whole_json(&first) {
        gateway.metrics.round(t0.elapsed());
        return Err(whole_json_error(api));
    }
    // The headers go out now: the first round's request ids and rate limits.
    let kept = upstream::reply_headers(&first);
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let waited = t0.elapsed();
    let client = api
        .relay()
        .stream(&prepared.extras, std::mem::take(&mut prepared.echo));
    tokio::spawn(async move {
        let mut pump = Pump {
            gateway: Arc::clone(&gateway),
            headers,
            tx,
            client,
            waited,
        };
        let mut prepared = prepared;
        let ok = pump.run(&mut prepared, first, names).await;
        let total = started.elapsed();
        let (before, after) = prepared.tool_chars();
        pump.gateway.metrics.tool_block(before, after);
        if let Some((before, after)) = prepared.tool_tokens() {
            pump.gateway.metrics.tool_tokens(before, after);
        }
        pump.gateway.release(prepared);
        pump.gateway
            .metrics
            .overhead(total.saturating_sub(pump.waited));
        if !ok {
            pump.gateway.metrics.error(api);
        }
        tracing::info!(
            api = api.name(),
            stream = true,
            ok,
            ms = total.as_millis() as u64,
            "request"
        );
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|bytes| (Ok::<Bytes, std::convert::Infallible>(bytes), rx))
    });
    let mut response = Response::new(Body::from_stream(stream));
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Ok(upstream::with_reply_headers(response, kept))
}

/// Whether an upstream answered a streamed request with whole JSON (`application/json`).
fn whole_json(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("application/json"))
}

/// The error for [`whole_json`]: said as such, rather than as a stream that ended early.
fn whole_json_error(api: Api) -> ApiError {
    ApiError::new(
        api,
        Kind::Upstream,
        "the upstream answered the streamed request with a whole JSON reply, not an event \
         stream",
    )
}

struct Pump {
    gateway: Arc<Gateway>,
    headers: HeaderMap,
    tx: mpsc::Sender<Bytes>,
    /// The client's stream, written by the provider crate.
    client: Box<dyn RelayStream>,
    /// Time spent waiting on the upstream or the client.
    waited: Duration,
}

/// Why a stream stopped early.
enum Stop {
    /// The client went away.
    Gone,
    /// An error to report to the client in the stream.
    Error(ApiError),
    /// A later round's upstream error, in the API's shape, to pass on in the stream.
    Upstream {
        /// The upstream's error body.
        body: Value,
        /// What follows its message (status, `Retry-After`).
        note: String,
    },
}

impl From<ApiError> for Stop {
    fn from(e: ApiError) -> Self {
        Self::Error(e)
    }
}

impl Pump {
    /// Runs every round; true when the stream ended normally.
    async fn run(
        &mut self,
        prepared: &mut Prepared,
        first: reqwest::Response,
        names: WireNames,
    ) -> bool {
        let api = prepared.api;
        match self.rounds(prepared, first, names).await {
            Ok(()) => true,
            Err(Stop::Gone) => {
                tracing::info!(
                    api = api.name(),
                    "client went away; upstream request dropped"
                );
                false
            }
            Err(Stop::Error(e)) => {
                tracing::warn!(api = api.name(), error = %e.message, "stream failed");
                self.client.fail(e.kind, &e.message);
                let _ = self.flush().await;
                false
            }
            Err(Stop::Upstream { body, note }) => {
                tracing::warn!(api = api.name(), %note, "stream failed upstream");
                self.client.fail_upstream(&body, &note);
                let _ = self.flush().await;
                false
            }
        }
    }

    async fn rounds(
        &mut self,
        prepared: &mut Prepared,
        first: reqwest::Response,
        first_names: WireNames,
    ) -> Result<(), Stop> {
        let api = prepared.api;
        let max = self.gateway.config.max_internal_rounds;
        let mut usage: Option<Map<String, Value>> = None;
        let mut next = Some((first, first_names));
        for round in 1..=max {
            let (response, names) = match next.take() {
                Some(first) => first,
                None => {
                    let (body, names) = compile_round(prepared, true)?;
                    let t0 = Instant::now();
                    // A client that goes away while this round's request waits for the
                    // upstream's answer ends the task at once, which drops the request.
                    let response = tokio::select! {
                        response = upstream::post(&self.gateway, api, &self.headers, body) => response,
                        () = self.tx.closed() => return Err(Stop::Gone),
                    };
                    self.waited += t0.elapsed();
                    let response = response?;
                    if !response.status().is_success() {
                        return Err(later_status(&self.gateway, api, round, response).await);
                    }
                    (response, names)
                }
            };
            let t0 = Instant::now();
            let mut raw = self.read_round(api, response).await?;
            self.gateway.metrics.round(t0.elapsed());
            let message = parse_reply(api, &raw, &names)?;
            reply::accumulate_usage(api, &mut usage, &raw);
            let cut = api.relay().cut_short(&raw);
            let decisions =
                decide_round(&self.gateway, prepared, &message, round == max, cut).await;
            if cut || !all_internal(&decisions) {
                reply::rewrite(api, &mut raw, &decisions, usage.as_ref());
                self.client.finish(&raw, usage.as_ref());
                return self.flush().await;
            }
            prepared.chef.push(message);
            prepared.chef.push(internal_results(&decisions));
        }
        Err(Stop::Error(rounds_exhausted(api, max)))
    }

    /// Reads one upstream stream to its end, passing text through; returns the reply
    /// assembled as a whole one.
    async fn read_round(&mut self, api: Api, response: reqwest::Response) -> Result<Value, Stop> {
        let idle = self.gateway.config.upstream_timeout;
        // An upstream that ignores `stream` and answers whole JSON: said as such, rather
        // than as a stream that ended early.
        if whole_json(&response) {
            return Err(Stop::Error(whole_json_error(api)));
        }
        let mut decoder = SseDecoder::new();
        let mut chunks = response.bytes_stream();
        loop {
            let t0 = Instant::now();
            // A client that goes away while the upstream is quiet ends the round at once.
            let next = tokio::select! {
                next = tokio::time::timeout(idle, chunks.next()) => next,
                () = self.tx.closed() => return Err(Stop::Gone),
            };
            self.waited += t0.elapsed();
            let chunk = match next {
                Err(_) => return Err(Stop::Error(upstream::timeout(api))),
                Ok(None) => break,
                Ok(Some(Err(e))) => {
                    return Err(Stop::Error(ApiError::new(
                        api,
                        Kind::Upstream,
                        format!(
                            "the upstream stream failed: {}",
                            upstream::transport_reason(&e)
                        ),
                    )));
                }
                Ok(Some(Ok(chunk))) => chunk,
            };
            let events = decoder.push(&chunk).map_err(|e| bad_stream(api, e))?;
            for event in events {
                self.client.event(&event).map_err(|e| relay_stop(api, e))?;
            }
            self.flush().await?;
        }
        if let Some(event) = decoder.finish().map_err(|e| bad_stream(api, e))? {
            self.client.event(&event).map_err(|e| relay_stop(api, e))?;
        }
        self.flush().await?;
        self.client.end_round().map_err(|e| relay_stop(api, e))
    }

    /// Sends what the client's stream holds; `Gone` when the client closed the stream.
    async fn flush(&mut self) -> Result<(), Stop> {
        let out = self.client.take();
        if out.is_empty() {
            return Ok(());
        }
        let t0 = Instant::now();
        let sent = self.tx.send(Bytes::from(out)).await;
        self.waited += t0.elapsed();
        sent.map_err(|_| Stop::Gone)
    }
}

/// The stop for a later round answered with an error status, after the client has its
/// 200: the upstream's own error (its type and code kept) as the stream's error event,
/// its message followed by the status and `Retry-After`, which no header can carry now.
async fn later_status(
    gateway: &Gateway,
    api: Api,
    round: u32,
    response: reqwest::Response,
) -> Stop {
    let status = upstream::status_text(response.status().as_u16());
    let retry_after = response
        .headers()
        .get(header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.chars().take(64).collect::<String>());
    let body = upstream::read_body(gateway, api, response)
        .await
        .unwrap_or_default();
    let note = match retry_after {
        Some(after) => {
            format!("(the upstream answered {status} to round {round}; Retry-After: {after})")
        }
        None => format!("(the upstream answered {status} to round {round})"),
    };
    match serde_json::from_slice::<Value>(&body) {
        Ok(value) if api.relay().is_error_body(&value) => Stop::Upstream { body: value, note },
        _ => Stop::Error(ApiError::new(
            api,
            Kind::Upstream,
            format!("the upstream failed {note}"),
        )),
    }
}

/// The stop for an error the provider crate reports: an upstream error event that carried
/// its error body is passed on as it came (its type and code kept); anything else is the
/// gateway's own error.
fn relay_stop(api: Api, e: RelayError) -> Stop {
    match e {
        RelayError::Upstream {
            error: Some(body), ..
        } if api.relay().is_error_body(&body) => Stop::Upstream {
            body,
            note: String::new(),
        },
        other => Stop::Error(relay_error(api, other)),
    }
}

fn bad_stream(api: Api, e: chef_ir::sse::SseError) -> Stop {
    Stop::Error(relay_error(api, RelayError::malformed(e)))
}
