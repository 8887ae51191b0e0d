//! `acp-harness sandbox`: its arguments; the work is [`crate::capture::sandbox`].

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use super::exit::EXIT_CODES;
use crate::capture::sandbox;

#[derive(clap::Args, Debug, Clone)]
#[command(after_help = EXIT_CODES)]
pub struct SandboxArgs {
    /// `<agent>[@<version>]`, e.g. codex-acp@2.6.0 (default version: the profile's)
    #[arg(long)]
    pub agent: String,
    /// The scenario whose scripted model replies the model server plays
    #[arg(long)]
    pub scenario: String,
    /// Repository root holding profiles/ and scenarios/
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
    /// End the panel command after this many seconds (exit 2)
    #[arg(long, default_value_t = 600)]
    pub timeout_secs: u64,
    /// Internal: this process already runs inside the network namespace
    #[arg(long, hide = true)]
    pub inside_netns: bool,
    /// The panel command, run inside the sandbox. Its environment has the
    /// agent's (`HOME` the fresh home), ACP_BRIDGE_AGENT (the agent's command
    /// for acp-bridge), ACP_HARNESS_WORKSPACE, ACP_HARNESS_MCP_URL,
    /// ACP_HARNESS_MCP_AUTHORIZATION (stub-mcp's) and ACP_HARNESS_MCP_READY (a
    /// file that exists once the agent listed stub-mcp's tools).
    #[arg(last = true, required = true)]
    pub command: Vec<std::ffi::OsString>,
}

pub fn run(args: SandboxArgs) -> anyhow::Result<ExitCode> {
    sandbox::run(sandbox::Request {
        agent: args.agent,
        scenario: args.scenario,
        root: args.root,
        timeout: Duration::from_secs(args.timeout_secs),
        command: args.command,
        inside_netns: args.inside_netns,
    })
}
