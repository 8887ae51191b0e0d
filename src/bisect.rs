//! Bisect over an agent's published versions: which version first breaks a
//! scenario in the bridge? Versions come from the npm registry (the packages
//! of the agent's profile, semver order) or, offline, from the committed
//! recordings. A version is judged from its recording (recorded on demand
//! when missing and not offline): **bad when the replay diverges from what
//! the recorded client sent, the scenario's expectations fail, or the replay
//! differs from the version's own golden (or, with `--compare-panel`, its
//! panel output differs from the last good version's); untestable when no
//! usable recording exists.** The search itself ([`search`]) is pure, so it
//! is tested on made-up histories.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use semver::Version;

use crate::drift;
use crate::expect;
use crate::profile::Profile;
use crate::recording::{self, Outcome};
use crate::replay::{check, golden, replayer};
use crate::scenario;

/// What one test of one version said.
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
    fn why(&self) -> &str {
        match self {
            Verdict::Good => "",
            Verdict::Bad(w) | Verdict::Untestable(w) => w,
        }
    }
}

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

#[derive(clap::Args, Debug)]
pub struct BisectArgs {
    /// The agent (a profile under profiles/), e.g. codex-acp.
    #[arg(long)]
    pub agent: String,
    /// The scenario to judge each version by.
    #[arg(long)]
    pub scenario: String,
    /// The oldest version to consider (assumed good; it is tested).
    #[arg(long)]
    pub from: Option<Version>,
    /// The newest version to consider.
    #[arg(long)]
    pub to: Option<Version>,
    /// Only the committed recordings: list versions from recordings/<agent>/ and never record.
    #[arg(long)]
    pub offline: bool,
    /// Also bad: the bridge's panel output differs from the last good version's.
    #[arg(long)]
    pub compare_panel: bool,
    /// Bridge handling to switch off, rebuilding a bridge that lacks it:
    /// `mcp-raw-output-wrapper`, `reject-option-by-kind` (repeatable).
    #[arg(long = "compat-off", value_parser = parse_compat_switch)]
    pub compat_off: Vec<CompatSwitch>,
    /// Repository root holding profiles/, scenarios/, recordings/ and tests/snapshots/.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
    /// How long recording one missing version may take.
    #[arg(long, default_value_t = 900)]
    pub record_timeout_secs: u64,
}

/// A [`acp_bridge::Compat`] switch by its command-line name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompatSwitch {
    McpRawOutputWrapper,
    RejectOptionByKind,
}

