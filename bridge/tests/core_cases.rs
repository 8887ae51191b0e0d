//! Data-driven tests of the bridge core: each case in `tests/data/core/*.cases`
//! feeds panel and agent lines into a [`Bridge`] (with `CounterIds` and a
//! fixed clock) and compares every line that comes out.
//!
//! Case syntax, one directive per line (`#` comments, blank lines ignored):
//!
//! | line | meaning |
//! |---|---|
//! | `case: <name>` | starts a case (fresh bridge, clock at 0 ms) |
//! | `spec: {json}` | launch spec fields (`cwd`, `resume_session_id`, `model`, `permission_mode`, `custom_instructions`, `auth_method`, `mcp: {name,url,authorization}` or `null`) |
//! | `use <name>` | inlines the steps of `_<name>.steps` |
//! | `at <ms>` | sets the clock |
//! | `panel> {json}` / `agent> <line>` | feeds one line (any text: malformed lines too) |
//! | `agent-exit <code>` / `agent-killed` / `panel-eof` / `tick` | the other inputs |
//! | `to-agent: {json}` | the next line sent to the agent (subset match) |
//! | `to-panel: {json}` | the next line sent to the panel (subset match) |
//! | `to-panel=: {json}` | the next line sent to the panel (exact match) |
//! | `diag: <text>` | some diagnostic of this input contains the text |
//! | `no-diag` | this input gave no diagnostic |
//! | `close-stdin` | this input closes the agent's stdin |
//! | `deadline: <ms>` / `deadline: none` | `next_deadline()` after this input |
//!
//! Expectations belong to the input above them, and each input's lines must
//! all be expected: an extra or missing line fails the case. "Subset match"
//! means every key given must be present with an equal value (recursively;
//! arrays must have the same length); `"<any>"` matches any value and
//! `"<contains:TEXT>"` any string containing TEXT.
//! `CORE_CASES_DUMP=1` prints every line each input produced.

use std::path::{Path, PathBuf};
use std::time::Duration;

use acp_bridge::{Bridge, CounterIds, LaunchSpec, McpEndpoint, Output};
use serde_json::Value;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/core")
}

#[derive(Debug, Clone)]
enum Step {
    Spec(Value),
    At(u64),
    Panel(String),
    Agent(String),
    AgentExit(Option<i32>),
    PanelEof,
    Tick,
    ToAgent(Value),
    ToPanel(Value, bool),
    Diag(String),
    NoDiag,
    Close,
    Deadline(Option<u64>),
}

struct Case {
    name: String,
    origin: String,
    steps: Vec<(usize, String, Step)>,
}

fn parse_json(text: &str, at: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| format!("{at}: bad JSON ({e})"))
}

fn parse_steps(
    file: &Path,
    cases: &mut Vec<Case>,
    current: &mut Option<Case>,
) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let fname = file.file_name().unwrap().to_string_lossy().to_string();
    for (i, raw) in text.lines().enumerate() {
        let at = format!("{fname}:{}", i + 1);
        let line = raw.trim_end();
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix("case: ") {
            if let Some(c) = current.take() {
                cases.push(c);
            }
            *current = Some(Case {
                name: name.trim().to_string(),
                origin: at,
                steps: vec![],
            });
            continue;
        }
        if let Some(name) = line.strip_prefix("use ") {
            parse_steps(
                &data_dir().join(format!("_{}.steps", name.trim())),
                cases,
                current,
            )?;
            continue;
        }
        let step = if let Some(r) = line.strip_prefix("spec: ") {
            Step::Spec(parse_json(r, &at)?)
        } else if let Some(r) = line.strip_prefix("at ") {
            Step::At(r.trim().parse().map_err(|e| format!("{at}: {e}"))?)
        } else if let Some(r) = line.strip_prefix("panel> ") {
            Step::Panel(r.to_string())
        } else if let Some(r) = line.strip_prefix("agent> ") {
            Step::Agent(r.to_string())
        } else if let Some(r) = line.strip_prefix("agent-exit ") {
            Step::AgentExit(Some(r.trim().parse().map_err(|e| format!("{at}: {e}"))?))
        } else if line == "agent-killed" {
            Step::AgentExit(None)
        } else if line == "panel-eof" {
            Step::PanelEof
        } else if line == "tick" {
            Step::Tick
        } else if let Some(r) = line.strip_prefix("to-agent: ") {
            Step::ToAgent(parse_json(r, &at)?)
        } else if let Some(r) = line.strip_prefix("to-panel: ") {
            Step::ToPanel(parse_json(r, &at)?, false)
        } else if let Some(r) = line.strip_prefix("to-panel=: ") {
            Step::ToPanel(parse_json(r, &at)?, true)
        } else if let Some(r) = line.strip_prefix("diag: ") {
            Step::Diag(r.to_string())
        } else if line == "no-diag" {
            Step::NoDiag
        } else if line == "close-stdin" {
            Step::Close
        } else if let Some(r) = line.strip_prefix("deadline: ") {
            Step::Deadline(if r.trim() == "none" {
                None
            } else {
                Some(r.trim().parse().map_err(|e| format!("{at}: {e}"))?)
            })
        } else {
            return Err(format!("{at}: unknown directive: {line}"));
        };
        match current.as_mut() {
            Some(c) => c.steps.push((i + 1, at, step)),
            None => return Err(format!("{at}: step before any `case:`")),
        }
    }
    Ok(())
}

