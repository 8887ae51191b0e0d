//! `acp-harness sandbox --agent A@V --scenario S -- COMMAND...`: a real
//! agent of the corpus in the recorder's sandbox, with a panel of someone
//! else's choosing in front of it. The sandbox is the one `record` runs in
//! (a loopback-only network namespace whose init is this process, stub-mcp
//! and the scripted model server playing `S`, a fresh home and workspace,
//! the agent launched from its profile); `COMMAND` is started inside it and
//! is told in its environment how to start the agent, so a real panel (an
//! Agent SDK driving `acp-bridge --tap`) holds a live session with a real
//! agent that never reaches beyond 127.0.0.1. Nothing is recorded here: the
//! panel's bridge taps the session (`docs/tap.md`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::capture::isolation;
use crate::capture::model_server::ModelExchange;
use crate::capture::record::{RunDir, RunValues, resolved_launch, serve_unity_ops};
use crate::corpus::profile::{AgentSpec, Launch, Profile};
use crate::corpus::scenario;

/// What `COMMAND` is told, by environment variable.
pub const ENV_AGENT: &str = "ACP_BRIDGE_AGENT";
pub const ENV_WORKSPACE: &str = "ACP_HARNESS_WORKSPACE";
pub const ENV_MCP_URL: &str = "ACP_HARNESS_MCP_URL";
pub const ENV_MCP_AUTHORIZATION: &str = "ACP_HARNESS_MCP_AUTHORIZATION";
/// A file that exists once the agent listed unity-ops' tools: the panel
/// waits for it before its first prompt, as the recorder's readiness does.
pub const ENV_MCP_READY: &str = "ACP_HARNESS_MCP_READY";

/// The `sandbox` arguments, parsed.
#[derive(Debug, Clone)]
pub struct Request {
    pub agent: String,
    pub scenario: String,
    pub root: PathBuf,
    /// How long `COMMAND` may run before it is ended (exit 2).
    pub timeout: Duration,
    pub command: Vec<std::ffi::OsString>,
    /// Internal: this process already runs inside the namespaces.
    pub inside_netns: bool,
}

