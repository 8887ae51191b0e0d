//! What is recorded against what is published: per agent profile, the
//! newest version the corpus has recordings of and the versions published
//! on npm after it (semver order; pre-releases only when asked), plus the
//! published versions older than it that were never recorded. Offline, the
//! install cache answers (the last saved registry answers and the installed
//! versions) instead of npm. A recipe's package rename is followed and
//! named; with an ACP registry index, what the registry says of each agent
//! (a newer version, another package or arguments) joins the row.
//! `acp-harness outdated` prints it; `update` picks its versions from it.

use std::path::Path;

use anyhow::Context as _;
use semver::Version;
use serde::Serialize;

use crate::corpus::profile::{Profile, Protocol};

/// One agent's line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    pub agent: String,
    /// `acp`, `stream-json` (the reference, whose recordings feed the
    /// contract) or `sdk` (an Agent SDK of the Claude side).
    pub protocol: &'static str,
    pub packages: Vec<String>,
    /// For an SDK, the pinned version.
    #[serde(serialize_with = "opt_version")]
    pub newest_recorded: Option<Version>,
    /// Published after the newest recorded version (every published one when none is).
    #[serde(serialize_with = "versions")]
    pub newer: Vec<Version>,
    /// Published before the newest recorded version, never recorded.
    #[serde(serialize_with = "versions")]
    pub unrecorded_older: Vec<Version>,
    /// Where the published versions come from: the registries of the
    /// profile's packages (`npm`, `PyPI`), or `install cache` offline.
    pub source: &'static str,
    /// Why the published versions are unknown (the row then lists none).
    pub error: Option<String>,
    /// The renames the profile's recipes declare, one sentence each.
    pub renamed: Vec<String>,
    /// What the ACP registry says of this agent, when one was read and it
    /// lists the agent.
    pub registry: Option<crate::packages::acp_registry::Comparison>,
    /// The package stopped publishing while a package it continues as went
    /// on ([`stalled`]): one sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stalled: Option<String>,
}

/// Marks each row of a Claude-side package that names packages it
/// `continues_as` with [`stalled`]'s sentence, from the versions `fetch`
/// gives (a package the registry cannot answer for claims nothing).
pub fn mark_stalled(
    rows: &mut [Row],
    catalogue: &crate::corpus::claude_side::Catalogue,
    mut fetch: impl FnMut(&str) -> anyhow::Result<Vec<Version>>,
) {
    for p in catalogue
        .packages
        .iter()
        .filter(|p| !p.continues_as.is_empty())
    {
        let row_id = p.profile.as_deref().unwrap_or(&p.id);
        let Some(row) = rows.iter_mut().find(|r| r.agent == row_id) else {
            continue;
        };
        let Ok(own) = fetch(&p.package) else { continue };
        let siblings: Vec<(String, Vec<Version>)> = p
            .continues_as
            .iter()
            .filter_map(|s| Some((s.clone(), fetch(s).ok()?)))
            .collect();
        row.stalled = stalled(&p.package, &own, &siblings);
    }
}

/// Whether `package` (whose published versions are `own`) has stalled: a
/// package it continues as (`siblings`, each with its published versions)
/// has a version past the newest `package` ever published. The sentence
/// names both, e.g. "stalled: @anthropic-ai/claude-code stops at 2.1.332;
/// the product continues as @anthropic-ai/claude-code-linux-x64 2.1.337".
pub fn stalled(
    package: &str,
    own: &[Version],
    siblings: &[(String, Vec<Version>)],
) -> Option<String> {
    let released = |v: &&Version| v.pre.is_empty();
    let last = own.iter().filter(released).max()?;
    let (sibling, ahead) = siblings
        .iter()
        .filter_map(|(name, list)| Some((name, list.iter().filter(released).max()?)))
        .filter(|(_, v)| *v > last)
        .max_by(|a, b| a.1.cmp(b.1))?;
    Some(format!(
        "stalled: {package} stops at {last}; the product continues as {sibling} {ahead}"
    ))
}

fn opt_version<S: serde::Serializer>(v: &Option<Version>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.serialize_str(&v.to_string()),
        None => s.serialize_none(),
    }
}

fn versions<S: serde::Serializer>(v: &[Version], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(v.iter().map(Version::to_string))
}

/// Compares what is recorded with what is published. Pre-releases count
/// only with `pre`; a recorded pre-release still counts as recorded.
pub fn compare(
    recorded: &[Version],
    published: &[Version],
    pre: bool,
) -> (Option<Version>, Vec<Version>, Vec<Version>) {
    let newest = recorded.iter().max().cloned();
    let mut newer = Vec::new();
    let mut older = Vec::new();
    let mut listed: Vec<&Version> = published
        .iter()
        .filter(|v| pre || v.pre.is_empty())
        .filter(|v| !recorded.contains(v))
        .collect();
    listed.sort();
    listed.dedup();
    for v in listed {
        match &newest {
            Some(n) if v < n => older.push(v.clone()),
            _ => newer.push(v.clone()),
        }
    }
    (newest, newer, older)
}

