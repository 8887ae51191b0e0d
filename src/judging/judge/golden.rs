//! Goldens: the normalised transcript of each recording's replay, stored as
//! an insta snapshot with an explicit name (`<agent>__<version>__<scenario>`)
//! in `tests/snapshots/`. This module finds and reads them (the `check`
//! command and the test harness share it) and explains a mismatch: the first
//! divergent event, a unified diff with context, the tail of the transcript.
//! Writing and blessing is insta's job (see `tests/it/replay.rs`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use similar::{ChangeTag, TextDiff};

use super::golden_diff;
use crate::corpus::regular_file;

/// Transcript lines shown at the end of a failure.
pub const TAIL: usize = 12;

/// What is kept of both sides once they differ.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Window {
    /// 0-based index of the first line kept (the same on both sides: the
    /// lines before the first difference are equal).
    pub from: usize,
    /// 0-based index of the first differing line.
    pub first: usize,
    pub golden: Vec<String>,
    pub replay: Vec<String>,
    /// The transcript's last lines (each cut to a readable length).
    pub tail: Vec<String>,
}

/// Where goldens live, relative to the workspace root.
pub const SNAPSHOT_DIR: &str = "tests/snapshots";
/// The prefix of a golden's file name (`tests/it/replay.rs` names its
/// snapshots so).
pub const SNAPSHOT_PREFIX: &str = "replay";

/// Which recording a golden belongs to: `recordings/<agent>/<version>/<scenario>.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RecordingId {
    pub agent: String,
    pub version: String,
    pub scenario: String,
}

impl RecordingId {
    /// From a recording's path under the corpus root (`<agent>/<version>/<scenario>.jsonl`).
    /// `None` when the path does not have that shape.
    pub fn from_path(root: &Path, path: &Path) -> Option<RecordingId> {
        let canonical = |p: &Path| p.canonicalize().ok();
        let rel = match path.strip_prefix(root) {
            Ok(rel) => rel.to_path_buf(),
            // `recordings/x/...` given from the shell against an absolute root.
            Err(_) => canonical(path)?
                .strip_prefix(canonical(root)?)
                .ok()?
                .to_path_buf(),
        };
        let parts: Vec<&str> = rel.iter().map(|p| p.to_str()).collect::<Option<_>>()?;
        match parts[..] {
            [agent, version, file] => Some(RecordingId {
                agent: agent.to_string(),
                version: version.to_string(),
                scenario: file.strip_suffix(".jsonl")?.to_string(),
            }),
            _ => None,
        }
    }

    /// The trial name: `<agent>/<version>/<scenario>`.
    pub fn trial_name(&self) -> String {
        format!("{}/{}/{}", self.agent, self.version, self.scenario)
    }

    /// The explicit snapshot name: `<agent>__<version>__<scenario>`.
    pub fn snapshot_name(&self) -> String {
        format!("{}__{}__{}", self.agent, self.version, self.scenario)
    }

