//! Scenarios: one TOML file per scripted conversation (`scenarios/<name>.toml`).
//!
//! A scenario says what the panel does (prompts, permission decisions by
//! intent, interrupts, steering, mode changes, resume), what the scripted
//! model answers to each model request of a turn, which unity-ops tools the
//! stub MCP server offers, and what must hold of the bridge's panel output
//! (expectations). The same file drives recording (`record`) and replay.
//! The format is documented, with an example of every step kind, in
//! `scenarios/README.md`.
//!
//! Loading is strict: unknown keys, misplaced keys and inconsistent scripts
//! are rejected with a [`ScenarioError`] naming the file, the line and the
//! field, because a scenario that silently means something else produces
//! recordings nobody can trust.

pub mod call_ledger;
mod error;
mod fixtures;
pub mod panel_driver;
mod raw;

use std::path::{Path, PathBuf};

pub use error::ScenarioError;
pub use fixtures::{FIXTURE_NAMES, fixture_image};

/// One scripted conversation, loaded and validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Equals the file stem.
    pub name: String,
    /// One sentence for people: what the scenario exercises.
    pub summary: String,
    /// The panel's custom instructions (`--system-prompt`), if any.
    pub system_prompt: Option<String>,
    /// The panel's appended instructions (`--append-system-prompt`), kept
    /// apart from `system_prompt` as the bridge keeps them (imported only).
    pub append_system_prompt: Option<String>,
    /// The bridge's launch flags beyond the instructions (imported only).
    pub launch: LaunchSettings,
    /// The unity-ops tools the stub MCP server offers (e.g. `uap_ping`).
    pub tools: Vec<String>,
    /// Run with the bridge's script gate on (`--script-gate`): the gate's
    /// steering text goes with the first prompt and the replayed bridge
    /// refuses writes of scripts under `Assets/`.
    pub script_gate: bool,
    /// Call unity-ops tools by their own (qualified) name even where the
    /// agent's profile routes them through a meta-tool (`mcp_call` role,
    /// Grok's `use_tool`): `mcp_calls = "direct"`.
    pub direct_mcp_calls: bool,
    /// Made by `acp-harness import` from a tapped panel session: its prompts
    /// have no scripted model replies, so it is replayed, never recorded
    /// (`record --all` and `update` pass it by; naming it is an error).
    pub imported: bool,
    /// Directories and files the recorder lays out in the workspace before
    /// the agent starts (`[[workspace]] dir = "..."` / `file = "..."`).
    pub workspace: Vec<crate::corpus::workspace_fixture::WorkspaceEntry>,
    /// The panel's steps, in order.
    pub steps: Vec<Step>,
    /// What must hold of the bridge's panel output, whatever the agent version.
    pub expect: Vec<Expectation>,
    /// Lowercase hex SHA-256 of the file bytes the recorder depends on
    /// (judge-only tables left out); goes into a recording's header.
    pub sha256: String,
    /// The hash recordings made before the `[[expect]]` tables were left
    /// out hold; such a recording is still made from this scenario.
    pub sha256_with_expectations: String,
    /// Where the scenario was loaded from.
    pub path: PathBuf,
}

impl Scenario {
    /// Whether a recording whose header holds `recorded` (its
    /// `scenario_sha256`) was made from another version of this file: one
    /// that differs beyond the judge-only tables. A header without a hash
    /// (hand-made recordings) is never stale.
    pub fn changed_since(&self, recorded: &str) -> bool {
        !recorded.is_empty() && recorded != self.sha256 && recorded != self.sha256_with_expectations
    }
}

/// Flags the tapped panel launched the bridge with, replayed as they were
/// (`[launch]` of an imported scenario; the recorder launches no bridge).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LaunchSettings {
    /// `--model`.
    pub model: Option<String>,
    /// `--permission-mode`.
    pub permission_mode: Option<String>,
    /// `--resume <session id>`: the session the bridge loads at start.
    pub resume_session: Option<String>,
    /// The MCP server the tapped panel gave the bridge, registered as it was.
    pub mcp_server: PanelMcpServer,
}

