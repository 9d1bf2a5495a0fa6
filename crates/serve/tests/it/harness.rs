//! A scripted upstream model server and a gateway in front of it, both on 127.0.0.1:0.

use std::{
    collections::VecDeque,
    net::SocketAddr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use axum::{
    Router,
    body::{Body, Bytes},
    extract::{Request, State},
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
};
use chef::{Chef, ChefConfig};
use chef_compress::Level;
use chef_ir::{ToolCall, ToolDefinition};
use serde_json::{Value, json};

/// One scripted reply.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A JSON body with status 200.
    Json(Value),
    /// A status, extra headers and a raw body.
    Status(u16, Vec<(&'static str, &'static str)>, String),
    /// An SSE body sent in these pieces (each piece as one chunk, 2 ms apart).
    Sse(Vec<String>),
    /// An SSE body sent in these pieces with no pause between them.
    SseNow(Vec<String>),
    /// Never answers.
    Hang,
    /// Never answers; the flag is set when the gateway gives up on the request (drops
    /// the connection).
    HangFlagged(Arc<AtomicBool>),
    /// These SSE pieces, then silence; the flag is set when the response body is dropped
    /// (the gateway closed the connection).
    SseThenStall(Vec<String>, Arc<AtomicBool>),
}

/// Sets its flag when dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// What the upstream received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Seen {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

#[derive(Default)]
pub struct Script {
    replies: Mutex<VecDeque<Reply>>,
    seen: Mutex<Vec<Seen>>,
    /// The reply once the queue is empty (load tests), instead of a 500.
    fallback: Mutex<Option<Reply>>,
    /// Whether to record what arrives (off for load tests).
    quiet: AtomicBool,
}

impl Script {
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// Answers every request with `reply` once the queue is empty, recording nothing.
    pub fn always(&self, reply: Reply) {
        *self.fallback.lock().unwrap() = Some(reply);
        self.quiet.store(true, Ordering::SeqCst);
    }
}

async fn scripted(State(script): State<Arc<Script>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    if !script.quiet.load(Ordering::SeqCst) {
        script.seen.lock().unwrap().push(Seen {
            method: parts.method.to_string(),
            path: parts.uri.to_string(),
            headers: parts.headers.clone(),
            body,
        });
    }
    let queued = script.replies.lock().unwrap().pop_front();
    let reply = queued.or_else(|| script.fallback.lock().unwrap().clone());
    match reply {
        None => (StatusCode::INTERNAL_SERVER_ERROR, "script exhausted").into_response(),
        Some(Reply::Json(value)) => {
            let mut r = serde_json::to_vec(&value).unwrap().into_response();
            r.headers_mut()
                .insert(header::CONTENT_TYPE, "application/json".parse().unwrap());
            r
        }
        Some(Reply::Status(status, headers, body)) => {
            let mut r = (StatusCode::from_u16(status).unwrap(), body).into_response();
            for (k, v) in headers {
                r.headers_mut().insert(k, v.parse().unwrap());
            }
            r
        }
        Some(Reply::Sse(pieces)) => {
            let stream = futures::stream::iter(pieces).then(|piece| async move {
                tokio::time::sleep(Duration::from_millis(2)).await;
                Ok::<_, std::convert::Infallible>(Bytes::from(piece))
            });
            let mut r = Response::new(Body::from_stream(stream));
            r.headers_mut()
                .insert(header::CONTENT_TYPE, "text/event-stream".parse().unwrap());
            r
        }
        Some(Reply::SseNow(pieces)) => {
            let stream = futures::stream::iter(pieces)
                .map(|piece| Ok::<_, std::convert::Infallible>(Bytes::from(piece)));
            let mut r = Response::new(Body::from_stream(stream));
            r.headers_mut()
                .insert(header::CONTENT_TYPE, "text/event-stream".parse().unwrap());
            r
        }
        Some(Reply::SseThenStall(pieces, flag)) => {
            let state = (VecDeque::from(pieces), DropFlag(flag));
            let stream = futures::stream::unfold(state, |(mut pieces, guard)| async move {
                match pieces.pop_front() {
                    Some(piece) => Some((
                        Ok::<_, std::convert::Infallible>(Bytes::from(piece)),
                        (pieces, guard),
                    )),
                    None => {
                        std::future::pending::<()>().await;
                        None
                    }
                }
            });
            let mut r = Response::new(Body::from_stream(stream));
            r.headers_mut()
                .insert(header::CONTENT_TYPE, "text/event-stream".parse().unwrap());
            r
        }
        Some(Reply::Hang) => {
            tokio::time::sleep(Duration::from_secs(60)).await;
            StatusCode::OK.into_response()
        }
        Some(Reply::HangFlagged(flag)) => {
            let _guard = DropFlag(flag);
            tokio::time::sleep(Duration::from_secs(60)).await;
            StatusCode::OK.into_response()
        }
    }
}

