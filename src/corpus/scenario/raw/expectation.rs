//! Validation of `[[expect]]` entries.

use super::*;

pub(super) fn expectation(ctx: &Ctx, e: &Spanned<RawExpect>, i: usize) -> R<Expectation> {
    let raw = e.get_ref();
    let f = |name: &str| format!("expect[{i}].{name}");
    let kind = *raw.kind.get_ref();
    let filter_ok: &[(&str, bool, &[ExpectKind])] = &[
        (
            "name",
            raw.name.is_some(),
            &[ExpectKind::ToolUse, ExpectKind::CanUseTool],
        ),
        ("tool", raw.tool.is_some(), &[ExpectKind::ToolResult]),
        (
            "subtype",
            raw.subtype.is_some(),
            &[ExpectKind::Result, ExpectKind::StreamEvent],
        ),
        (
            "is_error",
            raw.is_error.is_some(),
            &[ExpectKind::ToolResult, ExpectKind::Result],
        ),
        (
            "has_image",
            raw.has_image.is_some(),
            &[ExpectKind::ToolResult, ExpectKind::UserEcho],
        ),
        (
            "image_or_marker",
            raw.image_or_marker.is_some(),
            &[ExpectKind::ToolResult],
        ),
    ];
    for (key, present, kinds) in filter_ok {
        if *present && !kinds.contains(&kind) {
            let span = match *key {
                "name" => raw.name.as_ref().map(|v| v.span()),
                "tool" => raw.tool.as_ref().map(|v| v.span()),
                "subtype" => raw.subtype.as_ref().map(|v| v.span()),
                "is_error" => raw.is_error.as_ref().map(|v| v.span()),
                "image_or_marker" => raw.image_or_marker.as_ref().map(|v| v.span()),
                _ => raw.has_image.as_ref().map(|v| v.span()),
            }
            .unwrap_or(e.span());
            let names: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
            return Err(ctx.err(
                span,
                f(key),
                format!(
                    "`{key}` applies to kind {} only, not `{}`",
                    names.join(" / "),
                    kind.as_str()
                ),
            ));
        }
    }
    let count = match (&raw.count, &raw.min, &raw.max) {
        (Some(c), None, None) => CountRule::Exactly(*c.get_ref()),
        (Some(c), _, _) => {
            return Err(ctx.err(
                c.span(),
                f("count"),
                "use either `count` or `min`/`max`, not both",
            ));
        }
        (None, None, None) => CountRule::Range {
            min: Some(1),
            max: None,
        },
        (None, min, max) => {
            let (min, max) = (
                min.as_ref().map(|v| *v.get_ref()),
                max.as_ref().map(|v| *v.get_ref()),
            );
            if let (Some(a), Some(b)) = (min, max)
                && a > b
            {
                return Err(ctx.err(
                    e.span(),
                    f("min"),
                    format!("min {a} is greater than max {b}"),
                ));
            }
            CountRule::Range { min, max }
        }
    };
    let text_opt = |v: &Option<Spanned<String>>, key: &str| -> R<Option<String>> {
        v.as_ref().map(|v| non_empty(ctx, v, &f(key))).transpose()
    };
    Ok(Expectation {
        kind,
        name: text_opt(&raw.name, "name")?,
        tool: text_opt(&raw.tool, "tool")?,
        subtype: text_opt(&raw.subtype, "subtype")?,
        count,
        is_error: raw.is_error.as_ref().map(|v| *v.get_ref()),
        has_image: raw.has_image.as_ref().map(|v| *v.get_ref()),
        image_or_marker: raw.image_or_marker.as_ref().map(|v| *v.get_ref()),
        no_base64_in_text: raw.no_base64_in_text.as_ref().map(|v| *v.get_ref()),
        text_contains: text_opt(&raw.text_contains, "text_contains")?,
        with_text: text_opt(&raw.with_text, "with_text")?,
        why: non_empty(ctx, &raw.why, &f("why"))?,
        line: line_col(ctx.src, e.span().start).0,
    })
}
