//! A real MCP client (rmcp's Streamable HTTP client over reqwest) against the
//! stub, in both response modes.

use std::time::{Duration, Instant};

use base64::Engine;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, ErrorCode,
    ProtocolVersion, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{Value, json};
use stub_mcp::{Config, Exchange, ResponseMode, Running};
use tokio::sync::mpsc::UnboundedReceiver;

const MODES: [ResponseMode; 2] = [ResponseMode::Json, ResponseMode::Sse];
const WAIT: Duration = Duration::from_secs(20);

async fn start(mode: ResponseMode, tools: Option<&[&str]>) -> Running {
    stub_mcp::serve(Config {
        mode,
        tools: tools.map(|t| t.iter().map(|s| s.to_string()).collect()),
        screenshot_base64_len: 20_000,
        ..Config::default()
    })
    .await
    .expect("server starts")
}

fn transport(server: &Running) -> StreamableHttpClientTransport<reqwest::Client> {
    StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(server.url().to_string())
            .auth_header(server.token().to_string()),
    )
}

async fn connect(server: &Running) -> RunningService<RoleClient, ()> {
    tokio::time::timeout(WAIT, ().serve(transport(server)))
        .await
        .expect("initialize in time")
        .expect("initialize")
}

fn args(value: Value) -> rmcp::model::JsonObject {
    value.as_object().cloned().expect("arguments are an object")
}

async fn call(
    client: &RunningService<RoleClient, ()>,
    name: &'static str,
    arguments: Value,
) -> Result<CallToolResult, ServiceError> {
    tokio::time::timeout(
        WAIT,
        client.call_tool(CallToolRequestParams::new(name).with_arguments(args(arguments))),
    )
    .await
    .expect("tool answers in time")
}

