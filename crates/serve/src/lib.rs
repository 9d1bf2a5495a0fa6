//! `chef serve`: a gateway that speaks OpenAI Chat Completions, OpenAI Responses and
//! Anthropic Messages, runs every request through a chef session (pruning, compression,
//! the gate, argument validation) and forwards it to the upstream of the same API.
//!
//! Per request: the client's body is read into the IR by the provider crates (fields chef
//! does not compile are kept and sent on as received), a [`chef::Chef`] session is built
//! from the config and the client's tools, compiled, and sent upstream. Every tool call in
//! the reply is routed: a call of a real, allowed tool goes back to the client under its
//! real name with validated arguments; lookups, argument errors, blocked tools and toolkit
//! loads are answered by the gateway, which asks upstream again (at most
//! `limits.max_internal_rounds` upstream requests per client request). See
//! `docs/GATEWAY.md`.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let config = chef_serve::Config::parse("[chef]\nlevel = 3\n")?;
//! let gateway = chef_serve::Gateway::new(config)?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! // A header timeout, a connection cap and Nagle off; `axum::serve` works too, without
//! // the first two.
//! let limits = chef_serve::Connections::default();
//! chef_serve::serve_router(listener, chef_serve::router(gateway), limits, std::future::pending())
//!     .await?;
//! # Ok(()) }
//! ```

pub use listen::{Connections, HEADER_TIMEOUT, MAX_CONNECTIONS, serve_router};

pub mod api;
pub mod config;
mod listen;
mod metrics;
mod paths;
pub mod reply;
pub mod session;
mod store;
mod stream;
mod upstream;

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use axum::{
    Router,
    body::Body,
    extract::{Path, Request, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
    routing::{get, post},
};
use chef::store::{Namespace, StorageBackend, StoreError, StoreKey};
use futures::StreamExt as _;
use serde_json::{Map, Value, json};

use crate::{
    api::json_response,
    session::{Prepared, all_internal, internal_results, parse_reply, route_all},
};
pub use crate::{
    api::{Api, ApiError, Kind},
    config::{Config, ConfigError, SharedStore, ValueError},
    metrics::Metrics,
    store::{StoreHealth, StoreTimeout},
};

/// The gateway: its config, the upstream HTTP client, and the counters.
pub struct Gateway {
    pub(crate) config: Config,
    pub(crate) client: reqwest::Client,
    pub(crate) metrics: Metrics,
    /// The template pool of the file's `[chef]` settings, then one per policy (templates
    /// are made under one policy's settings).
    pub(crate) pools: Vec<session::Pool>,
    /// The PostgreSQL store of `[memory] url`, once connected.
    shared_store: tokio::sync::OnceCell<Arc<dyn StorageBackend>>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("config", &self.config)
            .field("metrics", &self.metrics)
            .field("pools", &self.pools)
            .field("shared_store", &self.shared_store.initialized())
            .finish_non_exhaustive()
    }
}

/// The `[memory] dir` probe: the directory is made if missing, and a file written in it and
/// removed.
fn probe_dir(dir: &std::path::Path) -> Result<(), StoreError> {
    std::fs::create_dir_all(dir).map_err(|e| StoreError::Io {
        path: dir.to_owned(),
        source: e,
    })?;
    let probe = dir.join(format!(".chef-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| StoreError::Io {
        path: probe.clone(),
        source: e,
    })?;
    std::fs::remove_file(&probe).map_err(|e| StoreError::Io {
        path: probe,
        source: e,
    })
}

/// The PostgreSQL store at `url` (chef's one way of opening a store from a URL).
async fn connect_store(url: &str) -> Result<Arc<dyn StorageBackend>, StoreError> {
    chef::store::open(&chef::store::StoreUrl::Postgres(url.to_owned())).await
}

/// `e` and every source under it, `: `-separated: a store error's own text says what chef
/// was doing, its sources why (down to PostgreSQL's own message, such as `database "x"
/// does not exist`). A source whose text is already said is not repeated.
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    while let Some(cause) = next {
        let text = cause.to_string();
        // Some errors repeat their source in their own text (not always at its end).
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        next = cause.source();
    }
    out
}

