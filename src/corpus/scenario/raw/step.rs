//! Validation of `[[step]]`: each panel step's kind, the keys that kind
//! takes, and where in a turn it may come.

use super::*;

const STEP_KINDS: &str = "prompt, permission, interrupt, steer, set_mode, set_model, resume";

pub(super) fn step(ctx: &Ctx, st: &mut StepState, s: &Spanned<RawStep>, i: usize) -> R<Step> {
    let raw = s.get_ref();
    let f = |name: &str| format!("step[{i}].{name}");
    let kind = raw.panel.get_ref().as_str();
    keys_of_kind(ctx, s, i)?;
    let needs_turn = |what: &str| -> R<()> {
        if st.in_turn {
            Ok(())
        } else {
            Err(ctx.err(
                raw.panel.span(),
                f("panel"),
                format!("a `{what}` step needs a running turn: put it after a `prompt` step"),
            ))
        }
    };
    let required = |v: &Option<Spanned<String>>, key: &str| -> R<Spanned<String>> {
        match v {
            Some(v) => Ok(v.clone()),
            None => Err(ctx.err(s.span(), f(key), format!("a `{kind}` step needs `{key}`"))),
        }
    };
    let step = match kind {
        "prompt" => {
            let p = prompt(ctx, st, s, i)?;
            st.in_turn = true;
            Step::Prompt(p)
        }
        "steer" => {
            needs_turn("steer")?;
            let at = point(ctx, &required(&raw.at, "at")?, &f("at"))?;
            let p = prompt(ctx, st, s, i)?;
            Step::Steer { at, prompt: p }
        }
        "permission" => {
            needs_turn("permission")?;
            let d = required(&raw.decision, "decision")?;
            permission(ctx, st, raw, &d, i)?
        }
        "interrupt" => {
            needs_turn("interrupt")?;
            let at = point(ctx, &required(&raw.at, "at")?, &f("at"))?;
            st.in_turn = false;
            Step::Interrupt { at }
        }
        "set_mode" => {
            let mode = non_empty(ctx, &required(&raw.mode, "mode")?, &f("mode"))?;
            st.in_turn = false;
            Step::SetMode { mode }
        }
        "set_model" => {
            let v = required(&raw.model_id, "model_id")?;
            if !st.imported {
                return Err(ctx.err(
                    raw.panel.span(),
                    f("panel"),
                    "a `set_model` step belongs to an imported scenario (`imported = true`): the recorder's client has no such step",
                ));
            }
            let model = non_empty(ctx, &v, &f("model_id"))?;
            st.in_turn = false;
            Step::SetModel { model }
        }
        "resume" => {
            st.in_turn = false;
            Step::Resume
        }
        _ => unreachable!("kind checked above"),
    };
    Ok(step)
}

/// The keys a step has are the keys its kind takes: anything else present
/// is an error naming the key.
fn keys_of_kind(ctx: &Ctx, s: &Spanned<RawStep>, i: usize) -> R<()> {
    let raw = s.get_ref();
    let f = |name: &str| format!("step[{i}].{name}");
    let kind = raw.panel.get_ref().as_str();
    // Which keys each kind takes; anything else present is an error.
    let allowed: &[&str] = match kind {
        "prompt" => &["text", "live", "images", "model"],
        "steer" => &["at", "text", "live", "images", "model"],
        "permission" => &["decision", "option_id", "updated_input"],
        "interrupt" => &["at"],
        "set_mode" => &["mode"],
        "set_model" => &["model_id"],
        "resume" => &[],
        other => {
            return Err(ctx.err(
                raw.panel.span(),
                f("panel"),
                format!("unknown step kind `{other}` (expected one of: {STEP_KINDS})"),
            ));
        }
    };
    let present: [(&str, Option<Range<usize>>); 10] = [
        ("text", raw.text.as_ref().map(|v| v.span())),
        ("live", raw.live.as_ref().map(|v| v.span())),
        ("images", raw.images.as_ref().map(|v| v.span())),
        ("model", raw.model.as_ref().map(|v| v.span())),
        ("decision", raw.decision.as_ref().map(|v| v.span())),
        ("option_id", raw.option_id.as_ref().map(|v| v.span())),
        ("at", raw.at.as_ref().map(|v| v.span())),
        ("mode", raw.mode.as_ref().map(|v| v.span())),
        ("model_id", raw.model_id.as_ref().map(|v| v.span())),
        (
            "updated_input",
            raw.updated_input.as_ref().map(|v| v.span()),
        ),
    ];
    for (key, span) in present {
        if let Some(span) = span
            && !allowed.contains(&key)
        {
            return Err(ctx.err(
                span,
                f(key),
                format!("`{key}` does not belong to a `{kind}` step"),
            ));
        }
    }
    Ok(())
}

