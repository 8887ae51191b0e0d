//! Raw HTTP against the stub: what the gate refuses, and how, and the
//! transport answers a client sees outside the happy path.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};
use stub_mcp::{Config, Exchange, ResponseMode, Running};

const MODES: [ResponseMode; 2] = [ResponseMode::Json, ResponseMode::Sse];
const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

async fn start(mode: ResponseMode) -> Running {
    stub_mcp::serve(Config {
        mode,
        token: Some("secret-token".into()),
        body_limit: 4096,
        ..Config::default()
    })
    .await
    .expect("server starts")
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

fn post(server: &Running, body: impl Into<reqwest::Body>) -> reqwest::RequestBuilder {
    http()
        .post(server.url())
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .bearer_auth(server.token())
        .body(body)
}

/// The JSON-RPC message in a body that is either JSON or SSE text.
fn message(body: &str) -> Value {
    let json = body
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or(body);
    serde_json::from_str(json).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {body}"))
}

async fn session(server: &Running) -> Option<String> {
    let response = post(server, INIT).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let sid = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    let body = response.text().await.unwrap();
    assert_eq!(message(&body)["result"]["serverInfo"]["name"], "unity-ops");
    sid
}

#[tokio::test]
async fn requests_without_the_right_bearer_token_get_401_on_every_method_and_path() {
    for mode in MODES {
        let server = start(mode).await;
        let base = server.url().trim_end_matches("/mcp").to_string();
        let cases: Vec<(&str, reqwest::RequestBuilder)> = vec![
            (
                "no token",
                http()
                    .post(server.url())
                    .header("content-type", "application/json")
                    .body(INIT),
            ),
            (
                "wrong token",
                http()
                    .post(server.url())
                    .bearer_auth("secret-tokeN")
                    .body(INIT),
            ),
            (
                "token prefix",
                http().post(server.url()).bearer_auth("secret").body(INIT),
            ),
            (
                "basic scheme",
                http()
                    .post(server.url())
                    .basic_auth("u", Some("secret-token"))
                    .body(INIT),
            ),
            ("GET without token", http().get(server.url())),
            ("DELETE without token", http().delete(server.url())),
            (
                "other path without token",
                http().get(format!("{base}/.well-known/oauth-protected-resource")),
            ),
        ];
        for (what, request) in cases {
            let response = request.send().await.unwrap();
            assert_eq!(
                response.status(),
                StatusCode::UNAUTHORIZED,
                "{mode:?} {what}"
            );
            assert!(
                response
                    .headers()
                    .get("www-authenticate")
                    .is_some_and(|v| v.to_str().unwrap().starts_with("Bearer"))
            );
        }
        server.shutdown().await;
    }
}

/// `no_auth` (stub-mcp --no-auth, for the MCP conformance suite) serves a
/// request without a token; Host and Origin are still checked.
#[tokio::test]
async fn no_auth_serves_requests_without_a_token_and_still_checks_the_origin() {
    let server = stub_mcp::serve(Config {
        no_auth: true,
        ..Config::default()
    })
    .await
    .expect("server starts");
    let plain = || {
        http()
            .post(server.url())
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(INIT)
    };
    let response = plain().send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body = response.text().await.unwrap();
    assert_eq!(message(&body)["result"]["serverInfo"]["name"], "unity-ops");
    let foreign = plain()
        .header("origin", "https://example.com")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_body_over_the_limit_gets_413() {
    for mode in MODES {
        let server = start(mode).await;
        let big = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
            "x".repeat(5000)
        );
        let response = post(&server, big).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE, "{mode:?}");
        assert!(
            response.text().await.unwrap().contains("4096"),
            "the message names the limit"
        );
        server.shutdown().await;
    }
}

