//! The panel's control requests that ask about the session rather than
//! change it, answered from what the bridge already knows: `mcp_status`
//! from the MCP server it passed the agent (as `system/init` lists it), and
//! `get_context_usage` and `get_usage` from the agent's last `usage_update`.

use super::*;

impl Bridge {
    /// `mcp_status`: the MCP server the bridge passes the agent, `pending`
    /// until the session is up, then `connected` or `failed` as
    /// `system/init` says.
    pub(super) fn mcp_status(&mut self, request_id: &stream_json::RequestId) {
        let server = match self.phase {
            Phase::Ready => self.mcp.status(self.offers_http_mcp()),
            phase => (self.mcp.endpoint()).map(|ep| stream_json::ServerStatus {
                name: &ep.name,
                status: if phase == Phase::Failed {
                    "failed"
                } else {
                    "pending"
                },
            }),
        };
        let servers: Vec<_> = server.into_iter().collect();
        self.answer_panel(stream_json::control_success(
            request_id,
            json!({ "mcpServers": servers }),
        ));
    }

    /// `get_context_usage`: the agent's last `usage_update` (`used` of
    /// `size` tokens) as two categories, messages and free space; an error
    /// naming what is missing until the agent has sent one.
    pub(super) fn get_context_usage(&mut self, request_id: &stream_json::RequestId) {
        let (Some(used), Some(size)) = (self.session.usage.used, self.session.usage.size) else {
            return self.answer_panel(stream_json::control_error(
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
        self.answer_panel(stream_json::control_success(request_id, body));
    }

    /// `get_usage`: the session's cost as the agent's last `usage_update`
    /// reported it (ACP's `cost` is the session's running total; 0 until
    /// one came, or when it is not in USD). ACP reports no durations, line
    /// counts, per-model usage or plan rate limits: those are zero, empty
    /// or null, as Claude Code answers for an API-key session.
    pub(super) fn get_usage(&mut self, request_id: &stream_json::RequestId) {
        let cost = self.session.usage.cost.as_ref();
        let total = cost.and_then(|c| c.usd()).unwrap_or(0.0);
        let body = json!({
            "session": {
                "total_cost_usd": total,
                "total_api_duration_ms": 0,
                "total_duration_ms": 0,
                "total_lines_added": 0,
                "total_lines_removed": 0,
                "model_usage": {},
            },
            "subscription_type": null,
            "rate_limits_available": false,
            "rate_limits": null,
            "behaviors": null,
        });
        self.answer_panel(stream_json::control_success(request_id, body));
    }
}
