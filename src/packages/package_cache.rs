//! The per-user install cache of agent packages: `package@version` from its
//! registry ([`crate::packages::install_source`]: npm, or PyPI into a
//! virtualenv under `pypi/`), versions side by side, reused across runs and
//! CI. An install is complete only once its marker is written last.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;

use crate::corpus::profile::Source;
use crate::packages::install_source::{self, split_key};
use crate::packages::python;

/// Marker written last into a finished install.
pub const COMPLETE_MARKER: &str = ".acp-harness-complete";

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
        (crate::corpus::profile::Source::Pypi, name) => {
            Path::new("pypi").join(format!("{name}@{version}"))
        }
        (crate::corpus::profile::Source::Npm, name) => PathBuf::from(format!("{name}@{version}")),
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
        (crate::corpus::profile::Source::Pypi, name) => (root.join("pypi"), name),
        (crate::corpus::profile::Source::Npm, name) => (root.to_path_buf(), name),
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
            // `+<digest>`: the same version installed with other side packages
            let mut v = semver::Version::parse(v).ok()?;
            v.build = semver::BuildMetadata::EMPTY;
            Some(v)
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Manifest written into a finished install before its marker: what the
/// install was made with beyond `package@version` (a changed value makes
/// the next use install it afresh).
pub const INSTALL_MANIFEST: &str = ".acp-harness-install.json";

/// What an install was made with beyond `package@version`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Manifest {
    /// The PyPI pin overrides applied.
    #[serde(default)]
    overrides: Vec<String>,
    /// Side packages installed into the virtualenv (`name==version`).
    #[serde(default)]
    extras: Vec<String>,
}

/// One package to install into the cache.
#[derive(Debug, Clone)]
pub struct PackageJob<'a> {
    pub source: Source,
    pub name: &'a str,
    pub version: &'a semver::Version,
    /// Directories first on PATH while installing (a runtime's `bin`, for
    /// the package's install scripts).
    pub path_prefix: Vec<PathBuf>,
    /// The Python range its virtualenv needs (PyPI).
    pub python: Option<&'a str>,
    /// PyPI pin overrides (`name==version`), each replacing the package's
    /// own pin of that dependency.
    pub overrides: &'a [String],
    /// The bound on each install step (the profile's `[install]
    /// timeout_secs`; default [`install_source::INSTALL_TIMEOUT`]).
    pub timeout: Option<std::time::Duration>,
    /// PyPI side packages (`name==version`) installed into its virtualenv
    /// after it (`into = "main"`).
    pub extras: &'a [String],
}

impl<'a> PackageJob<'a> {
    /// An npm package with nothing else asked of it.
    pub fn npm(name: &'a str, version: &'a semver::Version) -> Self {
        PackageJob {
            source: Source::Npm,
            name,
            version,
            path_prefix: Vec::new(),
            python: None,
            overrides: &[],
            timeout: None,
            extras: &[],
        }
    }

    fn key(&self) -> String {
        match self.source {
            Source::Npm => self.name.to_string(),
            Source::Pypi => format!("{}{}", crate::corpus::profile::PYPI_PREFIX, self.name),
        }
    }

    /// Where this install lives under the cache `root`: `name@version`, and
    /// `name@version+<digest>` when overrides or side packages make it
    /// another environment. Two profiles of one package that ask for other
    /// side packages so keep one install each instead of replacing each
    /// other's on every run.
    fn dir_in(&self, root: &Path) -> PathBuf {
        let plain = root.join(cache_name(&self.key(), self.version));
        if self.overrides.is_empty() && self.extras.is_empty() {
            return plain;
        }
        let spec = serde_json::json!({"overrides": self.overrides, "extras": self.extras});
        let digest = crate::corpus::recording::blobs::sha256_hex(spec.to_string().as_bytes());
        let mut name = plain.file_name().unwrap_or_default().to_os_string();
        name.push(format!("+{}", &digest[..10]));
        plain.with_file_name(name)
    }
}

/// Whether the cached install in `dir` serves `job` as it is.
fn reusable(job: &PackageJob, dir: &Path) -> Result<(), String> {
    if !dir.join(COMPLETE_MARKER).is_file() {
        return Err("not installed".into());
    }
    if job.source != Source::Pypi {
        return Ok(());
    }
    let made: Manifest = std::fs::read_to_string(dir.join(INSTALL_MANIFEST))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    if made.overrides != job.overrides {
        return Err(format!(
            "it was made with the overrides {:?}, not {:?}",
            made.overrides, job.overrides
        ));
    }
    if made.extras != job.extras {
        return Err(format!(
            "it was made with the side packages {:?} in it, not {:?}",
            made.extras, job.extras
        ));
    }
    let python = python::venv_python(dir);
    if !python::python_satisfies(job.python, python.as_ref()) {
        return Err(format!(
            "its virtualenv has Python {}, not {}",
            python.map_or_else(|| "(unknown)".to_string(), |v| v.to_string()),
            job.python.unwrap_or_default()
        ));
    }
    Ok(())
}

