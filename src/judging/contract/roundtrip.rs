//! The round trip: Claude Code recorded through an ACP adapter, replayed
//! through the bridge, against Claude Code's own stream-json for the same
//! scenario. Claude is the one agent whose true panel output is known, so
//! every difference is either the adapter's (it translates Claude into ACP
//! lossily) or the bridge's (a bug).
//!
//! Unlike [`super::compare`], which compares shapes across unlike agents, this
//! compares *values* where both sides are deterministic (the scripted model,
//! stub-mcp): the sequence of message and block kinds, each `tool_use`'s name
//! and input, each `tool_result`'s content and `is_error`, each
//! `can_use_tool`'s tool name and input, and each `result`'s subtype,
//! `is_error` and `errors`. Ids, texts the model streams, usage, costs and
//! timing are not compared.
//!
//! Accepted differences live in [`JUSTIFIED_PATH`]: per agent, version range,
//! scenario and difference key, which side causes it (`adapter` or
//! `bridge`), why, and the recorded frames that show it
//! (`<agent>/<version>/<scenario>.jsonl#<seq>`). **An unjustified difference
//! fails, and so does a justification that matches no difference** (it no
//! longer holds) or names a frame that does not exist.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::compare::Difference;
use super::line_kind;
use crate::corpus::recording;
use crate::judging::replay::normalise::digest_base64_runs;

/// Where the accepted differences live, relative to the repository root.
pub const JUSTIFIED_PATH: &str = "contracts/roundtrip.toml";

/// What one run's panel output says, as comparable values in output order:
/// `(key, value)` with keys like `tool_use[0].input`.
pub type Facts = Vec<(String, Value)>;

/// The deterministic values of a panel output.
pub fn facts(lines: &[String]) -> Facts {
    let mut sequence = Vec::new();
    let mut out: Facts = Vec::new();
    let (mut uses, mut results, mut asks, mut ends) = (0, 0, 0, 0);
    for line in lines {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            sequence.push(Value::from("not-json"));
            continue;
        };
        let Some(kind) = line_kind(&v) else { continue };
        if kind.starts_with("stream_event/") || kind.starts_with("system/") {
            continue;
        }
        let blocks = v.pointer("/message/content");
        match (kind.as_str(), blocks) {
            ("assistant" | "user", Some(Value::Array(blocks))) => {
                for b in blocks {
                    let bt = b.get("type").and_then(Value::as_str).unwrap_or("?");
                    sequence.push(Value::from(format!("{kind}.{bt}")));
                    match bt {
                        "tool_use" => {
                            let at = format!("tool_use[{uses}]");
                            out.push((format!("{at}.name"), field(b, "name")));
                            out.push((format!("{at}.input"), field(b, "input")));
                            uses += 1;
                        }
                        "tool_result" => {
                            let at = format!("tool_result[{results}]");
                            out.push((format!("{at}.content"), result_content(b)));
                            let is_error = b.get("is_error").and_then(Value::as_bool);
                            out.push((format!("{at}.is_error"), is_error.unwrap_or(false).into()));
                            results += 1;
                        }
                        _ => {}
                    }
                }
            }
            // A string content (a prompt echo) is one text block.
            ("assistant" | "user", _) => sequence.push(Value::from(format!("{kind}.text"))),
            ("control_request/can_use_tool", _) => {
                sequence.push(Value::from(kind.clone()));
                let at = format!("permission[{asks}]");
                out.push((format!("{at}.tool_name"), pointer(&v, "/request/tool_name")));
                out.push((format!("{at}.input"), pointer(&v, "/request/input")));
                asks += 1;
            }
            (k, _) if k.starts_with("result/") => {
                sequence.push(Value::from(kind.clone()));
                let at = format!("result[{ends}]");
                out.push((format!("{at}.subtype"), field(&v, "subtype")));
                out.push((format!("{at}.is_error"), field(&v, "is_error")));
                out.push((format!("{at}.errors"), field(&v, "errors")));
                ends += 1;
            }
            _ => sequence.push(Value::from(kind.clone())),
        }
    }
    out.insert(0, ("sequence".into(), Value::Array(sequence)));
    out
}

fn field(v: &Value, key: &str) -> Value {
    v.get(key).cloned().unwrap_or(Value::Null)
}

fn pointer(v: &Value, p: &str) -> Value {
    v.pointer(p).cloned().unwrap_or(Value::Null)
}

