//! The replayer: a recording plays the agent to the bridge, the scenario
//! plays the panel, and the bridge's output is compared with a golden and the
//! scenario's expectations.

pub mod divergence;
pub mod fake_agent;
pub mod normalise;
pub mod transcript;

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct ReplayArgs {}
#[derive(clap::Args, Debug)]
pub struct CheckArgs {}
#[derive(clap::Args, Debug)]
pub struct FakeAgentArgs {}

pub fn run(_args: ReplayArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("replay is not built yet")
}
pub fn check(_args: CheckArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("check is not built yet")
}
pub fn fake_agent(_args: FakeAgentArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("fake-agent is not built yet")
}
