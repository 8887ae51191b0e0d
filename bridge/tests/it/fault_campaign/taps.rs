//! The tap kinds of the campaign: each of the tap's trust-boundary findings
//! as a case against a mutated recorded agent, with `--tap` where it is
//! hostile or broken. Every case keeps the campaign's own checks (one
//! result per prompt, nothing left running, ...) and adds the tap's:
//!
//! | kind | the tap | what must hold |
//! |---|---|---|
//! | `TapUnderAFile` | a path whose directory is a file | the session runs untapped and says so; nothing is created |
//! | `TapOntoFifo` | a FIFO a reader holds open | the reader gets the whole tap, header to trailer; the FIFO stays a FIFO |
//! | `TapThroughSymlink` | a symlink to an older tap | the link stays a link; its target is the new tap, whole and 0600; no temp file is left |
//! | `TapOntoFullDevice` | a node of the device `/dev/full` is, made in the case's directory (never the host's `/dev`) | the session runs; the failed write is said; the device stays a device |
//! | `TapChunkedSecret` | a file in a directory the bridge makes | credentials streamed in 6-byte chunks reach the panel but not the tap, even joined; file 0600, directory 0700 |
//! | `TapPanelGoneMidTurn` | a file | the panel closes stdin mid-turn and the agent hangs, ignoring EOF and SIGTERM: the bridge ends it, and the tap is whole |

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use serde_json::{Value, json};

use super::{Batch, Kind};

/// Where a case's tap goes, and what reads it while the bridge runs.
pub struct TapSetup {
    kind: Kind,
    dir: PathBuf,
    args: Vec<String>,
    fifo_reader: Option<(JoinHandle<String>, Arc<AtomicBool>)>,
}

impl TapSetup {
    /// The `--tap` arguments of this case's bridge.
    pub fn args(&self) -> &[String] {
        &self.args
    }
}

/// Kinds of this module that this platform can run.
pub fn runs_here(kind: Kind) -> bool {
    // FIFOs and symlinks are unix's; a full device is Linux's, made where
    // device nodes may be made (as root)
    let unix = cfg!(unix);
    match kind {
        Kind::TapOntoFifo | Kind::TapThroughSymlink => unix,
        Kind::TapOntoFullDevice => full_device_nodes(),
        _ => true,
    }
}

/// Prepares the tap's target in the case's directory (before the bridge starts).
pub fn prepare(kind: Kind, dir: &Path) -> Result<TapSetup, String> {
    let mut setup = TapSetup {
        kind,
        dir: dir.to_path_buf(),
        args: Vec::new(),
        fifo_reader: None,
    };
    let tap = |p: &Path| vec!["--tap".to_string(), p.to_string_lossy().into_owned()];
    match kind {
        Kind::TapUnderAFile => {
            std::fs::write(dir.join("a-file"), "not a directory\n").map_err(|e| e.to_string())?;
            setup.args = tap(&dir.join("a-file").join("tap.jsonl"));
        }
        Kind::TapOntoFifo => {
            let fifo = dir.join("tap.fifo");
            setup.fifo_reader = Some(fifo_reader(&fifo)?);
            setup.args = tap(&fifo);
        }
        Kind::TapThroughSymlink => {
            std::fs::write(dir.join("older-tap.jsonl"), "an older tap\n")
                .map_err(|e| e.to_string())?;
            #[cfg(unix)]
            std::os::unix::fs::symlink("older-tap.jsonl", dir.join("tap.jsonl"))
                .map_err(|e| e.to_string())?;
            setup.args = tap(&dir.join("tap.jsonl"));
        }
        Kind::TapOntoFullDevice => {
            let node = dir.join("full");
            make_full_device(&node)?;
            setup.args = tap(&node);
        }
        Kind::TapChunkedSecret => {
            let taps = format!("{}/", dir.join("taps").to_string_lossy());
            setup.args = vec!["--tap".into(), taps];
        }
        Kind::TapPanelGoneMidTurn => setup.args = tap(&dir.join("tap.jsonl")),
        _ => {}
    }
    Ok(setup)
}

/// Credentials of three shapes, built here so this file holds none.
fn secrets() -> Vec<String> {
    let body = "q7Rk2Mx9Lp4Zt8Vn3Bw6Hs1Jd5Fg0Ca";
    vec![
        format!("ghp_{body}{}", &body[..4]),
        format!("AKIA{}", body[..16].to_ascii_uppercase()),
        format!("sk-ant-api03-{body}{body}"),
    ]
}

