//! The same session under either ACP revision: for a scenario recorded under
//! v1 (`<agent>/<version>/`) and v2 (`<agent>/<version>+acp2/`) of one agent
//! version, the panel output of the v2 replay equals the v1 replay's after
//! normalisation, except where `contracts/revisions.toml` says why not.
//!
//! Each replay's panel lines are labelled (ids, uuids) on their own, paired
//! by kind in order, and compared field by field: a difference is a JSON
//! pointer in a line of some kind (`result /duration_ms`), or a line of a
//! kind on one side only (`+system/informational`, `-control_request`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::corpus::recording::{self, REVISION_2_BUILD};
use crate::corpus::scenario;
use crate::judging::replay::divergence::{VarEquivalence, diff_frames};
use crate::judging::replay::normalise::Labeller;
use crate::judging::replay::replayer::replay;

/// The table's file under the repository root.
pub const TABLE: &str = "contracts/revisions.toml";

/// One justified difference: for which recordings, which differences, why.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Justified {
    pub agent: String,
    /// A scenario name, or `*` for every scenario of the agent.
    pub scenario: String,
    /// Differences as [`compare`] names them.
    pub differences: Vec<String>,
    pub why: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    difference: Vec<Justified>,
}

/// Reads the table.
pub fn load(path: &Path) -> anyhow::Result<Vec<Justified>> {
    let text =
        std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let file: File =
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(file.difference)
}

/// A scenario recorded under both revisions of one agent version.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    pub agent: String,
    pub version: String,
    pub scenario: String,
    pub v1: PathBuf,
    pub v2: PathBuf,
}

/// Every pair under `recordings`, in path order.
pub fn pairs(recordings: &Path) -> Vec<Pair> {
    let mut out = Vec::new();
    let Ok(agents) = std::fs::read_dir(recordings) else {
        return out;
    };
    let mut agents: Vec<PathBuf> = agents.filter_map(|e| Some(e.ok()?.path())).collect();
    agents.sort();
    for agent_dir in agents {
        let Ok(versions) = std::fs::read_dir(&agent_dir) else {
            continue;
        };
        let mut versions: Vec<PathBuf> = versions.filter_map(|e| Some(e.ok()?.path())).collect();
        versions.sort();
        for v2_dir in versions {
            let name = v2_dir
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            let Some(version) = name.strip_suffix(&format!("+{REVISION_2_BUILD}")) else {
                continue;
            };
            let v1_dir = agent_dir.join(version);
            let Ok(files) = std::fs::read_dir(&v2_dir) else {
                continue;
            };
            let mut files: Vec<PathBuf> = files.filter_map(|e| Some(e.ok()?.path())).collect();
            files.sort();
            for v2 in files {
                let Some(file) = v2.file_name().and_then(|f| f.to_str()) else {
                    continue;
                };
                let Some(scenario) = file.strip_suffix(".jsonl") else {
                    continue;
                };
                let v1 = v1_dir.join(file);
                if v1.is_file() {
                    out.push(Pair {
                        agent: agent_dir
                            .file_name()
                            .and_then(|n| n.to_str())
                            .unwrap_or_default()
                            .to_string(),
                        version: version.to_string(),
                        scenario: scenario.to_string(),
                        v1,
                        v2,
                    });
                }
            }
        }
    }
    out
}

/// The differences between the panel output of a pair's two replays.
pub fn compare(pair: &Pair, scenarios: &Path) -> anyhow::Result<BTreeSet<String>> {
    let scenario = scenario::find(scenarios, &pair.scenario)?;
    let panel = |path: &Path| -> anyhow::Result<Vec<Value>> {
        let rec = recording::read(path)?;
        let replayed = replay(&rec, &scenario);
        let mut labels = Labeller::new();
        Ok(replayed
            .panel_values
            .into_iter()
            .flatten()
            .map(|mut v| {
                labels.value(&mut v);
                v
            })
            .collect())
    };
    Ok(differences(&panel(&pair.v1)?, &panel(&pair.v2)?))
}

/// A panel line's kind: `type`, `/subtype` or the stream event's type.
fn kind(line: &Value) -> String {
    let t = line["type"].as_str().unwrap_or("?");
    match (line["subtype"].as_str(), line["event"]["type"].as_str()) {
        (Some(sub), _) => format!("{t}/{sub}"),
        (None, Some(event)) => format!("{t}/{event}"),
        _ => t.to_string(),
    }
}

/// Keys that are a line's identity or timing, never the session's
/// behaviour: uuids, message ids, durations.
const NOT_BEHAVIOUR: &[&str] = &["uuid", "id", "duration_ms", "duration_api_ms"];

/// A differing field's pointer as the table names it (array indexes as
/// `*`), or `None` for a field of [`NOT_BEHAVIOUR`].
fn behaviour_pointer(pointer: &str) -> Option<String> {
    let last = pointer.rsplit('/').next().unwrap_or_default();
    if NOT_BEHAVIOUR.contains(&last) {
        return None;
    }
    let segments: Vec<&str> = pointer
        .split('/')
        .map(|s| if s.parse::<usize>().is_ok() { "*" } else { s })
        .collect();
    Some(segments.join("/"))
}

