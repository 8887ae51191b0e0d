//! `acp-harness replay` and `acp-harness fake-agent`: judge recordings one
//! by one with their transcripts, or serve one as an ACP agent on stdio.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::judge::{self, Corpus};
use crate::replay::{fake_agent, replayer, stdio};

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
    let corpus = Corpus::at(&args.root);
    if args.bisect_exit {
        let verdict = if args.path.is_file() {
            corpus.judge(&args.path).verdict()
        } else {
            judge::Verdict::Untestable(format!("{}: no such recording", args.path.display()))
        };
        println!("{}: {}", args.path.display(), verdict.describe());
        return Ok(ExitCode::from(verdict.exit_code()));
    }
    let paths = judge::list_recordings(&args.path)?;
    anyhow::ensure!(
        !paths.is_empty(),
        "{}: no recordings (*.jsonl) there",
        args.path.display()
    );
    let mut ok = true;
    for path in paths {
        let case = corpus.judge(&path);
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