pub fn run(req: Request) -> anyhow::Result<ExitCode> {
    let spec = AgentSpec::parse(&req.agent)?;
    let profile = Profile::find(&req.root, &spec.agent)?;
    if profile.protocol != crate::corpus::profile::Protocol::Acp {
        bail!(
            "{}: the sandbox runs an ACP agent behind the panel's bridge; this profile speaks stream-json",
            profile.id
        );
    }
    let version = profile.version_for(&spec);
    let recipe = profile.recipe(&version)?.clone();
    let scenario = scenario::find(req.root.join("scenarios"), &req.scenario)?.recordable()?;
    let Some((program, _)) = req.command.split_first() else {
        bail!("no panel command: give it after `--`");
    };
    let installed = crate::packages::install::prepare(&profile, &recipe, &version)?;
    if req.inside_netns {
        isolation::enter_inside().context("setting up the loopback-only network namespace")?;
    } else if isolation::available() {
        // the flag goes before `--`, so the panel command stays as given
        let mut inner: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
        let at = inner.iter().position(|a| a == "--").unwrap_or(inner.len());
        inner.insert(at, "--inside-netns".into());
        eprintln!("[sandbox] entering a loopback-only network namespace");
        return isolation::run_reexec(isolation::reexec_command(&inner)?);
    } else {
        bail!(
            "network isolation is not available here (`unshare --net` failed; it needs root or user namespaces), and the sandbox never runs an agent with the host network"
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let program = program.clone();
    let args = req.command[1..].to_vec();
    runtime.block_on(async move {
        let RunDir {
            dir: _run_dir,
            path: run_path,
            home,
            workspace,
        } = RunDir::create(&profile, &scenario)?;
        let workspace_s = workspace.display().to_string();
        let (mut mcp, token) = serve_unity_ops(&scenario, &workspace_s).await?;
        let (mut model, unmapped) =
            crate::capture::record::scripted_model(&profile, &scenario, &home, &workspace_s)
                .await?;
        for role in unmapped {
            eprintln!("[sandbox] {role}");
        }
        let values = RunValues {
            installed: &installed,
            home: &home,
            workspace: &workspace_s,
            model_url: model.url(),
            mcp_url: mcp.url(),
            mcp_token: &token,
            version: &version,
        };
        let launch = resolved_launch(&profile, &recipe, &values)?;
        let agent = launcher(&home, &profile.id, &launch)?;

        let ready = run_path.join("mcp-ready");
        let mcp_forward = mcp
            .take_events()
            .map(|rx| mark_mcp_ready(rx, ready.clone()));
        let model_forward = model.take_events().map(count_model_requests);

        let mut cmd = tokio::process::Command::new(&program);
        cmd.args(&args)
            .envs(&launch.env)
            .env(ENV_AGENT, &agent)
            .env(ENV_WORKSPACE, &workspace)
            .env(ENV_MCP_URL, mcp.url())
            .env(ENV_MCP_AUTHORIZATION, format!("Bearer {token}"))
            .env(ENV_MCP_READY, &ready)
            .kill_on_drop(true);
        eprintln!(
            "[sandbox] {}@{version} behind the panel command {:?} (scenario {})",
            profile.id, program, scenario.name
        );
        let mut child = cmd
            .spawn()
            .with_context(|| format!("starting the panel command {program:?}"))?;
        let code = panel_exit(&mut child, req.timeout).await?;
        model.shutdown().await;
        mcp.shutdown().await;
        if let Some(f) = mcp_forward {
            let _ = tokio::time::timeout(Duration::from_secs(5), f).await;
        }
        if let Some(f) = model_forward
            && let Ok(Ok(asked)) = tokio::time::timeout(Duration::from_secs(5), f).await
        {
            eprintln!("[sandbox] the scripted model server answered {asked} request(s)");
        }
        Ok(ExitCode::from(code))
    })
}

/// The sandbox's exit for the panel command's: 0 when it succeeded, 1 when
/// it failed, 2 when it ran past `timeout` and was ended.
async fn panel_exit(child: &mut tokio::process::Child, timeout: Duration) -> anyhow::Result<u8> {
    Ok(match tokio::time::timeout(timeout, child.wait()).await {
        Ok(status) => {
            let status = status.context("waiting for the panel command")?;
            eprintln!("[sandbox] the panel command exited {status}");
            match status.code() {
                Some(0) => 0,
                _ => 1,
            }
        }
        Err(_) => {
            eprintln!(
                "[sandbox] the panel command ran longer than {:?}: ended",
                timeout
            );
            let _ = child.kill().await;
            2
        }
    })
}

/// Marks the MCP server ready (the file `ready`) once the agent listed
/// unity-ops' tools.
fn mark_mcp_ready(
    mut rx: tokio::sync::mpsc::UnboundedReceiver<stub_mcp::Exchange>,
    ready: PathBuf,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        while let Some(ex) = rx.recv().await {
            let method = crate::capture::record::mcp_method(&ex);
            if method.as_deref() == Some("tools/list") && !ready.exists() {
                let _ = std::fs::write(&ready, "");
            }
        }
    })
}

/// Counts the scripted model's answered requests, and says each request
/// the script did not expect.
fn count_model_requests(
    mut rx: tokio::sync::mpsc::UnboundedReceiver<ModelExchange>,
) -> tokio::task::JoinHandle<usize> {
    tokio::spawn(async move {
        let mut asked = 0usize;
        while let Some(ex) = rx.recv().await {
            match &ex {
                ModelExchange::OffScript { text, .. } => {
                    eprintln!("[sandbox] model server: {text}")
                }
                _ => asked += 1,
            }
        }
        asked
    })
}

/// The agent's command as the panel's bridge runs it: a script in the
/// fresh home's `~/.local/bin` that starts the profile's program, so the
/// tap's header names `<home>/.local/bin/<agent>` (a real user's install
/// looks like it) and no path of the install cache.
fn launcher(home: &Path, id: &str, launch: &Launch) -> anyhow::Result<PathBuf> {
    let bin = home.join(".local/bin");
    std::fs::create_dir_all(&bin)?;
    let path = bin.join(id);
    let mut argv = vec![launch.program.clone()];
    argv.extend(launch.args.iter().cloned());
    let quoted: Vec<String> = argv
        .iter()
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    std::fs::write(
        &path,
        format!("#!/bin/sh\nexec {} \"$@\"\n", quoted.join(" ")),
    )
    .with_context(|| format!("writing {}", path.display()))?;
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    Ok(path)
}
