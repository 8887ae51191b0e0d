//! The registries agents are installed from, behind one interface: npm
//! (`npm install --prefix`) and PyPI (a virtualenv, then `pip install
//! name==version`). Each installs one pinned version into a directory of the
//! install cache and lists published versions for bisect, `outdated` and
//! `update`. Both run the registry's ordinary client, bounded by a timeout,
//! with its output relayed to stderr as progress.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};
use process_group::{Pipes, RunError};

use crate::corpus::profile::{PYPI_PREFIX, PinOverride, Source, normal_name};

/// How long one install step may take when the profile does not say
/// (`[install] timeout_secs`).
pub const INSTALL_TIMEOUT: Duration =
    Duration::from_secs(crate::corpus::profile::DEFAULT_INSTALL_TIMEOUT_SECS);

/// How long one version listing may take.
pub const LIST_TIMEOUT: Duration = Duration::from_secs(60);

/// The source and bare package name of a package key (`pypi:name` or `name`).
pub fn split_key(key: &str) -> (Source, &str) {
    match key.strip_prefix(PYPI_PREFIX) {
        Some(name) => (Source::Pypi, name),
        None => (Source::Npm, key),
    }
}

/// Whether a finished install of `source` may be moved after it is made:
/// an npm prefix may, a virtualenv may not (its scripts name their path).
pub fn relocatable(source: Source) -> bool {
    source == Source::Npm
}

/// What an install needs beyond the package and its place.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options<'a> {
    /// Directories first on PATH while installing (a runtime's `bin`).
    pub path_prefix: &'a [PathBuf],
    /// The interpreter that makes a virtualenv (default: `python3`).
    pub python: Option<&'a Path>,
    /// PyPI pin overrides (`name==version`), each replacing the package's
    /// own requirement of that dependency.
    pub overrides: &'a [String],
    /// The bound on each install step (default [`INSTALL_TIMEOUT`]).
    pub timeout: Option<Duration>,
    /// More PyPI packages (`name==version`) installed into the virtualenv
    /// after the package and its requirements.
    pub extras: &'a [String],
}

impl Options<'_> {
    fn timeout(&self) -> Duration {
        self.timeout.unwrap_or(INSTALL_TIMEOUT)
    }

    /// PATH for the installer: the prefix before ours.
    fn path(&self) -> Option<std::ffi::OsString> {
        if self.path_prefix.is_empty() {
            return None;
        }
        let ours = std::env::var_os("PATH").unwrap_or_default();
        let dirs = self
            .path_prefix
            .iter()
            .cloned()
            .chain(std::env::split_paths(&ours));
        std::env::join_paths(dirs).ok()
    }
}

/// Installs `name` at `version` from `source` into `dir` (which exists).
pub fn install(
    source: Source,
    name: &str,
    version: &semver::Version,
    dir: &Path,
    options: &Options,
) -> anyhow::Result<()> {
    match source {
        Source::Npm => {
            let mut cmd = Command::new("npm");
            cmd.arg("install")
                .arg("--prefix")
                .arg(dir)
                .args(["--no-audit", "--no-fund", "--no-save", "--loglevel=http"])
                .arg(format!("{name}@{version}"));
            if let Some(path) = options.path() {
                cmd.env("PATH", path);
            }
            let what = format!("npm install {name}@{version}");
            run_relayed(&mut cmd, &what, "npm", options.timeout())
        }
        Source::Pypi => {
            let python = options
                .python
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from(python()));
            run_relayed(
                Command::new(python).args(["-m", "venv"]).arg(dir),
                &format!("creating a virtualenv for {name}=={version}"),
                "venv",
                options.timeout(),
            )?;
            let pinned = format!("{name}=={version}");
            install_pinned(dir, name, &pinned, options)?;
            if options.extras.is_empty() {
                return Ok(());
            }
            let what = format!("the side packages into {pinned}");
            pip_install(dir, options.extras, &what, options)
        }
    }
}

