//! Drift reports: a structural comparison of what an agent sent in two sets
//! of recordings (usually two versions of one agent over the same
//! scenarios), printed as added / removed / changed with one example frame
//! each, next to the diff of what the bridge made of them for the panel.
//!
//! Only the shape is compared (which methods, update kinds, fields, enum
//! values, capability values, tool-call shapes), never ids, texts or timing,
//! so two runs of one version show no drift. Frames no schema knows are
//! observed like any other: unknown is exactly what a drift report is for.

mod protocol;
pub use protocol::{ProtocolDrift, ProtocolMove};
mod render;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::corpus::recording::{self, Dir, Leg, Recording};
use crate::judging::judge::{self, Corpus};
use crate::judging::replay::normalise;

/// What kind of structural fact an observation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// A method the agent called or notified, or a response it gave.
    Method,
    /// An extension method (`_vendor/...`).
    Extension,
    /// A `session/update` kind.
    UpdateKind,
    /// A field present in a message type (`<message> <path>`).
    Field,
    /// The values an enum-like field took (kinds, statuses, option ids...).
    Enum,
    /// A capability value the agent advertised in its initialize answer.
    Capability,
    /// The shape of a tool call: title form, rawInput/rawOutput, content variants.
    ToolCall,
}

impl Category {
    pub fn label(self) -> &'static str {
        match self {
            Category::Method => "method",
            Category::Extension => "extension method",
            Category::UpdateKind => "sessionUpdate kind",
            Category::Field => "field",
            Category::Enum => "enum value",
            Category::Capability => "capability",
            Category::ToolCall => "tool-call shape",
        }
    }

    /// Presence categories compare keys only; the others compare the values
    /// seen under each key.
    fn has_values(self) -> bool {
        matches!(
            self,
            Category::Enum | Category::Capability | Category::ToolCall
        )
    }
}

/// One frame standing for an observation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Example {
    /// `<agent> <version> <scenario> seq <n>`.
    pub source: String,
    /// The frame, base64 digested and shortened.
    pub frame: String,
}

/// Everything observed in one side's recordings: category and key, then each
/// value seen (empty for presence) with its first example.
#[derive(Debug, Clone, Default)]
pub struct Shape {
    pub seen: BTreeMap<(Category, String), BTreeMap<String, Example>>,
    /// `<agent> <version>` of each recording observed, for the headline.
    pub sources: BTreeSet<String>,
}

/// Leaf keys whose string values are enum-like and worth listing.
const ENUM_KEYS: &[&str] = &[
    "sessionUpdate",
    "kind",
    "status",
    "optionId",
    "type",
    "stopReason",
    "mimeType",
    "role",
    "outcome",
    "currentModeId",
    "modeId",
];
/// Longest string still taken as an enum value.
const ENUM_MAX: usize = 48;
/// How deep field paths and shapes go.
const MAX_DEPTH: usize = 7;
/// Longest example frame shown.
const EXAMPLE_MAX: usize = 360;

impl Shape {
    /// Observes every agent frame of `recording` (all agent processes).
    pub fn observe(&mut self, recording: &Recording) {
        let h = &recording.header;
        let version = h.agent_version().unwrap_or("?");
        self.sources.insert(format!("{} {}", h.agent, version));
        let mut requests: HashMap<String, String> = HashMap::new();
        for e in recording.leg(Leg::Acp) {
            let Ok(msg) = serde_json::from_str::<Value>(&e.raw) else {
                if e.dir == Dir::FromAgent {
                    let ex = self.example(h.agent.as_str(), version, &h.scenario, e.seq, &e.raw);
                    self.add(Category::Method, "unparsable line", "", &ex);
                }
                continue;
            };
            let id_key = |m: &Value| format!("{}:{}", e.proc.max(1), m["id"]);
            match e.dir {
                Dir::ToAgent => {
                    if let Some(method) = msg["method"].as_str()
                        && msg.get("id").is_some()
                    {
                        requests.insert(id_key(&msg), method.to_string());
                    }
                }
                Dir::FromAgent => {
                    let ex = self.example(h.agent.as_str(), version, &h.scenario, e.seq, &e.raw);
                    let answered = requests.get(&id_key(&msg)).cloned();
                    self.observe_frame(&msg, answered.as_deref(), &ex);
                }
                _ => {}
            }
        }
    }

