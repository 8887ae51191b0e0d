//! rmcp's in-memory session manager with counted session ids.
//!
//! rmcp draws a random UUID per session; a recording would then differ on
//! every run. Here the n-th session of a server is
//! `00000000-0000-4000-8000-<n as 12 hex digits>` (UUID-shaped, in case a
//! client checks). Predictable ids are safe because every request must also
//! carry the bearer token.

use std::sync::atomic::{AtomicU64, Ordering};

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::common::server_side_http::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker, create_local_session,
};

/// Session manager that numbers sessions from 1.
#[derive(Debug, Default)]
pub(crate) struct CountedSessions {
    inner: LocalSessionManager,
    created: AtomicU64,
}

impl CountedSessions {
    pub(crate) fn new(inner: LocalSessionManager) -> Self {
        CountedSessions {
            inner,
            created: AtomicU64::new(0),
        }
    }
}

/// The id of the `n`-th session (from 1).
pub fn session_id(n: u64) -> String {
    format!("00000000-0000-4000-8000-{:012x}", n & 0xffff_ffff_ffff)
}

impl SessionManager for CountedSessions {
    type Error = LocalSessionManagerError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let n = self.created.fetch_add(1, Ordering::Relaxed) + 1;
        let id: SessionId = session_id(n).into();
        let (handle, worker) = create_local_session(id.clone(), self.inner.session_config.clone());
        self.inner.sessions.write().await.insert(id.clone(), handle);
        Ok((id, WorkerTransport::spawn(worker)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn session_ids_are_uuid_shaped_and_counted() {
        assert_eq!(super::session_id(1), "00000000-0000-4000-8000-000000000001");
        assert_eq!(
            super::session_id(255),
            "00000000-0000-4000-8000-0000000000ff"
        );
    }
}