/// The HTTP client could not be built (TLS roots).
#[derive(Debug, thiserror::Error)]
#[error("the upstream HTTP client could not be built: {0}")]
pub struct ClientError(#[from] reqwest::Error);

impl Gateway {
    /// A gateway for `config`.
    pub fn new(config: Config) -> Result<Arc<Self>, ClientError> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .pool_idle_timeout(Duration::from_secs(60))
            .build()?;
        let metrics = Metrics::default();
        metrics.store.configure(config.has_memory());
        Ok(Arc::new(Self {
            client,
            metrics,
            shared_store: tokio::sync::OnceCell::new(),
            pools: (0..=config.policies.len())
                .map(|_| session::Pool::default())
                .collect(),
            config,
        }))
    }

    /// The config.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The counters.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The store every session's memory shares (the embedder's
    /// [`Config::memory_store`], or `[memory] url` connected on first use, within
    /// `[memory] timeout_secs`; a failed connection is tried again by the next request).
    async fn shared_store(&self) -> Result<Arc<dyn StorageBackend>, StoreError> {
        if let Some(store) = &self.config.memory_store {
            return Ok(Arc::clone(&store.0));
        }
        let url = self
            .config
            .memory_url
            .as_deref()
            .ok_or_else(|| StoreError::Backend {
                message: "no memory store is configured".to_owned(),
                source: None,
            })?;
        let connect = self.shared_store.get_or_try_init(|| connect_store(url));
        store::bounded(self.config.memory_timeout, &self.metrics.store, connect)
            .await
            .map(Arc::clone)
    }

    /// Whether the memory store answers, within `[memory] timeout_secs` (`GET /health`,
    /// `chef serve --check`): with `dir`, the directory can be made and written; with `url`
    /// (or a [`Config::memory_store`]), the store is connected and answers a read. `None`
    /// without memory. The error keeps its causes as its sources, down to the database's
    /// own message; [`error_chain`] prints them on one line.
    pub async fn check_memory(&self) -> Option<Result<(), StoreError>> {
        if !self.config.has_memory() {
            return None;
        }
        let timeout = self.config.memory_timeout;
        let health = &self.metrics.store;
        let result = match &self.config.memory_dir {
            Some(dir) => {
                let dir = dir.clone();
                let probe = async move {
                    tokio::task::spawn_blocking(move || probe_dir(&dir))
                        .await
                        .map_err(store::thread_failed)?
                };
                store::bounded(timeout, health, probe).await
            }
            None => match self.shared_store().await {
                Ok(shared) => {
                    let key = StoreKey::new("chef-health-probe");
                    let read = async move { shared.get(&Namespace::MEMORY, &key?).await };
                    store::bounded(timeout, health, read).await.map(|_| ())
                }
                Err(e) => Err(e),
            },
        };
        Some(result)
    }

    /// The settings and template pool for a request sent under `route` (the path segment
    /// before `/v1`) with these headers: see [`Config::policy_for`]. An unknown route is a
    /// 404 in the API's shape.
    fn policy(
        &self,
        api: Api,
        route: Option<&str>,
        headers: &HeaderMap,
    ) -> Result<(&Config, usize, &str), ApiError> {
        let key = api_key(headers);
        match self.config.policy_for(route, key) {
            Some(i) => match self.config.policies.get(i) {
                Some(policy) => Ok((&policy.config, i + 1, &policy.name)),
                None => Err(no_route(api)),
            },
            None if route.is_some() => Err(no_route(api)),
            None => Ok((&self.config, 0, "default")),
        }
    }

    /// Offers a finished request's session to the pool it was made under.
    pub(crate) fn release(&self, prepared: Prepared) {
        if let Some(pool) = self.pools.get(prepared.pool) {
            pool.release(prepared);
        }
    }
}

