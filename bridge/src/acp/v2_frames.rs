//! ACP v2 agent frames read into v1's model: the core has one model of a
//! session, and v2 is a second reader of it, not a second bridge.
//!
//! What v2 changes, and how each reads:
//! - upserts by id: a `tool_call_update` for a call not seen yet is its
//!   `tool_call`; `tool_call_content_chunk` appends to the call's content,
//!   read as an update carrying the content so far;
//! - whole messages (`agent_message`, `agent_thought`, `user_message`) by
//!   `messageId`: one not streamed yet reads as its chunks; one whose chunks
//!   already went out cannot be unsent (a diagnostic, skipped);
//! - `state_update`: the session's foreground state, handed to the core as
//!   its own event (`idle` ends the turn v1 ends with the prompt's answer);
//! - a permission request names its call as `subject.toolCall` and has its
//!   own `title`: read as v1's `toolCall`, the title kept.
//!
//! Anything else passes as it came: its shape is v1's.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use crate::acp::prompt_end::PromptEnd;
use crate::acp::update_kind::{CallKind, MessageKind, UpdateKind};

mod terminals;
pub use terminals::shows_a_terminal;
use terminals::{Output, Terminals};

/// What one v2 agent frame is to the core.
#[derive(Debug, Clone, PartialEq)]
pub enum V2Read {
    /// The line as it came: its shape is v1's (not parsed again).
    AsSent,
    /// A frame read into v1's shape, handled as v1's.
    Frame(Value),
    /// A `state_update`: `state` as sent; on `idle`, why the work stopped
    /// and what it used.
    State { state: String, end: PromptEnd },
    /// Something v1's model cannot show, said as a diagnostic.
    Skipped(String),
}

/// The reader's memory of one session: which calls and messages the core
/// has seen.
#[derive(Debug, Default)]
pub struct V2Reader {
    calls: HashSet<String>,
    call_content: HashMap<String, Vec<Value>>,
    /// Messages whose content reached the core (streamed or whole).
    messages: HashSet<String>,
    terminals: Terminals,
}

/// At most this many calls' appended content is kept; an older call's
/// further chunks read as updates with their own content only.
const MAX_TRACKED_CALLS: usize = 1024;

impl V2Reader {
    /// A chunk of message `id` went to the core as sent: a whole message
    /// of that id later is no new message.
    pub fn message_seen(&mut self, id: &str) {
        if !self.messages.contains(id) {
            self.messages.insert(id.to_string());
        }
    }

    /// A frame of kind `kind` for call `id` goes to the core: v2's upsert
    /// (`tool_call_update`) of a call not seen before is v1's `tool_call`.
    pub fn call_seen(&mut self, kind: CallKind, id: &str) -> CallKind {
        let first = kind == CallKind::ToolCallUpdate
            && self.calls.len() < MAX_TRACKED_CALLS
            && !self.calls.contains(id);
        if first {
            self.calls.insert(id.to_string());
            return CallKind::ToolCall;
        }
        kind
    }

    /// Reads one agent frame.
    pub fn read(&mut self, mut frame: Value) -> Vec<V2Read> {
        if frame["method"] == "session/request_permission" && !frame["id"].is_null() {
            return match permission_request_as_v1(&mut frame["params"]) {
                true => vec![V2Read::Frame(frame)],
                false => vec![V2Read::AsSent],
            };
        }
        if frame["method"] != "session/update" || !frame["id"].is_null() {
            return vec![V2Read::AsSent];
        }
        let kind = frame["params"]["update"]["sessionUpdate"]
            .as_str()
            .unwrap_or_default();
        match UpdateKind::parse(kind) {
            UpdateKind::State => {
                let update = &frame["params"]["update"];
                vec![V2Read::State {
                    state: update["state"].as_str().unwrap_or_default().to_string(),
                    end: PromptEnd::read(update),
                }]
            }
            UpdateKind::Chunk(_) | UpdateKind::UserMessageChunk => {
                if let Some(id) = frame["params"]["update"]["messageId"].as_str() {
                    self.message_seen(id);
                }
                vec![V2Read::AsSent]
            }
            UpdateKind::WholeMessage(message) => self.whole_message(frame, message),
            UpdateKind::Call(kind) => {
                let update = &frame["params"]["update"];
                let call = update["toolCallId"].as_str().map(str::to_string);
                // output a terminal had before this call showed it
                let held: Vec<Value> = match &call {
                    Some(call) => terminals::shown_terminals(update)
                        .into_iter()
                        .filter_map(|t| {
                            let text = self.terminals.shown_by(&t, call)?;
                            let session_id = &frame["params"]["sessionId"];
                            Some(terminals::output_frame(session_id, call, &t, &text))
                        })
                        .collect(),
                    None => Vec::new(),
                };
                let first_seen = kind == CallKind::ToolCallUpdate
                    && call.is_some_and(|id| self.call_seen(kind, &id) == CallKind::ToolCall);
                let call_read = match first_seen {
                    true => {
                        frame["params"]["update"]["sessionUpdate"] =
                            CallKind::ToolCall.as_str().into();
                        V2Read::Frame(frame)
                    }
                    false => V2Read::AsSent,
                };
                std::iter::once(call_read)
                    .chain(held.into_iter().map(V2Read::Frame))
                    .collect()
            }
            UpdateKind::TerminalOutputChunk | UpdateKind::TerminalUpdate => {
                self.terminal_output(&frame)
            }
            UpdateKind::CallContentChunk => self.content_chunk(frame),
            _ => vec![V2Read::AsSent],
        }
    }

