//! Per scenario: how close the bridge's stream-json (replaying each ACP
//! agent's recording) comes to what Claude Code itself emitted for the same
//! scenario. Compared: the set of line kinds, the `tool_use` names, the
//! structure of each `tool_result` (block types, `is_error`), the permission
//! flow (`can_use_tool` tool names in order) and the `result`s (one per
//! turn, their subtypes).
//!
//! Each difference has a stable key (e.g. `kind-missing:stream_event/message_delta`,
//! `tool-use-names`) so a scenario can justify it under
//! `[claude_comparison] justified = [{ key = "...", why = "..." }]`; a key
//! ending in `*` justifies every key with that prefix. A difference of a list
//! (`tool-use-names`, `tool-result-structure`, `permission-flow`, `results`)
//! is justified by its values too: the entry's `values = "<regex>"` must
//! match every value the bridge sent (e.g. `^(Bash|Edit)$`), so a justified
//! kind of difference does not also let a garbage tool name through. The
//! differences that follow only from an agent that asked no permission
//! ([`follows_from_unasked_calls`]) are the agent's, not the bridge's.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use super::line_kind;

/// One way the bridge's output differs from Claude's.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Difference {
    /// Stable, justifiable key.
    pub key: String,
    /// What differs, for people.
    pub detail: String,
    /// The bridge's values of a list difference (tool names, result
    /// shapes, ...), which a justification's `values` pattern must match;
    /// empty for a kind difference (its key names the kind).
    pub values: Vec<String>,
}

/// The list differences, justified only with a `values` pattern.
pub const LIST_KEYS: &[&str] = &[
    "tool-use-names",
    "tool-result-structure",
    "permission-flow",
    "results",
];

/// One `[claude_comparison] justified` entry.
#[derive(Debug, Clone)]
pub struct Justification {
    pub key: String,
    /// What every bridge value of a list difference must match.
    pub values: Option<regex::Regex>,
}

/// The shape of one run's panel output, as the comparison sees it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shape {
    pub kinds: BTreeSet<String>,
    pub tool_uses: Vec<String>,
    /// Per `tool_result`: `text+image`, `error:text`, ...
    pub tool_results: Vec<String>,
    pub permissions: Vec<String>,
    pub results: Vec<String>,
}

impl Shape {
    pub fn of(lines: &[String]) -> Shape {
        let mut s = Shape::default();
        for line in lines {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let Some(kind) = line_kind(&v) else { continue };
            s.kinds.insert(kind.clone());
            let blocks = v
                .pointer("/message/content")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            match kind.as_str() {
                "assistant" => {
                    for b in &blocks {
                        if b.get("type").and_then(Value::as_str) == Some("tool_use") {
                            s.tool_uses.push(str_at(b, "/name"));
                        }
                    }
                }
                "user" => {
                    for b in &blocks {
                        if b.get("type").and_then(Value::as_str) == Some("tool_result") {
                            s.tool_results.push(result_shape(b));
                        }
                    }
                }
                "control_request/can_use_tool" => {
                    s.permissions.push(str_at(&v, "/request/tool_name"))
                }
                k if k.starts_with("result/") => s.results.push(k["result/".len()..].to_string()),
                _ => {}
            }
        }
        s
    }
}

fn str_at(v: &Value, p: &str) -> String {
    v.pointer(p)
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_string()
}

/// `text+image`, with `error:` in front when `is_error`; a string content is `text`.
fn result_shape(block: &Value) -> String {
    let types = match block.get("content") {
        Some(Value::Array(items)) => {
            let mut t: Vec<String> = items.iter().map(|c| str_at(c, "/type")).collect();
            t.dedup();
            t.join("+")
        }
        Some(Value::String(_)) => "text".into(),
        _ => "empty".into(),
    };
    if block.get("is_error").and_then(Value::as_bool) == Some(true) {
        format!("error:{types}")
    } else {
        types
    }
}