#[tokio::test]
async fn malformed_or_non_jsonrpc_bodies_get_jsonrpc_errors() {
    // (body, expected code, expected id)
    let cases: &[(&str, i64, Value)] = &[
        ("{not json", -32700, Value::Null),
        ("", -32700, Value::Null),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            -32600,
            Value::Null,
        ),
        (r#"{"hello":"world"}"#, -32600, Value::Null),
        (r#"{"jsonrpc":"2.0","id":9}"#, -32600, json!(9)),
        (
            r#"{"jsonrpc":"1.0","id":"a","method":"ping"}"#,
            -32600,
            json!("a"),
        ),
    ];
    for mode in MODES {
        let server = start(mode).await;
        for (body, code, id) in cases {
            let response = post(&server, *body).send().await.unwrap();
            assert_eq!(
                response.status(),
                StatusCode::BAD_REQUEST,
                "{mode:?} {body}"
            );
            assert_eq!(response.headers()["content-type"], "application/json");
            let value: Value = response.json().await.unwrap();
            assert_eq!(value["jsonrpc"], "2.0");
            assert_eq!(value["error"]["code"], *code, "{mode:?} {body}: {value}");
            assert_eq!(value["id"], *id, "{mode:?} {body}");
            assert!(
                value["error"]["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty())
            );
        }
        server.shutdown().await;
    }
}

#[tokio::test]
async fn unknown_tools_and_methods_get_jsonrpc_errors_not_http_failures() {
    for mode in MODES {
        let server = start(mode).await;
        let sid = session(&server).await;
        let with_session = |b: reqwest::RequestBuilder| match &sid {
            Some(s) => b.header("mcp-session-id", s),
            None => b,
        };
        let cases = [
            (
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"uap_nope","arguments":{}}}"#,
                -32602,
            ),
            (
                r#"{"jsonrpc":"2.0","id":3,"method":"vendor/unknownMethod","params":{}}"#,
                -32601,
            ),
        ];
        for (body, code) in cases {
            let response = with_session(post(&server, body)).send().await.unwrap();
            let text = response.text().await.unwrap();
            assert_eq!(message(&text)["error"]["code"], code, "{mode:?}: {text}");
        }
        server.shutdown().await;
    }
}

#[tokio::test]
async fn get_is_405_notifications_are_202_and_delete_ends_a_session() {
    for mode in MODES {
        let server = start(mode).await;
        let sid = session(&server).await;
        assert_eq!(
            sid.is_some(),
            mode == ResponseMode::Sse,
            "{mode:?}: sessions only in SSE mode"
        );
        if mode == ResponseMode::Sse {
            assert_eq!(
                sid.as_deref(),
                Some(stub_mcp::session_id(1).as_str()),
                "session ids are counted"
            );
            assert_eq!(session(&server).await, Some(stub_mcp::session_id(2)));
        }
        let with_session = |b: reqwest::RequestBuilder| match &sid {
            Some(s) => b.header("mcp-session-id", s),
            None => b,
        };

        let get = with_session(
            http()
                .get(server.url())
                .header("accept", "text/event-stream")
                .bearer_auth(server.token()),
        );
        let response = get.send().await.unwrap();
        assert_eq!(
            response.status(),
            StatusCode::METHOD_NOT_ALLOWED,
            "{mode:?}"
        );
        assert!(response.headers().contains_key("allow"));

        let note = with_session(post(
            &server,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ));
        assert_eq!(
            note.send().await.unwrap().status(),
            StatusCode::ACCEPTED,
            "{mode:?}"
        );

        let delete = with_session(http().delete(server.url()).bearer_auth(server.token()))
            .send()
            .await
            .unwrap();
        match mode {
            ResponseMode::Sse => {
                assert!(
                    delete.status().is_success(),
                    "{mode:?}: {}",
                    delete.status()
                );
                let after = with_session(post(
                    &server,
                    r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#,
                ))
                .send()
                .await
                .unwrap();
                assert_eq!(
                    after.status(),
                    StatusCode::NOT_FOUND,
                    "a deleted session is gone"
                );
            }
            ResponseMode::Json => assert_eq!(delete.status(), StatusCode::METHOD_NOT_ALLOWED),
        }
        server.shutdown().await;
    }
}

#[tokio::test]
async fn non_loopback_host_or_origin_is_forbidden() {
    let server = start(ResponseMode::Json).await;
    let cases = [
        ("host", "evil.example.com", StatusCode::FORBIDDEN),
        ("host", "10.1.2.3:80", StatusCode::FORBIDDEN),
        ("origin", "http://evil.example.com", StatusCode::FORBIDDEN),
        ("origin", "null", StatusCode::FORBIDDEN),
        ("origin", "http://localhost:3000", StatusCode::OK),
        ("origin", "http://127.0.0.1:9", StatusCode::OK),
        ("host", "localhost:1234", StatusCode::OK),
    ];
    for (header, value, status) in cases {
        let response = post(&server, INIT)
            .header(header, value)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), status, "{header}: {value}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn binding_a_non_loopback_address_is_refused_with_a_clear_error() {
    for addr in ["0.0.0.0:0", "192.0.2.1:0", "[::]:0"] {
        let addr: SocketAddr = addr.parse().unwrap();
        let err = stub_mcp::serve(Config {
            addr,
            ..Config::default()
        })
        .await
        .expect_err("must refuse");
        assert!(
            matches!(err, stub_mcp::Error::NotLoopback(a) if a == addr),
            "{err:?}"
        );
        let text = err.to_string();
        assert!(
            text.contains(&addr.to_string()) && text.contains("loopback"),
            "{text}"
        );
    }
}

