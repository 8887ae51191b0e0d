//! The recorder: `acp-harness record --agent codex-acp[@version]
//! --scenario <name>|--all [--model stub|live] [--out DIR] [--check]`.
//!
//! Per scenario it starts stub-mcp and the scripted model server, makes a
//! fresh home and workspace, spawns the agent from its profile, drives the
//! scenario over ACP ([`driver`]) and tees every event of every leg into
//! `<out>/<agent>/<version>/<scenario>.jsonl` ([`timeline`]), the version
//! asked for; an agent reporting another one gets nothing written.
//! Recording is hermetic by default: after installing (which needs the
//! network) the command re-runs itself inside a loopback-only network
//! namespace ([`crate::capture::isolation`]). `--check` records into a temporary
//! directory and compares with the committed recording ([`compare`]).
//! `--mode` says what happens to recordings that already exist ([`mode`]).

mod agent_launch;
pub mod compare;
mod date;
mod driver;
mod finish;
mod http_legs;
pub(crate) use http_legs::mcp_method;
mod leftovers;
pub mod mode;
mod run_dir;
pub mod scrubbing;
mod stream_json_client;
pub mod timeline;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use acp_bridge::acp::revision::Revision;
use anyhow::{Context, bail};
use serde_json::Value;

use crate::capture::interrupt::{EXIT_INTERRUPTED, Interrupt};
use crate::capture::isolation;
use crate::capture::model_server::{
    AgentTools, Flavour, ModelExchange, ModelScript, ModelServer, SideRequests, ToolNaming,
};
use crate::corpus::profile::readiness::SessionMethod;
use crate::corpus::profile::{AgentSpec, Launch, Profile, Recipe, Vars};
use crate::corpus::recording::{self, Header, Outcome};
use crate::corpus::scenario::{self, Scenario};

pub(crate) use agent_launch::{RunValues, resolved as resolved_launch, serve_unity_ops};
pub use date::today;
use finish::{RunSinks, finish_run, schema_check, why_not_commit};
pub(crate) use run_dir::RunDir;

/// The dummy API key given to agents; never reaches disk.
pub(crate) const DUMMY_API_KEY: &str = "sk-acp-harness-dummy-key";

/// What one `record` run is asked to do (the CLI's `record` arguments, parsed).
#[derive(Debug, Clone)]
pub struct Request {
    /// `<agent>[@<version>]`, e.g. codex-acp@2.6.0 (default version: the profile's)
    pub agent: String,
    /// Scenario name(s) under scenarios/ (repeatable)
    pub scenario: Vec<String>,
    /// Every scenario under scenarios/
    pub all: bool,
    /// `stub`: the scripted model server; `live`: the agent's own login and model (needs the network)
    pub model: String,
    /// Where recordings go
    pub out: PathBuf,
    /// Repository root holding profiles/ and scenarios/
    pub root: PathBuf,
    /// Record with the host network when a loopback-only namespace is not available
    pub allow_network: bool,
    /// Record into a temporary directory and compare with the recording under --out
    /// (after normalising randomised values); exit 1 with a diff when they differ
    pub check: bool,
    /// What to do with a scenario already recorded: `once` records only when none
    /// exists and never overwrites, `new` records the missing ones, `all` re-records
    /// and says what changed, `stale` re-records only those made from an older
    /// scenario file
    pub mode: mode::Mode,
    /// Internal: this process already runs inside the network namespace
    pub inside_netns: bool,
    /// The ACP revision the client offers in `initialize`.
    pub offer: Revision,
}