/// The differences of `bridge` from `claude`.
pub fn differences(claude: &Shape, bridge: &Shape) -> Vec<Difference> {
    let mut out = Vec::new();
    for k in claude.kinds.difference(&bridge.kinds) {
        out.push(Difference {
            key: format!("kind-missing:{k}"),
            detail: format!("Claude sent `{k}` lines, the bridge none"),
            values: Vec::new(),
        });
    }
    for k in bridge.kinds.difference(&claude.kinds) {
        out.push(Difference {
            key: format!("kind-extra:{k}"),
            detail: format!("the bridge sent `{k}` lines, Claude none"),
            values: Vec::new(),
        });
    }
    let mut pairs = [
        ("tool-use-names", &claude.tool_uses, &bridge.tool_uses),
        (
            "tool-result-structure",
            &claude.tool_results,
            &bridge.tool_results,
        ),
        ("permission-flow", &claude.permissions, &bridge.permissions),
        ("results", &claude.results, &bridge.results),
    ];
    for (key, c, b) in pairs.iter_mut() {
        if c != b {
            out.push(Difference {
                key: key.to_string(),
                detail: format!("Claude [{}], bridge [{}]", c.join(", "), b.join(", ")),
                values: b.to_vec(),
            });
        }
    }
    out
}

/// Whether a difference is justified by one of the scenario's entries: its
/// key matches (exactly, or a `*` prefix) and, for a list difference, every
/// bridge value matches the entry's `values` pattern.
pub fn is_justified(d: &Difference, justified: &[Justification]) -> bool {
    justified.iter().any(|j| {
        let key = match j.key.strip_suffix('*') {
            Some(prefix) => d.key.starts_with(prefix),
            None => d.key == j.key,
        };
        let values = match &j.values {
            Some(re) => d.values.iter().all(|v| re.is_match(v)),
            None => !LIST_KEYS.contains(&d.key.as_str()),
        };
        key && values
    })
}

/// Whether a difference follows from the agent alone when it asked no
/// permission in the run (pi runs every call unasked): the comparison
/// judges the bridge, which then has nothing to forward. That is a missing
/// `can_use_tool` kind, a permission flow the bridge left empty, and
/// results that differ only in that Claude's denied calls are errors while
/// the agent's ran.
pub fn follows_from_unasked_calls(d: &Difference, claude: &Shape, bridge: &Shape) -> bool {
    match d.key.as_str() {
        "kind-missing:control_request/can_use_tool" => true,
        "permission-flow" => bridge.permissions.is_empty(),
        "tool-result-structure" => {
            claude.tool_results.len() == bridge.tool_results.len()
                && claude
                    .tool_results
                    .iter()
                    .zip(&bridge.tool_results)
                    .all(|(c, b)| c == b || c.strip_prefix("error:") == Some(b.as_str()))
        }
        _ => false,
    }
}

/// Whether a difference follows from the agent's own `notice` updates
/// (a warning it reports): the bridge shows each as Claude Code shows its
/// notices, `system/informational`, which the reference recordings never
/// needed.
pub fn follows_from_agent_notices(d: &Difference) -> bool {
    d.key == "kind-extra:system/informational"
}