#[tokio::test]
async fn bad_configs_are_refused_with_what_was_wrong() {
    let unknown = stub_mcp::serve(Config {
        tools: Some(vec!["uap_ping".into(), "uap_bogus".into()]),
        ..Config::default()
    })
    .await
    .expect_err("unknown tool");
    assert!(
        unknown.to_string().contains("uap_bogus") && unknown.to_string().contains("uap_ping"),
        "{unknown}"
    );
    let token = stub_mcp::serve(Config {
        token: Some("has space".into()),
        ..Config::default()
    })
    .await
    .expect_err("bad token");
    assert!(
        token.to_string().contains("token") && token.to_string().contains("space"),
        "{token}"
    );
    assert!(
        !token.to_string().contains("has space"),
        "the token is not echoed: {token}"
    );
}

#[tokio::test]
async fn a_random_token_is_drawn_when_none_is_given() {
    let a = stub_mcp::serve(Config::default()).await.unwrap();
    let b = stub_mcp::serve(Config::default()).await.unwrap();
    assert!(a.token().len() >= 32);
    assert_ne!(a.token(), b.token());
    assert!(
        a.url().starts_with("http://127.0.0.1:") && a.url().ends_with("/mcp"),
        "{}",
        a.url()
    );
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test]
async fn a_client_hanging_up_on_uap_slow_stops_it_and_is_recorded_as_499() {
    let mut server = start(ResponseMode::Json).await;
    let mut events = server.take_events().unwrap();
    let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"uap_slow","arguments":{"ms":30000}}}"#;
    let started = Instant::now();
    let result = http()
        .post(server.url())
        .timeout(Duration::from_millis(400))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .bearer_auth(server.token())
        .body(call)
        .send()
        .await;
    assert!(result.is_err(), "the client gave up first");
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        let event = tokio::time::timeout_at(deadline.into(), events.recv())
            .await
            .expect("an event in time")
            .unwrap();
        if let Exchange::Response { status, .. } = event {
            break status;
        }
    };
    assert_eq!(status, stub_mcp::CLIENT_CLOSED);
    while server.tool_calls_in_flight() > 0 {
        assert!(
            Instant::now() < deadline,
            "uap_slow kept running after the hang-up"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(started.elapsed() < Duration::from_secs(10));
    server.shutdown().await;
}

#[tokio::test]
async fn events_end_after_shutdown_and_capture_bodies_byte_for_byte() {
    let mut server = start(ResponseMode::Json).await;
    let mut events = server.take_events().unwrap();
    assert!(
        server.take_events().is_none(),
        "the receiver is handed out once"
    );
    let sent = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}, "extra": "kept as sent"}"#;
    let received = post(&server, sent)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    server.shutdown().await;
    let mut all = Vec::new();
    while let Some(e) = tokio::time::timeout(Duration::from_secs(5), events.recv())
        .await
        .expect("channel closes in time")
    {
        all.push(e);
    }
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].body(), sent);
    assert_eq!(all[1].body(), received);
    assert!(all[0].at() <= all[1].at());
}

#[tokio::test]
async fn shutdown_ends_open_streams_and_still_publishes_their_responses() {
    let mut server = start(ResponseMode::Sse).await;
    let mut events = server.take_events().unwrap();
    let sid = session(&server).await.expect("a session");
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"uap_slow","arguments":{"ms":30000}}}"#;
    let pending = tokio::spawn(post(&server, call).header("mcp-session-id", sid).send());
    while server.tool_calls_in_flight() == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let started = Instant::now();
    server.shutdown().await;
    assert!(
        started.elapsed() < stub_mcp::SHUTDOWN_GRACE + Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let _ = tokio::time::timeout(Duration::from_secs(5), pending)
        .await
        .expect("the client sees the end");
    let mut requests = 0;
    let mut responses = 0;
    while let Some(e) = tokio::time::timeout(Duration::from_secs(5), events.recv())
        .await
        .expect("channel closes in time")
    {
        match e {
            Exchange::Request { .. } => requests += 1,
            Exchange::Response { .. } => responses += 1,
        }
    }
    assert_eq!(requests, 2);
    assert_eq!(responses, 2, "the cut stream is still published");
}