    /// The snapshot file under `snapshot_dir`.
    pub fn snapshot_path(&self, snapshot_dir: &Path) -> PathBuf {
        snapshot_dir.join(format!("{SNAPSHOT_PREFIX}__{}.snap", self.snapshot_name()))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum GoldenError {
    #[error("{}: cannot read golden: {message}", path.display())]
    Unreadable { path: PathBuf, message: String },
}

/// Reads a golden's text (insta-normalised), `None` when there is none yet.
pub fn read(path: &Path) -> Result<Option<String>, GoldenError> {
    if !regular_file::exists(path) {
        return Ok(None);
    }
    regular_file::check(path).map_err(|e| GoldenError::Unreadable {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let snapshot = insta::Snapshot::from_file(path).map_err(|e| GoldenError::Unreadable {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    match snapshot.contents().as_text() {
        Some(text) => Ok(Some(text.to_string())),
        None => Err(GoldenError::Unreadable {
            path: path.to_path_buf(),
            message: "not a text snapshot".into(),
        }),
    }
}

/// How a transcript compares with its golden.
#[derive(Debug, Clone, PartialEq)]
pub enum Comparison {
    Same,
    Missing,
    /// A readable explanation of the difference.
    Differs(String),
}

/// Compares a transcript with its golden the way insta does (trailing
/// whitespace and CRLF do not count).
pub fn compare(golden: Option<&str>, transcript: &str) -> Comparison {
    compare_styled(golden, transcript, false)
}

/// [`compare`] with the explanation styled for a terminal when `styled`.
pub fn compare_styled(golden: Option<&str>, transcript: &str, styled: bool) -> Comparison {
    match golden {
        None => Comparison::Missing,
        Some(g) if normalise(g) == normalise(transcript) => Comparison::Same,
        Some(g) => Comparison::Differs(explain_styled(
            &(normalise(g) + "\n"),
            &(normalise(transcript) + "\n"),
            styled,
        )),
    }
}

pub(super) fn normalise(s: &str) -> String {
    s.trim_end().replace("\r\n", "\n")
}

/// First divergent event, unified diff with context, tail of the new transcript.
pub fn explain(golden: &str, transcript: &str) -> String {
    explain_styled(golden, transcript, false)
}

/// [`explain`], with the diff in colour and the changed part of each line
/// emphasised when `styled` (ANSI escapes).
pub fn explain_styled(golden: &str, transcript: &str, styled: bool) -> String {
    let tail: Vec<&str> = transcript.lines().collect();
    explain_from(
        golden,
        transcript,
        0,
        &tail[tail.len().saturating_sub(TAIL)..],
        styled,
    )
}

/// What a golden difference is explained from.
#[derive(Debug, Clone, PartialEq)]
pub enum DiffSides {
    /// Both texts whole (both are small), as insta compares them.
    Whole { golden: String, replay: String },
    /// Both sides around their first difference, when the transcript or
    /// the golden is too big to diff whole.
    Window(Window),
}

impl DiffSides {
    /// Both texts whole when both are at most `whole_max` bytes.
    pub const WHOLE_MAX: u64 = 4 << 20;

    /// The explanation [`compare_styled`] gives.
    pub fn explain(&self, styled: bool) -> String {
        match self {
            DiffSides::Whole { golden, replay } => explain_styled(
                &(normalise(golden) + "\n"),
                &(normalise(replay) + "\n"),
                styled,
            ),
            DiffSides::Window(w) => {
                let (golden, replay) = window_texts(w);
                let tail: Vec<&str> = w.tail.iter().map(String::as_str).collect();
                let mut out = format!(
                    "(the transcript or its golden is too long to diff whole: from line {} on, {} golden and {} replay lines)\n",
                    w.from + 1,
                    w.golden.len(),
                    w.replay.len()
                );
                out.push_str(&explain_from(&golden, &replay, w.from, &tail, styled));
                out
            }
        }
    }

    /// The first differing line, golden then replay, as a verdict quotes it.
    pub fn first_difference(&self) -> String {
        match self {
            DiffSides::Whole { golden, replay } => golden_diff::first_difference(golden, replay),
            DiffSides::Window(w) => {
                let (golden, replay) = window_texts(w);
                golden_diff::first_difference(&golden, &replay)
            }
        }
    }
}

fn window_texts(w: &Window) -> (String, String) {
    let text = |lines: &[String]| lines.iter().map(|l| format!("{l}\n")).collect::<String>();
    (text(&w.golden), text(&w.replay))
}

/// [`explain_styled`] of texts that start at 0-based line `from` of the
/// whole, with the transcript's last lines given.
fn explain_from(
    golden: &str,
    transcript: &str,
    from: usize,
    tail: &[&str],
    styled: bool,
) -> String {
    let mut out = String::new();
    let diff = TextDiff::from_lines(golden, transcript);
    let changes: Vec<_> = diff.iter_all_changes().collect();
    if let Some(at) = changes.iter().position(|c| c.tag() != ChangeTag::Equal) {
        let c = &changes[at];
        let line = match c.tag() {
            ChangeTag::Delete => c.old_index(),
            _ => c.new_index(),
        }
        .map_or(0, |i| from + i + 1);
        let _ = writeln!(out, "first divergent event at transcript line {line}:");
        let golden_side = changes[at..]
            .iter()
            .take_while(|c| c.tag() != ChangeTag::Equal)
            .find(|c| c.tag() == ChangeTag::Delete);
        let replay_side = changes[at..]
            .iter()
            .take_while(|c| c.tag() != ChangeTag::Equal)
            .find(|c| c.tag() == ChangeTag::Insert);
        let show = |c: Option<&similar::Change<&str>>| {
            c.map_or("(nothing)".to_string(), |c| {
                c.value().trim_end().to_string()
            })
        };
        let _ = writeln!(out, "  golden: {}", show(golden_side));
        let _ = writeln!(out, "  replay: {}", show(replay_side));
        if let (Some(g), Some(r)) = (golden_side, replay_side)
            && let Some(keys) =
                golden_diff::frame_change(g.value().trim_end(), r.value().trim_end())
        {
            let _ = writeln!(out, "  keys:   {keys}");
        }
    }
    let _ = writeln!(out, "\ndiff (- golden, + this replay):");
    out.push_str(&golden_diff::render_from(golden, transcript, from, styled));
    let _ = writeln!(out, "\ntail of this replay's transcript:");
    for l in tail {
        let _ = writeln!(out, "  {l}");
    }
    out
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
            name.starts_with(&format!("{}__", SNAPSHOT_PREFIX)) && name.ends_with(".snap")
        })
        .filter(|p| !wanted.contains(p))
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recording_paths_give_trial_and_snapshot_names() {
        let id = RecordingId::from_path(
            Path::new("recordings"),
            Path::new("recordings/codex-acp/2.6.0/text-only.jsonl"),
        )
        .unwrap();
        assert_eq!(id.trial_name(), "codex-acp/2.6.0/text-only");
        assert_eq!(
            id.snapshot_path(Path::new("tests/snapshots")),
            Path::new("tests/snapshots/replay__codex-acp__2.6.0__text-only.snap")
        );
        assert_eq!(
            RecordingId::from_path(Path::new("recordings"), Path::new("recordings/x.jsonl")),
            None
        );
    }

    #[test]
    fn a_difference_is_explained_by_its_first_divergent_line_a_diff_and_the_tail() {
        let golden = "panel> a\nbridge>panel b\nagent>bridge c\nbridge>panel d\n";
        let replay = "panel> a\nbridge>panel b\nagent>bridge C\nbridge>panel d\n";
        let Comparison::Differs(text) = compare(Some(golden), replay) else {
            panic!("must differ")
        };
        assert!(
            text.contains("first divergent event at transcript line 3:\n  golden: agent>bridge c\n  replay: agent>bridge C"),
            "{text}"
        );
        assert!(text.contains("-agent>bridge c\n+agent>bridge C"), "{text}");
        assert!(
            text.contains("tail of this replay's transcript:\n  panel> a"),
            "{text}"
        );
        assert_eq!(
            compare(Some(golden), &format!("{golden}\n\n")),
            Comparison::Same
        );
        assert_eq!(compare(None, golden), Comparison::Missing);
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
