//! Robustness of the bridge core against damaged input: every agent and
//! panel line from the data-driven cases (`tests/data/core/`) is fed after a
//! handshake and a prompt, truncated at several points and with each of its
//! JSON values replaced by values of other types. The core must never panic,
//! must emit only JSON lines, must give every `tool_use` exactly one
//! `tool_result`, and must end the running turn with exactly one `result`
//! when the agent then exits. The same holds when a line inside a whole case
//! is damaged (every input line of every case, in turn).

use std::path::Path;
use std::time::Duration;

use acp_bridge::{Bridge, CounterIds, LaunchSpec, McpEndpoint, Output};
use serde_json::{Value, json};

fn spec() -> LaunchSpec {
    LaunchSpec {
        cwd: "/project".into(),
        mcp: Some(McpEndpoint {
            name: "unity-ops".into(),
            url: "http://127.0.0.1:7777/mcp".into(),
            authorization: None,
        }),
        system_prompt: Some("ci".into()),
        script_gate: true,
        ..LaunchSpec::default()
    }
}

/// Every `panel> ` / `agent> ` line of the case files.
fn corpus() -> Vec<(bool, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/core");
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .expect("case dir")
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        let text = std::fs::read_to_string(&path).expect("case file");
        for line in text.lines() {
            if let Some(l) = line.strip_prefix("agent> ") {
                out.push((false, l.to_string()));
            } else if let Some(l) = line.strip_prefix("panel> ") {
                out.push((true, l.to_string()));
            }
        }
    }
    out
}

/// Copies of `v` with one value (at any depth) replaced by each of a few
/// values of other types.
fn mutations(v: &Value) -> Vec<Value> {
    let replacements = [
        Value::Null,
        json!(0),
        json!(-1.5),
        json!("x"),
        json!([]),
        json!({}),
        json!(true),
    ];
    let mut out = Vec::new();
    fn walk(
        root: &Value,
        path: &mut Vec<PathStep>,
        node: &Value,
        reps: &[Value],
        out: &mut Vec<Value>,
    ) {
        if !path.is_empty() {
            for r in reps {
                if r != node {
                    let mut copy = root.clone();
                    *get_mut(&mut copy, path) = r.clone();
                    out.push(copy);
                }
            }
        }
        match node {
            Value::Object(m) => {
                for (k, child) in m {
                    path.push(PathStep::Key(k.clone()));
                    walk(root, path, child, reps, out);
                    path.pop();
                }
            }
            Value::Array(a) => {
                for (i, child) in a.iter().enumerate() {
                    path.push(PathStep::Index(i));
                    walk(root, path, child, reps, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    walk(v, &mut Vec::new(), v, &replacements, &mut out);
    out
}

enum PathStep {
    Key(String),
    Index(usize),
}

fn get_mut<'a>(v: &'a mut Value, path: &[PathStep]) -> &'a mut Value {
    path.iter().fold(v, |v, step| match step {
        PathStep::Key(k) => &mut v[k.as_str()],
        PathStep::Index(i) => &mut v[*i],
    })
}

/// What the panel saw in one run.
#[derive(Default)]
struct Tally {
    results: usize,
    /// tool_use id -> number of tool_results for it
    tool_uses: std::collections::BTreeMap<String, usize>,
}

impl Tally {
    /// **Every announced call gets exactly one `tool_result`.**
    fn assert_one_result_per_tool_use(&self, what: &str) {
        for (id, n) in &self.tool_uses {
            assert_eq!(*n, 1, "{what}: tool_use {id} got {n} tool_results");
        }
    }
}

fn check(out: &Output, what: &str, tally: &mut Tally) {
    for l in &out.to_panel {
        let v: Value = serde_json::from_str(l)
            .unwrap_or_else(|e| panic!("{what}: non-JSON panel line {l}: {e}"));
        if v["type"] == "result" {
            tally.results += 1;
        }
        for block in v["message"]["content"].as_array().into_iter().flatten() {
            let id = |k: &str| block[k].as_str().unwrap_or_default().to_string();
            match block["type"].as_str() {
                Some("tool_use") if v["type"] == "assistant" => {
                    let prev = tally.tool_uses.insert(id("id"), 0);
                    assert!(
                        prev.is_none(),
                        "{what}: tool_use {} announced twice",
                        id("id")
                    );
                }
                Some("tool_result") => match tally.tool_uses.get_mut(&id("tool_use_id")) {
                    Some(n) => *n += 1,
                    None => panic!(
                        "{what}: tool_result for {} before any tool_use",
                        id("tool_use_id")
                    ),
                },
                _ => {}
            }
        }
    }
    for l in &out.to_agent {
        serde_json::from_str::<Value>(l)
            .unwrap_or_else(|e| panic!("{what}: non-JSON agent line {l}: {e}"));
    }
}

/// A bridge past its handshake with a prompt running.
fn running_turn(what: &str, tally: &mut Tally) -> Bridge {
    let mut b = Bridge::new(spec(), Box::new(CounterIds::default()));
    let t = Duration::from_millis;
    for (panel, l) in [
        (
            true,
            r#"{"type":"control_request","request_id":"i","request":{"subtype":"initialize"}}"#,
        ),
        (
            false,
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"mcpCapabilities":{"http":true},"promptCapabilities":{"image":true}}}}"#,
        ),
        (
            false,
            r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"S1","models":{"currentModelId":"m1","availableModels":[{"modelId":"m1","name":"M"}]},"modes":{"currentModeId":"default","availableModes":[{"id":"default"},{"id":"yolo"}]}}}"#,
        ),
        (
            true,
            r#"{"type":"user","message":{"role":"user","content":"hi"}}"#,
        ),
    ] {
        let o = if panel {
            b.on_panel_line(l, t(1))
        } else {
            b.on_agent_line(l, t(1))
        };
        check(&o, what, tally);
    }
    b
}

