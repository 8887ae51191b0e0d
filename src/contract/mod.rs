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
pub mod roundtrip;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};
use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::recording::{self, Dir, Leg, Recording};

/// Where the derived contract lives, relative to the repository root.
pub const CONTRACT_PATH: &str = "contracts/claude-code.json";
/// The hand-written list of keys the bridge deliberately omits, with why.
pub const WAIVED_PATH: &str = "contracts/waived.toml";
/// How many object levels below a line (or block) keys are listed.
const DEPTH: usize = 2;

#[derive(Debug, thiserror::Error)]
pub enum ContractError {
    #[error("{}: {message}", path.display())]
    Read { path: PathBuf, message: String },
    #[error("{}: no stream-json reference recordings there (header \"protocol\":\"stream-json\")", .0.display())]
    NoRecordings(PathBuf),
}

/// Whether `path` is a stream-json reference recording (Claude Code itself):
/// its header says `"protocol":"stream-json"`. The replayer skips those; they
/// are not an ACP agent to replay. Reads only the first line.
pub fn is_reference_recording(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut first = String::new();
    if std::io::BufReader::new(file).read_line(&mut first).is_err() {
        return false;
    }
    serde_json::from_str::<Value>(&first)
        .ok()
        .and_then(|h| {
            h.get("protocol")
                .and_then(|p| p.as_str())
                .map(|p| p == "stream-json")
        })
        .unwrap_or(false)
}

/// The JSON type names used in the contract.
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// What the panel dispatches a line on; `None` for a line that is not a
/// JSON object with a string `type`.
pub fn line_kind(v: &Value) -> Option<String> {
    let ty = v.get("type")?.as_str()?;
    let sub = |p: &str| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string()
    };
    Some(match ty {
        "system" | "result" => format!("{ty}/{}", sub("/subtype")),
        "stream_event" => format!("stream_event/{}", sub("/event/type")),
        "control_request" => format!("control_request/{}", sub("/request/subtype")),
        "control_response" => format!("control_response/{}", sub("/response/subtype")),
        other => other.to_string(),
    })
}

/// The key path whose value names the kind of a line of type `envelope`.
fn discriminator(envelope: &str) -> &'static str {
    match envelope {
        "stream_event" => "event.type",
        "control_request" => "request.subtype",
        "control_response" => "response.subtype",
        _ => "subtype",
    }
}

/// One object to check: the line itself, or one content block of it.
struct Item<'a> {
    kind: String,
    value: &'a Value,
    /// Where in the line (`message.content[1]`), empty for the line itself.
    at: String,
}

fn items(v: &Value) -> Vec<Item<'_>> {
    let Some(kind) = line_kind(v) else {
        return Vec::new();
    };
    let mut out = vec![Item {
        kind: kind.clone(),
        value: v,
        at: String::new(),
    }];
    if kind == "assistant" || kind == "user" {
        let blocks = v.pointer("/message/content").and_then(Value::as_array);
        for (i, b) in blocks.into_iter().flatten().enumerate() {
            let bt = b.get("type").and_then(Value::as_str).unwrap_or("?");
            out.push(Item {
                kind: format!("{kind}.content/{bt}"),
                value: b,
                at: format!("message.content[{i}]"),
            });
            if bt == "tool_result"
                && let Some(inner) = b.get("content").and_then(Value::as_array)
            {
                for (j, c) in inner.iter().enumerate() {
                    let ct = c.get("type").and_then(Value::as_str).unwrap_or("?");
                    out.push(Item {
                        kind: format!("tool_result.content/{ct}"),
                        value: c,
                        at: format!("message.content[{i}].content[{j}]"),
                    });
                }
            }
        }
    }
    out
}

/// Dotted key paths of `v` (objects only, `DEPTH` levels) with their types.
fn key_types(v: &Value) -> BTreeMap<String, &'static str> {
    fn walk(v: &Value, prefix: &str, depth: usize, out: &mut BTreeMap<String, &'static str>) {
        let Value::Object(map) = v else { return };
        for (k, child) in map {
            let path = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            out.insert(path.clone(), json_type(child));
            if depth > 0 {
                walk(child, &path, depth - 1, out);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(v, "", DEPTH, &mut out);
    out
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
            let Some(v) = line else {
                report.lines.push(LineConformance {
                    line: index + 1,
                    kind: "?".into(),
                    missing: vec![],
                    mismatched: vec![],
                    unknown_kind: false,
                    not_json: true,
                });
                continue;
            };
            for item in items(v) {
                if let Some(envelope) = item.kind.strip_suffix("/?") {
                    // The key the panel dispatches on is absent.
                    report.lines.push(LineConformance {
                        line: index + 1,
                        kind: item.kind.clone(),
                        missing: vec![discriminator(envelope).to_string()],
                        ..LineConformance::default()
                    });
                    continue;
                }
                let Some(rules) = self.kinds.get(&item.kind) else {
                    report.lines.push(LineConformance {
                        line: index + 1,
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
                        line: index + 1,
                        kind: item.kind,
                        missing,
                        mismatched,
                        ..LineConformance::default()
                    });
                }
            }
        }
        report
    }
}

