//! The tap: both legs of a live session (panel <-> bridge <-> agent), every
//! line in order with its time, in the recording format (format 1, see
//! `docs/recording-format.md` and `docs/tap.md`), scrubbed before it is
//! written. The host feeds it what it already sees; this module only turns
//! lines into scrubbed recording lines on a writer it is given.
//!
//! The panel leg is the recording format's `stream-json` leg (the bridge
//! stands where Claude Code stands: `to_agent` is the panel's line on our
//! stdin, `from_agent` ours on stdout); the agent leg is its `acp` leg, the
//! agent's stderr its `stderr` leg, the host's notes `harness` notes. Line 1
//! is the header, which names the agent from its initialize answer, so the
//! events before that answer are held (bounded) until it comes.

use std::io::{self, Write};

use recording_format::recording::{
    ACP_OFFERED, Dir, Event, Exit, Header, Leg, Line, SessionSetup, Trailer,
};
use recording_format::tap::{TAP_FORMAT, TapFields, TapLaunch, TapMcp};
use serde_json::{Map, Value};

use crate::LaunchSpec;
use crate::build_stamp::BuildStamp;
use chunks::{ChunkWindow, Pending};

mod chunks;
pub use recording_format::scrub;

pub use chunks::streamed_text;
pub use recording_format::recording::Outcome;
pub use scrub::{REDACTED, SECRET_PATTERNS, Scrubber, ScrubberBuilder};

/// The recording format a tap is written in (it stores no payload by content).
pub const RECORDING_FORMAT: u32 = 1;

/// The placeholders a tap uses, with what each stands for (listed in every header).
pub const PLACEHOLDERS: &[(&str, &str)] = &[
    ("<home>", "the user's home directory"),
    ("<workspace>", "cwd of the session"),
    ("<temp>", "the system temp directory"),
    ("<mcp-url>", "the URL of the panel's MCP server"),
    (
        "<mcp-token>",
        "the bearer token of the panel's MCP server's Authorization header",
    ),
    (
        REDACTED,
        "another MCP header value, a secret-named environment variable's value, or text shaped like a credential",
    ),
    ("<hostname>", "the machine's host name"),
    ("<kernel-release>", "the machine's kernel release"),
    ("<user>", "the user's login name"),
];

/// Events held for the header at most (then it is written without `agent_info`).
const MAX_HELD_EVENTS: usize = 1024;
const MAX_HELD_BYTES: usize = 4 << 20;

/// Where a line went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Way {
    PanelToBridge,
    BridgeToPanel,
    BridgeToAgent,
    AgentToBridge,
    AgentStderr,
    /// What the host did or saw (agent started, exit, a signal).
    Note,
    /// A diagnostic the bridge wrote to its stderr.
    Diagnostic,
}

impl Way {
    /// The recording leg and direction.
    pub fn leg_dir(self) -> (Leg, Dir) {
        match self {
            Way::PanelToBridge => (Leg::StreamJson, Dir::ToAgent),
            Way::BridgeToPanel => (Leg::StreamJson, Dir::FromAgent),
            Way::BridgeToAgent => (Leg::Acp, Dir::ToAgent),
            Way::AgentToBridge => (Leg::Acp, Dir::FromAgent),
            Way::AgentStderr => (Leg::Stderr, Dir::FromAgent),
            Way::Note | Way::Diagnostic => (Leg::Harness, Dir::Note),
        }
    }

    /// The tag of the `--bridge-log` view.
    pub fn tag(self) -> &'static str {
        match self {
            Way::PanelToBridge => "panel>",
            Way::BridgeToPanel => "<panel",
            Way::BridgeToAgent => "agent<",
            Way::AgentToBridge => "<agent",
            Way::AgentStderr => "agent-stderr",
            Way::Note => "host",
            Way::Diagnostic => "diag",
        }
    }

    fn proc(self) -> u32 {
        match self {
            Way::Note | Way::Diagnostic => 0,
            _ => 1,
        }
    }
}

