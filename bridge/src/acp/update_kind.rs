//! The kind of a `session/update` (its `sessionUpdate`), read once into an
//! enum so that the core matches on kinds exhaustively: a new kind is one
//! variant here and the compiler names every place that must say what it
//! does with it. A kind no schema knows is `Unknown`, kept as it was spelled,
//! never an error.

pub use crate::acp::chunk_frame::ChunkKind;

/// A `sessionUpdate` value, borrowed from the update it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateKind<'a> {
    /// `agent_message_chunk` or `agent_thought_chunk`.
    Chunk(ChunkKind),
    /// `tool_call` or `tool_call_update`.
    Call(CallKind),
    UserMessageChunk,
    /// `plan`, `plan_update` or `plan_removed`.
    Plan(PlanKind),
    AvailableCommands,
    CurrentMode,
    /// `config_option_update`, or `config_options_update` as some agents
    /// spell it; `spelling` keeps which.
    ConfigOptions {
        spelling: &'a str,
    },
    Usage,
    SessionInfo,
    Notice,
    Compaction,
    CompactionSummaryChunk,
    /// v2's `state_update`: the session's foreground state.
    State,
    /// v2's whole messages: `agent_message`, `agent_thought`, `user_message`.
    WholeMessage(MessageKind),
    /// v2's `tool_call_content_chunk`: content appended to a call.
    CallContentChunk,
    /// v2's `terminal_output_chunk`: bytes appended to an agent-owned
    /// terminal's output.
    TerminalOutputChunk,
    /// v2's `terminal_update`: an agent-owned terminal's state.
    TerminalUpdate,
    /// A kind no schema this bridge knows names (`""` when the update has
    /// no `sessionUpdate` string).
    Unknown(&'a str),
}

/// Whose whole message a v2 message update carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    Agent,
    Thought,
    User,
}

impl MessageKind {
    /// The v2 kind (`agent_message`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            MessageKind::Agent => "agent_message",
            MessageKind::Thought => "agent_thought",
            MessageKind::User => "user_message",
        }
    }

    /// The v1 kind its chunks have (`agent_message_chunk`, ...).
    pub fn chunk_kind(self) -> &'static str {
        match self {
            MessageKind::Agent => "agent_message_chunk",
            MessageKind::Thought => "agent_thought_chunk",
            MessageKind::User => "user_message_chunk",
        }
    }
}

/// How a `plan*` update changes the session's plans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanKind {
    /// `plan`: the whole plan, as v1 sends it.
    Whole,
    /// `plan_update`: one plan, by its `planId`.
    Update,
    /// `plan_removed`: one plan gone.
    Removed,
}

impl<'a> UpdateKind<'a> {
    pub fn parse(kind: &'a str) -> Self {
        match kind {
            "agent_message_chunk" => Self::Chunk(ChunkKind::Message),
            "agent_thought_chunk" => Self::Chunk(ChunkKind::Thought),
            "tool_call" => Self::Call(CallKind::ToolCall),
            "tool_call_update" => Self::Call(CallKind::ToolCallUpdate),
            "user_message_chunk" => Self::UserMessageChunk,
            "plan" => Self::Plan(PlanKind::Whole),
            "plan_update" => Self::Plan(PlanKind::Update),
            "plan_removed" => Self::Plan(PlanKind::Removed),
            "available_commands_update" => Self::AvailableCommands,
            "current_mode_update" => Self::CurrentMode,
            "config_option_update" | "config_options_update" => {
                Self::ConfigOptions { spelling: kind }
            }
            "usage_update" => Self::Usage,
            "session_info_update" => Self::SessionInfo,
            "notice" => Self::Notice,
            "compaction_update" => Self::Compaction,
            "compaction_summary_chunk" => Self::CompactionSummaryChunk,
            "state_update" => Self::State,
            "agent_message" => Self::WholeMessage(MessageKind::Agent),
            "agent_thought" => Self::WholeMessage(MessageKind::Thought),
            "user_message" => Self::WholeMessage(MessageKind::User),
            "tool_call_content_chunk" => Self::CallContentChunk,
            "terminal_output_chunk" => Self::TerminalOutputChunk,
            "terminal_update" => Self::TerminalUpdate,
            other => Self::Unknown(other),
        }
    }

    /// The kind as the agent spelled it.
    pub fn as_str(self) -> &'a str {
        match self {
            Self::Chunk(chunk) => chunk.as_str(),
            Self::Call(call) => call.as_str(),
            Self::UserMessageChunk => "user_message_chunk",
            Self::Plan(PlanKind::Whole) => "plan",
            Self::Plan(PlanKind::Update) => "plan_update",
            Self::Plan(PlanKind::Removed) => "plan_removed",
            Self::AvailableCommands => "available_commands_update",
            Self::CurrentMode => "current_mode_update",
            Self::ConfigOptions { spelling } => spelling,
            Self::Usage => "usage_update",
            Self::SessionInfo => "session_info_update",
            Self::Notice => "notice",
            Self::Compaction => "compaction_update",
            Self::CompactionSummaryChunk => "compaction_summary_chunk",
            Self::State => "state_update",
            Self::WholeMessage(message) => message.as_str(),
            Self::CallContentChunk => "tool_call_content_chunk",
            Self::TerminalOutputChunk => "terminal_output_chunk",
            Self::TerminalUpdate => "terminal_update",
            Self::Unknown(other) => other,
        }
    }

    /// Whether the update belongs to the prompt running (text, thoughts, tool
    /// calls, plans): after a given-up prompt, such updates are late.
    pub fn belongs_to_the_turn(self) -> bool {
        matches!(self, Self::Chunk(_) | Self::Call(_) | Self::Plan(_))
    }
}

impl From<ChunkKind> for UpdateKind<'_> {
    fn from(kind: ChunkKind) -> Self {
        Self::Chunk(kind)
    }
}

impl From<CallKind> for UpdateKind<'_> {
    fn from(kind: CallKind) -> Self {
        Self::Call(kind)
    }
}

/// The `sessionUpdate` of a tool call's frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
pub enum CallKind {
    #[serde(rename = "tool_call")]
    ToolCall,
    #[serde(rename = "tool_call_update")]
    ToolCallUpdate,
}

impl CallKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CallKind::ToolCall => "tool_call",
            CallKind::ToolCallUpdate => "tool_call_update",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every spelling reads back as itself, so a diagnostic names the kind
    /// exactly as the agent sent it.
    #[test]
    fn every_kind_reads_back_as_it_was_spelled() {
        for spelling in [
            "agent_message_chunk",
            "agent_thought_chunk",
            "tool_call",
            "tool_call_update",
            "user_message_chunk",
            "plan",
            "plan_update",
            "plan_removed",
            "available_commands_update",
            "current_mode_update",
            "config_option_update",
            "config_options_update",
            "usage_update",
            "session_info_update",
            "notice",
            "compaction_update",
            "compaction_summary_chunk",
            "state_update",
            "agent_message",
            "agent_thought",
            "user_message",
            "tool_call_content_chunk",
            "terminal_output_chunk",
            "terminal_update",
            "",
        ] {
            assert_eq!(UpdateKind::parse(spelling).as_str(), spelling);
        }
        assert_eq!(
            UpdateKind::parse("tool_call_updated"),
            UpdateKind::Unknown("tool_call_updated")
        );
        for message in [MessageKind::Agent, MessageKind::Thought, MessageKind::User] {
            assert_eq!(
                UpdateKind::parse(message.chunk_kind()).as_str(),
                message.chunk_kind()
            );
        }
    }
}
