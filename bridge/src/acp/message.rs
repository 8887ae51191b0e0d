//! An agent line read once as what JSON-RPC makes it: a request to the
//! client, a notification, or an answer to one of the client's requests.
//! (The frames a stream is made of have faster readers of their own:
//! `chunk_frame`, `call::frame`, `update_frame`.) Reading is tolerant: an
//! id of any JSON type is kept to be echoed verbatim, params of any shape
//! are the handler's to judge, and a line that is none of the three is
//! [`Neither`], never an error.

use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::acp::rpc_error::RpcError;

/// A request's id as its sender wrote it, echoed verbatim in the answer.
/// JSON-RPC allows a number or a string; another type is kept as it came.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum RequestId {
    Number(serde_json::Number),
    Text(String),
    Other(Value),
}

impl RequestId {
    /// The id of a frame's `id` field; `None` for `null` (no id).
    pub fn read(id: Value) -> Option<RequestId> {
        match id {
            Value::Null => None,
            Value::Number(n) => Some(RequestId::Number(n)),
            Value::String(s) => Some(RequestId::Text(s)),
            other => Some(RequestId::Other(other)),
        }
    }

    /// The id as one of the client's own (numbers from 0).
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            RequestId::Number(n) => n.as_u64(),
            _ => None,
        }
    }
}

/// Any value, `null` included, kept to be echoed.
impl From<Value> for RequestId {
    fn from(id: Value) -> RequestId {
        match id {
            Value::Null => RequestId::Other(Value::Null),
            id => RequestId::read(id).unwrap_or(RequestId::Other(Value::Null)),
        }
    }
}

impl From<u64> for RequestId {
    fn from(id: u64) -> RequestId {
        RequestId::Number(id.into())
    }
}

/// As JSON, the way the sender wrote it.
impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::Text(s) => write!(f, "{}", Value::String(s.clone())),
            RequestId::Other(v) => write!(f, "{v}"),
        }
    }
}

/// One agent line as JSON-RPC reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentMessage {
    /// A request to the client, answered once.
    Request {
        id: RequestId,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// An answer to one of the client's requests: its `result` (`null`
    /// when it has none) and its `error` unless that is absent or `null`.
    Response {
        id: RequestId,
        result: Value,
        error: Option<RpcError>,
    },
}

/// A JSON object that has neither a string `method` nor an `id`.
#[derive(Debug, Clone, PartialEq)]
pub struct Neither;

impl AgentMessage {
    /// Reads a frame (a JSON object), taking its parts out of it.
    pub fn read(mut frame: Map<String, Value>) -> Result<AgentMessage, Neither> {
        let method = match frame.remove("method") {
            Some(Value::String(m)) => Some(m),
            _ => None,
        };
        let id = frame.remove("id").and_then(RequestId::read);
        let mut take = |key: &str| frame.remove(key).unwrap_or(Value::Null);
        Ok(match (method, id) {
            (Some(method), Some(id)) => AgentMessage::Request {
                id,
                method,
                params: take("params"),
            },
            (Some(method), None) => AgentMessage::Notification {
                method,
                params: take("params"),
            },
            (None, Some(id)) => AgentMessage::Response {
                id,
                result: take("result"),
                error: Some(take("error"))
                    .filter(|e| !e.is_null())
                    .map(|e| RpcError::read(&e)),
            },
            (None, None) => return Err(Neither),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(v: Value) -> Result<AgentMessage, Neither> {
        match v {
            Value::Object(map) => AgentMessage::read(map),
            _ => unreachable!("the cases are objects"),
        }
    }

    #[test]
    fn a_frame_reads_as_request_notification_or_response_by_its_method_and_id() {
        let cases = [
            (
                json!({"jsonrpc": "2.0", "id": 3, "method": "fs/read_text_file", "params": {"path": "/a"}}),
                Ok(AgentMessage::Request {
                    id: 3.into(),
                    method: "fs/read_text_file".into(),
                    params: json!({"path": "/a"}),
                }),
            ),
            (
                json!({"jsonrpc": "2.0", "method": "_x.ai/ping"}),
                Ok(AgentMessage::Notification {
                    method: "_x.ai/ping".into(),
                    params: Value::Null,
                }),
            ),
            // a `null` id is no id
            (
                json!({"id": null, "method": "m", "params": [1]}),
                Ok(AgentMessage::Notification {
                    method: "m".into(),
                    params: json!([1]),
                }),
            ),
            (
                json!({"id": "a", "result": {"x": 1}, "error": null}),
                Ok(AgentMessage::Response {
                    id: RequestId::Text("a".into()),
                    result: json!({"x": 1}),
                    error: None,
                }),
            ),
            (
                json!({"id": 1, "error": {"code": -32000}}),
                Ok(AgentMessage::Response {
                    id: 1.into(),
                    result: Value::Null,
                    error: Some(RpcError::read(&json!({"code": -32000}))),
                }),
            ),
            // a method that is no string is no method
            (
                json!({"id": [1], "method": 7}),
                Ok(AgentMessage::Response {
                    id: RequestId::Other(json!([1])),
                    result: Value::Null,
                    error: None,
                }),
            ),
            (json!({"jsonrpc": "2.0"}), Err(Neither)),
        ];
        for (frame, want) in cases {
            assert_eq!(read(frame.clone()), want, "{frame}");
        }
    }

    #[test]
    fn an_id_is_written_back_as_it_came() {
        for id in [
            json!(7),
            json!("x\"y"),
            json!(1.5),
            json!({"a": [1]}),
            json!(true),
        ] {
            let read = RequestId::read(id.clone()).unwrap();
            assert_eq!(serde_json::to_value(&read).unwrap(), id);
            assert_eq!(read.to_string(), id.to_string());
        }
        assert_eq!(RequestId::read(Value::Null), None);
        assert_eq!(
            serde_json::to_value(RequestId::from(Value::Null)).unwrap(),
            Value::Null
        );
        assert_eq!(RequestId::from(4).as_u64(), Some(4));
        assert_eq!(RequestId::Text("4".into()).as_u64(), None);
    }
}
