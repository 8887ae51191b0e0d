//! Agent profiles: everything the harness needs to know about one agent CLI,
//! as a data file (`profiles/<agent>.toml`), so that adding an agent is a new
//! profile, not new code.
//!
//! A profile holds one or more launch recipes, each for a semver range of
//! the agent (codex-acp changed npm package and launch style at 1.0.0); the
//! first recipe whose range holds the version wins. A recipe installs one
//! main package (the agent, whose versions `outdated` and `update` follow)
//! and may add pinned side packages (`[[recipe.packages]]`, e.g. the agent
//! an ACP adapter starts from PATH), the runtimes it needs (`[runtime]`,
//! [`crate::packages::runtime`]) and, for PyPI, overrides of its dependency pins.
//! Strings may use the placeholders `{home}`, `{workspace}`, `{package_dir}`
//! (alias `{install_dir}`: where the main package lives),
//! `{package_dir:<as>}` (a side package's directory), `{model_url}`,
//! `{mcp_url}`, `{mcp_token}`, `{api_key}` and `{version}`, filled in by [`Launch::resolve`];
//! `{npm_platform}` ([`npm_platform`]) is filled in when the profile is read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

pub mod pin_override;
pub mod readiness;
pub mod requirements;

pub use pin_override::{PinOverride, normal_name};
pub use readiness::{Ready, ReadyWait};
pub use requirements::Requirements;

mod launch;
pub use launch::{Launch, Vars};

/// Where profiles live, relative to the repository root.
pub const PROFILES_DIR: &str = "profiles";

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Parse {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error(
        "{path}:{line}: recipe {index}: `versions = {range:?}` is not a semver range: {message}"
    )]
    Range {
        path: PathBuf,
        line: usize,
        index: usize,
        range: String,
        message: String,
    },
    #[error("no profile for agent `{agent}` (looked for {path})")]
    Unknown { agent: String, path: PathBuf },
    #[error("`{spec}`: `{version}` is not a version (expected e.g. codex-acp@2.6.0)")]
    BadVersion { spec: String, version: String },
    #[error("{path}: no recipe covers version {version} (ranges: {ranges})")]
    NoRecipe {
        path: PathBuf,
        version: String,
        ranges: String,
    },
    #[error("{path}: recipe {index}: {message}")]
    Recipe {
        path: PathBuf,
        index: usize,
        message: String,
    },
    #[error("unknown placeholder `{{{name}}}` in {what}")]
    Placeholder { name: String, what: String },
    #[error(transparent)]
    Name(#[from] crate::corpus::name::NameError),
}

/// How an agent talks to its model and names MCP tools toward it.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModelSection {
    /// Provider API flavour as the model server names it, e.g. `responses`.
    pub flavour: String,
    /// How unity-ops tools are named toward the model, in the model server's
    /// `ToolNaming` form (`{ form = "namespace", namespace = "..." }`).
    pub tool_naming: toml::Value,
    /// The agent's own tools by role (`shell`, `write_file`), in the model
    /// server's `AgentTools` form: `[model.agent_tools.shell] name = ...,
    /// arguments = { ... }`, for scenarios that script calls of them.
    #[serde(default)]
    pub agent_tools: Option<toml::Value>,
    /// Model requests the agent sends beside its turns (session titles,
    /// routing calls), in the model server's `SideRequests` form:
    /// `[[model.side_requests]] name = ..., no_tools = true, ...`. Any other
    /// request the scenario does not script ends the recording `off_script`.
    #[serde(default)]
    pub side_requests: Vec<toml::Value>,
    /// Arguments every scripted unity-ops call carries beside the
    /// scenario's (`mcp_call_arguments = { security_risk = "LOW" }`): an
    /// agent whose MCP tool schema requires a field of its own.
    #[serde(default)]
    pub mcp_call_arguments: toml::Table,
    /// Whether the agent asks a model at all (`false` for an agent that
    /// answers by itself, such as an SDK's echo example): only then does a
    /// recording in which a scripted reply went unasked end `incomplete`.
    #[serde(default = "yes")]
    pub asks_model: bool,
}

pub use recording_format::recording::SessionSetup;

/// How to end the agent: close stdin, wait, SIGTERM, wait, SIGKILL.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct StopPartial {
    pub eof_grace_ms: Option<u64>,
    pub term_grace_ms: Option<u64>,
}

/// Resolved stop recipe.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stop {
    pub eof_grace: Duration,
    pub term_grace: Duration,
}

/// A file written into the fresh home before the agent starts.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FileSpec {
    pub path: String,
    pub content: String,
}

