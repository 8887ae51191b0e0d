//! A `session/update`'s update read once into what the bridge reads of it,
//! by its kind ([`UpdateKind`]): the core matches on the variant and never
//! picks a key out of the update. Tolerant: a field of another type reads
//! as absent, and a kind the bridge reads nothing of (or no schema knows)
//! is [`SessionUpdate::Other`], kept as spelled.
//!
//! A tool call's frame stays JSON here: its fields are the call module's
//! to read ([`crate::call`]), which keeps every key the agent sent.

use serde_json::Value;

use crate::acp::chunk_frame::ChunkKind;
use crate::acp::commands::AvailableCommand;
use crate::acp::json_field::field;
use crate::acp::session_state::{ConfigOption, config_options};
use crate::acp::update_kind::{CallKind, PlanKind, UpdateKind};
use crate::acp::usage::{Tokens, Usage};

#[derive(Debug, Clone, PartialEq)]
pub enum SessionUpdate {
    /// `agent_message_chunk`, `agent_thought_chunk`.
    Chunk(Chunk),
    /// `tool_call`, `tool_call_update`: the update as sent.
    Call {
        kind: CallKind,
        update: Value,
    },
    /// `available_commands_update` (none when the list is no list).
    AvailableCommands(Vec<AvailableCommand>),
    Usage(Usage),
    /// `current_mode_update`'s `currentModeId`.
    CurrentMode(Option<String>),
    /// `config_option_update` (or `config_options_update`, as spelled):
    /// the options, when they are a list.
    ConfigOptions {
        spelling: &'static str,
        options: Option<Vec<ConfigOption>>,
    },
    Notice(Notice),
    Compaction(Compaction),
    Plan(PlanChange),
    /// Any other kind, as spelled (`""` for an update without one).
    Other(String),
}

/// A message chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub kind: ChunkKind,
    /// The text, when the content is a text block.
    pub text: Option<String>,
    pub message_id: Option<String>,
    /// The call it belongs to, where the agent says so.
    pub tool_call_id: Option<String>,
    /// Usage an empty chunk's `_meta` carries.
    pub tokens: Option<Tokens>,
}

/// A `notice`.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub title: Option<String>,
    /// `info`, `warning`, `error`, ...
    pub severity: Option<String>,
}

/// A `compaction_update`.
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    /// `in_progress`, `completed`, `failed`, `cancelled`, ... (`""` when
    /// it has none).
    pub status: String,
    /// Why it failed.
    pub error: Option<String>,
}

/// How a `plan*` update changes the session's plans.
#[derive(Debug, Clone, PartialEq)]
pub enum PlanChange {
    /// `plan`: the whole plan.
    Whole(Vec<PlanEntry>),
    /// `plan_update` of an item plan (`""`: the plan without an id).
    Items { id: String, entries: Vec<PlanEntry> },
    /// `plan_update` of a Markdown plan.
    Markdown { id: String, text: String },
    /// `plan_update` of a type no schema knows (`None`: no type).
    OtherType(Option<String>),
    /// `plan_removed`.
    Removed { id: String },
}

/// One plan entry with its text.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanEntry {
    pub content: String,
    pub status: EntryStatus,
}

/// A plan entry's status; a status no schema knows reads `Pending`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryStatus {
    Pending,
    InProgress,
    Completed,
}

impl SessionUpdate {
    /// Reads an update (the `update` of a `session/update`'s params).
    pub fn read(update: Value) -> SessionUpdate {
        let text = |v: &Value, key: &str| field(v, key).as_str().map(str::to_string);
        let u = &update;
        let kind = field(u, "sessionUpdate").as_str().unwrap_or("");
        match UpdateKind::parse(kind) {
            UpdateKind::Chunk(kind) => {
                let content = field(u, "content");
                SessionUpdate::Chunk(Chunk {
                    kind,
                    text: text(content, "text").filter(|_| field(content, "type") == "text"),
                    message_id: text(u, "messageId"),
                    tool_call_id: text(u, "toolCallId"),
                    tokens: Tokens::from_meta(field(u, "_meta")),
                })
            }
            UpdateKind::Call(kind) => SessionUpdate::Call { kind, update },
            UpdateKind::AvailableCommands => SessionUpdate::AvailableCommands(
                AvailableCommand::read_list(field(u, "availableCommands")).unwrap_or_default(),
            ),
            UpdateKind::Usage => SessionUpdate::Usage(Usage::read(u)),
            UpdateKind::CurrentMode => SessionUpdate::CurrentMode(text(u, "currentModeId")),
            UpdateKind::ConfigOptions { .. } => SessionUpdate::ConfigOptions {
                spelling: if kind == "config_options_update" {
                    "config_options_update"
                } else {
                    "config_option_update"
                },
                options: config_options(field(u, "configOptions")),
            },
            UpdateKind::Notice => SessionUpdate::Notice(Notice {
                title: text(u, "title"),
                severity: text(u, "severity"),
            }),
            UpdateKind::Compaction => SessionUpdate::Compaction(Compaction {
                status: text(u, "status").unwrap_or_default(),
                error: text(u, "error"),
            }),
            UpdateKind::Plan(plan) => SessionUpdate::Plan(PlanChange::read(plan, u)),
            _ => SessionUpdate::Other(kind.to_string()),
        }
    }