/// The versions of `agent` with at least one recording under `recordings`,
/// ascending. A directory of another protocol revision of a version
/// (`2.6.0+acp2`) is that version's, not a published version of its own.
pub fn recorded_versions(recordings: &Path, agent: &str) -> Vec<Version> {
    let dir = recordings.join(agent);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<Version> = entries
        .filter_map(|e| e.ok())
        .filter(|e| has_recording(&e.path()))
        .filter_map(|e| Version::parse(e.file_name().to_str()?).ok())
        .filter(|v| v.build.is_empty())
        .collect();
    out.sort();
    out
}

fn has_recording(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .filter_map(|e| e.ok())
            .any(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
    })
}

/// The agents under `root/profiles/` (file stems, sorted), or `asked` when given.
pub fn agents(root: &Path, asked: &[String]) -> anyhow::Result<Vec<String>> {
    if !asked.is_empty() {
        return Ok(asked.to_vec());
    }
    let dir = root.join(crate::corpus::profile::PROFILES_DIR);
    let mut out: Vec<String> = std::fs::read_dir(&dir)
        .with_context(|| format!("{}: cannot list the agent profiles", dir.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "toml"))
        .filter_map(|e| Some(e.path().file_stem()?.to_str()?.to_string()))
        .collect();
    out.sort();
    Ok(out)
}

/// The published versions of a profile's packages, from their registries
/// (PyPI asked by the Python its `[runtime] python` range picks) or offline.
pub fn published(profile: &Profile, offline: bool) -> anyhow::Result<Vec<Version>> {
    use crate::packages::versions::{python_for, versions_saved_with};
    if offline {
        crate::packages::versions::profile_versions(
            profile,
            crate::packages::versions::offline_versions,
        )
    } else {
        crate::packages::versions::profile_versions(profile, |p| {
            versions_saved_with(p, python_for(profile, p).as_deref())
        })
    }
}

/// The renames a profile's recipes declare, for people: which package
/// moved where and from which version, and whether a recipe installs the
/// new name yet.
pub fn renames(profile: &Profile) -> Vec<String> {
    profile
        .recipes
        .iter()
        .filter_map(|r| {
            let (to, from) = r.renamed_key()?;
            let installed = profile.recipes.iter().any(|o| o.package_key() == to);
            Some(format!(
                "{} -> {to} from {from}{}",
                r.package_key(),
                if installed {
                    ""
                } else {
                    " (no recipe installs it yet)"
                }
            ))
        })
        .collect()
}

/// One row per agent; a profile that cannot be read is an error, a registry
/// that does not answer is the row's `error`. With `index`, each row also
/// says what that ACP registry says of the agent.
pub fn rows(
    root: &Path,
    agents: &[String],
    pre: bool,
    offline: bool,
    index: Option<&crate::packages::acp_registry::Index>,
) -> anyhow::Result<Vec<Row>> {
    let mut out = Vec::new();
    for agent in agents {
        let profile = Profile::find(root, agent)?;
        let recorded = recorded_versions(&root.join("recordings"), agent);
        let registry = index.and_then(|index| {
            let entry = crate::packages::acp_registry::entry_of(index, &profile)?;
            Some(crate::packages::acp_registry::compare(
                &profile,
                entry,
                recorded.last(),
            ))
        });
        let (list, error) = match published(&profile, offline) {
            Ok(list) => (list, None),
            Err(e) => (Vec::new(), Some(format!("{e:#}"))),
        };
        let (newest_recorded, newer, unrecorded_older) = compare(&recorded, &list, pre);
        let packages = crate::packages::versions::profile_packages(&profile);
        let source = if offline {
            "install cache"
        } else {
            crate::packages::versions::registries(&packages)
        };
        out.push(Row {
            agent: agent.clone(),
            protocol: match profile.protocol {
                Protocol::StreamJson => "stream-json",
                _ => "acp",
            },
            packages,
            newest_recorded,
            newer: if error.is_some() { Vec::new() } else { newer },
            unrecorded_older: if error.is_some() {
                Vec::new()
            } else {
                unrecorded_older
            },
            source,
            error,
            renamed: renames(&profile),
            registry,
            stalled: None,
        });
    }
    Ok(out)
}

/// One row per Agent SDK of the Claude-side catalogue: the versions
/// published (from `fetch`, given the package key) after the pinned one.
pub fn sdk_rows(
    catalogue: &crate::corpus::claude_side::Catalogue,
    asked: &[String],
    pre: bool,
    offline: bool,
    mut fetch: impl FnMut(&str) -> anyhow::Result<Vec<Version>>,
) -> Vec<Row> {
    catalogue
        .sdks()
        .filter(|(p, _)| asked.is_empty() || asked.contains(&p.id))
        .map(|(p, _)| {
            let (list, error) = match fetch(&p.package) {
                Ok(list) => (list, None),
                Err(e) => (Vec::new(), Some(format!("{e:#}"))),
            };
            // older versions are no news for a pinned SDK
            let (newest, newer, _) = compare(std::slice::from_ref(&p.pinned), &list, pre);
            let packages = vec![p.package.clone()];
            let source = if offline {
                "install cache"
            } else {
                crate::packages::versions::registries(&packages)
            };
            Row {
                agent: p.id.clone(),
                protocol: "sdk",
                packages,
                newest_recorded: newest,
                newer: if error.is_some() { Vec::new() } else { newer },
                unrecorded_older: Vec::new(),
                source,
                error,
                renamed: Vec::new(),
                registry: None,
                stalled: None,
            }
        })
        .collect()
}

