//! The file format as serde sees it, and its validation into [`Scenario`].
//!
//! Every value the validator may complain about is kept `Spanned`, so a
//! message can point at its line; serde's own errors (unknown keys, wrong
//! types, unknown enum values) carry a span too, and the field path is
//! recovered by walking the document tree.

use std::collections::HashSet;
use std::ops::Range;
use std::path::Path;

use base64::Engine as _;
use serde::Deserialize;
use toml::Spanned;

mod expectation;
mod file_hash;
mod model_reply;
mod step;

use expectation::expectation;
use file_hash::RecordingHashes;
use model_reply::{reply, stub_tool};
use step::step;

use super::error::{ScenarioError, line_col, path_at};
use super::fixtures::{FIXTURE_NAMES, fixture_image, media_type_for};
use super::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    name: Spanned<String>,
    summary: Spanned<String>,
    #[serde(default)]
    system_prompt: Option<Spanned<String>>,
    #[serde(default)]
    append_system_prompt: Option<Spanned<String>>,
    #[serde(default)]
    launch: Option<Spanned<RawLaunch>>,
    #[serde(default)]
    tools: Vec<Spanned<String>>,
    #[serde(default)]
    script_gate: bool,
    #[serde(default)]
    mcp_calls: Option<Spanned<String>>,
    #[serde(default)]
    imported: bool,
    /// Directories and files laid out in the workspace before the agent starts.
    #[serde(default)]
    workspace: Vec<Spanned<crate::corpus::workspace_fixture::WorkspaceEntry>>,
    #[serde(default)]
    step: Vec<Spanned<RawStep>>,
    #[serde(default)]
    expect: Vec<Spanned<RawExpect>>,
    /// How the bridge's output for this scenario may differ from Claude
    /// Code's (`[claude_comparison] justified = [...]`); read and checked by
    /// `contract::compare`, accepted here so the strict loader lets it by.
    #[serde(default)]
    #[allow(dead_code)]
    claude_comparison: Option<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLaunch {
    #[serde(default)]
    model: Option<Spanned<String>>,
    #[serde(default)]
    permission_mode: Option<Spanned<String>>,
    #[serde(default)]
    resume_session: Option<Spanned<String>>,
    /// A server name, or `false` for none.
    #[serde(default)]
    mcp_server: Option<Spanned<toml::Value>>,
    #[serde(default)]
    mcp_authorization: Option<Spanned<bool>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    panel: Spanned<String>,
    #[serde(default)]
    text: Option<Spanned<String>>,
    #[serde(default)]
    live: Option<Spanned<String>>,
    #[serde(default)]
    images: Option<Spanned<Vec<Spanned<RawImage>>>>,
    #[serde(default)]
    model: Option<Spanned<Vec<Spanned<RawReply>>>>,
    #[serde(default)]
    decision: Option<Spanned<String>>,
    #[serde(default)]
    option_id: Option<Spanned<String>>,
    #[serde(default)]
    at: Option<Spanned<String>>,
    #[serde(default)]
    mode: Option<Spanned<String>>,
    #[serde(default)]
    model_id: Option<Spanned<String>>,
    #[serde(default)]
    updated_input: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawImage {
    #[serde(default)]
    fixture: Option<Spanned<String>>,
    #[serde(default)]
    file: Option<Spanned<String>>,
    #[serde(default)]
    media_type: Option<Spanned<String>>,
    #[serde(default)]
    data: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReply {
    #[serde(default)]
    thinking: Option<Spanned<String>>,
    #[serde(default)]
    text: Option<Spanned<String>>,
    #[serde(default)]
    tool_calls: Vec<Spanned<RawCall>>,
    #[serde(default)]
    error: Option<Spanned<RawError>>,
    #[serde(default)]
    pace_ms: Option<Spanned<u32>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCall {
    #[serde(default)]
    tool: Option<Spanned<String>>,
    #[serde(default)]
    agent_tool: Option<Spanned<String>>,
    #[serde(default)]
    arguments: Option<Spanned<serde_json::Value>>,
    id: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawError {
    status: Spanned<u16>,
    message: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExpect {
    kind: Spanned<ExpectKind>,
    #[serde(default)]
    name: Option<Spanned<String>>,
    #[serde(default)]
    tool: Option<Spanned<String>>,
    #[serde(default)]
    subtype: Option<Spanned<String>>,
    #[serde(default)]
    count: Option<Spanned<u32>>,
    #[serde(default)]
    min: Option<Spanned<u32>>,
    #[serde(default)]
    max: Option<Spanned<u32>>,
    #[serde(default)]
    is_error: Option<Spanned<bool>>,
    #[serde(default)]
    has_image: Option<Spanned<bool>>,
    #[serde(default)]
    image_or_marker: Option<Spanned<bool>>,
    #[serde(default)]
    no_base64_in_text: Option<Spanned<bool>>,
    #[serde(default)]
    text_contains: Option<Spanned<String>>,
    #[serde(default)]
    with_text: Option<Spanned<String>>,
    why: Spanned<String>,
}

/// Where errors point: the file, its text, and the error constructor.
struct Ctx<'a> {
    file: &'a Path,
    src: &'a str,
}

impl Ctx<'_> {
    fn err(
        &self,
        span: Range<usize>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> ScenarioError {
        let (line, column) = line_col(self.src, span.start);
        ScenarioError::Invalid {
            file: self.file.to_path_buf(),
            line,
            column,
            field: field.into(),
            message: message.into(),
        }
    }
}

type R<T> = Result<T, ScenarioError>;

pub(super) fn parse(file: &Path, bytes: &[u8]) -> R<Scenario> {
    let src = std::str::from_utf8(bytes).map_err(|e| ScenarioError::Invalid {
        file: file.to_path_buf(),
        line: 1 + bytes[..e.valid_up_to()]
            .iter()
            .filter(|b| **b == b'\n')
            .count(),
        column: 1,
        field: "(file)".to_owned(),
        message: format!("not UTF-8: {e}"),
    })?;
    let ctx = Ctx { file, src };
    let raw: RawFile = toml::from_str(src).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        let field = match toml::de::DeTable::parse(src) {
            Ok(doc) => path_at(doc.get_ref(), &span),
            Err(_) => "(syntax)".to_owned(),
        };
        ctx.err(span, field, e.message().trim().to_owned())
    })?;
    let sha256 = RecordingHashes::of(bytes);
    validate(&ctx, raw, sha256)
}

fn non_empty(ctx: &Ctx, v: &Spanned<String>, field: &str) -> R<String> {
    if v.get_ref().trim().is_empty() {
        return Err(ctx.err(v.span(), field, "must not be empty"));
    }
    Ok(v.get_ref().clone())
}

fn validate(ctx: &Ctx, raw: RawFile, sha256: RecordingHashes) -> R<Scenario> {
    let name = checked_name(ctx, &raw)?;
    let summary = non_empty(ctx, &raw.summary, "summary")?;
    let system_prompt = match &raw.system_prompt {
        Some(s) => Some(non_empty(ctx, s, "system_prompt")?),
        None => None,
    };
    let (append_system_prompt, launch) = launch_settings(ctx, &raw)?;

    let direct_mcp_calls = direct_mcp_calls(ctx, &raw)?;

    let tools = tools(ctx, &raw)?;

    let mut workspace = Vec::new();
    for (i, w) in raw.workspace.iter().enumerate() {
        if let Err(why) = w.get_ref().check() {
            return Err(ctx.err(w.span(), format!("workspace[{i}]"), why));
        }
        workspace.push(w.get_ref().clone());
    }

    if raw.step.is_empty() {
        return Err(ctx.err(0..0, "step", "a scenario needs at least one `[[step]]`"));
    }
    let mut state = StepState {
        tools: &tools,
        call_ids: HashSet::new(),
        prompt_texts: Vec::new(),
        in_turn: false,
        imported: raw.imported,
    };
    let mut steps = Vec::new();
    for (i, s) in raw.step.iter().enumerate() {
        steps.push(step(ctx, &mut state, s, i)?);
    }
    if let Some(sp) = system_prompt.as_ref().filter(|_| !raw.imported) {
        for (text, span, field) in &state.prompt_texts {
            if sp.contains(text.as_str()) {
                return Err(ctx.err(
                    span.clone(),
                    field.clone(),
                    "the prompt text also occurs in system_prompt; the model server could not tell the turn apart",
                ));
            }
        }
    }

    let mut expect = Vec::new();
    for (i, e) in raw.expect.iter().enumerate() {
        expect.push(expectation(ctx, e, i)?);
    }

    Ok(Scenario {
        name,
        summary,
        system_prompt,
        append_system_prompt,
        launch,
        tools,
        script_gate: raw.script_gate,
        direct_mcp_calls,
        imported: raw.imported,
        workspace,
        steps,
        expect,
        sha256: sha256.current,
        sha256_with_expectations: sha256.with_expectations,
        path: ctx.file.to_path_buf(),
    })
}

/// The scenario's name: the file's stem, and a name recordings and goldens
/// can be filed under.
fn checked_name(ctx: &Ctx, raw: &RawFile) -> R<String> {
    let stem = ctx
        .file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let name = non_empty(ctx, &raw.name, "name")?;
    if name != stem {
        return Err(ctx.err(
            raw.name.span(),
            "name",
            format!("`{name}` must equal the file name without `.toml` (`{stem}`)"),
        ));
    }
    // recordings and goldens are named after it
    crate::corpus::name::check("name", &name)
        .map_err(|e| ctx.err(raw.name.span(), "name", e.to_string()))?;
    Ok(name)
}

/// The append prompt and launch settings: what only a replayed panel can
/// set.
fn launch_settings(ctx: &Ctx, raw: &RawFile) -> R<(Option<String>, LaunchSettings)> {
    // what only a replayed panel can do: the recorder launches no bridge
    let imported_only = |span: Range<usize>, field: &str| -> R<()> {
        if raw.imported {
            return Ok(());
        }
        Err(ctx.err(
            span,
            field,
            format!("`{field}` belongs to an imported scenario (`imported = true`): the recorder's client has no such setting"),
        ))
    };
    let append_system_prompt = match &raw.append_system_prompt {
        Some(s) => {
            imported_only(s.span(), "append_system_prompt")?;
            Some(non_empty(ctx, s, "append_system_prompt")?)
        }
        None => None,
    };
    let mut launch = LaunchSettings::default();
    if let Some(l) = &raw.launch {
        imported_only(l.span(), "launch")?;
        let l = l.get_ref();
        let opt = |v: &Option<Spanned<String>>, key: &str| -> R<Option<String>> {
            v.as_ref()
                .map(|v| non_empty(ctx, v, &format!("launch.{key}")))
                .transpose()
        };
        launch = LaunchSettings {
            model: opt(&l.model, "model")?,
            permission_mode: opt(&l.permission_mode, "permission_mode")?,
            resume_session: opt(&l.resume_session, "resume_session")?,
            mcp_server: panel_mcp_server(ctx, l)?,
        };
    }
    Ok((append_system_prompt, launch))
}

/// `[launch] mcp_server` (a name, or `false`) and `mcp_authorization`.
fn panel_mcp_server(ctx: &Ctx, l: &RawLaunch) -> R<PanelMcpServer> {
    let name = match l.mcp_server.as_ref() {
        None => PANEL_MCP_SERVER.to_string(),
        Some(v) => match v.get_ref() {
            toml::Value::String(name) if !name.trim().is_empty() => name.clone(),
            toml::Value::Boolean(false) => {
                return match &l.mcp_authorization {
                    Some(a) => Err(ctx.err(
                        a.span(),
                        "launch.mcp_authorization",
                        "needs a server, and `launch.mcp_server` is false",
                    )),
                    None => Ok(PanelMcpServer::NotGiven),
                };
            }
            _ => {
                return Err(ctx.err(
                    v.span(),
                    "launch.mcp_server",
                    "must be the name of the panel's MCP server, or false for none",
                ));
            }
        },
    };
    Ok(PanelMcpServer::Given {
        name,
        authorization: l.mcp_authorization.as_ref().is_none_or(|a| *a.get_ref()),
    })
}

/// Whether the scenario calls unity-ops tools directly (`mcp_calls = "direct"`)
/// instead of as the profile says.
fn direct_mcp_calls(ctx: &Ctx, raw: &RawFile) -> R<bool> {
    let direct = match &raw.mcp_calls {
        None => false,
        Some(m) => match m.get_ref().as_str() {
            "profile" => false,
            "direct" => true,
            other => {
                return Err(ctx.err(
                    m.span(),
                    "mcp_calls",
                    format!("`{other}` is not a way to call unity-ops tools (profile | direct)"),
                ));
            }
        },
    };
    Ok(direct)
}

/// The stub server's tools the scenario offers, each once.
fn tools(ctx: &Ctx, raw: &RawFile) -> R<Vec<String>> {
    let mut tools = Vec::new();
    for (i, t) in raw.tools.iter().enumerate() {
        let field = format!("tools[{i}]");
        let tool = non_empty(ctx, t, &field)?;
        if !tool.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(ctx.err(
                t.span(),
                field,
                format!("`{tool}` is not a tool name (letters, digits, `_`)"),
            ));
        }
        if tools.contains(&tool) {
            return Err(ctx.err(t.span(), field, format!("`{tool}` is listed twice")));
        }
        if stub_tool(&tool).is_none() {
            let known: Vec<&str> = stub_mcp::catalogue().iter().map(|t| t.name).collect();
            return Err(ctx.err(
                t.span(),
                field,
                format!(
                    "`{tool}` is not a unity-ops tool of the stub server (known: {})",
                    known.join(", ")
                ),
            ));
        }
        tools.push(tool);
    }
    Ok(tools)
}

struct StepState<'a> {
    tools: &'a [String],
    call_ids: HashSet<String>,
    /// (text, span, field) of every prompt so far.
    prompt_texts: Vec<(String, Range<usize>, String)>,
    /// Whether a turn may be running when this step comes (permission,
    /// interrupt and steer steps need one).
    in_turn: bool,
    /// An imported scenario: prompts without model replies, and prompt
    /// texts that may repeat (a user says "continue" twice); nothing of it
    /// reaches a scripted model.
    imported: bool,
}

/// Largest `pace_ms`: a paced reply must still finish well inside the
/// recorder's step timeouts.
const MAX_PACE_MS: u32 = 10_000;
