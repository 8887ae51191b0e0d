//! The Claude tool name for an ACP tool call. The panel renders, auto-approves
//! and gates by Claude tool names, so every tool call gets one.
//!
//! For now the name comes from the ACP `kind` (bridge.md "Tool-name mapping");
//! the structural unity-ops mapping extends [`claude_tool_name`] without
//! changing its signature.

use serde_json::{Map, Value};

/// Merges one ACP frame about a tool call (`tool_call`, `tool_call_update`, a
/// permission request's `toolCall`) into the fields seen so far: later fields
/// win, `sessionUpdate` / `toolCallId` are not kept.
pub fn merge_tool_call(call: &mut Value, frame: &Value) {
    if !call.is_object() {
        *call = Value::Object(Map::new());
    }
    if let (Some(fields), Some(obj)) = (call.as_object_mut(), frame.as_object()) {
        for (k, v) in obj {
            if k != "sessionUpdate" && k != "toolCallId" {
                fields.insert(k.clone(), v.clone());
            }
        }
    }
}

/// The `tool_use` input: rawInput (an object; anything else under
/// `rawInput`), plus `title` / `kind`, plus the first location's `path`,
/// never overwriting a key of rawInput.
pub fn tool_input(call: &Value) -> Value {
    let mut input = match &call["rawInput"] {
        Value::Object(m) => m.clone(),
        Value::Null => Map::new(),
        other => {
            let mut m = Map::new();
            m.insert("rawInput".into(), other.clone());
            m
        }
    };
    for key in ["title", "kind"] {
        if let Some(v) = call.get(key).filter(|v| !v.is_null()) {
            input.entry(key).or_insert_with(|| v.clone());
        }
    }
    if let Some(path) = call["locations"].get(0).and_then(|l| l.get("path")).filter(|p| p.is_string()) {
        input.entry("path").or_insert_with(|| path.clone());
    }
    Value::Object(input)
}

/// The Claude name for an ACP kind, `None` for `other`, a missing kind or a
/// kind this table does not know (then the agent's title is the name).
pub fn name_for_kind(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "read" => "Read",
        "edit" => "Edit",
        "execute" => "Bash",
        "fetch" => "WebFetch",
        "search" => "Search",
        "delete" => "Delete",
        "move" => "Move",
        "think" => "Think",
        _ => return None,
    })
}

/// Whether the fields seen so far cannot name the tool yet (Grok opens a
/// call as a bare `use_tool` and names it in a later update). The core holds
/// the `tool_use` back while this holds, but emits it before any permission
/// request or result of the call, and at the turn's end.
pub fn identity_pending(call: &Value) -> bool {
    call["kind"].is_null() && call["title"].as_str() == Some("use_tool") && call["rawInput"].is_null()
}

/// The Claude tool name for a tool call. `call` holds the ACP fields seen so
/// far for it (`kind`, `title`, `rawInput`, `_meta`, ...), merged across
/// `tool_call` / `tool_call_update` / the permission request's `toolCall`.
pub fn claude_tool_name(call: &Value) -> String {
    if let Some(name) = call["kind"].as_str().and_then(name_for_kind) {
        return name.to_string();
    }
    match call["title"].as_str() {
        Some(title) if !title.trim().is_empty() => title.to_string(),
        _ => "Tool".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn input_is_raw_input_plus_title_kind_and_path() {
        let mut call = Value::Null;
        merge_tool_call(&mut call, &json!({"sessionUpdate": "tool_call", "toolCallId": "c", "kind": "read", "title": "Read a", "rawInput": {"file_path": "a", "title": "mine"}}));
        merge_tool_call(&mut call, &json!({"sessionUpdate": "tool_call_update", "toolCallId": "c", "locations": [{"path": "/p/a"}]}));
        assert_eq!(tool_input(&call), json!({"file_path": "a", "title": "mine", "kind": "read", "path": "/p/a"}));
        assert_eq!(tool_input(&json!({"rawInput": "ls -la"})), json!({"rawInput": "ls -la"}));
    }

    #[test]
    fn kinds_map_to_claude_names_and_other_uses_the_title() {
        let cases = [
            (json!({"kind": "read", "title": "x"}), "Read"),
            (json!({"kind": "edit"}), "Edit"),
            (json!({"kind": "execute", "title": "ls"}), "Bash"),
            (json!({"kind": "fetch"}), "WebFetch"),
            (json!({"kind": "search"}), "Search"),
            (json!({"kind": "delete"}), "Delete"),
            (json!({"kind": "move"}), "Move"),
            (json!({"kind": "think"}), "Think"),
            (json!({"kind": "other", "title": "use_tool"}), "use_tool"),
            (json!({"title": "uap_ping (unity-ops MCP Server)"}), "uap_ping (unity-ops MCP Server)"),
            (json!({"kind": "brand_new_kind", "title": "t"}), "t"),
            (json!({"kind": "other"}), "Tool"),
            (json!({}), "Tool"),
        ];
        for (call, want) in cases {
            assert_eq!(claude_tool_name(&call), want, "{call}");
        }
    }
}