/// A `permission` step: the decision, the option it picks, and the input an
/// allowing panel sends back instead; a cancel ends the turn.
fn permission(
    ctx: &Ctx,
    st: &mut StepState,
    raw: &RawStep,
    d: &Spanned<String>,
    i: usize,
) -> R<Step> {
    let f = |name: &str| format!("step[{i}].{name}");
    let decision = match d.get_ref().as_str() {
        "allow" => Decision::Allow,
        "allow_always" => Decision::AllowAlways,
        "deny" => Decision::Deny,
        "cancel" => Decision::Cancel,
        other => {
            return Err(ctx.err(
                d.span(),
                f("decision"),
                format!(
                    "unknown decision `{other}` (expected allow, allow_always, deny or cancel)"
                ),
            ));
        }
    };
    let option_id = match &raw.option_id {
        Some(o) => Some(non_empty(ctx, o, &f("option_id"))?),
        None => None,
    };
    let updated_input = match &raw.updated_input {
        Some(u) => Some(updated_input(ctx, st, u, &f("updated_input"), decision)?),
        None => None,
    };
    if decision == Decision::Cancel {
        st.in_turn = false;
    }
    Ok(Step::Permission {
        decision,
        option_id,
        updated_input,
    })
}

/// `updated_input`: the JSON object an allowing panel sent back instead of
/// the requested input (a string, since TOML has no null).
fn updated_input(
    ctx: &Ctx,
    st: &StepState,
    v: &Spanned<String>,
    field: &str,
    decision: Decision,
) -> R<serde_json::Value> {
    if !st.imported {
        return Err(ctx.err(
            v.span(),
            field,
            "`updated_input` belongs to an imported scenario (`imported = true`): an ACP permission answer carries no input",
        ));
    }
    if !matches!(decision, Decision::Allow | Decision::AllowAlways) {
        return Err(ctx.err(
            v.span(),
            field,
            "only an allowing answer sends an input back",
        ));
    }
    match serde_json::from_str::<serde_json::Value>(v.get_ref()) {
        Ok(value) if value.is_object() => Ok(value),
        Ok(_) => Err(ctx.err(v.span(), field, "must be a JSON object (the tool's input)")),
        Err(e) => Err(ctx.err(v.span(), field, format!("not JSON: {e}"))),
    }
}

fn point(ctx: &Ctx, v: &Spanned<String>, field: &str) -> R<Point> {
    let s = v.get_ref().as_str();
    let bad = || {
        ctx.err(
            v.span(),
            field,
            format!(
                "unknown point `{s}` (expected first_tool_call, permission or chunks:N with N >= 1)"
            ),
        )
    };
    match s {
        "first_tool_call" => Ok(Point::FirstToolCall),
        "permission" => Ok(Point::Permission),
        _ => match s.strip_prefix("chunks:").map(|n| n.trim().parse::<u32>()) {
            Some(Ok(n)) if n >= 1 => Ok(Point::Chunks(n)),
            _ => Err(bad()),
        },
    }
}

