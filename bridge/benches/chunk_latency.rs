//! The latency the panel feels: an agent streams text chunks at a fixed rate
//! through the real `acp-bridge` process (pipes, tokio host), and the bench,
//! as the panel, reads the `content_block_delta` lines. Each chunk carries
//! the agent's CLOCK_MONOTONIC time of writing it, so the delay per chunk is
//! measured on one clock. The baseline is the same agent behind a
//! pass-through process (this binary relaying lines both ways, flushing each
//! one) on the same kind of pipes: what any process in between costs. Added
//! latency = bridge percentile - pass-through percentile, per percentile,
//! taken in each round (the two runs side by side) and the median over the
//! rounds quoted: on a noisy host a pooled difference of p99s swings with
//! the worst stall of any one run.
//!
//! The bridge runs twice per round: plain, and with its tap on
//! (`ACP_BRIDGE_TAP` set to a scratch directory, as a panel user would);
//! what the tap adds is the median over the rounds of (tapped - plain).
//!
//! A second part sends one chunk of 1 to 64 MiB text and times it from the
//! agent's write to the panel's read of the whole delta line: the cost must
//! stay linear in frame size.
//!
//! This binary is also the agent (`CHUNK_LATENCY_ROLE=agent`) and the relay
//! (`CHUNK_LATENCY_ROLE=relay`). Run: `cargo bench -p acp-bridge --bench
//! chunk_latency`; `BENCH_REPORT=1` prints the markdown report only (the
//! quick mode `.ci/benchmarks` uses; it always prints the report).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

mod bench_agent;
#[allow(dead_code)] // each bench uses a part of it
#[path = "../../benches/measure/mod.rs"]
mod measure;
use measure::{env_u64, load, median, monotonic_ns, percentile};

const ROLE: &str = "CHUNK_LATENCY_ROLE";
/// Chunks per second the agent writes, how many, and the size of one big chunk (0: a stream).
const RATE: &str = "CHUNK_LATENCY_RATE";
const COUNT: &str = "CHUNK_LATENCY_COUNT";
const BIG: &str = "CHUNK_LATENCY_BIG";
const MARK: &str = "lat:";
const WAIT: Duration = Duration::from_secs(120);

/// The agent: answers the handshake, and streams on `session/prompt`.
fn agent() {
    let rate = env_u64(RATE, 10_000).max(1);
    let count = env_u64(COUNT, 20_000);
    let big = env_u64(BIG, 0) as usize;
    bench_agent::serve(|out| {
        let chunk = |text: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s1","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{text}"}}}}}}}}"#
            )
        };
        if big > 0 {
            let line = chunk(&format!("{MARK}{:020};{}", 0, "x".repeat(big)));
            // the time goes in last: building the line is not the bridge's cost
            let stamp = format!("{MARK}{:020};", monotonic_ns());
            let line = line.replacen(&format!("{MARK}{:020};", 0), &stamp, 1);
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        } else {
            let period = 1_000_000_000 / rate;
            let start = monotonic_ns();
            for i in 0..count {
                // sleep, not spin, until due (a spinning agent would take a
                // core from the process measured); late chunks catch up, so
                // the mean rate holds
                let due = start + i * period;
                let now = monotonic_ns();
                if due > now {
                    std::thread::sleep(Duration::from_nanos(due - now));
                }
                let line = chunk(&format!(
                    "{MARK}{};chunk {i} of the stream, about eighty bytes of text",
                    monotonic_ns()
                ));
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
        }
        Some(serde_json::json!({"stopReason":"end_turn"}))
    });
}

/// The pass-through: starts the agent and copies lines both ways, flushing each.
fn relay() {
    let mut agent = Command::new(std::env::current_exe().expect("own path"))
        .env(ROLE, "agent")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the agent");
    let mut to_agent = agent.stdin.take().expect("piped");
    let from_agent = agent.stdout.take().expect("piped");
    let upstream = std::thread::spawn(move || {
        let mut out = std::io::stdout().lock();
        for line in BufReader::new(from_agent).lines() {
            let Ok(line) = line else { break };
            if writeln!(out, "{line}").and_then(|_| out.flush()).is_err() {
                break;
            }
        }
    });
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if writeln!(to_agent, "{line}")
            .and_then(|_| to_agent.flush())
            .is_err()
        {
            break;
        }
    }
    drop(to_agent);
    let _ = agent.wait();
    let _ = upstream.join();
}

/// One run's delays (ns) per chunk and its wall time from first to last chunk.
struct Run {
    delays: Vec<u64>,
    span_ns: u64,
}

