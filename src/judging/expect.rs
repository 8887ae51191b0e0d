//! Expectations: a scenario's `[[expect]]` entries checked against the
//! bridge's panel output of one replay. They hold whatever the agent version,
//! so a broken one is a bridge bug (or a scenario that asks too much), told
//! with what was expected and what came.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use serde_json::Value;

use crate::corpus::scenario::{ExpectKind, Expectation};
use crate::judging::replay::normalise::ShortDigest;

/// Base64 runs at least this long in text count as pasted image data.
const BASE64_IN_TEXT_MIN: usize = 100;
/// How many offending items a failure shows.
const SHOWN_ITEMS: usize = 5;
/// Longest rendering of one item in a failure.
const ITEM_MAX: usize = 300;

/// One selected piece of panel output: a whole line or one content block.
#[derive(Debug, Clone)]
pub struct Item {
    /// 0-based index of the panel line it came from.
    pub line: usize,
    pub value: Value,
    /// The line's `is_error` for results; the block's for tool results.
    is_error: Option<bool>,
    /// Its place among the items selected, so items decided late (at the
    /// end of the output) are shown in output order.
    order: usize,
}

/// An expectation that did not hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// 1-based line of the `[[expect]]` header in the scenario file; 0 for
    /// an expectation the judge holds every recording to.
    pub line: usize,
    pub expectation: String,
    pub why: String,
    pub expected: String,
    pub came: String,
    /// The offending or selected items, normalised and shortened.
    pub items: Vec<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // line 0: an expectation of the judge's own, in no scenario file
        let from = match self.line {
            0 => "the judge's own".to_owned(),
            n => format!("scenario line {n}"),
        };
        writeln!(
            f,
            "expectation ({from}) {} failed: {}",
            self.expectation, self.why
        )?;
        writeln!(f, "  expected: {}", self.expected)?;
        write!(f, "  came:     {}", self.came)?;
        for item in &self.items {
            write!(f, "\n    {item}")?;
        }
        Ok(())
    }
}

/// Checks every expectation against the panel lines, parsed (`None`: not
/// JSON) as the replay keeps them, so a tool result's image is parsed once;
/// returns the ones that failed.
pub fn evaluate(expectations: &[Expectation], panel_lines: &[Option<Value>]) -> Vec<Failure> {
    let mut evaluation = Evaluation::new(expectations);
    for line in panel_lines {
        evaluation.observe(line.as_ref());
    }
    evaluation.finish()
}

/// The expectations of one replay checked one panel line at a time, as the
/// lines come: each keeps counts and the few items a failure shows, never
/// the lines, so a replay of a million lines is judged in the memory of one.
pub struct Evaluation<'e> {
    expectations: &'e [Expectation],
    /// tool_use id -> tool name, over the lines so far.
    names: HashMap<String, String>,
    states: Vec<State>,
    line: usize,
    order: usize,
}

/// What one expectation has seen so far.
#[derive(Default)]
struct State {
    /// Items that pass the filters.
    matching: Kept,
    /// Items of the kind the filters leave out (the clue to a wrong filter).
    others: Kept,
    /// Per predicate (in [`PREDICATES`] order), matching items that break it.
    bad: [Kept; PREDICATES.len()],
    /// Items whose `tool` filter needs a `tool_use` not seen yet, with their
    /// line's `subtype`: decided at the end, against every tool name.
    waiting: Vec<(Item, Option<String>)>,
}

/// An item as it is selected, borrowed from its line: cloned only to be kept.
struct Seen<'v> {
    line: usize,
    value: &'v Value,
    is_error: Option<bool>,
    order: usize,
}

impl Seen<'_> {
    fn owned(&self) -> Item {
        Item {
            line: self.line,
            value: self.value.clone(),
            is_error: self.is_error,
            order: self.order,
        }
    }
}

/// A count and the first [`SHOWN_ITEMS`] items in output order, kept as
/// they are shown (an item of megabytes is not held to the end).
#[derive(Default)]
struct Kept {
    count: usize,
    /// Each item's order and its rendering ([`show`]).
    shown: Vec<(usize, String)>,
}

impl Kept {
    fn add(&mut self, item: &Seen<'_>) {
        self.count += 1;
        let at = self.shown.partition_point(|(order, _)| *order < item.order);
        if at < SHOWN_ITEMS {
            self.shown
                .insert(at, (item.order, show(item.line, item.value)));
            self.shown.truncate(SHOWN_ITEMS);
        }
    }

    fn items(&self) -> impl Iterator<Item = &String> {
        self.shown.iter().map(|(_, shown)| shown)
    }
}

