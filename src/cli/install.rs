//! `acp-harness install <agent>@<version>`: the agent's packages and
//! runtimes into the per-user cache ([`crate::packages::install`]), the main
//! package's directory printed for scripts.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;

use crate::corpus::profile::{AgentSpec, Profile};
use crate::packages::install::prepare;

#[derive(clap::Args, Debug)]
pub struct InstallArgs {
    /// `<agent>@<version>`, e.g. codex-acp@2.6.0 (without a version: the profile's default)
    pub spec: String,
    /// Repository root holding `profiles/` (default: the current directory)
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
}

pub fn run(args: InstallArgs) -> anyhow::Result<ExitCode> {
    let spec = AgentSpec::parse(&args.spec)?;
    let profile = Profile::find(&args.root, &spec.agent)?;
    let version = profile.version_for(&spec);
    let recipe = profile.recipe(&version)?;
    if recipe.package.is_empty()
        && recipe.packages.is_empty()
        && recipe.runtime.over(&profile.runtime) == Default::default()
    {
        bail!(
            "the recipe for versions {} names no package and no runtime; there is nothing to install",
            recipe.versions
        );
    }
    let installed = prepare(&profile, recipe, &version)?;
    if let Some(n) = &installed.node {
        eprintln!("[install] node {}: {}", n.version, n.bin_dir.display());
    }
    for (alias, p) in &installed.packages {
        eprintln!("[install] {alias} ({}): {}", p.spec, p.dir.display());
    }
    if let Some(dir) = &installed.main {
        println!("{}", dir.display());
    }
    Ok(ExitCode::SUCCESS)
}
