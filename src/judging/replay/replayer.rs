//! One replay: the recording plays the agent (through [`FakeAgent`]), the
//! scenario plays the panel (through [`PanelDriver`]), and the bridge core
//! runs in-process between them with a fake clock and counter ids, so the
//! same recording always gives the same transcript. The bridge is handed the
//! tools stub-mcp offered the recording (the scenario's `tools`) before any
//! line, as a host gets them by listing the server.
//!
//! Everything is bounded: when the panel waits for something that cannot
//! come any more (no agent frame left to release, no bridge deadline left to
//! fire), the replay stops with a "stalled" divergence instead of hanging.

use std::time::Duration;

use acp_bridge::{Bridge, Compat, CounterIds, LaunchSpec, McpEndpoint, Output};
use serde_json::Value;

use super::divergence::Divergence;
use super::fake_agent::{FakeAgent, Served};
use super::line_value;
use super::source::Source;
use super::transcript::{Entry, Transcript};
use crate::corpus::recording::{Exit, Header, Outcome, Recording};
use crate::corpus::scenario::panel_driver::{Action, PanelDriver};
use crate::corpus::scenario::{PanelMcpServer, Scenario};

/// The placeholders the recorder writes for the session's cwd, the unity-ops
/// MCP URL and its bearer token; given to the bridge so its frames compare
/// byte for byte with the recorded ones.
pub const WORKSPACE: &str = "<workspace>";
pub const MCP_URL: &str = "<mcp-url>";
pub const MCP_TOKEN: &str = "<mcp-token>";
/// What stands for the token in a recording whose header has no `<mcp-token>`
/// placeholder (the token was scrubbed as a secret).
pub const REDACTED_TOKEN: &str = crate::corpus::recording::REDACTED;

/// How many times one wait may fire a bridge deadline before it is a stall.
const MAX_TICKS_PER_WAIT: usize = 16;

/// What one replay produced, held whole (the [`Sink`] that collects).
#[derive(Debug, Clone, Default)]
pub struct Replay {
    pub transcript: Transcript,
    /// Every line the bridge emitted for the panel, over all processes.
    pub panel_lines: Vec<String>,
    /// The same lines parsed once (`None`: not JSON) for the judges that
    /// read them (expectations, the contract, then the render, which takes
    /// them).
    pub panel_values: Vec<Option<Value>>,
    /// Each agent line the fake agent released, parsed once there (`None`:
    /// not JSON), one per `AgentToBridge` entry, for the render.
    pub agent_values: Vec<Option<Value>>,
    /// The bridge's diagnostics (stderr text); not part of the golden.
    pub diagnostics: Vec<String>,
    /// The recording has no trailer.
    pub truncated: bool,
    /// Reading the recording's agent frames again failed (the file changed
    /// under the replay): the replay is no evidence.
    pub read_error: Option<String>,
}

impl Replay {
    pub fn divergences(&self) -> impl Iterator<Item = &Divergence> {
        self.transcript.divergences()
    }
}

/// Where a replay's output goes as it happens, in order: a sink that judges
/// each entry as it comes holds none of them (`judge` does), [`Replay`]
/// holds them all.
pub trait Sink {
    /// One transcript entry; `value` is the line of a `BridgeToPanel` or
    /// `AgentToBridge` entry parsed once (`None`: not JSON, or another kind).
    fn entry(&mut self, entry: Entry, value: Option<Value>);
    /// A diagnostic of the bridge (its stderr text; not part of the golden).
    fn diagnostic(&mut self, text: String);
    /// Whether the sink reads a bridge line's text besides its parsed value;
    /// if not, a line of megabytes is parsed into its value without a copy
    /// ([`line_value`]) and its entry's text is empty.
    fn keeps_panel_text(&self) -> bool {
        true
    }
}

