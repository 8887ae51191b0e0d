//! The handshake: `initialize`, then `session/load` or `session/new` (one
//! `authenticate` retry on an auth error), the launch spec's model and mode,
//! and the panel's initialize answer and `system`/`init`; or, when it fails
//! or times out, an error answer, an `is_error` result and the agent's stdin
//! closed.

use super::*;
use crate::acp::revision::{self, Answered};

impl Bridge {
    /// Starts the agent handshake (on the panel's `initialize`, or on a first
    /// prompt from a panel that skips it).
    pub(super) fn start_handshake(&mut self, now: Duration) {
        self.phase = Phase::Handshaking;
        self.startup.start(self.spec.acp_protocol, now);
        self.offer_revision();
    }

    /// Sends `initialize` offering the revision the negotiation is at.
    fn offer_revision(&mut self) {
        let offering = self.startup.offered();
        self.request(
            client::Request::Initialize { offering },
            Pending::Initialize,
        );
    }

    /// Writes the session's `system`/`init`, with the panel's MCP server's
    /// status ([`super::mcp_server::McpServer::status`]).
    pub(super) fn emit_system_init(&mut self) {
        let uuid = self.ids.next_uuid();
        let mcp_servers = self
            .mcp
            .status(self.offers_http_mcp())
            .into_iter()
            .collect();
        let slash_commands = (self.session.commands.iter())
            .filter_map(|c| c.name.as_deref())
            .collect();
        let model = self.model_name();
        let info = InitInfo {
            cwd: &self.spec.cwd,
            model: &model,
            permission_mode: self.session.permission_mode.as_str(),
            slash_commands,
            mcp_servers,
        };
        let stamps = stream_json::Stamps {
            session_id: self.stamp_session_id(),
            uuid: &uuid,
        };
        let line = line_written(|text| {
            serde_json::to_writer(text, &stream_json::system_init(&info, stamps))
        });
        self.push_typed_line(line, "system/init");
    }

    pub(super) fn open_session(&mut self, now: Duration, after_auth: bool) {
        self.startup.step_sent(now);
        let mcp = self.mcp.endpoint().cloned();
        let offer = client::McpOffer {
            endpoint: mcp.as_ref(),
            unadvertised: self.spec.mcp_unadvertised,
        };
        if let Some(ep) = &mcp
            && !self.offers_http_mcp()
        {
            self.diag(format!(
                "the agent has no mcpCapabilities.http: {} not registered, its status unknown until a call reaches it",
                ep.name
            ));
        }
        let instructions = self.instructions.in_force(&self.spec);
        let system_prompt = client::session_system_prompt(
            instructions.system.as_deref(),
            instructions.append.as_deref(),
            &self.agent,
        );
        (self.instructions).session_call_carried(system_prompt.as_ref().map(|_| instructions));
        let resume = self
            .spec
            .resume_session_id
            .clone()
            .filter(|_| self.session.new);
        match resume {
            Some(id) if self.agent.load_session => {
                let mut setup =
                    client::session_setup(&self.spec.cwd, offer, &self.agent, system_prompt);
                self.add_directories(&mut setup);
                let load = client::Request::LoadSession {
                    session_id: id,
                    setup,
                };
                self.request(load, Pending::LoadSession { after_auth });
            }
            other => {
                if let Some(id) = other {
                    self.diag(format!(
                        "note: the agent cannot load sessions (no loadSession); session {id} not resumed, \
                         a new session starts and the agent's context of it is lost"
                    ));
                    self.spec.resume_session_id = None;
                }
                let mut setup =
                    client::session_setup(&self.spec.cwd, offer, &self.agent, system_prompt);
                self.add_directories(&mut setup);
                self.request(
                    client::Request::NewSession(setup),
                    Pending::NewSession { after_auth },
                );
            }
        }
    }

    /// Whether the panel's MCP server goes into the session calls.
    pub(super) fn offers_http_mcp(&self) -> bool {
        client::offers_http_mcp(&self.agent, self.spec.mcp_unadvertised)
    }

    fn add_directories(&mut self, setup: &mut client::SessionSetup) {
        let launch = &self.spec.additional_directories;
        if let Some(note) = self.directories.add_to(setup, launch, &self.agent) {
            self.diag(note);
        }
    }

