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
pub use recording_format::placeholder::REDACTED;

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
    redact_headers_where(headers, is_secret)
}

/// Header list in arrival order with the values of the headers `is_secret`
/// names replaced by [`REDACTED`]. Public so that other HTTP taps of the
/// recording (the scripted model server) publish headers the same way, with
/// their own idea of what is secret.
pub fn redact_headers_where(
    headers: &HeaderMap,
    is_secret: impl Fn(&str) -> bool,
) -> Vec<(String, String)> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use futures::SinkExt;
    use tokio::sync::mpsc::unbounded_channel;

    #[tokio::test]
    async fn tee_forwards_each_frame_at_once_and_publishes_only_at_the_end() {
        let (events_tx, mut events) = unbounded_channel();
        let sink = Arc::new(Sink::new(events_tx));
        let (mut frames, stream) =
            futures::channel::mpsc::channel::<Result<Bytes, std::io::Error>>(4);
        let mut body = TeeBody::new(
            Body::from_stream(stream),
            sink,
            7,
            200,
            vec![("content-type".into(), "text/event-stream".into())],
        );

        frames
            .send(Ok(Bytes::from_static(b"data: one\n\n")))
            .await
            .unwrap();
        let first = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await;
        assert_eq!(
            first.unwrap().unwrap().into_data().unwrap(),
            Bytes::from_static(b"data: one\n\n")
        );
        assert!(
            events.try_recv().is_err(),
            "nothing is published while the stream is open"
        );

        frames
            .send(Ok(Bytes::from_static(b"data: two\n\n")))
            .await
            .unwrap();
        drop(frames);
        let second = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await;
        assert_eq!(
            second.unwrap().unwrap().into_data().unwrap(),
            Bytes::from_static(b"data: two\n\n")
        );
        let end = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await;
        assert!(end.is_none());

        match events.try_recv().expect("published at the end") {
            Exchange::Response {
                id, status, body, ..
            } => {
                assert_eq!((id, status), (7, 200));
                assert_eq!(body, "data: one\n\ndata: two\n\n");
            }
            other => panic!("expected a response, got {other:?}"),
        }
        drop(body);
        assert!(events.try_recv().is_err(), "published exactly once");
    }

    #[tokio::test]
    async fn a_body_dropped_midway_is_published_with_what_passed() {
        let (events_tx, mut events) = unbounded_channel();
        let sink = Arc::new(Sink::new(events_tx));
        let (mut frames, stream) =
            futures::channel::mpsc::channel::<Result<Bytes, std::io::Error>>(4);
        let mut body = TeeBody::new(Body::from_stream(stream), sink, 3, 200, Vec::new());
        frames
            .send(Ok(Bytes::from_static(b"partial")))
            .await
            .unwrap();
        let _ = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await;
        drop(body);
        assert_eq!(events.try_recv().unwrap().body(), "partial");
    }

    #[test]
    fn secrets_are_redacted_and_other_headers_kept_in_order() {
        let mut headers = HeaderMap::new();
        headers.insert("host", "127.0.0.1:1".parse().unwrap());
        headers.insert("authorization", "Bearer s3cret".parse().unwrap());
        headers.insert("x-api-key", "k".parse().unwrap());
        let out = redact_headers(&headers);
        assert_eq!(
            out,
            vec![
                ("host".to_string(), "127.0.0.1:1".to_string()),
                ("authorization".to_string(), REDACTED.to_string()),
                ("x-api-key".to_string(), REDACTED.to_string()),
            ]
        );
    }

    #[test]
    fn log_lines_have_a_fixed_shape() {
        let at = UNIX_EPOCH + std::time::Duration::from_millis(1234);
        let request = Exchange::Request {
            id: 1,
            method: "POST".into(),
            path: "/mcp".into(),
            headers: vec![("host".into(), "h".into())],
            body: "{}".into(),
            at,
        };
        assert_eq!(
            request.to_json().to_string(),
            r#"{"type":"request","id":1,"at_ms":1234,"method":"POST","path":"/mcp","headers":[["host","h"]],"body":"{}"}"#
        );
        let response = Exchange::Response {
            id: 1,
            status: 202,
            headers: vec![],
            body: String::new(),
            at,
        };
        assert_eq!(
            response.to_json().to_string(),
            r#"{"type":"response","id":1,"at_ms":1234,"status":202,"headers":[],"body":""}"#
        );
    }
}
