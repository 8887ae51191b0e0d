//! Bisect over an agent's published versions: which version first breaks a
//! scenario in the bridge? Versions come from the npm registry (the packages
//! of the agent's profile, semver order) or, offline, from the committed
//! recordings. A version is judged from its recording (recorded on demand
//! when missing and not offline) by the corpus's judge (`Case::verdict`), so
//! **bisect calls a recording good exactly when `check` would pass it**
//! (a missing golden aside); with `--compare-panel` a version is also bad
//! when its panel output differs from the last good version's. The search
//! itself ([`search`]) is pure, so it is tested on made-up histories.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use std::time::Duration;

use anyhow::Context as _;
use semver::Version;

use crate::corpus::profile::Profile;
use crate::judging::drift;
use crate::judging::judge::{Corpus, first_difference};

pub use crate::judging::judge::Verdict;

/// Where a search ended, as indices into the searched list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// `first_bad` is bad, `last_good` good, and everything strictly between
    /// them (`untestable`) could not be tested: the break is in one of those
    /// or at `first_bad`.
    Transition {
        last_good: usize,
        first_bad: usize,
        untestable: Vec<usize>,
    },
    /// The newest testable version is good too.
    NoBad { newest_testable: usize },
    /// The oldest testable version is already bad: nothing to bisect.
    OldestBad { oldest_testable: usize },
    /// Nothing could be tested.
    NothingTestable,
}

/// The search and every verdict it asked for, in the order asked.
#[derive(Debug, Clone)]
pub struct Search {
    pub found: Found,
    pub tested: Vec<(usize, Verdict)>,
}

/// Binary search for a good -> bad transition over `n` ordered items.
/// `test(i, last_good)` judges item `i` (`last_good` is the newest item
/// known good so far, for comparisons against it); each item is tested at
/// most once. The oldest and newest testable items are the ends; an
/// untestable midpoint is replaced by the nearest untested item inside the
/// current range (like `git bisect skip`). In a non-monotone history this
/// still ends at an adjacent (up to untestables) good -> bad pair.
pub fn search(n: usize, mut test: impl FnMut(usize, Option<usize>) -> Verdict) -> Search {
    let mut tested: Vec<(usize, Verdict)> = Vec::new();
    let mut verdicts: BTreeMap<usize, Verdict> = BTreeMap::new();
    let mut judge = |i: usize,
                     last_good: Option<usize>,
                     verdicts: &mut BTreeMap<usize, Verdict>,
                     tested: &mut Vec<(usize, Verdict)>|
     -> Verdict {
        if let Some(v) = verdicts.get(&i) {
            return v.clone();
        }
        let v = test(i, last_good);
        verdicts.insert(i, v.clone());
        tested.push((i, v.clone()));
        v
    };
    // the oldest testable item
    let mut lo = None;
    for i in 0..n {
        match judge(i, None, &mut verdicts, &mut tested) {
            Verdict::Good => {
                lo = Some(i);
                break;
            }
            Verdict::Bad(_) => {
                return Search {
                    found: Found::OldestBad { oldest_testable: i },
                    tested,
                };
            }
            Verdict::Untestable(_) => {}
        }
    }
    let Some(mut lo) = lo else {
        return Search {
            found: Found::NothingTestable,
            tested,
        };
    };
    // the newest testable item
    let mut hi = None;
    for i in (lo + 1..n).rev() {
        match judge(i, Some(lo), &mut verdicts, &mut tested) {
            Verdict::Bad(_) => {
                hi = Some(i);
                break;
            }
            Verdict::Good => {
                return Search {
                    found: Found::NoBad { newest_testable: i },
                    tested,
                };
            }
            Verdict::Untestable(_) => {}
        }
    }
    let Some(mut hi) = hi else {
        return Search {
            found: Found::NoBad {
                newest_testable: lo,
            },
            tested,
        };
    };
    loop {
        // untested items strictly inside (lo, hi), nearest the middle first
        let mid = lo + (hi - lo) / 2;
        let mut inside: Vec<usize> = (lo + 1..hi).filter(|i| !verdicts.contains_key(i)).collect();
        inside.sort_by_key(|i| (i.abs_diff(mid), *i));
        let mut moved = false;
        for i in inside {
            match judge(i, Some(lo), &mut verdicts, &mut tested) {
                Verdict::Good => {
                    lo = i;
                    moved = true;
                    break;
                }
                Verdict::Bad(_) => {
                    hi = i;
                    moved = true;
                    break;
                }
                Verdict::Untestable(_) => {}
            }
        }
        if !moved {
            let untestable = (lo + 1..hi).collect();
            return Search {
                found: Found::Transition {
                    last_good: lo,
                    first_bad: hi,
                    untestable,
                },
                tested,
            };
        }
    }
}

