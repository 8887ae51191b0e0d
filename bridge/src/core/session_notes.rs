//! Session updates the panel sees as Claude Code shows the same thing:
//! a `notice` as an informational system line, a compaction as Claude's
//! compaction status and boundary, a plan as a `TodoWrite` call
//! (docs/bridge-behaviour.md, "Agent to panel").

use super::*;
use crate::acp::session_update::{Compaction, EntryStatus, Notice, PlanChange, PlanEntry};
use crate::stream_json::{CompactMetadata, SystemEvent};

/// The `tool_result` of a plan's `TodoWrite`: Claude Code's own answer to
/// that tool, so the panel reads the pair as it reads Claude's.
pub(crate) const TODO_WRITE_RESULT: &str = "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable";

/// The plan id a plan without one (the `plan` update) is kept under.
const WHOLE_PLAN: &str = "";

/// One plan the agent keeps: its entries as `TodoWrite` todos, or a
/// Markdown plan (shown as text when it arrives, no todos).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Plan {
    Items(Vec<Todo>),
    Markdown,
}

/// One `TodoWrite` todo, in Claude's key order.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(super) struct Todo {
    content: String,
    status: &'static str,
    #[serde(rename = "activeForm")]
    active_form: String,
}

/// `TodoWrite`'s input.
#[derive(serde::Serialize)]
struct TodoWriteInput<'a> {
    todos: &'a [Todo],
}

/// The agent's plans by plan id, in the order first seen, and the
/// `TodoWrite` calls made for them so far.
#[derive(Debug, Default)]
pub(super) struct Plans {
    plans: Vec<(String, Plan)>,
    calls: u64,
}

impl Plans {
    /// Replaces (or with `None` removes) plan `id`; whether it was an item plan.
    fn set(&mut self, id: &str, plan: Option<Plan>) -> bool {
        let at = self.plans.iter().position(|(k, _)| k == id);
        let was_items = at.is_some_and(|i| matches!(self.plans[i].1, Plan::Items(_)));
        match (at, plan) {
            (Some(i), Some(p)) => self.plans[i].1 = p,
            (Some(i), None) => {
                self.plans.remove(i);
            }
            (None, Some(p)) => self.plans.push((id.to_string(), p)),
            (None, None) => {}
        }
        was_items
    }

    /// Every item plan's entries, plan by plan.
    fn todos(&self) -> Vec<Todo> {
        let items = self.plans.iter().filter_map(|(_, p)| match p {
            Plan::Items(todos) => Some(todos.iter().cloned()),
            Plan::Markdown => None,
        });
        items.flatten().collect()
    }

    /// The id of the next plan's `TodoWrite` call.
    fn next_call_id(&mut self) -> String {
        self.calls += 1;
        format!("acp_plan_{}", self.calls)
    }
}

impl Bridge {
    /// Folds the streamed message and lets held calls go, so a note lands
    /// between messages, after every `tool_use` before it.
    fn before_note(&mut self) {
        if self.turn.is_some() {
            self.release_held_except("");
            self.fold_message("end_turn");
        }
    }

    /// Writes a `system` line, stamped.
    fn system_line(&mut self, event: SystemEvent) {
        self.emit_stamped(
            |stamps| {
                line_written(|text| {
                    serde_json::to_writer(text, &stream_json::SystemLine::new(&event, stamps))
                })
            },
            "system",
        );
    }

    /// `notice`: Claude's informational system line, its level from the
    /// severity (`info` would show only in a transcript view).
    pub(super) fn notice(&mut self, notice: Notice) {
        let Some(content) = notice.title.filter(|t| !t.is_empty()) else {
            return self.diag("notice without a title skipped");
        };
        let level = match notice.severity.as_deref() {
            Some("warning" | "error") => "warning",
            _ => "notice",
        };
        self.before_note();
        self.system_line(SystemEvent::Informational { content, level });
    }

