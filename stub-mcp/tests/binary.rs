//! The `stub-mcp` binary: one JSON line with url and token, an exchange log,
//! and a clean stop on SIGTERM or end of stdin.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

struct Stub {
    child: Child,
    url: String,
    token: String,
}

impl Drop for Stub {
    fn drop(&mut self) {
        // A failed assertion must not leave the process behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn launch(extra: &[&str]) -> Stub {
    let mut child = Command::new(env!("CARGO_BIN_EXE_stub-mcp"))
        .args(["--port", "0"])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("stub-mcp starts");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the url line in time");
    let hello: Value = serde_json::from_str(line.trim())
        .unwrap_or_else(|e| panic!("not one JSON line ({e}): {line:?}"));
    Stub {
        child,
        url: hello["url"].as_str().expect("url").to_string(),
        token: hello["token"].as_str().expect("token").to_string(),
    }
}

fn wait_exit(stub: &mut Stub) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(status) = stub.child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "stub-mcp did not stop in time");
        std::thread::sleep(Duration::from_millis(20));
    }
}

async fn initialize(url: &str, token: &str) -> reqwest::StatusCode {
    reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .bearer_auth(token)
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bin","version":"1"}}}"#)
        .send()
        .await
        .unwrap()
        .status()
}

fn temp_log(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    std::env::temp_dir().join(format!(
        "stub-mcp-{name}-{}-{nanos}.jsonl",
        std::process::id()
    ))
}

#[tokio::test]
async fn prints_url_and_token_logs_exchanges_and_stops_when_stdin_closes() {
    let log = temp_log("stdin");
    let mut stub = launch(&[
        "--token",
        "tok123",
        "--mode",
        "json",
        "--log",
        log.to_str().unwrap(),
    ]);
    assert_eq!(stub.token, "tok123");
    assert!(
        stub.url.starts_with("http://127.0.0.1:") && stub.url.ends_with("/mcp"),
        "{}",
        stub.url
    );
    assert_eq!(
        initialize(&stub.url, &stub.token).await,
        reqwest::StatusCode::OK
    );
    drop(stub.child.stdin.take());
    let status = wait_exit(&mut stub);
    assert!(status.success(), "{status:?}");
    let text = std::fs::read_to_string(&log).expect("the log exists");
    let _ = std::fs::remove_file(&log);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0]["type"], "request");
    assert_eq!(lines[1]["type"], "response");
    assert_eq!(lines[1]["status"], 200);
    assert!(!text.contains("tok123"), "the token must not reach the log");
}

#[tokio::test]
async fn stops_cleanly_on_sigterm() {
    let mut stub = launch(&["--mode", "sse"]);
    assert!(stub.token.len() >= 32, "a random token");
    assert_eq!(
        initialize(&stub.url, &stub.token).await,
        reqwest::StatusCode::OK
    );
    let killed = Command::new("kill")
        .args(["-TERM", &stub.child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = wait_exit(&mut stub);
    assert!(status.success(), "{status:?}");
}

#[test]
fn an_unknown_tool_name_fails_with_a_message_naming_it() {
    let output = Command::new(env!("CARGO_BIN_EXE_stub-mcp"))
        .args(["--tools", "uap_ping,uap_nope"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("uap_nope"), "{stderr}");
}
