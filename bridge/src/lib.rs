//! acp-bridge: lets a panel that speaks Claude Code stream-json drive any ACP
//! agent. The core ([`Bridge`]) is a pure state machine: lines and time come in,
//! lines go out. The process host lives in the binary.

mod call_fields;
mod call_frame;
mod chunk_frame;
pub mod client;
mod core;
mod ids;
mod json_field;
mod launch;
pub mod mcp_servers;
mod permission;
mod permission_mode;
pub mod script_gate;
pub mod server_tools;
pub mod shorten;
pub mod stream_json;
pub mod tap;
mod tool_calls;
pub mod tool_input;
pub mod tool_name;
pub mod tool_result;
mod turn;
mod update_frame;

pub use crate::core::{
    Bridge, CONTROL_TIMEOUT, DEFAULT_CANCEL_GRACE, HANDSHAKE_TIMEOUT, Output, PanelInstructions,
    SessionInstructions,
};
pub use crate::ids::{CounterIds, IdSource};
pub use crate::launch::{Compat, LaunchSpec, McpEndpoint};
pub use crate::permission::PanelAnswer;
pub use crate::tool_calls::{LET_GO_TEXT, MAX_OPEN_CALL_BYTES, REMEMBERED_CALLS};
pub use crate::turn::{FOLDED_TEXT_CUT, MAX_FOLDED_TEXT};