/// How to install and launch one range of versions.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Recipe {
    /// Semver range, e.g. `>=0.4.4, <1.0.0`.
    pub versions: String,
    /// Package name (installed as `package@version` from `source`); empty
    /// for a program that is not installed (e.g. a test double).
    #[serde(default)]
    pub package: String,
    /// The registry the package comes from: `npm` (default) or `pypi`.
    #[serde(default)]
    pub source: Source,
    /// The program to run; a bare name is looked up on PATH.
    pub program: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub files: Vec<FileSpec>,
    #[serde(default)]
    pub stop: StopPartial,
    /// Runtimes this recipe needs; each key given here wins over the
    /// profile's `[runtime]`.
    #[serde(default)]
    pub runtime: Requirements,
    /// Pinned packages installed beside the main one.
    #[serde(default)]
    pub packages: Vec<SidePackage>,
    /// PyPI pin overrides for this recipe's main package (`name==version`),
    /// over the profile's `overrides` of the same dependency.
    #[serde(default)]
    pub overrides: Vec<String>,
    /// The package's new name and the first version published under it
    /// (`renamed = { to = "...", from = "0.24.0" }`), so `outdated` follows
    /// the agent across the rename, also before a recipe installs it.
    #[serde(default)]
    pub renamed: Option<Rename>,
}

/// A recipe's package published under another name from a version on
/// (same registry).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Rename {
    pub to: String,
    /// The first version published as `to`.
    pub from: String,
}

/// A package installed beside a recipe's main one, at a fixed version
/// (`update` and `outdated` follow the main package only).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SidePackage {
    /// The name its directory goes by: `{package_dir:<as>}`.
    #[serde(rename = "as")]
    pub alias: String,
    pub name: String,
    /// The exact version installed.
    pub version: String,
    #[serde(default)]
    pub source: Source,
    /// Whether its programs (npm's `node_modules/.bin`, a virtualenv's
    /// `bin`) go first on the agent's PATH, so that what the main package
    /// starts by name finds them (default true).
    #[serde(default = "yes")]
    pub on_path: bool,
    /// `main`: installed into the main package's virtualenv (a dependency
    /// the agent's own package lacks), not a directory of its own; both
    /// from PyPI. Default: its own directory.
    #[serde(default)]
    pub into: Option<SideInto>,
}

/// Where a side package goes besides its own directory.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SideInto {
    /// The main package's virtualenv.
    Main,
}

impl SidePackage {
    /// Whether it is installed into the main package's virtualenv.
    pub fn into_main(&self) -> bool {
        self.into == Some(SideInto::Main)
    }
}

fn yes() -> bool {
    true
}

/// Where a recipe's package is published, and so how it is installed.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// `npm install package@version` into a prefix.
    #[default]
    Npm,
    /// `pip install package==version` into a virtualenv (the program is
    /// then e.g. `{install_dir}/bin/python`).
    Pypi,
}

impl Recipe {
    /// The package as the install cache and registry look-ups key it:
    /// `name` for npm, `pypi:name` for PyPI (npm names never hold `:`).
    /// Empty when the recipe installs nothing.
    pub fn package_key(&self) -> String {
        match (self.source, self.package.is_empty()) {
            (_, true) => String::new(),
            (Source::Npm, false) => self.package.clone(),
            (Source::Pypi, false) => format!("{PYPI_PREFIX}{}", self.package),
        }
    }
}

/// The platform as npm's per-platform packages name it (`linux-x64`,
/// `darwin-arm64`, `win32-x64`): `{npm_platform}` in a recipe's package,
/// program and arguments, so one recipe installs a native build (Claude
/// Code's `@anthropic-ai/claude-code-{npm_platform}`) on every machine.
pub fn npm_platform() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    format!("{os}-{arch}")
}

/// The placeholder [`npm_platform`] fills in when a profile is read.
pub const NPM_PLATFORM: &str = "{npm_platform}";

impl Recipe {
    /// Fills in [`NPM_PLATFORM`] wherever a package is named or run.
    fn fill_platform(&mut self) {
        let platform = npm_platform();
        let fill = |s: &mut String| {
            if s.contains(NPM_PLATFORM) {
                *s = s.replace(NPM_PLATFORM, &platform);
            }
        };
        fill(&mut self.package);
        fill(&mut self.program);
        self.args.iter_mut().for_each(fill);
        if let Some(r) = &mut self.renamed {
            fill(&mut r.to);
        }
        for side in &mut self.packages {
            fill(&mut side.name);
        }
    }