    fn example(&self, agent: &str, version: &str, scenario: &str, seq: u64, raw: &str) -> Example {
        Example {
            source: format!("{agent} {version} {scenario} seq {seq}"),
            frame: shorten(raw),
        }
    }

    fn add(&mut self, cat: Category, key: &str, value: &str, ex: &Example) {
        self.seen
            .entry((cat, key.to_string()))
            .or_default()
            .entry(value.to_string())
            .or_insert_with(|| ex.clone());
    }

    fn observe_frame(&mut self, msg: &Value, answered: Option<&str>, ex: &Example) {
        let (message, body) = match (msg["method"].as_str(), msg.get("id").is_some()) {
            (Some(method), has_id) => {
                let cat = if method.starts_with('_') {
                    Category::Extension
                } else {
                    Category::Method
                };
                self.add(
                    cat,
                    &format!(
                        "{} {method}",
                        if has_id { "request" } else { "notification" }
                    ),
                    "",
                    ex,
                );
                let mut message = method.to_string();
                if let Some(kind) = msg["params"]["update"]["sessionUpdate"].as_str() {
                    self.add(Category::UpdateKind, kind, "", ex);
                    message = format!("{method}[{kind}]");
                }
                (format!("{message} params"), &msg["params"])
            }
            (None, _) => {
                let method = answered.unwrap_or("unknown request");
                if msg.get("error").is_some() {
                    self.add(
                        Category::Method,
                        &format!("error response to {method}"),
                        "",
                        ex,
                    );
                    (format!("{method} error"), &msg["error"])
                } else {
                    self.add(Category::Method, &format!("response to {method}"), "", ex);
                    (format!("{method} result"), &msg["result"])
                }
            }
        };
        self.observe_fields(&message, body, ex);
        self.observe_tool_call(&msg["params"]["update"], ex);
    }

    /// Every field path of the message's body, enum-like values of known
    /// enum keys, and the agent's capabilities from its initialize result.
    fn observe_fields(&mut self, message: &str, body: &Value, ex: &Example) {
        let mut leaves = Vec::new();
        walk(body, String::new(), 0, &mut leaves);
        for (path, leaf) in &leaves {
            self.add(Category::Field, &format!("{message} {path}"), "", ex);
            let last = path.rsplit('/').next().unwrap_or("");
            if let Value::String(s) = leaf
                && ENUM_KEYS.contains(&last)
                && s.len() <= ENUM_MAX
                && !normalise::is_uuid(s)
            {
                self.add(Category::Enum, &format!("{message} {path}"), s, ex);
            }
            if message == "initialize result"
                && (path.starts_with("agentCapabilities/")
                    || path.starts_with("authMethods/")
                    || path == "protocolVersion")
                && !path.ends_with("/description")
                && !leaf.is_object()
            {
                self.add(Category::Capability, path, &leaf.to_string(), ex);
            }
        }
    }

    /// A tool call's shapes: its title's form, its raw input's and output's
    /// shapes, and its content's kinds.
    fn observe_tool_call(&mut self, update: &Value, ex: &Example) {
        if let Some(kind @ ("tool_call" | "tool_call_update")) = update["sessionUpdate"].as_str() {
            if let Some(title) = update["title"].as_str() {
                self.add(
                    Category::ToolCall,
                    &format!("{kind} title form"),
                    &title_form(title),
                    ex,
                );
            }
            for field in ["rawInput", "rawOutput"] {
                if let Some(v) = update.get(field) {
                    self.add(
                        Category::ToolCall,
                        &format!("{kind} {field}"),
                        &shape_of(v, 0),
                        ex,
                    );
                }
            }
            if let Some(items) = update["content"].as_array() {
                let variants: BTreeSet<String> = items
                    .iter()
                    .map(
                        |i| match (i["type"].as_str(), i["content"]["type"].as_str()) {
                            (Some(t), Some(inner)) => format!("{t}/{inner}"),
                            (Some(t), None) => t.to_string(),
                            _ => "?".into(),
                        },
                    )
                    .collect();
                let value = if variants.is_empty() {
                    "(empty)".into()
                } else {
                    variants.into_iter().collect::<Vec<_>>().join(" + ")
                };
                self.add(Category::ToolCall, &format!("{kind} content"), &value, ex);
            }
        }
    }
}

