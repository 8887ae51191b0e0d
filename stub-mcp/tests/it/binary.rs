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

/// The resident memory of process `pid`, in KiB (`VmRSS`).
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/<pid>/status")
}

/// 200 connections that say nothing and 50 that post a 4 MiB body without
/// the token (loopback only, bounded in count and time): the server stays
/// under 64 MiB and serves a real client meanwhile.
#[tokio::test]
async fn idle_and_unauthenticated_connections_cost_little_and_real_calls_are_served() {
    use std::io::Write;
    use std::net::TcpStream;
    let stub = launch(&[]);
    let addr = stub
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let idle: Vec<TcpStream> = (0..200)
        .map(|_| TcpStream::connect(&addr).expect("an idle connection"))
        .collect();
    let body_len = 4 * 1024 * 1024;
    let senders: Vec<_> = (0..50)
        .map(|_| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(&addr).unwrap();
                s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
                let head = format!(
                    "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {body_len}\r\n\r\n"
                );
                let _ = s.write_all(head.as_bytes());
                let chunk = vec![b' '; 64 * 1024];
                for _ in 0..body_len / chunk.len() {
                    // the server answers 401 and stops reading: writes then fail
                    if s.write_all(&chunk).is_err() {
                        break;
                    }
                }
                s
            })
        })
        .collect();
    let held: Vec<TcpStream> = senders.into_iter().map(|t| t.join().unwrap()).collect();
    let started = Instant::now();
    assert_eq!(
        initialize(&stub.url, &stub.token).await,
        reqwest::StatusCode::OK
    );
    let served_in = started.elapsed();
    let rss = rss_kib(stub.child.id());
    eprintln!(
        "stub-mcp with {} idle and {} unauthenticated connections: {rss} KiB resident; a real initialize took {served_in:?}",
        idle.len(),
        held.len()
    );
    assert!(rss < 64 * 1024, "stub-mcp holds {rss} KiB");
    drop((idle, held));
}