/// The kinds of [`SECRET_PATTERNS`], each once, in order.
fn scrub_kinds() -> Vec<String> {
    let mut kinds: Vec<String> = Vec::new();
    for (kind, _) in SECRET_PATTERNS {
        if !kinds.iter().any(|k| k == kind) {
            kinds.push(kind.to_string());
        }
    }
    kinds
}

/// What the header says besides what the agent's initialize answer adds.
#[derive(Clone, Debug)]
pub struct TapSession {
    /// The bridge build that writes the tap (header `build`).
    pub build: BuildStamp,
    /// UTC date, `YYYY-MM-DD`.
    pub date: String,
    /// The agent's command line (scrubbed before it is written).
    pub argv: Vec<String>,
    pub launch: LaunchSpec,
}

/// How the session ended, for the trailer.
#[derive(Clone, Debug)]
pub struct TapEnd {
    /// `Ok` (the bridge exits 0), `Interrupted` (a signal ended it), `Error`.
    pub outcome: Outcome,
    /// The agent's exit: code, or the signal that ended it.
    pub agent_code: Option<i32>,
    pub agent_signal: Option<i32>,
    /// The bridge's own exit code.
    pub bridge_exit: i32,
}

/// A line over the line cap: where it went and its length, never its
/// text (the event's `skipped` field).
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub(crate) struct Skipped {
    leg: Leg,
    dir: Dir,
    bytes: u64,
}

/// Turns session lines into a scrubbed tap on `out` (and, optionally, the
/// tagged `--bridge-log` view on `log`, written as lines come).
pub struct TapEncoder<W: Write> {
    out: Option<W>,
    log: Option<Box<dyn Write + Send>>,
    scrubber: Scrubber,
    seq: u64,
    last_ms: u64,
    /// The header, until it is written.
    header: Option<Header>,
    /// The id of the `initialize` request the bridge sent, until answered.
    init_id: Option<Value>,
    held: Vec<Pending>,
    held_bytes: usize,
    /// Streamed text held until what spans its pieces is scrubbed.
    window: ChunkWindow,
}

impl<W: Write> TapEncoder<W> {
    /// An encoder writing the tap to `out` (none: only the `log` view).
    pub fn new(
        session: TapSession,
        scrubber: Scrubber,
        out: Option<W>,
        log: Option<Box<dyn Write + Send>>,
    ) -> TapEncoder<W> {
        let mut scrubber = scrubber;
        let mut s = |text: &str| scrubber.scrub(text).into_owned();
        let spec = &session.launch;
        let launch = TapLaunch {
            model: spec.model.clone(),
            permission_mode: spec.permission_mode.clone(),
            system_prompt: spec.system_prompt.as_deref().map(&mut s),
            append_system_prompt: spec.append_system_prompt.as_deref().map(&mut s),
            resume_session_id: spec.resume_session_id.clone(),
            auth_method: spec.auth_method.clone(),
            script_gate: spec.script_gate,
            mcp: spec.mcp.as_ref().map(|m| TapMcp {
                name: m.name.clone(),
                url: s(&m.url),
                authorization: m.authorization.is_some(),
            }),
        };
        let argv: Vec<String> = session.argv.iter().map(|a| s(a)).collect();
        let agent = argv
            .first()
            .map(|p| p.rsplit(['/', '\\']).next().unwrap_or(p).to_string())
            .unwrap_or_default();
        // what the launch did beyond what the agent advertises, as a
        // recording's header says it, so that a replay launches alike
        let setup = SessionSetup {
            mcp_unadvertised: spec.mcp_unadvertised,
            config_options: spec
                .config_options
                .iter()
                .map(|(id, value)| (id.clone(), s(value)))
                .collect(),
        };
        let tap = TapFields {
            tap: TAP_FORMAT,
            bridge_version: session.build.version.to_string(),
            launch,
            scrub_patterns: scrub_kinds(),
        };
        let header = Header {
            format: RECORDING_FORMAT,
            agent,
            agent_info: Value::Null,
            package: String::new(),
            argv,
            scenario: String::new(),
            scenario_sha256: String::new(),
            model_mode: "live".into(),
            harness_version: String::new(),
            client_capabilities: Value::Null,
            protocol_version: 0,
            acp_schema: None,
            build: Some(session.build.to_json()),
            date: session.date,
            isolation: "none".into(),
            synthetic: false,
            placeholders: PLACEHOLDERS
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            session: setup,
            extra: tap.into_extra(),
        };
        TapEncoder {
            out,
            log,
            scrubber,
            seq: 0,
            last_ms: 0,
            header: Some(header),
            init_id: None,
            held: Vec::new(),
            held_bytes: 0,
            window: ChunkWindow::default(),
        }
    }

