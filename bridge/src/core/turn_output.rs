//! What a running turn emits: the streamed message folded into `assistant`
//! lines, `tool_use` / `tool_result` per tool call, and the turn's one
//! `result` when the last queued prompt returns.

use super::*;
use crate::acp::prompt_end::PromptEnd;
use crate::acp::tool_call::CallStatus;
use crate::call::fields::{CallFields, OwnFields};
use crate::call::stages;
use crate::core::turn::TextInLine;

impl Bridge {
    /// Folds the streamed message (if any) into an `assistant` line. The
    /// turn keeps the message's text for its `result` as where it is in
    /// that line, when the line holds it as one JSON string.
    pub(super) fn fold_message(&mut self, stop_reason: &str) {
        let Some(t) = self.turn.as_mut() else { return };
        let (lines, folded) = t.message.fold(stop_reason);
        for event in lines {
            self.emit_stream_event(&event);
        }
        let Some(folded) = folded else { return };
        let uuid = self.ids.next_uuid();
        let model = self.session.model.as_deref().unwrap_or(DEFAULT_MODEL);
        let message = folded.message(model);
        let text_bytes: usize = folded.blocks.iter().map(|(_, b)| json_len(b)).sum();
        let line = self.stamped_message_sized(
            stream_json::MessageLineType::Assistant,
            &message,
            &uuid,
            text_bytes + LINE_CAPACITY,
        );
        let text_at = message.text_at.take();
        let line_index = self.out.to_panel.len();
        self.push_typed_line(line, "assistant");
        let in_line = self.out.to_panel.len() > line_index;
        let last_text = match text_at {
            // more than `""`: an empty text leaves the last one in place
            Some((start, end)) if in_line && end - start > 2 => {
                let text = folded
                    .blocks
                    .into_iter()
                    .find(|(k, _)| *k == BlockKind::Text);
                let mut room = text.map(|(_, body)| body.into_bytes()).unwrap_or_default();
                room.clear();
                Some(LastText::InLine(TextInLine {
                    line: line_index,
                    range: start..end,
                    room,
                }))
            }
            _ => folded.text().map(LastText::Text),
        };
        if let (Some(t), Some(last_text)) = (self.turn.as_mut(), last_text) {
            t.last_text = last_text;
        }
    }

    /// Announces the held calls whose wait is over by `now`.
    pub(super) fn holds_due(&mut self, now: Duration) {
        if self.turn.is_none() {
            return;
        }
        for id in self.tool_calls.holds_over(now) {
            self.fold_message("tool_use");
            self.announce(&id);
        }
    }

    /// Announces calls still held back for a name or input, so each gets
    /// its result and goes out before the panel line that follows.
    pub(super) fn announce_held_back(&mut self) {
        self.release_held_except("");
    }

    /// Announces every held-back call but `except` with what is known of it:
    /// **a held `tool_use` goes out before any later panel line**, so holding
    /// only ever improves its name and input, never the order of the stream.
    pub(super) fn release_held_except(&mut self, except: &str) {
        if self.turn.is_none() {
            return;
        }
        for id in self.tool_calls.unannounced_ids() {
            if id != except {
                self.fold_message("tool_use");
                self.announce(&id);
            }
        }
    }

    /// Emits the `tool_use` for a call.
    pub(super) fn announce(&mut self, call_id: &str) {
        let servers = self.tool_calls.servers.clone();
        let Some(call) = self
            .tool_calls
            .get_mut(call_id)
            .filter(|c| !c.is_announced())
        else {
            return;
        };
        call.mark_announced();
        call.announced_name = Some(stages::announced_name(call, &servers));
        self.next_msg += 1;
        call.message_id = Some(format!("msg_acp_{}", self.next_msg));
        let uuid = self.ids.next_uuid();
        let Some(call) = self.tool_calls.get(call_id) else {
            return;
        };
        // name, ids and input are serialised where the call keeps them
        let (Some(msg_id), Some(name)) = (&call.message_id, &call.announced_name) else {
            return;
        };
        let model = self.session.model.as_deref().unwrap_or(DEFAULT_MODEL);
        let input = call.input_to_write(&servers);
        let message = stream_json::ToolUseMessage::new(msg_id, model, call_id, name, &input);
        let line = self.stamped_message(stream_json::MessageLineType::Assistant, &message, &uuid);
        self.push_typed_line(line, "message");
    }

    /// A script-gate note for the panel: a text block of the `assistant`
    /// message that carried the call's `tool_use`, so the panel renders it
    /// right after that tool card, not after the whole turn (docs/bridge-behaviour.md,
    /// "Script gate").
    pub(super) fn gate_note(&mut self, call_id: &str, text: String) {
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
        self.emit_assistant_text(&msg_id, &text);
    }

