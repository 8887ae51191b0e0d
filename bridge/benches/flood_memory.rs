//! The memory a flood costs: the real `acp-bridge` binary between this
//! binary as the panel and this binary as an agent that floods it, with the
//! bridge's peak resident memory (`VmHWM` in `/proc/<pid>/status`) sampled
//! while it lasts. Cases: an agent writing one endless line (no newline),
//! with the default line cap and with a small one (the cap is what bounds
//! it); an agent writing 64 KiB text chunks as fast as it can, to a panel
//! that never reads its stdout, reads fast and reads slowly; an agent
//! opening tool calls with 64 KiB contents that never finish, and one call
//! streaming 64 KiB terminal output deltas without end. Target: flat, under
//! 64 MiB plus one line cap.
//!
//! This binary is also the agent (`FLOOD_ROLE=agent`). Run: `cargo bench -p
//! acp-bridge --bench flood_memory`; each case lasts `FLOOD_SECONDS` (default
//! 10); `BENCH_REPORT=1` prints the markdown report only.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

mod bench_agent;
#[allow(dead_code)] // each bench uses a part of it
#[path = "../../benches/measure/mod.rs"]
mod measure;
use measure::{env_u64, load};

const ROLE: &str = "FLOOD_ROLE";
/// What the agent writes once prompted ([`Flood::name`]).
const KIND: &str = "FLOOD_KIND";
const CHUNK: usize = 64 << 10;
const MIB: f64 = (1 << 20) as f64;

/// What the flooding agent writes.
#[derive(Clone, Copy, PartialEq)]
enum Flood {
    /// One message chunk line that never ends.
    Endless,
    /// 64 KiB message chunks.
    Chunks,
    /// A new tool call per line, each with a 64 KiB content, never finished.
    Calls,
    /// One running call's 64 KiB `_meta.terminal_output` deltas.
    Terminal,
}

impl Flood {
    const ALL: [Flood; 4] = [Flood::Endless, Flood::Chunks, Flood::Calls, Flood::Terminal];

    fn name(self) -> &'static str {
        match self {
            Flood::Endless => "endless",
            Flood::Chunks => "chunks",
            Flood::Calls => "calls",
            Flood::Terminal => "terminal",
        }
    }
}

/// The agent: answers the handshake, then floods until its stdout breaks.
fn agent() {
    let kind = std::env::var(KIND).unwrap_or_default();
    let flood = Flood::ALL
        .into_iter()
        .find(|f| f.name() == kind)
        .unwrap_or(Flood::Chunks);
    bench_agent::serve(|out| {
        let update = |u: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s1","update":{u}}}}}"#
            )
        };
        let text = "y".repeat(CHUNK);
        match flood {
            Flood::Endless => {
                // the line's opening only: its text never ends
                let head = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":""#;
                if out.write_all(head.as_bytes()).is_ok() {
                    while out.write_all(text.as_bytes()).is_ok() {}
                }
            }
            Flood::Chunks => {
                let line = update(&format!(
                    r#"{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{text}"}}}}"#
                ));
                while writeln!(out, "{line}").is_ok() {}
            }
            Flood::Calls => {
                for i in 0u64.. {
                    let line = update(&format!(
                        r#"{{"sessionUpdate":"tool_call","toolCallId":"c{i}","title":"Read a.txt","kind":"read","status":"in_progress","rawInput":{{"path":"a.txt"}},"content":[{{"type":"content","content":{{"type":"text","text":"{text}"}}}}]}}"#
                    ));
                    if writeln!(out, "{line}").is_err() {
                        break;
                    }
                }
            }
            Flood::Terminal => {
                let start = update(
                    r#"{"sessionUpdate":"tool_call","toolCallId":"t1","title":"yes","kind":"execute","status":"in_progress","rawInput":{"command":"yes"},"content":[{"type":"terminal","terminalId":"t1"}]}"#,
                );
                let delta = update(&format!(
                    r#"{{"sessionUpdate":"tool_call_update","toolCallId":"t1","_meta":{{"terminal_output":{{"terminal_id":"t1","data":"{text}"}}}}}}"#
                ));
                if writeln!(out, "{start}").is_ok() {
                    while writeln!(out, "{delta}").is_ok() {}
                }
            }
        }
        None
    });
}

