//! `acp-harness update`: for each version not yet recorded (or the ones
//! asked), install, record every missing scenario in parallel jobs, judge
//! the new recordings against the nearest recorded version's goldens, write
//! the drift report into `docs/` and print a summary per version.
//! `--shard K/N` takes a stable share of the (agent, version, scenario) jobs
//! so N CI workers split a matrix; after merging their recordings,
//! `--judge-only` judges every recording that has no golden yet.
//! `--claude-side` follows the Claude side instead: each newer Agent SDK
//! version's stream-json surface against the vendored one, and the next
//! steps for a newer Claude Code.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use semver::Version;

use super::exit::Exit;
use crate::tracking::update::plan::Shard;
use crate::tracking::update::workflow::{self, Options, Outcome};

#[derive(clap::Args, Debug)]
#[command(after_help = super::exit::EXIT_CODES)]
pub struct UpdateArgs {
    /// Only these agents (repeatable); default every ACP agent profile.
    #[arg(long)]
    pub agent: Vec<String>,
    /// These versions (repeatable; with one --agent); recorded or not, their missing scenarios are recorded.
    #[arg(long, conflicts_with = "latest")]
    pub version: Vec<Version>,
    /// Only the newest published version of each agent (default: every version newer than the newest recorded).
    #[arg(long)]
    pub latest: bool,
    /// Also consider pre-releases (nightlies, release candidates).
    #[arg(long)]
    pub pre: bool,
    /// Only these scenarios (repeatable); default every scenario under scenarios/.
    #[arg(long)]
    pub scenario: Vec<String>,
    /// How many recordings run at once, each in its own namespace with its own servers.
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// Take shard K of N (1-based) of the (agent, version, scenario) jobs; judge after merging with --judge-only.
    #[arg(long)]
    pub shard: Option<Shard>,
    /// Record nothing: judge every recording without a golden (after merging shards).
    #[arg(long, conflicts_with_all = ["shard", "version", "latest"])]
    pub judge_only: bool,
    /// With --judge-only: the unrunnable rows the shards saved (their
    /// `<log-dir>/unrunnable.jsonl`; repeatable), summarised and written to
    /// UNRUNNABLE.md once.
    #[arg(long, requires = "judge_only")]
    pub unrunnable_from: Vec<PathBuf>,
    /// How long one recording may take before its processes are ended.
    #[arg(long, default_value_t = 900)]
    pub job_timeout_secs: u64,
    /// Where the job logs go (default: a fresh temporary directory, kept); a
    /// shard also saves its unrunnable rows there (`unrunnable.jsonl`).
    #[arg(long)]
    pub log_dir: Option<PathBuf>,
    /// Record with the host network where loopback-only namespaces are not
    /// available (passed to `record`; the headers then say "isolation":"none").
    #[arg(long)]
    pub allow_network: bool,
    /// Follow the Claude side instead of the agents (contracts/claude-side.toml):
    /// install each newer Agent SDK version (--agent names an SDK id), diff its
    /// stream-json surface against the vendored one, and name the next steps;
    /// list the newer Claude Code versions with theirs.
    #[arg(long, conflicts_with_all = ["judge_only", "shard", "unrunnable_from"])]
    pub claude_side: bool,
    /// Repository root holding profiles/, scenarios/, recordings/, tests/snapshots/ and docs/.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
}

pub fn run(args: UpdateArgs) -> anyhow::Result<ExitCode> {
    if !args.version.is_empty() && args.agent.len() != 1 {
        bail!("--version needs exactly one --agent (versions differ per agent)");
    }
    for v in &args.version {
        crate::corpus::name::check("--version", &v.to_string())?;
    }
    let claude_side = args.claude_side;
    let opts = Options::from(args);
    if claude_side {
        let report = crate::tracking::claude_side::follow(&opts)?;
        for line in &report.lines {
            println!("{line}");
        }
        if report.lines.is_empty() {
            println!(
                "nothing to update on the Claude side: every package is at its newest version"
            );
        }
        return Ok(if report.registry_failed {
            Exit::Error
        } else {
            Exit::Good
        }
        .into());
    }
    let outcome = workflow::run(&opts)?;
    match &outcome {
        Outcome::ShardDone { saved } => eprintln!(
            "[update] shard done; after merging every shard's recordings, judge them with \
             `acp-harness update --judge-only --unrunnable-from <each shard's {}>`",
            saved.display()
        ),
        Outcome::Nothing => {
            println!("nothing to update: every version asked is recorded and judged")
        }
        Outcome::Judged(summaries) => {
            for s in summaries {
                println!("{}", s.render());
            }
        }
    }
    Ok(Exit::found_if(outcome.found_broken()).into())
}

impl From<UpdateArgs> for Options {
    fn from(a: UpdateArgs) -> Options {
        Options {
            agent: a.agent,
            version: a.version,
            latest: a.latest,
            pre: a.pre,
            scenario: a.scenario,
            jobs: a.jobs,
            shard: a.shard,
            judge_only: a.judge_only,
            unrunnable_from: a.unrunnable_from,
            job_timeout_secs: a.job_timeout_secs,
            log_dir: a.log_dir,
            allow_network: a.allow_network,
            root: a.root,
        }
    }
}
