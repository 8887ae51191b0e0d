//! What the panel dispatches a stream-json line on, and the keys and JSON
//! types the contract lists for it.

use std::collections::BTreeMap;

use serde_json::Value;
/// How many object levels below a line (or block) keys are listed.
const DEPTH: usize = 2;

/// The JSON type names used in the contract.
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// What the panel dispatches a line on; `None` for a line that is not a
/// JSON object with a string `type`.
pub fn line_kind(v: &Value) -> Option<String> {
    let ty = v.get("type")?.as_str()?;
    let sub = |p: &str| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string()
    };
    Some(match ty {
        "system" | "result" => format!("{ty}/{}", sub("/subtype")),
        "stream_event" => format!("stream_event/{}", sub("/event/type")),
        "control_request" => format!("control_request/{}", sub("/request/subtype")),
        "control_response" => format!("control_response/{}", sub("/response/subtype")),
        other => other.to_string(),
    })
}

/// The key path whose value names the kind of a line of type `envelope`.
pub(super) fn discriminator(envelope: &str) -> &'static str {
    match envelope {
        "stream_event" => "event.type",
        "control_request" => "request.subtype",
        "control_response" => "response.subtype",
        _ => "subtype",
    }
}

/// One object to check: the line itself, or one content block of it.
pub(super) struct Item<'a> {
    pub(super) kind: String,
    pub(super) value: &'a Value,
    /// Where in the line (`message.content[1]`), empty for the line itself.
    pub(super) at: String,
}

pub(super) fn items(v: &Value) -> Vec<Item<'_>> {
    let Some(kind) = line_kind(v) else {
        return Vec::new();
    };
    let mut out = vec![Item {
        kind: kind.clone(),
        value: v,
        at: String::new(),
    }];
    if kind == "assistant" || kind == "user" {
        let blocks = v.pointer("/message/content").and_then(Value::as_array);
        for (i, b) in blocks.into_iter().flatten().enumerate() {
            let bt = b.get("type").and_then(Value::as_str).unwrap_or("?");
            out.push(Item {
                kind: format!("{kind}.content/{bt}"),
                value: b,
                at: format!("message.content[{i}]"),
            });
            if bt == "tool_result"
                && let Some(inner) = b.get("content").and_then(Value::as_array)
            {
                for (j, c) in inner.iter().enumerate() {
                    let ct = c.get("type").and_then(Value::as_str).unwrap_or("?");
                    out.push(Item {
                        kind: format!("tool_result.content/{ct}"),
                        value: c,
                        at: format!("message.content[{i}].content[{j}]"),
                    });
                }
            }
        }
    }
    out
}

/// Dotted key paths of `v` (objects only, `DEPTH` levels) with their types.
pub(super) fn key_types(v: &Value) -> BTreeMap<String, &'static str> {
    fn walk(v: &Value, prefix: &str, depth: usize, out: &mut BTreeMap<String, &'static str>) {
        let Value::Object(map) = v else { return };
        for (k, child) in map {
            let path = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            out.insert(path.clone(), json_type(child));
            if depth > 0 {
                walk(child, &path, depth - 1, out);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(v, "", DEPTH, &mut out);
    out
}
