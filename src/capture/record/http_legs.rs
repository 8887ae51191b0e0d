//! The recorder's HTTP legs (stub-mcp's and the model server's exchanges)
//! as timeline events, and what the recorder reads from them while the run
//! goes on (tool calls, the MCP methods the agent used, off-script requests).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::capture::acp_client::Tapped;
use crate::capture::model_server::ModelExchange;
use crate::corpus::recording::{Dir, Http, Leg};

/// The JSON-RPC method of an MCP request (`tools/list`, `tools/call`);
/// `None` for responses, notifications-less bodies and non-JSON (a GET).
pub(crate) fn mcp_method(ex: &stub_mcp::Exchange) -> Option<String> {
    match ex {
        stub_mcp::Exchange::Request { body, .. } => serde_json::from_str::<Value>(body)
            .ok()?
            .get("method")?
            .as_str()
            .map(str::to_owned),
        stub_mcp::Exchange::Response { .. } => None,
    }
}

/// How many requests of each MCP method stub-mcp has received so far.
pub type McpMethods = BTreeMap<String, u64>;

pub(super) fn mcp_event(ex: stub_mcp::Exchange) -> Tapped {
    http_event(Leg::Mcp, ex)
}

pub(super) fn model_event(ex: ModelExchange) -> Tapped {
    match ex {
        ModelExchange::Http(ex) => http_event(Leg::Model, ex),
        ModelExchange::Note { text, .. } | ModelExchange::OffScript { text, .. } => Tapped {
            leg: Leg::Harness,
            dir: Dir::Note,
            proc: 0,
            raw: if text.starts_with("model server") {
                text
            } else {
                format!("model server: {text}")
            },
            http: None,
        },
    }
}

/// One half of an HTTP exchange on `leg` (the MCP or the model leg) as a
/// timeline event.
fn http_event(leg: Leg, ex: stub_mcp::Exchange) -> Tapped {
    match ex {
        stub_mcp::Exchange::Request {
            method,
            path,
            headers,
            body,
            ..
        } => Tapped {
            leg,
            dir: Dir::Request,
            proc: 0,
            raw: body,
            http: Some(http(Some(method), Some(path), None, headers)),
        },
        stub_mcp::Exchange::Response {
            status,
            headers,
            body,
            ..
        } => Tapped {
            leg,
            dir: Dir::Response,
            proc: 0,
            raw: body,
            http: Some(http(None, None, Some(status), headers)),
        },
    }
}

fn http(
    method: Option<String>,
    path: Option<String>,
    status: Option<u16>,
    headers: Vec<(String, String)>,
) -> Http {
    let mut map = BTreeMap::new();
    for (k, v) in headers {
        map.entry(k.to_ascii_lowercase())
            .and_modify(|e: &mut String| {
                e.push_str(", ");
                e.push_str(&v);
            })
            .or_insert(v);
    }
    Http {
        method,
        path,
        status,
        headers: map,
        extra: Default::default(),
    }
}
