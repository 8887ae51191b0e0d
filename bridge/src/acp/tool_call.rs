//! A tool call's ACP vocabulary: its `kind` and its `status`, read once
//! into enums so that a rule matches them exhaustively. A spelling no
//! schema knows is `Unknown`, kept as it was sent: an agent's new kind
//! names nothing Claude knows, and its new status is neither finished nor
//! running, which is what the string comparisons made of it.

/// A tool call's `kind`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolKind {
    Read,
    Edit,
    Delete,
    Move,
    Search,
    Execute,
    Think,
    Fetch,
    SwitchMode,
    /// `other`: the agent says the call is none of the kinds above.
    Other,
    /// A kind no schema this bridge knows names, as spelled.
    Unknown(String),
}

impl ToolKind {
    pub fn read(kind: &str) -> ToolKind {
        match kind {
            "read" => ToolKind::Read,
            "edit" => ToolKind::Edit,
            "delete" => ToolKind::Delete,
            "move" => ToolKind::Move,
            "search" => ToolKind::Search,
            "execute" => ToolKind::Execute,
            "think" => ToolKind::Think,
            "fetch" => ToolKind::Fetch,
            "switch_mode" => ToolKind::SwitchMode,
            "other" => ToolKind::Other,
            other => ToolKind::Unknown(other.to_string()),
        }
    }

    /// The kind as the agent spelled it.
    pub fn as_str(&self) -> &str {
        match self {
            ToolKind::Read => "read",
            ToolKind::Edit => "edit",
            ToolKind::Delete => "delete",
            ToolKind::Move => "move",
            ToolKind::Search => "search",
            ToolKind::Execute => "execute",
            ToolKind::Think => "think",
            ToolKind::Fetch => "fetch",
            ToolKind::SwitchMode => "switch_mode",
            ToolKind::Other => "other",
            ToolKind::Unknown(kind) => kind,
        }
    }

    /// The Claude name for the kind; `None` for `other`, `switch_mode` and
    /// a kind no schema knows (then the agent's title is the name).
    pub fn claude_name(&self) -> Option<&'static str> {
        Some(match self {
            ToolKind::Read => "Read",
            ToolKind::Edit => "Edit",
            ToolKind::Execute => "Bash",
            ToolKind::Fetch => "WebFetch",
            ToolKind::Search => "Search",
            ToolKind::Delete => "Delete",
            ToolKind::Move => "Move",
            ToolKind::Think => "Think",
            ToolKind::SwitchMode | ToolKind::Other | ToolKind::Unknown(_) => return None,
        })
    }

    /// Whether the kind names a tool that reads or changes one file.
    pub fn is_file_kind(&self) -> bool {
        matches!(self, ToolKind::Read | ToolKind::Edit | ToolKind::Delete)
    }
}

impl serde::Serialize for ToolKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A tool call's `status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallStatus {
    Pending,
    InProgress,
    Completed,
    Failed,
    /// A status no schema this bridge knows names, as spelled.
    Unknown(String),
}

impl CallStatus {
    pub fn read(status: &str) -> CallStatus {
        match status {
            "pending" => CallStatus::Pending,
            "in_progress" => CallStatus::InProgress,
            "completed" => CallStatus::Completed,
            "failed" => CallStatus::Failed,
            other => CallStatus::Unknown(other.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            CallStatus::Pending => "pending",
            CallStatus::InProgress => "in_progress",
            CallStatus::Completed => "completed",
            CallStatus::Failed => "failed",
            CallStatus::Unknown(status) => status,
        }
    }

    /// Whether the call ended, well or not: its result comes with it.
    pub fn is_finished(&self) -> bool {
        matches!(self, CallStatus::Completed | CallStatus::Failed)
    }
}

impl serde::Serialize for CallStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every spelling reads back as itself, so a diagnostic or a match by
    /// the request's kind sees what the agent sent.
    #[test]
    fn every_kind_and_status_reads_back_as_it_was_spelled() {
        for kind in [
            "read",
            "edit",
            "delete",
            "move",
            "search",
            "execute",
            "think",
            "fetch",
            "switch_mode",
            "other",
            "browse",
            "",
        ] {
            assert_eq!(ToolKind::read(kind).as_str(), kind);
        }
        assert_eq!(ToolKind::read("browse").claude_name(), None);
        assert_eq!(ToolKind::read("execute").claude_name(), Some("Bash"));
        for status in ["pending", "in_progress", "completed", "failed", "cancelled"] {
            assert_eq!(CallStatus::read(status).as_str(), status);
        }
        assert!(!CallStatus::read("cancelled").is_finished());
        assert!(CallStatus::read("failed").is_finished());
    }
}