    /// `compaction_update`: Claude's `status` line (`compacting`, then
    /// `null` with the result), and on success its `compact_boundary`.
    pub(super) fn compaction_update(&mut self, compaction: Compaction) {
        let ended = match compaction.status.as_str() {
            "in_progress" => None,
            "completed" => Some((Some("success"), None)),
            "failed" => {
                let error =
                    (compaction.error).unwrap_or_else(|| "the agent gave no details".to_string());
                Some((Some("failed"), Some(error)))
            }
            "cancelled" => Some((None, None)),
            other => {
                return self.diag(format!("compaction_update status {other:?} skipped"));
            }
        };
        self.before_note();
        let (status, (compact_result, compact_error)) = match ended {
            Some(ended) => (None, ended),
            None => (Some("compacting"), (None, None)),
        };
        self.system_line(SystemEvent::Status {
            status,
            compact_result,
            compact_error,
        });
        if compact_result == Some("success") {
            let pre_tokens = self.turn.as_ref().and_then(|t| t.context_used).unwrap_or(0);
            self.system_line(SystemEvent::CompactBoundary {
                compact_metadata: CompactMetadata {
                    trigger: "auto",
                    pre_tokens,
                },
            });
        }
    }

    /// `plan`, `plan_update`, `plan_removed`: the plans kept so far, changed,
    /// then shown as one `TodoWrite` of every item plan's entries (an empty
    /// list once the last is removed, as Claude clears its todos); a
    /// Markdown plan as a text message of its own.
    pub(super) fn plan_update(&mut self, change: PlanChange) {
        let (id, plan) = match change {
            PlanChange::Whole(entries) => {
                (WHOLE_PLAN.to_string(), Some(Plan::Items(todos(entries))))
            }
            PlanChange::Items { id, entries } => (id, Some(Plan::Items(todos(entries)))),
            PlanChange::Markdown { id, text } => {
                self.plans.set(&id, Some(Plan::Markdown));
                return self.markdown_plan(text);
            }
            PlanChange::OtherType(other) => {
                let other = other.as_deref().unwrap_or("(none)");
                return self.diag(format!("plan_update of type {other:?} skipped"));
            }
            PlanChange::Removed { id } => (id, None),
        };
        let was_items = self.plans.set(&id, plan.clone());
        if plan.is_none() && !was_items {
            return; // a Markdown plan or none: no todos change
        }
        let todos = self.plans.todos();
        self.todo_write(&todos);
    }

    /// A `TodoWrite` `tool_use` and its `tool_result`, inside a turn only.
    fn todo_write(&mut self, todos: &[Todo]) {
        if self.turn.is_none() {
            return self.diag("plan outside a turn skipped (kept for the next one)");
        }
        self.before_note();
        let call_id = self.plans.next_call_id();
        self.next_msg += 1;
        let msg_id = format!("msg_acp_{}", self.next_msg);
        let model = self.model_name();
        let input = TodoWriteInput { todos };
        let message =
            stream_json::ToolUseMessage::new(&msg_id, &model, &call_id, "TodoWrite", &input);
        self.emit_message(stream_json::MessageLineType::Assistant, &message);
        self.emit_message(
            stream_json::MessageLineType::User,
            &stream_json::ToolResultMessage::new(&call_id, &TODO_WRITE_RESULT, false),
        );
    }

    /// A Markdown plan: an assistant message of its own holding the text.
    fn markdown_plan(&mut self, text: String) {
        if self.turn.is_none() {
            return self.diag("plan outside a turn skipped");
        }
        if text.is_empty() {
            return;
        }
        self.before_note();
        self.next_msg += 1;
        let msg_id = format!("msg_acp_{}", self.next_msg);
        self.emit_assistant_text(&msg_id, &text);
    }
}

/// A plan's entries as `TodoWrite` todos (`content`, `status`,
/// `activeForm`): ACP's statuses are Claude's, and the entry's text stands
/// for its active form.
fn todos(entries: Vec<PlanEntry>) -> Vec<Todo> {
    let todo = |e: PlanEntry| Todo {
        status: match e.status {
            EntryStatus::Pending => "pending",
            EntryStatus::InProgress => "in_progress",
            EntryStatus::Completed => "completed",
        },
        active_form: e.content.clone(),
        content: e.content,
    };
    entries.into_iter().map(todo).collect()
}
