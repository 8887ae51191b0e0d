//! How a prompt's turn ended, as the agent says it: v1's answer to
//! `session/prompt`, or v2's `state_update` to `idle`. Read once: why the
//! turn stopped, and the tokens it used when the agent counts them.

use serde_json::Value;

use crate::acp::json_field::field;
use crate::acp::usage::Tokens;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct PromptEnd {
    /// `stopReason`: `end_turn`, `cancelled`, `refusal`, ... as sent.
    pub stop_reason: Option<String>,
    /// `usage`, when it is an object.
    pub tokens: Option<Tokens>,
}

impl PromptEnd {
    /// Reads a `session/prompt` result or a `state_update`.
    pub fn read(answer: &Value) -> PromptEnd {
        let usage = field(answer, "usage");
        PromptEnd {
            stop_reason: field(answer, "stopReason").as_str().map(str::to_string),
            tokens: usage.is_object().then(|| Tokens::read(usage)),
        }
    }
}
