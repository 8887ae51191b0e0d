//! The golden diff as people read it: a unified diff whose changed lines
//! emphasise the changed part (as insta renders), and for a changed one-line
//! JSON frame a structural summary of which keys changed, since a frame of
//! 300-2,000 characters hides a one-field change from the eye. Styling is
//! ANSI escapes; callers that print plain text strip them (`anstream`).
//! [`first_difference`] is the one-line form a verdict quotes (bisect and
//! `update` quote it for panel text too).

use std::fmt::Write as _;

use anstyle::{AnsiColor, Effects, Style};
use serde_json::Value;
use similar::{ChangeTag, DiffOp, TextDiff};
use similar::{InlineChangeMode, InlineChangeOptions};
use std::time::{Duration, Instant};

/// Lines of context around each change.
const CONTEXT: usize = 3;
/// A diff longer than this many lines is cut (the first change is what matters).
const MAX_DIFF_LINES: usize = 120;
/// Time for the character-level emphasis of one hunk (long frames past it
/// show as whole changed lines).
const INLINE_BUDGET: Duration = Duration::from_millis(200);
/// Key paths listed per changed frame before "and N more".
const MAX_KEYS: usize = 8;

const DELETE: Style = AnsiColor::Red.on_default();
const INSERT: Style = AnsiColor::Green.on_default();
const HUNK: Style = AnsiColor::Cyan.on_default();
const NOTE: Style = AnsiColor::Yellow.on_default();

/// The unified diff of `golden` -> `replay` (`-` golden, `+` replay), with
/// ANSI styling when `styled` and a `~ keys:` line under each changed JSON
/// frame pair either way.
pub fn render(golden: &str, replay: &str, styled: bool) -> String {
    render_from(golden, replay, 0, styled)
}

/// [`render`] of two texts that start at 0-based line `from` of the whole
/// (a window of both around their first difference): the hunk headers count
/// lines of the whole.
pub fn render_from(golden: &str, replay: &str, from: usize, styled: bool) -> String {
    let diff = TextDiff::from_lines(golden, replay);
    let old: Vec<&str> = golden.lines().collect();
    let new: Vec<&str> = replay.lines().collect();
    let paint = |style: Style, text: &str| {
        if styled {
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_string()
        }
    };
    // JSON frames have no spaces: words would be whole frames
    let mut options = InlineChangeOptions::new();
    options.mode(InlineChangeMode::Chars).semantic_cleanup(true);
    let mut lines: Vec<String> = vec![paint(HUNK, "--- golden\n+++ replay")];
    for group in diff.grouped_ops(CONTEXT) {
        lines.push(paint(HUNK, &hunk_header(&group, from)));
        for op in &group {
            let deadline = Instant::now() + INLINE_BUDGET;
            for change in
                diff.iter_inline_changes_with_options_deadline(op, options, Some(deadline))
            {
                let (sign, base) = match change.tag() {
                    ChangeTag::Delete => ('-', Some(DELETE)),
                    ChangeTag::Insert => ('+', Some(INSERT)),
                    ChangeTag::Equal => (' ', None),
                };
                let mut line = String::new();
                line.push_str(&match base {
                    Some(style) => paint(style, &sign.to_string()),
                    None => sign.to_string(),
                });
                for (emphasised, text) in change.iter_strings_lossy() {
                    let text = text.trim_end_matches(['\n', '\r']);
                    line.push_str(&match base {
                        Some(style) if emphasised => {
                            paint(style.effects(Effects::BOLD | Effects::UNDERLINE), text)
                        }
                        Some(style) => paint(style.dimmed(), text),
                        None => text.to_string(),
                    });
                }
                lines.push(line);
            }
            if let DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } = *op
            {
                let pairs = old[old_index..old_index + old_len]
                    .iter()
                    .zip(&new[new_index..new_index + new_len]);
                for (a, b) in pairs {
                    if let Some(summary) = frame_change(a, b) {
                        lines.push(paint(NOTE, &format!("~ keys: {summary}")));
                    }
                }
            }
        }
    }
    let mut out = String::new();
    for l in lines.iter().take(MAX_DIFF_LINES) {
        let _ = writeln!(out, "{l}");
    }
    if lines.len() > MAX_DIFF_LINES {
        let _ = writeln!(
            out,
            "... ({} more diff lines)",
            lines.len() - MAX_DIFF_LINES
        );
    }
    out
}

/// A unified diff hunk header (`@@ -a,b +c,d @@`) of `ops`, its lines
/// counted from line `from` of the whole.
fn hunk_header(ops: &[DiffOp], from: usize) -> String {
    let range = |start: usize, end: usize| {
        let len = end.saturating_sub(start);
        match len {
            1 => format!("{}", from + start + 1),
            // an empty range begins at the line just before it
            0 => format!("{},0", from + start),
            _ => format!("{},{len}", from + start + 1),
        }
    };
    let (first, last) = (ops[0], ops[ops.len() - 1]);
    format!(
        "@@ -{} +{} @@",
        range(first.old_range().start, last.old_range().end),
        range(first.new_range().start, last.new_range().end)
    )
}

