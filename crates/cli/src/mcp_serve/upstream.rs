//! One task per upstream: start it, list its tools, relist on `tools/list_changed`, and when
//! it dies or fails to start, withdraw its tools and start it again after a growing pause.

use std::{
    process::Stdio,
    sync::{Arc, Weak},
    time::{Duration, Instant},
};

#[allow(deprecated)] // LoggingMessageNotificationParam: see `on_logging_message`.
use rmcp::{
    ClientHandler, ErrorData, RoleClient, ServiceExt,
    model::{
        ClientConfig, ClientRequest, ElicitRequestParams, ElicitResult,
        ElicitationCreateRequestMethod, LoggingMessageNotificationParam, ProgressNotificationParam,
        Tool,
    },
    service::{NotificationContext, RequestContext, RunningService},
};
use tokio::{io::AsyncReadExt, process::Command, sync::mpsc};

use super::{
    config::{Transport, Upstream},
    hub::{Hub, Status},
};
use crate::mcp::{ListError, client_config, clip, handshake_message, last_line, list_all};

/// The first pause before a restart; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// An upstream that stayed up this long starts again from [`FIRST_BACKOFF`].
const STABLE: Duration = Duration::from_secs(30);
const STDERR_TAIL: usize = 4096;

/// The client side of one upstream connection.
struct Handler {
    hub: Weak<Hub>,
    relist: mpsc::Sender<()>,
    /// The upstream's name in the config, for its log lines.
    server: String,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        client_config()
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.relist.try_send(());
    }

    /// An upstream's request for user input is refused as a method chef does not
    /// serve (as `sampling/createMessage` is): the proxy does not relay requests from an
    /// upstream to the host, and declining in the user's name would tell the upstream
    /// something the user never said.
    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        tracing::warn!(
            server = %self.server,
            "the upstream asked for user input (elicitation/create): refused; chef mcp serve does not relay it to the host"
        );
        Err(ErrorData::method_not_found::<ElicitationCreateRequestMethod>())
    }

    /// An upstream's log message goes to chef's own log (stderr), not to the host.
    /// (MCP logging is deprecated from 2026-07-28; upstreams on the handshake versions
    /// still send it.)
    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let data = clip(&params.data.to_string());
        let logger = params.logger.as_deref().unwrap_or("-");
        tracing::info!(server = %self.server, level = ?params.level, logger, "upstream log: {data}");
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(hub) = self.hub.upgrade() {
            hub.progress(params).await;
        }
    }
}

struct Started {
    service: RunningService<RoleClient, Handler>,
    /// The process, for stdio upstreams.
    child: Option<tokio::process::Child>,
    stderr: Arc<parking_lot::Mutex<Vec<u8>>>,
    relist: mpsc::Receiver<()>,
    tools: Vec<Tool>,
}