#[tokio::test]
async fn dropping_the_handle_stops_the_server() {
    let server = start(ResponseMode::Json).await;
    let url = server.url().to_string();
    drop(server);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let attempt = reqwest::Client::new()
            .post(&url)
            .timeout(Duration::from_secs(1))
            .body(INIT)
            .send()
            .await;
        if attempt.is_err() {
            break;
        }
        assert!(Instant::now() < deadline, "still serving after drop");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn posts_with_sloppy_accept_or_content_type_are_still_served() {
    for mode in MODES {
        let server = start(mode).await;
        let cases: [(&str, Option<&str>, Option<&str>); 4] = [
            ("no accept", None, Some("application/json")),
            (
                "json only",
                Some("application/json"),
                Some("application/json"),
            ),
            ("any", Some("*/*"), Some("application/json; charset=utf-8")),
            (
                "no content type",
                Some("application/json, text/event-stream"),
                None,
            ),
        ];
        for (what, accept, content_type) in cases {
            let mut request = http()
                .post(server.url())
                .bearer_auth(server.token())
                .body(INIT);
            if let Some(a) = accept {
                request = request.header("accept", a);
            }
            if let Some(c) = content_type {
                request = request.header("content-type", c);
            }
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), StatusCode::OK, "{mode:?} {what}");
            let body = response.text().await.unwrap();
            assert_eq!(
                message(&body)["result"]["serverInfo"]["name"],
                "unity-ops",
                "{mode:?} {what}"
            );
        }
        server.shutdown().await;
    }
}

#[tokio::test]
async fn a_request_cut_off_mid_body_is_still_recorded_with_what_arrived() {
    use tokio::io::AsyncWriteExt;
    let mut server = start(ResponseMode::Sse).await;
    let mut events = server.take_events().unwrap();
    let body = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"uap_slow"}}"#;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        server.local_addr(),
        server.token(),
        body.len()
    );
    let mut socket = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    socket.write_all(head.as_bytes()).await.unwrap();
    socket.write_all(&body.as_bytes()[..20]).await.unwrap();
    socket.flush().await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(socket);
    let deadline = Instant::now() + Duration::from_secs(10);
    let request = tokio::time::timeout_at(deadline.into(), events.recv())
        .await
        .expect("request event")
        .unwrap();
    assert_eq!(request.body(), &body[..20]);
    let response = tokio::time::timeout_at(deadline.into(), events.recv())
        .await
        .expect("response event")
        .unwrap();
    let Exchange::Response { status, body, .. } = response else {
        panic!("expected the response")
    };
    assert_eq!(status, 400);
    assert!(body.contains("could not read the body"), "{body}");
    server.shutdown().await;
}

/// Reads from `stream` until the server closes it; how long that took
/// (bounded: a connection still open after `limit` fails the test).
fn closed_within(mut stream: std::net::TcpStream, limit: Duration) -> Duration {
    use std::io::Read;
    let started = Instant::now();
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut buf = [0u8; 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return started.elapsed(),
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return started.elapsed(),
            Err(e) => panic!("still open after {limit:?}: {e}"),
        }
    }
}

