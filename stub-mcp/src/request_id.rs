//! JSON-RPC ids echoed exactly as sent. rmcp keeps an id as an `i64` or a
//! string, so `2^70`, `1e400`, `1.0`, `-0` or a string spelt with escapes
//! would come back as another text (or be refused). A request whose id is
//! not already in the form rmcp writes goes to rmcp under a stand-in string
//! id, and the stand-in is put back, as the client's original text, into
//! the response body.

use std::collections::BTreeMap;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use http_body::Frame;
use serde_json::value::RawValue;

/// A request's id as the client spelt it and the stand-in rmcp sees instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StandIn {
    /// The stand-in as a JSON string literal, quotes included.
    quoted: String,
    /// The id's text as sent.
    original: String,
}

/// The body rmcp should be given, and the stand-in used, if the request's
/// id needs one. Anything that is not a JSON-RPC request object with such an
/// id is left as it is (the gate's own checks answer malformed bodies).
/// `stand_in` must be unique per request and never anything a client sends.
pub(crate) fn substitute(body: &[u8], stand_in: &str) -> Option<(Bytes, StandIn)> {
    let mut message: BTreeMap<String, Box<RawValue>> = serde_json::from_slice(body).ok()?;
    message.get("method")?;
    let original = message.get("id")?.get();
    if canonical(original) {
        return None;
    }
    let quoted = serde_json::to_string(stand_in).ok()?;
    let raw = RawValue::from_string(quoted.clone()).ok()?;
    let original = original.to_string();
    message.insert("id".to_string(), raw);
    let body = serde_json::to_vec(&message).ok()?;
    Some((Bytes::from(body), StandIn { quoted, original }))
}

/// Whether rmcp writes this id back with the same text: an integer in
/// `i64` range in its shortest form, or a string without needless escapes.
/// `null`, objects and the like stay as sent too (rmcp refuses them).
fn canonical(id: &str) -> bool {
    match id.as_bytes().first() {
        Some(b'"') => serde_json::from_str::<String>(id)
            .is_ok_and(|s| serde_json::to_string(&s).is_ok_and(|back| back == id)),
        Some(b'-' | b'0'..=b'9') => id.parse::<i64>().is_ok_and(|n| n.to_string() == id),
        _ => true,
    }
}

/// `response` with the stand-in replaced by the original id text. A body
/// of known length is rewritten whole (and its `Content-Length` corrected);
/// a stream is rewritten as it passes.
pub(crate) async fn restore(response: Response, stand_in: StandIn) -> Response {
    let (mut parts, body) = response.into_parts();
    if parts.headers.contains_key(header::CONTENT_LENGTH) {
        let bytes = match axum::body::to_bytes(body, usize::MAX).await {
            Ok(bytes) => bytes,
            Err(e) => {
                return Response::from_parts(
                    parts,
                    Body::from_stream(futures::stream::once(async move { Err::<Bytes, _>(e) })),
                );
            }
        };
        let mut restorer = Restorer::new(stand_in);
        let mut whole = restorer.push(&bytes);
        whole.extend_from_slice(&restorer.finish());
        parts
            .headers
            .insert(header::CONTENT_LENGTH, HeaderValue::from(whole.len()));
        return Response::from_parts(parts, Body::from(whole));
    }
    Response::from_parts(
        parts,
        Body::new(RestoredBody {
            inner: body,
            restorer: Restorer::new(stand_in),
            done: false,
        }),
    )
}

/// Replaces every stand-in in a byte stream, holding back a tail that may
/// be the start of one cut across chunks.
struct Restorer {
    stand_in: StandIn,
    carry: Vec<u8>,
}

impl Restorer {
    fn new(stand_in: StandIn) -> Self {
        Restorer {
            stand_in,
            carry: Vec::new(),
        }
    }

    /// What of the stream so far can be passed on.
    fn push(&mut self, chunk: &[u8]) -> Vec<u8> {
        let mut text = std::mem::take(&mut self.carry);
        text.extend_from_slice(chunk);
        let needle = self.stand_in.quoted.as_bytes();
        let mut out = Vec::with_capacity(text.len());
        let mut at = 0;
        while let Some(found) = find(&text[at..], needle) {
            out.extend_from_slice(&text[at..at + found]);
            out.extend_from_slice(self.stand_in.original.as_bytes());
            at += found + needle.len();
        }
        let rest = &text[at..];
        let keep = (1..needle.len().min(rest.len() + 1))
            .rev()
            .find(|&n| rest.ends_with(&needle[..n]))
            .unwrap_or(0);
        out.extend_from_slice(&rest[..rest.len() - keep]);
        self.carry = rest[rest.len() - keep..].to_vec();
        out
    }

    /// The held-back tail, at the end of the stream.
    fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.carry)
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

struct RestoredBody {
    inner: Body,
    restorer: Restorer,
    done: bool,
}

impl HttpBody for RestoredBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            match std::task::ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => {
                        let out = this.restorer.push(&data);
                        if !out.is_empty() {
                            return Poll::Ready(Some(Ok(Frame::data(Bytes::from(out)))));
                        }
                    }
                    Err(frame) => return Poll::Ready(Some(Ok(frame))),
                },
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                None => {
                    this.done = true;
                    let tail = this.restorer.finish();
                    if !tail.is_empty() {
                        return Poll::Ready(Some(Ok(Frame::data(Bytes::from(tail)))));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ids_rmcp_would_respell_get_a_stand_in() {
        for (id, needs) in [
            ("1", false),
            ("-7", false),
            ("9223372036854775807", false),
            ("\"abc\"", false),
            ("9223372036854775808", true),
            ("123456789012345678901234567890", true),
            ("1e400", true),
            ("1.0", true),
            ("-0", true),
            ("\"\\u0041\"", true),
            ("\"a\\/b\"", true),
        ] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            let got = substitute(body.as_bytes(), "stand-in-1");
            assert_eq!(got.is_some(), needs, "{id}");
            if let Some((rewritten, stand_in)) = got {
                assert_eq!(stand_in.original, id);
                let v: serde_json::Value = serde_json::from_slice(&rewritten).unwrap();
                assert_eq!(v["id"], "stand-in-1");
                assert_eq!(v["method"], "ping");
            }
        }
    }

    #[test]
    fn responses_notifications_and_non_objects_are_left_alone() {
        for body in [
            r#"{"jsonrpc":"2.0","id":1e400,"result":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"[{"jsonrpc":"2.0","id":1e400,"method":"ping"}]"#,
            r#"{"jsonrpc":"2.0","id":1e400,"method":"#,
        ] {
            assert!(substitute(body.as_bytes(), "s").is_none(), "{body}");
        }
    }

    #[test]
    fn a_stand_in_cut_across_chunks_is_restored() {
        let stand_in = StandIn {
            quoted: "\"sub-42\"".to_string(),
            original: "1e400".to_string(),
        };
        let whole = "data: {\"id\":\"sub-42\",\"x\":\"\\\"sub-4\"}\n\n\"sub-";
        let expected = "data: {\"id\":1e400,\"x\":\"\\\"sub-4\"}\n\n\"sub-";
        for cut in 0..whole.len() {
            let mut r = Restorer::new(stand_in.clone());
            let mut out = r.push(&whole.as_bytes()[..cut]);
            out.extend(r.push(&whole.as_bytes()[cut..]));
            out.extend(r.finish());
            assert_eq!(String::from_utf8(out).unwrap(), expected, "cut at {cut}");
        }
    }
}
