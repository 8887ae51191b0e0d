//! The runtimes an agent needs besides its packages, as a profile names them
//! (`[runtime]`, a recipe's own `runtime` winning per key): Node from the
//! npm registry (the package `node-<os>-<arch>` carries the binary),
//! installed into the install cache like a package and pinned: the version a
//! requirement resolves to is written beside the cache and reused, so later
//! runs (and the recorder inside its network namespace) ask no registry; and
//! Python found on this machine, which makes the virtualenvs of PyPI recipes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use process_group::{Pipes, RunError};
use serde::Deserialize;

use crate::packages::install;

/// How long asking an interpreter its version may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(15);

/// Version ranges of the runtimes a recipe needs (semver ranges, e.g.
/// `>=22.19`); an absent key needs nothing of that runtime.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq, Default)]
#[serde(deny_unknown_fields)]
pub struct Requirements {
    /// Node, installed from the npm registry and first on the agent's PATH.
    #[serde(default)]
    pub node: Option<String>,
    /// Python for the virtualenv of a PyPI recipe, found on the machine.
    #[serde(default)]
    pub python: Option<String>,
}

impl Requirements {
    /// These requirements with `base`'s filling the keys these leave out.
    pub fn over(&self, base: &Requirements) -> Requirements {
        Requirements {
            node: self.node.clone().or_else(|| base.node.clone()),
            python: self.python.clone().or_else(|| base.python.clone()),
        }
    }

    /// Each requirement that is not a semver range, as (key, value, why).
    pub fn invalid(&self) -> Vec<(&'static str, String, String)> {
        [("node", &self.node), ("python", &self.python)]
            .into_iter()
            .filter_map(|(key, value)| {
                let value = value.as_ref()?;
                parse_req(value)
                    .err()
                    .map(|why| (key, value.clone(), why.to_string()))
            })
            .collect()
    }
}

fn parse_req(text: &str) -> Result<semver::VersionReq, semver::Error> {
    semver::VersionReq::parse(text)
}

/// The highest version in `published` that `req` matches (pre-releases
/// only when the range names one, as semver ranges do).
pub fn best_match<'a>(
    req: &semver::VersionReq,
    published: &'a [semver::Version],
) -> Option<&'a semver::Version> {
    published.iter().filter(|v| req.matches(v)).max()
}

/// The npm package that carries the Node binary for this machine.
pub fn node_package() -> anyhow::Result<String> {
    let os = match std::env::consts::OS {
        "linux" => "linux",
        "macos" => "darwin",
        other => bail!("Node from the npm registry: no package for the OS `{other}`"),
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => bail!("Node from the npm registry: no package for the CPU `{other}`"),
    };
    Ok(format!("node-{os}-{arch}"))
}

/// A Node installed in the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub version: semver::Version,
    /// The directory holding `node`, first on the agent's PATH.
    pub bin_dir: PathBuf,
    /// Its install directory in the cache (a path to scrub).
    pub dir: PathBuf,
}

/// Where pins live: beside the install cache `agents`
/// (`<cache>/acp-harness/runtimes/`).
fn pins_dir(agents: &Path) -> PathBuf {
    agents.parent().unwrap_or(agents).join("runtimes")
}

/// The file pinning what `runtime`'s requirement `req` resolved to: the
/// range as written in its normal form, every character but letters,
/// digits and `.` spelled `_<hex>` (so distinct ranges never share a file).
pub fn pin_path(agents: &Path, runtime: &str, req: &semver::VersionReq) -> PathBuf {
    let mut name = String::new();
    for c in req.to_string().chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            name.push(c);
        } else {
            name.push_str(&format!("_{:x}", c as u32));
        }
    }
    pins_dir(agents).join(runtime).join(format!("{name}.pin"))
}

/// The pinned version for `req`, if one was recorded and still matches.
pub fn read_pin(path: &Path, req: &semver::VersionReq) -> Option<semver::Version> {
    let text = std::fs::read_to_string(path).ok()?;
    let v = semver::Version::parse(text.trim()).ok()?;
    req.matches(&v).then_some(v)
}