/// A tool_result's content as blocks (a string is one text block), base64
/// digested so image data compares by hash and prints short.
fn result_content(block: &Value) -> Value {
    let blocks = match block.get("content") {
        Some(Value::String(s)) => serde_json::json!([{ "type": "text", "text": s }]),
        Some(v) => v.clone(),
        None => Value::Array(Vec::new()),
    };
    digest_strings(blocks)
}

fn digest_strings(v: Value) -> Value {
    match v {
        Value::String(s) => Value::String(digest_base64_runs(&s)),
        Value::Array(a) => Value::Array(a.into_iter().map(digest_strings).collect()),
        Value::Object(o) => {
            Value::Object(o.into_iter().map(|(k, v)| (k, digest_strings(v))).collect())
        }
        other => other,
    }
}

/// The differences of `bridge` from `claude`, key by key in Claude's order,
/// then keys only the bridge has. A value one side lacks is `null`.
pub fn differences(claude: &Facts, bridge: &Facts) -> Vec<Difference> {
    let b: BTreeMap<&str, &Value> = bridge.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let c: BTreeMap<&str, &Value> = claude.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let mut out = Vec::new();
    let mut push = |key: &str, cv: Option<&Value>, bv: Option<&Value>| {
        if cv != bv {
            out.push(Difference {
                key: key.to_string(),
                detail: format!("Claude {}, bridge {}", show(cv), show(bv)),
                values: Vec::new(),
            });
        }
    };
    for (k, v) in claude {
        push(k, Some(v), b.get(k.as_str()).copied());
    }
    for (k, v) in bridge {
        if !c.contains_key(k.as_str()) {
            push(k, None, Some(v));
        }
    }
    out
}

fn show(v: Option<&Value>) -> String {
    const MAX: usize = 400;
    let s = v.map_or("(none)".to_string(), Value::to_string);
    if s.len() > MAX {
        let cut = (0..=MAX)
            .rev()
            .find(|i| s.is_char_boundary(*i))
            .unwrap_or(0);
        format!("{}…", &s[..cut])
    } else {
        s
    }
}

/// Which side a justified difference comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The adapter translates Claude into ACP lossily: the bridge cannot know.
    Adapter,
    /// The bridge's own shortfall, accepted for now (a known gap).
    Bridge,
}

/// One accepted difference.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Justification {
    pub agent: String,
    /// Semver range of the agent versions it holds for; every version if absent.
    #[serde(default)]
    pub versions: Option<String>,
    /// A scenario name, or `*` for every scenario.
    pub scenario: String,
    /// A difference key; `*` stands for any run of characters
    /// (`tool_use[*].input`).
    pub key: String,
    pub side: Side,
    pub why: String,
    /// Recorded frames that show it: `<agent>/<version>/<scenario>.jsonl#<seq>`.
    pub evidence: Vec<String>,
}

/// The justification file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Justifications {
    /// The ACP agents that run Claude Code (adapters) and so take part.
    pub agents: Vec<String>,
    #[serde(default, rename = "difference")]
    pub differences: Vec<Justification>,
}

impl Justification {
    fn covers(&self, agent: &str, version: &str, scenario: &str, key: &str) -> bool {
        let in_range = match &self.versions {
            None => true,
            Some(r) => match (
                semver::VersionReq::parse(r),
                semver::Version::parse(version),
            ) {
                (Ok(req), Ok(v)) => req.matches(&v),
                _ => false,
            },
        };
        self.agent == agent
            && in_range
            && (self.scenario == "*" || self.scenario == scenario)
            && glob(&self.key, key)
    }
}

