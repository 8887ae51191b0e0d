//! Pure builders for the frames an ACP client sends. The bridge and the
//! recorder's minimal ACP client both use them, so a recording holds exactly
//! the requests the bridge will make on replay.
//!
//! Everything here reads the agent's answers as loose JSON: an agent that adds
//! fields or leaves optional ones out never makes a builder fail. What goes
//! out is typed ([`crate::acp::request`]).

pub use crate::acp::capabilities::AgentCapabilities;
pub use crate::acp::permission_mode::ModeChange;
pub use crate::acp::request::{
    ConfigValue, ContentBlock, HttpHeader, McpServer, Notification, PermissionAnswer, Request,
    RequestId, SessionSetup, SystemPrompt, declared_capabilities, error_line, result_line,
};
use crate::launch::McpEndpoint;

/// An image the panel attached to a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptImage {
    pub media_type: String,
    pub data_base64: String,
}

/// How to switch the agent's model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelChange {
    SetModel { model_id: String },
    SetConfigOption { config_id: String, value: String },
}

/// A model the agent offers, as advertised in `models` or a model config option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentModel {
    pub id: String,
    pub name: String,
    pub description: Option<String>,
}

// ---------------------------------------------------------------- handshake

/// Whether the panel's HTTP MCP server goes into `session/new` and
/// `session/load`: when the agent advertises HTTP MCP, or when the launch
/// says the agent takes servers it does not advertise (`unadvertised`).
pub fn offers_http_mcp(caps: &AgentCapabilities, unadvertised: bool) -> bool {
    unadvertised || caps.http_mcp
}

/// The `mcpServers` list: the panel's server, only when it is offered
/// ([`offers_http_mcp`]).
fn mcp_servers(
    mcp: Option<&McpEndpoint>,
    caps: &AgentCapabilities,
    unadvertised: bool,
) -> Vec<McpServer> {
    match mcp {
        Some(ep) if offers_http_mcp(caps, unadvertised) => vec![McpServer {
            transport: "http",
            name: ep.name.clone(),
            url: ep.url.clone(),
            headers: ep
                .authorization
                .iter()
                .map(|v| HttpHeader {
                    name: "Authorization",
                    value: v.clone(),
                })
                .collect(),
        }],
        _ => Vec::new(),
    }
}

/// The `systemPrompt` of a session call, from Claude's two instruction
/// parts: `system` replaces the agent's default instructions
/// (`--system-prompt`), `append` follows them (`--append-system-prompt`).
/// `None` unless the agent advertises `sessionCapabilities.systemPrompt` and
/// one part says something (an empty content array is not allowed). Mode
/// `override` only when `system` is given and the agent advertises
/// `mode.override`; otherwise `append`, the replacing prompt included, since
/// system-level text outranks a block in the user's turn even where the
/// agent's defaults stay. One text block per part, `system` first.
pub fn session_system_prompt(
    system: Option<&str>,
    append: Option<&str>,
    caps: &AgentCapabilities,
) -> Option<SystemPrompt> {
    let can_override = caps.system_prompt?;
    let system = system.filter(|s| !s.is_empty());
    let content: Vec<ContentBlock> = system
        .into_iter()
        .chain(append.filter(|a| !a.is_empty()))
        .map(ContentBlock::text)
        .collect();
    if content.is_empty() {
        return None;
    }
    let mode = if can_override && system.is_some() {
        "override"
    } else {
        "append"
    };
    Some(SystemPrompt { mode, content })
}

/// The MCP server a session call offers the agent, and whether it goes
/// even where the agent advertises no HTTP MCP.
#[derive(Debug, Clone, Copy, Default)]
pub struct McpOffer<'a> {
    pub endpoint: Option<&'a McpEndpoint>,
    pub unadvertised: bool,
}

impl McpOffer<'_> {
    fn servers(self, caps: &AgentCapabilities) -> Vec<McpServer> {
        mcp_servers(self.endpoint, caps, self.unadvertised)
    }
}

/// What `session/new` and `session/load` carry; `system_prompt` from
/// [`session_system_prompt`].
pub fn session_setup(
    cwd: &str,
    mcp: McpOffer<'_>,
    caps: &AgentCapabilities,
    system_prompt: Option<SystemPrompt>,
) -> SessionSetup {
    SessionSetup {
        cwd: cwd.to_string(),
        mcp_servers: mcp.servers(caps),
        system_prompt,
        additional_directories: None,
    }
}