impl Sink for Replay {
    fn entry(&mut self, entry: Entry, value: Option<Value>) {
        match &entry {
            Entry::BridgeToPanel(line) => {
                self.panel_lines.push(line.clone());
                self.panel_values.push(value);
            }
            Entry::AgentToBridge(_) => self.agent_values.push(value),
            _ => {}
        }
        self.transcript.push(entry);
    }

    fn diagnostic(&mut self, text: String) {
        self.diagnostics.push(text);
    }
}

/// How a replay into a [`Sink`] ended.
#[derive(Debug, Clone, Default)]
pub struct Ended {
    /// The recording has no trailer.
    pub truncated: bool,
    /// Reading the recording's agent frames again failed (the file changed
    /// under the replay): the replay is no evidence.
    pub read_error: Option<String>,
}

/// A bridge line for the panel as a replay keeps it beside the text
/// ([`Replay::panel_values`]): parsed, `None` when it is not JSON.
pub fn panel_value(line: &str) -> Option<Value> {
    serde_json::from_str(line).ok()
}

/// The launch spec a panel would give for this scenario, with the recorder's
/// placeholders (as its header lists them) standing in for machine values.
pub fn launch_spec(
    scenario: &Scenario,
    header: &Header,
    resume_session_id: Option<String>,
) -> LaunchSpec {
    let token = if header.placeholders.contains_key(MCP_TOKEN) {
        MCP_TOKEN
    } else {
        REDACTED_TOKEN
    };
    LaunchSpec {
        // a resume step's new process, else the tapped launch's --resume
        resume_session_id: resume_session_id.or_else(|| scenario.launch.resume_session.clone()),
        model: scenario.launch.model.clone(),
        permission_mode: scenario.launch.permission_mode.clone(),
        cwd: WORKSPACE.to_string(),
        mcp: match &scenario.launch.mcp_server {
            PanelMcpServer::Given {
                name,
                authorization,
            } => Some(McpEndpoint {
                name: name.clone(),
                url: MCP_URL.to_string(),
                authorization: authorization.then(|| format!("Bearer {token}")),
            }),
            PanelMcpServer::NotGiven => None,
        },
        system_prompt: scenario.system_prompt.clone(),
        append_system_prompt: scenario.append_system_prompt.clone(),
        script_gate: scenario.script_gate,
        mcp_unadvertised: header.session.mcp_unadvertised,
        config_options: header.session.config_option_list(),
        acp_protocol: recorded_offer(header),
        ..LaunchSpec::default()
    }
}

/// What the bridge offers to replay a recording: what the recording client
/// offered (`acp_offered`, v1 when absent), and when v2 was offered but v1
/// negotiated, `auto`, whose fallback the recorded agent answered.
fn recorded_offer(header: &Header) -> acp_bridge::acp::revision::Offer {
    use acp_bridge::acp::revision::Offer;
    match (
        header
            .extra
            .get(crate::corpus::recording::ACP_OFFERED)
            .and_then(Value::as_u64),
        header.protocol_version,
    ) {
        (Some(2), 2) => Offer::V2,
        (Some(2), _) => Offer::Auto,
        _ => Offer::V1,
    }
}

/// The bridge, the fake agent and the clock of one agent process.
struct Process<'a> {
    number: u32,
    bridge: Bridge,
    agent: FakeAgent<'a>,
}

struct Run<'s, 'a> {
    source: &'s Source<'a>,
    scenario: &'a Scenario,
    now: Duration,
    sink: &'s mut dyn Sink,
    /// Entries handed to the sink so far.
    entries: usize,
    compat: Compat,
    read_error: Option<String>,
}

/// Replays `recording` through a fresh bridge, driven by `scenario`.
pub fn replay(recording: &Recording, scenario: &Scenario) -> Replay {
    replay_with_compat(recording, scenario, Compat::default())
}

/// [`replay`] through a bridge with some agent-shape handling switched off
/// (bisect rebuilds an older bridge this way).
pub fn replay_with_compat(recording: &Recording, scenario: &Scenario, compat: Compat) -> Replay {
    replay_source(&Source::of_recording(recording), scenario, compat)
}