/// The stream-json lines Claude printed (`from_agent`), in order.
pub fn reference_lines(rec: &Recording) -> Vec<String> {
    rec.leg(Leg::StreamJson)
        .filter(|e| e.dir == Dir::FromAgent)
        .map(|e| e.raw.clone())
        .collect()
}

/// A key present with a type Claude never sent it with.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeMismatch {
    pub key: String,
    pub expected: Vec<String>,
    pub got: String,
}

/// What one bridge line broke.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LineConformance {
    /// 1-based index among the bridge's panel lines.
    pub line: usize,
    pub kind: String,
    /// Required keys the line lacks (fails the replay).
    pub missing: Vec<String>,
    /// Keys with a type Claude never used (reported, not failing).
    pub mismatched: Vec<TypeMismatch>,
    /// A kind Claude never sent in the recordings (reported, not failing).
    pub unknown_kind: bool,
    /// The line is not JSON at all (fails the replay).
    pub not_json: bool,
}

impl LineConformance {
    pub fn fails(&self) -> bool {
        !self.missing.is_empty() || self.not_json
    }
}

impl fmt::Display for LineConformance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bridge line {} ({}):", self.line, self.kind)?;
        if self.not_json {
            write!(f, " not a JSON object")?;
        }
        if self.unknown_kind {
            write!(f, " a kind Claude never sent in the reference recordings")?;
        }
        if !self.missing.is_empty() {
            write!(f, " missing {}", self.missing.join(", "))?;
        }
        for m in &self.mismatched {
            write!(
                f,
                " {} is {} (Claude: {})",
                m.key,
                m.got,
                m.expected.join("|")
            )?;
        }
        Ok(())
    }
}

/// The contract check of one replay.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Conformance {
    pub lines: Vec<LineConformance>,
    /// Required keys absent but waived (`contracts/waived.toml`).
    pub waived: usize,
}

impl Conformance {
    /// A required key is missing on some line (or a line is not JSON).
    pub fn fails(&self) -> bool {
        self.lines.iter().any(LineConformance::fails)
    }

