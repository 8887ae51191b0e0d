//! Comparing two recordings of the same scenario against the same agent
//! version ("does a re-record give the committed recording?").
//!
//! What is normalised, and why:
//! - `seq` and `ms` are dropped: timing differs run to run, and `seq`
//!   interleaves legs whose relative order is a race (the MCP connection,
//!   `available_commands_update`, the model server's answers all run
//!   concurrently with the ACP stream). So each leg is compared as its own
//!   sequence; the ACP leg per agent process and per direction, because an
//!   agent's asynchronous notification and our `session/cancel` cross on the
//!   wire in either order.
//! - `stderr` and `harness` legs are not compared: log lines carry times and
//!   thread ids, and notes describe the run (timeouts are in the trailer).
//! - The `mcp` and `model` legs are compared as sets of distinct exchanges
//!   (sorted, duplicates dropped), with unnumbered labels: agents run HTTP
//!   exchanges concurrently (codex sends side requests beside the turn and
//!   may open a second MCP session, or not, before it is stopped), so their
//!   order and repetition are races. The ACP leg keeps its order: it is what
//!   the bridge sees on replay.
//! - Only the header, the ACP legs and the trailer decide whether two
//!   recordings match; `mcp` and `model` differences are shown as
//!   informational (see above for why they race).
//! - Values agents randomise are replaced by first-seen labels, per leg:
//!   UUIDs anywhere in a string (session ids, codex turn ids, MCP session
//!   ids, `prompt_cache_key`), and the values of keys that hold ids without
//!   a UUID shape (`sessionId`, `toolCallId`, `progressToken`, `turn_id`,
//!   `call_id`, `id`/`item_id` values with a response-id prefix such as
//!   `resp_`). Labels keep identity: the same value gets the same label
//!   everywhere in a leg, so a reply to the wrong session still shows.
//! - Object keys are sorted (codex serialises some maps from hash maps, in
//!   a different order every run); arrays keep their order.
//! - Dates and timestamps inside frames become `<date>` / `<timestamp>`.
//! - HTTP headers that vary per run (`date`, `content-length`,
//!   `mcp-session-id`, `x-request-id`) are dropped.
//! - The header is compared on the fields that define the run (agent,
//!   package, agentInfo, scenario hash, model mode, isolation); the trailer
//!   on its outcome and exit.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use crate::corpus::recording::{self, Dir, Event, Header, Http, Leg, Recording, RecordingError};

static UUID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b").unwrap()
});
static TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?").unwrap()
});
static DATE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b\d{4}-\d{2}-\d{2}\b").unwrap());
/// Measured durations in tool output, e.g. codex's `Wall time: 0.0112 seconds`.
static DURATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b\d+\.\d+ ?(seconds|s|ms)\b").unwrap());
/// The OS part of a user agent, e.g. `(Debian 12.0.0; x86_64)`.
static PLATFORM: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\([^()]*;[^()]*\)").unwrap());
static EPOCH: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b1[6-9]\d{8}(\d{3})?\b").unwrap());

/// Keys whose string values are ids an agent or server draws per run.
const ID_KEYS: &[&str] = &[
    "sessionId",
    "session_id",
    "toolCallId",
    "progressToken",
    "turn_id",
    "turnId",
    "prompt_cache_key",
    "requestId",
    "request_id",
];
/// Prefixes of response/item ids some servers and agents draw per run.
const ID_PREFIXES: &[&str] = &[
    "resp_", "msg_", "rs_", "fc_", "fco_", "at_", "item_", "ws_", "turn_",
];
/// Keys whose numbers are timestamps.
const TIME_KEYS: &[&str] = &[
    "created_at",
    "created",
    "timestamp",
    "updatedAt",
    "createdAt",
];
/// Keys whose numbers are measured durations (Grok's `elapsedMs`,
/// `apiDurationMs`, `elapsed_ms` in its `_x.ai/*` notifications and `_meta`).
const DURATION_KEYS: &[&str] = &[
    "elapsedMs",
    "elapsed_ms",
    "apiDurationMs",
    "durationMs",
    "duration_ms",
    // Claude Code's result and stream events
    "duration_api_ms",
    "ttft_ms",
];
/// HTTP headers that vary per run.
const VOLATILE_HEADERS: &[&str] = &["date", "content-length", "mcp-session-id", "x-request-id"];

/// Diff lines shown per leg.
const MAX_DIFF_LINES: usize = 120;

