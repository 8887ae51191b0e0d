//! scripted-acp-peer: a TEST DOUBLE of an ACP agent, for the end-to-end tests
//! of `acp-bridge`. It speaks JSON-RPC lines on stdin/stdout and follows a
//! script file step by step; any deviation from the script is reported on
//! stderr and ends it with exit code 3, so a test sees it.
//!
//! usage: scripted-acp-peer <script.json> [--pid-file <path>]
//!        scripted-acp-peer --linger <seconds>   (the helper: sleeps, then exits)
//!
//! Script: `{"steps":[...], "after":"exit_on_eof"|"ignore_eof",
//! "ignore_sigterm":bool, "spawn_helper":bool}`. Steps:
//! - `{"expect":"<method>", "reply":{...}}` or `"error":{...}`: read the next
//!   message, which must have that method; answer it now, or (with neither)
//!   remember its id for a later `reply_to`. With `"expect_params"` its
//!   params must contain those fields.
//! - `{"reply_to":"<method>", "result":{...}}`: answer the remembered request.
//! - `{"send":{...}}`: write a frame. A request (has `id` and `method`) waits
//!   for its response, which must come next and, with `"expect_result"`,
//!   contain those fields (notifications named in `"notifications_first"`
//!   may come before it). With `"fill":{"pointer":"/a/b","len":N}`, N base64
//!   characters are put at that JSON pointer first (big images, small script).
//! - `{"send_raw":"text"}`: write that text as one line, byte for byte
//!   (escapes a serialiser would not choose, such as `\u00fc` or `\/`).
//! - `{"stderr":"text", "times":n}` (times defaults to 1), `{"sleep_ms":n}`,
//!   `{"exit":code}`.
//!
//! After the steps: `exit_on_eof` (default) reads until stdin closes and
//! exits 0; `ignore_eof` keeps running after stdin closes (for at most a
//! minute, so a broken test cannot leave it behind). `ignore_sigterm` makes it
//! survive SIGTERM (Windows: CTRL_BREAK and CTRL_C); `spawn_helper` starts a
//! copy of itself that only lingers, in its process group (its pid goes to the
//! pid file's second line) to check the whole tree ends.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "termination.rs"]
mod termination;
use termination::ignore_termination;

const SAFETY_CAP: Duration = Duration::from_secs(60);

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("scripted-acp-peer: {e}");
            ExitCode::from(3)
        }
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--linger") {
        let secs = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(60);
        std::thread::sleep(Duration::from_secs(secs));
        return Ok(());
    }
    let script_path = args
        .first()
        .ok_or("usage: scripted-acp-peer <script.json> [--pid-file <path>]")?;
    let pid_file = args
        .iter()
        .position(|a| a == "--pid-file")
        .and_then(|i| args.get(i + 1));
    let text = std::fs::read_to_string(script_path)
        .map_err(|e| format!("cannot read {script_path}: {e}"))?;
    let script: Value = serde_json::from_str(&text).map_err(|e| format!("{script_path}: {e}"))?;

    if script["ignore_sigterm"].as_bool() == Some(true) {
        ignore_termination();
    }
    let mut pids = vec![std::process::id().to_string()];
    if script["spawn_helper"].as_bool() == Some(true) {
        let me = std::env::current_exe().map_err(|e| format!("cannot find myself: {e}"))?;
        let helper = std::process::Command::new(me)
            .args(["--linger", "60"])
            .spawn()
            .map_err(|e| format!("cannot start the helper: {e}"))?;
        pids.push(helper.id().to_string());
    }
    if let Some(path) = pid_file {
        std::fs::write(path, pids.join("\n") + "\n")
            .map_err(|e| format!("cannot write {path}: {e}"))?;
    }

    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut peer = Peer {
        pending: HashMap::new(),
    };
    let steps = script["steps"].as_array().cloned().unwrap_or_default();
    for (n, step) in steps.iter().enumerate() {
        peer.step(step, &mut input)
            .map_err(|e| format!("step {}: {e}", n + 1))?;
    }

    match script["after"].as_str().unwrap_or("exit_on_eof") {
        "ignore_eof" => {
            while let Some(line) = read_line(&mut input)? {
                eprintln!("scripted-acp-peer: after the script, got {line}");
            }
            eprintln!("scripted-acp-peer: stdin closed; ignoring it");
            let start = Instant::now();
            while start.elapsed() < SAFETY_CAP {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err("still running after the safety cap; nobody ended me".into())
        }
        _ => {
            while let Some(line) = read_line(&mut input)? {
                eprintln!("scripted-acp-peer: after the script, got {line}");
            }
            Ok(())
        }
    }
}

struct Peer {
    /// Ids of requests kept for a later `reply_to`, by method.
    pending: HashMap<String, Value>,
}

