//! `import`: a tap (`acp-bridge --tap`, a live panel session in the
//! recording format) becomes a corpus case: a recording of its agent leg
//! (`recordings/<agent>/<version>/<name>.jsonl`) and a scenario of its panel
//! leg (`scenarios/<name>.toml`, `imported = true`), so `check` replays it
//! like any recording: the fake agent plays the agent leg, the scenario the
//! panel, and the golden is blessed after reading.
//!
//! Nothing is written unless all of it can be: a tap that is not one, is
//! cut off, still holds a credential shape, or would replace a file is
//! refused, naming what and where. Both files are written whole and never
//! over an existing file.

mod panel;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::corpus::name::{self, NameError};
use crate::corpus::recording::blobs::BlobStore;
use crate::corpus::recording::{self, Dir, Event, Leg, Line, Outcome, RecordingError, Trailer};
use crate::corpus::scenario::{self, PanelMcpServer};
use atomic_file::AtomicFile;
pub use panel::{Image, PanelStep, Unplaceable};

/// Header fields a tap adds to the recording format; a recording has none.
/// Why a tap is not imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{error}")]
    Malformed { error: RecordingError },
    #[error("{}: not a tap: its header has no `tap` field (a tap is written by `acp-bridge --tap`)", .0.display())]
    NotATap(PathBuf),
    #[error("{}: the tap is cut off: it has no trailer (the bridge was killed before the session ended); nothing of it is imported", .0.display())]
    CutOff(PathBuf),
    #[error("{}:{line}:{column}: a credential shape ({kind}) survived scrubbing; remove it from the tap (or ask the user for a new tap) before importing", path.display())]
    Secret {
        path: PathBuf,
        line: usize,
        column: usize,
        kind: &'static str,
    },
    #[error("{}: events seq {first} to {last}: a credential shape ({kind}) survived scrubbing in their streamed text (no one line holds it); remove it from the tap (or ask the user for a new tap) before importing", path.display())]
    StreamedSecret {
        path: PathBuf,
        first: u64,
        last: u64,
        kind: &'static str,
    },
    #[error("{}: the tap names no agent version (no agentInfo.version, no _meta.agentVersion in the agent's initialize answer); give it with --version", .0.display())]
    NoVersion(PathBuf),
    #[error("{}: {error}", path.display())]
    Name { path: PathBuf, error: NameError },
    #[error("{}: {error}", path.display())]
    Panel { path: PathBuf, error: Unplaceable },
    #[error("{}: the tap's panel leg has no prompt: nothing to replay", .0.display())]
    NoPrompt(PathBuf),
    #[error("{} exists: import never overwrites (choose another --name)", .0.display())]
    Exists(PathBuf),
    #[error("the scenario made from {}: {error}", path.display())]
    Scenario {
        path: PathBuf,
        error: scenario::ScenarioError,
    },
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// What to import and where.
#[derive(Debug, Clone)]
pub struct Request {
    pub tap: PathBuf,
    /// The corpus root (`recordings/`, `scenarios/`).
    pub root: PathBuf,
    /// The profile id to file it under (default: the tap's `agent_info.name`).
    pub agent: Option<String>,
    /// The case's name (default: the tap file's name without `.jsonl`).
    pub name: Option<String>,
    /// The agent's version, when the tap says none (`agentInfo.version`
    /// and `_meta.agentVersion` absent).
    pub version: Option<String>,
    /// Import a tap in which a credential shape survived scrubbing, after a
    /// person read it and found none (a test key, a hash): a note, no refusal.
    pub accept_credential_shapes: bool,
    /// Why the tapped session was no real one (its agent a replay, say):
    /// the recording is marked synthetic and says why.
    pub synthetic: Option<String>,
    /// The scenario whose scripted model replies answered the tapped agent
    /// (a session held in `acp-harness sandbox`), not a real model.
    pub scripted_model: Option<String>,
}

