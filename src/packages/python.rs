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

/// The Python that makes a PyPI recipe's virtualenv: `$ACP_HARNESS_PYTHON`
/// when set (it must match `req`), else without `req` `python3`, else the
/// highest-versioned interpreter on PATH (`python3`, `python3.N`,
/// `python`) that matches `req`. The error names what was looked for.
pub fn find_python(req: Option<&str>) -> anyhow::Result<Python> {
    let req = match req {
        Some(text) => Some((
            text,
            crate::corpus::profile::requirements::parse_req(text)
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