/// The client's API key: `Authorization: Bearer KEY`, else `x-api-key`.
fn api_key(headers: &HeaderMap) -> Option<&str> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    bearer.or_else(|| headers.get("x-api-key").and_then(|v| v.to_str().ok()))
}

fn no_route(api: Api) -> ApiError {
    ApiError::new(
        api,
        Kind::NotFound,
        "no such route on this gateway (see the `route` of each [[policy]] in its config)",
    )
}

/// The routes: the three APIs (also under a policy's route, `/ROUTE/v1/…`), `/metrics`,
/// `/health`, and everything else passed through.
pub fn router(gateway: Arc<Gateway>) -> Router {
    Router::new()
        .route("/v1/chat/completions", endpoint(Api::Chat))
        .route("/v1/responses", endpoint(Api::Responses))
        .route("/v1/messages", endpoint(Api::Messages))
        .route("/{route}/v1/chat/completions", endpoint(Api::Chat))
        .route("/{route}/v1/responses", endpoint(Api::Responses))
        .route("/{route}/v1/messages", endpoint(Api::Messages))
        .route("/metrics", get(metrics))
        .route("/health", get(health))
        .fallback(passthrough)
        .with_state(gateway)
}

/// `POST` of one API, with the policy route when the path has one; any other method is a
/// 405 in the API's error shape, with `Allow: POST`.
fn endpoint(api: Api) -> axum::routing::MethodRouter<Arc<Gateway>> {
    post(
        move |State(g): State<Arc<Gateway>>,
              route: Option<Path<String>>,
              headers: HeaderMap,
              body: Body| async move {
            handle(g, api, route.map(|Path(route)| route), headers, body).await
        },
    )
    .fallback(move || async move {
        let message = format!("/v1{} accepts POST only", api.path());
        let mut response = json_response(
            StatusCode::METHOD_NOT_ALLOWED,
            &api::error_body(api, Kind::InvalidRequest, &message),
        );
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
        response
    })
}

/// `GET /health`: 200 `{"status":"ok"}`, or 503 with the memory store's error when it does
/// not answer (see [`Gateway::check_memory`]).
async fn health(State(g): State<Arc<Gateway>>) -> Response {
    match g.check_memory().await {
        None => json_response(StatusCode::OK, &json!({"status": "ok"})),
        Some(Ok(())) => json_response(StatusCode::OK, &json!({"status": "ok", "memory": "ok"})),
        Some(Err(e)) => {
            let e = error_chain(&e);
            tracing::warn!(error = %e, "health: the memory store does not answer");
            json_response(
                StatusCode::SERVICE_UNAVAILABLE,
                &json!({"status": "unavailable", "memory": e}),
            )
        }
    }
}

async fn metrics(State(g): State<Arc<Gateway>>) -> Response {
    let mut response = g.metrics.render().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    response
}

/// Reads a body of at most `limit` bytes.
async fn read_limited(
    api: Api,
    headers: &HeaderMap,
    body: Body,
    limit: usize,
    timeout: Duration,
) -> Result<Vec<u8>, ApiError> {
    let too_large = || {
        ApiError::new(
            api,
            Kind::TooLarge,
            format!("the request body is larger than {limit} bytes (limits.max_body_bytes)"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(too_large());
    }
    let mut out = Vec::with_capacity(declared.unwrap_or(0));
    let mut stream = body.into_data_stream();
    let read = async {
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|_| {
                ApiError::new(
                    api,
                    Kind::InvalidRequest,
                    "the request body could not be read",
                )
            })?;
            if out.len().saturating_add(chunk.len()) > limit {
                return Err(too_large());
            }
            out.extend_from_slice(&chunk);
        }
        Ok(())
    };
    match tokio::time::timeout(timeout, read).await {
        Ok(Ok(())) => Ok(out),
        Ok(Err(e)) => Err(e),
        // A client that trickles its body holds a connection and its buffer: it is cut off
        // (a 400 in the API's error shape, as every other unreadable body).
        Err(_) => Err(ApiError::new(
            api,
            Kind::InvalidRequest,
            format!(
                "the request body did not arrive within {} s (limits.body_timeout_secs)",
                timeout.as_secs()
            ),
        )),
    }
}

