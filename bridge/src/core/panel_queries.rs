//! The panel's control requests that ask about the session rather than
//! change it, answered from what the bridge already knows: `mcp_status`
//! from the MCP server it passed the agent (as `system/init` lists it), and
//! `get_context_usage` from the agent's last `usage_update`.

use super::*;

impl Bridge {
    /// `mcp_status`: the MCP server the bridge passes the agent, `pending`
    /// until the session is up, then `connected` or `failed` as
    /// `system/init` says.
    pub(super) fn mcp_status(&mut self, request_id: &Value) {
        let servers: Vec<Value> = match self.phase {
            Phase::Ready => self.system_init()["mcp_servers"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
            phase => self
                .mcp
                .iter()
                .map(|ep| {
                    let status = if phase == Phase::Failed {
                        "failed"
                    } else {
                        "pending"
                    };
                    json!({"name": ep.name, "status": status})
                })
                .collect(),
        };
        self.emit(stream_json::control_success(
            request_id,
            json!({ "mcpServers": servers }),
        ));
    }

    /// `get_context_usage`: the agent's last `usage_update` (`used` of
    /// `size` tokens) as two categories, messages and free space; an error
    /// naming what is missing until the agent has sent one.
    pub(super) fn get_context_usage(&mut self, request_id: &Value) {
        let used = self.last_usage["used"].as_u64();
        let size = self.last_usage["size"].as_u64();
        let (Some(used), Some(size)) = (used, size) else {
            return self.emit(stream_json::control_error(
                request_id,
                "get_context_usage: the agent has sent no usage_update with used and size yet",
                None,
            ));
        };
        let free = size.saturating_sub(used);
        let percentage = if size == 0 {
            0.0
        } else {
            used as f64 * 100.0 / size as f64
        };
        let body = json!({
            "categories": [
                {"id": "messages", "name": "Messages", "tokens": used, "color": "purple", "kind": "used"},
                {"id": "free_space", "name": "Free space", "tokens": free, "color": "promptBorder", "kind": "free"},
            ],
            "totalTokens": used,
            "maxTokens": size,
            "rawMaxTokens": size,
            "percentage": percentage,
            "gridRows": [],
            "model": self.model_name(),
            "memoryFiles": [],
            "mcpTools": [],
            "agents": [],
            "isAutoCompactEnabled": false,
            "apiUsage": null,
        });
        self.emit(stream_json::control_success(request_id, body));
    }
}
