//! `acp-harness replay` and `acp-harness fake-agent`: judge recordings one
//! by one with their transcripts, or serve one as an ACP agent on stdio.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use super::exit::{EXIT_CODES, Exit, UsageError};
use super::output::{Color, Out};
use crate::judging::judge::{self, Corpus};
use crate::judging::replay::source::Indexed;
use crate::judging::replay::stdio;
use crate::judging::report::{self, Summary, paint, status_style};

#[derive(clap::Args, Debug)]
#[command(after_help = EXIT_CODES)]
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
    /// Print only the recordings that fail (their transcript and why), then the summary.
    #[arg(long)]
    pub failures_only: bool,
    /// Colour: auto (a terminal and NO_COLOR unset), always, never.
    #[arg(long, value_enum, default_value_t)]
    pub color: Color,
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
    /// The client's session directory, which stands for the recording's
    /// `<workspace>` (in what the client sends and in what is served back).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
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
    if paths.is_empty() {
        return Err(UsageError(format!(
            "{}: no recordings (*.jsonl) there",
            args.path.display()
        ))
        .into());
    }
    let mut out = Out::new(args.color);
    let styled = out.styled();
    let mut cases = Vec::new();
    for path in paths {
        let case = corpus.judge(&path);
        if args.failures_only && case.passed() {
            cases.push(case.lightened());
            continue;
        }
        out.println(&format!(
            "=== {} ({})",
            case.id.trial_name(),
            path.display()
        ));
        out.print_transcript(&case.transcript);
        if args.verbose
            && let Some(r) = &case.replay
        {
            for d in &r.diagnostics {
                out.println(&format!("bridge stderr: {d}"));
            }
        }
        let statuses: Vec<String> = case
            .statuses()
            .iter()
            .map(|s| paint(status_style(*s), s.label()))
            .collect();
        out.println(&format!(
            "=== {}: {}",
            case.id.trial_name(),
            statuses.join(", ")
        ));
        if !case.passed() {
            out.print(&case.report_styled(styled));
        }
        // printed: the summary reads only the statuses
        cases.push(judge::Case {
            transcript: Default::default(),
            replay: None,
            golden_diff: None,
            ..case
        });
    }
    report::sort(&mut cases);
    let failed: Vec<String> = cases
        .iter()
        .filter(|c| !c.passed())
        .map(|c| c.id.trial_name())
        .collect();
    if !failed.is_empty() {
        out.println(&format!("\nfailed: {}", failed.join(", ")));
    }
    out.println(&Summary::of(&cases).line());
    Ok(Exit::of_judged(&cases, !failed.is_empty()).into())
}

/// `acp-harness fake-agent <recording>`: serve a recorded agent process as
/// an ACP agent on stdio, to any client.
pub fn fake_agent(args: FakeAgentArgs) -> anyhow::Result<ExitCode> {
    // indexed in one pass; the agent frames are read again as they are served
    let indexed = Indexed::read(&args.recording)?;
    anyhow::ensure!(
        indexed.leg.has(args.process),
        "{}: no acp frames for agent process {}",
        args.recording.display(),
        args.process
    );
    if indexed.trailer.is_none() {
        eprintln!(
            "fake-agent: {} is truncated (no trailer); serving what it has",
            args.recording.display()
        );
    }
    let source = indexed.source(&args.recording);
    let summary = stdio::serve(
        source.fake_agent(args.process),
        std::io::stdin(),
        std::io::stdout(),
        &mut std::io::stderr(),
        Duration::from_secs(args.idle_timeout_secs),
        &stdio::Workspace::new(args.workspace.as_deref()),
    )?;
    Ok(Exit::found_if(!summary.clean()).into())
}
