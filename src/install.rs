//! Agent install cache: `package@version` from its registry
//! ([`crate::install_source`]: npm, or PyPI into a virtualenv under `pypi/`)
//! in a per-user cache outside the repository
//! (`$XDG_CACHE_HOME/acp-harness/agents/`, else `~/.cache/acp-harness/agents/`),
//! versions side by side, reused across runs and CI. An install is complete
//! only once its marker is written last: an npm install goes into a
//! temporary sibling renamed into place, a virtualenv (which cannot move) is
//! made in place after clearing any unfinished one, so a half-finished
//! install is never mistaken for a good one.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};

use crate::install_source::{self, split_key};
use crate::profile::{AgentSpec, Profile, Recipe, Vars};

/// Marker written last into a finished install.
pub const COMPLETE_MARKER: &str = ".acp-harness-complete";

#[derive(clap::Args, Debug)]
pub struct InstallArgs {
    /// `<agent>@<version>`, e.g. codex-acp@2.6.0 (without a version: the profile's default)
    pub spec: String,
    /// Repository root holding `profiles/` (default: the current directory)
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
}

pub fn run(args: InstallArgs) -> anyhow::Result<ExitCode> {
    let spec = AgentSpec::parse(&args.spec)?;
    let profile = Profile::find(&args.root, &spec.agent)?;
    let version = profile.version_for(&spec);
    let recipe = profile.recipe(&version)?;
    let dir = ensure_installed(recipe, &version)?;
    println!("{}", dir.display());
    Ok(ExitCode::SUCCESS)
}

/// The cache root: `$XDG_CACHE_HOME/acp-harness/agents` or `~/.cache/acp-harness/agents`.
pub fn cache_root() -> anyhow::Result<PathBuf> {
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => {
            let home = std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .context("neither XDG_CACHE_HOME nor HOME is set; cannot place the agent cache")?;
            PathBuf::from(home).join(".cache")
        }
    };
    Ok(base.join("acp-harness").join("agents"))
}

/// Where `package@version` lives in the cache (scoped packages nest, as in
/// npm; a `pypi:` key lives under `pypi/`).
pub fn package_dir(package: &str, version: &semver::Version) -> anyhow::Result<PathBuf> {
    Ok(cache_root()?.join(cache_name(package, version)))
}

/// A package key's place in the cache, relative to its root.
fn cache_name(package: &str, version: &semver::Version) -> PathBuf {
    match split_key(package) {
        (crate::profile::Source::Pypi, name) => Path::new("pypi").join(format!("{name}@{version}")),
        (crate::profile::Source::Npm, name) => PathBuf::from(format!("{name}@{version}")),
    }
}

/// The versions of `package` the cache holds finished installs of (no
/// network: what `outdated --offline` knows besides the saved registry answers).
pub fn installed_versions(package: &str) -> anyhow::Result<Vec<semver::Version>> {
    Ok(installed_versions_in(&cache_root()?, package))
}

/// [`installed_versions`] under the cache root `root`.
pub fn installed_versions_in(root: &Path, package: &str) -> Vec<semver::Version> {
    let (root, package) = match split_key(package) {
        (crate::profile::Source::Pypi, name) => (root.join("pypi"), name),
        (crate::profile::Source::Npm, name) => (root.to_path_buf(), name),
    };
    let (dir, name) = match package.rsplit_once('/') {
        Some((scope, name)) => (root.join(scope), name),
        None => (root.to_path_buf(), package),
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<semver::Version> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join(COMPLETE_MARKER).is_file())
        .filter_map(|e| {
            let file = e.file_name();
            let v = file.to_str()?.strip_prefix(name)?.strip_prefix('@')?;
            semver::Version::parse(v).ok()
        })
        .collect();
    out.sort();
    out
}