/// A [`acp_bridge::Compat`] switch by its command-line name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompatSwitch {
    McpRawOutputWrapper,
    RejectOptionByKind,
}

pub fn parse_compat_switch(s: &str) -> Result<CompatSwitch, String> {
    match s {
        "mcp-raw-output-wrapper" => Ok(CompatSwitch::McpRawOutputWrapper),
        "reject-option-by-kind" => Ok(CompatSwitch::RejectOptionByKind),
        other => Err(format!(
            "unknown compat switch {other:?} (known: mcp-raw-output-wrapper, reject-option-by-kind)"
        )),
    }
}

impl CompatSwitch {
    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            CompatSwitch::McpRawOutputWrapper => "mcp-raw-output-wrapper",
            CompatSwitch::RejectOptionByKind => "reject-option-by-kind",
        }
    }
}

/// The bridge's compat switches with `off` turned off.
pub fn compat_without(off: &[CompatSwitch]) -> acp_bridge::Compat {
    let mut c = acp_bridge::Compat::default();
    for s in off {
        match s {
            CompatSwitch::McpRawOutputWrapper => c.mcp_raw_output_wrapper = false,
            CompatSwitch::RejectOptionByKind => c.reject_option_by_kind = false,
        }
    }
    c
}

/// How versions are judged: the corpus, the scenario, the bridge switches.
pub struct Judge {
    pub corpus: Corpus,
    pub agent: String,
    pub scenario: String,
    pub compat: acp_bridge::Compat,
    pub compare_panel: bool,
    /// `None` offline; else how long recording a missing version may take.
    pub record_timeout: Option<Duration>,
}

impl Judge {
    pub fn recording_path(&self, version: &Version) -> PathBuf {
        self.corpus
            .recordings
            .join(&self.agent)
            .join(version.to_string())
            .join(format!("{}.jsonl", self.scenario))
    }

    /// Judges one version (recording it first when missing and allowed):
    /// the corpus's verdict on its recording, and with `compare_panel` also
    /// bad when the panel output differs from the last good version's.
    pub fn judge(&self, version: &Version, last_good: Option<&Version>) -> Verdict {
        let path = self.recording_path(version);
        if !path.exists() {
            let Some(timeout) = self.record_timeout else {
                return Verdict::Untestable("no committed recording (offline)".into());
            };
            if let Err(e) = self.record(version, timeout) {
                return Verdict::Untestable(format!("recording it failed: {e:#}"));
            }
            if !path.exists() {
                return Verdict::Untestable(
                    "record wrote no recording for it (see UNRUNNABLE.md / its output)".into(),
                );
            }
        }
        let case = self.corpus.judge_with(&path, self.compat);
        let verdict = case.verdict();
        if verdict != Verdict::Good || !self.compare_panel {
            return verdict;
        }
        let Some(good) = last_good.map(|v| self.recording_path(v)) else {
            return verdict;
        };
        if good == path {
            return verdict;
        }
        let panel = drift::panel_output(&case.transcript.text());
        let good_panel =
            drift::panel_output(&self.corpus.judge_with(&good, self.compat).transcript.text());
        if good_panel != panel {
            return Verdict::Bad(format!(
                "panel output differs from the last good version's: {}",
                first_difference(&good_panel, &panel)
            ));
        }
        Verdict::Good
    }

    /// `acp-harness record --agent <agent>@<version> --scenario <s>` as a
    /// child, into the committed corpus, killed at the timeout.
    fn record(&self, version: &Version, timeout: Duration) -> anyhow::Result<()> {
        let exe = std::env::current_exe().context("finding the harness executable")?;
        let mut cmd = tokio::process::Command::new(exe);
        cmd.arg("record")
            .arg("--agent")
            .arg(format!("{}@{version}", self.agent))
            .arg("--scenario")
            .arg(&self.scenario)
            .arg("--root")
            .arg(&self.corpus.root)
            .arg("--out")
            .arg(&self.corpus.recordings);
        let out = process_group::output_blocking(cmd, timeout, process_group::Pipes::AsGiven)
            .context("record")?;
        anyhow::ensure!(out.status.success(), "record exited with {}", out.status);
        Ok(())
    }
}

