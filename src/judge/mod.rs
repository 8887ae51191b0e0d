//! The judge: one verdict per recording. A [`Corpus`] owns the root and
//! what every judgement reads (scenarios, the stream-json contract with its
//! waivers, each agent's known limitations), loaded once and shared; it
//! replays a recording, compares it with its golden, evaluates the scenario's
//! expectations and the contract, and sums that up as a [`Case`]. `check`,
//! `replay`, `replay --bisect-exit`, `bisect`, `contract compare`, `drift`,
//! the test harness and the benchmark all judge through it, so **a recording
//! is judged the same way wherever it is judged** (a known limitation that
//! holds is a pass for `check` and good for bisect).

pub mod golden;
pub mod golden_diff;
pub mod known_limitations;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use golden::{Comparison, RecordingId};
use known_limitations::{Limitation, Limitations};

use crate::contract::{self, Conformance, Contract};
use crate::expect::{self, Failure};
use crate::recording::{self, Outcome, Recording};
use crate::replay::replayer::{self, Replay};
use crate::scenario::{self, Scenario};

/// A corpus: where recordings, scenarios and goldens live, and what was
/// loaded from it so far. Clones share what was loaded.
#[derive(Clone)]
pub struct Corpus {
    /// The repository root (`contracts/` lives here).
    pub root: PathBuf,
    pub recordings: PathBuf,
    pub scenarios: PathBuf,
    pub snapshots: PathBuf,
    loaded: Arc<Loaded>,
}

/// Everything read once per corpus. Errors are kept as text so every
/// recording that needs the broken piece names it.
#[derive(Default)]
struct Loaded {
    scenarios: Mutex<HashMap<String, Result<Arc<Scenario>, String>>>,
    contract: OnceLock<Result<Option<Arc<Contract>>, String>>,
    limitations: Mutex<HashMap<PathBuf, Result<Arc<Limitations>, String>>>,
}

impl std::fmt::Debug for Corpus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Corpus")
            .field("root", &self.root)
            .field("recordings", &self.recordings)
            .field("scenarios", &self.scenarios)
            .field("snapshots", &self.snapshots)
            .finish_non_exhaustive()
    }
}

impl Corpus {
    /// The repository layout: `recordings/`, `scenarios/`, `tests/snapshots/`
    /// and `contracts/` under `root`.
    pub fn at(root: &Path) -> Corpus {
        Corpus {
            root: root.to_path_buf(),
            recordings: root.join("recordings"),
            scenarios: root.join("scenarios"),
            snapshots: root.join(golden::SNAPSHOT_DIR),
            loaded: Arc::default(),
        }
    }

    /// The same corpus with its recordings (and their known limitations) in `dir`.
    pub fn with_recordings(mut self, dir: &Path) -> Corpus {
        self.recordings = dir.to_path_buf();
        self.loaded = Arc::default();
        self
    }

    /// The same corpus with its goldens in `dir`.
    pub fn with_snapshots(mut self, dir: &Path) -> Corpus {
        self.snapshots = dir.to_path_buf();
        self
    }

    /// Every `*.jsonl` under the recordings directory, sorted by path.
    pub fn recordings(&self) -> Result<Vec<PathBuf>, CheckError> {
        list_recordings(&self.recordings)
    }

