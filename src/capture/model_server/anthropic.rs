//! Anthropic Messages over SSE (`POST /v1/messages`, Claude Code adds
//! `?beta=true`), for the Claude Code CLI as the reference panel peer.
//!
//! Requests: `messages` oldest first, `content` a string or blocks; a user
//! message's `tool_result` blocks are tool outputs and the text blocks
//! beside them are read in order (a system reminder, or the next prompt
//! beside the previous turn's results). `system` is a string or text
//! blocks. `tools` are flat (`mcp__unity-ops__uap_ping`).
//!
//! Replies: `message_start`, per block `content_block_start` /
//! `content_block_delta` (`thinking_delta` + `signature_delta`,
//! `text_delta`, `input_json_delta`) / `content_block_stop`, then
//! `message_delta` (stop reason `tool_use` or `end_turn`, usage) and
//! `message_stop`. Non-streaming requests get one `message` object.
//! `POST /v1/messages/count_tokens` is answered with a fixed count. Errors:
//! an HTTP status with `{"type":"error","error":{"type","message"}}`.
//!
//! Seen from Claude Code 2.1.332 (2026-11-29, `-p` stream-json with
//! `ANTHROPIC_BASE_URL`): `POST /v1/messages?beta=true`, streaming; MCP tools
//! are deferred behind `ToolSearch` (the request's `tools` list only
//! `DeferredToolPlaceholder`), yet a direct call of `mcp__unity-ops__uap_ping`
//! works, so its naming is `{ form = "flat", template = "mcp__unity-ops__{tool}" }`;
//! the call then goes through `can_use_tool` and comes back as a
//! `tool_result`. The request may end with a `system`-role message.

use axum::http::Method;
use serde_json::{Value, json};

use super::{
    Entry, HttpReply, OfferedTool, ProviderApi, ReplyPlan, RequestView, input_tokens, stream_chunks,
};
use crate::corpus::scenario::ApiError;

/// A user message's blocks in order: each `tool_result` is a tool output,
/// each run of text blocks one user entry (a system reminder beside tool
/// results, or the next prompt an agent sends beside the previous turn's
/// results). Images and other blocks are neither.
fn user_blocks(blocks: &[Value], conversation: &mut Vec<Entry>) {
    let mut texts: Vec<String> = Vec::new();
    let mut any_output = false;
    for b in blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("tool_result") => {
                if !texts.is_empty() {
                    conversation.push(Entry::User(std::mem::take(&mut texts)));
                }
                conversation.push(Entry::ToolOutput);
                any_output = true;
            }
            Some("text") => {
                if let Some(t) = b.get("text").and_then(Value::as_str) {
                    texts.push(t.to_owned());
                }
            }
            _ => {}
        }
    }
    if !texts.is_empty() || !any_output {
        conversation.push(Entry::User(texts));
    }
}

/// The Anthropic Messages flavour.
pub struct Anthropic;

impl ProviderApi for Anthropic {
    fn serve_auxiliary(&self, method: &Method, path: &str, _body: &[u8]) -> Option<HttpReply> {
        (method == Method::POST && path.ends_with("/messages/count_tokens")).then(|| HttpReply {
            status: 200,
            content_type: "application/json",
            body: json!({"input_tokens": 100}).to_string(),
        })
    }

    fn is_model_request(&self, method: &Method, path: &str) -> bool {
        method == Method::POST && (path == "/v1/messages" || path == "/messages")
    }

