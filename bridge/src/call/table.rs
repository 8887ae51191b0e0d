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

use std::cell::OnceCell;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::acp::json_field::field;
use crate::acp::tool_call::CallStatus;
use crate::call::fields::{CallFields, OwnFields, PermissionParts, held_bytes, list_bytes};
use crate::call::identity::{self, Identity, RegisteredServers};

#[derive(Debug)]
pub(crate) struct ToolCall {
    pub id: String,
    /// ACP fields seen so far (`title`, `kind`, `rawInput`, `content`, ...)
    /// and the permission request's parts.
    fields: CallFields,
    /// What is read from `fields` (and the counters beside them), worked out
    /// on first use and forgotten whenever they change.
    derived: Derived,
    /// Where the call is on its way to the panel; set to
    /// [`Stage::Closed`] by [`ToolCalls::close`] only, which keeps the open
    /// list.
    stage: Stage,
    /// The `assistant` message that carried the call's `tool_use`; notes
    /// about the call (the script gate's) join it as further blocks.
    pub message_id: Option<String>,
    /// Whether the agent asked permission for the call, and what the
    /// script gate found in the request.
    pub asked: Asked,
    /// The script gate's deny text when the bridge refused the call: its
    /// result if the agent never reports one (Gemini sends nothing).
    pub gate_denial: Option<String>,
    /// The panel's deny text when it refused the call: its result's text
    /// if the agent's failed frame brings none (every result says what
    /// happened).
    pub panel_denial: Option<String>,
    /// The Claude name given in the `tool_use`: **one name per call**, kept
    /// for its `can_use_tool`, denials and the script gate.
    pub announced_name: Option<String>,
    /// Frames merged so far (`tool_call`, updates, permission requests).
    pub frames: u32,
    /// Arguments read from JSON text blocks of the call's own content while
    /// it was not yet its result, merged key by key across frames.
    content_arguments: Option<Value>,
    /// Whether the agent sent a `tool_call` / `tool_call_update` for the
    /// call (not only a permission request).
    pub reported: bool,
    /// Frames so far that carried a rawInput: an empty one in the first
    /// frame may be a placeholder for arguments that follow.
    raw_input_frames: u32,
    /// The call's finishing frame brought no content, so the content it has
    /// came from frames before it ran: a proposal (the diff shown for
    /// approval) rather than the result.
    content_before_finish: bool,
    /// Until when the call may stay held back for its name or arguments:
    /// one [`UNNAMED_CALL_WAIT`] after the frame that first held it.
    pub held_until: Option<Duration>,
    /// About how many bytes `fields` holds (their JSON size, see
    /// [`held_bytes`]), for the budget of the calls still running.
    held: usize,
}

/// Where a call is on its way to the panel: held back (its name or input
/// may still improve), announced (its `tool_use` went out), closed (its
/// one `tool_result` went out; late frames for it are dropped). A call is
/// announced before it closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    Held,
    Announced,
    Closed,
}

/// Whether the agent asked permission for a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asked {
    No,
    Yes,
    /// Asked, and the script gate judged the request and found no gated
    /// target in it (a target named later was never asked about).
    GatePassed,
}

/// How much the calls still running may hold in all (their fields' JSON
/// size): an agent that opens calls and never finishes them, each with a
/// large content, would otherwise grow the bridge without bound. Over it,
/// the oldest running calls are let go with an error result. A screenshot
/// call holds a few MiB; four 8 MiB images fit.
pub const MAX_OPEN_CALL_BYTES: usize = 64 << 20;

/// The result text of a call let go to stay within [`MAX_OPEN_CALL_BYTES`].
pub const LET_GO_TEXT: &str = "Tool call ended by the bridge without a result: the agent's calls still running held more than 64 MiB, and this was the oldest";

/// About the JSON size of a call's fields (see [`held_bytes`]): its own and
/// its permission request's parts, each counted as a key of the call.
fn fields_held_bytes(fields: &CallFields) -> usize {
    fields.own.held_bytes()
        + part_sizes(&fields.permission)
            .into_iter()
            .flatten()
            .sum::<usize>()
}

