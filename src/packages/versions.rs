//! Published versions of an agent's packages, for bisect, `outdated` and
//! `update`: `npm view <package> versions --json` through npm itself (its
//! config, proxy and cache apply), bounded by a timeout, or for a `pypi:`
//! package key `pip index versions` ([`crate::packages::install_source`]). Each answer
//! is also saved beside the install cache, so `outdated --offline` can tell
//! what the registry last said.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use std::time::Duration;

use process_group::{Pipes, RunError};
use tokio::process::Command;

/// How long one `npm view` may take.
pub const NPM_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("npm view {package} versions: cannot run npm: {source}")]
    Spawn {
        package: String,
        source: std::io::Error,
    },
    #[error("npm view {package} versions: no answer within {secs} s")]
    Timeout { package: String, secs: u64 },
    #[error("npm view {package} versions: {}: {stderr}", exit_text(*code))]
    Failed {
        package: String,
        code: Option<i32>,
        stderr: String,
    },
    #[error("npm view {package} versions: not a JSON list of versions: {why}")]
    Parse { package: String, why: String },
}

/// Every published version of `package` that parses as semver, ascending.
/// npm's output is read while it runs (a long version list never stalls it
/// on a full pipe), and npm is stopped at [`NPM_TIMEOUT`].
pub fn npm_versions(package: &str) -> Result<Vec<semver::Version>, RegistryError> {
    let mut cmd = Command::new("npm");
    cmd.args(["view", package, "versions", "--json"]);
    let out = match process_group::output_blocking(cmd, NPM_TIMEOUT, Pipes::Capture) {
        Ok(out) => out,
        Err(RunError::Timeout(_)) => {
            return Err(RegistryError::Timeout {
                package: package.into(),
                secs: NPM_TIMEOUT.as_secs(),
            });
        }
        Err(RunError::Spawn(source) | RunError::Wait(source)) => {
            return Err(RegistryError::Spawn {
                package: package.into(),
                source,
            });
        }
    };
    if !out.status.success() {
        return Err(RegistryError::Failed {
            package: package.into(),
            code: out.status.code(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    parse_versions(&String::from_utf8_lossy(&out.stdout)).map_err(|why| RegistryError::Parse {
        package: package.into(),
        why,
    })
}

/// The versions of an agent's packages that belong to it: for each package
/// its recipes name, the versions whose covering recipe names that package,
/// or that no recipe covers (kept: they are unrunnable, and say so when
/// tried); for a package a recipe is renamed to, also its versions from the
/// rename on that the renamed recipe covers (a rename no recipe installs
/// yet). Ascending, without duplicates.
pub fn profile_versions<E>(
    profile: &crate::corpus::profile::Profile,
    mut fetch: impl FnMut(&str) -> Result<Vec<semver::Version>, E>,
) -> Result<Vec<semver::Version>, E> {
    let mut all = Vec::new();
    for p in profile_packages(profile) {
        all.extend(fetch(&p)?.into_iter().filter(|v| {
            profile.recipe(v).map_or(true, |r| {
                r.package_key() == p
                    || r.renamed_key()
                        .is_some_and(|(to, from)| to == p && *v >= from)
            })
        }));
    }
    all.sort();
    all.dedup();
    Ok(all)
}

/// The package keys ([`crate::corpus::profile::Recipe::package_key`]) a profile's
/// recipes install or are renamed to, sorted, once each.
pub fn profile_packages(profile: &crate::corpus::profile::Profile) -> Vec<String> {
    let mut packages: Vec<String> = profile
        .recipes
        .iter()
        .flat_map(|r| [Some(r.package_key()), r.renamed_key().map(|(to, _)| to)])
        .flatten()
        .filter(|p| !p.is_empty())
        .collect();
    packages.sort();
    packages.dedup();
    packages
}

/// The registries that publish these package keys, for people: `npm`,
/// `PyPI`, or both.
pub fn registries(packages: &[String]) -> &'static str {
    let pypi = |p: &String| {
        crate::packages::install_source::split_key(p).0 == crate::corpus::profile::Source::Pypi
    };
    match (packages.iter().any(pypi), packages.iter().all(pypi)) {
        (true, true) => "PyPI",
        (true, false) => "npm, PyPI",
        _ => "npm",
    }
}

/// Where the last registry answer for `package` is kept: beside the
/// install cache `agents` (`<cache>/acp-harness/registry/`).
pub fn saved_answer_path(agents: &Path, package: &str) -> PathBuf {
    let base = agents.parent().unwrap_or(agents).join("registry");
    base.join(format!("{}.json", package.replace('/', "__")))
}

/// The published versions of a package key from its registry: npm, or
/// PyPI for a `pypi:` key (asked by the Python `install` would use without
/// a `[runtime] python` range).
pub fn versions(package: &str) -> anyhow::Result<Vec<semver::Version>> {
    versions_with(package, None)
}

/// [`versions`], PyPI asked by the Python that matches `python` (a
/// `[runtime] python` range), found as `install` finds it.
pub fn versions_with(package: &str, python: Option<&str>) -> anyhow::Result<Vec<semver::Version>> {
    match crate::packages::install_source::split_key(package) {
        (crate::corpus::profile::Source::Pypi, name) => {
            let python = crate::packages::python::find_python(python)?;
            crate::packages::install_source::pypi_versions(name, &python.program)
        }
        (crate::corpus::profile::Source::Npm, name) => Ok(npm_versions(name)?),
    }
}

/// The `[runtime] python` range that installs a profile's package key: the
/// first recipe installing or renamed to it, its own range winning over
/// the profile's; the profile's when no recipe names it.
pub fn python_for(profile: &crate::corpus::profile::Profile, package: &str) -> Option<String> {
    profile
        .recipes
        .iter()
        .find(|r| {
            r.package_key() == package || r.renamed_key().is_some_and(|(to, _)| to == package)
        })
        .map_or(&profile.runtime, |r| &r.runtime)
        .over(&profile.runtime)
        .python
}

/// [`versions`], saving the answer for offline use (a failed save is
/// only a warning: the answer is still good).
pub fn versions_saved(package: &str) -> anyhow::Result<Vec<semver::Version>> {
    versions_saved_with(package, None)
}

/// [`versions_with`], saving the answer as [`versions_saved`] does.
pub fn versions_saved_with(
    package: &str,
    python: Option<&str>,
) -> anyhow::Result<Vec<semver::Version>> {
    let versions = versions_with(package, python)?;
    let saved = crate::packages::package_cache::cache_root()
        .and_then(|agents| save_answer(&agents, package, &versions));
    if let Err(e) = saved {
        eprintln!("[registry] {package}: answer not saved for offline use: {e:#}");
    }
    Ok(versions)
}

/// Saves a registry answer beside the install cache `agents`.
pub fn save_answer(
    agents: &Path,
    package: &str,
    versions: &[semver::Version],
) -> anyhow::Result<()> {
    let path = saved_answer_path(agents, package);
    let list: Vec<String> = versions.iter().map(|v| v.to_string()).collect();
    atomic_file::write(&path, serde_json::to_string(&list)?)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// What is known of `package` without the network: the last saved registry
/// answer plus the versions installed in the cache.
pub fn offline_versions(package: &str) -> anyhow::Result<Vec<semver::Version>> {
    offline_versions_in(&crate::packages::package_cache::cache_root()?, package)
}

/// [`offline_versions`] for the install cache `agents`.
pub fn offline_versions_in(agents: &Path, package: &str) -> anyhow::Result<Vec<semver::Version>> {
    let mut out = crate::packages::package_cache::installed_versions_in(agents, package);
    let path = saved_answer_path(agents, package);
    if let Ok(text) = std::fs::read_to_string(&path) {
        out.extend(parse_versions(&text).map_err(|why| {
            anyhow::anyhow!("{}: not a saved list of versions: {why}", path.display())
        })?);
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// `npm view ... --json` prints a list, or a bare string for a package with
/// one version. Versions that are not semver are skipped.
pub fn parse_versions(json: &str) -> Result<Vec<semver::Version>, String> {
    let v: serde_json::Value = serde_json::from_str(json.trim()).map_err(|e| e.to_string())?;
    let list: Vec<&str> = match &v {
        serde_json::Value::Array(items) => items.iter().filter_map(|i| i.as_str()).collect(),
        serde_json::Value::String(s) => vec![s.as_str()],
        other => return Err(format!("got {other}")),
    };
    let mut out: Vec<semver::Version> = list
        .iter()
        .filter_map(|s| semver::Version::parse(s).ok())
        .collect();
    out.sort();
    out.dedup();
    Ok(out)
}

fn exit_text(code: Option<i32>) -> String {
    match code {
        Some(c) => format!("exit {c}"),
        None => "ended by a signal".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_from_a_list_or_a_single_string_in_semver_order() {
        let v = parse_versions(r#"["0.10.0","0.9.2","1.0.0-rc.1","not-a-version"]"#).unwrap();
        assert_eq!(
            v.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
            ["0.9.2", "0.10.0", "1.0.0-rc.1"]
        );
        assert_eq!(parse_versions(r#""2.6.0""#).unwrap().len(), 1);
        assert!(parse_versions("{}").is_err());
    }

    /// A profile whose only recipe installs the old name finds the new
    /// name's versions from the rename on once the rename is declared;
    /// a recipe for the new name then owns them.
    #[test]
    fn versions_follow_a_package_across_its_rename() {
        let v = |list: &str| crate::packages::outdated::vs(list);
        let published = |p: &str| -> Result<Vec<semver::Version>, String> {
            Ok(match p {
                "@zed-industries/claude-agent-acp" => v("0.17.1 0.23.1"),
                "@agentclientprotocol/claude-agent-acp" => v("0.24.2 0.101.0"),
                other => return Err(format!("asked for {other}")),
            })
        };
        let head = "id = \"x\"\ndefault_version = \"0.23.1\"\n[model]\nflavour = \"f\"\ntool_naming = {}\n";
        let old = "[[recipe]]\nversions = \">=0.17.0\"\npackage = \"@zed-industries/claude-agent-acp\"\nprogram = \"node\"\n";
        let renamed =
            "renamed = { to = \"@agentclientprotocol/claude-agent-acp\", from = \"0.24.0\" }\n";
        let new = "[[recipe]]\nversions = \">=0.24.0\"\npackage = \"@agentclientprotocol/claude-agent-acp\"\nprogram = \"node\"\n";
        let cases = [
            (format!("{head}{old}"), "0.17.1 0.23.1"),
            (
                format!("{head}{old}{renamed}"),
                "0.17.1 0.23.1 0.24.2 0.101.0",
            ),
            (
                format!("{head}{new}{old}{renamed}"),
                "0.17.1 0.23.1 0.24.2 0.101.0",
            ),
        ];
        for (text, want) in cases {
            let p = crate::corpus::profile::Profile::parse(&text, Path::new("p.toml")).unwrap();
            let got = profile_versions(&p, published).unwrap();
            assert_eq!(got, v(want), "{text}");
        }
    }

    #[test]
    fn the_registries_are_named_from_the_package_keys() {
        let keys = |k: &[&str]| k.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(registries(&keys(&["@google/gemini-cli"])), "npm");
        assert_eq!(registries(&keys(&["pypi:agent-client-protocol"])), "PyPI");
        assert_eq!(
            registries(&keys(&["@zed-industries/codex-acp", "pypi:x"])),
            "npm, PyPI"
        );
    }

    #[test]
    fn offline_versions_are_the_saved_answer_plus_finished_installs() {
        let cache = tempfile::tempdir().unwrap();
        let agents = cache.path().join("acp-harness").join("agents");
        let v = |s: &str| semver::Version::parse(s).unwrap();
        // a finished install, an unfinished one (no marker), another package's
        for (dir, finished) in [
            ("@google/gemini-cli@0.60.0", true),
            ("@google/gemini-cli@0.62.0", false),
            ("@google/other@0.99.0", true),
        ] {
            let d = agents.join(dir);
            std::fs::create_dir_all(&d).unwrap();
            if finished {
                std::fs::write(d.join(crate::packages::package_cache::COMPLETE_MARKER), "")
                    .unwrap();
            }
        }
        let package = "@google/gemini-cli";
        assert_eq!(
            offline_versions_in(&agents, package).unwrap(),
            [v("0.60.0")]
        );
        save_answer(&agents, package, &[v("0.61.0"), v("0.58.0")]).unwrap();
        assert_eq!(
            offline_versions_in(&agents, package).unwrap(),
            [v("0.58.0"), v("0.60.0"), v("0.61.0")]
        );
        // a damaged saved answer is an error naming the file
        std::fs::write(saved_answer_path(&agents, package), "{").unwrap();
        let err = offline_versions_in(&agents, package)
            .unwrap_err()
            .to_string();
        assert!(err.contains("gemini-cli.json"), "{err}");
    }
}
