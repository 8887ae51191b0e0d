//! The official ACP agent registry (agentclientprotocol/registry): one
//! entry per agent with its version and how clients launch it (`npx` and
//! `uvx` packages, `binary` archives per platform), published as one
//! `registry.json` (`{version, agents, extensions}`). Read from a file or a
//! URL (fetched with `curl`, bounded by a timeout), matched against the
//! profiles here, and turned into a starter profile for an agent that has
//! none. Reading is tolerant: fields this module does not use are ignored,
//! so a newer registry still reads.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::corpus::profile::{Profile, Recipe, Source};

/// The published index (the registry's README).
pub const DEFAULT_URL: &str =
    "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json";

/// How long fetching the index may take.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, thiserror::Error)]
pub enum AgentRegistryError {
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{url}: cannot fetch: {why}")]
    Fetch { url: String, why: String },
    #[error("{from}:{line}:{column}: not an ACP registry index: {message}")]
    Parse {
        from: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("no agent `{id}` in the registry {from} (it lists: {known})")]
    UnknownAgent {
        id: String,
        from: String,
        known: String,
    },
}

/// `registry.json`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct Index {
    /// The index format's version (`1.0.0`).
    pub version: String,
    pub agents: Vec<Entry>,
}

/// One agent (an `agent.json`).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct Entry {
    pub id: String,
    pub name: String,
    pub version: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub repository: Option<String>,
    pub distribution: Distribution,
}

/// How clients get and start the agent; at least one kind is given.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
pub struct Distribution {
    /// An npm package, run as `npx <package> [args]`.
    #[serde(default)]
    pub npx: Option<PackageLaunch>,
    /// A PyPI package, run as `uvx <package> [args]`.
    #[serde(default)]
    pub uvx: Option<PackageLaunch>,
    /// Archives by platform (`linux-x86_64`, ...).
    #[serde(default)]
    pub binary: BTreeMap<String, BinaryTarget>,
}

