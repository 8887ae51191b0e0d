//! Data-driven tests of the bridge core: each case in `tests/data/core/*.cases`
//! feeds panel and agent lines into a [`Bridge`] (with `CounterIds` and a
//! fixed clock) and compares every line that comes out.
//!
//! Case syntax, one directive per line (`#` comments, blank lines ignored):
//!
//! | line | meaning |
//! |---|---|
//! | `case: <name>` | starts a case (fresh bridge, clock at 0 ms) |
//! | `spec: {json}` | launch spec fields (`cwd`, `resume_session_id`, `model`, `permission_mode`, `system_prompt`, `append_system_prompt`, `auth_method`, `cancel_grace_ms`, `mcp: {name,url,authorization}` or `null`, `mcp_servers: {<--mcp-config set>}` (sets `mcp` to its pick), `await_initialize`, `additional_directories: [..]`, `mcp_unadvertised`, `config_options: [[id, value], ..]`, `acp_protocol: "1"|"2"|"auto"`, `session_state_lines: "host_only"|"emitted"`) |
//! | `use <name>` | inlines the steps of `_<name>.steps` |
//! | `at <ms>` | sets the clock |
//! | `panel> {json}` / `agent> <line>` | feeds one line (any text: malformed lines too) |
//! | `agent-exit <code>` / `agent-killed` / `agent-stdout-closed` / `panel-eof` / `tick` | the other inputs |
//! | `agent-over-cap <bytes>` / `panel-over-cap <bytes>` | a line from that side passed the host's line cap |
//! | `server-tools <server> <tool>...` | the host hands the core what MCP server `<server>` lists (`set_server_tools`) |
//! | `to-agent: {json}` | the next line sent to the agent (subset match) |
//! | `to-agent=: {json}` | the next line sent to the agent (exact match) |
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
//! `"<contains:TEXT>"` any string containing TEXT, `"<starts:TEXT>"` any
//! string starting with it.
//!
//! Each case is one trial, `<file stem>/<case name>`, so one case runs alone
//! (`cargo test -p acp-bridge --test it -- tool_identity/`) and a new
//! `.cases` file needs no registration. `CORE_CASES_DUMP=1` prints every line
//! each input produced. `CORE_CASES_BLESS=1` rewrites, for each input whose
//! expectations fail, those expectations with what the bridge emitted
//! (`to-agent:`, exact `to-panel=:`, `close-stdin`, every `diag:`, and the
//! `deadline:` when the block had one); passing expectations (hand-written
//! subset matches) are kept. Read `git diff tests/data/core` afterwards.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use acp_bridge::{Bridge, CounterIds, LaunchSpec, McpEndpoint, Output, acp::mcp_servers};
use libtest_mimic::{Failed, Trial};
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
    AgentStdoutClosed,
    AgentOverCap(usize),
    PanelOverCap(usize),
    PanelEof,
    Tick,
    ServerTools(String, Vec<String>),
    ToAgent(Value, bool),
    ToPanel(Value, bool),
    Diag(String),
    NoDiag,
    Close,
    Deadline(Option<u64>),
}

/// Where a step was written: its file and 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    file: PathBuf,
    line: usize,
    label: String,
}

struct Case {
    name: String,
    origin: String,
    steps: Vec<(Origin, Step)>,
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
        } else if line == "agent-stdout-closed" {
            Step::AgentStdoutClosed
        } else if let Some(r) = line.strip_prefix("agent-over-cap ") {
            Step::AgentOverCap(r.trim().parse().map_err(|e| format!("{at}: {e}"))?)
        } else if let Some(r) = line.strip_prefix("panel-over-cap ") {
            Step::PanelOverCap(r.trim().parse().map_err(|e| format!("{at}: {e}"))?)
        } else if line == "panel-eof" {
            Step::PanelEof
        } else if let Some(r) = line.strip_prefix("server-tools ") {
            let mut words = r.split_whitespace().map(str::to_string);
            let server = words.next().unwrap_or_default();
            Step::ServerTools(server, words.collect())
        } else if line == "tick" {
            Step::Tick
        } else if let Some(r) = line.strip_prefix("to-agent: ") {
            Step::ToAgent(parse_json(r, &at)?, false)
        } else if let Some(r) = line.strip_prefix("to-agent=: ") {
            Step::ToAgent(parse_json(r, &at)?, true)
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
        let origin = Origin {
            file: file.to_path_buf(),
            line: i + 1,
            label: at.clone(),
        };
        match current.as_mut() {
            Some(c) => c.steps.push((origin, step)),
            None => return Err(format!("{at}: step before any `case:`")),
        }
    }
    Ok(())
}

