//! Starting and stopping one server: bind (loopback only), wire rmcp's
//! Streamable HTTP service behind the gate, hand out the event receiver.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::catalogue::{self, ToolSpec};
use crate::config::{Config, ResponseMode};
use crate::exchange::{Exchange, Sink};
use crate::gate::{self, Gate, MCP_PATH};
use crate::handler::{Tools, UnityOps};
use crate::sessions::CountedSessions;

/// How long [`Running::shutdown`] waits for open connections before cutting them.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("refusing to serve on {0}: stub-mcp binds loopback addresses only (127.0.0.1 or ::1)")]
    NotLoopback(SocketAddr),
    #[error("unknown tool {name:?} in the offered tool list; the catalogue has: {known}")]
    UnknownTool { name: String, known: String },
    /// The token itself is never echoed: it is a secret even when malformed.
    #[error("the bearer token is unusable: {0}; it must be non-empty visible ASCII without spaces")]
    BadToken(&'static str),
    #[error("the body limit must be at least 1 byte")]
    ZeroBodyLimit,
    #[error("cannot bind {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// A server that is accepting connections.
#[derive(Debug)]
pub struct Running {
    url: String,
    token: String,
    addr: SocketAddr,
    events: Option<UnboundedReceiver<Exchange>>,
    cancel: CancellationToken,
    task: Option<JoinHandle<()>>,
    in_flight: Arc<AtomicUsize>,
}

impl Running {
    /// `http://127.0.0.1:PORT/mcp`
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Tool calls whose handler is still running (a cancelled `uap_slow` leaves quickly).
    pub fn tool_calls_in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// The exchange events; `Some` exactly once. The channel closes after
    /// shutdown. Until taken, events accumulate; drop the receiver to discard.
    pub fn take_events(&mut self) -> Option<UnboundedReceiver<Exchange>> {
        self.events.take()
    }

    /// Stop accepting, end sessions and streams, wait up to [`SHUTDOWN_GRACE`].
    pub async fn shutdown(mut self) {
        self.cancel.cancel();
        if let Some(mut task) = self.task.take()
            && tokio::time::timeout(SHUTDOWN_GRACE, &mut task)
                .await
                .is_err()
        {
            task.abort();
            let _ = task.await;
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // Dropping without shutdown still stops the server.
        self.cancel.cancel();
    }
}

/// Bind and start serving in the background.
pub async fn serve(config: Config) -> Result<Running, Error> {
    if !config.addr.ip().is_loopback() {
        return Err(Error::NotLoopback(config.addr));
    }
    if config.body_limit == 0 {
        return Err(Error::ZeroBodyLimit);
    }
    let token = match config.token {
        Some(t) if t.is_empty() => return Err(Error::BadToken("it is empty")),
        Some(t) if !t.bytes().all(|b| (0x21..=0x7e).contains(&b)) => {
            return Err(Error::BadToken(
                "it contains a space, control or non-ASCII character",
            ));
        }
        Some(t) => t,
        None => uuid::Uuid::new_v4().simple().to_string(),
    };
    let offered = offered_tools(config.tools.as_deref())?;

    let listener = tokio::net::TcpListener::bind(config.addr)
        .await
        .map_err(|source| Error::Bind {
            addr: config.addr,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| Error::Bind {
        addr: config.addr,
        source,
    })?;

    let cancel = CancellationToken::new();
    let (tx, rx) = unbounded_channel();
    let sink = Arc::new(Sink::new(tx));
    let tools = Arc::new(Tools::new(
        offered,
        config.screenshot_base64_len,
        config.workspace,
        config.staged,
    ));
    let in_flight = tools.in_flight();

    let rmcp_config = StreamableHttpServerConfig::default()
        .with_sse_keep_alive(None)
        .with_sse_retry(None)
        .with_legacy_session_mode(config.mode == ResponseMode::Sse)
        .with_json_response(config.mode == ResponseMode::Json)
        .with_cancellation_token(cancel.child_token())
        .with_allowed_hosts(["localhost", "127.0.0.1", "::1"])
        .with_allowed_origins([
            "http://localhost:*",
            "http://127.0.0.1:*",
            "http://[::1]:*",
            "https://localhost:*",
            "https://127.0.0.1:*",
            "https://[::1]:*",
        ])
        .with_max_request_body_bytes(config.body_limit);
    let mut sessions = LocalSessionManager::default();
    // No priming events: recordings should hold only the messages.
    sessions.session_config.sse_retry = None;
    let service = StreamableHttpService::new(
        move || Ok(UnityOps::new(tools.clone())),
        Arc::new(CountedSessions::new(sessions)),
        rmcp_config,
    );
    let gate = Arc::new(Gate {
        token: token.clone(),
        no_auth: config.no_auth,
        body_limit: config.body_limit,
        mode: config.mode,
        sink,
        nonce: uuid::Uuid::new_v4().simple().to_string(),
    });
    let app = Router::new()
        .route_service(MCP_PATH, service)
        .layer(axum::middleware::from_fn_with_state(gate, gate::guard));

    let limits = Limits {
        header_timeout: config.header_timeout,
        max_connections: config.max_connections.max(1),
    };
    let task = tokio::spawn(accept_loop(listener, app, limits, cancel.clone()));

    Ok(Running {
        url: format!("http://{addr}{MCP_PATH}"),
        token,
        addr,
        events: Some(rx),
        cancel,
        task: Some(task),
        in_flight,
    })
}

/// What one client may hold of the server.
#[derive(Debug, Clone, Copy)]
struct Limits {
    header_timeout: Duration,
    max_connections: usize,
}

/// Accepts connections while fewer than `max_connections` are open (the
/// rest wait in the listen backlog) and serves each (HTTP/1.1) with a
/// header-read timeout, and ends a connection that sends nothing at all in
/// that time: a client holding connections open, or dribbling headers,
/// costs a bounded number of them for a bounded time. On `cancel`: stops
/// accepting, lets open connections finish.
async fn accept_loop(
    listener: tokio::net::TcpListener,
    app: Router,
    limits: Limits,
    cancel: CancellationToken,
) {
    use hyper::server::conn::http1::Builder;
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;

    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    // HTTP/1.1, what MCP clients speak to a plain http:// URL
    let mut builder = Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
            () = cancel.cancelled() => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // out of descriptors and the like: a moment, then again
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            () = cancel.cancelled() => break,
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let builder = builder.clone();
        let watcher = graceful.watcher();
        let stop = cancel.clone();
        tokio::spawn(async move {
            // hyper's header timer starts at a connection's first byte: one
            // that never sends any (or is still silent at shutdown) ends here
            let mut first = [0u8; 1];
            let first_byte = tokio::select! {
                r = tokio::time::timeout(limits.header_timeout, stream.peek(&mut first)) => {
                    matches!(r, Ok(Ok(n)) if n > 0)
                }
                () = stop.cancelled() => false,
            };
            if !first_byte {
                drop(slot);
                return;
            }
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            let _ = watcher.watch(connection).await;
            drop(slot);
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

fn offered_tools(names: Option<&[String]>) -> Result<Vec<&'static ToolSpec>, Error> {
    let Some(names) = names else {
        return Ok(catalogue::catalogue().iter().collect());
    };
    names
        .iter()
        .map(|name| {
            catalogue::find(name).ok_or_else(|| Error::UnknownTool {
                name: name.clone(),
                known: catalogue::catalogue()
                    .iter()
                    .map(|s| s.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            })
        })
        .collect()
}