/// When the gateway had a client request's whole body, and the time spent upstream since,
/// to report the gateway's own share (waits for the client and the upstream excluded).
#[derive(Debug)]
pub(crate) struct Clock {
    started: Instant,
    upstream: Duration,
}

async fn handle(
    gateway: Arc<Gateway>,
    api: Api,
    route: Option<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let started = Instant::now();
    gateway.metrics.request(api);
    let mut clock = Clock {
        started,
        upstream: Duration::ZERO,
    };
    let result = run(&gateway, api, route.as_deref(), &headers, body, &mut clock).await;
    let response = result.unwrap_or_else(|e| {
        tracing::warn!(api = api.name(), status = e.status().as_u16(), error = %e.message, "request failed");
        e.into_response()
    });
    if !response.status().is_success() {
        gateway.metrics.error(api);
    }
    // Streams account for themselves when they end.
    if !is_event_stream(&response) {
        gateway
            .metrics
            .overhead(clock.started.elapsed().saturating_sub(clock.upstream));
        tracing::info!(
            api = api.name(),
            status = response.status().as_u16(),
            ms = started.elapsed().as_millis() as u64,
            "request"
        );
    }
    response
}

fn is_event_stream(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"))
}

async fn run(
    gateway: &Arc<Gateway>,
    api: Api,
    route: Option<&str>,
    headers: &HeaderMap,
    body: Body,
    clock: &mut Clock,
) -> Result<Response, ApiError> {
    let (config, pool_index, policy) = gateway.policy(api, route, headers)?;
    let pool = gateway.pools.get(pool_index);
    let bytes = read_limited(
        api,
        headers,
        body,
        gateway.config.max_body_bytes,
        gateway.config.body_timeout,
    )
    .await?;
    // The gateway's own time starts once the client has sent its body.
    clock.started = Instant::now();
    tracing::debug!(api = api.name(), policy, "policy");
    let parsed = session::parse_with(config, api, &bytes, pool)?;
    let (memory, session_id) = if gateway.config.has_memory() {
        let mut sent = headers.get_all(SESSION_HEADER).iter();
        let header = sent.next().map(HeaderValue::as_bytes);
        if sent.next().is_some() {
            return Err(ApiError::new(
                api,
                Kind::InvalidRequest,
                "the x-chef-session header is sent more than once",
            ));
        }
        let id = parsed.session_id(header)?;
        // A request without tools gets no memory: it would bring the memory tools.
        if parsed.has_tools() {
            (Some(load_memory(gateway, api, &id).await?), Some(id))
        } else {
            (None, None)
        }
    } else {
        (None, None)
    };
    let mut prepared = session::build(config, parsed, memory)?;
    prepared.pool = pool_index;
    if prepared.reused {
        gateway.metrics.reused();
    }
    let out = if prepared.stream {
        stream::run(Arc::clone(gateway), prepared, headers.clone(), clock).await
    } else {
        let out = whole(gateway, &mut prepared, headers, clock).await;
        let (before, after) = prepared.tool_chars();
        gateway.metrics.tool_block(before, after);
        if let Some((before, after)) = prepared.tool_tokens() {
            gateway.metrics.tool_tokens(before, after);
        }
        gateway.release(prepared);
        out
    };
    let mut out = out?;
    if let Some(id) = session_id.and_then(|id| HeaderValue::from_str(&id).ok()) {
        out.headers_mut().insert(SESSION_HEADER, id);
    }
    Ok(out)
}

/// The header a client may send to name its session (memory), and that the gateway
/// answers with the id it used.
pub const SESSION_HEADER: &str = "x-chef-session";