    /// A credential learnt mid-session (an MCP server's header in the
    /// panel's `initialize`): replaced by [`REDACTED`] from now on.
    pub fn learn_secret(&mut self, value: &str) {
        self.scrubber.add_literal("mcp-header", REDACTED, value);
    }

    /// One line of the session, `ms` after the bridge started.
    pub fn line(&mut self, ms: u64, way: Way, text: &str) -> io::Result<()> {
        let raw = self.scrubber.scrub(text);
        if let Some(log) = &mut self.log {
            // A failing debug view must not end the session.
            let _ = writeln!(log, "{} {raw}", way.tag());
        }
        if self.out.is_none() {
            return Ok(());
        }
        let answered = self.header.is_some() && self.learn_from(way, &raw);
        self.through_window(Pending::new(ms, way, raw.into_owned(), None))?;
        if answered {
            self.write_header()?;
        }
        Ok(())
    }

    /// A line over the line cap, which the bridge skipped: its length is
    /// recorded, never its text.
    pub fn skipped(&mut self, ms: u64, way: Way, bytes: u64, cap: usize) -> io::Result<()> {
        let (leg, dir) = way.leg_dir();
        let text = format!(
            "skipped a line of {bytes} bytes ({} {}): over the line cap of {cap} bytes",
            leg.as_str(),
            dir.as_str()
        );
        if let Some(log) = &mut self.log {
            let _ = writeln!(log, "{} {text}", Way::Note.tag());
        }
        if self.out.is_none() {
            return Ok(());
        }
        let skipped = Skipped { leg, dir, bytes };
        self.through_window(Pending::new(ms, Way::Note, text, Some(skipped)))
    }

    /// Passes a line through the chunk window and writes what it releases.
    fn through_window(&mut self, line: Pending) -> io::Result<()> {
        for p in self.window.push(line, &mut self.scrubber) {
            self.event(p)?;
        }
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        if let Some(log) = &mut self.log {
            let _ = log.flush();
        }
        match &mut self.out {
            Some(out) => out.flush(),
            None => Ok(()),
        }
    }

    /// What was replaced so far, by kind.
    pub fn scrubbed(&self) -> Map<String, Value> {
        self.scrubber
            .counts()
            .iter()
            .map(|(k, v)| (k.to_string(), Value::from(*v)))
            .collect()
    }

    /// Where the tap is written, if anywhere.
    pub fn out(&self) -> Option<&W> {
        self.out.as_ref()
    }

    /// Writes what is held and the trailer, flushes, and hands the writer back.
    pub fn finish(mut self, ms: u64, end: TapEnd, notes: Vec<String>) -> io::Result<Option<W>> {
        for p in self.window.drain(&mut self.scrubber) {
            self.event(p)?;
        }
        self.write_header()?;
        let scrubbed = self.scrubbed();
        if self.out.is_some() {
            self.seq += 1;
            let notes: Vec<String> = notes
                .iter()
                .map(|n| self.scrubber.scrub(n).into_owned())
                .collect();
            let mut extra = Map::new();
            extra.insert("bridge_exit".into(), end.bridge_exit.into());
            extra.insert("scrubbed".into(), scrubbed.into());
            let trailer = Trailer {
                seq: self.seq,
                ms: ms.max(self.last_ms),
                outcome: end.outcome,
                exit: Exit {
                    code: end.agent_code,
                    signal: end.agent_signal,
                },
                notes,
                extra,
            };
            self.write_line(&Line::Trailer(trailer))?;
        }
        self.flush()?;
        Ok(self.out.take())
    }

