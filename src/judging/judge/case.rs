//! The judged replay of one recording ([`Case`]), the [`Status`]es that
//! apply to it (what `check` counts) and the [`Verdict`] it is as evidence
//! about the bridge (what bisect and `replay --bisect-exit` read).

use std::path::PathBuf;

use super::golden::{Comparison, DiffSides, RecordingId};
use super::invariants::Violation;
use super::known_limitations::{self, Limitation};
use super::live::Replayed;
use super::transcript_text::TranscriptText;
use crate::corpus::recording::{Outcome, Trailer};
use crate::judging::acp_schema::RecordingConformance;
use crate::judging::contract::Conformance;
use crate::judging::expect::Failure;

/// What became of one recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    Pass,
    /// The recording or its scenario could not be read, or the recorded
    /// run did not end `ok`.
    Error,
    GoldenMissing,
    GoldenDiff,
    ExpectationFailed,
    Divergence,
    /// A bridge line lacks a key Claude Code always sends (`contracts/`).
    ContractBroken,
    /// A panel line breaks an output-side invariant (`judge::invariants`).
    InvariantBroken,
    /// Exactly the expectations a known-limitations entry lists failed.
    KnownLimitation,
    /// A listed expectation passes now: the entry must go.
    LimitationNoLongerHolds,
    /// The bridge sent the agent a frame the ACP schema rejects.
    InvalidAcpFrame,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Error => "error",
            Status::GoldenMissing => "golden missing",
            Status::GoldenDiff => "golden diff",
            Status::ExpectationFailed => "expectation failed",
            Status::Divergence => "divergence",
            Status::ContractBroken => "contract broken",
            Status::InvariantBroken => "invariant broken",
            Status::KnownLimitation => "known limitation",
            Status::LimitationNoLongerHolds => "known limitation no longer holds",
            Status::InvalidAcpFrame => "invalid ACP frame",
        }
    }
}

/// The judged replay of one recording.
#[derive(Debug, Clone)]
pub struct Case {
    pub path: PathBuf,
    pub id: RecordingId,
    pub synthetic: bool,
    /// The recorded run's trailer (`None`: no trailer, or unreadable):
    /// how it ended and how long it took.
    pub trailer: Option<Trailer>,
    /// Every reason the case could not be judged as a replay (unreadable, a
    /// run that did not end `ok`, an unreadable contract or known-limitations
    /// file), in the order found; none hides another.
    pub errors: Vec<String>,
    /// The corpus is broken under this case (a blob of its store missing,
    /// unreadable or corrupt): a tool error, exit 2, not a regression.
    pub corpus_error: bool,
    pub replay: Option<Replayed>,
    /// The rendered, normalised transcript (what the golden holds).
    pub transcript: TranscriptText,
    pub golden: Option<Comparison>,
    /// What a golden difference is explained from (`None`: no difference,
    /// or no readable golden).
    pub golden_diff: Option<DiffSides>,
    pub failures: Vec<Failure>,
    pub divergences: usize,
    /// Every output-side invariant a panel line breaks.
    pub invariants: Vec<Violation>,
    /// Every bridge line checked against the stream-json contract (when one was derived).
    pub contract: Option<Conformance>,
    /// The known-limitations entry covering this recording, if any.
    pub limitation: Option<Limitation>,
    /// The scenario file changed since the recording was made (a re-record is due).
    pub stale_scenario: bool,
    /// Its ACP frames against the ACP schema (`None`: not read that far).
    pub acp: Option<RecordingConformance>,
}

impl Case {
    /// How the recorded run ended (`None`: no trailer, or unreadable).
    pub fn outcome(&self) -> Option<Outcome> {
        self.trailer.as_ref().map(|t| t.outcome)
    }

    /// The case's errors as one text (one per line), `None` when it has none.
    pub fn error(&self) -> Option<String> {
        (!self.errors.is_empty()).then(|| self.errors.join("\n"))
    }