/// The MCP server a panel gives the bridge (`--mcp-config`): the replay
/// registers exactly this, so an imported session's `session/new` is the
/// tapped one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PanelMcpServer {
    /// A server by this name (`mcp_server = "name"`, default `unity-ops`),
    /// with a bearer token or without one (`mcp_authorization = false`).
    Given { name: String, authorization: bool },
    /// No server (`mcp_server = false`).
    NotGiven,
}

impl Default for PanelMcpServer {
    fn default() -> Self {
        PanelMcpServer::Given {
            name: PANEL_MCP_SERVER.to_string(),
            authorization: true,
        }
    }
}

/// The name the panel gives its own MCP server (the bridge's).
pub use acp_bridge::acp::mcp_servers::PANEL_SERVER as PANEL_MCP_SERVER;

/// One thing the panel does, in order. A prompt waits for the previous
/// turn's result; `at = ...` waits for that point of the running turn
/// (skipped with a note if the turn ends first); a permission step does not
/// wait but queues its decision for the next permission request of the
/// turn (see `scenarios/README.md`).
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Send a user message and run a turn.
    Prompt(Prompt),
    /// Queue the answer to the next permission request of the running turn.
    Permission {
        decision: Decision,
        /// Choose this option id instead of the one the intent selects.
        option_id: Option<String>,
        /// The input an allowing panel sends back edited (`updatedInput`);
        /// `None` sends the requested input (imported only).
        updated_input: Option<serde_json::Value>,
    },
    /// Interrupt the running turn when it reaches `at`.
    Interrupt { at: Point },
    /// Send another user message while the turn runs, once it reaches `at`
    /// (the client queues it until the running prompt returns).
    Steer { at: Point, prompt: Prompt },
    /// Change the permission mode (a Claude mode name such as `acceptEdits`;
    /// the bridge maps it to the agent's mode id).
    SetMode { mode: String },
    /// Change the model (`set_model` control request; imported only: the
    /// recorder's ACP client has no such step).
    SetModel { model: String },
    /// End the agent process, start a new one and load the same session.
    Resume,
}

/// A user message plus the scripted model's answers for the turn it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    /// What the panel sends in stub-model mode; also how the scripted model
    /// server recognises which turn a model request belongs to.
    pub text: String,
    /// The natural-language prompt for `--model live` (defaults to `text`).
    pub live: String,
    /// Images sent with the prompt, already resolved to bytes.
    pub images: Vec<PromptImage>,
    /// One reply per model request of this turn, in order.
    pub model: Vec<ModelReply>,
}

/// An image attached to a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptImage {
    /// e.g. `image/png`.
    pub media_type: String,
    /// Standard base64 of the image bytes.
    pub data_base64: String,
}

/// What the scripted model answers to one model request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelReply {
    /// Reasoning text (reasoning summary / thought parts, by flavour).
    pub thinking: Option<String>,
    /// Assistant text.
    pub text: Option<String>,
    /// Tool calls, each with a fixed call id so recordings are deterministic.
    pub tool_calls: Vec<ScriptedToolCall>,
    /// An API error instead of a reply (exclusive with the fields above).
    pub error: Option<ApiError>,
    /// Stream the reply's events this many milliseconds apart (default: all
    /// at once), so a point such as `chunks:N` is reached while the turn
    /// still runs. Changes only when bytes arrive, never which.
    pub pace_ms: Option<u32>,
}

/// One call by the scripted model: of a unity-ops tool, or of one of the
/// agent's own tools (shell, file write).
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedToolCall {
    /// The unity-ops tool name as the MCP server knows it (`uap_ping`); the
    /// model server renders it in the form the agent offered it. Empty for
    /// an `agent_tool` call.
    pub tool: String,
    /// A role of the agent's own tools (`shell`, `write_file`) for a call
    /// that is not a unity-ops call. Each agent profile maps the role to
    /// its tool name and argument shape (`[model.agent_tools]`), so the
    /// scenario stays agent-neutral.
    pub agent_tool: Option<String>,
    /// The arguments object.
    pub arguments: serde_json::Value,
    /// The call id (unique within the scenario).
    pub id: String,
}