/// The size of each permission request part present, counted as a key of
/// the call (its name, quotes and colon, and the value).
fn part_sizes(p: &PermissionParts) -> [Option<usize>; 5] {
    let text = |t: &Option<String>, key: &str| t.as_ref().map(|t| key.len() + 3 + t.len() + 2);
    let blocks =
        |b: &Option<Vec<Value>>, key: &str| b.as_ref().map(|b| key.len() + 3 + list_bytes(b));
    [
        text(&p.title, "permissionTitle"),
        p.kind
            .as_ref()
            .map(|k| "permissionKind".len() + 3 + k.as_str().len() + 2),
        blocks(&p.content, "permissionContent"),
        p.options.as_ref().map(|o| {
            "permissionOptions".len() + 3 + o.iter().map(|o| o.held_bytes()).sum::<usize>() + 2
        }),
        p.meta
            .as_ref()
            .map(|m| "permissionMeta".len() + 3 + held_bytes(m)),
    ]
}

/// The longest a call stays held back for its name or arguments after the
/// frame that first held it: a call with no kind and no tool identity waits
/// for the permission request that names it (agents that ask after
/// reporting the call running, such as Kimi Code, name it only there); an
/// MCP call waits for a frame with its arguments, which may never come. The
/// wait ends sooner at that frame, the call's result or any later panel line.
pub const UNNAMED_CALL_WAIT: Duration = Duration::from_secs(1);

/// A call's values derived from its fields: asked for several times per
/// frame (hold or announce, the `tool_use`, the script gate), each worked
/// out once per change of the fields. The session's MCP servers and their
/// tools change only while no call is open, so they are no part of the key.
#[derive(Debug, Default)]
struct Derived {
    identity: OnceCell<Option<Identity>>,
    name: OnceCell<String>,
    input: OnceCell<Value>,
    awaits_arguments: OnceCell<bool>,
    identity_pending: OnceCell<bool>,
}

impl ToolCall {
    fn new(id: String, fields: CallFields) -> ToolCall {
        ToolCall {
            id,
            derived: Derived::default(),
            stage: Stage::Held,
            message_id: None,
            asked: Asked::No,
            gate_denial: None,
            panel_denial: None,
            announced_name: None,
            content_arguments: None,
            frames: 0,
            reported: false,
            raw_input_frames: 0,
            content_before_finish: false,
            held_until: None,
            held: fields_held_bytes(&fields),
            fields,
        }
    }

    /// A call known only from `fields` (a permission request without a
    /// `toolCallId`), kept nowhere.
    pub fn detached(fields: CallFields) -> ToolCall {
        ToolCall {
            stage: Stage::Announced,
            asked: Asked::Yes,
            ..ToolCall::new(String::new(), fields)
        }
    }

    /// The ACP fields seen so far.
    pub fn fields(&self) -> &CallFields {
        &self.fields
    }

    /// Merges a frame into the fields, its terminal output kept beside them.
    fn merge(&mut self, update: CallFields) {
        crate::call::result::keep_terminal_output(&mut self.fields.own, &update.own);
        identity::merge_tool_call_owned(&mut self.fields, update);
    }

    /// Merges `update` into the fields and returns what they hold then,
    /// counted by the keys it touches: what it replaces goes, what it brings
    /// comes (rawInput merges key by key and the terminal output grows, so
    /// those are counted whole before and after).
    fn held_after_merge(&mut self, update: CallFields) -> usize {
        const IN_PLACE: [&str; 2] = ["rawInput", "terminalOutput"];
        // only the in-place keys this frame touches are counted again
        let touched = [
            update.own.raw_input.is_some(),
            update.own.terminal_output_delta().is_some(),
        ];
        let in_place = |fields: &OwnFields| {
            IN_PLACE
                .iter()
                .zip(touched)
                .filter(|(_, touched)| *touched)
                .map(|(k, _)| fields.size_of(k))
                .sum::<usize>()
        };
        let (mut before, mut after) = (in_place(&self.fields.own), 0);
        // a part the request brings replaces the one the call has
        let (old_parts, new_parts) = (
            part_sizes(&self.fields.permission),
            part_sizes(&update.permission),
        );
        for (old, new) in old_parts.into_iter().zip(new_parts) {
            if let Some(new) = new {
                before += old.unwrap_or(0);
                after += new;
            }
        }
        for (key, size) in update.own.sizes() {
            if IN_PLACE.contains(&key) || matches!(key, "sessionUpdate" | "toolCallId") {
                continue;
            }
            before += self.fields.own.size_of(key);
            after += size;
        }
        self.merge(update);
        after += in_place(&self.fields.own);
        (self.held + after).saturating_sub(before)
    }

    /// Whether the call has its result (late frames for it are dropped).
    pub fn is_closed(&self) -> bool {
        self.stage == Stage::Closed
    }