/// Why an upstream did not start. `Display` is what the host reads in the server's status.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StartError {
    #[error("empty command")]
    EmptyCommand,
    #[error("cannot start {program:?}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("its cwd {} is not a directory ({source})", .cwd.display())]
    Cwd {
        cwd: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the child's stdio pipes are missing")]
    NoPipes,
    #[error("MCP handshake failed: {}", handshake_message(.0))]
    Handshake(#[source] Box<rmcp::service::ClientInitializeError>),
    #[error("tools/list: {0}")]
    ListTools(#[source] ListError),
    #[error("no tool list within {:.1} s", .0.as_secs_f64())]
    Timeout(Duration),
}

/// A failed start and the last line the server wrote to stderr, if any.
#[derive(Debug, thiserror::Error)]
#[error("{reason}{}", stderr.as_ref().map(|line| format!(" (stderr: {line})")).unwrap_or_default())]
pub(crate) struct StartFailure {
    #[source]
    reason: StartError,
    stderr: Option<String>,
}

/// Starts `spec`, shakes hands and lists its tools within the start timeout.
async fn start(hub: &Arc<Hub>, spec: &Upstream) -> Result<Started, StartFailure> {
    let (tx, relist) = mpsc::channel(1);
    let handler = Handler {
        hub: Arc::downgrade(hub),
        relist: tx,
        server: spec.name.clone(),
    };
    let stderr = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let mut stderr_reader = None;
    let (connecting, mut child) = match &spec.transport {
        Transport::Command { argv, env, cwd } => {
            let Some((program, args)) = argv.split_first() else {
                return Err(StartFailure {
                    reason: StartError::EmptyCommand,
                    stderr: None,
                });
            };
            let mut command = Command::new(program);
            command
                .args(args)
                .envs(env)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .kill_on_drop(true);
            if let Some(cwd) = cwd {
                // Checked first: a spawn into a missing directory fails as if the program
                // were missing (ENOENT either way).
                let checked = std::fs::metadata(cwd).and_then(|m| {
                    if m.is_dir() {
                        Ok(())
                    } else {
                        Err(std::io::Error::new(
                            std::io::ErrorKind::NotADirectory,
                            "a file, not a directory",
                        ))
                    }
                });
                if let Err(source) = checked {
                    return Err(StartFailure {
                        reason: StartError::Cwd {
                            cwd: cwd.clone(),
                            source,
                        },
                        stderr: None,
                    });
                }
                command.current_dir(cwd);
            }
            let mut child = command.spawn().map_err(|source| StartFailure {
                reason: StartError::Spawn {
                    program: program.clone(),
                    source,
                },
                stderr: None,
            })?;
            if let Some(pipe) = child.stderr.take() {
                stderr_reader = Some(keep_stderr(pipe, Arc::clone(&stderr), spec.name.clone()));
            }
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                return Err(StartFailure {
                    reason: StartError::NoPipes,
                    stderr: None,
                });
            };
            let connecting: futures::future::BoxFuture<'static, _> =
                Box::pin(handler.serve((stdout, stdin)));
            (connecting, Some(child))
        }
        Transport::Url { url, headers } => {
            use rmcp::transport::{
                StreamableHttpClientTransport,
                streamable_http_client::StreamableHttpClientTransportConfig,
            };
            install_crypto_provider();
            let headers = headers
                .iter()
                .filter_map(|(k, v)| Some((k.parse().ok()?, v.parse().ok()?)))
                .collect();
            let transport = StreamableHttpClientTransport::from_config(
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(headers),
            );
            let connecting: futures::future::BoxFuture<'static, _> =
                Box::pin(handler.serve(transport));
            (connecting, None)
        }
    };
    let session = async {
        let service = connecting
            .await
            .map_err(|e| StartError::Handshake(Box::new(e)))?;
        let (tools, left_out) = list_all(service.peer())
            .await
            .map_err(StartError::ListTools)?;
        for line in left_out {
            tracing::warn!(server = %spec.name, "{line}");
        }
        Ok::<_, StartError>((service, tools))
    };
    let outcome = tokio::time::timeout(hub.config.start_timeout, session).await;
    let reason = match outcome {
        Ok(Ok((service, tools))) => {
            return Ok(Started {
                service,
                child,
                stderr,
                relist,
                tools,
            });
        }
        Ok(Err(reason)) => reason,
        Err(_) => StartError::Timeout(hub.config.start_timeout),
    };
    if let Some(child) = &mut child {
        let _ = child.kill().await;
    }
    // The server's last words say why it failed (a crash during the handshake reaches chef
    // as a broken pipe first): let the reader drain the pipe, which closes once the server
    // is gone, within a bound (a process the server started may hold it open).
    if let Some(reader) = stderr_reader {
        let _ = tokio::time::timeout(STDERR_DRAIN, reader).await;
    }
    let stderr = last_line(&stderr.lock());
    Err(StartFailure { reason, stderr })
}

/// rmcp's HTTP client is built without a TLS crypto provider: give rustls ring's, once.
fn install_crypto_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// How long a failed start waits for the server's stderr to be read to its end.
const STDERR_DRAIN: Duration = Duration::from_secs(1);

/// Keeps the tail of a child's stderr (for the status) and logs its lines at debug level;
/// the reader ends when the pipe closes.
fn keep_stderr(
    mut pipe: tokio::process::ChildStderr,
    tail: Arc<parking_lot::Mutex<Vec<u8>>>,
    server: String,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf).await {
            let Some(chunk) = buf.get(..n).filter(|c| !c.is_empty()) else {
                break;
            };
            for line in String::from_utf8_lossy(chunk).lines() {
                tracing::debug!(server = %server, "stderr: {line}");
            }
            let mut tail = tail.lock();
            tail.extend_from_slice(chunk);
            let excess = tail.len().saturating_sub(STDERR_TAIL);
            tail.drain(..excess);
        }
    })
}