#[tokio::test]
async fn idle_and_dribbling_connections_are_closed_after_the_header_timeout() {
    use std::io::Write;
    let server = stub_mcp::serve(Config {
        token: Some("secret-token".into()),
        header_timeout: Duration::from_millis(500),
        max_connections: 4,
        ..Config::default()
    })
    .await
    .expect("server starts");
    let addr = server.local_addr();
    let (idle, dribbling, crowd) = tokio::task::spawn_blocking(move || {
        let idle = std::net::TcpStream::connect(addr).unwrap();
        let mut dribbling = std::net::TcpStream::connect(addr).unwrap();
        dribbling
            .write_all(format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n").as_bytes())
            .unwrap();
        // more than the server takes at once: the rest wait their turn
        let crowd: Vec<_> = (0..6)
            .map(|_| std::net::TcpStream::connect(addr).unwrap())
            .collect();
        (idle, dribbling, crowd)
    })
    .await
    .unwrap();
    let limit = Duration::from_secs(10);
    let closed = tokio::task::spawn_blocking(move || {
        [closed_within(idle, limit), closed_within(dribbling, limit)]
    })
    .await
    .unwrap();
    eprintln!(
        "idle closed after {:?}, dribbling after {:?}",
        closed[0], closed[1]
    );
    // a real client is served once the crowd's slots are freed
    assert!(session(&server).await.is_some());
    drop(crowd);
    server.shutdown().await;
}

/// The `"id":…` member of the JSON-RPC message in a JSON or SSE body, as text.
fn id_text(body: &str) -> &str {
    let json = body
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or(body);
    let start = json
        .find("\"id\":")
        .unwrap_or_else(|| panic!("no id: {body}"))
        + 5;
    let rest = &json[start..];
    let end = match rest.strip_prefix('"') {
        Some(inner) => 1 + inner.find('"').unwrap_or_else(|| panic!("{body}")) + 1,
        None => rest.find([',', '}']).unwrap_or(rest.len()),
    };
    &rest[..end]
}

#[tokio::test]
async fn ids_are_echoed_with_the_text_they_were_sent_in() {
    let ids = [
        "7",
        "-3",
        "9223372036854775807",
        "1180591620717411303424",
        "123456789012345678901234567890",
        "-123456789012345678901234567890",
        "1e400",
        "1.0",
        "-0",
        "2.5E-3",
        r#""plain""#,
        r#""\u0041\/b""#,
    ];
    for mode in MODES {
        let server = start(mode).await;
        for id in ids {
            // initialize (which opens a session in SSE mode) and a tool call in it
            let init = INIT.replacen("\"id\":1", &format!("\"id\":{id}"), 1);
            let response = post(&server, init).send().await.unwrap();
            assert_eq!(response.status(), StatusCode::OK, "{mode:?} {id}");
            let sid = response
                .headers()
                .get("mcp-session-id")
                .map(|v| v.to_str().unwrap().to_string());
            let body = response.text().await.unwrap();
            assert_eq!(id_text(&body), id, "{mode:?} initialize: {body}");
            assert!(body.contains("unity-ops"), "{mode:?} {id}: {body}");
            let call = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"uap_ping","arguments":{{}}}}}}"#
            );
            let mut request = post(&server, call);
            if let Some(sid) = &sid {
                request = request.header("mcp-session-id", sid);
            }
            let response = request.send().await.unwrap();
            let length = response.content_length();
            let body = response.text().await.unwrap();
            assert_eq!(id_text(&body), id, "{mode:?} tools/call: {body}");
            assert!(body.contains("pong"), "{mode:?} {id}: {body}");
            if let Some(length) = length {
                assert_eq!(length as usize, body.len(), "{mode:?} {id}");
            }
            // a request refused by the gate names the id the same way
            let bad = format!(r#"{{"jsonrpc":"1.0","id":{id},"method":"ping"}}"#);
            let body = post(&server, bad)
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert_eq!(id_text(&body), id, "{mode:?} invalid request: {body}");
        }
        server.shutdown().await;
    }
}

#[tokio::test]
async fn a_kept_alive_connection_is_closed_after_idling_for_the_header_timeout() {
    use std::io::{Read, Write};
    let timeout = Duration::from_millis(600);
    let server = stub_mcp::serve(Config {
        mode: ResponseMode::Json,
        token: Some("secret-token".into()),
        header_timeout: timeout,
        ..Config::default()
    })
    .await
    .expect("server starts");
    let addr = server.local_addr();
    let (idle_for, served_slow) = tokio::task::spawn_blocking(move || {
        let call = |stream: &mut std::net::TcpStream, body: &str| {
            let request = format!(
                "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer secret-token\r\n\
                 Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
                 Content-Length: {}\r\n\r\n{body}",
                body.len()
            );
            stream.write_all(request.as_bytes()).unwrap();
            // the whole response: headers, then Content-Length bytes
            let mut got = Vec::new();
            let mut buf = [0u8; 4096];
            loop {
                let n = stream.read(&mut buf).unwrap();
                assert!(n > 0, "closed mid-response: {}", String::from_utf8_lossy(&got));
                got.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&got).to_string();
                if let Some(end) = text.find("\r\n\r\n") {
                    let length: usize = text[..end]
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse().unwrap())
                        })
                        .expect("a JSON response has a length");
                    if got.len() >= end + 4 + length {
                        return text;
                    }
                }
            }
        };
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        // a call longer than the timeout is not cut: the connection is busy
        let slow = call(
            &mut stream,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"uap_slow","arguments":{"ms":1500}}}"#,
        );
        (closed_within(stream, Duration::from_secs(10)), slow)
    })
    .await
    .unwrap();
    assert!(served_slow.contains("waited 1500 ms"), "{served_slow}");
    assert!(
        idle_for >= timeout.mul_f32(0.8) && idle_for < Duration::from_secs(5),
        "closed after {idle_for:?} idle"
    );
    server.shutdown().await;
}
