//! The `update` workflow: for each version not yet recorded (or the ones
//! asked), install, record every missing scenario in parallel jobs, judge
//! the new recordings against the nearest recorded version's goldens and
//! write the drift reports. Progress goes to stderr as it happens; what was
//! found is returned for the CLI to print.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, bail};
use semver::Version;

use crate::corpus::profile::{Profile, Protocol};
use crate::judging::judge::Corpus;
use crate::tracking::update::plan::{self, Job, Pick, Shard};
use crate::tracking::update::verdict::{self, Kind, ScenarioVerdict, VersionSummary};
use crate::tracking::update::{jobs, read_unrunnable, save_unrunnable};

/// What to update and how (the CLI's `update` arguments).
#[derive(Debug, Clone)]
pub struct Options {
    pub agent: Vec<String>,
    pub version: Vec<Version>,
    pub latest: bool,
    pub pre: bool,
    pub scenario: Vec<String>,
    pub jobs: usize,
    pub shard: Option<Shard>,
    pub judge_only: bool,
    pub unrunnable_from: Vec<PathBuf>,
    pub job_timeout_secs: u64,
    pub log_dir: Option<PathBuf>,
    pub allow_network: bool,
    pub root: PathBuf,
}

/// What an update found.
#[derive(Debug)]
pub enum Outcome {
    /// A shard recorded its jobs and saved its unrunnable rows here; the
    /// judging run reads them.
    ShardDone { saved: PathBuf },
    /// Every version asked is recorded and judged.
    Nothing,
    /// One summary per version judged.
    Judged(Vec<VersionSummary>),
}

impl Outcome {
    /// Whether a version broke a scenario.
    pub fn found_broken(&self) -> bool {
        matches!(self, Outcome::Judged(s) if s.iter().any(|s| s.status() == Kind::Broken))
    }
}

/// Records, judges and writes what `opts` asks; see [`Outcome`].
pub fn run(opts: &Options) -> anyhow::Result<Outcome> {
    if !opts.version.is_empty() && opts.agent.len() != 1 {
        bail!("--version needs exactly one --agent (versions differ per agent)");
    }
    for v in &opts.version {
        crate::corpus::name::check("--version", &v.to_string())?;
    }
    let corpus = Corpus::at(&opts.root);
    let agents = acp_agents(opts)?;
    let scenarios = scenario_names(opts)?;
    let mut unrunnable = Unrunnable::new();
    let mut touched: Vec<(String, Version)> = Vec::new();
    if opts.judge_only {
        judged_only(opts, &corpus, &agents, &mut unrunnable, &mut touched)?;
    } else {
        let mut all_jobs: Vec<Job> = Vec::new();
        for agent in &agents {
            let (versions, runnable) =
                agent_jobs(opts, &corpus, agent, &scenarios, &mut unrunnable)?;
            touched.extend(versions.into_iter().map(|v| (agent.clone(), v)));
            all_jobs.extend(runnable);
        }
        let log_dir = match &opts.log_dir {
            Some(d) => {
                std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
                d.clone()
            }
            None => tempfile::Builder::new()
                .prefix("acp-harness-update-")
                .tempdir()?
                .keep(),
        };
        run_jobs(opts, &log_dir, all_jobs, &mut unrunnable)?;
        if opts.shard.is_some() {
            // shards would each rewrite UNRUNNABLE.md; the judging run writes it once
            let saved = log_dir.join("unrunnable.jsonl");
            save_unrunnable(&saved, &unrunnable)?;
            return Ok(Outcome::ShardDone { saved });
        }
    }

    touched.sort();
    touched.dedup();
    let summaries: Vec<VersionSummary> = touched
        .iter()
        .filter_map(|(agent, version)| summary(opts, &corpus, agent, version, &unrunnable))
        .collect();
    write_unrunnable(&opts.root, &unrunnable)?;

    if summaries.is_empty() {
        return Ok(Outcome::Nothing);
    }
    Ok(Outcome::Judged(summaries))
}

/// Per agent, the (version, scenario or `all`, why) of each run that could
/// not be made.
type Unrunnable = BTreeMap<String, Vec<(Version, String, String)>>;

