//! The bridge state machine: one panel line or one agent line in, lines for
//! both sides out. No I/O, no clock, no randomness: time and ids come in from
//! the host, so replay gives the same output for the same input.
//!
//! Tolerance: a line that does not parse, an unknown method or update kind,
//! or a field of the wrong type gives a diagnostic and is skipped; nothing
//! unknown is fatal and nothing here panics on input.

use std::time::Duration;

use serde_json::{Value, json};

use crate::client::{self, ModeChange, ModelChange, PermissionIntent, PromptImage};
use crate::permission::{PanelAnswer, PendingPermission};
use crate::stream_json::{self, InitInfo};
use crate::tool_calls::ToolCalls;
use crate::turn::{BlockKind, Turn};
use crate::{IdSource, LaunchSpec};
use crate::{script_gate, tool_name, tool_result};

/// How long the agent may take to answer each handshake request
/// (`initialize`, `session/new|load`, `authenticate`).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

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

/// What a JSON-RPC request we sent is waiting for.
#[derive(Debug)]
enum Pending {
    Initialize,
    NewSession {
        after_auth: bool,
    },
    LoadSession {
        after_auth: bool,
    },
    Authenticate {
        then_load: bool,
    },
    Prompt,
    /// A panel `set_permission_mode`, answered when the agent answers.
    PanelSetMode {
        request_id: String,
        mode: String,
    },
    /// A panel `set_model`, answered when the agent answers.
    PanelSetModel {
        request_id: String,
        model: String,
    },
    /// A launch-spec mode/model change sent during the handshake.
    Startup {
        what: String,
    },
}

pub struct Bridge {
    spec: LaunchSpec,
    ids: Box<dyn IdSource + Send>,
    out: Output,
    phase: Phase,
    failure: Option<String>,
    next_rpc_id: u64,
    pending: Vec<(u64, Pending)>,
    deadline: Option<Duration>,
    /// The panel's `initialize` request id, answered when the session is up.
    panel_init_request: Option<String>,
    /// Panel lines that arrived during the handshake, handled once it is done.
    deferred: Vec<String>,
    agent_init: Value,
    session_result: Value,
    session_id: Option<String>,
    new_session: bool,
    instructions_sent: bool,
    model: Option<String>,
    permission_mode: String,
    slash_commands: Vec<Value>,
    init_emitted: bool,
    turn: Option<Turn>,
    tool_calls: ToolCalls,
    permissions: Vec<PendingPermission>,
    next_perm: u64,
    next_msg: u64,
    panel_eof: bool,
    stdin_closed: bool,
}

fn truncate(s: &str) -> String {
    const MAX: usize = 200;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &s[..end], s.len())
}

impl Bridge {
    pub fn new(spec: LaunchSpec, ids: Box<dyn IdSource + Send>) -> Bridge {
        let permission_mode = spec
            .permission_mode
            .clone()
            .unwrap_or_else(|| "default".into());
        Bridge {
            spec,
            ids,
            out: Output::default(),
            phase: Phase::Idle,
            failure: None,
            next_rpc_id: 0,
            pending: Vec::new(),
            deadline: None,
            panel_init_request: None,
            deferred: Vec::new(),
            agent_init: Value::Null,
            session_result: Value::Null,
            session_id: None,
            new_session: true,
            instructions_sent: false,
            model: None,
            permission_mode,
            slash_commands: Vec::new(),
            init_emitted: false,
            turn: None,
            tool_calls: ToolCalls::default(),
            permissions: Vec::new(),
            next_perm: 0,
            next_msg: 0,
            panel_eof: false,
            stdin_closed: false,
        }
    }

    /// The agent's session id, once a session exists.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// Whether a turn is running (a prompt was sent and its `result` is not out yet).
    pub fn turn_running(&self) -> bool {
        self.turn.is_some()
    }

    pub fn on_panel_line(&mut self, line: &str, now: Duration) -> Output {
        self.panel_line(line, now);
        self.take()
    }

    pub fn on_agent_line(&mut self, line: &str, now: Duration) -> Output {
        self.agent_line(line, now);
        self.take()
    }

    pub fn on_agent_exit(&mut self, code: Option<i32>, now: Duration) -> Output {
        let how = match code {
            Some(c) => format!("agent exited with code {c}"),
            None => "agent was killed by a signal".to_string(),
        };
        if self.phase == Phase::Handshaking {
            self.fail_handshake(&format!("{how} during the handshake"), now);
        } else {
            self.diag(how.clone());
            if self.turn.is_some() {
                if let Some(t) = self.turn.as_mut() {
                    t.queue.clear();
                    t.fail(format!("{how} mid-turn"));
                }
                self.end_turn(now);
            }
            self.phase = Phase::Failed;
            self.failure = Some(how);
        }
        self.permissions.clear();
        for (_, p) in std::mem::take(&mut self.pending) {
            if let Pending::PanelSetMode { request_id, .. }
            | Pending::PanelSetModel { request_id, .. } = p
            {
                self.emit(stream_json::control_error(
                    &request_id,
                    "the agent exited",
                    None,
                ));
            }
        }
        self.deadline = None;
        self.take()
    }

