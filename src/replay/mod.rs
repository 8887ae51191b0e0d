//! The replayer: a recording plays the agent to the bridge.
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
