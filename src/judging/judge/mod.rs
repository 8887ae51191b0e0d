//! The judge: one verdict per recording. A [`Corpus`] owns the root and
//! what every judgement reads (scenarios, the stream-json contract with its
//! waivers, each agent's known limitations), loaded once and shared; it
//! replays a recording, compares it with its golden, evaluates the scenario's
//! expectations and the contract, and sums that up as a [`Case`]. `check`,
//! `replay`, `replay --bisect-exit`, `bisect`, `contract compare`, `drift`,
//! the test harness and the benchmark all judge through it, so **a recording
//! is judged the same way wherever it is judged** (a known limitation that
//! holds is a pass for `check` and good for bisect).
//!
//! This module is the judging itself; `corpus` holds the layout and what is
//! loaded once, `case` the case with its statuses and verdict, `case_report`
//! its text for people, `golden` and `golden_diff` the goldens and their diff.

mod case;
mod case_report;
mod corpus;
pub mod golden;
pub mod golden_diff;
mod golden_line;
mod golden_stream;
pub mod invariants;
pub mod known_limitations;
mod live;
pub mod provenance;
mod scan;
pub mod transcript_text;

use scan::Scanned;

pub use case::{Case, Status, Verdict};
pub use corpus::{CheckError, Corpus, list_recordings};
pub use golden::orphan_goldens;
pub use golden_diff::{first_difference, lines_differ};
pub use golden_stream::read_lines as read_golden_lines;
pub use live::Replayed;
pub use transcript_text::TranscriptText;

use rayon::iter::{
    IndexedParallelIterator as _, IntoParallelRefIterator as _, ParallelIterator as _,
};
use std::path::{Path, PathBuf};

use golden::Comparison;

use crate::corpus::recording::{self, Header, Recording, RecordingError, Trailer};
use crate::corpus::scenario::Scenario;
use crate::judging::acp_schema::AcpSchema;
use crate::judging::replay::replayer::{self, Replay};
use crate::judging::replay::source::Indexed;

impl Corpus {
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
        // more than one worker, unless no threads are to be had
        let pool = (jobs > 1)
            .then(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(jobs)
                    .build()
                    .ok()
            })
            .flatten();
        match pool {
            // rayon's indexed collect keeps the order of `paths`; one
            // recording per task, since their sizes differ by 1000x and
            // rayon's default halving split leaves one worker the big ones
            Some(pool) => pool.install(|| {
                paths
                    .par_iter()
                    .with_max_len(1)
                    .map(|p| keep(self.judge(p)))
                    .collect()
            }),
            None => paths.iter().map(|p| keep(self.judge(p))).collect(),
        }
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
            trailer: None,
            errors: Vec::new(),
            corpus_error: false,
            replay: None,
            transcript: TranscriptText::default(),
            golden: None,
            golden_diff: None,
            failures: Vec::new(),
            divergences: 0,
            invariants: Vec::new(),
            contract: None,
            limitation: None,
            stale_scenario: false,
            acp: None,
        };
        // the schema first: the recorded frames are checked while read
        let scanned = match scan::scan(path, true) {
            Ok(r) => r,
            Err(e) => {
                case.corpus_error = matches!(e, RecordingError::Blob { .. });
                case.errors.push(format!("cannot replay: {e}"));
                return case;
            }
        };
        let header = &scanned.indexed.header;
        case.id = self.id_of(path, Some(header));
        // an id from the header names goldens and limitation files: names only
        let id = &case.id;
        let fields = [
            ("agent", &id.agent),
            ("version", &id.version),
            ("scenario", &id.scenario),
        ];
        if let Some(e) = fields
            .iter()
            .find_map(|(field, value)| crate::corpus::name::check(field, value).err())
        {
            case.errors
                .push(format!("cannot replay {}: header {e}", path.display()));
            return case;
        }
        case.synthetic = header.synthetic;
        if !scanned.acp_process_1 {
            case.errors.push(format!(
                "cannot replay {}: no ACP frames of agent process 1 (a stream-json reference recording is not replayed)",
                path.display()
            ));
            return case;
        }
        let schema = match AcpSchema::for_protocol(header.protocol_version) {
            Ok(s) => s,
            Err(e) => {
                case.errors.push(format!("the ACP schema: {e}"));
                return case;
            }
        };
        case.acp = scanned.acp.clone();
        case.trailer = scanned.indexed.trailer.clone();
        let scenario = match self.scenario(&header.scenario) {
            Ok(s) => s,
            Err(e) => {
                case.errors.push(format!(
                    "cannot replay {}: its scenario: {e}",
                    path.display()
                ));
                return case;
            }
        };
        case.stale_scenario = scenario.changed_since(&header.scenario_sha256);
        let contract = self.contract();
        let golden_path = case.id.snapshot_path(&self.snapshots);
        let mut live = live::Live::new(
            &scenario.expect,
            &scanned.calls,
            contract.as_ref().ok().and_then(Option::as_deref),
            schema,
            golden_stream::GoldenStream::open(&golden_path),
            self.keep_panel_lines,
        );
        live.line(&header_line(path, header, scanned.indexed.trailer.as_ref()));
        let ended =
            replayer::replay_into(&scanned.indexed.source(path), &scenario, compat, &mut live);
        let judged = live.finish();
        if let Some(e) = &ended.read_error {
            case.errors.push(format!("cannot replay: {e}"));
        }
        case.divergences = judged.replayed.divergences.len();
        case.acp = case.acp.take().map(|c| c.with_bridge_tally(judged.bridge));
        case.failures = judged.failures;
        let Scanned {
            indexed: Indexed { header, .. },
            turns,
            ..
        } = scanned;
        case.failures.extend(turns.finish(&header));
        case.invariants = judged.invariants;
        match self.limitation(&case.id) {
            Ok(l) => case.limitation = l,
            Err(e) => case.errors.push(format!("known limitations: {e}")),
        }
        match contract {
            Ok(Some(_)) => case.contract = judged.contract,
            Ok(None) => {}
            Err(e) => case.errors.push(format!("stream-json contract: {e}")),
        }
        // **a run that did not end `ok` never passes**: its frames stop or
        // stray where the run went wrong (off script, a timeout), whatever
        // its golden says, so it fails until it is re-recorded
        if !case.synthetic {
            let not_ok = match case.outcome() {
                Some(recording::Outcome::Ok) => None,
                Some(other) => Some(format!(
                    "the recording ended {}, not ok: re-record it (`record --mode all`)",
                    other.as_str()
                )),
                None => Some(
                    "the recording is truncated (no trailer: its run was cut off): re-record it"
                        .into(),
                ),
            };
            case.errors.extend(not_ok);
        }
        case.transcript = match judged.transcript {
            Ok(t) => t,
            Err(e) => {
                case.errors.push(format!(
                    "cannot keep the transcript (a temporary file): {e}"
                ));
                TranscriptText::default()
            }
        };
        let (comparison, diff) =
            explained(judged.golden, judged.window, &golden_path, &case.transcript);
        case.golden = Some(comparison);
        case.golden_diff = diff;
        case.replay = Some(judged.replayed);
        case
    }
}