    pub fn on_panel_eof(&mut self, _now: Duration) -> Output {
        self.panel_eof = true;
        if self.turn.is_none() && self.phase != Phase::Handshaking && self.deferred.is_empty() {
            self.close_stdin();
        }
        self.take()
    }

    pub fn next_deadline(&self) -> Option<Duration> {
        self.deadline
    }

    pub fn on_tick(&mut self, now: Duration) -> Output {
        if let Some(d) = self.deadline
            && now >= d
        {
            let waiting = self
                .pending
                .iter()
                .find_map(|(_, p)| match p {
                    Pending::Initialize => Some("initialize"),
                    Pending::NewSession { .. } => Some("session/new"),
                    Pending::LoadSession { .. } => Some("session/load"),
                    Pending::Authenticate { .. } => Some("authenticate"),
                    _ => None,
                })
                .unwrap_or("the handshake");
            let why = format!(
                "the agent did not answer {waiting} within {}s",
                HANDSHAKE_TIMEOUT.as_secs()
            );
            self.fail_handshake(&why, now);
        }
        self.take()
    }

    // ------------------------------------------------------------ plumbing

    fn take(&mut self) -> Output {
        std::mem::take(&mut self.out)
    }

    fn diag(&mut self, s: impl Into<String>) {
        self.out.diagnostics.push(s.into());
    }

    /// Writes one line to the panel, stamping `session_id` and `uuid` on the
    /// line types that carry them.
    fn emit(&mut self, v: Value) {
        self.emit_with_uuid(v, None);
    }

    fn emit_with_uuid(&mut self, mut v: Value, uuid: Option<String>) {
        if let Some(obj) = v.as_object_mut()
            && obj.contains_key("session_id")
        {
            let sid = self
                .session_id
                .clone()
                .or_else(|| self.spec.resume_session_id.clone())
                .unwrap_or_default();
            obj.insert("session_id".into(), json!(sid));
            let uuid = uuid.unwrap_or_else(|| self.ids.next_uuid());
            obj.insert("uuid".into(), json!(uuid));
        }
        self.out.to_panel.push(v.to_string());
    }

    fn send(&mut self, v: Value) {
        self.out.to_agent.push(v.to_string());
    }

    fn request(&mut self, method: &str, params: Value, pending: Pending) -> u64 {
        let id = self.next_rpc_id;
        self.next_rpc_id += 1;
        self.send(client::rpc_request(id, method, params));
        self.pending.push((id, pending));
        id
    }

    fn close_stdin(&mut self) {
        if !self.stdin_closed {
            self.stdin_closed = true;
            self.out.close_agent_stdin = true;
        }
    }

    fn model_name(&self) -> String {
        self.model.clone().unwrap_or_else(|| "default".into())
    }

    // ------------------------------------------------------------ panel side

