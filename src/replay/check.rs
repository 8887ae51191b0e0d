//! Judging recordings: replay each one, compare with its golden, evaluate the
//! scenario's expectations, and sum it up per agent x version x scenario.
//! Shared by `acp-harness check`, `acp-harness replay`, the test harness and
//! the benchmark, so they all judge the same way.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::golden::{self, RecordingId, Verdict};
use super::known_limitations::{self, Limitation};
use super::replayer::{self, Replay};
use crate::expect::{self, Failure};
use crate::recording::{self, Recording};
use crate::scenario::{self, Scenario};

/// Where the pieces of a corpus live, from the workspace root.
#[derive(Debug, Clone)]
pub struct Corpus {
    pub recordings: PathBuf,
    pub scenarios: PathBuf,
    pub snapshots: PathBuf,
}

impl Corpus {
    /// The repository layout: `recordings/`, `scenarios/`, `tests/snapshots/`.
    pub fn at(root: &Path) -> Corpus {
        Corpus {
            recordings: root.join("recordings"),
            scenarios: root.join("scenarios"),
            snapshots: root.join(golden::SNAPSHOT_DIR),
        }
    }

    /// Every `*.jsonl` under the recordings directory, sorted by path.
    pub fn recordings(&self) -> Result<Vec<PathBuf>, CheckError> {
        list_recordings(&self.recordings)
    }

    /// The id of a recording: from its path under the corpus, else its header.
    pub fn id_of(&self, path: &Path, recording: Option<&Recording>) -> RecordingId {
        if let Some(id) = RecordingId::from_path(&self.recordings, path) {
            return id;
        }
        match recording {
            Some(r) => RecordingId {
                agent: r.header.agent.clone(),
                version: r.header.agent_version().unwrap_or("unknown").to_string(),
                scenario: r.header.scenario.clone(),
            },
            None => RecordingId {
                agent: "?".into(),
                version: "?".into(),
                scenario: path
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .unwrap_or("?")
                    .to_string(),
            },
        }
    }
}

/// Goldens in `snapshot_dir` that belong to none of `ids` (a recording was
/// removed or renamed), sorted by file name.
pub fn orphan_goldens(snapshot_dir: &Path, ids: &[RecordingId]) -> Vec<PathBuf> {
    let wanted: std::collections::HashSet<PathBuf> = ids
        .iter()
        .map(|id| id.snapshot_path(snapshot_dir))
        .collect();
    let Ok(entries) = std::fs::read_dir(snapshot_dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with(&format!("{}__", golden::SNAPSHOT_PREFIX)) && name.ends_with(".snap")
        })
        .filter(|p| !wanted.contains(p))
        .collect();
    out.sort();
    out
}

/// Every `*.jsonl` under `dir` (or `dir` itself if it is a file), sorted.
pub fn list_recordings(dir: &Path) -> Result<Vec<PathBuf>, CheckError> {
    if dir.is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    if !dir.exists() {
        return Err(CheckError::NoSuchPath(dir.to_path_buf()));
    }
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.map_err(|e| CheckError::Walk {
            dir: dir.to_path_buf(),
            message: e.to_string(),
        })?;
        if entry.file_type().is_file()
            && entry.path().extension().is_some_and(|e| e == "jsonl")
            && !crate::contract::is_reference_recording(entry.path())
        {
            out.push(entry.into_path());
        }
    }
    Ok(out)
}

#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("{}: no such file or directory", .0.display())]
    NoSuchPath(PathBuf),
    #[error("{}: cannot list recordings: {message}", dir.display())]
    Walk { dir: PathBuf, message: String },
}

/// What became of one recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    Pass,
    /// The recording or its scenario could not be read.
    Error,
    GoldenMissing,
    GoldenDiff,
    ExpectationFailed,
    Divergence,
    /// A bridge line lacks a key Claude Code always sends (`contracts/`).
    ContractBroken,
    /// Exactly the expectations a known-limitations entry lists failed.
    KnownLimitation,
    /// A listed expectation passes now: the entry must go.
    LimitationNoLongerHolds,
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
            Status::KnownLimitation => "known limitation",
            Status::LimitationNoLongerHolds => "known limitation no longer holds",
        }
    }
}