    fn read_request(&self, _path: &str, body: &[u8]) -> Result<RequestView, String> {
        let v: Value =
            serde_json::from_slice(body).map_err(|e| format!("request body is not JSON: {e}"))?;
        let messages = v
            .get("messages")
            .and_then(Value::as_array)
            .ok_or("`messages` is missing or not an array")?;
        let mut conversation = Vec::new();
        for m in messages {
            match m.get("role").and_then(Value::as_str) {
                Some("user") => {}
                Some("assistant") => {
                    let calls = m.get("content").and_then(Value::as_array).is_some_and(|b| {
                        b.iter()
                            .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                    });
                    conversation.push(if calls { Entry::Other } else { Entry::Answer });
                    continue;
                }
                _ => {
                    conversation.push(Entry::Other);
                    continue;
                }
            }
            match m.get("content") {
                Some(Value::String(s)) => conversation.push(Entry::User(vec![s.clone()])),
                Some(Value::Array(blocks)) => user_blocks(blocks, &mut conversation),
                _ => conversation.push(Entry::Other),
            }
        }
        let system = match v.get("system") {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(blocks)) => blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str).map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        };
        let offered_tools = v
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| {
                Some(OfferedTool {
                    name: t.get("name")?.as_str()?.to_owned(),
                    namespace: None,
                })
            })
            .collect();
        Ok(RequestView::from_body(&v, conversation, offered_tools).with_system(system))
    }

    fn render_reply(&self, plan: &ReplyPlan, view: &RequestView, seq: u64) -> HttpReply {
        let model = view.model.clone().unwrap_or_else(|| "scripted".to_owned());
        let id = format!("msg_{seq}");
        let stop_reason = if plan.calls.is_empty() {
            "end_turn"
        } else {
            "tool_use"
        };
        let (input, output) = (input_tokens(seq), plan.output_tokens());
        let signature = |i: usize| format!("scripted-signature-{seq}-{i}");

        let mut blocks: Vec<Value> = Vec::new();
        if let Some(t) = &plan.thinking {
            blocks.push(
                json!({"type": "thinking", "thinking": t, "signature": signature(blocks.len())}),
            );
        }
        if let Some(t) = &plan.text {
            blocks.push(json!({"type": "text", "text": t}));
        }
        for c in &plan.calls {
            blocks.push(json!({"type": "tool_use", "id": c.call_id, "name": c.tool.name, "input": c.arguments_value}));
        }

        if !view.stream {
            let body = json!({"id": id, "type": "message", "role": "assistant", "model": model, "content": blocks,
                "stop_reason": stop_reason, "stop_sequence": null,
                "usage": {"input_tokens": input, "output_tokens": output}});
            return HttpReply {
                status: 200,
                content_type: "application/json",
                body: body.to_string(),
            };
        }

        let mut events = vec![
            json!({"type": "message_start", "message": {"id": id, "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input, "output_tokens": 1}}}),
        ];
        for (index, block) in blocks.iter().enumerate() {
            let kind = block["type"].as_str().unwrap_or_default();
            let (start, deltas): (Value, Vec<Value>) = match kind {
                "thinking" => (
                    json!({"type": "thinking", "thinking": "", "signature": ""}),
                    stream_chunks(block["thinking"].as_str().unwrap_or_default())
                        .into_iter()
                        .map(|d| json!({"type": "thinking_delta", "thinking": d}))
                        .chain([
                            json!({"type": "signature_delta", "signature": block["signature"]}),
                        ])
                        .collect(),
                ),
                "text" => (
                    json!({"type": "text", "text": ""}),
                    stream_chunks(block["text"].as_str().unwrap_or_default())
                        .into_iter()
                        .map(|d| json!({"type": "text_delta", "text": d}))
                        .collect(),
                ),
                _ => (
                    json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                    vec![
                        json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
                    ],
                ),
            };
            events.push(
                json!({"type": "content_block_start", "index": index, "content_block": start}),
            );
            for delta in deltas {
                events.push(json!({"type": "content_block_delta", "index": index, "delta": delta}));
            }
            events.push(json!({"type": "content_block_stop", "index": index}));
        }
        events.push(json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": output}}));
        events.push(json!({"type": "message_stop"}));
        let body = events
            .iter()
            .map(|e| {
                format!(
                    "event: {}\ndata: {e}\n\n",
                    e["type"].as_str().unwrap_or("message")
                )
            })
            .collect();
        HttpReply {
            status: 200,
            content_type: "text/event-stream",
            body,
        }
    }

    fn render_error(&self, error: &ApiError) -> HttpReply {
        let kind = match error.status {
            401 => "authentication_error",
            403 => "permission_error",
            404 => "not_found_error",
            413 => "request_too_large",
            429 => "rate_limit_error",
            529 | 503 => "overloaded_error",
            400..=499 => "invalid_request_error",
            _ => "api_error",
        };
        HttpReply {
            status: error.status,
            content_type: "application/json",
            body: json!({"type": "error", "error": {"type": kind, "message": error.message}})
                .to_string(),
        }
    }

    fn render_protocol_error(&self, status: u16, message: &str) -> HttpReply {
        self.render_error(&ApiError {
            status,
            message: message.to_owned(),
        })
    }
}
