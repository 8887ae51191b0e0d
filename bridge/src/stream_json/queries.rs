//! The answers to the panel's control requests that ask about the session
//! rather than change it, in Claude Code's shapes: `mcp_status`,
//! `get_context_usage` and `get_usage`. ACP reports no durations, line
//! counts, per-model usage, memory files or plan rate limits: those are
//! zero, empty or null, as Claude Code answers for an API-key session.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::stream_json::ServerStatus;

/// `mcp_status`'s answer.
#[derive(Debug, Serialize)]
pub struct McpStatus<'a> {
    #[serde(rename = "mcpServers")]
    pub mcp_servers: Vec<ServerStatus<'a>>,
}

/// `get_context_usage`'s answer: `used` of `size` tokens as two
/// categories, messages and free space.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextUsage<'a> {
    categories: [Category; 2],
    total_tokens: u64,
    max_tokens: u64,
    raw_max_tokens: u64,
    percentage: f64,
    grid_rows: [(); 0],
    model: &'a str,
    memory_files: [(); 0],
    mcp_tools: [(); 0],
    agents: [(); 0],
    is_auto_compact_enabled: bool,
    api_usage: Option<()>,
}

#[derive(Debug, Serialize)]
struct Category {
    id: &'static str,
    name: &'static str,
    tokens: u64,
    color: &'static str,
    kind: &'static str,
}

impl ContextUsage<'_> {
    pub fn new(used: u64, size: u64, model: &str) -> ContextUsage<'_> {
        let percentage = if size == 0 {
            0.0
        } else {
            used as f64 * 100.0 / size as f64
        };
        let category = |id, name, tokens, color, kind| Category {
            id,
            name,
            tokens,
            color,
            kind,
        };
        ContextUsage {
            categories: [
                category("messages", "Messages", used, "purple", "used"),
                category(
                    "free_space",
                    "Free space",
                    size.saturating_sub(used),
                    "promptBorder",
                    "free",
                ),
            ],
            total_tokens: used,
            max_tokens: size,
            raw_max_tokens: size,
            percentage,
            grid_rows: [],
            model,
            memory_files: [],
            mcp_tools: [],
            agents: [],
            is_auto_compact_enabled: false,
            api_usage: None,
        }
    }
}

/// `get_usage`'s answer: the session's cost (0 until the agent reports one
/// in USD).
#[derive(Debug, Serialize)]
pub struct UsageReport {
    session: SessionCost,
    subscription_type: Option<()>,
    rate_limits_available: bool,
    rate_limits: Option<()>,
    behaviors: Option<()>,
}

#[derive(Debug, Serialize)]
struct SessionCost {
    total_cost_usd: f64,
    total_api_duration_ms: u64,
    total_duration_ms: u64,
    total_lines_added: u64,
    total_lines_removed: u64,
    model_usage: BTreeMap<&'static str, u64>,
}

impl UsageReport {
    pub fn new(total_cost_usd: f64) -> UsageReport {
        UsageReport {
            session: SessionCost {
                total_cost_usd,
                total_api_duration_ms: 0,
                total_duration_ms: 0,
                total_lines_added: 0,
                total_lines_removed: 0,
                model_usage: BTreeMap::new(),
            },
            subscription_type: None,
            rate_limits_available: false,
            rate_limits: None,
            behaviors: None,
        }
    }
}
