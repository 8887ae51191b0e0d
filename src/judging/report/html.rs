//! The HTML report: one self-contained page (inline style and script, no
//! network, no external assets) with the matrix agent x version x scenario,
//! a colour per verdict. Each cell opens its recording's failing
//! expectations, golden diff (the changed part emphasised), explanation and
//! transcript; each version header opens the drift from the previous
//! recorded version; each agent's matrix notes follow its matrix. Details
//! are sections shown by `:target`, so the page works without script; the
//! script only adds the "failures only" switch.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{Summary, status_text, version_order};
use crate::judging::acp_schema::Tally;
use crate::judging::judge::golden::Comparison;
use crate::judging::judge::{Case, Status};

/// What the page shows besides the cases.
#[derive(Debug, Clone, Default)]
pub struct Extras {
    /// Per agent, per version (not the first): the drift report from the
    /// previous recorded version, as text (Markdown).
    pub drift: BTreeMap<(String, String), String>,
    /// Per agent: its matrix notes (file name, text).
    pub notes: BTreeMap<String, Vec<(String, String)>>,
}

/// The verdict class of a cell (its colour): `pass`, `known`, `nogolden`,
/// `error`, `fail`.
pub fn verdict_class(c: &Case) -> &'static str {
    let statuses = c.statuses();
    match statuses.as_slice() {
        [Status::Pass] => "pass",
        [Status::KnownLimitation] => "known",
        [Status::GoldenMissing] => "nogolden",
        s if s.contains(&Status::Error) => "error",
        _ => "fail",
    }
}

const LEGEND: [(&str, &str); 5] = [
    ("pass", "pass"),
    ("known", "known limitation"),
    ("nogolden", "no golden"),
    ("fail", "failed"),
    ("error", "error"),
];

