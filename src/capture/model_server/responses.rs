//! OpenAI Responses API over SSE (`POST /v1/responses`), as codex uses it.
//!
//! Requests: `input` is the whole conversation, oldest first: `message`
//! items (role `user` / `developer` / `assistant`, content parts
//! `input_text` / `input_image` / `output_text`), `function_call` items and
//! their `function_call_output` answers, `reasoning` items. `tools` lists
//! what the model may call: `{"type":"function","name":...}` and, for MCP
//! servers in codex 1.x/2.x, `{"type":"namespace","name":"mcp__unity_ops",
//! "tools":[{"type":"function","name":"uap_ping",...}]}`.
//!
//! Replies (the events codex's SSE reader consumes; everything else is
//! ignored by it): `response.created`, then per output item
//! `response.output_item.added` ... `response.output_item.done`, with
//! `response.reasoning_summary_part.added` +
//! `response.reasoning_summary_text.delta` (needs `summary_index`) for
//! thinking, `response.content_part.added` + `response.output_text.delta`
//! for text, `response.function_call_arguments.delta` for calls, and last
//! `response.completed` with `response.id` and `usage` (without it codex
//! reports "stream closed before response.completed"). A call comes out as
//! `{"type":"function_call","call_id":"call_1","name":"uap_ping",
//! "namespace":"mcp__unity_ops","arguments":"{}"}` or, for flat naming,
//! without `namespace`. Errors are an HTTP error status with an OpenAI error
//! body (`{"error":{"message","type","param","code"}}`); codex retries them
//! unless the provider sets `request_max_retries = 0`.
//!
//! Seen from real agents (codex-acp 2.6.0, 0.16.0 and 0.4.4, 2026-11-29):
//! - `input` starts with `developer` messages (base instructions, skills;
//!   `instructions` is absent in 2.6.0), then a `user` message holding
//!   `<environment_context>` (cwd, shell, date), then the prompt as its own
//!   `user` message with one `input_text` part per ACP text block. Body
//!   keys: `model`, `stream: true`, `input`, `tools`, `tool_choice`,
//!   `parallel_tool_calls`, `reasoning` (`{"effort":"medium","summary":"auto"}`),
//!   `store: false`, `include: ["reasoning.encrypted_content"]`,
//!   `prompt_cache_key`, `client_metadata`.
//! - MCP tools: 2.6.0 and 0.16.0 offer `{"type":"namespace","name":
//!   "mcp__unity_ops","tools":[...]}` and echo calls back with `namespace`;
//!   0.4.4 offers flat functions `mcp__unity-ops__uap_ping`. Tool outputs
//!   come back as `function_call_output` whose `output` is a list of
//!   `input_text` / `input_image` parts (2.6.0, prefixed by a "Wall time"
//!   text) or a JSON string (0.16.0, 0.4.4).
//! - Reasoning summary deltas become `agent_thought_chunk`s, text deltas
//!   `agent_message_chunk`s (2.6.0 adds `messageId` = our item id).
//! - An interrupted call is answered `"aborted by user after 0.1s"` and a
//!   `<turn_aborted>` user message follows it in the next turn's input.
//! - Errors: 2.6.0 turns a 400 into a message chunk holding the error body
//!   and a 500 into a "high demand" message chunk, both with `end_turn`;
//!   0.16.0 answers the prompt with JSON-RPC error -32603 whose
//!   `data.message` is the body.
//! - 2.6.0 asks for a session title beside the turn: a request without
//!   tools whose last user message quotes the first prompt ("User's first
//!   message:"), declared in its profile as a side request.
//! - codex asks permission for an MCP call only from the tool's
//!   annotations (`destructiveHint: true`, or `readOnlyHint: false` with
//!   `destructiveHint` / `openWorldHint` absent or true); with
//!   `readOnlyHint: false, destructiveHint: false, openWorldHint: false` it
//!   runs the call without asking, in every version tried.

use axum::http::Method;
use serde_json::{Value, json};

use super::{
    Entry, HttpReply, OfferedTool, ProviderApi, ReplyPlan, RequestView, content_texts,
    input_tokens, stream_chunks,
};
use crate::corpus::scenario::ApiError;