/// Starts `spec` once, lists its tools and stops it (`--check`).
pub(crate) async fn list_once(hub: &Arc<Hub>, spec: &Upstream) -> Result<Vec<Tool>, StartFailure> {
    let Started {
        service, mut child, ..
    } = start(hub, spec).await?;
    let tools = list_all(service.peer())
        .await
        .map(|(tools, left_out)| {
            for line in left_out {
                eprintln!("chef: notice: server {:?}: {line}", spec.name);
            }
            tools
        })
        .map_err(|e| StartFailure {
            reason: StartError::ListTools(e),
            stderr: None,
        });
    let _ = service.cancel().await;
    if let Some(child) = &mut child {
        let _ = child.kill().await;
    }
    tools
}

/// Waits for a stdio upstream's process to exit; never ends for an HTTP one.
async fn exited(
    child: &mut Option<tokio::process::Child>,
) -> std::io::Result<std::process::ExitStatus> {
    match child {
        Some(child) => child.wait().await,
        None => std::future::pending().await,
    }
}

/// Runs one upstream for as long as the proxy runs.
pub(crate) async fn supervise(hub: Arc<Hub>, spec: Upstream) {
    let mut backoff = FIRST_BACKOFF;
    let mut attempt = 1u32;
    loop {
        hub.set_status(&spec.name, Status::Starting { attempt });
        let reason = match start(&hub, &spec).await {
            Err(failure) => failure.to_string(),
            Ok(started) => {
                let Started {
                    service,
                    mut child,
                    stderr,
                    mut relist,
                    tools,
                } = started;
                let up_at = Instant::now();
                tracing::info!(server = %spec.name, tools = tools.len(), "upstream up");
                let peer = service.peer().clone();
                hub.publish(&spec.name, peer.clone(), tools).await;
                let mut waiting = tokio::spawn(service.waiting());
                let mut ping = tokio::time::interval(hub.config.ping_interval);
                ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                ping.tick().await;
                let reason = loop {
                    tokio::select! {
                        _ = ping.tick() => {
                            let answer = tokio::time::timeout(
                                hub.config.start_timeout,
                                peer.send_request(ClientRequest::PingRequest(Default::default())),
                            )
                            .await;
                            match answer {
                                Ok(Ok(_)) => {}
                                Ok(Err(e)) => break format!("ping failed: {}", clip(&e.to_string())),
                                Err(_) => break format!(
                                    "stopped answering (no ping reply within {:.1} s)",
                                    hub.config.start_timeout.as_secs_f64()
                                ),
                            }
                        }
                        _ = &mut waiting => break "the connection closed".to_owned(),
                        status = exited(&mut child) => break match status {
                            Ok(s) => format!("the server exited ({s})"),
                            Err(e) => format!("the server was lost: {e}"),
                        },
                        Some(()) = relist.recv() => {
                            match list_all(&peer).await {
                                Ok((tools, left_out)) => {
                                    for line in left_out {
                                        tracing::warn!(server = %spec.name, "{line}");
                                    }
                                    tracing::info!(server = %spec.name, tools = tools.len(), "upstream tool list changed");
                                    hub.publish(&spec.name, peer.clone(), tools).await;
                                }
                                Err(e) => tracing::warn!(server = %spec.name, "relisting after tools/list_changed failed: {e}"),
                            }
                        }
                    }
                };
                waiting.abort();
                if let Some(child) = &mut child {
                    let _ = child.kill().await;
                }
                if up_at.elapsed() >= STABLE {
                    backoff = FIRST_BACKOFF;
                    attempt = 0;
                }
                match last_line(&stderr.lock()) {
                    Some(line) => format!("{reason} (stderr: {line})"),
                    None => reason,
                }
            }
        };
        tracing::warn!(server = %spec.name, "upstream down: {reason}; retrying in {:.1} s", backoff.as_secs_f64());
        hub.withdraw(
            &spec.name,
            Status::Down {
                reason,
                retry_in: backoff,
            },
        )
        .await;
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
        attempt += 1;
    }
}