pub fn run(args: Request) -> anyhow::Result<ExitCode> {
    let spec = AgentSpec::parse(&args.agent)?;
    let profile = Profile::find(&args.root, &spec.agent)?;
    let version = profile.version_for(&spec);
    let recipe = profile.recipe(&version)?.clone();
    let scenarios = load_scenarios(&args)?;
    if !args.check {
        // refused before any install or run, not after
        atomic_file::prepare_dir(&args.out)
            .with_context(|| format!("--out {}", args.out.display()))?;
    }
    let live = args.model == "live";
    let targets: Vec<PathBuf> = scenarios
        .iter()
        .map(|s| {
            recording_path(
                &args.out,
                &profile.id,
                &revision_version(&version, args.offer),
                &s.name,
            )
        })
        .collect();
    let actions = match planned_actions(&args, &scenarios, &targets) {
        Ok(actions) => actions,
        Err(exit) => return Ok(exit),
    };
    // Runtimes and packages first (this needs the network; inside the
    // namespace everything is cached and pinned). A recipe without a
    // package runs a program that is already there.
    let installed = crate::packages::install::prepare(&profile, &recipe, &version)?;

    let isolation = match isolation_for(&args, live)? {
        Ok(isolation) => isolation,
        // the run goes on in a loopback-only namespace, as a new process
        Err(exit) => return Ok(exit),
    };

    if !args.inside_netns {
        // without a PID namespace of its own, orphans of the run still come
        // to the recorder, so the sweep after each run finds them
        process_group::become_subreaper();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let interrupt = {
        let _in_runtime = runtime.enter();
        let interrupt = Interrupt::listen().context("taking over SIGINT and SIGTERM")?;
        isolation::end_runs_cleanly();
        if args.inside_netns {
            isolation::end_run_when_parent_goes();
        }
        interrupt
    };
    let check_dir = if args.check {
        Some(
            tempfile::Builder::new()
                .prefix("acp-harness-check-")
                .tempdir()?,
        )
    } else {
        None
    };
    let out_root = check_dir
        .as_ref()
        .map(|d| d.path().to_path_buf())
        .unwrap_or_else(|| args.out.clone());

    let stream_json_profile = profile.protocol == crate::corpus::profile::Protocol::StreamJson;
    let mut failed = 0usize;
    let mut keep_check_dir = false;
    for (i, (scenario, action)) in scenarios.iter().zip(&actions).enumerate() {
        if interrupt.requested().is_some() {
            break;
        }
        if let Some(because) = action.left_alone_because(args.mode) {
            eprintln!(
                "[record] ({}/{}) {}@{version} {}: {because}",
                i + 1,
                scenarios.len(),
                profile.id,
                scenario.name
            );
            continue;
        }
        eprintln!(
            "[record] ({}/{}) {}@{version} {}",
            i + 1,
            scenarios.len(),
            profile.id,
            scenario.name
        );
        let ctx = RunContext {
            profile: &profile,
            recipe: &recipe,
            version: &version,
            installed: &installed,
            scenario,
            live,
            isolation,
            out_root: &out_root,
            offer: args.offer,
        };
        let (finished, outcome) = runtime.block_on(record_one(&ctx, interrupt.clone()))?;
        let late = why_not_commit(&interrupt);
        if outcome == Outcome::Interrupted || late.is_some() {
            let mut finished = finished;
            if let Some(why) = late {
                finished.interrupted(why)?;
            }
            let target = finished.path().to_path_buf();
            let kept = finished.keep_interrupted()?;
            // --check: the kept file is in the temporary directory, so keep that
            keep_check_dir |= args.check;
            eprintln!(
                "[record] interrupted: {} is left as it was; what the run recorded is in {}",
                target.display(),
                kept.display()
            );
            break;
        }
        // The previous recording stays at its path until the new one is renamed over it.
        if *action == mode::Action::Rerecord {
            compare::report_rerecord(&targets[i], finished.temp_path(), finished.path());
        }
        // the last look, after the sync: only the rename follows it
        let path = finished.commit_unless(|| why_not_commit(&interrupt))?;
        let Some(path) = path else {
            eprintln!(
                "[record] interrupted as the run ended: {} is left as it was",
                targets[i].display()
            );
            break;
        };
        eprintln!("[record] {}: {}", path.display(), outcome.as_str());
        if !stream_json_profile {
            eprintln!("[record] {}", schema_check(&path));
        }
        if outcome != Outcome::Ok {
            failed += 1;
            continue;
        }
        if args.check {
            let rel = path.strip_prefix(&out_root).unwrap_or(&path);
            match check_against(&args.out.join(rel), &path) {
                Some(true) => {}
                Some(false) => {
                    failed += 1;
                    keep_check_dir = true;
                }
                None => failed += 1,
            }
        }
    }
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    if keep_check_dir && let Some(dir) = check_dir {
        let kept = dir.keep();
        eprintln!(
            "[check] the fresh recordings are kept in {} for inspection",
            kept.display()
        );
    }
    Ok(if interrupt.requested().is_some() {
        ExitCode::from(EXIT_INTERRUPTED)
    } else if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// What to do with each scenario's recording under `--mode`; `Err` is the
/// exit of a run with nothing to do (or refused), said on stderr.
fn planned_actions(
    args: &Request,
    scenarios: &[Scenario],
    targets: &[PathBuf],
) -> Result<Vec<mode::Action>, ExitCode> {
    if args.check {
        return Ok(vec![mode::Action::Record; targets.len()]);
    }
    let stale = |path: &Path| {
        targets
            .iter()
            .position(|t| t == path)
            .is_some_and(|i| recorded_from_older_scenario(path, &scenarios[i]))
    };
    let actions = match mode::plan(args.mode, targets, Path::is_file, stale) {
        Ok(actions) => actions,
        Err(refusal) => {
            eprintln!("[record] {refusal}");
            return Err(ExitCode::from(2));
        }
    };
    if actions.iter().all(|a| a.is_left_alone()) {
        if args.mode == mode::Mode::Stale {
            eprintln!(
                "[record] no recording asked was made from an older scenario file (--mode stale); nothing to do"
            );
        } else {
            eprintln!(
                "[record] every scenario asked is recorded already (--mode new); nothing to do"
            );
        }
        return Err(ExitCode::SUCCESS);
    }
    Ok(actions)
}

/// The isolation this run records under: inside the loopback-only
/// namespace, or the host network where `--model live` or `--allow-network`
/// says so. `Err` is the exit of the run re-executed inside a namespace.
fn isolation_for(args: &Request, live: bool) -> anyhow::Result<Result<&'static str, ExitCode>> {
    Ok(Ok(if args.inside_netns {
        isolation::enter_inside().context("setting up the loopback-only network namespace")?;
        isolation::NETNS_LOOPBACK
    } else if live {
        eprintln!(
            "[record] --model live: the agent needs the network; recording without isolation"
        );
        isolation::HOST_NETWORK
    } else if isolation::available() {
        let mut inner: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
        inner.push("--inside-netns".into());
        eprintln!("[record] entering a loopback-only network namespace");
        return Ok(Err(isolation::run_reexec(isolation::reexec_command(
            &inner,
        )?)?));
    } else if args.allow_network {
        eprintln!(
            "[record] network isolation unavailable; --allow-network given, recording with the host network"
        );
        isolation::HOST_NETWORK
    } else {
        bail!(
            "network isolation is not available here (`unshare --net` failed; it needs root or user namespaces). \
             Recording refuses to run with the host network unless you pass --allow-network (the header then says \"isolation\":\"none\")."
        );
    }))
}

/// `--check`: whether a fresh recording matches the committed one after
/// normalisation (`None`: they could not be compared), said on stderr.
fn check_against(committed: &Path, fresh: &Path) -> Option<bool> {
    match compare::compare_files(committed, fresh) {
        Ok(report) => {
            if !report.informational.is_empty() {
                eprintln!(
                    "[check] {}: the racy HTTP legs differ (informational, not a failure):\n{}",
                    committed.display(),
                    report.informational
                );
            }
            if report.matches() {
                eprintln!(
                    "[check] {} matches after normalisation",
                    committed.display()
                );
            } else {
                eprintln!(
                    "[check] {} differs after normalisation:\n{}",
                    committed.display(),
                    report.failing
                );
            }
            Some(report.matches())
        }
        Err(e) => {
            eprintln!("[check] cannot compare with {}: {e}", committed.display());
            None
        }
    }
}

/// The version directory a recording made under `offer` goes to: the
/// version itself for v1; for v2 the same version marked `+acp2` (semver
/// build metadata: the same agent version, another protocol revision).
pub fn revision_version(version: &semver::Version, offer: Revision) -> semver::Version {
    match offer {
        Revision::V1 => version.clone(),
        Revision::V2 => semver::Version {
            build: semver::BuildMetadata::new(recording::REVISION_2_BUILD)
                .expect("a valid build identifier"),
            ..version.clone()
        },
    }
}

/// Where `record` writes a scenario of `agent@version` under `out`.
pub fn recording_path(
    out: &Path,
    agent: &str,
    version: &semver::Version,
    scenario: &str,
) -> PathBuf {
    out.join(agent)
        .join(version.to_string())
        .join(format!("{scenario}.jsonl"))
}

fn load_scenarios(args: &Request) -> anyhow::Result<Vec<Scenario>> {
    let dir = args.root.join("scenarios");
    if args.all {
        // an imported scenario has no scripted model to record against
        let all = scenario::load_all(&dir)?.into_iter();
        return Ok(all.filter(|s| !s.imported).collect());
    }
    let named = |name: &String| scenario::find(&dir, name)?.recordable();
    Ok(args.scenario.iter().map(named).collect::<Result<_, _>>()?)
}

struct RunContext<'a> {
    profile: &'a Profile,
    recipe: &'a Recipe,
    version: &'a semver::Version,
    installed: &'a crate::packages::install::Installed,
    scenario: &'a Scenario,
    live: bool,
    isolation: &'a str,
    out_root: &'a Path,
    offer: Revision,
}

/// Records one scenario (until done or `interrupt`); returns the finished
/// recording, not yet at its path, and how the run ended.
async fn record_one(
    ctx: &RunContext<'_>,
    interrupt: Interrupt,
) -> anyhow::Result<(recording::Finished, Outcome)> {
    // a little before the run: file times may be coarse
    let run_started = std::time::SystemTime::now() - std::time::Duration::from_secs(2);
    let RunDir {
        dir: run_dir,
        path: run_path,
        home,
        workspace,
    } = RunDir::create(ctx.profile, ctx.scenario)?;
    let workspace_s = workspace.display().to_string();

    let (mut mcp, token) = agent_launch::serve_unity_ops(ctx.scenario, &workspace_s).await?;
    let mcp_url = mcp.url().to_string();

    // why the run cannot play its whole scenario, known before it starts
    let mut unplayed = Vec::new();
    let mut model = if ctx.live {
        None
    } else {
        let (server, unmapped) =
            scripted_model(ctx.profile, ctx.scenario, &home, &workspace_s).await?;
        unplayed.extend(unmapped);
        Some(server)
    };

    let values = agent_launch::RunValues {
        installed: ctx.installed,
        home: &home,
        workspace: &workspace_s,
        model_url: model.as_ref().map(|m| m.url()).unwrap_or_default(),
        mcp_url: &mcp_url,
        mcp_token: &token,
        version: ctx.version,
    };
    let launch = if ctx.live {
        agent_launch::prepared(
            live_launch(ctx.profile, ctx.recipe, &values.vars())?,
            ctx.installed,
        )?
    } else {
        agent_launch::resolved(ctx.profile, ctx.recipe, &values)?
    };

    let (scrubber, run_placeholders) = scrubbing::run_scrubber(&scrubbing::RunValues {
        mcp_token: &token,
        mcp_url: &mcp_url,
        mcp_addr: mcp.local_addr(),
        model: model.as_ref().map(|m| (m.url(), m.addr())),
        workspace: &workspace_s,
        home: &home,
        run_path: &run_path,
        run_dir: run_dir.path(),
        run_started,
        installed: ctx.installed,
    });

    let stream_json = ctx.profile.protocol == crate::corpus::profile::Protocol::StreamJson;
    let header = run_header(ctx, &launch, &scrubber, run_placeholders);
    let timeline = timeline::Timeline::start(
        header,
        scrubber,
        ctx.out_root.to_path_buf(),
        revision_version(ctx.version, ctx.offer),
        ctx.profile
            .reported_versions
            .get(&ctx.version.to_string())
            .cloned(),
    );
    let tap = timeline.tap.clone();

    let (mcp_calls_tx, mcp_calls) = tokio::sync::watch::channel(0u64);
    let (mcp_methods_tx, mcp_methods) = tokio::sync::watch::channel(http_legs::McpMethods::new());
    let mcp_forward = mcp
        .take_events()
        .map(|rx| forward_mcp(rx, tap.clone(), mcp_calls_tx, mcp_methods_tx));
    let off_script = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let model_forward = model
        .as_mut()
        .and_then(|m| m.take_events())
        .map(|rx| forward_model(rx, tap.clone(), off_script.clone()));

    let timeline_ref = &timeline;
    if stream_json {
        let setup = stream_json_client::Setup {
            launch: &launch,
            stop: ctx.profile.stop_for(ctx.recipe),
            workspace: workspace_s.clone(),
            tap: tap.clone(),
            on_initialized: Box::new(move |result: &Value| {
                timeline_ref.agent_info(
                    result.get("agentInfo").cloned().unwrap_or(Value::Null),
                    None,
                );
            }),
        };
        let end = stream_json_client::run(ctx.scenario, setup, interrupt.clone()).await;
        let forwards = [mcp_forward, model_forward];
        let sinks = RunSinks {
            forwards,
            tap,
            timeline,
            off_script: &off_script,
            unplayed,
            asks_model: ctx.profile.model.asks_model,
        };
        return finish_run(model, mcp, sinks, end, &interrupt).await;
    }
    let setup = driver::Setup {
        launch: &launch,
        stop: ctx.profile.stop_for(ctx.recipe),
        ready: &ctx.profile.ready,
        ready_conditions: [SessionMethod::New, SessionMethod::Load]
            .map(|method| ctx.profile.ready.conditions(ctx.version, method)),
        workspace: workspace_s.clone(),
        mcp: acp_bridge::McpEndpoint {
            name: "unity-ops".into(),
            url: mcp_url.clone(),
            authorization: Some(format!("Bearer {token}")),
        },
        session: &ctx.profile.session,
        offer: ctx.offer,
        live: ctx.live,
        tap: tap.clone(),
        mcp_calls,
        mcp_methods,
        on_initialized: Box::new(move |result: &Value| {
            timeline_ref.agent_info(
                result.get("agentInfo").cloned().unwrap_or(Value::Null),
                result.get("protocolVersion").and_then(Value::as_u64),
            );
        }),
    };
    let end = driver::run(ctx.scenario, setup, interrupt.clone()).await;
    let forwards = [mcp_forward, model_forward];
    let sinks = RunSinks {
        forwards,
        tap,
        timeline,
        off_script: &off_script,
        unplayed,
        asks_model: ctx.profile.model.asks_model,
    };
    finish_run(model, mcp, sinks, end, &interrupt).await
}

/// The recording's header: what ran (scrubbed), for which scenario, how
/// isolated, and the placeholders the run's scrubbing put in.
fn run_header(
    ctx: &RunContext<'_>,
    launch: &Launch,
    scrubber: &recording::Scrubber,
    run_placeholders: impl IntoIterator<Item = (String, String)>,
) -> Header {
    let mut argv = vec![launch.program.clone()];
    argv.extend(launch.args.iter().cloned());
    let mut header = Header {
        format: recording::FORMAT,
        agent: ctx.profile.id.clone(),
        agent_info: Value::Null,
        package: if ctx.recipe.package.is_empty() {
            String::new()
        } else {
            format!("{}@{}", ctx.recipe.package_key(), ctx.version)
        },
        argv: argv.iter().map(|a| scrubber.scrub(a)).collect(),
        scenario: ctx.scenario.name.clone(),
        scenario_sha256: ctx.scenario.sha256.clone(),
        model_mode: if ctx.live { "live" } else { "stub" }.into(),
        harness_version: env!("CARGO_PKG_VERSION").into(),
        client_capabilities: driver::declared_capabilities(ctx.offer),
        protocol_version: ctx.offer.number(),
        acp_schema: Some(
            crate::judging::acp_schema::schema::version_for(ctx.offer.number()).into(),
        ),
        build: Some(recording::HARNESS_BUILD.to_json()),
        date: today(),
        isolation: ctx.isolation.into(),
        synthetic: false,
        placeholders: scrubbing::PLACEHOLDERS
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        session: ctx.profile.session.clone(),
        extra: ctx.installed.header_fields(),
    };
    header.placeholders.extend(run_placeholders);
    if ctx.offer != Revision::V1 {
        header
            .extra
            .insert(recording::ACP_OFFERED.into(), ctx.offer.number().into());
    }
    if ctx.profile.protocol == crate::corpus::profile::Protocol::StreamJson {
        // A reference recording: the replayer skips it, the contract reads it.
        header.client_capabilities = Value::Null;
        header.acp_schema = None;
        header.extra.insert("protocol".into(), "stream-json".into());
    }
    header
}

/// Puts stub-mcp's exchanges on the timeline, then counts its tool calls
/// and methods for the driver (tap first, so a call is on the timeline
/// before the driver acts on it).
fn forward_mcp(
    mut rx: tokio::sync::mpsc::UnboundedReceiver<stub_mcp::Exchange>,
    tap: crate::capture::acp_client::Tap,
    calls: tokio::sync::watch::Sender<u64>,
    methods: tokio::sync::watch::Sender<http_legs::McpMethods>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        while let Some(ex) = rx.recv().await {
            let method = http_legs::mcp_method(&ex);
            let _ = tap.send(http_legs::mcp_event(ex));
            if let Some(method) = method {
                if method == "tools/call" {
                    calls.send_modify(|n| *n += 1);
                }
                methods.send_modify(|m| *m.entry(method).or_default() += 1);
            }
        }
    })
}