/// Installs `recipe.package@version` unless the cache already holds it;
/// returns the package dir. Progress goes to stderr.
pub fn ensure_installed(recipe: &Recipe, version: &semver::Version) -> anyhow::Result<PathBuf> {
    if recipe.package.is_empty() {
        bail!(
            "the recipe for versions {} names no package; there is nothing to install",
            recipe.versions
        );
    }
    let key = recipe.package_key();
    let dir = package_dir(&key, version)?;
    let spec = format!("{}@{version}", recipe.package);
    if dir.join(COMPLETE_MARKER).is_file() {
        eprintln!("[install] {spec}: cached in {}", dir.display());
        check_program(recipe, version, &dir)?;
        return Ok(dir);
    }
    let parent = dir.parent().context("cache dir has no parent")?;
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let relocatable = install_source::relocatable(recipe.source);
    let work = if relocatable {
        parent.join(format!(
            ".tmp-{}-{}",
            dir.file_name().unwrap_or_default().to_string_lossy(),
            std::process::id()
        ))
    } else {
        dir.clone()
    };
    if work.exists() {
        std::fs::remove_dir_all(&work).with_context(|| format!("clearing {}", work.display()))?;
    }
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    eprintln!(
        "[install] {spec}: {:?} install into {} ...",
        recipe.source,
        dir.display()
    );
    let started = Instant::now();
    if let Err(err) = install_source::install(recipe.source, &recipe.package, version, &work) {
        let _ = std::fs::remove_dir_all(&work);
        return Err(err);
    }
    std::fs::write(work.join(COMPLETE_MARKER), format!("{spec}\n"))
        .with_context(|| format!("marking {}", work.display()))?;
    if relocatable {
        if dir.exists() {
            // Someone else finished first (or a broken leftover without marker).
            if dir.join(COMPLETE_MARKER).is_file() {
                let _ = std::fs::remove_dir_all(&work);
                return Ok(dir);
            }
            std::fs::remove_dir_all(&dir)
                .with_context(|| format!("removing broken {}", dir.display()))?;
        }
        std::fs::rename(&work, &dir)
            .with_context(|| format!("moving {} to {}", work.display(), dir.display()))?;
    }
    eprintln!(
        "[install] {spec}: done in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    check_program(recipe, version, &dir)?;
    Ok(dir)
}

/// A recipe whose program lives in the package must find it there.
fn check_program(recipe: &Recipe, version: &semver::Version, dir: &Path) -> anyhow::Result<()> {
    let vars = Vars {
        package_dir: dir.display().to_string(),
        version: version.to_string(),
        ..Vars::default()
    };
    let mut candidates = vec![vars.fill(&recipe.program, "program")?];
    for arg in &recipe.args {
        if arg.contains("{package_dir}") || arg.contains("{install_dir}") {
            candidates.push(vars.fill(arg, "args")?);
        }
    }
    for path in candidates.iter().filter(|p| p.contains('/')) {
        if !Path::new(path).exists() {
            bail!(
                "{}@{version} is installed in {} but {path} is missing (does the package ship this platform?)",
                recipe.package,
                dir.display()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scoped_packages_nest_in_the_cache_by_version() {
        let root = cache_root().unwrap();
        let dir = package_dir(
            "@agentclientprotocol/codex-acp",
            &semver::Version::new(2, 6, 0),
        )
        .unwrap();
        assert_eq!(
            dir,
            root.join("@agentclientprotocol").join("codex-acp@2.6.0")
        );
    }

    #[test]
    fn pypi_packages_live_under_pypi_and_list_only_finished_installs() {
        let v = semver::Version::new(0, 12, 1);
        assert_eq!(
            package_dir("pypi:agent-client-protocol", &v).unwrap(),
            cache_root()
                .unwrap()
                .join("pypi")
                .join("agent-client-protocol@0.12.1")
        );
        let root = tempfile::tempdir().unwrap();
        for (name, finished) in [
            ("agent-client-protocol@0.12.1", true),
            ("agent-client-protocol@0.12.0", false),
        ] {
            let dir = root.path().join("pypi").join(name);
            std::fs::create_dir_all(&dir).unwrap();
            if finished {
                std::fs::write(dir.join(COMPLETE_MARKER), "").unwrap();
            }
        }
        assert_eq!(
            installed_versions_in(root.path(), "pypi:agent-client-protocol"),
            vec![v]
        );
        assert!(installed_versions_in(root.path(), "agent-client-protocol").is_empty());
    }
}
