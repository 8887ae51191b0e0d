//! Gemini API (`/v1beta/models/<model>:streamGenerateContent?alt=sse`), as
//! Gemini CLI uses it with `GOOGLE_GEMINI_BASE_URL`.
//!
//! Requests: `contents` oldest first, role `user` / `model`; a user
//! content's `functionResponse` parts are tool outputs (text beside them is
//! not read as a prompt);
//! `tools` is `[{"functionDeclarations":[{"name":...}]}]` (Gemini CLI names
//! MCP tools `mcp_unity-ops_uap_ping`).
//!
//! Replies: `data: {GenerateContentResponse}` lines: thought parts
//! (`{"text":...,"thought":true}`), text parts, `functionCall` parts (with
//! the script's call id as `id`, which Gemini CLI turns into the
//! toolCallId), the last one with `finishReason` and `usageMetadata`.
//! `:generateContent` is the same request answered in one JSON response
//! (Gemini CLI's router / next-speaker / loop checks use it; its profile
//! declares them as side requests with the JSON text they expect).
//! Auxiliary: `:countTokens`, answered with a fixed count. Errors: an HTTP
//! status with `{"error":{"code","message","status"}}`.
//!
//! Seen from Gemini CLI 0.61.0 (2026-11-29): a router call
//! `gemini-3.5-flash-lite:generateContent` before the turn, then
//! `gemini-3.8-flash:streamGenerateContent?alt=sse` whose first user content
//! holds a `<session_context>` part and the prompt as its own part; tools
//! offered flat (`mcp_unity-ops_uap_ping`); our `functionCall.id` becomes
//! the toolCallId `mcp_unity-ops_uap_ping__call_ping_1`; a thought part
//! becomes an `agent_thought_chunk` (`**subject**` parsed from its start);
//! a 400 ends the prompt with JSON-RPC error 400 carrying the body.

use axum::http::Method;
use serde_json::{Value, json};

use super::{
    Entry, HttpReply, OfferedTool, ProviderApi, ReplyPlan, RequestView, input_tokens, stream_chunks,
};
use crate::corpus::scenario::ApiError;

/// The Gemini flavour.
pub struct Gemini;

fn action(path: &str) -> Option<(&str, &str)> {
    let rest = path
        .strip_prefix("/v1beta/models/")
        .or_else(|| path.strip_prefix("/v1/models/"))?;
    rest.split_once(':')
}

impl ProviderApi for Gemini {
    fn serve_auxiliary(&self, method: &Method, path: &str, _body: &[u8]) -> Option<HttpReply> {
        (method == Method::POST && action(path).is_some_and(|(_, verb)| verb == "countTokens"))
            .then(|| HttpReply {
                status: 200,
                content_type: "application/json",
                body: json!({"totalTokens": 100}).to_string(),
            })
    }

    fn is_model_request(&self, method: &Method, path: &str) -> bool {
        method == Method::POST
            && action(path).is_some_and(|(_, verb)| {
                verb == "streamGenerateContent" || verb == "generateContent"
            })
    }

