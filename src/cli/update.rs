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

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, bail};
use semver::Version;

use super::exit::Exit;
use crate::corpus::profile::{Profile, Protocol};
use crate::judging::judge::Corpus;
use crate::tracking::update::plan::{self, Job, Pick, Shard};
use crate::tracking::update::verdict::{self, Kind, ScenarioVerdict, VersionSummary};
use crate::tracking::update::{jobs, read_unrunnable, save_unrunnable};

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
    if args.claude_side {
        return claude_side(&args);
    }
    let corpus = Corpus::at(&args.root);
    let agents = acp_agents(&args)?;
    let scenarios = scenario_names(&args)?;
    let mut unrunnable = Unrunnable::new();
    let mut touched: Vec<(String, Version)> = Vec::new();
    if args.judge_only {
        judged_only(&args, &corpus, &agents, &mut unrunnable, &mut touched)?;
    } else {
        let mut all_jobs: Vec<Job> = Vec::new();
        for agent in &agents {
            let (versions, runnable) =
                agent_jobs(&args, &corpus, agent, &scenarios, &mut unrunnable)?;
            touched.extend(versions.into_iter().map(|v| (agent.clone(), v)));
            all_jobs.extend(runnable);
        }
        let log_dir = match &args.log_dir {
            Some(d) => {
                std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
                d.clone()
            }
            None => tempfile::Builder::new()
                .prefix("acp-harness-update-")
                .tempdir()?
                .keep(),
        };
        run_jobs(&args, &log_dir, all_jobs, &mut unrunnable)?;
        if args.shard.is_some() {
            // shards would each rewrite UNRUNNABLE.md; the judging run writes it once
            let saved = log_dir.join("unrunnable.jsonl");
            save_unrunnable(&saved, &unrunnable)?;
            eprintln!(
                "[update] shard done; after merging every shard's recordings, judge them with \
                 `acp-harness update --judge-only --unrunnable-from <each shard's {}>`",
                saved.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
    }

    touched.sort();
    touched.dedup();
    let summaries: Vec<VersionSummary> = touched
        .iter()
        .filter_map(|(agent, version)| summary(&args, &corpus, agent, version, &unrunnable))
        .collect();
    write_unrunnable(&args.root, &unrunnable)?;

    if summaries.is_empty() {
        println!("nothing to update: every version asked is recorded and judged");
        return Ok(ExitCode::SUCCESS);
    }
    for s in &summaries {
        println!("{}", s.render());
    }
    Ok(Exit::found_if(summaries.iter().any(|s| s.status() == Kind::Broken)).into())
}

/// Per agent, the (version, scenario or `all`, why) of each run that could
/// not be made.
type Unrunnable = BTreeMap<String, Vec<(Version, String, String)>>;

/// `--judge-only`: the versions the shards found unrunnable and every
/// version with a recording that has no golden yet.
fn judged_only(
    args: &UpdateArgs,
    corpus: &Corpus,
    agents: &[String],
    unrunnable: &mut Unrunnable,
    touched: &mut Vec<(String, Version)>,
) -> anyhow::Result<()> {
    for path in &args.unrunnable_from {
        for row in read_unrunnable(path)? {
            touched.push((row.agent.clone(), row.version.clone()));
            unrunnable
                .entry(row.agent)
                .or_default()
                .push((row.version, row.scenario, row.why));
        }
    }
    for agent in agents {
        for v in crate::packages::outdated::recorded_versions(&corpus.recordings, agent) {
            if !verdict::unjudged(corpus, agent, &v).is_empty() {
                touched.push((agent.clone(), v));
            }
        }
    }
    Ok(())
}

/// One agent's versions to update and the recording jobs that can run: each
/// version is installed once, before the jobs (npm needs the network, the
/// jobs run without it); a version that does not install is unrunnable.
fn agent_jobs(
    args: &UpdateArgs,
    corpus: &Corpus,
    agent: &str,
    scenarios: &[String],
    unrunnable: &mut Unrunnable,
) -> anyhow::Result<(Vec<Version>, Vec<Job>)> {
    let pick = pick(args);
    let profile = Profile::find(&args.root, agent)?;
    let recorded = crate::packages::outdated::recorded_versions(&corpus.recordings, agent);
    let published: Vec<Version> = if matches!(pick, Pick::Versions(_)) {
        Vec::new()
    } else {
        crate::packages::outdated::published(&profile, false)
            .with_context(|| {
                format!("{agent}: asking its registry (npm or PyPI) for its versions")
            })?
            .into_iter()
            .filter(|v| args.pre || v.pre.is_empty())
            .collect()
    };
    let versions = plan::versions_to_update(&pick, &published, &recorded);
    let jobs = plan::jobs(
        agent,
        &versions,
        scenarios,
        |v, s| crate::capture::record::recording_path(&corpus.recordings, agent, v, s).is_file(),
        args.shard,
    );
    announce(args, agent, &versions, &jobs);
    let mut runnable = Vec::new();
    let mut installs: BTreeMap<Version, Result<(), String>> = BTreeMap::new();
    for job in jobs {
        let ok = installs
            .entry(job.version.clone())
            .or_insert_with(|| install(&profile, &job.version))
            .clone();
        match ok {
            Ok(()) => runnable.push(job),
            Err(why) => {
                let rows = unrunnable.entry(agent.to_string()).or_default();
                if !rows.iter().any(|(v, _, _)| *v == job.version) {
                    rows.push((job.version.clone(), "all".into(), why));
                }
            }
        }
    }
    Ok((versions, runnable))
}

/// Which versions to update: those asked, the newest, or every one newer
/// than the newest recorded.
fn pick(args: &UpdateArgs) -> Pick {
    if !args.version.is_empty() {
        Pick::Versions(args.version.clone())
    } else if args.latest {
        Pick::Latest
    } else {
        Pick::Newer
    }
}

/// One line on stderr per agent: its versions to update and its jobs.
fn announce(args: &UpdateArgs, agent: &str, versions: &[Version], jobs: &[Job]) {
    let done = versions.len()
        - versions
            .iter()
            .filter(|v| jobs.iter().any(|j| &j.version == *v))
            .count();
    let listed = if versions.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = versions.iter().map(Version::to_string).collect();
        format!(" ({})", names.join(", "))
    };
    let shard = args.shard.map_or(String::new(), |s| {
        format!(" in shard {}/{}", s.index, s.count)
    });
    let already = if done > 0 && args.shard.is_none() {
        format!("; {done} fully recorded already")
    } else {
        String::new()
    };
    eprintln!(
        "[update] {agent}: {} version(s) to update{listed}, {} recording job(s){shard}{already}",
        versions.len(),
        jobs.len(),
    );
}

