//! The stream-json contract: what Claude Code's own lines look like, derived
//! from its reference recordings (`recordings/claude-code/`), committed as
//! data (`contracts/claude-code.json`), and the check of every line the
//! bridge emits against it.
//!
//! A line's *kind* is what the panel dispatches on ([`line_kind`]):
//! `system/init`, `stream_event/<event type>`, `assistant`, `user`,
//! `control_request/<subtype>`, `control_response/<subtype>`,
//! `result/<subtype>`; each content block of an `assistant` / `user` message
//! is checked as its own kind (`assistant.content/<block type>`,
//! `user.content/<block type>`, `tool_result.content/<block type>`). For each
//! kind the contract lists the keys Claude always sent (required) and the
//! JSON types it sent them with, as dotted paths two objects deep (deeper
//! objects are the agent's business, e.g. `usage` details).
//!
//! **The contract is derived, never hand-edited**: `acp-harness contract
//! derive` rewrites it from the recordings, so re-recording Claude updates it.

pub mod compare;
mod line_kind;
mod line_report;
mod reference;
pub mod roundtrip;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::corpus::recording::Recording;

use line_kind::{discriminator, items, key_types};
pub use line_kind::{json_type, line_kind};
pub use line_report::{Conformance, LineConformance, TypeMismatch};
pub use reference::{
    is_reference_recording, newest_reference, reference_lines, reference_recordings,
};

/// Where the derived contract lives, relative to the repository root.
pub const CONTRACT_PATH: &str = "contracts/claude-code.json";
/// The hand-written list of keys the bridge deliberately omits, with why.
pub const WAIVED_PATH: &str = "contracts/waived.toml";

#[derive(Debug, thiserror::Error)]
pub enum ContractError {
    #[error("{}: {message}", path.display())]
    Read { path: PathBuf, message: String },
    #[error("{}: no stream-json reference recordings there (header \"protocol\":\"stream-json\")", .0.display())]
    NoRecordings(PathBuf),
}

/// While deriving: key path -> (lines it was present on, types seen).
type KeyTally = BTreeMap<String, (usize, BTreeSet<String>)>;

/// One key of one kind in the contract.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyRule {
    /// Present on every line of this kind Claude sent.
    pub required: bool,
    /// The JSON types Claude sent it with.
    pub types: BTreeSet<String>,
}

/// The rules of one line (or block) kind.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct KindRules {
    /// How many lines (blocks) of this kind the recordings hold.
    pub seen: usize,
    pub keys: BTreeMap<String, KeyRule>,
}

/// The derived contract file.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Contract {
    /// How it was made (the command) and from what.
    pub derived_by: String,
    /// `<agent>/<version>/<scenario>.jsonl` of each recording read.
    pub recordings: Vec<String>,
    pub kinds: BTreeMap<String, KindRules>,
    /// Keys the bridge deliberately omits (`contracts/waived.toml`), by kind
    /// pattern (`result/*` covers every result subtype).
    #[serde(skip)]
    pub waived: Vec<Waiver>,
}

/// One `[[waive]]` entry of `contracts/waived.toml`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Waiver {
    pub kind: String,
    pub keys: Vec<String>,
    pub why: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WaiverFile {
    #[serde(default)]
    waive: Vec<Waiver>,
}

