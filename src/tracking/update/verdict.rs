//! Judging a version's new recordings for `update`: each one is replayed
//! and judged as the replay suite judges it (expectations, divergences, the
//! stream-json contract), and what the panel sees is compared with the
//! golden of the nearest recorded version (did anything the panel sees
//! change?). The version's summary, its drift report in `docs/` and the
//! unrunnable scenarios in the agent's `UNRUNNABLE.md` are written here.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use semver::Version;

use super::plan;
use crate::judging::judge::golden::{self, RecordingId};
use crate::judging::judge::{self, Case, Corpus, Status};

/// What a new recording means for the panel, worst last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// The panel sees what it saw with the baseline version: ready to bless.
    Unchanged,
    /// The panel sees something else (or there is nothing to compare with): review.
    Changed,
    /// Expectation failures, divergences, a broken contract: the bridge must learn.
    Broken,
    /// No usable recording.
    Unrunnable,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::Unchanged => "unchanged for the panel (ready to bless)",
            Kind::Changed => "changed for the panel (review)",
            Kind::Broken => "broken (the bridge must learn)",
            Kind::Unrunnable => "unrunnable",
        }
    }

    fn short(self) -> &'static str {
        match self {
            Kind::Unchanged => "unchanged",
            Kind::Changed => "changed",
            Kind::Broken => "broken",
            Kind::Unrunnable => "unrunnable",
        }
    }
}

/// One scenario of a version.
#[derive(Debug, Clone)]
pub struct ScenarioVerdict {
    pub scenario: String,
    pub kind: Kind,
    /// The version whose golden the panel output was compared with.
    pub baseline: Option<Version>,
    /// Why (the first difference, failure or reason), one line.
    pub detail: String,
    /// How long the recording took (its trailer's `ms`), when there is one.
    pub recording_ms: Option<u64>,
}

/// One version's result.
#[derive(Debug, Clone)]
pub struct VersionSummary {
    pub agent: String,
    pub version: Version,
    /// The recorded version the drift report compares with.
    pub previous: Option<Version>,
    pub scenarios: Vec<ScenarioVerdict>,
    pub drift_report: Option<PathBuf>,
}

impl VersionSummary {
    /// The version's status: unrunnable when nothing could be recorded,
    /// else the worst of its recorded scenarios.
    pub fn status(&self) -> Kind {
        self.scenarios
            .iter()
            .map(|s| s.kind)
            .filter(|k| *k != Kind::Unrunnable)
            .max()
            .unwrap_or(Kind::Unrunnable)
    }

    /// The summary for the terminal.
    pub fn render(&self) -> String {
        let mut out = format!(
            "{} {}: {}\n",
            self.agent,
            self.version,
            self.status().label()
        );
        if let Some(p) = &self.previous {
            let _ = write!(out, "  previous recorded version: {p}");
            if let Some(d) = &self.drift_report {
                let _ = write!(out, "; drift report {}", d.display());
            }
            out.push('\n');
        }
        let mut scenarios = self.scenarios.clone();
        scenarios.sort_by(|a, b| a.kind.cmp(&b.kind).then(a.scenario.cmp(&b.scenario)));
        for s in &scenarios {
            let _ = write!(out, "  {:<10} {}", s.kind.short(), s.scenario);
            if let Some(ms) = s.recording_ms {
                let _ = write!(out, " [recorded in {:.1} s]", ms as f64 / 1000.0);
            }
            if let Some(b) = &s.baseline {
                let _ = write!(out, " (vs {b})");
            }
            if !s.detail.is_empty() {
                let _ = write!(out, ": {}", s.detail);
            }
            out.push('\n');
        }
        if self.scenarios.iter().any(|s| s.kind != Kind::Unrunnable) {
            let _ = writeln!(
                out,
                "  review, then bless: INSTA_UPDATE=always cargo test --test it -- {}/{}/",
                self.agent, self.version
            );
        }
        out
    }