/// Runs the recording jobs in parallel; a job that cannot run is unrunnable.
fn run_jobs(
    args: &UpdateArgs,
    log_dir: &std::path::Path,
    all_jobs: Vec<Job>,
    unrunnable: &mut Unrunnable,
) -> anyhow::Result<()> {
    if all_jobs.is_empty() {
        return Ok(());
    }
    let runner = jobs::Runner {
        exe: std::env::current_exe().context("finding the harness executable")?,
        root: args.root.clone(),
        log_dir: log_dir.to_path_buf(),
        timeout: Duration::from_secs(args.job_timeout_secs),
        parallel: args.jobs,
        allow_network: args.allow_network,
    };
    for done in runner.run(all_jobs) {
        if let jobs::JobResult::Unrunnable(why) = done.result {
            unrunnable.entry(done.job.agent.clone()).or_default().push((
                done.job.version.clone(),
                done.job.scenario.clone(),
                why,
            ));
        }
    }
    Ok(())
}

/// One version's verdicts: its new recordings judged against the nearest
/// recorded version's goldens, its unrunnable scenarios, and a drift report
/// beside them; `None` when there is nothing to say.
fn summary(
    args: &UpdateArgs,
    corpus: &Corpus,
    agent: &str,
    version: &Version,
    unrunnable: &Unrunnable,
) -> Option<VersionSummary> {
    let recorded = crate::packages::outdated::recorded_versions(&corpus.recordings, agent);
    let mut scenarios: Vec<ScenarioVerdict> = verdict::unjudged(corpus, agent, version)
        .iter()
        .map(|p| verdict::judge_recording(corpus, p, agent, version, &recorded))
        .collect();
    for (v, scenario, why) in unrunnable.get(agent).into_iter().flatten() {
        if v == version {
            scenarios.push(ScenarioVerdict {
                scenario: scenario.clone(),
                kind: Kind::Unrunnable,
                baseline: None,
                detail: why.clone(),
                recording_ms: None,
            });
        }
    }
    if scenarios.is_empty() {
        return None;
    }
    let mut summary = VersionSummary {
        agent: agent.to_string(),
        version: version.clone(),
        previous: verdict::previous_version(corpus, agent, version, &recorded),
        scenarios,
        drift_report: None,
    };
    if let Some(previous) = summary.previous.clone()
        && summary.status() != Kind::Unrunnable
    {
        match verdict::write_drift_report(&args.root, &summary, &previous) {
            Ok(path) => summary.drift_report = Some(path),
            Err(e) => eprintln!("[update] {agent} {version}: no drift report: {e:#}"),
        }
    }
    Some(summary)
}