/// Versions from a space-separated list, for tests.
#[cfg(test)]
pub(crate) fn vs(list: &str) -> Vec<Version> {
    list.split_whitespace()
        .map(|v| Version::parse(v).unwrap())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A package that published nothing past a version its sibling passed
    /// has stalled; a sibling behind or level, or only a pre-release ahead,
    /// is no stall.
    #[test]
    fn a_package_stalls_when_a_package_it_continues_as_moves_past_it() {
        let own = vs("2.1.330 2.1.331 2.1.332");
        let ahead = [("native".to_string(), vs("2.1.331 2.1.337"))];
        assert_eq!(
            stalled("cc", &own, &ahead).as_deref(),
            Some("stalled: cc stops at 2.1.332; the product continues as native 2.1.337")
        );
        let level = [("native".to_string(), vs("2.1.332"))];
        assert_eq!(stalled("cc", &own, &level), None);
        let pre = [("native".to_string(), vs("2.1.333-beta.1"))];
        assert_eq!(stalled("cc", &own, &pre), None);
        assert_eq!(stalled("cc", &[], &ahead), None);
    }

    fn show(v: &[Version]) -> String {
        v.iter()
            .map(Version::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Rows: recorded, published (as npm lists them, unordered), pre, then
    /// newest recorded, newer, older-not-recorded.
    /// The committed catalogue with saved registry answers: each SDK's
    /// newer versions past its pin; a registry that fails is that row's error.
    #[test]
    fn sdk_rows_list_versions_newer_than_the_pin_from_saved_answers() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let cat = crate::corpus::claude_side::Catalogue::load(root).unwrap();
        let answers = |key: &str| -> anyhow::Result<Vec<Version>> {
            match key {
                "@anthropic-ai/claude-agent-sdk" => Ok(crate::packages::versions::parse_versions(
                    r#"["0.3.332","0.3.336","0.3.337","0.3.338-beta.1","0.3.340"]"#,
                )
                .unwrap()),
                _ => anyhow::bail!("pip index versions failed"),
            }
        };
        let rows = sdk_rows(&cat, &[], false, true, answers);
        let ts = rows
            .iter()
            .find(|r| r.agent == "typescript-agent-sdk")
            .unwrap();
        assert_eq!(ts.protocol, "sdk");
        assert_eq!(show(ts.newest_recorded.as_slice()), "0.3.337");
        assert_eq!(show(&ts.newer), "0.3.340");
        assert!(ts.unrecorded_older.is_empty());
        assert_eq!(ts.source, "install cache");
        let py = rows.iter().find(|r| r.agent == "python-agent-sdk").unwrap();
        assert_eq!(py.error.as_deref(), Some("pip index versions failed"));
        assert!(py.newer.is_empty());
        let only = sdk_rows(&cat, &["python-agent-sdk".into()], false, true, answers);
        assert_eq!(only.len(), 1);
    }

    #[test]
    fn newer_and_unrecorded_versions_come_in_semver_order_with_pre_releases_on_request() {
        let cases = [
            (
                "0.9.2 0.10.0",
                "0.10.0 0.9.2 0.11.1 0.10.1",
                false,
                "0.10.0",
                "0.10.1 0.11.1",
                "",
            ),
            (
                "0.10.0",
                "0.2.0 0.10.0 0.9.0",
                false,
                "0.10.0",
                "",
                "0.2.0 0.9.0",
            ),
            (
                "0.58.0 0.61.0",
                "0.60.0-nightly.20260908.g85aca163f 0.60.0 0.61.0 0.62.0-nightly.1 0.59.0",
                false,
                "0.61.0",
                "",
                "0.59.0 0.60.0",
            ),
            (
                "0.61.0",
                "0.61.0 0.62.0-nightly.1 0.62.0",
                true,
                "0.61.0",
                "0.62.0-nightly.1 0.62.0",
                "",
            ),
            ("", "1.0.5 1.0.41", false, "-", "1.0.5 1.0.41", ""),
            ("2.6.0", "", false, "2.6.0", "", ""),
        ];
        for (recorded, published, pre, newest, newer, older) in cases {
            let (n, nw, old) = compare(&vs(recorded), &vs(published), pre);
            assert_eq!(
                n.map_or("-".into(), |v| v.to_string()),
                newest,
                "{recorded} / {published}"
            );
            assert_eq!(show(&nw), newer, "newer: {recorded} / {published}");
            assert_eq!(show(&old), older, "older: {recorded} / {published}");
        }
    }
}
