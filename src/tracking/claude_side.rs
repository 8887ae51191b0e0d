//! Following the Claude side as it releases (`acp-harness update
//! --claude-side`): each Agent SDK version newer than the pinned one is
//! installed into the install cache, its stream-json surface extracted and
//! diffed against the vendored one, and judged like an agent version:
//! `unchanged` when the surface is the same, `changed` when it differs (a
//! subtype or message type no matrix row covers is named as such), with
//! the next steps a person takes before pinning it. Claude Code itself is
//! followed through its profile; its newer versions get the reference's
//! next steps.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use semver::Version;

use super::update::plan::{self, Pick};
use super::update::verdict::Kind;
use super::update::workflow::{Options, pick};
use crate::corpus::claude_side::{Package, SurfaceSource};
use crate::corpus::profile::Source;
use crate::judging::sdk_surface::matrix::Matrix;
use crate::judging::sdk_surface::{Surface, diff, find_package_root};

/// One SDK version's result.
#[derive(Debug, Clone)]
pub struct SdkSummary {
    pub sdk: String,
    pub title: String,
    pub version: Version,
    /// The pinned version whose vendored surface it was compared with.
    pub pinned: Version,
    pub kind: Kind,
    /// What changed, one line each; the unrunnable reason when unrunnable.
    pub findings: Vec<String>,
    pub next_steps: Vec<String>,
}

impl SdkSummary {
    /// The summary for the terminal (and the nightly's pull request body).
    pub fn render(&self) -> String {
        let label = match self.kind {
            Kind::Unchanged => "surface unchanged (pin it after the SDK end-to-end suite passes)",
            Kind::Changed => "surface changed (review)",
            Kind::Broken => "broken",
            Kind::Unrunnable => "unrunnable",
        };
        let mut out = format!(
            "{} ({}) {}: {label}\n  compared with the vendored surface of {}\n",
            self.sdk, self.title, self.version, self.pinned
        );
        for f in &self.findings {
            let _ = writeln!(out, "  changed    {f}");
        }
        for (i, s) in self.next_steps.iter().enumerate() {
            let _ = writeln!(out, "  next {}. {s}", i + 1);
        }
        out
    }
}

/// Judges `new` against the vendored surface `old` with the matrix: every
/// difference is a finding, and a new entry no matrix row covers says so.
pub fn judge_surface(
    package: &Package,
    old: &Surface,
    new: &Surface,
    matrix: &Matrix,
) -> (Kind, Vec<String>) {
    let d = diff(old, new);
    let mut findings = Vec::new();
    for s in &d.added_subtypes {
        findings.push(match matrix.control(s) {
            None => format!("control subtype `{s}` is new, and no matrix row covers it"),
            Some(r) => format!(
                "control subtype `{s}` is new in {} (the matrix row says {:?})",
                package.id, r.bridge
            ),
        });
    }
    for s in &d.removed_subtypes {
        findings.push(format!("control subtype `{s}` is gone"));
    }
    for m in &d.added_messages {
        findings.push(match matrix.message(m) {
            None => format!("message type `{m}` is new, and no matrix row covers it"),
            Some(r) => format!(
                "message type `{m}` is new in {} (the matrix row says {:?})",
                package.id, r.bridge
            ),
        });
    }
    for m in &d.removed_messages {
        findings.push(format!("message type `{m}` is gone"));
    }
    let kind = if d.is_empty() {
        Kind::Unchanged
    } else {
        Kind::Changed
    };
    (kind, findings)
}

/// The steps before `version` of `package` is pinned.
pub fn next_steps(package: &Package, version: &Version, kind: Kind) -> Vec<String> {
    let mut steps = Vec::new();
    if kind == Kind::Changed {
        steps.push(
            "add or update the rows in contracts/sdk-surface/matrix.toml (and the bridge where a subtype has an ACP counterpart)"
                .to_string(),
        );
    }
    let suite = if package
        .package
        .starts_with(crate::corpus::profile::PYPI_PREFIX)
    {
        "python3 tests/sdk_e2e.py"
    } else {
        "python3 tests/sdk_e2e.py --ts"
    };
    steps.push(format!(
        "run the SDK end-to-end suite with {version} installed: {suite}"
    ));
    steps.push(format!(
        "pin {version} in contracts/claude-side.toml and .ci/run, then `acp-harness contract surface --extract {}`",
        package.id
    ));
    steps
}

