//! The recorder: runs a scenario against a real agent and writes a recording.
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct RecordArgs {}

pub fn run(_args: RecordArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("record is not built yet")
}
