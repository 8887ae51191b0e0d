//! The bridge state machine: one panel line or one agent line in, lines for
//! both sides out. No I/O, no clock, no output that depends on randomness:
//! time and ids come in from the host, so replay gives the same output for
//! the same input.
//!
//! Tolerance: a line that does not parse, an unknown method or update kind,
//! or a field of the wrong type gives a diagnostic and is skipped; nothing
//! unknown is fatal and nothing here panics on input.

use std::time::Duration;

use serde_json::{Value, json};

use crate::acp::capabilities::AgentCapabilities;
use crate::acp::client::{self, ModeChange, ModelChange, PermissionIntent, PromptImage};
use crate::acp::permission_mode::PermissionMode;
use crate::acp::revision::Revision;
use crate::acp::rpc_error::RpcError;
use crate::acp::v2_frames::{V2Read, V2Reader};
use crate::call::identity::RegisteredServers;
use crate::call::permission::{PanelAnswer, PanelPermissions, PendingPermission};
use crate::call::result as tool_result;
use crate::call::table::ToolCalls;
use crate::core::turn::{BlockKind, LastText, TextInLine, Turn};
use crate::ids::IdSource;
use crate::launch::{LaunchSpec, McpEndpoint};
use crate::script_gate;
use crate::stream_json::{self, InitInfo};

mod agent_input;
mod directories;
use directories::Directories;
mod handshake;
mod instructions;
mod line_cap;
mod panel_initialize;
use instructions::Instructions;
pub use instructions::{PanelInstructions, SessionInstructions};
mod line_text;
mod mcp_server;
use mcp_server::McpServer;
mod outstanding;
use outstanding::{Answer, Outstanding, Pending};
mod panel_input;
mod session;
use session::Session;
mod session_notes;
mod startup;
use startup::Startup;
pub(crate) mod turn;
mod turn_output;
use line_text::{LINE_CAPACITY, json_len, line_written, line_written_into, value_line_text};

/// How long the agent may take to answer each handshake request
/// (`initialize`, `session/new|load`, `authenticate`).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long the agent may take to answer a panel `set_permission_mode` or
/// `set_model` before the panel gets an error response.
pub const CONTROL_TIMEOUT: Duration = Duration::from_secs(60);

/// How long the agent may take to answer a `session/prompt` the panel
/// interrupted before the turn ends without it ([`crate::LaunchSpec::cancel_grace`]).
pub const DEFAULT_CANCEL_GRACE: Duration = Duration::from_secs(10);

/// The model name reported while the agent has named none.
const DEFAULT_MODEL: &str = "default";

/// Lines produced by one input.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Output {
    pub to_agent: Vec<String>,
    pub to_panel: Vec<String>,
    pub diagnostics: Vec<String>,
    pub close_agent_stdin: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Nothing sent to the agent yet.
    Idle,
    Handshaking,
    Ready,
    /// The handshake failed or the agent exited: every later prompt fails fast.
    Failed,
}

pub struct Bridge {
    spec: LaunchSpec,
    ids: Box<dyn IdSource + Send>,
    out: Output,
    phase: Phase,
    failure: Option<String>,
    /// The requests sent to the agent that wait on its answer.
    requests: Outstanding,
    /// The handshake's negotiation and deadline, and what waits for it.
    startup: Startup,
    /// The panel's MCP server: the endpoint registered with the agent and
    /// what showed whether the agent reaches it.
    mcp: McpServer,
    /// Workspace roots beside `cwd`, asked and sent.
    directories: Directories,
    /// The revision the agent selected.
    revision: Revision,
    /// v2 frames read into v1's model.
    v2: V2Reader,
    /// The last `session_state_changed` state sent (a session starts idle).
    announced_state: &'static str,
    agent: AgentCapabilities,
    /// The agent's session: its id, state, commands, usage, model and mode.
    session: Session,
    /// The session's custom instructions and where they went.
    instructions: Instructions,
    init_emitted: bool,
    turn: Option<Turn>,
    tool_calls: ToolCalls,
    permissions: PanelPermissions,
    next_msg: u64,
    panel_eof: bool,
    stdin_closed: bool,
    /// When the interrupted prompt's grace ends (see [`DEFAULT_CANCEL_GRACE`]).
    cancel_deadline: Option<Duration>,
    /// The agent's plans (see [`session_notes`]).
    plans: session_notes::Plans,
    /// Tool lists of MCP servers given while calls were open: taken once
    /// none is (see [`Bridge::set_server_tools`]).
    waiting_tool_lists: Vec<(String, Vec<String>)>,
}

