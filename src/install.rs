//! Agent install cache: `npm install` of `package@version` into a per-user
//! cache outside the repository (`$XDG_CACHE_HOME/acp-harness/agents/`, else
//! `~/.cache/acp-harness/agents/`), versions side by side, reused across runs
//! and CI. An install goes into a temporary sibling directory that is renamed
//! into place only when npm succeeded, so a half-finished install is never
//! mistaken for a good one.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::profile::{AgentSpec, Profile, Recipe, Vars};

/// How long one `npm install` may take.
const NPM_TIMEOUT: Duration = Duration::from_secs(900);

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

/// Where `package@version` lives in the cache (scoped packages nest, as in npm).
pub fn package_dir(package: &str, version: &semver::Version) -> anyhow::Result<PathBuf> {
    Ok(cache_root()?.join(format!("{package}@{version}")))
}

/// The versions of `package` the cache holds finished installs of (no
/// network: what `outdated --offline` knows besides the saved registry answers).
pub fn installed_versions(package: &str) -> anyhow::Result<Vec<semver::Version>> {
    Ok(installed_versions_in(&cache_root()?, package))
}

/// [`installed_versions`] under the cache root `root`.
pub fn installed_versions_in(root: &Path, package: &str) -> Vec<semver::Version> {
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
            "the recipe for versions {} names no npm package; there is nothing to install",
            recipe.versions
        );
    }
    let dir = package_dir(&recipe.package, version)?;
    let spec = format!("{}@{version}", recipe.package);
    if dir.join(COMPLETE_MARKER).is_file() {
        eprintln!("[install] {spec}: cached in {}", dir.display());
        check_program(recipe, version, &dir)?;
        return Ok(dir);
    }
    let parent = dir.parent().context("cache dir has no parent")?;
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let tmp = parent.join(format!(
        ".tmp-{}-{}",
        dir.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).with_context(|| format!("clearing {}", tmp.display()))?;
    }
    std::fs::create_dir_all(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    eprintln!("[install] {spec}: npm install into {} ...", dir.display());
    let started = Instant::now();
    let result = npm_install(&spec, &tmp);
    if let Err(err) = result {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(err);
    }
    std::fs::write(tmp.join(COMPLETE_MARKER), format!("{spec}\n"))
        .with_context(|| format!("marking {}", tmp.display()))?;
    if dir.exists() {
        // Someone else finished first (or a broken leftover without marker).
        if dir.join(COMPLETE_MARKER).is_file() {
            let _ = std::fs::remove_dir_all(&tmp);
            return Ok(dir);
        }
        std::fs::remove_dir_all(&dir)
            .with_context(|| format!("removing broken {}", dir.display()))?;
    }
    std::fs::rename(&tmp, &dir)
        .with_context(|| format!("moving {} to {}", tmp.display(), dir.display()))?;
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
        if arg.contains("{package_dir}") {
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

fn npm_install(spec: &str, prefix: &Path) -> anyhow::Result<()> {
    let mut child = Command::new("npm")
        .arg("install")
        .arg("--prefix")
        .arg(prefix)
        .args(["--no-audit", "--no-fund", "--no-save", "--loglevel=http"])
        .arg(spec)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting npm (is Node.js installed?)")?;
    // Relay npm's output as progress, prefixed, from both pipes.
    let relay = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        pipe.map(|p| {
            std::thread::spawn(move || {
                for line in BufReader::new(p).lines().map_while(Result::ok) {
                    eprintln!("[npm] {line}");
                }
            })
        })
    };
    let out = relay(child.stdout.take().map(|p| Box::new(p) as _));
    let err = relay(child.stderr.take().map(|p| Box::new(p) as _));
    let deadline = Instant::now() + NPM_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "npm install {spec} took longer than {} s; stopped it",
                NPM_TIMEOUT.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    for t in [out, err].into_iter().flatten() {
        let _ = t.join();
    }
    if !status.success() {
        bail!("npm install {spec} failed ({status})");
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
}