/// The keys a scenario file justifies: `[claude_comparison] justified =
/// [{ key = "...", why = "...", values = "..." }]`. Every entry needs a
/// non-empty `why`, and one of a list key a `values` pattern; anything else
/// in the table is an error naming the file and the entry.
pub fn justified(scenario_file: &Path) -> anyhow::Result<Vec<Justification>> {
    let text = std::fs::read_to_string(scenario_file)?;
    let doc: toml::Table =
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", scenario_file.display()))?;
    let Some(section) = doc.get("claude_comparison") else {
        return Ok(Vec::new());
    };
    let bad =
        |what: String| anyhow::anyhow!("{}: [claude_comparison] {what}", scenario_file.display());
    let table = section
        .as_table()
        .ok_or_else(|| bad("must be a table".into()))?;
    if let Some(k) = table.keys().find(|k| *k != "justified") {
        return Err(bad(format!("unknown key `{k}` (expected justified)")));
    }
    let entries = table
        .get("justified")
        .and_then(toml::Value::as_array)
        .ok_or_else(|| bad("`justified` must be an array".into()))?;
    let mut keys = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let t = e
            .as_table()
            .ok_or_else(|| bad(format!("justified[{i}] must be a table {{ key, why }}")))?;
        if let Some(k) = t
            .keys()
            .find(|k| !["key", "why", "values"].contains(&k.as_str()))
        {
            return Err(bad(format!(
                "justified[{i}]: unknown key `{k}` (expected key, why, values)"
            )));
        }
        let values = match t.get("values") {
            None => None,
            Some(v) => {
                let pattern = v
                    .as_str()
                    .ok_or_else(|| bad(format!("justified[{i}].values must be a regex string")))?;
                Some(
                    regex::Regex::new(pattern)
                        .map_err(|e| bad(format!("justified[{i}].values: {e}")))?,
                )
            }
        };
        let key = t
            .get("key")
            .and_then(toml::Value::as_str)
            .filter(|s| !s.is_empty());
        let why = t
            .get("why")
            .and_then(toml::Value::as_str)
            .filter(|s| !s.trim().is_empty());
        match (key, why) {
            (Some(k), Some(_)) if values.is_none() && LIST_KEYS.contains(&k) => {
                return Err(bad(format!(
                    "justified[{i}]: `{k}` is justified by value: add `values = \"<regex>\"` matching every value the bridge may send (e.g. its tool names)"
                )));
            }
            (Some(k), Some(_)) => keys.push(Justification {
                key: k.to_string(),
                values,
            }),
            (None, _) => return Err(bad(format!("justified[{i}].key is missing or empty"))),
            (_, None) => {
                return Err(bad(format!(
                    "justified[{i}].why is missing or empty: say why the difference is inherent"
                )));
            }
        }
    }
    Ok(keys)
}

/// One row of the table: an ACP recording against Claude's.
#[derive(Debug, Clone)]
pub struct Row {
    pub scenario: String,
    pub agent: String,
    pub claude: Shape,
    pub bridge: Shape,
    pub differences: Vec<Difference>,
    pub unjustified: Vec<Difference>,
    pub error: Option<String>,
}

/// Only the rows of each agent's newest recorded version (semver order).
pub fn newest_versions(rows: Vec<Row>) -> Vec<Row> {
    // each protocol revision (a version's build metadata, `+acp2`) of an
    // agent has its own newest version
    let version = |r: &Row| {
        let (agent, v) = r.agent.split_once(' ').unwrap_or((&r.agent, ""));
        let v = semver::Version::parse(v).ok();
        let revision = v.as_ref().map(|v| v.build.to_string()).unwrap_or_default();
        (format!("{agent}+{revision}"), v)
    };
    let mut newest: std::collections::BTreeMap<String, Option<semver::Version>> =
        Default::default();
    for r in &rows {
        let (agent, v) = version(r);
        let e = newest.entry(agent).or_insert(None);
        if v > *e {
            *e = v;
        }
    }
    rows.into_iter()
        .filter(|r| {
            let (a, v) = version(r);
            newest.get(&a) == Some(&v)
        })
        .collect()
}