/// [`replay_with_compat`] of a recording as [`Source`] reads it (from a
/// file: one line at a time).
pub fn replay_source(source: &Source<'_>, scenario: &Scenario, compat: Compat) -> Replay {
    let mut replay = Replay::default();
    let ended = replay_into(source, scenario, compat, &mut replay);
    replay.truncated = ended.truncated;
    replay.read_error = ended.read_error;
    replay
}

/// [`replay_source`] handing every entry to `sink` as it happens, so what
/// is held is up to the sink.
pub fn replay_into(
    source: &Source<'_>,
    scenario: &Scenario,
    compat: Compat,
    sink: &mut dyn Sink,
) -> Ended {
    let mut run = Run {
        source,
        scenario,
        compat,
        now: Duration::ZERO,
        sink,
        entries: 0,
        read_error: None,
    };
    let truncated = source.trailer.is_none();
    if truncated {
        run.note(format!(
            "recording is truncated (no trailer): replaying the {} event(s) it has",
            source.events
        ));
    }
    if scenario.changed_since(&source.header.scenario_sha256) {
        run.note("the scenario file changed since this recording was made");
    }
    let mut driver = PanelDriver::new(scenario);
    let mut process = run.start_process(1, None, &mut driver);
    loop {
        match driver.poll() {
            Action::Send(lines) => {
                for line in lines {
                    run.panel_line(&mut process, &mut driver, &line);
                }
            }
            Action::SendWithNote(lines, why) => {
                run.note(why);
                for line in lines {
                    run.panel_line(&mut process, &mut driver, &line);
                }
            }
            Action::Skip(why) => run.note(why),
            Action::Resume { session_id } => {
                run.end_process(
                    &mut process,
                    &mut driver,
                    Exit {
                        code: Some(0),
                        signal: None,
                    },
                );
                let next = process.number + 1;
                if session_id.is_none() {
                    run.note(
                        "resume: the panel never learnt a session id; starting without --resume",
                    );
                }
                process = run.start_process(next, session_id, &mut driver);
            }
            Action::Wait {
                step,
                step_kind,
                waiting_for,
            } => {
                if run.fire_deadlines(&mut process, &mut driver) {
                    continue;
                }
                if let Some(why) = driver.on_bridge_quiet() {
                    run.note(why);
                    continue;
                }
                run.push(Entry::Divergence(Divergence::Stalled {
                    step,
                    step_kind: step_kind.to_string(),
                    waiting_for,
                }));
                break;
            }
            Action::Finished => break,
        }
    }
    let exit = source.trailer.map(|t| {
        run.now = run.now.max(Duration::from_millis(t.ms));
        if t.outcome != Outcome::Ok {
            run.note(format!(
                "the recording ended with outcome {}",
                t.outcome.as_str()
            ));
        }
        t.exit
    });
    run.end_process(&mut process, &mut driver, exit.unwrap_or_default());
    Ended {
        truncated,
        read_error: run.read_error,
    }
}