    /// The scenario called `name`, loaded once.
    pub fn scenario(&self, name: &str) -> Result<Arc<Scenario>, String> {
        let mut cache = self
            .loaded
            .scenarios
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        cache
            .entry(name.to_string())
            .or_insert_with(|| {
                scenario::find(&self.scenarios, name)
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .clone()
    }

    /// The stream-json contract with its waivers (none when not derived), loaded once.
    pub fn contract(&self) -> Result<Option<Arc<Contract>>, String> {
        self.loaded
            .contract
            .get_or_init(|| {
                contract::for_root(&self.root)
                    .map(|c| c.map(Arc::new))
                    .map_err(|e| e.to_string())
            })
            .clone()
    }

    /// The known-limitations entry covering `id`, reading its agent's file once.
    pub fn limitation(&self, id: &RecordingId) -> Result<Option<Limitation>, String> {
        let file = self
            .recordings
            .join(&id.agent)
            .join(known_limitations::FILE_NAME);
        let loaded = {
            let mut cache = self
                .loaded
                .limitations
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            cache
                .entry(file.clone())
                .or_insert_with(|| {
                    known_limitations::load(&file)
                        .map(Arc::new)
                        .map_err(|e| e.to_string())
                })
                .clone()
        }?;
        loaded
            .find(&id.version, &id.scenario)
            .map(|l| l.cloned())
            .map_err(|e| e.to_string())
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

    /// Judges every path with `jobs` workers (0: one per core), hands each
    /// case to `keep` inside the worker, and returns what was kept in the
    /// order of `paths`: the result never depends on which worker finished
    /// first, and `keep` can drop a case's bulk (replay, transcript) at once,
    /// so memory grows with the workers, not with the corpus.
    pub fn judge_each<T: Send>(
        &self,
        paths: &[PathBuf],
        jobs: usize,
        keep: impl Fn(Case) -> T + Sync,
    ) -> Vec<T> {
        let jobs = if jobs == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            jobs
        }
        .min(paths.len());
        if jobs <= 1 {
            return paths.iter().map(|p| keep(self.judge(p))).collect();
        }
        let next = AtomicUsize::new(0);
        let mut slots: Vec<Option<T>> = std::iter::repeat_with(|| None).take(paths.len()).collect();
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..jobs)
                .map(|_| {
                    scope.spawn(|| {
                        let mut done = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(path) = paths.get(i) else { break };
                            done.push((i, keep(self.judge(path))));
                        }
                        done
                    })
                })
                .collect();
            for w in workers {
                match w.join() {
                    Ok(done) => {
                        for (i, kept) in done {
                            slots[i] = Some(kept);
                        }
                    }
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
        });
        slots.into_iter().flatten().collect()
    }

    /// Replays one recording and judges it against its golden, its
    /// scenario's expectations, the contract and its known limitations.
    /// Never panics on bad input: an unreadable recording or scenario is an
    /// `Error` case naming what was wrong and where.
    pub fn judge(&self, path: &Path) -> Case {
        self.judge_with(path, acp_bridge::Compat::default())
    }

