//! A judged corpus for people and CI: the cases in semver order, a summary
//! that counts every verdict kind separately, and the renderings `check`
//! and `report` write (a table, JSON, JUnit XML, Markdown, the HTML page).
//! Rendering only: the verdicts themselves come from `judge`.

pub mod html;
pub mod junit;

use std::cmp::Ordering;
use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};
use serde_json::{Value, json};

use crate::judging::judge::{Case, Status};

/// Versions in semver order (text order for what is no semver, after them).
pub fn version_order(a: &str, b: &str) -> Ordering {
    match (semver::Version::parse(a), semver::Version::parse(b)) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Err(_), Err(_)) => a.cmp(b),
    }
}

/// Sorts by agent, version (semver), scenario.
pub fn sort(cases: &mut [Case]) {
    cases.sort_by(|a, b| {
        a.id.agent
            .cmp(&b.id.agent)
            .then_with(|| version_order(&a.id.version, &b.id.version))
            .then_with(|| a.id.scenario.cmp(&b.id.scenario))
    });
}

/// Every verdict kind counted on its own: a case with two failure kinds
/// counts under both, and once in `failed`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    pub recordings: usize,
    pub passed: usize,
    pub failed: usize,
    pub pass: usize,
    pub known_limitation: usize,
    pub no_golden: usize,
    pub stale_scenario: usize,
    pub error: usize,
    pub golden_diff: usize,
    pub expectation_failed: usize,
    pub divergence: usize,
    pub contract_broken: usize,
    pub invariant_broken: usize,
    pub limitation_no_longer_holds: usize,
    pub invalid_acp_frame: usize,
}

impl Summary {
    pub fn of(cases: &[Case]) -> Summary {
        let mut s = Summary {
            recordings: cases.len(),
            ..Summary::default()
        };
        for c in cases {
            if c.passed() {
                s.passed += 1;
            } else {
                s.failed += 1;
            }
            s.stale_scenario += usize::from(c.stale_scenario);
            for status in c.statuses() {
                *match status {
                    Status::Pass => &mut s.pass,
                    Status::KnownLimitation => &mut s.known_limitation,
                    Status::GoldenMissing => &mut s.no_golden,
                    Status::Error => &mut s.error,
                    Status::GoldenDiff => &mut s.golden_diff,
                    Status::ExpectationFailed => &mut s.expectation_failed,
                    Status::Divergence => &mut s.divergence,
                    Status::ContractBroken => &mut s.contract_broken,
                    Status::InvariantBroken => &mut s.invariant_broken,
                    Status::LimitationNoLongerHolds => &mut s.limitation_no_longer_holds,
                    Status::InvalidAcpFrame => &mut s.invalid_acp_frame,
                } += 1;
            }
        }
        s
    }