/// `pinned` (`name==version`) and its requirements into the virtualenv
/// `dir`, each overridden pin replaced.
fn install_pinned(dir: &Path, name: &str, pinned: &str, options: &Options) -> anyhow::Result<()> {
    if options.overrides.is_empty() {
        return pip_install(dir, &[pinned.to_string()], pinned, options);
    }
    // The package alone, then its requirements with the overridden
    // pins replaced: pip has no override of a dependency's pin.
    pip_install(
        dir,
        &["--no-deps".into(), pinned.to_string()],
        pinned,
        options,
    )?;
    let overrides = options
        .overrides
        .iter()
        .map(|o| PinOverride::parse(o).map_err(anyhow::Error::msg))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let requirements = requirements_of(dir, name)?;
    let wanted =
        apply_overrides(&requirements, &overrides).map_err(|e| anyhow::anyhow!("{pinned}: {e}"))?;
    if wanted.is_empty() {
        return Ok(());
    }
    let what = format!("the requirements of {pinned}");
    pip_install(dir, &wanted, &what, options)
}

/// `pip install <args>` in the virtualenv `venv`; `what` names it in errors.
fn pip_install(venv: &Path, args: &[String], what: &str, options: &Options) -> anyhow::Result<()> {
    run_relayed(
        Command::new(venv.join("bin").join("python"))
            .args([
                "-m",
                "pip",
                "install",
                "--no-input",
                "--disable-pip-version-check",
            ])
            .args(args),
        &format!("pip install {what}"),
        "pip",
        options.timeout(),
    )
}

/// A Python snippet printing, as JSON, an installed distribution's
/// requirements that apply here (markers evaluated, extras left out), each
/// as `[name, requirement without its marker]`.
const REQUIREMENTS_SCRIPT: &str = r#"
import json, sys
from importlib.metadata import requires
from pip._vendor.packaging.requirements import Requirement
out = []
for text in requires(sys.argv[1]) or []:
    r = Requirement(text)
    if r.marker is not None and not r.marker.evaluate({"extra": ""}):
        continue
    r.marker = None
    out.append([r.name, str(r)])
print(json.dumps(out))
"#;

