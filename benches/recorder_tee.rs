//! What the recorder's tee costs the client: a flooding agent (this binary
//! in child mode) writes ACP `session/update` frames, each carrying the
//! CLOCK_MONOTONIC time of its write, and a client reads them
//! (a) straight from the agent's stdout (the same read, UTF-8 and JSON
//! parse the recorder's client does, no tap), and
//! (b) through the recorder's own process side, `acp_client::AgentProcess`,
//! whose reader tees every line into the recorder's `Timeline` (scrubbing,
//! numbering, writing the recording file).
//! The delay per frame (receive time minus the stamp, one clock) is compared
//! percentile by percentile: added latency = tee - direct. Runs are paired
//! and interleaved, so a loaded machine slows both sides alike.
//!
//! A paced stream (10 000 frames/s of ~200 bytes, like a text stream) gives
//! the latency; a flood (as fast as the agent writes, small frames and
//! 0.5 MiB screenshot-sized frames) gives the throughput, and for the tee
//! also when the recording was complete (the trailer written after the last
//! frame). Every tee run checks that its recording holds every frame.
//!
//! This binary is also the agent (`RECORDER_TEE_ROLE=agent`). Run: `cargo
//! bench -p acp-harness --bench recorder_tee`; `BENCH_REPORT=1` is the quick
//! mode `.ci/benchmarks recorder` uses (fewer rounds, the markdown report).

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use acp_harness::capture::acp_client::{AgentProcess, Incoming};
use acp_harness::capture::record::timeline::Timeline;
use acp_harness::corpus::profile::Stop;
use acp_harness::corpus::recording::{self, Header, Leg, Outcome, Scrubber};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

#[allow(dead_code)] // each bench uses a part of it
mod measure;
use measure::{env_u64, load, median, monotonic_ns, percentile};

const ROLE: &str = "RECORDER_TEE_ROLE";
/// Frames per second (0: as fast as the pipe takes them), how many, and the
/// text size of one frame.
const RATE: &str = "RECORDER_TEE_RATE";
const COUNT: &str = "RECORDER_TEE_COUNT";
const BYTES: &str = "RECORDER_TEE_BYTES";
const MARK: &str = "lat:";
/// The longest one run may take before it counts as failed.
const WAIT: Duration = Duration::from_secs(120);

/// The agent: on its first stdin line, writes the frames (paced or flooding),
/// then the prompt's answer; ends when stdin closes.
fn agent() {
    let rate = env_u64(RATE, 10_000);
    let count = env_u64(COUNT, 20_000);
    let bytes = env_u64(BYTES, 120) as usize;
    let mut stdin = std::io::stdin().lock();
    let mut line = String::new();
    if stdin.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut out = std::io::stdout().lock();
    // screenshot-like payload: base64 characters, as an image result carries
    let filler: String = "iVBORw0KGgoAAAANSUhEUgAA"
        .chars()
        .cycle()
        .take(bytes)
        .collect();
    let start = monotonic_ns();
    for i in 0..count {
        if let Some(period) = (i * 1_000_000_000).checked_div(rate) {
            // sleep, not spin, until due (a spinning agent would take a core
            // from the client measured); late frames catch up
            let due = start + period;
            let now = monotonic_ns();
            if due > now {
                std::thread::sleep(Duration::from_nanos(due - now));
            }
        }
        let frame = format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s1","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{MARK}{};{filler}"}}}}}}}}"#,
            monotonic_ns()
        );
        if writeln!(out, "{frame}").and_then(|_| out.flush()).is_err() {
            return;
        }
    }
    let _ = writeln!(
        out,
        r#"{{"jsonrpc":"2.0","id":0,"result":{{"stopReason":"end_turn"}}}}"#
    );
    let _ = out.flush();
    // wait for stdin to close (the client's stop)
    while stdin.read_line(&mut line).unwrap_or(0) > 0 {}
}

/// Which client reads the agent.
#[derive(Clone, Copy, PartialEq)]
enum Client {
    Direct,
    Tee,
}

impl Client {
    fn name(self) -> &'static str {
        match self {
            Client::Direct => "direct (no tap)",
            Client::Tee => "through the recorder's tee",
        }
    }
}

/// One run: the delay (ns) of every frame, the span from first to last
/// receipt, and for the tee the time from the last receipt until the
/// recording was complete.
struct Run {
    delays: Vec<u64>,
    span_ns: u64,
    complete_after_ns: Option<u64>,
}

/// The stamp a frame carries, if it is one of ours.
fn stamp(frame: &Value) -> Option<u64> {
    let text = frame
        .pointer("/params/update/content/text")
        .and_then(Value::as_str)?;
    let digits = text.strip_prefix(MARK)?;
    digits[..digits.find(';')?].parse().ok()
}

