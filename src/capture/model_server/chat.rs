//! OpenAI Chat Completions, streaming (`POST /v1/chat/completions`), as Grok
//! Build and other OpenAI-compatible agents use it.
//!
//! Requests: `messages` oldest first (`system` / `user` / `assistant` /
//! `tool`; content a string or an array of `{type:"text"}` /
//! `{type:"image_url"}` parts); each `tool` message is one tool output, and a
//! user message with images right after one is that output's media (a
//! `tool` message holds no images, so agents attach them that way).
//! `tools` is `[{"type":"function","function":{"name":...}}]` (flat names,
//! e.g. Grok's `unity-ops__uap_ping` or its `use_tool` meta-tool).
//!
//! Replies: `chat.completion.chunk` events as `data: {json}` lines:
//! the role, `reasoning_content` deltas for thinking (xAI / DeepSeek style),
//! `content` deltas, `tool_calls` deltas (id, name, then arguments), a
//! chunk with `finish_reason` (`tool_calls` or `stop`), a usage chunk with
//! empty `choices`, then `data: [DONE]`. Non-streaming requests get one
//! `chat.completion` object. Errors are an HTTP status with an OpenAI error
//! body. `GET /v1/models` lists the requested model; `GET /` answers 200
//! (Grok probes both).
//!
//! Seen from Grok Build 1.0.41 (2026-11-29): `GET /v1/models`, `GET /`, then
//! `POST /v1/chat/completions` with the prompt as a user message
//! `"<user_query>\n...\n</user_query>"`. MCP tools are not offered by name:
//! the model reaches them through meta-tools (`search_tool`, `use_tool`), and
//! a direct call of `unity-ops__uap_ping` works, so the Grok profile's
//! naming is `{ form = "flat", template = "unity-ops__{tool}" }` (with the
//! default namespace rule Grok answers "Tool not found: uap_ping"). After a
//! turn Grok sends a side request (a `<system-reminder>` user message asking
//! for a session title), which its profile declares (`[[model.side_requests]]`).

use axum::http::Method;
use serde_json::{Value, json};

use super::{
    Entry, HttpReply, OfferedTool, ProviderApi, ReplyPlan, RequestView, content_texts,
    input_tokens, stream_chunks,
};
use crate::corpus::scenario::ApiError;

/// The Chat Completions flavour.
pub struct ChatCompletions;

/// The model id listed by `GET /v1/models`.
const LISTED_MODEL: &str = "mock-model";

impl ProviderApi for ChatCompletions {
    fn serve_auxiliary(&self, method: &Method, path: &str, _body: &[u8]) -> Option<HttpReply> {
        if method != Method::GET {
            return None;
        }
        match path {
            "/" | "/v1" | "/v1/" => Some(HttpReply { status: 200, content_type: "application/json", body: "{}".to_owned() }),
            "/v1/models" | "/models" => Some(HttpReply {
                status: 200,
                content_type: "application/json",
                body: json!({"object": "list", "data": [{"id": LISTED_MODEL, "object": "model", "created": 0, "owned_by": "scripted"}]})
                    .to_string(),
            }),
            _ => None,
        }
    }

    fn is_model_request(&self, method: &Method, path: &str) -> bool {
        method == Method::POST && (path == "/v1/chat/completions" || path == "/chat/completions")
    }

