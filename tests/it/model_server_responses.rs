//! The scripted model server speaking OpenAI Responses: requests shaped
//! like codex's, answered from a scenario, every exchange published.

use crate::support;

use std::path::Path;

use acp_harness::capture::model_server::{
    Flavour, ModelExchange, ModelScript, ModelServer, Running, ToolNaming, UNSCRIPTED_TEXT,
};
use acp_harness::corpus::scenario;
use serde_json::{Value, json};
use stub_mcp::Exchange;

/// This file's script: the shared ping-then-error scenario failing with 503.
fn scenario_text() -> String {
    support::ping_then_error_scenario(503, "overloaded")
}

async fn start(naming: ToolNaming) -> Running {
    let s = scenario::parse(Path::new("t.toml"), scenario_text().as_bytes())
        .expect("test scenario parses");
    ModelServer::start(Flavour::Responses, ModelScript::from_scenario(&s), naming)
        .await
        .expect("server starts")
}

/// A request body the way codex 2.x builds one.
fn codex_request(input: Vec<Value>, namespace: bool) -> Value {
    let unity = if namespace {
        json!({"type": "namespace", "name": "mcp__unity_ops", "description": "Tools in the mcp__unity_ops namespace.",
               "tools": [{"type": "function", "name": "uap_slow", "parameters": {"type": "object", "properties": {}}}]})
    } else {
        json!({"type": "function", "name": "mcp__unity-ops__uap_slow", "parameters": {"type": "object", "properties": {}}})
    };
    let mut all = vec![
        json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are a coding agent."}]}),
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>...</environment_context>"}]}),
    ];
    all.extend(input);
    json!({"model": "mock-model", "stream": true, "input": all,
           "tools": [{"type": "function", "name": "exec_command"}, unity], "tool_choice": "auto"})
}

fn user(text: &str) -> Value {
    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
}

async fn post(server: &Running, path: &str, body: &Value) -> (u16, String, String) {
    let resp = reqwest::Client::new()
        .post(format!("{}{path}", server.url()))
        .header("authorization", "Bearer sk-secret")
        .json(body)
        .send()
        .await
        .expect("request reaches the server");
    let status = resp.status().as_u16();
    let ctype = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, ctype, resp.text().await.unwrap())
}