/// Reads frames until the prompt's answer, timing each on receipt.
async fn receive(rx: &mut UnboundedReceiver<Incoming>) -> Result<(Vec<u64>, u64, u64), String> {
    let mut delays = Vec::new();
    let (mut first, mut last) = (0, 0);
    loop {
        let incoming = tokio::time::timeout(WAIT, rx.recv())
            .await
            .map_err(|_| format!("no answer within {WAIT:?}"))?;
        let now = monotonic_ns();
        match incoming {
            Some(Incoming::Frame(v)) => {
                if let Some(sent) = stamp(&v) {
                    delays.push(now.saturating_sub(sent));
                    if first == 0 {
                        first = now;
                    }
                    last = now;
                } else if v.get("result").is_some() {
                    return Ok((delays, first, last));
                }
            }
            Some(Incoming::Garbage(g)) => return Err(format!("not JSON: {g:.80}")),
            Some(Incoming::Closed) | None => return Err("the agent closed stdout".into()),
        }
    }
}

fn agent_env(rate: u64, count: u64, bytes: usize) -> BTreeMap<String, String> {
    BTreeMap::from([
        (ROLE.to_string(), "agent".to_string()),
        (RATE.to_string(), rate.to_string()),
        (COUNT.to_string(), count.to_string()),
        (BYTES.to_string(), bytes.to_string()),
    ])
}

const PROMPT: &str =
    r#"{"jsonrpc":"2.0","id":0,"method":"session/prompt","params":{"sessionId":"s1"}}"#;

/// The minimal client: the agent's stdout read, decoded and parsed as the
/// recorder's client does, with nothing teed.
async fn direct(rate: u64, count: u64, bytes: usize) -> Result<Run, String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = tokio::process::Command::new(me)
        .env_clear()
        .envs(agent_env(rate, count, bytes))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start the agent: {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let (tx, mut rx) = unbounded_channel();
    let reader = tokio::spawn(async move {
        let mut lines = BufReader::new(stdout);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match lines.read_until(b'\n', &mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let line = String::from_utf8_lossy(&buf);
                    let line = line.trim_end_matches(['\n', '\r']).to_string();
                    if line.is_empty() {
                        continue;
                    }
                    let incoming = match serde_json::from_str::<Value>(&line) {
                        Ok(v) if v.is_object() => Incoming::Frame(v),
                        _ => Incoming::Garbage(line),
                    };
                    let _ = tx.send(incoming);
                }
            }
        }
        let _ = tx.send(Incoming::Closed);
    });
    use tokio::io::AsyncWriteExt as _;
    stdin
        .write_all(format!("{PROMPT}\n").as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    stdin.flush().await.map_err(|e| e.to_string())?;
    let received = receive(&mut rx).await;
    drop(stdin);
    if tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }
    let _ = tokio::time::timeout(Duration::from_secs(3), reader).await;
    let (delays, first, last) = received?;
    Ok(Run {
        delays,
        span_ns: last.saturating_sub(first),
        complete_after_ns: None,
    })
}

/// A scrubber with the rules a real run has (secret, token, URLs, workspace
/// and its slug and hashes, temp paths, home, run and package directories).
fn scrubber(run: &Path) -> Scrubber {
    let mut s = Scrubber::new();
    let workspace = run.join("workspace").display().to_string();
    s.secret("sk-acp-harness-dummy-key");
    s.placeholder("0123456789abcdef0123456789abcdef", "<mcp-token>");
    s.placeholder("http://127.0.0.1:41234/mcp", "<mcp-url>");
    s.placeholder("127.0.0.1:41234", "<mcp-addr>");
    s.placeholder("http://127.0.0.1:41235/v1", "<model-url>");
    s.placeholder("127.0.0.1:41235", "<model-addr>");
    s.workspace(&workspace);
    s.run_temp(
        vec![std::env::temp_dir().display().to_string()],
        std::time::SystemTime::now(),
    );
    s.placeholder(run.join("home").display().to_string(), "<home>");
    s.placeholder(run.display().to_string(), "<run>");
    s.placeholder(run.join("package").display().to_string(), "<package-dir>");
    s
}