    fn read_request(&self, path: &str, body: &[u8]) -> Result<RequestView, String> {
        let v: Value =
            serde_json::from_slice(body).map_err(|e| format!("request body is not JSON: {e}"))?;
        let contents = v
            .get("contents")
            .and_then(Value::as_array)
            .ok_or("`contents` is missing or not an array")?;
        let mut conversation = Vec::new();
        for c in contents {
            let parts = c
                .get("parts")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            if c.get("role").and_then(Value::as_str) == Some("model") {
                let calls = parts.iter().any(|p| p.get("functionCall").is_some());
                conversation.push(if calls { Entry::Other } else { Entry::Answer });
                continue;
            }
            // Parts in order: function responses are tool outputs, runs of
            // text parts user entries (text beside responses included).
            let mut texts: Vec<String> = Vec::new();
            for p in parts {
                if p.get("functionResponse").is_some() {
                    if !texts.is_empty() {
                        conversation.push(Entry::User(std::mem::take(&mut texts)));
                    }
                    conversation.push(Entry::ToolOutput);
                } else if p.get("thought").and_then(Value::as_bool) != Some(true)
                    && let Some(t) = p.get("text").and_then(Value::as_str)
                {
                    texts.push(t.to_owned());
                }
            }
            if !texts.is_empty() {
                conversation.push(Entry::User(texts));
            }
        }
        let system = v
            .pointer("/systemInstruction/parts")
            .or_else(|| v.pointer("/system_instruction/parts"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| p.get("text").and_then(Value::as_str).map(str::to_owned))
            .collect();
        let offered_tools = v
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .flat_map(|t| {
                t.get("functionDeclarations")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
            })
            .filter_map(|d| {
                Some(OfferedTool {
                    name: d.get("name")?.as_str()?.to_owned(),
                    namespace: None,
                })
            })
            .collect();
        Ok(RequestView {
            conversation,
            offered_tools,
            tool_list: v.get("tools").is_some_and(Value::is_array),
            // `generateContent` answers in one piece, `streamGenerateContent` streams.
            stream: action(path).is_some_and(|(_, verb)| verb == "streamGenerateContent"),
            model: action(path).map(|(m, _)| m.to_owned()),
            system,
        })
    }

    fn render_reply(&self, plan: &ReplyPlan, view: &RequestView, seq: u64) -> HttpReply {
        let model = view.model.clone().unwrap_or_else(|| "scripted".to_owned());
        let chunk = |parts: Vec<Value>| {
            json!({"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}], "modelVersion": model,
                "responseId": format!("scripted-{seq}")})
        };
        let mut chunks = Vec::new();
        if let Some(t) = &plan.thinking {
            // One thought part, as Gemini sends one summary per thought (Gemini
            // CLI parses each part as `**subject** description`).
            chunks.push(chunk(vec![json!({"text": t, "thought": true})]));
        }
        if let Some(t) = &plan.text {
            chunks.extend(
                stream_chunks(t)
                    .into_iter()
                    .map(|d| chunk(vec![json!({"text": d})])),
            );
        }
        for c in &plan.calls {
            chunks.push(chunk(vec![json!({"functionCall": {"id": c.call_id, "name": c.tool.name, "args": c.arguments_value}})]));
        }
        let (input, output) = (input_tokens(seq), plan.output_tokens());
        let mut last = chunks
            .pop()
            .unwrap_or_else(|| chunk(vec![json!({"text": ""})]));
        last["candidates"][0]["finishReason"] = json!("STOP");
        last["usageMetadata"] = json!({"promptTokenCount": input, "candidatesTokenCount": output, "totalTokenCount": input + output});
        chunks.push(last);
        if !view.stream {
            // `generateContent`: the whole answer as one response, its text in one part.
            let mut parts: Vec<Value> = Vec::new();
            if let Some(t) = &plan.thinking {
                parts.push(json!({"text": t, "thought": true}));
            }
            if let Some(t) = &plan.text {
                parts.push(json!({"text": t}));
            }
            for c in &plan.calls {
                parts.push(json!({"functionCall": {"id": c.call_id, "name": c.tool.name, "args": c.arguments_value}}));
            }
            let mut whole = chunks.pop().unwrap_or_default();
            whole["candidates"][0]["content"]["parts"] = json!(parts);
            return HttpReply {
                status: 200,
                content_type: "application/json",
                body: whole.to_string(),
            };
        }
        let body = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
        HttpReply {
            status: 200,
            content_type: "text/event-stream",
            body,
        }
    }

    fn render_error(&self, error: &ApiError) -> HttpReply {
        let status = match error.status {
            400 => "INVALID_ARGUMENT",
            401 => "UNAUTHENTICATED",
            403 => "PERMISSION_DENIED",
            404 => "NOT_FOUND",
            429 => "RESOURCE_EXHAUSTED",
            503 => "UNAVAILABLE",
            504 => "DEADLINE_EXCEEDED",
            s if s < 500 => "FAILED_PRECONDITION",
            _ => "INTERNAL",
        };
        HttpReply {
            status: error.status,
            content_type: "application/json",
            body:
                json!({"error": {"code": error.status, "message": error.message, "status": status}})
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