    /// The update's kind.
    pub fn kind(&self) -> UpdateKind<'_> {
        match self {
            SessionUpdate::Chunk(chunk) => UpdateKind::Chunk(chunk.kind),
            SessionUpdate::Call { kind, .. } => UpdateKind::Call(*kind),
            SessionUpdate::AvailableCommands(_) => UpdateKind::AvailableCommands,
            SessionUpdate::Usage(_) => UpdateKind::Usage,
            SessionUpdate::CurrentMode(_) => UpdateKind::CurrentMode,
            SessionUpdate::ConfigOptions { spelling, .. } => UpdateKind::ConfigOptions { spelling },
            SessionUpdate::Notice(_) => UpdateKind::Notice,
            SessionUpdate::Compaction(_) => UpdateKind::Compaction,
            SessionUpdate::Plan(change) => UpdateKind::Plan(change.kind()),
            SessionUpdate::Other(kind) => UpdateKind::parse(kind),
        }
    }
}

impl PlanChange {
    fn read(kind: PlanKind, u: &Value) -> PlanChange {
        let id = |v: &Value| field(v, "planId").as_str().unwrap_or("").to_string();
        match kind {
            PlanKind::Whole => PlanChange::Whole(PlanEntry::read_all(u)),
            PlanKind::Removed => PlanChange::Removed { id: id(u) },
            PlanKind::Update => {
                let plan = field(u, "plan");
                match field(plan, "type").as_str() {
                    Some("items") => PlanChange::Items {
                        id: id(plan),
                        entries: PlanEntry::read_all(plan),
                    },
                    Some("markdown") => PlanChange::Markdown {
                        id: id(plan),
                        text: field(plan, "content").as_str().unwrap_or("").to_string(),
                    },
                    other => PlanChange::OtherType(other.map(str::to_string)),
                }
            }
        }
    }

    pub fn kind(&self) -> PlanKind {
        match self {
            PlanChange::Whole(_) => PlanKind::Whole,
            PlanChange::Removed { .. } => PlanKind::Removed,
            PlanChange::Items { .. } | PlanChange::Markdown { .. } | PlanChange::OtherType(_) => {
                PlanKind::Update
            }
        }
    }
}

impl PlanEntry {
    /// A plan's `entries` that have a text.
    fn read_all(plan: &Value) -> Vec<PlanEntry> {
        let entries = field(plan, "entries").as_array().into_iter().flatten();
        entries
            .filter_map(|e| {
                Some(PlanEntry {
                    content: field(e, "content").as_str()?.to_string(),
                    status: match field(e, "status").as_str() {
                        Some("in_progress") => EntryStatus::InProgress,
                        Some("completed") => EntryStatus::Completed,
                        _ => EntryStatus::Pending,
                    },
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Every kind reads back as it was spelled, whatever the bridge reads
    /// of it.
    #[test]
    fn an_update_keeps_its_kind_as_spelled() {
        for kind in [
            "agent_message_chunk",
            "tool_call_update",
            "plan",
            "plan_update",
            "plan_removed",
            "config_options_update",
            "config_option_update",
            "session_info_update",
            "state_update",
            "brand_new_kind",
            "",
        ] {
            let update = SessionUpdate::read(json!({"sessionUpdate": kind}));
            assert_eq!(update.kind().as_str(), kind);
        }
        assert_eq!(SessionUpdate::read(json!([1])).kind().as_str(), "");
    }

    #[test]
    fn fields_of_another_type_read_as_absent() {
        let chunk = SessionUpdate::read(json!({
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "image", "text": "t"}, "messageId": 7
        }));
        let SessionUpdate::Chunk(chunk) = chunk else {
            panic!("a chunk")
        };
        assert_eq!((chunk.text, chunk.message_id), (None, None));
        let plan = SessionUpdate::read(json!({
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "p", "entries": [
                {"content": "a", "status": "done"}, {"status": "completed"}, {"content": "b", "status": "completed"}]}
        }));
        let entry = |content: &str, status| PlanEntry {
            content: content.into(),
            status,
        };
        assert_eq!(
            plan,
            SessionUpdate::Plan(PlanChange::Items {
                id: "p".into(),
                entries: vec![
                    entry("a", EntryStatus::Pending),
                    entry("b", EntryStatus::Completed)
                ],
            })
        );
        let options = SessionUpdate::read(
            json!({"sessionUpdate": "config_option_update", "configOptions": "no list"}),
        );
        assert!(matches!(
            options,
            SessionUpdate::ConfigOptions { options: None, .. }
        ));
    }
}