/// Records `version` as what `path`'s requirement resolved to (whole or not at all).
pub fn write_pin(path: &Path, version: &semver::Version) -> anyhow::Result<()> {
    let dir = path.parent().context("pin path has no parent")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let tmp = dir.join(format!(".tmp-{}", std::process::id()));
    std::fs::write(&tmp, format!("{version}\n"))
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

/// A Node matching `req`, installed into the cache when missing: the
/// pinned version when one is recorded, else the highest published one
/// (then pinned). Fails before installing anything when none matches.
pub fn ensure_node(req_text: &str) -> anyhow::Result<Node> {
    let req = parse_req(req_text)
        .with_context(|| format!("[runtime] node = {req_text:?} is not a semver range"))?;
    let package = node_package()?;
    let agents = install::cache_root()?;
    let pin = pin_path(&agents, "node", &req);
    let version = match read_pin(&pin, &req) {
        Some(v) => {
            eprintln!(
                "[runtime] node {req_text}: {v}, pinned in {}",
                pin.display()
            );
            v
        }
        None => {
            let published = crate::packages::versions::npm_versions(&package)
                .with_context(|| format!("[runtime] node {req_text}: listing {package} on npm"))?;
            let Some(v) = best_match(&req, &published).cloned() else {
                bail!("{}", no_node_message(req_text, &package, &published));
            };
            write_pin(&pin, &v)?;
            eprintln!(
                "[runtime] node {req_text}: {v} (the newest published match), pinned in {}",
                pin.display()
            );
            v
        }
    };
    let dir = install::ensure_package(&install::PackageJob::npm(&package, &version))?;
    let bin_dir = dir.join("node_modules").join(&package).join("bin");
    check_node(&bin_dir.join("node"), &version, &dir)?;
    Ok(Node {
        version,
        bin_dir,
        dir,
    })
}

/// Why no Node could be chosen: the range and what npm publishes.
pub fn no_node_message(req: &str, package: &str, published: &[semver::Version]) -> String {
    let seen = match (published.first(), published.last()) {
        (Some(first), Some(last)) => format!(
            "{package} on npm has {} versions, {first} to {last}",
            published.len()
        ),
        _ => format!("{package} on npm has no versions"),
    };
    format!("[runtime] node = {req:?}: no published Node matches ({seen})")
}

/// The installed binary must run here and be the version asked for.
fn check_node(node: &Path, version: &semver::Version, dir: &Path) -> anyhow::Result<()> {
    let out = probe(node, &["--version"])
        .with_context(|| format!("Node {version} installed in {}", dir.display()))?;
    let got = out.trim().trim_start_matches('v');
    if got != version.to_string() {
        bail!(
            "{} says it is Node {got}, not the {version} asked for",
            node.display()
        );
    }
    Ok(())
}

/// Runs `program args` bounded by [`PROBE_TIMEOUT`]; its stdout, or why not.
fn probe(program: &Path, args: &[&str]) -> anyhow::Result<String> {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args);
    let out = match process_group::output_blocking(cmd, PROBE_TIMEOUT, Pipes::Capture) {
        Ok(out) => out,
        Err(RunError::Timeout(_)) => {
            bail!("no answer within {} s", PROBE_TIMEOUT.as_secs())
        }
        Err(e) => bail!("{e}"),
    };
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        bail!(
            "{} ({})",
            stderr.lines().next().unwrap_or("").trim(),
            out.status
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A Python interpreter on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Python {
    pub version: semver::Version,
    /// The interpreter itself (`sys.executable`: past any launcher shim).
    pub program: PathBuf,
}

const PYTHON_PROBE: &str =
    "import sys; print('%d.%d.%d' % sys.version_info[:3]); print(sys.executable)";

/// Asks `program` its version and real path.
fn probe_python(program: &Path) -> anyhow::Result<Python> {
    let out = probe(program, &["-c", PYTHON_PROBE])?;
    let mut lines = out.lines();
    let version = lines
        .next()
        .and_then(|l| semver::Version::parse(l.trim()).ok())
        .context("it printed no version")?;
    let program = lines
        .next()
        .map(|l| PathBuf::from(l.trim()))
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| program.to_path_buf());
    Ok(Python { version, program })
}

/// The environment variable that names the Python to use.
pub const PYTHON_ENV: &str = "ACP_HARNESS_PYTHON";

/// The Python that makes a PyPI recipe's virtualenv: `$ACP_HARNESS_PYTHON`
/// when set (it must match `req`), else without `req` `python3`, else the
/// highest-versioned interpreter on PATH (`python3`, `python3.N`,
/// `python`) that matches `req`. The error names what was looked for.
pub fn find_python(req: Option<&str>) -> anyhow::Result<Python> {
    let req = match req {
        Some(text) => Some((
            text,
            parse_req(text)
                .with_context(|| format!("[runtime] python = {text:?} is not a semver range"))?,
        )),
        None => None,
    };
    if let Some(given) = std::env::var_os(PYTHON_ENV).filter(|v| !v.is_empty()) {
        let given = PathBuf::from(given);
        let python = probe_python(&given)
            .with_context(|| format!("{PYTHON_ENV}={}: not a runnable Python", given.display()))?;
        if let Some((text, req)) = &req
            && !req.matches(&python.version)
        {
            bail!(
                "{PYTHON_ENV}={} is Python {}, which does not match [runtime] python = {text:?}",
                given.display(),
                python.version
            );
        }
        return Ok(python);
    }
    let Some((text, req)) = req else {
        return probe_python(Path::new("python3")).context("python3: not a runnable Python");
    };
    let mut seen = Vec::new();
    let mut best: Option<Python> = None;
    for candidate in python_candidates() {
        match probe_python(&candidate) {
            Ok(python) => {
                seen.push(format!("{} is {}", candidate.display(), python.version));
                if req.matches(&python.version)
                    && best.as_ref().is_none_or(|b| python.version > b.version)
                {
                    best = Some(python);
                }
            }
            Err(e) => seen.push(format!("{} does not run: {e:#}", candidate.display())),
        }
    }
    best.ok_or_else(|| anyhow::anyhow!("{}", no_python_message(text, &seen)))
}

/// Why no Python could be chosen: the range and every interpreter tried.
pub fn no_python_message(req: &str, seen: &[String]) -> String {
    let tried = if seen.is_empty() {
        "found none".to_string()
    } else {
        seen.join("; ")
    };
    format!(
        "[runtime] python = {req:?}: no Python on this machine matches (looked for python3, python3.N and python on PATH: {tried}); install one or set {PYTHON_ENV} to one"
    )
}

/// Whether a file name is one an interpreter goes by: `python`, `python3`, `python3.N`.
pub fn is_python_name(name: &str) -> bool {
    match name.strip_prefix("python") {
        Some("") | Some("3") => true,
        Some(rest) => rest
            .strip_prefix("3.")
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())),
        None => false,
    }
}