/// Leaf paths of a JSON value: objects by key, arrays as `[]`; keys that
/// look like data (ids, paths) as `*`, so a map keyed by ids is one field.
fn walk<'a>(v: &'a Value, path: String, depth: usize, out: &mut Vec<(String, &'a Value)>) {
    match v {
        Value::Object(map) if depth < MAX_DEPTH && !map.is_empty() => {
            for (k, child) in map {
                let seg = if normalise::is_uuid(k) || k.contains('/') || k.contains(' ') {
                    "*"
                } else {
                    k.as_str()
                };
                let p = if path.is_empty() {
                    seg.to_string()
                } else {
                    format!("{path}/{seg}")
                };
                walk(child, p, depth + 1, out);
            }
        }
        Value::Array(items) if depth < MAX_DEPTH && !items.is_empty() => {
            for child in items {
                walk(child, format!("{path}/[]"), depth + 1, out);
            }
        }
        _ => {
            if !path.is_empty() && !out.iter().any(|(p, l)| *p == path && *l == v) {
                out.push((path, v));
            }
        }
    }
}

/// A compact type shape: `{content:[{text:str,type:str}],isError:bool}`.
pub fn shape_of(v: &Value, depth: usize) -> String {
    if depth >= 6 {
        return "…".into();
    }
    match v {
        Value::Null => "null".into(),
        Value::Bool(_) => "bool".into(),
        Value::Number(_) => "num".into(),
        Value::String(_) => "str".into(),
        Value::Array(items) => {
            let kinds: BTreeSet<String> = items.iter().map(|i| shape_of(i, depth + 1)).collect();
            format!("[{}]", kinds.into_iter().collect::<Vec<_>>().join("|"))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| format!("{k}:{}", shape_of(&map[*k], depth + 1)))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
    }
}

/// A title with the unity-ops tool and server names abstracted, so the
/// form (`mcp__unity-ops__uap_ping`, `Tool: unity-ops/uap_ping`) compares.
fn title_form(title: &str) -> String {
    let re = regex::Regex::new(r"uap_[a-z_]+").expect("static regex");
    let t = re.replace_all(title, "{tool}");
    t.replace("unity-ops", "{server}")
        .replace("unity_ops", "{server}")
}

fn shorten(raw: &str) -> String {
    acp_bridge::shorten::shorten(&normalise::digest_base64_runs(raw), EXAMPLE_MAX)
}

/// One difference between two shapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Only in B: the values seen (for presence: one empty value).
    Added {
        category: Category,
        key: String,
        values: Vec<(String, Example)>,
    },
    /// Only in A.
    Removed {
        category: Category,
        key: String,
        values: Vec<(String, Example)>,
    },
    /// In both, with different values: those only A had, those only B had.
    Changed {
        category: Category,
        key: String,
        removed: Vec<(String, Example)>,
        added: Vec<(String, Example)>,
    },
}

impl Change {
    pub fn category(&self) -> Category {
        match self {
            Change::Added { category, .. }
            | Change::Removed { category, .. }
            | Change::Changed { category, .. } => *category,
        }
    }
    pub fn key(&self) -> &str {
        match self {
            Change::Added { key, .. }
            | Change::Removed { key, .. }
            | Change::Changed { key, .. } => key,
        }
    }
}