impl Peer {
    fn step(&mut self, step: &Value, input: &mut impl BufRead) -> Result<(), String> {
        if let Some(method) = step["expect"].as_str() {
            let msg = read_message(input)?
                .ok_or_else(|| format!("stdin closed while expecting {method}"))?;
            let got = msg["method"].as_str().unwrap_or("<no method>");
            if got != method {
                return Err(format!("expected {method}, got {msg}"));
            }
            eprintln!("scripted-acp-peer: got {method}");
            if let Some(want) = step.get("expect_params")
                && !contains(&msg["params"], want)
            {
                return Err(format!("{method} params should contain {want}, got {msg}"));
            }
            let id = msg.get("id").cloned();
            if let Some(result) = step.get("reply") {
                let id = id.ok_or_else(|| format!("{method} is a notification; cannot reply"))?;
                write(&json!({"jsonrpc":"2.0","id":id,"result":result}));
            } else if let Some(error) = step.get("error") {
                let id = id.ok_or_else(|| format!("{method} is a notification; cannot reply"))?;
                write(&json!({"jsonrpc":"2.0","id":id,"error":error}));
            } else if let Some(id) = id {
                self.pending.insert(method.to_string(), id);
            }
        } else if let Some(method) = step["reply_to"].as_str() {
            let id = self
                .pending
                .remove(method)
                .ok_or_else(|| format!("no pending {method} to reply to"))?;
            write(&json!({"jsonrpc":"2.0","id":id,"result":step["result"]}));
        } else if let Some(frame) = step.get("send") {
            let mut frame = frame.clone();
            if let Some(fill) = step.get("fill") {
                fill_base64(&mut frame, fill)?;
            }
            let frame = &frame;
            write(frame);
            if let (Some(id), Some(method)) = (frame.get("id"), frame["method"].as_str()) {
                let tolerated = step["notifications_first"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let msg = loop {
                    let msg = read_message(input)?.ok_or_else(|| {
                        format!("stdin closed while awaiting the {method} response")
                    })?;
                    match msg["method"].as_str() {
                        Some(n) if msg.get("id").is_none() && tolerated.iter().any(|t| t == n) => {
                            eprintln!("scripted-acp-peer: got {n}");
                        }
                        _ => break msg,
                    }
                };
                if msg.get("id") != Some(id) || msg.get("method").is_some() {
                    return Err(format!(
                        "expected the response to {method} (id {id}), got {msg}"
                    ));
                }
                eprintln!(
                    "scripted-acp-peer: {method} answered {}",
                    msg.get("result").unwrap_or(&msg["error"])
                );
                if let Some(want) = step.get("expect_result")
                    && !contains(&msg["result"], want)
                {
                    return Err(format!(
                        "the response to {method} should contain {want}, got {msg}"
                    ));
                }
            }
        } else if let Some(text) = step["send_raw"].as_str() {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{text}");
            let _ = out.flush();
        } else if let Some(text) = step["stderr"].as_str() {
            for _ in 0..step["times"].as_u64().unwrap_or(1) {
                eprintln!("{text}");
            }
        } else if let Some(ms) = step["sleep_ms"].as_u64() {
            std::thread::sleep(Duration::from_millis(ms));
        } else if let Some(code) = step["exit"].as_i64() {
            std::process::exit(code as i32);
        } else {
            return Err(format!("unknown step {step}"));
        }
        Ok(())
    }
}

/// `{"pointer":"/json/pointer","len":N}`: puts N base64 characters at that
/// place of the frame, so a script can send an 8 MiB image without holding it.
fn fill_base64(frame: &mut Value, fill: &Value) -> Result<(), String> {
    let pointer = fill["pointer"].as_str().ok_or("fill needs a \"pointer\"")?;
    let len = fill["len"].as_u64().ok_or("fill needs a \"len\"")? as usize;
    let slot = frame
        .pointer_mut(pointer)
        .ok_or_else(|| format!("fill: no {pointer} in the frame"))?;
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let data: String = (0..len).map(|i| alphabet[i % 64] as char).collect();
    *slot = Value::String(data);
    Ok(())
}

/// True when every field of `want` is in `got` with the same value (recursively for objects).
fn contains(got: &Value, want: &Value) -> bool {
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => w
            .iter()
            .all(|(k, wv)| g.get(k).is_some_and(|gv| contains(gv, wv))),
        _ => got == want,
    }
}

fn read_line(input: &mut impl BufRead) -> Result<Option<String>, String> {
    let mut line = String::new();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) => return Ok(None),
            Ok(_) if line.trim().is_empty() => continue,
            Ok(_) => return Ok(Some(line.trim_end().to_string())),
            Err(e) => return Err(format!("reading stdin: {e}")),
        }
    }
}

fn read_message(input: &mut impl BufRead) -> Result<Option<Value>, String> {
    match read_line(input)? {
        None => Ok(None),
        Some(line) => serde_json::from_str(&line)
            .map(Some)
            .map_err(|e| format!("not JSON ({e}): {line}")),
    }
}

fn write(frame: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{frame}");
    let _ = out.flush();
}