    /// Whether the call's `tool_use` went out (a closed call's did).
    pub fn is_announced(&self) -> bool {
        self.stage != Stage::Held
    }

    /// Marks a held call announced: its `tool_use` goes out now. `false`
    /// when it was announced already.
    pub fn mark_announced(&mut self) -> bool {
        let held = self.stage == Stage::Held;
        if held {
            self.stage = Stage::Announced;
        }
        held
    }

    /// Whether the agent asked permission for the call.
    pub fn was_asked(&self) -> bool {
        self.asked != Asked::No
    }

    /// Drops from the call's content the JSON object texts that carried its
    /// arguments when only frames before the finishing one carried them:
    /// the arguments are no result.
    pub fn drop_argument_texts(&mut self) {
        if self.content_arguments.is_none() || !self.content_before_finish {
            return;
        }
        let Some(blocks) = self.fields.own.content.as_mut() else {
            return;
        };
        let before = blocks.len();
        blocks.retain(|b| {
            let block = if field(b, "type") == "content" {
                field(b, "content")
            } else {
                b
            };
            field(block, "text")
                .as_str()
                .is_none_or(|t| serde_json::from_str::<serde_json::Map<String, Value>>(t).is_err())
        });
        if blocks.len() != before {
            self.derived = Derived::default();
        }
    }

    /// Empties the call's content (a proposal, no result).
    pub fn clear_content(&mut self) {
        self.derived = Derived::default();
        self.fields.own.content = Some(Vec::new());
    }

    fn identity(&self, servers: &RegisteredServers) -> Option<&Identity> {
        self.derived
            .identity
            .get_or_init(|| identity::identity(&self.fields, servers))
            .as_ref()
    }

    /// The call's Claude name: the announced one once announced.
    pub fn name(&self, servers: &RegisteredServers) -> &str {
        match &self.announced_name {
            Some(name) => name,
            None => self
                .derived
                .name
                .get_or_init(|| match self.identity(servers) {
                    Some(identity) => {
                        identity::claude_tool_name_known(&self.fields, Some(identity))
                    }
                    None => {
                        let declared = identity::declared_tool_name(&self.fields);
                        if crate::call::input::file_tool_name_may_apply(declared, &self.fields) {
                            self.agent_input().name().to_string()
                        } else {
                            declared.to_string()
                        }
                    }
                }),
        }
    }

    /// The MCP call's arguments, when some frame carried them; an empty
    /// rawInput counts only when no other source has arguments.
    fn mcp_arguments(&self, decoration: Option<&Value>) -> Option<Value> {
        match identity::mcp_arguments(&self.fields, decoration, false) {
            Some(Value::Object(m)) if m.is_empty() && self.content_arguments.is_some() => {
                self.content_arguments.clone()
            }
            None => self.content_arguments.clone(),
            found => found,
        }
    }

    /// Whether the call's rawInput is not known yet: none came, or only one
    /// frame carried it and it was empty (`{}`), which an agent may send
    /// before the arguments it fills in with the next frame.
    fn raw_input_pending(&self) -> bool {
        match &self.fields.own.raw_input {
            None => true,
            Some(Value::Object(m)) => m.is_empty() && self.raw_input_frames <= 1,
            Some(_) => false,
        }
    }

    /// The `tool_use` input: an MCP call's arguments (`{}` when no frame
    /// carried any), else rawInput in Claude's shape.
    pub fn input(&self, servers: &RegisteredServers) -> &Value {
        self.derived
            .input
            .get_or_init(|| match self.identity(servers) {
                Some((_, _, decoration)) => self
                    .mcp_arguments(decoration.as_ref())
                    .unwrap_or_else(|| json!({})),
                None => self.agent_input().to_value(),
            })
    }

