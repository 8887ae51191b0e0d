//! The `Value` forms of lines the core writes typed: the tests hold the typed
//! lines' bytes to them.

use serde_json::{Value, json};

use super::{TurnResult, Usage};

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
        ("usage", json!(Usage::default())),
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

/// The `result` line; the texts move in (a turn's last text can be megabytes).
pub(crate) fn result(r: TurnResult) -> Value {
    let mut line = object([
        ("type", json!("result")),
        ("subtype", json!(r.subtype)),
        ("is_error", json!(r.is_error)),
        ("duration_ms", json!(r.duration_ms)),
        ("duration_api_ms", json!(r.duration_ms)),
        ("num_turns", json!(r.num_turns)),
        ("result", Value::String(r.result)),
        ("stop_reason", json!(r.stop_reason)),
        ("session_id", Value::Null),
        ("total_cost_usd", json!(r.total_cost_usd)),
        ("usage", json!(r.usage)),
        ("permission_denials", json!(r.permission_denials)),
    ]);
    if r.subtype != "success" {
        line["errors"] = json!(r.errors);
    }
    if let Some(reason) = r.startup_failure_reason {
        line["startup_failure_reason"] = json!(reason);
    }
    line
}

/// An object of `(key, value)` pairs in this order, the values moved in:
/// `json!` serialises an interpolated `Value` into a deep copy, which for a
/// tool result means copying its images.
pub(crate) fn object<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}
