//! One turn as the panel sees it: from the first `session/prompt` until the
//! last queued one returns, with the streaming message being folded.
//!
//! **Exactly one `result` per turn**: steering prompts queue here and are sent
//! one after another; the turn ends only when the queue is empty.

use std::collections::VecDeque;
use std::time::Duration;

use crate::acp::chunk_frame::ChunkKind;
use crate::stream_json::{self, EmptyBlock, MessageEvent, Usage};

/// How much of a streamed message's text (all its blocks) the bridge keeps
/// for the folded `assistant` line: every chunk still streams as a delta,
/// but an endless message must not grow the bridge without bound.
pub const MAX_FOLDED_TEXT: usize = 16 << 20;

/// Ends the last block of a folded message cut at [`MAX_FOLDED_TEXT`].
pub const FOLDED_TEXT_CUT: &str =
    "\n[message truncated by the bridge: it streamed more than 16 MiB]";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlockKind {
    Text,
    Thinking,
}

impl From<ChunkKind> for BlockKind {
    fn from(kind: ChunkKind) -> Self {
        match kind {
            ChunkKind::Message => BlockKind::Text,
            ChunkKind::Thought => BlockKind::Thinking,
        }
    }
}

/// The assistant message being streamed: chunks become `stream_event` lines
/// now and one folded `assistant` line later.
#[derive(Debug, Default)]
pub(crate) struct StreamingMessage {
    open: Option<OpenMessage>,
}

#[derive(Debug)]
struct OpenMessage {
    id: String,
    /// The agent's `messageId` of the chunks so far (ACP: a change starts a
    /// new message).
    acp_id: Option<String>,
    blocks: Vec<(BlockKind, String)>,
    block_open: bool,
    /// Text was left out of `blocks` past [`MAX_FOLDED_TEXT`].
    cut: bool,
}

impl StreamingMessage {
    /// Whether a chunk with this `messageId` belongs to another message than
    /// the open one (then the open one is folded first).
    pub fn is_other_message(&self, acp_id: Option<&str>) -> bool {
        self.open
            .as_ref()
            .is_some_and(|m| m.acp_id.as_deref() != acp_id)
    }

    /// The lines that must precede one text or thought chunk's delta (message
    /// and block starts and stops), and the index of the block the chunk's
    /// text was added to: the caller writes the `content_block_delta` itself,
    /// typed (see [`stream_json::BlockDelta`]), as the hot path of a stream.
    /// `new_id` names the message if this chunk starts one.
    pub fn chunk(
        &mut self,
        kind: BlockKind,
        text: &str,
        acp_id: Option<&str>,
        model: &str,
        new_id: impl FnOnce() -> String,
    ) -> (Vec<MessageEvent>, usize) {
        let mut lines = Vec::new();
        let msg = match &mut self.open {
            Some(m) => m,
            None => {
                let id = new_id();
                lines.push(MessageEvent::Start {
                    id: id.clone(),
                    model: model.to_string(),
                });
                self.open.insert(OpenMessage {
                    id,
                    acp_id: acp_id.map(str::to_string),
                    blocks: Vec::new(),
                    block_open: false,
                    cut: false,
                })
            }
        };
        let same_block = msg.block_open && msg.blocks.last().map(|b| b.0) == Some(kind);
        if !same_block {
            if msg.block_open {
                lines.push(MessageEvent::BlockStop {
                    index: msg.blocks.len() - 1,
                });
            }
            msg.blocks.push((kind, String::new()));
            msg.block_open = true;
            let block = match kind {
                BlockKind::Text => EmptyBlock::Text,
                BlockKind::Thinking => EmptyBlock::Thinking,
            };
            lines.push(MessageEvent::BlockStart {
                index: msg.blocks.len() - 1,
                block,
            });
        }
        let index = msg.blocks.len() - 1;
        let kept: usize = msg.blocks.iter().map(|(_, body)| body.len()).sum();
        let end = text.floor_char_boundary(MAX_FOLDED_TEXT - kept);
        msg.blocks[index].1.push_str(&text[..end]);
        msg.cut |= end < text.len();
        (lines, index)
    }

