//! `acp-harness registry`: the official ACP agent registry beside the
//! profiles here: `list` (its agents, and which have a profile), `profile
//! <id>` (a starter profile for one of them).

use std::path::PathBuf;
use std::process::ExitCode;

use super::exit::Exit;
use crate::packages::acp_registry::{self, DEFAULT_URL};

#[derive(clap::Args, Debug)]
#[command(after_help = super::exit::EXIT_CODES)]
pub struct RegistryArgs {
    #[command(subcommand)]
    pub command: RegistryCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum RegistryCommand {
    /// The registry's agents: version, distribution, and the profile here that runs it.
    List(ListArgs),
    /// Print a starter profile for a registry agent (its launch filled in, the provider part left to fill).
    Profile(ProfileArgs),
}

#[derive(clap::Args, Debug)]
pub struct ListArgs {
    /// The registry index: a file or an http(s) URL.
    #[arg(long, value_name = "FILE|URL", default_value = DEFAULT_URL)]
    pub registry: String,
    /// `table` for people, `json` for scripts.
    #[arg(long, value_enum, default_value_t = super::outdated::Format::Table)]
    pub format: super::outdated::Format,
    /// Repository root holding profiles/.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
}

#[derive(clap::Args, Debug)]
pub struct ProfileArgs {
    /// The agent's id in the registry.
    pub id: String,
    /// The registry index: a file or an http(s) URL.
    #[arg(long, value_name = "FILE|URL", default_value = DEFAULT_URL)]
    pub registry: String,
    /// Repository root holding profiles/ (a profile here that already runs
    /// the agent is named on stderr).
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
}

/// One agent of the registry, as `list` shows it.
#[derive(Debug, serde::Serialize)]
struct Listed<'a> {
    id: &'a str,
    version: &'a str,
    distribution: String,
    /// The profile here that runs it, if any.
    profile: Option<String>,
}

pub fn run(args: RegistryArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        RegistryCommand::List(a) => list(a),
        RegistryCommand::Profile(a) => profile(a),
    }
}

/// Every profile under `root`.
fn profiles(root: &std::path::Path) -> anyhow::Result<Vec<crate::corpus::profile::Profile>> {
    crate::packages::outdated::agents(root, &[])?
        .iter()
        .map(|agent| Ok(crate::corpus::profile::Profile::find(root, agent)?))
        .collect()
}

fn list(args: ListArgs) -> anyhow::Result<ExitCode> {
    let index = acp_registry::load(&args.registry)?;
    let profiles = profiles(&args.root)?;
    let listed: Vec<Listed> = index
        .agents
        .iter()
        .map(|e| Listed {
            id: &e.id,
            version: &e.version,
            distribution: e.distribution_text(),
            profile: acp_registry::profile_of(&profiles, e).map(|p| p.id.clone()),
        })
        .collect();
    match args.format {
        super::outdated::Format::Json => println!("{}", serde_json::to_string_pretty(&listed)?),
        super::outdated::Format::Table => {
            let rows: Vec<[String; 4]> = listed
                .iter()
                .map(|l| {
                    [
                        l.id.to_string(),
                        l.version.to_string(),
                        l.distribution.clone(),
                        l.profile.clone().unwrap_or_else(|| "-".into()),
                    ]
                })
                .collect();
            print!(
                "{}",
                crate::text_table::render(["agent", "version", "distribution", "profile"], &rows)
            );
            let with = listed.iter().filter(|l| l.profile.is_some()).count();
            println!(
                "{} agents in the registry, {with} with a profile here",
                listed.len()
            );
        }
    }
    Ok(Exit::Good.into())
}

fn profile(args: ProfileArgs) -> anyhow::Result<ExitCode> {
    let index = acp_registry::load(&args.registry)?;
    let entry = index.agent(&args.id, &args.registry)?;
    // what the starter says becomes a profile's id and default version
    crate::corpus::name::check("the registry entry's id", &entry.id)?;
    crate::corpus::name::check("the registry entry's version", &entry.version)?;
    // a root without profiles/ has none that runs it
    let here = if args
        .root
        .join(crate::corpus::profile::PROFILES_DIR)
        .is_dir()
    {
        profiles(&args.root)?
    } else {
        Vec::new()
    };
    if let Some(p) = acp_registry::profile_of(&here, entry) {
        eprintln!(
            "[registry] {} already runs {}: {}",
            p.id,
            entry.id,
            p.path.display()
        );
    }
    print!("{}", acp_registry::starter_profile(entry, &args.registry));
    Ok(Exit::Good.into())
}