const STYLE: &str = r#"
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}
h1{font-size:1.4em;margin:0 0 .3em}h2{margin:1.4em 0 .4em}
table.matrix{border-collapse:collapse;margin:.4em 0 1em}
.matrix th,.matrix td{border:1px solid #ccc;padding:0;text-align:center}
.matrix thead th{font-weight:normal;font-size:11px;writing-mode:vertical-rl;transform:rotate(180deg);padding:4px 2px;white-space:nowrap}
.matrix thead th.corner{writing-mode:horizontal-tb;transform:none}
.matrix tbody th{text-align:left;font-weight:normal;padding:2px 8px;white-space:nowrap}
.matrix td a{display:block;width:20px;height:20px;line-height:20px;text-decoration:none;color:#000;font-size:11px}
.matrix td.none{background:#f4f4f4}
.pass{background:#4caf50}.known{background:#64b5f6}.nogolden{background:#ffd54f}.fail{background:#e53935}.error{background:#8e24aa}
.matrix td.fail a,.matrix td.error a{color:#fff;font-weight:bold}
.legend span{display:inline-block;padding:1px 8px;margin-right:6px;border-radius:3px}
.legend .fail,.legend .error{color:#fff}
.detail{display:none;border:2px solid #888;padding:.5em 1em;margin:1em 0;background:#fafafa}
.detail:target{display:block}
pre{white-space:pre-wrap;word-break:break-all;font:12px/1.35 ui-monospace,monospace;background:#fff;border:1px solid #ddd;padding:.5em;max-height:40em;overflow:auto}
.notes pre{max-height:25em}
.del{color:#b71c1c}.ins{color:#1b5e20}.del.em{background:#ffcdd2}.ins.em{background:#c8e6c9}.hunk{color:#00838f}.note{color:#8d6e00}.em{font-weight:bold;text-decoration:underline}.dim{opacity:.75}
body.failures-only .matrix tr.clean{display:none}
"#;

const SCRIPT: &str = r#"
document.getElementById('failures-only').addEventListener('change', function (e) {
  document.body.classList.toggle('failures-only', e.target.checked);
});
document.body.setAttribute('data-script', 'ok');
"#;

/// The page for `cases` (sorted by agent, version, scenario).
pub fn render(cases: &[Case], extras: &Extras) -> String {
    let summary = Summary::of(cases);
    let mut out = String::new();
    out.push_str("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<title>acp-harness report</title>\n");
    let _ = writeln!(out, "<style>{STYLE}</style>\n</head>\n<body>");
    let _ = writeln!(
        out,
        "<h1>acp-harness: the bridge over the recorded corpus</h1>"
    );
    let _ = writeln!(out, "<p class=\"summary\">{}</p>", esc(&summary.line()));
    out.push_str("<p class=\"legend\">");
    for (class, label) in LEGEND {
        let _ = write!(out, "<span class=\"{class}\">{label}</span>");
    }
    out.push_str(
        "<label><input type=\"checkbox\" id=\"failures-only\"> only scenarios with a failure</label></p>\n",
    );
    out.push_str("<p>A cell opens its recording's details; a version header the drift from the previous recorded version.</p>\n");

    let mut agents: Vec<&str> = cases.iter().map(|c| c.id.agent.as_str()).collect();
    agents.dedup();
    for agent in &agents {
        agent_matrix(&mut out, cases, agent, extras);
    }

    for (i, c) in cases.iter().enumerate() {
        let _ = writeln!(
            out,
            "<section class=\"detail\" id=\"case-{i}\">\n<h3>{} <span class=\"{}\">&nbsp;{}&nbsp;</span></h3>",
            esc(&c.id.trial_name()),
            verdict_class(c),
            esc(&status_text(c))
        );
        let _ = writeln!(
            out,
            "<p>recording <code>{}</code></p>",
            esc(&c.path.display().to_string())
        );
        out.push_str("<h4>Failing expectations</h4>\n");
        if c.failures.is_empty() {
            out.push_str("<p>none</p>\n");
        } else {
            let _ = writeln!(
                out,
                "<pre>{}</pre>",
                esc(&c
                    .failures
                    .iter()
                    .map(|f| f.to_string())
                    .collect::<Vec<_>>()
                    .join("\n"))
            );
        }
        out.push_str("<h4>Golden diff</h4>\n");
        match (&c.golden, &c.golden_diff) {
            (Some(Comparison::Same), _) => out.push_str("<p>the golden matches</p>\n"),
            (Some(Comparison::Missing), _) | (None, _) => out.push_str("<p>no golden</p>\n"),
            (Some(Comparison::Differs(text)), d) => {
                let styled = match d {
                    Some(d) => d.explain(true),
                    None => text.clone(),
                };
                let _ = writeln!(out, "<pre>{}</pre>", ansi_to_html(&styled));
            }
        }
        if !c.passed() || c.statuses() == [Status::KnownLimitation] {
            let _ = writeln!(
                out,
                "<h4>Explanation</h4>\n<pre>{}</pre>",
                esc(c.report().trim_end())
            );
        }
        let _ = writeln!(
            out,
            "<h4>Transcript</h4>\n<pre>{}</pre>\n</section>",
            esc(&c.transcript.text())
        );
    }
    for ((agent, version), text) in &extras.drift {
        let _ = writeln!(
            out,
            "<section class=\"detail\" id=\"drift-{}-{}\">\n<pre>{}</pre>\n</section>",
            slug(agent),
            slug(version),
            esc(text)
        );
    }
    let _ = writeln!(out, "<script>{SCRIPT}</script>\n</body>\n</html>");
    out
}

/// One agent's matrix (scenario by version, each cell linking its case's
/// details), its conformance row and its matrix notes.
fn agent_matrix(out: &mut String, cases: &[Case], agent: &str, extras: &Extras) {
    let index_of = |c: &Case| cases.iter().position(|x| std::ptr::eq(x, c)).unwrap_or(0);
    let of_agent: Vec<&Case> = cases.iter().filter(|c| c.id.agent == *agent).collect();
    let mut versions: Vec<&str> = of_agent.iter().map(|c| c.id.version.as_str()).collect();
    versions.sort_by(|a, b| version_order(a, b));
    versions.dedup();
    let mut scenarios: Vec<&str> = of_agent.iter().map(|c| c.id.scenario.as_str()).collect();
    scenarios.sort_unstable();
    scenarios.dedup();
    let _ = writeln!(
        out,
        "<h2 id=\"agent-{}\">{} <small>({} recordings, {} versions)</small></h2>",
        slug(agent),
        esc(agent),
        of_agent.len(),
        versions.len()
    );
    out.push_str(
        "<table class=\"matrix\">\n<thead><tr><th class=\"corner\">scenario \\ version</th>",
    );
    for v in &versions {
        match extras.drift.get(&(agent.to_string(), v.to_string())) {
            Some(_) => {
                let _ = write!(
                    out,
                    "<th><a href=\"#drift-{}-{}\" title=\"drift from the previous recorded version\">{}</a></th>",
                    slug(agent),
                    slug(v),
                    esc(v)
                );
            }
            None => {
                let _ = write!(out, "<th>{}</th>", esc(v));
            }
        }
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for sc in &scenarios {
        let row: Vec<Option<&&Case>> = versions
            .iter()
            .map(|v| {
                of_agent
                    .iter()
                    .find(|c| c.id.version == *v && c.id.scenario == *sc)
            })
            .collect();
        let clean = row.iter().flatten().all(|c| c.passed());
        let _ = write!(
            out,
            "<tr{}><th>{}</th>",
            if clean { " class=\"clean\"" } else { "" },
            esc(sc)
        );
        for cell in row {
            match cell {
                None => out.push_str("<td class=\"none\"></td>"),
                Some(c) => {
                    let class = verdict_class(c);
                    let glyph = match class {
                        "pass" => "✓",
                        "known" => "k",
                        "nogolden" => "?",
                        "error" => "!",
                        _ => "✗",
                    };
                    let _ = write!(
                        out,
                        "<td class=\"cell {class}\" data-case=\"{}\"><a href=\"#case-{}\" title=\"{}: {}\">{glyph}</a></td>",
                        esc(&c.id.trial_name()),
                        index_of(c),
                        esc(&c.id.trial_name()),
                        esc(&status_text(c))
                    );
                }
            }
        }
        out.push_str("</tr>\n");
    }
    conformance_row(out, &of_agent, &versions);
    out.push_str("</tbody>\n</table>\n");
    if let Some(notes) = extras.notes.get(agent) {
        out.push_str("<div class=\"notes\">\n");
        for (name, text) in notes {
            let _ = writeln!(
                out,
                "<details><summary>matrix notes: {}</summary><pre>{}</pre></details>",
                esc(name),
                esc(text)
            );
        }
        out.push_str("</div>\n");
    }
}

/// HTML-escapes text: the XML escaping JUnit uses is valid HTML too.
/// The last row of an agent's matrix: each version's ACP frames against the
/// schema (its recordings summed): a tick when the agent's and the bridge's
/// frames are all valid, else the count of invalid ones; the title says what
/// was counted and which violations.
fn conformance_row(out: &mut String, of_agent: &[&Case], versions: &[&str]) {
    let _ = write!(
        out,
        "<tr class=\"conformance\"><th title=\"frames checked against the ACP v1 schema {} (acp-harness conformance)\">ACP schema</th>",
        esc(crate::judging::acp_schema::schema::version())
    );
    for v in versions {
        let (mut agent, mut bridge) = (Tally::default(), Tally::default());
        for c in of_agent.iter().filter(|c| c.id.version == *v) {
            if let Some(acp) = &c.acp {
                agent.merge(&acp.agent);
                if let Some(b) = &acp.bridge {
                    bridge.merge(b);
                }
            }
        }
        if agent.frames == 0 && bridge.frames == 0 {
            out.push_str("<td class=\"none\"></td>");
            continue;
        }
        let invalid = agent.invalid + bridge.invalid;
        let (class, glyph) = match (bridge.invalid, agent.invalid) {
            (0, 0) => ("pass", "✓".to_string()),
            (0, n) => ("known", n.to_string()),
            (n, _) => ("fail", n.to_string()),
        };
        let mut title = format!(
            "agent: {} frames, {} invalid, {} outside the schema; bridge: {} frames, {} invalid",
            agent.frames, agent.invalid, agent.outside, bridge.frames, bridge.invalid
        );
        for ((method, pointer, message), n) in agent.violations.iter().chain(&bridge.violations) {
            let _ = write!(title, "\n{n} x {method} {pointer}: {message}");
        }
        let _ = write!(
            out,
            "<td class=\"{class}\" data-invalid=\"{invalid}\"><a title=\"{}\">{glyph}</a></td>",
            esc(&title)
        );
    }
    out.push_str("</tr>\n");
}

/// `s` escaped for HTML text and attribute values, without the characters
/// XML 1.0 cannot hold, as the JUnit report drops them.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in super::junit::xml_safe(s).chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// ANSI SGR styling (as the golden diff renders it) as HTML spans: red and
/// green lines, emphasised (bold, underlined) changed parts.
pub fn ansi_to_html(s: &str) -> String {
    let mut out = String::new();
    let (mut colour, mut em, mut dim): (Option<&str>, bool, bool) = (None, false, false);
    for (i, part) in s.split('\x1b').enumerate() {
        let text = if i == 0 {
            part
        } else if let Some(rest) = part.strip_prefix('[')
            && let Some(end) = rest.find('m')
        {
            for code in rest[..end].split(';') {
                match code {
                    "" | "0" => (colour, em, dim) = (None, false, false),
                    "1" | "4" => em = true,
                    "2" => dim = true,
                    "31" => colour = Some("del"),
                    "32" => colour = Some("ins"),
                    "33" => colour = Some("note"),
                    "36" => colour = Some("hunk"),
                    _ => {}
                }
            }
            &rest[end + 1..]
        } else {
            part
        };
        if text.is_empty() {
            continue;
        }
        let mut classes: Vec<&str> = colour.into_iter().collect();
        if em {
            classes.push("em");
        }
        if dim {
            classes.push("dim");
        }
        if classes.is_empty() {
            out.push_str(&esc(text));
        } else {
            let _ = write!(
                out,
                "<span class=\"{}\">{}</span>",
                classes.join(" "),
                esc(text)
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_styling_becomes_spans_and_text_is_escaped() {
        let red = anstyle::AnsiColor::Red.on_default();
        let em = red.effects(anstyle::Effects::BOLD | anstyle::Effects::UNDERLINE);
        let s = format!(
            "{}-a<{}{}b{}\n",
            red.render(),
            red.render_reset(),
            em.render(),
            em.render_reset()
        );
        assert_eq!(
            ansi_to_html(&s),
            "<span class=\"del\">-a&lt;</span><span class=\"del em\">b</span>\n"
        );
    }
}
