//! Serving a router on a TCP listener with bounds a long-running server needs and
//! `axum::serve` does not set: a connection must send a request's headers within
//! [`Connections::header_timeout`] of being ready for one (accepted, or done with its last
//! request), or it is closed; at most [`Connections::max`] connections are open at once
//! (past that, accepting waits: the kernel's backlog holds the rest); Nagle's algorithm is
//! off on each ([`no_delay`](crate::no_delay)). `chef serve` and `chef mcp serve --http`
//! both serve through [`serve_router`].
//!
//! Without the first bound, a client that opens connections and sends nothing (or half a
//! header, or nothing after its last request) held each one forever: an audit held 20,000
//! and the gateway ran out of file descriptors, answering others in seconds or not at all.

use std::{future::Future, pin::pin, sync::Arc, time::Duration};

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::{net::TcpListener, sync::Semaphore};

/// How long a connection may take to send a request's headers (default of
/// [`Connections::header_timeout`]).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(30);

/// The most connections open at once (default of [`Connections::max`]).
pub const MAX_CONNECTIONS: usize = 10_000;

/// The bounds [`serve_router`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Connections {
    /// How long a connection may take to send a request's headers, counted from when it is
    /// ready for one; it is closed past that (an idle keep-alive connection included).
    pub header_timeout: Duration,
    /// The most connections open at once; accepting waits while that many are.
    pub max: usize,
}

impl Default for Connections {
    fn default() -> Self {
        Self {
            header_timeout: HEADER_TIMEOUT,
            max: MAX_CONNECTIONS,
        }
    }
}

/// Serves `router` on `listener` until `shutdown` completes, then stops accepting, lets
/// each connection finish the request it is serving, and returns when all have closed.
///
/// # Errors
/// None today: a failed `accept` (a connection reset before it was taken, or no file
/// descriptor left) is logged and accepting goes on after a pause; the `Result` is kept for
/// the listener errors a future version may report.
pub async fn serve_router(
    listener: TcpListener,
    router: Router,
    limits: Connections,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max.max(1)));
    // Each connection holds a clone of `stop_tx` and watches it close (the receiver
    // below is dropped at shutdown); each holds `done_rx` until it ends, and the end of
    // the function waits for every one to be dropped.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(());
    let (done_tx, done_rx) = tokio::sync::watch::channel(());
    let mut shutdown = pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&slots).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    if !is_connection_error(&e) {
                        // EMFILE, ENFILE, ENOMEM: wait for descriptors to free.
                        tracing::warn!(error = %e, "accepting a connection failed; pausing 1 s");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        nagle_off(&stream);
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        let stop = stop_tx.clone();
        let done = done_rx.clone();
        let header_timeout = limits.header_timeout;
        tokio::spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout);
            let connection = builder
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            let mut connection = pin!(connection);
            let mut stopping = false;
            loop {
                tokio::select! {
                    result = connection.as_mut() => {
                        if let Err(e) = result {
                            tracing::debug!(error = %e, "connection ended with an error");
                        }
                        break;
                    }
                    () = stop.closed(), if !stopping => {
                        stopping = true;
                        connection.as_mut().graceful_shutdown();
                    }
                }
            }
            drop(done);
            drop(permit);
        });
    }
    drop(stop_rx);
    drop(done_rx);
    done_tx.closed().await;
    Ok(())
}

/// Turns Nagle's algorithm off on an accepted connection (see [`no_delay`](crate::no_delay)
/// for why); a failure is logged and the connection served anyway.
pub(crate) fn nagle_off(tcp: &tokio::net::TcpStream) {
    if let Err(e) = tcp.set_nodelay(true) {
        tracing::warn!(error = %e, "cannot turn Nagle's algorithm off on a connection");
    }
}

/// Errors of one connection that was being accepted (it went away first), after which
/// accepting goes straight on.
fn is_connection_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}
