//! A case explained for people: what went wrong with one recording (its
//! error, divergences, golden diff, known limitation and broken
//! expectations or contract lines), the text `check` and `replay` print
//! under a failing case.

use std::fmt::Write as _;

use super::case::Case;
use super::golden::{self, Comparison};
use super::known_limitations;

impl Case {
    /// Everything that went wrong, for people: error, divergences, golden
    /// diff, broken expectations.
    pub fn report(&self) -> String {
        self.report_styled(false)
    }

    /// [`Case::report`] with the golden diff in colour (ANSI) when `styled`.
    pub fn report_styled(&self, styled: bool) -> String {
        let mut out = String::new();
        if let Some(e) = &self.error() {
            let _ = writeln!(out, "{e}");
        }
        if let Some(r) = &self.replay {
            for d in r.divergences() {
                let _ = writeln!(out, "divergence: {d}");
            }
        }
        match &self.golden {
            Some(Comparison::Differs(explanation)) => {
                let styled_explanation = match &self.golden_diff {
                    Some(d) if styled => d.explain(true),
                    _ => explanation.clone(),
                };
                let _ = writeln!(
                    out,
                    "golden {} differs from this replay.\n{styled_explanation}",
                    self.golden_name()
                );
            }
            Some(Comparison::Missing) => {
                let _ = writeln!(
                    out,
                    "no golden {} yet: review this transcript and bless it.",
                    self.golden_name()
                );
            }
            _ => {}
        }
        let comparison = self
            .limitation
            .as_ref()
            .map(|l| (l, self.limitation_comparison(l)));
        if let Some((l, c)) = &comparison {
            if !c.now_passing.is_empty() {
                let _ = writeln!(
                    out,
                    "known limitation no longer holds: remove the entry (versions {:?}, scenario {}) from {}: now passing: {}",
                    l.versions,
                    l.scenario,
                    known_limitations::FILE_NAME,
                    c.now_passing.join("; ")
                );
            } else if c.holds() {
                let _ = writeln!(
                    out,
                    "known limitation (versions {:?}): {}",
                    l.versions, l.reason
                );
            }
        }
        for f in &self.failures {
            let listed = comparison.as_ref().is_some_and(|(_, c)| {
                !c.unlisted
                    .iter()
                    .any(|u| u == known_limitations::expectation_name(f))
            });
            if listed {
                let _ = writeln!(out, "(listed as a known limitation) {f}");
            } else {
                let _ = writeln!(out, "{f}");
            }
        }
        for v in &self.invariants {
            let listed = comparison
                .as_ref()
                .is_some_and(|(_, c)| !c.unlisted.iter().any(|u| *u == v.name()));
            if listed {
                let _ = writeln!(out, "(listed as a known limitation) {v}");
            } else {
                let _ = writeln!(out, "invariant broken: {v}");
            }
        }
        if let Some(c) = &self.contract {
            out.push_str(&c.render());
        }
        if let Some(lines) = self.acp.as_ref().and_then(|a| a.bridge_violations()) {
            let _ = writeln!(out, "the bridge sent frames the ACP schema rejects:");
            for line in lines {
                let _ = writeln!(out, "  {line}");
            }
        }
        out
    }

    fn golden_name(&self) -> String {
        format!(
            "{}__{}.snap",
            golden::SNAPSHOT_PREFIX,
            self.id.snapshot_name()
        )
    }
}
