//! A scripted reply made ready to render: tool names resolved to the form
//! the request offered them in (or through the profile's agent tools and
//! meta-tool), arguments serialised.

use super::{MCP_CALL_ROLE, OfferedTool, ServerState, ToolRef, UNSCRIPTED_TEXT};
use crate::corpus::scenario::ModelReply;

/// A reply ready to render: tool names already resolved to the form the
/// agent offered them in, arguments already serialised.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReplyPlan {
    pub thinking: Option<String>,
    pub text: Option<String>,
    pub calls: Vec<PlannedCall>,
}

impl ReplyPlan {
    /// A count for `usage` fields: words of thinking and text, 10 per call.
    /// Deterministic, so recordings do not vary with it.
    pub fn output_tokens(&self) -> u64 {
        let words = |s: &Option<String>| s.as_deref().map_or(0, |s| s.split_whitespace().count());
        (words(&self.thinking) + words(&self.text) + self.calls.len() * 10) as u64
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct PlannedCall {
    pub call_id: String,
    pub tool: ToolRef,
    /// The arguments as a JSON text (how most APIs carry them).
    pub arguments: String,
    pub arguments_value: serde_json::Value,
}

impl PlannedCall {
    /// A call with its arguments, and their JSON text derived from them.
    fn new(call_id: &str, tool: ToolRef, arguments_value: serde_json::Value) -> PlannedCall {
        PlannedCall {
            call_id: call_id.to_owned(),
            tool,
            arguments: serde_json::to_string(&arguments_value).unwrap_or_else(|_| "{}".to_owned()),
            arguments_value,
        }
    }
}

pub(super) fn unscripted() -> ReplyPlan {
    ReplyPlan {
        text: Some(UNSCRIPTED_TEXT.to_owned()),
        ..Default::default()
    }
}

pub(super) fn plan(
    state: &ServerState,
    id: u64,
    model: &ModelReply,
    offered: &[OfferedTool],
    turn: usize,
    reply: usize,
) -> ReplyPlan {
    let calls = model
        .tool_calls
        .iter()
        .map(|call| {
            if let Some(role) = &call.agent_tool {
                let (tool, arguments_value) = match state.agent_tools.render(role, &call.arguments)
                {
                    Ok(rendered) => rendered,
                    Err(e) => {
                        // Sent anyway under the role's name: the agent's
                        // answer to an unknown tool is part of the record.
                        state.note(
                            id,
                            format!("model server: turn {} reply {}: {e}", turn + 1, reply + 1),
                        );
                        (
                            ToolRef {
                                name: role.clone(),
                                namespace: None,
                            },
                            call.arguments.clone(),
                        )
                    }
                };
                return PlannedCall::new(&call.id, tool, arguments_value);
            }
            // A unity-ops call through the agent's meta-tool (Grok's
            // `use_tool`), when the profile maps one, the request offers it
            // and the scenario does not ask for direct calls.
            let arguments = with_extra(&call.arguments, &state.script.mcp_call_arguments);
            if !state.script.direct_mcp_calls
                && let Some(meta) = state.agent_tools.0.get(MCP_CALL_ROLE)
                && offered
                    .iter()
                    .any(|t| t.name == meta.name && t.namespace.is_none())
            {
                let role_args = serde_json::json!({"tool": call.tool, "arguments": arguments});
                match state.agent_tools.render(MCP_CALL_ROLE, &role_args) {
                    Ok((tool, arguments_value)) => {
                        return PlannedCall::new(&call.id, tool, arguments_value);
                    }
                    Err(e) => state.note(
                        id,
                        format!("model server: turn {} reply {}: {e}", turn + 1, reply + 1),
                    ),
                }
            }
            let (tool, how) = state.naming.resolve(&call.tool, offered);
            if let Some(how) = how {
                state.note(
                    id,
                    format!("model server: turn {} reply {}: {how}", turn + 1, reply + 1),
                );
            }
            PlannedCall::new(&call.id, tool, arguments)
        })
        .collect();
    ReplyPlan {
        thinking: model.thinking.clone(),
        text: model.text.clone(),
        calls,
    }
}

/// A scripted unity-ops call's arguments with the profile's extra ones
/// added where the scenario does not give them.
fn with_extra(
    arguments: &serde_json::Value,
    extra: &serde_json::Map<String, serde_json::Value>,
) -> serde_json::Value {
    let mut arguments = arguments.clone();
    if let Some(map) = arguments.as_object_mut() {
        for (k, v) in extra {
            map.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    arguments
}