/// How the panel treats the bridge's stdout.
#[derive(Clone, Copy)]
enum Panel {
    /// Reads as fast as it can (and waits for the turn's `result`).
    Reads,
    Never,
    /// Reads 64 KiB every 64 ms: 1 MiB/s.
    Slow,
}

struct Case {
    name: &'static str,
    flood: Flood,
    cap: Option<usize>,
    panel: Panel,
}

/// The bridge's `VmHWM` (peak resident set) in bytes.
#[cfg(unix)]
fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The bridge's peak private bytes (Windows has no resident-set peak that
/// leaves out shared images).
#[cfg(windows)]
fn peak_rss(pid: u32) -> Option<u64> {
    use windows::Win32::Foundation::CloseHandle;
    use windows::Win32::System::ProcessStatus::{K32GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS};
    use windows::Win32::System::Threading::{
        OpenProcess, PROCESS_QUERY_INFORMATION, PROCESS_VM_READ,
    };
    // SAFETY: a handle we open, read and close here, and a buffer of the size we pass.
    unsafe {
        let handle = OpenProcess(PROCESS_QUERY_INFORMATION | PROCESS_VM_READ, false, pid).ok()?;
        let mut counters = PROCESS_MEMORY_COUNTERS::default();
        let size = std::mem::size_of::<PROCESS_MEMORY_COUNTERS>() as u32;
        let read = K32GetProcessMemoryInfo(handle, &mut counters, size).as_bool();
        let _ = CloseHandle(handle);
        read.then_some(counters.PeakPagefileUsage as u64)
    }
}

struct Measured {
    /// Peak RSS after 1 s, half way and at the end.
    peaks: [u64; 3],
    read_bytes: u64,
    /// When the `result` came, and whether it was `is_error`.
    result: Option<(Duration, bool)>,
}

fn run(case: &Case, seconds: u64) -> Result<Measured, String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut command = Command::new(env!("CARGO_BIN_EXE_acp-bridge"));
    command
        .env(
            "ACP_BRIDGE_AGENT",
            one_word_command_line(&me.to_string_lossy()),
        )
        .env(ROLE, "agent")
        .env(KIND, case.flood.name())
        .env_remove("ACP_BRIDGE_MAX_LINE_BYTES")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(cap) = case.cap {
        command.args(["--max-line-bytes", &cap.to_string()]);
    }
    let mut child = command.spawn().map_err(|e| format!("cannot start: {e}"))?;
    let pid = child.id();
    let mut stdin = child.stdin.take().expect("piped");
    for line in [
        r#"{"type":"control_request","request_id":"r1","request":{"subtype":"initialize"}}"#,
        r#"{"type":"user","message":{"role":"user","content":"flood"},"parent_tool_use_id":null,"session_id":""}"#,
    ] {
        writeln!(stdin, "{line}").map_err(|e| e.to_string())?;
    }
    stdin.flush().map_err(|e| e.to_string())?;
    let stdout = child.stdout.take().expect("piped");
    let started = Instant::now();
    let read_bytes = Arc::new(AtomicU64::new(0));
    let result_at = Arc::new(std::sync::Mutex::new(None));
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (read_bytes, result_at, stop) = (read_bytes.clone(), result_at.clone(), stop.clone());
        let panel = case.panel;
        std::thread::spawn(move || {
            if matches!(panel, Panel::Never) {
                // hold the pipe unread until the end
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(20));
                }
                return;
            }
            let mut reader = BufReader::with_capacity(CHUNK, stdout);
            let mut line = Vec::new();
            let mut piece = vec![0u8; CHUNK];
            while !stop.load(Ordering::Relaxed) {
                let n = match panel {
                    Panel::Slow => {
                        std::thread::sleep(Duration::from_millis(64));
                        reader.read(&mut piece).unwrap_or(0)
                    }
                    _ => {
                        line.clear();
                        let n = reader.read_until(b'\n', &mut line).unwrap_or(0);
                        if line.starts_with(br#"{"type":"result""#) {
                            let is_error = line.windows(15).any(|w| w == br#""is_error":true"#);
                            *result_at.lock().unwrap() = Some((started.elapsed(), is_error));
                        }
                        n
                    }
                };
                if n == 0 {
                    return;
                }
                read_bytes.fetch_add(n as u64, Ordering::Relaxed);
            }
        })
    };
    let total = Duration::from_secs(seconds);
    let marks = [Duration::from_secs(1), total / 2, total];
    let mut peaks = [0u64; 3];
    for (i, mark) in marks.iter().enumerate() {
        while started.elapsed() < *mark {
            std::thread::sleep(Duration::from_millis(50));
        }
        peaks[i] = peak_rss(pid).ok_or("the bridge is gone")?;
    }
    stop.store(true, Ordering::Relaxed);
    drop(stdin);
    end(&mut child);
    let _ = reader.join();
    let result = *result_at.lock().unwrap();
    Ok(Measured {
        peaks,
        read_bytes: read_bytes.load(Ordering::Relaxed),
        result,
    })
}

