//! What a tap's header says besides a recording's (`docs/tap.md`): the
//! bridge's tap writes these fields beside the recording header's, and
//! `import` reads them and leaves them out of the recording it makes
//! ([`TAP_ONLY`]).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The version of what a tap adds to the recording format (the header's `tap`).
pub const TAP_FORMAT: u32 = 1;

/// The header keys only a tap has.
pub const TAP_ONLY: &[&str] = &["tap", "bridge_version", "launch", "scrub_patterns"];

/// A tap header's own fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TapFields {
    /// [`TAP_FORMAT`].
    pub tap: u32,
    pub bridge_version: String,
    /// How the bridge was launched, its texts scrubbed.
    pub launch: TapLaunch,
    /// The kinds of credential shape the scrubber replaced, each once.
    pub scrub_patterns: Vec<String>,
}

/// The bridge's launch, as a tap records it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TapLaunch {
    pub model: Option<String>,
    pub permission_mode: Option<String>,
    pub system_prompt: Option<String>,
    pub append_system_prompt: Option<String>,
    pub resume_session_id: Option<String>,
    pub auth_method: Option<String>,
    #[serde(default)]
    pub script_gate: bool,
    pub mcp: Option<TapMcp>,
}

/// The panel's MCP server: its name and URL, and whether it had a token
/// (never the token).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TapMcp {
    pub name: String,
    pub url: String,
    pub authorization: bool,
}

impl TapFields {
    /// The fields as a header's `extra` keys, in order (a struct of
    /// strings, numbers and lists is always an object).
    pub fn into_extra(self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        }
    }
}
