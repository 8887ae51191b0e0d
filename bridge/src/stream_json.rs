//! Builders for the Claude Code stream-json lines the bridge writes to the
//! panel, with the keys real `claude` sends for each line type (a consumer
//! such as the Agent SDKs requires them).
//!
//! Lines that carry `session_id` / `uuid` are built with `session_id: null`
//! and no `uuid`; the core stamps both (see `Bridge::emit`), so only the core
//! touches the id source and these builders stay pure and order-stable.

use serde_json::{Value, json};

/// Token counts in Claude's `usage` shape.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
}

impl Usage {
    pub fn to_json(self) -> Value {
        json!({
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "output_tokens": self.output_tokens
        })
    }

    /// Adds an ACP `Usage` (`PromptResponse.usage`): thought tokens count as output.
    pub fn add_acp(&mut self, u: &Value) {
        let n = |k: &str| u[k].as_u64().unwrap_or(0);
        self.input_tokens += n("inputTokens");
        self.output_tokens += n("outputTokens") + n("thoughtTokens");
        self.cache_read_input_tokens += n("cachedReadTokens");
        self.cache_creation_input_tokens += n("cachedWriteTokens");
    }
}

/// `system`/`init`: what the session is (re-sent when the slash commands change).
pub struct InitInfo<'a> {
    pub cwd: &'a str,
    pub model: &'a str,
    pub permission_mode: &'a str,
    pub slash_commands: Vec<String>,
    /// `(name, status)`: `connected` or `failed`.
    pub mcp_servers: Vec<(String, &'static str)>,
}

pub fn system_init(info: &InitInfo<'_>) -> Value {
    let servers: Vec<Value> = info
        .mcp_servers
        .iter()
        .map(|(name, status)| json!({"name": name, "status": status}))
        .collect();
    json!({
        "type": "system",
        "subtype": "init",
        "cwd": info.cwd,
        "session_id": null,
        "tools": [],
        "mcp_servers": servers,
        "model": info.model,
        "permissionMode": info.permission_mode,
        "slash_commands": info.slash_commands,
        "apiKeySource": "none",
        "claude_code_version": env!("CARGO_PKG_VERSION"),
        "output_style": "default"
    })
}

/// A partial-message event (`--include-partial-messages`).
pub fn stream_event(event: Value) -> Value {
    json!({"type": "stream_event", "event": event, "session_id": null, "parent_tool_use_id": null})
}

/// An Anthropic `message` object as carried by `assistant` and `message_start`.
pub fn message_object(
    id: &str,
    model: &str,
    content: Vec<Value>,
    stop_reason: Option<&str>,
) -> Value {
    json!({
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": Usage::default().to_json()
    })
}

/// An `assistant` line.
pub fn assistant(message: Value) -> Value {
    json!({"type": "assistant", "message": message, "parent_tool_use_id": null, "session_id": null})
}

/// A `user` line with one `tool_result`.
pub fn tool_result(tool_use_id: &str, content: Value, is_error: bool) -> Value {
    json!({
        "type": "user",
        "message": {"role": "user", "content": [{
            "type": "tool_result", "tool_use_id": tool_use_id, "content": content, "is_error": is_error
        }]},
        "parent_tool_use_id": null,
        "session_id": null
    })
}

/// Everything a `result` line reports about one turn.
pub struct TurnResult {
    pub is_error: bool,
    pub subtype: &'static str,
    pub duration_ms: u64,
    pub num_turns: u32,
    pub result: String,
    pub stop_reason: Option<String>,
    pub total_cost_usd: f64,
    pub usage: Usage,
    pub permission_denials: Vec<Value>,
}

pub fn result(r: &TurnResult) -> Value {
    json!({
        "type": "result",
        "subtype": r.subtype,
        "is_error": r.is_error,
        "duration_ms": r.duration_ms,
        "duration_api_ms": r.duration_ms,
        "num_turns": r.num_turns,
        "result": r.result,
        "stop_reason": r.stop_reason,
        "session_id": null,
        "total_cost_usd": r.total_cost_usd,
        "usage": r.usage.to_json(),
        "permission_denials": r.permission_denials
    })
}

/// A success answer to a panel `control_request`.
pub fn control_success(request_id: &str, response: Value) -> Value {
    json!({"type": "control_response", "response": {"subtype": "success", "request_id": request_id, "response": response}})
}

/// An error answer to a panel `control_request`.
pub fn control_error(request_id: &str, error: &str, error_code: Option<&str>) -> Value {
    let mut resp = json!({"subtype": "error", "request_id": request_id, "error": error});
    if let Some(code) = error_code {
        resp["error_code"] = json!(code);
    }
    json!({"type": "control_response", "response": resp})
}

/// A `can_use_tool` permission request to the panel.
pub fn can_use_tool(
    request_id: &str,
    tool_name: &str,
    input: Value,
    suggestions: Option<Value>,
    tool_use_id: &str,
) -> Value {
    let mut req = json!({"subtype": "can_use_tool", "tool_name": tool_name, "input": input});
    if let Some(s) = suggestions {
        req["permission_suggestions"] = s;
    }
    req["tool_use_id"] = json!(tool_use_id);
    json!({"type": "control_request", "request_id": request_id, "request": req})
}

/// The `addRules` suggestion that makes the panel's "always allow" menu work.
pub fn always_allow_suggestion(tool_name: &str) -> Value {
    json!([{"type": "addRules", "rules": [{"toolName": tool_name}], "behavior": "allow", "destination": "session"}])
}
