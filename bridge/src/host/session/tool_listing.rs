//! Lists the tools of each MCP server the session registered with the
//! agent, once per session, for the core's bare tool name rule
//! ([`acp_bridge::call::server_tools`]): as soon as the core says which servers
//! those are, each is asked on a task of its own, bounded by
//! [`LIST_TIMEOUT`], and what it lists reaches the core as an event of the
//! session loop when it arrives, so no panel or agent line waits for it. A
//! failure is a diagnostic, never fatal: the core then names calls as it
//! does without a list.

use std::time::Duration;

use super::super::mcp_client;
use super::{Event, Host};

/// How long one server may take to list its tools.
pub const LIST_TIMEOUT: Duration = Duration::from_secs(5);

/// What one server listed, or why it did not.
pub struct Listed {
    server: String,
    tools: anyhow::Result<Vec<String>>,
}

impl Host {
    /// Starts listing, once, when the core has settled the session's servers.
    pub(super) fn list_server_tools(&mut self) {
        if self.lister.is_none() {
            return;
        }
        let Some(servers) = self.bridge.registered_mcp_servers() else {
            return;
        };
        let Some(events) = self.lister.take() else {
            return;
        };
        for server in servers {
            let events = events.clone();
            tokio::spawn(async move {
                let tools = mcp_client::list_tools_within(&server, LIST_TIMEOUT).await;
                let listed = Listed {
                    server: server.name,
                    tools,
                };
                let _ = events.send(Event::ServerTools(listed)).await;
            });
        }
    }

    /// Hands what a server listed to the core.
    pub(super) fn server_tools(&mut self, listed: Listed) {
        match listed.tools {
            Ok(tools) => {
                self.note(&format!(
                    "MCP server {} lists {} tool(s)",
                    listed.server,
                    tools.len()
                ));
                let out = self.bridge.set_server_tools(&listed.server, tools);
                self.apply(out);
            }
            Err(e) => self.diag(&format!(
                "cannot list the tools of MCP server {} ({e:#}); calls that name only a tool are not taken for its tools",
                listed.server
            )),
        }
    }
}
