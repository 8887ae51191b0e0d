//! Agent profiles: everything the harness needs to know about one agent CLI,
//! as a data file (`profiles/<agent>.toml`), so that adding an agent is a new
//! profile, not new code.
//!
//! A profile holds one or more launch recipes, each for a semver range of
//! the agent (codex-acp changed npm package and launch style at 1.0.0); the
//! first recipe whose range holds the version wins. Strings may use the
//! placeholders `{home}`, `{workspace}`, `{package_dir}` (alias
//! `{install_dir}`: where the installed program lives), `{model_url}`,
//! `{mcp_url}`, `{mcp_token}`, `{api_key}` and `{version}`, filled in by [`Launch::resolve`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

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
    #[error("unknown placeholder `{{{name}}}` in {what}")]
    Placeholder { name: String, what: String },
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
}

/// What to wait for before the first prompt.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Ready {
    /// `session`: once session/new or session/load answered.
    #[serde(default = "default_after")]
    pub after: String,
    /// A notification method to wait for after that (e.g. Grok's
    /// `_x.ai/mcp_initialized`).
    #[serde(default)]
    pub notification: Option<String>,
    /// Extra quiet time so asynchronous startup frames land before prompting.
    #[serde(default)]
    pub settle_ms: u64,
    #[serde(default = "default_ready_timeout")]
    pub timeout_ms: u64,
    /// How long initialize, session/new, session/load and set_mode may take.
    #[serde(default = "default_ready_timeout")]
    pub handshake_timeout_ms: u64,
    /// Start a resuming process only in a later wall-clock minute than the
    /// one the previous process ended in (Gemini CLI: a session/load in the
    /// minute the session was created finds no history).
    #[serde(default)]
    pub resume_in_new_minute: bool,
}

fn default_after() -> String {
    "session".into()
}
fn default_ready_timeout() -> u64 {
    60_000
}