/// The differences of two labelled panel outputs, lines paired by kind.
pub fn differences(v1: &[Value], v2: &[Value]) -> BTreeSet<String> {
    let kinds = |lines: &[Value]| lines.iter().map(kind).collect::<Vec<_>>();
    let (k1, k2) = (kinds(v1), kinds(v2));
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &k1, &k2);
    let mut out = BTreeSet::new();
    let mut eq = VarEquivalence::default();
    for op in ops {
        match op {
            similar::DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => {
                for i in 0..len {
                    let (a, b) = (&v1[old_index + i], &v2[new_index + i]);
                    for d in diff_frames(a, b, &[], &mut eq) {
                        if let Some(pointer) = behaviour_pointer(&d.pointer) {
                            out.insert(format!("{} {pointer}", k1[old_index + i]));
                        }
                    }
                }
            }
            similar::DiffOp::Delete {
                old_index, old_len, ..
            } => {
                for k in &k1[old_index..old_index + old_len] {
                    out.insert(format!("-{k}"));
                }
            }
            similar::DiffOp::Insert {
                new_index, new_len, ..
            } => {
                for k in &k2[new_index..new_index + new_len] {
                    out.insert(format!("+{k}"));
                }
            }
            similar::DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                for k in &k1[old_index..old_index + old_len] {
                    out.insert(format!("-{k}"));
                }
                for k in &k2[new_index..new_index + new_len] {
                    out.insert(format!("+{k}"));
                }
            }
        }
    }
    out
}

/// What the table does not justify, and what it lists that no pair shows.
#[derive(Debug, Default, PartialEq)]
pub struct Verdict {
    /// `<agent>/<version>/<scenario>: <difference>` found and not justified.
    pub unjustified: Vec<String>,
    /// `<agent> <scenario>: <difference>` listed and found in no pair.
    pub stale: Vec<String>,
}

/// Judges the differences of each pair against the table.
pub fn judge(found: &[(Pair, BTreeSet<String>)], table: &[Justified]) -> Verdict {
    let mut verdict = Verdict::default();
    let mut used = BTreeSet::new();
    for (pair, differences) in found {
        for d in differences {
            let covering = table.iter().enumerate().find(|(_, j)| {
                j.agent == pair.agent
                    && (j.scenario == "*" || j.scenario == pair.scenario)
                    && j.differences.iter().any(|x| x == d)
            });
            match covering {
                Some((i, _)) => {
                    used.insert((i, d.clone()));
                }
                None => verdict.unjustified.push(format!(
                    "{}/{}/{}: {d}",
                    pair.agent, pair.version, pair.scenario
                )),
            }
        }
    }
    for (i, j) in table.iter().enumerate() {
        for d in &j.differences {
            if !used.contains(&(i, d.clone())) {
                verdict
                    .stale
                    .push(format!("{} {}: {d}", j.agent, j.scenario));
            }
        }
    }
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn differences_are_fields_of_paired_lines_or_lines_of_one_side() {
        let v1 = vec![
            json!({"type": "system", "subtype": "init", "model": "m[medium]"}),
            json!({"type": "control_request", "request": {"subtype": "can_use_tool"}}),
            json!({"type": "result", "subtype": "success", "duration_ms": 10, "num_turns": 1}),
        ];
        let v2 = vec![
            json!({"type": "system", "subtype": "init", "model": "m"}),
            json!({"type": "system", "subtype": "informational"}),
            json!({"type": "result", "subtype": "success", "duration_ms": 12, "num_turns": 2}),
        ];
        let found: Vec<String> = differences(&v1, &v2).into_iter().collect();
        // identity and timing are no difference; array indexes read as `*`
        let ids = |n: u64| {
            vec![
                json!({"type": "assistant", "uuid": n, "message": {"id": n, "content": [{"text": n}]}}),
            ]
        };
        assert_eq!(
            differences(&ids(1), &ids(2))
                .into_iter()
                .collect::<Vec<_>>(),
            ["assistant /message/content/*/text"]
        );
        assert_eq!(
            found,
            [
                "+system/informational",
                "-control_request",
                "result/success /num_turns",
                "system/init /model",
            ]
        );
        assert!(differences(&v1, &v1).is_empty());
    }

    #[test]
    fn an_unlisted_difference_and_a_listed_one_never_seen_both_fail() {
        let pair = Pair {
            agent: "a".into(),
            version: "1.0.0".into(),
            scenario: "s".into(),
            v1: PathBuf::new(),
            v2: PathBuf::new(),
        };
        let found = vec![(
            pair,
            BTreeSet::from(["result/success /duration_ms".to_string(), "+x".to_string()]),
        )];
        let table = vec![Justified {
            agent: "a".into(),
            scenario: "*".into(),
            differences: vec!["result/success /duration_ms".into(), "-y".into()],
            why: "timing".into(),
        }];
        assert_eq!(
            judge(&found, &table),
            Verdict {
                unjustified: vec!["a/1.0.0/s: +x".into()],
                stale: vec!["a *: -y".into()],
            }
        );
    }
}