fn header() -> Header {
    Header {
        format: recording::FORMAT,
        agent: "flood".into(),
        agent_info: Value::Null,
        package: String::new(),
        argv: vec!["flood".into()],
        scenario: "flood".into(),
        scenario_sha256: String::new(),
        model_mode: "stub".into(),
        harness_version: env!("CARGO_PKG_VERSION").into(),
        client_capabilities: Value::Null,
        protocol_version: 1,
        acp_schema: None,
        build: None,
        date: "1970-01-01".into(),
        isolation: "none".into(),
        synthetic: true,
        placeholders: BTreeMap::new(),
        session: Default::default(),
        extra: Default::default(),
    }
}

/// The recorder's client: `AgentProcess` teeing into a live `Timeline`
/// (the file already open, as after the initialize answer); checks that the
/// recording holds every frame.
async fn tee(rate: u64, count: u64, bytes: usize) -> Result<Run, String> {
    let run_dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = run_dir.path().join("out");
    let version = semver::Version::new(1, 0, 0);
    let timeline = Timeline::start(header(), scrubber(run_dir.path()), out, version, None);
    timeline.agent_info(json!({"name": "flood", "version": "1.0.0"}), Some(1));
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let (mut agent, mut rx) = AgentProcess::spawn(
        1,
        &me.display().to_string(),
        &[],
        &agent_env(rate, count, bytes),
        run_dir.path(),
        timeline.tap.clone(),
    )
    .map_err(|e| e.to_string())?;
    let prompt: Value = serde_json::from_str(PROMPT).map_err(|e| e.to_string())?;
    agent
        .send(prompt.to_string())
        .await
        .map_err(|e| e.to_string())?;
    let received = receive(&mut rx).await;
    let stop = Stop {
        eof_grace: Duration::from_secs(5),
        term_grace: Duration::from_secs(2),
    };
    let (exit, notes) = agent.stop(stop).await;
    let finished = monotonic_ns();
    let path = timeline
        .finish(Outcome::Ok, exit, notes)
        .await
        .map_err(|e| e.to_string())?
        .commit()
        .map_err(|e| e.to_string())?;
    let complete = monotonic_ns();
    let (delays, first, last) = received?;
    let recorded = recording::read(&path).map_err(|e| e.to_string())?;
    let frames = recorded
        .leg(Leg::Acp)
        .filter(|e| e.raw.contains(MARK))
        .count();
    if frames != count as usize {
        return Err(format!("the recording holds {frames} of {count} frames"));
    }
    Ok(Run {
        delays,
        span_ns: last.saturating_sub(first),
        // the agent's stop (stdin EOF, its exit) is not the tee's time
        complete_after_ns: Some(complete - finished),
    })
}

fn run(
    rt: &tokio::runtime::Runtime,
    client: Client,
    rate: u64,
    count: u64,
    bytes: usize,
) -> Result<Run, String> {
    match client {
        Client::Direct => rt.block_on(direct(rate, count, bytes)),
        Client::Tee => rt.block_on(tee(rate, count, bytes)),
    }
}

/// Pooled results of one client over the rounds.
#[derive(Default)]
struct Pool {
    delays: Vec<u64>,
    span_ns: u64,
    frames: usize,
    complete_after: Vec<u64>,
    failed: usize,
}

impl Pool {
    fn add(&mut self, r: Result<Run, String>, what: &str) {
        match r {
            Ok(r) => {
                self.frames += r.delays.len();
                self.span_ns += r.span_ns;
                self.delays.extend(r.delays);
                self.complete_after.extend(r.complete_after_ns);
            }
            Err(e) => {
                self.failed += 1;
                eprintln!("{what}: a run failed: {e}");
            }
        }
    }
}

/// Runs both clients `rounds` times, interleaved; pooled results, and per
/// round the tee's p50 and p99 minus the direct client's of the same round.
fn paired(
    rt: &tokio::runtime::Runtime,
    rounds: usize,
    rate: u64,
    count: u64,
    bytes: usize,
) -> ([Pool; 2], Vec<(f64, f64)>) {
    let mut pools = [Pool::default(), Pool::default()];
    let mut added = Vec::new();
    for _ in 0..rounds {
        let mut quantiles = [(f64::NAN, f64::NAN); 2];
        for (k, client) in [Client::Direct, Client::Tee].into_iter().enumerate() {
            let r = run(rt, client, rate, count, bytes);
            if let Ok(r) = &r {
                let mut d = r.delays.clone();
                d.sort_unstable();
                quantiles[k] = (percentile(&d, 0.5), percentile(&d, 0.99));
            }
            pools[k].add(r, client.name());
        }
        added.push((
            quantiles[1].0 - quantiles[0].0,
            quantiles[1].1 - quantiles[0].1,
        ));
    }
    for p in &mut pools {
        p.delays.sort_unstable();
        p.complete_after.sort_unstable();
    }
    (pools, added)
}