/// The Responses flavour.
pub struct Responses;

impl ProviderApi for Responses {
    fn is_model_request(&self, method: &Method, path: &str) -> bool {
        method == Method::POST && (path == "/v1/responses" || path == "/responses")
    }

    fn read_request(&self, _path: &str, body: &[u8]) -> Result<RequestView, String> {
        let v: Value =
            serde_json::from_slice(body).map_err(|e| format!("request body is not JSON: {e}"))?;
        let input = match v.get("input") {
            Some(Value::Array(items)) => items.iter().map(entry).collect(),
            Some(Value::String(s)) => vec![Entry::User(vec![s.clone()])],
            None | Some(Value::Null) => Vec::new(),
            Some(_) => return Err("`input` is neither an array nor a string".to_owned()),
        };
        let mut system: Vec<String> = v
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .into_iter()
            .collect();
        for item in v
            .get("input")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if matches!(
                item.get("role").and_then(Value::as_str),
                Some("system" | "developer")
            ) {
                system.extend(content_texts(item.get("content")));
            }
        }
        Ok(RequestView::from_body(&v, input, offered_tools(v.get("tools"))).with_system(system))
    }

    fn render_reply(&self, plan: &ReplyPlan, view: &RequestView, seq: u64) -> HttpReply {
        let model = view.model.clone().unwrap_or_else(|| "scripted".to_owned());
        let response_id = format!("resp_{seq}");
        let mut items = OutputItems::default();
        if let Some(thinking) = &plan.thinking {
            items.reasoning(seq, thinking);
        }
        if let Some(text) = &plan.text {
            items.message(seq, text);
        }
        for call in &plan.calls {
            items.function_call(seq, call);
        }
        let OutputItems { events, output } = items;

        let output_tokens = plan.output_tokens();
        let input_tokens = input_tokens(seq);
        let usage = json!({
            "input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens,
        });
        let completed = json!({"id": response_id, "object": "response", "status": "completed",
            "model": model, "output": output, "usage": usage});

        if !view.stream {
            return HttpReply {
                status: 200,
                content_type: "application/json",
                body: completed.to_string(),
            };
        }
        let created = json!({"type": "response.created", "response": {"id": response_id, "object": "response",
            "status": "in_progress", "model": model, "output": []}});
        let mut body = String::new();
        let mut push = |event: &Value| {
            let kind = event["type"].as_str().unwrap_or("message");
            body.push_str(&format!("event: {kind}\ndata: {event}\n\n"));
        };
        push(&created);
        for event in &events {
            push(event);
        }
        push(&json!({"type": "response.completed", "response": completed}));
        HttpReply {
            status: 200,
            content_type: "text/event-stream",
            body,
        }
    }

    fn render_error(&self, error: &ApiError) -> HttpReply {
        let kind = match error.status {
            429 => "rate_limit_error",
            400..=499 => "invalid_request_error",
            _ => "server_error",
        };
        HttpReply {
            status: error.status,
            content_type: "application/json",
            body: json!({"error": {"message": error.message, "type": kind, "param": null, "code": null}}).to_string(),
        }
    }

    fn render_protocol_error(&self, status: u16, message: &str) -> HttpReply {
        self.render_error(&ApiError {
            status,
            message: message.to_owned(),
        })
    }
}

fn entry(item: &Value) -> Entry {
    let kind = item.get("type").and_then(Value::as_str);
    let role = item.get("role").and_then(Value::as_str);
    match (kind, role) {
        (Some("message") | None, Some("user")) => Entry::User(content_texts(item.get("content"))),
        (Some(k), _) if k.ends_with("_call_output") => Entry::ToolOutput,
        (Some("message") | None, Some("assistant")) => Entry::Answer,
        _ => Entry::Other,
    }
}

