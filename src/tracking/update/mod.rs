//! Bringing the corpus up to date with what npm publishes (`acp-harness
//! update`): which (agent, version, scenario) recordings are missing and
//! how they split into shards ([`plan`]), recording them in parallel child
//! runs ([`jobs`]), and judging what was recorded against the nearest
//! recorded version with a summary, a drift report and the unrunnable rows
//! ([`verdict`]); the whole of it, in order ([`workflow`]).

pub mod jobs;
pub mod plan;
pub mod verdict;
pub mod workflow;

use std::collections::BTreeMap;

use anyhow::Context as _;
use semver::Version;

/// One unrunnable (agent, version, scenario) as a shard saves it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UnrunnableRow {
    pub agent: String,
    #[serde(with = "version_text")]
    pub version: Version,
    pub scenario: String,
    pub why: String,
}

mod version_text {
    use semver::Version;

    pub fn serialize<S: serde::Serializer>(v: &Version, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.to_string())
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Version, D::Error> {
        let text: String = serde::Deserialize::deserialize(d)?;
        Version::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Writes a shard's unrunnable rows as JSON lines (an empty file when none).
pub fn save_unrunnable(
    path: &std::path::Path,
    rows: &BTreeMap<String, Vec<(Version, String, String)>>,
) -> anyhow::Result<()> {
    let mut text = String::new();
    for (agent, rows) in rows {
        for (version, scenario, why) in rows {
            let row = UnrunnableRow {
                agent: agent.clone(),
                version: version.clone(),
                scenario: scenario.clone(),
                why: why.clone(),
            };
            text.push_str(&serde_json::to_string(&row)?);
            text.push('\n');
        }
    }
    atomic_file::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// Reads a shard's saved rows; a bad line is an error naming file and line.
pub fn read_unrunnable(path: &std::path::Path) -> anyhow::Result<Vec<UnrunnableRow>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .with_context(|| format!("{}:{}: not an unrunnable row", path.display(), i + 1))
        })
        .collect()
}