fn main() {
    if std::env::var(ROLE).as_deref() == Ok("agent") {
        return agent();
    }
    let quick = std::env::var_os("BENCH_REPORT").is_some();
    // as the recorder runs: a multi-thread runtime with two workers
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let rounds = if quick { 5 } else { 11 };
    let (rate, count, bytes) = (10_000u64, 10_000u64, 120usize);
    println!("<!-- report:begin -->");
    println!("## Recorder tee (`recorder_tee`)\n");
    println!(
        "An agent process writes {count} `session/update` frames (~{} bytes each) at {rate} frames/s; \
         the client reads them directly or through the recorder's tee (`AgentProcess` + `Timeline`, \
         scrubbing and writing the recording). {rounds} rounds each, interleaved.\n",
        bytes + 150
    );
    println!("| client | frames | p50 µs | p99 µs | max µs | received frames/s |");
    println!("|---|---:|---:|---:|---:|---:|");
    let (pools, added) = paired(&rt, rounds, rate, count, bytes);
    for (client, p) in [Client::Direct, Client::Tee].into_iter().zip(&pools) {
        println!(
            "| {} | {} | {:.0} | {:.0} | {:.0} | {:.0} |",
            client.name(),
            p.frames,
            percentile(&p.delays, 0.5),
            percentile(&p.delays, 0.99),
            percentile(&p.delays, 1.0),
            p.frames as f64 / (p.span_ns as f64 / 1e9)
        );
    }
    let pooled = |q: f64| percentile(&pools[1].delays, q) - percentile(&pools[0].delays, q);
    println!(
        "\nAdded by the tee, median over the rounds of (tee - direct) in the same round: \
         p50 {:.0} µs, p99 {:.0} µs; pooled: p50 {:.0} µs, p99 {:.0} µs (target: p99 <= 1000 µs). \
         Load average after: {}.\n",
        median(added.iter().map(|a| a.0).collect()),
        median(added.iter().map(|a| a.1).collect()),
        pooled(0.5),
        pooled(0.99),
        load()
    );

    println!("### Flood (the agent writes as fast as the pipe takes it)\n");
    println!(
        "| frame | frames | direct: frames/s | tee: frames/s | tee / direct | tee: MB/s | direct p99 µs | tee p99 µs | trailer on disk after the agent stopped, ms |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let floods: [(&str, u64, usize); 2] = [
        ("~270 B text", if quick { 50_000 } else { 200_000 }, 120),
        ("0.5 MiB base64", if quick { 200 } else { 400 }, 560_068),
    ];
    for (label, count, bytes) in floods {
        let (pools, _) = paired(&rt, rounds.min(3), 0, count, bytes);
        let per_s = |p: &Pool| p.frames as f64 / (p.span_ns as f64 / 1e9);
        let tee = &pools[1];
        let complete = tee
            .complete_after
            .get(tee.complete_after.len() / 2)
            .map_or(f64::NAN, |ns| *ns as f64 / 1e6);
        println!(
            "| {label} | {} | {:.0} | {:.0} | {:.2} | {:.0} | {:.0} | {:.0} | {complete:.1} |",
            tee.frames,
            per_s(&pools[0]),
            per_s(tee),
            per_s(tee) / per_s(&pools[0]),
            per_s(tee) * (bytes + 150) as f64 / 1e6,
            percentile(&pools[0].delays, 0.99),
            percentile(&tee.delays, 0.99),
        );
    }
    println!(
        "\nRates are pooled over the rounds (frames / time from first to last receipt); \
         the trailer time is the median from the agent's exit to the finished recording. \
         Every tee run's recording was read back and holds every frame. Load average after: {}.",
        load()
    );
    // the tee's own cost per large frame, apart from pipes and scheduling
    let dir = tempfile::tempdir().expect("a temp dir");
    let scrubber = scrubber(dir.path());
    let filler: String = "iVBORw0KGgoAAAANSUhEUgAA"
        .chars()
        .cycle()
        .take(560_068)
        .collect();
    let frame = format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"update":{{"content":{{"type":"image","data":"{filler}"}}}}}}}}"#
    );
    let times: Vec<f64> = (0..if quick { 50 } else { 200 })
        .map(|_| {
            let start = std::time::Instant::now();
            std::hint::black_box(scrubber.scrub(&frame));
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    let scrub_us = median(times);
    println!(
        "\nScrubbing one 0.5 MiB base64 frame (`Scrubber::scrub`, the timeline's pass over every line): {scrub_us:.0} µs median ({:.0} MB/s).",
        frame.len() as f64 / scrub_us
    );
    println!("<!-- report:end -->");
}