/// Runs one damaged line inside a running turn, then ends the turn by an agent exit.
fn run_one(from_panel: bool, line: &str) {
    let t = Duration::from_millis;
    let mut tally = Tally::default();
    let what = format!("line {line}");
    let mut b = running_turn(&what, &mut tally);
    assert_eq!(tally.results, 0, "{what}: a result before the damaged line");
    let o = if from_panel {
        b.on_panel_line(line, t(2))
    } else {
        b.on_agent_line(line, t(2))
    };
    check(&o, &what, &mut tally);
    let o = b.on_tick(t(100_000));
    check(&o, &what, &mut tally);
    let turn_running = b.turn_running();
    let o = b.on_agent_exit(Some(1), t(3));
    check(&o, &what, &mut tally);
    assert!(
        !b.turn_running(),
        "{what}: a turn still running after the agent exited"
    );
    let o = b.on_panel_eof(t(4));
    check(&o, &what, &mut tally);
    // a damaged line may have ended the turn itself (e.g. a prompt response);
    // either way the turn got exactly one result
    let results = tally.results;
    assert!(
        results == 1 || (!turn_running && results <= 1),
        "{what}: {results} results for one turn"
    );
    tally.assert_one_result_per_tool_use(&what);
}

/// An agent that opens calls with large contents and never finishes them:
/// past the budget the oldest are let go, each with its one error result,
/// while the newest keep running and get theirs at the turn's end.
fn running_calls_past_the_memory_budget_are_let_go_oldest_first() {
    let what = "calls of 9 MiB each";
    let mut tally = Tally::default();
    let mut b = running_turn(what, &mut tally);
    let text = "y".repeat(9 << 20);
    let mut let_go = Vec::new();
    for i in 1..=10 {
        let line = format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"S1","update":{{"sessionUpdate":"tool_call","toolCallId":"c{i}","title":"Read a.txt","kind":"read","status":"in_progress","rawInput":{{"path":"a.txt"}},"content":[{{"type":"content","content":{{"type":"text","text":"{text}"}}}}]}}}}}}"#
        );
        let o = b.on_agent_line(&line, Duration::from_millis(10 + i));
        check(&o, what, &mut tally);
        for l in &o.to_panel {
            let v: Value = serde_json::from_str(l).unwrap();
            let block = &v["message"]["content"][0];
            if block["type"] == "tool_result" {
                assert_eq!(block["content"], acp_bridge::LET_GO_TEXT);
                assert_eq!(block["is_error"], true);
                let_go.push(block["tool_use_id"].as_str().unwrap().to_string());
            }
        }
    }
    // 64 MiB hold 7 calls of 9 MiB: the three oldest went
    assert_eq!(let_go, ["c1", "c2", "c3"], "{what}");
    let o = b.on_agent_line(
        r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#,
        Duration::from_millis(100),
    );
    check(&o, what, &mut tally);
    assert_eq!(tally.results, 1, "{what}");
    assert_eq!(tally.tool_uses.len(), 10, "{what}");
    tally.assert_one_result_per_tool_use(what);
}

