//! The fault campaign: the real `acp-bridge` binary against mutated agents
//! derived from the committed recordings, and against malformed and hostile
//! panel input. Deterministic (a fixed seed picks recordings, mutations and
//! fault points; `FAULT_CAMPAIGN_SEED` explores others), bounded in count
//! (`FAULT_CAMPAIGN_PER_KIND`, default 6 cases per kind; `FAULT_CAMPAIGN_KINDS`
//! names the kinds to run, comma-separated) and in time (every wait has a deadline; new cases stop after
//! [`WALL_LIMIT`], which is reported).
//!
//! Every case asserts: no panic, every stdout line is JSON, exactly one
//! `result` per prompt sent, exactly one `tool_result` per `tool_use`, one
//! `control_response` (with the `request_id` as sent) per `control_request`,
//! broken agent input ends the turn `is_error` with readable text, the bridge
//! exits within a bound after the panel's stdin closes, and no agent process
//! is left. Liveness: a turn whose agent closed its stdout ends without the
//! panel closing anything; an interrupted turn whose agent never answers
//! ends within the cancel grace; a prompt sent after the agent exited gets
//! its (error) result. Floods (see [`floods`]): an endless line, and 64 KiB
//! chunks to a panel that stops reading or reads slowly, keep the bridge's
//! peak memory bounded and the agent held at its pipe, and the bridge answers
//! after them. Taps (see [`taps`]): each of the tap's trust-boundary
//! findings as a case with a hostile or broken `--tap`.
//!
//! One trial, `fault_campaign::campaign`, runs the whole campaign.
//!
//! The mutated agent is this test binary itself (`--fault-agent <plan>`): it
//! plays one recorded agent process like the replayer's fake agent (each
//! client frame releases the agent frames recorded after the matching client
//! frame, response ids remapped) and applies its plan's fault.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{self, bridge};

mod floods;
mod taps;

const SEED: u64 = 0x005e_ed13;
const PER_KIND_DEFAULT: usize = 6;
/// No new case starts after this; the cases not run are reported.
const WALL_LIMIT: Duration = Duration::from_secs(90);
const WORKERS: usize = 3;
/// Bridge timings for the campaign (short, so hangs cost little).
const CANCEL_GRACE_MS: u64 = 300;
const AGENT_GRACE_MS: u64 = 200;
const EOF_DRAIN_MS: u64 = 1500;
/// Panel: with no output for this long while a turn runs, it interrupts.
const PANEL_PATIENCE: Duration = Duration::from_millis(700);
/// Longest a turn may take once interrupted (cancel grace plus slack for a
/// loaded machine).
const AFTER_INTERRUPT: Duration = Duration::from_secs(6);
/// Longest wait for the handshake and for a result without an interrupt.
const TURN_LIMIT: Duration = Duration::from_secs(20);
/// Longest the bridge may take to exit after the panel's stdin closed.
const EXIT_LIMIT: Duration = Duration::from_secs(8);
/// How many times longer the panel's patience and every bound above are
/// (`FAULT_CAMPAIGN_TIME_SCALE`, default 1): under wine every pipe write goes
/// through the wineserver, so a handshake can outlast the patience, and the
/// bounds are about hanging, not speed.
fn scaled(bound: Duration) -> Duration {
    static SCALE: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    let scale = *SCALE.get_or_init(|| {
        std::env::var("FAULT_CAMPAIGN_TIME_SCALE")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|n| *n >= 1)
            .unwrap_or(1)
    });
    bound * scale
}

/// Scenarios whose panel side is a plain sequence of prompts.
const SCENARIOS: &[&str] = &[
    "text-only",
    "unity-call-allowed",
    "unity-call-direct",
    "permission-denied",
    "tool-failure",
    "thinking-text",
    "mcp-rpc-error",
    "model-error",
];

/// The exit code of this binary started as a mutated agent
/// (`--fault-agent <plan>`), `None` when it is started as the tests.
pub(crate) fn as_fault_agent() -> Option<i32> {
    let args: Vec<String> = std::env::args().collect();
    let i = args.iter().position(|a| a == "--fault-agent")?;
    let plan = args.get(i + 1).expect("--fault-agent <plan>");
    Some(fault_agent(Path::new(plan)))
}

/// The campaign as one trial.
pub(crate) fn trial() -> libtest_mimic::Trial {
    libtest_mimic::Trial::test("fault_campaign::campaign", || match run_campaign() {
        0 => Ok(()),
        failures => Err(format!("fault campaign: {failures} case(s) failed").into()),
    })
}

// ------------------------------------------------------------ randomness

/// splitmix64: a fixed seed gives the same campaign everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

// ------------------------------------------------------------ the agent plan

