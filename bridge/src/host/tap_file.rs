//! `--tap FILE` (or `ACP_BRIDGE_TAP`) and `--bridge-log FILE`: one
//! mechanism. The session loop hands every line it sees to a writer thread,
//! which scrubs and encodes it ([`acp_bridge::tap`]) into the tap and, for
//! `--bridge-log`, a tagged text view appended as lines come.
//!
//! The writer takes the queued lines every [`TICK`] and flushes after each
//! batch. The tap goes through the workspace's one safe output
//! ([`atomic_file`]): a file is written to a hidden temp file beside FILE,
//! `.<name>.<random>.partial`, created exclusively and 0600 (a directory
//! made for taps is 0700: a session is its user's alone), then synced and
//! renamed over FILE once the trailer is written, so a crash leaves the temp
//! file, never a half file at FILE, and a failed write leaves nothing; a
//! device or FIFO (`/dev/null` as "tap off") is written in place, never
//! replaced. A tap that cannot be opened never stops the session: it runs
//! untapped and says why. The queue to the thread has a byte budget ([`BUDGET`]) like the
//! bridge's own queues: a line is never refused, but while the budget is
//! used up the session loop takes no new input (bounded by [`STALL_LIMIT`],
//! after which the tap gives up rather than the session).

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use atomic_file::{Output, OutputFile, Privacy};

use acp_bridge::tap::{REDACTED, Scrubber, TapEncoder, TapEnd, TapSession, Way};

use super::args::HostConfig;
use anyhow::{Context, Result};

/// Bytes of lines that may wait for the writer thread: room for an image at
/// the bridge's image cap both ways (the agent's line and the panel's), so
/// a screenshot does not make the session wait for the tap's disk.
const BUDGET: usize = 32 << 20;
/// How often the writer takes what was queued (sooner when a quarter of
/// [`BUDGET`] waits): a line costs the session loop a copy and a lock, not a
/// wake-up of another thread, and the file a write per tick, not per line.
const TICK: Duration = Duration::from_millis(20);
/// How long the session waits for a writer that is over budget before the
/// tap is given up.
const STALL_LIMIT: Duration = Duration::from_secs(10);
/// How long the end of the session waits for the tap to be written.
const FINISH_LIMIT: Duration = Duration::from_secs(30);

enum Cmd {
    Line {
        ms: u64,
        way: Way,
        text: String,
    },
    Skipped {
        ms: u64,
        way: Way,
        bytes: u64,
        cap: usize,
    },
    Finish {
        ms: u64,
        end: TapEnd,
        notes: Vec<String>,
    },
    /// A credential learnt mid-session, scrubbed from every later line.
    Secret(String),
}

#[derive(Default)]
struct State {
    queue: VecDeque<Cmd>,
    bytes: usize,
    /// The writer failed or fell behind: lines are dropped.
    broken: Option<String>,
    /// The result of the finish: the tap's path, or why there is none.
    done: Option<std::result::Result<Option<PathBuf>, String>>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// Signalled when a command is queued.
    work: Condvar,
    /// Signalled when the finish is done.
    room: Condvar,
    /// Notified (for the session loop) when a batch was written.
    drained: tokio::sync::Notify,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The session's tap and log view; with neither flag every call is a no-op.
pub struct Tap {
    shared: Option<Arc<Shared>>,
    cap: usize,
}

/// Where the tap goes and what it scrubs.
pub struct TapConfig<'a> {
    pub tap: Option<&'a Path>,
    pub bridge_log: Option<&'a Path>,
    pub cap: usize,
}

