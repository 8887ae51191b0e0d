//! The output a call's frames stream for a terminal the client never
//! created: agents following Zed's convention send `_meta.terminal_output`
//! `{terminal_id, data}` deltas (and `terminal_exit`) beside a `terminal`
//! content block. The bridge declares no terminal capability, so the block
//! shows that output.

use std::borrow::Cow;

use serde_json::Value;

use crate::acp::json_field::field;
use crate::call::fields::OwnFields;

/// Where a call keeps its terminal's streamed output, beside its ACP fields.
pub const TERMINAL_OUTPUT: &str = "terminalOutput";
/// How much of a terminal's streamed output a call keeps: Claude's own
/// `Bash` result is cut far sooner, and a call's memory stays bounded
/// whatever the agent streams.
pub const MAX_TERMINAL_OUTPUT: usize = 256 * 1024;
/// Ends a terminal output cut at [`MAX_TERMINAL_OUTPUT`].
pub const TERMINAL_OUTPUT_CUT: &str = "\n[output truncated]";

/// Appends a frame's streamed terminal output (`_meta.terminal_output.data`)
/// to what the call kept under [`TERMINAL_OUTPUT`], up to
/// [`MAX_TERMINAL_OUTPUT`] bytes.
pub fn keep_terminal_output(fields: &mut OwnFields, frame: &OwnFields) {
    let meta = frame.get("_meta").unwrap_or(&Value::Null);
    let Some(data) = field(field(meta, "terminal_output"), "data").as_str() else {
        return;
    };
    if fields.get(TERMINAL_OUTPUT).is_none() {
        fields.insert(Cow::Borrowed(TERMINAL_OUTPUT), Value::String(String::new()));
    }
    let Some(Value::String(kept)) = fields.get_mut(TERMINAL_OUTPUT) else {
        return;
    };
    if kept.len() >= MAX_TERMINAL_OUTPUT {
        return;
    }
    let room = MAX_TERMINAL_OUTPUT - kept.len();
    let end = data.floor_char_boundary(room);
    kept.push_str(&data[..end]);
    if end < data.len() {
        kept.push_str(TERMINAL_OUTPUT_CUT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn streamed_terminal_output_is_kept_in_order_and_bounded() {
        let frame = |data: &str| {
            OwnFields::from(
                json!({"_meta": {"terminal_output": {"terminal_id": "t", "data": data}}}),
            )
        };
        let mut fields = OwnFields::new();
        keep_terminal_output(&mut fields, &frame("a"));
        keep_terminal_output(&mut fields, &OwnFields::from(json!({"_meta": {}})));
        keep_terminal_output(&mut fields, &frame("b\n"));
        assert_eq!(fields.get(TERMINAL_OUTPUT).unwrap(), "ab\n");
        let big = "é".repeat(MAX_TERMINAL_OUTPUT);
        keep_terminal_output(&mut fields, &frame(&big));
        keep_terminal_output(&mut fields, &frame("more"));
        let kept = fields.get(TERMINAL_OUTPUT).unwrap().as_str().unwrap();
        assert!(kept.starts_with("ab\né"), "{}", &kept[..10]);
        assert!(kept.ends_with(TERMINAL_OUTPUT_CUT));
        assert!(kept.len() <= MAX_TERMINAL_OUTPUT + TERMINAL_OUTPUT_CUT.len());
    }
}