    /// An assistant message of its own holding one text (a failed prompt's error).
    fn error_note(&mut self, text: String) {
        self.next_msg += 1;
        let msg_id = format!("msg_acp_{}", self.next_msg);
        self.emit_assistant_text(&msg_id, &text);
    }

    /// A `tool_call` / `tool_call_update` read the generic way (see
    /// [`Bridge::call_frame`] for the fast one).
    pub(super) fn tool_call_update(&mut self, u: Value, now: Duration) {
        let mut fields = OwnFields::from(u);
        if let Some(server) = crate::call::identity::mcp_startup_server(&fields) {
            return self.mcp_startup(&server, &fields);
        }
        // the id moves out of the fields (merging skips it anyway)
        let Some(call_id) = fields.tool_call_id.take() else {
            return self.diag("tool call without toolCallId skipped".to_string());
        };
        self.tool_call_fields(call_id, fields, now);
    }

    /// A `tool_call` / `tool_call_update` of the call `call_id` with its
    /// fields.
    pub(super) fn tool_call_fields(&mut self, call_id: String, fields: OwnFields, now: Duration) {
        self.merge_tool_call_update(call_id, fields, now);
        self.let_go_over_budget();
    }

    /// **The calls still running hold a bounded amount**: over
    /// [`MAX_OPEN_CALL_BYTES`](crate::MAX_OPEN_CALL_BYTES) the
    /// oldest are announced (if held) and closed with an error result, so
    /// the panel's every `tool_use` still gets its one `tool_result`.
    fn let_go_over_budget(&mut self) {
        for id in self.tool_calls.over_budget() {
            self.diag(format!(
                "tool call {id} let go: the calls still running held more than {} bytes",
                crate::MAX_OPEN_CALL_BYTES
            ));
            // a held call goes out first; text streamed since an announced
            // one ends its message, as before any result
            let held = self.tool_calls.get(&id).is_some_and(|c| !c.is_announced());
            self.fold_message(if held { "tool_use" } else { "end_turn" });
            self.announce(&id);
            self.close_call(&id, crate::LET_GO_TEXT, true);
        }
    }

    fn merge_tool_call_update(&mut self, call_id: String, u: OwnFields, now: Duration) {
        // a second id a permission request gave the call
        let call_id = match self.tool_calls.aliased(&call_id) {
            Some(id) => id.to_string(),
            None => call_id,
        };
        if self.turn.is_none() {
            return self.diag(format!("tool call {call_id} outside a turn skipped"));
        }
        let servers = self.tool_calls.servers.clone();
        let in_progress = u.status == Some(CallStatus::InProgress);
        let call = self.tool_calls.merge_owned(&call_id, CallFields::from(u));
        call.reported = true;
        if call.is_closed() {
            return;
        }
        let completed = call.status() == Some(&CallStatus::Completed);
        let finished = call.status().is_some_and(CallStatus::is_finished);
        if !call.is_announced() {
            if stages::holds_back(call, &servers, in_progress, finished, now) {
                return;
            }
            self.fold_message("tool_use");
            self.announce(&call_id);
        }
        if finished {
            // text streamed while the tool ran ends its message first: a
            // `user` line never lands inside an open streamed message
            self.fold_message("end_turn");
            self.finish_call(&call_id, completed, &servers);
        }
    }

    /// Closes a call the agent reported finished: its gate note if it wrote
    /// a gated script unasked, then its one `tool_result`.
    fn finish_call(&mut self, call_id: &str, completed: bool, servers: &RegisteredServers) {
        let Some(call) = self.tool_calls.get_mut(call_id) else {
            return;
        };
        let ours = self.mcp.endpoint().map(|ep| ep.name.as_str());
        let finish = stages::finish(call, servers, completed, self.spec.script_gate, ours);
        if finish.reached_ours && !finish.is_error {
            self.mcp.call_completed();
        }
        if let Some(write) = finish.unasked_write {
            let note = if write.late {
                script_gate::late_write_text(&write.target)
            } else {
                let mode = &self.session.permission_mode;
                let approves = matches!(
                    mode,
                    PermissionMode::AcceptEdits | PermissionMode::BypassPermissions
                );
                script_gate::unasked_write_text(&write.target, mode.as_str(), approves)
            };
            self.gate_note(call_id, note);
        }
        // the result is serialised from the call's own fields (an image is not copied)
        let fields = self.close_fields(call_id);
        let content = tool_result::render_fields((&fields).into(), &self.spec.compat);
        for defect in &content.image_defects {
            self.out
                .diagnostics
                .push(format!("tool call {call_id}: {defect}"));
        }
        match finish.stand_in.filter(|_| content.is_blank()) {
            Some(text) => self.emit_tool_result(call_id, &text, finish.is_error),
            None => self.emit_tool_result(call_id, &content, finish.is_error),
        }
    }

