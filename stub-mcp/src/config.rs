//! What a caller can choose about one server.

use std::net::{Ipv4Addr, SocketAddr};
use std::str::FromStr;
use std::time::Duration;

/// Base64 length of a real codex-acp screenshot capture (the size that once
/// froze a panel; docs/bridge-behaviour.md, "Tool results").
pub const DEFAULT_SCREENSHOT_BASE64_LEN: usize = 560_068;
/// Largest request body accepted; bigger ones get 413.
pub const DEFAULT_BODY_LIMIT: usize = 4 * 1024 * 1024;
/// What `<workspace>` in tool texts is replaced by when nothing else is given.
pub const DEFAULT_WORKSPACE: &str = "<workspace>";

/// How POST responses are framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResponseMode {
    /// Stateless: every response is one `application/json` body; no sessions.
    Json,
    /// Sessions (`Mcp-Session-Id`), every response an SSE stream; DELETE ends a session.
    #[default]
    Sse,
}

impl FromStr for ResponseMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "json" => Ok(ResponseMode::Json),
            "sse" => Ok(ResponseMode::Sse),
            other => Err(format!(
                "unknown response mode {other:?}: expected json or sse"
            )),
        }
    }
}

impl ResponseMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ResponseMode::Json => "json",
            ResponseMode::Sse => "sse",
        }
    }
}

/// Everything [`crate::serve`] needs.
#[derive(Debug, Clone)]
pub struct Config {
    /// Must be a loopback address; port 0 picks a free one.
    pub addr: SocketAddr,
    /// Bearer token every request must carry; `None` draws a random one.
    pub token: Option<String>,
    pub mode: ResponseMode,
    /// Tools offered, by name; `None` offers the whole catalogue.
    pub tools: Option<Vec<String>>,
    /// Target base64 length of the screenshot image (the PNG is sized to land close).
    pub screenshot_base64_len: usize,
    /// Largest request body in bytes.
    pub body_limit: usize,
    /// Project root as the tools name it in their texts (e.g. the agent's cwd).
    pub workspace: String,
    /// Files `uap_scripts_commit` treats as staged when called without `paths`.
    pub staged: Vec<String>,
    /// Serve requests without the bearer token (the server still binds
    /// loopback only and checks Host and Origin): for clients that cannot
    /// send a header, such as the MCP conformance suite. Never the default.
    pub no_auth: bool,
    /// How long a connection may take to send a request's headers, counted
    /// from when the server waits for them: also how long an idle
    /// (keep-alive or never-used) connection is kept.
    pub header_timeout: Duration,
    /// Connections served at once; further ones wait to be accepted.
    pub max_connections: usize,
}

/// Default of [`Config::header_timeout`].
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(30);
/// Default of [`Config::max_connections`]: far above what one agent opens,
/// far below what the memory bound allows.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

impl Default for Config {
    fn default() -> Self {
        Config {
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            token: None,
            mode: ResponseMode::default(),
            tools: None,
            screenshot_base64_len: DEFAULT_SCREENSHOT_BASE64_LEN,
            body_limit: DEFAULT_BODY_LIMIT,
            workspace: DEFAULT_WORKSPACE.to_string(),
            staged: Vec::new(),
            no_auth: false,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}
