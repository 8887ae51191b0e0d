//! stub-mcp: a deterministic "unity-ops" MCP server over Streamable HTTP.
//!
//! Real agents (codex-acp, Gemini CLI, Grok, Claude Code) call it while the
//! harness records them, so it must behave like the panel's own MCP server
//! and answer the same way every time.
//!
//! - Transport: rmcp's `StreamableHttpService` at `POST /mcp`, either stateless
//!   JSON ([`ResponseMode::Json`]) or sessions with SSE responses
//!   ([`ResponseMode::Sse`], `Mcp-Session-Id` counted by [`session_id`],
//!   DELETE ends a session).
//!   Notifications get 202, GET gets 405, and `server/discover` gets JSON-RPC
//!   -32601 so clients that probe newer revisions fall back to `initialize`.
//! - Security: loopback binds only; `Authorization: Bearer <token>` on every
//!   request (401 otherwise); Host and Origin must be loopback; bodies over the
//!   limit get 413; malformed JSON gets a JSON-RPC parse error (-32700);
//!   ids are echoed with the text they were sent in, however large.
//! - Observability: every HTTP exchange is an [`Exchange`] on the channel from
//!   [`Running::take_events`], request when it arrived, response when its
//!   body (or SSE stream) ended; a client that hung up before any answer
//!   gets a [`CLIENT_CLOSED`] (499) response event, so every request has one.
//! - Tools ([`catalogue`]): `uap_ping` -> "pong"; `uap_editor_screenshot`
//!   -> a text line and a real PNG sized by `screenshot_base64_len`;
//!   `uap_scripts_commit` -> the fixed rule in [`staging`]; `uap_fail` ->
//!   `isError: true`; `uap_rpc_error` -> a JSON-RPC error; `uap_slow {ms}` ->
//!   waits (at most 60 s) unless cancelled; `uap_structured` ->
//!   `structuredContent` and `_meta`.
//!
//! Cancellation of `uap_slow`: in SSE mode `notifications/cancelled` reaches
//! the session and stops the wait; in stateless JSON mode a notification has no
//! request to reach, so only the client hanging up stops it. Either way the
//! handler stops ([`Running::tool_calls_in_flight`] drops to 0); rmcp sends
//! no answer for a cancelled request, so the wire shows the stream ending.
//!
//! Clients checked against it (2026-11-29, handshake + `tools/list`, both
//! modes): rmcp 3.11 and 0.12, the TypeScript SDK 1.11 and 1.32, Claude Code
//! 2.1.197 (`claude mcp list`), Gemini CLI 0.61.0 (`gemini mcp list`), Grok
//! 1.0.41 (`grok mcp doctor`; it probes `server/discover` first and falls back),
//! and codex-acp 2.6.0 through whole recordings.

mod catalogue;
mod config;
mod exchange;
mod gate;
mod handler;
mod request_id;
pub mod screenshot;
mod server;
mod sessions;
pub mod staging;

pub use catalogue::{Hints, ToolSpec, catalogue};
pub use config::{
    Config, DEFAULT_BODY_LIMIT, DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_SCREENSHOT_BASE64_LEN, DEFAULT_WORKSPACE, ResponseMode,
};
pub use exchange::{Exchange, REDACTED, redact_headers_where};
pub use gate::{CLIENT_CLOSED, MCP_PATH};
pub use handler::{NEWEST_PROTOCOL, SLOW_CAP_MS};
pub use server::{Error, Running, SHUTDOWN_GRACE, serve};
pub use sessions::session_id;