fn prompt(ctx: &Ctx, st: &mut StepState, s: &Spanned<RawStep>, i: usize) -> R<Prompt> {
    let raw = s.get_ref();
    let f = |name: &str| format!("step[{i}].{name}");
    let kind = raw.panel.get_ref();
    let text_v = raw
        .text
        .as_ref()
        .ok_or_else(|| ctx.err(s.span(), f("text"), format!("a `{kind}` step needs `text`")))?;
    let text = non_empty(ctx, text_v, &f("text"))?;
    for (other, _, other_field) in st.prompt_texts.iter().filter(|_| !st.imported) {
        if other.contains(text.as_str()) || text.contains(other.as_str()) {
            return Err(ctx.err(
                text_v.span(),
                f("text"),
                format!(
                    "overlaps the text of {other_field}; the model server tells turns apart by prompt text, so no prompt text may contain another"
                ),
            ));
        }
    }
    st.prompt_texts
        .push((text.clone(), text_v.span(), f("text")));
    let live = match &raw.live {
        Some(l) => non_empty(ctx, l, &f("live"))?,
        None => text.clone(),
    };

    let mut images = Vec::new();
    if let Some(list) = &raw.images {
        for (j, img) in list.get_ref().iter().enumerate() {
            images.push(image(ctx, img, &format!("step[{i}].images[{j}]"))?);
        }
    }

    let no_replies = Vec::new();
    let replies = match &raw.model {
        Some(m) if !m.get_ref().is_empty() => m.get_ref(),
        None if st.imported => &no_replies,
        _ => {
            return Err(ctx.err(
                s.span(),
                f("model"),
                format!(
                    "a `{kind}` step needs at least one `[[step.model]]` reply (the scripted model's answer; only an `imported = true` scenario has none)"
                ),
            ));
        }
    };
    let mut model = Vec::new();
    for (j, r) in replies.iter().enumerate() {
        model.push(reply(ctx, st, r, &format!("step[{i}].model[{j}]"))?);
    }
    Ok(Prompt {
        text,
        live,
        images,
        model,
    })
}

fn image(ctx: &Ctx, img: &Spanned<RawImage>, field: &str) -> R<PromptImage> {
    let raw = img.get_ref();
    match (&raw.fixture, &raw.file) {
        (None, None) if raw.data.is_some() => {
            let data = raw.data.as_ref().expect("checked");
            let media_type = raw.media_type.as_ref().ok_or_else(|| {
                ctx.err(
                    img.span(),
                    format!("{field}.media_type"),
                    "inline `data` needs its `media_type`",
                )
            })?;
            let media_type = non_empty(ctx, media_type, &format!("{field}.media_type"))?;
            if let Err(e) = base64::engine::general_purpose::STANDARD.decode(data.get_ref()) {
                return Err(ctx.err(
                    data.span(),
                    format!("{field}.data"),
                    format!("not standard base64: {e}"),
                ));
            }
            Ok(PromptImage {
                media_type,
                data_base64: data.get_ref().clone(),
            })
        }
        _ if raw.data.is_some() => Err(ctx.err(
            img.span(),
            field,
            "an image needs exactly one of `fixture`, `file` or `data`",
        )),
        (Some(name), None) => {
            if let Some(mt) = &raw.media_type {
                return Err(ctx.err(
                    mt.span(),
                    format!("{field}.media_type"),
                    "a fixture has its own media type",
                ));
            }
            fixture_image(name.get_ref()).ok_or_else(|| {
                ctx.err(
                    name.span(),
                    format!("{field}.fixture"),
                    format!(
                        "unknown fixture `{}` (known: {})",
                        name.get_ref(),
                        FIXTURE_NAMES.join(", ")
                    ),
                )
            })
        }
        (None, Some(file)) => {
            let base = ctx.file.parent().unwrap_or(Path::new("."));
            let rel = Path::new(file.get_ref());
            if rel.is_absolute()
                || rel
                    .components()
                    .any(|c| matches!(c, std::path::Component::ParentDir))
            {
                return Err(ctx.err(
                    file.span(),
                    format!("{field}.file"),
                    "must be a relative path inside the scenarios directory (e.g. fixtures/x.png)",
                ));
            }
            let path = base.join(rel);
            let media_type = match &raw.media_type {
                Some(mt) => non_empty(ctx, mt, &format!("{field}.media_type"))?,
                None => media_type_for(&path).map(str::to_owned).ok_or_else(|| {
                    ctx.err(
                        file.span(),
                        format!("{field}.file"),
                        "cannot tell the media type from the extension; add `media_type`",
                    )
                })?,
            };
            let bytes = std::fs::read(&path).map_err(|e| {
                ctx.err(
                    file.span(),
                    format!("{field}.file"),
                    format!("cannot read {}: {e}", path.display()),
                )
            })?;
            Ok(PromptImage {
                media_type,
                data_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
            })
        }
        _ => Err(ctx.err(
            img.span(),
            field,
            "an image needs exactly one of `fixture`, `file` or `data`",
        )),
    }
}
