//! The agent edge: what the agent can do ([`capabilities`]), its session's
//! modes, models and options ([`session_state`]), commands ([`commands`])
//! and what it used ([`usage`]), ACP frames as the bridge reads them ([`update_frame`],
//! [`chunk_frame`], [`json_field`]) and builds them ([`client`], shared with
//! the recorder), a tool call's kind and status ([`tool_call`]), the panel's MCP servers as ACP passes them
//! ([`mcp_servers`]), and Claude's permission modes onto what an agent
//! offers ([`permission_mode`]); the protocol revisions a client negotiates
//! ([`revision`]) and v2's agent frames read into v1's model ([`v2_frames`]).

pub mod capabilities;
pub(crate) mod chunk_frame;
pub mod client;
pub mod commands;
pub(crate) mod json_field;
pub mod mcp_servers;
pub mod message;
pub(crate) mod permission_mode;
pub mod permission_option;
pub mod prompt_end;
pub mod request;
pub mod revision;
pub mod rpc_error;
pub mod session_state;
pub mod session_update;
pub mod tool_call;
pub(crate) mod update_frame;
pub mod update_kind;
pub mod usage;
pub(crate) mod v2_frames;