/// An agent that asks permission without end while the panel answers none:
/// 64 requests wait for the panel, every later one is answered cancelled at
/// once (its id echoed), and the turn still ends with one result.
fn permission_requests_past_the_pending_cap_are_answered_cancelled() {
    let what = "70 permission requests";
    let mut tally = Tally::default();
    let mut b = running_turn(what, &mut tally);
    let (mut asked, mut cancelled) = (0, Vec::new());
    for i in 100..170 {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{i},"method":"session/request_permission","params":{{"sessionId":"S1","toolCall":{{"toolCallId":"c{i}","title":"Read a.txt","kind":"read","rawInput":{{"path":"a.txt"}}}},"options":[{{"optionId":"y","kind":"allow_once","name":"Yes"}},{{"optionId":"n","kind":"reject_once","name":"No"}}]}}}}"#
        );
        let o = b.on_agent_line(&line, Duration::from_millis(10));
        check(&o, what, &mut tally);
        asked += o
            .to_panel
            .iter()
            .filter(|l| l.contains(r#""subtype":"can_use_tool""#))
            .count();
        for l in &o.to_agent {
            let v: Value = serde_json::from_str(l).unwrap();
            if v["result"]["outcome"]["outcome"] == "cancelled" {
                cancelled.push(v["id"].as_u64().unwrap());
            }
        }
    }
    assert_eq!(asked, 64, "{what}");
    assert_eq!(cancelled, (164..170).collect::<Vec<_>>(), "{what}");
    let o = b.on_agent_line(
        r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#,
        Duration::from_millis(100),
    );
    check(&o, what, &mut tally);
    assert_eq!(tally.results, 1, "{what}");
}

fn damaged_lines_never_panic_and_every_turn_gets_one_result() {
    let corpus = corpus();
    assert!(corpus.len() > 50, "corpus too small: {}", corpus.len());
    let mut runs = 0;
    for (from_panel, line) in &corpus {
        let bytes = line.len();
        for cut in [0, 1, bytes / 3, bytes / 2, bytes.saturating_sub(1)] {
            let mut end = cut.min(bytes);
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            run_one(*from_panel, &line[..end]);
            runs += 1;
        }
        if let Ok(v) = serde_json::from_str::<Value>(line) {
            for m in mutations(&v) {
                run_one(*from_panel, &m.to_string());
                runs += 1;
            }
        }
    }
    eprintln!("{runs} damaged lines fed");
}

/// One input of a case, in order.
enum Input {
    Panel(String),
    Agent(String),
    At(u64),
    Tick,
    AgentExit,
    PanelEof,
}