/// For two transcript lines `<label> <json>` with the same label: which key
/// paths changed, were added or removed (`None` when either is no JSON
/// frame, or nothing structural differs).
pub fn frame_change(old: &str, new: &str) -> Option<String> {
    let (label_a, a) = old.split_once(' ')?;
    let (label_b, b) = new.split_once(' ')?;
    if label_a != label_b {
        return None;
    }
    let a: Value = serde_json::from_str(a).ok().filter(Value::is_object)?;
    let b: Value = serde_json::from_str(b).ok().filter(Value::is_object)?;
    let mut changes = Vec::new();
    key_changes(&a, &b, String::new(), &mut changes);
    if changes.is_empty() {
        return None;
    }
    let more = changes.len().saturating_sub(MAX_KEYS);
    changes.truncate(MAX_KEYS);
    let mut s = changes.join(", ");
    if more > 0 {
        let _ = write!(s, " and {more} more");
    }
    Some(s)
}

/// `changed /p`, `added /p`, `removed /p` for every differing leaf or
/// container, as JSON pointers.
fn key_changes(a: &Value, b: &Value, path: String, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                let p = format!("{path}/{}", k.replace('~', "~0").replace('/', "~1"));
                match y.get(k) {
                    Some(vb) => key_changes(va, vb, p, out),
                    None => out.push(format!("removed {p}")),
                }
            }
            for k in y.keys().filter(|k| !x.contains_key(*k)) {
                out.push(format!(
                    "added {path}/{}",
                    k.replace('~', "~0").replace('/', "~1")
                ));
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                key_changes(va, vb, format!("{path}/{i}"), out);
            }
            for i in y.len()..x.len() {
                out.push(format!("removed {path}/{i}"));
            }
            for i in x.len()..y.len() {
                out.push(format!("added {path}/{i}"));
            }
        }
        _ if a != b => out.push(format!(
            "changed {}",
            if path.is_empty() { "/" } else { &path }
        )),
        _ => {}
    }
}

/// The first line that differs between two texts, old then new, each cut
/// to a window around where they part (long JSON lines share long prefixes).
pub fn first_difference(old: &str, new: &str) -> String {
    let (mut a, mut b) = (old.trim_end().lines(), new.trim_end().lines());
    loop {
        match (a.next(), b.next()) {
            (None, None) => return "(only trailing whitespace)".into(),
            (x, y) if x == y => continue,
            (x, y) => return lines_differ(x, y),
        }
    }
}

/// [`first_difference`] of the first differing lines themselves, old then
/// new (`None`: that side had ended).
pub fn lines_differ(x: Option<&str>, y: Option<&str>) -> String {
    const BEFORE: usize = 40;
    const AFTER: usize = 100;
    let window = |l: Option<&str>, at: usize| match l {
        None => "(nothing)".to_string(),
        Some(l) => {
            let mut from = at.saturating_sub(BEFORE).min(l.len());
            while !l.is_char_boundary(from) {
                from -= 1;
            }
            let mut to = (at + AFTER).min(l.len());
            while !l.is_char_boundary(to) {
                to += 1;
            }
            let pre = if from > 0 { "…" } else { "" };
            let post = if to < l.len() { "…" } else { "" };
            format!("`{pre}{}{post}`", &l[from..to])
        }
    };
    let at = match (x, y) {
        (Some(x), Some(y)) => x.bytes().zip(y.bytes()).take_while(|(p, q)| p == q).count(),
        _ => 0,
    };
    format!("{} became {}", window(x, at), window(y, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_difference_names_both_lines() {
        assert_eq!(first_difference("a\nb\nc\n", "a\nB\nc"), "`b` became `B`");
        assert_eq!(first_difference("a\n", "a\nb"), "(nothing) became `b`");
        let (old, new) = (
            format!("{}x{}", "p".repeat(300), "s".repeat(300)),
            format!("{}y{}", "p".repeat(300), "s".repeat(300)),
        );
        let d = first_difference(&old, &new);
        assert!(
            d.contains(&format!("`…{}x{}…`", "p".repeat(40), "s".repeat(99))),
            "{d}"
        );
    }

    #[test]
    fn a_changed_json_frame_names_its_changed_added_and_removed_keys() {
        let old = r#"bridge>panel {"type":"result","usage":{"in":1},"errors":["x"],"gone":1}"#;
        let new =
            r#"bridge>panel {"type":"result","usage":{"in":2},"errors":["x","y"],"new":true}"#;
        assert_eq!(
            frame_change(old, new).as_deref(),
            Some("changed /usage/in, added /errors/1, removed /gone, added /new")
        );
        assert_eq!(frame_change("panel> a b", "panel> a c"), None);
        assert_eq!(
            frame_change(r#"a> {"x":1}"#, r#"b> {"x":2}"#),
            None,
            "different labels are different events"
        );
    }

    #[test]
    fn the_diff_emphasises_the_changed_part_and_summarises_frames() {
        let golden = "panel> a\nbridge>panel {\"type\":\"x\",\"n\":1}\nend\n";
        let replay = "panel> a\nbridge>panel {\"type\":\"x\",\"n\":2}\nend\n";
        let plain = render(golden, replay, false);
        assert!(
            plain.contains("-bridge>panel {\"type\":\"x\",\"n\":1}\n+bridge>panel {\"type\":\"x\",\"n\":2}\n~ keys: changed /n\n"),
            "{plain}"
        );
        let styled = render(golden, replay, true);
        let bold_red = DELETE
            .effects(Effects::BOLD | Effects::UNDERLINE)
            .render()
            .to_string();
        assert!(styled.contains(&format!("{bold_red}1")), "{styled:?}");
        assert_eq!(anstream::adapter::strip_str(&styled).to_string(), plain);
    }
}
