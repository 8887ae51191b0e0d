//! Reading a big recording: peak memory and time of `recording::read` (the
//! whole recording in memory) against `recording::Reader` (one event at a
//! time), on generated recordings of 250 000, 500 000 and 1 000 000 events
//! (about 290 bytes a line, the size of a real session/update). Streaming
//! should stay under 64 MiB whatever the size, and both should take time
//! linear in it.
//!
//! Then end to end: the `acp-harness` binary's `check`, `replay` and
//! `conformance` of a generated text-only conversation whose one answer comes in that many
//! chunks (in a corpus of its own), peak RSS and wall time: first with no
//! golden, then with the golden the binary's own `replay` prints for it
//! (the bridge folds the answer into two lines of megabytes, which the
//! judge compares with the golden's as both stream).
//!
//! Each measurement runs in a child process of its own (this binary again),
//! so its peak RSS (`VmHWM`, or the waited-for binary's `ru_maxrss`) is its
//! own. The recordings go to a temp dir (about 290 MB for the largest) and
//! are removed afterwards.
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
    let mut end_to_end = vec![
        "| events | file MiB | golden | check: peak RSS MiB | check: s | replay: peak RSS MiB | replay: s | conformance: peak RSS MiB | conformance: s |"
            .to_string(),
        "|---:|---:|---|---:|---:|---:|---:|---:|---:|".to_string(),
    ];
    for &events in &sizes {
        let root = dir.path().join("corpus");
        let bytes = generate_conversation(&root, events);
        for golden in ["no", "yes"] {
            if golden == "yes" {
                write_golden(&root, &dir.path().join("replay.out"));
            }
            let check = measure("check", &root);
            let replay = measure("replay", &root);
            let conformance = measure("conformance", &root);
            end_to_end.push(format!(
                "| {events} | {:.0} | {golden} | {:.1} | {:.2} | {:.1} | {:.2} | {:.1} | {:.2} |",
                bytes as f64 / 1048576.0,
                check.0,
                check.1,
                replay.0,
                replay.1,
                conformance.0,
                conformance.1
            ));
        }
        let _ = std::fs::remove_dir_all(&root);
    }
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
    println!();
    println!(
        "End to end, the `acp-harness` binary on one recording of a text-only turn answered in that many chunks, without a golden and with the golden its own `replay` prints:"
    );
    println!();
    println!("{}", end_to_end.join("\n"));
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