/// How much of an offending line a diagnostic quotes.
const QUOTED_LINE_MAX: usize = 200;

fn truncate(s: &str) -> String {
    crate::shorten::shorten(s, QUOTED_LINE_MAX)
}

impl Bridge {
    /// A bridge for one agent process. Nothing is sent until the panel's
    /// first line (its `initialize`, or a prompt) starts the handshake.
    pub fn new(spec: LaunchSpec, ids: Box<dyn IdSource + Send>) -> Bridge {
        let servers: Vec<String> = spec.mcp.iter().map(|m| m.name.clone()).collect();
        let mcp = McpServer::new(spec.mcp.clone());
        let permission_mode = spec
            .permission_mode
            .as_deref()
            .map_or(PermissionMode::Default, PermissionMode::parse);
        Bridge {
            spec,
            ids,
            out: Output::default(),
            phase: Phase::Idle,
            failure: None,
            requests: Outstanding::default(),
            startup: Startup::default(),
            mcp,
            directories: Directories::default(),
            revision: Revision::V1,
            v2: V2Reader::default(),
            announced_state: "idle",
            agent: AgentCapabilities::default(),
            session: Session::new(permission_mode),
            instructions: Instructions::default(),
            init_emitted: false,
            turn: None,
            tool_calls: ToolCalls::new(servers),
            permissions: PanelPermissions::default(),
            next_msg: 0,
            panel_eof: false,
            stdin_closed: false,
            cancel_deadline: None,
            plans: session_notes::Plans::default(),
            waiting_tool_lists: Vec::new(),
        }
    }

    /// The agent's session id, once a session exists.
    pub fn session_id(&self) -> Option<&str> {
        self.session.id.as_deref()
    }

    /// Whether a turn is running (a prompt was sent and its `result` is not out yet).
    pub fn turn_running(&self) -> bool {
        self.turn.is_some()
    }

    /// One line the panel wrote (no trailing newline needed).
    pub fn on_panel_line(&mut self, line: &str, now: Duration) -> Output {
        // whatever the panel's line makes the bridge say comes after them
        self.announce_held_back();
        self.panel_line(line, now);
        self.take()
    }

    /// One line of the agent's stdout.
    pub fn on_agent_line(&mut self, line: &str, now: Duration) -> Output {
        self.agent_line(line, now);
        self.take()
    }

    /// The agent process ended (`None`: by a signal). A running turn ends
    /// with an `is_error` result; later prompts fail fast.
    pub fn on_agent_exit(&mut self, code: Option<i32>, now: Duration) -> Output {
        let how = match code {
            Some(c) => format!("agent exited with code {c}"),
            None => "agent was killed by a signal".to_string(),
        };
        self.agent_gone(how, now);
        self.take()
    }

    /// The agent's stdout ended: nothing it does can reach the panel any
    /// more, so a running turn ends at once (`is_error`), later prompts fail
    /// fast, and the agent's stdin is closed so the host stops it.
    pub fn on_agent_stdout_closed(&mut self, now: Duration) -> Output {
        const HOW: &str = "the agent closed its stdout";
        let expected = self.stdin_closed && self.turn.is_none() && self.phase != Phase::Handshaking;
        if expected && self.phase != Phase::Failed {
            // we closed its stdin first: the usual way an agent ends
            self.phase = Phase::Failed;
            self.failure = Some(HOW.to_string());
        } else if self.phase != Phase::Failed {
            self.agent_gone(HOW.to_string(), now);
        }
        self.close_stdin();
        self.take()
    }

