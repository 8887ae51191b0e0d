//! The event tap: every HTTP exchange is published to a sink the recorder reads.
//!
//! A request is published once its body has arrived; its response once the
//! response body is complete (for SSE, when the stream ends or the client goes
//! away). The response body is forwarded frame by frame and copied as it passes,
//! never buffered before forwarding.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes, HttpBody};
use axum::http::HeaderMap;
use http_body::{Frame, SizeHint};
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;

/// What replaces secret header values.
pub const REDACTED: &str = "<redacted>";

/// One half of an HTTP exchange. `id` pairs a response with its request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exchange {
    Request {
        id: u64,
        method: String,
        /// Path and query.
        path: String,
        /// Lower-case names in arrival order; Authorization values redacted.
        headers: Vec<(String, String)>,
        /// The body as received (lossy UTF-8; at most the body limit).
        body: String,
        at: SystemTime,
    },
    Response {
        id: u64,
        status: u16,
        headers: Vec<(String, String)>,
        /// The whole body; for SSE the whole stream text.
        body: String,
        at: SystemTime,
    },
}

impl Exchange {
    pub fn id(&self) -> u64 {
        match self {
            Exchange::Request { id, .. } | Exchange::Response { id, .. } => *id,
        }
    }

    pub fn at(&self) -> SystemTime {
        match self {
            Exchange::Request { at, .. } | Exchange::Response { at, .. } => *at,
        }
    }

    pub fn body(&self) -> &str {
        match self {
            Exchange::Request { body, .. } | Exchange::Response { body, .. } => body,
        }
    }

    /// One JSON object, as the binary's `--log` writes it (one per line).
    pub fn to_json(&self) -> Value {
        let ms = |at: &SystemTime| {
            at.duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0)
        };
        let pairs =
            |h: &[(String, String)]| h.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>();
        match self {
            Exchange::Request {
                id,
                method,
                path,
                headers,
                body,
                at,
            } => json!({
                "type": "request", "id": id, "at_ms": ms(at), "method": method, "path": path,
                "headers": pairs(headers), "body": body,
            }),
            Exchange::Response {
                id,
                status,
                headers,
                body,
                at,
            } => json!({
                "type": "response", "id": id, "at_ms": ms(at), "status": status,
                "headers": pairs(headers), "body": body,
            }),
        }
    }
}

/// Where exchanges go. Cloned into every request; a closed receiver is fine.
#[derive(Debug)]
pub(crate) struct Sink {
    tx: UnboundedSender<Exchange>,
    next_id: AtomicU64,
}

impl Sink {
    pub(crate) fn new(tx: UnboundedSender<Exchange>) -> Self {
        Sink {
            tx,
            next_id: AtomicU64::new(1),
        }
    }

    pub(crate) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn publish(&self, exchange: Exchange) {
        // Nobody listening is not an error: the server must keep serving.
        let _ = self.tx.send(exchange);
    }
}

/// Header list with secrets redacted.
pub(crate) fn redact_headers(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            let name = name.as_str().to_string();
            let value = if is_secret(&name) {
                REDACTED.to_string()
            } else {
                String::from_utf8_lossy(value.as_bytes()).into_owned()
            };
            (name, value)
        })
        .collect()
}

fn is_secret(name: &str) -> bool {
    matches!(
        name,
        "authorization" | "proxy-authorization" | "cookie" | "x-api-key"
    )
}

/// A response body that copies what it forwards and publishes it when done.
pub(crate) struct TeeBody {
    inner: Body,
    captured: Vec<u8>,
    pending: Option<PendingResponse>,
}

struct PendingResponse {
    sink: Arc<Sink>,
    id: u64,
    status: u16,
    headers: Vec<(String, String)>,
}

impl TeeBody {
    pub(crate) fn new(
        inner: Body,
        sink: Arc<Sink>,
        id: u64,
        status: u16,
        headers: Vec<(String, String)>,
    ) -> Self {
        TeeBody {
            inner,
            captured: Vec::new(),
            pending: Some(PendingResponse {
                sink,
                id,
                status,
                headers,
            }),
        }
    }

    fn finish(&mut self) {
        if let Some(p) = self.pending.take() {
            let body = String::from_utf8_lossy(&std::mem::take(&mut self.captured)).into_owned();
            p.sink.publish(Exchange::Response {
                id: p.id,
                status: p.status,
                headers: p.headers,
                body,
                at: SystemTime::now(),
            });
        }
    }
}

impl HttpBody for TeeBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.captured.extend_from_slice(data);
                }
                if this.inner.is_end_stream() {
                    this.finish();
                }
            }
            Poll::Ready(Some(Err(_))) | Poll::Ready(None) => this.finish(),
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for TeeBody {
    fn drop(&mut self) {
        // Empty bodies are never polled, and a client may hang up mid-stream:
        // either way the exchange still lands in the recording.
        self.finish();
    }
}