/// Opens the session's store (`dir/ID`, or its scope `ID` of the PostgreSQL database) and
/// loads its memory.
async fn load_memory(
    gateway: &Gateway,
    api: Api,
    id: &str,
) -> Result<session::MemorySetup, ApiError> {
    // The cause goes to the log, whole; the client hears what failed, and a timeout.
    let failed = |what: &str, e: &(dyn std::error::Error + 'static)| {
        let store = gateway.config.memory_target().unwrap_or_default();
        tracing::warn!(session = id, store, error = %error_chain(e), "the session's memory could not be {what}");
        let message = match store::timed_out(e) {
            Some(timeout) => format!("the session's memory could not be {what}: {timeout}"),
            None => format!("the session's memory could not be {what}"),
        };
        ApiError::new(api, Kind::Internal, message)
    };
    let timeout = gateway.config.memory_timeout;
    let inner: Arc<dyn StorageBackend> = match &gateway.config.memory_dir {
        // Made on the session's first write (opened, bounded, by the load below when it
        // is there already).
        Some(dir) => Arc::new(store::LazyDir::new(dir.join(id))),
        None => {
            let shared = gateway
                .shared_store()
                .await
                .map_err(|e| failed("opened", &e))?;
            let scoped = chef::store::Scoped::new(shared, id).map_err(|e| failed("opened", &e))?;
            Arc::new(scoped)
        }
    };
    // Every read and write of the session (the load below, the model's writes) is bounded.
    let store: Arc<dyn StorageBackend> = Arc::new(store::Bounded::new(
        inner,
        timeout,
        Arc::clone(&gateway.metrics.store),
    ));
    let mut memory =
        chef::memory::Memory::new().with_max_value_chars(gateway.config.memory_max_value_chars);
    memory.load(&*store).await.map_err(|e| failed("read", &e))?;
    Ok(session::MemorySetup { memory, store })
}

/// A non-streaming request: rounds until the reply has no call the gateway answers itself.
async fn whole(
    gateway: &Gateway,
    prepared: &mut Prepared,
    headers: &HeaderMap,
    clock: &mut Clock,
) -> Result<Response, ApiError> {
    let api = prepared.api;
    let mut usage: Option<Map<String, Value>> = None;
    // The rounds answered inside: what a streamed client saw of them (text, thinking) leads
    // the whole reply too.
    let mut earlier: Vec<Value> = Vec::new();
    let max = gateway.config.max_internal_rounds;
    for round in 1..=max {
        let (body, names) = session::compile_round(prepared, false)?;
        let t0 = Instant::now();
        let response = upstream::post(gateway, api, headers, body).await;
        let response = match response {
            Ok(r) => r,
            Err(e) => {
                clock.upstream += t0.elapsed();
                return Err(e);
            }
        };
        if !response.status().is_success() {
            let out = upstream::error_response(gateway, api, response).await;
            clock.upstream += t0.elapsed();
            gateway.metrics.round(t0.elapsed());
            return Ok(out);
        }
        let kept = upstream::reply_headers(&response);
        let bytes = upstream::read_body(gateway, api, response).await;
        clock.upstream += t0.elapsed();
        gateway.metrics.round(t0.elapsed());
        let bytes = bytes?;
        let mut raw: Value = serde_json::from_slice(&bytes).map_err(|_| {
            ApiError::new(api, Kind::Upstream, "the upstream reply is not valid JSON")
        })?;
        let message = parse_reply(api, &raw, &names)?;
        reply::accumulate_usage(api, &mut usage, &raw);
        let cut = api.relay().cut_short(&raw);
        let decisions = decide_round(gateway, prepared, &message, round == max, cut).await;
        if cut || !all_internal(&decisions) {
            tracing::debug!(api = api.name(), round, "final round");
            api.relay().carry_earlier(&mut raw, &earlier);
            reply::rewrite(api, &mut raw, &decisions, usage.as_ref());
            // The request ids and rate limits of the round whose reply the client gets.
            let out = json_response(StatusCode::OK, &prepared.echo.reply(&raw));
            return Ok(upstream::with_reply_headers(out, kept));
        }
        earlier.push(raw);
        prepared.chef.push(message);
        prepared.chef.push(internal_results(&decisions));
    }
    Err(rounds_exhausted(api, max))
}