    /// The package key ([`Recipe::package_key`]) the package is renamed to,
    /// and from which version.
    pub fn renamed_key(&self) -> Option<(String, semver::Version)> {
        let r = self.renamed.as_ref()?;
        let from = semver::Version::parse(&r.from).ok()?;
        let key = match self.source {
            Source::Npm => r.to.clone(),
            Source::Pypi => format!("{PYPI_PREFIX}{}", r.to),
        };
        Some((key, from))
    }
}

/// The prefix of a PyPI package key ([`Recipe::package_key`]).
pub const PYPI_PREFIX: &str = "pypi:";

/// A profile file.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub id: String,
    /// The version `record --agent <id>` uses when none is given.
    pub default_version: String,
    /// What the recorder speaks to the agent: `acp` (default) or
    /// `stream-json` (Claude Code, the reference the bridge imitates).
    #[serde(default)]
    pub protocol: Protocol,
    pub model: ModelSection,
    #[serde(default)]
    pub ready: Ready,
    #[serde(default)]
    pub stop: StopPartial,
    /// Environment for every recipe (a recipe's own env wins).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Directories and files the agent needs in the workspace, laid out
    /// before it starts (before the scenario's own).
    #[serde(default)]
    pub workspace: Vec<crate::corpus::workspace_fixture::WorkspaceEntry>,
    /// Runtimes every recipe needs (Node from npm, Python for PyPI venvs).
    #[serde(default)]
    pub runtime: Requirements,
    /// PyPI pin overrides for every PyPI recipe (`name==version`).
    #[serde(default)]
    pub overrides: Vec<String>,
    /// How its packages are installed (`[install]`).
    #[serde(default)]
    pub install: InstallSection,
    /// What the recording client does beyond what the agent advertises
    /// (`[session]`).
    #[serde(default)]
    pub session: SessionSetup,
    /// Versions whose agent reports itself as another version string
    /// (`"<asked>" = "<reported>"`); any other mismatch is a recording error.
    #[serde(default)]
    pub reported_versions: BTreeMap<String, String>,
    #[serde(rename = "recipe")]
    pub recipes: Vec<Recipe>,
    #[serde(skip)]
    pub path: PathBuf,
}

/// How long one install step (`npm install`, making a virtualenv, one
/// `pip install`) may take when the profile does not say.
pub const DEFAULT_INSTALL_TIMEOUT_SECS: u64 = 900;

/// The longest `[install] timeout_secs` a profile may ask for (a day): a
/// longer one is a typo, and every wait has a bound.
pub const MAX_INSTALL_TIMEOUT_SECS: u64 = 86_400;

/// A profile's `[install]`: how its packages (main, side, runtimes) are installed.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct InstallSection {
    /// The bound on one install step, in seconds (default
    /// [`DEFAULT_INSTALL_TIMEOUT_SECS`]; 1 to [`MAX_INSTALL_TIMEOUT_SECS`]):
    /// a large package on a slow mirror needs more.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

impl InstallSection {
    /// The bound on one install step.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs.unwrap_or(DEFAULT_INSTALL_TIMEOUT_SECS))
    }
}

/// The protocol the recorder's client speaks to an agent.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
pub enum Protocol {
    /// Agent Client Protocol (JSON-RPC on stdio): the recorder's ACP client.
    #[default]
    #[serde(rename = "acp")]
    Acp,
    /// Claude Code's stream-json: the recorder plays the panel.
    #[serde(rename = "stream-json")]
    StreamJson,
}

/// `<agent>[@<version>]` as typed on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSpec {
    pub agent: String,
    pub version: Option<semver::Version>,
}

impl AgentSpec {
    pub fn parse(spec: &str) -> Result<Self, ProfileError> {
        let (agent, version) = match spec.split_once('@') {
            Some((agent, version)) => (agent, Some(version)),
            None => (spec, None),
        };
        crate::corpus::name::check("--agent", agent)?;
        if let Some(version) = version {
            crate::corpus::name::check("--agent version", version)?;
        }
        match version {
            None => Ok(AgentSpec {
                agent: spec.to_string(),
                version: None,
            }),
            Some(version) => {
                let parsed =
                    semver::Version::parse(version).map_err(|_| ProfileError::BadVersion {
                        spec: spec.to_string(),
                        version: version.to_string(),
                    })?;
                Ok(AgentSpec {
                    agent: agent.to_string(),
                    version: Some(parsed),
                })
            }
        }
    }
}