    /// Closes the streamed message: the closing events, and the message
    /// whose `assistant` line the caller writes (typed, see
    /// [`stream_json::FoldedMessage`]).
    pub fn fold(&mut self, stop_reason: &str) -> (Vec<MessageEvent>, Option<Folded>) {
        let Some(msg) = self.open.take() else {
            return (Vec::new(), None);
        };
        let mut lines = Vec::new();
        if msg.block_open {
            lines.push(MessageEvent::BlockStop {
                index: msg.blocks.len() - 1,
            });
        }
        lines.push(MessageEvent::Delta {
            stop_reason: stop_reason.to_string(),
        });
        lines.push(MessageEvent::Stop);
        let mut blocks = msg.blocks;
        if msg.cut
            && let Some((_, last)) = blocks.last_mut()
        {
            last.push_str(FOLDED_TEXT_CUT);
        }
        (lines, Some(Folded { id: msg.id, blocks }))
    }
}

/// A folded message: its id and its blocks' text.
#[derive(Debug)]
pub(crate) struct Folded {
    pub id: String,
    pub blocks: Vec<(BlockKind, String)>,
}

impl Folded {
    /// The message for its `assistant` line.
    pub fn message<'a>(&'a self, model: &'a str) -> stream_json::FoldedMessage<'a> {
        stream_json::FoldedMessage {
            id: &self.id,
            kind: stream_json::MessageType::Message,
            role: stream_json::AssistantRole::Assistant,
            model,
            content: self
                .blocks
                .iter()
                .map(|(kind, body)| match kind {
                    BlockKind::Text => stream_json::FoldedBlock::Text { text: body },
                    BlockKind::Thinking => stream_json::FoldedBlock::Thinking {
                        thinking: body,
                        signature: "",
                    },
                })
                .collect(),
            stop_reason: (),
            stop_sequence: (),
            usage: Usage::default(),
            text_at: Default::default(),
        }
    }

    /// Its text blocks' text, joined; `None` when empty.
    pub fn text(self) -> Option<String> {
        let mut texts = self
            .blocks
            .into_iter()
            .filter(|(kind, _)| *kind == BlockKind::Text)
            .map(|(_, body)| body);
        let mut text = texts.next().unwrap_or_default();
        texts.for_each(|t| text.push_str(&t));
        Some(text).filter(|t| !t.is_empty())
    }
}

/// The text of a turn's last folded message, which its `result` repeats.
#[derive(Debug)]
pub enum LastText {
    Text(String),
    /// Held once, not twice, while its line is in the core (a message
    /// folded from a million chunks is 16 MiB).
    InLine(TextInLine),
}

/// A folded message's text as the JSON string at `range` of the panel line
/// at index `line` of the core's output not yet handed out (its `assistant`
/// line), and the allocation the text had, emptied: the `result` line is
/// written into it, so a freed 16 MiB does not stay resident (allocators
/// keep freed memory a while) beside both lines.
#[derive(Debug)]
pub struct TextInLine {
    pub line: usize,
    pub range: std::ops::Range<usize>,
    pub room: Vec<u8>,
}

/// The `errors` entry of an interrupted turn: the TS Agent SDK throws on a
/// non-success result without one.
const INTERRUPTED_TEXT: &str = "the turn was interrupted (stop reason: cancelled)";

/// The `errors` text of a turn the agent ended with `max_turn_requests`.
const MAX_TURNS_TEXT: &str =
    "the agent ended the turn: it reached its limit of model requests (max_turn_requests)";

/// The state of the running turn.
#[derive(Debug)]
pub(crate) struct Turn {
    pub started: Duration,
    /// `session/prompt` calls sent in this turn.
    pub prompts_sent: u32,
    /// Steering prompts (prompt blocks) waiting for the running prompt to return.
    pub queue: VecDeque<Vec<crate::acp::client::ContentBlock>>,
    pub message: StreamingMessage,
    pub stop_reason: Option<String>,
    /// The first error seen; the turn's result is then `is_error`.
    pub error: Option<String>,
    /// Every distinct error seen, first first (the result's `errors`).
    pub errors: Vec<String>,
    /// The agent answered a prompt with a JSON-RPC error: Claude Code reports
    /// its API errors as `success` + `is_error` with the text as `result`.
    pub prompt_error: Option<String>,
    /// The bridge sent `session/cancel` for the running prompt (the panel
    /// interrupted); cleared when that prompt returns.
    pub cancel_sent: bool,
    /// A prompt the panel interrupted ended `cancelled`: Claude Code ends an
    /// interrupted turn `error_during_execution`. An agent that ends
    /// `cancelled` on its own (Grok after a denied permission) is not
    /// interrupted: Claude ends that turn `success`.
    pub interrupted: bool,
    pub refused: bool,
    pub max_turns: bool,
    pub usage: Usage,
    pub saw_prompt_usage: bool,
    /// Usage an agent reported in a chunk's `_meta` (used when no prompt usage came).
    pub meta_usage: Option<Usage>,
    /// Context tokens from the latest `usage_update` (used when no prompt usage came).
    pub context_used: Option<u64>,
    pub cost_usd: Option<f64>,
    pub last_text: LastText,
    pub permission_denials: Vec<stream_json::PermissionDenial>,
    /// The session never started: the result is Claude Code's zeroed
    /// startup result (no turns), with its reason when one of Claude's
    /// fits (`Some(None)`: a start that failed for a cause Claude has no
    /// name for).
    pub startup_failure: Option<Option<&'static str>>,
}

