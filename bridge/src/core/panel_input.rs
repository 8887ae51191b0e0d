//! Lines from the panel: prompts (sent, or queued while one runs), control
//! requests (initialize, interrupt, mode and model changes, the queries of
//! `panel_queries`, and every other subtype answered `unsupported_request`
//! naming it) and the answers to permission requests.

use super::*;
use crate::stream_json::control::{Ask, ControlRequest, RequestId};

impl Bridge {
    /// `mcp_status`: the MCP server the bridge passes the agent, `pending`
    /// until the session is up, then as `system`/`init` says.
    fn mcp_status(&mut self, request_id: &stream_json::RequestId) {
        let server = match self.phase {
            Phase::Ready => self.mcp.status(self.offers_http_mcp()),
            phase => self.mcp.status_before_session(phase == Phase::Failed),
        };
        let status = stream_json::McpStatus {
            mcp_servers: server.into_iter().collect(),
        };
        // the status borrows the server's name: written before it is pushed
        let answer = stream_json::control_success(request_id, status);
        let line = line_written(|text| serde_json::to_writer(text, &answer));
        self.push_typed_line(line, "control_response");
    }

    /// `get_context_usage`: the agent's last `usage_update`; an error naming
    /// what is missing until the agent has sent one.
    fn get_context_usage(&mut self, request_id: &stream_json::RequestId) {
        let (Some(used), Some(size)) = (self.session.usage.used, self.session.usage.size) else {
            return self.answer_panel(stream_json::control_error(
                request_id,
                "get_context_usage: the agent has sent no usage_update with used and size yet",
                None,
            ));
        };
        let model = self.model_name();
        let usage = stream_json::ContextUsage::new(used, size, &model);
        self.answer_panel(stream_json::control_success(request_id, usage));
    }

    pub(super) fn panel_line(&mut self, line: &str, now: Duration) {
        if line.trim().is_empty() {
            return;
        }
        let v: Value = match serde_json::from_str(line) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => return self.malformed("panel", "not a JSON object", line),
            Err(e) => return self.malformed("panel", &e.to_string(), line),
        };
        self.await_initialize_first(&v, now);
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