/// Writes a corpus under `root`: the text-only scenario and a synthetic
/// codex-acp recording of it whose answer comes in `events` chunks; the
/// recording's size.
fn generate_conversation(root: &Path, events: usize) -> u64 {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("recordings/codex-acp/0.0.0-synthetic");
    for d in [
        &dir,
        &root.join("profiles"),
        &root.join("scenarios"),
        &root.join("tests/snapshots"),
    ] {
        std::fs::create_dir_all(d).expect("the corpus dirs");
    }
    std::fs::copy(
        repo.join("scenarios/text-only.toml"),
        root.join("scenarios/text-only.toml"),
    )
    .expect("the scenario copies");
    let path = dir.join("text-only.jsonl");
    let file = std::fs::File::create(&path).expect("the recording file");
    let mut w = std::io::BufWriter::new(file);
    writeln!(
        w,
        r#"{{"type":"header","format":1,"agent":"codex-acp","agent_info":{{"name":"codex-acp","version":"0.0.0-synthetic"}},"package":"bench","argv":[],"scenario":"text-only","scenario_sha256":"","model_mode":"stub","harness_version":"0","client_capabilities":{{"fs":{{"readTextFile":false,"writeTextFile":false}},"terminal":false}},"protocol_version":1,"date":"2026-12-05","isolation":"none","synthetic":true,"placeholders":{{}}}}"#
    )
    .unwrap();
    let servers = r#"[{\"type\":\"http\",\"name\":\"unity-ops\",\"url\":\"<mcp-url>\",\"headers\":[{\"name\":\"Authorization\",\"value\":\"Bearer <redacted>\"}]}]"#;
    let head = [
        ("to_agent", r#"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1,\"clientCapabilities\":{\"fs\":{\"readTextFile\":false,\"writeTextFile\":false},\"terminal\":false}}}"#.to_string()),
        ("from_agent", r#"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":1,\"agentCapabilities\":{\"loadSession\":true,\"mcpCapabilities\":{\"http\":true,\"sse\":false}},\"authMethods\":[]}}"#.to_string()),
        ("to_agent", format!(r#"{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{{\"cwd\":\"<workspace>\",\"mcpServers\":{servers}}}}}"#)),
        ("from_agent", r#"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"sessionId\":\"s-1\"}}"#.to_string()),
        ("to_agent", r#"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s-1\",\"prompt\":[{\"type\":\"text\",\"text\":\"Reply with the single word: hello\"}]}}"#.to_string()),
    ];
    let mut seq = 0;
    let mut event = |w: &mut std::io::BufWriter<std::fs::File>, dir: &str, raw: &str| {
        seq += 1;
        writeln!(
            w,
            r#"{{"type":"event","seq":{seq},"ms":{},"leg":"acp","dir":"{dir}","proc":1,"raw":"{raw}"}}"#,
            seq / 10
        )
        .unwrap();
    };
    for (dir, raw) in &head {
        event(&mut w, dir, raw);
    }
    for i in 0..events {
        let text = if i == 0 {
            "hello".to_string()
        } else {
            format!(" chunk {i} of a long answer")
        };
        event(
            &mut w,
            "from_agent",
            &format!(
                r#"{{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{{\"sessionId\":\"s-1\",\"update\":{{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{{\"type\":\"text\",\"text\":\"{text}\"}}}}}}}}"#
            ),
        );
    }
    event(
        &mut w,
        "from_agent",
        r#"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"stopReason\":\"end_turn\"}}"#,
    );
    writeln!(
        w,
        r#"{{"type":"trailer","seq":{},"ms":{},"outcome":"ok","exit":{{"code":0,"signal":null}}}}"#,
        events + 7,
        events / 10 + 1
    )
    .unwrap();
    w.flush().unwrap();
    std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0)
}

/// Writes the golden of the corpus at `root`'s one recording: the
/// transcript the `acp-harness` binary's `replay` prints for it (through
/// the file `out`, copied a line at a time), under insta's header.
fn write_golden(root: &Path, out: &Path) {
    use std::io::BufRead;
    let status = Command::new(env!("CARGO_BIN_EXE_acp-harness"))
        .arg("replay")
        .arg(root.join("recordings"))
        .args(["--color", "never", "--root"])
        .arg(root)
        .stdout(std::fs::File::create(out).expect("the replay's output file"))
        .stderr(std::process::Stdio::null())
        .status()
        .expect("acp-harness runs");
    // no golden yet: the replay reports it missing
    assert_eq!(status.code(), Some(1), "replay: {status:?}");
    let trial = "codex-acp/0.0.0-synthetic/text-only";
    let snap = root.join("tests/snapshots/replay__codex-acp__0.0.0-synthetic__text-only.snap");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&snap).expect("the golden file"));
    writeln!(
        w,
        "---\nsource: tests/replay.rs\ndescription: replay of {trial}\n---"
    )
    .unwrap();
    let mut r = std::io::BufReader::new(std::fs::File::open(out).expect("the replay's output"));
    let mut line = Vec::new();
    // `=== <trial> (<path>)`, the transcript, then `=== <trial>: <statuses>`
    r.read_until(b'\n', &mut line).unwrap();
    assert!(line.starts_with(format!("=== {trial} (").as_bytes()));
    loop {
        line.clear();
        let n = r.read_until(b'\n', &mut line).unwrap();
        assert!(n > 0, "the replay's output ends before its status line");
        if line.starts_with(format!("=== {trial}: ").as_bytes()) {
            break;
        }
        w.write_all(&line).unwrap();
    }
    w.flush().unwrap();
    let _ = std::fs::remove_file(out);
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
    if matches!(mode, "check" | "replay" | "conformance") {
        return end_to_end(mode, path);
    }
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

/// One end-to-end measurement: the `acp-harness` binary's `check`,
/// `replay` or `conformance` of the corpus at `root`, waited for; prints
/// `<its peak RSS MiB> <seconds>`.
fn end_to_end(mode: &str, root: &Path) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_acp-harness"));
    match mode {
        "check" => cmd
            .args([
                "check", "--quiet", "--color", "never", "--jobs", "1", "--root",
            ])
            .arg(root),
        "conformance" => cmd.args(["conformance", "--jobs", "1", "--root"]).arg(root),
        _ => cmd
            .arg("replay")
            .arg(root.join("recordings"))
            .args(["--color", "never", "--root"])
            .arg(root),
    };
    let started = Instant::now();
    let out = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("acp-harness runs");
    let took = started.elapsed().as_secs_f64();
    // no golden: `check` and `replay` find it missing (exit 1); with the
    // golden they pass (0); the bridge's frames are valid, so `conformance`
    // passes (0); 2 is a tool error
    let golden = root
        .join("tests/snapshots/replay__codex-acp__0.0.0-synthetic__text-only.snap")
        .exists();
    let expected = if mode == "conformance" || golden {
        0
    } else {
        1
    };
    assert!(
        out.status.code() == Some(expected),
        "{mode}: {:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    println!("{} {took}", usage.ru_maxrss as f64 / 1024.0);
}
