//! Agent install cache (npm, per user, versions side by side).
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct InstallArgs {
    /// `<agent>@<version>`, e.g. codex-acp@2.6.0
    pub spec: String,
}

pub fn run(_args: InstallArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("install is not built yet")
}