/// Reads `child`'s stdout on a thread: the delay of each line carrying a
/// mark, taken the moment the line is read; ends at the line `done` accepts.
fn collect(child: &mut Child, done: fn(&str) -> bool) -> Receiver<Result<Run, String>> {
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut delays = Vec::new();
        let (mut first, mut last) = (0, 0);
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => {
                    let _ = tx.send(Err("the process ended before the turn did".into()));
                    return;
                }
                Ok(_) => {}
            }
            let now = monotonic_ns();
            // only the chunk itself: the folded `assistant` line repeats the text
            let chunk_line =
                line.contains(r#""text_delta""#) || line.contains("agent_message_chunk");
            if let Some(at) = line.find(MARK).filter(|_| chunk_line) {
                let digits = &line[at + MARK.len()..];
                let end = digits.find(';').unwrap_or(0);
                if let Ok(sent) = digits[..end].parse::<u64>() {
                    delays.push(now.saturating_sub(sent));
                    if first == 0 {
                        first = now;
                    }
                    last = now;
                }
            }
            if done(&line) {
                let _ = tx.send(Ok(Run {
                    delays,
                    span_ns: last.saturating_sub(first),
                }));
                return;
            }
        }
    });
    rx
}

fn send(stdin: &mut ChildStdin, line: &str) {
    writeln!(stdin, "{line}").expect("write to the child");
    stdin.flush().expect("flush to the child");
}

/// Which process sits between the panel and the agent.
#[derive(Clone, Copy, PartialEq)]
enum Between {
    Bridge,
    /// The bridge with its tap writing to a scratch directory.
    TappedBridge,
    PassThrough,
}

/// Where the tapped bridge writes its taps (removed after each run).
fn tap_dir() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("chunk-latency-taps-{}", std::process::id()))
}

