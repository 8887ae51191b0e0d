//! `acp-harness import`: a tap made by really running `acp-bridge --tap`
//! in front of `acp-harness fake-agent <recording>` (a panel script playing
//! the panel) imports into a fresh root and replays green; a replay whose
//! panel asks the agent something else reports a divergence (exit 1, no
//! panic); a tap that is malformed, cut off, holds a secret, or would
//! replace a file or leave the root is refused (exit 2, naming what and
//! where) and nothing is written.
//!
//! The bridge binary is the one beside this harness binary (`cargo test
//! --workspace` builds both); where it is missing it is built first.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use acp_harness::judging::judge::{Corpus, Status};
use serde_json::{Value, json};

const HARNESS: &str = env!("CARGO_BIN_EXE_acp-harness");
/// Any wait of this test is bounded by this.
const LIMIT: Duration = Duration::from_secs(60);
/// A recorded session with a tool call asked about, allowed, interrupted
/// while it runs, and a second prompt.
const RECORDING: &str = "recordings/gemini-cli/0.61.0/interrupt-slow-tool.jsonl";
const FIRST: &str = "Run the slow Unity operation.";
const SECOND: &str = "Reply with the single word: still-here";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `acp-bridge` beside the harness binary, built when it is not there.
fn bridge_bin() -> PathBuf {
    let bin = Path::new(HARNESS).with_file_name("acp-bridge");
    if !bin.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-p", "acp-bridge", "--bin", "acp-bridge"])
            .current_dir(repo())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building acp-bridge failed");
    }
    bin
}

/// The bridge as a panel sees it: its stdout lines through a channel, so
/// every wait has a limit.
struct Panel {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<Value>,
}

impl Panel {
    fn send(&mut self, v: &Value) {
        let stdin = self.child.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{v}").expect("the bridge reads");
        stdin.flush().unwrap();
    }

    /// Reads panel lines until one satisfies `pred`; returns it.
    fn until(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let started = Instant::now();
        loop {
            let left = LIMIT.saturating_sub(started.elapsed());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("waited {LIMIT:?} for {what}; saw {:#?}", self.seen));
            let Ok(v) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            self.seen.push(v.clone());
            if pred(&v) {
                return v;
            }
        }
    }
}

fn user(text: &str) -> Value {
    json!({"type":"user","message":{"role":"user","content":text},"parent_tool_use_id":null,"session_id":"default"})
}

/// Runs `recording` live: the bridge with `--tap` in front of the fake
/// agent serving it, `script` playing the panel after `initialize`.
/// Returns the tap's path.
fn tap(dir: &Path, recording: &str, script: impl FnOnce(&mut Panel)) -> PathBuf {
    let mcp = json!({"mcpServers":{"unity-ops":{"type":"http","url":"<mcp-url>","headers":{"Authorization":"Bearer <mcp-token>"}}}});
    tap_with_mcp(dir, recording, Some(mcp), script)
}