    /// Every status that applies, `[Pass]` when none does.
    pub fn statuses(&self) -> Vec<Status> {
        let mut s = Vec::new();
        if !self.errors.is_empty() {
            s.push(Status::Error);
        }
        match self.golden {
            Some(Comparison::Missing) => s.push(Status::GoldenMissing),
            Some(Comparison::Differs(_)) => s.push(Status::GoldenDiff),
            _ => {}
        }
        match &self.limitation {
            None => {
                if !self.failures.is_empty() {
                    s.push(Status::ExpectationFailed);
                }
                if !self.invariants.is_empty() {
                    s.push(Status::InvariantBroken);
                }
            }
            Some(l) => {
                let c = self.limitation_comparison(l);
                let invariant = |u: &String| u.starts_with(super::invariants::PREFIX);
                if c.unlisted.iter().any(|u| !invariant(u)) {
                    s.push(Status::ExpectationFailed);
                }
                if c.unlisted.iter().any(invariant) {
                    s.push(Status::InvariantBroken);
                }
                if !c.now_passing.is_empty() {
                    s.push(Status::LimitationNoLongerHolds);
                }
                if c.holds() {
                    s.push(Status::KnownLimitation);
                }
            }
        }
        if self.divergences > 0 {
            s.push(Status::Divergence);
        }
        if self.contract.as_ref().is_some_and(Conformance::fails) {
            s.push(Status::ContractBroken);
        }
        if self
            .acp
            .as_ref()
            .is_some_and(|a| a.bridge.as_ref().is_some_and(|b| b.invalid > 0))
        {
            s.push(Status::InvalidAcpFrame);
        }
        if s.is_empty() {
            s.push(Status::Pass);
        }
        s
    }

    /// How the case's failures (expectations and invariants) compare with
    /// its known-limitations entry.
    pub fn limitation_comparison(&self, l: &Limitation) -> known_limitations::Comparison {
        let names: Vec<String> = self.invariants.iter().map(Violation::name).collect();
        known_limitations::compare_names(
            l,
            self.failures
                .iter()
                .map(known_limitations::expectation_name)
                .chain(names.iter().map(String::as_str)),
        )
    }

    /// The case without what only a failing case's report reads (the
    /// replay, transcript and golden diff) when it passed: what `check`
    /// keeps of each recording, so a large corpus is never held whole.
    pub fn lightened(mut self) -> Case {
        if self.passed() {
            self.replay = None;
            self.transcript = TranscriptText::default();
            self.golden_diff = None;
        }
        self
    }

    /// Passing, or failing exactly as a known-limitations entry says.
    pub fn passed(&self) -> bool {
        matches!(
            self.statuses().as_slice(),
            [Status::Pass] | [Status::KnownLimitation]
        )
    }

