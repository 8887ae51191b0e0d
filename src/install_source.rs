//! The registries agents are installed from, behind one interface: npm
//! (`npm install --prefix`) and PyPI (a virtualenv, then `pip install
//! name==version`). Each installs one pinned version into a directory of the
//! install cache and lists published versions for bisect, `outdated` and
//! `update`. Both run the registry's ordinary client, bounded by a timeout,
//! with its output relayed to stderr as progress.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};
use process_group::{Pipes, RunError};

use crate::profile::{PYPI_PREFIX, Source};

/// How long one install may take.
pub const INSTALL_TIMEOUT: Duration = Duration::from_secs(900);

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

/// Installs `name` at `version` from `source` into `dir` (which exists).
pub fn install(
    source: Source,
    name: &str,
    version: &semver::Version,
    dir: &Path,
) -> anyhow::Result<()> {
    match source {
        Source::Npm => run_relayed(
            Command::new("npm")
                .arg("install")
                .arg("--prefix")
                .arg(dir)
                .args(["--no-audit", "--no-fund", "--no-save", "--loglevel=http"])
                .arg(format!("{name}@{version}")),
            &format!("npm install {name}@{version}"),
            "npm",
        ),
        Source::Pypi => {
            run_relayed(
                Command::new(python()).args(["-m", "venv"]).arg(dir),
                &format!("creating a virtualenv for {name}=={version}"),
                "venv",
            )?;
            run_relayed(
                Command::new(dir.join("bin").join("python"))
                    .args([
                        "-m",
                        "pip",
                        "install",
                        "--no-input",
                        "--disable-pip-version-check",
                    ])
                    .arg(format!("{name}=={version}")),
                &format!("pip install {name}=={version}"),
                "pip",
            )
        }
    }
}

/// The Python that makes virtualenvs: `$ACP_HARNESS_PYTHON`, else `python3`.
fn python() -> String {
    std::env::var("ACP_HARNESS_PYTHON")
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "python3".into())
}

/// Runs `cmd` to its end within [`INSTALL_TIMEOUT`] (its own process group,
/// ended at the timeout), relaying its output to stderr prefixed `[prefix]`
/// while it runs; `what` names it in errors.
fn run_relayed(cmd: &mut Command, what: &str, prefix: &'static str) -> anyhow::Result<()> {
    let cmd = tokio::process::Command::from(std::mem::replace(cmd, Command::new("")));
    let out = match process_group::output_blocking(cmd, INSTALL_TIMEOUT, Pipes::Relay(prefix)) {
        Ok(out) => out,
        Err(RunError::Timeout(_)) => bail!(
            "{what} took longer than {} s; stopped it",
            INSTALL_TIMEOUT.as_secs()
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
/// index apply), bounded by [`LIST_TIMEOUT`].
pub fn pypi_versions(name: &str) -> anyhow::Result<Vec<semver::Version>> {
    let what = format!("pip index versions {name}");
    let mut cmd = tokio::process::Command::new(python());
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
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    parse_pip_index(&String::from_utf8_lossy(&out.stdout))
        .with_context(|| format!("{what}: no `Available versions:` line in its answer"))
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
}