    pub(super) fn panel_user(&mut self, v: &Value, line: &str, now: Duration) {
        match self.phase {
            Phase::Idle => {
                self.start_handshake(now);
                self.startup.defer(line, true);
                return;
            }
            Phase::Handshaking => {
                self.startup.defer(line, true);
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
        if !images.is_empty() && !self.agent.images {
            self.diag(format!(
                "{} image block(s) dropped: the agent has no promptCapabilities.image",
                images.len()
            ));
        }
        let instructions = self.first_prompt_instructions();
        let blocks = client::prompt_blocks(&text, &images, instructions.as_deref(), &self.agent);
        match self.turn.as_mut() {
            Some(t) => t.queue.push_back(blocks),
            None if self.requests.any_late() => {
                // the agent still owes the answer to a given-up prompt: this
                // one goes out once that answer came
                self.diag(
                    "prompt queued: the agent has not answered the interrupted prompt yet"
                        .to_string(),
                );
                let mut t = Turn::new(now);
                t.queue.push_back(blocks);
                self.turn = Some(t);
            }
            None => {
                self.turn = Some(Turn::new(now));
                self.send_prompt(blocks);
            }
        }
    }

    /// The instructions block of a prompt about to go out: the first
    /// prompt of a new session carries the custom instructions the session
    /// call did not (see [`super::instructions`]), with the script gate's
    /// steering text when the gate is on.
    fn first_prompt_instructions(&mut self) -> Option<String> {
        let takes_system_prompt = self.agent.system_prompt.is_some();
        let first =
            (self.instructions).prompt_sent(&self.spec, self.session.new, takes_system_prompt)?;
        if let Some(note) = first.note {
            self.diag(note.to_string());
        }
        client::first_prompt_instructions(first.custom.as_deref(), self.spec.script_gate)
    }

    pub(super) fn echo_user(&mut self, v: &Value) {
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

    pub(super) fn send_prompt(&mut self, prompt: Vec<client::ContentBlock>) {
        let session_id = self.session.id.clone().unwrap_or_default();
        if let Some(t) = self.turn.as_mut() {
            t.prompts_sent += 1;
        }
        self.request(
            client::Request::Prompt { session_id, prompt },
            Pending::Prompt,
        );
    }

    /// Answers every control request exactly once, echoing its
    /// `request_id` as sent (string or number; `null` when missing).
    pub(super) fn panel_control_request(&mut self, v: &Value, line: &str, now: Duration) {
        let request = match ControlRequest::read(v) {
            Ok(request) => request,
            Err(refused) => {
                let why = &refused.why;
                match refused.bad_id {
                    true => self.diag(format!("{why}: {}", truncate(line))),
                    false => self.diag(why.clone()),
                }
                return self.answer_panel(stream_json::control_error(
                    &refused.request_id,
                    why,
                    None,
                ));
            }
        };
        let ControlRequest { request_id, ask } = request;
        match ask {
            Ask::Initialize(req) => self.panel_initialize_request(request_id, req, now),
            // a prompt still waiting for the session goes out before the
            // interrupt, so the interrupt cancels it, as it would a turn
            Ask::Interrupt if self.prompt_deferred() => self.startup.defer(line, false),
            Ask::Interrupt => self.interrupt(&request_id, now),
            ask if ask.changes_the_session() && self.phase == Phase::Handshaking => {
                self.startup.defer(line, false);
            }
            ask if ask.changes_the_session() && self.phase != Phase::Ready => {
                let why = self
                    .failure
                    .clone()
                    .unwrap_or_else(|| "no session yet".into());
                self.answer_panel(stream_json::control_error(&request_id, &why, None));
            }
            Ask::SetPermissionMode { mode } => self.set_permission_mode(&request_id, mode, now),
            Ask::SetModel { model } => self.set_model(&request_id, model, now),
            Ask::SetMaxThinkingTokens { tokens } => {
                self.set_max_thinking_tokens(&request_id, tokens, now)
            }
            Ask::EndSession => self.end_session(&request_id, now),
            Ask::McpStatus => self.mcp_status(&request_id),
            Ask::GetContextUsage => self.get_context_usage(&request_id),
            Ask::GetUsage => {
                let cost = self.session.usage.cost.as_ref();
                let report =
                    stream_json::UsageReport::new(cost.and_then(|c| c.usd()).unwrap_or(0.0));
                self.answer_panel(stream_json::control_success(&request_id, report));
            }
            Ask::Unsupported(other) => {
                self.diag(format!(
                    "unsupported panel control_request subtype {other:?}"
                ));
                self.answer_panel(stream_json::control_error(
                    &request_id,
                    &format!("unsupported control request subtype: {other}"),
                    Some("unsupported_request"),
                ));
            }
        }
    }

    /// Sends `session/cancel` and marks the running turn as interrupted by
    /// the panel, so its `result` reports the interruption as Claude does.
    /// The agent then has the cancel grace to answer the prompt.
    fn send_session_cancel(&mut self, sid: &str, now: Duration) {
        self.send_cancel(sid);
        if let Some(t) = self.turn.as_mut() {
            t.cancel_sent = true;
        }
        if self.cancel_deadline.is_none() {
            self.cancel_deadline = Some(now + self.cancel_grace());
        }
    }

    pub(super) fn interrupt(&mut self, request_id: &RequestId, now: Duration) {
        if self.turn.is_some()
            && let Some(sid) = self.session.id.clone()
        {
            self.send_session_cancel(&sid, now);
            // queued steering prompts stay queued: they are sent once the
            // cancelled prompt returns, as the recorder does
            self.cancel_pending_permissions();
        }
        self.answer_panel(stream_json::control_success(
            request_id,
            stream_json::Done {},
        ));
    }

    /// `end_session` (the SDK's host is closing): answered at once, the
    /// running turn cancelled (nobody waits for its answer), then the
    /// session ends as at panel EOF: the agent's stdin closes once the turn
    /// has ended, and the agent exits as it does at EOF.
    fn end_session(&mut self, request_id: &RequestId, now: Duration) {
        self.interrupt(request_id, now);
        self.end_panel_input();
    }

    /// Whether a panel prompt waits for the handshake to finish.
    fn prompt_deferred(&self) -> bool {
        matches!(self.phase, Phase::Idle | Phase::Handshaking) && self.startup.has_deferred_prompt()
    }

    pub(super) fn cancel_pending_permissions(&mut self) {
        for p in self.permissions.take_all() {
            self.answer_permission(&p.rpc_id, client::PermissionAnswer::cancelled());
        }
    }

    pub(super) fn set_permission_mode(
        &mut self,
        request_id: &RequestId,
        mode: &str,
        now: Duration,
    ) {
        // the mode the session reports now (system/init's `permissionMode`),
        // which the agent did not leave: nothing to change, as Claude Code
        // does nothing
        if PermissionMode::parse(mode) == self.session.permission_mode
            && self.session.state.mode_marks() == self.session.mode_when_set
        {
            return self.answer_panel(stream_json::control_success(
                request_id,
                stream_json::Done {},
            ));
        }
        let Some(change) = client::resolve_permission_mode(mode, &self.session.state) else {
            return self.answer_panel(stream_json::control_error(
                request_id,
                &format!("the agent offers no mode matching permission mode {mode:?}"),
                None,
            ));
        };
        self.request_mode_change(
            &change,
            Pending::PanelSetMode {
                request_id: request_id.clone(),
                mode: PermissionMode::parse(mode),
                due: now + CONTROL_TIMEOUT,
            },
        );
    }

    pub(super) fn set_model(&mut self, request_id: &RequestId, model: Option<&str>, now: Duration) {
        let models = client::available_models(&self.session.state);
        let Some(model) = model.filter(|m| !m.is_empty() && *m != "default") else {
            return self.answer_panel(stream_json::control_success(
                request_id,
                stream_json::Done {},
            ));
        };
        if models.is_empty() {
            return self.answer_panel(stream_json::control_error(
                request_id,
                "the agent offers no models",
                None,
            ));
        }
        let Some(change) = client::resolve_model(model, &self.session.state) else {
            return self.answer_panel(stream_json::control_error(
                request_id,
                &format!("the agent offers no model {model:?}"),
                None,
            ));
        };
        let sid = self.session.id.clone().unwrap_or_default();
        let request = client::model_change_request(&sid, &change);
        let resolved = match change {
            ModelChange::SetModel { model_id } => model_id,
            ModelChange::SetConfigOption { value, .. } => value,
        };
        self.request(
            request,
            Pending::PanelSetModel {
                request_id: request_id.clone(),
                model: resolved,
                due: now + CONTROL_TIMEOUT,
            },
        );
    }

    /// `set_max_thinking_tokens`: a value of the agent's thought-level
    /// config option ([`client::resolve_thought_level`]); an error naming
    /// why when the agent has none, or none that fits.
    fn set_max_thinking_tokens(
        &mut self,
        request_id: &RequestId,
        tokens: Option<u64>,
        now: Duration,
    ) {
        let change = match client::resolve_thought_level(tokens, &self.session.state) {
            Ok(Some(change)) => change,
            Ok(None) => {
                return self.answer_panel(stream_json::control_success(
                    request_id,
                    stream_json::Done {},
                ));
            }
            Err(why) => {
                let why = format!("set_max_thinking_tokens: {why}");
                return self.answer_panel(stream_json::control_error(request_id, &why, None));
            }
        };
        self.request_mode_change(
            &change,
            Pending::PanelSetConfig {
                request_id: request_id.clone(),
                due: now + CONTROL_TIMEOUT,
            },
        );
    }

    /// Asks the agent for a mode or config option change the panel wants,
    /// answered when `pending` is.
    fn request_mode_change(&mut self, change: &ModeChange, pending: Pending) {
        let sid = self.session.id.clone().unwrap_or_default();
        self.request(client::mode_change_request(&sid, change), pending);
    }

    pub(super) fn panel_control_response(&mut self, v: &Value, now: Duration) {
        let resp = &v["response"];
        let Some(request_id) = resp["request_id"].as_str() else {
            return self.diag("panel control_response without request_id skipped".to_string());
        };
        let Some(p) = self.permissions.answered(request_id) else {
            return self.diag(format!(
                "panel answered unknown request {request_id:?}; skipped"
            ));
        };
        // Claude replays the panel's answer on stdout before acting on it, as
        // it replays the panel's user messages (`--replay-user-messages`).
        self.emit(v.clone());
        let answer = PanelAnswer::parse(resp);
        let intent = answer.intent();
        let choice = client::choose_permission_option_with(&p.options, intent, &self.spec.compat);
        let result = match &choice {
            Some(id) => client::PermissionAnswer::selected(id),
            None => {
                self.diag(format!(
                    "no permission option of the agent fits {intent} for {}; answering cancelled",
                    p.tool_use_id
                ));
                client::PermissionAnswer::cancelled()
            }
        };
        self.answer_permission(&p.rpc_id, result);
        if intent == PermissionIntent::Deny {
            // the panel's deny message is the refused call's result, as in Claude
            let why = resp["response"]["message"]
                .as_str()
                .filter(|m| !m.trim().is_empty())
                .map_or_else(
                    || format!("Permission to use {} was denied.", p.tool_name),
                    str::to_string,
                );
            if let Some(call) = self.tool_calls.get_mut(&p.tool_use_id) {
                call.panel_denial = Some(why.clone());
            }
            self.close_refused_unreported(&p.tool_use_id, why);
            if let Some(t) = self.turn.as_mut() {
                t.permission_denials.push(stream_json::PermissionDenial {
                    tool_name: p.tool_name,
                    tool_use_id: p.tool_use_id,
                    tool_input: p.input,
                });
            }
        }
        if let Some(mode) = answer.set_mode.clone() {
            match client::resolve_permission_mode(&mode, &self.session.state) {
                Some(change) => {
                    let sid = self.session.id.clone().unwrap_or_default();
                    let request = client::mode_change_request(&sid, &change);
                    let mode = PermissionMode::parse(&mode);
                    self.request(request, Pending::PermissionSetMode { mode });
                }
                None => self.diag(format!(
                    "the panel switched to permission mode {mode:?}, which the agent does not offer"
                )),
            }
        }
        if answer.interrupt
            && let Some(sid) = self.session.id.clone()
        {
            self.send_session_cancel(&sid, now);
            self.cancel_pending_permissions();
        }
    }

    /// Answers the panel's mode and model changes the agent did not answer
    /// within [`CONTROL_TIMEOUT`]; a later answer finds no request and is skipped.
    pub(super) fn control_requests_due(&mut self, now: Duration) {
        for request_id in self.requests.take_panel_due(now) {
            let why = format!(
                "the agent did not answer within {}s",
                CONTROL_TIMEOUT.as_secs()
            );
            self.diag(format!("control request {request_id}: {why}"));
            self.announce_held_back();
            self.answer_panel(stream_json::control_error(&request_id, &why, None));
        }
    }

    /// Ends the interrupted turn when the agent did not answer its prompt
    /// within the cancel grace: `error_during_execution` with an `errors`
    /// entry; the prompt's answer and updates arriving later are late.
    pub(super) fn cancel_grace_due(&mut self, now: Duration) {
        let Some(due) = self.cancel_deadline else {
            return;
        };
        if now < due {
            return;
        }
        self.cancel_deadline = None;
        if self.turn.is_none() {
            return;
        }
        let why = format!(
            "the agent did not answer the interrupted prompt within {} ms; the turn ended without it",
            self.cancel_grace().as_millis()
        );
        self.diag(why.clone());
        self.give_up_turn(why, "the interrupted turn", now);
    }

    /// Ends the running turn without the agent's answer: its pending
    /// prompts become late (their answer and the updates before it are
    /// dropped), queued prompts go with the turn (said in a diagnostic
    /// naming `which` turn), and the turn fails with `why`.
    pub(super) fn give_up_turn(&mut self, why: String, which: &str, now: Duration) {
        self.requests.give_up_prompts();
        if let Some(t) = self.turn.as_mut() {
            let queued = std::mem::take(&mut t.queue).len();
            t.fail(why);
            if queued > 0 {
                self.diag(format!("{queued} queued prompt(s) dropped with {which}"));
            }
        }
        self.end_turn(now);
    }
}