/// What a recorded client frame was: the agent released `frames` after it.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Batch {
    /// `request:<method>`, `notification:<method>` or `response`.
    trigger: String,
    /// The recorded id of a client request (for remapping the answer).
    recorded_id: Option<Value>,
    frames: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum AgentFault {
    None,
    /// Exit with code 3 at the fault point.
    Exit,
    /// Stop writing at the fault point; exit when stdin closes.
    Hang,
    /// Stop writing and survive stdin closing and SIGTERM (SIGKILL ends it).
    HangStubborn,
    /// Close stdout at the fault point and keep running until stdin closes.
    CloseStdout,
    /// Exit 0 once the first turn's frames are out (the agent dies idle).
    ExitIdle,
    /// Write 20 000 text chunks at the fault point.
    Flood,
    /// Write one line of [`floods::ENDLESS_BYTES`] (far over the case's
    /// line cap) at the fault point, then go on.
    EndlessLine,
    /// Write [`floods::FLOOD_CHUNKS`] 64 KiB text chunks at the fault point.
    BigFlood,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Plan {
    batches: Vec<Batch>,
    fault: AgentFault,
    /// Index of the batch (and frame within it) where the fault happens.
    fault_batch: usize,
    fault_frame: usize,
    pid_file: PathBuf,
}

fn trigger_of(v: &Value) -> String {
    match (
        v["method"].as_str(),
        v.get("id").is_some_and(|i| !i.is_null()),
    ) {
        (Some(m), true) => format!("request:{m}"),
        (Some(m), false) => format!("notification:{m}"),
        _ => "response".into(),
    }
}

/// The agent process `proc` 1 of a recording, as batches, and the ACP
/// revision its header says was negotiated (1 when it does not say).
fn batches_of(recording: &Path) -> Option<(Vec<Batch>, u64)> {
    let text = std::fs::read_to_string(recording).ok()?;
    let mut batches: Vec<Batch> = vec![Batch {
        trigger: "start".into(),
        recorded_id: None,
        frames: vec![],
    }];
    let mut lines = text.lines();
    let header: Value = serde_json::from_str(lines.next()?).ok()?;
    if header["protocol"] == "stream-json" || header["synthetic"] == true {
        return None;
    }
    let negotiated = header["protocol_version"].as_u64().unwrap_or(1);
    for line in lines {
        let e: Value = serde_json::from_str(line).ok()?;
        if e["type"] != "event" || e["leg"] != "acp" || e["proc"] != 1 {
            continue;
        }
        let raw = support::recorded::raw(&e, recording)?;
        if e["dir"] == "to_agent" {
            let v: Value = serde_json::from_str(&raw).unwrap_or(Value::Null);
            let trigger = trigger_of(&v);
            let recorded_id = trigger.starts_with("request:").then(|| v["id"].clone());
            batches.push(Batch {
                trigger,
                recorded_id,
                frames: vec![],
            });
        } else if let Some(b) = batches.last_mut() {
            b.frames.push(raw);
        }
    }
    Some((batches, negotiated))
}

/// Index of the batch the first `session/prompt` releases.
fn first_prompt_batch(batches: &[Batch]) -> Option<usize> {
    batches
        .iter()
        .position(|b| b.trigger == "request:session/prompt")
}

// ------------------------------------------------------------ the agent

fn fault_agent(plan_path: &Path) -> i32 {
    let plan: Plan = match std::fs::read_to_string(plan_path)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!("fault-agent: bad plan {}: {e}", plan_path.display());
            return 2;
        }
    };
    let _ = std::fs::write(&plan.pid_file, format!("{}\n", std::process::id()));
    if plan.fault == AgentFault::HangStubborn {
        support::termination::ignore_termination();
    }
    // Whatever happens, this process ends within a minute.
    std::thread::spawn(|| {
        std::thread::sleep(Duration::from_secs(60));
        std::process::exit(9);
    });
    let mut out = floods::counted_stdout();
    let mut stopped = false;
    let mut next = 1usize;
    let mut ids: HashMap<String, Value> = HashMap::new();
    let stdin = std::io::stdin();
    let write_batch = |index: usize,
                       out: &mut dyn Write,
                       ids: &HashMap<String, Value>,
                       stopped: &mut bool|
     -> Option<i32> {
        let batch = &plan.batches[index];
        for (i, frame) in batch.frames.iter().enumerate() {
            if index == plan.fault_batch && i == plan.fault_frame {
                match plan.fault {
                    AgentFault::Exit => {
                        let _ = out.flush();
                        return Some(3);
                    }
                    AgentFault::Hang | AgentFault::HangStubborn => {
                        *stopped = true;
                        let _ = out.flush();
                        return None;
                    }
                    AgentFault::CloseStdout => {
                        *stopped = true;
                        let _ = out.flush();
                        close_stdout();
                        return None;
                    }
                    AgentFault::Flood => {
                        for n in 0..20_000 {
                            let _ = writeln!(
                                out,
                                r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"x","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"flood {n} "}}}}}}}}"#
                            );
                        }
                    }
                    AgentFault::EndlessLine => floods::write_endless_line(out),
                    AgentFault::BigFlood => floods::write_big_flood(out),
                    AgentFault::None | AgentFault::ExitIdle => {}
                }
            }
            let _ = writeln!(out, "{}", remap_response(frame, ids));
        }
        let _ = out.flush();
        if plan.fault == AgentFault::ExitIdle && index == plan.fault_batch {
            std::thread::sleep(Duration::from_millis(50));
            return Some(0);
        }
        None
    };
    if let Some(code) = write_batch(0, &mut out, &ids, &mut stopped) {
        return code;
    }
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if stopped || line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        let trigger = trigger_of(&v);
        let Some(found) = (next..plan.batches.len()).find(|&i| plan.batches[i].trigger == trigger)
        else {
            continue;
        };
        if let Some(recorded) = &plan.batches[found].recorded_id {
            ids.insert(recorded.to_string(), v["id"].clone());
        }
        next = found + 1;
        if let Some(code) = write_batch(found, &mut out, &ids, &mut stopped) {
            return code;
        }
    }
    if plan.fault == AgentFault::HangStubborn {
        std::thread::sleep(Duration::from_secs(60));
    }
    0
}

/// A recorded answer to a client request gets the live request's id.
fn remap_response(frame: &str, ids: &HashMap<String, Value>) -> String {
    let Ok(mut v) = serde_json::from_str::<Value>(frame) else {
        return frame.to_string();
    };
    if v.get("method").is_some() {
        return frame.to_string();
    }
    match v.get("id").and_then(|id| ids.get(&id.to_string())) {
        Some(live) if *live != v["id"] => {
            v["id"] = live.clone();
            v.to_string()
        }
        _ => frame.to_string(),
    }
}

// ------------------------------------------------------------ mutations

/// Every kind of case the campaign runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Clean,
    DropFrame,
    DuplicateFrame,
    ReorderFrames,
    TruncateFrame,
    InvalidJson,
    OversizeLine,
    DeepNesting,
    WrongFieldType,
    UnknownResponseId,
    UnknownToolCallId,
    PermissionForUnknownCall,
    ExitMidTurn,
    HangMidTurn,
    HangIgnoringEofAndSigterm,
    CloseStdoutMidTurn,
    ExitIdleThenPrompt,
    Flood,
    PanelMalformed,
    PanelHostileControl,
    PanelWrongTypes,
    EndlessLine,
    FloodUnreadPanel,
    FloodSlowPanel,
    TapUnderAFile,
    TapOntoFifo,
    TapThroughSymlink,
    TapOntoFullDevice,
    TapChunkedSecret,
    TapPanelGoneMidTurn,
}

