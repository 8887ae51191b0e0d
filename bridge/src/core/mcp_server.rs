//! The panel's MCP server as the session sees it: the endpoint registered
//! with the agent (the launch's, or the one picked once a panel
//! `initialize` named servers), the set that `initialize` named, and what
//! showed whether the agent reaches it. `system`/`init`, `mcp_status` and
//! the `initialize` answer all report from here.

use serde_json::{Map, Value};

use crate::launch::McpEndpoint;
use crate::stream_json::ServerStatus;

#[derive(Debug)]
pub(super) struct McpServer {
    endpoint: Option<McpEndpoint>,
    /// The set a panel `initialize` named, as it came, once taken.
    from_initialize: Option<Map<String, Value>>,
    /// The endpoint is that set's (the launch names no different server of
    /// that name).
    endpoint_is_theirs: bool,
    /// The agent said it could not start the server.
    failed: bool,
    /// A call to the server completed without an error: it is reachable,
    /// whatever the agent advertised.
    reached: bool,
}

impl McpServer {
    pub(super) fn new(endpoint: Option<McpEndpoint>) -> McpServer {
        McpServer {
            endpoint,
            from_initialize: None,
            endpoint_is_theirs: false,
            failed: false,
            reached: false,
        }
    }

    pub(super) fn endpoint(&self) -> Option<&McpEndpoint> {
        self.endpoint.as_ref()
    }

    /// Whether `server` names the registered endpoint.
    pub(super) fn is_ours(&self, server: &str) -> bool {
        self.endpoint.as_ref().is_some_and(|ep| ep.name == server)
    }

    /// Takes the servers a panel `initialize` named and the endpoint picked
    /// from them and the launch's (before `session/new`).
    pub(super) fn take_initialize(
        &mut self,
        servers: Map<String, Value>,
        endpoint: Option<McpEndpoint>,
        endpoint_is_theirs: bool,
    ) {
        self.endpoint = endpoint;
        self.from_initialize = Some(servers);
        self.endpoint_is_theirs = endpoint_is_theirs;
    }

    /// Whether the servers an `initialize` asked for are applied: they are
    /// the set the session took and the endpoint is theirs (`registered`:
    /// the endpoint went to the agent's `session/new` or `session/load`).
    pub(super) fn applied(&self, asked: &Map<String, Value>, registered: bool) -> bool {
        registered && self.endpoint_is_theirs && self.from_initialize.as_ref() == Some(asked)
    }

    /// The agent could not start the server: it is `failed` from now on.
    pub(super) fn failed_to_start(&mut self) {
        self.failed = true;
    }

    /// A call to the server completed without an error.
    pub(super) fn call_completed(&mut self) {
        self.reached = true;
    }

    /// The server and its status once the session is up: `connected` when
    /// the agent took it (`takes_http`: HTTP MCP advertised) or a call to
    /// it completed, `failed` when the agent said it could not start it,
    /// and `unknown` when nothing showed it either way: such an agent may
    /// reach the server through its own configuration, so a panel must not
    /// show a broken server.
    pub(super) fn status(&self, takes_http: bool) -> Option<ServerStatus<'_>> {
        let ep = self.endpoint.as_ref()?;
        let status = if self.failed {
            "failed"
        } else if takes_http || self.reached {
            "connected"
        } else {
            "unknown"
        };
        Some(ServerStatus {
            name: &ep.name,
            status,
        })
    }

    /// Its status before the session is up: `pending`, or `failed` when the
    /// session could not start.
    pub(super) fn status_before_session(&self, failed: bool) -> Option<ServerStatus<'_>> {
        let ep = self.endpoint.as_ref()?;
        let status = if failed { "failed" } else { "pending" };
        Some(ServerStatus {
            name: &ep.name,
            status,
        })
    }
}