/// The judged replay of one recording.
#[derive(Debug, Clone)]
pub struct Case {
    pub path: PathBuf,
    pub id: RecordingId,
    pub synthetic: bool,
    /// Why the case could not be replayed at all.
    pub error: Option<String>,
    pub replay: Option<Replay>,
    /// The rendered, normalised transcript (what the golden holds).
    pub transcript: String,
    pub golden: Option<Verdict>,
    pub failures: Vec<Failure>,
    pub divergences: usize,
    /// Every bridge line checked against the stream-json contract (when one was derived).
    pub contract: Option<crate::contract::Report>,
    /// The known-limitations entry covering this recording, if any.
    pub limitation: Option<Limitation>,
}

impl Case {
    /// Every status that applies, `[Pass]` when none does.
    pub fn statuses(&self) -> Vec<Status> {
        let mut s = Vec::new();
        if self.error.is_some() {
            s.push(Status::Error);
        }
        match self.golden {
            Some(Verdict::Missing) => s.push(Status::GoldenMissing),
            Some(Verdict::Differs(_)) => s.push(Status::GoldenDiff),
            _ => {}
        }
        match &self.limitation {
            None if !self.failures.is_empty() => s.push(Status::ExpectationFailed),
            None => {}
            Some(l) => {
                let c = known_limitations::compare(l, &self.failures);
                if !c.unlisted.is_empty() {
                    s.push(Status::ExpectationFailed);
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
        if self
            .contract
            .as_ref()
            .is_some_and(crate::contract::Report::fails)
        {
            s.push(Status::ContractBroken);
        }
        if s.is_empty() {
            s.push(Status::Pass);
        }
        s
    }

    /// Passing, or failing exactly as a known-limitations entry says.
    pub fn passed(&self) -> bool {
        matches!(
            self.statuses().as_slice(),
            [Status::Pass] | [Status::KnownLimitation]
        )
    }

    /// Everything that went wrong, for people: error, divergences, golden
    /// diff, broken expectations.
    pub fn report(&self) -> String {
        let mut out = String::new();
        if let Some(e) = &self.error {
            let _ = writeln!(out, "{e}");
        }
        if let Some(r) = &self.replay {
            for d in r.divergences() {
                let _ = writeln!(out, "divergence: {d}");
            }
        }
        match &self.golden {
            Some(Verdict::Differs(explanation)) => {
                let _ = writeln!(
                    out,
                    "golden {} differs from this replay.\n{explanation}",
                    self.golden_name()
                );
            }
            Some(Verdict::Missing) => {
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
            .map(|l| (l, known_limitations::compare(l, &self.failures)));
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
        if let Some(c) = &self.contract {
            out.push_str(&c.render());
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

/// Replays one recording and judges it against its golden and expectations.
/// Never panics on bad input: an unreadable recording or scenario is an
/// `Error` case naming what was wrong and where.
pub fn judge(corpus: &Corpus, path: &Path) -> Case {
    let mut case = Case {
        path: path.to_path_buf(),
        id: corpus.id_of(path, None),
        synthetic: false,
        error: None,
        replay: None,
        transcript: String::new(),
        golden: None,
        failures: Vec::new(),
        divergences: 0,
        contract: None,
        limitation: None,
    };
    let recording = match recording::read(path) {
        Ok(r) => r,
        Err(e) => {
            case.error = Some(format!("cannot replay: {e}"));
            return case;
        }
    };
    case.id = corpus.id_of(path, Some(&recording));
    case.synthetic = recording.header.synthetic;
    let scenario = match scenario::find(&corpus.scenarios, &recording.header.scenario) {
        Ok(s) => s,
        Err(e) => {
            case.error = Some(format!(
                "cannot replay {}: its scenario: {e}",
                path.display()
            ));
            return case;
        }
    };
    let replay = replay_with(&recording, &scenario);
    case.transcript = render(path, &recording, &replay);
    case.divergences = replay.divergences().count();
    case.failures = expect::evaluate(&scenario.expect, &replay.panel_lines);
    let limitations = corpus
        .recordings
        .join(&case.id.agent)
        .join(known_limitations::FILE_NAME);
    match known_limitations::find(&limitations, &case.id.version, &case.id.scenario) {
        Ok(l) => case.limitation = l,
        Err(e) => case.error = Some(format!("known limitations: {e}")),
    }
    match crate::contract::for_root(corpus.scenarios.parent().unwrap_or(Path::new("."))) {
        Ok(Some(contract)) => case.contract = Some(contract.check(&replay.panel_lines)),
        Ok(None) => {}
        Err(e) => case.error = Some(format!("stream-json contract: {e}")),
    }
    case.golden = Some(
        match golden::read(&case.id.snapshot_path(&corpus.snapshots)) {
            Ok(g) => golden::compare(g.as_deref(), &case.transcript),
            Err(e) => Verdict::Differs(e.to_string()),
        },
    );
    case.replay = Some(replay);
    case
}

/// Replays without judging (the benchmark measures this).
pub fn replay_with(recording: &Recording, scenario: &Scenario) -> Replay {
    replayer::replay(recording, scenario)
}

/// The golden text of a replay: a header naming the recording, then the
/// normalised transcript.
pub fn render(path: &Path, recording: &Recording, replay: &Replay) -> String {
    let h = &recording.header;
    let mut out = format!(
        "# replay of {} (agent {} {}, scenario {}, synthetic: {}, trailer: {})\n",
        file_label(path),
        h.agent,
        h.agent_version().unwrap_or("?"),
        h.scenario,
        h.synthetic,
        match &recording.trailer {
            Some(t) => format!("{:?}", t.outcome).to_lowercase(),
            None => "missing".into(),
        }
    );
    out.push_str(&replay.transcript.render());
    out
}

/// The last three components of a path (`<agent>/<version>/<scenario>.jsonl`),
/// so a golden never holds a machine's absolute path.
fn file_label(path: &Path) -> String {
    let parts: Vec<String> = path
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    parts[parts.len().saturating_sub(3)..].join("/")
}

/// The `check` table: one row per recording.
pub fn table(cases: &[Case]) -> String {
    let headers = ["agent", "version", "scenario", "status"];
    let rows: Vec<[String; 4]> = cases
        .iter()
        .map(|c| {
            let status = c
                .statuses()
                .iter()
                .map(|s| s.label())
                .collect::<Vec<_>>()
                .join(", ");
            let scenario = if c.synthetic {
                format!("{} (synthetic)", c.id.scenario)
            } else {
                c.id.scenario.clone()
            };
            [c.id.agent.clone(), c.id.version.clone(), scenario, status]
        })
        .collect();
    let mut widths = headers.map(str::len);
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |cells: &[&str], out: &mut String| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", padded.join("  ").trim_end());
    };
    line(&headers, &mut out);
    line(
        &widths
            .map(|w| "-".repeat(w))
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        &mut out,
    );
    for r in &rows {
        line(&r.iter().map(String::as_str).collect::<Vec<_>>(), &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goldens_without_a_recording_are_orphans_and_pending_files_are_not_goldens() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "replay__a__1__s.snap",
            "replay__a__1__gone.snap",
            "replay__a__1__s.snap.new",
            "other.snap",
        ] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let ids = [RecordingId {
            agent: "a".into(),
            version: "1".into(),
            scenario: "s".into(),
        }];
        assert_eq!(
            orphan_goldens(dir.path(), &ids),
            [dir.path().join("replay__a__1__gone.snap")]
        );
    }
}