    /// The stand-in result of a call the bridge just refused, when the agent
    /// never reported the call itself (Gemini CLI's permission-first shape
    /// sends nothing more): right after the refusal, before any later text.
    /// A reported call keeps waiting for the agent's own failed update.
    pub(super) fn close_refused_unreported(&mut self, call_id: &str, why: String) {
        let Some(c) = self.tool_calls.get(call_id) else {
            return;
        };
        if c.reported || c.is_closed() || !c.is_announced() {
            return;
        }
        self.fold_message("end_turn");
        self.close_call(call_id, &why, true);
    }

    pub(super) fn close_call(&mut self, call_id: &str, text: &str, is_error: bool) {
        self.close_fields(call_id);
        self.emit_tool_result(call_id, &text, is_error);
    }

    /// Marks the call closed and takes its fields (see [`ToolCalls::close`]).
    fn close_fields(&mut self, call_id: &str) -> crate::call::fields::OwnFields {
        self.tool_calls.close(call_id)
    }

    /// The `user` line with the call's one `tool_result`.
    fn emit_tool_result<C: stream_json::ResultContent>(
        &mut self,
        call_id: &str,
        content: &C,
        is_error: bool,
    ) {
        self.emit_message(
            stream_json::MessageLineType::User,
            &stream_json::ToolResultMessage::new(call_id, content, is_error),
        );
    }

    pub(super) fn prompt_returned(
        &mut self,
        error: Option<&RpcError>,
        end: PromptEnd,
        now: Duration,
    ) {
        let stop = end.stop_reason;
        self.fold_message(stop.as_deref().unwrap_or("end_turn"));
        self.announce_held_back();
        // calls of this prompt that never finished get a synthetic result
        for id in self.tool_calls.open_ids() {
            // a call the script gate refused says why, as a denying hook's result does
            let why = match self.tool_calls.get(&id).and_then(|c| c.gate_denial.clone()) {
                Some(denial) => denial,
                None => format!(
                    "Tool call ended without a result (the agent's turn ended: {})",
                    stop.as_deref().unwrap_or("error")
                ),
            };
            self.close_call(&id, &why, true);
        }
        let Some(t) = self.turn.as_mut() else {
            return self.diag("session/prompt returned with no turn running".to_string());
        };
        let mut failed_prompt = None;
        match error {
            Some(e) => {
                let msg = format!("the agent failed the prompt: {}", e);
                t.fail_prompt(msg.clone());
                self.out.diagnostics.push(msg.clone());
                failed_prompt = Some(msg);
            }
            None => {
                if let Some(tokens) = end.tokens {
                    t.usage.add(&tokens);
                    t.saw_prompt_usage = true;
                }
                match stop.as_deref() {
                    Some("refusal") => t.refused = true,
                    Some("max_turn_requests") => t.max_turns = true,
                    _ => {}
                }
                // the last prompt decides: a queued prompt that ran after
                // the cancelled one ends the turn as it ends
                t.interrupted = t.cancel_sent && stop.as_deref() == Some("cancelled");
                t.stop_reason = stop;
            }
        }
        t.cancel_sent = false;
        self.cancel_deadline = None;
        if let Some(msg) = failed_prompt {
            // Claude Code shows a failed API request as an assistant message
            // with the error text before the turn's result.
            self.error_note(msg);
        }
        let Some(t) = self.turn.as_mut() else { return };
        if let Some(next) = t.queue.pop_front() {
            self.send_prompt(next);
        } else {
            self.end_turn(now);
        }
    }

    /// Sends the prompt a turn queued while the agent still owed the answer
    /// to a given-up prompt, once it owes none.
    pub(super) fn send_queued_after_late(&mut self) {
        if self.requests.any_late() || self.phase != Phase::Ready {
            return;
        }
        if self.requests.prompt_running() {
            return;
        }
        let Some(t) = self.turn.as_mut() else { return };
        if let Some(next) = t.queue.pop_front() {
            self.send_prompt(next);
        }
    }

    /// Emits the turn's single `result` and forgets the turn.
    pub(super) fn end_turn(&mut self, now: Duration) {
        self.cancel_deadline = None;
        self.fold_message("end_turn");
        self.announce_held_back();
        for id in self.tool_calls.open_ids() {
            self.close_call(&id, "Tool call ended without a result", true);
        }
        self.cancel_pending_permissions_silently();
        self.take_tool_lists();
        if let Some(t) = self.turn.take() {
            let (result, at) = t.result(now);
            self.emit_result(&result, at);
        }
        if self.panel_eof {
            self.close_stdin();
        }
    }

    pub(super) fn cancel_pending_permissions_silently(&mut self) {
        // permission requests still open when the turn ends can no longer be
        // answered by the panel meaningfully; the agent is told they were cancelled
        if self.phase == Phase::Ready {
            self.cancel_pending_permissions();
        } else {
            self.permissions.clear();
        }
    }
}