/// The 1-based line of the first `key = ...` line whose value contains
/// `value` (0 when none does), for errors found after parsing.
fn line_of(text: &str, key: &str, value: &str) -> usize {
    text.lines()
        .position(|l| {
            let l = l.trim_start();
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('=') && rest.contains(value))
        })
        .map_or(0, |i| i + 1)
}

/// The key a `key = value` line (1-based) sets, if it is one.
fn key_of_line(text: &str, line: usize) -> Option<&str> {
    let l = text.lines().nth(line.checked_sub(1)?)?;
    let key = l.split_once('=')?.0.trim();
    let bare = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    (!key.is_empty() && key.chars().all(bare)).then_some(key)
}

/// Loads every `profiles/*.toml` under `root` (syntax, unknown keys, recipe
/// ranges, default version), so a broken profile is found by commands that
/// never launch an agent; returns the errors, each naming `file:line`.
pub fn validate_all(root: &Path) -> Result<Vec<ProfileError>, ProfileError> {
    let dir = root.join(PROFILES_DIR);
    let entries = std::fs::read_dir(&dir).map_err(|source| ProfileError::Io {
        path: dir.clone(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    Ok(paths
        .iter()
        .filter_map(|p| Profile::load(p).err())
        .collect())
}

impl Profile {
    /// Loads `profiles/<agent>.toml` under `root`.
    pub fn find(root: &Path, agent: &str) -> Result<Profile, ProfileError> {
        crate::corpus::name::check("agent", agent)?;
        let path = root.join(PROFILES_DIR).join(format!("{agent}.toml"));
        if !path.is_file() {
            return Err(ProfileError::Unknown {
                agent: agent.to_string(),
                path,
            });
        }
        Profile::load(&path)
    }

    pub fn load(path: &Path) -> Result<Profile, ProfileError> {
        let text = std::fs::read_to_string(path).map_err(|source| ProfileError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Profile::parse(&text, path)
    }

    /// Parses profile text; `path` names the source in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Profile, ProfileError> {
        let mut profile: Profile = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1)
                .unwrap_or(0);
            let mut message = e.message().trim_end().to_string();
            // a syntax error names no field: name the key of its line
            if let Some(key) = key_of_line(text, line)
                && !message.contains(&format!("`{key}`"))
            {
                message.push_str(&format!(" (in `{key}`)"));
            }
            ProfileError::Parse {
                path: path.to_path_buf(),
                line,
                message,
            }
        })?;
        profile.path = path.to_path_buf();
        for recipe in &mut profile.recipes {
            recipe.fill_platform();
        }
        for (key, value) in [
            ("id", &profile.id),
            ("default_version", &profile.default_version),
        ] {
            crate::corpus::name::check(key, value).map_err(|e| ProfileError::Parse {
                path: path.to_path_buf(),
                line: line_of(text, key, value),
                message: e.to_string(),
            })?;
        }
        for (index, recipe) in profile.recipes.iter().enumerate() {
            semver::VersionReq::parse(&recipe.versions).map_err(|e| ProfileError::Range {
                path: path.to_path_buf(),
                line: line_of(text, "versions", &recipe.versions),
                index: index + 1,
                range: recipe.versions.clone(),
                message: e.to_string(),
            })?;
        }
        profile.check_recipes(text)?;
        profile
            .ready
            .check()
            .map_err(|message| ProfileError::Parse {
                path: path.to_path_buf(),
                line: text
                    .lines()
                    .position(|l| l.trim() == "[[ready.wait]]")
                    .map_or(0, |i| i + 1),
                message,
            })?;
        crate::corpus::workspace_fixture::check_all(&profile.workspace, "workspace").map_err(
            |message| ProfileError::Parse {
                path: path.to_path_buf(),
                line: 0,
                message,
            },
        )?;
        semver::Version::parse(&profile.default_version).map_err(|_| ProfileError::BadVersion {
            spec: format!(
                "{}:{}: default_version",
                path.display(),
                line_of(text, "default_version", &profile.default_version)
            ),
            version: profile.default_version.clone(),
        })?;
        Ok(profile)
    }

    /// Runtimes, side packages and overrides: each well formed, with
    /// `file:line` where the text shows it.
    fn check_recipes(&self, text: &str) -> Result<(), ProfileError> {
        let at = |key: &str, value: &str, message: String| ProfileError::Parse {
            path: self.path.clone(),
            line: line_of(text, key, value),
            message,
        };
        if let Some((key, value, why)) = self.runtime.invalid().into_iter().next() {
            return Err(at(
                key,
                &value,
                format!("[runtime] {key} = {value:?} is not a semver range: {why}"),
            ));
        }
        for o in &self.overrides {
            PinOverride::parse(o).map_err(|m| at("overrides", o, m))?;
        }
        if let Some(secs) = self.install.timeout_secs
            && !(1..=MAX_INSTALL_TIMEOUT_SECS).contains(&secs)
        {
            return Err(at(
                "timeout_secs",
                &secs.to_string(),
                format!(
                    "[install] timeout_secs = {secs}: must be 1 to {MAX_INSTALL_TIMEOUT_SECS} seconds"
                ),
            ));
        }
        for (i, recipe) in self.recipes.iter().enumerate() {
            let err = |message: String| ProfileError::Recipe {
                path: self.path.clone(),
                index: i + 1,
                message,
            };
            if let Some((key, value, why)) = recipe.runtime.invalid().into_iter().next() {
                return Err(err(format!(
                    "runtime {key} = {value:?} is not a semver range: {why}"
                )));
            }
            for o in &recipe.overrides {
                PinOverride::parse(o).map_err(err)?;
            }
            if let Some(r) = &recipe.renamed {
                if r.to.is_empty() || r.to == recipe.package {
                    return Err(err(format!(
                        "`renamed.to = {:?}` must name another package than `{}`",
                        r.to, recipe.package
                    )));
                }
                if semver::Version::parse(&r.from).is_err() {
                    return Err(err(format!(
                        "`renamed.from = {:?}` is not a version (the first one published as `{}`)",
                        r.from, r.to
                    )));
                }
            }
            let mut seen = std::collections::BTreeSet::new();
            for p in &recipe.packages {
                if p.alias.is_empty()
                    || !p
                        .alias
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                {
                    return Err(err(format!(
                        "package `{}`: `as = {:?}` must be letters, digits, `_` or `-`",
                        p.name, p.alias
                    )));
                }
                if !seen.insert(p.alias.as_str()) {
                    return Err(err(format!("two packages are `as = {:?}`", p.alias)));
                }
                if semver::Version::parse(&p.version).is_err() {
                    return Err(err(format!(
                        "package `{}`: `version = {:?}` is not an exact version (side packages are pinned)",
                        p.name, p.version
                    )));
                }
                if p.into_main()
                    && (p.source != Source::Pypi
                        || recipe.source != Source::Pypi
                        || recipe.package.is_empty())
                {
                    return Err(err(format!(
                        "package `{}`: `into = \"main\"` needs it and the recipe's package both from PyPI (`source = \"pypi\"`)",
                        p.name
                    )));
                }
            }
        }
        Ok(())
    }

    /// The PyPI pin overrides for `recipe`: the profile's, each replaced by
    /// the recipe's of the same dependency, then the recipe's others.
    pub fn overrides_for(&self, recipe: &Recipe) -> Vec<String> {
        let name = |o: &String| PinOverride::parse(o).map(|p| p.name).unwrap_or_default();
        let mut out: Vec<String> = self
            .overrides
            .iter()
            .filter(|o| !recipe.overrides.iter().any(|r| name(r) == name(o)))
            .cloned()
            .collect();
        out.extend(recipe.overrides.iter().cloned());
        out
    }

    /// The version to use for `spec` (its own, else the profile default).
    pub fn version_for(&self, spec: &AgentSpec) -> semver::Version {
        spec.version.clone().unwrap_or_else(|| {
            semver::Version::parse(&self.default_version).expect("checked at load")
        })
    }

    /// The first recipe whose range holds `version`.
    pub fn recipe(&self, version: &semver::Version) -> Result<&Recipe, ProfileError> {
        self.recipes
            .iter()
            .find(|r| {
                semver::VersionReq::parse(&r.versions)
                    .map(|req| req.matches(version))
                    .unwrap_or(false)
            })
            .ok_or_else(|| ProfileError::NoRecipe {
                path: self.path.clone(),
                version: version.to_string(),
                ranges: self
                    .recipes
                    .iter()
                    .map(|r| r.versions.as_str())
                    .collect::<Vec<_>>()
                    .join("; "),
            })
    }

    /// The stop recipe for `recipe`: its own values over the profile's, over defaults.
    pub fn stop_for(&self, recipe: &Recipe) -> Stop {
        let ms =
            |r: Option<u64>, p: Option<u64>, d: u64| Duration::from_millis(r.or(p).unwrap_or(d));
        Stop {
            eof_grace: ms(recipe.stop.eof_grace_ms, self.stop.eof_grace_ms, 5_000),
            term_grace: ms(recipe.stop.term_grace_ms, self.stop.term_grace_ms, 3_000),
        }
    }
}

#[cfg(test)]
mod tests;
