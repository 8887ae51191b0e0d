//! The flood kinds of the campaign: an agent writing one line far over the
//! bridge's line cap, and an agent writing 64 KiB text chunks to a panel
//! that stops reading or reads slowly. Each case runs the bridge with a small
//! cap ([`LINE_CAP`]) and asserts, while the flood lasts, that the bridge's
//! peak resident memory stays under [`RSS_BOUND`] and (chunks) that the agent
//! is held at its pipe instead of having written everything; then that the
//! turn ends (`is_error` with the cap named, for the long line), every chunk
//! reached the panel, and the next prompt is served.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Case, Kind, Session};

/// The `--max-line-bytes` of the flood cases.
pub const LINE_CAP: usize = 1 << 20;
/// The over-cap line: 48 times the cap.
pub const ENDLESS_BYTES: usize = 48 << 20;
const CHUNK: usize = 64 << 10;
/// 16 MiB of chunks: twice what the bridge may hold in its queues.
pub const FLOOD_CHUNKS: usize = 256;
/// The bridge's peak resident memory during a flood (a debug build; the
/// unbounded bridge held the whole flood, twice).
const RSS_BOUND: u64 = 32 << 20;
/// Longest wait for a flood to reach the point a case checks.
const FLOOD_WAIT: Duration = Duration::from_secs(20);
/// The agent's written bytes stand still this long: it is blocked on its pipe.
const STILL: Duration = Duration::from_millis(300);
/// The slow panel's pause before each line.
const SLOW_LINE: Duration = Duration::from_millis(10);
/// Stdout lines the slow panel reads before the check (about 2 s, an 8th of
/// the flood).
const SLOW_CHECK_AFTER: u64 = 200;
/// How far the agent may be ahead of what the slow panel took: the bridge's
/// read and write budgets (4 MiB each) and the pipes.
const SLACK: u64 = 8 << 20;

const CHUNK_HEAD: &str = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"x","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":""#;

/// How the panel reads its stdout: freely, held (not at all), or with a
/// pause before each line; counts the lines read.
#[derive(Clone, Default)]
pub struct Pace {
    /// Microseconds before each line; 0 free, `u64::MAX` held.
    micros: Arc<AtomicU64>,
    lines: Arc<AtomicU64>,
    bytes: Arc<AtomicU64>,
}

impl Pace {
    /// Called by the reader before each line.
    pub fn wait(&self) {
        loop {
            match self.micros.load(Ordering::Acquire) {
                0 => break,
                u64::MAX => std::thread::sleep(Duration::from_millis(5)),
                us => {
                    std::thread::sleep(Duration::from_micros(us));
                    break;
                }
            }
        }
    }

    /// Called by the reader after each line.
    pub fn took(&self, bytes: usize) {
        self.lines.fetch_add(1, Ordering::AcqRel);
        self.bytes.fetch_add(bytes as u64, Ordering::AcqRel);
    }

    fn set(&self, pause: Option<Duration>) {
        let us = pause.map_or(u64::MAX, |d| d.as_micros() as u64);
        self.micros.store(us, Ordering::Release);
    }

    fn free(&self) {
        self.micros.store(0, Ordering::Release);
    }
}

pub fn bridge_args(kind: Kind) -> Vec<String> {
    match kind {
        Kind::EndlessLine | Kind::FloodUnreadPanel | Kind::FloodSlowPanel => {
            vec!["--max-line-bytes".into(), LINE_CAP.to_string()]
        }
        _ => vec![],
    }
}

/// The agent's over-cap line (a chunk whose text never seems to end), then
/// its newline.
pub fn write_endless_line(out: &mut dyn Write) {
    let text = "y".repeat(CHUNK);
    let _ = out.write_all(CHUNK_HEAD.as_bytes());
    for _ in 0..ENDLESS_BYTES / CHUNK {
        if out.write_all(text.as_bytes()).is_err() {
            return;
        }
    }
    let _ = out.write_all(b"\"}}}}\n");
}

/// The flood: each chunk a message of its own (its own `messageId`), so the
/// panel's lines stay 64 KiB (one message of 16 MiB would fold into one line
/// that a loaded machine takes seconds to pass, tripping the panel's patience).
pub fn write_big_flood(out: &mut dyn Write) {
    let text = "f".repeat(CHUNK);
    for n in 0..FLOOD_CHUNKS {
        let line = format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"x","update":{{"sessionUpdate":"agent_message_chunk","messageId":"flood-{n}","content":{{"type":"text","text":"{text}"}}}}}}}}"#
        );
        if writeln!(out, "{line}").is_err() {
            return;
        }
    }
}

