//! Python on this machine: finding an interpreter that meets a recipe's
//! range (it makes the virtualenvs of PyPI recipes), and asking a program its
//! version with a bound.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use process_group::{Pipes, RunError};

use crate::corpus::profile::requirements::parse_req;

/// How long asking an interpreter its version may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(15);

/// Runs `program args` bounded by [`PROBE_TIMEOUT`]; its stdout, or why not.
pub fn probe(program: &Path, args: &[&str]) -> anyhow::Result<String> {
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

/// The environment variables a search for Python reads: the override, PATH,
/// and where the version managers keep their interpreters.
const SEARCH_VARS: [&str; 8] = [
    PYTHON_ENV,
    "PATH",
    "HOME",
    "PYENV_ROOT",
    "MISE_DATA_DIR",
    "ASDF_DATA_DIR",
    "UV_PYTHON_INSTALL_DIR",
    "XDG_DATA_HOME",
];

/// What a search for Python looks at: the values of [`SEARCH_VARS`], taken
/// from this process or given (a test names a fake machine without changing
/// its own environment).
#[derive(Debug, Clone, Default)]
pub struct PythonSearch {
    vars: std::collections::BTreeMap<String, std::ffi::OsString>,
}

impl PythonSearch {
    /// This process's environment.
    pub fn from_env() -> Self {
        Self::with_vars(
            SEARCH_VARS
                .iter()
                .filter_map(|k| Some((k.to_string(), std::env::var_os(k)?))),
        )
    }

    /// The given variables (any others are unset; empty values count as unset).
    pub fn with_vars<K: Into<String>, V: Into<std::ffi::OsString>>(
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Self {
            vars: vars
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .filter(|(_, v)| !v.is_empty())
                .collect(),
        }
    }

    fn var(&self, key: &str) -> Option<&std::ffi::OsStr> {
        self.vars.get(key).map(|v| v.as_os_str())
    }

    /// The directories whose `<dir>/*/bin` hold a version manager's
    /// interpreters: pyenv, mise, asdf and `uv python`, each at its variable
    /// when set, else at its usual place under HOME.
    fn manager_roots(&self) -> Vec<PathBuf> {
        let home = self.var("HOME").map(PathBuf::from);
        let data_home = self
            .var("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".local").join("share")));
        let mut roots = Vec::new();
        let mut push = |root: Option<PathBuf>| roots.extend(root);
        push(
            self.var("PYENV_ROOT")
                .map(|r| Path::new(r).join("versions")),
        );
        push(home.as_ref().map(|h| h.join(".pyenv").join("versions")));
        let mise = self
            .var("MISE_DATA_DIR")
            .map(PathBuf::from)
            .or_else(|| data_home.as_ref().map(|d| d.join("mise")));
        push(mise.map(|m| m.join("installs").join("python")));
        let asdf = self
            .var("ASDF_DATA_DIR")
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".asdf")));
        push(asdf.map(|a| a.join("installs").join("python")));
        let uv = self
            .var("UV_PYTHON_INSTALL_DIR")
            .map(PathBuf::from)
            .or_else(|| data_home.as_ref().map(|d| d.join("uv").join("python")));
        push(uv);
        roots
    }

    /// Every interpreter to try, in order: each interpreter name on PATH
    /// (first occurrence of each name, in PATH order), then one per
    /// version-manager install (`<root>/*/bin`, its most specific name).
    /// A file reached twice (a symlink, two roots) is tried once.
    pub fn candidates(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut names = std::collections::BTreeSet::new();
        if let Some(path) = self.var("PATH") {
            for dir in std::env::split_paths(path) {
                for (name, path) in pythons_in(&dir) {
                    if names.insert(name) {
                        out.push(path);
                    }
                }
            }
        }
        for root in self.manager_roots() {
            let Ok(entries) = std::fs::read_dir(&root) else {
                continue;
            };
            let mut installs: Vec<PathBuf> = entries
                .filter_map(|e| Some(e.ok()?.path().join("bin")))
                .collect();
            installs.sort();
            for bin in installs {
                // the most specific name: python3.N over python3 over python
                if let Some((_, path)) = pythons_in(&bin)
                    .into_iter()
                    .max_by_key(|(n, _)| (n.len(), n.clone()))
                {
                    out.push(path);
                }
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        out.retain(|p| seen.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())));
        out
    }

    /// The Python that makes a PyPI recipe's virtualenv: `$ACP_HARNESS_PYTHON`
    /// when set (it must match `req`); else without `req` the first `python3`
    /// on PATH that runs, or failing that the highest-versioned candidate
    /// that runs; else the highest-versioned candidate ([`Self::candidates`])
    /// that matches `req`. A candidate that does not run (a version
    /// manager's shim with no version selected) is skipped. The error names
    /// what was looked for and what each candidate was.
    pub fn find(&self, req: Option<&str>) -> anyhow::Result<Python> {
        let req = match req {
            Some(text) => Some((
                text,
                parse_req(text).with_context(|| {
                    format!("[runtime] python = {text:?} is not a semver range")
                })?,
            )),
            None => None,
        };
        if let Some(given) = self.var(PYTHON_ENV) {
            let given = PathBuf::from(given);
            let python = probe_python(&given).with_context(|| {
                format!("{PYTHON_ENV}={}: not a runnable Python", given.display())
            })?;
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
        let candidates = self.candidates();
        let mut seen = Vec::new();
        let mut best: Option<Python> = None;
        for candidate in &candidates {
            let python3 = candidate.file_name().is_some_and(|n| n == "python3");
            match probe_python(candidate) {
                Ok(python) => {
                    seen.push(format!("{} is {}", candidate.display(), python.version));
                    if req.is_none() && python3 {
                        return Ok(python);
                    }
                    if req.as_ref().is_none_or(|(_, r)| r.matches(&python.version))
                        && best.as_ref().is_none_or(|b| python.version > b.version)
                    {
                        best = Some(python);
                    }
                }
                Err(e) => seen.push(format!("{} does not run: {e:#}", candidate.display())),
            }
        }
        best.ok_or_else(|| {
            anyhow::anyhow!(
                "{}",
                no_python_message(req.map_or("*", |(text, _)| text), &seen)
            )
        })
    }
}