    /// A line the chunk window released: held while the header waits,
    /// else written.
    fn event(&mut self, line: Pending) -> io::Result<()> {
        if self.header.is_some() {
            self.held_bytes += line.raw.len();
            self.held.push(line);
            if self.held.len() >= MAX_HELD_EVENTS || self.held_bytes >= MAX_HELD_BYTES {
                // The agent never answered initialize in time: no agent_info.
                self.write_header()?;
            }
            return Ok(());
        }
        self.write_event(line)
    }

    fn write_event(&mut self, line: Pending) -> io::Result<()> {
        if self.out.is_none() {
            return Ok(());
        }
        let Pending {
            ms,
            way,
            raw,
            skipped,
            ..
        } = line;
        self.seq += 1;
        self.last_ms = self.last_ms.max(ms);
        let (leg, dir) = way.leg_dir();
        let mut extra = Map::new();
        if let Some(skipped) = skipped.and_then(|s| serde_json::to_value(s).ok()) {
            extra.insert("skipped".into(), skipped);
        }
        let event = Event {
            seq: self.seq,
            ms,
            leg,
            dir,
            proc: way.proc(),
            raw,
            http: None,
            extra,
        };
        self.write_line(&Line::Event(event))
    }

    /// One line of the format, whole.
    fn write_line(&mut self, line: &Line) -> io::Result<()> {
        let Some(out) = &mut self.out else {
            return Ok(());
        };
        serde_json::to_writer(&mut *out, line)?;
        out.write_all(b"\n")
    }

    /// While the header waits: the bridge's `initialize` request and the
    /// agent's answer to it fill in the client capabilities, the protocol
    /// version and `agent_info`; the answer releases the header.
    fn learn_from(&mut self, way: Way, raw: &str) -> bool {
        match way {
            Way::BridgeToAgent if self.init_id.is_none() && raw.contains("\"initialize\"") => {
                let Ok(v) = serde_json::from_str::<Value>(raw) else {
                    return false;
                };
                if v["method"] != "initialize" {
                    return false;
                }
                self.init_id = Some(v["id"].clone());
                if let Some(h) = &mut self.header {
                    let params = &v["params"];
                    // v2 declares `capabilities`, v1 `clientCapabilities`;
                    // a v2 offer is kept so a replay offers the same
                    let v2 = params["protocolVersion"] == 2;
                    let caps = if v2 {
                        "capabilities"
                    } else {
                        "clientCapabilities"
                    };
                    h.client_capabilities = params[caps].clone();
                    if v2 {
                        h.extra.insert(ACP_OFFERED.into(), 2.into());
                    }
                }
                false
            }
            Way::AgentToBridge
                if self.init_id.is_some()
                    && (raw.contains("\"result\"") || raw.contains("\"error\"")) =>
            {
                let Ok(v) = serde_json::from_str::<Value>(raw) else {
                    return false;
                };
                if Some(&v["id"]) != self.init_id.as_ref() {
                    return false;
                }
                if v.get("result").is_none() {
                    // a refused offer: the next `initialize` (v1 after v2)
                    // is the one to learn from
                    self.init_id = None;
                    return false;
                }
                let result = &v["result"];
                // v2 names the agent `info`
                let info = match result.get("agentInfo") {
                    Some(info) => info,
                    None => &result["info"],
                };
                if let Some(h) = &mut self.header {
                    h.agent_info = info.clone();
                    if let Some(name) = info["name"].as_str() {
                        h.agent = name.to_string();
                    }
                    if let Some(version) = result["protocolVersion"].as_u64() {
                        h.protocol_version = version;
                    }
                }
                true
            }
            _ => false,
        }
    }

