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
//! connection). The SSE lines are cut by `chef_anthropic::SseDecoder`, which is not
//! Anthropic-specific.

use std::{
    collections::{BTreeMap, HashMap},
    sync::Arc,
    time::{Duration, Instant},
};

use axum::{
    body::Body,
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::Response,
};
use bytes::Bytes;
use chef_anthropic::{Assembler, SseDecoder, SseEvent};
use chef_ir::WireNames;
use futures::StreamExt as _;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use crate::{
    Clock, Gateway,
    api::{Api, ApiError, Kind},
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
    let client_usage = api != Api::Chat
        || prepared
            .extras
            .get("stream_options")
            .and_then(|o| o.get("include_usage"))
            .and_then(Value::as_bool)
            == Some(true);
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
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let waited = t0.elapsed();
    let echo = prepared.echo.take();
    tokio::spawn(async move {
        let mut pump = Pump {
            gateway: Arc::clone(&gateway),
            headers,
            tx,
            writer: Writer::new(api, client_usage, echo),
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
    Ok(response)
}

struct Pump {
    gateway: Arc<Gateway>,
    headers: HeaderMap,
    tx: mpsc::Sender<Bytes>,
    writer: Writer,
    /// Time spent waiting on the upstream or the client.
    waited: Duration,
}

/// Why a stream stopped early.
enum Stop {
    /// The client went away.
    Gone,
    /// An error to report to the client in the stream.
    Error(ApiError),
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
                self.writer.error(&e);
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
                        let status = response.status();
                        let body = upstream::read_body(&self.gateway, api, response)
                            .await
                            .unwrap_or_default();
                        let message = serde_json::from_slice::<Value>(&body)
                            .ok()
                            .and_then(|v| {
                                v.pointer("/error/message")
                                    .and_then(Value::as_str)
                                    .map(str::to_owned)
                            })
                            .unwrap_or_else(|| format!("the upstream answered {status}"));
                        return Err(Stop::Error(ApiError::new(api, Kind::Upstream, message)));
                    }
                    (response, names)
                }
            };
            let t0 = Instant::now();
            let mut raw = self.read_round(api, response).await?;
            self.gateway.metrics.round(t0.elapsed());
            let message = parse_reply(api, &raw, &names)?;
            reply::accumulate_usage(&mut usage, &raw);
            let decisions =
                decide_round(&self.gateway, &mut prepared.chef, &message, round == max).await;
            if !all_internal(&decisions) {
                reply::rewrite(api, &mut raw, &decisions, usage.as_ref());
                self.writer.finish(&raw, usage.as_ref());
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
        let mut decoder = SseDecoder::new();
        let mut reader = Reader::new(api);
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
            let events = decoder.push(&chunk).map_err(|e| bad_stream(api, &e))?;
            for event in events {
                reader.event(&event, &mut self.writer)?;
            }
            self.flush().await?;
        }
        if let Some(event) = decoder.finish().map_err(|e| bad_stream(api, &e))? {
            reader.event(&event, &mut self.writer)?;
        }
        self.flush().await?;
        reader.finish()
    }

    /// Sends what the writer holds; `Gone` when the client closed the stream.
    async fn flush(&mut self) -> Result<(), Stop> {
        let out = std::mem::take(&mut self.writer.out);
        if out.is_empty() {
            return Ok(());
        }
        let t0 = Instant::now();
        let sent = self.tx.send(Bytes::from(out)).await;
        self.waited += t0.elapsed();
        sent.map_err(|_| Stop::Gone)
    }
}

fn bad_stream(api: Api, e: &dyn std::fmt::Display) -> Stop {
    Stop::Error(ApiError::new(
        api,
        Kind::Upstream,
        format!("the upstream stream is malformed: {e}"),
    ))
}

fn truncated(api: Api) -> Stop {
    Stop::Error(ApiError::new(
        api,
        Kind::Upstream,
        "the upstream stream ended before the reply was complete",
    ))
}