/// The `data:` payloads of an SSE body, checking each `event:` names its type.
fn sse_events(body: &str) -> Vec<Value> {
    body.split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .map(|block| {
            let event = block
                .lines()
                .find_map(|l| l.strip_prefix("event: "))
                .expect("event line");
            let data: Value = serde_json::from_str(
                block
                    .lines()
                    .find_map(|l| l.strip_prefix("data: "))
                    .expect("data line"),
            )
            .unwrap();
            assert_eq!(data["type"], event, "event name matches data.type");
            data
        })
        .collect()
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

async fn serves_only_loopback_on_an_ephemeral_port() {
    let server = start(ToolNaming::default()).await;
    assert!(
        server.url().starts_with("http://127.0.0.1:"),
        "{}",
        server.url()
    );
    assert_ne!(server.addr().port(), 0);
    server.shutdown().await;
}

async fn first_request_of_a_turn_gets_thinking_text_and_a_namespaced_call() {
    let server = start(ToolNaming::default()).await;
    let (status, ctype, body) = post(
        &server,
        "/v1/responses",
        &codex_request(vec![user("Ping the Unity editor.")], true),
    )
    .await;
    assert_eq!((status, ctype.as_str()), (200, "text/event-stream"));
    let events = sse_events(&body);
    assert_eq!(
        types(&events),
        vec![
            "response.created",
            "response.output_item.added",
            "response.reasoning_summary_part.added",
            "response.reasoning_summary_text.delta",
            "response.reasoning_summary_text.delta",
            "response.reasoning_summary_text.delta",
            "response.reasoning_summary_text.done",
            "response.reasoning_summary_part.done",
            "response.output_item.done",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    let call = &events[18]["item"];
    assert_eq!(
        (
            call["type"].as_str(),
            call["call_id"].as_str(),
            call["name"].as_str(),
            call["namespace"].as_str()
        ),
        (
            Some("function_call"),
            Some("call_1"),
            Some("uap_slow"),
            Some("mcp__unity_ops")
        )
    );
    assert_eq!(call["arguments"], "{\"ms\":1}");
    let completed = &events[19]["response"];
    assert!(completed["id"].is_string());
    assert!(completed["usage"]["total_tokens"].as_u64().unwrap() > 0);
    assert_eq!(
        events[3]["summary_index"], 0,
        "codex ignores summary deltas without summary_index"
    );
    server.shutdown().await;
}

async fn a_flat_offer_gets_a_flat_call_name() {
    let server = start(ToolNaming::default()).await;
    let (_, _, body) = post(
        &server,
        "/v1/responses",
        &codex_request(vec![user("Ping the Unity editor.")], false),
    )
    .await;
    let events = sse_events(&body);
    let call = events
        .iter()
        .find(|e| e["type"] == "response.output_item.done" && e["item"]["type"] == "function_call")
        .unwrap();
    assert_eq!(call["item"]["name"], "mcp__unity-ops__uap_slow");
    assert!(call["item"].get("namespace").is_none());
    server.shutdown().await;
}

async fn replies_are_chosen_by_tool_outputs_since_the_prompt() {
    let server = start(ToolNaming::default()).await;
    let call = json!({"type": "function_call", "name": "uap_slow", "namespace": "mcp__unity_ops", "arguments": "{}", "call_id": "call_1"});
    let output = json!({"type": "function_call_output", "call_id": "call_1", "output": "pong"});
    // (case, input after the preamble, expected final text)
    let cases: Vec<(&str, Vec<Value>, &str)> = vec![
        (
            "after one tool output",
            vec![user("Ping the Unity editor."), call.clone(), output.clone()],
            "The editor answered pong.",
        ),
        (
            "replies used up",
            vec![
                user("Ping the Unity editor."),
                call.clone(),
                output.clone(),
                call.clone(),
                output.clone(),
            ],
            UNSCRIPTED_TEXT,
        ),
        (
            "no prompt text: not a turn",
            vec![user("Write a title for this chat.")],
            UNSCRIPTED_TEXT,
        ),
    ];
    for (case, input, want) in cases {
        let (status, _, body) = post(&server, "/v1/responses", &codex_request(input, true)).await;
        assert_eq!(status, 200, "{case}");
        let events = sse_events(&body);
        let done = events
            .iter()
            .find(|e| e["type"] == "response.output_text.done")
            .expect(case);
        assert_eq!(done["text"], want, "{case}");
        assert!(
            !types(&events).contains(&"response.function_call_arguments.done"),
            "{case}: no call"
        );
    }
    server.shutdown().await;
}

async fn a_scripted_error_is_an_http_error_with_an_openai_body() {
    let server = start(ToolNaming::default()).await;
    let (status, ctype, body) = post(
        &server,
        "/v1/responses",
        &codex_request(vec![user("Fail please.")], true),
    )
    .await;
    assert_eq!((status, ctype.as_str()), (503, "application/json"));
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["error"]["message"], "overloaded");
    assert_eq!(v["error"]["type"], "server_error");
    server.shutdown().await;
}

async fn every_exchange_is_published_with_secrets_redacted_and_unknown_paths_get_404() {
    let mut server = start(ToolNaming::default()).await;
    let mut events = server.take_events().unwrap();
    assert!(server.take_events().is_none(), "events are taken once");
    let (status, ctype, body) = post(&server, "/v1/models", &json!({})).await;
    assert_eq!((status, ctype.as_str()), (404, "application/json"));
    assert!(body.contains("no such endpoint"), "{body}");
    post(
        &server,
        "/v1/responses",
        &codex_request(vec![user("Ping the Unity editor.")], true),
    )
    .await;
    server.shutdown().await;

    let mut got = Vec::new();
    while let Ok(e) = events.try_recv() {
        got.push(e);
    }
    let summary: Vec<String> = got
        .iter()
        .map(|e| match e {
            ModelExchange::Http(Exchange::Request {
                id, method, path, ..
            }) => format!("{id} request {method} {path}"),
            ModelExchange::Http(Exchange::Response { id, status, .. }) => {
                format!("{id} response {status}")
            }
            ModelExchange::Note { id, .. } => format!("{id} note"),
            ModelExchange::OffScript { id, .. } => format!("{id} off script"),
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            "1 request POST /v1/models",
            "1 note",
            "1 response 404",
            "2 request POST /v1/responses",
            "2 response 200"
        ]
    );
    let ModelExchange::Http(Exchange::Request { headers, body, .. }) = &got[3] else {
        unreachable!()
    };
    assert!(
        headers.contains(&("authorization".to_owned(), "<redacted>".to_owned())),
        "{headers:?}"
    );
    assert!(!format!("{got:?}").contains("sk-secret"));
    assert!(body.contains("Ping the Unity editor."));
    let ModelExchange::Http(Exchange::Response { body, .. }) = &got[4] else {
        unreachable!()
    };
    assert!(body.starts_with("event: response.created\n"));
}

async fn a_request_that_is_not_json_gets_400_and_the_server_keeps_serving() {
    let server = start(ToolNaming::default()).await;
    let resp = reqwest::Client::new()
        .post(format!("{}/v1/responses", server.url()))
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    let (status, _, _) = post(
        &server,
        "/v1/responses",
        &codex_request(vec![user("Ping the Unity editor.")], true),
    )
    .await;
    assert_eq!(status, 200);
    server.shutdown().await;
}

async fn a_paced_reply_streams_its_events_apart_and_is_published_whole() {
    let text = scenario_text().replace(
        "  text = \"The editor answered pong.\"",
        "  text = \"The editor answered pong.\"\n  pace_ms = 40",
    );
    let s = scenario::parse(Path::new("t.toml"), text.as_bytes()).unwrap();
    let mut server = ModelServer::start(
        Flavour::Responses,
        ModelScript::from_scenario(&s),
        ToolNaming::default(),
    )
    .await
    .unwrap();
    let mut events = server.take_events().unwrap();
    let call = json!({"type": "function_call", "name": "uap_slow", "namespace": "mcp__unity_ops", "arguments": "{}", "call_id": "call_1"});
    let output = json!({"type": "function_call_output", "call_id": "call_1", "output": "done"});
    let started = std::time::Instant::now();
    let (status, _, body) = post(
        &server,
        "/v1/responses",
        &codex_request(vec![user("Ping the Unity editor."), call, output], true),
    )
    .await;
    let elapsed = started.elapsed();
    assert_eq!(status, 200);
    let n = sse_events(&body).len();
    // n events, 40 ms between consecutive ones.
    assert!(
        elapsed >= std::time::Duration::from_millis(40 * (n as u64 - 1)),
        "{n} events in {elapsed:?}"
    );
    server.shutdown().await;
    let mut published = None;
    while let Ok(e) = events.try_recv() {
        if let ModelExchange::Http(Exchange::Response { body, .. }) = e {
            published = Some(body);
        }
    }
    assert_eq!(
        published.as_deref(),
        Some(body.as_str()),
        "the published response is the whole stream"
    );
}

async fn an_oversized_body_is_refused_with_413_and_still_recorded() {
    let mut server = start(ToolNaming::default()).await;
    let mut events = server.take_events().unwrap();
    let big = vec![b'x'; 64 * 1024 * 1024 + 1];
    let resp = reqwest::Client::new()
        .post(format!("{}/v1/responses", server.url()))
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 413);
    server.shutdown().await;
    let mut kinds = Vec::new();
    while let Ok(e) = events.try_recv() {
        kinds.push(match e {
            ModelExchange::Http(Exchange::Request { .. }) => "request",
            ModelExchange::Http(Exchange::Response { status, .. }) => {
                assert_eq!(status, 413);
                "response"
            }
            ModelExchange::Note { .. } => "note",
            ModelExchange::OffScript { .. } => "off script",
        });
    }
    assert_eq!(kinds, vec!["request", "note", "response"]);
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    async_trials!(model_server_responses: serves_only_loopback_on_an_ephemeral_port, first_request_of_a_turn_gets_thinking_text_and_a_namespaced_call, a_flat_offer_gets_a_flat_call_name, replies_are_chosen_by_tool_outputs_since_the_prompt, a_scripted_error_is_an_http_error_with_an_openai_body, every_exchange_is_published_with_secrets_redacted_and_unknown_paths_get_404, a_request_that_is_not_json_gets_400_and_the_server_keeps_serving, a_paced_reply_streams_its_events_apart_and_is_published_whole, an_oversized_body_is_refused_with_413_and_still_recorded)
}