/// For `TapChunkedSecret`: the first turn starts with the agent saying the
/// secrets in 6-byte chunks (the corpus streams 5-7 bytes a chunk).
pub fn insert_chunked_secret(batches: &mut [Batch], prompt_batch: usize) {
    let session_id = batches
        .iter()
        .flat_map(|b| &b.frames)
        .filter_map(|f| serde_json::from_str::<Value>(f).ok())
        .find_map(|v| v["params"]["sessionId"].as_str().map(str::to_string))
        .unwrap_or_else(|| "s".into());
    let text = format!("Here are your keys: {} ok.", secrets().join(" and "));
    let chunks: Vec<String> = text
        .as_bytes()
        .chunks(6)
        .map(|c| {
            json!({"jsonrpc": "2.0", "method": "session/update", "params": {
                "sessionId": session_id,
                "update": {"sessionUpdate": "agent_message_chunk",
                           "content": {"type": "text", "text": String::from_utf8_lossy(c)}}}})
            .to_string()
        })
        .collect();
    let frames = &mut batches[prompt_batch].frames;
    frames.splice(0..0, chunks);
}

/// Only v1 agents take the inserted v1 chunks as they are.
pub fn fits(kind: Kind, recording: &Path) -> bool {
    kind != Kind::TapChunkedSecret
        || !recording
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|v| v.to_string_lossy().contains("+acp"))
}

/// The tap's own checks, once the bridge has exited.
pub fn check(setup: TapSetup, stderr: &str, seen: &[String]) -> Result<(), String> {
    let dir = &setup.dir;
    match setup.kind {
        Kind::TapUnderAFile => {
            if !stderr.contains("the session runs untapped") {
                return Err(format!(
                    "T3: the bridge did not say the session runs untapped:\n{stderr}"
                ));
            }
            if dir.join("a-file").is_dir() {
                return Err("T3: a directory replaced the file".into());
            }
        }
        Kind::TapOntoFifo => {
            let (reader, bridge_gone) = setup.fifo_reader.expect("a FIFO case has a reader");
            bridge_gone.store(true, Ordering::Release);
            let streamed = reader.join().map_err(|_| "the FIFO reader panicked")?;
            whole_tap(&streamed, "T1: the FIFO's reader")?;
            if !is_fifo(&dir.join("tap.fifo")) {
                return Err("T1: the FIFO was replaced".into());
            }
        }
        Kind::TapThroughSymlink => {
            let link = dir.join("tap.jsonl");
            let is_link =
                std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink());
            if !is_link {
                return Err("T1: the symlink was replaced".into());
            }
            let target = dir.join("older-tap.jsonl");
            let text = std::fs::read_to_string(&target).map_err(|e| e.to_string())?;
            whole_tap(&text, "T1: the symlink's target")?;
            private(&target, 0o600, "T4: the tap")?;
            no_partial(dir)?;
        }
        Kind::TapOntoFullDevice => {
            let node = dir.join("full");
            let said = format!("the tap was not written: writing {} failed", node.display());
            if !stderr.contains(&said) {
                return Err(format!("T3: a failed tap write was not said:\n{stderr}"));
            }
            if !is_char_device(&node) {
                return Err("T1: the device was replaced".into());
            }
        }
        Kind::TapChunkedSecret => {
            let taps = dir.join("taps");
            private(&taps, 0o700, "T4: the tap directory")?;
            let files: Vec<PathBuf> = std::fs::read_dir(&taps)
                .map_err(|e| format!("T5: no tap directory: {e}"))?
                .flatten()
                .map(|e| e.path())
                .collect();
            let [file] = files.as_slice() else {
                return Err(format!("T5: expected one tap, found {files:?}"));
            };
            private(file, 0o600, "T4: the tap")?;
            let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
            let events = whole_tap(&text, "T5: the tap")?;
            let joined = joined_agent_text(&events);
            let panel_text: String = seen.concat();
            for secret in secrets() {
                if text.contains(&secret) || joined.contains(&secret) {
                    return Err(format!(
                        "T5: a credential streamed in chunks is in the tap: {secret:.8}..."
                    ));
                }
                if !panel_text.contains(&secret) {
                    return Err(format!(
                        "the panel must get what the agent said (only the tap is scrubbed): {secret:.8}... missing"
                    ));
                }
            }
        }
        Kind::TapPanelGoneMidTurn => {
            let text = std::fs::read_to_string(dir.join("tap.jsonl"))
                .map_err(|e| format!("T10: no tap after the panel left mid-turn: {e}"))?;
            whole_tap(&text, "T10: the tap")?;
            no_partial(dir)?;
        }
        _ => {}
    }
    Ok(())
}

