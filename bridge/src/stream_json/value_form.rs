//! The `Value` forms of lines the core writes typed: the tests hold the typed
//! lines' bytes to them.

use serde_json::{Value, json};

use super::{Usage, object};

/// A partial-message event (`--include-partial-messages`).
pub(crate) fn stream_event(event: Value) -> Value {
    object([
        ("type", json!("stream_event")),
        ("event", event),
        ("session_id", Value::Null),
        ("parent_tool_use_id", Value::Null),
    ])
}

/// An Anthropic `message` object as carried by `assistant` and `message_start`.
pub(crate) fn message_object(
    id: &str,
    model: &str,
    content: Vec<Value>,
    stop_reason: Option<&str>,
) -> Value {
    object([
        ("id", json!(id)),
        ("type", json!("message")),
        ("role", json!("assistant")),
        ("model", json!(model)),
        ("content", Value::Array(content)),
        ("stop_reason", json!(stop_reason)),
        ("stop_sequence", Value::Null),
        ("usage", Usage::default().to_json()),
    ])
}

/// An `assistant` line.
pub(crate) fn assistant(message: Value) -> Value {
    object([
        ("type", json!("assistant")),
        ("message", message),
        ("parent_tool_use_id", Value::Null),
        ("session_id", Value::Null),
    ])
}

/// A `text` content block; the text moves in.
pub(crate) fn text_block(text: String) -> Value {
    object([("type", json!("text")), ("text", Value::String(text))])
}