/// An API error returned instead of a model reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status, 400..=599.
    pub status: u16,
    pub message: String,
}

/// A point in a running turn that an interrupt or a steer waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// The first tool call the agent reports in this turn.
    FirstToolCall,
    /// The first permission request of this turn.
    Permission,
    /// After this many assistant message chunks of this turn (>= 1).
    Chunks(u32),
}

impl std::fmt::Display for Point {
    /// As a scenario writes it (`at = "chunks:3"`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Point::FirstToolCall => f.write_str("first_tool_call"),
            Point::Permission => f.write_str("permission"),
            Point::Chunks(n) => write!(f, "chunks:{n}"),
        }
    }
}

/// A permission decision by intent; the client picks the option from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allow,
    AllowAlways,
    Deny,
    /// Deny and interrupt the turn.
    Cancel,
}

impl std::fmt::Display for Decision {
    /// As a scenario writes it (`decision = "allow_always"`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Decision::Allow => "allow",
            Decision::AllowAlways => "allow_always",
            Decision::Deny => "deny",
            Decision::Cancel => "cancel",
        })
    }
}

/// What kind of panel output an expectation selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpectKind {
    /// `tool_use` blocks of `assistant` lines.
    ToolUse,
    /// `tool_result` blocks of `user` lines.
    ToolResult,
    /// `control_request` lines of subtype `can_use_tool`.
    CanUseTool,
    /// `result` lines.
    Result,
    /// text blocks of `assistant` lines.
    AssistantText,
    /// thinking blocks of `assistant` lines.
    Thinking,
    /// `system` lines of subtype `init`.
    SystemInit,
    /// `stream_event` lines.
    StreamEvent,
    /// the `user` echo of a prompt (`isReplay: true`).
    UserEcho,
}

impl Step {
    /// The scenario file's spelling of this step's kind (`panel = "..."`).
    pub fn kind(&self) -> &'static str {
        match self {
            Step::Prompt(_) => "prompt",
            Step::Permission { .. } => "permission",
            Step::Interrupt { .. } => "interrupt",
            Step::Steer { .. } => "steer",
            Step::SetMode { .. } => "set_mode",
            Step::SetModel { .. } => "set_model",
            Step::Resume => "resume",
        }
    }
}

impl ExpectKind {
    /// The spelling used in scenario files.
    pub fn as_str(self) -> &'static str {
        match self {
            ExpectKind::ToolUse => "tool_use",
            ExpectKind::ToolResult => "tool_result",
            ExpectKind::CanUseTool => "can_use_tool",
            ExpectKind::Result => "result",
            ExpectKind::AssistantText => "assistant_text",
            ExpectKind::Thinking => "thinking",
            ExpectKind::SystemInit => "system_init",
            ExpectKind::StreamEvent => "stream_event",
            ExpectKind::UserEcho => "user_echo",
        }
    }
}

/// How many selected items an expectation allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountRule {
    Exactly(u32),
    /// Inclusive bounds; absent = unbounded.
    Range {
        min: Option<u32>,
        max: Option<u32>,
    },
}

impl CountRule {
    pub fn accepts(self, n: usize) -> bool {
        match self {
            CountRule::Exactly(c) => n == c as usize,
            CountRule::Range { min, max } => {
                min.is_none_or(|m| n >= m as usize) && max.is_none_or(|m| n <= m as usize)
            }
        }
    }
}

impl std::fmt::Display for CountRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CountRule::Exactly(c) => write!(f, "exactly {c}"),
            CountRule::Range {
                min: Some(a),
                max: Some(b),
            } => write!(f, "{a} to {b}"),
            CountRule::Range {
                min: Some(a),
                max: None,
            } => write!(f, "at least {a}"),
            CountRule::Range {
                min: None,
                max: Some(b),
            } => write!(f, "at most {b}"),
            CountRule::Range {
                min: None,
                max: None,
            } => write!(f, "any number"),
        }
    }
}