pub(crate) fn rounds_exhausted(api: Api, max: u32) -> ApiError {
    ApiError::new(
        api,
        Kind::Upstream,
        format!(
            "the model was still calling lookups or correcting calls after {max} upstream \
             requests (limits.max_internal_rounds)"
        ),
    )
}

/// What becomes of each tool call of one upstream round: routed, a call of another tool
/// than the one the client forces answered so, library-owned calls answered, a mixed
/// round deferred as its place says; each outcome counted.
///
/// A round `cut` short by the output limit is the last: its whole, valid calls go to the
/// client and nothing is answered inside (a half-written call would be "corrected" in
/// another round the client pays for, and the client would never hear its reply was
/// cut); the other calls are left out of the reply.
pub(crate) async fn decide_round(
    gateway: &Gateway,
    prepared: &mut Prepared,
    message: &chef_ir::Message,
    last_round: bool,
    cut: bool,
) -> Vec<(chef_ir::ToolCallId, session::Decision)> {
    let mut decisions = route_all(&mut prepared.chef, message);
    if cut {
        session::leave_out_unfinished(&mut decisions);
    } else {
        session::keep_to_forced(
            &prepared.chef,
            prepared.forced_client_tool(),
            &mut decisions,
        );
        session::answer_owned(&mut prepared.chef, &mut decisions).await;
        session::defer_mixed(&mut decisions, last_round);
    }
    for (_, decision) in &decisions {
        gateway.metrics.outcome(decision_outcome(decision));
    }
    decisions
}

fn decision_outcome(decision: &session::Decision) -> &'static str {
    match decision {
        session::Decision::Client { .. } => "call",
        session::Decision::Internal { outcome, .. } => outcome,
        session::Decision::Owned(_) => "owned",
    }
}

/// Any other path: sent to the upstream as it came (`/v1/…` maps onto the upstream base;
/// the Anthropic upstream when the client sent `anthropic-version`).
async fn passthrough(State(gateway): State<Arc<Gateway>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let api = if parts.headers.contains_key("anthropic-version") {
        Api::Messages
    } else {
        Api::Chat
    };
    // `/ROUTE/v1/…` of a policy's route is the same path as `/v1/…`.
    let path = parts.uri.path();
    let path = gateway
        .config
        .policies
        .iter()
        .filter_map(|p| p.route.as_deref())
        .find_map(|route| {
            path.strip_prefix('/')
                .and_then(|p| p.strip_prefix(route))
                .filter(|rest| rest.starts_with("/v1"))
        })
        .unwrap_or(path);
    let Some(rest) = path.strip_prefix("/v1") else {
        return json_response(
            StatusCode::NOT_FOUND,
            &api::error_body(api, Kind::InvalidRequest, "no such path on this gateway"),
        );
    };
    if let Some(reason) = paths::refusal(rest) {
        return ApiError::new(api, Kind::InvalidRequest, reason).into_response();
    }
    let body = match read_limited(
        api,
        &parts.headers,
        body,
        gateway.config.max_body_bytes,
        gateway.config.body_timeout,
    )
    .await
    {
        Ok(body) => body,
        Err(e) => return e.into_response(),
    };
    gateway.metrics.passthrough();
    let base = upstream::base_for_headers(&gateway, &parts.headers);
    let mut url = format!("{base}{rest}");
    if let Some(query) = parts.uri.query() {
        url.push('?');
        url.push_str(query);
    }
    let method = match reqwest::Method::from_bytes(parts.method.as_str().as_bytes()) {
        Ok(m) => m,
        Err(_) => {
            return ApiError::new(api, Kind::InvalidRequest, "unsupported method").into_response();
        }
    };
    let request = gateway
        .client
        .request(method, url)
        .headers(upstream::forward_headers(&parts.headers))
        .body(body);
    match tokio::time::timeout(gateway.config.upstream_timeout, request.send()).await {
        Err(_) => upstream::timeout(api).into_response(),
        Ok(Err(e)) => ApiError::new(
            api,
            Kind::Upstream,
            format!(
                "the upstream could not be reached: {}",
                upstream::transport_reason(&e)
            ),
        )
        .into_response(),
        Ok(Ok(response)) => upstream::passthrough_response(response),
    }
}

