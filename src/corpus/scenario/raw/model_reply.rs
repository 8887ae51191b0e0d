//! Validation of `[[step.model]]`: the scripted model's replies, their
//! tool calls checked against the stub server's catalogue.

use super::*;

pub(super) fn reply(
    ctx: &Ctx,
    st: &mut StepState,
    r: &Spanned<RawReply>,
    field: &str,
) -> R<ModelReply> {
    let raw = r.get_ref();
    let opt = |v: &Option<Spanned<String>>, key: &str| -> R<Option<String>> {
        v.as_ref()
            .map(|v| non_empty(ctx, v, &format!("{field}.{key}")))
            .transpose()
    };
    let thinking = opt(&raw.thinking, "thinking")?;
    let text = opt(&raw.text, "text")?;
    let error = match &raw.error {
        Some(e) => {
            if thinking.is_some() || text.is_some() || !raw.tool_calls.is_empty() {
                return Err(ctx.err(
                    e.span(),
                    format!("{field}.error"),
                    "an error reply cannot also have thinking, text or tool_calls",
                ));
            }
            let e = e.get_ref();
            let status = *e.status.get_ref();
            if !(400..=599).contains(&status) {
                return Err(ctx.err(
                    e.status.span(),
                    format!("{field}.error.status"),
                    format!("{status} is not an HTTP error status (400..=599)"),
                ));
            }
            Some(ApiError {
                status,
                message: non_empty(ctx, &e.message, &format!("{field}.error.message"))?,
            })
        }
        None => None,
    };
    let mut tool_calls = Vec::new();
    for (k, c) in raw.tool_calls.iter().enumerate() {
        tool_calls.push(tool_call(ctx, st, c, &format!("{field}.tool_calls[{k}]"))?);
    }
    let pace_ms = match &raw.pace_ms {
        Some(p) if error.is_some() => {
            return Err(ctx.err(
                p.span(),
                format!("{field}.pace_ms"),
                "an error reply is not streamed; drop pace_ms",
            ));
        }
        Some(p) if !(1..=MAX_PACE_MS).contains(p.get_ref()) => {
            return Err(ctx.err(
                p.span(),
                format!("{field}.pace_ms"),
                format!("must be 1..={MAX_PACE_MS} (milliseconds)"),
            ));
        }
        Some(p) => Some(*p.get_ref()),
        None => None,
    };
    if error.is_none() && thinking.is_none() && text.is_none() && tool_calls.is_empty() {
        return Err(ctx.err(
            r.span(),
            field,
            "a model reply needs at least one of thinking, text, tool_calls or error",
        ));
    }
    Ok(ModelReply {
        thinking,
        text,
        tool_calls,
        error,
        pace_ms,
    })
}

/// One scripted tool call: a unity-ops tool the scenario offers, with
/// arguments its schema names, or a role of the agent's own tools; its id
/// unique in the scenario.
fn tool_call(ctx: &Ctx, st: &mut StepState, c: &Spanned<RawCall>, cf: &str) -> R<ScriptedToolCall> {
    let call_span = c.span();
    let c = c.get_ref();
    let (tool, agent_tool) = match (&c.tool, &c.agent_tool) {
        (Some(t), None) => (non_empty(ctx, t, &format!("{cf}.tool"))?, None),
        (None, Some(a)) => {
            let role = non_empty(ctx, a, &format!("{cf}.agent_tool"))?;
            if !role
                .chars()
                .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_')
            {
                return Err(ctx.err(
                    a.span(),
                    format!("{cf}.agent_tool"),
                    format!("`{role}` is not a role name (lower-case letters, digits, `_`, e.g. `shell`)"),
                ));
            }
            (String::new(), Some(role))
        }
        (Some(t), Some(_)) => {
            return Err(ctx.err(
                t.span(),
                format!("{cf}.tool"),
                "a call has either `tool` or `agent_tool`, not both",
            ));
        }
        (None, None) => {
            return Err(ctx.err(
                call_span,
                cf,
                "a call needs `tool` (a unity-ops tool) or `agent_tool` (a role of the agent's own tools)",
            ));
        }
    };
    let id = non_empty(ctx, &c.id, &format!("{cf}.id"))?;
    if !st.call_ids.insert(id.clone()) {
        return Err(ctx.err(
            c.id.span(),
            format!("{cf}.id"),
            format!("call id `{id}` is used twice; call ids must be unique in a scenario"),
        ));
    }
    if agent_tool.is_some() {
        let arguments = arguments_table(ctx, &c.arguments, cf)?;
        return Ok(ScriptedToolCall {
            tool,
            agent_tool,
            arguments,
            id,
        });
    }
    let tool_span = c.tool.as_ref().map(|t| t.span()).unwrap_or(call_span);
    if !st.tools.contains(&tool) {
        return Err(ctx.err(
            tool_span,
            format!("{cf}.tool"),
            format!(
                "`{tool}` is not offered: add it to `tools` (now [{}])",
                st.tools.join(", ")
            ),
        ));
    }
    let arguments = arguments_table(ctx, &c.arguments, cf)?;
    if let (Some(a), Some(unknown)) = (&c.arguments, unknown_argument(&tool, &arguments)) {
        return Err(ctx.err(
            a.span(),
            format!("{cf}.arguments"),
            format!(
                "`{tool}` takes no argument `{unknown}` (its schema names: {})",
                argument_names(&tool).join(", ")
            ),
        ));
    }
    Ok(ScriptedToolCall {
        tool,
        agent_tool: None,
        arguments,
        id,
    })
}

/// The stub server's tool of that name.
pub(super) fn stub_tool(name: &str) -> Option<&'static stub_mcp::ToolSpec> {
    stub_mcp::catalogue().iter().find(|t| t.name == name)
}

/// The argument names a stub tool's input schema declares.
fn argument_names(tool: &str) -> Vec<String> {
    stub_tool(tool)
        .and_then(|t| serde_json::from_str::<serde_json::Value>(t.input_schema).ok())
        .and_then(|schema| {
            schema
                .get("properties")
                .and_then(|p| p.as_object())
                .map(|p| p.keys().cloned().collect())
        })
        .unwrap_or_default()
}

/// A call's `arguments`: a table, `{}` when absent.
fn arguments_table(
    ctx: &Ctx,
    arguments: &Option<Spanned<serde_json::Value>>,
    cf: &str,
) -> R<serde_json::Value> {
    match arguments {
        Some(a) if a.get_ref().is_object() => Ok(a.get_ref().clone()),
        Some(a) => Err(ctx.err(
            a.span(),
            format!("{cf}.arguments"),
            "must be a table (e.g. `{}`)",
        )),
        None => Ok(serde_json::Value::Object(Default::default())),
    }
}

/// An argument the tool's schema does not declare (a typo the agent would
/// pass on and the stub would ignore), if any.
fn unknown_argument(tool: &str, arguments: &serde_json::Value) -> Option<String> {
    let names = argument_names(tool);
    arguments
        .as_object()?
        .keys()
        .find(|k| !names.contains(k))
        .cloned()
}
