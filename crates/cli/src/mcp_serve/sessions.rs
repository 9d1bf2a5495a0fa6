//! `--http`'s sessions: rmcp's in-process session manager, with a cap on how many are open.
//!
//! Each open session holds its worker and buffers (about 100–140 kB measured) until the host
//! ends it (`DELETE`) or it has been idle for rmcp's keep-alive (5 minutes). Without a cap,
//! a client opening sessions without end grew the process by that much per session (2 GB
//! for 15,000 in the resource audit). Past [`MAX_SESSIONS`], a new session is refused: the
//! host's `initialize` gets an error saying why, and the sessions already open go on.

use futures::Stream;
use rmcp::{
    model::{ClientJsonRpcMessage, ServerJsonRpcMessage},
    transport::{
        common::server_side_http::{ServerSseMessage, SessionId},
        streamable_http_server::{
            RestoreOutcome, SessionManager,
            session::{
                local::{LocalSessionManager, LocalSessionManagerError},
                store::EventStore,
            },
        },
    },
};

/// The most `--http` sessions open at once.
pub(crate) const MAX_SESSIONS: usize = 1_000;

/// rmcp's [`LocalSessionManager`], refusing a new session while `max` are open.
#[derive(Debug)]
pub(crate) struct Capped {
    inner: LocalSessionManager,
    max: usize,
}

impl Capped {
    pub(crate) fn new(max: usize) -> Self {
        Self {
            inner: LocalSessionManager::default(),
            max,
        }
    }
}

/// Why a session operation failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CappedError {
    /// `max` sessions are open.
    #[error(
        "chef mcp serve already has {0} MCP sessions open, its limit: end a session (HTTP DELETE) or wait for an idle one to expire (5 minutes)"
    )]
    Full(usize),
    /// rmcp's own.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

impl SessionManager for Capped {
    type Error = CappedError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        // Checked, then created: two hosts racing for the last place may both get one (the
        // cap is a bound on memory, not an exact count).
        if self.inner.sessions.read().await.len() >= self.max {
            return Err(CappedError::Full(self.max));
        }
        Ok(self.inner.create_session().await?)
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        Ok(self.inner.restore_session(id).await?)
    }

    fn event_store(&self) -> Option<std::sync::Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}