/// A golden comparison made as the replay went, explained when the
/// transcript differs: from both texts whole when both are small (as
/// `golden::compare` explains it), else from the window kept around the
/// first difference.
fn explained(
    comparison: Comparison,
    window: Option<golden::Window>,
    golden_path: &Path,
    transcript: &TranscriptText,
) -> (Comparison, Option<golden::DiffSides>) {
    let Some(window) = window else {
        return (comparison, None);
    };
    let small = |len: u64| len <= golden::DiffSides::WHOLE_MAX;
    let golden_len = std::fs::metadata(golden_path).map_or(u64::MAX, |m| m.len());
    let whole = (small(golden_len) && small(transcript.len()))
        .then(|| golden::read(golden_path).ok().flatten())
        .flatten();
    let sides = match whole {
        Some(golden) => golden::DiffSides::Whole {
            golden,
            replay: transcript.text(),
        },
        None => golden::DiffSides::Window(window),
    };
    (Comparison::Differs(sides.explain(false)), Some(sides))
}

/// Replays without judging (the benchmark measures this).
pub fn replay_with(recording: &Recording, scenario: &Scenario) -> Replay {
    replayer::replay(recording, scenario)
}

/// The golden text of a replay: a header naming the recording, then the
/// normalised transcript. It takes the replay's parsed lines (they are
/// normalised in place); a second render parses the lines again.
pub fn render(path: &Path, recording: &Recording, replay: &mut Replay) -> String {
    render_of(path, &recording.header, recording.trailer.as_ref(), replay)
}

/// [`render`] given the recording's header and trailer only.
fn render_of(path: &Path, h: &Header, trailer: Option<&Trailer>, replay: &mut Replay) -> String {
    let mut out = header_line(path, h, trailer);
    out.push_str(&replay.transcript.render_parsed(
        std::mem::take(&mut replay.panel_values),
        std::mem::take(&mut replay.agent_values),
    ));
    out
}

/// A transcript's first line (with its newline): the recording it replays.
fn header_line(path: &Path, h: &Header, trailer: Option<&Trailer>) -> String {
    format!(
        "# replay of {} (agent {} {}, scenario {}, synthetic: {}, trailer: {})\n",
        file_label(path),
        h.agent,
        h.agent_version().unwrap_or("?"),
        h.scenario,
        h.synthetic,
        match trailer {
            Some(t) => t.outcome.as_str().to_string(),
            None => "missing".into(),
        }
    )
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