use futures::StreamExt as _;

/// A running upstream and gateway.
pub struct Rig {
    pub script: Arc<Script>,
    pub gateway: SocketAddr,
    pub upstream: SocketAddr,
    pub http: reqwest::Client,
}

impl Rig {
    /// Starts both; `config` is extra gateway TOML (the `[upstream]` table is added).
    pub async fn start(config: &str, replies: Vec<Reply>) -> Self {
        Self::start_with(config, replies, |_| {}).await
    }

    /// [`Rig::start`], with `edit` run on the gateway's config once it is read (what a
    /// config file cannot say: an embedder's memory store).
    pub async fn start_with(
        config: &str,
        replies: Vec<Reply>,
        edit: impl FnOnce(&mut chef_serve::Config),
    ) -> Self {
        let script = Arc::new(Script::default());
        script.replies.lock().unwrap().extend(replies);
        let app = Router::new()
            .fallback(scripted)
            .with_state(Arc::clone(&script));
        let upstream = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let upstream_addr = upstream.local_addr().unwrap();
        tokio::spawn(async move {
            axum::serve(chef_serve::no_delay(upstream), app)
                .await
                .unwrap()
        });

        let text = format!(
            "[upstream]\nopenai = \"http://{upstream_addr}/v1\"\nanthropic = \"http://{upstream_addr}/v1\"\n{config}"
        );
        let mut config = chef_serve::Config::parse(&text).unwrap();
        edit(&mut config);
        let limits = config.connections;
        let gateway = chef_serve::Gateway::new(config).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        // As `chef serve` serves it: the header timeout and the connection cap on.
        tokio::spawn(async move {
            chef_serve::serve_router(
                listener,
                chef_serve::router(gateway),
                limits,
                std::future::pending(),
            )
            .await
            .unwrap()
        });
        Self {
            script,
            gateway: addr,
            upstream: upstream_addr,
            http: reqwest::Client::new(),
        }
    }