/// Ends the bridge (which ends its agent): SIGTERM, then SIGKILL (on
/// Windows at once: its Job Object ends the agent).
fn end(child: &mut Child) {
    #[cfg(unix)]
    // SAFETY: signalling the child we started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn main() {
    if std::env::var(ROLE).as_deref() == Ok("agent") {
        return agent();
    }
    let seconds = env_u64("FLOOD_SECONDS", 10).max(2);
    let small_cap = 8 << 20;
    let cases = [
        Case {
            name: "one endless line, default cap (128 MiB)",
            flood: Flood::Endless,
            cap: None,
            panel: Panel::Reads,
        },
        Case {
            name: "one endless line, `--max-line-bytes 8388608`",
            flood: Flood::Endless,
            cap: Some(small_cap),
            panel: Panel::Reads,
        },
        Case {
            name: "64 KiB chunks, panel never reads",
            flood: Flood::Chunks,
            cap: None,
            panel: Panel::Never,
        },
        Case {
            name: "64 KiB chunks, panel reads",
            flood: Flood::Chunks,
            cap: None,
            panel: Panel::Reads,
        },
        Case {
            name: "64 KiB chunks, panel reads 1 MiB/s",
            flood: Flood::Chunks,
            cap: None,
            panel: Panel::Slow,
        },
        Case {
            name: "tool calls of 64 KiB that never finish, panel reads",
            flood: Flood::Calls,
            cap: None,
            panel: Panel::Reads,
        },
        Case {
            name: "one call's 64 KiB terminal output deltas, panel reads",
            flood: Flood::Terminal,
            cap: None,
            panel: Panel::Reads,
        },
    ];
    println!("<!-- report:begin -->");
    println!("## Memory under floods (`flood_memory`)\n");
    println!(
        "Peak resident memory (`VmHWM`) of the `acp-bridge` process while an agent floods it, \
         each case {seconds} s; target: flat, under 64 MiB plus one line cap.\n"
    );
    println!(
        "| case | peak MiB at 1 s | at {} s | at {seconds} s | panel read MiB | turn result |",
        seconds / 2
    );
    println!("|---|---:|---:|---:|---:|---|");
    for case in &cases {
        match run(case, seconds) {
            Ok(m) => {
                let result = match m.result {
                    Some((at, true)) => format!("`is_error` after {} ms", at.as_millis()),
                    Some((at, false)) => format!("success after {} ms", at.as_millis()),
                    None => "none (still running)".into(),
                };
                println!(
                    "| {} | {:.1} | {:.1} | {:.1} | {:.1} | {result} |",
                    case.name,
                    m.peaks[0] as f64 / MIB,
                    m.peaks[1] as f64 / MIB,
                    m.peaks[2] as f64 / MIB,
                    m.read_bytes as f64 / MIB,
                );
            }
            Err(e) => println!("| {} | failed: {e} | | | | |", case.name),
        }
    }
    println!(
        "\nWith chunks, the streamed message's text is kept for its folded `assistant` line \
         up to 16 MiB, so a reading panel's case grows by what the panel has taken until then. \
         Running tool calls hold \
         at most 64 MiB in all (the oldest are let go with an error result), and a call keeps \
         256 KiB of its terminal's output. Load average after: {}.",
        load()
    );
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
