//! acp-bridge: lets a panel that speaks Claude Code stream-json drive any ACP
//! agent. The core ([`Bridge`]) is a pure state machine: lines and time come in,
//! lines go out. The process host lives in the binary.

pub mod acp;
pub mod build_stamp;
pub mod call;
mod core;
mod ids;
mod launch;
pub mod script_gate;
pub mod shorten;
pub mod stream_json;
pub mod tap;

pub use crate::call::permission::PanelAnswer;
pub use crate::call::table::{LET_GO_TEXT, MAX_OPEN_CALL_BYTES, REMEMBERED_CALLS};
pub use crate::core::turn::{FOLDED_TEXT_CUT, MAX_FOLDED_TEXT};
pub use crate::core::{
    Bridge, CONTROL_TIMEOUT, DEFAULT_CANCEL_GRACE, HANDSHAKE_TIMEOUT, Output, PanelInstructions,
    SessionInstructions,
};
pub use crate::ids::{CounterIds, IdSource};
pub use crate::launch::{Compat, LaunchSpec, McpEndpoint, SessionStateLines};
