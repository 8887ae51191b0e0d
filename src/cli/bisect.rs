//! `acp-harness bisect`: which published version of an agent first breaks
//! a scenario in the bridge.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use semver::Version;

use anstyle::{AnsiColor, Style};
use serde_json::json;

use super::exit::{Exit, UsageError};
use super::output::{Color, Out};
use crate::corpus::scenario;
use crate::judging::drift;
use crate::judging::judge::Corpus;
use crate::judging::report::paint;
use crate::tracking::bisect::{
    CompatSwitch, Found, Judge, Verdict, compat_without, parse_compat_switch, search, versions,
};

/// `--format`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Format {
    /// Each step, the result and the drift report between last good and first bad.
    #[default]
    Text,
    /// `{result, first_bad, last_good, untestable, steps}` (progress still on stderr).
    Json,
}

/// The exit-status section of `bisect --help`.
pub const EXIT_CODES: &str = "\
Exit status:
  0  no bad version: the newest testable version is good
  1  a bad version was found (the first bad one, or the oldest is already bad)
  2  usage or tool error, or no version could be tested";

#[derive(clap::Args, Debug)]
#[command(after_help = EXIT_CODES)]
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
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Colour: auto (a terminal and NO_COLOR unset), always, never.
    #[arg(long, value_enum, default_value_t)]
    pub color: Color,
}

/// `acp-harness bisect`: exit 1 when a bad version was found, 0 when none
/// was, 2 when nothing could be tested or on an error.
pub fn run(args: BisectArgs) -> anyhow::Result<ExitCode> {
    let list = versions_in_range(&args)?;
    let corpus = Corpus::at(&args.root);
    let judge = Judge {
        corpus: corpus.clone(),
        agent: args.agent.clone(),
        scenario: args.scenario.clone(),
        compat: compat_without(&args.compat_off),
        compare_panel: args.compare_panel,
        record_timeout: (!args.offline).then(|| Duration::from_secs(args.record_timeout_secs)),
    };
    let text = args.format == Format::Text;
    let mut out = Out::new(if text { args.color } else { Color::Never });
    let mut err = anstream::AutoStream::new(std::io::stderr(), anstream::ColorChoice::Never);
    let headline = headline(&args, &list);
    if text {
        out.println(&headline);
    } else {
        let _ = writeln!(err, "{headline}");
    }
    let mut known: Vec<Option<bool>> = vec![None; list.len()];
    let s = search(list.len(), |i, last_good| {
        let (left, steps) = progress(&known);
        let _ = writeln!(
            err,
            "[bisect] {left} version(s) left, about {steps} step(s); testing {}",
            list[i]
        );
        let v = judge.judge(&list[i], last_good.map(|g| &list[g]));
        known[i] = match &v {
            Verdict::Good => Some(true),
            Verdict::Bad(_) => Some(false),
            Verdict::Untestable(_) => None,
        };
        if text {
            let style = match &v {
                Verdict::Good => AnsiColor::Green.on_default(),
                Verdict::Bad(_) => AnsiColor::Red.on_default().bold(),
                Verdict::Untestable(_) => AnsiColor::Yellow.on_default(),
            };
            out.println(&format!(
                "  {:<10} {}",
                list[i].to_string(),
                paint(style, &v.describe())
            ));
        }
        v
    });
    let (summary, exit) = describe(&s.found, &list);
    if !text {
        out.print(
            &(serde_json::to_string_pretty(&to_json(&s, &list)).expect("JSON values serialise")
                + "\n"),
        );
        return Ok(exit.into());
    }
    out.println(&paint(Style::new().bold(), &summary));
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
        match drift::report(&sides, &corpus) {
            Ok(r) => out.println(&format!("\n{}", r.render())),
            Err(e) => out.println(&format!("(no drift report: {e})")),
        }
    }
    Ok(exit.into())
}