impl Tap {
    /// Opens the tap and the bridge log. A tap that cannot be opened is
    /// left out, and the second value says why: the session runs untapped.
    pub fn open(
        config: TapConfig,
        session: TapSession,
        scrubber: Scrubber,
    ) -> Result<(Tap, Option<String>)> {
        let log: Option<Box<dyn Write + Send>> = match config.bridge_log {
            Some(p) => Some(Box::new(BufWriter::new(
                File::options()
                    .create(true)
                    .append(true)
                    .open(p)
                    .with_context(|| format!("--bridge-log: cannot open {}", p.display()))?,
            ))),
            None => None,
        };
        let mut untapped = None;
        let out = match config.tap.map(open_tap).transpose() {
            Ok(file) => file.map(BufWriter::new),
            Err(e) => {
                untapped = Some(format!("the session runs untapped: {e:#}"));
                None
            }
        };
        if out.is_none() && log.is_none() {
            let tap = Tap {
                shared: None,
                cap: config.cap,
            };
            return Ok((tap, untapped));
        }
        let encoder = TapEncoder::new(session, scrubber, out, log);
        let shared = Arc::new(Shared::default());
        let thread_shared = shared.clone();
        std::thread::Builder::new()
            .name("acp-bridge-tap".into())
            .spawn(move || write_loop(&thread_shared, encoder))
            .context("cannot start the tap's writer thread")?;
        let tap = Tap {
            shared: Some(shared),
            cap: config.cap,
        };
        Ok((tap, untapped))
    }

    /// One line the session saw, `ms` after it started.
    pub fn line(&self, ms: u64, way: Way, text: &str) {
        let len = text.len();
        self.push(len, || Cmd::Line {
            ms,
            way,
            text: text.to_string(),
        });
    }

    /// A credential learnt mid-session (an MCP server's header in the panel's
    /// `initialize`): never written from the next line on.
    pub fn secret(&self, value: &str) {
        self.push(0, || Cmd::Secret(value.to_string()));
    }

    /// A line over the cap the bridge skipped, `bytes` long.
    pub fn skipped(&self, ms: u64, way: Way, bytes: u64) {
        let cap = self.cap;
        self.push(0, || Cmd::Skipped {
            ms,
            way,
            bytes,
            cap,
        });
    }

    /// Queues a command; never waits (the session loop checks
    /// [`Tap::has_room`] before it takes the input this line belongs to).
    fn push(&self, len: usize, cmd: impl FnOnce() -> Cmd) {
        let Some(shared) = &self.shared else { return };
        let mut state = shared.lock();
        if state.broken.is_some() {
            return;
        }
        state.queue.push_back(cmd());
        state.bytes += len;
        if state.bytes >= BUDGET / 4 {
            // else the writer takes it at its next tick
            shared.work.notify_one();
        }
    }

    /// Whether the session may take more input: less than [`BUDGET`] waits
    /// for the writer or is being written (a tap given up always has room).
    pub fn has_room(&self) -> bool {
        self.shared.as_ref().is_none_or(|shared| {
            let state = shared.lock();
            state.bytes < BUDGET || state.broken.is_some()
        })
    }

    /// Resolves once the tap has room again; after [`STALL_LIMIT`] without,
    /// the tap is given up (its lines dropped) rather than the session.
    pub async fn room(&self) {
        let Some(shared) = &self.shared else {
            return std::future::pending().await;
        };
        let notified = shared.drained.notified();
        if self.has_room() {
            return;
        }
        if tokio::time::timeout(STALL_LIMIT, notified).await.is_err() {
            let mut state = shared.lock();
            if state.bytes >= BUDGET && state.broken.is_none() {
                state.broken = Some(format!(
                    "writing it fell behind by {} MiB for {} s",
                    state.bytes >> 20,
                    STALL_LIMIT.as_secs()
                ));
                state.queue.clear();
            }
        }
    }