impl Turn {
    pub fn new(started: Duration) -> Turn {
        Turn {
            started,
            prompts_sent: 0,
            queue: VecDeque::new(),
            message: StreamingMessage::default(),
            stop_reason: None,
            error: None,
            errors: Vec::new(),
            prompt_error: None,
            cancel_sent: false,
            interrupted: false,
            refused: false,
            max_turns: false,
            usage: Usage::default(),
            saw_prompt_usage: false,
            meta_usage: None,
            context_used: None,
            cost_usd: None,
            last_text: LastText::Text(String::new()),
            permission_denials: Vec::new(),
            startup_failure: None,
        }
    }

    /// A start that failed: [`Turn::fail`] with `why`, its result a startup
    /// result, with Claude's `reason` when one fits.
    pub fn fail_start(&mut self, why: impl Into<String>, reason: Option<&'static str>) {
        self.fail(why);
        self.startup_failure = Some(reason);
    }

    pub fn fail(&mut self, why: impl Into<String>) {
        let why = why.into();
        if self.error.is_none() {
            self.error = Some(why.clone());
        }
        if !self.errors.contains(&why) {
            self.errors.push(why);
        }
    }

    /// Records the agent's JSON-RPC error answer to a prompt. It is kept in
    /// `errors` too, so a turn that also failed otherwise lists it.
    pub fn fail_prompt(&mut self, why: impl Into<String>) {
        let why = why.into();
        if self.prompt_error.is_none() {
            self.prompt_error = Some(why.clone());
        }
        if !self.errors.contains(&why) {
            self.errors.push(why);
        }
    }