/// One upstream as [`check_upstreams`] found it.
#[derive(Debug)]
#[non_exhaustive]
pub struct UpstreamCheck {
    /// `openai` or `anthropic`.
    pub name: &'static str,
    /// Its base URL.
    pub base: String,
    /// The HTTP status it answered with, or why it did not answer.
    pub result: Result<u16, Unreachable>,
}

/// An upstream did not answer HTTP (`chef serve --check`). `Display` says how the request
/// failed in a few words (`connection failed`, `timed out`); the HTTP client's error is the
/// source.
#[derive(Debug, thiserror::Error)]
#[error("{}", upstream::transport_reason(.0))]
pub struct Unreachable(#[source] reqwest::Error);

/// Whether each upstream answers HTTP at all (`chef serve --check`): any status counts,
/// since no credentials are sent.
///
/// # Errors
/// [`ClientError`] when the HTTP client cannot be built.
pub async fn check_upstreams(config: &Config) -> Result<Vec<UpstreamCheck>, ClientError> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()?;
    let mut out = Vec::new();
    for (name, base) in [
        ("openai", &config.openai_base),
        ("anthropic", &config.anthropic_base),
    ] {
        let url = format!("{base}/models");
        let result = match client.get(&url).send().await {
            Ok(r) => Ok(r.status().as_u16()),
            Err(e) => Err(Unreachable(e)),
        };
        out.push(UpstreamCheck {
            name,
            base: base.clone(),
            result,
        });
    }
    Ok(out)
}

/// Runs the gateway until Ctrl-C (or SIGTERM), then finishes the requests in flight.
pub async fn serve(config: Config) -> std::io::Result<()> {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(&config.log_filter));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    let listen = config.listen;
    let limits = config.connections;
    let gateway = Gateway::new(config).map_err(std::io::Error::other)?;
    let listener = tokio::net::TcpListener::bind(listen).await?;
    tracing::info!(addr = %listener.local_addr()?, "chef serve listening");
    serve_router(listener, router(gateway), limits, shutdown_signal()).await
}

/// `listener` with Nagle's algorithm off on every connection it accepts. A gateway writes a
/// stream as many small writes; with Nagle on, a write waits for the client's delayed
/// acknowledgement of the one before (about 40 ms on Linux), which the load test measured
/// on every streamed reply. Serve the [`router`] on this when you embed the gateway.
pub fn no_delay(
    listener: tokio::net::TcpListener,
) -> impl axum::serve::Listener<Io = tokio::net::TcpStream, Addr = std::net::SocketAddr> {
    use axum::serve::ListenerExt as _;
    listener.tap_io(|tcp| listen::nagle_off(tcp))
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down: finishing requests in flight");
}

