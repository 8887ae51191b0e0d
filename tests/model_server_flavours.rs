//! Every provider flavour answers the same script the same way: the first
//! request of a turn gets thinking, text and the tool call (named as the
//! request offered it, with the script's call id), the request carrying one
//! tool output gets the second reply, and a scripted error is an HTTP error
//! in the provider's error shape. Each case decodes the reply the way that
//! provider's clients do (a test double of the agent side).

mod support;

use std::path::Path;

use acp_harness::model_server::{Flavour, ModelScript, ModelServer, Running, ToolNaming};
use acp_harness::scenario;
use serde_json::{Value, json};

/// This file's script: the shared ping-then-error scenario failing with 429.
fn scenario_text() -> String {
    support::ping_then_error_scenario(429, "slow down")
}

/// What an agent would take from one reply.
#[derive(Debug, Default, PartialEq)]
struct Decoded {
    thinking: String,
    text: String,
    /// (name, id, arguments)
    calls: Vec<(String, String, Value)>,
}

struct Case {
    flavour: Flavour,
    path: &'static str,
    /// Builds a request body: the user prompt, and whether one tool output follows.
    request: fn(&str, bool) -> Value,
    decode: fn(&str) -> Decoded,
    /// The call name the request offered.
    call_name: &'static str,
    /// A JSON pointer to the error message in the error body.
    error_message: &'static str,
}

fn data_lines(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).expect("data line is JSON"))
        .collect()
}

fn chat_request(prompt: &str, with_output: bool) -> Value {
    let mut messages = vec![
        json!({"role": "system", "content": "You are Grok."}),
        json!({"role": "user", "content": prompt}),
    ];
    if with_output {
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "unity-ops__uap_slow", "arguments": "{}"}}]}));
        messages.push(json!({"role": "tool", "tool_call_id": "call_1", "content": "pong"}));
    }
    json!({"model": "mock-model", "stream": true, "messages": messages,
        "tools": [{"type": "function", "function": {"name": "use_tool"}}, {"type": "function", "function": {"name": "unity-ops__uap_slow"}}]})
}

fn chat_decode(body: &str) -> Decoded {
    let mut d = Decoded::default();
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for chunk in data_lines(body) {
        for choice in chunk["choices"].as_array().unwrap() {
            let delta = &choice["delta"];
            d.thinking += delta["reasoning_content"].as_str().unwrap_or_default();
            d.text += delta["content"].as_str().unwrap_or_default();
            for tc in delta["tool_calls"].as_array().into_iter().flatten() {
                let i = tc["index"].as_u64().unwrap() as usize;
                if calls.len() <= i {
                    calls.push((String::new(), String::new(), String::new()));
                }
                calls[i].0 += tc["function"]["name"].as_str().unwrap_or_default();
                calls[i].1 += tc["id"].as_str().unwrap_or_default();
                calls[i].2 += tc["function"]["arguments"].as_str().unwrap_or_default();
            }
        }
    }
    assert!(body.trim_end().ends_with("data: [DONE]"));
    d.calls = calls
        .into_iter()
        .map(|(n, i, a)| (n, i, serde_json::from_str(&a).unwrap()))
        .collect();
    d
}

fn anthropic_request(prompt: &str, with_output: bool) -> Value {
    let mut messages = vec![json!({"role": "user", "content": [{"type": "text", "text": prompt}]})];
    if with_output {
        messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "mcp__unity-ops__uap_slow", "input": {}}]}));
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "pong"}]}));
    }
    json!({"model": "claude-test", "stream": true, "system": "You are Claude Code.", "messages": messages,
        "tools": [{"name": "Bash", "input_schema": {}}, {"name": "mcp__unity-ops__uap_slow", "input_schema": {}}]})
}

fn anthropic_decode(body: &str) -> Decoded {
    let mut d = Decoded::default();
    let mut json_parts: Vec<String> = Vec::new();
    let events = data_lines(body);
    assert_eq!(events.first().unwrap()["type"], "message_start");
    assert_eq!(events.last().unwrap()["type"], "message_stop");
    for e in events {
        match e["type"].as_str().unwrap() {
            "content_block_start" if e["content_block"]["type"] == "tool_use" => {
                let b = &e["content_block"];
                d.calls.push((
                    b["name"].as_str().unwrap().into(),
                    b["id"].as_str().unwrap().into(),
                    Value::Null,
                ));
                json_parts.push(String::new());
            }
            "content_block_delta" => {
                let delta = &e["delta"];
                d.thinking += delta["thinking"].as_str().unwrap_or_default();
                d.text += delta["text"].as_str().unwrap_or_default();
                if let Some(p) = delta["partial_json"].as_str() {
                    *json_parts.last_mut().unwrap() += p;
                }
            }
            _ => {}
        }
    }
    for (c, j) in d.calls.iter_mut().zip(json_parts) {
        c.2 = serde_json::from_str(&j).unwrap();
    }
    d
}