    /// An agent tool's input, borrowed from its fields (see
    /// [`crate::call::input::AgentToolInput`]).
    fn agent_input(&self) -> crate::call::input::AgentToolInput<'_> {
        crate::call::input::AgentToolInput::with_content_arguments(
            &self.fields,
            self.content_arguments.as_ref(),
        )
    }

    /// The `tool_use` input to write: [`ToolCall::input`] once worked out
    /// or for an MCP call, else an agent tool's borrowed from its fields
    /// (the same bytes, without building a map for them).
    pub fn input_to_write(&self, servers: &RegisteredServers) -> ToolInput<'_> {
        match self.derived.input.get() {
            Some(input) => ToolInput::Built(input),
            None if !self.is_mcp(servers) => ToolInput::Agent(Box::new(self.agent_input())),
            None => ToolInput::Built(self.input(servers)),
        }
    }

    /// Whether the call's arguments are not known yet: for an MCP call, no
    /// frame carried any (an empty rawInput that only the first frame
    /// carried does not count); for any other call, its rawInput is
    /// pending.
    pub fn awaits_arguments(&self, servers: &RegisteredServers) -> bool {
        *self
            .derived
            .awaits_arguments
            .get_or_init(|| self.find_awaits_arguments(servers))
    }

    fn find_awaits_arguments(&self, servers: &RegisteredServers) -> bool {
        match self.identity(servers) {
            Some((_, _, decoration)) => match self.mcp_arguments(decoration.as_ref()) {
                None => true,
                Some(Value::Object(m)) if m.is_empty() => {
                    // an empty object from the first frame alone (rawInput,
                    // or a title decorated with `{}` while the agent is still
                    // preparing the call) is no proof of a call without
                    // arguments
                    self.fields.own.raw_input().is_object()
                        && self.raw_input_pending()
                        && self.content_arguments.is_none()
                        && identity::other_arguments(&self.fields, decoration.as_ref(), false)
                            .is_none_or(|v| v.as_object().is_some_and(serde_json::Map::is_empty))
                }
                Some(_) => false,
            },
            // an agent tool's arguments in a JSON content text are known
            None => self.raw_input_pending() && self.content_arguments.is_none(),
        }
    }

    /// Whether an agent tool still lacks a field its Claude tool needs (see
    /// [`crate::call::input::required_fields`]): held even while it runs.
    pub fn lacks_required_fields(&self, servers: &RegisteredServers) -> bool {
        if self.is_mcp(servers) {
            return false;
        }
        let required = crate::call::input::required_fields(self.name(servers));
        // rawInput's arguments are keys of the input: when they hold every
        // field, the input need not be worked out (the `tool_use` that
        // follows writes it borrowed from the fields)
        if crate::call::input::raw_arguments(&self.fields).is_some_and(|raw| {
            required
                .iter()
                .all(|r| crate::acp::json_field::has_key(raw, r))
        }) {
            return false;
        }
        // else read from the input worked out once: the `tool_use` that
        // follows writes that same input
        let input = self.input(servers);
        !required
            .iter()
            .all(|r| crate::acp::json_field::get(input, r).is_some())
    }

    /// Whether the call's content is what an earlier frame proposed (see
    /// `content_before_finish`): diffs shown for approval, or the
    /// arguments as a JSON text; its result is then its rawOutput.
    pub fn content_is_proposal(&self) -> bool {
        let proposal = |b: &Value| {
            field(b, "type") == "diff" || {
                let block = if field(b, "type") == "content" {
                    field(b, "content")
                } else {
                    b
                };
                field(block, "text").as_str().is_some_and(|t| {
                    serde_json::from_str::<serde_json::Map<String, Value>>(t).is_ok()
                })
            }
        };
        // a call that failed (a refused write) without content of its own
        // leaves the diff it was asked with: no result either
        let failed = self.status() == Some(&CallStatus::Failed);
        self.content_before_finish
            && (failed || self.fields.own.raw_output.is_some())
            && self
                .fields
                .own
                .content
                .as_ref()
                .is_some_and(|blocks| !blocks.is_empty() && blocks.iter().all(proposal))
    }

    /// Whether an MCP identity is known for the call.
    pub fn is_mcp(&self, servers: &RegisteredServers) -> bool {
        self.identity(servers).is_some()
    }

    /// The MCP server the call invokes, by the identity rule.
    pub fn mcp_server(&self, servers: &RegisteredServers) -> Option<&str> {
        self.identity(servers).map(|(server, _, _)| server.as_str())
    }

    /// Whether the call's identity may still change (see
    /// [`identity::identity_pending_among`]).
    pub fn identity_pending(&self, servers: &RegisteredServers) -> bool {
        *self
            .derived
            .identity_pending
            .get_or_init(|| identity::identity_pending_among(&self.fields, servers))
    }

    pub fn status(&self) -> Option<&CallStatus> {
        self.fields.own.status.as_ref()
    }
}