/// The inputs of every case in the case files (fragments inlined), with the
/// launch spec each case sets.
fn case_inputs() -> Vec<(String, Vec<Input>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/core");
    fn lines_of(dir: &Path, file: &str, out: &mut Vec<String>) {
        let text = std::fs::read_to_string(dir.join(file)).expect("case file");
        for l in text.lines() {
            match l.strip_prefix("use ") {
                Some(name) => lines_of(dir, &format!("_{}.steps", name.trim()), out),
                None => out.push(l.to_string()),
            }
        }
    }
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("case dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".cases"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for f in files {
        let mut lines = Vec::new();
        lines_of(&dir, &f, &mut lines);
        for l in lines {
            if let Some(name) = l.strip_prefix("case: ") {
                cases.push((format!("{f}: {name}"), Vec::new()));
                continue;
            }
            let Some((_, inputs)) = cases.last_mut() else {
                continue;
            };
            let input = if let Some(r) = l.strip_prefix("panel> ") {
                Input::Panel(r.to_string())
            } else if let Some(r) = l.strip_prefix("agent> ") {
                Input::Agent(r.to_string())
            } else if let Some(r) = l.strip_prefix("at ") {
                Input::At(r.trim().parse().unwrap_or(0))
            } else if l == "tick" {
                Input::Tick
            } else if l.starts_with("agent-exit") || l == "agent-killed" {
                Input::AgentExit
            } else if l == "panel-eof" {
                Input::PanelEof
            } else {
                continue;
            };
            inputs.push(input);
        }
    }
    cases
}

/// Replays a case's inputs with input `damaged` replaced by `line`, then ends
/// the session; checks the invariants that hold whatever came in.
fn run_sequence(name: &str, inputs: &[Input], damaged: usize, line: &str) {
    let mut b = Bridge::new(spec(), Box::new(CounterIds::default()));
    let mut tally = Tally::default();
    let mut now = Duration::ZERO;
    let what = format!("{name}, input {damaged} as {line}");
    let mut prompts = 0;
    for (i, input) in inputs.iter().enumerate() {
        let o = match input {
            Input::Panel(l) | Input::Agent(l) => {
                let l = if i == damaged { line } else { l.as_str() };
                if matches!(input, Input::Panel(_)) {
                    if l.contains(r#""type":"user""#) {
                        prompts += 1;
                    }
                    b.on_panel_line(l, now)
                } else {
                    b.on_agent_line(l, now)
                }
            }
            Input::At(ms) => {
                now = Duration::from_millis(*ms).max(now);
                continue;
            }
            Input::Tick => b.on_tick(now),
            Input::AgentExit => b.on_agent_exit(Some(1), now),
            Input::PanelEof => b.on_panel_eof(now),
        };
        check(&o, &what, &mut tally);
    }
    let o = b.on_tick(now + Duration::from_secs(3600));
    check(&o, &what, &mut tally);
    let o = b.on_agent_exit(Some(1), now);
    check(&o, &what, &mut tally);
    let o = b.on_panel_eof(now);
    check(&o, &what, &mut tally);
    assert!(
        !b.turn_running(),
        "{what}: a turn still running after the agent exited"
    );
    // one result per turn: at most one per prompt, plus one for a failed handshake
    assert!(
        tally.results <= prompts + 1,
        "{what}: {} results for {prompts} prompts",
        tally.results
    );
    tally.assert_one_result_per_tool_use(&what);
}

fn damaged_lines_inside_whole_cases_keep_the_invariants() {
    let cases = case_inputs();
    assert!(cases.len() > 50, "too few cases: {}", cases.len());
    let mut runs = 0;
    for (name, inputs) in &cases {
        for (i, input) in inputs.iter().enumerate() {
            let (Input::Panel(l) | Input::Agent(l)) = input else {
                continue;
            };
            let mut half = l.len() / 2;
            while !l.is_char_boundary(half) {
                half -= 1;
            }
            let mut damaged = vec![l[..half].to_string()];
            if let Ok(v) = serde_json::from_str::<Value>(l) {
                // a handful of type swaps spread over the line
                let all = mutations(&v);
                let step = (all.len() / 4).max(1);
                damaged.extend(all.iter().step_by(step).map(Value::to_string));
            }
            for d in damaged {
                run_sequence(name, inputs, i, &d);
                runs += 1;
            }
        }
        // and the case as written
        run_sequence(name, inputs, usize::MAX, "");
        runs += 1;
    }
    eprintln!("{runs} damaged case runs");
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(core_robustness: running_calls_past_the_memory_budget_are_let_go_oldest_first, permission_requests_past_the_pending_cap_are_answered_cancelled, damaged_lines_never_panic_and_every_turn_gets_one_result, damaged_lines_inside_whole_cases_keep_the_invariants)
}