/// `--judge-only`: the versions the shards found unrunnable and every
/// version with a recording that has no golden yet.
fn judged_only(
    opts: &Options,
    corpus: &Corpus,
    agents: &[String],
    unrunnable: &mut Unrunnable,
    touched: &mut Vec<(String, Version)>,
) -> anyhow::Result<()> {
    for path in &opts.unrunnable_from {
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
    opts: &Options,
    corpus: &Corpus,
    agent: &str,
    scenarios: &[String],
    unrunnable: &mut Unrunnable,
) -> anyhow::Result<(Vec<Version>, Vec<Job>)> {
    let pick = pick(opts);
    let profile = Profile::find(&opts.root, agent)?;
    let recorded = crate::packages::outdated::recorded_versions(&corpus.recordings, agent);
    let published: Vec<Version> = if matches!(pick, Pick::Versions(_)) {
        Vec::new()
    } else {
        crate::packages::outdated::published(&profile, false)
            .with_context(|| {
                format!("{agent}: asking its registry (npm or PyPI) for its versions")
            })?
            .into_iter()
            .filter(|v| opts.pre || v.pre.is_empty())
            .collect()
    };
    let versions = plan::versions_to_update(&pick, &published, &recorded);
    let jobs = plan::jobs(
        agent,
        &versions,
        scenarios,
        |v, s| crate::capture::record::recording_path(&corpus.recordings, agent, v, s).is_file(),
        opts.shard,
    );
    announce(opts, agent, &versions, &jobs);
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
pub fn pick(opts: &Options) -> Pick {
    if !opts.version.is_empty() {
        Pick::Versions(opts.version.clone())
    } else if opts.latest {
        Pick::Latest
    } else {
        Pick::Newer
    }
}

/// One line on stderr per agent: its versions to update and its jobs.
fn announce(opts: &Options, agent: &str, versions: &[Version], jobs: &[Job]) {
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
    let shard = opts.shard.map_or(String::new(), |s| {
        format!(" in shard {}/{}", s.index, s.count)
    });
    let already = if done > 0 && opts.shard.is_none() {
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
    opts: &Options,
    log_dir: &std::path::Path,
    all_jobs: Vec<Job>,
    unrunnable: &mut Unrunnable,
) -> anyhow::Result<()> {
    if all_jobs.is_empty() {
        return Ok(());
    }
    let runner = jobs::Runner {
        exe: std::env::current_exe().context("finding the harness executable")?,
        root: opts.root.clone(),
        log_dir: log_dir.to_path_buf(),
        timeout: Duration::from_secs(opts.job_timeout_secs),
        parallel: opts.jobs,
        allow_network: opts.allow_network,
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
    opts: &Options,
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
        match verdict::write_drift_report(&opts.root, &summary, &previous) {
            Ok(path) => summary.drift_report = Some(path),
            Err(e) => eprintln!("[update] {agent} {version}: no drift report: {e:#}"),
        }
    }
    Some(summary)
}

/// The agents to update: those asked, else every profile speaking ACP (the
/// stream-json reference is recorded for the contract, not judged by replay).
fn acp_agents(opts: &Options) -> anyhow::Result<Vec<String>> {
    let all = crate::packages::outdated::agents(&opts.root, &opts.agent)?;
    let mut out = Vec::new();
    for agent in all {
        let profile = Profile::find(&opts.root, &agent)?;
        if profile.protocol == Protocol::StreamJson {
            if !opts.agent.is_empty() {
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

fn scenario_names(opts: &Options) -> anyhow::Result<Vec<String>> {
    let dir = opts.root.join("scenarios");
    if opts.scenario.is_empty() {
        return Ok(crate::corpus::scenario::load_all(&dir)?
            .into_iter()
            .filter(|s| !s.imported)
            .map(|s| s.name)
            .collect());
    }
    for name in &opts.scenario {
        crate::corpus::scenario::find(&dir, name)
            .and_then(|s| s.recordable())
            .with_context(|| format!("scenario {name:?}"))?;
    }
    Ok(opts.scenario.clone())
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
