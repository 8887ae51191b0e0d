//! The `system` lines the bridge writes: `init` (what the session is), a
//! notice, a compaction's status and boundary, and the session's state.

use serde::Serialize;

use super::Stamps;

/// `system`/`init`: what the session is (re-sent when the slash commands change).
pub struct InitInfo<'a> {
    pub cwd: &'a str,
    pub model: &'a str,
    pub permission_mode: &'a str,
    pub slash_commands: Vec<&'a str>,
    /// `(name, status)`: `connected`, `failed` or `unknown`.
    pub mcp_servers: Vec<ServerStatus<'a>>,
}

/// An MCP server and its status, as `system`/`init` and `mcp_status` list it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ServerStatus<'a> {
    pub name: &'a str,
    pub status: &'static str,
}

/// The `system`/`init` line, in the keys and order real `claude` writes.
#[derive(Debug, Serialize)]
pub struct SystemInit<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    subtype: &'static str,
    cwd: &'a str,
    session_id: &'a str,
    /// The bridge lists no tools of its own.
    tools: [(); 0],
    mcp_servers: &'a [ServerStatus<'a>],
    model: &'a str,
    #[serde(rename = "permissionMode")]
    permission_mode: &'a str,
    slash_commands: &'a [&'a str],
    #[serde(rename = "apiKeySource")]
    api_key_source: &'static str,
    claude_code_version: &'static str,
    output_style: &'static str,
    uuid: &'a str,
}

pub fn system_init<'a>(info: &'a InitInfo<'a>, stamps: Stamps<'a>) -> SystemInit<'a> {
    SystemInit {
        kind: "system",
        subtype: "init",
        cwd: info.cwd,
        session_id: stamps.session_id,
        tools: [],
        mcp_servers: &info.mcp_servers,
        model: info.model,
        permission_mode: info.permission_mode,
        slash_commands: &info.slash_commands,
        api_key_source: "none",
        claude_code_version: env!("CARGO_PKG_VERSION"),
        output_style: "default",
        uuid: stamps.uuid,
    }
}

/// A `system` line of its own subtype (not `init`), stamped: the
/// subtype's fields, then `session_id` and `uuid`.
#[derive(Debug, Serialize)]
pub struct SystemLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    event: &'a SystemEvent,
    session_id: &'a str,
    uuid: &'a str,
}

impl<'a> SystemLine<'a> {
    pub fn new(event: &'a SystemEvent, stamps: Stamps<'a>) -> SystemLine<'a> {
        SystemLine {
            kind: "system",
            event,
            session_id: stamps.session_id,
            uuid: stamps.uuid,
        }
    }
}

/// What a [`SystemLine`] says, by subtype, in the keys real `claude` writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum SystemEvent {
    /// A notice to show: `level` `notice` or `warning`.
    Informational {
        content: String,
        level: &'static str,
    },
    /// A compaction runs (`status` `compacting`) or ended (`status` null,
    /// with its result, and its error when it failed).
    Status {
        status: Option<&'static str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        compact_result: Option<&'static str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        compact_error: Option<String>,
    },
    /// Where a compaction cut the conversation.
    CompactBoundary { compact_metadata: CompactMetadata },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompactMetadata {
    pub trigger: &'static str,
    pub pre_tokens: u64,
}

/// Claude Code's `session_state_changed` line, stamped;
/// `sdk_host_only` when only the Agent SDK's host is meant to see it.
#[derive(Debug, Serialize)]
pub struct SessionStateChanged<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    subtype: &'static str,
    state: &'static str,
    session_id: &'a str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    sdk_host_only: bool,
    uuid: &'a str,
}

impl<'a> SessionStateChanged<'a> {
    pub fn new(
        state: &'static str,
        host_only: bool,
        stamps: Stamps<'a>,
    ) -> SessionStateChanged<'a> {
        SessionStateChanged {
            kind: "system",
            subtype: "session_state_changed",
            state,
            session_id: stamps.session_id,
            sdk_host_only: host_only,
            uuid: stamps.uuid,
        }
    }
}