/// [`PythonSearch::find`] in this process's environment.
pub fn find_python(req: Option<&str>) -> anyhow::Result<Python> {
    PythonSearch::from_env().find(req)
}

/// Why no Python could be chosen: the range and every interpreter tried.
pub fn no_python_message(req: &str, seen: &[String]) -> String {
    let tried = if seen.is_empty() {
        "found none".to_string()
    } else {
        seen.join("; ")
    };
    format!(
        "[runtime] python = {req:?}: no Python on this machine matches (looked for python3, python3.N and python on PATH and under the pyenv, mise, asdf and uv install directories: {tried}); install one or set {PYTHON_ENV} to one"
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

/// The interpreter files in `dir`, by name.
fn pythons_in(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut here: Vec<(String, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            (is_python_name(&name) && e.path().is_file()).then(|| (name, e.path()))
        })
        .collect();
    here.sort();
    here
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

/// The prefix of the Python a virtualenv was made with: the parent of its
/// `pyvenv.cfg` `home` (the interpreter's `bin`), where its standard
/// library and own site-packages live.
pub fn venv_base_prefix(venv: &Path) -> Option<PathBuf> {
    let cfg = std::fs::read_to_string(venv.join("pyvenv.cfg")).ok()?;
    let home = cfg.lines().find_map(|l| {
        let (key, value) = l.split_once('=')?;
        (key.trim() == "home").then(|| PathBuf::from(value.trim()))
    })?;
    home.parent()
        .filter(|p| p.is_absolute())
        .map(Path::to_path_buf)
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
