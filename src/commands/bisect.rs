//! `acp-harness bisect`: which published version of an agent first breaks
//! a scenario in the bridge.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use semver::Version;

use crate::bisect::{
    CompatSwitch, Found, Judge, compat_without, parse_compat_switch, search, versions,
};
use crate::drift;
use crate::judge::Corpus;
use crate::scenario;

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
    let corpus = Corpus::at(&args.root);
    let judge = Judge {
        corpus: corpus.clone(),
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
            let names: Vec<&str> = args.compat_off.iter().map(|s| s.name()).collect();
            format!(" (bridge without {})", names.join(", "))
        }
    );
    let s = search(list.len(), |i, last_good| {
        let v = judge.judge(&list[i], last_good.map(|g| &list[g]));
        println!("  {:<10} {}", list[i].to_string(), v.describe());
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
        match drift::report(&sides, &corpus) {
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