/// The tap's events; an error unless it runs from header to trailer.
fn whole_tap(text: &str, what: &str) -> Result<Vec<Value>, String> {
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).map_err(|e| format!("{what}: a line is not JSON ({e})")))
        .collect::<Result<_, _>>()?;
    match (lines.first(), lines.last()) {
        (Some(h), Some(t))
            if h["type"] == "header" && t["type"] == "trailer" && lines.len() >= 2 =>
        {
            Ok(lines[1..lines.len() - 1].to_vec())
        }
        _ => Err(format!(
            "{what} is not whole (header to trailer): {:.300}",
            text
        )),
    }
}

/// The text of every agent message chunk in the tap, joined in order.
fn joined_agent_text(events: &[Value]) -> String {
    events
        .iter()
        .filter(|e| e["leg"] == "acp" && e["dir"] == "from_agent")
        .filter_map(|e| serde_json::from_str::<Value>(e["raw"].as_str()?).ok())
        .filter(|v| v["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|v| {
            v["params"]["update"]["content"]["text"]
                .as_str()
                .map(str::to_string)
        })
        .collect()
}

fn no_partial(dir: &Path) -> Result<(), String> {
    let left: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".partial"))
        .collect();
    if left.is_empty() {
        Ok(())
    } else {
        Err(format!("a temp file was left beside the tap: {left:?}"))
    }
}

#[cfg(unix)]
fn private(path: &Path, mode: u32, what: &str) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let got = std::fs::metadata(path)
        .map_err(|e| e.to_string())?
        .permissions()
        .mode()
        & 0o777;
    if got == mode {
        Ok(())
    } else {
        Err(format!("{what} is {got:o}, not {mode:o}"))
    }
}

#[cfg(not(unix))]
fn private(_: &Path, _: u32, _: &str) -> Result<(), String> {
    Ok(())
}

#[cfg(unix)]
fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

#[cfg(unix)]
fn is_char_device(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_char_device())
}

#[cfg(not(unix))]
fn is_fifo(_: &Path) -> bool {
    false
}

#[cfg(not(unix))]
fn is_char_device(_: &Path) -> bool {
    false
}

/// Makes a node of the device `/dev/full` is (1, 7: every write fails
/// with ENOSPC) at `node`.
#[cfg(target_os = "linux")]
fn make_full_device(node: &Path) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(node.as_os_str().as_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: mknod with a valid C string; the node is made in a directory of ours.
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 7)) };
    if made == 0 {
        Ok(())
    } else {
        Err(format!(
            "mknod {}: {}",
            node.display(),
            std::io::Error::last_os_error()
        ))
    }
}

#[cfg(not(target_os = "linux"))]
fn make_full_device(_: &Path) -> Result<(), String> {
    Err("a full device is Linux's".into())
}

/// Whether this process may make device nodes (root, and a file system that
/// allows them): tried once in a directory of its own.
fn full_device_nodes() -> bool {
    static ALLOWED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ALLOWED.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("acp-bridge-mknod-{}", std::process::id()));
        let made =
            std::fs::create_dir_all(&dir).is_ok() && make_full_device(&dir.join("full")).is_ok();
        let _ = std::fs::remove_dir_all(&dir);
        made
    })
}

/// Makes `fifo` and holds it open for reading before the bridge starts;
/// the thread returns what came through once the trailer did, or once the
/// bridge is gone and no writer holds the FIFO (or a minute passed).
#[cfg(unix)]
fn fifo_reader(fifo: &Path) -> Result<(JoinHandle<String>, Arc<AtomicBool>), String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let status = std::process::Command::new("mkfifo")
        .arg(fifo)
        .status()
        .map_err(|e| format!("mkfifo: {e}"))?;
    if !status.success() {
        return Err(format!("mkfifo {} failed", fifo.display()));
    }
    // opened here, before the bridge looks at it: a FIFO nobody reads is
    // left untapped by design
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(fifo)
        .map_err(|e| e.to_string())?;
    let bridge_gone = Arc::new(AtomicBool::new(false));
    let gone = bridge_gone.clone();
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let mut buf = [0u8; 64 << 10];
        while std::time::Instant::now() < deadline
            && !String::from_utf8_lossy(&bytes).contains("\"type\":\"trailer\"")
        {
            match file.read(&mut buf) {
                Ok(n) if n > 0 => bytes.extend_from_slice(&buf[..n]),
                // no writer: not opened yet, or closed for good
                Ok(_) if gone.load(Ordering::Acquire) => break,
                Ok(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                Err(_) => break,
            }
        }
        String::from_utf8_lossy(&bytes).into_owned()
    });
    Ok((reader, bridge_gone))
}

#[cfg(not(unix))]
fn fifo_reader(_: &Path) -> Result<(JoinHandle<String>, Arc<AtomicBool>), String> {
    Err("FIFOs are a unix case".into())
}