fn load(file: &Path) -> Result<Vec<Case>, String> {
    let mut cases = Vec::new();
    let mut current = None;
    parse_steps(file, &mut cases, &mut current)?;
    cases.extend(current);
    Ok(cases)
}

/// Subset match: `want`'s keys must be in `got` with matching values.
fn matches(want: &Value, got: &Value) -> bool {
    match (want, got) {
        (Value::String(s), _) if s == "<any>" => true,
        (Value::String(s), Value::String(g)) if s.starts_with("<contains:") && s.ends_with('>') => {
            g.contains(&s["<contains:".len()..s.len() - 1])
        }
        (Value::String(s), Value::String(g)) if s.starts_with("<starts:") && s.ends_with('>') => {
            g.starts_with(&s["<starts:".len()..s.len() - 1])
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
    // `mcp_servers`: the launch's --mcp-config set, from which the host picks `mcp`
    let mcp_servers = match v.get("mcp_servers") {
        Some(set) => mcp_servers::check(set, "mcp_servers")
            .expect("spec mcp_servers")
            .clone(),
        None => Default::default(),
    };
    let mcp = if mcp_servers.is_empty() {
        mcp
    } else {
        mcp_servers::pick(&mcp_servers).endpoint
    };
    LaunchSpec {
        resume_session_id: s("resume_session_id"),
        model: s("model"),
        permission_mode: s("permission_mode"),
        system_prompt: s("system_prompt"),
        append_system_prompt: s("append_system_prompt"),
        mcp,
        cwd: s("cwd").unwrap_or_else(|| "/project".into()),
        auth_method: s("auth_method"),
        script_gate: v["script_gate"].as_bool().unwrap_or(false),
        cancel_grace: v["cancel_grace_ms"].as_u64().map(Duration::from_millis),
        mcp_servers,
        await_initialize: v["await_initialize"].as_bool().unwrap_or(false),
        mcp_unadvertised: v["mcp_unadvertised"].as_bool().unwrap_or(false),
        session_state_lines: match v["session_state_lines"].as_str() {
            Some("host_only") => acp_bridge::SessionStateLines::HostOnly,
            Some("emitted") => acp_bridge::SessionStateLines::Emitted,
            _ => acp_bridge::SessionStateLines::Off,
        },
        acp_protocol: v["acp_protocol"]
            .as_str()
            .map(|p| acp_bridge::acp::revision::Offer::parse(p).expect("spec acp_protocol"))
            .unwrap_or_default(),
        config_options: v["config_options"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|pair| Some((pair[0].as_str()?.to_string(), pair[1].as_str()?.to_string())))
            .collect(),
        additional_directories: v["additional_directories"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| d.as_str().map(str::to_string))
            .collect(),
        ..LaunchSpec::default()
    }
}

/// One input and what it produced, with the expectations written under it.
struct Block {
    input: Origin,
    output: Output,
    deadline: Option<u64>,
    expectations: Vec<Origin>,
    had_deadline: bool,
    had_no_diag: bool,
    /// The first expectation of this block that failed.
    error: Option<String>,
}

fn is_expectation(step: &Step) -> bool {
    matches!(
        step,
        Step::ToAgent(..)
            | Step::ToPanel(..)
            | Step::Diag(_)
            | Step::NoDiag
            | Step::Close
            | Step::Deadline(_)
    )
}

/// Runs a case to its end; every input's block says whether its
/// expectations held. An expectation before any input is an error.
fn run_case(case: &Case) -> Result<Vec<Block>, String> {
    let mut spec = Value::Object(Default::default());
    let mut bridge: Option<Bridge> = None;
    let mut now = Duration::ZERO;
    let mut blocks: Vec<Block> = Vec::new();
    // lines of the latest output consumed by expectations so far
    let (mut na, mut np, mut close_checked) = (0usize, 0usize, false);
    let dump = std::env::var_os("CORE_CASES_DUMP").is_some();
    let finish = |b: &mut Block, na: usize, np: usize, close_checked: bool| {
        if dump || b.error.is_some() {
            return; // dumping: show everything, check only what is written
        }
        let o = &b.output;
        let at = &b.input.label;
        b.error = if na < o.to_agent.len() {
            Some(format!(
                "{at}: unexpected line to the agent: {}",
                o.to_agent[na]
            ))
        } else if np < o.to_panel.len() {
            Some(format!(
                "{at}: unexpected line to the panel: {}",
                o.to_panel[np]
            ))
        } else if o.close_agent_stdin && !close_checked {
            Some(format!("{at}: unexpected close of the agent's stdin"))
        } else {
            None
        };
    };
    for (origin, step) in &case.steps {
        let at = &origin.label;
        let input = matches!(
            step,
            Step::Panel(_)
                | Step::Agent(_)
                | Step::AgentExit(_)
                | Step::AgentStdoutClosed
                | Step::AgentOverCap(_)
                | Step::PanelOverCap(_)
                | Step::PanelEof
                | Step::Tick
                | Step::ServerTools(..)
        );
        if input {
            if let Some(b) = blocks.last_mut() {
                finish(b, na, np, close_checked);
            }
            let b = bridge.get_or_insert_with(|| {
                Bridge::new(spec_from(&spec), Box::new(CounterIds::default()))
            });
            let o = match step {
                Step::Panel(l) => b.on_panel_line(l, now),
                Step::Agent(l) => b.on_agent_line(l, now),
                Step::AgentExit(c) => b.on_agent_exit(*c, now),
                Step::AgentStdoutClosed => b.on_agent_stdout_closed(now),
                Step::AgentOverCap(cap) => b.on_agent_line_over_cap(*cap, now),
                Step::PanelOverCap(cap) => b.on_panel_line_over_cap(*cap, now),
                Step::PanelEof => b.on_panel_eof(now),
                Step::Tick => b.on_tick(now),
                Step::ServerTools(server, tools) => b.set_server_tools(server, tools.clone()),
                _ => unreachable!(),
            };
            if dump {
                eprintln!("# {at}");
                o.to_agent.iter().for_each(|l| eprintln!("to-agent: {l}"));
                o.to_panel.iter().for_each(|l| eprintln!("to-panel=: {l}"));
                o.diagnostics.iter().for_each(|l| eprintln!("diag: {l}"));
            }
            blocks.push(Block {
                input: origin.clone(),
                output: o,
                deadline: b.next_deadline().map(|d| d.as_millis() as u64),
                expectations: Vec::new(),
                had_deadline: false,
                had_no_diag: false,
                error: None,
            });
            (na, np, close_checked) = (0, 0, false);
            continue;
        }
        match step {
            Step::Spec(v) => {
                spec = v.clone();
                continue;
            }
            Step::At(ms) => {
                now = Duration::from_millis(*ms);
                continue;
            }
            _ => {}
        }
        debug_assert!(is_expectation(step));
        let Some(b) = blocks.last_mut() else {
            return Err(format!("{at}: expectation before any input"));
        };
        b.expectations.push(origin.clone());
        if b.error.is_some() {
            continue;
        }
        let o = &b.output;
        let failed = match step {
            Step::Deadline(want) => {
                b.had_deadline = true;
                let got = bridge
                    .as_ref()
                    .and_then(|b| b.next_deadline())
                    .map(|d| d.as_millis() as u64);
                (got != *want).then(|| format!("{at}: next_deadline is {got:?}, expected {want:?}"))
            }
            Step::ToAgent(want, exact) => match o.to_agent.get(na) {
                None => Some(format!(
                    "{at}: expected a line to the agent, got none; wanted {want}"
                )),
                Some(line) => match serde_json::from_str::<Value>(line) {
                    Err(e) => Some(format!("{at}: bridge sent non-JSON {line}: {e}")),
                    Ok(got)
                        if !(if *exact {
                            *want == got
                        } else {
                            matches(want, &got)
                        }) =>
                    {
                        Some(format!(
                            "{at}: line to the agent differs\n  want: {want}\n  got:  {got}"
                        ))
                    }
                    Ok(_) => {
                        na += 1;
                        None
                    }
                },
            },
            Step::ToPanel(want, exact) => match o.to_panel.get(np) {
                None => Some(format!(
                    "{at}: expected a line to the panel, got none; wanted {want}"
                )),
                Some(line) => match serde_json::from_str::<Value>(line) {
                    Err(e) => Some(format!("{at}: bridge sent non-JSON {line}: {e}")),
                    Ok(got) => {
                        let ok = if *exact {
                            *want == got
                        } else {
                            matches(want, &got)
                        };
                        if ok {
                            np += 1;
                            None
                        } else {
                            Some(format!(
                                "{at}: line to the panel differs\n  want: {want}\n  got:  {got}"
                            ))
                        }
                    }
                },
            },
            Step::Diag(text) => {
                (!o.diagnostics.iter().any(|d| d.contains(text.as_str()))).then(|| {
                    format!(
                        "{at}: no diagnostic contains {text:?}; got {:?}",
                        o.diagnostics
                    )
                })
            }
            Step::NoDiag => {
                b.had_no_diag = true;
                (!o.diagnostics.is_empty())
                    .then(|| format!("{at}: expected no diagnostic, got {:?}", o.diagnostics))
            }
            Step::Close => {
                close_checked = true;
                (!o.close_agent_stdin)
                    .then(|| format!("{at}: expected the agent's stdin to be closed"))
            }
            _ => unreachable!(),
        };
        b.error = failed;
    }
    if let Some(b) = blocks.last_mut() {
        finish(b, na, np, close_checked);
    }
    Ok(blocks)
}

/// The expectation lines a bless writes for a block: what the input produced.
fn blessed_lines(b: &Block) -> Vec<String> {
    let mut out: Vec<String> = b
        .output
        .to_agent
        .iter()
        .map(|l| format!("to-agent: {l}"))
        .collect();
    out.extend(b.output.to_panel.iter().map(|l| format!("to-panel=: {l}")));
    if b.output.close_agent_stdin {
        out.push("close-stdin".into());
    }
    out.extend(b.output.diagnostics.iter().map(|d| format!("diag: {d}")));
    if b.output.diagnostics.is_empty() && b.had_no_diag {
        out.push("no-diag".into());
    }
    if b.had_deadline {
        out.push(match b.deadline {
            Some(ms) => format!("deadline: {ms}"),
            None => "deadline: none".into(),
        });
    }
    out
}

/// Blessing edits: file -> (line -> replacement), where replacing the first
/// expectation line inserts the block and the others are dropped. Line
/// numbers are those of the files as loaded.
type Edits = BTreeMap<PathBuf, BTreeMap<usize, Option<Vec<String>>>>;

/// Every trial's edits, written once after all trials ran: trials run in
/// parallel and several may bless the same file, so each writing the file
/// at once would race and shift the line numbers the others hold.
static PENDING_BLESS: Mutex<Edits> = Mutex::new(BTreeMap::new());

/// Queues the failing blocks' new expectations. A block whose input or
/// expectations live in a shared `_*.steps` file is not rewritten (other
/// cases use those lines): that is an error to fix by hand.
fn bless(blocks: &[Block]) -> Result<(), String> {
    let mut edits = Edits::new();
    for b in blocks.iter().filter(|b| b.error.is_some()) {
        if b.expectations.iter().any(|e| e.file != b.input.file)
            || b.input
                .file
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('_'))
        {
            return Err(format!(
                "{}: cannot bless expectations in a shared steps file; edit it by hand",
                b.input.label
            ));
        }
        let file = edits.entry(b.input.file.clone()).or_default();
        let lines = blessed_lines(b);
        match b.expectations.split_first() {
            // no expectation written: insert after the input line
            None => {
                let mut with_input = vec![String::new()]; // placeholder for the input itself
                with_input.extend(lines);
                file.insert(b.input.line, Some(with_input));
            }
            Some((first, rest)) => {
                file.insert(first.line, Some(lines));
                for e in rest {
                    file.insert(e.line, None);
                }
            }
        }
    }
    let mut pending = PENDING_BLESS.lock().unwrap_or_else(|e| e.into_inner());
    for (path, file) in edits {
        pending.entry(path).or_default().extend(file);
    }
    Ok(())
}

/// Writes the queued edits, each file rewritten once from its loaded text.
fn write_blessed(edits: Edits) -> Result<(), String> {
    for (path, file_edits) in edits {
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut out = String::new();
        for (i, line) in text.lines().enumerate() {
            match file_edits.get(&(i + 1)) {
                None => {
                    out.push_str(line);
                    out.push('\n');
                }
                Some(None) => {}
                Some(Some(new)) => {
                    for (k, l) in new.iter().enumerate() {
                        // an empty first entry stands for the input line, kept
                        let l = if k == 0 && l.is_empty() {
                            line
                        } else {
                            l.as_str()
                        };
                        out.push_str(l);
                        out.push('\n');
                    }
                }
            }
        }
        std::fs::write(&path, out).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// One case as a trial: run it, bless it when asked, report every failing
/// input's first mismatch.
fn case_trial(case: &Case) -> Result<(), Failed> {
    let blocks =
        run_case(case).map_err(|e| format!("case {:?} ({}): {e}", case.name, case.origin))?;
    let failures: Vec<&str> = blocks.iter().filter_map(|b| b.error.as_deref()).collect();
    if failures.is_empty() {
        return Ok(());
    }
    if std::env::var_os("CORE_CASES_BLESS").is_some() {
        bless(&blocks)?;
        eprintln!(
            "blessed {} ({} input(s) to rewrite after the run)",
            case.name,
            failures.len()
        );
        return Ok(());
    }
    Err(format!(
        "case {:?} ({}):\n{}\n(bless with CORE_CASES_BLESS=1 and review `git diff tests/data/core`)",
        case.name,
        case.origin,
        failures.join("\n")
    )
    .into())
}

/// One trial per case of every `.cases` file.
pub(crate) fn trials() -> Vec<Trial> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .expect("tests/data/core")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cases"))
        .collect();
    files.sort();
    let mut trials = Vec::new();
    for file in files {
        let stem = file.file_stem().unwrap().to_string_lossy().to_string();
        match load(&file) {
            Err(e) => trials.push(Trial::test(format!("{stem}/(load)"), move || Err(e.into()))),
            Ok(cases) if cases.is_empty() => trials
                .push(Trial::test(format!("{stem}/(load)"), move || {
                    Err(format!("{stem}.cases has no cases").into())
                })),
            Ok(cases) => {
                let mut seen = HashSet::new();
                for case in cases {
                    let name = format!("{stem}/{}", case.name);
                    if !seen.insert(case.name.clone()) {
                        let origin = case.origin.clone();
                        trials.push(Trial::test(format!("{name} (duplicate)"), move || {
                            Err(format!("{origin}: a second case of this name").into())
                        }));
                        continue;
                    }
                    trials.push(Trial::test(name, move || case_trial(&case)));
                }
            }
        }
    }
    trials
}

/// Writes what `CORE_CASES_BLESS=1` blessed, once every case ran.
pub(crate) fn write_blessings() -> Result<(), String> {
    let edits = std::mem::take(&mut *PENDING_BLESS.lock().unwrap_or_else(|e| e.into_inner()));
    write_blessed(edits).map_err(|e| format!("blessing failed: {e}"))
}
