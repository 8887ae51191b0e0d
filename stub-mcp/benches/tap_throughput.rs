//! Throughput of one big tool result through the whole server: rmcp, the
//! gate and the response tee, with the recorder's event receiver drained
//! alongside. The workload is `uap_editor_screenshot` at base64 sizes of
//! 0.5, 2 and 8 MiB, in both response modes, over loopback HTTP.
//!
//! The tee copies each frame as it forwards it, so MB/s should stay flat as
//! the image grows (linear); a table of MB/s per size is printed at the end.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use stub_mcp::{Config, ResponseMode, Running};
use tokio::runtime::Runtime;

const MIB: usize = 1024 * 1024;
const SIZES: &[usize] = &[MIB / 2, 2 * MIB, 8 * MIB];
const CALL: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"uap_editor_screenshot","arguments":{}}}"#;
const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;

static TABLE: Mutex<Vec<(String, f64)>> = Mutex::new(Vec::new());

struct Setup {
    server: Running,
    http: reqwest::Client,
    session: Option<String>,
}

async fn setup(mode: ResponseMode, size: usize) -> Setup {
    let mut server = stub_mcp::serve(Config {
        mode,
        screenshot_base64_len: size,
        body_limit: 64 * MIB,
        ..Config::default()
    })
    .await
    .expect("server starts");
    // The recorder drains events as they come; so does the bench.
    let mut events = server.take_events().expect("events");
    tokio::spawn(async move { while events.recv().await.is_some() {} });
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let init = post(&http, &server, None, INIT).await;
    let session = init
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    init.bytes().await.unwrap();
    let setup = Setup {
        server,
        http,
        session,
    };
    call(&setup).await; // renders and caches the PNG
    setup
}

async fn post(
    http: &reqwest::Client,
    server: &Running,
    session: Option<&str>,
    body: &'static str,
) -> reqwest::Response {
    let mut request = http
        .post(server.url())
        .bearer_auth(server.token())
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body);
    if let Some(s) = session {
        request = request.header("mcp-session-id", s);
    }
    request.send().await.expect("request")
}

async fn call(setup: &Setup) -> usize {
    let response = post(&setup.http, &setup.server, setup.session.as_deref(), CALL).await;
    let body = response.bytes().await.expect("body");
    assert!(body.len() > 1000, "a screenshot came back");
    body.len()
}

fn bench(c: &mut Criterion) {
    let runtime = Runtime::new().unwrap();
    for mode in [ResponseMode::Json, ResponseMode::Sse] {
        let mut group = c.benchmark_group(format!("screenshot_call_{}", mode.as_str()));
        group
            .sample_size(10)
            .measurement_time(Duration::from_secs(4));
        for &size in SIZES {
            let setup = runtime.block_on(setup(mode, size));
            group.throughput(Throughput::Bytes(size as u64));
            group.bench_function(format!("{}KiB", size / 1024), |b| {
                b.iter(|| runtime.block_on(call(&setup)))
            });
            let started = Instant::now();
            let rounds = 5;
            for _ in 0..rounds {
                runtime.block_on(call(&setup));
            }
            let mb_s = (size * rounds) as f64 / MIB as f64 / started.elapsed().as_secs_f64();
            TABLE
                .lock()
                .unwrap()
                .push((format!("{} {:>5} KiB", mode.as_str(), size / 1024), mb_s));
            runtime.block_on(setup.server.shutdown());
        }
        group.finish();
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
    println!("\nscreenshot tools/call through stub-mcp (base64 MiB/s; flat = linear):");
    for (name, mb_s) in TABLE.lock().unwrap().iter() {
        println!("  {name}: {mb_s:8.1} MiB/s");
    }
}