impl<'e> Evaluation<'e> {
    pub fn new(expectations: &'e [Expectation]) -> Evaluation<'e> {
        Evaluation {
            expectations,
            names: HashMap::new(),
            states: expectations.iter().map(|_| State::default()).collect(),
            line: 0,
            order: 0,
        }
    }

    /// Takes the next panel line, parsed (`None`: not JSON).
    pub fn observe(&mut self, line: Option<&Value>) {
        let i = self.line;
        self.line += 1;
        let Some(v) = line else { return };
        if ty(v) == "assistant" {
            for b in blocks(v) {
                if b.get("type").and_then(Value::as_str) == Some("tool_use")
                    && let (Some(id), Some(name)) = (str_at(b, "id"), str_at(b, "name"))
                {
                    self.names.insert(id.to_string(), name.to_string());
                }
            }
        }
        let subtype = str_at(v, "subtype");
        let (names, order) = (&self.names, &mut self.order);
        for (e, state) in self.expectations.iter().zip(&mut self.states) {
            select(e.kind, v, |value, is_error| {
                let item = Seen {
                    line: i,
                    value,
                    is_error,
                    order: *order,
                };
                *order += 1;
                let unseen_tool = e.tool.is_some()
                    && str_at(value, "tool_use_id").is_some_and(|id| !names.contains_key(id));
                if unseen_tool {
                    state
                        .waiting
                        .push((item.owned(), subtype.map(str::to_string)));
                } else {
                    state.classify(e, &item, subtype, names);
                }
            });
        }
    }

    /// The expectations that failed, over every line taken.
    pub fn finish(mut self) -> Vec<Failure> {
        let names = &self.names;
        self.expectations
            .iter()
            .zip(&mut self.states)
            .filter_map(|(e, state)| {
                for (item, subtype) in std::mem::take(&mut state.waiting) {
                    let seen = Seen {
                        line: item.line,
                        value: &item.value,
                        is_error: item.is_error,
                        order: item.order,
                    };
                    state.classify(e, &seen, subtype.as_deref(), names);
                }
                state.failure(e)
            })
            .collect()
    }
}

impl State {
    fn classify(
        &mut self,
        e: &Expectation,
        item: &Seen<'_>,
        subtype: Option<&str>,
        names: &HashMap<String, String>,
    ) {
        if !passes_filters(e, item.value, subtype, names) {
            self.others.add(item);
            return;
        }
        self.matching.add(item);
        for (p, bad) in self.bad.iter_mut().enumerate() {
            if !predicate_holds(e, p, item.value, item.is_error) {
                bad.add(item);
            }
        }
    }