    fn panel_line(&mut self, line: &str, now: Duration) {
        if line.trim().is_empty() {
            return;
        }
        let v: Value = match serde_json::from_str(line) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => return self.malformed("panel", "not a JSON object", line),
            Err(e) => return self.malformed("panel", &e.to_string(), line),
        };
        match v["type"].as_str().unwrap_or("") {
            "user" => self.panel_user(&v, line, now),
            "control_request" => self.panel_control_request(&v, line, now),
            "control_response" => self.panel_control_response(&v, now),
            "keep_alive" => {}
            other => self.diag(format!(
                "panel line of unknown type {other:?} skipped: {}",
                truncate(line)
            )),
        }
    }

    fn malformed(&mut self, side: &str, err: &str, line: &str) {
        self.diag(format!(
            "malformed line from the {side} ({err}): {}",
            truncate(line)
        ));
        if let Some(t) = self.turn.as_mut() {
            t.fail(format!("malformed line from the {side}: {err}"));
        }
    }

    /// Starts the agent handshake (on the panel's `initialize`, or on a first
    /// prompt from a panel that skips it).
    fn start_handshake(&mut self, now: Duration) {
        self.phase = Phase::Handshaking;
        self.deadline = Some(now + HANDSHAKE_TIMEOUT);
        self.request(
            "initialize",
            client::initialize_params(),
            Pending::Initialize,
        );
    }

    fn panel_user(&mut self, v: &Value, line: &str, now: Duration) {
        match self.phase {
            Phase::Idle => {
                self.start_handshake(now);
                self.deferred.push(line.to_string());
                return;
            }
            Phase::Handshaking => {
                self.deferred.push(line.to_string());
                return;
            }
            Phase::Failed => {
                self.echo_user(v);
                let why = self
                    .failure
                    .clone()
                    .unwrap_or_else(|| "the agent is not running".into());
                self.diag(format!("prompt not sent: {why}"));
                let mut t = Turn::new(now);
                t.fail(format!("the agent is not available: {why}"));
                self.turn = Some(t);
                self.end_turn(now);
                return;
            }
            Phase::Ready => {}
        }
        self.echo_user(v);
        let (text, images) = user_content(&v["message"]["content"]);
        if !images.is_empty() && !client::agent_supports_images(&self.agent_init) {
            self.diag(format!(
                "{} image block(s) dropped: the agent has no promptCapabilities.image",
                images.len()
            ));
        }
        let instructions = if self.new_session && !self.instructions_sent {
            self.first_prompt_instructions()
        } else {
            None
        };
        let blocks =
            client::prompt_blocks(&text, &images, instructions.as_deref(), &self.agent_init);
        if instructions.is_some() {
            self.instructions_sent = true;
        }
        match self.turn.as_mut() {
            Some(t) => t.queue.push_back(blocks),
            None => {
                self.turn = Some(Turn::new(now));
                self.send_prompt(blocks);
            }
        }
    }

    /// The custom instructions for the first prompt of a new session (with
    /// the script gate's steering text when the gate is on).
    fn first_prompt_instructions(&self) -> Option<String> {
        client::first_prompt_instructions(
            self.spec.custom_instructions.as_deref(),
            self.spec.script_gate,
        )
    }

    fn echo_user(&mut self, v: &Value) {
        let mut echo = v.clone();
        if let Some(obj) = echo.as_object_mut() {
            obj.remove("uuid");
            obj.remove("session_id");
            obj.remove("isReplay");
            obj.entry("parent_tool_use_id").or_insert(Value::Null);
            obj.insert("session_id".into(), Value::Null);
            obj.insert("isReplay".into(), json!(true));
        }
        // the panel's own uuid, when it gave one, identifies its message
        self.emit_with_uuid(echo, v["uuid"].as_str().map(str::to_string));
    }

    fn send_prompt(&mut self, blocks: Vec<Value>) {
        let sid = self.session_id.clone().unwrap_or_default();
        if let Some(t) = self.turn.as_mut() {
            t.prompts_sent += 1;
        }
        self.request(
            "session/prompt",
            client::prompt_params(&sid, blocks),
            Pending::Prompt,
        );
    }

    fn panel_control_request(&mut self, v: &Value, line: &str, now: Duration) {
        let Some(request_id) = v["request_id"].as_str().map(str::to_string) else {
            return self.diag(format!(
                "panel control_request without request_id skipped: {}",
                truncate(line)
            ));
        };
        let req = &v["request"];
        let subtype = req["subtype"].as_str().unwrap_or("");
        match subtype {
            "initialize" => match self.phase {
                Phase::Idle => {
                    self.panel_init_request = Some(request_id);
                    self.start_handshake(now);
                }
                Phase::Handshaking => self.panel_init_request = Some(request_id),
                Phase::Ready => {
                    let body = self.initialize_response();
                    self.emit(stream_json::control_success(&request_id, body));
                }
                Phase::Failed => {
                    let why = self.failure.clone().unwrap_or_default();
                    self.emit(stream_json::control_error(&request_id, &why, None));
                }
            },
            "interrupt" => self.interrupt(&request_id),
            "set_permission_mode" | "set_model" if self.phase == Phase::Handshaking => {
                self.deferred.push(line.to_string());
            }
            "set_permission_mode" | "set_model" if self.phase != Phase::Ready => {
                let why = self
                    .failure
                    .clone()
                    .unwrap_or_else(|| "no session yet".into());
                self.emit(stream_json::control_error(&request_id, &why, None));
            }
            "set_permission_mode" => {
                self.set_permission_mode(&request_id, req["mode"].as_str().unwrap_or(""))
            }
            "set_model" => self.set_model(&request_id, req["model"].as_str()),
            "mcp_reconnect" => self.emit(stream_json::control_error(
                &request_id,
                "mcp_reconnect is not supported by ACP agents",
                Some("unsupported_request"),
            )),
            other => {
                self.diag(format!(
                    "unsupported panel control_request subtype {other:?}"
                ));
                self.emit(stream_json::control_error(
                    &request_id,
                    &format!("unsupported control request subtype: {other}"),
                    Some("unsupported_request"),
                ));
            }
        }
    }

    fn interrupt(&mut self, request_id: &str) {
        if self.turn.is_some()
            && let Some(sid) = self.session_id.clone()
        {
            self.send(client::rpc_notification(
                "session/cancel",
                client::cancel_params(&sid),
            ));
            // queued steering prompts stay queued: they are sent once the
            // cancelled prompt returns, as the recorder does
            self.cancel_pending_permissions();
        }
        self.emit(stream_json::control_success(request_id, json!({})));
    }

    fn cancel_pending_permissions(&mut self) {
        for p in std::mem::take(&mut self.permissions) {
            self.send(client::rpc_result(
                &p.rpc_id,
                client::permission_cancelled(),
            ));
        }
    }

    fn set_permission_mode(&mut self, request_id: &str, mode: &str) {
        let Some(change) = client::resolve_permission_mode(mode, &self.session_result) else {
            return self.emit(stream_json::control_error(
                request_id,
                &format!("the agent offers no mode matching permission mode {mode:?}"),
                None,
            ));
        };
        let sid = self.session_id.clone().unwrap_or_default();
        let (method, params) = client::mode_change_request(&sid, &change);
        self.request(
            method,
            params,
            Pending::PanelSetMode {
                request_id: request_id.into(),
                mode: mode.into(),
            },
        );
    }

    fn set_model(&mut self, request_id: &str, model: Option<&str>) {
        let models = client::available_models(&self.session_result);
        let Some(model) = model.filter(|m| !m.is_empty() && *m != "default") else {
            return self.emit(stream_json::control_success(request_id, json!({})));
        };
        if models.is_empty() {
            return self.emit(stream_json::control_error(
                request_id,
                "the agent offers no models",
                None,
            ));
        }
        let Some(change) = client::resolve_model(model, &self.session_result) else {
            return self.emit(stream_json::control_error(
                request_id,
                &format!("the agent offers no model {model:?}"),
                None,
            ));
        };
        let sid = self.session_id.clone().unwrap_or_default();
        let (method, params) = client::model_change_request(&sid, &change);
        let resolved = match change {
            ModelChange::SetModel { model_id } => model_id,
            ModelChange::SetConfigOption { value, .. } => value,
        };
        self.request(
            method,
            params,
            Pending::PanelSetModel {
                request_id: request_id.into(),
                model: resolved,
            },
        );
    }

    fn panel_control_response(&mut self, v: &Value, _now: Duration) {
        let resp = &v["response"];
        let Some(request_id) = resp["request_id"].as_str() else {
            return self.diag("panel control_response without request_id skipped".to_string());
        };
        let Some(pos) = self
            .permissions
            .iter()
            .position(|p| p.request_id == request_id)
        else {
            return self.diag(format!(
                "panel answered unknown request {request_id:?}; skipped"
            ));
        };
        let p = self.permissions.remove(pos);
        let answer = PanelAnswer::parse(resp);
        let intent = answer.intent();
        let choice = client::choose_permission_option(&p.options, intent);
        let result = match &choice {
            Some(id) => client::permission_selected(id),
            None => {
                self.diag(format!(
                    "no permission option of the agent fits {intent:?} for {}; answering cancelled",
                    p.tool_use_id
                ));
                client::permission_cancelled()
            }
        };
        self.send(client::rpc_result(&p.rpc_id, result));
        if intent == PermissionIntent::Deny
            && let Some(t) = self.turn.as_mut()
        {
            t.permission_denials.push(json!({
                "tool_name": p.tool_name, "tool_use_id": p.tool_use_id, "tool_input": p.input
            }));
        }
        if answer.interrupt
            && let Some(sid) = self.session_id.clone()
        {
            self.send(client::rpc_notification(
                "session/cancel",
                client::cancel_params(&sid),
            ));
            self.cancel_pending_permissions();
        }
    }

    // ------------------------------------------------------------ handshake

    fn initialize_response(&self) -> Value {
        let commands: Vec<Value> = self
            .slash_commands
            .iter()
            .map(|c| {
                json!({
                    "name": c["name"].as_str().unwrap_or(""),
                    "description": c["description"].as_str().unwrap_or(""),
                    "argumentHint": c["input"]["hint"].as_str().unwrap_or("")
                })
            })
            .collect();
        let models: Vec<Value> = client::available_models(&self.session_result)
            .into_iter()
            .map(|m| json!({"value": m.id, "displayName": m.name, "resolvedModel": m.id}))
            .collect();
        json!({
            "commands": commands,
            "output_style": "default",
            "available_output_styles": ["default"],
            "models": models
        })
    }

    fn system_init(&self) -> Value {
        let mcp_servers = match &self.spec.mcp {
            Some(ep) => {
                let status = if client::agent_supports_http_mcp(&self.agent_init) {
                    "connected"
                } else {
                    "failed"
                };
                vec![(ep.name.clone(), status)]
            }
            None => vec![],
        };
        let slash_commands = self
            .slash_commands
            .iter()
            .filter_map(|c| c["name"].as_str().map(str::to_string))
            .collect();
        let model = self.model_name();
        stream_json::system_init(&InitInfo {
            cwd: &self.spec.cwd,
            model: &model,
            permission_mode: &self.permission_mode,
            slash_commands,
            mcp_servers,
        })
    }

    fn open_session(&mut self, now: Duration, after_auth: bool) {
        self.deadline = Some(now + HANDSHAKE_TIMEOUT);
        let mcp = self.spec.mcp.clone();
        if let Some(ep) = &mcp
            && !client::agent_supports_http_mcp(&self.agent_init)
        {
            self.diag(format!(
                "the agent has no mcpCapabilities.http: {} not registered, reported failed",
                ep.name
            ));
        }
        let resume = self
            .spec
            .resume_session_id
            .clone()
            .filter(|_| self.new_session);
        match resume {
            Some(id) if client::agent_supports_load_session(&self.agent_init) => {
                let params = client::load_session_params(
                    &id,
                    &self.spec.cwd,
                    mcp.as_ref(),
                    &self.agent_init,
                );
                self.request("session/load", params, Pending::LoadSession { after_auth });
            }
            other => {
                if let Some(id) = other {
                    self.diag(format!(
                        "note: the agent cannot load sessions (no loadSession); session {id} not resumed, \
                         a new session starts and the agent's context of it is lost"
                    ));
                    self.spec.resume_session_id = None;
                }
                let params =
                    client::new_session_params(&self.spec.cwd, mcp.as_ref(), &self.agent_init);
                self.request("session/new", params, Pending::NewSession { after_auth });
            }
        }
    }

    fn session_opened(&mut self, session_id: String, result: Value, loaded: bool, now: Duration) {
        self.session_id = Some(session_id);
        self.session_result = result;
        self.new_session = !loaded;
        self.phase = Phase::Ready;
        self.deadline = None;
        self.model = client::current_model(&self.session_result);
        if let Some(cmds) = self.session_result["availableCommands"].as_array() {
            self.slash_commands = cmds.clone();
        }
        let sid = self.session_id.clone().unwrap_or_default();
        if let Some(want) = self.spec.model.clone() {
            if client::available_models(&self.session_result).is_empty() {
                self.diag(format!(
                    "the agent offers no models; launch model {want:?} not sent"
                ));
            } else {
                match client::resolve_model(&want, &self.session_result) {
                    Some(change) => {
                        let id = match &change {
                            ModelChange::SetModel { model_id } => model_id.clone(),
                            ModelChange::SetConfigOption { value, .. } => value.clone(),
                        };
                        if self.model.as_deref() != Some(id.as_str()) {
                            let (m, p) = client::model_change_request(&sid, &change);
                            self.request(
                                m,
                                p,
                                Pending::Startup {
                                    what: format!("model {id}"),
                                },
                            );
                        }
                        self.model = Some(id);
                    }
                    None => self.diag(format!(
                        "the agent offers no model {want:?}; keeping its default"
                    )),
                }
            }
        }
        if let Some(mode) = self.spec.permission_mode.clone() {
            match client::resolve_permission_mode(&mode, &self.session_result) {
                Some(change) => {
                    let current = current_mode(&self.session_result);
                    let target = match &change {
                        ModeChange::SetMode { mode_id } => mode_id.clone(),
                        ModeChange::SetConfigOption { value, .. } => value.clone(),
                    };
                    if current.as_deref() != Some(target.as_str()) {
                        let (m, p) = client::mode_change_request(&sid, &change);
                        self.request(
                            m,
                            p,
                            Pending::Startup {
                                what: format!("mode {target}"),
                            },
                        );
                    }
                }
                None => self.diag(format!(
                    "the agent offers no mode matching permission mode {mode:?}"
                )),
            }
        }
        if let Some(rid) = self.panel_init_request.take() {
            let body = self.initialize_response();
            self.emit(stream_json::control_success(&rid, body));
        }
        let init = self.system_init();
        self.emit(init);
        self.init_emitted = true;
        for line in std::mem::take(&mut self.deferred) {
            self.panel_line(&line, now);
        }
        if self.panel_eof && self.turn.is_none() {
            self.close_stdin();
        }
    }

    fn fail_handshake(&mut self, why: &str, now: Duration) {
        self.diag(why.to_string());
        self.phase = Phase::Failed;
        self.failure = Some(why.to_string());
        self.deadline = None;
        self.pending.retain(|(_, p)| {
            !matches!(
                p,
                Pending::Initialize
                    | Pending::NewSession { .. }
                    | Pending::LoadSession { .. }
                    | Pending::Authenticate { .. }
            )
        });
        if let Some(rid) = self.panel_init_request.take() {
            self.emit(stream_json::control_error(&rid, why, None));
        }
        let dropped = std::mem::take(&mut self.deferred);
        for line in &dropped {
            if let Ok(v) = serde_json::from_str::<Value>(line) {
                if v["type"] == "user" {
                    self.echo_user(&v);
                } else if let (Some(rid), "control_request") =
                    (v["request_id"].as_str(), v["type"].as_str().unwrap_or(""))
                {
                    self.emit(stream_json::control_error(rid, why, None));
                }
            }
        }
        let mut t = Turn::new(now);
        t.fail(why.to_string());
        self.turn = Some(t);
        self.end_turn(now);
        self.close_stdin();
    }

    // ------------------------------------------------------------ agent side

    fn agent_line(&mut self, line: &str, now: Duration) {
        if line.trim().is_empty() {
            return;
        }
        let v: Value = match serde_json::from_str(line) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => return self.malformed("agent", "not a JSON object", line),
            Err(e) => return self.malformed("agent", &e.to_string(), line),
        };
        let method = v["method"].as_str().map(str::to_string);
        let has_id = v.get("id").is_some_and(|id| !id.is_null());
        match (method, has_id) {
            (Some(m), true) => self.agent_request(&m, &v),
            (Some(m), false) => self.agent_notification(&m, &v, now),
            (None, true) => self.agent_response(&v, now),
            (None, false) => self.diag(format!(
                "agent line is neither request, notification nor response: {}",
                truncate(line)
            )),
        }
    }

    fn agent_request(&mut self, method: &str, v: &Value) {
        let id = &v["id"];
        if method == "session/request_permission" {
            return self.permission_request(id, &v["params"]);
        }
        self.diag(format!("agent request {method} answered -32601"));
        self.send(client::method_not_found(id, method));
    }

    fn permission_request(&mut self, rpc_id: &Value, params: &Value) {
        let tc = &params["toolCall"];
        let call_id = tc["toolCallId"].as_str().unwrap_or("").to_string();
        let options: Vec<Value> = params["options"].as_array().cloned().unwrap_or_default();
        let (name, input, announced) = if call_id.is_empty() {
            self.diag("permission request without toolCall.toolCallId".to_string());
            let mut fields = Value::Null;
            crate::tool_name::merge_tool_call(&mut fields, tc);
            (
                crate::tool_name::claude_tool_name(&fields),
                crate::tool_name::tool_input(&fields),
                true,
            )
        } else {
            let call = self.tool_calls.merge(&call_id, tc);
            call.asked = true;
            (call.name(), call.input(), call.announced)
        };
        if !announced && self.turn.is_some() {
            self.fold_message("tool_use");
            self.announce(&call_id);
        }
        if self.spec.script_gate
            && let Some(target) = script_gate::gated_target(&name, &input)
        {
            // the gate answers for the panel: a direct script write into Assets/
            let result = match client::choose_permission_option(&options, PermissionIntent::Deny) {
                Some(id) => client::permission_selected(&id),
                None => client::permission_cancelled(),
            };
            self.diag(format!(
                "script gate denied {name} writing {target}: {}",
                script_gate::deny_text(&target)
            ));
            self.send(client::rpc_result(rpc_id, result));
            self.gate_note(&call_id, script_gate::deny_text(&target));
            if let Some(t) = self.turn.as_mut() {
                t.permission_denials
                    .push(json!({"tool_name": name, "tool_use_id": call_id, "tool_input": input}));
            }
            return;
        }
        self.next_perm += 1;
        let request_id = format!("acp-perm-{}", self.next_perm);
        let suggestions = client::has_allow_always_option(&options)
            .then(|| stream_json::always_allow_suggestion(&name));
        self.emit(stream_json::can_use_tool(
            &request_id,
            &name,
            input.clone(),
            suggestions,
            &call_id,
        ));
        self.permissions.push(PendingPermission {
            request_id,
            rpc_id: rpc_id.clone(),
            options,
            tool_use_id: call_id,
            tool_name: name,
            input,
        });
    }

    fn agent_notification(&mut self, method: &str, v: &Value, now: Duration) {
        if method == "session/update" {
            return self.session_update(&v["params"]["update"], now);
        }
        if method.starts_with('_') {
            return; // extension notifications (`_x.ai/...`): ignored by design
        }
        self.diag(format!("unknown agent notification {method} skipped"));
    }

    fn session_update(&mut self, u: &Value, now: Duration) {
        let kind = u["sessionUpdate"].as_str().unwrap_or("");
        let loading = self
            .pending
            .iter()
            .any(|(_, p)| matches!(p, Pending::LoadSession { .. }));
        if loading && kind != "available_commands_update" {
            return; // session/load replays the history the panel already shows
        }
        match kind {
            "agent_message_chunk" | "agent_thought_chunk" => {
                let block_kind = if kind == "agent_message_chunk" {
                    BlockKind::Text
                } else {
                    BlockKind::Thinking
                };
                let content = &u["content"];
                let Some(text) = content["text"]
                    .as_str()
                    .filter(|_| content["type"] == "text")
                else {
                    return self.diag(format!("{kind} with non-text content skipped"));
                };
                if self.turn.is_none() {
                    return self.diag(format!("{kind} outside a turn skipped: {}", truncate(text)));
                }
                let model = self.model_name();
                let next_msg = &mut self.next_msg;
                let lines = match self.turn.as_mut() {
                    Some(t) => t.message.chunk(block_kind, text, &model, || {
                        *next_msg += 1;
                        format!("msg_acp_{}", *next_msg)
                    }),
                    None => vec![],
                };
                for l in lines {
                    self.emit(l);
                }
            }
            "tool_call" | "tool_call_update" => self.tool_call_update(u, now),
            "available_commands_update" => {
                self.slash_commands = u["availableCommands"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                if self.init_emitted {
                    let init = self.system_init();
                    self.emit(init);
                }
            }
            "usage_update" => {
                if let Some(t) = self.turn.as_mut() {
                    if let Some(used) = u["used"].as_u64() {
                        t.context_used = Some(used);
                    }
                    if let Some(amount) = u["cost"]["amount"].as_f64() {
                        t.cost_usd = Some(amount);
                    }
                }
            }
            "current_mode_update" => {
                if let Some(id) = u["currentModeId"].as_str()
                    && let Some(modes) = self
                        .session_result
                        .get_mut("modes")
                        .and_then(Value::as_object_mut)
                {
                    modes.insert("currentModeId".into(), json!(id));
                }
            }
            "config_option_update" | "config_options_update" => {
                if let Some(opts) = u.get("configOptions").filter(|o| o.is_array())
                    && let Some(obj) = self.session_result.as_object_mut()
                {
                    obj.insert("configOptions".into(), opts.clone());
                }
            }
            "user_message_chunk" | "plan" | "session_info_update" => {}
            other => self.diag(format!("unknown session/update kind {other:?} skipped")),
        }
    }

    /// Folds the streamed message (if any) into an `assistant` line.
    fn fold_message(&mut self, stop_reason: &str) {
        let model = self.model_name();
        let Some(t) = self.turn.as_mut() else { return };
        let (lines, text) = t.message.fold(&model, stop_reason);
        if let Some(text) = text {
            t.last_text = text;
        }
        for l in lines {
            self.emit(l);
        }
    }

    /// Announces calls still held back for a name, so each gets its result.
    fn announce_held_back(&mut self) {
        for id in self.tool_calls.unannounced_ids() {
            self.fold_message("tool_use");
            self.announce(&id);
        }
    }

    /// Emits the `tool_use` for a call.
    fn announce(&mut self, call_id: &str) {
        let Some(call) = self.tool_calls.get_mut(call_id) else {
            return;
        };
        call.announced = true;
        let (name, input) = (call.name(), call.input());
        self.next_msg += 1;
        let msg_id = format!("msg_acp_{}", self.next_msg);
        if let Some(c) = self.tool_calls.get_mut(call_id) {
            c.message_id = Some(msg_id.clone());
        }
        let model = self.model_name();
        let content =
            vec![json!({"type": "tool_use", "id": call_id, "name": name, "input": input})];
        self.emit(stream_json::assistant(stream_json::message_object(
            &msg_id, &model, content, None,
        )));
    }

    /// A script-gate note for the panel: a text block of the `assistant`
    /// message that carried the call's `tool_use`, so the panel renders it
    /// right after that tool card, not after the whole turn (seed 001 §4).
    fn gate_note(&mut self, call_id: &str, text: String) {
        let msg_id = match self
            .tool_calls
            .get(call_id)
            .and_then(|c| c.message_id.clone())
        {
            Some(id) => id,
            None => {
                self.next_msg += 1;
                format!("msg_acp_{}", self.next_msg)
            }
        };
        let model = self.model_name();
        let content = vec![json!({"type": "text", "text": text})];
        self.emit(stream_json::assistant(stream_json::message_object(
            &msg_id, &model, content, None,
        )));
    }

    fn tool_call_update(&mut self, u: &Value, _now: Duration) {
        let Some(call_id) = u["toolCallId"].as_str().map(str::to_string) else {
            return self.diag("tool call without toolCallId skipped".to_string());
        };
        if self.turn.is_none() {
            return self.diag(format!("tool call {call_id} outside a turn skipped"));
        }
        let call = self.tool_calls.merge(&call_id, u);
        if call.closed {
            return;
        }
        let status = call.status().unwrap_or("").to_string();
        let finished = status == "completed" || status == "failed";
        if !call.announced {
            if !finished && tool_name::identity_pending(&call.fields) {
                return; // announced once a later frame names the tool
            }
            self.fold_message("tool_use");
            self.announce(&call_id);
        }
        let Some(call) = self.tool_calls.get(&call_id) else {
            return;
        };
        if finished {
            // a script write the agent made without asking (auto-approve): report it
            let unasked_gated = (self.spec.script_gate && status == "completed" && !call.asked)
                .then(|| script_gate::gated_target(&call.name(), &call.input()))
                .flatten();
            let content = tool_result::tool_result_content(&call.fields);
            if let Some(target) = unasked_gated {
                self.gate_note(&call_id, script_gate::unasked_write_text(&target));
            }
            self.close_call(&call_id, content, status == "failed");
        }
    }

    fn close_call(&mut self, call_id: &str, content: Value, is_error: bool) {
        if let Some(c) = self.tool_calls.get_mut(call_id) {
            c.closed = true;
            // a closed call only needs its id (late frames for it are dropped);
            // its fields may hold megabytes of image data
            c.fields = Value::Null;
        }
        self.emit(stream_json::tool_result(call_id, content, is_error));
    }

    fn agent_response(&mut self, v: &Value, now: Duration) {
        let Some(pos) = v["id"]
            .as_u64()
            .and_then(|id| self.pending.iter().position(|(pid, _)| *pid == id))
        else {
            return self.diag(format!(
                "agent response to an unknown request id {} skipped",
                v["id"]
            ));
        };
        let (_, pending) = self.pending.remove(pos);
        let error = v.get("error").filter(|e| !e.is_null());
        let result = v.get("result").cloned().unwrap_or(Value::Null);
        match pending {
            Pending::Initialize => match error {
                Some(e) => self.fail_handshake(
                    &format!("the agent rejected initialize: {}", rpc_message(e)),
                    now,
                ),
                None => {
                    self.agent_init = result;
                    self.open_session(now, false);
                }
            },
            Pending::NewSession { after_auth } | Pending::LoadSession { after_auth } => {
                let loaded = matches!(pending, Pending::LoadSession { .. });
                match error {
                    Some(e) if client::is_auth_error(e) && !after_auth => {
                        match client::auth_method(self.spec.auth_method.as_deref(), &self.agent_init) {
                            Some(m) => {
                                self.diag(format!("the agent asks to authenticate ({}); trying method {m}", rpc_message(e)));
                                self.deadline = Some(now + HANDSHAKE_TIMEOUT);
                                self.request("authenticate", client::authenticate_params(&m), Pending::Authenticate { then_load: loaded });
                            }
                            None => self.fail_handshake(
                                &format!("authentication required ({}) but the agent advertises no auth method", rpc_message(e)),
                                now,
                            ),
                        }
                    }
                    Some(e) if client::is_auth_error(e) => {
                        self.fail_handshake(&format!("authentication failed: {}", rpc_message(e)), now)
                    }
                    Some(e) if loaded => {
                        let id = self.spec.resume_session_id.take().unwrap_or_default();
                        self.diag(format!(
                            "note: the agent could not load session {id} ({}); a new session starts and the agent's context of it is lost",
                            rpc_message(e)
                        ));
                        self.open_session(now, after_auth);
                    }
                    Some(e) => self.fail_handshake(&format!("the agent rejected session/new: {}", rpc_message(e)), now),
                    None if loaded => {
                        let id = self.spec.resume_session_id.clone().unwrap_or_default();
                        self.session_opened(id, result, true, now);
                    }
                    None => match result["sessionId"].as_str() {
                        Some(id) => self.session_opened(id.to_string(), result.clone(), false, now),
                        None => self.fail_handshake("the agent's session/new result has no sessionId", now),
                    },
                }
            }
            Pending::Authenticate { then_load } => match error {
                Some(e) => {
                    self.fail_handshake(&format!("authentication failed: {}", rpc_message(e)), now)
                }
                None => {
                    if !then_load {
                        self.spec.resume_session_id = None;
                    }
                    self.open_session(now, true);
                }
            },
            Pending::Prompt => self.prompt_returned(error, &result, now),
            Pending::PanelSetMode { request_id, mode } => match error {
                Some(e) => self.emit(stream_json::control_error(
                    &request_id,
                    &rpc_message(e),
                    None,
                )),
                None => {
                    self.permission_mode = mode;
                    self.emit(stream_json::control_success(&request_id, json!({})));
                }
            },
            Pending::PanelSetModel { request_id, model } => match error {
                Some(e) => self.emit(stream_json::control_error(
                    &request_id,
                    &rpc_message(e),
                    None,
                )),
                None => {
                    self.model = Some(model);
                    self.emit(stream_json::control_success(&request_id, json!({})));
                }
            },
            Pending::Startup { what } => {
                if let Some(e) = error {
                    self.diag(format!("the agent refused {what}: {}", rpc_message(e)));
                }
            }
        }
    }

    fn prompt_returned(&mut self, error: Option<&Value>, result: &Value, now: Duration) {
        let stop = result["stopReason"].as_str().map(str::to_string);
        self.fold_message(stop.as_deref().unwrap_or("end_turn"));
        self.announce_held_back();
        // calls of this prompt that never finished get a synthetic result
        for id in self.tool_calls.open_ids() {
            let why = format!(
                "Tool call ended without a result (the agent's turn ended: {})",
                stop.as_deref().unwrap_or("error")
            );
            self.close_call(&id, json!(why), true);
        }
        let Some(t) = self.turn.as_mut() else {
            return self.diag("session/prompt returned with no turn running".to_string());
        };
        match error {
            Some(e) => {
                let msg = format!("the agent failed the prompt: {}", rpc_message(e));
                t.fail(msg.clone());
                self.out.diagnostics.push(msg);
            }
            None => {
                if let Some(u) = result.get("usage").filter(|u| u.is_object()) {
                    t.usage.add_acp(u);
                    t.saw_prompt_usage = true;
                }
                match stop.as_deref() {
                    Some("refusal") => t.refused = true,
                    Some("max_turn_requests") => t.max_turns = true,
                    _ => {}
                }
                t.stop_reason = stop;
            }
        }
        if let Some(next) = t.queue.pop_front() {
            self.send_prompt(next);
        } else {
            self.end_turn(now);
        }
    }

    /// Emits the turn's single `result` and forgets the turn.
    fn end_turn(&mut self, now: Duration) {
        self.fold_message("end_turn");
        self.announce_held_back();
        for id in self.tool_calls.open_ids() {
            self.close_call(&id, json!("Tool call ended without a result"), true);
        }
        self.cancel_pending_permissions_silently();
        if let Some(t) = self.turn.take() {
            let r = t.result(now);
            self.emit(r);
        }
        if self.panel_eof {
            self.close_stdin();
        }
    }

    fn cancel_pending_permissions_silently(&mut self) {
        // permission requests still open when the turn ends can no longer be
        // answered by the panel meaningfully; the agent is told they were cancelled
        if self.phase == Phase::Ready {
            self.cancel_pending_permissions();
        } else {
            self.permissions.clear();
        }
    }
}

fn rpc_message(e: &Value) -> String {
    match (e["code"].as_i64(), e["message"].as_str()) {
        (Some(c), Some(m)) => format!("{m} (code {c})"),
        (None, Some(m)) => m.to_string(),
        _ => e.to_string(),
    }
}

fn current_mode(session_result: &Value) -> Option<String> {
    if let Some(opt) = session_result["configOptions"]
        .as_array()
        .and_then(|a| a.iter().find(|o| o["category"] == "mode"))
    {
        return opt["currentValue"].as_str().map(str::to_string);
    }
    session_result["modes"]["currentModeId"]
        .as_str()
        .map(str::to_string)
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