fn load(file: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut current = None;
    if let Err(e) = parse_steps(&data_dir().join(file), &mut cases, &mut current) {
        panic!("{e}");
    }
    cases.extend(current);
    cases
}

/// Subset match: `want`'s keys must be in `got` with matching values.
fn matches(want: &Value, got: &Value) -> bool {
    match (want, got) {
        (Value::String(s), _) if s == "<any>" => true,
        (Value::String(s), Value::String(g)) if s.starts_with("<contains:") && s.ends_with('>') => {
            g.contains(&s["<contains:".len()..s.len() - 1])
        }
        (Value::Object(w), Value::Object(g)) => w
            .iter()
            .all(|(k, v)| g.get(k).is_some_and(|gv| matches(v, gv))),
        (Value::Array(w), Value::Array(g)) => {
            w.len() == g.len() && w.iter().zip(g).all(|(a, b)| matches(a, b))
        }
        (a, b) => a == b,
    }
}

fn spec_from(v: &Value) -> LaunchSpec {
    let s = |k: &str| v[k].as_str().map(str::to_string);
    let mcp = match v.get("mcp") {
        Some(Value::Null) => None,
        Some(m) => Some(McpEndpoint {
            name: m["name"].as_str().unwrap_or("unity-ops").into(),
            url: m["url"].as_str().unwrap_or("").into(),
            authorization: m["authorization"].as_str().map(Into::into),
        }),
        None => Some(McpEndpoint {
            name: "unity-ops".into(),
            url: "http://127.0.0.1:7777/mcp".into(),
            authorization: Some("Bearer tok".into()),
        }),
    };
    LaunchSpec {
        resume_session_id: s("resume_session_id"),
        model: s("model"),
        permission_mode: s("permission_mode"),
        custom_instructions: s("custom_instructions"),
        mcp,
        cwd: s("cwd").unwrap_or_else(|| "/project".into()),
        auth_method: s("auth_method"),
        script_gate: v["script_gate"].as_bool().unwrap_or(false),
        ..LaunchSpec::default()
    }
}