    /// Writes the trailer, then moves the tap to its path. Returns what to
    /// tell the user: where the tap is, or why it is not there.
    pub fn finish(self, ms: u64, end: TapEnd, notes: Vec<String>) -> Option<String> {
        let shared = self.shared?;
        let mut state = shared.lock();
        if let Some(why) = state.broken.clone() {
            return Some(format!("the tap was not written: {why}"));
        }
        state.queue.push_back(Cmd::Finish { ms, end, notes });
        shared.work.notify_one();
        let (state, _) = shared
            .room
            .wait_timeout_while(state, FINISH_LIMIT, |s| s.done.is_none())
            .unwrap_or_else(|e| e.into_inner());
        match &state.done {
            Some(Ok(Some(path))) => Some(format!("tap written to {}", path.display())),
            Some(Ok(None)) => None,
            Some(Err(why)) => Some(format!("the tap was not written: {why}")),
            None => Some(format!(
                "the tap was not written within {} s; its temp file stays",
                FINISH_LIMIT.as_secs()
            )),
        }
    }
}

/// The tap at `path` opened through the safe output (a directory gets a
/// new file named by time and pid). A path ending in a separator of the
/// platform (`/`; on Windows `\\` too) names a directory, existing or not.
fn open_tap(path: &Path) -> Result<OutputFile> {
    let as_dir = path.is_dir()
        || path
            .as_os_str()
            .to_string_lossy()
            .ends_with(std::path::is_separator);
    let path = if as_dir {
        atomic_file::create_dirs(path, Privacy::OwnerOnly)
            .with_context(|| format!("--tap: cannot create the directory {}", path.display()))?;
        path.join(format!(
            "acp-bridge-tap-{}-{}.jsonl",
            utc_stamp(),
            std::process::id()
        ))
    } else {
        path.to_path_buf()
    };
    path.file_name()
        .with_context(|| format!("--tap: {} names no file", path.display()))?;
    Output::prepare_as(&path, Privacy::OwnerOnly)
        .and_then(|output| output.open(Privacy::OwnerOnly))
        .with_context(|| format!("--tap: cannot write {}", path.display()))
}

fn write_loop(shared: &Shared, mut encoder: TapEncoder<BufWriter<OutputFile>>) {
    lower_priority();
    loop {
        let batch: Vec<Cmd> = {
            let mut state = shared.lock();
            if state.queue.is_empty() {
                state = shared
                    .work
                    .wait_timeout(state, TICK)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            state.queue.drain(..).collect()
        };
        if batch.is_empty() {
            continue;
        }
        let mut written = 0;
        let mut result = Ok(());
        for cmd in batch {
            result = match cmd {
                Cmd::Line { ms, way, text } => {
                    written += text.len();
                    encoder.line(ms, way, &text)
                }
                Cmd::Skipped {
                    ms,
                    way,
                    bytes,
                    cap,
                } => encoder.skipped(ms, way, bytes, cap),
                Cmd::Secret(value) => {
                    encoder.learn_secret(&value);
                    Ok(())
                }
                Cmd::Finish { ms, end, notes } => {
                    let done = encoder
                        .finish(ms, end, notes)
                        .map_err(|e| e.to_string())
                        .and_then(commit);
                    let mut state = shared.lock();
                    state.done = Some(done);
                    shared.room.notify_all();
                    return;
                }
            };
            if result.is_err() {
                break;
            }
        }
        // flushed after every batch: a crash loses at most a tick's lines
        let result = result.and_then(|()| encoder.flush());
        let mut state = shared.lock();
        state.bytes = state.bytes.saturating_sub(written);
        shared.drained.notify_waiters();
        if let Err(e) = result {
            let why = match encoder.out() {
                Some(out) => format!(
                    "writing {} failed: {e}",
                    out.get_ref().writing_to().display()
                ),
                None => format!("writing the bridge log failed: {e}"),
            };
            // the temp file goes with the encoder: a failed tap leaves nothing
            drop(encoder);
            state.broken = Some(why.clone());
            state.done = Some(Err(why));
            state.queue.clear();
            state.bytes = 0;
            shared.room.notify_all();
            return;
        }
    }
}

/// The tap is background work: on a busy machine its thread yields the CPU
/// to the session's (the panel waits on that one, not on the tap; a tap
/// that falls behind holds up input only once its budget is used up).
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain syscalls; on Linux a thread id names that thread alone.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, 10);
    }
}