/// `update --claude-side`: every SDK version to judge (newer than the pin,
/// or those asked) judged by its surface, and the newer Claude Code
/// versions named with the reference's next steps. Exit 2 when a registry
/// could not be asked, else 0 (a changed surface is for review, as an
/// agent's changed output is).
fn claude_side(args: &UpdateArgs) -> anyhow::Result<ExitCode> {
    use crate::corpus::claude_side::{Catalogue, Role};
    use crate::tracking::claude_side::judge_version;
    let catalogue = Catalogue::load(&args.root)?;
    let matrix = crate::judging::sdk_surface::matrix::Matrix::load(&args.root)?;
    for asked in &args.agent {
        if catalogue.get(asked).is_none() {
            bail!(
                "{asked}: not in {} (with --claude-side, --agent names its packages)",
                crate::corpus::claude_side::CATALOGUE_PATH
            );
        }
    }
    let pick = pick(args);
    let mut failed = false;
    let mut printed = false;
    for p in &catalogue.packages {
        if !args.agent.is_empty() && !args.agent.contains(&p.id) {
            continue;
        }
        let published = if matches!(pick, Pick::Versions(_)) {
            Vec::new()
        } else {
            match crate::packages::versions::versions_saved(&p.package) {
                Ok(list) => list
                    .into_iter()
                    .filter(|v| args.pre || v.pre.is_empty())
                    .collect(),
                Err(e) => {
                    println!("{} ({}): published versions unknown: {e:#}", p.id, p.title);
                    failed = true;
                    continue;
                }
            }
        };
        let versions: Vec<Version> =
            plan::versions_to_update(&pick, &published, std::slice::from_ref(&p.pinned))
                .into_iter()
                .filter(|v| matches!(pick, Pick::Versions(_)) || *v > p.pinned)
                .collect();
        eprintln!(
            "[update] {}: {} version(s) newer than the pinned {}",
            p.id,
            versions.len(),
            p.pinned
        );
        for v in &versions {
            printed = true;
            match (&p.role, &p.surface) {
                (Role::Sdk, Some(source)) => {
                    println!(
                        "{}",
                        judge_version(&args.root, p, source, &matrix, v).render()
                    )
                }
                _ => println!(
                    "{} ({}) {v}: newer than the pinned reference {}\n  next 1. record it as the reference: acp-harness record --agent {}@{v} --all\n  next 2. re-derive the contract: acp-harness contract derive, and review its diff\n  next 3. pin {v} in {} and the profile's default_version\n",
                    p.id,
                    p.title,
                    p.pinned,
                    p.profile.as_deref().unwrap_or(&p.id),
                    crate::corpus::claude_side::CATALOGUE_PATH
                ),
            }
        }
    }
    if !printed && !failed {
        println!("nothing to update on the Claude side: every package is at its newest version");
    }
    Ok(if failed { Exit::Error } else { Exit::Good }.into())
}

/// The agents to update: those asked, else every profile speaking ACP (the
/// stream-json reference is recorded for the contract, not judged by replay).
fn acp_agents(args: &UpdateArgs) -> anyhow::Result<Vec<String>> {
    let all = crate::packages::outdated::agents(&args.root, &args.agent)?;
    let mut out = Vec::new();
    for agent in all {
        let profile = Profile::find(&args.root, &agent)?;
        if profile.protocol == Protocol::StreamJson {
            if !args.agent.is_empty() {
                bail!(
                    "{agent} speaks stream-json: it is the reference whose recordings feed `contract derive`, not the replay judge; record it with `acp-harness record`"
                );
            }
            continue;
        }
        out.push(agent);
    }
    Ok(out)
}

fn scenario_names(args: &UpdateArgs) -> anyhow::Result<Vec<String>> {
    let dir = args.root.join("scenarios");
    if args.scenario.is_empty() {
        return Ok(crate::corpus::scenario::load_all(&dir)?
            .into_iter()
            .filter(|s| !s.imported)
            .map(|s| s.name)
            .collect());
    }
    for name in &args.scenario {
        crate::corpus::scenario::find(&dir, name)
            .and_then(|s| s.recordable())
            .with_context(|| format!("scenario {name:?}"))?;
    }
    Ok(args.scenario.clone())
}

/// Installs `version` into the cache; the error text is the unrunnable reason.
fn install(profile: &Profile, version: &Version) -> Result<(), String> {
    let recipe = profile.recipe(version).map_err(|e| e.to_string())?;
    if recipe.package.is_empty() && recipe.packages.is_empty() {
        return Ok(());
    }
    crate::packages::install::prepare(profile, recipe, version)
        .map(|_| ())
        .map_err(|e| format!("install failed: {e:#}"))
}

fn write_unrunnable(root: &std::path::Path, rows: &Unrunnable) -> anyhow::Result<()> {
    let date = crate::capture::record::today();
    for (agent, rows) in rows {
        if let Some(path) = verdict::append_unrunnable(root, agent, rows, &date)? {
            eprintln!(
                "[update] unrunnable: {} row(s) in {}",
                rows.len(),
                path.display()
            );
        }
    }
    Ok(())
}