/// The structural changes from `a` to `b`, by category then key.
pub fn compare(a: &Shape, b: &Shape) -> Vec<Change> {
    let keys: BTreeSet<&(Category, String)> = a.seen.keys().chain(b.seen.keys()).collect();
    let mut out = Vec::new();
    for k in keys {
        let (category, key) = (k.0, k.1.clone());
        let list = |m: &BTreeMap<String, Example>,
                    other: Option<&BTreeMap<String, Example>>|
         -> Vec<(String, Example)> {
            m.iter()
                .filter(|(v, _)| other.is_none_or(|o| !o.contains_key(*v)))
                .map(|(v, e)| (v.clone(), e.clone()))
                .collect()
        };
        match (a.seen.get(k), b.seen.get(k)) {
            (Some(va), None) => out.push(Change::Removed {
                category,
                key,
                values: list(va, None),
            }),
            (None, Some(vb)) => out.push(Change::Added {
                category,
                key,
                values: list(vb, None),
            }),
            (Some(va), Some(vb)) if category.has_values() => {
                let removed = list(va, Some(vb));
                let added = list(vb, Some(va));
                if !removed.is_empty() || !added.is_empty() {
                    out.push(Change::Changed {
                        category,
                        key,
                        removed,
                        added,
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// Both sides of a drift report: the recordings of each side, paired by
/// scenario.
#[derive(Debug, Clone)]
pub struct Sides {
    pub a: Vec<PathBuf>,
    pub b: Vec<PathBuf>,
}

/// The recordings a side names: a file, or the `*.jsonl` of a directory,
/// keeping only `scenarios` when given.
pub fn side(path: &Path, scenarios: &[String]) -> Result<Vec<PathBuf>, DriftError> {
    // the listing's error names the path already
    let all = judge::list_recordings(path)?;
    let keep: Vec<PathBuf> = all
        .into_iter()
        .filter(|p| {
            scenarios.is_empty()
                || p.file_stem()
                    .and_then(|s| s.to_str())
                    .is_some_and(|s| scenarios.iter().any(|x| x == s))
        })
        .collect();
    if keep.is_empty() {
        return Err(DriftError::Side {
            path: path.to_path_buf(),
            why: "no recordings (for the scenarios asked) there".into(),
        });
    }
    Ok(keep)
}

#[derive(Debug, thiserror::Error)]
pub enum DriftError {
    #[error("{}: {why}", path.display())]
    Side { path: PathBuf, why: String },
    #[error(transparent)]
    List(#[from] judge::CheckError),
    #[error(transparent)]
    Recording(#[from] Box<recording::RecordingError>),
}

/// A finished report.
#[derive(Debug, Clone)]
pub struct Report {
    pub title: String,
    pub a: Shape,
    pub b: Shape,
    pub changes: Vec<Change>,
    /// Per scenario present on both sides: the unified diff of the bridge's
    /// panel output (empty when the same), or why it could not be replayed.
    pub bridge_diffs: Vec<(String, String)>,
    /// The agent's ACP schema violations that only one side shows.
    pub schema: SchemaDrift,
    /// The ACP protocol versions the two sides negotiated, and the schemas
    /// their recorders validated against.
    pub protocol: ProtocolDrift,
}

/// A violation of the ACP schema: (method, JSON pointer, the schema's
/// complaint), with the number of agent frames that show it.
pub type SchemaViolation = ((String, String, String), usize);

/// Agent-frame violations of the ACP schema that appear or disappear from
/// one side to the other (those both sides show are not drift).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SchemaDrift {
    pub appeared: Vec<SchemaViolation>,
    pub disappeared: Vec<SchemaViolation>,
    /// Why the frames could not be checked (the vendored schema did not load).
    pub unchecked: Option<String>,
}

impl SchemaDrift {
    fn between(a: &[&Recording], b: &[&Recording]) -> SchemaDrift {
        use crate::judging::acp_schema::{AcpSchema, RecordingConformance, Tally};
        // each recording against the schema of the revision it negotiated
        let tally = |recs: &[&Recording]| -> Result<_, String> {
            let mut t = Tally::default();
            for r in recs {
                let schema = AcpSchema::for_protocol(r.header.protocol_version)
                    .map_err(|e| e.to_string())?;
                t.merge(&RecordingConformance::of_recording(schema, r).agent);
            }
            Ok(t.violations)
        };
        let (va, vb) = match (tally(a), tally(b)) {
            (Ok(va), Ok(vb)) => (va, vb),
            (Err(e), _) | (_, Err(e)) => {
                return SchemaDrift {
                    unchecked: Some(e),
                    ..SchemaDrift::default()
                };
            }
        };
        let only = |x: &BTreeMap<(String, String, String), usize>,
                    y: &BTreeMap<(String, String, String), usize>| {
            x.iter()
                .filter(|(k, _)| !y.contains_key(*k))
                .map(|(k, n)| (k.clone(), *n))
                .collect()
        };
        SchemaDrift {
            appeared: only(&vb, &va),
            disappeared: only(&va, &vb),
            unchecked: None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.appeared.is_empty() && self.disappeared.is_empty()
    }
}

/// Builds the report: observes both sides and replays the scenarios they
/// share through the current bridge (the corpus's scenarios).
pub fn report(sides: &Sides, corpus: &Corpus) -> Result<Report, DriftError> {
    report_with(sides, |name, recording| {
        corpus
            .scenario(name)
            .map(|sc| judge::replay_with(recording, &sc).transcript.render())
            .map_err(|e| format!("cannot replay: its scenario: {e}"))
    })
}

/// [`report`] with the bridge's transcript of each shared scenario's
/// recording from `transcript(scenario, recording)` (a caller that judged
/// the recordings already passes what it has, and nothing is replayed twice).
pub fn report_with(
    sides: &Sides,
    mut transcript: impl FnMut(&str, &Recording) -> Result<String, String>,
) -> Result<Report, DriftError> {
    let mut a = Shape::default();
    let mut b = Shape::default();
    let mut recs_a = BTreeMap::new();
    let mut recs_b = BTreeMap::new();
    for (paths, shape, recs) in [
        (&sides.a, &mut a, &mut recs_a),
        (&sides.b, &mut b, &mut recs_b),
    ] {
        for p in paths {
            let r = recording::read(p).map_err(Box::new)?;
            shape.observe(&r);
            recs.insert(r.header.scenario.clone(), r);
        }
    }
    let changes = compare(&a, &b);
    let schema = SchemaDrift::between(
        &recs_a.values().collect::<Vec<_>>(),
        &recs_b.values().collect::<Vec<_>>(),
    );
    let protocol = ProtocolDrift::between(
        &recs_a.values().collect::<Vec<_>>(),
        &recs_b.values().collect::<Vec<_>>(),
    );
    let mut bridge_diffs = Vec::new();
    for (name, ra) in &recs_a {
        let Some(rb) = recs_b.get(name) else { continue };
        let diff = match (transcript(name, ra), transcript(name, rb)) {
            (Ok(ta), Ok(tb)) => {
                let (pa, pb) = (panel_output(&ta), panel_output(&tb));
                if pa == pb {
                    String::new()
                } else {
                    similar::TextDiff::from_lines(&pa, &pb)
                        .unified_diff()
                        .context_radius(1)
                        .header(&side_label(&a), &side_label(&b))
                        .to_string()
                }
            }
            (Err(e), _) | (_, Err(e)) => format!("{e}\n"),
        };
        bridge_diffs.push((name.clone(), diff));
    }
    let title = format!("{} -> {}", side_label(&a), side_label(&b));
    Ok(Report {
        title,
        a,
        b,
        changes,
        bridge_diffs,
        schema,
        protocol,
    })
}

fn side_label(s: &Shape) -> String {
    s.sources.iter().cloned().collect::<Vec<_>>().join(", ")
}

/// The lines of a rendered transcript the panel sees (and divergences).
/// Running labels and timings are blanked (`<uuid>`, `"duration_ms":N`), so
/// one extra line early on does not make every later line differ.
pub fn panel_output(transcript: &str) -> String {
    let panel = PanelLines::new();
    transcript
        .lines()
        .filter_map(|l| panel.line(l))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// [`panel_output`] one transcript line at a time.
pub struct PanelLines {
    labels: regex::Regex,
    timings: regex::Regex,
}

impl PanelLines {
    pub fn new() -> PanelLines {
        PanelLines {
            labels: regex::Regex::new(r"<(uuid|tool-call|session) \d+>").expect("static regex"),
            timings: regex::Regex::new(r#""(duration_ms|duration_api_ms)":\d+"#)
                .expect("static regex"),
        }
    }

    /// The line as [`panel_output`] has it (`None`: the panel does not see it).
    pub fn line(&self, l: &str) -> Option<String> {
        if !(l.starts_with("bridge>panel ") || l.starts_with("!! ")) {
            return None;
        }
        let l = self.labels.replace_all(l, "<$1>");
        Some(self.timings.replace_all(&l, "\"$1\":N").into_owned())
    }
}

impl Default for PanelLines {
    fn default() -> PanelLines {
        PanelLines::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shape_of_frames(frames: &[Value]) -> Shape {
        let mut s = Shape::default();
        let ex = Example {
            source: "t".into(),
            frame: "f".into(),
        };
        for f in frames {
            s.observe_frame(f, Some("initialize"), &ex);
        }
        s
    }

    #[test]
    fn a_changed_option_id_a_new_update_kind_and_a_wrapped_raw_output_are_reported() {
        let old = shape_of_frames(&[
            json!({"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"options":[{"optionId":"decline","kind":"reject_once"}]}}),
            json!({"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"tool_call_update","rawOutput":{"content":[{"type":"text","text":"pong"}]}}}}),
        ]);
        let new = shape_of_frames(&[
            json!({"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"options":[{"optionId":"cancel","kind":"reject_once"}]}}),
            json!({"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"tool_call_update","rawOutput":{"result":{"content":[{"type":"text","text":"pong"}]}}}}}),
            json!({"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"usage_update","used":1}}}),
            json!({"jsonrpc":"2.0","method":"_x.ai/hello","params":{}}),
        ]);
        let changes = compare(&old, &new);
        let find = |cat: Category, key: &str| {
            changes
                .iter()
                .find(|c| c.category() == cat && c.key() == key)
                .cloned()
        };
        match find(
            Category::Enum,
            "session/request_permission params options/[]/optionId",
        ) {
            Some(Change::Changed { removed, added, .. }) => {
                assert_eq!(removed[0].0, "decline");
                assert_eq!(added[0].0, "cancel");
            }
            other => panic!("option id change not reported: {other:?}\n{changes:#?}"),
        }
        assert!(matches!(
            find(Category::UpdateKind, "usage_update"),
            Some(Change::Added { .. })
        ));
        assert!(matches!(
            find(Category::Extension, "notification _x.ai/hello"),
            Some(Change::Added { .. })
        ));
        match find(Category::ToolCall, "tool_call_update rawOutput") {
            Some(Change::Changed { removed, added, .. }) => {
                assert_eq!(removed[0].0, "{content:[{text:str,type:str}]}");
                assert_eq!(added[0].0, "{result:{content:[{text:str,type:str}]}}");
            }
            other => panic!("rawOutput change not reported: {other:?}"),
        }
    }

    #[test]
    fn the_same_frames_with_other_ids_and_texts_show_no_drift() {
        let a = shape_of_frames(&[
            json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}),
        ]);
        let b = shape_of_frames(&[
            json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"other words"}}}}),
        ]);
        assert_eq!(compare(&a, &b), Vec::<Change>::new());
    }

    #[test]
    fn titles_compare_by_form() {
        assert_eq!(
            title_form("mcp__unity-ops__uap_ping"),
            "mcp__{server}__{tool}"
        );
        assert_eq!(
            title_form("Tool: unity-ops/uap_screenshot"),
            "Tool: {server}/{tool}"
        );
    }

    #[test]
    fn schema_violations_that_one_side_alone_shows_are_drift() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings/claude-agent-acp");
        let read = |v: &str| recording::read(&root.join(v).join("text-only.jsonl")).unwrap();
        let (old, new) = (read("0.23.1"), read("0.101.0"));
        let forward = SchemaDrift::between(&[&old], &[&new]);
        assert!(forward.appeared.is_empty(), "{forward:?}");
        assert!(
            forward
                .disappeared
                .iter()
                .any(|((m, p, _), n)| m == "session/update"
                    && p == "/params/update/used"
                    && *n > 0),
            "{forward:?}"
        );
        let backward = SchemaDrift::between(&[&new], &[&old]);
        assert_eq!(backward.appeared, forward.disappeared);
        assert!(SchemaDrift::between(&[&old], &[&old]).is_empty());
    }
}
