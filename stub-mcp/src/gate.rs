//! The axum middleware in front of rmcp: event tap, Host/Origin, bearer
//! token, body limit, JSON-RPC parse errors, and the answers a legacy server
//! gives (`server/discover` unknown, GET not offered).
//!
//! Checks run in this order, first failure answers: Host (400/403), Origin
//! (403), Authorization (401), all three before the body is read; then body
//! size (413) or a body that stalls (408),
//! then for POST /mcp: JSON
//! (-32700), JSON-RPC shape (-32600), `server/discover` (-32601). A POST that
//! passes but lacks the Accept / Content-Type rmcp insists on is served anyway.
//! A request's id reaches the client's answer with the text it was sent in
//! ([`request_id`]).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header, request::Parts};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::{Value, json};

use crate::config::ResponseMode;
use crate::exchange::{Exchange, Sink, TeeBody, redact_headers};
use crate::request_id;

/// The one path the server answers MCP on.
pub const MCP_PATH: &str = "/mcp";

/// Shared by every request.
#[derive(Debug)]
pub(crate) struct Gate {
    pub(crate) token: String,
    /// Whether requests without the token are served ([`crate::Config::no_auth`]).
    pub(crate) no_auth: bool,
    pub(crate) body_limit: usize,
    pub(crate) mode: ResponseMode,
    pub(crate) sink: Arc<Sink>,
    /// Drawn per server: makes the stand-in ids of [`request_id`] ones no
    /// client can send.
    pub(crate) nonce: String,
}

enum BodyRead {
    Complete(Bytes),
    TooLarge(Vec<u8>),
    TimedOut(Vec<u8>),
    Failed(String, Vec<u8>),
}

/// The middleware: publish the request, check it, run rmcp, tap the response.
pub(crate) async fn guard(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    let id = gate.sink.next_id();
    let (parts, body) = request.into_parts();
    // Host, Origin and the token first: a client without the token gets
    // its answer before a byte of its body is read, so it cannot make the
    // server hold a body of its choosing.
    if let Some(early) = refuse_headers(&gate, &parts) {
        drop(body);
        publish_request(&gate, id, &parts, b"");
        return tap(early, id, &gate.sink);
    }
    let read = read_bounded(body, gate.body_limit, BODY_READ_TIMEOUT).await;
    let received: &[u8] = match &read {
        BodyRead::Complete(b) => b,
        BodyRead::TooLarge(prefix) | BodyRead::TimedOut(prefix) | BodyRead::Failed(_, prefix) => {
            prefix
        }
    };
    publish_request(&gate, id, &parts, received);
    let mut read = read;
    let mut stand_in = None;
    if let BodyRead::Complete(bytes) = &read
        && parts.method == Method::POST
        && parts.uri.path() == MCP_PATH
        && let Some((rewritten, used)) =
            request_id::substitute(bytes, &format!("stub-mcp-{}-{id}", gate.nonce))
    {
        read = BodyRead::Complete(rewritten);
        stand_in = Some(used);
    }
    let response = match refuse(&gate, &parts, &read) {
        Some(early) => early,
        None => {
            let mut parts = parts;
            if parts.method == Method::POST && parts.uri.path() == MCP_PATH {
                tolerate_media_types(&mut parts.headers);
            }
            let bytes = match read {
                BodyRead::Complete(b) => b,
                _ => Bytes::new(),
            };
            let hung_up = HangUp {
                sink: gate.sink.clone(),
                id,
                armed: true,
            };
            let response = next
                .run(Request::from_parts(parts, Body::from(bytes)))
                .await;
            hung_up.disarm();
            response
        }
    };
    let response = match stand_in {
        Some(stand_in) => request_id::restore(response, stand_in).await,
        None => response,
    };
    tap(response, id, &gate.sink)
}

/// Puts the request on the event tap (with what of its body was read).
fn publish_request(gate: &Gate, id: u64, parts: &Parts, body: &[u8]) {
    gate.sink.publish(Exchange::Request {
        id,
        method: parts.method.to_string(),
        path: parts
            .uri
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_else(|| parts.uri.path().to_string()),
        headers: redact_headers(&parts.headers),
        body: String::from_utf8_lossy(body).into_owned(),
        at: SystemTime::now(),
    });
}

/// rmcp answers 406/415 unless a POST accepts both JSON and SSE and says it
/// carries JSON. The body is already known to be JSON-RPC, so a client that
/// omits either header is served anyway: the recording wants the agent's
/// behaviour, not a transport quarrel. The event keeps the headers as sent.
fn tolerate_media_types(headers: &mut HeaderMap) {
    let accept = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>()
        .join(", ")
        .to_ascii_lowercase();
    let wants = |essence: &str| {
        accept
            .split(',')
            .any(|entry| entry.split(';').next().is_some_and(|e| e.trim() == essence))
    };
    if !(wants("application/json") && wants("text/event-stream")) {
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
    }
    let json_content = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|e| e.trim().eq_ignore_ascii_case("application/json"))
        });
    if !json_content {
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
    }
}

