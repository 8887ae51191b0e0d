//! Agent install cache: `package@version` from its registry
//! ([`crate::packages::install_source`]: npm, or PyPI into a virtualenv under `pypi/`)
//! in a per-user cache outside the repository
//! (`$XDG_CACHE_HOME/acp-harness/agents/`, else `~/.cache/acp-harness/agents/`),
//! versions side by side, reused across runs and CI. An install is complete
//! only once its marker is written last: an npm install goes into a
//! temporary sibling renamed into place, a virtualenv (which cannot move) is
//! made in place after clearing any unfinished one, so a half-finished
//! install is never mistaken for a good one. [`prepare`] installs all a
//! recipe needs: its runtimes ([`crate::packages::runtime`]), its main package and
//! its pinned side packages, each in its own directory or (`into = "main"`)
//! in the main package's virtualenv; a PyPI install records the pin
//! overrides and side packages it was made with, and is made afresh when
//! they, or the Python range its virtualenv must meet, change.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::corpus::profile::{Profile, Recipe, Source, Vars};
use crate::packages::install_source;
use crate::packages::package_cache::{PackageJob, ensure_package};
use crate::packages::{python, runtime};

/// A side package installed for a recipe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SideInstalled {
    /// `name@version` as the header names it (`pypi:` for PyPI).
    pub spec: String,
    pub dir: PathBuf,
    /// Its programs' directory, when it goes on the agent's PATH.
    pub bin_dir: Option<PathBuf>,
}

/// Everything a recipe needs, installed: the main package, its side
/// packages, the runtimes.
#[derive(Debug, Clone, Default)]
pub struct Installed {
    /// The main package's directory (`{package_dir}`); `None` when the
    /// recipe installs no package.
    pub main: Option<PathBuf>,
    /// Side packages by their `as` name (`{package_dir:<as>}`), recipe
    /// order, those in the main virtualenv (`into = "main"`) last.
    pub packages: Vec<(String, SideInstalled)>,
    pub node: Option<runtime::Node>,
    /// The Python the main package's virtualenv was made with (PyPI).
    pub python: Option<semver::Version>,
    /// The PyPI pin overrides applied to the main package.
    pub overrides: Vec<String>,
}

impl Installed {
    /// Directories first on the agent's PATH, in order: the Node runtime's,
    /// then each side package's that goes on PATH.
    pub fn path_prefix(&self) -> Vec<PathBuf> {
        self.node
            .iter()
            .map(|n| n.bin_dir.clone())
            .chain(self.packages.iter().filter_map(|(_, p)| p.bin_dir.clone()))
            .collect()
    }

    /// `base` (a PATH value) with [`Installed::path_prefix`] in front;
    /// `None` when there is nothing to put in front.
    pub fn path_with_prefix(&self, base: &str) -> Option<String> {
        let prefix = self.path_prefix();
        if prefix.is_empty() {
            return None;
        }
        let mut parts: Vec<String> = prefix.iter().map(|p| p.display().to_string()).collect();
        if !base.is_empty() {
            parts.push(base.to_string());
        }
        Some(parts.join(":"))
    }

    /// Side package directories by `as` name, as placeholders fill them.
    pub fn package_dirs(&self) -> BTreeMap<String, String> {
        self.packages
            .iter()
            .map(|(alias, p)| (alias.clone(), p.dir.display().to_string()))
            .collect()
    }

    /// The recording header's account of it: `runtime` (versions by
    /// runtime), `packages` (side packages by `as` name), `overrides`;
    /// each only when there is something to say.
    pub fn header_fields(&self) -> serde_json::Map<String, serde_json::Value> {
        use serde_json::{Value, json};
        let mut out = serde_json::Map::new();
        let mut runtimes = serde_json::Map::new();
        if let Some(n) = &self.node {
            runtimes.insert("node".into(), Value::String(n.version.to_string()));
        }
        if let Some(p) = &self.python {
            runtimes.insert("python".into(), Value::String(p.to_string()));
        }
        if !runtimes.is_empty() {
            out.insert("runtime".into(), Value::Object(runtimes));
        }
        if !self.packages.is_empty() {
            let packages: serde_json::Map<String, Value> = self
                .packages
                .iter()
                .map(|(alias, p)| (alias.clone(), Value::String(p.spec.clone())))
                .collect();
            out.insert("packages".into(), Value::Object(packages));
        }
        if !self.overrides.is_empty() {
            out.insert("overrides".into(), json!(self.overrides));
        }
        out
    }
}