fn run_case(case: &Case) -> Result<(), String> {
    let mut spec = Value::Object(Default::default());
    let mut bridge: Option<Bridge> = None;
    let mut now = Duration::ZERO;
    // the output of the latest input, consumed by the expectations after it
    let mut out: Option<(String, Output, usize, usize, bool)> = None;
    let finish = |out: &Option<(String, Output, usize, usize, bool)>| -> Result<(), String> {
        if std::env::var_os("CORE_CASES_DUMP").is_some() {
            return Ok(()); // dumping: show everything, check only what is written
        }
        if let Some((at, o, na, np, close_checked)) = out {
            if *na < o.to_agent.len() {
                return Err(format!(
                    "{at}: unexpected line to the agent: {}",
                    o.to_agent[*na]
                ));
            }
            if *np < o.to_panel.len() {
                return Err(format!(
                    "{at}: unexpected line to the panel: {}",
                    o.to_panel[*np]
                ));
            }
            if o.close_agent_stdin && !close_checked {
                return Err(format!("{at}: unexpected close of the agent's stdin"));
            }
        }
        Ok(())
    };
    for (_, at, step) in &case.steps {
        let input = matches!(
            step,
            Step::Panel(_) | Step::Agent(_) | Step::AgentExit(_) | Step::PanelEof | Step::Tick
        );
        if input {
            finish(&out)?;
            let b = bridge.get_or_insert_with(|| {
                Bridge::new(spec_from(&spec), Box::new(CounterIds::default()))
            });
            let o = match step {
                Step::Panel(l) => b.on_panel_line(l, now),
                Step::Agent(l) => b.on_agent_line(l, now),
                Step::AgentExit(c) => b.on_agent_exit(*c, now),
                Step::PanelEof => b.on_panel_eof(now),
                Step::Tick => b.on_tick(now),
                _ => unreachable!(),
            };
            if std::env::var_os("CORE_CASES_DUMP").is_some() {
                eprintln!("# {at}");
                o.to_agent.iter().for_each(|l| eprintln!("to-agent: {l}"));
                o.to_panel.iter().for_each(|l| eprintln!("to-panel=: {l}"));
                o.diagnostics.iter().for_each(|l| eprintln!("diag: {l}"));
            }
            out = Some((at.clone(), o, 0, 0, false));
            continue;
        }
        match step {
            Step::Spec(v) => spec = v.clone(),
            Step::At(ms) => now = Duration::from_millis(*ms),
            Step::Deadline(want) => {
                let got = bridge
                    .as_ref()
                    .and_then(|b| b.next_deadline())
                    .map(|d| d.as_millis() as u64);
                if got != *want {
                    return Err(format!("{at}: next_deadline is {got:?}, expected {want:?}"));
                }
            }
            _ => {
                let Some((_, o, na, np, close)) = out.as_mut() else {
                    return Err(format!("{at}: expectation before any input"));
                };
                match step {
                    Step::ToAgent(want) => {
                        let Some(line) = o.to_agent.get(*na) else {
                            return Err(format!(
                                "{at}: expected a line to the agent, got none; wanted {want}"
                            ));
                        };
                        let got: Value = serde_json::from_str(line)
                            .map_err(|e| format!("{at}: bridge sent non-JSON {line}: {e}"))?;
                        if !matches(want, &got) {
                            return Err(format!(
                                "{at}: line to the agent differs\n  want: {want}\n  got:  {got}"
                            ));
                        }
                        *na += 1;
                    }
                    Step::ToPanel(want, exact) => {
                        let Some(line) = o.to_panel.get(*np) else {
                            return Err(format!(
                                "{at}: expected a line to the panel, got none; wanted {want}"
                            ));
                        };
                        let got: Value = serde_json::from_str(line)
                            .map_err(|e| format!("{at}: bridge sent non-JSON {line}: {e}"))?;
                        let ok = if *exact {
                            *want == got
                        } else {
                            matches(want, &got)
                        };
                        if !ok {
                            return Err(format!(
                                "{at}: line to the panel differs\n  want: {want}\n  got:  {got}"
                            ));
                        }
                        *np += 1;
                    }
                    Step::Diag(text) => {
                        if !o.diagnostics.iter().any(|d| d.contains(text.as_str())) {
                            return Err(format!(
                                "{at}: no diagnostic contains {text:?}; got {:?}",
                                o.diagnostics
                            ));
                        }
                    }
                    Step::NoDiag => {
                        if !o.diagnostics.is_empty() {
                            return Err(format!(
                                "{at}: expected no diagnostic, got {:?}",
                                o.diagnostics
                            ));
                        }
                    }
                    Step::Close => {
                        if !o.close_agent_stdin {
                            return Err(format!("{at}: expected the agent's stdin to be closed"));
                        }
                        *close = true;
                    }
                    _ => unreachable!(),
                }
            }
        }
    }
    finish(&out)
}

fn run_file(file: &str) {
    let cases = load(file);
    assert!(!cases.is_empty(), "{file} has no cases");
    let mut failures = Vec::new();
    for case in &cases {
        if let Err(e) = run_case(case) {
            failures.push(format!("case {:?} ({}):\n{e}", case.name, case.origin));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases in {file} failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
    eprintln!("{file}: {} cases passed", cases.len());
}

#[test]
fn panel_to_agent_table() {
    run_file("panel_to_agent.cases");
}

#[test]
fn agent_to_panel_table() {
    run_file("agent_to_panel.cases");
}

#[test]
fn capability_degradation_table() {
    run_file("degradation.cases");
}

#[test]
fn tolerance_of_unknown_input() {
    run_file("tolerance.cases");
}

#[test]
fn bad_input_never_panics_hangs_or_loses_a_turn() {
    run_file("bad_input.cases");
}

#[test]
fn tool_identity_from_where_each_agent_puts_it() {
    run_file("tool_identity.cases");
}

#[test]
fn script_gate_in_the_bridge() {
    run_file("script_gate.cases");
}

#[test]
fn real_agent_flows() {
    run_file("agent_flows.cases");
}

#[test]
fn emitted_lines_have_claudes_exact_shapes() {
    run_file("shapes.cases");
}