/// The requirements of the distribution `name` installed in `venv`.
fn requirements_of(venv: &Path, name: &str) -> anyhow::Result<Vec<(String, String)>> {
    let what = format!("reading the requirements of {name}");
    let mut cmd = tokio::process::Command::new(venv.join("bin").join("python"));
    cmd.args(["-c", REQUIREMENTS_SCRIPT, name]);
    let out = process_group::output_blocking(cmd, LIST_TIMEOUT, Pipes::Capture)
        .map_err(|e| anyhow::anyhow!("{what}: {e}"))?;
    if !out.status.success() {
        bail!(
            "{what}: {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let list: Vec<(String, String)> = serde_json::from_slice(&out.stdout)
        .with_context(|| format!("{what}: not a JSON list of requirements"))?;
    Ok(list)
}

/// The console scripts the distribution `name` installed in `venv` declares.
pub fn console_scripts(venv: &Path, name: &str) -> anyhow::Result<Vec<String>> {
    let script = "import sys\nfrom importlib.metadata import distribution\nfor e in distribution(sys.argv[1]).entry_points:\n    if e.group == 'console_scripts': print(e.name)";
    let mut cmd = tokio::process::Command::new(venv.join("bin").join("python"));
    cmd.args(["-c", script, name]);
    let out = process_group::output_blocking(cmd, LIST_TIMEOUT, Pipes::Capture)
        .map_err(|e| anyhow::anyhow!("listing the console scripts of {name}: {e}"))?;
    if !out.status.success() {
        bail!(
            "listing the console scripts of {name}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// `requirements` (name, requirement) with each overridden one replaced by
/// its override; an override that names no requirement is an error naming
/// the ones there are.
pub fn apply_overrides(
    requirements: &[(String, String)],
    overrides: &[PinOverride],
) -> Result<Vec<String>, String> {
    for o in overrides {
        if !requirements.iter().any(|(n, _)| normal_name(n) == o.name) {
            let names: Vec<&str> = requirements.iter().map(|(n, _)| n.as_str()).collect();
            return Err(format!(
                "the override {:?} names no dependency (its dependencies: {})",
                o.text,
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ));
        }
    }
    Ok(requirements
        .iter()
        .map(|(name, req)| {
            overrides
                .iter()
                .find(|o| o.name == normal_name(name))
                .map_or_else(|| req.clone(), |o| o.text.clone())
        })
        .collect())
}

/// The Python that makes a virtualenv when none is given: `$ACP_HARNESS_PYTHON`, else `python3`.
fn python() -> String {
    std::env::var(crate::packages::python::PYTHON_ENV)
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "python3".into())
}

/// Runs `cmd` to its end within `timeout` (its own process group, ended at
/// the timeout), relaying its output to stderr prefixed `[prefix]` while it
/// runs; `what` names it in errors.
fn run_relayed(
    cmd: &mut Command,
    what: &str,
    prefix: &'static str,
    timeout: Duration,
) -> anyhow::Result<()> {
    let cmd = tokio::process::Command::from(std::mem::replace(cmd, Command::new("")));
    let out = match process_group::output_blocking(cmd, timeout, Pipes::Relay(prefix)) {
        Ok(out) => out,
        Err(RunError::Timeout(_)) => bail!(
            "{what} took longer than {} s ([install] timeout_secs); stopped it",
            timeout.as_secs()
        ),
        Err(e) => bail!("{what}: {e}"),
    };
    if !out.status.success() {
        bail!("{what} failed ({})", out.status);
    }
    Ok(())
}

/// Every published version of PyPI package `name` that parses as semver,
/// ascending: `pip index versions` through pip itself (its config and
/// index apply) run by `python`, bounded by [`LIST_TIMEOUT`].
/// A spec with extras (`hermes-agent[acp,mcp]`) is asked by its bare name:
/// an index lists a distribution's versions, and pip refuses extras there.
pub fn pypi_versions(name: &str, python: &Path) -> anyhow::Result<Vec<semver::Version>> {
    let name = without_extras(name);
    let what = format!("pip index versions {name}");
    let mut cmd = tokio::process::Command::new(python);
    cmd.args([
        "-m",
        "pip",
        "index",
        "versions",
        "--disable-pip-version-check",
        name,
    ]);
    // the answer is read while pip runs, so a long one never stalls it
    let out = match process_group::output_blocking(cmd, LIST_TIMEOUT, Pipes::Capture) {
        Ok(out) => out,
        Err(RunError::Timeout(_)) => {
            bail!("{what}: no answer within {} s", LIST_TIMEOUT.as_secs())
        }
        Err(e) => bail!("{what}: {e}"),
    };
    if !out.status.success() {
        bail!(
            "{what}: {}: {}",
            out.status,
            pip_error_line(&String::from_utf8_lossy(&out.stderr))
        );
    }
    parse_pip_index(&String::from_utf8_lossy(&out.stdout))
        .with_context(|| format!("{what}: no `Available versions:` line in its answer"))
}

/// A PyPI requirement's distribution name, its extras left off.
pub fn without_extras(spec: &str) -> &str {
    spec.split('[').next().unwrap_or(spec).trim()
}

/// The line of pip's stderr that says what went wrong (its `ERROR:` line,
/// else the last line that is no warning), for a one-line table cell.
fn pip_error_line(stderr: &str) -> &str {
    let lines = || stderr.lines().map(str::trim).filter(|l| !l.is_empty());
    lines()
        .find(|l| l.starts_with("ERROR:"))
        .or_else(|| lines().rfind(|l| !l.starts_with("WARNING:")))
        .unwrap_or("no message")
}

/// The `Available versions: a, b, ...` line of `pip index versions`, as
/// semver (versions that are not semver, e.g. `1.0rc1`, are skipped).
pub fn parse_pip_index(text: &str) -> Option<Vec<semver::Version>> {
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Available versions:"))?;
    let mut out: Vec<semver::Version> = line
        .split(',')
        .filter_map(|v| semver::Version::parse(v.trim()).ok())
        .collect();
    out.sort();
    out.dedup();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An index is asked by the distribution's name, extras left off, and a
    /// refusal reads as its one error line, not pip's whole output.
    #[test]
    fn pypi_queries_drop_extras_and_failures_read_as_one_line() {
        assert_eq!(without_extras("hermes-agent[acp,mcp]"), "hermes-agent");
        assert_eq!(without_extras("hermes-agent"), "hermes-agent");
        let stderr = "WARNING: pip index is currently an experimental command. It may be removed/changed in a future release without prior warning.\nERROR: No matching distribution found for nope\n";
        assert_eq!(
            pip_error_line(stderr),
            "ERROR: No matching distribution found for nope"
        );
        assert_eq!(
            pip_error_line("WARNING: w\nsomething broke\n"),
            "something broke"
        );
        assert_eq!(pip_error_line(""), "no message");
    }

    #[test]
    fn pip_index_answers_parse_to_semver_in_order() {
        let cases = [
            (
                "agent-client-protocol (0.12.1)\nAvailable versions: 0.12.1, 0.12.0, 0.9.0, 0.0.1\n",
                Some(vec!["0.0.1", "0.9.0", "0.12.0", "0.12.1"]),
            ),
            (
                "x (1.0)\nAvailable versions: 1.0rc1, 2.0.0\n",
                Some(vec!["2.0.0"]),
            ),
            ("ERROR: No matching distribution found for x\n", None),
        ];
        for (text, want) in cases {
            let got = parse_pip_index(text)
                .map(|v| v.iter().map(ToString::to_string).collect::<Vec<_>>());
            let want = want.map(|w| w.iter().map(ToString::to_string).collect::<Vec<_>>());
            assert_eq!(got, want, "{text}");
        }
    }

    #[test]
    fn package_keys_name_their_source() {
        assert_eq!(
            split_key("pypi:agent-client-protocol"),
            (Source::Pypi, "agent-client-protocol")
        );
        assert_eq!(
            split_key("@zed-industries/codex-acp"),
            (Source::Npm, "@zed-industries/codex-acp")
        );
    }

    #[test]
    fn an_override_replaces_the_pin_of_the_dependency_it_names() {
        let reqs = |list: &[(&str, &str)]| {
            list.iter()
                .map(|(n, r)| (n.to_string(), r.to_string()))
                .collect::<Vec<_>>()
        };
        let deps = reqs(&[
            ("Foo_Bar", "Foo_Bar==1.2.3"),
            ("pydantic", "pydantic<3,>=2.7"),
        ]);
        let o = PinOverride::parse("foo-bar==1.2.3.post1").unwrap();
        assert_eq!(o.name, "foo-bar");
        assert_eq!(
            apply_overrides(&deps, &[o]).unwrap(),
            ["foo-bar==1.2.3.post1", "pydantic<3,>=2.7"]
        );
        let stray = PinOverride::parse("numpy==2.0.0").unwrap();
        let err = apply_overrides(&deps, &[stray]).unwrap_err();
        assert_eq!(
            err,
            "the override \"numpy==2.0.0\" names no dependency (its dependencies: Foo_Bar, pydantic)"
        );
    }

    #[test]
    fn overrides_are_a_name_then_a_version_specifier() {
        for (text, ok) in [
            ("foo==1.2.3.post1", true),
            ("foo >= 2", true),
            ("foo~=1.4", true),
            ("foo", false),
            ("==1.0", false),
            ("foo 1.0", false),
        ] {
            assert_eq!(PinOverride::parse(text).is_ok(), ok, "{text}");
        }
        assert_eq!(PinOverride::parse("foo >= 2").unwrap().text, "foo>= 2");
        assert_eq!(normal_name("Zope.Interface__x"), "zope-interface-x");
    }
}