const KINDS: &[Kind] = &[
    Kind::Clean,
    Kind::DropFrame,
    Kind::DuplicateFrame,
    Kind::ReorderFrames,
    Kind::TruncateFrame,
    Kind::InvalidJson,
    Kind::OversizeLine,
    Kind::DeepNesting,
    Kind::WrongFieldType,
    Kind::UnknownResponseId,
    Kind::UnknownToolCallId,
    Kind::PermissionForUnknownCall,
    Kind::ExitMidTurn,
    Kind::HangMidTurn,
    Kind::HangIgnoringEofAndSigterm,
    Kind::CloseStdoutMidTurn,
    Kind::ExitIdleThenPrompt,
    Kind::Flood,
    Kind::PanelMalformed,
    Kind::PanelHostileControl,
    Kind::PanelWrongTypes,
    Kind::EndlessLine,
    Kind::FloodUnreadPanel,
    Kind::FloodSlowPanel,
    Kind::TapUnderAFile,
    Kind::TapOntoFifo,
    Kind::TapThroughSymlink,
    Kind::TapOntoFullDevice,
    Kind::TapChunkedSecret,
    Kind::TapPanelGoneMidTurn,
];

impl Kind {
    /// The agent's input is broken inside the first turn: that turn must
    /// end `is_error` with readable text.
    fn breaks_first_turn(self) -> bool {
        matches!(
            self,
            Kind::TruncateFrame
                | Kind::InvalidJson
                | Kind::DeepNesting
                | Kind::ExitMidTurn
                | Kind::HangMidTurn
                | Kind::HangIgnoringEofAndSigterm
                | Kind::CloseStdoutMidTurn
                | Kind::EndlessLine
        )
    }

    /// The heavy kinds run fewer cases.
    fn cases(self, per_kind: usize) -> usize {
        match self {
            Kind::EndlessLine | Kind::FloodUnreadPanel | Kind::FloodSlowPanel => per_kind.min(2),
            _ if !taps::runs_here(self) => 0,
            Kind::TapUnderAFile
            | Kind::TapOntoFifo
            | Kind::TapThroughSymlink
            | Kind::TapOntoFullDevice
            | Kind::TapChunkedSecret
            | Kind::TapPanelGoneMidTurn => per_kind.min(2),
            _ => per_kind,
        }
    }
}

/// One case: the agent plan and what the panel does.
struct Case {
    kind: Kind,
    recording: String,
    /// The ACP revision the recording negotiated: the bridge offers it, as a
    /// client that spoke to that agent did.
    acp_protocol: u64,
    plan: Plan,
    /// One `user` line per turn.
    prompts: Vec<Vec<u8>>,
    /// Extra panel lines (bytes: some are not UTF-8) sent after `initialize`.
    panel_extra: Vec<Vec<u8>>,
}

fn swap_value_type(v: &mut Value, rng: &mut Rng) {
    // walk to a random leaf or object member and give it another type
    let replacements = [
        json!(null),
        json!(42),
        json!("text"),
        json!([1, 2]),
        json!({"x": 1}),
        json!(true),
    ];
    let mut cur = v;
    for _ in 0..6 {
        let keys: Vec<String> = match cur.as_object() {
            Some(o) if !o.is_empty() => o.keys().cloned().collect(),
            _ => break,
        };
        let k = keys[rng.below(keys.len())].clone();
        if rng.below(3) == 0 || !cur[&k].is_object() {
            cur[&k] = replacements[rng.below(replacements.len())].clone();
            return;
        }
        cur = &mut cur[&k];
    }
    *cur = replacements[rng.below(replacements.len())].clone();
}

/// Index of the agent's answer to the recorded `session/prompt` in its
/// batch (the last frame when none is found).
fn prompt_answer_index(batch: &Batch) -> usize {
    batch
        .frames
        .iter()
        .position(|f| {
            serde_json::from_str::<Value>(f).is_ok_and(|v| {
                v.get("method").is_none() && Some(&v["id"]) == batch.recorded_id.as_ref()
            })
        })
        .unwrap_or(batch.frames.len().saturating_sub(1))
}

/// Frames of the turn batches (from the first prompt's on): where mutations go.
fn turn_frames(batches: &[Batch]) -> Vec<(usize, usize)> {
    let start = first_prompt_batch(batches).unwrap_or(batches.len());
    (start..batches.len())
        .flat_map(|b| (0..batches[b].frames.len()).map(move |f| (b, f)))
        .collect()
}