/// Status recorded when the client went away before any response existed
/// (nginx's "client closed request").
pub const CLIENT_CLOSED: u16 = 499;

/// Publishes a [`CLIENT_CLOSED`] response if the request future is dropped
/// before rmcp answered, so no request is left without its response event.
struct HangUp {
    sink: Arc<Sink>,
    id: u64,
    armed: bool,
}

impl HangUp {
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for HangUp {
    fn drop(&mut self) {
        if self.armed {
            self.sink.publish(Exchange::Response {
                id: self.id,
                status: CLIENT_CLOSED,
                headers: Vec::new(),
                body: String::new(),
                at: SystemTime::now(),
            });
        }
    }
}

fn tap(response: Response, id: u64, sink: &Arc<Sink>) -> Response {
    let (parts, body) = response.into_parts();
    let headers = redact_headers(&parts.headers);
    let body = Body::new(TeeBody::new(
        body,
        sink.clone(),
        id,
        parts.status.as_u16(),
        headers,
    ));
    Response::from_parts(parts, body)
}

/// How long a client may take to send its whole body.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

async fn read_bounded(mut body: Body, limit: usize, patience: Duration) -> BodyRead {
    let mut collected: Vec<u8> = Vec::new();
    let deadline = tokio::time::Instant::now() + patience;
    loop {
        let frame = std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx));
        let Ok(frame) = tokio::time::timeout_at(deadline, frame).await else {
            return BodyRead::TimedOut(collected);
        };
        match frame {
            None => return BodyRead::Complete(Bytes::from(collected)),
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    if data.len() > limit.saturating_sub(collected.len()) {
                        let room = limit.saturating_sub(collected.len());
                        collected.extend_from_slice(&data[..room]);
                        return BodyRead::TooLarge(collected);
                    }
                    collected.extend_from_slice(data);
                }
            }
            Some(Err(e)) => return BodyRead::Failed(e.to_string(), collected),
        }
    }
}

/// The answer for a request refused on its headers alone (Host, Origin,
/// the bearer token), if any.
fn refuse_headers(gate: &Gate, parts: &Parts) -> Option<Response> {
    if let Some(response) = refuse_host(&parts.headers).or_else(|| refuse_origin(&parts.headers)) {
        return Some(response);
    }
    if !gate.no_auth && !authorized(&parts.headers, &gate.token) {
        let mut response = text(
            StatusCode::UNAUTHORIZED,
            "Unauthorized: a valid Authorization: Bearer <token> header is required",
        );
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"stub-mcp\""),
        );
        return Some(response);
    }
    None
}

/// The early answer for a request that passed [`refuse_headers`] but must
/// not reach rmcp, if any.
fn refuse(gate: &Gate, parts: &Parts, read: &BodyRead) -> Option<Response> {
    let bytes = match read {
        BodyRead::Complete(b) => b,
        BodyRead::TooLarge(_) => {
            return Some(text(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!(
                    "Payload Too Large: request body exceeds {} bytes",
                    gate.body_limit
                ),
            ));
        }
        BodyRead::TimedOut(_) => {
            return Some(text(
                StatusCode::REQUEST_TIMEOUT,
                &format!(
                    "Request Timeout: the body did not arrive within {} s",
                    BODY_READ_TIMEOUT.as_secs()
                ),
            ));
        }
        BodyRead::Failed(e, _) => {
            return Some(text(
                StatusCode::BAD_REQUEST,
                &format!("Bad Request: could not read the body: {e}"),
            ));
        }
    };
    if parts.uri.path() != MCP_PATH {
        return None;
    }
    match parts.method {
        Method::GET => {
            // The stub never sends unsolicited messages, and an idle standalone
            // stream would make recordings depend on timing.
            let allow = match gate.mode {
                ResponseMode::Sse => "POST, DELETE",
                ResponseMode::Json => "POST",
            };
            let mut response = text(
                StatusCode::METHOD_NOT_ALLOWED,
                "Method Not Allowed: this server offers no standalone SSE stream",
            );
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static(allow));
            Some(response)
        }
        Method::POST => refuse_json_rpc(bytes),
        _ => None,
    }
}