/// Whether `text` matches `pattern`, where each `*` stands for any run of
/// characters (`tool_use[*].input`, `permission[*`).
pub fn glob(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Reads and checks [`JUSTIFIED_PATH`]: every entry needs a `why`, a valid
/// range and at least one piece of evidence naming a recorded frame.
pub fn load_justifications(root: &Path) -> anyhow::Result<Justifications> {
    let path = root.join(JUSTIFIED_PATH);
    let text =
        std::fs::read_to_string(&path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let j: Justifications =
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let recordings = root.join("recordings");
    for (i, d) in j.differences.iter().enumerate() {
        let bad = |what: String| {
            anyhow::anyhow!("{}: difference {i} ({}): {what}", path.display(), d.key)
        };
        if d.why.trim().is_empty() {
            return Err(bad("`why` is empty".into()));
        }
        if let Some(r) = &d.versions {
            semver::VersionReq::parse(r).map_err(|e| bad(format!("versions {r:?}: {e}")))?;
        }
        if d.evidence.is_empty() {
            return Err(bad("no evidence: name the frames that show it".into()));
        }
        for ev in &d.evidence {
            evidence_frame(&recordings, ev).map_err(|e| bad(format!("evidence {ev:?}: {e}")))?;
        }
    }
    Ok(j)
}

/// Checks that `file.jsonl#seq` names an event of a committed recording.
fn evidence_frame(recordings: &Path, evidence: &str) -> anyhow::Result<()> {
    let (file, seq) = evidence
        .split_once('#')
        .ok_or_else(|| anyhow::anyhow!("expected <agent>/<version>/<scenario>.jsonl#<seq>"))?;
    let seq: u64 = seq
        .parse()
        .map_err(|_| anyhow::anyhow!("`{seq}` is not a seq number"))?;
    let rec = recording::read(&recordings.join(file))?;
    if rec.events.iter().any(|e| e.seq == seq) {
        Ok(())
    } else {
        Err(anyhow::anyhow!("{file} has no event with seq {seq}"))
    }
}

/// One adapter recording against Claude's reference of its scenario.
#[derive(Debug, Clone)]
pub struct Row {
    pub agent: String,
    pub version: String,
    pub scenario: String,
    pub differences: Vec<Difference>,
    /// Per difference: the side of its justification, `None` when unjustified.
    pub sides: Vec<Option<Side>>,
    pub error: Option<String>,
}

/// The outcome: rows plus justifications that matched nothing.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub rows: Vec<Row>,
    pub stale: Vec<Justification>,
}

impl Outcome {
    pub fn unjustified(&self) -> usize {
        self.rows
            .iter()
            .map(|r| {
                r.sides.iter().filter(|s| s.is_none()).count() + usize::from(r.error.is_some())
            })
            .sum()
    }

    pub fn justified_by(&self, side: Side) -> usize {
        self.rows
            .iter()
            .flat_map(|r| &r.sides)
            .filter(|s| **s == Some(side))
            .count()
    }

    pub fn holds(&self) -> bool {
        self.unjustified() == 0 && self.stale.is_empty()
    }
}

impl Justifications {
    /// Sets each row's sides from the first entry covering each difference;
    /// returns the entries that covered none (stale).
    pub fn classify(&self, rows: &mut [Row]) -> Vec<Justification> {
        let mut used = vec![false; self.differences.len()];
        for row in rows.iter_mut() {
            row.sides =
                row.differences
                    .iter()
                    .map(|d| {
                        let hit = self.differences.iter().position(|j| {
                            j.covers(&row.agent, &row.version, &row.scenario, &d.key)
                        });
                        if let Some(i) = hit {
                            used[i] = true;
                        }
                        hit.map(|i| self.differences[i].side)
                    })
                    .collect();
        }
        self.differences
            .iter()
            .zip(used)
            .filter(|(_, u)| !u)
            .map(|(j, _)| j.clone())
            .collect()
    }
}

/// The table: one row per recording, then each difference and its side.
pub fn render(o: &Outcome, details: bool) -> String {
    let mut out = String::from(
        "| agent | version | scenario | differences | adapter | bridge | unjustified |\n|---|---|---|---|---|---|---|\n",
    );
    for r in &o.rows {
        if let Some(e) = &r.error {
            let _ = writeln!(
                out,
                "| {} | {} | {} | error: {e} | | | 1 |",
                r.agent, r.version, r.scenario
            );
            continue;
        }
        let count = |s: Option<Side>| r.sides.iter().filter(|x| **x == s).count();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            r.agent,
            r.version,
            r.scenario,
            r.differences.len(),
            count(Some(Side::Adapter)),
            count(Some(Side::Bridge)),
            count(None),
        );
    }
    for r in &o.rows {
        for (d, s) in r.differences.iter().zip(&r.sides) {
            if s.is_some() && !details {
                continue;
            }
            let mark = match s {
                Some(Side::Adapter) => "justified (adapter)",
                Some(Side::Bridge) => "justified (bridge)",
                None => "UNJUSTIFIED",
            };
            let _ = writeln!(
                out,
                "- {} {} {}: {mark} `{}`: {}",
                r.agent, r.version, r.scenario, d.key, d.detail
            );
        }
    }
    for j in &o.stale {
        let _ = writeln!(
            out,
            "- STALE justification: {} {} {} `{}` matches no difference: remove it",
            j.agent,
            j.versions.as_deref().unwrap_or("*"),
            j.scenario,
            j.key
        );
    }
    out
}