    /// A terminal's output (a chunk, or an update's snapshot) as a delta on
    /// the call that shows the terminal; an update without output is the
    /// terminal's state alone, which the panel does not show.
    fn terminal_output(&mut self, frame: &Value) -> Vec<V2Read> {
        let update = &frame["params"]["update"];
        let Some(terminal) = update["terminalId"].as_str() else {
            return vec![V2Read::Skipped(format!(
                "{} without a terminalId skipped",
                update["sessionUpdate"].as_str().unwrap_or_default()
            ))];
        };
        let output = match (&update["data"], &update["output"]["data"]) {
            (Value::String(data), _) => self.terminals.chunk(terminal, data),
            (_, Value::String(data)) => self.terminals.snapshot(terminal, data),
            _ => return Vec::new(),
        };
        match output {
            Output::Delta { call, text } => {
                let session_id = &frame["params"]["sessionId"];
                let output = terminals::output_frame(session_id, &call, terminal, &text);
                vec![V2Read::Frame(output)]
            }
            Output::Nothing => Vec::new(),
            Output::Skipped(why) => vec![V2Read::Skipped(why)],
        }
    }

    fn whole_message(&mut self, frame: Value, message: MessageKind) -> Vec<V2Read> {
        let kind = message.as_str();
        let update = &frame["params"]["update"];
        let id = update["messageId"].as_str().unwrap_or_default().to_string();
        if !self.messages.insert(id.clone()) {
            return vec![V2Read::Skipped(format!(
                "{kind} {id} replaces a message whose content already reached the panel; skipped"
            ))];
        }
        let chunk_kind = message.chunk_kind();
        let blocks = update["content"].as_array().cloned().unwrap_or_default();
        blocks
            .into_iter()
            .map(|content| {
                let mut chunk = frame.clone();
                chunk["params"]["update"] = json!({
                    "sessionUpdate": chunk_kind,
                    "messageId": id,
                    "content": content,
                });
                V2Read::Frame(chunk)
            })
            .collect()
    }

    fn content_chunk(&mut self, mut frame: Value) -> Vec<V2Read> {
        let update = frame["params"]["update"].take();
        let Some(id) = update["toolCallId"].as_str().map(str::to_string) else {
            return vec![V2Read::Skipped(
                "tool_call_content_chunk without a toolCallId skipped".into(),
            )];
        };
        let content = update.get("content").cloned().unwrap_or(Value::Null);
        let so_far =
            if self.call_content.len() < MAX_TRACKED_CALLS || self.call_content.contains_key(&id) {
                let list = self.call_content.entry(id.clone()).or_default();
                list.push(content);
                list.clone()
            } else {
                vec![content]
            };
        let kind = self.call_seen(CallKind::ToolCallUpdate, &id).as_str();
        frame["params"]["update"] = json!({
            "sessionUpdate": kind,
            "toolCallId": id,
            "content": so_far,
        });
        vec![V2Read::Frame(frame)]
    }
}

/// v2's `subject` (`{type: "tool_call", toolCall}`) as v1's `toolCall`,
/// with the request's own `title` where the call has none; false when the
/// request already has v1's shape (left as it is).
fn permission_request_as_v1(params: &mut Value) -> bool {
    let Some(obj) = params.as_object_mut() else {
        return false;
    };
    if obj.contains_key("toolCall") {
        return false;
    }
    let subject = obj.get("subject").cloned().unwrap_or(Value::Null);
    let mut call = match (&subject["type"], &subject["toolCall"]) {
        (t, Value::Object(call)) if t == "tool_call" => call.clone(),
        _ => Map::new(),
    };
    if !call.contains_key("title")
        && let Some(title) = obj.get("title").filter(|t| t.is_string())
    {
        call.insert("title".into(), title.clone());
    }
    obj.insert("toolCall".into(), call.into());
    true
}

#[cfg(test)]
mod tests;
