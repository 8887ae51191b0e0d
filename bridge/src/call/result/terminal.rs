//! The output a call's frames stream for a terminal the client never
//! created: agents following Zed's convention send `_meta.terminal_output`
//! `{terminal_id, data}` deltas (and `terminal_exit`) beside a `terminal`
//! content block. The bridge declares no terminal capability, so the block
//! shows that output.

use crate::call::fields::OwnFields;

/// How much of a terminal's streamed output a call keeps: Claude's own
/// `Bash` result is cut far sooner, and a call's memory stays bounded
/// whatever the agent streams.
pub const MAX_TERMINAL_OUTPUT: usize = 256 * 1024;
/// Ends a terminal output cut at [`MAX_TERMINAL_OUTPUT`].
pub const TERMINAL_OUTPUT_CUT: &str = "\n[output truncated]";

/// Appends a frame's streamed terminal output (`_meta.terminal_output.data`)
/// to what the call kept ([`OwnFields::terminal_output`]), up to
/// [`MAX_TERMINAL_OUTPUT`] bytes.
pub fn keep_terminal_output(fields: &mut OwnFields, frame: &OwnFields) {
    let Some(data) = frame.terminal_output_delta() else {
        return;
    };
    let kept = fields.terminal_output.get_or_insert_default();
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
        assert_eq!(fields.terminal_output.as_deref(), Some("ab\n"));
        let big = "é".repeat(MAX_TERMINAL_OUTPUT);
        keep_terminal_output(&mut fields, &frame(&big));
        keep_terminal_output(&mut fields, &frame("more"));
        let kept = fields.terminal_output.as_deref().unwrap();
        assert!(kept.starts_with("ab\né"), "{}", &kept[..10]);
        assert!(kept.ends_with(TERMINAL_OUTPUT_CUT));
        assert!(kept.len() <= MAX_TERMINAL_OUTPUT + TERMINAL_OUTPUT_CUT.len());
    }
}