    /// Ends what the agent owed: the handshake, the running turn, the panel's
    /// pending control requests. Later prompts fail fast with `how`.
    fn agent_gone(&mut self, how: String, now: Duration) {
        if self.phase == Phase::Handshaking {
            self.fail_handshake(&format!("{how} during the handshake"), now);
        } else {
            self.diag(how.clone());
            // nothing more can be sent to a dead agent
            self.permissions.clear();
            if let Some(t) = self.turn.as_mut() {
                let queued = std::mem::take(&mut t.queue).len();
                t.fail(format!("{how} mid-turn"));
                if queued > 0 {
                    self.diag(format!(
                        "{queued} queued prompt(s) not sent: the agent is gone"
                    ));
                }
                self.end_turn(now);
            }
            self.phase = Phase::Failed;
            self.failure = Some(how);
        }
        self.permissions.clear();
        for request_id in self.requests.end() {
            self.answer_panel(stream_json::control_error(
                &request_id,
                "the agent exited",
                None,
            ));
        }
        self.startup.stop_waiting();
        self.cancel_deadline = None;
    }

    /// The panel closed its side. The agent's stdin is closed at once when
    /// idle, else once the running turn's `result` is out (like `claude -p`).
    pub fn on_panel_eof(&mut self, _now: Duration) -> Output {
        self.end_panel_input();
        self.take()
    }

    /// The panel gives no more input (EOF, or `end_session`): open
    /// permission requests are refused, and the agent's stdin closes once no
    /// turn runs.
    fn end_panel_input(&mut self) {
        self.panel_eof = true;
        // nobody is left to answer permission requests: refuse them, so the
        // running turn can end instead of waiting forever
        if !self.permissions.is_empty() {
            self.diag(format!(
                "panel input ended with {} permission request(s) open; answered cancelled",
                self.permissions.len()
            ));
            self.cancel_pending_permissions();
        }
        if self.turn.is_none() && self.phase != Phase::Handshaking && !self.startup.has_deferred() {
            self.close_stdin();
        }
    }