fn parse_compat_switch(s: &str) -> Result<CompatSwitch, String> {
    match s {
        "mcp-raw-output-wrapper" => Ok(CompatSwitch::McpRawOutputWrapper),
        "reject-option-by-kind" => Ok(CompatSwitch::RejectOptionByKind),
        other => Err(format!(
            "unknown compat switch {other:?} (known: mcp-raw-output-wrapper, reject-option-by-kind)"
        )),
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
    pub root: PathBuf,
    pub agent: String,
    pub scenario: String,
    pub compat: acp_bridge::Compat,
    pub compare_panel: bool,
    /// `None` offline; else how long recording a missing version may take.
    pub record_timeout: Option<Duration>,
}

impl Judge {
    pub fn recording_path(&self, version: &Version) -> PathBuf {
        self.root
            .join("recordings")
            .join(&self.agent)
            .join(version.to_string())
            .join(format!("{}.jsonl", self.scenario))
    }

    /// Judges one version (recording it first when missing and allowed).
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
        let (verdict, _) = self.replay(&path, last_good.map(|v| self.recording_path(v)).as_deref());
        verdict
    }

    /// Replays `path` and judges it; also returns the panel output.
    fn replay(&self, path: &Path, last_good: Option<&Path>) -> (Verdict, String) {
        let rec = match recording::read(path) {
            Ok(r) => r,
            Err(e) => {
                return (
                    Verdict::Untestable(format!("unreadable recording: {e}")),
                    String::new(),
                );
            }
        };
        match rec.trailer.as_ref().map(|t| t.outcome) {
            Some(Outcome::Ok) => {}
            Some(other) => {
                return (
                    Verdict::Untestable(format!("the recording ended {other:?}")),
                    String::new(),
                );
            }
            None => {
                return (
                    Verdict::Untestable("the recording is truncated".into()),
                    String::new(),
                );
            }
        }
        let sc = match scenario::find(self.root.join("scenarios"), &rec.header.scenario) {
            Ok(s) => s,
            Err(e) => {
                return (
                    Verdict::Untestable(format!("its scenario: {e}")),
                    String::new(),
                );
            }
        };
        let replay = replayer::replay_with_compat(&rec, &sc, self.compat);
        let transcript = check::render(path, &rec, &replay);
        let panel = drift::panel_output(&transcript);
        if let Some(d) = replay.divergences().next() {
            return (
                Verdict::Bad(format!(
                    "the bridge diverged from the recorded client: {}",
                    d.headline()
                )),
                panel,
            );
        }
        let failures = expect::evaluate(&sc.expect, &replay.panel_lines);
        if let Some(f) = failures.first() {
            return (
                Verdict::Bad(format!("expectation failed: {}", one_line(&f.to_string()))),
                panel,
            );
        }
        let corpus = check::Corpus::at(&self.root);
        let id = corpus.id_of(path, Some(&rec));
        if let Ok(Some(g)) = golden::read(&id.snapshot_path(&corpus.snapshots))
            && !matches!(
                golden::compare(Some(&g), &transcript),
                golden::Verdict::Same
            )
        {
            return (
                Verdict::Bad(format!(
                    "differs from its golden {}: {}",
                    id.snapshot_name(),
                    first_difference(&g, &transcript)
                )),
                panel,
            );
        }
        if self.compare_panel
            && let Some(good) = last_good
            && good != path
        {
            let (_, good_panel) = self.replay(good, None);
            if good_panel != panel {
                return (
                    Verdict::Bad(format!(
                        "panel output differs from the last good version's: {}",
                        first_difference(&good_panel, &panel)
                    )),
                    panel,
                );
            }
        }
        (Verdict::Good, panel)
    }

    /// `acp-harness record --agent <agent>@<version> --scenario <s>` as a
    /// child, into the committed corpus, killed at the timeout.
    fn record(&self, version: &Version, timeout: Duration) -> anyhow::Result<()> {
        let exe = std::env::current_exe().context("finding the harness executable")?;
        let mut child = Command::new(exe)
            .arg("record")
            .arg("--agent")
            .arg(format!("{}@{version}", self.agent))
            .arg("--scenario")
            .arg(&self.scenario)
            .arg("--root")
            .arg(&self.root)
            .arg("--out")
            .arg(self.root.join("recordings"))
            .stdin(Stdio::null())
            .spawn()
            .context("starting record")?;
        let started = Instant::now();
        loop {
            if let Some(status) = child.try_wait()? {
                anyhow::ensure!(status.success(), "record exited with {status}");
                return Ok(());
            }
            if started.elapsed() > timeout {
                let _ = child.kill();
                let _ = child.wait();
                anyhow::bail!("record took over {} s; stopped", timeout.as_secs());
            }
            std::thread::sleep(Duration::from_millis(200));
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

/// The versions to bisect over: offline, those with a recordings directory;
/// else the registry's versions of the profile's packages that a recipe
/// covers (versions no recipe covers are kept: they judge untestable).
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
        let mut packages: Vec<&str> = profile
            .recipes
            .iter()
            .map(|r| r.package.as_str())
            .filter(|p| !p.is_empty())
            .collect();
        packages.sort();
        packages.dedup();
        let mut all = Vec::new();
        for p in packages {
            let listed = crate::registry::npm_versions(p)?;
            // a version belongs to this package when the recipe covering it names it, or none does
            all.extend(
                listed
                    .into_iter()
                    .filter(|v| profile.recipe(v).map_or(true, |r| r.package == p)),
            );
        }
        all
    };
    out.sort();
    out.dedup();
    Ok(out)
}

/// `acp-harness bisect`: exit 0 when a first bad version was found, 1 when
/// none was (or nothing could be tested).
pub fn run(args: BisectArgs) -> anyhow::Result<ExitCode> {
    // a typo in the scenario name would otherwise make every version untestable
    scenario::find(args.root.join("scenarios"), &args.scenario)
        .with_context(|| format!("scenario {:?}", args.scenario))?;
    let all = versions(&args.root, &args.agent, args.offline)?;
    let list: Vec<Version> = all
        .into_iter()
        .filter(|v| {
            args.from.as_ref().is_none_or(|f| v >= f) && args.to.as_ref().is_none_or(|t| v <= t)
        })
        .collect();
    anyhow::ensure!(
        !list.is_empty(),
        "no {} versions in the range asked",
        args.agent
    );
    let judge = Judge {
        root: args.root.clone(),
        agent: args.agent.clone(),
        scenario: args.scenario.clone(),
        compat: compat_without(&args.compat_off),
        compare_panel: args.compare_panel,
        record_timeout: (!args.offline).then(|| Duration::from_secs(args.record_timeout_secs)),
    };
    println!(
        "bisect {} over {} version(s) {} .. {} by scenario {}{}",
        args.agent,
        list.len(),
        list[0],
        list[list.len() - 1],
        args.scenario,
        if args.compat_off.is_empty() {
            String::new()
        } else {
            format!(" (bridge without {:?})", args.compat_off)
        }
    );
    let s = search(list.len(), |i, last_good| {
        let v = judge.judge(&list[i], last_good.map(|g| &list[g]));
        println!(
            "  {:<10} {}{}",
            list[i].to_string(),
            v.label(),
            if v.why().is_empty() {
                String::new()
            } else {
                format!(": {}", v.why())
            }
        );
        v
    });
    let (text, code) = describe(&s.found, &list);
    println!("{text}");
    if let Found::Transition {
        last_good,
        first_bad,
        ..
    } = s.found
    {
        let sides = drift::Sides {
            a: vec![judge.recording_path(&list[last_good])],
            b: vec![judge.recording_path(&list[first_bad])],
        };
        match drift::report(&sides, &args.root.join("scenarios")) {
            Ok(r) => println!("\n{}", r.render()),
            Err(e) => println!("(no drift report: {e})"),
        }
    }
    Ok(code)
}

/// The result in words, and the exit code.
pub fn describe(found: &Found, list: &[Version]) -> (String, ExitCode) {
    match found {
        Found::Transition {
            last_good,
            first_bad,
            untestable,
        } => {
            let mut s = format!(
                "first bad version: {}\nlast good version: {}",
                list[*first_bad], list[*last_good]
            );
            if !untestable.is_empty() {
                let names: Vec<String> = untestable.iter().map(|i| list[*i].to_string()).collect();
                s.push_str(&format!(
                    "\nuntestable in between (the break may be in one of them): {}",
                    names.join(", ")
                ));
            }
            (s, ExitCode::SUCCESS)
        }
        Found::NoBad { newest_testable } => (
            format!(
                "no bad version: {} (the newest testable) is good",
                list[*newest_testable]
            ),
            ExitCode::FAILURE,
        ),
        Found::OldestBad { oldest_testable } => (
            format!(
                "the oldest testable version {} is already bad: nothing to bisect",
                list[*oldest_testable]
            ),
            ExitCode::FAILURE,
        ),
        Found::NothingTestable => ("no version could be tested".into(), ExitCode::FAILURE),
    }
}

/// `replay --bisect-exit`: 0 good, 1 bad, 125 untestable, for `git bisect run`.
pub fn exit_code(verdict: &Verdict) -> ExitCode {
    ExitCode::from(match verdict {
        Verdict::Good => 0,
        Verdict::Bad(_) => 1,
        Verdict::Untestable(_) => 125,
    })
}

/// `good`, `bad: why`, `untestable: why`.
pub fn describe_verdict(v: &Verdict) -> String {
    if v.why().is_empty() {
        v.label().to_string()
    } else {
        format!("{}: {}", v.label(), v.why())
    }
}

/// Judges one recording by the current bridge for `replay --bisect-exit`:
/// bad on a divergence, a failed expectation or a golden difference;
/// untestable when it cannot be replayed at all.
pub fn judge_recording(root: &Path, path: &Path) -> Verdict {
    let judge = Judge {
        root: root.to_path_buf(),
        agent: String::new(),
        scenario: String::new(),
        compat: acp_bridge::Compat::default(),
        compare_panel: false,
        record_timeout: None,
    };
    if !path.is_file() {
        return Verdict::Untestable(format!("{}: no such recording", path.display()));
    }
    judge.replay(path, None).0
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
    fn histories_without_a_transition_say_so() {
        assert_eq!(run_history("gggg").0, Found::NoBad { newest_testable: 3 });
        assert_eq!(run_history("gggu").0, Found::NoBad { newest_testable: 2 });
        assert_eq!(
            run_history("ubbb").0,
            Found::OldestBad { oldest_testable: 1 }
        );
    }
}