/// Puts the model server's exchanges on the timeline, and keeps (and says)
/// each request the script did not expect.
fn forward_model(
    mut rx: tokio::sync::mpsc::UnboundedReceiver<ModelExchange>,
    tap: crate::capture::acp_client::Tap,
    off_script: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        while let Some(ex) = rx.recv().await {
            if let ModelExchange::OffScript { text, .. } = &ex {
                eprintln!("[record] {text}");
                off_script
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(text.clone());
            }
            let _ = tap.send(http_legs::model_event(ex));
        }
    })
}

/// The scripted model server for `scenario`, speaking as `profile`'s agent
/// expects; with the roles of the agent's own tools the script calls but
/// the profile does not map (the run cannot play those).
pub(crate) async fn scripted_model(
    profile: &Profile,
    scenario: &Scenario,
    home: &Path,
    workspace: &str,
) -> anyhow::Result<(crate::capture::model_server::Running, Vec<String>)> {
    let flavour: Flavour = profile
        .model
        .flavour
        .parse_as()
        .with_context(|| format!("{}: [model] flavour", profile.path.display()))?;
    let naming: ToolNaming = profile
        .model
        .tool_naming
        .clone()
        .try_into()
        .with_context(|| format!("{}: [model] tool_naming", profile.path.display()))?;
    let agent_tools: AgentTools = match &profile.model.agent_tools {
        None => AgentTools::default(),
        Some(v) => v
            .clone()
            .try_into()
            .with_context(|| format!("{}: [model.agent_tools]", profile.path.display()))?,
    };
    let side_requests: SideRequests = profile
        .model
        .side_requests
        .clone()
        .try_into()
        .with_context(|| format!("{}: [[model.side_requests]]", profile.path.display()))?;
    let home_s = home.display().to_string();
    let agent_tools = agent_tools.with_run_values(&[("workspace", workspace), ("home", &home_s)]);
    let mut script = ModelScript::from_scenario(scenario);
    script.mcp_call_arguments = match serde_json::to_value(&profile.model.mcp_call_arguments)
        .with_context(|| format!("{}: [model] mcp_call_arguments", profile.path.display()))?
    {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    let unmapped = finish::unmapped_roles(&script, &agent_tools);
    let server =
        ModelServer::start_with_profile(flavour, script, naming, agent_tools, side_requests)
            .await
            .context("starting the scripted model server")?;
    Ok((server, unmapped))
}

/// `--model live`: the agent keeps its own login and model, so nothing that
/// points it at the scripted model server is written or set.
fn live_launch(profile: &Profile, recipe: &Recipe, vars: &Vars) -> anyhow::Result<Launch> {
    let mut launch = Launch::resolve(profile, recipe, vars)?;
    launch.files.clear();
    let scripted = |k: &str| {
        let template = recipe.env.get(k).or_else(|| profile.env.get(k));
        template.is_some_and(|t| {
            t.contains("{model_url}") || t.contains("{api_key}") || t.contains("{home}")
        })
    };
    launch.env.retain(|k, _| !scripted(k));
    for key in ["HOME", "USER", "CODEX_HOME"] {
        if let Some(v) = std::env::var_os(key) {
            launch
                .env
                .entry(key.to_string())
                .or_insert(v.to_string_lossy().into_owned());
        }
    }
    Ok(launch)
}

/// Parses a profile string into a model-server enum through its serde names.
trait ParseAs {
    fn parse_as<T: serde::de::DeserializeOwned>(&self) -> anyhow::Result<T>;
}

impl ParseAs for String {
    fn parse_as<T: serde::de::DeserializeOwned>(&self) -> anyhow::Result<T> {
        serde_json::from_value(Value::String(self.clone()))
            .with_context(|| format!("unknown value {self:?}"))
    }
}

/// Whether the recording at `path` was made from an older version of
/// `scenario` (its header's `scenario_sha256`, read from the first line
/// alone); an unreadable header counts as not stale, so it is kept.
fn recorded_from_older_scenario(path: &Path, scenario: &crate::corpus::scenario::Scenario) -> bool {
    use std::io::BufRead;
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut first = String::new();
    if std::io::BufReader::new(file).read_line(&mut first).is_err() {
        return false;
    }
    serde_json::from_str::<serde_json::Value>(&first)
        .ok()
        .and_then(|h| {
            h["scenario_sha256"]
                .as_str()
                .map(|s| scenario.changed_since(s))
        })
        .unwrap_or(false)
}