/// Reads `contracts/waived.toml`; every entry needs a reason.
pub fn load_waivers(path: &Path) -> Result<Vec<Waiver>, ContractError> {
    let err = |message: String| ContractError::Read {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    let file: WaiverFile = toml::from_str(&text).map_err(|e| err(e.to_string()))?;
    if let Some((i, _)) = file
        .waive
        .iter()
        .enumerate()
        .find(|(_, w)| w.why.trim().is_empty())
    {
        return Err(err(format!(
            "waive[{i}] ({}) has no `why`",
            file.waive[i].kind
        )));
    }
    Ok(file.waive)
}

impl Contract {
    fn is_waived(&self, kind: &str, key: &str) -> bool {
        self.waived.iter().any(|w| {
            let kind_ok = match w.kind.strip_suffix('*') {
                Some(prefix) => kind.starts_with(prefix),
                None => w.kind == kind,
            };
            kind_ok && w.keys.iter().any(|k| k == key)
        })
    }

    /// Derives the contract from the `from_agent` stream-json lines of the
    /// given recordings.
    pub fn derive<'a>(recordings: impl IntoIterator<Item = (String, &'a Recording)>) -> Contract {
        let mut contract = Contract {
            derived_by: "acp-harness contract derive".into(),
            ..Default::default()
        };
        // kind -> (lines seen, key -> (count present, types))
        let mut acc: BTreeMap<String, (usize, KeyTally)> = BTreeMap::new();
        for (label, rec) in recordings {
            contract.recordings.push(label);
            for line in reference_lines(rec) {
                let Ok(v) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                for item in items(&v) {
                    let entry = acc.entry(item.kind).or_default();
                    entry.0 += 1;
                    for (path, ty) in key_types(item.value) {
                        let k = entry.1.entry(path).or_default();
                        k.0 += 1;
                        k.1.insert(ty.to_string());
                    }
                }
            }
        }
        for (kind, (seen, keys)) in acc {
            let keys = keys
                .into_iter()
                .map(|(path, (n, types))| {
                    (
                        path,
                        KeyRule {
                            required: n == seen,
                            types,
                        },
                    )
                })
                .collect();
            contract.kinds.insert(kind, KindRules { seen, keys });
        }
        contract
    }

    pub fn load(path: &Path) -> Result<Contract, ContractError> {
        let text = std::fs::read_to_string(path).map_err(|e| ContractError::Read {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        serde_json::from_str(&text).map_err(|e| ContractError::Read {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }

    /// Pretty JSON with a trailing newline (stable: maps are sorted).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// Checks every line the bridge emitted, parsed (`None`: not JSON) as
    /// the replay keeps them; reports per line.
    pub fn check(&self, lines: &[Option<Value>]) -> Conformance {
        let mut report = Conformance::default();
        for (index, line) in lines.iter().enumerate() {
            self.check_line(index + 1, line.as_ref(), &mut report);
        }
        report
    }

    /// Checks bridge line `line` (1-based; `v` parsed, `None`: not JSON)
    /// into `report`: a replay judged as it happens checks each line as it
    /// comes.
    pub fn check_line(&self, line: usize, v: Option<&Value>, report: &mut Conformance) {
        let Some(v) = v else {
            report.lines.push(LineConformance {
                line,
                kind: "?".into(),
                missing: vec![],
                mismatched: vec![],
                unknown_kind: false,
                not_json: true,
            });
            return;
        };
        for item in items(v) {
            if let Some(envelope) = item.kind.strip_suffix("/?") {
                // The key the panel dispatches on is absent.
                report.lines.push(LineConformance {
                    line,
                    kind: item.kind.clone(),
                    missing: vec![discriminator(envelope).to_string()],
                    ..LineConformance::default()
                });
                continue;
            }
            let Some(rules) = self.kinds.get(&item.kind) else {
                report.lines.push(LineConformance {
                    line,
                    kind: item.kind,
                    unknown_kind: true,
                    ..LineConformance::default()
                });
                continue;
            };
            let have = key_types(item.value);
            let at = |p: &str| {
                if item.at.is_empty() {
                    p.to_string()
                } else {
                    format!("{}.{p}", item.at)
                }
            };
            let mut missing = Vec::new();
            let mut mismatched = Vec::new();
            for (path, rule) in &rules.keys {
                match have.get(path) {
                    None => {
                        // A required key under an optional parent that is absent is not missing.
                        let parent_present = path
                            .rsplit_once('.')
                            .is_none_or(|(parent, _)| have.contains_key(parent));
                        if rule.required && parent_present {
                            if self.is_waived(&item.kind, path) {
                                report.waived += 1;
                            } else {
                                missing.push(at(path));
                            }
                        }
                    }
                    Some(ty) if !rule.types.contains(*ty) => mismatched.push(TypeMismatch {
                        key: at(path),
                        expected: rule.types.iter().cloned().collect(),
                        got: ty.to_string(),
                    }),
                    Some(_) => {}
                }
            }
            if !missing.is_empty() || !mismatched.is_empty() {
                report.lines.push(LineConformance {
                    line,
                    kind: item.kind,
                    missing,
                    mismatched,
                    ..LineConformance::default()
                });
            }
        }
    }
}

/// The contract for the corpus at `root`, if one was derived; an unreadable
/// file is an error naming it.
pub fn for_root(root: &Path) -> Result<Option<Contract>, ContractError> {
    let path = root.join(CONTRACT_PATH);
    if !path.exists() {
        return Ok(None);
    }
    let mut contract = Contract::load(&path)?;
    let waived = root.join(WAIVED_PATH);
    if waived.exists() {
        contract.waived = load_waivers(&waived)?;
    }
    Ok(Some(contract))
}

#[cfg(test)]
mod tests;