/// [`tap`] with the panel's `--mcp-config` (none when `None`).
fn tap_with_mcp(
    dir: &Path,
    recording: &str,
    mcp: Option<Value>,
    script: impl FnOnce(&mut Panel),
) -> PathBuf {
    let workspace = dir.join("My Project");
    std::fs::create_dir_all(&workspace).unwrap();
    let tap = dir.join("session.jsonl");
    let agent = format!(
        "'{HARNESS}' fake-agent --idle-timeout-secs 60 --workspace '{}' '{}'",
        workspace.display(),
        repo().join(recording).display()
    );
    // the bridge offers the revision the recording negotiated
    let negotiated = acp_harness::corpus::recording::read(&repo().join(recording))
        .map(|r| r.header.protocol_version)
        .unwrap_or(1);
    let mut child = Command::new(bridge_bin())
        .env(
            "ACP_BRIDGE_ACP_PROTOCOL",
            if negotiated == 2 { "2" } else { "1" },
        )
        .args([
            "--tap",
            tap.to_str().unwrap(),
            "--cwd",
            workspace.to_str().unwrap(),
        ])
        .args(
            mcp.iter()
                .flat_map(|m| ["--mcp-config".to_string(), m.to_string()]),
        )
        .args(["--agent-cmd", &agent])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("acp-bridge starts");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut panel = Panel {
        child,
        lines: rx,
        seen: Vec::new(),
    };
    panel.send(
        &json!({"type":"control_request","request_id":"req_1","request":{"subtype":"initialize"}}),
    );
    panel.until("the initialize answer", |v| v["type"] == "control_response");
    script(&mut panel);
    drop(panel.child.stdin.take());
    let started = Instant::now();
    loop {
        if let Some(status) = panel.child.try_wait().unwrap() {
            assert!(status.success(), "the bridge exited {status}");
            break;
        }
        if started.elapsed() > LIMIT {
            let _ = panel.child.kill();
            panic!("the bridge did not exit within {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(tap.exists(), "no tap at {}", tap.display());
    tap
}

fn can_use_tool(v: &Value) -> bool {
    v["type"] == "control_request" && v["request"]["subtype"] == "can_use_tool"
}

/// The panel's answer to a `can_use_tool` request.
fn answer(ask: &Value, response: Value) -> Value {
    json!({"type":"control_response","response":{"subtype":"success",
        "request_id":ask["request_id"],"response":response}})
}

/// The panel prompts, allows the call, interrupts it while it runs, and
/// prompts again.
fn tap_a_session(dir: &Path) -> PathBuf {
    tap(dir, RECORDING, |panel| {
        panel.send(&user(FIRST));
        let ask = panel.until("can_use_tool", can_use_tool);
        panel.send(&answer(
            &ask,
            json!({"behavior":"allow","updatedInput":ask["request"]["input"]}),
        ));
        let has_tool_use = |v: &Value| {
            v["type"] == "assistant"
                && v["message"]["content"]
                    .as_array()
                    .is_some_and(|c| c.iter().any(|b| b["type"] == "tool_use"))
        };
        if !panel.seen.iter().any(has_tool_use) {
            panel.until("the tool_use", has_tool_use);
        }
        panel.send(
            &json!({"type":"control_request","request_id":"req_2","request":{"subtype":"interrupt"}}),
        );
        panel.until("the first result", |v| v["type"] == "result");
        panel.send(&user(SECOND));
        panel.until("the second result", |v| v["type"] == "result");
    })
}

/// A fresh corpus root: empty `recordings/`, `scenarios/` and `profiles/`.
fn fresh_root(dir: &Path) -> PathBuf {
    let root = dir.join("root");
    for sub in ["recordings", "scenarios", "profiles"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
    root
}

fn import(tap: &Path, root: &Path, more: &[&str]) -> std::process::Output {
    Command::new(HARNESS)
        .arg("import")
        .arg(tap)
        .arg("--root")
        .arg(root)
        .args(more)
        .output()
        .expect("acp-harness runs")
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// Every file under `dir`, relative, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().strip_prefix(dir).unwrap().display().to_string())
        .collect();
    out.sort();
    out
}

/// The golden as blessing writes it, from the transcript read.
fn bless(root: &Path, id: &acp_harness::judging::judge::golden::RecordingId, transcript: &str) {
    let path = id.snapshot_path(&root.join("tests/snapshots"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let snap = format!(
        "---\nsource: tests/replay.rs\ndescription: replay of {}\n---\n{transcript}",
        id.trial_name()
    );
    std::fs::write(path, snap).unwrap();
}

/// The kinds of panel line a run showed, without the streamed deltas: what
/// the panel's user saw happen, in order.
fn panel_kinds(values: impl Iterator<Item = Value>) -> Vec<String> {
    values
        .filter(|v| v["type"] != "stream_event")
        .map(|v| {
            let sub = v["subtype"]
                .as_str()
                .or(v["request"]["subtype"].as_str())
                .unwrap_or("");
            let tools: Vec<&str> = v["message"]["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|b| b["name"].as_str())
                .collect();
            format!(
                "{} {sub} {}",
                v["type"].as_str().unwrap_or("?"),
                tools.join(",")
            )
        })
        .collect()
}

fn a_tapped_session_with_a_tool_a_permission_and_an_interrupt_imports_and_replays_green() {
    let dir = tempfile::tempdir().unwrap();
    let tap = tap_a_session(dir.path());
    let root = fresh_root(dir.path());

    // a dry run shows the plan and writes nothing
    let dry = import(&tap, &root, &["--dry-run", "--name", "tapped-interrupt"]);
    assert_eq!(dry.status.code(), Some(0), "{}", text(&dry.stderr));
    let shown = text(&dry.stdout);
    for want in [
        "import gemini-cli/0.61.0/tapped-interrupt",
        "prompts: 2",
        FIRST,
        "tool calls: 1",
        "mcp__unity-ops__uap_slow",
        "permission answers: 1",
        ": allow",
        "interrupt at permission",
        "dry run: nothing written",
    ] {
        assert!(shown.contains(want), "{want:?} not in\n{shown}");
    }
    assert!(files(&root).is_empty(), "{:?}", files(&root));

    let out = import(&tap, &root, &["--name", "tapped-interrupt"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        files(&root),
        vec![
            "recordings/gemini-cli/0.61.0/tapped-interrupt.jsonl",
            "scenarios/tapped-interrupt.toml"
        ]
    );
    let scenario =
        acp_harness::corpus::scenario::find(root.join("scenarios"), "tapped-interrupt").unwrap();
    assert!(scenario.imported);
    let kinds: Vec<&str> = scenario.steps.iter().map(|s| s.kind()).collect();
    assert_eq!(kinds, ["prompt", "permission", "interrupt", "prompt"]);
    // the tap names the bridge's build; the recording the harness's, and
    // keeps the bridge's as where it came from
    let tapped = acp_harness::corpus::recording::read(&tap).unwrap();
    let imported = acp_harness::corpus::recording::read(
        &root.join("recordings/gemini-cli/0.61.0/tapped-interrupt.jsonl"),
    )
    .unwrap();
    let bridge_build = tapped
        .header
        .build
        .clone()
        .expect("the tap names its build");
    assert_eq!(bridge_build["name"], "acp-bridge");
    assert_eq!(
        imported.header.build.as_ref().unwrap()["name"],
        "acp-harness"
    );
    assert_eq!(
        imported.header.extra["imported_from"]["build"],
        bridge_build
    );
    let recording =
        std::fs::read_to_string(root.join("recordings/gemini-cli/0.61.0/tapped-interrupt.jsonl"))
            .unwrap();
    let home = std::env::var("HOME").unwrap_or_default();
    for machine in [dir.path().to_str().unwrap(), home.as_str()] {
        assert!(
            machine.len() < 2 || !recording.contains(machine),
            "{machine} in the recording"
        );
    }

    // check replays it: no divergence, no failure; blessed, it passes
    let corpus = Corpus::at(&root).keeping_panel_lines();
    let path = root.join("recordings/gemini-cli/0.61.0/tapped-interrupt.jsonl");
    let case = corpus.judge(&path);
    assert_eq!(case.errors, Vec::<String>::new());
    assert_eq!(case.divergences, 0, "{}", case.transcript);
    assert_eq!(
        case.statuses(),
        vec![Status::GoldenMissing],
        "{}",
        case.transcript
    );
    // the replay shows the panel what the live session showed it
    let tapped = acp_harness::corpus::recording::read(&tap).unwrap();
    let live = tapped
        .events
        .iter()
        .filter(|e| e.dir == acp_harness::corpus::recording::Dir::FromAgent)
        .filter(|e| e.leg == acp_harness::corpus::recording::Leg::StreamJson)
        .filter_map(|e| serde_json::from_str(&e.raw).ok());
    let replayed = case
        .replay
        .as_ref()
        .unwrap()
        .panel_lines
        .iter()
        .filter_map(|l| serde_json::from_str(l).ok());
    assert_eq!(panel_kinds(replayed), panel_kinds(live));
    bless(&root, &case.id, &case.transcript.text());
    let check = Command::new(HARNESS)
        .args(["check", "--color", "never", "--root"])
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}{}",
        text(&check.stdout),
        text(&check.stderr)
    );
    assert!(
        text(&check.stdout).contains("1 pass"),
        "{}",
        text(&check.stdout)
    );

    // importing it again never overwrites
    let again = import(&tap, &root, &["--name", "tapped-interrupt"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        text(&again.stderr).contains("tapped-interrupt.jsonl exists: import never overwrites"),
        "{}",
        text(&again.stderr)
    );

    // a later panel that asks the agent something else: a divergence and
    // a golden diff, exit 1, no panic
    let scenario_path = root.join("scenarios/tapped-interrupt.toml");
    let changed = std::fs::read_to_string(&scenario_path)
        .unwrap()
        .replace(SECOND, "Reply with another word");
    std::fs::write(&scenario_path, changed).unwrap();
    let check = Command::new(HARNESS)
        .args(["check", "--color", "never", "--root"])
        .arg(&root)
        .output()
        .unwrap();
    let shown = text(&check.stdout);
    assert_eq!(
        check.status.code(),
        Some(1),
        "{shown}{}",
        text(&check.stderr)
    );
    assert!(shown.contains("divergence"), "{shown}");
    assert!(shown.contains("golden diff"), "{shown}");
}

fn a_tap_that_is_cut_off_malformed_secret_or_misnamed_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let tap = tap_a_session(dir.path());
    let good = std::fs::read_to_string(&tap).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    let variant = |name: &str, text: String| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let secret = good.replacen(
        FIRST,
        "Use sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345 now.",
        1,
    );
    let secret_line = secret.lines().position(|l| l.contains("sk-ant-")).unwrap() + 1;
    // the same key streamed by the agent in pieces, after its last frame
    let streamed = edited_tap(&tap, "streamed-secret", |lines| {
        let at = lines
            .iter()
            .rposition(|l| l["leg"] == "acp" && l["dir"] == "from_agent")
            .unwrap();
        let pieces = [
            "Use sk-ant-api0",
            "3-abcdefghijklm",
            "nopqrstuvwxyz01",
            "2345 now.",
        ];
        for (i, piece) in pieces.iter().enumerate() {
            let raw = json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s",
                "update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":piece}}}});
            let mut event = lines[at].clone();
            event["raw"] = json!(raw.to_string());
            lines.insert(at + 1 + i, event);
        }
    });
    // (case, tap, extra args, what stderr must say)
    let cases: Vec<(&str, PathBuf, Vec<&str>, String)> = vec![
        (
            "no header",
            variant("no-header.jsonl", lines[1..].join("\n")),
            vec![],
            "no-header.jsonl:1: event before the header".into(),
        ),
        (
            "cut off",
            variant("cut.jsonl", lines[..lines.len() - 1].join("\n")),
            vec![],
            "cut.jsonl: the tap is cut off: it has no trailer".into(),
        ),
        (
            "not a tap",
            repo().join(RECORDING),
            vec![],
            "not a tap: its header has no `tap` field".into(),
        ),
        (
            "secret",
            variant("secret.jsonl", secret.clone()),
            vec![],
            format!("secret.jsonl:{secret_line}:"),
        ),
        (
            "secret streamed in pieces",
            streamed,
            vec![],
            "survived scrubbing in their streamed text".into(),
        ),
        (
            "name leaves the root",
            tap.clone(),
            vec!["--name", "../escape"],
            "--name = \"../escape\" is not a name".into(),
        ),
        (
            "agent leaves the root",
            tap.clone(),
            vec!["--agent", "a/b"],
            "--agent = \"a/b\" is not a name".into(),
        ),
        (
            "file name is no name",
            variant(".hidden.jsonl", good.clone()),
            vec![],
            "the tap's file name (or --name) = \".hidden\" is not a name".into(),
        ),
    ];
    for (case, path, args, want) in cases {
        let root = fresh_root(&dir.path().join(case.replace(' ', "-")));
        let out = import(&path, &root, &args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{case}: {err}");
        assert!(err.contains(&want), "{case}: {want:?} not in {err}");
        assert!(!err.contains("panicked"), "{case}: {err}");
        assert_eq!(
            err.lines().count(),
            1,
            "{case}: said once, on one line: {err}"
        );
        assert!(files(&root).is_empty(), "{case}: {:?}", files(&root));
    }
    let err = text(
        &import(
            &dir.path().join("secret.jsonl"),
            &fresh_root(dir.path()),
            &[],
        )
        .stderr,
    );
    assert!(err.contains("credential shape (sk-key)"), "{err}");
    assert!(
        !err.contains("abcdefghij"),
        "the refusal repeats the secret: {err}"
    );
    // read and accepted by a person: imported, with a note saying so
    for variant in ["secret.jsonl", "streamed-secret.jsonl"] {
        let root = fresh_root(&dir.path().join(format!("accepted-{variant}")));
        let out = import(
            &dir.path().join(variant),
            &root,
            &["--accept-credential-shapes", "--name", "accepted"],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{variant}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stdout).contains("accepted after reading (--accept-credential-shapes)"),
            "{variant}: {}",
            text(&out.stdout)
        );
    }
}

fn a_tapped_denial_replays_green_and_a_broken_deny_rule_fails_it_with_a_golden_diff() {
    let dir = tempfile::tempdir().unwrap();
    let tap = tap(
        dir.path(),
        "recordings/codex-acp/2.6.0/permission-denied.jsonl",
        |panel| {
            panel.send(&user("Ping the Unity editor, if you are allowed to."));
            let ask = panel.until("can_use_tool", can_use_tool);
            panel.send(&answer(
                &ask,
                json!({"behavior":"deny","message":"Not now."}),
            ));
            panel.until("the result", |v| v["type"] == "result");
        },
    );
    let root = fresh_root(dir.path());
    // codex-acp's agentInfo.name is its npm package, no profile id, and
    // this root has no profile whose package it is
    let out = import(&tap, &root, &["--name", "tapped-denial"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "agent_info.name, which names no profile (or --agent) = \"@agentclientprotocol/codex-acp\" is not a name"
        ),
        "{err}"
    );
    assert_eq!(err.matches("is not a name").count(), 1, "said once: {err}");
    let out = import(
        &tap,
        &root,
        &["--name", "tapped-denial", "--agent", "codex-acp"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(": deny"),
        "{}",
        text(&out.stdout)
    );
    let corpus = Corpus::at(&root);
    let path = root.join("recordings/codex-acp/2.6.0/tapped-denial.jsonl");
    let case = corpus.judge(&path);
    assert_eq!(case.errors, Vec::<String>::new());
    assert_eq!(case.divergences, 0, "{}", case.transcript);
    bless(&root, &case.id, &case.transcript.text());
    assert!(corpus.judge(&path).passed());
    // the bridge's rule choosing the deny option by its kind, switched off:
    // the agent is answered otherwise than it was, and the panel sees it
    let broken = acp_bridge::Compat {
        reject_option_by_kind: false,
        ..acp_bridge::Compat::default()
    };
    let case = corpus.judge_with(&path, broken);
    assert!(!case.passed());
    let statuses = case.statuses();
    assert!(
        statuses.contains(&Status::GoldenDiff) && statuses.contains(&Status::Divergence),
        "{statuses:?}\n{}",
        case.transcript
    );
}

/// The corpus's tap of a live session (`.ci/tap-live`: the Python Agent SDK
/// as the panel, `acp-bridge --tap`, the real codex-acp 2.6.0 in the
/// recorder's sandbox) says where it came from and replays green; with the
/// bridge's rule that reads codex-acp's wrapped `rawOutput` switched off,
/// the panel is shown another tool result: a golden diff.
fn the_live_tapped_session_replays_green_and_a_broken_tool_result_rule_fails_it_with_a_golden_diff()
{
    let path = repo().join("recordings/codex-acp/2.6.0/tap-live-unity-call.jsonl");
    let recording = acp_harness::corpus::recording::read(&path).unwrap();
    let from = &recording.header.extra["imported_from"];
    assert_eq!(from["session"], "live", "{from}");
    assert_eq!(from["model_script"], "unity-call-allowed", "{from}");
    assert!(!recording.header.synthetic);
    assert_eq!(recording.header.model_mode, "stub");
    let corpus = Corpus::at(&repo());
    let case = corpus.judge(&path);
    assert!(case.passed(), "{:?}\n{}", case.statuses(), case.transcript);
    let broken = acp_bridge::Compat {
        mcp_raw_output_wrapper: false,
        ..acp_bridge::Compat::default()
    };
    let case = corpus.judge_with(&path, broken);
    assert_eq!(
        case.statuses(),
        vec![Status::GoldenDiff],
        "{}",
        case.transcript
    );
}

/// `tap`'s lines as values, changed by `edit`, written to `name` beside it
/// (events and trailer renumbered, so an inserted line is in order).
fn edited_tap(tap: &Path, name: &str, edit: impl FnOnce(&mut Vec<Value>)) -> PathBuf {
    let mut lines: Vec<Value> = std::fs::read_to_string(tap)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    edit(&mut lines);
    let mut seq = 0;
    for l in lines.iter_mut().skip(1) {
        seq += 1;
        l["seq"] = json!(seq);
    }
    let path = tap.with_file_name(format!("{name}.jsonl"));
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    path
}

/// The index of the first panel-leg line the panel sent that `pred` holds of.
fn panel_line(lines: &[Value], pred: impl Fn(&Value) -> bool) -> usize {
    lines
        .iter()
        .position(|l| {
            l["leg"] == "stream-json"
                && l["dir"] == "to_agent"
                && serde_json::from_str::<Value>(l["raw"].as_str().unwrap_or(""))
                    .is_ok_and(|v| pred(&v))
        })
        .expect("the tap has such a panel line")
}

fn edit_raw(line: &mut Value, edit: impl FnOnce(&mut Value)) {
    let mut raw: Value = serde_json::from_str(line["raw"].as_str().unwrap()).unwrap();
    edit(&mut raw);
    line["raw"] = json!(raw.to_string());
}

/// What the tapped panel did beyond prompts, answers and interrupts becomes
/// the imported scenario's too, so the replay's panel does it again: an
/// image sent with a prompt, an input edited in a permission answer, the
/// bridge's launch flags (both instructions kept apart, `--model`,
/// `--permission-mode`, `--resume`), instructions in the panel's
/// `initialize` (worked into the two as the bridge works them) and a model
/// change.
fn a_tapped_image_edited_input_launch_flags_and_model_change_become_the_scenarios() {
    use acp_harness::corpus::scenario::{LaunchSettings, Scenario, Step, panel_driver};
    let dir = tempfile::tempdir().unwrap();
    let tap = tap_a_session(dir.path());
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
    let image_prompt = json!([{"type":"text","text":FIRST},
        {"type":"image","source":{"type":"base64","media_type":"image/png","data":PNG}}]);
    let edited = json!({"seconds": 1, "note": null});
    type Edit = Box<dyn FnOnce(&mut Vec<Value>)>;
    type Check = Box<dyn Fn(&Scenario)>;
    // (case, how the tap changes, what the scenario then holds)
    let cases: Vec<(&str, Edit, Check)> = vec![
        (
            "image",
            Box::new({
                let content = image_prompt.clone();
                move |lines: &mut Vec<Value>| {
                    let i = panel_line(lines, |v| v["type"] == "user");
                    edit_raw(&mut lines[i], |v| v["message"]["content"] = content);
                }
            }),
            Box::new({
                let content = image_prompt.clone();
                move |s: &Scenario| {
                    let Step::Prompt(p) = &s.steps[0] else {
                        panic!("{:?}", s.steps)
                    };
                    // the replay's panel sends what the tapped one sent
                    let sent: Value = serde_json::from_str(&panel_driver::user_line(p)).unwrap();
                    assert_eq!(sent["message"]["content"], content);
                }
            }),
        ),
        (
            "edited input",
            Box::new({
                let edited = edited.clone();
                move |lines: &mut Vec<Value>| {
                    let i = panel_line(lines, |v| v["type"] == "control_response");
                    edit_raw(&mut lines[i], |v| {
                        v["response"]["response"]["updatedInput"] = edited
                    });
                }
            }),
            Box::new({
                let edited = edited.clone();
                move |s: &Scenario| {
                    assert!(
                        matches!(&s.steps[1], Step::Permission { updated_input: Some(u), .. } if *u == edited),
                        "{:?}",
                        s.steps[1]
                    );
                }
            }),
        ),
        (
            "launch flags",
            Box::new(|lines: &mut Vec<Value>| {
                lines[0]["launch"]["system_prompt"] = json!("Be brief.");
                lines[0]["launch"]["append_system_prompt"] = json!("Then stop.");
                lines[0]["launch"]["model"] = json!("model-b");
                lines[0]["launch"]["permission_mode"] = json!("acceptEdits");
                lines[0]["launch"]["resume_session_id"] = json!("sess-0");
            }),
            Box::new(|s: &Scenario| {
                assert_eq!(s.system_prompt.as_deref(), Some("Be brief."));
                assert_eq!(s.append_system_prompt.as_deref(), Some("Then stop."));
                let launch = LaunchSettings {
                    model: Some("model-b".into()),
                    permission_mode: Some("acceptEdits".into()),
                    resume_session: Some("sess-0".into()),
                    ..LaunchSettings::default()
                };
                assert_eq!(s.launch, launch);
                // the replayed bridge is launched with them
                let header = acp_harness::corpus::recording::read(&repo().join(RECORDING))
                    .unwrap()
                    .header;
                let spec = acp_harness::judging::replay::replayer::launch_spec(s, &header, None);
                assert_eq!(spec.model.as_deref(), Some("model-b"));
                assert_eq!(spec.permission_mode.as_deref(), Some("acceptEdits"));
                assert_eq!(spec.resume_session_id.as_deref(), Some("sess-0"));
                assert_eq!(spec.system_prompt.as_deref(), Some("Be brief."));
                assert_eq!(spec.append_system_prompt.as_deref(), Some("Then stop."));
            }),
        ),
        (
            "instructions in the panel initialize",
            Box::new(|lines: &mut Vec<Value>| {
                lines[0]["launch"]["system_prompt"] = json!("From the launch.");
                let i = panel_line(lines, |v| v["request"]["subtype"] == "initialize");
                edit_raw(&mut lines[i], |v| {
                    v["request"]["systemPrompt"] = json!(["From the SDK.", "Both parts."]);
                    v["request"]["appendSystemPrompt"] = json!("And more.");
                });
            }),
            Box::new(|s: &Scenario| {
                // the panel's system prompt replaces the launch's, as in the bridge
                assert_eq!(
                    s.system_prompt.as_deref(),
                    Some("From the SDK.\n\nBoth parts.")
                );
                assert_eq!(s.append_system_prompt.as_deref(), Some("And more."));
            }),
        ),
        (
            "an appended text in the panel initialize",
            Box::new(|lines: &mut Vec<Value>| {
                lines[0]["launch"]["system_prompt"] = json!("From the launch.");
                lines[0]["launch"]["append_system_prompt"] = json!("Launch append.");
                let i = panel_line(lines, |v| v["request"]["subtype"] == "initialize");
                edit_raw(&mut lines[i], |v| {
                    v["request"]["appendSystemPrompt"] = json!("SDK append.")
                });
            }),
            Box::new(|s: &Scenario| {
                assert_eq!(s.system_prompt.as_deref(), Some("From the launch."));
                assert_eq!(
                    s.append_system_prompt.as_deref(),
                    Some("Launch append.\n\nSDK append.")
                );
            }),
        ),
        (
            "model change",
            Box::new(|lines: &mut Vec<Value>| {
                let i = panel_line(lines, |v| {
                    v["type"] == "user" && v["message"]["content"] == SECOND
                });
                let mut set = lines[i].clone();
                set["raw"] = json!(
                    json!({"type":"control_request","request_id":"req_9",
                    "request":{"subtype":"set_model","model":"model-b"}})
                    .to_string()
                );
                lines.insert(i, set);
            }),
            Box::new(|s: &Scenario| {
                let kinds: Vec<&str> = s.steps.iter().map(|s| s.kind()).collect();
                assert_eq!(
                    kinds,
                    ["prompt", "permission", "interrupt", "set_model", "prompt"]
                );
                assert_eq!(
                    s.steps[3],
                    Step::SetModel {
                        model: "model-b".into()
                    }
                );
            }),
        ),
    ];
    for (case, edit, check) in cases {
        let name = case.replace(' ', "-");
        let edited = edited_tap(&tap, &name, edit);
        let root = fresh_root(&dir.path().join(&name));
        let out = import(&edited, &root, &[]);
        assert_eq!(out.status.code(), Some(0), "{case}: {}", text(&out.stderr));
        let scenario = acp_harness::corpus::scenario::find(root.join("scenarios"), &name)
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        check(&scenario);
        assert!(
            !text(&out.stdout).contains("a scenario has no such key"),
            "{case}: {}",
            text(&out.stdout)
        );
    }
}

/// The corpus's tap of a live session whose panel launched the bridge with
/// `--model`, `--permission-mode` and `--append-system-prompt` (the Python
/// Agent SDK's options; `.ci/tap-live ... tap-live-launch-flags --model
/// 'gpt-5.5[low]' --permission-mode bypassPermissions
/// --append-system-prompt ...`) replays green because its scenario carries
/// them; without them the replayed bridge asks the real agent's recording
/// something else: a divergence.
fn the_live_tapped_launch_flags_replay_green_and_without_them_the_replay_diverges() {
    let name = "tap-live-launch-flags";
    let recording = format!("recordings/codex-acp/2.6.0/{name}.jsonl");
    let case = Corpus::at(&repo()).judge(&repo().join(&recording));
    assert!(case.passed(), "{:?}\n{}", case.statuses(), case.transcript);
    for (frame, why) in [
        ("session/set_model", "--model"),
        ("session/set_config_option", "--permission-mode"),
        ("\"mode\":\"append\"", "--append-system-prompt"),
    ] {
        assert!(
            case.transcript.contains(frame),
            "{why}: no {frame} in\n{}",
            case.transcript
        );
    }

    let dir = tempfile::tempdir().unwrap();
    let root = fresh_root(dir.path());
    let scenario = std::fs::read_to_string(repo().join(format!("scenarios/{name}.toml"))).unwrap();
    let stripped: String = scenario
        .lines()
        .filter(|l| {
            ![
                "[launch]",
                "model =",
                "permission_mode =",
                "append_system_prompt =",
            ]
            .iter()
            .any(|k| l.starts_with(k))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(stripped, scenario);
    std::fs::write(root.join(format!("scenarios/{name}.toml")), stripped).unwrap();
    let copy = root.join(&recording);
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(repo().join(&recording), &copy).unwrap();
    let case = Corpus::at(&root).judge(&copy);
    assert!(case.divergences > 0, "{}", case.transcript);
    assert!(
        case.statuses().contains(&Status::Divergence),
        "{:?}",
        case.statuses()
    );
}

/// Every ACP agent of the corpus: a tapped session of its newest
/// `text-only` recording (served by the fake agent, as a live agent would
/// answer) imports under its own profile and version, with no `--agent`
/// where the agent names itself (`agentInfo.name` a profile id or its
/// package), and with `--agent` alone where it does not (Grok sends no
/// `agentInfo`: its version comes from `_meta.agentVersion`); the import
/// replays without a divergence.
fn every_corpus_agents_tap_imports_under_its_profile_and_replays_without_divergence() {
    let prompt = "Reply with the single word: hello";
    let mut tried = Vec::new();
    for agent_dir in std::fs::read_dir(repo().join("recordings")).unwrap() {
        let agent_dir = agent_dir.unwrap().path();
        let agent = agent_dir
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if agent == "claude-code" || !agent_dir.is_dir() {
            continue; // the stream-json reference, no ACP agent
        }
        let mut versions: Vec<semver::Version> = std::fs::read_dir(&agent_dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.path().join("text-only.jsonl").is_file())
            .filter_map(|e| semver::Version::parse(&e.file_name().to_string_lossy()).ok())
            .collect();
        versions.sort();
        let Some(version) = versions.pop() else {
            continue;
        };
        let recording = format!("recordings/{agent}/{version}/text-only.jsonl");
        let header = acp_harness::corpus::recording::read(&repo().join(&recording))
            .unwrap()
            .header;
        let dir = tempfile::tempdir().unwrap();
        let tap = tap(dir.path(), &recording, |panel| {
            panel.send(&user(prompt));
            panel.until("the result", |v| v["type"] == "result");
        });
        let root = fresh_root(dir.path());
        for profile in std::fs::read_dir(repo().join("profiles")).unwrap() {
            let profile = profile.unwrap().path();
            std::fs::copy(
                &profile,
                root.join("profiles").join(profile.file_name().unwrap()),
            )
            .unwrap();
        }
        let names_itself = header.agent_info["name"].is_string();
        let args: Vec<&str> = if names_itself {
            vec!["--name", "tapped"]
        } else {
            vec!["--name", "tapped", "--agent", &agent]
        };
        let out = import(&tap, &root, &args);
        assert_eq!(out.status.code(), Some(0), "{agent}: {}", text(&out.stderr));
        let path = root.join(format!("recordings/{agent}/{version}/tapped.jsonl"));
        assert!(
            path.is_file(),
            "{agent}: not filed at {}: {:?}",
            path.display(),
            files(&root)
        );
        let case = Corpus::at(&root).judge(&path);
        assert_eq!(case.errors, Vec::<String>::new(), "{agent}");
        assert_eq!(case.divergences, 0, "{agent}: {}", case.transcript);
        tried.push(agent);
    }
    assert!(tried.len() >= 10, "only {tried:?}");
}

/// The replay registers exactly the MCP server the tapped panel gave: one
/// by another name and without a token, or none at all. Each is written
/// into the imported scenario's `[launch]`, and the import replays without
/// a divergence (registering unity-ops instead changes the agent's
/// `session/new`).
fn a_tapped_panels_own_mcp_server_or_none_is_what_the_replay_registers() {
    let recording = "recordings/codex-acp/2.6.0/text-only.jsonl";
    let cases = [
        (
            "another server, no token",
            Some(
                json!({"mcpServers":{"editor-tools":{"type":"http","url":"http://127.0.0.1:9/mcp"}}}),
            ),
            "mcp_server = \"editor-tools\"\nmcp_authorization = false\n",
        ),
        ("no server", None, "mcp_server = false\n"),
    ];
    for (what, mcp, launch) in cases {
        let dir = tempfile::tempdir().unwrap();
        let tap = tap_with_mcp(dir.path(), recording, mcp, |panel| {
            panel.send(&user("Reply with the single word: hello"));
            panel.until("the result", |v| v["type"] == "result");
        });
        let root = fresh_root(dir.path());
        std::fs::copy(
            repo().join("profiles/codex-acp.toml"),
            root.join("profiles/codex-acp.toml"),
        )
        .unwrap();
        let out = import(&tap, &root, &["--name", "own-server"]);
        assert_eq!(out.status.code(), Some(0), "{what}: {}", text(&out.stderr));
        let scenario = std::fs::read_to_string(root.join("scenarios/own-server.toml")).unwrap();
        assert!(
            scenario.contains(&format!("[launch]\n{launch}")),
            "{what}: {scenario}"
        );
        let case =
            Corpus::at(&root).judge(&root.join("recordings/codex-acp/2.6.0/own-server.jsonl"));
        assert_eq!(case.errors, Vec::<String>::new(), "{what}");
        assert_eq!(case.divergences, 0, "{what}: {}", case.transcript);
    }
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(import: a_tapped_session_with_a_tool_a_permission_and_an_interrupt_imports_and_replays_green, a_tap_that_is_cut_off_malformed_secret_or_misnamed_is_refused_and_nothing_is_written, a_tapped_denial_replays_green_and_a_broken_deny_rule_fails_it_with_a_golden_diff, the_live_tapped_session_replays_green_and_a_broken_tool_result_rule_fails_it_with_a_golden_diff, a_tapped_image_edited_input_launch_flags_and_model_change_become_the_scenarios, the_live_tapped_launch_flags_replay_green_and_without_them_the_replay_diverges, every_corpus_agents_tap_imports_under_its_profile_and_replays_without_divergence, a_tapped_panels_own_mcp_server_or_none_is_what_the_replay_registers)
}