    pub(super) fn session_opened(
        &mut self,
        session_id: String,
        result: Value,
        loaded: bool,
        now: Duration,
    ) {
        self.session.opened(session_id, &result, loaded);
        self.phase = Phase::Ready;
        let waited = self.startup.end();
        let sid = self.session.id.clone().unwrap_or_default();
        if let Some(want) = self.spec.model.clone() {
            if client::available_models(&self.session.state).is_empty() {
                self.diag(format!(
                    "the agent offers no models; launch model {want:?} not sent"
                ));
            } else {
                match client::resolve_model(&want, &self.session.state) {
                    Some(change) => {
                        let id = match &change {
                            ModelChange::SetModel { model_id } => model_id.clone(),
                            ModelChange::SetConfigOption { value, .. } => value.clone(),
                        };
                        if self.session.model.as_deref() != Some(id.as_str()) {
                            self.request(
                                client::model_change_request(&sid, &change),
                                Pending::Startup {
                                    what: format!("model {id}"),
                                },
                            );
                        }
                        self.session.model = Some(id);
                    }
                    None => self.diag(format!(
                        "the agent offers no model {want:?}; keeping its default"
                    )),
                }
            }
        }
        if let Some(mode) = self.spec.permission_mode.clone() {
            match client::resolve_permission_mode(&mode, &self.session.state) {
                Some(change) => {
                    if !client::mode_already_in_effect(&change, &self.session.state) {
                        let target = match &change {
                            ModeChange::SetMode { mode_id } => mode_id.clone(),
                            ModeChange::SetConfigOption { value, .. } => value.clone(),
                            ModeChange::SetConfigSwitch { config_id, value } => {
                                format!("{config_id}={value}")
                            }
                        };
                        self.request(
                            client::mode_change_request(&sid, &change),
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
        for (config_id, value) in self.spec.config_options.clone() {
            let request = client::mode_change_request(
                &sid,
                &ModeChange::SetConfigOption {
                    config_id: config_id.clone(),
                    value: value.clone(),
                },
            );
            self.request(
                request,
                Pending::Startup {
                    what: format!("config option {config_id}={value}"),
                },
            );
        }
        for (rid, ask) in waited.panel_inits {
            self.answer_initialize(&rid, &ask);
        }
        self.emit_system_init();
        self.init_emitted = true;
        for line in waited.deferred {
            self.panel_line(&line, now);
        }
        if self.panel_eof && self.turn.is_none() {
            self.close_stdin();
        }
    }

    pub(super) fn fail_handshake(&mut self, why: &str, now: Duration) {
        self.fail_start(why, None, now);
    }

    /// The session cannot start: every pending handshake step and panel
    /// request is answered with `why`, and the panel gets Claude Code's
    /// startup result (with Claude's `reason` when one fits).
    pub(super) fn fail_start(&mut self, why: &str, reason: Option<&'static str>, now: Duration) {
        self.diag(why.to_string());
        self.phase = Phase::Failed;
        self.failure = Some(why.to_string());
        let waited = self.startup.end();
        self.requests.drop_handshake();
        for (rid, _) in waited.panel_inits {
            self.answer_panel(stream_json::control_error(&rid, why, None));
        }
        for line in &waited.deferred {
            if let Ok(v) = serde_json::from_str::<Value>(line) {
                if v["type"] == "user" {
                    self.echo_user(&v);
                } else if v["type"] == "control_request" {
                    let rid = v.get("request_id").cloned().unwrap_or(Value::Null).into();
                    self.answer_panel(stream_json::control_error(&rid, why, None));
                }
            }
        }
        let mut t = Turn::new(now);
        t.fail_start(why.to_string(), reason);
        self.turn = Some(t);
        self.end_turn(now);
        self.close_stdin();
    }

    /// The agent answered `initialize`: the revision it selected is the
    /// session's; its answer is kept as the capability rules read it.
    fn initialized(&mut self, result: Value, now: Duration) {
        match self.startup.answered(&result) {
            Answered::Selected { revision, note } => {
                if let Some(note) = note {
                    self.diag(note);
                }
                self.revision = revision;
            }
            Answered::Unusable(why) => return self.fail_handshake(&why, now),
        }
        self.agent = AgentCapabilities::read(&revision::v1_view(&result));
        self.open_session(now, false);
    }

    /// The agent answered a handshake request.
    pub(super) fn handshake_answered(
        &mut self,
        pending: Pending,
        error: Option<&RpcError>,
        result: Value,
        now: Duration,
    ) {
        match pending {
            Pending::Initialize => match error {
                Some(e) => {
                    let refused = self.startup.offered();
                    match self.startup.refused() {
                        Some(next) => {
                            self.diag(format!(
                                "the agent refused ACP v{} ({}); offering v{}",
                                refused.number(),
                                e,
                                next.number()
                            ));
                            self.startup.step_sent(now);
                            self.offer_revision();
                        }
                        None => self
                            .fail_handshake(&format!("the agent rejected initialize: {}", e), now),
                    }
                }
                None => self.initialized(result, now),
            },
            Pending::NewSession { after_auth } | Pending::LoadSession { after_auth } => {
                let loaded = matches!(pending, Pending::LoadSession { .. });
                match error {
                Some(e) if e.asks_to_authenticate() && !after_auth => {
                    match client::auth_method(self.spec.auth_method.as_deref(), &self.agent) {
                        Some(m) => {
                            self.diag(format!("the agent asks to authenticate ({}); trying method {m}", e));
                            self.startup.step_sent(now);
                            self.request(client::Request::Authenticate { method_id: m }, Pending::Authenticate { then_load: loaded });
                        }
                        None => self.fail_handshake(
                            &format!("authentication required ({}) but the agent advertises no auth method", e),
                            now,
                        ),
                    }
                }
                Some(e) if e.asks_to_authenticate() => {
                    self.fail_handshake(&format!("authentication failed: {}", e), now)
                }
                Some(e) if loaded => {
                    // as Claude Code refuses a resume target it does not
                    // have: a new session would lose the context silently
                    let id = self.spec.resume_session_id.clone().unwrap_or_default();
                    self.fail_start(
                        &format!(
                            "No conversation found with session ID: {id} (the agent could not load it: {})",
                            e
                        ),
                        Some("resume_target_not_found"),
                        now,
                    );
                }
                Some(e) => self.fail_handshake(&format!("the agent rejected session/new: {}", e), now),
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
                Some(e) => self.fail_handshake(&format!("authentication failed: {}", e), now),
                None => {
                    if !then_load {
                        self.spec.resume_session_id = None;
                    }
                    self.open_session(now, true);
                }
            },
            _ => {}
        }
    }
}
