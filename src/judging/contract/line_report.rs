//! What the contract check found on a replay's lines.

use std::fmt::{self, Write as _};

/// A key present with a type Claude never sent it with.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeMismatch {
    pub key: String,
    pub expected: Vec<String>,
    pub got: String,
}

/// What one bridge line broke.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LineConformance {
    /// 1-based index among the bridge's panel lines.
    pub line: usize,
    pub kind: String,
    /// Required keys the line lacks (fails the replay).
    pub missing: Vec<String>,
    /// Keys with a type Claude never used (reported, not failing).
    pub mismatched: Vec<TypeMismatch>,
    /// A kind Claude never sent in the recordings (reported, not failing).
    pub unknown_kind: bool,
    /// The line is not JSON at all (fails the replay).
    pub not_json: bool,
}

impl LineConformance {
    pub fn fails(&self) -> bool {
        !self.missing.is_empty() || self.not_json
    }
}

impl fmt::Display for LineConformance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bridge line {} ({}):", self.line, self.kind)?;
        if self.not_json {
            write!(f, " not a JSON object")?;
        }
        if self.unknown_kind {
            write!(f, " a kind Claude never sent in the reference recordings")?;
        }
        if !self.missing.is_empty() {
            write!(f, " missing {}", self.missing.join(", "))?;
        }
        for m in &self.mismatched {
            write!(
                f,
                " {} is {} (Claude: {})",
                m.key,
                m.got,
                m.expected.join("|")
            )?;
        }
        Ok(())
    }
}

/// The contract check of one replay.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Conformance {
    pub lines: Vec<LineConformance>,
    /// Required keys absent but waived (`contracts/waived.toml`).
    pub waived: usize,
}

impl Conformance {
    /// A required key is missing on some line (or a line is not JSON).
    pub fn fails(&self) -> bool {
        self.lines.iter().any(LineConformance::fails)
    }

    /// One line per offending bridge line; failing ones first.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for l in self
            .lines
            .iter()
            .filter(|l| l.fails())
            .chain(self.lines.iter().filter(|l| !l.fails()))
        {
            let _ = writeln!(out, "contract: {l}");
        }
        out
    }
}