/// First-seen labels for one leg.
#[derive(Default)]
struct Labels {
    seen: HashMap<String, String>,
    counts: HashMap<&'static str, usize>,
    /// Unnumbered labels (`<uuid>`) for legs compared as multisets, where
    /// first-seen order is itself a race.
    unnumbered: bool,
}

impl Labels {
    fn label(&mut self, kind: &'static str, value: &str) -> String {
        if self.unnumbered {
            return format!("<{kind}>");
        }
        if let Some(l) = self.seen.get(value) {
            return l.clone();
        }
        let n = self.counts.entry(kind).or_default();
        *n += 1;
        let label = format!("<{kind} {n}>");
        self.seen.insert(value.to_string(), label.clone());
        label
    }

    fn text(&mut self, s: &str) -> String {
        let s = UUID.replace_all(s, |c: &regex::Captures| {
            self.label("uuid", &c[0].to_ascii_lowercase())
        });
        let s = TIMESTAMP.replace_all(&s, "<timestamp>");
        let s = DATE.replace_all(&s, "<date>");
        DURATION.replace_all(&s, "<duration>").into_owned()
    }

    fn value(&mut self, key: Option<&str>, v: &Value) -> Value {
        match v {
            Value::String(s) => {
                if let Some(k) = key
                    && ID_KEYS.contains(&k)
                    && !s.is_empty()
                {
                    let kind = match k {
                        "sessionId" | "session_id" => "session",
                        "toolCallId" => "tool-call",
                        "progressToken" => "progress",
                        _ => "id",
                    };
                    return Value::String(self.label(kind, s));
                }
                if ID_PREFIXES
                    .iter()
                    .any(|p| s.starts_with(p) && s.len() > p.len())
                    && !s.contains(' ')
                {
                    return Value::String(self.label("id", s));
                }
                // A string holding JSON (e.g. tool arguments) is normalised inside.
                if (s.starts_with('{') || s.starts_with('['))
                    && s.len() > 1
                    && let Ok(inner) = serde_json::from_str::<Value>(s)
                {
                    return Value::String(self.value(None, &inner).to_string());
                }
                Value::String(self.text(s))
            }
            Value::Number(n) => {
                if key.is_some_and(|k| DURATION_KEYS.contains(&k)) {
                    return Value::String("<duration>".into());
                }
                if key.is_some_and(|k| TIME_KEYS.contains(&k))
                    || (key == Some("progressToken"))
                    || n.as_u64().is_some_and(|x| EPOCH.is_match(&x.to_string()))
                {
                    return Value::String("<time>".into());
                }
                v.clone()
            }
            Value::Array(items) => {
                Value::Array(items.iter().map(|i| self.value(None, i)).collect())
            }
            Value::Object(map) => {
                // Key order is not meaningful (codex serialises some maps
                // from hash maps, in a different order every run): sort.
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), self.value(Some(k), &map[k])))
                        .collect(),
                )
            }
            _ => v.clone(),
        }
    }

    /// A raw payload: JSON, SSE text (each `data:` line normalised), or text.
    fn raw(&mut self, raw: &str) -> String {
        if let Ok(v) = serde_json::from_str::<Value>(raw)
            && (v.is_object() || v.is_array())
        {
            return pretty(&self.value(None, &v));
        }
        if raw.contains("data:") {
            return raw
                .lines()
                .map(|line| match line.strip_prefix("data:") {
                    Some(data) => match serde_json::from_str::<Value>(data.trim()) {
                        Ok(v) => format!("data: {}", pretty(&self.value(None, &v))),
                        Err(_) => self.text(line),
                    },
                    None => self.text(line),
                })
                .collect::<Vec<_>>()
                .join("\n");
        }
        self.text(raw)
    }
}

/// Multi-line JSON so a diff points at the field that changed; long
/// strings are split at their newlines for the same reason.
fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v)
        .unwrap_or_default()
        .replace("\\n", "\\n\n        ")
}

/// A notification (no `id`) of an extension method (`_`-prefixed, such as
/// Grok's `_x.ai/mcp/server_status`).
fn is_extension_notification(raw: &str) -> bool {
    serde_json::from_str::<Value>(raw).is_ok_and(|v| {
        v.get("id").is_none()
            && v.get("method")
                .and_then(Value::as_str)
                .is_some_and(|m| m.starts_with('_'))
    })
}