impl Default for Ready {
    fn default() -> Self {
        Ready {
            after: default_after(),
            notification: None,
            settle_ms: 0,
            timeout_ms: default_ready_timeout(),
            handshake_timeout_ms: default_ready_timeout(),
            resume_in_new_minute: false,
        }
    }
}

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
    pub workspace: Vec<crate::workspace_fixture::WorkspaceEntry>,
    #[serde(rename = "recipe")]
    pub recipes: Vec<Recipe>,
    #[serde(skip)]
    pub path: PathBuf,
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
        match spec.split_once('@') {
            None => Ok(AgentSpec {
                agent: spec.to_string(),
                version: None,
            }),
            Some((agent, version)) => {
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
            ProfileError::Parse {
                path: path.to_path_buf(),
                line,
                message: e.message().to_string(),
            }
        })?;
        profile.path = path.to_path_buf();
        for (index, recipe) in profile.recipes.iter().enumerate() {
            semver::VersionReq::parse(&recipe.versions).map_err(|e| ProfileError::Range {
                path: path.to_path_buf(),
                line: line_of(text, "versions", &recipe.versions),
                index: index + 1,
                range: recipe.versions.clone(),
                message: e.to_string(),
            })?;
        }
        crate::workspace_fixture::check_all(&profile.workspace, "workspace").map_err(
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

/// The values placeholders stand for in one run.
#[derive(Debug, Clone, Default)]
pub struct Vars {
    pub home: String,
    pub workspace: String,
    pub package_dir: String,
    pub model_url: String,
    /// stub-mcp's URL and bearer token (for agents configured by file).
    pub mcp_url: String,
    pub mcp_token: String,
    pub api_key: String,
    pub version: String,
}

impl Vars {
    /// Fills `{name}` placeholders in `text`; `what` names it in errors.
    pub fn fill(&self, text: &str, what: &str) -> Result<String, ProfileError> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find('{') {
            out.push_str(&rest[..start]);
            let after = &rest[start + 1..];
            let Some(end) = after.find('}') else {
                out.push_str(&rest[start..]);
                rest = "";
                break;
            };
            let name = &after[..end];
            let value = match name {
                "home" => &self.home,
                "workspace" => &self.workspace,
                // where the program lives: the npm prefix or the venv
                "package_dir" | "install_dir" => &self.package_dir,
                "model_url" => &self.model_url,
                "mcp_url" => &self.mcp_url,
                "mcp_token" => &self.mcp_token,
                "api_key" => &self.api_key,
                "version" => &self.version,
                _ if name.is_empty()
                    || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
                {
                    // Not a placeholder (e.g. a TOML inline table): keep it.
                    out.push('{');
                    rest = after;
                    continue;
                }
                _ => {
                    return Err(ProfileError::Placeholder {
                        name: name.to_string(),
                        what: what.to_string(),
                    });
                }
            };
            out.push_str(value);
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// A recipe with every placeholder filled: what to write and what to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub program: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub files: Vec<(PathBuf, String)>,
}

impl Launch {
    pub fn resolve(
        profile: &Profile,
        recipe: &Recipe,
        vars: &Vars,
    ) -> Result<Launch, ProfileError> {
        let program = vars.fill(&recipe.program, "program")?;
        let args = recipe
            .args
            .iter()
            .map(|a| vars.fill(a, "args"))
            .collect::<Result<_, _>>()?;
        let mut env = BTreeMap::new();
        for (k, v) in profile.env.iter().chain(recipe.env.iter()) {
            env.insert(k.clone(), vars.fill(v, &format!("env {k}"))?);
        }
        let files = recipe
            .files
            .iter()
            .map(|f| {
                Ok((
                    PathBuf::from(vars.fill(&f.path, "files.path")?),
                    vars.fill(&f.content, &format!("file {}", f.path))?,
                ))
            })
            .collect::<Result<_, ProfileError>>()?;
        Ok(Launch {
            program,
            args,
            env,
            files,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_committed_profile_is_valid() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let errors = validate_all(root).unwrap();
        assert!(errors.is_empty(), "{errors:#?}");
    }

    /// Each broken profile and the `file:line: message` its error starts with.
    #[test]
    fn broken_profiles_are_reported_with_file_and_line() {
        let good = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/grok.toml"),
        )
        .unwrap();
        let line_of_text =
            |needle: &str| good.lines().position(|l| l.contains(needle)).unwrap() + 1;
        let flavour = line_of_text("flavour = ");
        let versions = line_of_text("versions = ");
        let default = line_of_text("default_version = ");
        let cases = [
            (
                good.replace("flavour = ", "flavour == "),
                format!("broken.toml:{flavour}: "),
            ),
            (
                good.replace("flavour = ", "flavor = "),
                format!("broken.toml:{flavour}: unknown field `flavor`"),
            ),
            (
                good.replacen("versions = \"", "versions = \">>1.0 ", 1),
                format!("broken.toml:{versions}: recipe 1: `versions = "),
            ),
            (
                good.replace("default_version = \"1.0.41\"", "default_version = \"one\""),
                format!("broken.toml:{default}: default_version"),
            ),
        ];
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(PROFILES_DIR)).unwrap();
        let file = dir.path().join(PROFILES_DIR).join("broken.toml");
        for (text, want) in cases {
            std::fs::write(&file, text).unwrap();
            let errors = validate_all(dir.path()).unwrap();
            assert_eq!(errors.len(), 1, "{want}: {errors:?}");
            let got = errors[0].to_string();
            let got = got.rsplit('/').next().unwrap();
            assert!(got.contains(&want), "{got:?} should contain {want:?}");
        }
    }

    fn codex() -> Profile {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        Profile::find(root, "codex-acp").unwrap()
    }

    /// (version, npm package, program ends with, eof grace ms, config mentions remote_models)
    #[test]
    fn codex_profile_chooses_package_and_recipe_by_version() {
        let cases = [
            (
                "0.4.4",
                "@zed-industries/codex-acp",
                "bin/codex-acp",
                10_000,
                false,
            ),
            (
                "0.9.2",
                "@zed-industries/codex-acp",
                "bin/codex-acp",
                10_000,
                true,
            ),
            (
                "0.11.1",
                "@zed-industries/codex-acp",
                "bin/codex-acp",
                10_000,
                false,
            ),
            (
                "0.16.0",
                "@zed-industries/codex-acp",
                "bin/codex-acp",
                500,
                false,
            ),
            (
                "1.0.0",
                "@agentclientprotocol/codex-acp",
                "node",
                10_000,
                false,
            ),
            (
                "2.6.0",
                "@agentclientprotocol/codex-acp",
                "node",
                10_000,
                false,
            ),
        ];
        let p = codex();
        for (version, package, program, grace, remote) in cases {
            let v = semver::Version::parse(version).unwrap();
            let r = p.recipe(&v).unwrap();
            assert_eq!(r.package, package, "{version}");
            assert!(r.program.ends_with(program), "{version}: {}", r.program);
            assert_eq!(
                p.stop_for(r).eof_grace,
                Duration::from_millis(grace),
                "{version}"
            );
            assert_eq!(
                r.files[0].content.contains("remote_models"),
                remote,
                "{version}"
            );
        }
        let err = p
            .recipe(&semver::Version::parse("0.3.1").unwrap())
            .unwrap_err();
        assert!(
            err.to_string().contains("no recipe covers version 0.3.1"),
            "{err}"
        );
    }

    #[test]
    fn launch_fills_placeholders_in_argv_env_and_files() {
        let p = codex();
        let r = p.recipe(&semver::Version::new(2, 6, 0)).unwrap();
        let vars = Vars {
            home: "/h".into(),
            workspace: "/w".into(),
            package_dir: "/pkg".into(),
            model_url: "http://127.0.0.1:9".into(),
            mcp_url: "http://127.0.0.1:8/mcp".into(),
            mcp_token: "t".into(),
            api_key: "k".into(),
            version: "2.6.0".into(),
        };
        let l = Launch::resolve(&p, r, &vars).unwrap();
        assert_eq!(
            l.args,
            ["/pkg/node_modules/@agentclientprotocol/codex-acp/dist/index.js"]
        );
        assert_eq!(l.env["CODEX_HOME"], "/h/.codex");
        assert_eq!(l.env["INITIAL_AGENT_MODE"], "read-only");
        assert_eq!(l.files[0].0, PathBuf::from("/h/.codex/config.toml"));
        assert!(
            l.files[0]
                .1
                .contains("base_url = \"http://127.0.0.1:9/v1\"")
        );
        let config: toml::Table = toml::from_str(&l.files[0].1).unwrap();
        assert_eq!(
            config["model_providers"]["mock"]["wire_api"].as_str(),
            Some("responses")
        );
    }

    #[test]
    fn bad_profiles_name_file_and_line() {
        let cases = [
            (
                "id = \"x\"\ndefault_version = \"1.0.0\"\n[model]\nflavour = \"f\"\ntool_naming = {}\ncolour = 1\n[[recipe]]\nversions = \"*\"\npackage = \"p\"\nprogram = \"x\"\n",
                "p.toml:6: unknown field `colour`",
            ),
            (
                "id = \"x\"\ndefault_version = \"1.0.0\"\n[model]\nflavour = \"f\"\ntool_naming = {}\n[[recipe]]\nversions = \"soon\"\npackage = \"p\"\nprogram = \"x\"\n",
                "p.toml:7: recipe 1: `versions = \"soon\"` is not a semver range",
            ),
        ];
        for (text, expected) in cases {
            let err = Profile::parse(text, Path::new("p.toml"))
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with(expected),
                "{err:?} should start with {expected:?}"
            );
        }
        let err = Vars::default()
            .fill("{nope}", "args")
            .unwrap_err()
            .to_string();
        assert_eq!(err, "unknown placeholder `{nope}` in args");
    }

    /// Every profile shipped in `profiles/` loads, and its default version
    /// has a recipe (adding an agent is adding a file here).
    #[test]
    fn every_shipped_profile_loads_and_covers_its_default_version() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(PROFILES_DIR);
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().and_then(|e| e.to_str()) != Some("toml") {
                continue;
            }
            let p = Profile::load(&path).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                Some(p.id.as_str()),
                path.file_stem().and_then(|s| s.to_str())
            );
            let v = semver::Version::parse(&p.default_version).unwrap();
            p.recipe(&v).unwrap_or_else(|e| panic!("{e}"));
            seen += 1;
        }
        assert!(
            seen >= 3,
            "expected the codex-acp, gemini-cli and grok profiles"
        );
    }

    #[test]
    fn agent_spec_parses_optional_version() {
        assert_eq!(
            AgentSpec::parse("codex-acp@0.16.0").unwrap().version,
            Some(semver::Version::new(0, 16, 0))
        );
        assert_eq!(AgentSpec::parse("codex-acp").unwrap().version, None);
        assert!(AgentSpec::parse("codex-acp@latest").is_err());
    }
}