fn gemini_request(prompt: &str, with_output: bool) -> Value {
    let mut contents = vec![json!({"role": "user", "parts": [{"text": prompt}]})];
    if with_output {
        contents.push(json!({"role": "model", "parts": [{"functionCall": {"id": "call_1", "name": "mcp_unity-ops_uap_slow", "args": {}}}]}));
        contents.push(json!({"role": "user", "parts": [{"functionResponse": {"id": "call_1", "name": "mcp_unity-ops_uap_slow", "response": {"output": "pong"}}}]}));
    }
    json!({"contents": contents, "tools": [{"functionDeclarations": [{"name": "read_file"}, {"name": "mcp_unity-ops_uap_slow"}]}]})
}

fn gemini_decode(body: &str) -> Decoded {
    let mut d = Decoded::default();
    let chunks = data_lines(body);
    assert_eq!(
        chunks.last().unwrap()["candidates"][0]["finishReason"],
        "STOP"
    );
    assert!(
        chunks.last().unwrap()["usageMetadata"]["totalTokenCount"]
            .as_u64()
            .unwrap()
            > 0
    );
    for c in chunks {
        for p in c["candidates"][0]["content"]["parts"].as_array().unwrap() {
            if let Some(fc) = p.get("functionCall") {
                d.calls.push((
                    fc["name"].as_str().unwrap().into(),
                    fc["id"].as_str().unwrap().into(),
                    fc["args"].clone(),
                ));
            } else if p["thought"] == true {
                d.thinking += p["text"].as_str().unwrap();
            } else {
                d.text += p["text"].as_str().unwrap_or_default();
            }
        }
    }
    d
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            flavour: Flavour::ChatCompletions,
            path: "/v1/chat/completions",
            request: chat_request,
            decode: chat_decode,
            call_name: "unity-ops__uap_slow",
            error_message: "/error/message",
        },
        Case {
            flavour: Flavour::Anthropic,
            path: "/v1/messages?beta=true",
            request: anthropic_request,
            decode: anthropic_decode,
            call_name: "mcp__unity-ops__uap_slow",
            error_message: "/error/message",
        },
        Case {
            flavour: Flavour::Gemini,
            path: "/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
            request: gemini_request,
            decode: gemini_decode,
            call_name: "mcp_unity-ops_uap_slow",
            error_message: "/error/message",
        },
    ]
}

async fn start(flavour: Flavour) -> Running {
    let s = scenario::parse(Path::new("t.toml"), scenario_text().as_bytes()).unwrap();
    ModelServer::start(
        flavour,
        ModelScript::from_scenario(&s),
        ToolNaming::default(),
    )
    .await
    .unwrap()
}

async fn post(server: &Running, path: &str, body: &Value) -> (u16, String) {
    let resp = reqwest::Client::new()
        .post(format!("{}{path}", server.url()))
        .json(body)
        .send()
        .await
        .unwrap();
    (resp.status().as_u16(), resp.text().await.unwrap())
}

#[tokio::test]
async fn every_flavour_answers_the_script_in_its_own_shape() {
    for case in cases() {
        let name = format!("{:?}", case.flavour);
        let server = start(case.flavour).await;

        let (status, body) = post(
            &server,
            case.path,
            &(case.request)("Ping the Unity editor.", false),
        )
        .await;
        assert_eq!(status, 200, "{name}: {body}");
        assert_eq!(
            (case.decode)(&body),
            Decoded {
                thinking: "I should ping.".into(),
                text: "Pinging.".into(),
                calls: vec![(case.call_name.into(), "call_1".into(), json!({"ms": 1}))],
            },
            "{name}: first request"
        );

        let (status, body) = post(
            &server,
            case.path,
            &(case.request)("Ping the Unity editor.", true),
        )
        .await;
        assert_eq!(status, 200, "{name}");
        assert_eq!(
            (case.decode)(&body),
            Decoded {
                text: "The editor answered pong.".into(),
                ..Default::default()
            },
            "{name}: after one tool output"
        );

        let (status, body) = post(&server, case.path, &(case.request)("Fail please.", false)).await;
        assert_eq!(status, 429, "{name}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            v.pointer(case.error_message).and_then(Value::as_str),
            Some("slow down"),
            "{name}: {body}"
        );

        server.shutdown().await;
    }
}