fn mutate(kind: Kind, batches: &mut [Batch], rng: &mut Rng) -> (AgentFault, usize, usize) {
    let prompt = first_prompt_batch(batches).unwrap_or(0);
    if kind == Kind::TapChunkedSecret {
        taps::insert_chunked_secret(batches, prompt);
    }
    // the first turn's own frames: up to and including the prompt's answer
    // (frames after it in the same batch arrive outside any turn)
    let answer = prompt_answer_index(&batches[prompt]);
    let first_turn_frame = rng.below(answer + 1);
    let spot = if kind.breaks_first_turn() {
        (prompt, first_turn_frame)
    } else {
        let spots = turn_frames(batches);
        if spots.is_empty() {
            (prompt, 0)
        } else {
            spots[rng.below(spots.len())]
        }
    };
    let (b, f) = spot;
    let has = f < batches[b].frames.len();
    let mut fault = AgentFault::None;
    let (mut fb, mut ff) = (usize::MAX, usize::MAX);
    let frames = &mut batches[b].frames;
    match kind {
        Kind::Clean
        | Kind::PanelMalformed
        | Kind::PanelHostileControl
        | Kind::PanelWrongTypes
        | Kind::TapUnderAFile
        | Kind::TapOntoFifo
        | Kind::TapThroughSymlink
        | Kind::TapOntoFullDevice
        | Kind::TapChunkedSecret => {}
        Kind::TapPanelGoneMidTurn => {
            (fault, fb, ff) = (AgentFault::HangStubborn, prompt, first_turn_frame)
        }
        Kind::DropFrame if has => {
            frames.remove(f);
        }
        Kind::DuplicateFrame if has => {
            let copy = frames[f].clone();
            frames.insert(f, copy);
        }
        Kind::ReorderFrames if f + 1 < frames.len() => frames.swap(f, f + 1),
        Kind::TruncateFrame if has => {
            let s = &frames[f];
            let mut cut = 1 + rng.below(s.len().saturating_sub(1).max(1));
            while cut > 0 && !s.is_char_boundary(cut) {
                cut -= 1;
            }
            frames[f] = s[..cut.max(1).min(s.len())].to_string();
        }
        Kind::InvalidJson => {
            let at = f.min(frames.len());
            frames.insert(at, "{\"jsonrpc\":\"2.0\",\"method\": nope".into());
        }
        Kind::OversizeLine => {
            let big = "y".repeat(4 << 20);
            let at = f.min(frames.len());
            frames.insert(
                at,
                format!(
                    r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"x","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{big}"}}}}}}}}"#
                ),
            );
        }
        Kind::DeepNesting => {
            let at = f.min(frames.len());
            frames.insert(at, "[".repeat(100_000) + &"]".repeat(100_000));
        }
        Kind::WrongFieldType if has => {
            if let Ok(mut v) = serde_json::from_str::<Value>(&frames[f]) {
                swap_value_type(&mut v, rng);
                frames[f] = v.to_string();
            }
        }
        Kind::UnknownResponseId => {
            let at = f.min(frames.len());
            frames.insert(
                at,
                r#"{"jsonrpc":"2.0","id":987654,"result":{"stopReason":"end_turn"}}"#.into(),
            );
            frames.insert(
                at,
                r#"{"jsonrpc":"2.0","id":"nope","error":{"code":-1,"message":"x"}}"#.into(),
            );
        }
        Kind::UnknownToolCallId => {
            let at = f.min(frames.len());
            frames.insert(
                at,
                r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"x","update":{"sessionUpdate":"tool_call_update","toolCallId":"never-announced","status":"completed","content":[{"type":"content","content":{"type":"text","text":"ghost"}}]}}}"#.into(),
            );
        }
        Kind::PermissionForUnknownCall => {
            let at = f.min(frames.len());
            frames.insert(
                at,
                r#"{"jsonrpc":"2.0","id":"perm-ghost","method":"session/request_permission","params":{"sessionId":"x","toolCall":{"toolCallId":"ghost-call"},"options":[{"optionId":"ok","kind":"allow_once","name":"Allow"},{"optionId":"no","kind":"reject_once","name":"Deny"}]}}"#.into(),
            );
        }
        Kind::ExitMidTurn => (fault, fb, ff) = (AgentFault::Exit, prompt, first_turn_frame),
        Kind::HangMidTurn => (fault, fb, ff) = (AgentFault::Hang, prompt, first_turn_frame),
        Kind::HangIgnoringEofAndSigterm => {
            (fault, fb, ff) = (AgentFault::HangStubborn, prompt, first_turn_frame)
        }
        Kind::CloseStdoutMidTurn => {
            (fault, fb, ff) = (AgentFault::CloseStdout, prompt, first_turn_frame)
        }
        Kind::ExitIdleThenPrompt => (fault, fb, ff) = (AgentFault::ExitIdle, prompt, usize::MAX),
        Kind::Flood => (fault, fb, ff) = (AgentFault::Flood, prompt, first_turn_frame),
        Kind::EndlessLine => (fault, fb, ff) = (AgentFault::EndlessLine, prompt, first_turn_frame),
        Kind::FloodUnreadPanel | Kind::FloodSlowPanel => {
            (fault, fb, ff) = (AgentFault::BigFlood, prompt, first_turn_frame)
        }
        // a mutation that found no frame to work on leaves the agent clean
        _ => {}
    }
    (fault, fb, ff)
}

/// Sent after the agent exited (with the next prompt).
const AFTER_EXIT_CONTROL: &str = r#"{"type":"control_request","request_id":"after-exit","request":{"subtype":"set_permission_mode","mode":"default"}}"#;

/// `user` lines of the wrong shape: each is still a prompt (a turn).
const WRONG_TYPED_PROMPTS: &[&str] = &[
    r#"{"type":"user","message":{"role":"user","content":12}}"#,
    r#"{"type":"user","message":"hello"}"#,
    r#"{"type":"user","message":{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":7,"data":{"x":1}}}]}}"#,
    r#"{"type":"user","message":{"role":"user","content":[null,1,"x",{"type":"text","text":5}]}}"#,
    r#"{"type":"user","uuid":7,"session_id":[],"message":{"role":9,"content":"typed oddly"}}"#,
];