/// A call's `tool_use` input (see [`ToolCall::input_to_write`]).
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
pub(crate) enum ToolInput<'a> {
    Built(&'a Value),
    Agent(Box<crate::call::input::AgentToolInput<'a>>),
}

/// How many closed calls the session remembers (to drop their late frames)
/// before it forgets the oldest: a session of endless calls stays bounded,
/// and a late frame comes within a few calls of its result, not thousands.
pub const REMEMBERED_CALLS: usize = 4096;

/// The tool calls of the session, in the order they appeared: the running
/// ones and the last [`REMEMBERED_CALLS`] or so.
#[derive(Debug, Default)]
pub(crate) struct ToolCalls {
    calls: VecDeque<ToolCall>,
    /// The position of `calls[0]` among all the session's calls: positions
    /// stay the same as the oldest calls are forgotten.
    first: usize,
    /// Where each call is among the session's calls, by id. foldhash, not SipHash: a
    /// burst of calls hashes an id per new call; its random seed still
    /// keeps colliding ids from being chosen ahead, and only the table's
    /// layout depends on it, never what the bridge emits.
    index: foldhash::HashMap<String, usize>,
    /// Other ids of calls: the id a permission request asked under when it
    /// belongs to a call announced under another ([`ToolCalls::alias`]).
    aliases: foldhash::HashMap<String, String>,
    /// Where the calls not closed yet are in `calls`, in order: few, while
    /// a session may have made hundreds.
    open: Vec<usize>,
    /// What the calls in `open` hold in all (see [`MAX_OPEN_CALL_BYTES`]).
    open_held: usize,
    /// The panel's MCP servers the bridge registered with the agent and
    /// their tools (shared: handed to every call's lookups without
    /// copying). Replaced only while no call is open.
    pub servers: Arc<RegisteredServers>,
}

impl ToolCalls {
    pub fn new(servers: Vec<String>) -> ToolCalls {
        ToolCalls {
            calls: VecDeque::new(),
            first: 0,
            index: foldhash::HashMap::default(),
            aliases: foldhash::HashMap::default(),
            open: Vec::new(),
            open_held: 0,
            servers: Arc::new(RegisteredServers::new(servers)),
        }
    }

    /// Merges `update`'s fields (all but `sessionUpdate`) into the call,
    /// creating it; a closed call keeps no fields.
    pub fn merge(&mut self, id: &str, update: &CallFields) -> &mut ToolCall {
        self.merge_owned(id, update.clone())
    }

    /// [`ToolCalls::merge`] taking the update: its values move into the
    /// call, so a large result (an image) is not copied.
    pub fn merge_owned(&mut self, id: &str, update: impl Into<CallFields>) -> &mut ToolCall {
        let update = update.into();
        let idx = match self.position(id) {
            Some(i) => i,
            None => {
                let idx = self.first + self.calls.len();
                let call = ToolCall::new(id.to_string(), CallFields::default());
                self.open_held += call.held;
                self.calls.push_back(call);
                self.index.insert(id.to_string(), idx);
                self.open.push(idx);
                idx
            }
        };
        let call = &mut self.calls[idx - self.first];
        if !call.is_closed() {
            call.derived = Derived::default();
            call.frames += 1;
            let finished = update
                .own
                .status
                .as_ref()
                .is_some_and(CallStatus::is_finished);
            // arguments in JSON content texts merge key by key, as rawInput does
            if !finished
                && let Some(Value::Object(new)) = identity::json_text_arguments(&update, true)
            {
                match &mut call.content_arguments {
                    Some(Value::Object(known)) => known.extend(new),
                    slot => *slot = Some(Value::Object(new)),
                }
            }
            if update.own.raw_input.is_some() {
                call.raw_input_frames += 1;
            }
            if finished {
                call.content_before_finish =
                    update.own.content.is_none() && call.fields.own.content.is_some();
            }
            let held = if finished {
                // the call closes after this frame: what it brings never counts
                call.merge(update);
                call.held
            } else {
                call.held_after_merge(update)
            };
            self.open_held = (self.open_held + held).saturating_sub(call.held);
            call.held = held;
        }
        call
    }

    /// The oldest calls still running to let go, in order, so that the rest
    /// hold at most [`MAX_OPEN_CALL_BYTES`]; none while they do.
    pub fn over_budget(&self) -> Vec<String> {
        let mut held = self.open_held;
        self.open_calls()
            .take_while(|c| {
                let over = held > MAX_OPEN_CALL_BYTES;
                held -= c.held.min(held);
                over
            })
            .map(|c| c.id.clone())
            .collect()
    }

    /// Where the call `id` is: the newest call is looked up most (its frames
    /// follow each other), so it is compared before the index is hashed.
    fn position(&self, id: &str) -> Option<usize> {
        match self.calls.back() {
            Some(newest) if newest.id == id => Some(self.first + self.calls.len() - 1),
            _ => self.index.get(id).copied().or_else(|| {
                self.aliases
                    .get(id)
                    .and_then(|call| self.index.get(call))
                    .copied()
            }),
        }
    }

    /// Makes `other` a second id of the call `id`: its frames are that
    /// call's from now on.
    pub fn alias(&mut self, other: &str, id: &str) {
        if !other.is_empty() && other != id && !self.index.contains_key(other) {
            self.aliases.insert(other.to_string(), id.to_string());
        }
    }

    /// The id of the call `id` is another id of, if it is one.
    pub fn aliased(&self, id: &str) -> Option<&str> {
        self.aliases.get(id).map(String::as_str)
    }

    /// Forgets that `id` is another id of a call (a request reusing it is
    /// paired anew).
    pub fn unalias(&mut self, id: &str) {
        self.aliases.remove(id);
    }

    /// An id no call has, made from `id`: `<id>#2`, `<id>#3`, ... (a second
    /// request under one id that pairs with no open call is a card of its own).
    pub fn fresh_id(&self, id: &str) -> String {
        (2..)
            .map(|n| format!("{id}#{n}"))
            .find(|fresh| self.position(fresh).is_none())
            .expect("some number is free")
    }

    /// The calls still open that no permission request asked about yet,
    /// oldest first, with their fields: what a request under an unknown id
    /// may belong to ([`crate::call::permission::paired_call`]).
    pub fn unasked(&self) -> impl Iterator<Item = (&str, &OwnFields)> {
        self.open_calls()
            .filter(|c| !c.was_asked())
            .map(|c| (c.id.as_str(), &c.fields.own))
    }

    pub fn get(&self, id: &str) -> Option<&ToolCall> {
        self.position(id).map(|i| &self.calls[i - self.first])
    }

    pub fn get_mut(&mut self, id: &str) -> Option<&mut ToolCall> {
        self.position(id).map(|i| &mut self.calls[i - self.first])
    }

    /// Marks the call closed and takes its fields: a closed call only needs
    /// its id (late frames for it are dropped); its fields may hold
    /// megabytes of image data. Its own fields, none for an unknown call.
    pub fn close(&mut self, id: &str) -> OwnFields {
        let Some(idx) = self.position(id) else {
            return OwnFields::new();
        };
        let call = &mut self.calls[idx - self.first];
        if !call.is_closed() {
            self.open.retain(|&i| i != idx);
            self.open_held = self.open_held.saturating_sub(call.held);
        }
        call.held = 0;
        call.stage = Stage::Closed;
        call.derived = Derived::default();
        let fields = std::mem::take(&mut call.fields);
        self.forget_oldest_closed();
        fields.own
    }

    /// Forgets the oldest calls past [`REMEMBERED_CALLS`] while they are
    /// closed (a running one is never forgotten: it waits for its result).
    fn forget_oldest_closed(&mut self) {
        while self.calls.len() > REMEMBERED_CALLS
            && self.calls.front().is_some_and(ToolCall::is_closed)
        {
            if let Some(old) = self.calls.pop_front() {
                self.index.remove(&old.id);
                if !self.aliases.is_empty() {
                    self.aliases.retain(|_, call| *call != old.id);
                }
                self.first += 1;
            }
        }
    }

    /// The calls not closed yet, in order.
    fn open_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.open.iter().map(|&i| &self.calls[i - self.first])
    }

    /// Whether any call is open, announced or not.
    pub fn any_open(&self) -> bool {
        !self.open.is_empty()
    }

    /// The soonest end of a held call's wait.
    pub fn next_hold_end(&self) -> Option<Duration> {
        self.open_calls()
            .filter(|c| !c.is_announced())
            .filter_map(|c| c.held_until)
            .min()
    }

    /// Ids of held calls whose wait has ended by `now`.
    pub fn holds_over(&self, now: Duration) -> Vec<String> {
        self.open_calls()
            .filter(|c| !c.is_announced() && c.held_until.is_some_and(|d| d <= now))
            .map(|c| c.id.clone())
            .collect()
    }

    /// Ids of calls held back (identity pending) and not yet announced.
    pub fn unannounced_ids(&self) -> Vec<String> {
        self.open_calls()
            .filter(|c| !c.is_announced())
            .map(|c| c.id.clone())
            .collect()
    }

    /// Ids of calls announced to the panel but not yet given a result.
    pub fn open_ids(&self) -> Vec<String> {
        self.open_calls()
            .filter(|c| c.is_announced())
            .map(|c| c.id.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests;
