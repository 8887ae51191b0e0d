//! The tool lister against a real stub-mcp over loopback, and against
//! servers that never answer or are not loopback.

use std::time::{Duration, Instant};

use acp_bridge::McpEndpoint;
use stub_mcp::{Config, ResponseMode};

use super::*;

fn endpoint(url: &str, authorization: Option<String>) -> McpEndpoint {
    McpEndpoint {
        name: "unity-ops".into(),
        url: url.into(),
        authorization,
    }
}

#[tokio::test]
async fn lists_the_tools_a_stub_mcp_offers_in_json_and_sse_mode() {
    let offered = vec!["uap_ping".to_string(), "uap_slow".to_string()];
    for (mode, tools) in [
        (ResponseMode::Json, None),
        (ResponseMode::Sse, None),
        (ResponseMode::Sse, Some(offered.clone())),
    ] {
        let server = stub_mcp::serve(Config {
            mode,
            token: Some("tok".into()),
            tools: tools.clone(),
            ..Config::default()
        })
        .await
        .expect("stub-mcp starts");
        let ep = endpoint(server.url(), Some(format!("Bearer {}", server.token())));
        let got = list_tools_within(&ep, Duration::from_secs(10))
            .await
            .unwrap_or_else(|e| panic!("{mode:?}: {e:#}"));
        let want: Vec<String> = tools.unwrap_or_else(|| {
            stub_mcp::catalogue()
                .iter()
                .map(|t| t.name.to_string())
                .collect()
        });
        assert_eq!(got, want, "{mode:?}");
        // without the token the server refuses, and the error says so
        let refused = list_tools_within(&endpoint(server.url(), None), Duration::from_secs(10))
            .await
            .expect_err("no token");
        assert!(format!("{refused:#}").contains("HTTP 401"), "{refused:#}");
        server.shutdown().await;
    }
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_without_holding_up_other_tasks() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    // accepts, reads, never writes
    let silent = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    let started = Instant::now();
    let listing = tokio::spawn(async move {
        list_tools_within(&endpoint(&url, None), Duration::from_millis(300)).await
    });
    // the runtime (one thread, as the host's) runs other work meanwhile
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!listing.is_finished(), "the listing cannot be done yet");
    let err = listing.await.unwrap().expect_err("no answer");
    let waited = started.elapsed();
    assert!(
        format!("{err:#}").contains("no tool list within 300 ms"),
        "{err:#}"
    );
    assert!(waited < Duration::from_secs(3), "took {waited:?}");
    silent.abort();
}

#[tokio::test]
async fn only_http_urls_of_loopback_hosts_are_asked() {
    let cases = [
        ("https://127.0.0.1:1/mcp", "not an http:// URL"),
        ("http://10.0.0.1:9/mcp", "not a loopback host"),
        ("http://user@127.0.0.1:9/mcp", "without user info"),
        ("http://127.0.0.1:notaport/mcp", "bad port"),
        ("ftp://127.0.0.1/", "not an http:// URL"),
    ];
    for (url, want) in cases {
        let err = list_tools_within(&endpoint(url, None), Duration::from_secs(5))
            .await
            .expect_err(url);
        assert!(format!("{err:#}").contains(want), "{url}: {err:#}");
    }
}

#[test]
fn urls_split_into_host_port_and_path() {
    let cases = [
        ("http://127.0.0.1:7777/mcp", "127.0.0.1", 7777, "/mcp"),
        ("http://localhost/mcp?x=1", "localhost", 80, "/mcp?x=1"),
        ("http://[::1]:9/", "::1", 9, "/"),
        ("http://127.0.0.1:5", "127.0.0.1", 5, "/"),
        ("http://127.0.0.1:5?a", "127.0.0.1", 5, "/?a"),
    ];
    for (url, host, port, path) in cases {
        let t = Target::parse(url).unwrap_or_else(|e| panic!("{url}: {e:#}"));
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            (host, port, path),
            "{url}"
        );
    }
}

/// A server that answers each request from a list of raw HTTP responses, in
/// order, one connection each, writing them a few bytes at a time.
async fn scripted_server(responses: Vec<String>) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        for response in responses {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            // the request head and body: read what comes first
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf).await;
            for piece in response.as_bytes().chunks(7) {
                let _ = stream.write_all(piece).await;
                let _ = stream.flush().await;
                tokio::task::yield_now().await;
            }
        }
    });
    url
}

fn chunked(body: &str) -> String {
    // two chunks, split mid-event
    let (a, b) = body.split_at(body.len() / 2);
    format!(
        "{:x}\r\n{a}\r\n{:x};ext=1\r\n{b}\r\n0\r\n\r\n",
        a.len(),
        b.len()
    )
}

#[tokio::test]
async fn chunked_sse_content_length_and_pages_are_read_however_they_are_cut() {
    let init = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"x","version":"1"}}}"#;
    let sse = format!("event: message\r\ndata: \r\n\r\nevent: message\r\ndata: {init}\r\n\r\n");
    let page1 = r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a"},{"name":"b"}],"nextCursor":"p2"}}"#;
    let page2 = r#"[{"jsonrpc":"2.0","method":"notifications/message","params":{}},{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"c"}]}}]"#;
    let url = scripted_server(vec![
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nMcp-Session-Id: s1\r\nTransfer-Encoding: chunked\r\n\r\n{}",
            chunked(&sse)
        ),
        "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_string(),
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{page1}",
            page1.len()
        ),
        format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{page2}"),
        "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".to_string(),
    ])
    .await;
    let got = list_tools_within(&endpoint(&url, None), Duration::from_secs(5))
        .await
        .unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(got, ["a", "b", "c"]);
}