    fn failure(&self, e: &Expectation) -> Option<Failure> {
        let fail = |expected: String, came: String, shown: Vec<&String>| Failure {
            line: e.line,
            expectation: describe(e),
            why: e.why.clone(),
            expected,
            came,
            items: shown.into_iter().cloned().collect(),
        };
        let what = describe_selection(e);
        let items = &self.matching;
        if !e.count.accepts(items.count) {
            let mut came = format!("{} {what}", items.count);
            if self.others.count > 0 {
                // What the filters left out is usually the clue (a wrong tool name).
                came.push_str(&format!(
                    "; other {} items: {} (shown after the matching ones)",
                    e.kind.as_str(),
                    self.others.count
                ));
            }
            let shown = items.items().chain(self.others.items()).collect();
            return Some(fail(format!("{} {what}", e.count), came, shown));
        }
        let (p, bad) = self.bad.iter().enumerate().find(|(_, b)| b.count > 0)?;
        let want = match PREDICATES[p] {
            "is_error" => format!("is_error = {}", e.is_error.unwrap_or_default()),
            "has_image" => format!("has_image = {}", e.has_image.unwrap_or_default()),
            "image_or_marker" => format!(
                "image_or_marker = {}",
                e.image_or_marker.unwrap_or_default()
            ),
            "no_base64_in_text" => "no base64 image data in any text".to_string(),
            _ => format!(
                "text containing {:?}",
                e.text_contains.as_deref().unwrap_or_default()
            ),
        };
        Some(fail(
            format!("every {what} to have {want}"),
            format!("{} of {} do not", bad.count, items.count),
            bad.items().collect(),
        ))
    }
}

/// The predicates an item that passes the filters must meet, in the order
/// a failure names the first one broken.
const PREDICATES: [&str; 5] = [
    "is_error",
    "has_image",
    "image_or_marker",
    "no_base64_in_text",
    "text_contains",
];

/// Whether an item (`v`, its `is_error`) meets predicate `p` of
/// [`PREDICATES`] (an unset one holds).
fn predicate_holds(e: &Expectation, p: usize, v: &Value, is_error: Option<bool>) -> bool {
    match PREDICATES[p] {
        "is_error" => e.is_error.is_none_or(|want| is_error == Some(want)),
        "has_image" => e.has_image.is_none_or(|want| has_image(v) == want),
        "image_or_marker" => e
            .image_or_marker
            .is_none_or(|want| image_or_marker(v) == want),
        "no_base64_in_text" => e
            .no_base64_in_text
            .is_none_or(|want| !want || !base64_in_text(v)),
        _ => e
            .text_contains
            .as_ref()
            .is_none_or(|t| text_of(v).contains(t.as_str())),
    }
}

fn ty(v: &Value) -> &str {
    str_at(v, "type").unwrap_or("")
}

fn str_at<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

fn blocks(v: &Value) -> impl Iterator<Item = &Value> {
    v.pointer("/message/content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn is_echo(v: &Value) -> bool {
    v.get("isReplay").and_then(Value::as_bool) == Some(true)
}

/// The items of `kind` in the panel line `v`, before filters, each handed
/// to `push` with its `is_error`.
fn select(kind: ExpectKind, v: &Value, mut push: impl FnMut(&Value, Option<bool>)) {
    let block_kind = |wanted: &'static str| {
        blocks(v).filter(move |b| b.get("type").and_then(Value::as_str) == Some(wanted))
    };
    match kind {
        ExpectKind::ToolUse if ty(v) == "assistant" => {
            block_kind("tool_use").for_each(|b| push(b, None))
        }
        ExpectKind::AssistantText if ty(v) == "assistant" => {
            block_kind("text").for_each(|b| push(b, None))
        }
        ExpectKind::Thinking if ty(v) == "assistant" => {
            block_kind("thinking").for_each(|b| push(b, None))
        }
        ExpectKind::ToolResult if ty(v) == "user" && !is_echo(v) => block_kind("tool_result")
            .for_each(|b| {
                push(
                    b,
                    Some(b.get("is_error").and_then(Value::as_bool).unwrap_or(false)),
                )
            }),
        ExpectKind::CanUseTool
            if ty(v) == "control_request"
                && v.pointer("/request/subtype").and_then(Value::as_str)
                    == Some("can_use_tool") =>
        {
            push(v, None)
        }
        ExpectKind::Result if ty(v) == "result" => push(
            v,
            Some(v.get("is_error").and_then(Value::as_bool).unwrap_or(false)),
        ),
        ExpectKind::SystemInit if ty(v) == "system" && str_at(v, "subtype") == Some("init") => {
            push(v, None)
        }
        ExpectKind::StreamEvent if ty(v) == "stream_event" => push(v, None),
        ExpectKind::UserEcho if ty(v) == "user" && is_echo(v) => push(v, None),
        _ => {}
    }
}

/// Whether an item passes the expectation's filters.
fn passes_filters(
    e: &Expectation,
    v: &Value,
    line_subtype: Option<&str>,
    names: &HashMap<String, String>,
) -> bool {
    if let Some(name) = &e.name {
        let actual = match e.kind {
            ExpectKind::CanUseTool => v.pointer("/request/tool_name").and_then(Value::as_str),
            _ => str_at(v, "name"),
        };
        if actual != Some(name.as_str()) {
            return false;
        }
    }
    if let Some(tool) = &e.tool {
        let answered = str_at(v, "tool_use_id").and_then(|id| names.get(id));
        if answered.map(String::as_str) != Some(tool.as_str()) {
            return false;
        }
    }
    if let Some(t) = &e.with_text
        && !text_of(v).contains(t.as_str())
    {
        return false;
    }
    if let Some(subtype) = &e.subtype {
        let actual = match e.kind {
            ExpectKind::StreamEvent => v.pointer("/event/type").and_then(Value::as_str),
            _ => line_subtype,
        };
        if actual != Some(subtype.as_str()) {
            return false;
        }
    }
    true
}

/// The text of an item: every string under a text-bearing key, joined (a
/// single one borrowed: a folded message is megabytes).
fn text_of(v: &Value) -> Cow<'_, str> {
    fn walk<'v>(v: &'v Value, key: Option<&str>, out: &mut Vec<&'v str>) {
        match v {
            Value::String(s) if matches!(key, Some("text" | "thinking" | "result" | "content")) => {
                out.push(s)
            }
            Value::Object(m) => m.iter().for_each(|(k, v)| walk(v, Some(k), out)),
            Value::Array(a) => a.iter().for_each(|v| walk(v, key, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, None, &mut out);
    match out.as_slice() {
        [] => Cow::Borrowed(""),
        [one] => Cow::Borrowed(one),
        _ => Cow::Owned(out.join("\n")),
    }
}

fn has_image(v: &Value) -> bool {
    match v {
        Value::Object(m) => {
            m.get("type").and_then(Value::as_str) == Some("image") || m.values().any(has_image)
        }
        Value::Array(a) => a.iter().any(has_image),
        _ => false,
    }
}

/// An image block, or a text marking a dropped image (`[image]`, `[Image: ...]`).
fn image_or_marker(v: &Value) -> bool {
    has_image(v) || {
        let text = text_of(v);
        let bytes = text.as_bytes();
        (0..bytes.len()).any(|i| {
            bytes[i] == b'['
                && bytes
                    .get(i + 1..i + 6)
                    .is_some_and(|w| w.eq_ignore_ascii_case(b"image"))
        })
    }
}

fn base64_in_text(v: &Value) -> bool {
    let text = text_of(v);
    text.contains(";base64,") || long_base64_run(&text)
}

fn long_base64_run(s: &str) -> bool {
    let mut run = 0;
    for c in s.bytes() {
        if c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=') {
            run += 1;
            if run >= BASE64_IN_TEXT_MIN {
                return true;
            }
        } else {
            run = 0;
        }
    }
    false
}

/// A readable, stable rendering of an item for a failure message.
/// `line N: ` and the value's JSON, base64 runs digested, cut to
/// [`ITEM_MAX`]; serialised into the cut, never held whole.
fn show(line: usize, value: &Value) -> String {
    let mut shown = ShortDigest::new(ITEM_MAX);
    let _ = serde_json::to_writer(&mut shown, value);
    format!("line {}: {}", line + 1, shown.finish())
}

fn describe(e: &Expectation) -> String {
    let mut parts = vec![e.kind.as_str().to_string()];
    for (k, v) in [
        ("name", &e.name),
        ("tool", &e.tool),
        ("subtype", &e.subtype),
        ("with_text", &e.with_text),
    ] {
        if let Some(v) = v {
            parts.push(format!("{k}={v}"));
        }
    }
    parts.push(format!("count {}", e.count));
    if let Some(b) = e.is_error {
        parts.push(format!("is_error={b}"));
    }
    if let Some(b) = e.has_image {
        parts.push(format!("has_image={b}"));
    }
    if let Some(b) = e.image_or_marker {
        parts.push(format!("image_or_marker={b}"));
    }
    if let Some(b) = e.no_base64_in_text {
        parts.push(format!("no_base64_in_text={b}"));
    }
    if let Some(t) = &e.text_contains {
        parts.push(format!("text_contains={t:?}"));
    }
    format!("[{}]", parts.join(" "))
}

fn describe_selection(e: &Expectation) -> String {
    let mut s = e.kind.as_str().to_string();
    if let Some(n) = &e.name {
        s.push_str(&format!(" named {n}"));
    }
    if let Some(t) = &e.tool {
        s.push_str(&format!(" for {t}"));
    }
    if let Some(st) = &e.subtype {
        s.push_str(&format!(" of subtype {st}"));
    }
    if let Some(t) = &e.with_text {
        s.push_str(&format!(" with text {t:?}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::scenario;
    use std::path::Path;

    /// Expectations parsed from scenario TOML (the real parser), evaluated
    /// over hand-written panel output (a test double for a bridge run).
    fn expectations(expect: &str) -> Vec<Expectation> {
        let text = format!(
            "name = \"t\"\nsummary = \"s\"\ntools = []\n[[step]]\npanel = \"prompt\"\ntext = \"hi\"\n  [[step.model]]\n  text = \"x\"\n{expect}"
        );
        scenario::parse(Path::new("t.toml"), text.as_bytes())
            .expect("test scenario parses")
            .expect
    }

    /// [`super::evaluate`] over lines as text.
    fn evaluate(expectations: &[Expectation], lines: &[String]) -> Vec<Failure> {
        let parsed: Vec<Option<Value>> =
            lines.iter().map(|l| serde_json::from_str(l).ok()).collect();
        super::evaluate(expectations, &parsed)
    }

    fn output() -> Vec<String> {
        let img = "iVBORw0KGgo".repeat(20);
        [
            r#"{"type":"system","subtype":"init","session_id":"S"}"#.to_string(),
            r#"{"type":"user","isReplay":true,"message":{"role":"user","content":[{"type":"text","text":"hi"}]}}"#.to_string(),
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"c1","name":"mcp__unity-ops__uap_editor_screenshot","input":{}}]}}"#.to_string(),
            format!(r#"{{"type":"user","message":{{"content":[{{"type":"tool_result","tool_use_id":"c1","content":[{{"type":"text","text":"shot"}},{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"{img}"}}}}]}}]}}}}"#),
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"hello there"}]}}"#.to_string(),
            r#"{"type":"result","subtype":"success","is_error":false,"result":"hello there"}"#.to_string(),
        ]
        .into()
    }

    #[test]
    fn expectations_that_hold_produce_no_failure() {
        let e = expectations(
            r#"
[[expect]]
kind = "tool_result"
tool = "mcp__unity-ops__uap_editor_screenshot"
count = 1
is_error = false
has_image = true
no_base64_in_text = true
why = "w"
[[expect]]
kind = "result"
count = 1
text_contains = "hello"
why = "w"
[[expect]]
kind = "user_echo"
count = 1
why = "w"
[[expect]]
kind = "system_init"
why = "w"
"#,
        );
        assert_eq!(evaluate(&e, &output()), vec![]);
    }

    #[test]
    fn a_wrong_count_names_the_expectation_the_why_and_what_came() {
        let e = expectations(
            "[[expect]]\nkind = \"tool_use\"\ncount = 0\nwhy = \"nothing calls a tool\"\n",
        );
        let f = evaluate(&e, &output());
        assert_eq!(f.len(), 1);
        let text = f[0].to_string();
        assert!(text.contains("nothing calls a tool"), "{text}");
        assert!(text.contains("expected: exactly 0 tool_use"), "{text}");
        assert!(text.contains("came:     1 tool_use"), "{text}");
        assert!(text.contains("uap_editor_screenshot"), "{text}");
    }

    #[test]
    fn base64_pasted_into_a_tool_result_text_breaks_no_base64_in_text() {
        let e = expectations(
            "[[expect]]\nkind = \"tool_result\"\nno_base64_in_text = true\nwhy = \"w\"\n",
        );
        let blob = "QUJD".repeat(75);
        let lines = vec![format!(
            r#"{{"type":"user","message":{{"content":[{{"type":"tool_result","tool_use_id":"c","content":"data:image/png;base64,{blob}"}}]}}}}"#
        )];
        let f = evaluate(&e, &lines);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].items[0].contains("<base64 300 chars"),
            "the failure shows a digest, not the blob: {}",
            f[0]
        );
    }

    #[test]
    fn image_or_marker_holds_for_an_image_block_or_a_dropped_image_marker_and_fails_for_silence() {
        let e = expectations(
            "[[expect]]\nkind = \"tool_result\"\nimage_or_marker = true\nwhy = \"w\"\n",
        );
        let result = |content: &str| {
            vec![format!(
                r#"{{"type":"user","message":{{"content":[{{"type":"tool_result","tool_use_id":"c","content":{content}}}]}}}}"#
            )]
        };
        let cases = [
            ("an image block", output(), true),
            (
                "Gemini's marker",
                result(r#""Captured Scene view\n[Image: image/png]""#),
                true,
            ),
            (
                "the bridge's placeholder",
                result(r#"[{"type":"text","text":"[image]"}]"#),
                true,
            ),
            (
                "text only, image silently lost",
                result(r#""Captured Scene view""#),
                false,
            ),
        ];
        for (what, lines, holds) in cases {
            assert_eq!(evaluate(&e, &lines).is_empty(), holds, "{what}");
        }
    }

    #[test]
    fn with_text_narrows_the_selection_before_counting() {
        let cases = [
            ("hello", "count = 1", true),
            ("hello", "count = 2", false),
            ("absent", "count = 0", true),
        ];
        for (t, count, holds) in cases {
            let e = expectations(&format!(
                "[[expect]]\nkind = \"assistant_text\"\nwith_text = \"{t}\"\n{count}\nwhy = \"w\"\n"
            ));
            assert_eq!(evaluate(&e, &output()).is_empty(), holds, "{t} {count}");
        }
    }

    #[test]
    fn a_predicate_failure_lists_the_offending_items() {
        let e = expectations("[[expect]]\nkind = \"result\"\nis_error = true\nwhy = \"w\"\n");
        let f = evaluate(&e, &output());
        assert_eq!(f[0].came, "1 of 1 do not");
        assert!(f[0].items[0].starts_with("line 6:"));
    }
}