    /// The summary as a markdown section for the drift report.
    pub fn markdown(&self) -> String {
        let mut out = format!(
            "## Update summary: {} {}\n\n**{}**. Per scenario (`acp-harness update`): what the panel sees, compared with the golden of the nearest recorded version that has one.\n\n",
            self.agent,
            self.version,
            upper_first(self.status().label())
        );
        out.push_str("| scenario | result | compared with | detail |\n|---|---|---|---|\n");
        for s in &self.scenarios {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                s.scenario,
                s.kind.short(),
                s.baseline.as_ref().map_or("-".into(), Version::to_string),
                cell(&s.detail)
            );
        }
        out.push('\n');
        out
    }
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Text safe inside a markdown table cell.
fn cell(s: &str) -> String {
    let s = s.replace('|', "\\|").replace('\n', " ");
    if s.is_empty() { "-".into() } else { s }
}

/// Whether a golden exists for `agent` `version` `scenario`.
pub fn has_golden(corpus: &Corpus, agent: &str, version: &Version, scenario: &str) -> bool {
    id(agent, version, scenario)
        .snapshot_path(&corpus.snapshots)
        .is_file()
}

/// Whether `version` has any golden (it was blessed at least once).
fn has_any_golden(corpus: &Corpus, agent: &str, version: &Version) -> bool {
    let prefix = format!("{}__{agent}__{version}__", golden::SNAPSHOT_PREFIX);
    std::fs::read_dir(&corpus.snapshots).is_ok_and(|entries| {
        entries.filter_map(|e| e.ok()).any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with(&prefix) && name.ends_with(".snap")
        })
    })
}

fn id(agent: &str, version: &Version, scenario: &str) -> RecordingId {
    RecordingId {
        agent: agent.to_string(),
        version: version.to_string(),
        scenario: scenario.to_string(),
    }
}

/// The recordings of `agent` `version` that have no golden yet (new ones), sorted.
pub fn unjudged(corpus: &Corpus, agent: &str, version: &Version) -> Vec<PathBuf> {
    let dir = corpus.recordings.join(agent).join(version.to_string());
    judge::list_recordings(&dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|p| {
            let scenario = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            !has_golden(corpus, agent, version, scenario)
        })
        .collect()
}

/// Judges one new recording against its scenario and the baseline's golden.
pub fn judge_recording(
    corpus: &Corpus,
    path: &Path,
    agent: &str,
    version: &Version,
    recorded: &[Version],
) -> ScenarioVerdict {
    let case = corpus.judge(path);
    ScenarioVerdict {
        recording_ms: case.trailer.as_ref().map(|t| t.ms),
        ..judge(corpus, case, agent, version, recorded)
    }
}

fn judge(
    corpus: &Corpus,
    case: Case,
    agent: &str,
    version: &Version,
    recorded: &[Version],
) -> ScenarioVerdict {
    let scenario = case.id.scenario.clone();
    let baseline = plan::baseline(version, &scenario, recorded, |v, s| {
        has_golden(corpus, agent, v, s)
    });
    let broken = case.statuses().into_iter().any(|s| {
        !matches!(
            s,
            Status::Pass | Status::GoldenMissing | Status::GoldenDiff | Status::KnownLimitation
        )
    });
    if broken {
        return ScenarioVerdict {
            scenario,
            kind: Kind::Broken,
            baseline,
            detail: one_line(&case.report()),
            recording_ms: None,
        };
    }
    let Some(b) = &baseline else {
        return ScenarioVerdict {
            scenario,
            kind: Kind::Changed,
            baseline,
            detail: "no recorded version has a golden for this scenario: nothing to compare with"
                .into(),
            recording_ms: None,
        };
    };
    let golden_path = id(agent, b, &scenario).snapshot_path(&corpus.snapshots);
    let (kind, detail) = match judge::read_golden_lines(&golden_path) {
        Ok(Some(lines)) => match first_panel_difference(lines, &case.transcript) {
            Ok(None) => (Kind::Unchanged, String::new()),
            Ok(Some(d)) => (Kind::Changed, d),
            Err(e) => (Kind::Changed, e),
        },
        Ok(None) => (Kind::Changed, format!("{} vanished", golden_path.display())),
        Err(e) => (Kind::Changed, e.to_string()),
    };
    ScenarioVerdict {
        scenario,
        kind,
        baseline,
        detail,
        recording_ms: None,
    }
}