/// A recording as comparable text, one block per leg (ACP per process).
pub fn normalise(rec: &Recording) -> BTreeMap<String, Vec<String>> {
    let mut legs: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut labels: HashMap<Leg, Labels> = HashMap::new();
    legs.insert("header".into(), header_lines(&rec.header));
    for e in &rec.events {
        let Some(key) = leg_key(e) else { continue };
        let l = labels.entry(e.leg).or_insert_with(|| Labels {
            unnumbered: e.leg != Leg::Acp,
            ..Labels::default()
        });
        let dir = match e.dir {
            Dir::ToAgent => "->",
            Dir::FromAgent => "<-",
            Dir::Request => "req",
            Dir::Response => "resp",
            _ => "?",
        };
        let mut line = format!("{dir} {}", l.raw(&e.raw));
        if let Some(http) = &e.http {
            line.push('\n');
            line.push_str(&http_line(l, http));
        }
        legs.entry(key).or_default().push(line);
    }
    // Concurrent HTTP exchanges (title generation beside a turn, a second MCP
    // session beside the first) arrive in any order and sometimes not at all
    // before the agent ends: compare the sets of distinct exchanges.
    for key in ["mcp", "model"] {
        if let Some(lines) = legs.get_mut(key) {
            lines.sort();
            lines.dedup();
        }
    }
    // An agent's extension notifications (`_x.ai/*`: MCP progress, server
    // status, queue changes) race with its own MCP connection and the turn;
    // the bridge skips them. Compare them as a multiset (sorted, repeats
    // kept), the rest of the ACP leg in order.
    for (key, lines) in legs.iter_mut() {
        if key.ends_with("extension notifications") {
            lines.sort();
        }
    }
    legs.insert(
        "trailer".into(),
        vec![match &rec.trailer {
            Some(t) => format!("outcome {}, {}", t.outcome.as_str(), t.exit.describe()),
            None => "truncated (no trailer)".into(),
        }],
    );
    legs
}

/// The header's lines that say which run this was.
fn header_lines(h: &Header) -> Vec<String> {
    vec![
        format!("agent {} package {}", h.agent, h.package),
        format!("agent_info {}", h.agent_info),
        // the scenario by name, not by hash: hashes of one scenario may
        // differ in judge-only tables or in how they are taken
        // (`Scenario::changed_since`), and a change that matters shows
        // in the frames
        format!("scenario {}", h.scenario),
        format!("model_mode {} isolation {}", h.model_mode, h.isolation),
        format!(
            "argv {}",
            serde_json::to_string(&h.argv).unwrap_or_default()
        ),
    ]
}

/// The block an event belongs to; stderr and the harness's notes are not
/// compared.
fn leg_key(e: &Event) -> Option<String> {
    let side = if e.dir == Dir::ToAgent {
        "to_agent"
    } else {
        "from_agent"
    };
    Some(match e.leg {
        Leg::Acp if e.dir == Dir::FromAgent && is_extension_notification(&e.raw) => {
            format!("acp proc {} from_agent extension notifications", e.proc)
        }
        Leg::Acp => format!("acp proc {} {side}", e.proc),
        Leg::Mcp => "mcp".into(),
        Leg::Model => "model".into(),
        // A stream-json agent (Claude Code): its lines are the reference.
        Leg::StreamJson => format!("stream-json proc {} {side}", e.proc),
        _ => return None,
    })
}

/// An HTTP exchange's method, path, status and the headers that are not
/// volatile, with the run's labels.
fn http_line(l: &mut Labels, http: &Http) -> String {
    let headers: BTreeMap<_, _> = http
        .headers
        .iter()
        .filter(|(k, _)| !VOLATILE_HEADERS.contains(&k.as_str()))
        .map(|(k, v)| {
            let v = if k == "user-agent" {
                PLATFORM.replace_all(v, "(<platform>)").into_owned()
            } else {
                v.clone()
            };
            (k.clone(), l.raw(&v))
        })
        .collect();
    format!(
        "   http {} {} {} {}",
        http.method.as_deref().unwrap_or(""),
        http.path.as_deref().map(|p| l.text(p)).unwrap_or_default(),
        http.status.map(|s| s.to_string()).unwrap_or_default(),
        serde_json::to_string(&headers).unwrap_or_default()
    )
}

/// Legs whose differences are reported but do not fail a comparison: their
/// order and repetition are races between the agent and our servers.
const INFORMATIONAL_LEGS: &[&str] = &["mcp", "model"];