/// The table docs/contract.md shows.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| scenario | agent | line kinds (bridge / Claude, shared) | tool_use names | tool_result blocks | permission flow | results | differences (justified / unjustified) |\n|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        if let Some(e) = &r.error {
            let _ = writeln!(
                out,
                "| {} | {} | error: {e} | | | | | |",
                r.scenario, r.agent
            );
            continue;
        }
        let shared = r.claude.kinds.intersection(&r.bridge.kinds).count();
        let same = |a: bool| if a { "same" } else { "differs" };
        let _ = writeln!(
            out,
            "| {} | {} | {} / {}, {} | {} | {} | {} | {} | {} / {} |",
            r.scenario,
            r.agent,
            r.bridge.kinds.len(),
            r.claude.kinds.len(),
            shared,
            same(r.claude.tool_uses == r.bridge.tool_uses),
            same(r.claude.tool_results == r.bridge.tool_results),
            same(r.claude.permissions == r.bridge.permissions),
            same(r.claude.results == r.bridge.results),
            r.differences.len() - r.unjustified.len(),
            r.unjustified.len(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_result_shape_names_block_types_and_errors() {
        let cases = [
            (
                serde_json::json!({"content":[{"type":"text"},{"type":"image"}]}),
                "text+image",
            ),
            (
                serde_json::json!({"content":"denied","is_error":true}),
                "error:text",
            ),
            (serde_json::json!({}), "empty"),
        ];
        for (b, want) in cases {
            assert_eq!(result_shape(&b), want);
        }
    }

    #[test]
    fn a_justification_matches_the_key_and_every_value_of_a_list_difference() {
        let j = |key: &str, values: Option<&str>| Justification {
            key: key.into(),
            values: values.map(|v| regex::Regex::new(v).unwrap()),
        };
        let justified = vec![
            j("kind-missing:stream_event/*", None),
            j("tool-use-names", Some("^(Bash|Edit)$")),
        ];
        let d = |key: &str, values: &[&str]| Difference {
            key: key.into(),
            detail: String::new(),
            values: values.iter().map(|v| v.to_string()).collect(),
        };
        let cases = [
            (d("kind-missing:stream_event/message_delta", &[]), true),
            (d("tool-use-names", &["Bash", "Edit"]), true),
            (d("tool-use-names", &["Bash", "x9$garbage"]), false),
            (d("results", &["success"]), false),
            (d("kind-extra:system/init", &[]), false),
        ];
        for (diff, want) in cases {
            assert_eq!(is_justified(&diff, &justified), want, "{diff:?}");
        }
        // A list key without a pattern justifies nothing.
        assert!(!is_justified(&d("results", &[]), &[j("results", None)]));
    }

    #[test]
    fn differences_name_missing_and_extra_kinds_and_changed_flows() {
        let claude = Shape::of(&[
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"mcp__u__p"}]}}"#.into(),
            r#"{"type":"result","subtype":"success"}"#.into(),
        ]);
        let bridge = Shape::of(&[
            r#"{"type":"system","subtype":"init"}"#.into(),
            r#"{"type":"result","subtype":"success"}"#.into(),
        ]);
        let keys: Vec<String> = differences(&claude, &bridge)
            .into_iter()
            .map(|d| d.key)
            .collect();
        assert_eq!(
            keys,
            [
                "kind-missing:assistant",
                "kind-extra:system/init",
                "tool-use-names"
            ]
        );
    }

    #[test]
    fn only_permission_differences_follow_from_an_agent_that_asked_nothing() {
        let shape = |results: &[&str], permissions: &[&str]| Shape {
            tool_results: results.iter().map(|s| s.to_string()).collect(),
            permissions: permissions.iter().map(|s| s.to_string()).collect(),
            ..Shape::default()
        };
        let d = |key: &str| Difference {
            key: key.into(),
            detail: String::new(),
            values: Vec::new(),
        };
        let claude = shape(&["error:text", "text"], &["mcp__s__t"]);
        let cases = [
            (
                "the missing can_use_tool kind",
                d("kind-missing:control_request/can_use_tool"),
                shape(&["text", "text"], &[]),
                true,
            ),
            (
                "an empty permission flow",
                d("permission-flow"),
                shape(&["text", "text"], &[]),
                true,
            ),
            (
                "a permission flow the bridge made up",
                d("permission-flow"),
                shape(&["text", "text"], &["Bash"]),
                false,
            ),
            (
                "a denied call's error that ran instead",
                d("tool-result-structure"),
                shape(&["text", "text"], &[]),
                true,
            ),
            (
                "a result shaped otherwise",
                d("tool-result-structure"),
                shape(&["text+image", "text"], &[]),
                false,
            ),
            (
                "a missing result",
                d("tool-result-structure"),
                shape(&["text"], &[]),
                false,
            ),
            (
                "any other difference",
                d("tool-use-names"),
                shape(&["text", "text"], &[]),
                false,
            ),
        ];
        for (case, diff, bridge, want) in cases {
            assert_eq!(
                follows_from_unasked_calls(&diff, &claude, &bridge),
                want,
                "{case}"
            );
        }
    }
}