/// The first line the panel sees differently in the transcript than in the
/// golden ([`crate::judging::drift::panel_output`] of each, compared), both
/// read one line at a time; `None`: the panel sees the same.
fn first_panel_difference(
    golden: impl Iterator<Item = Result<String, golden::GoldenError>>,
    transcript: &judge::TranscriptText,
) -> Result<Option<String>, String> {
    let panel = crate::judging::drift::PanelLines::new();
    let mut before = golden.filter_map(|l| match l {
        Ok(l) => panel.line(&l).map(Ok),
        Err(e) => Some(Err(e.to_string())),
    });
    let mut found = None;
    transcript
        .for_each_line(|l| {
            let Some(now) = panel.line(l) else {
                return true;
            };
            let differs = match before.next() {
                Some(Ok(b)) if b == now => return true,
                Some(Ok(b)) => Ok(judge::lines_differ(Some(&b), Some(&now))),
                None => Ok(judge::lines_differ(None, Some(&now))),
                Some(Err(e)) => Err(e),
            };
            found = Some(differs);
            false
        })
        .map_err(|e| e.to_string())?;
    match found {
        Some(r) => r.map(Some),
        None => match before.next() {
            Some(Ok(b)) => Ok(Some(judge::lines_differ(Some(&b), None))),
            Some(Err(e)) => Err(e),
            None => Ok(None),
        },
    }
}

/// The first lines of a report, joined and cut, for a summary line.
fn one_line(s: &str) -> String {
    const MAX: usize = 240;
    let joined = s
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(3)
        .collect::<Vec<_>>()
        .join(" / ");
    if joined.len() <= MAX {
        return joined;
    }
    let mut end = MAX;
    while !joined.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &joined[..end])
}

/// The version the drift report compares with: the newest older version
/// with goldens, else the oldest newer one.
pub fn previous_version(
    corpus: &Corpus,
    agent: &str,
    version: &Version,
    recorded: &[Version],
) -> Option<Version> {
    plan::baseline(version, "", recorded, |v, _| {
        has_any_golden(corpus, agent, v)
    })
}

/// Writes `docs/drift-<agent>-<previous>-to-<version>.md`: how to make the
/// report again, the update summary, then the drift report itself.
pub fn write_drift_report(
    root: &Path,
    summary: &VersionSummary,
    previous: &Version,
) -> anyhow::Result<PathBuf> {
    let dir = root.join("recordings").join(&summary.agent);
    let (a, b) = (
        dir.join(previous.to_string()),
        dir.join(summary.version.to_string()),
    );
    // only the scenarios both versions have: one side's extra scenarios would
    // show their every frame as added
    let shared: Vec<String> = scenario_names(&a)
        .into_iter()
        .filter(|s| scenario_names(&b).contains(s))
        .collect();
    anyhow::ensure!(
        !shared.is_empty(),
        "{previous} and {} have no scenario in common",
        summary.version
    );
    let sides = crate::judging::drift::Sides {
        a: crate::judging::drift::side(&a, &shared)?,
        b: crate::judging::drift::side(&b, &shared)?,
    };
    let report = crate::judging::drift::report(&sides, &Corpus::at(root))?;
    let text = report.render();
    let (title, rest) = text.split_once("\n\n").unwrap_or((&text, ""));
    let out = format!(
        "{title}\n\nReproduce: `acp-harness drift --agent {} --from {previous} --to {}{}`\n\n{}{rest}",
        summary.agent,
        summary.version,
        shared
            .iter()
            .map(|s| format!(" --scenario {s}"))
            .collect::<String>(),
        summary.markdown()
    );
    let rel = PathBuf::from("docs").join(format!(
        "drift-{}-{previous}-to-{}.md",
        summary.agent, summary.version
    ));
    let path = root.join(&rel);
    atomic_file::write(&path, out).with_context(|| format!("writing {}", path.display()))?;
    Ok(rel)
}

