//! The ACP tool calls of a session: their fields merged across `tool_call`,
//! `tool_call_update` and permission requests, and whether the panel has seen
//! their `tool_use` and `tool_result` yet.
//!
//! **Every announced call gets exactly one `tool_result`**: a real one when it
//! completes or fails, a synthetic one when its turn ends first.
//!
//! A refused call (the bridge answered its permission request with a reject
//! option, for the panel's deny or the script gate) that the agent never
//! reported in a `session/update` (Gemini CLI asks first and sends nothing
//! for a rejected call) gets its stand-in result right after the answer, as
//! Claude's denied call does, not at turn end after the model's follow-up
//! text. A refused call the agent did report (codex, Grok) waits for the
//! agent's own failed update, which says more; any frame for a call already
//! closed is dropped, so a late update never makes a second result.

use serde_json::{Value, json};

use crate::tool_name;

#[derive(Debug)]
pub(crate) struct ToolCall {
    pub id: String,
    /// ACP fields seen so far (`title`, `kind`, `rawInput`, `content`, ...).
    pub fields: Value,
    pub announced: bool,
    pub closed: bool,
    /// The `assistant` message that carried the call's `tool_use`; notes
    /// about the call (the script gate's) join it as further blocks.
    pub message_id: Option<String>,
    /// Whether the agent asked permission for the call.
    pub asked: bool,
    /// The script gate's deny text when the bridge refused the call: its
    /// result if the agent never reports one (Gemini sends nothing).
    pub gate_denial: Option<String>,
    /// Whether the core already held the call's `tool_use` back for a
    /// frame without a kind ([`tool_name::kind_pending`]): the next frame
    /// announces it whatever it carries.
    pub held_for_kind: bool,
    /// Whether the agent sent a `tool_call` / `tool_call_update` for the
    /// call (not only a permission request).
    pub reported: bool,
}

impl ToolCall {
    pub fn name(&self) -> String {
        tool_name::claude_tool_name(&self.fields)
    }

    /// The `tool_use` input (see [`tool_name::tool_input`]).
    pub fn input(&self) -> Value {
        tool_name::tool_input(&self.fields)
    }

    pub fn status(&self) -> Option<&str> {
        self.fields["status"].as_str()
    }
}

/// All tool calls of the session, in the order they appeared.
#[derive(Debug, Default)]
pub(crate) struct ToolCalls {
    calls: Vec<ToolCall>,
}

impl ToolCalls {
    /// Merges `update`'s fields (all but `sessionUpdate`) into the call,
    /// creating it; a closed call keeps no fields.
    pub fn merge(&mut self, id: &str, update: &Value) -> &mut ToolCall {
        let idx = match self.calls.iter().position(|c| c.id == id) {
            Some(i) => i,
            None => {
                self.calls.push(ToolCall {
                    id: id.to_string(),
                    fields: json!({}),
                    announced: false,
                    closed: false,
                    message_id: None,
                    asked: false,
                    gate_denial: None,
                    held_for_kind: false,
                    reported: false,
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[idx];
        if !call.closed {
            tool_name::merge_tool_call(&mut call.fields, update);
        }
        call
    }

    pub fn get(&self, id: &str) -> Option<&ToolCall> {
        self.calls.iter().find(|c| c.id == id)
    }

    pub fn get_mut(&mut self, id: &str) -> Option<&mut ToolCall> {
        self.calls.iter_mut().find(|c| c.id == id)
    }

    /// Ids of calls held back (identity pending) and not yet announced.
    pub fn unannounced_ids(&self) -> Vec<String> {
        self.calls
            .iter()
            .filter(|c| !c.announced && !c.closed)
            .map(|c| c.id.clone())
            .collect()
    }

    /// Ids of calls announced to the panel but not yet given a result.
    pub fn open_ids(&self) -> Vec<String> {
        self.calls
            .iter()
            .filter(|c| c.announced && !c.closed)
            .map(|c| c.id.clone())
            .collect()
    }
}