/// An import worked out and checked, nothing written yet.
#[derive(Debug)]
pub struct Plan {
    pub agent: String,
    pub version: String,
    pub name: String,
    pub recording_path: PathBuf,
    pub scenario_path: PathBuf,
    pub recording_text: String,
    pub scenario_text: String,
    pub steps: Vec<PanelStep>,
    /// The Claude tool names the panel was shown, in order.
    pub tool_uses: Vec<String>,
    /// Events kept in the recording, by leg name.
    pub kept: Vec<(&'static str, usize)>,
    /// What the replay will do differently from the tapped session.
    pub notes: Vec<String>,
    /// The tap's date and bridge version.
    pub tapped: String,
}

/// Reads and checks the tap and works out both files; writes nothing.
pub fn plan(req: &Request) -> Result<Plan, ImportError> {
    let path = &req.tap;
    let text = std::fs::read_to_string(path).map_err(|error| ImportError::Io {
        path: path.clone(),
        error,
    })?;
    let tap =
        recording::parse_str(&text, path).map_err(|error| ImportError::Malformed { error })?;
    if !tap.header.extra.contains_key("tap") {
        return Err(ImportError::NotATap(path.clone()));
    }
    let Some(trailer) = &tap.trailer else {
        return Err(ImportError::CutOff(path.clone()));
    };
    let mut naming_notes = Vec::new();
    for found in [
        refuse_secrets(path, &text),
        refuse_streamed_secrets(path, &tap.events),
    ] {
        match found {
            Err(e @ (ImportError::Secret { .. } | ImportError::StreamedSecret { .. }))
                if req.accept_credential_shapes =>
            {
                naming_notes.push(format!(
                    "accepted after reading (--accept-credential-shapes): {e}"
                ));
            }
            other => other?,
        }
    }
    let names = Names::of(req, &tap, &mut naming_notes)?;
    let Names {
        agent,
        version,
        name,
    } = &names;
    // a session that negotiated ACP v2 goes beside v1's, as `record` files it
    let version_dir = if tap.header.protocol_version == 2 {
        format!("{version}+{}", recording::REVISION_2_BUILD)
    } else {
        version.to_string()
    };
    let recording_path = req
        .root
        .join("recordings")
        .join(agent)
        .join(version_dir)
        .join(format!("{name}.jsonl"));
    let scenario_path = req.root.join("scenarios").join(format!("{name}.toml"));
    for p in [&recording_path, &scenario_path] {
        if p.exists() {
            return Err(ImportError::Exists(p.clone()));
        }
    }

    // the tap's line of each event: the header is line 1
    let lines = event_lines(&text);
    let leg =
        panel::read(&tap.events, |i| lines.get(i).copied().unwrap_or(0)).map_err(|error| {
            ImportError::Panel {
                path: path.clone(),
                error,
            }
        })?;
    if !leg
        .steps
        .iter()
        .any(|s| matches!(s, PanelStep::Prompt { .. }))
    {
        return Err(ImportError::NoPrompt(path.clone()));
    }
    let launch = tap.header.extra.get("launch").cloned().unwrap_or_default();
    let mut notes = naming_notes;
    notes.extend(leg.notes.iter().cloned());
    if trailer.outcome != Outcome::Ok {
        notes.push(format!(
            "the session ended {}, not ok: `check` fails a recording that did not end ok",
            trailer.outcome.as_str()
        ));
    }
    let bridge_version = tap.header.extra.get("bridge_version").cloned();
    let tapped = format!(
        "{} through acp-bridge {}",
        tap.header.date,
        bridge_version
            .as_ref()
            .and_then(Value::as_str)
            .unwrap_or("?")
    );
    let scenario_text = scenario_text(req, &names, &tap, &tapped, &launch, &leg);
    let scenario = scenario::parse(&scenario_path, scenario_text.as_bytes()).map_err(|error| {
        ImportError::Scenario {
            path: path.clone(),
            error,
        }
    })?;
    let header = recording_header(req, &names, &tap, bridge_version, &scenario.sha256)?;
    let kept_events: Vec<&Event> = tap
        .events
        .iter()
        .filter(|e| e.leg != Leg::StreamJson)
        .collect();
    let recording_text = recording_text(header, &kept_events, trailer);
    // what is written reads back as a recording
    recording::parse_str(&recording_text, &recording_path)
        .map_err(|error| ImportError::Malformed { error })?;
    let count = |leg: Leg| kept_events.iter().filter(|e| e.leg == leg).count();
    let kept = vec![
        ("acp", count(Leg::Acp)),
        ("stderr", count(Leg::Stderr)),
        ("notes", count(Leg::Harness)),
    ];
    Ok(Plan {
        agent: names.agent,
        version: names.version,
        name: names.name,
        recording_path,
        scenario_path,
        recording_text,
        scenario_text,
        steps: leg.steps,
        tool_uses: leg.tool_uses,
        kept,
        notes,
        tapped,
    })
}

/// The names the case is filed under, each checked as a path component.
struct Names {
    agent: String,
    version: String,
    name: String,
}

impl Names {
    /// The case's names; `notes` gets what the reader should know of how
    /// the agent was picked.
    fn of(
        req: &Request,
        tap: &recording::Recording,
        notes: &mut Vec<String>,
    ) -> Result<Names, ImportError> {
        let path = &req.tap;
        let (version, from) = match (tap_version(tap), &req.version) {
            (Some(v), _) => (v, "the tap's agent version"),
            (None, Some(v)) => (v.clone(), "--version"),
            (None, None) => return Err(ImportError::NoVersion(path.clone())),
        };
        named(path, from, &version)?;
        let agent = match &req.agent {
            Some(a) => {
                named(path, "--agent", a)?;
                a.clone()
            }
            None => match profile_of(&req.root, tap) {
                (Some(id), note) => {
                    notes.extend(note);
                    id
                }
                (None, note) => {
                    notes.extend(note);
                    let a = tap.header.agent_info["name"]
                        .as_str()
                        .unwrap_or(&tap.header.agent)
                        .to_string();
                    named(
                        path,
                        "agent_info.name, which names no profile (or --agent)",
                        &a,
                    )?;
                    a
                }
            },
        };
        let name = match &req.name {
            Some(n) => {
                named(path, "--name", n)?;
                n.clone()
            }
            None => {
                let stem = path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                named(path, "the tap's file name (or --name)", &stem)?;
                stem
            }
        };
        Ok(Names {
            agent,
            version,
            name,
        })
    }
}

/// The agent's version as the tap says it: `agentInfo.version`, else the
/// `agentVersion` in its `initialize` answer's `_meta` (Grok's spelling;
/// `agentInfo` is optional in ACP).
fn tap_version(tap: &recording::Recording) -> Option<String> {
    if let Some(v) = tap.header.agent_version() {
        return Some(v.to_string());
    }
    tap.events
        .iter()
        .filter(|e| e.leg == Leg::Acp && e.dir == Dir::FromAgent)
        .filter(|e| e.raw.contains("\"protocolVersion\""))
        .filter_map(|e| serde_json::from_str::<Value>(&e.raw).ok())
        .find_map(|v| {
            let meta = &v["result"]["_meta"];
            ["agentVersion", "agent_version", "version"]
                .iter()
                .find_map(|k| meta[*k].as_str().map(str::to_string))
        })
}

/// The last component of a path in either platform's spelling.
fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// Interpreters many profiles launch: naming one says nothing of the agent.
const INTERPRETERS: &[&str] = &["node", "python", "python3", "npx", "uvx", "bun", "deno"];

/// Whether `argv` runs `recipe`'s agent: a path through its package's
/// directory, or its own program by file name (not an interpreter).
fn runs(recipe: &crate::corpus::profile::Recipe, argv: &[String]) -> bool {
    let through_package = !recipe.package.is_empty()
        && argv.iter().any(|a| {
            a.replace('\\', "/")
                .contains(&format!("/{}/", recipe.package))
        });
    let program = file_name(&recipe.program).to_string();
    let same_program = !program.is_empty()
        && !program.contains('{')
        && !INTERPRETERS.contains(&program.as_str())
        && argv.first().is_some_and(|a| file_name(a) == program);
    through_package || same_program
}

/// The profile the tapped agent is, by what the tap shows of it: a profile
/// whose id is `agentInfo.name` (in any case: `Kilo`), whose package is that name (or ends in it:
/// `@agentclientprotocol/codex-acp`; pip extras aside), whose package or
/// program the agent's command line runs, or whose id the name starts with
/// (letters and digits only: `Kimi Code CLI` is `kimi-code`); with a note when what it says of itself and
/// what its command line runs disagree, or nothing matches. `None` when no
/// profile, or more than one by the same rule, matches.
fn profile_of(root: &Path, tap: &recording::Recording) -> (Option<String>, Option<String>) {
    let ids = crate::packages::outdated::agents(root, &[]).unwrap_or_default();
    let profiles: Vec<crate::corpus::profile::Profile> = ids
        .iter()
        .filter_map(|id| crate::corpus::profile::Profile::find(root, id).ok())
        .collect();
    let info_name = tap.header.agent_info["name"].as_str().unwrap_or("");
    // a package without its pip extras (`hermes-agent[acp,mcp]`)
    let bare = |p: &str| p.split('[').next().unwrap_or(p).to_string();
    // letters and digits only, lower case: `Kimi Code CLI` -> `kimicodecli`
    let squashed = |s: &str| -> String {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let rules: [&dyn Fn(&crate::corpus::profile::Profile) -> bool; 4] = [
        &|p| !info_name.is_empty() && p.id.eq_ignore_ascii_case(info_name),
        &|p| {
            !info_name.is_empty()
                && p.recipes.iter().any(|r| {
                    let package = bare(&r.package);
                    !package.is_empty()
                        && (package.eq_ignore_ascii_case(info_name)
                            || file_name(&package).eq_ignore_ascii_case(info_name))
                })
        },
        &|p| p.recipes.iter().any(|r| runs(r, &tap.header.argv)),
        &|p| !info_name.is_empty() && squashed(info_name).starts_with(&squashed(&p.id)),
    ];
    let matching = |rule: &dyn Fn(&crate::corpus::profile::Profile) -> bool| -> Vec<String> {
        profiles
            .iter()
            .filter(|p| rule(p))
            .map(|p| p.id.clone())
            .collect()
    };
    let by_argv = matching(rules[2]);
    for rule in rules {
        if let [one] = matching(rule).as_slice() {
            let note = (!by_argv.is_empty() && !by_argv.contains(one)).then(|| {
                format!(
                    "filed under {one} by what the agent says of itself, though its command line runs {}'s package or program",
                    by_argv.join(", ")
                )
            });
            return (Some(one.clone()), note);
        }
    }
    let note = format!(
        "the agent's command line runs no profile's package or program, and its name ({}) is no profile: the recording needs a profile of that id to replay",
        if info_name.is_empty() {
            tap.header.agent.as_str()
        } else {
            info_name
        }
    );
    (None, Some(note))
}

/// A name from the tap or the command line, refused unless it is a single
/// path component.
fn named(path: &Path, field: &str, value: &str) -> Result<(), ImportError> {
    name::check(field, value).map_err(|error| ImportError::Name {
        path: path.to_path_buf(),
        error,
    })
}

/// The stub unity-ops tools the panel was shown calls of, each once.
fn mcp_tools_used(tool_uses: &[String]) -> Vec<String> {
    let mut tools: Vec<String> = Vec::new();
    for t in tool_uses {
        let own = t.rsplit("__").next().unwrap_or(t);
        if t.starts_with("mcp__")
            && stub_mcp::catalogue().iter().any(|c| c.name == own)
            && !tools.iter().any(|x| x == own)
        {
            tools.push(own.to_string());
        }
    }
    tools
}

/// The scenario of the panel leg, with a summary and a source that say
/// where it came from.
fn scenario_text(
    req: &Request,
    names: &Names,
    tap: &recording::Recording,
    tapped: &str,
    launch: &Value,
    leg: &panel::PanelLeg,
) -> String {
    let Names {
        agent,
        version,
        name,
    } = names;
    let prompts = leg
        .steps
        .iter()
        .filter(|s| matches!(s, PanelStep::Prompt { .. } | PanelStep::Steer { .. }))
        .count();
    let summary = format!(
        "A panel session with {agent} {version}, tapped on {}: {prompts} prompt(s), {} tool call(s).",
        tap.header.date,
        leg.tool_uses.len()
    );
    let synthetic = match (&req.synthetic, tap.header.synthetic) {
        (Some(why), _) => format!(" (synthetic: {why})"),
        (None, true) => " (synthetic: not a real user's session)".into(),
        (None, false) => String::new(),
    };
    let model = match &req.scripted_model {
        Some(script) => format!(
            "\nIts model was acp-harness's scripted model server playing scenario {script} (`acp-harness sandbox`)."
        ),
        None => String::new(),
    };
    let session = if synthetic.is_empty() {
        "a live session"
    } else {
        "a session"
    };
    let source = format!(
        "Imported by `acp-harness import` from a tap of {session} with {agent} {version} ({tapped}){synthetic}.{model}\n\
         Replayed, never recorded: its prompts have no scripted model replies."
    );
    // the instructions in force, as the bridge worked them out from its
    // launch and the panel's initialize; the replay gives both by flag
    let instructions = leg.instructions.apply_to(&acp_bridge::LaunchSpec {
        system_prompt: said(&launch["system_prompt"]).map(str::to_string),
        append_system_prompt: said(&launch["append_system_prompt"]).map(str::to_string),
        ..acp_bridge::LaunchSpec::default()
    });
    panel::scenario_text(
        &panel::ScenarioHead {
            name,
            summary: &summary,
            source: &source,
            tools: &mcp_tools_used(&leg.tool_uses),
            system_prompt: instructions.system.as_deref(),
            append_system_prompt: instructions.append.as_deref(),
            model: said(&launch["model"]),
            permission_mode: said(&launch["permission_mode"]),
            resume_session: said(&launch["resume_session_id"]),
            mcp_server: &panel_mcp_server(&launch["mcp"]),
            script_gate: launch["script_gate"].as_bool() == Some(true),
            results: leg.results,
        },
        &leg.steps,
    )
}

/// The tap's header as a recording's: tap-only fields gone, `imported_from`
/// saying where it came from, filed under the case's names.
fn recording_header(
    req: &Request,
    names: &Names,
    tap: &recording::Recording,
    bridge_version: Option<Value>,
    scenario_sha256: &str,
) -> Result<recording::Header, ImportError> {
    let mut header = tap.header.clone();
    for key in recording_format::tap::TAP_ONLY {
        header.extra.remove(*key);
    }
    let mut from = Map::new();
    from.insert("tap".into(), Value::from(panel_leg_lines(&tap.events)));
    if let Some(v) = bridge_version {
        from.insert("bridge_version".into(), v);
    }
    if let Some(build) = header.build.take() {
        from.insert("build".into(), build);
    }
    if let Some(why) = &req.synthetic {
        header.synthetic = true;
        from.insert("synthetic".into(), Value::from(why.as_str()));
    } else if !header.synthetic {
        from.insert("session".into(), Value::from("live"));
    }
    if let Some(script) = &req.scripted_model {
        named(&req.tap, "--scripted-model", script)?;
        header.model_mode = "stub".into();
        from.insert("model_script".into(), Value::from(script.as_str()));
    }
    header
        .extra
        .insert("imported_from".into(), Value::Object(from));
    header.agent = names.agent.clone();
    header.scenario = names.name.clone();
    header.scenario_sha256 = scenario_sha256.to_string();
    header.harness_version = env!("CARGO_PKG_VERSION").into();
    header.build = Some(recording::HARNESS_BUILD.to_json());
    Ok(header)
}

/// The recording's lines: the header, the kept events numbered afresh, the
/// tap's trailer.
fn recording_text(header: recording::Header, kept_events: &[&Event], trailer: &Trailer) -> String {
    let mut text = line(&Line::Header(Box::new(header)));
    for (i, e) in kept_events.iter().enumerate() {
        let mut e = (*e).clone();
        e.seq = i as u64 + 1;
        text.push_str(&line(&Line::Event(e)));
    }
    text.push_str(&line(&Line::Trailer(Trailer {
        seq: kept_events.len() as u64 + 1,
        ms: trailer.ms,
        outcome: trailer.outcome,
        exit: trailer.exit,
        notes: trailer.notes.clone(),
        extra: Map::new(),
    })));
    text
}

/// Writes the scenario, then the recording, each whole and never over a
/// file; a recording that cannot be written takes its scenario back.
pub fn commit(plan: &Plan) -> Result<(), ImportError> {
    // the tap is one self-contained file; the corpus stores payloads once
    let store = BlobStore::for_writing(&plan.recording_path);
    let recording_text =
        crate::capture::migrate::to_stored(&plan.recording_text, &plan.recording_path, &store)
            .map_err(|error| ImportError::Malformed { error })?;
    write_new(&plan.scenario_path, &plan.scenario_text)?;
    if let Err(e) = write_new(&plan.recording_path, &recording_text) {
        let _ = std::fs::remove_file(&plan.scenario_path);
        return Err(e);
    }
    Ok(())
}

fn write_new(path: &Path, text: &str) -> Result<(), ImportError> {
    use std::io::Write as _;
    let io = |error: std::io::Error| {
        if error.kind() == std::io::ErrorKind::AlreadyExists {
            ImportError::Exists(path.to_path_buf())
        } else {
            ImportError::Io {
                path: path.to_path_buf(),
                error,
            }
        }
    };
    let mut file = AtomicFile::create(path).map_err(io)?;
    file.write_all(text.as_bytes()).map_err(io)?;
    file.commit_new().map_err(io)?;
    Ok(())
}

fn line(l: &Line) -> String {
    let mut text = serde_json::to_string(l).expect("recording lines always serialise");
    text.push('\n');
    text
}

/// The tap's first credential shape left, by line and column.
fn refuse_secrets(path: &Path, text: &str) -> Result<(), ImportError> {
    let scrubber = acp_bridge::tap::Scrubber::builder().build();
    for (i, l) in text.lines().enumerate() {
        if let Some((kind, at)) = scrubber.find_secret(l) {
            return Err(ImportError::Secret {
                path: path.to_path_buf(),
                line: i + 1,
                column: l[..at].chars().count() + 1,
                kind,
            });
        }
    }
    Ok(())
}

/// The tap's first credential shape left in streamed text (the agent's
/// chunks, the panel's deltas), which no one line holds: by the events
/// whose joined text has it.
fn refuse_streamed_secrets(path: &Path, events: &[Event]) -> Result<(), ImportError> {
    use acp_bridge::tap::Way;
    let scrubber = acp_bridge::tap::Scrubber::builder().build();
    // per way: (kind, first seq, last seq, joined text) of the open stream
    let mut open: Vec<(Way, &'static str, u64, u64, String)> = Vec::new();
    let check =
        |stream: &(Way, &'static str, u64, u64, String)| match scrubber.find_secret(&stream.4) {
            Some((kind, _)) => Err(ImportError::StreamedSecret {
                path: path.to_path_buf(),
                first: stream.2,
                last: stream.3,
                kind,
            }),
            None => Ok(()),
        };
    for e in events {
        let way = match (e.leg, e.dir) {
            (Leg::Acp, Dir::FromAgent) => Way::AgentToBridge,
            (Leg::StreamJson, Dir::FromAgent) => Way::BridgeToPanel,
            _ => continue,
        };
        let piece = acp_bridge::tap::streamed_text(way, &e.raw);
        let kind = piece.as_ref().map(|p| p.0);
        if let Some(i) = open.iter().position(|s| s.0 == way && Some(s.1) != kind) {
            check(&open.remove(i))?;
        }
        if let Some((kind, _, text)) = piece {
            match open.iter_mut().find(|s| s.0 == way) {
                Some(stream) => {
                    stream.3 = e.seq;
                    stream.4.push_str(&text);
                }
                None => open.push((way, kind, e.seq, e.seq, text)),
            }
        }
    }
    for stream in &open {
        check(stream)?;
    }
    Ok(())
}

/// The file line of each event, in order (the header is line 1; blank
/// lines are skipped as the reader skips them).
fn event_lines(text: &str) -> Vec<usize> {
    text.split('\n')
        .enumerate()
        .filter(|(_, l)| l.contains("\"type\":\"event\""))
        .map(|(i, _)| i + 1)
        .collect()
}

/// How many panel-leg lines the tap had (kept in the header's provenance:
/// the recording drops them, the scenario plays them).
fn panel_leg_lines(events: &[Event]) -> usize {
    events.iter().filter(|e| e.leg == Leg::StreamJson).count()
}

/// A launch field's text, when it says something.
fn said(v: &Value) -> Option<&str> {
    v.as_str().filter(|s| !s.trim().is_empty())
}

/// The MCP server the tapped panel gave (the tap header's `launch.mcp`):
/// the replay registers exactly this one. A tap without `authorization`
/// (written before the tap said) had the bridge's token.
fn panel_mcp_server(mcp: &Value) -> PanelMcpServer {
    match mcp["name"].as_str() {
        Some(name) => PanelMcpServer::Given {
            name: name.to_string(),
            authorization: mcp["authorization"].as_bool() != Some(false),
        },
        None => PanelMcpServer::NotGiven,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_lines_count_from_the_header() {
        let text = "{\"type\":\"header\"}\n{\"type\":\"event\",\"seq\":1}\n\n{\"type\":\"event\",\"seq\":2}\n{\"type\":\"trailer\"}\n";
        assert_eq!(event_lines(text), vec![2, 4]);
    }
}