fn offered_tools(tools: Option<&Value>) -> Vec<OfferedTool> {
    let mut out = Vec::new();
    for tool in tools.and_then(Value::as_array).into_iter().flatten() {
        let name = tool.get("name").and_then(Value::as_str);
        match (tool.get("type").and_then(Value::as_str), name) {
            (Some("namespace"), Some(ns)) => {
                for inner in tool
                    .get("tools")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(n) = inner.get("name").and_then(Value::as_str) {
                        out.push(OfferedTool {
                            name: n.to_owned(),
                            namespace: Some(ns.to_owned()),
                        });
                    }
                }
            }
            (_, Some(n)) => out.push(OfferedTool {
                name: n.to_owned(),
                namespace: None,
            }),
            _ => {}
        }
    }
    out
}
/// A response's output items and the stream events that build each one,
/// in the order the Responses API streams them.
#[derive(Default)]
struct OutputItems {
    events: Vec<Value>,
    output: Vec<Value>,
}

impl OutputItems {
    fn reasoning(&mut self, seq: u64, thinking: &str) {
        let index = self.output.len();
        let item_id = format!("rs_{seq}_{index}");
        let done = json!({
            "type": "reasoning", "id": item_id,
            "summary": [{"type": "summary_text", "text": thinking}],
        });
        self.events.push(
            json!({"type": "response.output_item.added", "output_index": index,
            "item": {"type": "reasoning", "id": item_id, "summary": []}}),
        );
        self.events.push(json!({"type": "response.reasoning_summary_part.added", "item_id": item_id,
            "output_index": index, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}));
        for delta in stream_chunks(thinking) {
            self.events.push(
                json!({"type": "response.reasoning_summary_text.delta", "item_id": item_id,
                "output_index": index, "summary_index": 0, "delta": delta}),
            );
        }
        self.events.push(
            json!({"type": "response.reasoning_summary_text.done", "item_id": item_id,
            "output_index": index, "summary_index": 0, "text": thinking}),
        );
        self.events.push(json!({"type": "response.reasoning_summary_part.done", "item_id": item_id,
            "output_index": index, "summary_index": 0, "part": {"type": "summary_text", "text": thinking}}));
        self.events.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": done}),
        );
        self.output.push(done);
    }

    fn message(&mut self, seq: u64, text: &str) {
        let index = self.output.len();
        let item_id = format!("msg_{seq}_{index}");
        let done = json!({
            "type": "message", "id": item_id, "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        });
        self.events.push(json!({"type": "response.output_item.added", "output_index": index,
            "item": {"type": "message", "id": item_id, "status": "in_progress", "role": "assistant", "content": []}}));
        self.events.push(
            json!({"type": "response.content_part.added", "item_id": item_id, "output_index": index,
            "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}),
        );
        for delta in stream_chunks(text) {
            self.events.push(json!({"type": "response.output_text.delta", "item_id": item_id, "output_index": index,
                "content_index": 0, "delta": delta}));
        }
        self.events.push(
            json!({"type": "response.output_text.done", "item_id": item_id, "output_index": index,
            "content_index": 0, "text": text}),
        );
        self.events.push(
            json!({"type": "response.content_part.done", "item_id": item_id, "output_index": index,
            "content_index": 0, "part": {"type": "output_text", "text": text, "annotations": []}}),
        );
        self.events.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": done}),
        );
        self.output.push(done);
    }

    fn function_call(&mut self, seq: u64, call: &super::PlannedCall) {
        let index = self.output.len();
        let item_id = format!("fc_{seq}_{index}");
        let item = |arguments: &str, status: &str| {
            let mut item = json!({"type": "function_call", "id": item_id, "status": status,
                "call_id": call.call_id, "name": call.tool.name, "arguments": arguments});
            if let Some(ns) = &call.tool.namespace {
                item["namespace"] = json!(ns);
            }
            item
        };
        self.events.push(
            json!({"type": "response.output_item.added", "output_index": index,
            "item": item("", "in_progress")}),
        );
        self.events.push(
            json!({"type": "response.function_call_arguments.delta", "item_id": item_id,
            "output_index": index, "delta": call.arguments}),
        );
        self.events.push(
            json!({"type": "response.function_call_arguments.done", "item_id": item_id,
            "output_index": index, "arguments": call.arguments}),
        );
        let done = item(&call.arguments, "completed");
        self.events.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": done}),
        );
        self.output.push(done);
    }
}
