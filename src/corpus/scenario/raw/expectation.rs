//! Validation of `[[expect]]` entries.

use super::*;

pub(super) fn expectation(ctx: &Ctx, e: &Spanned<RawExpect>, i: usize) -> R<Expectation> {
    let raw = e.get_ref();
    let f = |name: &str| format!("expect[{i}].{name}");
    let kind = *raw.kind.get_ref();
    filters_fit_the_kind(ctx, e, i)?;
    let count = count_rule(ctx, e, i)?;
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

/// A filter's key, its span when present, and the kinds it applies to.
type Filter<'a> = (&'static str, Option<Range<usize>>, &'a [ExpectKind]);

/// Each filter present applies to the expectation's kind: one that cannot
/// is an error naming the kinds it applies to.
fn filters_fit_the_kind(ctx: &Ctx, e: &Spanned<RawExpect>, i: usize) -> R<()> {
    let raw = e.get_ref();
    let kind = *raw.kind.get_ref();
    let filters: [Filter; 6] = [
        (
            "name",
            raw.name.as_ref().map(|v| v.span()),
            &[ExpectKind::ToolUse, ExpectKind::CanUseTool],
        ),
        (
            "tool",
            raw.tool.as_ref().map(|v| v.span()),
            &[ExpectKind::ToolResult],
        ),
        (
            "subtype",
            raw.subtype.as_ref().map(|v| v.span()),
            &[ExpectKind::Result, ExpectKind::StreamEvent],
        ),
        (
            "is_error",
            raw.is_error.as_ref().map(|v| v.span()),
            &[ExpectKind::ToolResult, ExpectKind::Result],
        ),
        (
            "has_image",
            raw.has_image.as_ref().map(|v| v.span()),
            &[ExpectKind::ToolResult, ExpectKind::UserEcho],
        ),
        (
            "image_or_marker",
            raw.image_or_marker.as_ref().map(|v| v.span()),
            &[ExpectKind::ToolResult],
        ),
    ];
    for (key, present, kinds) in filters {
        if let Some(span) = present
            && !kinds.contains(&kind)
        {
            let names: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
            return Err(ctx.err(
                span,
                format!("expect[{i}].{key}"),
                format!(
                    "`{key}` applies to kind {} only, not `{}`",
                    names.join(" / "),
                    kind.as_str()
                ),
            ));
        }
    }
    Ok(())
}

/// How many matches the expectation asks for: `count` exactly, or `min` to
/// `max` (at least one when neither is given).
fn count_rule(ctx: &Ctx, e: &Spanned<RawExpect>, i: usize) -> R<CountRule> {
    let raw = e.get_ref();
    let f = |name: &str| format!("expect[{i}].{name}");
    Ok(match (&raw.count, &raw.min, &raw.max) {
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
    })
}
