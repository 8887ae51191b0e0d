//! Reading a big recording: peak memory and time of `recording::read` (the
//! whole recording in memory, as `check`, `replay` and `conformance` read
//! today) against `recording::Reader` (one event at a time), on generated
//! recordings of 250 000, 500 000 and 1 000 000 events (about 290 bytes a
//! line, the size of a real session/update). Streaming should stay under
//! 64 MiB whatever the size, and both should take time linear in it.
//!
//! Each measurement runs in a child process of its own (this binary again),
//! so its peak RSS (`VmHWM`) is its own. The recordings go to a temp dir
//! (about 290 MB for the largest) and are removed afterwards.
//!
//! Run: `cargo bench -p acp-harness --bench replay_memory` (prints the
//! table; `BENCH_REPORT=1` wraps it in report markers for `.ci/benchmarks`;
//! `REPLAY_MEMORY_EVENTS=1000,2000` picks other sizes).

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use acp_harness::corpus::recording;

/// The allocator the `acp-harness` binary runs with.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CHILD: &str = "REPLAY_MEMORY_CHILD";

fn main() {
    if let Ok(job) = std::env::var(CHILD) {
        child(&job);
        return;
    }
    let sizes: Vec<usize> = std::env::var("REPLAY_MEMORY_EVENTS")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![250_000, 500_000, 1_000_000]);
    let dir = tempfile::tempdir().expect("a temp dir");
    let report = std::env::var_os("BENCH_REPORT").is_some();
    let mut table = vec![
        "| events | file MiB | read: peak RSS MiB | read: s | Reader: peak RSS MiB | Reader: s |"
            .to_string(),
        "|---:|---:|---:|---:|---:|---:|".to_string(),
    ];
    for events in sizes {
        let path = dir.path().join(format!("{events}.jsonl"));
        let bytes = generate(&path, events);
        let whole = measure("read", &path);
        let streamed = measure("stream", &path);
        table.push(format!(
            "| {events} | {:.0} | {:.1} | {:.2} | {:.1} | {:.2} |",
            bytes as f64 / 1048576.0,
            whole.0,
            whole.1,
            streamed.0,
            streamed.1
        ));
        let _ = std::fs::remove_file(&path);
    }
    if report {
        println!("<!-- report:begin -->");
    }
    println!("{}", table.join("\n"));
    if report {
        println!("<!-- report:end -->");
    }
}

/// Writes a recording of `events` ACP session/update events; its size.
fn generate(path: &Path, events: usize) -> u64 {
    let file = std::fs::File::create(path).expect("the recording file");
    let mut w = std::io::BufWriter::new(file);
    writeln!(
        w,
        r#"{{"type":"header","format":1,"agent":"bench","agent_info":null,"package":"","argv":["bench"],"scenario":"text-only","scenario_sha256":"","model_mode":"stub","harness_version":"0","client_capabilities":null,"protocol_version":1,"date":"2026-12-05","isolation":"none","synthetic":true,"placeholders":{{}}}}"#
    )
    .unwrap();
    for seq in 1..=events {
        writeln!(
            w,
            r#"{{"type":"event","seq":{seq},"ms":{ms},"leg":"acp","dir":"from_agent","proc":1,"raw":"{{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{{\"sessionId\":\"s-1\",\"update\":{{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{{\"type\":\"text\",\"text\":\"chunk {seq} of a long answer\"}}}}}}}}"}}"#,
            ms = seq / 10
        )
        .unwrap();
    }
    writeln!(
        w,
        r#"{{"type":"trailer","seq":{},"ms":{},"outcome":"ok"}}"#,
        events + 1,
        events / 10
    )
    .unwrap();
    w.flush().unwrap();
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// Runs `mode` over `path` in a child; its peak RSS in MiB and seconds.
fn measure(mode: &str, path: &Path) -> (f64, f64) {
    let exe = std::env::current_exe().expect("this bench's path");
    let out = Command::new(exe)
        .env(CHILD, format!("{mode}:{}", path.display()))
        .output()
        .expect("the child runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{mode} failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut fields = text
        .split_whitespace()
        .map(|f| f.parse::<f64>().unwrap_or(f64::NAN));
    (
        fields.next().unwrap_or(f64::NAN),
        fields.next().unwrap_or(f64::NAN),
    )
}

/// One measurement: read the recording, touch every event, print
/// `<peak RSS MiB> <seconds>`.
fn child(job: &str) {
    let (mode, path) = job.split_once(':').expect("mode:path");
    let path = Path::new(path);
    let started = Instant::now();
    let (events, raw_bytes) = match mode {
        "read" => {
            let rec = recording::read(path).expect("the recording reads");
            let bytes: usize = rec.events.iter().map(|e| e.raw.len()).sum();
            (rec.events.len(), bytes)
        }
        _ => {
            let reader = recording::Reader::open(path).expect("the recording opens");
            let mut count = 0;
            let mut bytes = 0;
            for event in reader {
                let event = event.expect("an event reads");
                count += 1;
                bytes += event.raw.len();
            }
            (count, bytes)
        }
    };
    let took = started.elapsed().as_secs_f64();
    assert!(events > 0 && raw_bytes > 0);
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let peak_kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN);
    println!("{} {took}", peak_kib / 1024.0);
}