    /// When [`Bridge::on_tick`] must be called next (a handshake request's
    /// timeout, an interrupted prompt's grace, a panel control request's
    /// timeout, the end of a held call's wait), on the same clock as the
    /// `now` passed in.
    pub fn next_deadline(&self) -> Option<Duration> {
        [
            self.startup.deadline(),
            self.cancel_deadline,
            self.tool_calls.next_hold_end(),
            self.requests.next_panel_due(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Time passed: fails the handshake, ends an interrupted turn whose
    /// prompt the agent did not answer in time, answers panel control
    /// requests the agent did not answer in time, and announces held calls
    /// whose wait for a name or arguments is over.
    pub fn on_tick(&mut self, now: Duration) -> Output {
        self.control_requests_due(now);
        self.cancel_grace_due(now);
        self.holds_due(now);
        if let Some(d) = self.startup.deadline()
            && now >= d
        {
            let waiting = (self.requests.handshake_waiting()).unwrap_or("the handshake");
            let why = format!(
                "the agent did not answer {waiting} within {}s",
                HANDSHAKE_TIMEOUT.as_secs()
            );
            self.fail_handshake(&why, now);
        }
        self.take()
    }

    /// The MCP servers registered with the agent, once the session's set is
    /// settled (the handshake started; `None` before): what the host lists
    /// the tools of, once per session.
    pub fn registered_mcp_servers(&self) -> Option<Vec<McpEndpoint>> {
        match self.phase {
            Phase::Idle => None,
            Phase::Failed => Some(Vec::new()),
            Phase::Handshaking | Phase::Ready => {
                Some(self.mcp.endpoint().into_iter().cloned().collect())
            }
        }
    }

    /// The tools MCP server `server` lists (its `tools/list`), for the bare
    /// tool name rule ([`crate::call::server_tools`]). Taken at once when no call
    /// is open, else when the turn ends: a call's name never changes
    /// under it. Without a list the core names calls as before.
    pub fn set_server_tools(&mut self, server: &str, tools: Vec<String>) -> Output {
        self.waiting_tool_lists.push((server.to_string(), tools));
        self.take_tool_lists();
        self.take()
    }

    /// Takes the waiting tool lists when no call is open.
    fn take_tool_lists(&mut self) {
        if self.waiting_tool_lists.is_empty() || self.tool_calls.any_open() {
            return;
        }
        let mut servers = RegisteredServers::clone(&self.tool_calls.servers);
        for (server, tools) in std::mem::take(&mut self.waiting_tool_lists) {
            if !servers.names().contains(&server) {
                self.diag(format!(
                    "tools of MCP server {server}, which is not registered: kept aside"
                ));
            }
            servers.set_tools(&server, tools);
        }
        self.tool_calls.servers = std::sync::Arc::new(servers);
    }

    // ------------------------------------------------------------ plumbing

    /// Claude Code's `session_state_changed` after an input that changed
    /// the session's state, when the panel asks for them: `running` while a
    /// turn runs, `requires_action` while the panel is asked a permission,
    /// `idle` once the turn's result is out. One rule for both ACP
    /// revisions: v2's `state_update`s end turns, and turns make the state.
    fn announce_session_state(&mut self) {
        let host_only = match self.spec.session_state_lines {
            crate::launch::SessionStateLines::Off => return,
            crate::launch::SessionStateLines::HostOnly => true,
            crate::launch::SessionStateLines::Emitted => false,
        };
        let state = match (&self.turn, self.permissions.is_empty()) {
            (None, _) => "idle",
            (Some(_), false) => "requires_action",
            (Some(_), true) => "running",
        };
        if state == self.announced_state || self.session.id.is_none() {
            return;
        }
        self.announced_state = state;
        self.emit_stamped(
            |stamps| {
                let line = stream_json::SessionStateChanged::new(state, host_only, stamps);
                line_written(|text| serde_json::to_writer(text, &line))
            },
            "session_state_changed",
        );
    }

    fn take(&mut self) -> Output {
        self.announce_session_state();
        // the line holding the turn's last text leaves: the text is kept
        if let Some(t) = self.turn.as_mut()
            && let LastText::InLine(at) = &t.last_text
        {
            let text = (self.out.to_panel.get(at.line)).and_then(|l| l.get(at.range.clone()));
            t.last_text = LastText::Text(
                text.and_then(|json| serde_json::from_str(json).ok())
                    .unwrap_or_default(),
            );
        }
        std::mem::take(&mut self.out)
    }

    fn diag(&mut self, s: impl Into<String>) {
        self.out.diagnostics.push(s.into());
    }

    /// Writes the line `write` makes with this line's stamps.
    fn emit_stamped(
        &mut self,
        write: impl FnOnce(stream_json::Stamps<'_>) -> serde_json::Result<String>,
        what: &str,
    ) {
        let uuid = self.ids.next_uuid();
        let line = write(stream_json::Stamps {
            session_id: self.stamp_session_id(),
            uuid: &uuid,
        });
        self.push_typed_line(line, what);
    }

    /// Answers a panel `control_request` (a line with no stamps).
    fn answer_panel<B: serde::Serialize>(&mut self, response: stream_json::ControlResponse<'_, B>) {
        let line = line_written(|text| serde_json::to_writer(text, &response));
        self.push_typed_line(line, "control_response");
    }

    /// Echoes one of the panel's own lines back to it, stamping
    /// `session_id` and `uuid` where the line carries them (the bridge's own
    /// lines are typed and take their [`stream_json::Stamps`]).
    fn emit(&mut self, v: Value) {
        self.emit_with_uuid(v, None);
    }

    fn emit_with_uuid(&mut self, mut v: Value, uuid: Option<String>) {
        self.stamp(&mut v, uuid);
        let line = value_line_text(&v);
        self.push_typed_line(line, "line");
    }

    /// Stamps `session_id` and `uuid` on the line types that carry them.
    fn stamp(&mut self, v: &mut Value, uuid: Option<String>) {
        if let Some(obj) = v.as_object_mut()
            && obj.contains_key("session_id")
        {
            obj.insert("session_id".into(), json!(self.stamp_session_id()));
            let uuid = uuid.unwrap_or_else(|| self.ids.next_uuid());
            obj.insert("uuid".into(), json!(uuid));
        }
    }

    /// Writes the turn's `result` line. Where the turn's last text is a
    /// JSON string in a line of this output (`at`), it is copied from there
    /// into the room that text had, so the text is never held a third time
    /// beside both lines.
    fn emit_result(&mut self, turn: &stream_json::TurnResult, at: Option<TextInLine>) {
        let uuid = self.ids.next_uuid();
        let stamps = stream_json::Stamps {
            session_id: self.stamp_session_id(),
            uuid: &uuid,
        };
        let in_line = at.and_then(|at| {
            let json = self.out.to_panel.get(at.line)?.get(at.range)?;
            Some((at.room, json))
        });
        let (room, result) = match in_line {
            Some((room, json)) => {
                let needed = json.len() + LINE_CAPACITY;
                // grown, the room would copy what it holds: a fresh one instead
                let mut room = if room.capacity() >= needed {
                    room
                } else {
                    Vec::with_capacity(needed)
                };
                room.clear();
                (room, stream_json::ResultText::Json(json))
            }
            None => (
                Vec::with_capacity(LINE_CAPACITY + turn.result.len()),
                stream_json::ResultText::Text(&turn.result),
            ),
        };
        let line = stream_json::ResultLine {
            turn,
            result,
            stamps,
        };
        let written = line_written_into(room, |text| line.write_to(text));
        self.push_typed_line(written, "result");
    }

    /// Writes one typed `stream_event` line with its stamps.
    fn emit_stream_event<E: serde::Serialize>(&mut self, event: &E) {
        let uuid = self.ids.next_uuid();
        let line = line_written(|text| {
            stream_json::StampedStreamEvent {
                kind: stream_json::StreamEventType::StreamEvent,
                event,
                session_id: self.stamp_session_id(),
                parent_tool_use_id: (),
                uuid: &uuid,
            }
            .write_to(text)
        });
        self.push_typed_line(line, "stream_event");
    }

    /// Writes one typed `assistant` / `user` line with its stamps.
    fn emit_message<M: stream_json::LineMessage>(
        &mut self,
        kind: stream_json::MessageLineType,
        message: &M,
    ) {
        let uuid = self.ids.next_uuid();
        let line = self.stamped_message(kind, message, &uuid);
        self.push_typed_line(line, "message");
    }

    /// Writes an `assistant` line of its own holding one text.
    fn emit_assistant_text(&mut self, msg_id: &str, text: &str) {
        let model = self.model_name();
        let message = stream_json::FoldedMessage::one_text(msg_id, &model, text);
        self.emit_message(stream_json::MessageLineType::Assistant, &message);
    }

    /// The text of a typed `assistant` / `user` line (see [`Bridge::emit_message`]),
    /// for a message borrowed from the bridge's own state.
    fn stamped_message<M: stream_json::LineMessage>(
        &self,
        kind: stream_json::MessageLineType,
        message: &M,
        uuid: &str,
    ) -> serde_json::Result<String> {
        self.stamped_message_sized(kind, message, uuid, LINE_CAPACITY)
    }

    /// [`Bridge::stamped_message`] into a line of `capacity` bytes reserved
    /// (a big message's line is not grown by doubling, with a copy per step).
    fn stamped_message_sized<M: stream_json::LineMessage>(
        &self,
        kind: stream_json::MessageLineType,
        message: &M,
        uuid: &str,
        capacity: usize,
    ) -> serde_json::Result<String> {
        line_written_into(Vec::with_capacity(capacity), |text| {
            stream_json::StampedMessage {
                kind,
                message,
                parent_tool_use_id: (),
                session_id: self.stamp_session_id(),
                uuid,
            }
            .write_to(text)
        })
    }

    fn push_typed_line(&mut self, line: serde_json::Result<String>, what: &str) {
        match line {
            Ok(l) => self.out.to_panel.push(l),
            Err(e) => self.diag(format!("{what} not serialisable ({e}); dropped")),
        }
    }

    /// The `session_id` stamped on panel lines: the agent's session, else the
    /// one being resumed.
    fn stamp_session_id(&self) -> &str {
        self.session
            .id
            .as_deref()
            .or(self.spec.resume_session_id.as_deref())
            .unwrap_or("")
    }

    fn send(&mut self, line: String) {
        self.out.to_agent.push(line);
    }

    /// Sends `request` as the negotiated revision spells it.
    fn request(&mut self, request: client::Request, pending: Pending) -> u64 {
        let id = self.requests.register(pending);
        self.send(request.line(id, self.revision));
        id
    }

    /// Answers an agent's `session/request_permission`.
    fn answer_permission(
        &mut self,
        rpc_id: &crate::acp::message::RequestId,
        answer: client::PermissionAnswer,
    ) {
        self.send(client::result_line(rpc_id, &answer));
    }

    /// Sends `session/cancel` for the session `sid`.
    fn send_cancel(&mut self, sid: &str) {
        let cancel = client::Notification::Cancel {
            session_id: sid.to_string(),
        };
        self.send(cancel.line());
    }

    fn close_stdin(&mut self) {
        if !self.stdin_closed {
            self.stdin_closed = true;
            self.out.close_agent_stdin = true;
        }
    }

    /// The grace the agent gets to answer an interrupted prompt.
    fn cancel_grace(&self) -> Duration {
        self.spec.cancel_grace.unwrap_or(DEFAULT_CANCEL_GRACE)
    }

    fn model_name(&self) -> String {
        self.session
            .model
            .as_deref()
            .unwrap_or(DEFAULT_MODEL)
            .to_string()
    }

    // ------------------------------------------------------------ panel side

    fn malformed(&mut self, side: &str, err: &str, line: &str) {
        self.diag(format!(
            "malformed line from the {side} ({err}): {}",
            truncate(line)
        ));
        if let Some(t) = self.turn.as_mut() {
            t.fail(format!("malformed line from the {side}: {err}"));
        }
    }

    // ------------------------------------------------------------ handshake

    // ------------------------------------------------------------ agent side
}

/// The text and images of a panel `user` message (`content` is a string or blocks).
fn user_content(content: &Value) -> (String, Vec<PromptImage>) {
    match content {
        Value::String(s) => (s.clone(), vec![]),
        Value::Array(blocks) => {
            let mut texts = Vec::new();
            let mut images = Vec::new();
            for b in blocks {
                match b["type"].as_str() {
                    Some("text") => texts.push(b["text"].as_str().unwrap_or("").to_string()),
                    Some("image") if b["source"]["type"] == "base64" => images.push(PromptImage {
                        media_type: b["source"]["media_type"]
                            .as_str()
                            .unwrap_or("image/png")
                            .to_string(),
                        data_base64: b["source"]["data"].as_str().unwrap_or("").to_string(),
                    }),
                    _ => {}
                }
            }
            (texts.join("\n"), images)
        }
        _ => (String::new(), vec![]),
    }
}
