//! JUnit XML as CI systems ingest it (GitLab, Jenkins, GitHub test
//! reporters): one `<testsuite>` per agent, one `<testcase>` per recording
//! named `<agent>/<version>/<scenario>`, a failing case's explanation as its
//! `<failure>` text (an unreadable recording or scenario as `<error>`), and
//! a known limitation that holds as a pass with its reason in `system-out`.

use std::fmt::Write as _;

use crate::judging::judge::{Case, Status};

/// The document for `cases` (sorted as given).
pub fn render(cases: &[Case]) -> String {
    let count = |pick: fn(&Case) -> bool| cases.iter().filter(|c| pick(c)).count();
    let errors = count(is_error);
    let failures = count(|c| !c.passed() && !is_error(c));
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"acp-harness check\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\">",
        cases.len()
    );
    let mut agents: Vec<&str> = cases.iter().map(|c| c.id.agent.as_str()).collect();
    agents.dedup();
    for agent in agents {
        let suite: Vec<&Case> = cases.iter().filter(|c| c.id.agent == agent).collect();
        let errors = suite.iter().filter(|c| is_error(c)).count();
        let failures = suite.iter().filter(|c| !c.passed() && !is_error(c)).count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"0\">",
            escape(agent),
            suite.len()
        );
        for c in suite {
            let _ = write!(
                out,
                "    <testcase name=\"{}\" classname=\"{}\"",
                escape(&c.id.trial_name()),
                escape(&format!("acp-harness.{}", c.id.agent))
            );
            let statuses = c.statuses();
            if c.passed() && statuses != [Status::KnownLimitation] {
                out.push_str("/>\n");
                continue;
            }
            out.push_str(">\n");
            let labels: Vec<&str> = statuses.iter().map(|s| s.label()).collect();
            let text = escape_text(c.report().trim_end());
            if c.passed() {
                let _ = writeln!(out, "      <system-out>{text}</system-out>");
            } else {
                let element = if is_error(c) { "error" } else { "failure" };
                let _ = writeln!(
                    out,
                    "      <{element} message=\"{}\" type=\"{}\">{text}</{element}>",
                    escape(&labels.join(", ")),
                    escape(labels.first().copied().unwrap_or("failure"))
                );
            }
            out.push_str("    </testcase>\n");
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

fn is_error(c: &Case) -> bool {
    c.statuses().contains(&Status::Error)
}

/// XML-escapes an attribute value and drops the characters XML 1.0 cannot hold.
pub fn escape(s: &str) -> String {
    escape_as(s, true)
}

/// [`escape`] for element text, where quotes stay readable.
pub fn escape_text(s: &str) -> String {
    escape_as(s, false)
}

fn escape_as(s: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\'' if attribute => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(ch),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}