/// The members of the array `raw[key]` whose `type` is `kind` (a buffered reply's tool
/// calls: Messages `content` blocks of type `tool_use`, Responses `output` items of type
/// `function_call`), in order.
fn typed(raw: &Value, key: &str, kind: &str) -> Vec<Value> {
    raw.get(key)
        .and_then(Value::as_array)
        .map(|members| {
            members
                .iter()
                .filter(|m| m.get("type").and_then(Value::as_str) == Some(kind))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

fn event_json(api: Api, event: &SseEvent) -> Result<Value, Stop> {
    serde_json::from_str(&event.data).map_err(|e| bad_stream(api, &e))
}

fn upstream_error(api: Api, value: &Value) -> Stop {
    let message = value
        .pointer("/error/message")
        .or_else(|| value.pointer("/response/error/message"))
        .or_else(|| value.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("the upstream reported an error in the stream");
    Stop::Error(ApiError::new(api, Kind::Upstream, message))
}

// ---- reading one upstream round -------------------------------------------------------

enum Reader {
    Chat(ChatReader),
    Messages(MessagesReader),
    Responses(ResponsesReader),
}

impl Reader {
    fn new(api: Api) -> Self {
        match api {
            Api::Chat => Self::Chat(ChatReader::default()),
            Api::Messages => Self::Messages(MessagesReader::default()),
            Api::Responses => Self::Responses(ResponsesReader::default()),
        }
    }

    fn event(&mut self, event: &SseEvent, writer: &mut Writer) -> Result<(), Stop> {
        match self {
            Self::Chat(r) => r.event(event, writer),
            Self::Messages(r) => r.event(event, writer),
            Self::Responses(r) => r.event(event, writer),
        }
    }

    fn finish(self) -> Result<Value, Stop> {
        match self {
            Self::Chat(r) => r.finish(),
            Self::Messages(r) => r.finish(),
            Self::Responses(r) => r.finish(),
        }
    }
}

#[derive(Default)]
struct ChatCall {
    id: String,
    name: String,
    arguments: String,
}

/// Chat Completions chunks, accumulated into a `chat.completion`.
#[derive(Default)]
struct ChatReader {
    head: Option<Map<String, Value>>,
    content: Option<String>,
    refusal: Option<String>,
    calls: BTreeMap<u64, ChatCall>,
    finish_reason: Option<Value>,
    usage: Option<Value>,
    done: bool,
}

impl ChatReader {
    fn event(&mut self, event: &SseEvent, writer: &mut Writer) -> Result<(), Stop> {
        if event.data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk = event_json(Api::Chat, event)?;
        if chunk.get("error").is_some() {
            return Err(upstream_error(Api::Chat, &chunk));
        }
        if self.head.is_none() {
            let mut head = Map::new();
            for key in [
                "id",
                "created",
                "model",
                "system_fingerprint",
                "service_tier",
            ] {
                if let Some(v) = chunk.get(key) {
                    head.insert(key.to_owned(), v.clone());
                }
            }
            writer.chat_head(&head);
            self.head = Some(head);
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(usage.clone());
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(());
        };
        if let Some(reason) = choice.get("finish_reason").filter(|r| !r.is_null()) {
            self.finish_reason = Some(reason.clone());
        }
        let Some(delta) = choice.get("delta") else {
            return Ok(());
        };
        let mut passed = Map::new();
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            self.content.get_or_insert_with(String::new).push_str(text);
            if !text.is_empty() {
                passed.insert("content".to_owned(), Value::from(text));
            }
        }
        if let Some(text) = delta.get("refusal").and_then(Value::as_str) {
            self.refusal.get_or_insert_with(String::new).push_str(text);
            passed.insert("refusal".to_owned(), Value::from(text));
        }
        if !passed.is_empty() {
            writer.chat_delta(passed);
        }
        if let Some(Value::Array(calls)) = delta.get("tool_calls") {
            for call in calls {
                let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
                let entry = self.calls.entry(index).or_default();
                if let Some(id) = call.get("id").and_then(Value::as_str) {
                    entry.id.push_str(id);
                }
                if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
                    entry.name.push_str(name);
                }
                if let Some(args) = call.pointer("/function/arguments").and_then(Value::as_str) {
                    entry.arguments.push_str(args);
                }
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<Value, Stop> {
        let Some(mut raw) = self
            .head
            .filter(|_| self.done || self.finish_reason.is_some())
        else {
            return Err(truncated(Api::Chat));
        };
        raw.insert("object".to_owned(), Value::from("chat.completion"));
        let mut message = Map::new();
        message.insert("role".to_owned(), Value::from("assistant"));
        message.insert(
            "content".to_owned(),
            self.content.map_or(Value::Null, Value::from),
        );
        if let Some(refusal) = self.refusal {
            message.insert("refusal".to_owned(), Value::from(refusal));
        }
        if !self.calls.is_empty() {
            let calls: Vec<Value> = self
                .calls
                .into_values()
                .map(|c| {
                    json!({"id": c.id, "type": "function",
                           "function": {"name": c.name, "arguments": c.arguments}})
                })
                .collect();
            message.insert("tool_calls".to_owned(), Value::Array(calls));
        }
        raw.insert(
            "choices".to_owned(),
            json!([{"index": 0, "message": message,
                    "finish_reason": self.finish_reason.unwrap_or(Value::Null)}]),
        );
        if let Some(usage) = self.usage {
            raw.insert("usage".to_owned(), usage);
        }
        Ok(Value::Object(raw))
    }
}

/// Messages events: assembled by `chef_anthropic::Assembler`; blocks other than
/// `tool_use` passed through.
#[derive(Default)]
struct MessagesReader {
    assembler: Assembler,
    /// Upstream block index → client block index, for blocks passed through.
    passed: HashMap<u64, u64>,
}

impl MessagesReader {
    fn event(&mut self, event: &SseEvent, writer: &mut Writer) -> Result<(), Stop> {
        let value = event_json(Api::Messages, event)?;
        let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "error" => {
                return Err(upstream_error(Api::Messages, &value));
            }
            "message_start" => {
                if let Some(message) = value.get("message") {
                    writer.messages_start(message);
                }
            }
            "content_block_start" => {
                let index = value.get("index").and_then(Value::as_u64).unwrap_or(0);
                let is_call = value.pointer("/content_block/type").and_then(Value::as_str)
                    == Some("tool_use");
                if !is_call {
                    let client = writer.next_block();
                    self.passed.insert(index, client);
                    writer.messages_block_event(kind, &value, client);
                }
            }
            "content_block_delta" | "content_block_stop" => {
                let index = value.get("index").and_then(Value::as_u64).unwrap_or(0);
                if let Some(client) = self.passed.get(&index) {
                    writer.messages_block_event(kind, &value, *client);
                }
            }
            _ => {}
        }
        self.assembler
            .push(&value)
            .map_err(|e| bad_stream(Api::Messages, &e))
    }

    fn finish(self) -> Result<Value, Stop> {
        if !self.assembler.is_stopped() {
            return Err(truncated(Api::Messages));
        }
        self.assembler
            .to_value()
            .map_err(|e| bad_stream(Api::Messages, &e))
    }
}

/// Responses events: the reply is `response.completed`'s response; items other than
/// function calls are passed through.
#[derive(Default)]
struct ResponsesReader {
    /// Upstream output index → client output index, for items passed through.
    passed: HashMap<u64, u64>,
    completed: Option<Value>,
}

impl ResponsesReader {
    fn event(&mut self, event: &SseEvent, writer: &mut Writer) -> Result<(), Stop> {
        let value = event_json(Api::Responses, event)?;
        let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "error" | "response.failed" => return Err(upstream_error(Api::Responses, &value)),
            "response.created" => {
                if let Some(response) = value.get("response") {
                    writer.responses_start(response);
                }
            }
            "response.completed" | "response.incomplete" => {
                self.completed = value.get("response").cloned();
            }
            _ => {
                let Some(index) = value.get("output_index").and_then(Value::as_u64) else {
                    return Ok(());
                };
                if kind == "response.output_item.added" {
                    let is_call = value.pointer("/item/type").and_then(Value::as_str)
                        == Some("function_call");
                    if !is_call {
                        let client = writer.next_block();
                        self.passed.insert(index, client);
                    }
                }
                if let Some(client) = self.passed.get(&index) {
                    writer.responses_item_event(&value, *client);
                }
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<Value, Stop> {
        self.completed.ok_or_else(|| truncated(Api::Responses))
    }
}

// ---- writing the client's stream ------------------------------------------------------

/// The client's SSE stream, built across rounds.
struct Writer {
    api: Api,
    /// Bytes not yet sent.
    out: Vec<u8>,
    /// Chat: whether the client asked for the usage chunk.
    client_usage: bool,
    /// Chat: `id`, `created`, `model`… of the first round, on every chunk.
    chat_head: Option<Map<String, Value>>,
    /// Chat: whether the role delta went out.
    chat_role_sent: bool,
    /// Messages and Responses: whether the opening event went out.
    started: bool,
    /// The next client block (Messages) or output (Responses) index.
    next_index: u64,
    /// Responses: the next sequence number.
    sequence: u64,
    /// Responses: the first round's response object (id, created_at, model…).
    response_head: Option<Value>,
    /// Responses: the items passed through, as their `output_item.done` gave them.
    items: Vec<Value>,
    /// Responses: the client's own `tools` and `instructions`, for every event that
    /// carries the response object.
    echo: Option<reply::Echo>,
}

impl Writer {
    fn new(api: Api, client_usage: bool, echo: Option<reply::Echo>) -> Self {
        Self {
            api,
            out: Vec::new(),
            client_usage,
            chat_head: None,
            chat_role_sent: false,
            started: false,
            next_index: 0,
            sequence: 0,
            response_head: None,
            items: Vec::new(),
            echo,
        }
    }

    fn data(&mut self, value: &impl serde::Serialize) {
        self.out.extend_from_slice(b"data: ");
        self.out
            .extend_from_slice(&serde_json::to_vec(value).unwrap_or_default());
        self.out.extend_from_slice(b"\n\n");
    }

    fn event(&mut self, name: &str, value: &impl serde::Serialize) {
        self.out.extend_from_slice(b"event: ");
        self.out.extend_from_slice(name.as_bytes());
        self.out.push(b'\n');
        self.data(value);
    }

    /// A Responses event that carries the response object (`response.created`, …), with
    /// the client's own `tools` and `instructions` in it.
    fn response_event(&mut self, name: &str, value: &Value) {
        match self.echo.take() {
            Some(echo) => {
                self.event(name, &echo.event(value));
                self.echo = Some(echo);
            }
            None => self.event(name, value),
        }
    }

    fn next_block(&mut self) -> u64 {
        let index = self.next_index;
        self.next_index += 1;
        index
    }

    fn error(&mut self, e: &ApiError) {
        match self.api {
            Api::Chat => self.data(&e.body()),
            Api::Messages => self.event("error", &e.body()),
            Api::Responses => {
                let seq = self.seq();
                let value = json!({"type": "error", "sequence_number": seq,
                    "code": e.kind_code(), "message": e.message, "param": null});
                self.event("error", &value);
            }
        }
    }

    fn finish(&mut self, raw: &Value, usage: Option<&Map<String, Value>>) {
        match self.api {
            Api::Chat => self.chat_finish(raw, usage),
            Api::Messages => self.messages_finish(raw, usage),
            Api::Responses => self.responses_finish(raw, usage),
        }
    }

    // Chat Completions.

    fn chat_head(&mut self, head: &Map<String, Value>) {
        if self.chat_head.is_none() {
            self.chat_head = Some(head.clone());
        }
    }

    fn chat_chunk(&mut self, delta: Map<String, Value>, finish_reason: Value) {
        let mut chunk = self.chat_head.clone().unwrap_or_default();
        chunk.insert("object".to_owned(), Value::from("chat.completion.chunk"));
        chunk.insert(
            "choices".to_owned(),
            json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}]),
        );
        self.data(&Value::Object(chunk));
    }

    fn chat_delta(&mut self, mut delta: Map<String, Value>) {
        if !self.chat_role_sent {
            self.chat_role_sent = true;
            let mut with_role = Map::new();
            with_role.insert("role".to_owned(), Value::from("assistant"));
            with_role.append(&mut delta);
            delta = with_role;
        }
        self.chat_chunk(delta, Value::Null);
    }

    fn chat_finish(&mut self, raw: &Value, usage: Option<&Map<String, Value>>) {
        let calls = raw
            .pointer("/choices/0/message/tool_calls")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for (index, call) in calls.iter().enumerate() {
            let mut call = call.clone();
            if let Some(call) = call.as_object_mut() {
                call.insert("index".to_owned(), Value::from(index));
            }
            let mut delta = Map::new();
            delta.insert("tool_calls".to_owned(), Value::Array(vec![call]));
            self.chat_delta(delta);
        }
        if !self.chat_role_sent {
            self.chat_delta(Map::new());
        }
        let reason = raw
            .pointer("/choices/0/finish_reason")
            .cloned()
            .unwrap_or_else(|| Value::from("stop"));
        self.chat_chunk(Map::new(), reason);
        if self.client_usage {
            let mut chunk = self.chat_head.clone().unwrap_or_default();
            chunk.insert("object".to_owned(), Value::from("chat.completion.chunk"));
            chunk.insert("choices".to_owned(), json!([]));
            chunk.insert(
                "usage".to_owned(),
                usage.cloned().map_or(Value::Null, Value::Object),
            );
            self.data(&Value::Object(chunk));
        }
        self.out.extend_from_slice(b"data: [DONE]\n\n");
    }

    // Anthropic Messages.

    fn messages_start(&mut self, message: &Value) {
        if self.started {
            return;
        }
        self.started = true;
        let mut message = message.clone();
        if let Some(m) = message.as_object_mut() {
            m.insert("content".to_owned(), json!([]));
        }
        self.event(
            "message_start",
            &json!({"type": "message_start", "message": message}),
        );
    }

    fn messages_block_event(&mut self, kind: &str, value: &Value, client_index: u64) {
        let mut value = value.clone();
        if let Some(v) = value.as_object_mut() {
            v.insert("index".to_owned(), Value::from(client_index));
        }
        self.event(kind, &value);
    }

    fn messages_finish(&mut self, raw: &Value, usage: Option<&Map<String, Value>>) {
        let calls = typed(raw, "content", "tool_use");
        for call in calls {
            let index = self.next_block();
            let input = call.get("input").cloned().unwrap_or_else(|| json!({}));
            let mut start = call.clone();
            if let Some(s) = start.as_object_mut() {
                s.insert("input".to_owned(), json!({}));
            }
            self.event(
                "content_block_start",
                &json!({"type": "content_block_start", "index": index, "content_block": start}),
            );
            let partial = serde_json::to_string(&input).unwrap_or_else(|_| "{}".to_owned());
            self.event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": partial}}),
            );
            self.event(
                "content_block_stop",
                &json!({"type": "content_block_stop", "index": index}),
            );
        }
        let delta = json!({
            "stop_reason": raw.get("stop_reason").cloned().unwrap_or(Value::Null),
            "stop_sequence": raw.get("stop_sequence").cloned().unwrap_or(Value::Null),
        });
        let usage = usage.cloned().map_or_else(|| json!({}), Value::Object);
        self.event(
            "message_delta",
            &json!({"type": "message_delta", "delta": delta, "usage": usage}),
        );
        self.event("message_stop", &json!({"type": "message_stop"}));
    }

    // OpenAI Responses.

    fn seq(&mut self) -> u64 {
        let n = self.sequence;
        self.sequence += 1;
        n
    }

    fn responses_start(&mut self, response: &Value) {
        if self.started {
            return;
        }
        self.started = true;
        self.response_head = Some(response.clone());
        for kind in ["response.created", "response.in_progress"] {
            let seq = self.seq();
            let mut response = response.clone();
            if let Some(r) = response.as_object_mut() {
                r.insert("status".to_owned(), Value::from("in_progress"));
                r.insert("output".to_owned(), json!([]));
            }
            self.response_event(
                kind,
                &json!({"type": kind, "sequence_number": seq, "response": response}),
            );
        }
    }

    fn responses_item_event(&mut self, value: &Value, client_index: u64) {
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let seq = self.seq();
        let mut value = value.clone();
        if let Some(v) = value.as_object_mut() {
            v.insert("output_index".to_owned(), Value::from(client_index));
            v.insert("sequence_number".to_owned(), Value::from(seq));
        }
        if kind == "response.output_item.done"
            && let Some(item) = value.get("item")
        {
            self.items.push(item.clone());
        }
        self.event(&kind, &value);
    }

    fn responses_finish(&mut self, raw: &Value, usage: Option<&Map<String, Value>>) {
        let calls = typed(raw, "output", "function_call");
        for call in calls {
            let index = self.next_block();
            let item_id = call.get("id").cloned().unwrap_or(Value::Null);
            let arguments = call.get("arguments").cloned().unwrap_or_else(|| json!(""));
            let mut added = call.clone();
            if let Some(a) = added.as_object_mut() {
                a.insert("arguments".to_owned(), json!(""));
                a.insert("status".to_owned(), json!("in_progress"));
            }
            let mut done = call.clone();
            if let Some(d) = done.as_object_mut() {
                d.insert("status".to_owned(), json!("completed"));
            }
            let seq = self.seq();
            self.event(
                "response.output_item.added",
                &json!({"type": "response.output_item.added", "sequence_number": seq,
                        "output_index": index, "item": added}),
            );
            let seq = self.seq();
            self.event(
                "response.function_call_arguments.delta",
                &json!({"type": "response.function_call_arguments.delta", "sequence_number": seq,
                        "item_id": item_id, "output_index": index, "delta": arguments}),
            );
            let seq = self.seq();
            self.event(
                "response.function_call_arguments.done",
                &json!({"type": "response.function_call_arguments.done", "sequence_number": seq,
                        "item_id": item_id, "output_index": index, "arguments": arguments}),
            );
            let seq = self.seq();
            self.event(
                "response.output_item.done",
                &json!({"type": "response.output_item.done", "sequence_number": seq,
                        "output_index": index, "item": done}),
            );
            self.items.push(done);
        }
        let mut response = raw.clone();
        if let Some(r) = response.as_object_mut() {
            if let Some(head) = &self.response_head {
                for key in ["id", "created_at"] {
                    if let Some(v) = head.get(key) {
                        r.insert(key.to_owned(), v.clone());
                    }
                }
            }
            r.insert("output".to_owned(), Value::Array(self.items.clone()));
            if let Some(usage) = usage {
                r.insert("usage".to_owned(), Value::Object(usage.clone()));
            }
        }
        let kind = if raw.get("status").and_then(Value::as_str) == Some("incomplete") {
            "response.incomplete"
        } else {
            "response.completed"
        };
        let seq = self.seq();
        self.response_event(
            kind,
            &json!({"type": kind, "sequence_number": seq, "response": response}),
        );
    }
}