/// Every interpreter name on PATH, first occurrence of each name, in PATH order.
fn python_candidates() -> Vec<PathBuf> {
    let Some(path) = std::env::var_os("PATH") else {
        return Vec::new();
    };
    let mut names = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for dir in std::env::split_paths(&path) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut here: Vec<(String, PathBuf)> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().to_str()?.to_string();
                (is_python_name(&name) && e.path().is_file()).then(|| (name, e.path()))
            })
            .collect();
        here.sort();
        for (name, path) in here {
            if names.insert(name) {
                out.push(path);
            }
        }
    }
    out
}

/// The Python version a virtualenv was made with (its `pyvenv.cfg`).
pub fn venv_python(venv: &Path) -> Option<semver::Version> {
    let cfg = std::fs::read_to_string(venv.join("pyvenv.cfg")).ok()?;
    cfg.lines().find_map(|l| {
        let (key, value) = l.split_once('=')?;
        if !matches!(key.trim(), "version" | "version_info") {
            return None;
        }
        let nums: Vec<&str> = value.trim().split('.').take(3).collect();
        semver::Version::parse(&nums.join(".")).ok()
    })
}

/// Whether a virtualenv made with `made_with` satisfies the range `req`
/// (no range: any Python does).
pub fn python_satisfies(req: Option<&str>, made_with: Option<&semver::Version>) -> bool {
    match (req.map(parse_req), made_with) {
        (None, _) => true,
        (Some(Ok(req)), Some(v)) => req.matches(v),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