/// The scenarios recorded in a version directory (file stems, sorted).
fn scenario_names(dir: &Path) -> Vec<String> {
    judge::list_recordings(dir)
        .unwrap_or_default()
        .iter()
        .filter_map(|p| Some(p.file_stem()?.to_str()?.to_string()))
        .collect()
}

/// The heading under which `update` lists what it could not record.
const UNRUNNABLE_HEADING: &str = "## Found unrunnable by `acp-harness update`";

/// How long an `update` waits for another one to finish its rows.
const UNRUNNABLE_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Appends rows (version, scenario, why) to the agent's `UNRUNNABLE.md`,
/// under `update`'s own table; a row already there is not repeated.
pub fn append_unrunnable(
    root: &Path,
    agent: &str,
    rows: &[(Version, String, String)],
    date: &str,
) -> anyhow::Result<Option<PathBuf>> {
    if rows.is_empty() {
        return Ok(None);
    }
    let path = root.join("recordings").join(agent).join("UNRUNNABLE.md");
    // concurrent `update`s each add their rows: none is lost
    atomic_file::update(&path, UNRUNNABLE_LOCK_WAIT, |existing| {
        with_unrunnable_rows(existing, agent, rows, date)
    })
    .with_context(|| format!("writing {}", path.display()))?;
    Ok(Some(path))
}