/// The auth method to try: the launch spec's, else the agent's first advertised one.
pub fn auth_method(preferred: Option<&str>, caps: &AgentCapabilities) -> Option<String> {
    if let Some(p) = preferred.filter(|p| !p.is_empty()) {
        return Some(p.to_string());
    }
    caps.auth_methods.first().cloned()
}

// ---------------------------------------------------------------- prompts

/// The content blocks of one `session/prompt`. `custom_instructions` is given
/// only for the first prompt of a new session whose instructions did not go
/// as the session call's `systemPrompt`.
/// Images are dropped when the agent did not advertise `promptCapabilities.image`.
pub fn prompt_blocks(
    text: &str,
    images: &[PromptImage],
    custom_instructions: Option<&str>,
    caps: &AgentCapabilities,
) -> Vec<ContentBlock> {
    let mut blocks = Vec::new();
    if let Some(ci) = custom_instructions.filter(|c| !c.is_empty()) {
        blocks.push(ContentBlock::text(ci));
    }
    let keep_images = caps.images;
    if !text.is_empty() || !keep_images || images.is_empty() {
        blocks.push(ContentBlock::text(text));
    }
    if keep_images {
        for img in images {
            blocks.push(ContentBlock::Image {
                mime_type: img.media_type.clone(),
                data: img.data_base64.clone(),
            });
        }
    }
    blocks
}

/// The instructions the first prompt of a new session carries: the custom
/// instructions (`None` when they went as the session call's `systemPrompt`),
/// with the script gate's steering text joined when the gate is on: the
/// steering text always travels here, so every agent reads the gate's rules
/// the same way. Both the bridge and the recorder call this, so their first
/// prompts match.
pub fn first_prompt_instructions(
    custom_instructions: Option<&str>,
    script_gate: bool,
) -> Option<String> {
    let steering = crate::script_gate::steering_text(script_gate);
    match (
        custom_instructions.filter(|c| !c.is_empty()),
        steering.is_empty(),
    ) {
        (Some(ci), true) => Some(ci.to_string()),
        (Some(ci), false) => Some(format!("{ci}\n\n{steering}")),
        (None, false) => Some(steering),
        (None, true) => None,
    }
}

/// The answer to an agent request this client does not serve (`fs/*`,
/// `terminal/*`, anything unknown): -32601, the id echoed verbatim.
pub fn method_not_found(id: &RequestId, method: &str) -> String {
    let message = if method.starts_with("fs/") || method.starts_with("terminal/") {
        format!("method not found: {method} (this client declared no fs or terminal capability)")
    } else {
        format!("method not found: {method}")
    };
    error_line(id, -32601, &message)
}

// ---------------------------------------------------------------- permissions

pub use crate::acp::permission_option::{
    LEGACY_REJECT_OPTION_IDS, PermissionIntent, PermissionOption, choose_permission_option,
    choose_permission_option_with, has_allow_always_option,
};

// ---------------------------------------------------------------- modes and models

pub use crate::acp::permission_mode::{
    already_in_effect as mode_already_in_effect, resolve_permission_mode,
};
pub use crate::acp::session_state::SessionState;

/// A model, or a value of the model config option, as the panel sees it.
fn agent_model(o: &crate::acp::session_state::Offer) -> AgentModel {
    AgentModel {
        id: o.id.clone(),
        name: o.name_or_id().to_string(),
        description: o.description.clone(),
    }
}

/// The models the agent offers: `models.availableModels`, else a config option
/// of category `model`.
pub fn available_models(session: &SessionState) -> Vec<AgentModel> {
    if let Some(list) = &session.models {
        return list.iter().map(agent_model).collect();
    }
    session
        .option_of_category("model")
        .map(|opt| opt.values.iter().map(agent_model).collect())
        .unwrap_or_default()
}

/// The model the agent currently uses, if it says.
pub fn current_model(session: &SessionState) -> Option<String> {
    if let Some(m) = &session.current_model {
        return Some(m.clone());
    }
    session
        .option_of_category("model")?
        .current_text()
        .map(Into::into)
}