    /// `N recording(s): a pass, b known limitation; c failed (x golden diff, ...); d stale scenario`.
    pub fn line(&self) -> String {
        let mut s = format!(
            "{} recording(s): {} pass, {} known limitation",
            self.recordings, self.pass, self.known_limitation
        );
        let kinds: Vec<String> = [
            (self.no_golden, "no golden"),
            (self.error, "error"),
            (self.golden_diff, "golden diff"),
            (self.expectation_failed, "expectation failed"),
            (self.divergence, "divergence"),
            (self.contract_broken, "contract broken"),
            (self.invariant_broken, "invariant broken"),
            (
                self.limitation_no_longer_holds,
                "known limitation no longer holds",
            ),
            (self.invalid_acp_frame, "invalid ACP frame"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        let _ = write!(s, "; {} failed", self.failed);
        if !kinds.is_empty() {
            let _ = write!(s, " ({})", kinds.join(", "));
        }
        if self.stale_scenario > 0 {
            let _ = write!(
                s,
                "; {} recorded from an older scenario file (re-record them: `record --agent <agent>@<version> --all --mode stale`; an imported one cannot be: ask for a new tap)",
                self.stale_scenario
            );
        }
        s
    }
}

/// `text` painted with `style` (ANSI escapes; the commands strip them when
/// colour is off).
pub fn paint(style: Style, text: &str) -> String {
    format!("{}{text}{}", style.render(), style.render_reset())
}

/// The colour a status is shown in.
pub fn status_style(status: Status) -> Style {
    match status {
        Status::Pass => AnsiColor::Green.on_default(),
        Status::KnownLimitation => AnsiColor::Cyan.on_default(),
        Status::GoldenMissing => AnsiColor::Yellow.on_default(),
        _ => AnsiColor::Red.on_default().bold(),
    }
}

/// The statuses of a case as text: `golden diff, divergence`.
pub fn status_text(c: &Case) -> String {
    c.statuses()
        .iter()
        .map(|s| s.label())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `check` table: one row per recording, statuses coloured (ANSI).
pub fn table(cases: &[Case]) -> String {
    let headers = ["agent", "version", "scenario", "status"];
    let rows: Vec<[String; 4]> = cases
        .iter()
        .map(|c| {
            let scenario = if c.synthetic {
                format!("{} (synthetic)", c.id.scenario)
            } else {
                c.id.scenario.clone()
            };
            [
                c.id.agent.clone(),
                c.id.version.clone(),
                scenario,
                status_text(c),
            ]
        })
        .collect();
    let mut widths = headers.map(str::len);
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[&str]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        padded.join("  ").trim_end().to_string()
    };
    let mut out = String::new();
    let _ = writeln!(out, "{}", line(&headers));
    let rule = widths.map(|w| "-".repeat(w));
    let _ = writeln!(out, "{}", line(&rule.each_ref().map(String::as_str)));
    for (r, c) in rows.iter().zip(cases) {
        let first = line(&[r[0].as_str(), r[1].as_str(), r[2].as_str(), ""]);
        let statuses: Vec<String> = c
            .statuses()
            .iter()
            .map(|s| paint(status_style(*s), s.label()))
            .collect();
        let _ = writeln!(
            out,
            "{:<w$}  {}",
            first,
            statuses.join(", "),
            w = widths[0] + widths[1] + widths[2] + 4
        );
    }
    out
}

/// One case as JSON: its name and parts, statuses, and (unless it passed
/// plainly) the explanation.
pub fn case_json(c: &Case) -> Value {
    let statuses: Vec<&str> = c.statuses().iter().map(|s| s.label()).collect();
    let plain_pass = statuses == ["pass"];
    json!({
        "name": c.id.trial_name(),
        "agent": c.id.agent,
        "version": c.id.version,
        "scenario": c.id.scenario,
        "path": c.path,
        "synthetic": c.synthetic,
        "passed": c.passed(),
        "statuses": statuses,
        "stale_scenario": c.stale_scenario,
        "explanation": if plain_pass { Value::Null } else { Value::String(c.report()) },
    })
}

/// `check --format json`: `{summary, cases, orphan_goldens, profile_errors}`.
pub fn json(cases: &[Case], orphans: &[std::path::PathBuf], profile_errors: &[String]) -> String {
    let doc = json!({
        "summary": Summary::of(cases),
        "cases": cases.iter().map(case_json).collect::<Vec<_>>(),
        "orphan_goldens": orphans,
        "profile_errors": profile_errors,
    });
    serde_json::to_string_pretty(&doc).expect("JSON values serialise") + "\n"
}

/// `check --format markdown`: the table, the summary, and each failure's
/// explanation folded under its name.
pub fn markdown(cases: &[Case]) -> String {
    let mut out = String::from("| agent | version | scenario | status |\n|---|---|---|---|\n");
    for c in cases {
        let status = status_text(c);
        let status = if c.passed() {
            status
        } else {
            format!("**{status}**")
        };
        let _ = writeln!(
            out,
            "| {} | {} | {}{} | {} |",
            c.id.agent,
            c.id.version,
            c.id.scenario,
            if c.synthetic { " (synthetic)" } else { "" },
            status
        );
    }
    let _ = writeln!(out, "\n{}", Summary::of(cases).line());
    for c in cases.iter().filter(|c| !c.passed()) {
        let _ = writeln!(
            out,
            "\n<details><summary>{}</summary>\n\n```text\n{}\n```\n\n</details>",
            c.id.trial_name(),
            c.report().trim_end().replace("```", "'''")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judging::judge::golden::{Comparison, RecordingId};
    use crate::judging::judge::invariants::{NAMES_ARE_IDENTIFIERS, Violation};

    fn broken_case() -> Case {
        Case {
            path: "recordings/a/1.0.0/s.jsonl".into(),
            id: RecordingId {
                agent: "a".into(),
                version: "1.0.0".into(),
                scenario: "s".into(),
            },
            synthetic: false,
            trailer: Some(crate::corpus::recording::Trailer {
                seq: 1,
                ms: 1,
                outcome: crate::corpus::recording::Outcome::Ok,
                exit: Default::default(),
                notes: Vec::new(),
                extra: Default::default(),
            }),
            errors: Vec::new(),
            corpus_error: false,
            replay: None,
            transcript: Default::default(),
            golden: Some(Comparison::Same),
            golden_diff: None,
            failures: Vec::new(),
            divergences: 0,
            invariants: vec![Violation {
                rule: NAMES_ARE_IDENTIFIERS,
                line: 4,
                what: "tool_use name \"Run the tests\" is no identifier".into(),
            }],
            contract: None,
            limitation: None,
            stale_scenario: false,
            acp: None,
        }
    }

    #[test]
    fn a_broken_invariant_is_a_failure_of_its_own_kind_in_every_format() {
        let cases = [broken_case()];
        assert_eq!(cases[0].statuses(), [Status::InvariantBroken]);
        assert!(!cases[0].passed());
        assert!(
            cases[0]
                .verdict()
                .describe()
                .starts_with("bad: invariant broken"),
            "{}",
            cases[0].verdict().describe()
        );
        let summary = Summary::of(&cases);
        assert_eq!((summary.failed, summary.invariant_broken), (1, 1));
        assert!(
            summary.line().contains("1 invariant broken"),
            "{}",
            summary.line()
        );
        let outputs = [
            ("table", table(&cases)),
            ("json", json(&cases, &[], &[])),
            ("markdown", markdown(&cases)),
            ("junit", junit::render(&cases)),
            ("html", html::render(&cases, &html::Extras::default())),
        ];
        for (format, out) in outputs {
            assert!(out.contains("invariant broken"), "{format}: {out}");
            assert!(
                format == "table" || out.contains("names are identifiers"),
                "{format} explains the violation: {out}"
            );
        }
    }
}