/// `existing` with the rows added (pure, for the tests).
pub fn with_unrunnable_rows(
    existing: &str,
    agent: &str,
    rows: &[(Version, String, String)],
    date: &str,
) -> String {
    let mut out = existing.to_string();
    if out.is_empty() {
        let _ = writeln!(
            out,
            "# {agent} versions and scenarios that have no recording\n"
        );
    }
    let ends_in_table = out.contains(UNRUNNABLE_HEADING)
        && out
            .trim_end()
            .lines()
            .last()
            .is_some_and(|l| l.starts_with('|'));
    if !ends_in_table {
        if !out.ends_with("\n\n") {
            out.push_str(if out.ends_with('\n') { "\n" } else { "\n\n" });
        }
        let _ = writeln!(
            out,
            "{UNRUNNABLE_HEADING}\n\n| version | scenario | why | when |\n|---|---|---|---|"
        );
    } else if !out.ends_with('\n') {
        out.push('\n');
    }
    for (version, scenario, why) in rows {
        let start = format!("| {version} | {scenario} | {} |", cell(why));
        if out.lines().any(|l| l.starts_with(&start)) {
            continue;
        }
        let _ = writeln!(out, "{start} {date} |");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_panel_difference_read_line_by_line_is_the_one_of_the_whole_texts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.snap");
        let a = "bridge>panel {\"uuid\":\"<uuid 1>\",\"duration_ms\":5}";
        let b = "bridge>panel {\"uuid\":\"<uuid 2>\",\"duration_ms\":7}";
        let c = "bridge>panel {\"type\":\"result\",\"result\":\"hello\"}";
        let d = "bridge>panel {\"type\":\"result\",\"result\":\"hullo\"}";
        let cases = [
            (
                format!("{a}\npanel> x\n{c}\n"),
                format!("{b}\nagent>bridge y\n{c}\n"),
            ),
            (format!("{a}\n{c}\n"), format!("{a}\n{d}\n")),
            (format!("{a}\n{c}\n"), format!("{a}\n")),
            (format!("{a}\n"), format!("{a}\n!! divergence: z\n")),
            (String::new(), format!("{c}\n")),
        ];
        for (golden, transcript) in cases {
            std::fs::write(&path, format!("---\nsource: x\n---\n{golden}")).unwrap();
            let lines = judge::read_golden_lines(&path).unwrap().unwrap();
            let text = judge::TranscriptText::from(transcript.clone());
            let streamed = first_panel_difference(lines, &text).unwrap();
            let before = crate::judging::drift::panel_output(&golden);
            let now = crate::judging::drift::panel_output(&transcript);
            let whole = (before != now).then(|| judge::first_difference(&before, &now));
            assert_eq!(streamed, whole, "{golden:?} {transcript:?}");
        }
    }

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    fn verdict(scenario: &str, kind: Kind) -> ScenarioVerdict {
        ScenarioVerdict {
            scenario: scenario.into(),
            kind,
            baseline: Some(v("0.58.0")),
            detail: String::new(),
            recording_ms: None,
        }
    }

    #[test]
    fn a_version_takes_the_worst_status_of_what_it_recorded() {
        for (kinds, want) in [
            (vec![Kind::Unchanged, Kind::Unchanged], Kind::Unchanged),
            (vec![Kind::Unchanged, Kind::Changed], Kind::Changed),
            (
                vec![Kind::Changed, Kind::Broken, Kind::Unchanged],
                Kind::Broken,
            ),
            (vec![Kind::Unchanged, Kind::Unrunnable], Kind::Unchanged),
            (vec![Kind::Unrunnable, Kind::Unrunnable], Kind::Unrunnable),
            (vec![], Kind::Unrunnable),
        ] {
            let s = VersionSummary {
                agent: "a".into(),
                version: v("1.0.0"),
                previous: None,
                scenarios: kinds
                    .iter()
                    .enumerate()
                    .map(|(i, k)| verdict(&format!("s{i}"), *k))
                    .collect(),
                drift_report: None,
            };
            assert_eq!(s.status(), want, "{kinds:?}");
            assert!(
                s.render()
                    .starts_with(&format!("a 1.0.0: {}", want.label()))
            );
        }
    }

    #[test]
    fn the_summary_says_how_long_each_scenario_took_to_record() {
        let mut timed = verdict("text-only", Kind::Unchanged);
        timed.recording_ms = Some(12345);
        let s = VersionSummary {
            agent: "a".into(),
            version: v("1.0.0"),
            previous: None,
            scenarios: vec![timed],
            drift_report: None,
        };
        assert!(
            s.render()
                .contains("text-only [recorded in 12.3 s] (vs 0.58.0)"),
            "{}",
            s.render()
        );
    }

    #[test]
    fn unrunnable_rows_go_under_updates_own_table_once() {
        let rows = vec![
            (
                v("0.60.0"),
                "steering".to_string(),
                "the recording ended Timeout | x".to_string(),
            ),
            (
                v("0.62.0"),
                "all".to_string(),
                "npm install failed".to_string(),
            ),
        ];
        let prose = "# gemini-cli versions\n\n| version | scenario | why |\n|---|---|---|\n| 0.1.1 | all | old |\n";
        let once = with_unrunnable_rows(prose, "gemini-cli", &rows, "2026-12-01");
        assert!(once.starts_with(prose), "{once}");
        assert_eq!(once.matches(UNRUNNABLE_HEADING).count(), 1, "{once}");
        assert!(
            once.contains("| 0.60.0 | steering | the recording ended Timeout \\| x | 2026-12-01 |"),
            "{once}"
        );
        // again, a day later: nothing new, and a new row joins the same table
        let twice = with_unrunnable_rows(&once, "gemini-cli", &rows, "2026-12-02");
        assert_eq!(twice, once);
        let more = vec![(v("0.63.0"), "all".to_string(), "no recipe".to_string())];
        let third = with_unrunnable_rows(&once, "gemini-cli", &more, "2026-12-02");
        assert_eq!(third.matches(UNRUNNABLE_HEADING).count(), 1, "{third}");
        assert!(
            third.ends_with("| 0.63.0 | all | no recipe | 2026-12-02 |\n"),
            "{third}"
        );
        // a new file gets a title
        let fresh = with_unrunnable_rows("", "grok", &more, "2026-12-02");
        assert!(fresh.starts_with("# grok versions"), "{fresh}");
    }
}