/// How to switch to `model`: one of `models.availableModels`, else a value
/// of the model config option (codex offers `gpt-5.5[low]` as a model and
/// `gpt-5.5` as a config value), each matched by id, then case-insensitively
/// by id or name. `None` when the agent offers no such model, or no models.
pub fn resolve_model(model: &str, session: &SessionState) -> Option<ModelChange> {
    let pick = |list: Vec<(String, String)>| {
        let exact = list.iter().position(|(id, _)| id == model);
        exact
            .or_else(|| {
                list.iter().position(|(id, name)| {
                    id.eq_ignore_ascii_case(model) || name.eq_ignore_ascii_case(model)
                })
            })
            .map(|i| list[i].0.clone())
    };
    let named = |offers: &[crate::acp::session_state::Offer]| {
        let pairs = offers
            .iter()
            .map(|o| (o.id.clone(), o.name_or_id().to_string()));
        pairs.collect::<Vec<_>>()
    };
    if let Some(models) = &session.models
        && let Some(model_id) = pick(named(models))
    {
        return Some(ModelChange::SetModel { model_id });
    }
    let opt = session.option_of_category("model")?;
    Some(ModelChange::SetConfigOption {
        config_id: opt.id.as_deref().unwrap_or("model").to_string(),
        value: pick(named(&opt.values))?,
    })
}

/// Claude's largest thinking budget (`ultrathink`, 31,999 tokens): a
/// budget's share of it picks a thought level.
const THINKING_BUDGET_SCALE: u64 = 32_000;

/// How to carry out `set_max_thinking_tokens` with the agent's thought-level
/// config option (category `thought_level`): `None` tokens is the agent's
/// `default` value (no change when it has none); 0 is its off value (`off`,
/// `none`, `disabled`); a budget picks among its other values, in the
/// agent's order, by the budget's share of [`THINKING_BUDGET_SCALE`]
/// (4,000 tokens is the lowest of five levels, 10,000 the second, 31,999
/// the highest). `Ok(None)`: nothing to change. An error says why no value fits.
pub fn resolve_thought_level(
    tokens: Option<u64>,
    session: &SessionState,
) -> Result<Option<ModeChange>, String> {
    let Some(opt) = session.option_of_category("thought_level") else {
        return Err("the agent has no thought-level config option".into());
    };
    let values: Vec<String> = opt.values.iter().map(|v| v.id.clone()).collect();
    let is = |v: &str, names: &[&str]| names.iter().any(|n| v.eq_ignore_ascii_case(n));
    const OFF: &[&str] = &["off", "none", "disabled"];
    let levels: Vec<&String> = values
        .iter()
        .filter(|v| !is(v, OFF) && !is(v, &["default"]))
        .collect();
    let value = match tokens {
        None => match values.iter().find(|v| is(v, &["default"])) {
            Some(v) => v.clone(),
            None => return Ok(None),
        },
        Some(0) => match values.iter().find(|v| is(v, OFF)) {
            Some(v) => v.clone(),
            None => return Err(format!("the agent's thought levels {values:?} have no off")),
        },
        Some(n) => {
            if levels.is_empty() {
                return Err(format!(
                    "the agent's thought levels {values:?} have none but off"
                ));
            }
            let i = (n.saturating_mul(levels.len() as u64) / THINKING_BUDGET_SCALE) as usize;
            levels[i.min(levels.len() - 1)].clone()
        }
    };
    if opt.current_text() == Some(value.as_str()) {
        return Ok(None);
    }
    Ok(Some(ModeChange::SetConfigOption {
        config_id: opt.id.as_deref().unwrap_or("thought_level").to_string(),
        value,
    }))
}

/// The request that carries out a mode change.
pub fn mode_change_request(session_id: &str, change: &ModeChange) -> Request {
    let session_id = session_id.to_string();
    match change {
        ModeChange::SetMode { mode_id } => Request::SetMode {
            session_id,
            mode_id: mode_id.clone(),
        },
        ModeChange::SetConfigOption { config_id, value } => Request::SetConfigOption {
            session_id,
            config_id: config_id.clone(),
            value: ConfigValue::Id(value.clone()),
        },
        ModeChange::SetConfigSwitch { config_id, value } => Request::SetConfigOption {
            session_id,
            config_id: config_id.clone(),
            value: ConfigValue::Boolean(*value),
        },
    }
}

/// The request that carries out a model change.
pub fn model_change_request(session_id: &str, change: &ModelChange) -> Request {
    let session_id = session_id.to_string();
    match change {
        ModelChange::SetModel { model_id } => Request::SetModel {
            session_id,
            model_id: model_id.clone(),
        },
        ModelChange::SetConfigOption { config_id, value } => Request::SetConfigOption {
            session_id,
            config_id: config_id.clone(),
            value: ConfigValue::Id(value.clone()),
        },
    }
}

#[cfg(test)]
mod tests;
