//! Builders for the Claude Code stream-json lines the bridge writes to the
//! panel, with the keys real `claude` sends for each line type (a consumer
//! such as the Agent SDKs requires them).
//!
//! Every line is typed, serialised from borrowed structs in the key order
//! real `claude` writes. A line that carries `session_id` / `uuid` takes
//! them as [`Stamps`] from the core, so only the core touches the id source
//! and these builders stay pure. The lines a stream or a burst of tool
//! calls writes many of (text deltas, `tool_use`, `tool_result`) write
//! their constant keys as bytes; tests hold every typed line to the bytes
//! of its JSON-map form (`value_form`).

use serde::Serialize;
use serde_json::Value;

pub mod control;
mod queries;
mod system;
pub use control::{
    CanUseTool, ControlResponse, Done, RequestId, ToolAsk, can_use_tool, control_error,
    control_success,
};
pub use queries::{ContextUsage, McpStatus, UsageReport};
pub use system::{
    CompactMetadata, InitInfo, ServerStatus, SessionStateChanged, SystemEvent, SystemInit,
    SystemLine, system_init,
};

/// Token counts in Claude's `usage` shape (serialised in its key order).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub output_tokens: u64,
}

impl Usage {
    /// Adds the token counts of a turn an agent reported: thought tokens
    /// count as output.
    pub fn add(&mut self, t: &crate::acp::usage::Tokens) {
        self.input_tokens += t.input;
        self.output_tokens += t.output + t.thought;
        self.cache_read_input_tokens += t.cached_read;
        self.cache_creation_input_tokens += t.cached_write;
    }
}

/// The stamps the core puts on a line that carries them: the session it
/// belongs to and the line's own id.
#[derive(Debug, Clone, Copy)]
pub struct Stamps<'a> {
    pub session_id: &'a str,
    pub uuid: &'a str,
}

/// A `content_block_delta` event, serialised straight from borrowed text: one
/// goes out per streamed chunk, and building `Value` maps for it cost most of
/// a long text stream's time. Same bytes as the `json!` form (key order kept).
#[derive(Debug, Serialize)]
pub struct BlockDelta<'a> {
    #[serde(rename = "type")]
    pub kind: BlockDeltaType,
    pub index: usize,
    pub delta: Delta<'a>,
}

/// The constant `type` of a [`BlockDelta`].
#[derive(Debug, Serialize)]
pub enum BlockDeltaType {
    #[serde(rename = "content_block_delta")]
    ContentBlockDelta,
}

/// The `delta` of a [`BlockDelta`].
#[derive(Debug, Serialize)]
#[serde(tag = "type")]
pub enum Delta<'a> {
    #[serde(rename = "text_delta")]
    Text { text: &'a str },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: &'a str },
}

/// A whole `stream_event` line with its stamps, for typed events: the keys in
/// the order `stream_event` Value form plus the core's stamping gives them.
#[derive(Debug, Serialize)]
pub struct StampedStreamEvent<'a, E> {
    #[serde(rename = "type")]
    pub kind: StreamEventType,
    pub event: &'a E,
    pub session_id: &'a str,
    /// Always `null` (no subagents).
    pub parent_tool_use_id: (),
    pub uuid: &'a str,
}