impl Outcome {
    /// One line: recordings, differences by side, unjustified, stale.
    pub fn summary(&self) -> String {
        format!(
            "{} recordings, {} differences: {} justified as the adapter's, {} as the bridge's, {} unjustified, {} stale justifications",
            self.rows.len(),
            self.rows.iter().map(|r| r.differences.len()).sum::<usize>(),
            self.justified_by(Side::Adapter),
            self.justified_by(Side::Bridge),
            self.unjustified(),
            self.stale.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lines(vs: &[Value]) -> Vec<String> {
        vs.iter().map(Value::to_string).collect()
    }

    #[test]
    fn facts_are_the_deterministic_values_in_output_order() {
        let out = facts(&lines(&[
            json!({"type":"system","subtype":"init"}),
            json!({"type":"stream_event","event":{"type":"message_start"}}),
            json!({"type":"assistant","message":{"content":[{"type":"text","text":"x"},{"type":"tool_use","id":"t","name":"mcp__u__p","input":{"a":1}}]}}),
            json!({"type":"control_request","request_id":"r","request":{"subtype":"can_use_tool","tool_name":"mcp__u__p","input":{"a":1}}}),
            json!({"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"pong"}]}}),
            json!({"type":"result","subtype":"success","is_error":false}),
        ]));
        let keys: Vec<&str> = out.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "sequence",
                "tool_use[0].name",
                "tool_use[0].input",
                "permission[0].tool_name",
                "permission[0].input",
                "tool_result[0].content",
                "tool_result[0].is_error",
                "result[0].subtype",
                "result[0].is_error",
                "result[0].errors",
            ]
        );
        assert_eq!(
            out[0].1,
            json!([
                "assistant.text",
                "assistant.tool_use",
                "control_request/can_use_tool",
                "user.tool_result",
                "result/success"
            ])
        );
        // a string content compares equal to the same text as one block
        assert_eq!(out[5].1, json!([{"type":"text","text":"pong"}]));
    }

    #[test]
    fn differences_name_the_key_and_both_values_and_a_missing_side_is_none() {
        let claude: Facts = vec![("a".into(), json!(1)), ("b".into(), json!([1]))];
        let bridge: Facts = vec![("a".into(), json!(1)), ("c".into(), json!(true))];
        let d = differences(&claude, &bridge);
        let keys: Vec<&str> = d.iter().map(|d| d.key.as_str()).collect();
        assert_eq!(keys, ["b", "c"]);
        assert_eq!(d[0].detail, "Claude [1], bridge (none)");
        assert_eq!(d[1].detail, "Claude (none), bridge true");
    }

    #[test]
    fn a_justification_covers_its_agent_range_scenario_and_key_prefix() {
        let j: Justifications = toml::from_str(
            r#"
agents = ["a"]
[[difference]]
agent = "a"
versions = ">=0.17.0"
scenario = "*"
key = "tool_use[*"
side = "bridge"
why = "w"
evidence = ["a/1/s.jsonl#1"]
"#,
        )
        .unwrap();
        let j = &j.differences[0];
        assert!(j.covers("a", "0.23.1", "s", "tool_use[0].input"));
        assert!(!j.covers("a", "0.16.2", "s", "tool_use[0].input"));
        assert!(!j.covers("b", "0.23.1", "s", "tool_use[0].input"));
        assert!(!j.covers("a", "0.23.1", "s", "permission[0].input"));
        assert_eq!(j.side, Side::Bridge);
    }

    #[test]
    fn a_key_pattern_star_stands_for_any_run_of_characters() {
        let cases = [
            ("tool_use[*].input", "tool_use[0].input", true),
            ("tool_use[*].input", "tool_use[12].input", true),
            ("tool_use[*].input", "tool_use[0].name", false),
            ("permission[*", "permission[3].tool_name", true),
            ("sequence", "sequence", true),
            ("sequence", "sequence2", false),
            ("*", "anything", true),
            ("a*b*c", "abc", true),
            ("a*b*c", "acb", false),
        ];
        for (pattern, key, want) in cases {
            assert_eq!(glob(pattern, key), want, "{pattern} / {key}");
        }
    }

    #[test]
    fn a_justification_without_a_side_or_with_an_unknown_field_is_refused() {
        for bad in [
            "agents = []\n[[difference]]\nagent = \"a\"\nscenario = \"s\"\nkey = \"k\"\nwhy = \"w\"\nevidence = []\n",
            "agents = []\n[[difference]]\nagent = \"a\"\nscenario = \"s\"\nkey = \"k\"\nside = \"panel\"\nwhy = \"w\"\nevidence = []\n",
            "agents = []\nextra = 1\n",
        ] {
            assert!(toml::from_str::<Justifications>(bad).is_err(), "{bad}");
        }
    }
}