/// Why `chef serve` ([`cli`]) stopped. Each variant keeps its cause as its `source`;
/// `Display` is one line for stderr.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// The config file cannot be read or is invalid (the message names the key).
    #[error("{}: {source}", path.display())]
    Config {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        #[source]
        source: ConfigError,
    },
    /// The async runtime could not start.
    #[error("cannot start the runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The upstream HTTP client could not be built.
    #[error("cannot build the upstream client: {0}")]
    Client(#[source] ClientError),
    /// `--check`: some upstreams did not answer, or the memory store cannot be used (each
    /// is named on stdout).
    #[error("{}", check_failure(unreachable, *memory))]
    CheckFailed {
        /// The upstreams that did not answer, by name.
        unreachable: Vec<String>,
        /// Whether the memory store cannot be used.
        memory: bool,
    },
    /// The gateway stopped with an I/O error (the address is taken, …).
    #[error("serve: {0}")]
    Serve(#[source] std::io::Error),
}

impl CliError {
    /// Whether the cause is the user's input (the config, or what `--check` found) rather
    /// than the environment: a CLI exits 2 for the first, 1 for the second.
    pub fn is_usage(&self) -> bool {
        matches!(self, Self::Config { .. } | Self::CheckFailed { .. })
    }
}

fn check_failure(unreachable: &[String], memory: bool) -> String {
    match (unreachable.is_empty(), memory) {
        (true, _) => "the memory store does not answer".to_owned(),
        (false, false) => format!("unreachable upstreams: {}", unreachable.join(", ")),
        (false, true) => format!(
            "unreachable upstreams: {}; the memory store does not answer",
            unreachable.join(", ")
        ),
    }
}

/// `chef serve [--config FILE] [--check]`: validates the config (errors name the key), then
/// either checks the upstreams (`--check`, printing one line each) or runs the gateway until
/// Ctrl-C.
///
/// # Errors
/// [`CliError`]: a bad config, a failed check, or the gateway stopping with an I/O error.
pub fn cli(config: Option<&std::path::Path>, check: bool) -> Result<(), CliError> {
    let config = match config {
        Some(path) => Config::load(path).map_err(|source| CliError::Config {
            path: path.to_owned(),
            source,
        })?,
        None => Config::default(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    if check {
        let results = runtime
            .block_on(check_upstreams(&config))
            .map_err(CliError::Client)?;
        let memory = match config.memory_target() {
            Some(target) => {
                let gateway = Gateway::new(config.clone()).map_err(CliError::Client)?;
                let checked = runtime.block_on(gateway.check_memory());
                checked.map(|result| (target, result))
            }
            None => None,
        };
        let mut failed = Vec::new();
        println!("config: ok (listen {})", config.listen);
        for policy in &config.policies {
            let route = policy
                .route
                .as_deref()
                .map_or_else(String::new, |r| format!(" route /{r}/v1/…"));
            println!(
                "policy {}:{route} {} key(s), level {}",
                policy.name,
                policy.keys.len(),
                policy.config.level.as_u8()
            );
        }
        for UpstreamCheck { name, base, result } in results {
            match result {
                Ok(status) => println!("upstream {name}: {base} answered HTTP {status}"),
                Err(e) => {
                    println!("upstream {name}: {base} unreachable: {e}");
                    failed.push(name);
                }
            }
        }
        let memory_failed = match memory {
            Some((target, Ok(()))) => {
                println!(
                    "memory: {target} answered (within {} s)",
                    config.memory_timeout.as_secs()
                );
                false
            }
            Some((target, Err(e))) => {
                println!("memory: {target} cannot be used: {}", error_chain(&e));
                true
            }
            None => false,
        };
        if failed.is_empty() && !memory_failed {
            return Ok(());
        }
        return Err(CliError::CheckFailed {
            unreachable: failed.into_iter().map(str::to_owned).collect(),
            memory: memory_failed,
        });
    }
    runtime.block_on(serve(config)).map_err(CliError::Serve)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cause that says only what kind of error it is, like tokio-postgres' `db error`,
    /// whose own source holds the server's message.
    #[derive(Debug, thiserror::Error)]
    #[error("db error")]
    struct Db(#[source] std::io::Error);

    #[test]
    fn a_store_error_is_logged_with_its_whole_chain() {
        let e = StoreError::Backend {
            message: "cannot get a PostgreSQL connection".to_owned(),
            source: Some(Box::new(Db(std::io::Error::other(
                "FATAL: database \"chef_x\" does not exist",
            )))),
        };
        assert_eq!(
            error_chain(&e),
            "store backend failed: cannot get a PostgreSQL connection: db error: \
             FATAL: database \"chef_x\" does not exist"
        );
        let timeout = StoreTimeout(Duration::from_secs(5)).into_store_error();
        assert_eq!(
            error_chain(&timeout),
            "store backend failed: the memory store did not answer within 5 s \
             (memory.timeout_secs)"
        );
        assert!(store::timed_out(&timeout).is_some());
        assert!(store::timed_out(&e).is_none());
    }
}
