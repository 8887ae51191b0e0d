//! Lines from the agent: requests (permission, refused fs/terminal),
//! notifications (`session/update` by kind; `_`-prefixed ones ignored) and
//! responses to our requests.

use super::*;
use crate::acp::chunk_frame::{ChunkFrame, ChunkKind};
use crate::acp::json_field::field;
use crate::acp::message::{AgentMessage, Neither, RequestId};
use crate::acp::prompt_end::PromptEnd;
use crate::acp::revision::Revision;
use crate::acp::session_update::SessionUpdate;
use crate::acp::tool_call::CallStatus;
use crate::acp::update_kind::UpdateKind;
use crate::call::fields::OwnFields;
use crate::call::table::Asked;

impl Bridge {
    pub(super) fn agent_line(&mut self, line: &str, now: Duration) {
        if line.trim().is_empty() {
            return;
        }
        if self.revision == Revision::V2 {
            return self.v2_agent_line(line, now);
        }
        self.v1_agent_line(line, now);
    }

    /// A v2 line: the prompt's `{messageId}` answer accepts the prompt;
    /// everything else is read into v1's model ([`V2Reader`]) and handled as v1's.
    fn v2_agent_line(&mut self, line: &str, now: Duration) {
        // the frame a stream is made of is v1's shape: read without a
        // `Value` tree, noted as the v2 reader would note it
        if let Some(chunk) = crate::acp::chunk_frame::parse(line) {
            if let Some(id) = &chunk.message_id {
                self.v2.message_seen(id);
            }
            return self.chunk_frame(&chunk);
        }
        // a call's frame likewise, unless it shows a terminal (whose held
        // output the v2 reader adds after it)
        if let Some(mut call) = crate::call::frame::parse(line)
            && !crate::acp::v2_frames::shows_a_terminal(call.fields.content())
        {
            call.kind = self.v2.call_seen(call.kind, &call.tool_call_id);
            return self.call_frame(call, now);
        }
        let v: Value = match serde_json::from_str(line) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => return self.malformed("agent", "not a JSON object", line),
            Err(e) => return self.malformed("agent", &e.to_string(), line),
        };
        // the prompt stays pending: `idle` ends it
        if v.get("method").is_none()
            && v.get("error").is_none_or(Value::is_null)
            && v["result"].get("stopReason").is_none()
            && let Some(id) = v["id"].as_u64()
            && self.requests.is_prompt(id)
        {
            return;
        }
        for read in self.v2.read(v) {
            match read {
                V2Read::AsSent => self.v1_agent_line(line, now),
                // read into v1's shape: handled as a frame, without a
                // second parse
                V2Read::Frame(frame) => self.agent_frame(frame, line, now),
                V2Read::State { state, end } => self.v2_state(&state, end, now),
                V2Read::Skipped(why) => self.diag(why),
            }
        }
    }

    /// v2's `state_update`: `idle` ends the running prompt as v1's answer
    /// to it does (its `stopReason` and `usage`); other states change
    /// nothing the panel sees.
    fn v2_state(&mut self, state: &str, mut end: PromptEnd, now: Duration) {
        if state != "idle" {
            return;
        }
        // an answer that comes after this `idle` finds no prompt pending
        if !self.requests.take_prompt() {
            return; // a snapshot with nothing running
        }
        let stop = end.stop_reason.get_or_insert_with(|| "end_turn".into());
        // v2's `error` stop: the turn failed, as a failed prompt does in v1
        let error = (stop == "error").then(|| RpcError {
            code: None,
            message: Some("the turn ended with an error (stopReason: error)".into()),
            details: None,
            as_sent: None,
        });
        self.prompt_returned(error.as_ref(), end, now);
    }

    fn v1_agent_line(&mut self, line: &str, now: Duration) {
        // the frame a stream is made of skips the `Value` tree
        if let Some(chunk) = crate::acp::chunk_frame::parse(line) {
            return self.chunk_frame(&chunk);
        }
        // a tool call's frame: only its fields' values become `Value`s
        if let Some(call) = crate::call::frame::parse(line) {
            return self.call_frame(call, now);
        }
        // any other update: only the update becomes a `Value` tree
        if let Some(update) = crate::acp::update_frame::parse(line) {
            return self.session_update(SessionUpdate::read(update), now);
        }
        match serde_json::from_str(line) {
            Ok(frame) => self.agent_frame(frame, line, now),
            Err(e) => self.malformed("agent", &e.to_string(), line),
        }
    }

    /// A frame (the agent's `line`, parsed) read as the JSON-RPC message it is.
    fn agent_frame(&mut self, frame: Value, line: &str, now: Duration) {
        let Value::Object(frame) = frame else {
            return self.malformed("agent", "not a JSON object", line);
        };
        match AgentMessage::read(frame) {
            Ok(message) => self.agent_message(message, now),
            Err(Neither) => self.diag(format!(
                "agent line is neither request, notification nor response: {}",
                truncate(line)
            )),
        }
    }

    fn agent_message(&mut self, message: AgentMessage, now: Duration) {
        match message {
            AgentMessage::Notification { method, params } if method == "session/update" => {
                // the update is moved, not copied, into the tool call it
                // reports (a tool result may carry megabytes of image data)
                let update = match params {
                    Value::Object(mut params) => params.remove("update").unwrap_or(Value::Null),
                    _ => Value::Null,
                };
                self.session_update(SessionUpdate::read(update), now)
            }
            AgentMessage::Request { id, method, params } => {
                self.agent_request(&id, &method, &params)
            }
            AgentMessage::Notification { method, .. } => self.agent_notification(&method),
            AgentMessage::Response { id, result, error } => {
                self.agent_response(&id, result, error.as_ref(), now)
            }
        }
    }

    pub(super) fn agent_request(&mut self, id: &RequestId, method: &str, params: &Value) {
        if method == "session/request_permission" {
            return self.permission_request(id, params);
        }
        self.diag(format!("agent request {method} answered -32601"));
        self.send(client::method_not_found(id, method));
    }

    pub(super) fn permission_request(&mut self, rpc_id: &RequestId, params: &Value) {
        if self.requests.any_late() {
            self.diag(
                "late permission request of an interrupted prompt answered cancelled".to_string(),
            );
            return self.answer_permission(rpc_id, client::PermissionAnswer::cancelled());
        }
        // its content describes the request, not the tool's result; its
        // options may name the tool (Gemini before 0.36)
        let tc = &crate::call::identity::permission_request_fields(params);
        let pairing = crate::call::pairing::asked_call(&mut self.tool_calls, tc);
        if let Some(note) = pairing.note {
            self.diag(note);
        }
        let call_id = pairing.call_id;
        // read once, with the call's other parts
        let options = tc.permission.options().to_vec();
        // calls held back before this request come before it
        self.release_held_except(&call_id);
        let (name, input) = self.asked_call(&call_id, tc);
        if self.panel_eof {
            self.diag(format!(
                "permission request for {name} after the panel's input ended; answered cancelled"
            ));
            return self.answer_permission(rpc_id, client::PermissionAnswer::cancelled());
        }
        if self.script_gate_denies(rpc_id, &options, &call_id, &name, &input) {
            return;
        }
        let Ok(request_id) = self.permissions.next_id() else {
            self.diag(format!(
                "permission request for {name} answered cancelled: {} are waiting for the panel already",
                crate::call::permission::MAX_PENDING
            ));
            return self.answer_permission(rpc_id, client::PermissionAnswer::cancelled());
        };
        // why the agent asks (v2's request `description`), as Claude's own
        // `can_use_tool` carries it
        let description = (params["description"].as_str()).filter(|d| !d.trim().is_empty());
        let ask = stream_json::can_use_tool(
            &request_id,
            stream_json::ToolAsk {
                tool_name: &name,
                input: &input,
                tool_use_id: &call_id,
                allow_always: client::has_allow_always_option(&options),
                description,
            },
        );
        let line = line_written(|text| serde_json::to_writer(text, &ask));
        self.push_typed_line(line, "can_use_tool");
        self.permissions.asked(PendingPermission {
            request_id,
            rpc_id: rpc_id.clone(),
            options,
            tool_use_id: call_id,
            tool_name: name,
            input,
        });
    }

    /// The asked call's name and input, the call merged with what the
    /// request says of it and announced to the panel first when no frame
    /// did (one name per call: the request carries the `tool_use`'s).
    fn asked_call(
        &mut self,
        call_id: &str,
        tc: &crate::call::identity::CallFields,
    ) -> (String, Value) {
        let servers = self.tool_calls.servers.clone();
        let (mut name, mut input, announced) = if call_id.is_empty() {
            self.diag("permission request without toolCall.toolCallId".to_string());
            let mut fields = crate::call::identity::CallFields::default();
            crate::call::identity::merge_tool_call(&mut fields, tc);
            let call = crate::call::table::ToolCall::detached(fields);
            (
                call.name(&servers).to_string(),
                call.input(&servers).clone(),
                true,
            )
        } else {
            let call = self.tool_calls.merge(call_id, tc);
            if !call.was_asked() {
                call.asked = Asked::Yes;
            }
            (
                call.name(&servers).to_string(),
                call.input(&servers).clone(),
                call.is_announced(),
            )
        };
        if !announced && self.turn.is_some() {
            self.fold_message("tool_use");
            self.announce(call_id);
            if let Some(call) = self.tool_calls.get(call_id) {
                name = call.name(&servers).to_string();
                input = call.input(&servers).clone();
            }
        }
        (name, input)
    }

    /// The script gate answers for the panel when the asked call writes a
    /// script into `Assets/` directly: denied, with the gate's note; true
    /// when it did.
    fn script_gate_denies(
        &mut self,
        rpc_id: &RequestId,
        options: &[client::PermissionOption],
        call_id: &str,
        name: &str,
        input: &Value,
    ) -> bool {
        let gated = self.spec.script_gate.then(|| {
            let fields = self
                .tool_calls
                .get(call_id)
                .map_or(crate::call::identity::CallFields::empty(), |c| c.fields());
            crate::call::input::gated_target_in_call(name, input, fields)
        });
        if gated.as_ref().is_some_and(Option::is_none)
            && let Some(call) = self.tool_calls.get_mut(call_id).filter(|c| c.was_asked())
        {
            call.asked = Asked::GatePassed;
        }
        if let Some(target) = gated.flatten() {
            // the gate answers for the panel: a direct script write into Assets/
            let result = match client::choose_permission_option_with(
                options,
                PermissionIntent::Deny,
                &self.spec.compat,
            ) {
                Some(id) => client::PermissionAnswer::selected(id),
                None => client::PermissionAnswer::cancelled(),
            };
            self.diag(format!(
                "script gate denied {name} writing {target}: {}",
                script_gate::deny_text(&target)
            ));
            self.answer_permission(rpc_id, result);
            self.gate_note(call_id, script_gate::deny_text(&target));
            if let Some(call) = self.tool_calls.get_mut(call_id) {
                call.gate_denial = Some(script_gate::deny_text(&target));
            }
            self.close_refused_unreported(call_id, script_gate::deny_text(&target));
            if let Some(t) = self.turn.as_mut() {
                t.permission_denials.push(stream_json::PermissionDenial {
                    tool_name: name.to_string(),
                    tool_use_id: call_id.to_string(),
                    tool_input: input.clone(),
                });
            }
            return true;
        }
        false
    }

    pub(super) fn agent_notification(&mut self, method: &str) {
        if method.starts_with('_') {
            return; // extension notifications (`_x.ai/...`): ignored by design
        }
        self.diag(format!("unknown agent notification {method} skipped"));
    }

    /// Whether a `session/update` of this kind is dropped unread: replayed
    /// history, or a late update of an interrupted prompt.
    fn update_dropped(&mut self, kind: UpdateKind<'_>) -> bool {
        if self.requests.loading() && kind != UpdateKind::AvailableCommands {
            return true; // session/load replays the history the panel already shows
        }
        if self.requests.any_late() && kind.belongs_to_the_turn() {
            let kind = kind.as_str();
            self.diag(format!(
                "late {kind} of an interrupted prompt dropped (its turn already ended)"
            ));
            return true;
        }
        false
    }

    /// A text or thought chunk of non-empty text read the fast way: what
    /// [`Bridge::session_update`] does with one.
    fn chunk_frame(&mut self, chunk: &ChunkFrame<'_>) {
        if self.update_dropped(chunk.kind.into()) {
            return;
        }
        // a held `tool_use` goes out before any later panel line
        if self.turn.is_some() {
            self.release_held_except(chunk.tool_call_id.as_deref().unwrap_or(""));
        }
        self.text_chunk(chunk.kind, &chunk.text, chunk.message_id.as_deref());
    }

    /// A `tool_call` or `tool_call_update` read the fast way: what
    /// [`Bridge::session_update`] does with one.
    fn call_frame(&mut self, call: crate::call::frame::CallFrame<'_>, now: Duration) {
        if self.update_dropped(call.kind.into()) {
            return;
        }
        // a held `tool_use` goes out before any later panel line
        if self.turn.is_some() {
            self.release_held_except(&call.tool_call_id);
        }
        match crate::call::identity::mcp_startup_server(&call.fields) {
            Some(server) => self.mcp_startup(&server, &call.fields),
            None => self.tool_call_fields(call.tool_call_id.into_owned(), call.fields, now),
        }
    }

    pub(super) fn session_update(&mut self, u: SessionUpdate, now: Duration) {
        let kind = u.kind();
        if self.update_dropped(kind) {
            return;
        }
        // a held `tool_use` goes out before any later panel line
        let releases = match &u {
            SessionUpdate::Chunk(chunk) => {
                let text = chunk.text.as_deref().filter(|t| !t.is_empty());
                text.map(|_| chunk.tool_call_id.as_deref().unwrap_or(""))
            }
            SessionUpdate::Call { update, .. } => {
                Some(field(update, "toolCallId").as_str().unwrap_or(""))
            }
            SessionUpdate::AvailableCommands(_) => Some(""),
            _ => None,
        };
        if let Some(except) = releases
            && self.turn.is_some()
        {
            let except = except.to_string();
            self.release_held_except(&except);
        }
        match u {
            SessionUpdate::Chunk(chunk) => {
                let Some(text) = chunk.text else {
                    let kind = chunk.kind.as_str();
                    return self.diag(format!("{kind} with non-text content skipped"));
                };
                if text.is_empty()
                    && let Some(t) = self.turn.as_mut()
                {
                    // no block for no text; usage it carries counts
                    if let Some(tokens) = chunk.tokens {
                        let mut usage = stream_json::Usage::default();
                        usage.add(&tokens);
                        t.meta_usage = Some(usage);
                    }
                    return;
                }
                self.text_chunk(chunk.kind, &text, chunk.message_id.as_deref());
            }
            SessionUpdate::Call { update, .. } => self.tool_call_update(update, now),
            SessionUpdate::AvailableCommands(commands) => {
                self.session.commands = commands;
                if self.init_emitted {
                    self.emit_system_init();
                }
            }
            SessionUpdate::Usage(usage) => {
                if let Some(t) = self.turn.as_mut() {
                    if let Some(used) = usage.used {
                        t.context_used = Some(used);
                    }
                    match &usage.cost {
                        Some(c) if c.usd().is_some() => t.cost_usd = c.usd(),
                        Some(c) => {
                            let note = format!(
                                "usage_update cost {} {} is not USD; total_cost_usd left out",
                                c.amount,
                                c.currency()
                            );
                            self.diag(note);
                        }
                        None => {}
                    }
                }
                self.session.usage = usage;
            }
            SessionUpdate::CurrentMode(id) => {
                if let Some(id) = id {
                    self.session.state.set_current_mode(&id);
                }
            }
            SessionUpdate::ConfigOptions { options, .. } => {
                if let Some(options) = options {
                    self.session.state.set_config_options(options);
                }
            }
            SessionUpdate::Notice(notice) => self.notice(notice),
            SessionUpdate::Compaction(compaction) => self.compaction_update(compaction),
            SessionUpdate::Plan(change) => self.plan_update(change),
            SessionUpdate::Other(_) => match kind {
                // Claude Code's stream shows no compaction summary text
                UpdateKind::UserMessageChunk
                | UpdateKind::SessionInfo
                | UpdateKind::CompactionSummaryChunk => {}
                UpdateKind::Unknown(other) => {
                    self.diag(format!("unknown session/update kind {other:?} skipped"))
                }
                // the v2 reader reads the others into v1's kinds: here they
                // come from an agent that spoke v1
                kind => {
                    let kind = kind.as_str();
                    self.diag(format!(
                        "ACP v2 session/update kind {kind:?} in a v1 session skipped"
                    ))
                }
            },
        }
    }

    /// A chunk of text (non-empty within a turn): streamed to the panel as a delta of the
    /// open message's block (opening message and block as needed).
    fn text_chunk(&mut self, chunk_kind: ChunkKind, text: &str, acp_id: Option<&str>) {
        if self.turn.is_none() {
            let kind = chunk_kind.as_str();
            return self.diag(format!("{kind} outside a turn skipped: {}", truncate(text)));
        }
        if self
            .turn
            .as_ref()
            .is_some_and(|t| t.message.is_other_message(acp_id))
        {
            self.fold_message("end_turn");
        }
        let block_kind = BlockKind::from(chunk_kind);
        let model = self.session.model.as_deref().unwrap_or(DEFAULT_MODEL);
        let next_msg = &mut self.next_msg;
        let Some(t) = self.turn.as_mut() else { return };
        let (lines, index) = t.message.chunk(block_kind, text, acp_id, model, || {
            *next_msg += 1;
            format!("msg_acp_{}", *next_msg)
        });
        for event in lines {
            self.emit_stream_event(&event);
        }
        let delta = match block_kind {
            BlockKind::Text => stream_json::Delta::Text { text },
            BlockKind::Thinking => stream_json::Delta::Thinking { thinking: text },
        };
        self.emit_stream_event(&stream_json::BlockDelta {
            kind: stream_json::BlockDeltaType::ContentBlockDelta,
            index,
            delta,
        });
    }

    /// An answer to one of our requests: its `result` and its `error`
    /// (a `null` one is none).
    pub(super) fn agent_response(
        &mut self,
        id: &RequestId,
        result: Value,
        error: Option<&RpcError>,
        now: Duration,
    ) {
        let pending = match self.requests.answer(id.as_u64()) {
            Answer::Waiting(pending) => pending,
            Answer::Late => {
                self.diag(format!(
                    "late answer to interrupted prompt {id} dropped (its turn already ended)"
                ));
                return self.send_queued_after_late();
            }
            Answer::Unknown => {
                return self.diag(format!(
                    "agent response to an unknown request id {id} skipped"
                ));
            }
        };
        if pending.panel_request().is_some() {
            // a held `tool_use` goes out before the `control_response`
            self.announce_held_back();
        }
        match pending {
            p @ (Pending::Initialize
            | Pending::NewSession { .. }
            | Pending::LoadSession { .. }
            | Pending::Authenticate { .. }) => self.handshake_answered(p, error, result, now),
            Pending::Prompt => self.prompt_returned(error, PromptEnd::read(&result), now),
            Pending::PanelSetMode {
                request_id, mode, ..
            } => match error {
                Some(e) => self.answer_panel(stream_json::control_error(
                    &request_id,
                    &e.to_string(),
                    None,
                )),
                None => {
                    self.session.permission_mode = mode;
                    self.session.mode_when_set = self.session.state.mode_marks();
                    self.answer_panel(stream_json::control_success(
                        &request_id,
                        stream_json::Done {},
                    ));
                }
            },
            Pending::PanelSetModel {
                request_id, model, ..
            } => match error {
                Some(e) => self.answer_panel(stream_json::control_error(
                    &request_id,
                    &e.to_string(),
                    None,
                )),
                None => {
                    self.session.model = Some(model);
                    self.answer_panel(stream_json::control_success(
                        &request_id,
                        stream_json::Done {},
                    ));
                }
            },
            Pending::PanelSetConfig { request_id, .. } => match error {
                Some(e) => self.answer_panel(stream_json::control_error(
                    &request_id,
                    &e.to_string(),
                    None,
                )),
                None => self.answer_panel(stream_json::control_success(
                    &request_id,
                    stream_json::Done {},
                )),
            },
            Pending::PermissionSetMode { mode } => match error {
                Some(e) => self.diag(format!("the agent refused permission mode {mode}: {}", e)),
                None => self.session.permission_mode = mode,
            },
            Pending::Startup { what } => {
                if let Some(e) = error {
                    self.diag(format!("the agent refused {what}: {}", e));
                }
            }
        }
    }

    /// codex reports starting each MCP server as a pseudo tool call titled
    /// `mcp__<server>__startup`: not a tool the model called. A failure for
    /// the panel's server marks it `failed` in `system`/`init`.
    pub(super) fn mcp_startup(&mut self, server: &str, u: &OwnFields) {
        if u.status != Some(CallStatus::Failed) {
            return;
        }
        let why = crate::call::result::render_fields(u.into(), &crate::Compat::default());
        let why = why.into_value();
        let why = why
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| why.to_string());
        self.diag(format!(
            "the agent could not start MCP server {server}: {}",
            truncate(&why)
        ));
        // `system`/`init` went out once; `mcp_status` says failed from now on
        if self.mcp.is_ours(server) {
            self.mcp.failed_to_start();
        }
    }
}