impl<E: Serialize> StampedStreamEvent<'_, E> {
    /// Appends the line's text: the bytes its `Serialize` writes, the
    /// constant keys copied as they are rather than escaped one by one.
    pub fn write_to(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        let StreamEventType::StreamEvent = self.kind;
        out.extend_from_slice(br#"{"type":"stream_event","event":"#);
        serde_json::to_writer(&mut *out, self.event)?;
        out.extend_from_slice(br#","session_id":"#);
        serde_json::to_writer(&mut *out, self.session_id)?;
        out.extend_from_slice(br#","parent_tool_use_id":null,"uuid":"#);
        serde_json::to_writer(&mut *out, self.uuid)?;
        out.push(b'}');
        Ok(())
    }
}

/// The constant `type` of a [`StampedStreamEvent`].
#[derive(Debug, Serialize)]
pub enum StreamEventType {
    #[serde(rename = "stream_event")]
    StreamEvent,
}

/// A whole `assistant` or `user` line with its stamps, for typed messages:
/// the keys in the order the `assistant` / `user` Value lines plus the core's
/// stamping give them.
#[derive(Debug, Serialize)]
pub struct StampedMessage<'a, M> {
    #[serde(rename = "type")]
    pub kind: MessageLineType,
    pub message: &'a M,
    /// Always `null` (no subagents).
    pub parent_tool_use_id: (),
    pub session_id: &'a str,
    pub uuid: &'a str,
}

/// A message of a stamped `assistant` / `user` line that writes its own
/// text: the bytes its `Serialize` writes, the constant keys copied as they
/// are rather than escaped one by one (a panel line per tool call pays
/// for each).
pub trait LineMessage: Serialize {
    fn write_to(&self, out: &mut Vec<u8>) -> serde_json::Result<()>;
}

impl<I: Serialize> LineMessage for ToolUseMessage<'_, I> {
    fn write_to(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        let (MessageType::Message, AssistantRole::Assistant) = (&self.kind, &self.role);
        let [tool_use] = &self.content;
        let ToolUseType::ToolUse = tool_use.kind;
        out.extend_from_slice(br#"{"id":"#);
        serde_json::to_writer(&mut *out, self.id)?;
        out.extend_from_slice(br#","type":"message","role":"assistant","model":"#);
        serde_json::to_writer(&mut *out, self.model)?;
        out.extend_from_slice(br#","content":[{"type":"tool_use","id":"#);
        serde_json::to_writer(&mut *out, tool_use.id)?;
        out.extend_from_slice(br#","name":"#);
        serde_json::to_writer(&mut *out, tool_use.name)?;
        out.extend_from_slice(br#","input":"#);
        serde_json::to_writer(&mut *out, tool_use.input)?;
        out.extend_from_slice(br#"}],"stop_reason":"#);
        serde_json::to_writer(&mut *out, &self.stop_reason)?;
        out.extend_from_slice(br#","stop_sequence":null,"usage":"#);
        self.usage.write_to(out)?;
        out.push(b'}');
        Ok(())
    }
}

/// The `content` of a [`ToolResultMessage`], writing its own text: the
/// bytes its `Serialize` writes (a rendering may copy data it knows needs
/// no escaping as it is).
pub trait ResultContent: Serialize {
    fn write_to(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        serde_json::to_writer(out, self)
    }
}

impl ResultContent for String {}
impl ResultContent for &str {}

impl<C: ResultContent> LineMessage for ToolResultMessage<'_, C> {
    fn write_to(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        let UserRole::User = self.role;
        let [block] = &self.content;
        let ToolResultType::ToolResult = block.kind;
        out.extend_from_slice(br#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"#);
        serde_json::to_writer(&mut *out, block.tool_use_id)?;
        out.extend_from_slice(br#","content":"#);
        block.content.write_to(out)?;
        out.extend_from_slice(if block.is_error {
            br#","is_error":true}]}"#.as_slice()
        } else {
            br#","is_error":false}]}"#.as_slice()
        });
        Ok(())
    }
}

impl Usage {
    /// Appends the usage's text (see [`LineMessage`]).
    fn write_to(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        for (key, n) in [
            (br#"{"input_tokens":"#.as_slice(), self.input_tokens),
            (
                br#","cache_creation_input_tokens":"#.as_slice(),
                self.cache_creation_input_tokens,
            ),
            (
                br#","cache_read_input_tokens":"#.as_slice(),
                self.cache_read_input_tokens,
            ),
            (br#","output_tokens":"#.as_slice(), self.output_tokens),
        ] {
            out.extend_from_slice(key);
            serde_json::to_writer(&mut *out, &n)?;
        }
        out.push(b'}');
        Ok(())
    }
}

/// A folded `assistant` message: the fields of Claude's `message` object with its
/// streamed blocks as `content`, no stop reason. Written typed so that
/// where its one text block's JSON string lands in the line is known
/// ([`FoldedMessage::text_at`]): the turn's `result` repeats that text, and
/// copying it from the line spares holding the text (up to 16 MiB) a second
/// time.
#[derive(Debug, Serialize)]
pub struct FoldedMessage<'a> {
    pub id: &'a str,
    #[serde(rename = "type")]
    pub kind: MessageType,
    pub role: AssistantRole,
    pub model: &'a str,
    pub content: Vec<FoldedBlock<'a>>,
    pub stop_reason: (),
    pub stop_sequence: (),
    pub usage: Usage,
    /// Where the last write put the JSON string of the message's only text
    /// block; unset when it has none or several.
    #[serde(skip)]
    pub text_at: std::cell::Cell<Option<(usize, usize)>>,
}

/// A block of a [`FoldedMessage`]: `text`, or `thinking` with no signature.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum FoldedBlock<'a> {
    Text {
        text: &'a str,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
}

/// An event of a streamed message other than its text deltas
/// (`--include-partial-messages`), in the shapes real `claude` sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MessageEvent {
    /// The message opens, with no content yet.
    Start {
        id: String,
        model: String,
    },
    /// A block opens at `index`, empty.
    BlockStart {
        index: usize,
        block: EmptyBlock,
    },
    BlockStop {
        index: usize,
    },
    /// The message ends for `stop_reason`.
    Delta {
        stop_reason: String,
    },
    Stop,
}

/// The kind of block a [`MessageEvent::BlockStart`] opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmptyBlock {
    Text,
    Thinking,
}

impl Serialize for MessageEvent {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(tag = "type", rename_all = "snake_case")]
        enum Wire<'a> {
            MessageStart {
                message: FoldedMessage<'a>,
            },
            ContentBlockStart {
                index: usize,
                content_block: FoldedBlock<'a>,
            },
            ContentBlockStop {
                index: usize,
            },
            MessageDelta {
                delta: StopDelta<'a>,
                usage: OutputTokens,
            },
            MessageStop,
        }
        #[derive(Serialize)]
        struct StopDelta<'a> {
            stop_reason: &'a str,
            stop_sequence: (),
        }
        #[derive(Serialize)]
        struct OutputTokens {
            output_tokens: u64,
        }
        let wire = match self {
            MessageEvent::Start { id, model } => Wire::MessageStart {
                message: FoldedMessage {
                    content: Vec::new(),
                    ..FoldedMessage::one_text(id, model, "")
                },
            },
            MessageEvent::BlockStart { index, block } => Wire::ContentBlockStart {
                index: *index,
                content_block: match block {
                    EmptyBlock::Text => FoldedBlock::Text { text: "" },
                    EmptyBlock::Thinking => FoldedBlock::Thinking {
                        thinking: "",
                        signature: "",
                    },
                },
            },
            MessageEvent::BlockStop { index } => Wire::ContentBlockStop { index: *index },
            MessageEvent::Delta { stop_reason } => Wire::MessageDelta {
                delta: StopDelta {
                    stop_reason,
                    stop_sequence: (),
                },
                usage: OutputTokens { output_tokens: 0 },
            },
            MessageEvent::Stop => Wire::MessageStop,
        };
        wire.serialize(s)
    }
}

impl<'a> FoldedMessage<'a> {
    /// An assistant message of one text block.
    pub fn one_text(id: &'a str, model: &'a str, text: &'a str) -> FoldedMessage<'a> {
        FoldedMessage {
            id,
            kind: MessageType::Message,
            role: AssistantRole::Assistant,
            model,
            content: vec![FoldedBlock::Text { text }],
            stop_reason: (),
            stop_sequence: (),
            usage: Usage::default(),
            text_at: Default::default(),
        }
    }
}

impl LineMessage for FoldedMessage<'_> {
    fn write_to(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        let (MessageType::Message, AssistantRole::Assistant) = (&self.kind, &self.role);
        let texts = self
            .content
            .iter()
            .filter(|b| matches!(b, FoldedBlock::Text { .. }))
            .count();
        self.text_at.set(None);
        out.extend_from_slice(br#"{"id":"#);
        serde_json::to_writer(&mut *out, self.id)?;
        out.extend_from_slice(br#","type":"message","role":"assistant","model":"#);
        serde_json::to_writer(&mut *out, self.model)?;
        out.extend_from_slice(br#","content":["#);
        for (i, block) in self.content.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            match block {
                FoldedBlock::Text { text } => {
                    out.extend_from_slice(br#"{"type":"text","text":"#);
                    let start = out.len();
                    serde_json::to_writer(&mut *out, text)?;
                    if texts == 1 {
                        self.text_at.set(Some((start, out.len())));
                    }
                    out.push(b'}');
                }
                FoldedBlock::Thinking { .. } => serde_json::to_writer(&mut *out, block)?,
            }
        }
        out.extend_from_slice(br#"],"stop_reason":null,"stop_sequence":null,"usage":"#);
        self.usage.write_to(out)?;
        out.push(b'}');
        Ok(())
    }
}

impl<M: LineMessage> StampedMessage<'_, M> {
    /// Appends the line's text: the bytes its `Serialize` writes, the
    /// constant keys copied as they are rather than escaped one by one.
    pub fn write_to(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        out.extend_from_slice(match self.kind {
            MessageLineType::Assistant => br#"{"type":"assistant","message":"#.as_slice(),
            MessageLineType::User => br#"{"type":"user","message":"#.as_slice(),
        });
        self.message.write_to(out)?;
        out.extend_from_slice(br#","parent_tool_use_id":null,"session_id":"#);
        serde_json::to_writer(&mut *out, self.session_id)?;
        out.extend_from_slice(br#","uuid":"#);
        serde_json::to_writer(&mut *out, self.uuid)?;
        out.push(b'}');
        Ok(())
    }
}

/// The `type` of a [`StampedMessage`].
#[derive(Debug, Clone, Copy, Serialize)]
pub enum MessageLineType {
    #[serde(rename = "assistant")]
    Assistant,
    #[serde(rename = "user")]
    User,
}

/// An `assistant` message holding one `tool_use` block: the fields of
/// Claude's `message` object with `[{"type":"tool_use",...}]` as `content`.
#[derive(Debug, Serialize)]
pub struct ToolUseMessage<'a, I = Value> {
    pub id: &'a str,
    #[serde(rename = "type")]
    pub kind: MessageType,
    pub role: AssistantRole,
    pub model: &'a str,
    pub content: [ToolUse<'a, I>; 1],
    pub stop_reason: Option<&'a str>,
    pub stop_sequence: (),
    pub usage: Usage,
}

/// The constant `type` of a [`ToolUseMessage`].
#[derive(Debug, Serialize)]
pub enum MessageType {
    #[serde(rename = "message")]
    Message,
}

/// The constant `role` of a [`ToolUseMessage`].
#[derive(Debug, Serialize)]
pub enum AssistantRole {
    #[serde(rename = "assistant")]
    Assistant,
}

/// A `tool_use` content block; `input` is a `Value`, or a borrowed form
/// that serialises as one (such as [`crate::call::input::AgentToolInput`]).
#[derive(Debug, Serialize)]
pub struct ToolUse<'a, I = Value> {
    #[serde(rename = "type")]
    pub kind: ToolUseType,
    pub id: &'a str,
    pub name: &'a str,
    pub input: &'a I,
}

/// The constant `type` of a [`ToolUse`].
#[derive(Debug, Serialize)]
pub enum ToolUseType {
    #[serde(rename = "tool_use")]
    ToolUse,
}

impl<'a, I> ToolUseMessage<'a, I> {
    pub fn new(
        id: &'a str,
        model: &'a str,
        tool_use_id: &'a str,
        name: &'a str,
        input: &'a I,
    ) -> Self {
        ToolUseMessage {
            id,
            kind: MessageType::Message,
            role: AssistantRole::Assistant,
            model,
            content: [ToolUse {
                kind: ToolUseType::ToolUse,
                id: tool_use_id,
                name,
                input,
            }],
            stop_reason: None,
            stop_sequence: (),
            usage: Usage::default(),
        }
    }
}

/// The `message` of a `user` line with one `tool_result`; `content` is a
/// string or blocks (a `Value`, or a borrowed rendering such as
/// [`crate::call::result::ToolResultContent`]).
#[derive(Debug, Serialize)]
pub struct ToolResultMessage<'a, C> {
    pub role: UserRole,
    pub content: [ToolResultBlock<'a, C>; 1],
}

/// The constant `role` of a [`ToolResultMessage`].
#[derive(Debug, Serialize)]
pub enum UserRole {
    #[serde(rename = "user")]
    User,
}

/// A `tool_result` content block.
#[derive(Debug, Serialize)]
pub struct ToolResultBlock<'a, C> {
    #[serde(rename = "type")]
    pub kind: ToolResultType,
    pub tool_use_id: &'a str,
    pub content: &'a C,
    pub is_error: bool,
}

/// The constant `type` of a [`ToolResultBlock`].
#[derive(Debug, Serialize)]
pub enum ToolResultType {
    #[serde(rename = "tool_result")]
    ToolResult,
}

impl<'a, C> ToolResultMessage<'a, C> {
    pub fn new(tool_use_id: &'a str, content: &'a C, is_error: bool) -> Self {
        ToolResultMessage {
            role: UserRole::User,
            content: [ToolResultBlock {
                kind: ToolResultType::ToolResult,
                tool_use_id,
                content,
                is_error,
            }],
        }
    }
}

/// A tool call the panel or the script gate refused, as the `result` line
/// lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PermissionDenial {
    pub tool_name: String,
    pub tool_use_id: String,
    /// The call's input, as its `tool_use` carried it.
    pub tool_input: Value,
}

/// Everything a `result` line reports about one turn.
pub struct TurnResult {
    pub is_error: bool,
    pub subtype: &'static str,
    pub duration_ms: u64,
    pub num_turns: u32,
    pub result: String,
    pub stop_reason: Option<String>,
    pub total_cost_usd: f64,
    pub usage: Usage,
    pub permission_denials: Vec<PermissionDenial>,
    /// The texts of what made the turn fail. Sent as `errors` on every
    /// non-`success` subtype, as real Claude Code does: the TypeScript Agent
    /// SDK maps over it and throws a TypeError when it is missing.
    pub errors: Vec<String>,
    /// Claude Code's `startup_failure_reason` on the zeroed result a refused
    /// start writes (`initialize_not_first`, `resume_target_not_found`):
    /// the Agent SDKs branch on it instead of the text.
    pub startup_failure_reason: Option<&'static str>,
}

/// The `result` line's `result` text.
#[derive(Debug, Clone, Copy)]
pub enum ResultText<'a> {
    Text(&'a str),
    /// The text as its JSON string, quotes and escapes included: copied
    /// from the line that already holds it (a turn's last text can be
    /// megabytes), not escaped again.
    Json(&'a str),
}

/// The `result` line: one per turn, stamped.
pub struct ResultLine<'a> {
    pub turn: &'a TurnResult,
    pub result: ResultText<'a>,
    pub stamps: Stamps<'a>,
}

impl ResultLine<'_> {
    /// Appends the line's text, in the keys and order real `claude` writes:
    /// `errors` on every subtype but `success`, Claude's
    /// `startup_failure_reason` when the start failed for one.
    pub fn write_to(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        let r = self.turn;
        out.extend_from_slice(br#"{"type":"result","subtype":"#);
        serde_json::to_writer(&mut *out, r.subtype)?;
        out.extend_from_slice(br#","is_error":"#);
        serde_json::to_writer(&mut *out, &r.is_error)?;
        for (key, n) in [
            (br#","duration_ms":"#.as_slice(), r.duration_ms),
            (br#","duration_api_ms":"#.as_slice(), r.duration_ms),
            (br#","num_turns":"#.as_slice(), u64::from(r.num_turns)),
        ] {
            out.extend_from_slice(key);
            serde_json::to_writer(&mut *out, &n)?;
        }
        out.extend_from_slice(br#","result":"#);
        match self.result {
            ResultText::Text(text) => serde_json::to_writer(&mut *out, text)?,
            ResultText::Json(json) => out.extend_from_slice(json.as_bytes()),
        }
        out.extend_from_slice(br#","stop_reason":"#);
        serde_json::to_writer(&mut *out, &r.stop_reason)?;
        out.extend_from_slice(br#","session_id":"#);
        serde_json::to_writer(&mut *out, self.stamps.session_id)?;
        out.extend_from_slice(br#","total_cost_usd":"#);
        serde_json::to_writer(&mut *out, &r.total_cost_usd)?;
        out.extend_from_slice(br#","usage":"#);
        r.usage.write_to(out)?;
        out.extend_from_slice(br#","permission_denials":"#);
        serde_json::to_writer(&mut *out, &r.permission_denials)?;
        if r.subtype != "success" {
            out.extend_from_slice(br#","errors":"#);
            serde_json::to_writer(&mut *out, &r.errors)?;
        }
        if let Some(reason) = r.startup_failure_reason {
            out.extend_from_slice(br#","startup_failure_reason":"#);
            serde_json::to_writer(&mut *out, reason)?;
        }
        out.extend_from_slice(br#","uuid":"#);
        serde_json::to_writer(&mut *out, self.stamps.uuid)?;
        out.push(b'}');
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod value_form;

#[cfg(test)]
mod tests;
