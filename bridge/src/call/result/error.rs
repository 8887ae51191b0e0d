//! Whether a finished call's `tool_result` is an error, from its status and
//! the error shapes its rawOutput may take.

use serde_json::Value;

use super::{ResultFields, is_error_object};
use crate::acp::json_field::field;

/// Whether the `tool_result` is an error: the call failed, or its rawOutput
/// says the tool did (MCP `isError`, a JSON-RPC error, Grok's error shapes).
pub fn is_error(call: &Value) -> bool {
    is_error_of(call.into())
}

/// [`is_error`] of a call's result fields.
pub(crate) fn is_error_of(call: ResultFields<'_>) -> bool {
    if call.failed {
        return true;
    }
    let raw = call.raw_output;
    field(raw, "isError") == true
        || field(field(raw, "result"), "isError") == true
        || (crate::acp::json_field::get(raw, "result").is_some_and(Value::is_null)
            && field(raw, "error").is_object())
        || (field(raw, "type") == "MCP" && field(field(raw, "output"), "Error").is_string())
        || (field(raw, "error").is_string() && field(raw, "message").is_string())
        || is_error_object(raw)
        || (field(field(raw, "error"), "message").is_string()
            && field(field(raw, "result"), "content").is_null())
}