#[tokio::test]
async fn auxiliary_endpoints_answer_without_touching_the_script() {
    // (flavour, method, path, body, a fragment the answer must contain)
    let cases: Vec<(Flavour, &str, &str, Value, &str)> = vec![
        (
            Flavour::ChatCompletions,
            "GET",
            "/v1/models",
            Value::Null,
            "\"object\":\"list\"",
        ),
        (Flavour::ChatCompletions, "GET", "/", Value::Null, "{}"),
        (
            Flavour::Anthropic,
            "POST",
            "/v1/messages/count_tokens?beta=true",
            json!({}),
            "input_tokens",
        ),
        (
            Flavour::Gemini,
            "POST",
            "/v1beta/models/g:countTokens",
            json!({}),
            "totalTokens",
        ),
        (
            Flavour::Gemini,
            "POST",
            "/v1beta/models/g:generateContent",
            gemini_request("Ping the Unity editor.", false),
            "complexity_score",
        ),
    ];
    for (flavour, method, path, body, fragment) in cases {
        let server = start(flavour).await;
        let client = reqwest::Client::new();
        let url = format!("{}{path}", server.url());
        let resp = if method == "GET" {
            client.get(url).send().await
        } else {
            client.post(url).json(&body).send().await
        }
        .unwrap();
        assert_eq!(resp.status().as_u16(), 200, "{flavour:?} {method} {path}");
        let text = resp.text().await.unwrap();
        assert!(
            text.contains(fragment),
            "{flavour:?} {method} {path}: {text}"
        );
        server.shutdown().await;
    }
}

#[tokio::test]
async fn gemini_api_keys_in_the_query_are_redacted() {
    let mut server = start(Flavour::Gemini).await;
    let mut events = server.take_events().unwrap();
    post(
        &server,
        "/v1beta/models/g:streamGenerateContent?alt=sse&key=AIza-secret",
        &gemini_request("Ping the Unity editor.", false),
    )
    .await;
    server.shutdown().await;
    let first = events.try_recv().unwrap();
    let acp_harness::model_server::ModelExchange::Http(stub_mcp::Exchange::Request {
        path, ..
    }) = first
    else {
        panic!("{first:?}")
    };
    assert_eq!(
        path,
        "/v1beta/models/g:streamGenerateContent?alt=sse&key=<redacted>"
    );
}

/// Grok's model reaches MCP tools through `use_tool`: with the profile's
/// `mcp_call` role a unity-ops call is wrapped in it; a scenario that asks
/// for direct calls (`mcp_calls = "direct"`) gets the qualified name.
#[tokio::test]
async fn a_unity_call_goes_through_the_profiles_meta_tool_unless_the_scenario_calls_directly() {
    use acp_harness::model_server::AgentTools;
    let tools: AgentTools = toml::from_str::<toml::Value>(
        "[mcp_call]\nname = \"use_tool\"\narguments = { tool_name = \"unity-ops__{tool}\", tool_input = \"{arguments}\" }\n",
    )
    .unwrap()
    .try_into()
    .unwrap();
    let cases = [
        (
            "",
            (
                "use_tool",
                json!({"tool_name": "unity-ops__uap_slow", "tool_input": {"ms": 1}}),
            ),
        ),
        (
            "mcp_calls = \"direct\"\n",
            ("unity-ops__uap_slow", json!({"ms": 1})),
        ),
    ];
    for (top, (name, args)) in cases {
        let s = scenario::parse(
            Path::new("t.toml"),
            format!("{top}{}", scenario_text()).as_bytes(),
        )
        .unwrap();
        let server = ModelServer::start_with_agent_tools(
            Flavour::ChatCompletions,
            ModelScript::from_scenario(&s),
            ToolNaming::default(),
            tools.clone(),
        )
        .await
        .unwrap();
        let (status, body) = post(
            &server,
            "/v1/chat/completions",
            &chat_request("Ping the Unity editor.", false),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            chat_decode(&body).calls,
            vec![(name.to_string(), "call_1".to_string(), args)],
            "{top:?}"
        );
    }
}

/// Every profile's model section is one the model server speaks (the
/// recorder hands it over as is).
#[test]
fn every_shipped_profile_names_a_flavour_and_tool_naming_the_model_server_speaks() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let p = acp_harness::profile::Profile::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let _: Flavour = serde_json::from_value(Value::String(p.model.flavour.clone()))
            .unwrap_or_else(|e| panic!("{}: flavour: {e}", path.display()));
        let _: ToolNaming = p
            .model
            .tool_naming
            .clone()
            .try_into()
            .unwrap_or_else(|e| panic!("{}: tool_naming: {e}", path.display()));
        seen += 1;
    }
    assert!(seen >= 3, "expected at least three profiles");
}