/// Installs what `recipe` needs for `version` unless the cache holds it:
/// its runtimes first (so a missing Node fails before anything else is
/// fetched), then its side packages, then the main package (each with the
/// Node on PATH for its install scripts). Progress goes to stderr.
pub fn prepare(
    profile: &Profile,
    recipe: &Recipe,
    version: &semver::Version,
) -> anyhow::Result<Installed> {
    let needs = recipe.runtime.over(&profile.runtime);
    if let Some(missing) = needs.missing_command(&std::env::var_os("PATH").unwrap_or_default()) {
        anyhow::bail!("{}: {missing}", profile.id);
    }
    let node = needs
        .node
        .as_deref()
        .map(|req| runtime::ensure_node(req, profile.install.timeout()))
        .transpose()?;
    let path_prefix: Vec<PathBuf> = node.iter().map(|n| n.bin_dir.clone()).collect();
    let overrides = profile.overrides_for(recipe);
    let mut installed = Installed {
        node,
        ..Installed::default()
    };
    // side packages that go into the main package's virtualenv, installed with it
    let extras: Vec<String> = recipe
        .packages
        .iter()
        .filter(|side| side.into_main())
        .map(|side| format!("{}=={}", side.name, side.version))
        .collect();
    for side in recipe.packages.iter().filter(|side| !side.into_main()) {
        let v = semver::Version::parse(&side.version).with_context(|| {
            format!(
                "package `{}` (as {:?}): version {:?}",
                side.name, side.alias, side.version
            )
        })?;
        let dir = ensure_package(&PackageJob {
            source: side.source,
            name: &side.name,
            version: &v,
            path_prefix: path_prefix.clone(),
            python: needs.python.as_deref(),
            overrides: &[],
            timeout: Some(profile.install.timeout()),
            extras: &[],
        })?;
        let bin_dir = side.on_path.then(|| match side.source {
            Source::Npm => dir.join("node_modules").join(".bin"),
            Source::Pypi => dir.join("bin"),
        });
        let spec = match side.source {
            Source::Npm => format!("{}@{v}", side.name),
            Source::Pypi => format!("{}{}@{v}", crate::corpus::profile::PYPI_PREFIX, side.name),
        };
        installed
            .packages
            .push((side.alias.clone(), SideInstalled { spec, dir, bin_dir }));
    }
    if !recipe.package.is_empty() {
        let dir = ensure_package(&PackageJob {
            source: recipe.source,
            name: &recipe.package,
            version,
            path_prefix,
            python: needs.python.as_deref(),
            overrides: &overrides,
            timeout: Some(profile.install.timeout()),
            extras: &extras,
        })?;
        for side in recipe.packages.iter().filter(|side| side.into_main()) {
            let spec = format!(
                "{}{}@{}",
                crate::corpus::profile::PYPI_PREFIX,
                side.name,
                side.version
            );
            let bin_dir = side.on_path.then(|| dir.join("bin"));
            let side_dir = dir.clone();
            installed.packages.push((
                side.alias.clone(),
                SideInstalled {
                    spec,
                    dir: side_dir,
                    bin_dir,
                },
            ));
        }
        if recipe.source == Source::Pypi {
            installed.python = python::venv_python(&dir);
            installed.overrides = overrides;
        }
        installed.main = Some(dir);
    }
    if installed.main.is_some() || !installed.packages.is_empty() {
        check_program(recipe, version, &installed)?;
    }
    Ok(installed)
}

/// A recipe whose program (or an argument naming a file) lives in one of
/// its packages must find it there.
fn check_program(
    recipe: &Recipe,
    version: &semver::Version,
    installed: &Installed,
) -> anyhow::Result<()> {
    let main = installed.main.clone().unwrap_or_default();
    let vars = Vars {
        package_dir: main.display().to_string(),
        packages: installed.package_dirs(),
        version: version.to_string(),
        ..Vars::default()
    };
    let names_a_package = |s: &str| s.contains("{package_dir") || s.contains("{install_dir}");
    let mut candidates = vec![vars.fill(&recipe.program, "program")?];
    for arg in recipe.args.iter().filter(|a| names_a_package(a)) {
        candidates.push(vars.fill(arg, "args")?);
    }
    for path in candidates.iter().filter(|p| p.contains('/')) {
        if Path::new(path).exists() {
            continue;
        }
        let script = Path::new(path)
            .strip_prefix(main.join("bin"))
            .ok()
            .and_then(|s| s.to_str());
        match (recipe.source, script) {
            (Source::Pypi, Some(script)) if !main.as_os_str().is_empty() => {
                let shipped = match install_source::console_scripts(&main, &recipe.package) {
                    Ok(s) if s.is_empty() => "it ships no console scripts".to_string(),
                    Ok(s) => format!("it ships {}", quoted_list(&s)),
                    Err(e) => format!("its console scripts could not be listed: {e:#}"),
                };
                bail!(
                    "{}=={version} is installed in {} but has no console script `{script}` ({shipped}); check the recipe's program",
                    recipe.package,
                    main.display()
                );
            }
            _ => bail!(
                "{}@{version} is installed in {} but {path} is missing (does the package ship this platform?)",
                recipe.package,
                main.display()
            ),
        }
    }
    Ok(())
}

/// `a`, `b` and `c` as people write lists.
fn quoted_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("`{s}`")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packages::package_cache::*;

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

    #[test]
    fn the_header_names_runtimes_side_packages_and_overrides_and_path_puts_them_first() {
        let installed = Installed {
            main: Some(PathBuf::from("/c/main")),
            packages: vec![(
                "agent".into(),
                SideInstalled {
                    spec: "@x/agent@0.5.1".into(),
                    dir: PathBuf::from("/c/agent"),
                    bin_dir: Some(PathBuf::from("/c/agent/node_modules/.bin")),
                },
            )],
            node: Some(runtime::Node {
                version: semver::Version::new(22, 19, 0),
                bin_dir: PathBuf::from("/c/node/bin"),
                dir: PathBuf::from("/c/node"),
            }),
            python: Some(semver::Version::new(3, 12, 1)),
            overrides: vec!["foo==1.0.post1".into()],
        };
        assert_eq!(
            serde_json::Value::Object(installed.header_fields()),
            serde_json::json!({
                "runtime": {"node": "22.19.0", "python": "3.12.1"},
                "packages": {"agent": "@x/agent@0.5.1"},
                "overrides": ["foo==1.0.post1"],
            })
        );
        assert_eq!(
            installed.path_with_prefix("/usr/bin").as_deref(),
            Some("/c/node/bin:/c/agent/node_modules/.bin:/usr/bin")
        );
        assert!(Installed::default().header_fields().is_empty());
        assert_eq!(Installed::default().path_with_prefix("/usr/bin"), None);
    }
}