/// The agent's versions between `--from` and `--to`, after checking that
/// the profile and the scenario are there to judge by.
fn versions_in_range(args: &BisectArgs) -> anyhow::Result<Vec<Version>> {
    // the profile is data every verdict trusts: a corrupt one judges nothing
    // (offline, a corpus may come without profiles: only recordings are read)
    let profile = crate::corpus::profile::Profile::find(&args.root, &args.agent);
    match profile {
        Err(crate::corpus::profile::ProfileError::Unknown { .. }) if args.offline => {}
        other => {
            other?;
        }
    }
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
    if list.is_empty() {
        return Err(UsageError(format!("no {} versions in the range asked", args.agent)).into());
    }
    Ok(list)
}

/// What is bisected, by what, and over which versions.
fn headline(args: &BisectArgs, list: &[Version]) -> String {
    format!(
        "bisect {} over {} version(s) {} .. {} by scenario {}{}",
        args.agent,
        list.len(),
        list[0],
        list[list.len() - 1],
        args.scenario,
        if args.compat_off.is_empty() {
            String::new()
        } else {
            let names: Vec<&str> = args.compat_off.iter().map(|s| s.name()).collect();
            format!(" (bridge without {})", names.join(", "))
        }
    )
}

/// Versions still in question (untested, between the newest known good and
/// the oldest known bad above it) and about how many steps a binary search
/// over them takes.
fn progress(known: &[Option<bool>]) -> (usize, u32) {
    let lo = known.iter().rposition(|k| *k == Some(true));
    let from = lo.map_or(0, |g| g + 1);
    let to = known[from..]
        .iter()
        .position(|k| *k == Some(false))
        .map_or(known.len(), |b| from + b);
    let left = to.saturating_sub(from);
    let steps = usize::BITS - left.leading_zeros();
    (left, steps)
}

/// `bisect --format json`.
pub fn to_json(s: &crate::tracking::bisect::Search, list: &[Version]) -> serde_json::Value {
    let v = |i: usize| list[i].to_string();
    let (result, first_bad, last_good, untestable) = match &s.found {
        Found::Transition {
            last_good,
            first_bad,
            untestable,
        } => (
            "found",
            Some(v(*first_bad)),
            Some(v(*last_good)),
            untestable.iter().map(|i| v(*i)).collect(),
        ),
        Found::NoBad { newest_testable } => ("no_bad", None, Some(v(*newest_testable)), vec![]),
        Found::OldestBad { oldest_testable } => {
            ("oldest_bad", Some(v(*oldest_testable)), None, vec![])
        }
        Found::NothingTestable => ("nothing_testable", None, None, vec![]),
    };
    let steps: Vec<serde_json::Value> = s
        .tested
        .iter()
        .map(|(i, verdict)| json!({"version": v(*i), "verdict": verdict.label(), "why": verdict.why()}))
        .collect();
    json!({
        "result": result,
        "first_bad": first_bad,
        "last_good": last_good,
        "untestable": untestable,
        "steps": steps,
    })
}

/// The result in words, and the exit status.
pub fn describe(found: &Found, list: &[Version]) -> (String, Exit) {
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
            (s, Exit::Found)
        }
        Found::NoBad { newest_testable } => (
            format!(
                "no bad version: {} (the newest testable) is good",
                list[*newest_testable]
            ),
            Exit::Good,
        ),
        Found::OldestBad { oldest_testable } => (
            format!(
                "the oldest testable version {} is already bad: nothing to bisect",
                list[*oldest_testable]
            ),
            Exit::Found,
        ),
        Found::NothingTestable => ("no version could be tested".into(), Exit::Error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_counts_the_versions_between_good_and_bad() {
        assert_eq!(progress(&[None; 8]), (8, 4));
        let mut k = vec![None; 10];
        k[0] = Some(true);
        k[9] = Some(false);
        assert_eq!(progress(&k), (8, 4));
        k[4] = Some(true);
        k[6] = Some(false);
        assert_eq!(progress(&k), (1, 1));
        k[5] = Some(false);
        assert_eq!(progress(&k), (0, 0));
    }
}
