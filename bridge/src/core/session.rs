//! The agent's session as the bridge keeps it: its id, whether it is new,
//! what the agent reports of it (modes, models, config options, commands,
//! usage), and the model and permission mode the panel is told.

use serde_json::Value;

use crate::acp::client;
use crate::acp::commands::AvailableCommand;
use crate::acp::permission_mode::PermissionMode;
use crate::acp::session_state::SessionState;
use crate::acp::usage::Usage;

#[derive(Debug)]
pub(super) struct Session {
    /// The agent's session id, once one is open.
    pub id: Option<String>,
    /// Not loaded: its first prompt carries the custom instructions.
    pub new: bool,
    /// The session's modes, models and config options, kept current.
    pub state: SessionState,
    /// The slash commands the agent offers.
    pub commands: Vec<AvailableCommand>,
    /// The agent's last `usage_update` (none before one), for
    /// `get_context_usage` and `get_usage`.
    pub usage: Usage,
    /// The model the panel is told (`None`: the agent named none).
    pub model: Option<String>,
    pub permission_mode: PermissionMode,
    /// The agent's mode ([`SessionState::mode_marks`]) when the panel's mode
    /// was last put in effect: once the agent has moved from it, the panel's
    /// mode is no proof of the agent's.
    pub mode_when_set: (Option<String>, Option<String>),
}

impl Session {
    /// No session yet; the panel is told `permission_mode` until one opens.
    pub(super) fn new(permission_mode: PermissionMode) -> Session {
        Session {
            id: None,
            new: true,
            state: SessionState::default(),
            commands: Vec::new(),
            usage: Usage::default(),
            model: None,
            permission_mode,
            mode_when_set: (None, None),
        }
    }

    /// The agent opened session `id` (`loaded`: an existing one) with the
    /// session call's answer `result`.
    pub(super) fn opened(&mut self, id: String, result: &Value, loaded: bool) {
        self.id = Some(id);
        self.state = SessionState::read(result);
        self.mode_when_set = self.state.mode_marks();
        self.new = !loaded;
        self.model = client::current_model(&self.state);
        if let Some(commands) = AvailableCommand::read_list(&result["availableCommands"]) {
            self.commands = commands;
        }
    }
}