impl<'a> Run<'_, 'a> {
    fn push(&mut self, entry: Entry) {
        self.push_parsed(entry, None);
    }

    fn push_parsed(&mut self, entry: Entry, value: Option<Value>) {
        self.entries += 1;
        self.sink.entry(entry, value);
    }

    fn note(&mut self, text: impl Into<String>) {
        self.push(Entry::Note(text.into()));
    }

    fn start_process(
        &mut self,
        number: u32,
        resume: Option<String>,
        driver: &mut PanelDriver,
    ) -> Process<'a> {
        if number > 1 {
            self.note(format!(
                "agent process {number}: new bridge{}",
                if resume.is_some() {
                    " with --resume of the panel's session id"
                } else {
                    ""
                }
            ));
        }
        if !self.source.leg.has(number) {
            self.note(format!(
                "the recording has no acp frames for agent process {number}"
            ));
        }
        let mut bridge = Bridge::new(
            LaunchSpec {
                compat: self.compat,
                ..launch_spec(self.scenario, self.source.header, resume)
            },
            Box::new(CounterIds::default()),
        );
        // what the host would list: the tools stub-mcp offered the recording
        if let PanelMcpServer::Given { name, .. } = &self.scenario.launch.mcp_server {
            let listed = bridge.set_server_tools(name, self.scenario.tools.clone());
            for d in listed.diagnostics {
                self.sink.diagnostic(d);
            }
        }
        let mut process = Process {
            number,
            bridge,
            agent: self.source.fake_agent(number),
        };
        let served = process.agent.start_due();
        self.serve(&mut process, driver, served);
        process
    }

    /// Panel EOF, then the agent's exit, then what was left unplayed.
    fn end_process(&mut self, process: &mut Process<'a>, driver: &mut PanelDriver, exit: Exit) {
        let code = exit.code;
        let out = process.bridge.on_panel_eof(self.now);
        self.output(process, driver, out);
        if self.source.trailer.is_some() || process.number < self.source.leg.last_process() {
            self.note(format!(
                "agent process {} {}",
                process.number,
                exit.describe()
            ));
            let out = process.bridge.on_agent_exit(code, self.now);
            self.output(process, driver, out);
        }
        for d in process.agent.never_sent() {
            self.push(Entry::Divergence(d));
        }
        let unreleased = process.agent.unreleased();
        if unreleased > 0 {
            self.note(format!(
                "{unreleased} recorded agent frame(s) of process {} were never released",
                process.number
            ));
        }
        if let Some(e) = process.agent.read_error() {
            self.note(format!("the recording could not be read again: {e}"));
            self.read_error.get_or_insert_with(|| e.to_string());
        }
    }

    fn panel_line(&mut self, process: &mut Process<'a>, driver: &mut PanelDriver, line: &str) {
        self.push(Entry::Panel(line.to_string()));
        let out = process.bridge.on_panel_line(line, self.now);
        self.output(process, driver, out);
    }

    /// Fires due bridge deadlines (as a host's timer would) while the panel
    /// waits. Returns whether that produced anything.
    fn fire_deadlines(&mut self, process: &mut Process<'a>, driver: &mut PanelDriver) -> bool {
        let before = self.entries;
        for _ in 0..MAX_TICKS_PER_WAIT {
            let Some(deadline) = process.bridge.next_deadline() else {
                break;
            };
            self.now = self.now.max(deadline);
            let out = process.bridge.on_tick(self.now);
            self.output(process, driver, out);
            if self.entries != before {
                return true;
            }
        }
        false
    }

    /// Transcribes one bridge output and plays it on.
    fn output(&mut self, process: &mut Process<'a>, driver: &mut PanelDriver, out: Output) {
        self.transcribe(process, driver, out);
        self.pump(process, driver);
    }

    /// Feeds released agent frames to the bridge, breadth first in recorded
    /// order, one at a time as the fake agent reads them; what the bridge
    /// answers may release more.
    fn pump(&mut self, process: &mut Process<'a>, driver: &mut PanelDriver) {
        loop {
            let mut divergences = Vec::new();
            let released = process.agent.next_released(&mut divergences);
            for d in divergences {
                self.push(Entry::Divergence(d));
            }
            let Some(released) = released else { break };
            let at = Duration::from_millis(released.ms);
            // A real host's timer fires before a later frame arrives.
            while let Some(deadline) = process
                .bridge
                .next_deadline()
                .filter(|d| *d <= at && *d >= self.now)
            {
                self.now = deadline;
                let out = process.bridge.on_tick(self.now);
                self.transcribe(process, driver, out);
                if process.bridge.next_deadline() == Some(deadline) {
                    break;
                }
            }
            self.now = self.now.max(at);
            let out = process.bridge.on_agent_line(&released.line, self.now);
            // before what the bridge made of it (the line moves, not copied)
            self.push_parsed(Entry::AgentToBridge(released.line), released.value);
            self.transcribe(process, driver, out);
            let lines = driver.poll_now();
            for note in driver.take_notes() {
                self.note(note);
            }
            if let Some(lines) = lines {
                for line in lines {
                    self.push(Entry::Panel(line.clone()));
                    let out = process.bridge.on_panel_line(&line, self.now);
                    self.transcribe(process, driver, out);
                }
            }
        }
    }

    fn transcribe(&mut self, process: &mut Process<'a>, driver: &mut PanelDriver, out: Output) {
        for d in out.diagnostics {
            self.sink.diagnostic(d);
        }
        for line in out.to_agent {
            self.push(Entry::BridgeToAgent(line.clone()));
            let served = process.agent.on_client_line_due(&line);
            for d in served.divergences {
                self.push(Entry::Divergence(d));
            }
        }
        if out.close_agent_stdin {
            self.note("bridge closed the agent's stdin");
        }
        let keep_text = self.sink.keeps_panel_text();
        for line in out.to_panel {
            let (line, value) = if keep_text {
                let value = panel_value(&line);
                (line, value)
            } else {
                match line_value::parse(line) {
                    Ok(v) => (String::new(), Some(v)),
                    Err(line) => (line, None),
                }
            };
            if let Some(v) = &value {
                driver.observe_value(v);
            }
            self.push_parsed(Entry::BridgeToPanel(line), value);
        }
    }

    fn serve(&mut self, process: &mut Process<'a>, driver: &mut PanelDriver, served: Served) {
        for d in served.divergences {
            self.push(Entry::Divergence(d));
        }
        self.pump(process, driver);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::recording;
    use crate::corpus::scenario;
    use std::path::Path;

    /// A synthetic two-process recording (a test double, not agent evidence):
    /// process 1 creates the session and answers a prompt, process 2 loads it
    /// and answers another.
    fn resume_recording() -> Recording {
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false}}}"#;
        let init_ok = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"mcpCapabilities":{"http":true}},"authMethods":[]}}"#;
        let servers = r#"[{"type":"http","name":"unity-ops","url":"<mcp-url>","headers":[{"name":"Authorization","value":"Bearer <redacted>"}]}]"#;
        let frames: Vec<(u32, &str, String)> = vec![
            (1, "to_agent", init.into()),
            (1, "from_agent", init_ok.into()),
            (1, "to_agent", format!(r#"{{"jsonrpc":"2.0","id":1,"method":"session/new","params":{{"cwd":"<workspace>","mcpServers":{servers}}}}}"#)),
            (1, "from_agent", r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"sess-resume-1"}}"#.into()),
            (1, "to_agent", r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sess-resume-1","prompt":[{"type":"text","text":"First prompt."}]}}"#.into()),
            (1, "from_agent", r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#.into()),
            (2, "to_agent", init.into()),
            (2, "from_agent", init_ok.into()),
            (2, "to_agent", format!(r#"{{"jsonrpc":"2.0","id":1,"method":"session/load","params":{{"sessionId":"sess-resume-1","cwd":"<workspace>","mcpServers":{servers}}}}}"#)),
            (2, "from_agent", r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.into()),
            (2, "to_agent", r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sess-resume-1","prompt":[{"type":"text","text":"Second prompt."}]}}"#.into()),
            (2, "from_agent", r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#.into()),
        ];
        let mut text = String::from(
            r#"{"type":"header","format":1,"agent":"test","package":"none","scenario":"resume","model_mode":"stub","harness_version":"0","date":"d","isolation":"none","synthetic":true}"#,
        );
        text.push('\n');
        for (i, (proc, dir, raw)) in frames.iter().enumerate() {
            let event = serde_json::json!({"type":"event","seq":i + 1,"ms":i * 5,"leg":"acp","dir":dir,"proc":proc,"raw":raw});
            text.push_str(&event.to_string());
            text.push('\n');
        }
        text.push_str(r#"{"type":"trailer","seq":99,"ms":100,"outcome":"ok","exit":{"code":0,"signal":null}}"#);
        recording::parse_str(&text, Path::new("resume.jsonl")).expect("test recording parses")
    }

    fn resume_scenario() -> Scenario {
        let text = "name = \"resume\"\nsummary = \"s\"\ntools = []\n\
            [[step]]\npanel = \"prompt\"\ntext = \"First prompt.\"\n  [[step.model]]\n  text = \"a\"\n\
            [[step]]\npanel = \"resume\"\n\
            [[step]]\npanel = \"prompt\"\ntext = \"Second prompt.\"\n  [[step.model]]\n  text = \"b\"\n";
        scenario::parse(Path::new("resume.toml"), text.as_bytes()).expect("test scenario parses")
    }

    #[test]
    fn a_resume_step_ends_process_1_and_feeds_process_2_to_a_new_bridge_with_the_session_id() {
        let replay = replay(&resume_recording(), &resume_scenario());
        let text = replay.transcript.render();
        assert_eq!(replay.divergences().count(), 0, "{text}");
        assert!(
            text.contains("-- agent process 1 exited with code 0"),
            "{text}"
        );
        assert!(
            text.contains("-- agent process 2: new bridge with --resume"),
            "{text}"
        );
        let load = text
            .lines()
            .find(|l| l.starts_with("bridge>agent") && l.contains("session/load"))
            .unwrap_or("");
        assert!(load.contains(r#""sessionId":"<session 1>""#), "{text}");
        let results = replay
            .panel_lines
            .iter()
            .filter(|l| l.contains(r#""type":"result""#))
            .count();
        assert_eq!(results, 2, "{text}");
    }

    #[test]
    fn the_render_from_the_values_the_replay_parsed_is_the_render_from_the_lines() {
        let mut replay = replay(&resume_recording(), &resume_scenario());
        let agent_values = std::mem::take(&mut replay.agent_values);
        let panel_values = std::mem::take(&mut replay.panel_values);
        assert!(!agent_values.is_empty() && !panel_values.is_empty());
        assert_eq!(
            replay.transcript.render_parsed(panel_values, agent_values),
            replay.transcript.render()
        );
    }

    #[test]
    fn a_recording_that_stops_mid_turn_ends_in_a_stall_not_a_hang() {
        let mut rec = resume_recording();
        rec.events.truncate(5);
        rec.trailer = None;
        let replay = replay(&rec, &resume_scenario());
        let stalls: Vec<String> = replay
            .divergences()
            .filter(|d| matches!(d, Divergence::Stalled { .. }))
            .map(|d| d.headline())
            .collect();
        assert_eq!(
            stalls,
            ["stalled at step 2 (resume) waiting for the result of the running turn"]
        );
        assert!(replay.truncated);
    }

    #[test]
    fn a_replay_reading_the_agent_frames_from_the_file_is_the_replay_of_the_recording_in_memory() {
        let rec = resume_recording();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("resume.jsonl");
        let mut text = String::new();
        let line = |l: recording::Line| serde_json::to_string(&l).unwrap() + "\n";
        text.push_str(&line(recording::Line::Header(Box::new(rec.header.clone()))));
        for e in &rec.events {
            text.push_str(&line(recording::Line::Event(e.clone())));
        }
        text.push_str(&line(recording::Line::Trailer(
            rec.trailer.clone().unwrap(),
        )));
        std::fs::write(&path, text).unwrap();
        let indexed = super::super::source::Indexed::read(&path).unwrap();
        let streamed = replay_source(
            &indexed.source(&path),
            &resume_scenario(),
            Compat::default(),
        );
        let in_memory = replay(&rec, &resume_scenario());
        assert_eq!(streamed.transcript.render(), in_memory.transcript.render());
        assert_eq!(streamed.panel_lines, in_memory.panel_lines);
        assert!(streamed.read_error.is_none());
    }
}