    /// The case as evidence about the bridge and this agent version, for
    /// bisection: untestable when it could not be judged, is synthetic, or the recorded run
    /// did not end `ok`; else bad on a divergence, an expectation failure no
    /// known limitation lists, a golden difference or a broken contract
    /// line; else good. A missing golden is no evidence (bisect records
    /// versions that have none), nor is a limitation that no longer holds
    /// (the agent got better).
    pub fn verdict(&self) -> Verdict {
        if let Some(e) = &self.error() {
            return Verdict::Untestable(one_line(e));
        }
        if self.synthetic {
            // not made by `record` against a real agent: no evidence either way
            return Verdict::Untestable("the recording is synthetic".into());
        }
        match self.outcome() {
            Some(Outcome::Ok) => {}
            Some(other) => {
                return Verdict::Untestable(format!("the recording ended {}", other.as_str()));
            }
            None => return Verdict::Untestable("the recording is truncated".into()),
        }
        let statuses = self.statuses();
        if let Some(d) = self.replay.as_ref().and_then(|r| r.divergences().next()) {
            return Verdict::Bad(format!(
                "the bridge diverged from the recorded client: {}",
                d.headline()
            ));
        }
        if statuses.contains(&Status::ExpectationFailed) {
            let unlisted = |f: &&Failure| {
                self.limitation.as_ref().is_none_or(|l| {
                    !l.failing
                        .iter()
                        .any(|x| x.trim() == known_limitations::expectation_name(f))
                })
            };
            if let Some(f) = self.failures.iter().find(unlisted) {
                return Verdict::Bad(format!("expectation failed: {}", one_line(&f.to_string())));
            }
        }
        if statuses.contains(&Status::InvariantBroken) {
            let unlisted = |v: &&Violation| {
                self.limitation
                    .as_ref()
                    .is_none_or(|l| !l.failing.iter().any(|x| x.trim() == v.name()))
            };
            if let Some(v) = self.invariants.iter().find(unlisted) {
                return Verdict::Bad(format!("invariant broken: {}", one_line(&v.to_string())));
            }
        }
        if statuses.contains(&Status::GoldenDiff) {
            return Verdict::Bad(format!(
                "differs from its golden {}: {}",
                self.id.snapshot_name(),
                match &self.golden_diff {
                    Some(d) => d.first_difference(),
                    None => "unreadable golden".into(),
                }
            ));
        }
        if statuses.contains(&Status::ContractBroken) {
            let why = self
                .contract
                .as_ref()
                .map(Conformance::render)
                .unwrap_or_default();
            return Verdict::Bad(format!(
                "a bridge line breaks the stream-json contract: {}",
                one_line(why.lines().next().unwrap_or(""))
            ));
        }
        if let Some(first) = self
            .acp
            .as_ref()
            .and_then(RecordingConformance::bridge_violations)
            .and_then(|v| v.into_iter().next())
        {
            return Verdict::Bad(format!(
                "the bridge sent a frame the ACP schema rejects: {}",
                one_line(&first)
            ));
        }
        Verdict::Good
    }
}

/// What one recording says about the bridge with one agent version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Good,
    Bad(String),
    Untestable(String),
}

impl Verdict {
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Good => "good",
            Verdict::Bad(_) => "bad",
            Verdict::Untestable(_) => "untestable",
        }
    }

    /// Why it is bad or untestable; empty when good.
    pub fn why(&self) -> &str {
        match self {
            Verdict::Good => "",
            Verdict::Bad(w) | Verdict::Untestable(w) => w,
        }
    }

    /// `good`, `bad: why`, `untestable: why`.
    pub fn describe(&self) -> String {
        if self.why().is_empty() {
            self.label().to_string()
        } else {
            format!("{}: {}", self.label(), self.why())
        }
    }

    /// The exit code `git bisect run` reads: 0 good, 1 bad, 125 untestable.
    pub fn exit_code(&self) -> u8 {
        match self {
            Verdict::Good => 0,
            Verdict::Bad(_) => 1,
            Verdict::Untestable(_) => 125,
        }
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod invalid_acp_frame_tests {
    use super::*;
    use crate::judging::acp_schema::{Classifier, Sender, Tally};
    use crate::judging::judge::Corpus;
    use std::path::Path;

    #[test]
    fn a_bridge_frame_the_acp_schema_rejects_fails_the_case_as_invalid_acp_frame() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let corpus = Corpus::at(root);
        let mut case =
            corpus.judge(&root.join("recordings/claude-agent-acp/0.23.1/text-only.jsonl"));
        let acp = case.acp.as_mut().expect("the recording was checked");
        // the agent's `used: null` is reported, never failed
        assert!(acp.agent.invalid > 0);
        assert_eq!(acp.bridge.as_ref().map(|b| b.invalid), Some(0));
        assert_eq!(case.statuses(), [Status::Pass]);

        let schema =
            crate::judging::acp_schema::AcpSchema::get().expect("the vendored schema compiles");
        let mut bridge = Tally::default();
        bridge.add(&Classifier::default().check(
            schema,
            Sender::Client,
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#,
        ));
        case.acp.as_mut().expect("checked").bridge = Some(bridge);
        assert_eq!(case.statuses(), [Status::InvalidAcpFrame]);
        let Verdict::Bad(why) = case.verdict() else {
            panic!("expected bad, got {:?}", case.verdict());
        };
        assert!(why.contains("initialize at /params"), "{why}");
        assert!(
            case.report().contains("ACP schema rejects"),
            "{}",
            case.report()
        );
    }
}