fn texts(result: &CallToolResult) -> Vec<String> {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

async fn drain(events: &mut UnboundedReceiver<Exchange>) -> Vec<Exchange> {
    let mut out = Vec::new();
    while let Ok(Some(event)) =
        tokio::time::timeout(Duration::from_millis(300), events.recv()).await
    {
        out.push(event);
    }
    out
}

#[tokio::test]
async fn initialize_and_tools_list_show_the_whole_catalogue_in_both_modes() {
    for mode in MODES {
        let server = start(mode, None).await;
        let client = connect(&server).await;
        let info = client.peer_info().expect("server info after initialize");
        assert_eq!(
            info.server_info.as_ref().map(|i| i.name.as_str()),
            Some("unity-ops"),
            "{mode:?}"
        );
        assert!(info.capabilities.tools.is_some(), "{mode:?}");
        assert!(
            info.protocol_version.as_str() <= stub_mcp::NEWEST_PROTOCOL.as_str(),
            "{mode:?}"
        );

        let tools = client.list_all_tools().await.expect("tools/list");
        let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
        let expected: Vec<_> = stub_mcp::catalogue()
            .iter()
            .map(|s| s.name.to_string())
            .collect();
        assert_eq!(names, expected, "{mode:?}");
        let ping = tools.iter().find(|t| t.name == "uap_ping").unwrap();
        assert_eq!(
            ping.annotations.as_ref().and_then(|a| a.read_only_hint),
            Some(false),
            "ping must ask permission"
        );
        let shot = tools
            .iter()
            .find(|t| t.name == "uap_editor_screenshot")
            .unwrap();
        assert_eq!(
            shot.annotations.as_ref().and_then(|a| a.read_only_hint),
            Some(true)
        );
        let structured = tools.iter().find(|t| t.name == "uap_structured").unwrap();
        assert!(structured.output_schema.is_some());
        client.cancel().await.expect("client closes");
        server.shutdown().await;
    }
}

/// Each tool, with the arguments a scenario would give, and what must come back.
#[tokio::test]
async fn each_tool_answers_as_documented_in_both_modes() {
    type Check = fn(&Result<CallToolResult, ServiceError>);
    let cases: Vec<(&'static str, Value, Check)> = vec![
        ("uap_ping", json!({}), |r| {
            let r = r.as_ref().unwrap();
            assert_eq!(texts(r), vec!["pong"]);
            assert_eq!(r.is_error, Some(false));
        }),
        (
            "uap_editor_screenshot",
            json!({"view": "scene", "return_image": true}),
            |r| {
                let r = r.as_ref().unwrap();
                assert_eq!(r.content.len(), 2);
                let text = &texts(r)[0];
                assert!(
                    text.starts_with("Captured Scene view to <workspace>/Temp/uap_scene.png ("),
                    "{text}"
                );
                let image = r.content[1].as_image().expect("second block is an image");
                assert_eq!(image.mime_type, "image/png");
                assert!(
                    image.data.len().abs_diff(20_000) < 1_000,
                    "base64 length {}",
                    image.data.len()
                );
                let png = base64::engine::general_purpose::STANDARD
                    .decode(&image.data)
                    .expect("valid base64");
                let mut reader = png::Decoder::new(std::io::Cursor::new(png))
                    .read_info()
                    .expect("valid PNG");
                let (w, h) = (reader.info().width, reader.info().height);
                let mut buf = vec![0; reader.output_buffer_size().unwrap()];
                reader.next_frame(&mut buf).expect("decodable pixels");
                assert!(text.ends_with(&format!("({w}x{h})")), "{text} vs {w}x{h}");
            },
        ),
        (
            "uap_editor_screenshot",
            json!({"view": "game", "return_image": false}),
            |r| {
                let r = r.as_ref().unwrap();
                assert_eq!(r.content.len(), 1, "no image when return_image is false");
                assert!(
                    texts(r)[0]
                        .starts_with("Captured Game view to <workspace>/Temp/uap_game.png (")
                );
            },
        ),
        (
            "uap_scripts_commit",
            json!({"paths": ["UapStaging/Editor/Hello.cs"]}),
            |r| {
                let r = r.as_ref().unwrap();
                assert_eq!(r.is_error, Some(false));
                assert!(
                    texts(r)[0].contains("UapStaging/Editor/Hello.cs -> Assets/Editor/Hello.cs")
                );
            },
        ),
        (
            "uap_scripts_commit",
            json!({"paths": ["UapStaging/Editor/BrokenHello.cs"]}),
            |r| {
                let r = r.as_ref().unwrap();
                assert_eq!(r.is_error, Some(true));
                assert!(texts(r)[0].contains("error CS1002"));
            },
        ),
        ("uap_fail", json!({}), |r| {
            let r = r.as_ref().unwrap();
            assert_eq!(r.is_error, Some(true));
            assert!(!texts(r)[0].is_empty());
        }),
        ("uap_rpc_error", json!({}), |r| match r {
            Err(ServiceError::McpError(e)) => assert_eq!(e.code, ErrorCode::INTERNAL_ERROR),
            other => panic!("expected a JSON-RPC error, got {other:?}"),
        }),
        ("uap_slow", json!({"ms": "20"}), |r| {
            assert_eq!(
                texts(r.as_ref().unwrap()),
                vec!["uap_slow: waited 20 ms"],
                "quoted numbers are read"
            );
        }),
        (
            "uap_editor_screenshot",
            json!({"return_image": "false"}),
            |r| {
                assert_eq!(
                    r.as_ref().unwrap().content.len(),
                    1,
                    "a quoted boolean is read"
                );
            },
        ),
        ("uap_slow", json!({"ms": 30}), |r| {
            assert_eq!(texts(r.as_ref().unwrap()), vec!["uap_slow: waited 30 ms"]);
        }),
        ("uap_structured", json!({}), |r| {
            let r = r.as_ref().unwrap();
            let structured = r.structured_content.as_ref().expect("structuredContent");
            assert_eq!(structured["scene"], "SampleScene");
            assert_eq!(
                serde_json::from_str::<Value>(&texts(r)[0]).unwrap(),
                *structured,
                "text mirrors the structure"
            );
            assert!(
                r.meta
                    .as_ref()
                    .is_some_and(|m| m.0.contains_key("unity-ops/editorVersion"))
            );
        }),
        ("uap_slow", json!({"ms": "soon"}), |r| match r {
            Err(ServiceError::McpError(e)) => {
                assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
                assert!(e.message.contains("ms"), "{}", e.message);
            }
            other => panic!("expected invalid params, got {other:?}"),
        }),
    ];
    for mode in MODES {
        let server = start(mode, None).await;
        let client = connect(&server).await;
        for (name, arguments, check) in &cases {
            let result = call(&client, name, arguments.clone()).await;
            eprintln!("{mode:?} {name} {arguments}");
            check(&result);
        }
        client.cancel().await.expect("client closes");
        server.shutdown().await;
    }
}

#[tokio::test]
async fn an_unknown_tool_and_a_tool_not_offered_are_invalid_params_errors() {
    for mode in MODES {
        let server = start(mode, Some(&["uap_ping", "uap_slow"])).await;
        let client = connect(&server).await;
        let names: Vec<_> = client
            .list_all_tools()
            .await
            .unwrap()
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        assert_eq!(names, ["uap_ping", "uap_slow"], "{mode:?}");
        for name in ["uap_nonexistent", "uap_fail"] {
            match call(&client, name, json!({})).await {
                Err(ServiceError::McpError(e)) => {
                    assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{mode:?} {name}");
                    assert!(e.message.contains(name), "{}", e.message);
                }
                other => panic!("{mode:?} {name}: expected an error, got {other:?}"),
            }
        }
        client.cancel().await.unwrap();
        server.shutdown().await;
    }
}

#[tokio::test]
async fn the_default_screenshot_is_about_as_big_as_the_seed_one() {
    let server = stub_mcp::serve(Config {
        mode: ResponseMode::Sse,
        ..Config::default()
    })
    .await
    .unwrap();
    let client = connect(&server).await;
    let result = call(&client, "uap_editor_screenshot", json!({}))
        .await
        .unwrap();
    let image = result.content[1].as_image().expect("an image block");
    let len = image.data.len();
    assert!(
        len.abs_diff(stub_mcp::DEFAULT_SCREENSHOT_BASE64_LEN) < 5_000,
        "base64 length {len}"
    );
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn cancelling_uap_slow_in_a_session_stops_it_early() {
    let mut server = start(ResponseMode::Sse, None).await;
    let mut events = server.take_events().unwrap();
    let client = connect(&server).await;
    let started = Instant::now();
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("uap_slow").with_arguments(args(json!({"ms": 30_000}))),
    ));
    let handle = client
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    while server.tool_calls_in_flight() == 0 {
        assert!(started.elapsed() < WAIT, "uap_slow never started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    handle
        .cancel(Some("user interrupted".into()))
        .await
        .unwrap();
    // The session ends the request's stream; the recording sees it end early.
    let deadline = Instant::now() + WAIT;
    let mut call_id = None;
    loop {
        let event = tokio::time::timeout_at(deadline.into(), events.recv())
            .await
            .expect("a response in time")
            .unwrap();
        match &event {
            Exchange::Request { id, body, .. } if body.contains("\"tools/call\"") => {
                call_id = Some(*id)
            }
            Exchange::Response { id, .. } if Some(*id) == call_id => break,
            _ => {}
        }
    }
    while server.tool_calls_in_flight() > 0 {
        assert!(
            Instant::now() < deadline,
            "uap_slow kept running after the cancel"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn a_client_that_probes_server_discover_falls_back_to_initialize() {
    for mode in MODES {
        let mut server = start(mode, None).await;
        let mut events = server.take_events().unwrap();
        let lifecycle = ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: None,
        };
        let client =
            tokio::time::timeout(WAIT, ().serve_with_lifecycle(transport(&server), lifecycle))
                .await
                .expect("in time")
                .expect("falls back to initialize");
        let tools = client
            .list_all_tools()
            .await
            .expect("tools/list after fallback");
        assert!(!tools.is_empty());
        let result = call(&client, "uap_ping", json!({})).await.unwrap();
        assert_eq!(texts(&result), vec!["pong"]);
        client.cancel().await.unwrap();
        let methods: Vec<String> = drain(&mut events)
            .await
            .iter()
            .filter_map(|e| match e {
                Exchange::Request { body, .. } => serde_json::from_str::<Value>(body)
                    .ok()?
                    .get("method")?
                    .as_str()
                    .map(String::from),
                _ => None,
            })
            .collect();
        assert_eq!(
            methods.first().map(String::as_str),
            Some("server/discover"),
            "{mode:?}: {methods:?}"
        );
        assert_eq!(
            methods.get(1).map(String::as_str),
            Some("initialize"),
            "{mode:?}: {methods:?}"
        );
        server.shutdown().await;
    }
}

#[tokio::test]
async fn every_exchange_is_published_request_first_with_the_token_redacted() {
    for mode in MODES {
        let mut server = start(mode, None).await;
        let token = server.token().to_string();
        let mut events = server.take_events().unwrap();
        let client = connect(&server).await;
        client.list_all_tools().await.unwrap();
        call(&client, "uap_editor_screenshot", json!({}))
            .await
            .unwrap();
        client.cancel().await.unwrap();
        server.shutdown().await;
        let events = drain(&mut events).await;
        assert!(events.len() >= 6, "{mode:?}: {} events", events.len());
        let mut open = std::collections::BTreeSet::new();
        for event in &events {
            match event {
                Exchange::Request { id, headers, .. } => {
                    assert!(open.insert(*id), "{mode:?}: request {id} published twice");
                    let auth = headers
                        .iter()
                        .find(|(k, _)| k == "authorization")
                        .map(|(_, v)| v.as_str());
                    assert_eq!(auth, Some(stub_mcp::REDACTED), "{mode:?}");
                }
                Exchange::Response { id, .. } => assert!(
                    open.remove(id),
                    "{mode:?}: response {id} before its request"
                ),
            }
            assert!(
                !format!("{event:?}").contains(&token),
                "{mode:?}: the token leaked into an event"
            );
        }
        assert!(
            open.is_empty(),
            "{mode:?}: requests without a response: {open:?}"
        );
        let screenshot_response = events
            .iter()
            .find(|e| matches!(e, Exchange::Response { body, .. } if body.contains("image/png")))
            .expect("the screenshot response is captured whole");
        if mode == ResponseMode::Sse {
            assert!(
                screenshot_response.body().starts_with("data: "),
                "SSE text kept as is"
            );
        }
        let ServerResult::CallToolResult(_) = parse_result(screenshot_response.body()) else {
            panic!("not a tool result")
        };
    }
}

fn parse_result(body: &str) -> ServerResult {
    let json = body
        .strip_prefix("data: ")
        .map(|rest| rest.lines().next().unwrap_or(""))
        .unwrap_or(body);
    let value: Value = serde_json::from_str(json).expect("response JSON");
    serde_json::from_value(value["result"].clone()).expect("a server result")
}
