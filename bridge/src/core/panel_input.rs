//! Lines from the panel: prompts (sent, or queued while one runs), control
//! requests (initialize, interrupt, mode and model changes, unsupported
//! ones) and the answers to permission requests.

use super::*;

impl Bridge {
    pub(super) fn panel_line(&mut self, line: &str, now: Duration) {
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

    pub(super) fn panel_user(&mut self, v: &Value, line: &str, now: Duration) {
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
    pub(super) fn first_prompt_instructions(&self) -> Option<String> {
        client::first_prompt_instructions(
            self.spec.custom_instructions.as_deref(),
            self.spec.script_gate,
        )
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

    pub(super) fn send_prompt(&mut self, blocks: Vec<Value>) {
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

    pub(super) fn panel_control_request(&mut self, v: &Value, line: &str, now: Duration) {
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
                    self.panel_init_requests.push(request_id);
                    self.start_handshake(now);
                }
                Phase::Handshaking => self.panel_init_requests.push(request_id),
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

    pub(super) fn interrupt(&mut self, request_id: &str) {
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

    pub(super) fn cancel_pending_permissions(&mut self) {
        for p in std::mem::take(&mut self.permissions) {
            self.send(client::rpc_result(
                &p.rpc_id,
                client::permission_cancelled(),
            ));
        }
    }

    pub(super) fn set_permission_mode(&mut self, request_id: &str, mode: &str) {
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

    pub(super) fn set_model(&mut self, request_id: &str, model: Option<&str>) {
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

    pub(super) fn panel_control_response(&mut self, v: &Value, _now: Duration) {
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
        let choice = client::choose_permission_option_with(&p.options, intent, &self.spec.compat);
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
        if let Some(mode) = answer.set_mode.clone() {
            match client::resolve_permission_mode(&mode, &self.session_result) {
                Some(change) => {
                    let sid = self.session_id.clone().unwrap_or_default();
                    let (method, params) = client::mode_change_request(&sid, &change);
                    self.request(method, params, Pending::PermissionSetMode { mode });
                }
                None => self.diag(format!(
                    "the panel switched to permission mode {mode:?}, which the agent does not offer"
                )),
            }
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
}