/// Installs `version` of `package` into the install cache (npm, or a
/// virtualenv for PyPI) and returns the directory holding its surface files.
pub fn installed_package_dir(
    package: &Package,
    source: &SurfaceSource,
    version: &Version,
) -> anyhow::Result<PathBuf> {
    let (registry, name) = crate::packages::install_source::split_key(&package.package);
    let job = crate::packages::package_cache::PackageJob {
        source: registry,
        name,
        version,
        path_prefix: Vec::new(),
        python: None,
        overrides: &[],
        timeout: None,
        extras: &[],
    };
    let install = crate::packages::package_cache::ensure_package(&job)?;
    let first = source.files.first().context("the surface names no files")?;
    let start = match registry {
        Source::Npm => install.join("node_modules").join(name),
        Source::Pypi => install.clone(),
    };
    let start = if start.is_dir() {
        start
    } else {
        install.clone()
    };
    find_package_root(&start, first).with_context(|| {
        format!(
            "{} {version}: no {first} under {}",
            package.id,
            install.display()
        )
    })
}

/// Judges one published SDK version: install, extract, compare.
pub fn judge_version(
    root: &Path,
    package: &Package,
    source: &SurfaceSource,
    matrix: &Matrix,
    version: &Version,
) -> SdkSummary {
    let outcome = (|| -> anyhow::Result<(Kind, Vec<String>)> {
        let old = Surface::load(&root.join(&source.vendored))?;
        let dir = installed_package_dir(package, source, version)?;
        let new = Surface::extract(package, source, version, &dir)?;
        Ok(judge_surface(package, &old, &new, matrix))
    })();
    let (kind, findings) = match outcome {
        Ok(k) => k,
        Err(e) => (Kind::Unrunnable, vec![format!("{e:#}")]),
    };
    SdkSummary {
        sdk: package.id.clone(),
        title: package.title.clone(),
        version: version.clone(),
        pinned: package.pinned.clone(),
        kind,
        next_steps: if kind == Kind::Unrunnable {
            Vec::new()
        } else {
            next_steps(package, version, kind)
        },
        findings,
    }
}

/// What following the Claude side found: the lines to print, and whether a
/// registry could not be asked.
#[derive(Debug, Default)]
pub struct ClaudeSideReport {
    pub lines: Vec<String>,
    pub registry_failed: bool,
}