/// Right after the first prompt: the flood kinds' checks while the flood
/// lasts (other kinds: nothing).
pub fn watch(case: &Case, s: &mut Session) -> Result<(), String> {
    if !matches!(
        case.kind,
        Kind::EndlessLine | Kind::FloodUnreadPanel | Kind::FloodSlowPanel
    ) {
        return Ok(());
    }
    let bridge = s.child.id();
    let agent = agent_pid(&case.plan.pid_file)?;
    let base = baseline(bridge);
    match case.kind {
        Kind::EndlessLine => {
            // the whole line went through the bridge's reader
            wait_for(|| written(agent).is_some_and(|w| w >= ENDLESS_BYTES as u64))
                .map_err(|_| "the agent did not get its long line out".to_string())?;
            check_rss(bridge, base, "after a line 48 times the cap")?;
        }
        Kind::FloodUnreadPanel => {
            s.pace.set(None);
            let still = wait_still(agent);
            let wrote = written(agent).unwrap_or(0);
            let rss = check_rss(bridge, base, "while the panel did not read");
            s.pace.free();
            still?;
            rss?;
            if wrote >= (FLOOD_CHUNKS * CHUNK) as u64 {
                return Err(format!(
                    "backpressure: the agent wrote its whole flood ({wrote} bytes) to a panel that did not read"
                ));
            }
        }
        Kind::FloodSlowPanel => {
            s.pace.set(Some(SLOW_LINE));
            let start = s.pace.lines.load(Ordering::Acquire);
            let reached =
                wait_for(|| s.pace.lines.load(Ordering::Acquire) >= start + SLOW_CHECK_AFTER);
            let wrote = written(agent).unwrap_or(0);
            let took = s.pace.bytes.load(Ordering::Acquire);
            let rss = check_rss(bridge, base, "while the panel read slowly");
            s.pace.free();
            reached.map_err(|_| "the slow panel got no lines".to_string())?;
            rss?;
            if wrote > took + SLACK {
                return Err(format!(
                    "backpressure: the agent wrote {wrote} bytes while the slow panel took {took}"
                ));
            }
        }
        _ => {}
    }
    Ok(())
}

/// The first turn's result: the long line's names the cap.
pub fn check_result(kind: Kind, first: &Value) -> Result<(), String> {
    let text = first["result"].as_str().unwrap_or("");
    if kind == Kind::EndlessLine && !text.contains("line cap") {
        return Err(format!(
            "a turn ended by an over-cap line must say so: {first}"
        ));
    }
    Ok(())
}

/// Every chunk of a flood reached the panel.
pub fn check_seen(kind: Kind, seen: &[String]) -> Result<(), String> {
    if !matches!(kind, Kind::FloodUnreadPanel | Kind::FloodSlowPanel) {
        return Ok(());
    }
    let chunks = seen
        .iter()
        .filter(|l| l.len() > CHUNK && l.contains("text_delta"))
        .count();
    if chunks < FLOOD_CHUNKS {
        return Err(format!(
            "{chunks} of the flood's {FLOOD_CHUNKS} chunks reached the panel"
        ));
    }
    Ok(())
}

/// What [`check_rss`] bounds `peak_rss` above: nothing on Unix (the peak
/// resident set itself is bounded); on Windows what the bridge had
/// committed as the flood began, as its own images and wine's runtime take
/// some 50 MiB there before any line is read.
fn baseline(pid: u32) -> u64 {
    #[cfg(windows)]
    {
        private_bytes(pid).unwrap_or(0)
    }
    #[cfg(unix)]
    {
        let _ = pid;
        0
    }
}

fn check_rss(pid: u32, base: u64, when: &str) -> Result<(), String> {
    let peak = peak_rss(pid).ok_or("the bridge's peak resident set cannot be read (gone?)")?;
    let peak = peak.saturating_sub(base);
    if peak > RSS_BOUND {
        return Err(format!(
            "memory: the bridge's peak resident set was {} MiB {when} (bound {} MiB, above a base of {} MiB)",
            peak >> 20,
            RSS_BOUND >> 20,
            base >> 20
        ));
    }
    Ok(())
}

/// `VmHWM` (peak resident set) in bytes.
#[cfg(unix)]
fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

/// Bytes `pid` has written (`wchar` of `/proc/<pid>/io`).
#[cfg(unix)]
fn written(pid: i32) -> Option<u64> {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("wchar:"))?
        .trim()
        .parse()
        .ok()
}