/// The outcome of comparing two recordings.
#[derive(Debug, Default, PartialEq)]
pub struct Comparison {
    /// Differences in the header, the ACP legs or the trailer: a failure.
    pub failing: String,
    /// Differences in the racy HTTP legs: shown, never a failure.
    pub informational: String,
}

impl Comparison {
    pub fn matches(&self) -> bool {
        self.failing.is_empty()
    }
}

/// Compares `expected` (committed) with `actual` (fresh) leg by leg.
pub fn compare(expected: &Recording, actual: &Recording) -> Comparison {
    let a = normalise(expected);
    let b = normalise(actual);
    let mut out = Comparison::default();
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for key in keys {
        let empty = Vec::new();
        let left = a.get(key).unwrap_or(&empty);
        let right = b.get(key).unwrap_or(&empty);
        if left == right {
            continue;
        }
        let report = if INFORMATIONAL_LEGS.contains(&key.as_str()) {
            &mut out.informational
        } else {
            &mut out.failing
        };
        let first = left
            .iter()
            .zip(right.iter())
            .position(|(x, y)| x != y)
            .unwrap_or(left.len().min(right.len()));
        let _ = writeln!(
            report,
            "== leg {key}: {} vs {} events, first difference at event {} of the leg",
            left.len(),
            right.len(),
            first + 1
        );
        let lt = left.join("\n") + "\n";
        let rt = right.join("\n") + "\n";
        let diff = similar::TextDiff::from_lines(&lt, &rt);
        let text = diff
            .unified_diff()
            .context_radius(3)
            .header("committed", "re-recorded")
            .to_string();
        let lines: Vec<&str> = text.lines().collect();
        for l in lines.iter().take(MAX_DIFF_LINES) {
            let _ = writeln!(report, "{l}");
        }
        if lines.len() > MAX_DIFF_LINES {
            let _ = writeln!(
                report,
                "... ({} more diff lines)",
                lines.len() - MAX_DIFF_LINES
            );
        }
    }
    out
}

pub fn compare_files(expected: &Path, actual: &Path) -> Result<Comparison, RecordingError> {
    let a = recording::read(expected)?;
    let b = recording::read(actual)?;
    Ok(compare(&a, &b))
}