/// Puts the tap in place (synced and renamed over its path, or flushed
/// into the device it was written to).
fn commit(out: Option<BufWriter<OutputFile>>) -> std::result::Result<Option<PathBuf>, String> {
    let Some(out) = out else {
        return Ok(None);
    };
    let file = out.into_inner().map_err(|e| e.to_string())?;
    let writing_to = file.writing_to().to_path_buf();
    file.commit()
        .map(Some)
        .map_err(|e| format!("putting {} in place failed: {e}", writing_to.display()))
}

/// Today's UTC date, `YYYY-MM-DD`.
pub fn utc_date() -> String {
    let secs = unix_secs();
    civil_date(secs.div_euclid(86_400))
}

/// `YYYYMMDD-HHMMSS` in UTC, for a tap's file name.
fn utc_stamp() -> String {
    let secs = unix_secs();
    let day = secs.rem_euclid(86_400);
    format!(
        "{}-{:02}{:02}{:02}",
        civil_date(secs.div_euclid(86_400)).replace('-', ""),
        day / 3600,
        day / 60 % 60,
        day % 60
    )
}

fn unix_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Days since 1970-01-01 -> `YYYY-MM-DD` (proleptic Gregorian).
fn civil_date(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The tap's scrubber: the session's workspace, the user's home and the
/// system temp directory (also as their canonical paths), the MCP URL and
/// token, and every MCP header and environment value of the configuration.
pub fn tap_scrubber(config: &HostConfig) -> Scrubber {
    let mut b = Scrubber::builder();
    let mut path = |kind: &'static str, placeholder: &str, p: &std::path::Path| {
        b.path(kind, placeholder, &p.to_string_lossy());
        if let Ok(real) = p.canonicalize() {
            b.path(kind, placeholder, &real.to_string_lossy());
        }
    };
    path("workspace", "<workspace>", &config.cwd);
    for var in ["HOME", "USERPROFILE"] {
        if let Some(home) = std::env::var_os(var) {
            path("home", "<home>", std::path::Path::new(&home));
        }
    }
    path("temp", "<temp>", &std::env::temp_dir());
    let authorization = config
        .spec
        .mcp
        .as_ref()
        .and_then(|m| m.authorization.as_deref());
    if let Some(mcp) = &config.spec.mcp {
        b.literal("mcp-url", "<mcp-url>", &mcp.url);
    }
    if let Some(auth) = authorization {
        match auth.split_once(' ') {
            Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => {
                b.literal("mcp-token", "<mcp-token>", token.trim())
            }
            _ => b.literal("mcp-header", REDACTED, auth),
        }
    }
    for secret in &config.secrets {
        if Some(secret.as_str()) != authorization {
            b.literal("mcp-header", REDACTED, secret);
        }
    }
    for value in super::machine::secret_values() {
        b.literal("env-secret", REDACTED, &value);
    }
    for (kind, placeholder, value) in super::machine::identity() {
        b.literal(kind, placeholder, &value);
    }
    b.build()
}

/// The header and environment values of the MCP servers a panel
/// `initialize` line carries (the TypeScript SDK sends its servers there):
/// the tap learns them before it writes the line, as it learns the
/// `--mcp-config` ones at launch.
pub fn panel_line_secrets(line: &str) -> Vec<String> {
    if !line.contains("\"mcpServers\"") {
        return Vec::new();
    }
    serde_json::from_str::<serde_json::Value>(line)
        .ok()
        .and_then(|v| {
            v["request"]["mcpServers"]
                .as_object()
                .map(acp_bridge::acp::mcp_servers::secrets)
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_date_matches_known_days() {
        for (days, date) in [
            (0, "1970-01-01"),
            (11_016, "2000-02-29"),
            (20_786, "2026-11-29"),
        ] {
            assert_eq!(civil_date(days), date);
        }
    }
}