fn run(between: Between, rate: u64, count: u64, big: usize) -> Result<Run, String> {
    let me = std::env::current_exe().expect("own path");
    let mut command = match between {
        Between::Bridge | Between::TappedBridge => {
            let mut c = Command::new(env!("CARGO_BIN_EXE_acp-bridge"));
            c.env(
                "ACP_BRIDGE_AGENT",
                one_word_command_line(&me.to_string_lossy()),
            )
            .env(ROLE, "agent");
            if between == Between::TappedBridge {
                c.env("ACP_BRIDGE_TAP", format!("{}/", tap_dir().display()));
            } else {
                c.env_remove("ACP_BRIDGE_TAP");
            }
            c
        }
        Between::PassThrough => {
            let mut c = Command::new(&me);
            c.env(ROLE, "relay");
            c
        }
    };
    let mut child = command
        .env(RATE, rate.to_string())
        .env(COUNT, count.to_string())
        .env(BIG, big.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start: {e}"))?;
    let mut stdin = child.stdin.take().expect("piped");
    let rx = match between {
        Between::Bridge | Between::TappedBridge => {
            let rx = collect(&mut child, |l| l.starts_with(r#"{"type":"result""#));
            send(
                &mut stdin,
                r#"{"type":"control_request","request_id":"r1","request":{"subtype":"initialize"}}"#,
            );
            send(
                &mut stdin,
                r#"{"type":"user","message":{"role":"user","content":"stream"},"parent_tool_use_id":null,"session_id":""}"#,
            );
            rx
        }
        Between::PassThrough => {
            let rx = collect(&mut child, |l| l.contains(r#""stopReason""#));
            send(
                &mut stdin,
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
            );
            send(
                &mut stdin,
                r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":".","mcpServers":[]}}"#,
            );
            send(
                &mut stdin,
                r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"stream"}]}}"#,
            );
            rx
        }
    };
    let result = rx
        .recv_timeout(WAIT)
        .map_err(|_| format!("no end of the turn within {WAIT:?}"))
        .and_then(|r| r);
    drop(stdin);
    // the child ends once its stdin closes; a stuck one is killed
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            _ if std::time::Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            _ => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    if between == Between::TappedBridge {
        let taps = std::fs::read_dir(tap_dir()).map_or(0, |d| d.count());
        let _ = std::fs::remove_dir_all(tap_dir());
        if taps != 1 && result.is_ok() {
            return Err(format!("the tapped bridge left {taps} files, not one tap"));
        }
    }
    result
}

fn main() {
    match std::env::var(ROLE).as_deref() {
        Ok("agent") => return agent(),
        Ok("relay") => return relay(),
        _ => {}
    }
    let quick = std::env::var_os("BENCH_REPORT").is_some();
    let (rate, count) = (10_000u64, if quick { 20_000 } else { 50_000 });
    let rounds = if quick { 5 } else { 9 };
    println!("<!-- report:begin -->");
    println!("## Chunk latency through the `acp-bridge` binary (`chunk_latency`)\n");
    println!(
        "{count} text chunks at {rate} chunks/s, {rounds} rounds each, pass-through, bridge and bridge with its tap interleaved.\n"
    );
    println!("| between agent and panel | chunks | p50 µs | p99 µs | max µs | received chunks/s |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut pooled = [
        (Between::PassThrough, Vec::new(), 0u64, 0usize),
        (Between::Bridge, Vec::new(), 0, 0),
        (Between::TappedBridge, Vec::new(), 0, 0),
    ];
    // per round: (p50, p99) added by the bridge next to its pass-through
    // run, and by the tap next to the plain bridge's run
    let (mut added, mut tap_added) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let mut quantiles = [(f64::NAN, f64::NAN); 3];
        for (k, (between, delays, span, n)) in pooled.iter_mut().enumerate() {
            match run(*between, rate, count, 0) {
                Ok(r) => {
                    let mut sorted = r.delays.clone();
                    sorted.sort_unstable();
                    quantiles[k] = (percentile(&sorted, 0.5), percentile(&sorted, 0.99));
                    *n += r.delays.len();
                    *span += r.span_ns;
                    delays.extend(r.delays);
                }
                Err(e) => {
                    eprintln!("a run failed: {e}");
                }
            }
        }
        added.push((
            quantiles[1].0 - quantiles[0].0,
            quantiles[1].1 - quantiles[0].1,
        ));
        tap_added.push((
            quantiles[2].0 - quantiles[1].0,
            quantiles[2].1 - quantiles[1].1,
        ));
    }
    let mut p = Vec::new();
    for (between, delays, span, n) in pooled.iter_mut() {
        delays.sort_unstable();
        let name = match between {
            Between::Bridge => "acp-bridge",
            Between::TappedBridge => "acp-bridge with ACP_BRIDGE_TAP",
            Between::PassThrough => "pass-through",
        };
        let (p50, p99) = (percentile(delays, 0.5), percentile(delays, 0.99));
        p.push((p50, p99));
        println!(
            "| {name} | {n} | {p50:.0} | {p99:.0} | {:.0} | {:.0} |",
            percentile(delays, 1.0),
            *n as f64 / (*span as f64 / 1e9)
        );
    }
    println!(
        "\nAdded by the bridge, median over the rounds of (bridge - pass-through) in the same round: \
         p50 {:.0} µs, p99 {:.0} µs; pooled: p50 {:.0} µs, p99 {:.0} µs \
         (target: p99 <= 1000 µs at 10,000 chunks/s). Load average after: {}.\n",
        median(added.iter().map(|a| a.0).collect()),
        median(added.iter().map(|a| a.1).collect()),
        p[1].0 - p[0].0,
        p[1].1 - p[0].1,
        load()
    );
    println!(
        "Added by the tap, median over the rounds of (tapped - plain bridge) in the same round: \
         p50 {:.0} µs, p99 {:.0} µs; pooled: p50 {:.0} µs, p99 {:.0} µs.\n",
        median(tap_added.iter().map(|a| a.0).collect()),
        median(tap_added.iter().map(|a| a.1).collect()),
        p[2].0 - p[1].0,
        p[2].1 - p[1].1,
    );
    println!("### One big chunk\n");
    println!(
        "| text MiB | pass-through ms | acp-bridge ms | bridge ms per MiB | with the tap ms |"
    );
    println!("|---:|---:|---:|---:|---:|");
    for mib in [1usize, 4, 16, 64] {
        let size = mib << 20;
        let mut times = [Vec::new(), Vec::new(), Vec::new()];
        for _ in 0..if quick { 2 } else { 3 } {
            for (k, between) in [Between::PassThrough, Between::Bridge, Between::TappedBridge]
                .into_iter()
                .enumerate()
            {
                match run(between, rate, 1, size) {
                    Ok(r) if !r.delays.is_empty() => times[k].push(r.delays[0]),
                    Ok(_) => eprintln!("{mib} MiB: no chunk arrived"),
                    Err(e) => eprintln!("{mib} MiB: {e}"),
                }
            }
        }
        let med = |v: &mut Vec<u64>| {
            v.sort_unstable();
            v.get(v.len() / 2).map_or(f64::NAN, |d| *d as f64 / 1e6)
        };
        let (relay, bridge, tapped) = (med(&mut times[0]), med(&mut times[1]), med(&mut times[2]));
        println!(
            "| {mib} | {relay:.1} | {bridge:.1} | {:.2} | {tapped:.1} |",
            bridge / mib as f64
        );
    }
    println!("\nMedians; load average after: {}.", load());
    println!("<!-- report:end -->");
}

/// `program` alone as a command line the bridge splits back into it: shell
/// words on Unix, a double-quoted word on Windows.
fn one_word_command_line(program: &str) -> String {
    if cfg!(windows) {
        format!("\"{program}\"")
    } else {
        shell_words::join([program])
    }
}
