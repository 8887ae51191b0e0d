//! What the host tells the core at launch: the panel's flags as the bridge
//! reads them, the panel's MCP server, and the agent-shape handling switches.

/// What the bridge needs to know that a panel would pass to `claude` as flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaunchSpec {
    pub resume_session_id: Option<String>,
    pub model: Option<String>,
    pub permission_mode: Option<String>,
    /// `--system-prompt`: instructions that replace the agent's default ones
    /// (ACP `systemPrompt` mode `override` where the agent offers it). The
    /// panel's `initialize` may carry its own (TypeScript Agent SDK): its
    /// `systemPrompt` replaces these and `append_system_prompt` both.
    pub system_prompt: Option<String>,
    /// `--append-system-prompt` (several joined by blank lines): instructions
    /// that follow the agent's own (ACP mode `append`).
    pub append_system_prompt: Option<String>,
    /// The MCP server the launch registers with the agent: the one
    /// [`crate::acp::mcp_servers::pick`] picks from `mcp_servers`.
    pub mcp: Option<McpEndpoint>,
    /// Every server the launch's `--mcp-config` named, kept so the servers
    /// of the panel's `initialize` can be merged with them. Empty in a spec
    /// built by hand: then `mcp` alone is the launch's set.
    pub mcp_servers: serde_json::Map<String, serde_json::Value>,
    /// `--await-initialize`: the panel's first line is its `initialize`
    /// request, which may carry MCP servers; any other first line is refused
    /// and no session starts.
    pub await_initialize: bool,
    pub cwd: String,
    /// `--add-dir`: workspace roots beside `cwd`, absolute, for ACP's
    /// `additionalDirectories` where the agent takes them.
    pub additional_directories: Vec<String>,
    pub auth_method: Option<String>,
    /// `--acp-mcp-unadvertised`: the panel's MCP server goes to the agent's
    /// session calls even though the agent advertises no HTTP MCP (some
    /// take servers they do not advertise).
    pub mcp_unadvertised: bool,
    /// `--acp-config <id>=<value>`: session config options set right after
    /// the session opens, in order (an agent whose permission preset is
    /// settable only over ACP starts where the panel wants it).
    pub config_options: Vec<(String, String)>,
    /// `--acp-protocol 1|2|auto`: the ACP revision offered in `initialize`
    /// (v1 by default while v2 is in Preview).
    pub acp_protocol: Offer,
    /// Claude Code's `session_state_changed` lines, as the panel's
    /// environment asks for them.
    pub session_state_lines: SessionStateLines,
    pub script_gate: bool,
    /// How long the agent may take to answer a `session/prompt` after the
    /// panel interrupted it before the turn ends without that answer
    /// (`None`: [`DEFAULT_CANCEL_GRACE`]).
    pub cancel_grace: Option<std::time::Duration>,
    /// Agent-shape handling that tests switch off to rebuild an older bridge
    /// (bisect proves it finds a real mapping break); always on in the binary.
    pub compat: Compat,
}

impl LaunchSpec {
    /// The launch's custom instructions as one text: the system prompt, then
    /// the appended text; `None` when neither says anything.
    pub fn custom_instructions(&self) -> Option<String> {
        join_instructions(
            self.system_prompt.as_deref(),
            self.append_system_prompt.as_deref(),
        )
    }
}

/// A system prompt and the text appended to it as one text (blank line
/// between), the way an agent without a client system prompt reads them.
pub fn join_instructions(system: Option<&str>, append: Option<&str>) -> Option<String> {
    let parts: Vec<&str> = [system, append]
        .into_iter()
        .flatten()
        .filter(|p| !p.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// Whom Claude Code's `system` `session_state_changed` lines (`running`,
/// `requires_action`, `idle`) are for: none (the default), the SDK alone
/// (`CLAUDE_CODE_SDK_READS_SESSION_STATE`: marked `sdk_host_only`, which the
/// SDK reads to know a run is over and keeps out of its caller's stream), or
/// the caller too (`CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SessionStateLines {
    #[default]
    Off,
    HostOnly,
    Emitted,
}

/// What a client offers: one revision, or `Auto` (v2 first, then v1 when
/// the agent refuses v2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Offer {
    #[default]
    V1,
    V2,
    Auto,
}

impl Offer {
    /// `1`, `2` or `auto`, as `--acp-protocol` spells them.
    pub fn parse(text: &str) -> Option<Offer> {
        match text.trim() {
            "1" => Some(Offer::V1),
            "2" => Some(Offer::V2),
            "auto" => Some(Offer::Auto),
            _ => None,
        }
    }
}

/// Switches for handling that was added for a newer agent frame shape. All
/// on by default; a test turns one off to get a bridge that lacks it, so a
/// bisect over agent versions finds the version that needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compat {
    /// Read the MCP result in codex-acp 1.x+'s wrapped `rawOutput`
    /// (`{"result":{"content":[...]},"error":...}`); off, it is stringified.
    pub mcp_raw_output_wrapper: bool,
    /// Choose the deny option by its `kind` (`reject_once`); off, only by the
    /// id the codex-acp 1.0 line used ([`client::LEGACY_REJECT_OPTION_IDS`]).
    pub reject_option_by_kind: bool,
}

impl Default for Compat {
    fn default() -> Compat {
        Compat {
            mcp_raw_output_wrapper: true,
            reject_option_by_kind: true,
        }
    }
}

/// An HTTP MCP server to register with the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpEndpoint {
    pub name: String,
    pub url: String,
    /// Full `Authorization` header value, e.g. `Bearer abc`.
    pub authorization: Option<String>,
}
