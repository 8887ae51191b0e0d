//! Robustness of the bridge core against damaged input: every agent and
//! panel line from the data-driven cases (`tests/data/core/`) is fed after a
//! handshake and a prompt, truncated at several points and with each of its
//! JSON values replaced by values of other types. The core must never panic,
//! must emit only JSON lines, and must end the running turn with exactly one
//! `result` when the agent then exits.

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
        custom_instructions: Some("ci".into()),
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

fn check(out: &Output, what: &str, results: &mut usize) {
    for l in &out.to_panel {
        let v: Value = serde_json::from_str(l)
            .unwrap_or_else(|e| panic!("{what}: non-JSON panel line {l}: {e}"));
        if v["type"] == "result" {
            *results += 1;
        }
    }
    for l in &out.to_agent {
        serde_json::from_str::<Value>(l)
            .unwrap_or_else(|e| panic!("{what}: non-JSON agent line {l}: {e}"));
    }
}

/// Runs one damaged line inside a running turn, then ends the turn by an agent exit.
fn run_one(from_panel: bool, line: &str) {
    let mut b = Bridge::new(spec(), Box::new(CounterIds::default()));
    let t = Duration::from_millis;
    let mut results = 0;
    let what = format!("line {line}");
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
        check(&o, &what, &mut results);
    }
    assert_eq!(results, 0, "{what}: a result before the damaged line");
    let o = if from_panel {
        b.on_panel_line(line, t(2))
    } else {
        b.on_agent_line(line, t(2))
    };
    check(&o, &what, &mut results);
    let o = b.on_tick(t(100_000));
    check(&o, &what, &mut results);
    let turn_running = b.turn_running();
    let o = b.on_agent_exit(Some(1), t(3));
    check(&o, &what, &mut results);
    assert!(
        !b.turn_running(),
        "{what}: a turn still running after the agent exited"
    );
    let o = b.on_panel_eof(t(4));
    check(&o, &what, &mut results);
    // a damaged line may have ended the turn itself (e.g. a prompt response);
    // either way the turn got exactly one result
    assert!(
        results == 1 || (!turn_running && results <= 1),
        "{what}: {results} results for one turn"
    );
}

#[test]
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