/// The peak of private committed bytes: a Windows process's own memory
/// (its working set also counts the shared images mapped into it, some
/// 60 MiB under wine for any Rust program).
#[cfg(windows)]
fn peak_rss(pid: u32) -> Option<u64> {
    use windows::Win32::System::ProcessStatus::{K32GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS};
    with_process(pid, |handle| {
        let mut counters = PROCESS_MEMORY_COUNTERS::default();
        let size = std::mem::size_of::<PROCESS_MEMORY_COUNTERS>() as u32;
        // SAFETY: a live handle and a buffer of the size we pass.
        unsafe { K32GetProcessMemoryInfo(handle, &mut counters, size) }
            .as_bool()
            .then_some(counters.PeakPagefileUsage as u64)
    })
}

/// Private committed bytes now.
#[cfg(windows)]
fn private_bytes(pid: u32) -> Option<u64> {
    use windows::Win32::System::ProcessStatus::{K32GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS};
    with_process(pid, |handle| {
        let mut counters = PROCESS_MEMORY_COUNTERS::default();
        let size = std::mem::size_of::<PROCESS_MEMORY_COUNTERS>() as u32;
        // SAFETY: a live handle and a buffer of the size we pass.
        unsafe { K32GetProcessMemoryInfo(handle, &mut counters, size) }
            .as_bool()
            .then_some(counters.PagefileUsage as u64)
    })
}

/// Bytes the fault agent `pid` has written to its stdout, as it counts them
/// ([`counted_stdout`]): wine keeps no I/O counters (GetProcessIoCounters
/// says 0), so the agent's own count stands in for the kernel's.
#[cfg(windows)]
fn written(pid: i32) -> Option<u64> {
    std::fs::read_to_string(written_file(pid as u32))
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[cfg(windows)]
pub fn written_file(pid: u32) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("acp-bridge-fault-agent-{pid}.written"))
}

/// The fault agent's stdout. On Windows it counts what went out and a
/// thread publishes the count every few milliseconds for [`written`].
pub fn counted_stdout() -> Box<dyn Write> {
    #[cfg(unix)]
    {
        Box::new(std::io::stdout().lock())
    }
    #[cfg(windows)]
    {
        struct Counted(std::io::StdoutLock<'static>, Arc<AtomicU64>);
        impl Write for Counted {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                let n = self.0.write(buf)?;
                self.1.fetch_add(n as u64, Ordering::AcqRel);
                Ok(n)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                self.0.flush()
            }
        }
        let count = Arc::new(AtomicU64::new(0));
        let published = count.clone();
        let file = written_file(std::process::id());
        std::thread::spawn(move || {
            let temp = file.with_extension("tmp");
            loop {
                let n = published.load(Ordering::Acquire);
                if std::fs::write(&temp, n.to_string()).is_ok() {
                    let _ = std::fs::rename(&temp, &file);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        Box::new(Counted(std::io::stdout().lock(), count))
    }
}

/// `read` on a handle to `pid` opened for queries, closed after.
#[cfg(windows)]
fn with_process<T>(
    pid: u32,
    read: impl FnOnce(windows::Win32::Foundation::HANDLE) -> Option<T>,
) -> Option<T> {
    use windows::Win32::Foundation::CloseHandle;
    use windows::Win32::System::Threading::{
        OpenProcess, PROCESS_QUERY_INFORMATION, PROCESS_VM_READ,
    };
    // SAFETY: the handle is ours until closed here.
    unsafe {
        let handle = OpenProcess(PROCESS_QUERY_INFORMATION | PROCESS_VM_READ, false, pid).ok()?;
        let value = read(handle);
        let _ = CloseHandle(handle);
        value
    }
}

fn agent_pid(pid_file: &std::path::Path) -> Result<i32, String> {
    let mut pid = None;
    wait_for(|| {
        pid = std::fs::read_to_string(pid_file)
            .ok()
            .and_then(|t| t.trim().parse().ok());
        pid.is_some()
    })
    .map_err(|_| "the agent wrote no pid file".to_string())?;
    Ok(pid.unwrap_or(0))
}

/// Waits (bounded by [`FLOOD_WAIT`]) until `agent` has written nothing for [`STILL`].
fn wait_still(agent: i32) -> Result<(), String> {
    let mut last = (written(agent), Instant::now());
    wait_for(|| {
        let now = written(agent);
        if now != last.0 {
            last = (now, Instant::now());
        }
        last.1.elapsed() >= STILL
    })
    .map_err(|_| format!("the agent never stopped writing within {FLOOD_WAIT:?}"))
}

fn wait_for(mut done: impl FnMut() -> bool) -> Result<(), ()> {
    let until = Instant::now() + FLOOD_WAIT;
    while !done() {
        if Instant::now() > until {
            return Err(());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}