    /// One line per offending bridge line; failing ones first.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for l in self
            .lines
            .iter()
            .filter(|l| l.fails())
            .chain(self.lines.iter().filter(|l| !l.fails()))
        {
            let _ = writeln!(out, "contract: {l}");
        }
        out
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

/// Every reference recording under `dir`, sorted, with its
/// `<agent>/<version>/<scenario>.jsonl` label.
pub fn reference_recordings(dir: &Path) -> Result<Vec<(String, Recording)>, ContractError> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.map_err(|e| ContractError::Read {
            path: dir.to_path_buf(),
            message: e.to_string(),
        })?;
        let p = entry.path();
        if !(entry.file_type().is_file()
            && p.extension().is_some_and(|e| e == "jsonl")
            && is_reference_recording(p))
        {
            continue;
        }
        let rec = recording::read(p).map_err(|e| ContractError::Read {
            path: p.to_path_buf(),
            message: e.to_string(),
        })?;
        let label: Vec<String> = p
            .iter()
            .rev()
            .take(3)
            .map(|c| c.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        out.push((label.join("/"), rec));
    }
    if out.is_empty() {
        return Err(ContractError::NoRecordings(dir.to_path_buf()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// [`Contract::check`] over lines as text.
    fn check(c: &Contract, lines: &[String]) -> Conformance {
        let parsed: Vec<Option<Value>> =
            lines.iter().map(|l| serde_json::from_str(l).ok()).collect();
        c.check(&parsed)
    }

    fn contract_of(lines: &[Value]) -> Contract {
        let mut c = Contract::default();
        let mut acc: BTreeMap<String, Vec<BTreeMap<String, &'static str>>> = BTreeMap::new();
        for l in lines {
            for item in items(l) {
                acc.entry(item.kind)
                    .or_default()
                    .push(key_types(item.value));
            }
        }
        for (kind, samples) in acc {
            let mut rules = KindRules {
                seen: samples.len(),
                ..Default::default()
            };
            for s in &samples {
                for (k, t) in s {
                    let r = rules.keys.entry(k.clone()).or_insert(KeyRule {
                        required: true,
                        types: BTreeSet::new(),
                    });
                    r.types.insert(t.to_string());
                }
            }
            for (k, r) in rules.keys.iter_mut() {
                r.required = samples.iter().all(|s| s.contains_key(k));
            }
            c.kinds.insert(kind, rules);
        }
        c
    }

    #[test]
    fn line_kinds_are_what_the_panel_dispatches_on() {
        let cases = [
            (json!({"type":"system","subtype":"init"}), "system/init"),
            (
                json!({"type":"stream_event","event":{"type":"content_block_delta"}}),
                "stream_event/content_block_delta",
            ),
            (
                json!({"type":"control_request","request":{"subtype":"can_use_tool"}}),
                "control_request/can_use_tool",
            ),
            (
                json!({"type":"control_response","response":{"subtype":"success"}}),
                "control_response/success",
            ),
            (
                json!({"type":"result","subtype":"success"}),
                "result/success",
            ),
            (json!({"type":"assistant"}), "assistant"),
        ];
        for (v, kind) in cases {
            assert_eq!(line_kind(&v).as_deref(), Some(kind), "{v}");
        }
        assert_eq!(line_kind(&json!({"no":"type"})), None);
    }

    #[test]
    fn a_key_claude_always_sends_is_required_and_its_absence_fails_the_line() {
        let c = contract_of(&[
            json!({"type":"result","subtype":"success","session_id":"a","num_turns":1,"extra":1}),
            json!({"type":"result","subtype":"success","session_id":"b","num_turns":2}),
        ]);
        assert!(c.kinds["result/success"].keys["session_id"].required);
        assert!(!c.kinds["result/success"].keys["extra"].required);
        let report = check(
            &c,
            &[json!({"type":"result","subtype":"success","num_turns":1}).to_string()],
        );
        assert!(report.fails());
        assert_eq!(report.lines[0].missing, vec!["session_id"]);
        let ok = check(
            &c,
            &[
                json!({"type":"result","subtype":"success","session_id":"x","num_turns":1})
                    .to_string(),
            ],
        );
        assert!(!ok.fails(), "{}", ok.render());
    }

    #[test]
    fn a_waived_key_is_counted_not_failed_and_a_kind_pattern_covers_subtypes() {
        let mut c = contract_of(&[
            json!({"type":"result","subtype":"success","session_id":"a","modelUsage":{}}),
        ]);
        c.waived = vec![Waiver {
            kind: "result/*".into(),
            keys: vec!["modelUsage".into()],
            why: "no ACP counterpart".into(),
        }];
        let report = check(
            &c,
            &[json!({"type":"result","subtype":"success","session_id":"x"}).to_string()],
        );
        assert!(!report.fails(), "{}", report.render());
        assert_eq!(report.waived, 1);
        let report = check(
            &c,
            &[json!({"type":"result","subtype":"success"}).to_string()],
        );
        assert_eq!(report.lines[0].missing, vec!["session_id"]);
    }

    #[test]
    fn a_type_claude_never_used_is_reported_but_does_not_fail() {
        let c = contract_of(&[json!({"type":"result","subtype":"success","num_turns":1})]);
        let report = check(
            &c,
            &[json!({"type":"result","subtype":"success","num_turns":"1"}).to_string()],
        );
        assert!(!report.fails());
        assert_eq!(report.lines[0].mismatched[0].key, "num_turns");
        assert!(
            report
                .render()
                .contains("num_turns is string (Claude: number)"),
            "{}",
            report.render()
        );
    }

    #[test]
    fn content_blocks_are_checked_as_their_own_kind_with_their_place_in_the_line() {
        let c = contract_of(&[json!({"type":"user","message":{"role":"user","content":[
            {"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"},{"type":"image","source":{"type":"base64"}}]}
        ]}})]);
        let line = json!({"type":"user","message":{"role":"user","content":[
            {"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"},{"type":"image"}]}
        ]}});
        let report = check(&c, &[line.to_string()]);
        assert!(report.fails());
        assert_eq!(report.lines[0].kind, "tool_result.content/image");
        assert_eq!(
            report.lines[0].missing,
            vec!["message.content[0].content[1].source"]
        );
    }

    #[test]
    fn a_kind_claude_never_sent_and_a_non_json_line_are_reported() {
        let c = contract_of(&[json!({"type":"result","subtype":"success"})]);
        let report = check(
            &c,
            &[
                "{\"type\":\"system\",\"subtype\":\"status\"}".into(),
                "nope".into(),
            ],
        );
        assert!(report.lines[0].unknown_kind && !report.lines[0].fails());
        assert!(report.lines[1].not_json && report.lines[1].fails());
        let report = check(&c, &["{\"type\":\"stream_event\",\"event\":{}}".into()]);
        assert_eq!(report.lines[0].missing, vec!["event.type"]);
    }
}
