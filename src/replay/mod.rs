//! The replayer: a recording plays the agent to the bridge, the scenario
//! plays the panel, and the bridge's output is compared with a golden and the
//! scenario's expectations. `run`, `check` and `fake_agent` are the
//! `acp-harness replay | check | fake-agent` commands.

pub mod check;
pub mod divergence;
pub mod fake_agent;
pub mod golden;
pub mod known_limitations;
pub mod normalise;
pub mod panel_driver;
pub mod replayer;
pub mod stdio;
pub mod transcript;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;

use check::{Corpus, Status};

#[derive(clap::Args, Debug)]
pub struct ReplayArgs {
    /// A recording (`.jsonl`) or a directory of them.
    pub path: PathBuf,
    /// The workspace root holding `scenarios/` and `tests/snapshots/`.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
    /// Also print the bridge's diagnostics (its stderr text).
    #[arg(long)]
    pub verbose: bool,
    /// Judge one recording quietly for `git bisect run`: exit 0 good, 1 bad, 125 untestable.
    #[arg(long)]
    pub bisect_exit: bool,
}

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// The workspace root holding `recordings/`, `scenarios/` and `tests/snapshots/`.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
    /// Only recordings whose `<agent>/<version>/<scenario>` contains this.
    #[arg(long)]
    pub filter: Option<String>,
    /// Print nothing but the table.
    #[arg(long)]
    pub quiet: bool,
}

#[derive(clap::Args, Debug)]
pub struct FakeAgentArgs {
    /// The recording to serve.
    pub recording: PathBuf,
    /// Which recorded agent process to play (a resume starts process 2).
    #[arg(long = "proc", default_value_t = 1)]
    pub process: u32,
    /// Give up when the client sends nothing for this many seconds.
    #[arg(long, default_value_t = 300)]
    pub idle_timeout_secs: u64,
}

/// `acp-harness replay <recording|dir>`: print each transcript and what
/// differs from its golden and expectations. Exit 1 when any case fails.
pub fn run(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    if args.bisect_exit {
        let verdict = crate::bisect::judge_recording(&args.root, &args.path);
        println!(
            "{}: {}",
            args.path.display(),
            crate::bisect::describe_verdict(&verdict)
        );
        return Ok(crate::bisect::exit_code(&verdict));
    }
    let corpus = Corpus::at(&args.root);
    let paths = check::list_recordings(&args.path)?;
    anyhow::ensure!(
        !paths.is_empty(),
        "{}: no recordings (*.jsonl) there",
        args.path.display()
    );
    let mut ok = true;
    for path in paths {
        let case = check::judge(&corpus, &path);
        println!("=== {} ({})", case.id.trial_name(), path.display());
        print!("{}", case.transcript);
        if args.verbose
            && let Some(r) = &case.replay
        {
            for d in &r.diagnostics {
                println!("bridge stderr: {d}");
            }
        }
        let statuses = case.statuses();
        println!(
            "=== {}: {}",
            case.id.trial_name(),
            statuses
                .iter()
                .map(|s| s.label())
                .collect::<Vec<_>>()
                .join(", ")
        );
        if !case.passed() {
            ok = false;
            print!("{}", case.report());
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `acp-harness check`: replay the whole corpus and print a table of
/// agent x version x scenario. Exit 0 when every recording passes.
pub fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let corpus = Corpus::at(&args.root);
    let paths = corpus
        .recordings()
        .context("the corpus (run check from the repository root, or pass --root)")?;
    let cases: Vec<check::Case> = paths
        .iter()
        .filter(|p| {
            args.filter
                .as_ref()
                .is_none_or(|f| corpus.id_of(p, None).trial_name().contains(f.as_str()))
        })
        .map(|p| check::judge(&corpus, p))
        .collect();
    if cases.is_empty() {
        println!("no recordings under {}", corpus.recordings.display());
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", check::table(&cases));
    let failed: Vec<&check::Case> = cases.iter().filter(|c| !c.passed()).collect();
    if !args.quiet {
        for c in &failed {
            println!("\n=== {}\n{}", c.id.trial_name(), c.report().trim_end());
        }
    }
    if args.filter.is_none() {
        let ids: Vec<_> = cases.iter().map(|c| c.id.clone()).collect();
        for orphan in check::orphan_goldens(&corpus.snapshots, &ids) {
            println!(
                "\nwarning: golden {} has no recording (remove it if the recording is gone)",
                orphan.display()
            );
        }
    }
    let missing = cases
        .iter()
        .filter(|c| c.statuses().contains(&Status::GoldenMissing))
        .count();
    println!(
        "\n{} recording(s): {} passed, {} failed{}",
        cases.len(),
        cases.len() - failed.len(),
        failed.len(),
        if missing > 0 {
            format!(
                " ({missing} without a golden: bless with `INSTA_UPDATE=always cargo test --test replay`)"
            )
        } else {
            String::new()
        }
    );
    Ok(if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `acp-harness fake-agent <recording>`: serve a recorded agent process as
/// an ACP agent on stdio, to any client.
pub fn fake_agent(args: FakeAgentArgs) -> anyhow::Result<ExitCode> {
    let recording = crate::recording::read(&args.recording)?;
    let frames = replayer::acp_frames(&recording, args.process);
    anyhow::ensure!(
        !frames.is_empty(),
        "{}: no acp frames for agent process {}",
        args.recording.display(),
        args.process
    );
    if recording.is_truncated() {
        eprintln!(
            "fake-agent: {} is truncated (no trailer); serving what it has",
            args.recording.display()
        );
    }
    let summary = stdio::serve(
        fake_agent::FakeAgent::new(frames),
        std::io::stdin(),
        std::io::stdout(),
        &mut std::io::stderr(),
        Duration::from_secs(args.idle_timeout_secs),
    )?;
    Ok(if summary.clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