    /// Writes the header (if not yet written), then the events held for it.
    fn write_header(&mut self) -> io::Result<()> {
        let Some(header) = self.header.take() else {
            return Ok(());
        };
        self.write_line(&Line::Header(Box::new(header)))?;
        self.held_bytes = 0;
        for held in std::mem::take(&mut self.held) {
            self.write_event(held)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ended_ok() -> TapEnd {
        TapEnd {
            outcome: Outcome::Ok,
            agent_code: None,
            agent_signal: None,
            bridge_exit: 0,
        }
    }

    fn session() -> TapSession {
        TapSession {
            build: BuildStamp::new("acp-bridge", "9.9.9", "abc", "false", "t"),
            date: "2026-01-02".into(),
            argv: vec!["/opt/agents/bin/some-agent".into(), "--acp".into()],
            launch: LaunchSpec::default(),
        }
    }

    /// The tap of `lines` (each `ms` = its index), parsed line by line.
    fn tap_of(lines: &[(Way, String)]) -> Vec<Value> {
        tap_of_session(session(), lines)
    }

    fn tap_of_session(session: TapSession, lines: &[(Way, String)]) -> Vec<Value> {
        let mut tap = TapEncoder::new(session, Scrubber::builder().build(), Some(Vec::new()), None);
        for (ms, (way, line)) in lines.iter().enumerate() {
            tap.line(ms as u64, *way, line).unwrap();
        }
        let out = tap
            .finish(lines.len() as u64, ended_ok(), Vec::new())
            .unwrap()
            .unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn the_header_keeps_a_v2_offer_and_what_answered_it() {
        let v2_init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"acp-bridge","version":"1"},"capabilities":{}}}"#;
        let v1_init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"terminal":false}}}"#;
        // (case, lines, negotiated, client capabilities, agent_info)
        type Case = (&'static str, Vec<(Way, String)>, u64, Value, Value);
        let cases: Vec<Case> = vec![
            (
                "v2 answered",
                vec![
                    (Way::BridgeToAgent, v2_init.into()),
                    (
                        Way::AgentToBridge,
                        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"info":{"name":"agent-x","version":"2.0.0"}}}"#.into(),
                    ),
                ],
                2,
                json!({}),
                json!({"name": "agent-x", "version": "2.0.0"}),
            ),
            (
                "v2 refused (the refusal mentions a result), then v1",
                vec![
                    (Way::BridgeToAgent, v2_init.into()),
                    (
                        Way::AgentToBridge,
                        r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32602,"message":"no \"result\" for you"}}"#.into(),
                    ),
                    (Way::BridgeToAgent, v1_init.into()),
                    (
                        Way::AgentToBridge,
                        r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentInfo":{"name":"agent-y","version":"1.0.0"}}}"#.into(),
                    ),
                ],
                1,
                json!({"terminal": false}),
                json!({"name": "agent-y", "version": "1.0.0"}),
            ),
        ];
        for (case, lines, negotiated, caps, info) in cases {
            let header = tap_of(&lines).remove(0);
            assert_eq!(header["acp_offered"], 2, "{case}");
            assert_eq!(header["protocol_version"], negotiated, "{case}");
            assert_eq!(header["client_capabilities"], caps, "{case}");
            assert_eq!(header["agent_info"], info, "{case}");
        }
    }

    #[test]
    fn the_header_keeps_what_the_launch_did_beyond_what_the_agent_advertises() {
        let header = |launch: LaunchSpec| {
            let session = TapSession {
                launch,
                ..session()
            };
            tap_of_session(session, &[]).remove(0)
        };
        assert_eq!(header(LaunchSpec::default()).get("session"), None);
        let launch = LaunchSpec {
            mcp_unadvertised: true,
            config_options: vec![
                ("mode".into(), "ask".into()),
                ("effort".into(), "low".into()),
            ],
            ..LaunchSpec::default()
        };
        let setup = &header(launch)["session"];
        assert_eq!(setup["mcp_unadvertised"], true);
        // in the order of the flags, which is the order they were set
        let ids: Vec<&String> = setup["config_options"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(ids, ["mode", "effort"]);
        assert_eq!(setup["config_options"]["mode"], "ask");
    }

    const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"terminal":false}}}"#;

    #[test]
    fn the_header_names_the_agent_from_its_answer_to_the_bridges_initialize() {
        let answer = |id: u32| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":1,"agentInfo":{{"name":"agent-x","version":"1.2.3"}}}}}}"#
            )
        };
        // (case, lines, agent, agent_info)
        type Case = (&'static str, Vec<(Way, String)>, &'static str, Value);
        let cases: Vec<Case> = vec![
            (
                "answered",
                vec![
                    (Way::PanelToBridge, "{}".into()),
                    (Way::BridgeToAgent, INIT.into()),
                    (Way::AgentStderr, "starting".into()),
                    (Way::AgentToBridge, answer(0)),
                ],
                "agent-x",
                json!({"name":"agent-x","version":"1.2.3"}),
            ),
            (
                "an answer to another request",
                vec![
                    (Way::BridgeToAgent, INIT.into()),
                    (Way::AgentToBridge, answer(7)),
                ],
                "some-agent",
                Value::Null,
            ),
            (
                "never answered",
                vec![(Way::BridgeToAgent, INIT.into())],
                "some-agent",
                Value::Null,
            ),
        ];
        for (case, lines, agent, info) in cases {
            let tap = tap_of(&lines);
            let header = &tap[0];
            assert_eq!(header["type"], "header", "{case}");
            assert_eq!(header["agent"], agent, "{case}");
            assert_eq!(header["agent_info"], info, "{case}");
            assert_eq!(
                header["client_capabilities"],
                json!({"terminal":false}),
                "{case}"
            );
            assert_eq!(header["bridge_version"], "9.9.9", "{case}");
            assert_eq!(header["build"]["commit"], "abc", "{case}");
            // every line, in order, after the header, then the trailer
            let raws: Vec<&str> = tap[1..tap.len() - 1]
                .iter()
                .map(|e| e["raw"].as_str().unwrap())
                .collect();
            let want: Vec<&str> = lines.iter().map(|(_, l)| l.as_str()).collect();
            assert_eq!(raws, want, "{case}");
            assert_eq!(tap.last().unwrap()["type"], "trailer", "{case}");
        }
    }

    #[test]
    fn events_held_for_the_header_are_bounded() {
        let lines: Vec<(Way, String)> = (0..MAX_HELD_EVENTS + 10)
            .map(|i| (Way::AgentStderr, format!("line {i}")))
            .collect();
        let mut tap = TapEncoder::new(
            session(),
            Scrubber::builder().build(),
            Some(Vec::new()),
            None,
        );
        for (ms, (way, line)) in lines.iter().enumerate() {
            tap.line(ms as u64, *way, line).unwrap();
            assert!(tap.held.len() < MAX_HELD_EVENTS, "held {}", tap.held.len());
        }
        assert!(
            tap.header.is_none(),
            "the header went out without agent_info"
        );
    }

    #[test]
    fn the_header_keeps_the_system_prompt_and_the_appended_one_apart() {
        let mut tapped = session();
        tapped.launch.system_prompt = Some("Be terse.".into());
        tapped.launch.append_system_prompt = Some("Then stop.".into());
        tapped.launch.model = Some("model-b".into());
        let mut tap = TapEncoder::new(tapped, Scrubber::builder().build(), Some(Vec::new()), None);
        let answer =
            r#"{"jsonrpc":"2.0","id":0,"result":{"agentInfo":{"name":"a","version":"1.0.0"}}}"#;
        tap.line(0, Way::BridgeToAgent, INIT).unwrap();
        tap.line(1, Way::AgentToBridge, answer).unwrap();
        let out = tap.finish(2, ended_ok(), Vec::new()).unwrap().unwrap();
        let header: Value =
            serde_json::from_str(String::from_utf8(out).unwrap().lines().next().unwrap()).unwrap();
        let launch = &header["launch"];
        assert_eq!(launch["system_prompt"], "Be terse.");
        assert_eq!(launch["append_system_prompt"], "Then stop.");
        assert_eq!(launch["model"], "model-b");
    }
}