/// Hostile panel lines for the panel kinds (sent after `initialize`).
fn panel_lines(kind: Kind, rng: &mut Rng) -> Vec<Vec<u8>> {
    let pick = |rng: &mut Rng, all: Vec<Vec<u8>>, n: usize| -> Vec<Vec<u8>> {
        (0..n).map(|_| all[rng.below(all.len())].clone()).collect()
    };
    match kind {
        Kind::PanelMalformed => pick(
            rng,
            vec![
                b"{not json".to_vec(),
                b"[1,2,3]".to_vec(),
                b"\"just a string\"".to_vec(),
                b"{\"type\":\"user\",\"message\":\xff\xfe}".to_vec(),
                format!("{}{}", "[".repeat(50_000), "]".repeat(50_000)).into_bytes(),
                format!(r#"{{"type":"keep_alive","pad":"{}"}}"#, "z".repeat(3 << 20)).into_bytes(),
                b"{\"type\":\"mystery\"}".to_vec(),
                b"".to_vec(),
            ],
            3,
        ),
        Kind::PanelHostileControl => pick(
            rng,
            vec![
                br#"{"type":"control_request","request_id":7,"request":{"subtype":"interrupt"}}"#.to_vec(),
                br#"{"type":"control_request","request_id":8,"request":{"subtype":"set_model","model":{"id":"m"}}}"#.to_vec(),
                br#"{"type":"control_request","request_id":"n1","request":{"subtype":"set_model","model":null}}"#.to_vec(),
                br#"{"type":"control_request","request_id":9.5,"request":{"subtype":"set_permission_mode","mode":3}}"#.to_vec(),
                br#"{"type":"control_request","request":{"subtype":"interrupt"}}"#.to_vec(),
                br#"{"type":"control_request","request_id":{"a":1},"request":{"subtype":"initialize"}}"#.to_vec(),
                br#"{"type":"control_request","request_id":"u1","request":{"subtype":"teleport"}}"#.to_vec(),
                br#"{"type":"control_request","request_id":"u2","request":{"subtype":["x"]}}"#.to_vec(),
                br#"{"type":"control_request","request_id":"u3","request":"nope"}"#.to_vec(),
                br#"{"type":"control_request","request_id":10,"request":{"subtype":"initialize"}}"#.to_vec(),
                br#"{"type":"control_response","response":{"subtype":"success","request_id":"acp-perm-999","response":{"behavior":"allow"}}}"#.to_vec(),
                br#"{"type":"control_response","response":{"request_id":5}}"#.to_vec(),
            ],
            4,
        ),
        Kind::PanelWrongTypes => pick(
            rng,
            vec![
                br#"{"type":7}"#.to_vec(),
                br#"{"type":null,"message":{}}"#.to_vec(),
                br#"{"type":"control_request","request_id":"w2","request":{"subtype":"set_permission_mode","mode":["default"]}}"#.to_vec(),
                br#"{"type":"control_request","request_id":"w1","request":{"subtype":"initialize","systemPrompt":{"a":1},"appendSystemPrompt":[1,null]}}"#.to_vec(),
            ],
            2,
        ),
        _ => vec![],
    }
}

// ------------------------------------------------------------ the panel

struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    seen: Vec<String>,
    /// How the panel reads its stdout (see [`floods::Pace`]).
    pace: floods::Pace,
}

impl Session {
    fn send(&mut self, bytes: &[u8]) -> bool {
        let Some(stdin) = self.stdin.as_mut() else {
            return false;
        };
        stdin
            .write_all(bytes)
            .and_then(|_| stdin.write_all(b"\n"))
            .and_then(|_| stdin.flush())
            .is_ok()
    }

    fn next_line(&mut self, within: Duration) -> Result<Option<Value>, String> {
        match self.lines.recv_timeout(within) {
            Ok(line) => {
                let v: Value = serde_json::from_str(&line)
                    .map_err(|e| format!("stdout line is not JSON ({e}): {}", shorten(&line)))?;
                self.seen.push(line);
                Ok(Some(v))
            }
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err("stdout closed".into()),
        }
    }
}

fn shorten(s: &str) -> String {
    if s.len() <= 300 {
        return s.to_string();
    }
    let mut end = 300;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &s[..end], s.len())
}

fn start_bridge(dir: &Path, plan_path: &Path, extra_args: &[String]) -> Session {
    let me = std::env::current_exe().unwrap();
    let agent = support::join_command_line(&[
        me.to_str().unwrap(),
        "--fault-agent",
        plan_path.to_str().unwrap(),
    ]);
    let mut child = Command::new(bridge())
        .args([
            "--output-format",
            "stream-json",
            "--input-format",
            "stream-json",
            "--verbose",
            "--agent-cmd",
            &agent,
            "--cwd",
            dir.to_str().unwrap(),
            "--cancel-grace-ms",
            &CANCEL_GRACE_MS.to_string(),
            "--agent-grace-ms",
            &AGENT_GRACE_MS.to_string(),
            "--eof-drain-ms",
            &EOF_DRAIN_MS.to_string(),
        ])
        .args(extra_args)
        .env_remove("ACP_BRIDGE_AGENT")
        .env_remove("ACP_BRIDGE_MAX_LINE_BYTES")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start acp-bridge");
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = channel();
    let pace = floods::Pace::default();
    let reader_pace = pace.clone();
    std::thread::spawn(move || {
        // lines of any length; invalid UTF-8 is a failure the case reports
        let mut reader = BufReader::new(stdout);
        let mut buf = Vec::new();
        loop {
            reader_pace.wait();
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    reader_pace.took(n);
                    let line = String::from_utf8_lossy(&buf).trim_end().to_string();
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let stderr = Arc::new(Mutex::new(String::new()));
    let sink = stderr.clone();
    let mut err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text);
        sink.lock().unwrap().push_str(&text);
    });
    let stdin = child.stdin.take();
    Session {
        child,
        stdin,
        lines,
        stderr,
        seen: Vec::new(),
        pace,
    }
}

/// What one case saw, for the assertions.
#[derive(Default)]
struct Outcome {
    results: Vec<Value>,
    interrupted_turns: usize,
}

fn user_line(text: &str) -> Vec<u8> {
    json!({"type": "user", "session_id": "", "message": {"role": "user", "content": text},
           "parent_tool_use_id": null})
    .to_string()
    .into_bytes()
}