    /// The `result` line for this turn, ended at `now` (its texts move in),
    /// and where its `result` text is when it is the JSON string of a line
    /// still in the core's output (the line then holds `""` in its place).
    pub fn result(self, now: Duration) -> (stream_json::TurnResult, Option<TextInLine>) {
        let is_error = self.error.is_some()
            || self.prompt_error.is_some()
            || self.interrupted
            || self.refused
            || self.max_turns;
        let subtype = if self.max_turns {
            "error_max_turns"
        } else if self.error.is_some() || self.interrupted {
            "error_during_execution"
        } else {
            "success"
        };
        let mut usage = self.usage;
        if !self.saw_prompt_usage {
            match self.meta_usage {
                Some(meta) => usage = meta,
                None => usage.input_tokens = self.context_used.unwrap_or(0),
            }
        }
        let (result, in_line) = match (
            self.error.as_ref().or(self.prompt_error.as_ref()),
            self.last_text,
        ) {
            (Some(e), _) => (e.clone(), None),
            (None, LastText::Text(text)) => (text, None),
            (None, LastText::InLine(at)) => (String::new(), Some(at)),
        };
        let mut errors = self.errors;
        if errors.is_empty() && self.max_turns {
            errors.push(MAX_TURNS_TEXT.to_string());
        }
        if self.interrupted && subtype == "error_during_execution" && errors.is_empty() {
            errors.push(INTERRUPTED_TEXT.to_string());
        }
        let result = stream_json::TurnResult {
            is_error,
            subtype,
            duration_ms: now.saturating_sub(self.started).as_millis() as u64,
            // a start that failed ran no turn (Claude Code's zeroed result)
            num_turns: if self.startup_failure.is_some() {
                0
            } else {
                self.prompts_sent.max(1)
            },
            result,
            // **always a string**: a turn the agent never ended with a stop
            // reason (a failed prompt, a cancel never answered) says how it ended
            stop_reason: Some(self.stop_reason.unwrap_or_else(|| {
                if self.cancel_sent {
                    "cancelled"
                } else {
                    "end_turn"
                }
                .to_string()
            })),
            total_cost_usd: self.cost_usd.unwrap_or(0.0),
            usage,
            permission_denials: self.permission_denials,
            errors,
            startup_failure_reason: self.startup_failure.flatten(),
        };
        (result, in_line)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// The text of the folded `assistant` line of `chunks` streamed as one message.
    fn folded(chunks: &[(BlockKind, &str)]) -> Vec<Value> {
        let mut m = StreamingMessage::default();
        for (kind, text) in chunks {
            m.chunk(*kind, text, None, "m", || "msg_1".to_string());
        }
        let (_, folded) = m.fold("end_turn");
        let folded = folded.unwrap();
        serde_json::to_value(folded.message("m")).unwrap()["content"]
            .as_array()
            .unwrap()
            .clone()
    }

    #[test]
    fn a_folded_message_keeps_at_most_its_cap_of_text_and_says_it_was_cut() {
        let small = folded(&[
            (BlockKind::Thinking, "t"),
            (BlockKind::Text, "a"),
            (BlockKind::Text, "b"),
        ]);
        assert_eq!(small[1]["text"], "ab");
        // 1 MiB chunks of two-byte characters, one byte off the cap's boundary
        let chunk = format!("x{}", "é".repeat((1 << 19) - 1));
        let mut chunks = vec![(BlockKind::Thinking, "think")];
        chunks.extend(std::iter::repeat_n((BlockKind::Text, chunk.as_str()), 17));
        let big = folded(&chunks);
        let text = big[1]["text"].as_str().unwrap();
        assert!(text.ends_with(FOLDED_TEXT_CUT));
        let kept = text.len() - FOLDED_TEXT_CUT.len();
        assert!(kept <= MAX_FOLDED_TEXT - "think".len(), "{kept}");
        assert!(kept >= MAX_FOLDED_TEXT - "think".len() - 1, "{kept}");
        assert_eq!(big[0]["thinking"], "think");
    }

    #[test]
    fn a_folded_line_is_the_value_lines_bytes_and_says_where_its_one_text_is() {
        let cases: &[&[(BlockKind, &str)]] = &[
            &[(BlockKind::Text, "say \"hi\"\n\u{1}é")],
            &[(BlockKind::Thinking, "t\"t"), (BlockKind::Text, "x")],
            &[
                (BlockKind::Text, "a"),
                (BlockKind::Thinking, "t"),
                (BlockKind::Text, "b"),
            ],
            &[(BlockKind::Thinking, "only")],
        ];
        for blocks in cases {
            let folded = Folded {
                id: "msg_\"1".into(),
                blocks: blocks.iter().map(|(k, t)| (*k, t.to_string())).collect(),
            };
            let message = folded.message("m\\1");
            let mut written = Vec::new();
            stream_json::StampedMessage {
                kind: stream_json::MessageLineType::Assistant,
                message: &message,
                parent_tool_use_id: (),
                session_id: "s\"1",
                uuid: "u-1",
            }
            .write_to(&mut written)
            .unwrap();
            let written = String::from_utf8(written).unwrap();
            let content = blocks
                .iter()
                .map(|(kind, t)| match kind {
                    BlockKind::Text => stream_json::value_form::text_block(t.to_string()),
                    BlockKind::Thinking => {
                        json!({"type": "thinking", "thinking": t, "signature": ""})
                    }
                })
                .collect();
            let mut want = stream_json::value_form::assistant(
                stream_json::value_form::message_object("msg_\"1", "m\\1", content, None),
            );
            want["session_id"] = json!("s\"1");
            want["uuid"] = json!("u-1");
            assert_eq!(written, want.to_string());
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|(k, _)| *k == BlockKind::Text)
                .map(|(_, t)| *t)
                .collect();
            let at = message
                .text_at
                .get()
                .map(|(start, end)| &written[start..end]);
            match texts[..] {
                [one] => assert_eq!(at, Some(json!(one).to_string().as_str())),
                _ => assert_eq!(at, None, "{blocks:?}"),
            }
        }
    }
}
