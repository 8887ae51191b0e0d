//! The runtimes an agent needs besides its packages, as a profile names them
//! (`[runtime]`, a recipe's own `runtime` winning per key): Node from the
//! npm registry (the package `node-<os>-<arch>` carries the binary),
//! installed into the install cache like a package and pinned: the version a
//! requirement resolves to is written beside the cache and reused, so later
//! runs (and the recorder inside its network namespace) ask no registry; and
//! Python found on this machine, which makes the virtualenvs of PyPI recipes.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::packages::package_cache;
use crate::packages::python::probe;

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
/// (then pinned), each install step bounded by `timeout`. Fails before
/// installing anything when none matches.
pub fn ensure_node(req_text: &str, timeout: std::time::Duration) -> anyhow::Result<Node> {
    let req = crate::corpus::profile::requirements::parse_req(req_text)
        .with_context(|| format!("[runtime] node = {req_text:?} is not a semver range"))?;
    let package = node_package()?;
    let agents = package_cache::cache_root()?;
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
    let job = package_cache::PackageJob {
        timeout: Some(timeout),
        ..package_cache::PackageJob::npm(&package, &version)
    };
    let dir = package_cache::ensure_package(&job)?;
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

#[cfg(test)]
mod tests;