/// The versions to bisect over: offline, those with a recordings directory
/// (one with no recording, such as an interrupted run's leftovers, judges
/// untestable); else the registry's versions of the profile's packages that
/// a recipe covers (versions no recipe covers are kept: they judge untestable).
pub fn versions(root: &Path, agent: &str, offline: bool) -> anyhow::Result<Vec<Version>> {
    let mut out: Vec<Version> = if offline {
        let dir = root.join("recordings").join(agent);
        std::fs::read_dir(&dir)
            .with_context(|| format!("{}: cannot list recorded versions", dir.display()))?
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir())
            .filter_map(|e| Version::parse(e.file_name().to_str()?).ok())
            .collect()
    } else {
        let profile = Profile::find(root, agent)?;
        crate::packages::versions::profile_versions(&profile, |p| {
            let python = crate::packages::versions::python_for(&profile, p);
            crate::packages::versions::versions_with(p, python.as_deref())
        })?
    };
    out.sort();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the search over a history written as one char per version:
    /// `g` good, `b` bad, `u` untestable.
    fn run_history(history: &str) -> (Found, usize) {
        let h: Vec<char> = history.chars().collect();
        let s = search(h.len(), |i, _| match h[i] {
            'g' => Verdict::Good,
            'b' => Verdict::Bad("b".into()),
            _ => Verdict::Untestable("u".into()),
        });
        (s.found, s.tested.len())
    }

    #[test]
    fn monotone_histories_find_the_first_bad_version() {
        for (history, last_good, first_bad) in [
            ("gb", 0, 1),
            ("ggggggggggggggggggggggggggggggggbbbbbbbbbb", 31, 32),
            ("gbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", 0, 1),
            ("ggggggggggggggggggggggggggggggggggggggggbb", 39, 40),
        ] {
            let (found, tested) = run_history(history);
            assert_eq!(
                found,
                Found::Transition {
                    last_good,
                    first_bad,
                    untestable: vec![]
                },
                "{history}"
            );
            assert!(
                tested <= 2 + 7,
                "{history}: {tested} tests is not a binary search"
            );
        }
    }

    #[test]
    fn untestable_versions_are_skipped_and_named_when_they_hide_the_break() {
        assert_eq!(
            run_history("ggguuugbb").0,
            Found::Transition {
                last_good: 6,
                first_bad: 7,
                untestable: vec![]
            }
        );
        assert_eq!(
            run_history("ggguuubbb").0,
            Found::Transition {
                last_good: 2,
                first_bad: 6,
                untestable: vec![3, 4, 5]
            }
        );
        assert_eq!(
            run_history("uugggbbuu").0,
            Found::Transition {
                last_good: 4,
                first_bad: 5,
                untestable: vec![]
            }
        );
        assert_eq!(run_history("uuuu").0, Found::NothingTestable);
    }

    #[test]
    fn non_monotone_histories_end_at_an_adjacent_good_bad_pair() {
        for history in [
            "gbgbgbgbgbgbgbgb",
            "ggbbggbbggbbggbbb",
            "gbbbbbbbgggggggb",
            "guubgubgub",
        ] {
            let h: Vec<char> = history.chars().collect();
            match run_history(history).0 {
                Found::Transition {
                    last_good,
                    first_bad,
                    untestable,
                } => {
                    assert_eq!(h[last_good], 'g', "{history}");
                    assert_eq!(h[first_bad], 'b', "{history}");
                    assert!(untestable.iter().all(|i| h[*i] == 'u'), "{history}");
                    assert_eq!(first_bad - last_good - 1, untestable.len(), "{history}");
                }
                other => panic!("{history}: {other:?}"),
            }
        }
    }

    #[test]
    fn histories_without_a_transition_say_so() {
        assert_eq!(run_history("gggg").0, Found::NoBad { newest_testable: 3 });
        assert_eq!(run_history("gggu").0, Found::NoBad { newest_testable: 2 });
        assert_eq!(
            run_history("ubbb").0,
            Found::OldestBad { oldest_testable: 1 }
        );
    }
}