/// A check on the bridge's panel output, evaluated by the replayer: select
/// the items of `kind` that pass the filters, check their number against
/// `count`, then check every predicate on every selected item.
#[derive(Debug, Clone, PartialEq)]
pub struct Expectation {
    pub kind: ExpectKind,
    /// Filter: tool name (`tool_use`, `can_use_tool`), e.g. `mcp__unity-ops__uap_ping`.
    pub name: Option<String>,
    /// Filter: for `tool_result`, the name of the `tool_use` it answers.
    pub tool: Option<String>,
    /// Filter: the line's `subtype` (`result`) or the stream event's
    /// `event.type` (`stream_event`).
    pub subtype: Option<String>,
    /// Default when no count/min/max is given: at least 1.
    pub count: CountRule,
    /// Predicate: `is_error` of a `tool_result` or a `result`.
    pub is_error: Option<bool>,
    /// Predicate: the item contains (true) / does not contain (false) an image block.
    pub has_image: Option<bool>,
    /// Predicate: the item has an image block, or (true) its text marks an
    /// image the agent dropped (`[image]`, Gemini's `[Image: image/png]`):
    /// the image is present or honestly absent, never silently lost.
    pub image_or_marker: Option<bool>,
    /// Predicate: no text in the item carries image data as text (a run of
    /// 100+ base64 characters or a `;base64,` data URI).
    pub no_base64_in_text: Option<bool>,
    /// Predicate: the item's text contains this string.
    pub text_contains: Option<String>,
    /// Filter (any kind): only items whose text contains this string are
    /// selected and counted (e.g. the script gate's deny notes among all
    /// assistant text).
    pub with_text: Option<String>,
    /// Why this must hold (shown when it fails).
    pub why: String,
    /// 1-based line of the `[[expect]]` header in the scenario file.
    pub line: usize,
}

/// Load and validate one scenario file.
pub fn load(path: impl AsRef<Path>) -> Result<Scenario, ScenarioError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|source| ScenarioError::Io {
        file: path.to_path_buf(),
        source,
    })?;
    parse(path, &bytes)
}

/// Parse scenario bytes as if read from `path` (used by [`load`] and tests;
/// `path` supplies the expected name and the base directory of fixtures).
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Scenario, ScenarioError> {
    raw::parse(path, bytes)
}

/// Load every `*.toml` file in `dir` (not recursive), sorted by name.
pub fn load_all(dir: impl AsRef<Path>) -> Result<Vec<Scenario>, ScenarioError> {
    let mut scenarios = Vec::new();
    for path in scenario_files(dir.as_ref())? {
        scenarios.push(load(&path)?);
    }
    Ok(scenarios)
}

/// Load the scenario called `name` from `dir`.
pub fn find(dir: impl AsRef<Path>, name: &str) -> Result<Scenario, ScenarioError> {
    let dir = dir.as_ref();
    let files = scenario_files(dir)?;
    match files
        .iter()
        .find(|p| p.file_stem().and_then(|s| s.to_str()) == Some(name))
    {
        Some(path) => load(path),
        None => Err(ScenarioError::NotFound {
            dir: dir.to_path_buf(),
            name: name.to_owned(),
            available: files
                .iter()
                .filter_map(|p| p.file_stem().and_then(|s| s.to_str()).map(str::to_owned))
                .collect(),
        }),
    }
}

fn scenario_files(dir: &Path) -> Result<Vec<PathBuf>, ScenarioError> {
    let io = |source| ScenarioError::Io {
        file: dir.to_path_buf(),
        source,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.is_file() && path.extension().is_some_and(|e| e == "toml") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

impl Scenario {
    /// The scenario, when it can be recorded: an imported one has no
    /// scripted model to record against.
    pub fn recordable(self) -> Result<Scenario, ScenarioError> {
        if self.imported {
            return Err(ScenarioError::NotRecordable {
                file: self.path,
                name: self.name,
            });
        }
        Ok(self)
    }

    /// The prompts of the scenario (prompt and steer steps), in step order.
    pub fn prompts(&self) -> impl Iterator<Item = &Prompt> {
        self.steps.iter().filter_map(|s| match s {
            Step::Prompt(p) | Step::Steer { prompt: p, .. } => Some(p),
            _ => None,
        })
    }
}
