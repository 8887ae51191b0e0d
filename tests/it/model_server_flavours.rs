//! Every provider flavour answers the same script the same way: the first
//! request of a turn gets thinking, text and the tool call (named as the
//! request offered it, with the script's call id), the request carrying one
//! tool output gets the second reply, and a scripted error is an HTTP error
//! in the provider's error shape. Each case decodes the reply the way that
//! provider's clients do (a test double of the agent side).

use crate::support;

use std::path::Path;

use acp_harness::capture::model_server::{Flavour, ModelScript, ModelServer, Running, ToolNaming};
use acp_harness::corpus::scenario;
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
    let acp_harness::capture::model_server::ModelExchange::Http(stub_mcp::Exchange::Request {
        path,
        ..
    }) = first
    else {
        panic!("{first:?}")
    };
    assert_eq!(
        path,
        "/v1beta/models/g:streamGenerateContent?alt=sse&key=<redacted>"
    );
}

/// Gemini CLI's router check (a non-streaming `generateContent` without
/// tools) is answered from its profile's side-request declaration, in one
/// JSON response; without the declaration the request, which carries the
/// turn's conversation but offers no tools, is off the script, never served
/// the turn's reply.
async fn gemini_router_checks_are_answered_from_the_profiles_side_request() {
    use acp_harness::capture::model_server::{AgentTools, ModelExchange, SideRequests};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/gemini-cli.toml");
    let profile = acp_harness::corpus::profile::Profile::load(&dir).unwrap();
    let side: SideRequests = profile.model.side_requests.clone().try_into().unwrap();
    let s = scenario::parse(Path::new("t.toml"), scenario_text().as_bytes()).unwrap();
    let mut router = gemini_request("Ping the Unity editor.", false);
    router.as_object_mut().unwrap().remove("tools");
    for (declared, routed) in [(side, true), (SideRequests::default(), false)] {
        let mut server = ModelServer::start_with_profile(
            Flavour::Gemini,
            ModelScript::from_scenario(&s),
            ToolNaming::default(),
            AgentTools::default(),
            declared,
        )
        .await
        .unwrap();
        let mut events = server.take_events().unwrap();
        let (status, body) = post(&server, "/v1beta/models/g:generateContent", &router).await;
        assert_eq!(status, 200, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        let parts = &v["candidates"][0]["content"]["parts"];
        let mut off = false;
        while let Ok(e) = events.try_recv() {
            off |= matches!(e, ModelExchange::OffScript { .. });
        }
        assert_eq!(off, !routed, "off script without the declaration only");
        if routed {
            let answer: Value = serde_json::from_str(parts[0]["text"].as_str().unwrap()).unwrap();
            assert_eq!(answer["complexity_score"], 1, "{body}");
        } else {
            assert_eq!(parts[0]["text"], "OK.", "{body}");
        }
        server.shutdown().await;
    }
}

/// Grok's model reaches MCP tools through `use_tool`: with the profile's
/// `mcp_call` role a unity-ops call is wrapped in it; a scenario that asks
/// for direct calls (`mcp_calls = "direct"`) gets the qualified name.
async fn a_unity_call_goes_through_the_profiles_meta_tool_unless_the_scenario_calls_directly() {
    use acp_harness::capture::model_server::AgentTools;
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
fn every_shipped_profile_names_a_flavour_and_tool_naming_the_model_server_speaks() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let p =
            acp_harness::corpus::profile::Profile::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let _: Flavour = serde_json::from_value(Value::String(p.model.flavour.clone()))
            .unwrap_or_else(|e| panic!("{}: flavour: {e}", path.display()));
        let _: acp_harness::capture::model_server::SideRequests = p
            .model
            .side_requests
            .clone()
            .try_into()
            .unwrap_or_else(|e| panic!("{}: side_requests: {e}", path.display()));
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

/// A conversation in no provider's shape; each flavour renders it the way
/// its agents send it.
#[derive(Clone, Copy)]
enum M {
    /// A user message with these text blocks.
    User(&'static [&'static str]),
    /// The assistant calls `uap_slow` (call id `call_1`).
    Call,
    /// The tool's text result.
    Result,
    /// The tool's result with an image (where the API cannot put one in a
    /// tool result, the agent adds a user message holding only the image).
    ImageResult,
    /// The same, the image's user message led by a caption ("Attached
    /// media from tool result:").
    CaptionedImageResult,
    /// A tool result and these text blocks in one user message (separate
    /// messages where the API keeps them apart).
    ResultThen(&'static [&'static str]),
    /// The assistant's final answer.
    Answer(&'static str),
}

const PNG: &str = "iVBORw0KGgo=";

fn render_chat(conv: &[M]) -> Value {
    let mut messages = vec![json!({"role": "system", "content": "You are an agent."})];
    let user = |texts: &[&str]| json!({"role": "user", "content": texts.iter().map(|t| json!({"type": "text", "text": t})).collect::<Vec<_>>()});
    let result = json!({"role": "tool", "tool_call_id": "call_1", "content": "pong"});
    for m in conv {
        match m {
            M::User(t) => messages.push(user(t)),
            M::Call => messages.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "unity-ops__uap_slow", "arguments": "{}"}}]})),
            M::Result => messages.push(result.clone()),
            M::ImageResult => {
                messages.push(result.clone());
                messages.push(json!({"role": "user", "content": [{"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}")}}]}));
            }
            M::CaptionedImageResult => {
                messages.push(result.clone());
                messages.push(json!({"role": "user", "content": [{"type": "text", "text": "Attached media from tool result:"}, {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}")}}]}));
            }
            M::ResultThen(t) => {
                messages.push(result.clone());
                messages.push(user(t));
            }
            M::Answer(t) => messages.push(json!({"role": "assistant", "content": t})),
        }
    }
    json!({"model": "mock-model", "stream": true, "messages": messages,
        "tools": [{"type": "function", "function": {"name": "unity-ops__uap_slow"}}]})
}

fn render_anthropic(conv: &[M]) -> Value {
    let text = |t: &&str| json!({"type": "text", "text": t});
    let result = |content: Value| json!({"type": "tool_result", "tool_use_id": "call_1", "content": content});
    let messages: Vec<Value> = conv
        .iter()
        .map(|m| match m {
            M::User(t) => json!({"role": "user", "content": t.iter().map(text).collect::<Vec<_>>()}),
            M::Call => json!({"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "mcp__unity-ops__uap_slow", "input": {}}]}),
            M::Result => json!({"role": "user", "content": [result(json!("pong"))]}),
            M::ImageResult | M::CaptionedImageResult => json!({"role": "user", "content": [result(json!([{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}]))]}),
            M::ResultThen(t) => {
                let mut blocks = vec![result(json!("pong"))];
                blocks.extend(t.iter().map(text));
                json!({"role": "user", "content": blocks})
            }
            M::Answer(t) => json!({"role": "assistant", "content": [{"type": "text", "text": t}]}),
        })
        .collect();
    json!({"model": "claude-test", "stream": true, "system": [{"type": "text", "text": "You are Claude Code."}],
        "messages": messages, "tools": [{"name": "mcp__unity-ops__uap_slow", "input_schema": {}}]})
}

fn render_gemini(conv: &[M]) -> Value {
    let text = |t: &&str| json!({"text": t});
    let response = json!({"functionResponse": {"id": "call_1", "name": "mcp_unity-ops_uap_slow", "response": {"output": "pong"}}});
    let contents: Vec<Value> = conv
        .iter()
        .map(|m| match m {
            M::User(t) => json!({"role": "user", "parts": t.iter().map(text).collect::<Vec<_>>()}),
            M::Call => json!({"role": "model", "parts": [{"functionCall": {"id": "call_1", "name": "mcp_unity-ops_uap_slow", "args": {}}}]}),
            M::Result => json!({"role": "user", "parts": [response.clone()]}),
            M::ImageResult | M::CaptionedImageResult => json!({"role": "user", "parts": [response.clone(), {"inlineData": {"mimeType": "image/png", "data": PNG}}]}),
            M::ResultThen(t) => {
                let mut parts = vec![response.clone()];
                parts.extend(t.iter().map(text));
                json!({"role": "user", "parts": parts})
            }
            M::Answer(t) => json!({"role": "model", "parts": [{"text": t}]}),
        })
        .collect();
    json!({"contents": contents, "systemInstruction": {"parts": [{"text": "You are Gemini CLI."}]},
        "tools": [{"functionDeclarations": [{"name": "mcp_unity-ops_uap_slow"}]}]})
}

fn render_responses(conv: &[M]) -> Value {
    let user = |texts: &[&str]| json!({"type": "message", "role": "user", "content": texts.iter().map(|t| json!({"type": "input_text", "text": t})).collect::<Vec<_>>()});
    let mut input = vec![
        json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are a coding agent."}]}),
    ];
    let output =
        |o: Value| json!({"type": "function_call_output", "call_id": "call_1", "output": o});
    for m in conv {
        match m {
            M::User(t) => input.push(user(t)),
            M::Call => input.push(json!({"type": "function_call", "name": "uap_slow", "namespace": "mcp__unity_ops", "arguments": "{}", "call_id": "call_1"})),
            M::Result => input.push(output(json!("pong"))),
            M::ImageResult | M::CaptionedImageResult => input.push(output(json!([{"type": "input_image", "image_url": format!("data:image/png;base64,{PNG}")}]))),
            M::ResultThen(t) => {
                input.push(output(json!("pong")));
                input.push(user(t));
            }
            M::Answer(t) => input.push(json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": t}]})),
        }
    }
    json!({"model": "mock-model", "stream": true, "input": input,
        "tools": [{"type": "namespace", "name": "mcp__unity_ops", "tools": [{"type": "function", "name": "uap_slow"}]}]})
}

fn responses_decode(body: &str) -> Decoded {
    let mut d = Decoded::default();
    for e in data_lines(body) {
        match e["type"].as_str().unwrap_or_default() {
            "response.output_text.delta" => d.text += e["delta"].as_str().unwrap(),
            "response.reasoning_summary_text.delta" => d.thinking += e["delta"].as_str().unwrap(),
            "response.output_item.done" if e["item"]["type"] == "function_call" => d.calls.push((
                e["item"]["name"].as_str().unwrap().into(),
                e["item"]["call_id"].as_str().unwrap().into(),
                serde_json::from_str(e["item"]["arguments"].as_str().unwrap()).unwrap(),
            )),
            _ => {}
        }
    }
    d
}

/// The prompt-finding scenario: turn 1 pings (a call, then an answer),
/// turn 2 says hello.
const PROMPT_FINDING_SCENARIO: &str = r#"
name = "t"
summary = "prompt finding"
tools = ["uap_slow"]

[[step]]
panel = "prompt"
text = "Ping the Unity editor."
  [[step.model]]
  text = "Pinging."
  tool_calls = [{ tool = "uap_slow", arguments = {}, id = "call_1" }]
  [[step.model]]
  text = "The editor answered pong."

[[step]]
panel = "prompt"
text = "Say hello."
  [[step.model]]
  text = "hello"
"#;

/// What a request must come to.
#[derive(Debug, PartialEq)]
enum Want {
    /// A scripted reply with this text.
    Reply(&'static str),
    /// Off the script: answered neutrally, published as off-script.
    OffScript,
    /// A declared side request, answered with its reply.
    Side(&'static str),
}

/// Prompt finding, the same in every flavour: the prompt counts in any user
/// message, beside tool results, in blocks joined without separators, inside
/// framing text and after an image result; trailing reminders do not hide it; a request about
/// a finished turn or past the script is off script unless the profile
/// declares it.
async fn every_flavour_finds_the_prompt_wherever_the_request_carries_it() {
    use acp_harness::capture::model_server::{AgentTools, ModelExchange, SideRequests};
    const P1: &str = "Ping the Unity editor.";
    let cases: Vec<(&str, Vec<M>, Want)> = vec![
        (
            "the prompt alone",
            vec![M::User(&[P1])],
            Want::Reply("Pinging."),
        ),
        (
            "a reminder message before the prompt",
            vec![
                M::User(&["<system-reminder>ctx</system-reminder>"]),
                M::User(&[P1]),
            ],
            Want::Reply("Pinging."),
        ),
        (
            "a trailing reminder message after the prompt",
            vec![M::User(&[P1]), M::User(&[REMINDER])],
            Want::Reply("Pinging."),
        ),
        (
            "custom instructions and prompt as two blocks",
            vec![M::User(&["Be brief.", P1])],
            Want::Reply("Pinging."),
        ),
        (
            "blocks joined without a separator",
            vec![M::User(&["Be brief.Ping the Unity editor."])],
            Want::Reply("Pinging."),
        ),
        (
            "the prompt inside framing text of the agent's own",
            vec![M::User(&[
                "[Context: Unity project]\nThe user says: \"Ping the Unity editor.\" Answer briefly.",
            ])],
            Want::Reply("Pinging."),
        ),
        (
            "after the tool result",
            vec![M::User(&[P1]), M::Call, M::Result],
            Want::Reply("The editor answered pong."),
        ),
        (
            "after an image tool result",
            vec![M::User(&[P1]), M::Call, M::ImageResult],
            Want::Reply("The editor answered pong."),
        ),
        (
            "after an image tool result whose image message has a caption",
            vec![M::User(&[P1]), M::Call, M::CaptionedImageResult],
            Want::Reply("The editor answered pong."),
        ),
        (
            "a reminder beside the tool result",
            vec![M::User(&[P1]), M::Call, M::ResultThen(&[REMINDER])],
            Want::Reply("The editor answered pong."),
        ),
        (
            "the next prompt beside the previous turn's tool result",
            vec![M::User(&[P1]), M::Call, M::ResultThen(&["Say hello."])],
            Want::Reply("hello"),
        ),
        (
            "the next prompt after an image tool result",
            vec![
                M::User(&[P1]),
                M::Call,
                M::ImageResult,
                M::Answer("pong"),
                M::User(&["Say hello."]),
            ],
            Want::Reply("hello"),
        ),
        (
            "past the turn's last reply",
            vec![M::User(&[P1]), M::Call, M::Result, M::Call, M::Result],
            Want::OffScript,
        ),
        (
            "a title request quoting the prompt in a sentence",
            vec![
                M::User(&[P1]),
                M::Answer("Done."),
                M::User(&["Write a title for: Ping the Unity editor."]),
            ],
            Want::OffScript,
        ),
        (
            "a reminder-shaped request about the finished turn",
            vec![
                M::User(&[P1]),
                M::Call,
                M::Result,
                M::Answer("pong"),
                M::User(&["<system-reminder>Summarise the turn.</system-reminder>"]),
            ],
            Want::OffScript,
        ),
        (
            "the same request, declared as a side request",
            vec![
                M::User(&[P1]),
                M::Call,
                M::Result,
                M::Answer("pong"),
                M::User(&["<system-reminder>Summarise this turn.</system-reminder>"]),
            ],
            Want::Side("Pinged."),
        ),
        (
            "no prompt at all",
            vec![M::User(&["Hello there."])],
            Want::OffScript,
        ),
    ];
    type Render = fn(&[M]) -> Value;
    type Decode = fn(&str) -> Decoded;
    let flavours: [(Flavour, &str, Render, Decode); 4] = [
        (
            Flavour::ChatCompletions,
            "/v1/chat/completions",
            render_chat,
            chat_decode,
        ),
        (
            Flavour::Anthropic,
            "/v1/messages?beta=true",
            render_anthropic,
            anthropic_decode,
        ),
        (
            Flavour::Gemini,
            "/v1beta/models/g:streamGenerateContent?alt=sse",
            render_gemini,
            gemini_decode,
        ),
        (
            Flavour::Responses,
            "/v1/responses",
            render_responses,
            responses_decode,
        ),
    ];
    let side: SideRequests = vec![
        toml::Value::try_from(json!({"name": "turn summary", "last_user_matches": "Summarise this turn", "reply": "Pinged."}))
            .unwrap(),
    ]
    .try_into()
    .unwrap();
    let s = scenario::parse(Path::new("t.toml"), PROMPT_FINDING_SCENARIO.as_bytes()).unwrap();
    for (flavour, path, render, decode) in flavours {
        let mut server = ModelServer::start_with_profile(
            flavour,
            ModelScript::from_scenario(&s),
            ToolNaming::default(),
            AgentTools::default(),
            side.clone(),
        )
        .await
        .unwrap();
        let mut events = server.take_events().unwrap();
        for (case, conv, want) in &cases {
            let (status, body) = post(&server, path, &render(conv)).await;
            assert_eq!(status, 200, "{flavour:?} {case}: {body}");
            let text = decode(&body).text;
            let mut off = false;
            while let Ok(e) = events.try_recv() {
                off |= matches!(e, ModelExchange::OffScript { .. });
            }
            let got = match (off, text.as_str()) {
                (true, "OK.") => Want::OffScript,
                (true, other) => panic!("{flavour:?} {case}: off script yet answered {other:?}"),
                (false, "Pinged.") => Want::Side("Pinged."),
                (false, _) => Want::Reply(Box::leak(text.into_boxed_str())),
            };
            assert_eq!(&got, want, "{flavour:?}: {case}");
        }
        server.shutdown().await;
    }
}

const REMINDER: &str = "<system-reminder>\nThe tool list changed.\n</system-reminder>";

/// A turn that offers no tools is still a turn: an agent with no tools of
/// its own sends its turn with an empty tool list, and every flavour serves
/// it the turn's reply; the same request with no tool list at all (a
/// router check, a title request) stays off the script.
async fn a_turn_with_an_empty_tool_list_is_served_the_turn_and_one_with_none_is_off_script() {
    for case in cases() {
        let name = format!("{:?}", case.flavour);
        let mut turn = (case.request)("Ping the Unity editor.", false);
        turn["tools"] = json!([]);
        let mut no_list = turn.clone();
        no_list.as_object_mut().unwrap().remove("tools");
        for (body, served) in [(turn, true), (no_list, false)] {
            let server = start(case.flavour).await;
            let (status, reply) = post(&server, case.path, &body).await;
            assert_eq!(status, 200, "{name}: {reply}");
            let text = (case.decode)(&reply).text;
            if served {
                assert_eq!(text, "Pinging.", "{name}: the turn with `tools: []`");
            } else {
                assert_eq!(text, "OK.", "{name}: a request with no tool list");
            }
            server.shutdown().await;
        }
    }
}

/// A profile's `[model] mcp_call_arguments` ride along in every scripted
/// unity-ops call (an agent whose tool schema requires a field of its own),
/// beside the scenario's arguments and never over them.
async fn scripted_mcp_calls_carry_the_profiles_extra_arguments() {
    for case in cases() {
        let name = format!("{:?}", case.flavour);
        let s = scenario::parse(Path::new("t.toml"), scenario_text().as_bytes()).unwrap();
        let mut script = ModelScript::from_scenario(&s);
        script.mcp_call_arguments = json!({"security_risk": "LOW", "ms": 99})
            .as_object()
            .unwrap()
            .clone();
        let server = ModelServer::start(case.flavour, script, ToolNaming::default())
            .await
            .unwrap();
        let (status, body) = post(
            &server,
            case.path,
            &(case.request)("Ping the Unity editor.", false),
        )
        .await;
        assert_eq!(status, 200, "{name}: {body}");
        let calls = (case.decode)(&body).calls;
        assert_eq!(
            calls[0].2,
            json!({"ms": 1, "security_risk": "LOW"}),
            "{name}: the scenario's argument kept, the profile's added"
        );
        server.shutdown().await;
    }
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    let mut trials = trials!(model_server_flavours: every_shipped_profile_names_a_flavour_and_tool_naming_the_model_server_speaks);
    trials.extend(async_trials!(model_server_flavours: every_flavour_answers_the_script_in_its_own_shape, auxiliary_endpoints_answer_without_touching_the_script, gemini_api_keys_in_the_query_are_redacted, gemini_router_checks_are_answered_from_the_profiles_side_request, a_unity_call_goes_through_the_profiles_meta_tool_unless_the_scenario_calls_directly, every_flavour_finds_the_prompt_wherever_the_request_carries_it, a_turn_with_an_empty_tool_list_is_served_the_turn_and_one_with_none_is_off_script, scripted_mcp_calls_carry_the_profiles_extra_arguments));
    trials
}