/// `--mode all`: what changed from the recording at `previous` (still in
/// place) to the new one at `new` (not yet renamed over it, shown as
/// `shown`), by `--check`'s rules.
pub fn report_rerecord(previous: &Path, new: &Path, shown: &Path) {
    let path = shown;
    match compare_files(previous, new) {
        Ok(c) if c.matches() && c.informational.is_empty() => {
            eprintln!(
                "[record] {}: re-recorded, unchanged after normalisation",
                path.display()
            )
        }
        Ok(c) if c.matches() => eprintln!(
            "[record] {}: re-recorded; only the racy HTTP legs changed:\n{}",
            path.display(),
            c.informational
        ),
        Ok(c) => eprintln!(
            "[record] {}: re-recorded, and it changed after normalisation:\n{}{}",
            path.display(),
            c.failing,
            c.informational
        ),
        Err(e) => eprintln!(
            "[record] {}: re-recorded; cannot compare with the previous one: {e}",
            path.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::recording::parse_str;

    fn rec(events: &[(&str, &str, u32, &str)]) -> Recording {
        let mut text = String::from(
            r#"{"type":"header","format":1,"agent":"a","agent_info":{"version":"1"},"package":"p@1","scenario":"s","model_mode":"stub","harness_version":"0","date":"2026-11-29","isolation":"netns-loopback"}"#,
        );
        text.push('\n');
        for (i, (leg, dir, proc, raw)) in events.iter().enumerate() {
            let line = serde_json::json!({"type":"event","seq":i+1,"ms":i*7,"leg":leg,"dir":dir,"proc":proc,"raw":raw});
            text.push_str(&line.to_string());
            text.push('\n');
        }
        text.push_str(
            r#"{"type":"trailer","seq":99,"ms":1,"outcome":"ok","exit":{"code":0,"signal":null}}"#,
        );
        parse_str(&text, Path::new("t.jsonl")).unwrap()
    }

    #[test]
    fn randomised_ids_dates_and_interleaving_do_not_count_as_differences() {
        let a = rec(&[
            (
                "acp",
                "from_agent",
                1,
                r#"{"result":{"sessionId":"019abc-1"}}"#,
            ),
            (
                "model",
                "request",
                0,
                r#"{"prompt_cache_key":"0b7d0b52-3f1a-4a58-9c33-0d6b9f0e1a11","x":"today is 2026-11-29"}"#,
            ),
            (
                "acp",
                "from_agent",
                1,
                r#"{"params":{"sessionId":"019abc-1","update":{"toolCallId":"tc-a"}}}"#,
            ),
            (
                "stderr",
                "from_agent",
                1,
                "2026-11-29T10:00:00Z INFO thread 7",
            ),
        ]);
        let b = rec(&[
            (
                "model",
                "request",
                0,
                r#"{"prompt_cache_key":"5e1f2a3b-1111-4222-8333-944455556666","x":"today is 2027-01-02"}"#,
            ),
            (
                "acp",
                "from_agent",
                1,
                r#"{"result":{"sessionId":"019fff-9"}}"#,
            ),
            (
                "acp",
                "from_agent",
                1,
                r#"{"params":{"sessionId":"019fff-9","update":{"toolCallId":"tc-b"}}}"#,
            ),
            ("stderr", "from_agent", 1, "other log"),
        ]);
        assert_eq!(compare(&a, &b), Comparison::default());
    }

    #[test]
    fn grok_durations_and_the_order_of_extension_notifications_do_not_count() {
        let status =
            r#"{"jsonrpc":"2.0","method":"_x.ai/mcp/server_status","params":{"status":"ready"}}"#;
        let a = rec(&[
            ("acp", "from_agent", 1, status),
            (
                "acp",
                "from_agent",
                1,
                r#"{"jsonrpc":"2.0","method":"_x.ai/mcp_initialized","params":{"elapsedMs":119}}"#,
            ),
            (
                "acp",
                "from_agent",
                1,
                r#"{"jsonrpc":"2.0","id":2,"result":{"_meta":{"apiDurationMs":6}}}"#,
            ),
        ]);
        let b = rec(&[
            (
                "acp",
                "from_agent",
                1,
                r#"{"jsonrpc":"2.0","method":"_x.ai/mcp_initialized","params":{"elapsedMs":13}}"#,
            ),
            (
                "acp",
                "from_agent",
                1,
                r#"{"jsonrpc":"2.0","id":2,"result":{"_meta":{"apiDurationMs":9}}}"#,
            ),
            ("acp", "from_agent", 1, status),
        ]);
        assert_eq!(compare(&a, &b), Comparison::default());
        // A missing extension notification still counts.
        let c = rec(&[
            (
                "acp",
                "from_agent",
                1,
                r#"{"jsonrpc":"2.0","method":"_x.ai/mcp_initialized","params":{"elapsedMs":13}}"#,
            ),
            (
                "acp",
                "from_agent",
                1,
                r#"{"jsonrpc":"2.0","id":2,"result":{"_meta":{"apiDurationMs":9}}}"#,
            ),
        ]);
        assert!(!compare(&a, &c).matches());
    }

    /// Each pair differs in one way that must be reported, naming the leg.
    #[test]
    fn real_differences_are_reported_with_their_leg() {
        let base = rec(&[
            (
                "acp",
                "from_agent",
                1,
                r#"{"params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"text":"hi"}}}}"#,
            ),
            ("acp", "from_agent", 2, r#"{"params":{"sessionId":"s1"}}"#),
        ]);
        let cases = [
            (
                rec(&[
                    (
                        "acp",
                        "from_agent",
                        1,
                        r#"{"params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"text":"bye"}}}}"#,
                    ),
                    ("acp", "from_agent", 2, r#"{"params":{"sessionId":"s1"}}"#),
                ]),
                "== leg acp proc 1 from_agent",
            ),
            (
                // A second process that answers for another session.
                rec(&[
                    (
                        "acp",
                        "from_agent",
                        1,
                        r#"{"params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"text":"hi"}}}}"#,
                    ),
                    ("acp", "from_agent", 2, r#"{"params":{"sessionId":"s2"}}"#),
                ]),
                "== leg acp proc 2 from_agent",
            ),
            (
                rec(&[(
                    "acp",
                    "from_agent",
                    1,
                    r#"{"params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"text":"hi"}}}}"#,
                )]),
                "== leg acp proc 2 from_agent: 1 vs 0 events",
            ),
        ];
        for (other, expected) in cases {
            let report = compare(&base, &other);
            assert!(report.failing.contains(expected), "{report:?}");
        }
    }
}