/// The distribution kinds this module reads, as the schema names them.
pub const DISTRIBUTION_KINDS: [&str; 3] = ["binary", "npx", "uvx"];

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct PackageLaunch {
    /// The package, usually pinned: `@scope/name@1.2.3`, `name==1.2.3`.
    pub package: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct BinaryTarget {
    pub archive: String,
    pub cmd: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// A package named by a registry entry, without its version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    pub source: Source,
    pub name: String,
    /// The version pinned in the entry's spec, if any.
    pub version: Option<String>,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
}

impl Package {
    /// The key the install cache and `outdated` use
    /// ([`Recipe::package_key`]).
    pub fn key(&self) -> String {
        match self.source {
            Source::Npm => self.name.clone(),
            Source::Pypi => format!("{}{}", crate::corpus::profile::PYPI_PREFIX, self.name),
        }
    }
}

/// `@scope/name@1.2.3` -> (`@scope/name`, `1.2.3`); a leading `@` is the scope's.
pub fn split_npm_spec(spec: &str) -> (&str, Option<&str>) {
    let start = usize::from(spec.starts_with('@'));
    match spec[start..].find('@') {
        Some(i) => (&spec[..start + i], Some(&spec[start + i + 1..])),
        None => (spec, None),
    }
}

/// `name==1.2.3` or `name@1.2.3` -> (`name`, `1.2.3`); other specifiers
/// (`>=`, `~=`) name no single version.
pub fn split_pypi_spec(spec: &str) -> (&str, Option<&str>) {
    if let Some((name, v)) = spec.split_once("==").or_else(|| spec.split_once('@')) {
        return (name.trim(), Some(v.trim()));
    }
    let end = spec
        .find(['<', '>', '=', '!', '~', ';', '['])
        .unwrap_or(spec.len());
    (spec[..end].trim(), None)
}

impl Entry {
    /// The package a package registry installs it from: npm first, then PyPI;
    /// `None` for an agent published only as archives.
    pub fn package(&self) -> Option<Package> {
        let (source, launch) = match (&self.distribution.npx, &self.distribution.uvx) {
            (Some(l), _) => (Source::Npm, l),
            (None, Some(l)) => (Source::Pypi, l),
            (None, None) => return None,
        };
        let (name, version) = match source {
            Source::Npm => split_npm_spec(&launch.package),
            Source::Pypi => split_pypi_spec(&launch.package),
        };
        Some(Package {
            source,
            name: name.to_string(),
            version: version.map(str::to_string),
            args: launch.args.clone(),
            env: launch.env.clone(),
        })
    }

    /// How it is distributed, for people: `npx @scope/name`, `uvx name`,
    /// `binary (4 platforms)`.
    pub fn distribution_text(&self) -> String {
        let d = &self.distribution;
        let mut kinds = Vec::new();
        if let Some(l) = &d.npx {
            kinds.push(format!("npx {}", split_npm_spec(&l.package).0));
        }
        if let Some(l) = &d.uvx {
            kinds.push(format!("uvx {}", split_pypi_spec(&l.package).0));
        }
        if !d.binary.is_empty() {
            kinds.push(format!("binary ({} platforms)", d.binary.len()));
        }
        kinds.join(", ")
    }
}

/// Where an index comes from: `http(s)://...` is fetched, anything else is a file.
pub fn is_url(location: &str) -> bool {
    location.starts_with("https://") || location.starts_with("http://")
}

/// Reads the index at `location` (a file or a URL).
pub fn load(location: &str) -> Result<Index, AgentRegistryError> {
    let text = if is_url(location) {
        fetch(location)?
    } else {
        std::fs::read_to_string(location).map_err(|source| AgentRegistryError::Read {
            path: PathBuf::from(location),
            source,
        })?
    };
    parse(&text, location)
}

/// Parses an index; `from` names it in errors.
pub fn parse(text: &str, from: &str) -> Result<Index, AgentRegistryError> {
    serde_json::from_str(text).map_err(|e| AgentRegistryError::Parse {
        from: from.to_string(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })
}

/// `curl` fetches it (its proxy settings apply), stopped at [`FETCH_TIMEOUT`].
fn fetch(url: &str) -> Result<String, AgentRegistryError> {
    let err = |why: String| AgentRegistryError::Fetch {
        url: url.to_string(),
        why,
    };
    let mut cmd = tokio::process::Command::new("curl");
    cmd.args(["--fail", "--silent", "--show-error", "--location"])
        .arg("--max-time")
        .arg(FETCH_TIMEOUT.as_secs().to_string())
        .arg("--")
        .arg(url);
    let out = process_group::output_blocking(
        cmd,
        FETCH_TIMEOUT + Duration::from_secs(5),
        process_group::Pipes::Capture,
    )
    .map_err(|e| match e {
        process_group::RunError::Timeout(_) => {
            err(format!("no answer within {} s", FETCH_TIMEOUT.as_secs()))
        }
        process_group::RunError::Spawn(e) | process_group::RunError::Wait(e) => {
            err(format!("cannot run curl: {e}"))
        }
    })?;
    if !out.status.success() {
        return Err(err(String::from_utf8_lossy(&out.stderr).trim().to_string()));
    }
    String::from_utf8(out.stdout).map_err(|_| err("the answer is not UTF-8".into()))
}

impl Index {
    /// The entry `id`, or an error listing the ids there are.
    pub fn agent(&self, id: &str, from: &str) -> Result<&Entry, AgentRegistryError> {
        self.agents
            .iter()
            .find(|e| e.id == id)
            .ok_or_else(|| AgentRegistryError::UnknownAgent {
                id: id.to_string(),
                from: from.to_string(),
                known: self
                    .agents
                    .iter()
                    .map(|e| e.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

/// Whether `profile` is the registry's `entry`: one of its recipes installs
/// (or is renamed to) the entry's package, or, for an agent without a
/// package, the ids are the same.
pub fn is_profile_of(profile: &Profile, entry: &Entry) -> bool {
    match entry.package() {
        Some(p) => {
            let key = p.key();
            profile
                .recipes
                .iter()
                .any(|r| r.package_key() == key || r.renamed_key().is_some_and(|(to, _)| to == key))
        }
        None => profile.id == entry.id,
    }
}

/// The profile of `entry` among `profiles`: by package first, then by id.
pub fn profile_of<'a>(profiles: &'a [Profile], entry: &Entry) -> Option<&'a Profile> {
    profiles
        .iter()
        .find(|p| is_profile_of(p, entry))
        .or_else(|| profiles.iter().find(|p| p.id == entry.id))
}

/// The entry of `profile` in the index, if there is one.
pub fn entry_of<'a>(index: &'a Index, profile: &Profile) -> Option<&'a Entry> {
    index
        .agents
        .iter()
        .find(|e| is_profile_of(profile, e))
        .or_else(|| index.agents.iter().find(|e| e.id == profile.id))
}

/// What the registry says of one profile's agent, beside what is recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Comparison {
    /// The registry's id and version.
    pub id: String,
    pub version: String,
    /// The registry's version is newer than every recorded one.
    pub newer_than_recorded: bool,
    /// How the recipe that would run the registry's version differs from
    /// the registry's launch (package, arguments), one sentence each.
    pub mismatches: Vec<String>,
}

/// The arguments a recipe gives the agent itself: its args without the
/// leading entry points inside the install (`{package_dir}/.../index.js`),
/// which `npx` finds on its own.
pub fn agent_args(recipe: &Recipe) -> Vec<String> {
    let entry_point = |a: &String| a.contains("{package_dir") || a.contains("{install_dir}");
    recipe
        .args
        .iter()
        .skip_while(|a| entry_point(a))
        .cloned()
        .collect()
}

/// Compares a profile with its registry entry: is the registry's version
/// newer than the newest recorded, and does the recipe for that version
/// install the registry's package and pass its arguments (each of the
/// registry's arguments must be among the recipe's; a recipe may add its
/// own, e.g. the model endpoint).
pub fn compare(
    profile: &Profile,
    entry: &Entry,
    newest_recorded: Option<&semver::Version>,
) -> Comparison {
    let version = semver::Version::parse(&entry.version).ok();
    let newer_than_recorded = match (&version, newest_recorded) {
        (Some(v), Some(r)) => v > r,
        (Some(_), None) => true,
        (None, _) => false,
    };
    let mut mismatches = Vec::new();
    match (entry.package(), &version) {
        (None, _) => mismatches.push(format!(
            "the registry distributes {} {} only as {}, not from a package registry",
            entry.id,
            entry.version,
            entry.distribution_text()
        )),
        (Some(_), None) => mismatches.push(format!(
            "the registry's version {:?} is not semver",
            entry.version
        )),
        (Some(p), Some(v)) => match profile.recipe(v) {
            Err(_) => mismatches.push(format!("no recipe covers the registry's version {v}")),
            Ok(recipe) => {
                if recipe.package_key() != p.key() {
                    mismatches.push(format!(
                        "the registry installs {} {v}; the recipe for {v} installs {}",
                        p.key(),
                        if recipe.package.is_empty() {
                            "nothing".to_string()
                        } else {
                            recipe.package_key()
                        }
                    ));
                }
                let ours = agent_args(recipe);
                let missing: Vec<&String> = p.args.iter().filter(|a| !ours.contains(a)).collect();
                if !missing.is_empty() {
                    mismatches.push(format!(
                        "the registry starts {v} with {}; the recipe for {v} passes {}",
                        p.args.join(" "),
                        if ours.is_empty() {
                            "no arguments".to_string()
                        } else {
                            ours.join(" ")
                        }
                    ));
                }
            }
        },
    }
    Comparison {
        id: entry.id.clone(),
        version: entry.version.clone(),
        newer_than_recorded,
        mismatches,
    }
}

/// A TOML basic string.
fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn quoted_list(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|s| quoted(s)).collect();
    format!("[{}]", items.join(", "))
}

/// The prefix of a line a person fills in (uncomment it and choose): the
/// rest of the line is TOML.
pub const PLACEHOLDER: &str = "# TODO: ";

/// A starter profile for `entry`: the launch from the registry (package and
/// source from `npx`/`uvx`, program and arguments), and the provider part
/// (`[model]`, the model endpoint's environment) as [`PLACEHOLDER`] lines.
/// It parses as a profile once those are filled in.
pub fn starter_profile(entry: &Entry, from: &str) -> String {
    let mut out = String::new();

    line(
        &mut out,
        &format!(
            "# {} ({} {} in the ACP registry {from}): {}",
            entry.name, entry.id, entry.version, entry.description
        ),
    );
    if let Some(repo) = &entry.repository {
        line(&mut out, &format!("# Source: {repo}"));
    }
    line(
        &mut out,
        &format!(
            "# A starter profile from `acp-harness registry profile`. Fill in each line\n\
             # starting `# TODO: ` (uncomment it, choose), then record every scenario:\n\
             # acp-harness record --agent {}@{} --all (ARCHITECTURE.md, Add an agent).",
            entry.id, entry.version
        ),
    );
    line(&mut out, "");
    line(&mut out, &format!("id = {}", quoted(&entry.id)));
    line(
        &mut out,
        &format!("default_version = {}", quoted(&entry.version)),
    );
    line(&mut out, "");
    line(&mut out, "[model]");
    line(
        &mut out,
        "# The provider API the agent speaks to the scripted model server:\n\
         # anthropic, responses, chat_completions or gemini (src/capture/model_server/).\n\
         # TODO: flavour = \"chat_completions\"\n\
         # How the agent names unity-ops tools toward the model.\n\
         # TODO: tool_naming = { form = \"flat\", template = \"mcp__unity-ops__{tool}\" }",
    );
    line(&mut out, "");
    line(&mut out, "[env]");
    line(&mut out, "HOME = \"{home}\"");
    line(
        &mut out,
        "# Point the agent at the scripted model server with a dummy key, in the\n\
         # variables it reads (these are the OpenAI SDK's).\n\
         # TODO: OPENAI_BASE_URL = \"{model_url}/v1\"\n\
         # TODO: OPENAI_API_KEY = \"{api_key}\"",
    );
    line(&mut out, "");
    line(&mut out, "[[recipe]]");
    line(
        &mut out,
        &format!("versions = {}", quoted(&format!(">={}", entry.version))),
    );
    recipe_launch(&mut out, entry);
    out
}

/// The recipe's launch: the package's program and arguments as `npx` or
/// `uvx` would run them, or, for an agent distributed only as an archive,
/// the archive's command to fill in by hand.
fn recipe_launch(out: &mut String, entry: &Entry) {
    match entry.package() {
        Some(p) => {
            let unscoped = p.name.rsplit('/').next().unwrap_or(&p.name);
            line(out, &format!("package = {}", quoted(&p.name)));
            match p.source {
                Source::Npm => {
                    line(
                        out,
                        &format!(
                            "# The bin `npx {}` runs: the package's only bin, else the one named\n\
                             # like the package (`npm view {} bin`).",
                            p.name, p.name
                        ),
                    );
                    line(
                        out,
                        &format!(
                            "program = {}",
                            quoted(&format!("{{package_dir}}/node_modules/.bin/{unscoped}"))
                        ),
                    );
                }
                Source::Pypi => {
                    line(out, "source = \"pypi\"");
                    line(
                        out,
                        &format!(
                            "# The console script `uvx {}` runs, named like the package.",
                            p.name
                        ),
                    );
                    line(
                        out,
                        &format!(
                            "program = {}",
                            quoted(&format!("{{install_dir}}/bin/{unscoped}"))
                        ),
                    );
                }
            }
            line(out, &format!("args = {}", quoted_list(&p.args)));
            env_table(out, &p.env);
        }
        None => {
            let (platform, target) = entry
                .distribution
                .binary
                .get_key_value("linux-x86_64")
                .or_else(|| entry.distribution.binary.iter().next())
                .map(|(k, v)| (k.as_str(), Some(v)))
                .unwrap_or(("", None));
            line(
                out,
                &format!(
                    "# {} is distributed only as {}: not installable from a package\n\
                     # registry (the harness installs from npm and PyPI). Unpack the archive\n\
                     # yourself and name its program here.",
                    entry.id,
                    entry.distribution_text()
                ),
            );
            if let Some(t) = target {
                line(out, &format!("# {platform}: {}", t.archive));
                line(out, &format!("program = {}", quoted(&t.cmd)));
                line(out, &format!("args = {}", quoted_list(&t.args)));
                env_table(out, &t.env);
            } else {
                line(out, "program = \"\"");
            }
        }
    }
}

/// One line of the starter profile.
fn line(out: &mut String, s: &str) {
    out.push_str(s);
    out.push('\n');
}

fn env_table(out: &mut String, env: &BTreeMap<String, String>) {
    if env.is_empty() {
        return;
    }
    out.push_str("[recipe.env]\n");
    for (k, v) in env {
        let key = if k
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            k.clone()
        } else {
            quoted(k)
        };
        out.push_str(&format!("{key} = {}\n", quoted(v)));
    }
}

/// A starter profile with its placeholders filled as written (each
/// [`PLACEHOLDER`] line uncommented), as a person would begin.
pub fn fill_placeholders(text: &str) -> String {
    text.lines()
        .map(|l| l.strip_prefix(PLACEHOLDER).unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The fixture index, for tests.
#[cfg(test)]
pub(crate) fn fixture() -> (Index, String) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agent-registry/registry.json");
    let from = path.display().to_string();
    (load(&from).unwrap(), from)
}

#[cfg(test)]
mod tests;