/// Reads until the running turn's `result`, answering permission requests
/// (allow) and interrupting once when the bridge stays silent.
fn drive_turn(s: &mut Session, out: &mut Outcome) -> Result<Value, String> {
    let started = Instant::now();
    let mut interrupted_at: Option<Instant> = None;
    loop {
        let limit = match interrupted_at {
            Some(at) => at + scaled(AFTER_INTERRUPT),
            None => started + scaled(TURN_LIMIT),
        };
        if Instant::now() > limit {
            return Err(match interrupted_at {
                Some(_) => format!(
                    "liveness: no result within {:?} of an interrupt (cancel grace {CANCEL_GRACE_MS} ms)",
                    scaled(AFTER_INTERRUPT)
                ),
                None => format!("liveness: no result within {:?}", scaled(TURN_LIMIT)),
            });
        }
        match s.next_line(scaled(PANEL_PATIENCE))? {
            Some(v) if v["type"] == "result" => return Ok(v),
            Some(v)
                if v["type"] == "control_request" && v["request"]["subtype"] == "can_use_tool" =>
            {
                let answer = json!({"type": "control_response", "response": {"subtype": "success",
                    "request_id": v["request_id"], "response": {"behavior": "allow",
                    "updatedInput": v["request"]["input"]}}});
                s.send(answer.to_string().as_bytes());
            }
            Some(_) => {}
            None if interrupted_at.is_none() => {
                interrupted_at = Some(Instant::now());
                out.interrupted_turns += 1;
                s.send(br#"{"type":"control_request","request_id":"campaign-int","request":{"subtype":"interrupt"}}"#);
            }
            None => {}
        }
    }
}

fn pid_gone(pid: i32) -> bool {
    support::process_gone(pid)
}

/// Closes our own stdout for good; nothing writes to it after this.
fn close_stdout() {
    #[cfg(unix)]
    // SAFETY: closing our own fd 1.
    unsafe {
        libc::close(1);
    }
    #[cfg(windows)]
    // SAFETY: closing our own standard output handle.
    unsafe {
        use windows::Win32::Foundation::CloseHandle;
        use windows::Win32::System::Console::{GetStdHandle, STD_OUTPUT_HANDLE};
        if let Ok(handle) = GetStdHandle(STD_OUTPUT_HANDLE) {
            let _ = CloseHandle(handle);
        }
    }
}

/// What a passing case checked, summed over the campaign.
#[derive(Clone, Copy, Default)]
struct Stats {
    turns: usize,
    error_results: usize,
    tool_uses: usize,
    control_requests: usize,
    interrupts: usize,
    stdout_lines: usize,
}

fn run_case(case: &Case, dir: &Path) -> Result<Stats, String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let plan_path = dir.join("plan.json");
    std::fs::write(&plan_path, serde_json::to_string(&case.plan).unwrap())
        .map_err(|e| e.to_string())?;
    let tap = taps::prepare(case.kind, dir)?;
    let mut args = floods::bridge_args(case.kind);
    args.extend(["--acp-protocol".to_string(), case.acp_protocol.to_string()]);
    args.extend_from_slice(tap.args());
    let mut s = start_bridge(dir, &plan_path, &args);
    let result = drive_case(case, &mut s);
    // whatever happened: the bridge is ended and nothing of the agent is left
    let agent_pid: Option<i32> = std::fs::read_to_string(&case.plan.pid_file)
        .ok()
        .and_then(|t| t.trim().parse().ok());
    let exit = wait_exit(&mut s, scaled(EXIT_LIMIT));
    let stderr = {
        // give the stderr reader a moment to take the last lines
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until && !s.stderr.lock().unwrap().ends_with('\n') {
            std::thread::sleep(Duration::from_millis(10));
        }
        s.stderr.lock().unwrap().clone()
    };
    let leftover = agent_pid.filter(|p| {
        let until = Instant::now() + Duration::from_secs(3);
        while Instant::now() < until {
            if pid_gone(*p) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        support::kill_pids(&[*p]);
        true
    });
    #[cfg(windows)]
    if let Some(pid) = agent_pid {
        let _ = std::fs::remove_file(floods::written_file(pid as u32));
    }
    let mut problems = Vec::new();
    let stats = match result {
        Ok(stats) => stats,
        Err(e) => {
            problems.push(e);
            Stats::default()
        }
    };
    match exit {
        Err(e) => problems.push(e),
        Ok(Some(101)) => problems.push("the bridge panicked (exit 101)".into()),
        Ok(_) => {}
    }
    if stderr.contains("panicked") {
        problems.push("panic on stderr".into());
    }
    if let Some(p) = leftover {
        problems.push(format!("agent process {p} was left running"));
    }
    if let Err(e) = taps::check(tap, &stderr, &s.seen) {
        problems.push(e);
    }
    if problems.is_empty() {
        return Ok(stats);
    }
    Err(format!(
        "{}\n--- stdout:\n{}\n--- stderr:\n{}",
        problems.join("\n"),
        s.seen
            .iter()
            .map(|l| shorten(l))
            .collect::<Vec<_>>()
            .join("\n"),
        shorten(&stderr)
    ))
}

fn wait_exit(s: &mut Session, limit: Duration) -> Result<Option<i32>, String> {
    s.stdin.take();
    let until = Instant::now() + limit;
    loop {
        // keep draining stdout so the bridge never blocks on a full pipe
        while let Ok(line) = s.lines.try_recv() {
            if serde_json::from_str::<Value>(&line).is_err() {
                return Err(format!("stdout line is not JSON: {}", shorten(&line)));
            }
            s.seen.push(line);
        }
        if let Some(status) = s.child.try_wait().map_err(|e| e.to_string())? {
            return Ok(status.code());
        }
        if Instant::now() > until {
            let _ = s.child.kill();
            let _ = s.child.wait();
            return Err(format!(
                "the bridge did not exit within {limit:?} of its stdin closing"
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn drive_case(case: &Case, s: &mut Session) -> Result<Stats, String> {
    let mut out = Outcome::default();
    let mut sent_controls: Vec<Value> = Vec::new();
    let init = br#"{"type":"control_request","request_id":"campaign-init","request":{"subtype":"initialize"}}"#;
    s.send(init);
    sent_controls.push(json!("campaign-init"));
    for line in &case.panel_extra {
        s.send(line);
        if let Ok(v) = serde_json::from_slice::<Value>(line)
            && v["type"] == "control_request"
        {
            sent_controls.push(v.get("request_id").cloned().unwrap_or(Value::Null));
        }
    }
    for (n, prompt) in case.prompts.iter().enumerate() {
        if case.kind == Kind::ExitIdleThenPrompt && n == 1 {
            // the agent exits right after its first turn: this control
            // request and prompt come after, and each still gets its answer
            std::thread::sleep(Duration::from_millis(100));
            s.send(AFTER_EXIT_CONTROL.as_bytes());
            sent_controls.push(json!("after-exit"));
        }
        if !s.send(prompt) {
            return Err(format!("stdin closed before prompt {n}"));
        }
        if case.kind == Kind::TapPanelGoneMidTurn {
            // a one-shot SDK query: the prompt, then stdin closed at once
            s.stdin.take();
            break;
        }
        if n == 0 {
            floods::watch(case, s)?;
        }
        let r = drive_turn(s, &mut out)?;
        out.results.push(r);
    }
    s.stdin.take();
    // everything up to the exit belongs to this session
    let until = Instant::now() + scaled(EXIT_LIMIT);
    loop {
        match s.next_line(Duration::from_millis(50)) {
            Ok(Some(v)) if v["type"] == "result" => out.results.push(v),
            Ok(_) if Instant::now() > until => {
                return Err(format!(
                    "stdout still open {:?} after stdin closed",
                    scaled(EXIT_LIMIT)
                ));
            }
            Ok(_) => {}
            Err(e) if e == "stdout closed" => break,
            Err(e) => return Err(e),
        }
    }
    check(case, s, &out, &sent_controls)
}

fn check(case: &Case, s: &Session, out: &Outcome, sent: &[Value]) -> Result<Stats, String> {
    let lines: Vec<Value> = s
        .seen
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let results = lines.iter().filter(|v| v["type"] == "result").count();
    if results != case.prompts.len() {
        return Err(format!(
            "{results} result line(s) for {} prompt(s)",
            case.prompts.len()
        ));
    }
    let mut uses: BTreeMap<String, usize> = BTreeMap::new();
    let mut results_for: BTreeMap<String, usize> = BTreeMap::new();
    for v in &lines {
        for block in v["message"]["content"].as_array().into_iter().flatten() {
            match block["type"].as_str() {
                Some("tool_use") if v["type"] == "assistant" => {
                    *uses.entry(block["id"].to_string()).or_default() += 1
                }
                Some("tool_result") if v["type"] == "user" => {
                    *results_for
                        .entry(block["tool_use_id"].to_string())
                        .or_default() += 1
                }
                _ => {}
            }
        }
    }
    for (id, n) in &uses {
        if *n != 1 || results_for.get(id) != Some(&1) {
            return Err(format!(
                "tool_use {id}: announced {n} time(s), {} tool_result(s)",
                results_for.get(id).copied().unwrap_or(0)
            ));
        }
    }
    if let Some(orphan) = results_for.keys().find(|id| !uses.contains_key(*id)) {
        return Err(format!("tool_result for {orphan} without a tool_use"));
    }
    // every control_request we sent: exactly one control_response, id as sent
    let mut sent_count: Vec<(&Value, usize)> = Vec::new();
    for id in sent {
        match sent_count.iter_mut().find(|(v, _)| *v == id) {
            Some(e) => e.1 += 1,
            None => sent_count.push((id, 1)),
        }
    }
    for (id, n) in &sent_count {
        let answers = lines
            .iter()
            .filter(|v| v["type"] == "control_response" && v["response"]["request_id"] == **id)
            .count();
        if answers != *n {
            return Err(format!(
                "control_request {id}: sent {n} time(s), {answers} control_response(s)"
            ));
        }
    }
    let int_answers = lines
        .iter()
        .filter(|v| {
            v["type"] == "control_response" && v["response"]["request_id"] == "campaign-int"
        })
        .count();
    if int_answers != out.interrupted_turns {
        return Err(format!(
            "{} interrupt(s) sent, {int_answers} answered",
            out.interrupted_turns
        ));
    }
    let readable = |r: &Value| {
        let text = r["result"].as_str().unwrap_or("");
        let errors_ok = r["errors"].as_array().is_some_and(|e| {
            !e.is_empty()
                && e.iter()
                    .all(|x| x.as_str().is_some_and(|t| !t.trim().is_empty()))
        });
        !text.trim().is_empty() || errors_ok
    };
    let first = &out.results[0];
    if case.kind.breaks_first_turn() && (first["is_error"] != true || !readable(first)) {
        return Err(format!(
            "broken agent input must end the turn is_error with readable text: {first}"
        ));
    }
    floods::check_result(case.kind, first)?;
    floods::check_seen(case.kind, &s.seen)?;
    if case.kind == Kind::ExitIdleThenPrompt {
        let answer = lines.iter().find(|v| {
            v["type"] == "control_response" && v["response"]["request_id"] == "after-exit"
        });
        if answer.is_none_or(|a| a["response"]["subtype"] != "error") {
            return Err(format!(
                "a control request after the agent exited must get an error response: {answer:?}"
            ));
        }
        let second = &out.results[1];
        if second["is_error"] != true || !readable(second) {
            return Err(format!(
                "a prompt after the agent exited must get an error result: {second}"
            ));
        }
    }
    Ok(Stats {
        turns: out.results.len(),
        error_results: out.results.iter().filter(|r| r["is_error"] == true).count(),
        tool_uses: uses.len(),
        control_requests: sent.len() + out.interrupted_turns,
        interrupts: out.interrupted_turns,
        stdout_lines: lines.len(),
    })
}

// ------------------------------------------------------------ the campaign

fn recordings_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../recordings")
}

/// The recordings the campaign may mutate, in a fixed order.
fn candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(agents) = std::fs::read_dir(recordings_root()) else {
        return out;
    };
    for agent in agents.flatten() {
        for version in std::fs::read_dir(agent.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            for s in SCENARIOS {
                let p = version.path().join(format!("{s}.jsonl"));
                if p.is_file() {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out
}

fn build_cases(per_kind: usize, scratch: &Path) -> Vec<Case> {
    let mut rng = Rng(seed());
    let all = candidates();
    assert!(
        !all.is_empty(),
        "no recordings under {}",
        recordings_root().display()
    );
    let mut cache: HashMap<PathBuf, Option<(Vec<Batch>, u64)>> = HashMap::new();
    let mut cases = Vec::new();
    // `FAULT_CAMPAIGN_KINDS=EndlessLine,Flood` runs only those kinds
    let only = std::env::var("FAULT_CAMPAIGN_KINDS").ok();
    for &kind in KINDS {
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|k| k.trim() == format!("{kind:?}")))
        {
            continue;
        }
        let mut made = 0;
        let mut tries = 0;
        while made < kind.cases(per_kind) && tries < per_kind * 20 {
            tries += 1;
            let path = all[rng.below(all.len())].clone();
            let Some((batches, acp_protocol)) = cache
                .entry(path.clone())
                .or_insert_with(|| batches_of(&path))
                .clone()
            else {
                continue;
            };
            if !taps::fits(kind, &path) {
                continue;
            }
            let prompts_recorded = batches
                .iter()
                .filter(|b| b.trigger == "request:session/prompt")
                .count();
            if prompts_recorded == 0 || first_prompt_batch(&batches).is_none() {
                continue;
            }
            let mut batches = batches;
            let (fault, fault_batch, fault_frame) = mutate(kind, &mut batches, &mut rng);
            let turns = match kind {
                Kind::ExitIdleThenPrompt => 2,
                // the bridge ends with its agent: one turn is what there is
                Kind::ExitMidTurn | Kind::TapPanelGoneMidTurn => 1,
                _ => prompts_recorded.min(2),
            };
            let prompts = (0..turns)
                .map(|t| match kind {
                    Kind::PanelWrongTypes if t == 0 => WRONG_TYPED_PROMPTS
                        [rng.below(WRONG_TYPED_PROMPTS.len())]
                    .as_bytes()
                    .to_vec(),
                    _ => user_line(&format!("campaign prompt {t}")),
                })
                .collect();
            let n = cases.len();
            let dir = scratch.join(format!("case-{n}"));
            let name = path
                .strip_prefix(recordings_root())
                .unwrap_or(&path)
                .display()
                .to_string();
            cases.push(Case {
                kind,
                recording: name,
                acp_protocol,
                plan: Plan {
                    batches,
                    fault,
                    fault_batch,
                    fault_frame,
                    pid_file: dir.join("agent.pid"),
                },
                prompts,
                panel_extra: panel_lines(kind, &mut rng),
            });
            made += 1;
        }
    }
    cases
}

/// [`SEED`], or `FAULT_CAMPAIGN_SEED` to explore other campaigns locally.
fn seed() -> u64 {
    std::env::var("FAULT_CAMPAIGN_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(SEED)
}

fn run_campaign() -> usize {
    let per_kind = std::env::var("FAULT_CAMPAIGN_PER_KIND")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(PER_KIND_DEFAULT);
    let scratch =
        std::env::temp_dir().join(format!("acp-bridge-fault-campaign-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let cases = build_cases(per_kind, &scratch);
    let started = Instant::now();
    let queue = Arc::new(Mutex::new((0..cases.len()).collect::<Vec<_>>().into_iter()));
    let cases = Arc::new(cases);
    type Report = Vec<(Kind, Option<Result<Stats, String>>, String)>;
    let report: Arc<Mutex<Report>> = Arc::new(Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (queue, cases, report, scratch) = (
                queue.clone(),
                cases.clone(),
                report.clone(),
                scratch.clone(),
            );
            std::thread::spawn(move || {
                loop {
                    let Some(i) = queue.lock().unwrap().next() else {
                        break;
                    };
                    let case = &cases[i];
                    let label = format!("#{i} {:?} {}", case.kind, case.recording);
                    let outcome = (started.elapsed() < scaled(WALL_LIMIT))
                        .then(|| run_case(case, &scratch.join(format!("case-{i}"))));
                    report.lock().unwrap().push((case.kind, outcome, label));
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    let report = report.lock().unwrap();
    let mut per: BTreeMap<Kind, (usize, usize, usize)> = BTreeMap::new();
    let mut failures = 0;
    let mut sum = Stats::default();
    for (kind, outcome, label) in report.iter() {
        let e = per.entry(*kind).or_default();
        match outcome {
            Some(Ok(st)) => {
                e.0 += 1;
                sum.turns += st.turns;
                sum.error_results += st.error_results;
                sum.tool_uses += st.tool_uses;
                sum.control_requests += st.control_requests;
                sum.interrupts += st.interrupts;
                sum.stdout_lines += st.stdout_lines;
            }
            Some(Err(why)) => {
                e.1 += 1;
                failures += 1;
                eprintln!("FAILED {label}: {why}\n");
            }
            None => e.2 += 1,
        }
    }
    println!(
        "fault campaign (seed {:#x}, {per_kind} per kind, {:.1} s):",
        seed(),
        started.elapsed().as_secs_f64()
    );
    println!(
        "{:<28} {:>6} {:>6} {:>8}",
        "kind", "passed", "failed", "not run"
    );
    let mut totals = (0, 0, 0);
    for (kind, (p, f, n)) in &per {
        println!("{:<28} {p:>6} {f:>6} {n:>8}", format!("{kind:?}"));
        totals = (totals.0 + p, totals.1 + f, totals.2 + n);
    }
    println!(
        "{:<28} {:>6} {:>6} {:>8}",
        "total", totals.0, totals.1, totals.2
    );
    println!(
        "checked: {} turns ({} ended is_error), {} tool_use/tool_result pairs, {} control_requests answered once ({} interrupts by a waiting panel), {} stdout lines parsed",
        sum.turns,
        sum.error_results,
        sum.tool_uses,
        sum.control_requests,
        sum.interrupts,
        sum.stdout_lines
    );
    if totals.2 > 0 {
        println!(
            "({} case(s) not run: the campaign's wall limit of {:?} passed)",
            totals.2,
            scaled(WALL_LIMIT)
        );
    }
    if failures == 0 {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    failures
}