    fn read_request(&self, _path: &str, body: &[u8]) -> Result<RequestView, String> {
        let v: Value =
            serde_json::from_slice(body).map_err(|e| format!("request body is not JSON: {e}"))?;
        let messages = v
            .get("messages")
            .and_then(Value::as_array)
            .ok_or("`messages` is missing or not an array")?;
        let role = |m: &Value| m.get("role").and_then(Value::as_str).map(str::to_owned);
        let conversation = messages
            .iter()
            .enumerate()
            .map(|(i, m)| match role(m).as_deref() {
                Some("user")
                    if has_image_part(m.get("content"))
                        && i.checked_sub(1)
                            .and_then(|p| role(&messages[p]))
                            .is_some_and(|r| r == "tool" || r == "function") =>
                {
                    Entry::ToolMedia
                }
                Some("user") => Entry::User(content_texts(m.get("content"))),
                Some("tool") | Some("function") => Entry::ToolOutput,
                Some("assistant")
                    if m.get("tool_calls")
                        .is_none_or(|c| c.as_array().is_none_or(Vec::is_empty))
                        && m.get("function_call").is_none() =>
                {
                    Entry::Answer
                }
                _ => Entry::Other,
            })
            .collect();
        let system = messages
            .iter()
            .filter(|m| {
                matches!(
                    m.get("role").and_then(Value::as_str),
                    Some("system" | "developer")
                )
            })
            .flat_map(|m| content_texts(m.get("content")))
            .collect();
        let offered_tools = v
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| {
                let name = t
                    .pointer("/function/name")
                    .or_else(|| t.get("name"))?
                    .as_str()?;
                Some(OfferedTool {
                    name: name.to_owned(),
                    namespace: None,
                })
            })
            .collect();
        Ok(RequestView::from_body(&v, conversation, offered_tools).with_system(system))
    }

    fn render_reply(&self, plan: &ReplyPlan, view: &RequestView, seq: u64) -> HttpReply {
        let model = view
            .model
            .clone()
            .unwrap_or_else(|| LISTED_MODEL.to_owned());
        let id = format!("chatcmpl-{seq}");
        let finish = if plan.calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        let (prompt_tokens, completion_tokens) = (input_tokens(seq), plan.output_tokens());
        let usage = json!({"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens});
        let tool_calls: Vec<Value> = plan
            .calls
            .iter()
            .map(|c| json!({"id": c.call_id, "type": "function", "function": {"name": c.tool.name, "arguments": c.arguments}}))
            .collect();

        if !view.stream {
            let mut message = json!({"role": "assistant", "content": plan.text});
            if let Some(t) = &plan.thinking {
                message["reasoning_content"] = json!(t);
            }
            if !tool_calls.is_empty() {
                message["tool_calls"] = json!(tool_calls);
            }
            let body = json!({"id": id, "object": "chat.completion", "created": 0, "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage});
            return HttpReply {
                status: 200,
                content_type: "application/json",
                body: body.to_string(),
            };
        }

        let chunk = |delta: Value, finish: Option<&str>| {
            json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        };
        let mut chunks = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
        if let Some(thinking) = &plan.thinking {
            for d in stream_chunks(thinking) {
                chunks.push(chunk(json!({"reasoning_content": d}), None));
            }
        }
        if let Some(text) = &plan.text {
            for d in stream_chunks(text) {
                chunks.push(chunk(json!({"content": d}), None));
            }
        }
        for (index, c) in plan.calls.iter().enumerate() {
            chunks.push(chunk(
                json!({"tool_calls": [{"index": index, "id": c.call_id, "type": "function",
                    "function": {"name": c.tool.name, "arguments": ""}}]}),
                None,
            ));
            chunks.push(chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": c.arguments}}]}),
                None,
            ));
        }
        chunks.push(chunk(json!({}), Some(finish)));
        chunks.push(
            json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [], "usage": usage}),
        );
        let mut body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
        body.push_str("data: [DONE]\n\n");
        HttpReply {
            status: 200,
            content_type: "text/event-stream",
            body,
        }
    }

    fn render_error(&self, error: &ApiError) -> HttpReply {
        super::responses::Responses.render_error(error)
    }

    fn render_protocol_error(&self, status: u16, message: &str) -> HttpReply {
        self.render_error(&ApiError {
            status,
            message: message.to_owned(),
        })
    }
}

/// Whether a message's content has an image part (`image_url`, `image`,
/// `input_image`).
fn has_image_part(content: Option<&Value>) -> bool {
    content.and_then(Value::as_array).is_some_and(|parts| {
        parts.iter().any(|p| {
            matches!(
                p.get("type").and_then(Value::as_str),
                Some("image_url" | "image" | "input_image")
            )
        })
    })
}