    /// Starts both with chef at level 3 and no other configuration.
    pub async fn level3(replies: Vec<Reply>) -> Self {
        Self::start(LEVEL_3, replies).await
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.gateway)
    }

    /// The gateway's `GET /health`: its status and JSON body.
    pub async fn health(&self) -> (u16, Value) {
        let response = self.http.get(self.url("/health")).send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap())
    }

    /// The gateway's `/metrics` text.
    pub async fn metrics(&self) -> String {
        self.http
            .get(self.url("/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }

    /// Posts JSON with the OpenAI credential header and reads the JSON answer.
    pub async fn openai_json(&self, path: &str, body: &Value) -> Value {
        self.openai(path, body).await.json().await.unwrap()
    }

    /// Posts JSON with the OpenAI credential header.
    pub async fn openai(&self, path: &str, body: &Value) -> reqwest::Response {
        self.send(self.http.post(self.url(path)).json(body), "sk-test-secret")
            .await
    }

    /// Posts JSON with the OpenAI credential header carrying `key`.
    pub async fn openai_with_key(&self, path: &str, key: &str, body: &Value) -> reqwest::Response {
        self.send(self.http.post(self.url(path)).json(body), key)
            .await
    }

    /// GETs `path` with the OpenAI credential header carrying `key`.
    pub async fn get_with_key(&self, path: &str, key: &str) -> reqwest::Response {
        self.send(self.http.get(self.url(path)), key).await
    }

    /// Sends `request` with `authorization: Bearer {key}`.
    async fn send(&self, request: reqwest::RequestBuilder, key: &str) -> reqwest::Response {
        request
            .header("authorization", format!("Bearer {key}"))
            .send()
            .await
            .unwrap()
    }

    /// [`Rig::openai`], then the JSON body of its answer, which must be a 200.
    pub async fn openai_ok(&self, path: &str, body: &Value) -> Value {
        ok_json(self.openai(path, body).await).await
    }

    /// [`Rig::anthropic`], then the JSON body of its answer, which must be a 200.
    pub async fn anthropic_ok(&self, body: &Value) -> Value {
        ok_json(self.anthropic(body).await).await
    }

    /// Posts JSON with the Anthropic credential headers.
    pub async fn anthropic(&self, body: &Value) -> reqwest::Response {
        self.http
            .post(self.url("/v1/messages"))
            .header("x-api-key", "sk-ant-test-secret")
            .header("anthropic-version", "2023-06-01")
            .json(body)
            .send()
            .await
            .unwrap()
    }
}

/// The gateway configuration most tests use.
pub const LEVEL_3: &str = "[chef]\nlevel = 3\n";

/// Level 3 with `cancel_order` blocked.
pub const BLOCK_CANCEL: &str = "[chef]\nlevel = 3\nblocked = [\"cancel_order\"]\n";

/// The call a level-3 model writes for `get_order_details` of order 737U2663137.
pub fn order_call() -> ToolCall {
    encoded(
        "get_order_details",
        json!({"trackingNumber": "737U2663137"}),
    )
}

/// The lookup (`q`) a level-3 model writes for the tool behind `good`'s code.
pub fn lookup_for(good: &ToolCall) -> ToolCall {
    ToolCall::new("x", "q", json!({"c": tool_code(good)}))
}

/// One streamed round of a scripted model: its text and the id of the call it makes, and
/// the size of the pieces its SSE body is cut into.
pub type Round<'a> = (&'a str, &'a str, usize);

/// The upstream script of a streamed tool round: the model looks up the tool of
/// [`order_call`] (`lookup`), then calls it (`call`), each round's SSE written by `stream`
/// (the API's) and cut into pieces.
pub fn streamed_lookup_then_call(
    stream: fn(&str, &str, &ToolCall) -> String,
    lookup: Round<'_>,
    call: Round<'_>,
) -> Vec<Reply> {
    let (text, id, n) = call;
    let call = Reply::Sse(pieces(&stream(text, id, &order_call()), n));
    streamed_lookup_then(stream, lookup, call)
}

/// The upstream script of a streamed round that looks up the tool of [`order_call`]
/// (`lookup`), then `then` for the next round.
pub fn streamed_lookup_then(
    stream: fn(&str, &str, &ToolCall) -> String,
    lookup: Round<'_>,
    then: Reply,
) -> Vec<Reply> {
    let (text, id, n) = lookup;
    let first = Reply::Sse(pieces(&stream(text, id, &lookup_for(&order_call())), n));
    vec![first, then]
}

/// [`streamed_lookup_then`] an error status with this `Retry-After` and JSON body: a later
/// round that fails after the client has its 200.
pub fn streamed_lookup_then_status(
    stream: fn(&str, &str, &ToolCall) -> String,
    lookup: Round<'_>,
    (status, retry_after, body): (u16, &'static str, &str),
) -> Vec<Reply> {
    let then = Reply::Status(
        status,
        vec![
            ("retry-after", retry_after),
            ("content-type", "application/json"),
        ],
        body.to_owned(),
    );
    streamed_lookup_then(stream, lookup, then)
}

/// An OpenAI rate-limit error body.
pub const OPENAI_RATE_LIMITED: &str = r#"{"error":{"message":"Rate limit reached","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}"#;

/// A call to `good`'s tool code with an argument the tool does not take.
pub fn bad_call_for(good: &ToolCall) -> ToolCall {
    ToolCall::new("x", "t", json!({"f": tool_code(good), "a": {}}))
}

fn tool_code(call: &ToolCall) -> String {
    call.arguments["f"].as_str().unwrap().to_owned()
}

/// The JSON body of a response that must be a 200.
pub async fn ok_json(response: reqwest::Response) -> Value {
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

/// `body` with `"stream": true`.
pub fn streamed(mut body: Value) -> Value {
    body["stream"] = json!(true);
    body
}

/// The messages of an upstream Chat body.
pub fn messages(body: &Value) -> &Vec<Value> {
    body["messages"].as_array().unwrap()
}

/// The message answering call `id` in an upstream Chat body.
pub fn tool_answer<'a>(body: &'a Value, id: &str) -> &'a Value {
    messages(body)
        .iter()
        .find(|m| m["tool_call_id"] == id)
        .unwrap()
}

/// The tool calls of a Chat reply's first choice.
pub fn chat_calls(body: &Value) -> &Vec<Value> {
    body["choices"][0]["message"]["tool_calls"]
        .as_array()
        .unwrap()
}

/// The 149 real tools of the workspace fixture.
pub fn real_tools() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/real-mcp-tools.json"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let tools: Vec<Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(tools.len(), 149);
    tools
}

pub fn chat_tools() -> Value {
    Value::Array(
        real_tools()
            .into_iter()
            .map(|t| {
                json!({"type": "function", "function": {
                "name": t["name"], "description": t["description"], "parameters": t["input_schema"]}})
            })
            .collect(),
    )
}

pub fn responses_tools() -> Value {
    Value::Array(
        real_tools()
            .into_iter()
            .map(|t| {
                json!({"type": "function", "name": t["name"], "description": t["description"],
                "parameters": t["input_schema"]})
            })
            .collect(),
    )
}

pub fn anthropic_tools() -> Value {
    Value::Array(
        real_tools()
            .into_iter()
            .map(|t| {
                json!({"name": t["name"], "description": t["description"], "input_schema": t["input_schema"]})
            })
            .collect(),
    )
}

pub fn tool_definitions() -> Vec<ToolDefinition> {
    real_tools()
        .into_iter()
        .map(|t| {
            ToolDefinition::new(t["name"].as_str().unwrap(), t["input_schema"].clone())
                .with_description(t["description"].as_str().unwrap())
        })
        .collect()
}

/// The call a level-3 model writes for `name(args)`, from chef itself.
pub fn encoded(name: &str, args: Value) -> ToolCall {
    let mut chef = Chef::new(ChefConfig::default().with_level(Level::Three));
    chef.register_tools(tool_definitions()).unwrap();
    chef.tools().encode_call(name, args).unwrap()
}

/// The names of the tools in an upstream body.
pub fn wire_tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t.pointer("/function/name")
                .or_else(|| t.get("name"))
                .and_then(Value::as_str)
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// Server-sent events: `(event name or "", data)` pairs, as a client reads them.
pub fn sse_events(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut event = String::new();
        let mut data = String::new();
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("event: ") {
                event = v.to_owned();
            } else if let Some(v) = line.strip_prefix("data: ") {
                data = v.to_owned();
            }
        }
        if !data.is_empty() {
            out.push((event, data));
        }
    }
    out
}

/// An SSE body from `(event, data)` pairs (event `""`: none).
pub fn sse(events: &[(&str, Value)]) -> String {
    let mut out = String::new();
    for (event, data) in events {
        if !event.is_empty() {
            out.push_str(&format!("event: {event}\n"));
        }
        out.push_str(&format!("data: {data}\n\n"));
    }
    out
}

/// The last event of an SSE body: its name (empty when unnamed) and its data as JSON.
pub fn last_sse_event(text: &str) -> (String, Value) {
    let (event, data) = sse_events(text).pop().expect("an event");
    (event, serde_json::from_str(&data).expect("JSON data"))
}

/// An SSE body of events named after their `type` (as the Messages and Responses APIs name
/// them).
pub fn typed_sse(events: &[Value]) -> String {
    let named: Vec<(&str, Value)> = events
        .iter()
        .map(|e| (e["type"].as_str().unwrap(), e.clone()))
        .collect();
    sse(&named)
}

/// An SSE body cut into pieces of `n` bytes (to exercise the line decoder).
pub fn pieces(text: &str, n: usize) -> Vec<String> {
    text.as_bytes()
        .chunks(n)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect()
}