    /// [`Corpus::judge`] through a bridge with some agent-shape handling
    /// switched off (bisect rebuilds an older bridge this way).
    pub fn judge_with(&self, path: &Path, compat: acp_bridge::Compat) -> Case {
        let mut case = Case {
            path: path.to_path_buf(),
            id: self.id_of(path, None),
            synthetic: false,
            outcome: None,
            error: None,
            replay: None,
            transcript: String::new(),
            golden: None,
            golden_text: None,
            failures: Vec::new(),
            divergences: 0,
            contract: None,
            limitation: None,
            stale_scenario: false,
        };
        let recording = match recording::read(path) {
            Ok(r) => r,
            Err(e) => {
                case.error = Some(format!("cannot replay: {e}"));
                return case;
            }
        };
        case.id = self.id_of(path, Some(&recording));
        case.synthetic = recording.header.synthetic;
        if !recording.leg(recording::Leg::Acp).any(|e| e.proc == 1) {
            case.error = Some(format!(
                "cannot replay {}: no ACP frames of agent process 1 (a stream-json reference recording is not replayed)",
                path.display()
            ));
            return case;
        }
        case.outcome = recording.trailer.as_ref().map(|t| t.outcome);
        let scenario = match self.scenario(&recording.header.scenario) {
            Ok(s) => s,
            Err(e) => {
                case.error = Some(format!(
                    "cannot replay {}: its scenario: {e}",
                    path.display()
                ));
                return case;
            }
        };
        case.stale_scenario = scenario.changed_since(&recording.header.scenario_sha256);
        let mut replay = replayer::replay_with_compat(&recording, &scenario, compat);
        case.divergences = replay.divergences().count();
        case.failures = expect::evaluate(&scenario.expect, &replay.panel_values);
        match self.limitation(&case.id) {
            Ok(l) => case.limitation = l,
            Err(e) => case.error = Some(format!("known limitations: {e}")),
        }
        match self.contract() {
            Ok(Some(contract)) => case.contract = Some(contract.check(&replay.panel_values)),
            Ok(None) => {}
            Err(e) => case.error = Some(format!("stream-json contract: {e}")),
        }
        // last: the render takes the parsed lines
        case.transcript = render(path, &recording, &mut replay);
        let golden = golden::read(&case.id.snapshot_path(&self.snapshots));
        case.golden = Some(match &golden {
            Ok(g) => golden::compare(g.as_deref(), &case.transcript),
            Err(e) => Comparison::Differs(e.to_string()),
        });
        case.golden_text = golden.ok().flatten();
        case.replay = Some(replay);
        case
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
            && !contract::is_reference_recording(entry.path())
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
    /// How the recorded run ended (`None`: no trailer, or unreadable).
    pub outcome: Option<Outcome>,
    /// Why the case could not be replayed at all.
    pub error: Option<String>,
    pub replay: Option<Replay>,
    /// The rendered, normalised transcript (what the golden holds).
    pub transcript: String,
    pub golden: Option<Comparison>,
    /// The golden's text, when there is a readable one.
    pub golden_text: Option<String>,
    pub failures: Vec<Failure>,
    pub divergences: usize,
    /// Every bridge line checked against the stream-json contract (when one was derived).
    pub contract: Option<Conformance>,
    /// The known-limitations entry covering this recording, if any.
    pub limitation: Option<Limitation>,
    /// The scenario file changed since the recording was made (a re-record is due).
    pub stale_scenario: bool,
}

impl Case {
    /// Every status that applies, `[Pass]` when none does.
    pub fn statuses(&self) -> Vec<Status> {
        let mut s = Vec::new();
        if self.error.is_some() {
            s.push(Status::Error);
        }
        match self.golden {
            Some(Comparison::Missing) => s.push(Status::GoldenMissing),
            Some(Comparison::Differs(_)) => s.push(Status::GoldenDiff),
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
        if self.contract.as_ref().is_some_and(Conformance::fails) {
            s.push(Status::ContractBroken);
        }
        if s.is_empty() {
            s.push(Status::Pass);
        }
        s
    }

    /// The case without what only a failing case's report reads (the
    /// replay, transcript and golden text) when it passed: what `check`
    /// keeps of each recording, so a large corpus is never held whole.
    pub fn lightened(mut self) -> Case {
        if self.passed() {
            self.replay = None;
            self.transcript = String::new();
            self.golden_text = None;
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
        if let Some(e) = &self.error {
            return Verdict::Untestable(one_line(e));
        }
        if self.synthetic {
            // not made by `record` against a real agent: no evidence either way
            return Verdict::Untestable("the recording is synthetic".into());
        }
        match self.outcome {
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
        if statuses.contains(&Status::GoldenDiff) {
            return Verdict::Bad(format!(
                "differs from its golden {}: {}",
                self.id.snapshot_name(),
                match &self.golden_text {
                    Some(g) => first_difference(g, &self.transcript),
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
        Verdict::Good
    }

    /// Everything that went wrong, for people: error, divergences, golden
    /// diff, broken expectations.
    pub fn report(&self) -> String {
        self.report_styled(false)
    }

    /// [`Case::report`] with the golden diff in colour (ANSI) when `styled`.
    pub fn report_styled(&self, styled: bool) -> String {
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
            Some(Comparison::Differs(explanation)) => {
                let styled_explanation = match &self.golden_text {
                    Some(g) if styled => {
                        match golden::compare_styled(Some(g), &self.transcript, true) {
                            Comparison::Differs(e) => e,
                            _ => explanation.clone(),
                        }
                    }
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

/// The first line that differs between two texts, old then new, each cut
/// to a window around where they part (long JSON lines share long prefixes).
pub fn first_difference(old: &str, new: &str) -> String {
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
    let (mut a, mut b) = (old.trim_end().lines(), new.trim_end().lines());
    loop {
        match (a.next(), b.next()) {
            (None, None) => return "(only trailing whitespace)".into(),
            (x, y) if x == y => continue,
            (x, y) => {
                let at = match (x, y) {
                    (Some(x), Some(y)) => {
                        x.bytes().zip(y.bytes()).take_while(|(p, q)| p == q).count()
                    }
                    _ => 0,
                };
                return format!("{} became {}", window(x, at), window(y, at));
            }
        }
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Replays without judging (the benchmark measures this).
pub fn replay_with(recording: &Recording, scenario: &Scenario) -> Replay {
    replayer::replay(recording, scenario)
}

/// The golden text of a replay: a header naming the recording, then the
/// normalised transcript. It takes the replay's parsed lines (they are
/// normalised in place); a second render parses the lines again.
pub fn render(path: &Path, recording: &Recording, replay: &mut Replay) -> String {
    let h = &recording.header;
    let mut out = format!(
        "# replay of {} (agent {} {}, scenario {}, synthetic: {}, trailer: {})\n",
        file_label(path),
        h.agent,
        h.agent_version().unwrap_or("?"),
        h.scenario,
        h.synthetic,
        match &recording.trailer {
            Some(t) => t.outcome.as_str().to_string(),
            None => "missing".into(),
        }
    );
    out.push_str(&replay.transcript.render_parsed(
        std::mem::take(&mut replay.panel_values),
        std::mem::take(&mut replay.agent_values),
    ));
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