/// Installs one package unless the cache already holds it as `job` asks;
/// returns its directory. Progress goes to stderr.
pub fn ensure_package(job: &PackageJob) -> anyhow::Result<PathBuf> {
    let version = job.version;
    let dir = job.dir_in(&cache_root()?);
    let spec = format!("{}@{version}", job.name);
    match reusable(job, &dir) {
        Ok(()) => {
            eprintln!("[install] {spec}: cached in {}", dir.display());
            return Ok(dir);
        }
        Err(why) if dir.exists() => {
            eprintln!("[install] {spec}: installing afresh: {why}");
        }
        Err(_) => {}
    }
    // the interpreter is found before anything is cleared or fetched
    let python = match job.source {
        Source::Pypi => Some(python::find_python(job.python)?),
        Source::Npm => None,
    };
    let parent = dir.parent().context("cache dir has no parent")?;
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let relocatable = install_source::relocatable(job.source);
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
        job.source,
        dir.display()
    );
    if let Some(p) = &python {
        eprintln!(
            "[install] {spec}: Python {} ({})",
            p.version,
            p.program.display()
        );
    }
    let started = Instant::now();
    let options = install_source::Options {
        path_prefix: &job.path_prefix,
        python: python.as_ref().map(|p| p.program.as_path()),
        overrides: job.overrides,
        timeout: job.timeout,
        extras: job.extras,
    };
    if let Err(err) = install_source::install(job.source, job.name, version, &work, &options) {
        let _ = std::fs::remove_dir_all(&work);
        return Err(err);
    }
    let manifest = Manifest {
        overrides: job.overrides.to_vec(),
        extras: job.extras.to_vec(),
    };
    atomic_file::write(
        &work.join(INSTALL_MANIFEST),
        serde_json::to_string(&manifest)?,
    )
    .with_context(|| format!("writing {}", work.join(INSTALL_MANIFEST).display()))?;
    atomic_file::write(&work.join(COMPLETE_MARKER), format!("{spec}\n"))
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
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One install per whole spec: the same package and version asked with
    /// other side packages or overrides lives beside the plain one, never
    /// over it, and lists as the one version it is.
    #[test]
    fn installs_are_keyed_by_their_whole_spec() {
        let root = Path::new("/cache");
        let v = semver::Version::new(0, 19, 0);
        let plain = PackageJob {
            source: Source::Pypi,
            ..PackageJob::npm("hermes-agent", &v)
        };
        let side = ["mcp==1.2.0".to_string()];
        let other_side = ["mcp==1.3.0".to_string()];
        let with_side = PackageJob {
            extras: &side,
            ..plain.clone()
        };
        let with_other = PackageJob {
            extras: &other_side,
            ..plain.clone()
        };
        assert_eq!(plain.dir_in(root), root.join("pypi/hermes-agent@0.19.0"));
        let (a, b) = (with_side.dir_in(root), with_other.dir_in(root));
        assert_ne!(a, b);
        assert_ne!(a, plain.dir_in(root));
        assert_eq!(a, with_side.clone().dir_in(root));
        assert!(
            a.to_string_lossy()
                .starts_with("/cache/pypi/hermes-agent@0.19.0+"),
            "{}",
            a.display()
        );

        let dir = tempfile::tempdir().unwrap();
        for job in [&plain, &with_side] {
            let d = job.dir_in(dir.path());
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join(COMPLETE_MARKER), "x\n").unwrap();
        }
        assert_eq!(installed_versions_in(dir.path(), "pypi:hermes-agent"), [v]);
    }

    /// A cached virtualenv serves a job only with the side packages it was
    /// made with in it (`into = "main"`); with others it is made afresh.
    #[test]
    fn a_cached_virtualenv_is_reused_only_with_the_same_side_packages_in_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(COMPLETE_MARKER), "x\n").unwrap();
        let made = Manifest {
            overrides: Vec::new(),
            extras: vec!["dep==1.0.0".into()],
        };
        std::fs::write(
            dir.path().join(INSTALL_MANIFEST),
            serde_json::to_string(&made).unwrap(),
        )
        .unwrap();
        let v = semver::Version::new(1, 0, 0);
        let cases: [(&[&str], Result<(), &str>); 3] = [
            (&["dep==1.0.0"], Ok(())),
            (&[], Err("side packages [\"dep==1.0.0\"] in it, not []")),
            (&["dep==2.0.0"], Err("not [\"dep==2.0.0\"]")),
        ];
        for (extras, want) in cases {
            let extras: Vec<String> = extras.iter().map(|e| e.to_string()).collect();
            let job = PackageJob {
                source: Source::Pypi,
                extras: &extras,
                ..PackageJob::npm("agent", &v)
            };
            match (reusable(&job, dir.path()), want) {
                (Ok(()), Ok(())) => {}
                (Err(e), Err(part)) => assert!(e.contains(part), "{extras:?}: {e}"),
                (got, _) => panic!("{extras:?}: {got:?}"),
            }
        }
    }
}
