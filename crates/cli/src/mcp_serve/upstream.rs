//! One task per upstream: start it, list its tools, relist on `tools/list_changed`, and when
//! it dies or fails to start, withdraw its tools and start it again after a growing pause.

use std::{
    collections::HashSet,
    process::Stdio,
    sync::{Arc, Weak},
    time::{Duration, Instant},
};

use rmcp::{
    ClientHandler, Peer, RoleClient, ServiceExt,
    model::{ClientConfig, ClientRequest, PaginatedRequestParams, ProgressNotificationParam, Tool},
    service::{NotificationContext, RunningService},
};
use tokio::{io::AsyncReadExt, process::Command, sync::mpsc};

use super::{
    config::Upstream,
    hub::{Hub, Status},
};
use crate::mcp::{client_config, clip, handshake_message, last_line};

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
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        client_config()
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.relist.try_send(());
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

/// Lists every page of tools.
pub(crate) async fn list_all(peer: &Peer<RoleClient>) -> Result<Vec<Tool>, String> {
    let mut tools = Vec::new();
    let mut seen = HashSet::new();
    let mut cursor = None;
    loop {
        let page = peer
            .list_tools(Some(
                PaginatedRequestParams::default().with_cursor(cursor.clone()),
            ))
            .await
            .map_err(|e| format!("tools/list failed: {}", clip(&e.to_string())))?;
        tools.extend(page.tools);
        match page.next_cursor {
            None => return Ok(tools),
            Some(next) if !seen.insert(next.clone()) => {
                return Err("tools/list pages loop (a nextCursor came twice)".to_owned());
            }
            Some(next) => cursor = Some(next),
        }
    }
}

struct Started {
    service: RunningService<RoleClient, Handler>,
    child: tokio::process::Child,
    stderr: Arc<parking_lot::Mutex<Vec<u8>>>,
    relist: mpsc::Receiver<()>,
    tools: Vec<Tool>,
}

/// Starts `spec`, shakes hands and lists its tools within the start timeout.
async fn start(hub: &Arc<Hub>, spec: &Upstream) -> Result<Started, String> {
    let (program, args) = spec
        .argv
        .split_first()
        .ok_or_else(|| "empty command".to_owned())?;
    let mut command = Command::new(program);
    command
        .args(args)
        .envs(&spec.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(cwd) = &spec.cwd {
        command.current_dir(cwd);
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start {program:?}: {e}"))?;
    let stderr = Arc::new(parking_lot::Mutex::new(Vec::new()));
    if let Some(mut pipe) = child.stderr.take() {
        let tail = Arc::clone(&stderr);
        let server = spec.name.clone();
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
        });
    }
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return Err("the child's stdio pipes are missing".to_owned());
    };
    let (tx, relist) = mpsc::channel(1);
    let handler = Handler {
        hub: Arc::downgrade(hub),
        relist: tx,
    };
    let session = async {
        let service = handler
            .serve((stdout, stdin))
            .await
            .map_err(|e| format!("MCP handshake failed: {}", handshake_message(&e)))?;
        let tools = list_all(service.peer()).await?;
        Ok::<_, String>((service, tools))
    };
    let outcome = tokio::time::timeout(hub.config.start_timeout, session).await;
    let failure =
        |reason: String, stderr: &parking_lot::Mutex<Vec<u8>>| match last_line(&stderr.lock()) {
            Some(line) => format!("{reason} (stderr: {line})"),
            None => reason,
        };
    match outcome {
        Ok(Ok((service, tools))) => Ok(Started {
            service,
            child,
            stderr,
            relist,
            tools,
        }),
        Ok(Err(reason)) => {
            let _ = child.kill().await;
            Err(failure(reason, &stderr))
        }
        Err(_) => {
            let _ = child.kill().await;
            Err(failure(
                format!(
                    "no tool list within {:.1} s",
                    hub.config.start_timeout.as_secs_f64()
                ),
                &stderr,
            ))
        }
    }
}

/// Starts `spec` once, lists its tools and stops it (`--check`).
pub(crate) async fn list_once(hub: &Arc<Hub>, spec: &Upstream) -> Result<Vec<Tool>, String> {
    let Started {
        service, mut child, ..
    } = start(hub, spec).await?;
    let tools = list_all(service.peer()).await;
    let _ = service.cancel().await;
    let _ = child.kill().await;
    tools
}

/// Runs one upstream for as long as the proxy runs.
pub(crate) async fn supervise(hub: Arc<Hub>, spec: Upstream) {
    let mut backoff = FIRST_BACKOFF;
    let mut attempt = 1u32;
    loop {
        hub.set_status(&spec.name, Status::Starting { attempt });
        let reason = match start(&hub, &spec).await {
            Err(reason) => reason,
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
                        status = child.wait() => break match status {
                            Ok(s) => format!("the server exited ({s})"),
                            Err(e) => format!("the server was lost: {e}"),
                        },
                        Some(()) = relist.recv() => {
                            match list_all(&peer).await {
                                Ok(tools) => {
                                    tracing::info!(server = %spec.name, tools = tools.len(), "upstream tool list changed");
                                    hub.publish(&spec.name, peer.clone(), tools).await;
                                }
                                Err(e) => tracing::warn!(server = %spec.name, "relisting after tools/list_changed failed: {e}"),
                            }
                        }
                    }
                };
                waiting.abort();
                let _ = child.kill().await;
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