/// `update --claude-side`: every SDK version to judge (newer than the pin,
/// or those asked) judged by its surface, and the newer Claude Code
/// versions named with the reference's next steps. Exit 2 when a registry
/// could not be asked, else 0 (a changed surface is for review, as an
/// agent's changed output is).
pub fn follow(opts: &Options) -> anyhow::Result<ClaudeSideReport> {
    use crate::corpus::claude_side::{Catalogue, Role};
    let catalogue = Catalogue::load(&opts.root)?;
    let matrix = crate::judging::sdk_surface::matrix::Matrix::load(&opts.root)?;
    for asked in &opts.agent {
        if catalogue.get(asked).is_none() {
            bail!(
                "{asked}: not in {} (with --claude-side, --agent names its packages)",
                crate::corpus::claude_side::CATALOGUE_PATH
            );
        }
    }
    let pick = pick(opts);
    let mut report = ClaudeSideReport::default();
    for p in &catalogue.packages {
        if !opts.agent.is_empty() && !opts.agent.contains(&p.id) {
            continue;
        }
        let published = if matches!(pick, Pick::Versions(_)) {
            Vec::new()
        } else {
            match crate::packages::versions::versions_saved(&p.package) {
                Ok(list) => list
                    .into_iter()
                    .filter(|v| opts.pre || v.pre.is_empty())
                    .collect(),
                Err(e) => {
                    report.lines.push(format!(
                        "{} ({}): published versions unknown: {e:#}",
                        p.id, p.title
                    ));
                    report.registry_failed = true;
                    continue;
                }
            }
        };
        let versions: Vec<Version> =
            plan::versions_to_update(&pick, &published, std::slice::from_ref(&p.pinned))
                .into_iter()
                .filter(|v| matches!(pick, Pick::Versions(_)) || *v > p.pinned)
                .collect();
        eprintln!(
            "[update] {}: {} version(s) newer than the pinned {}",
            p.id,
            versions.len(),
            p.pinned
        );
        for v in &versions {
            report.lines.push(match (&p.role, &p.surface) {
                (Role::Sdk, Some(source)) => {
                    judge_version(&opts.root, p, source, &matrix, v).render()
                }
                _ => format!(
                    "{} ({}) {v}: newer than the pinned reference {}\n  next 1. record it as the reference: acp-harness record --agent {}@{v} --all\n  next 2. re-derive the contract: acp-harness contract derive, and review its diff\n  next 3. pin {v} in {} and the profile's default_version\n",
                    p.id,
                    p.title,
                    p.pinned,
                    p.profile.as_deref().unwrap_or(&p.id),
                    crate::corpus::claude_side::CATALOGUE_PATH
                ),
            });
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::claude_side::Catalogue;

    fn surface(subtypes: &str, messages: &str) -> Surface {
        Surface {
            sdk: "typescript-agent-sdk".into(),
            package: "@anthropic-ai/claude-agent-sdk".into(),
            version: "0.3.336".into(),
            files: Vec::new(),
            refresh: String::new(),
            control_subtypes: subtypes.split_whitespace().map(str::to_string).collect(),
            message_types: messages.split_whitespace().map(str::to_string).collect(),
            ..Surface::default()
        }
    }

    /// The committed catalogue and matrix, the fixture surfaces: old, new,
    /// then the kind and the findings' words.
    #[test]
    fn a_new_subtype_no_row_covers_is_a_changed_finding_and_the_same_surface_is_unchanged() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let cat = Catalogue::load(root).unwrap();
        let matrix = Matrix::load(root).unwrap();
        let ts = cat.get("typescript-agent-sdk").unwrap();
        let cases = [
            (
                ("interrupt set_model", "result"),
                ("interrupt set_model", "result"),
                Kind::Unchanged,
                vec![],
            ),
            (
                ("interrupt", "result"),
                ("interrupt teleport_session", "result"),
                Kind::Changed,
                vec!["control subtype `teleport_session` is new, and no matrix row covers it"],
            ),
            (
                ("interrupt", "result"),
                ("interrupt mcp_status", "result system:init"),
                Kind::Changed,
                vec![
                    "control subtype `mcp_status` is new in typescript-agent-sdk (the matrix row says",
                    "message type `system:init` is new in typescript-agent-sdk",
                ],
            ),
            (
                ("interrupt set_model", "result keep_alive"),
                ("interrupt", "result"),
                Kind::Changed,
                vec![
                    "control subtype `set_model` is gone",
                    "message type `keep_alive` is gone",
                ],
            ),
        ];
        for ((os, om), (ns, nm), kind, words) in cases {
            let (k, findings) = judge_surface(ts, &surface(os, om), &surface(ns, nm), &matrix);
            assert_eq!(k, kind, "{ns} / {nm}: {findings:?}");
            assert_eq!(findings.len(), words.len(), "{findings:?}");
            for (f, w) in findings.iter().zip(words) {
                assert!(f.starts_with(w), "{f:?} does not start with {w:?}");
            }
        }
    }

    #[test]
    fn the_report_names_the_suite_and_the_pin_as_next_steps() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let cat = Catalogue::load(root).unwrap();
        let py = cat.get("python-agent-sdk").unwrap();
        let v = Version::new(0, 2, 190);
        let s = SdkSummary {
            sdk: py.id.clone(),
            title: py.title.clone(),
            version: v.clone(),
            pinned: py.pinned.clone(),
            kind: Kind::Changed,
            findings: vec!["control subtype `x` is new, and no matrix row covers it".into()],
            next_steps: next_steps(py, &v, Kind::Changed),
        };
        let text = s.render();
        assert!(
            text.starts_with(
                "python-agent-sdk (Python Agent SDK) 0.2.190: surface changed (review)\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("  changed    control subtype `x` is new"),
            "{text}"
        );
        assert!(text.contains("next 2. run the SDK end-to-end suite with 0.2.190 installed: python3 tests/sdk_e2e.py\n"), "{text}");
        assert!(
            text.contains("contract surface --extract python-agent-sdk"),
            "{text}"
        );
    }
}