fn refuse_json_rpc(bytes: &[u8]) -> Option<Response> {
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            return Some(jsonrpc_error(
                StatusCode::BAD_REQUEST,
                Value::Null,
                -32700,
                format!("Parse error: {e}"),
            ));
        }
    };
    if value.is_array() {
        return Some(jsonrpc_error(
            StatusCode::BAD_REQUEST,
            Value::Null,
            -32600,
            "Invalid Request: JSON-RPC batches are not supported".to_string(),
        ));
    }
    let id = value
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned()
        .unwrap_or(Value::Null);
    if let Err(e) = serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(value.clone()) {
        return Some(jsonrpc_error(
            StatusCode::BAD_REQUEST,
            id,
            -32600,
            format!("Invalid Request: {e}"),
        ));
    }
    if value.get("method").and_then(Value::as_str) == Some("server/discover") && !id.is_null() {
        // What a server that predates the discover lifecycle answers: the
        // client then falls back to `initialize`.
        return Some(jsonrpc_error(
            StatusCode::OK,
            id,
            -32601,
            "Method not found: server/discover (this server uses the initialize lifecycle)"
                .to_string(),
        ));
    }
    None
}

fn refuse_host(headers: &HeaderMap) -> Option<Response> {
    let Some(host) = headers.get(header::HOST) else {
        return Some(text(
            StatusCode::BAD_REQUEST,
            "Bad Request: missing Host header",
        ));
    };
    let Ok(host) = host.to_str() else {
        return Some(text(
            StatusCode::BAD_REQUEST,
            "Bad Request: Host header is not text",
        ));
    };
    match host.parse::<axum::http::uri::Authority>() {
        Err(_) => Some(text(
            StatusCode::BAD_REQUEST,
            &format!("Bad Request: malformed Host header {host:?}"),
        )),
        Ok(authority) if is_loopback_host(authority.host()) => None,
        Ok(_) => Some(text(
            StatusCode::FORBIDDEN,
            &format!("Forbidden: Host {host:?} is not a loopback name"),
        )),
    }
}

fn refuse_origin(headers: &HeaderMap) -> Option<Response> {
    let origin = headers.get(header::ORIGIN)?;
    let loopback = origin
        .to_str()
        .ok()
        .and_then(|o| o.parse::<axum::http::Uri>().ok())
        .is_some_and(|uri| {
            matches!(uri.scheme_str(), Some("http" | "https"))
                && uri.host().is_some_and(is_loopback_host)
        });
    (!loopback).then(|| {
        text(
            StatusCode::FORBIDDEN,
            &format!(
                "Forbidden: Origin {:?} is not a loopback origin",
                String::from_utf8_lossy(origin.as_bytes())
            ),
        )
    })
}

fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn authorized(headers: &HeaderMap, token: &str) -> bool {
    let Some(value) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let Some((scheme, presented)) = value.trim().split_once(' ') else {
        return false;
    };
    scheme.eq_ignore_ascii_case("bearer")
        && constant_time_eq(presented.trim().as_bytes(), token.as_bytes())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn text(status: StatusCode, message: &str) -> Response {
    let mut response = Response::new(Body::from(message.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn jsonrpc_error(status: StatusCode, id: Value, code: i64, message: String) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    #[tokio::test]
    async fn a_stalled_body_times_out_with_what_arrived() {
        let stream =
            futures::stream::iter([Ok::<_, std::io::Error>(Bytes::from_static(b"{\"json"))])
                .chain(futures::stream::pending());
        let read = read_bounded(Body::from_stream(stream), 1024, Duration::from_millis(50)).await;
        assert!(matches!(read, BodyRead::TimedOut(ref got) if got == b"{\"json"));
    }

    #[tokio::test]
    async fn a_body_is_cut_at_the_limit() {
        let read = read_bounded(Body::from("0123456789"), 4, Duration::from_secs(5)).await;
        assert!(matches!(read, BodyRead::TooLarge(ref got) if got == b"0123"));
        let read = read_bounded(Body::from("0123"), 4, Duration::from_secs(5)).await;
        assert!(matches!(read, BodyRead::Complete(ref got) if &got[..] == b"0123"));
    }

    #[test]
    fn loopback_names_are_recognised() {
        for (host, ok) in [
            ("127.0.0.1", true),
            ("localhost", true),
            ("LOCALHOST", true),
            ("[::1]", true),
            ("127.0.0.2", true),
            ("10.0.0.1", false),
            ("example.com", false),
            ("localhost.example.com", false),
        ] {
            assert_eq!(is_loopback_host(host), ok, "{host}");
        }
    }

    #[test]
    fn bearer_tokens_are_compared_exactly() {
        let mut headers = HeaderMap::new();
        for (value, ok) in [
            ("Bearer tok", true),
            ("bearer tok", true),
            ("Bearer tok2", false),
            ("Basic tok", false),
            ("tok", false),
        ] {
            headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
            assert_eq!(authorized(&headers, "tok"), ok, "{value}");
        }
    }
}
