//! The output-side invariants of the bridge (docs/bridge-behaviour.md,
//! "Invariants"), held against every replayed panel line of every
//! recording, golden or not, so a new agent's first `record` already shows
//! what the panel would get wrong:
//!
//! - **names are identifiers**: every `tool_use` name;
//! - **no base64 run of 4 KiB or more in any text** the panel reads
//!   (assistant text and thinking, `tool_result` texts, the `result`);
//! - **`Bash` / `Write` / `Edit` inputs carry their required fields** when
//!   any recorded frame of the call carried them.
//!
//! A violation is a failure of its own kind (`invariant broken`); an agent
//! that cannot meet one lists it in its known limitations as
//! `invariant <rule>`.
//!
//! This is an oracle, so it reads the recorded frames by itself: which
//! arguments a call carried is gathered here from every frame of the call
//! (the union, by the field spellings and structures docs/bridge-behaviour.md
//! lists), never through the bridge's merge or input code it judges.

use std::collections::HashMap;

use std::collections::BTreeSet;

use acp_bridge::call::result::MAX_BASE64_RUN;
use serde_json::Value;

use crate::corpus::recording::{Dir, Leg, Recording};

/// The rules, as a known-limitations entry lists them (`invariant <rule>`).
pub const NAMES_ARE_IDENTIFIERS: &str = "names are identifiers";
pub const NO_BASE64_TEXT: &str = "no base64 text";
pub const INPUTS_CARRY_ARGUMENTS: &str = "inputs carry the arguments";
pub const EVERY_CALL_REACHES_THE_PANEL: &str = "every call reaches the panel";

/// One broken invariant on one panel line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub rule: &'static str,
    /// The panel line's index among the replay's panel lines (0-based).
    pub line: usize,
    pub what: String,
}

impl Violation {
    /// The name a known-limitations entry lists it by.
    pub fn name(&self) -> String {
        name_of(self.rule)
    }
}

/// What every invariant's name starts with.
pub const PREFIX: &str = "invariant ";

/// `invariant <rule>`.
pub fn name_of(rule: &str) -> String {
    format!("{PREFIX}{rule}")
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "[{}] panel line {}: {}",
            self.name(),
            self.line + 1,
            self.what
        )
    }
}

/// Every violation in the replayed panel lines of `recording`.
pub fn check(panel: &[Option<Value>], recording: &Recording) -> Vec<Violation> {
    let frames = recording
        .leg(Leg::Acp)
        .filter(|e| e.dir == Dir::FromAgent)
        .map(|e| (e.seq, e.raw.as_str()));
    check_lines(panel, &CallFrames::from_frames(frames))
}

/// [`check`] against the call frames already gathered (a recording read
/// one line at a time gathers them on the way).
pub fn check_lines(panel: &[Option<Value>], calls: &CallFrames) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut announced = std::collections::HashSet::new();
    for (line, value) in panel.iter().enumerate() {
        if let Some(v) = value {
            check_line(line, v, calls, &mut out);
            announced.extend(tool_use_ids(v));
        }
    }
    out.extend(calls.unannounced(&announced, panel.len()));
    out
}

/// The ids of the `tool_use` blocks of one panel line.
pub fn tool_use_ids(v: &Value) -> impl Iterator<Item = String> + '_ {
    content_blocks(v)
        .filter(|b| b["type"] == "tool_use")
        .filter_map(|b| b["id"].as_str().map(str::to_string))
}

/// The violations of panel line `line` (`v`, parsed), added to `out`: a
/// replay judged as it happens checks each line as it comes.
pub fn check_line(line: usize, v: &Value, calls: &CallFrames, out: &mut Vec<Violation>) {
    let mut push = |rule, what| out.push(Violation { rule, line, what });
    for block in content_blocks(v) {
        match block["type"].as_str() {
            Some("tool_use") => {
                let name = block["name"].as_str().unwrap_or("");
                if !is_identifier(name) {
                    push(
                        NAMES_ARE_IDENTIFIERS,
                        format!("tool_use name {name:?} is no identifier"),
                    );
                }
                for missing in calls.missing_fields(block) {
                    push(INPUTS_CARRY_ARGUMENTS, missing);
                }
            }
            Some("text") => text_check(block["text"].as_str(), "a text block", &mut push),
            Some("thinking") => {
                text_check(block["thinking"].as_str(), "a thinking block", &mut push)
            }
            Some("tool_result") => match &block["content"] {
                Value::String(s) => text_check(Some(s), "a tool_result", &mut push),
                Value::Array(parts) => {
                    for p in parts.iter().filter(|p| p["type"] == "text") {
                        text_check(p["text"].as_str(), "a tool_result text", &mut push);
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    if v["type"] == "result" {
        text_check(v["result"].as_str(), "the result", &mut push);
    }
}

/// The content blocks of an `assistant` or `user` line.
fn content_blocks(v: &Value) -> impl Iterator<Item = &Value> {
    let is_message = matches!(v["type"].as_str(), Some("assistant" | "user"));
    v["message"]["content"]
        .as_array()
        .filter(|_| is_message)
        .into_iter()
        .flatten()
}

fn text_check(text: Option<&str>, what: &str, push: &mut impl FnMut(&'static str, String)) {
    if let Some(run) = text.and_then(longest_base64_run)
        && run >= MAX_BASE64_RUN
    {
        push(
            NO_BASE64_TEXT,
            format!("{what} holds a base64 run of {run} bytes"),
        );
    }
}

/// The longest run of base64 characters in `text`, `None` for a text too
/// short to hold a run of [`MAX_BASE64_RUN`].
fn longest_base64_run(text: &str) -> Option<usize> {
    if text.len() < MAX_BASE64_RUN {
        return None;
    }
    let (mut longest, mut run) = (0, 0);
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_') {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    Some(longest)
}

/// A Claude tool name as the panel's tools are named: ASCII letters,
/// digits, `_` and `-`, at most 128 of them (Claude's own tool-name rule).
fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The input fields each Claude tool cannot do without.
fn required_fields(name: &str) -> &'static [&'static str] {
    match name {
        "Bash" | "Shell" | "PowerShell" => &["command"],
        "Write" => &["file_path", "content"],
        "Edit" => &["file_path"],
        _ => &[],
    }
}

/// The argument keys agents spell each required field with.
fn spellings(field: &str) -> &'static [&'static str] {
    match field {
        "command" => &["command", "cmd", "script", "commands"],
        "file_path" => &[
            "file_path",
            "filePath",
            "filepath",
            "path",
            "filename",
            "file",
            "absolute_path",
            "target_file",
        ],
        "content" => &["content", "contents", "file_text", "text", "newText"],
        _ => &[],
    }
}

/// Which required fields each tool call's recorded frames carried (by
/// `toolCallId`), and the `seq` of the call's first frame.
#[derive(Debug, Default)]
pub struct CallFrames {
    carried: HashMap<String, (BTreeSet<&'static str>, u64)>,
    /// The calls the agent reported in a `session/update` (not only asked
    /// about), with the `seq` of the first report, in order; an MCP server's
    /// startup notice (`mcp__<server>__startup`) is no call.
    reported: Vec<(String, u64)>,
}

impl CallFrames {
    /// From the agent's ACP frames (`seq`, the raw line), in order.
    fn from_frames<'a>(frames: impl Iterator<Item = (u64, &'a str)>) -> CallFrames {
        let mut calls = CallFrames::default();
        for (seq, raw) in frames {
            calls.observe(seq, raw);
        }
        calls
    }

    /// Takes the agent's next ACP frame (`seq`, the raw line).
    pub fn observe(&mut self, seq: u64, raw: &str) {
        // only tool call updates and permission requests are parsed, not
        // every message chunk of the recording
        if !(raw.contains("\"tool_call") || raw.contains("session/request_permission")) {
            return;
        }
        let Ok(frame) = serde_json::from_str::<Value>(raw) else {
            return;
        };
        let params = &frame["params"];
        let call = match frame["method"].as_str() {
            Some("session/update")
                if params["update"]["sessionUpdate"]
                    .as_str()
                    .is_some_and(|k| k.starts_with("tool_call")) =>
            {
                &params["update"]
            }
            Some("session/request_permission") => &params["toolCall"],
            _ => return,
        };
        let Some(id) = call["toolCallId"].as_str() else {
            return;
        };
        let startup_notice = call["title"]
            .as_str()
            .is_some_and(|t| t.starts_with("mcp__") && t.ends_with("__startup"));
        if frame["method"] == "session/update" && !startup_notice && !self.carried.contains_key(id)
        {
            self.reported.push((id.to_string(), seq));
        }
        let entry = self
            .carried
            .entry(id.to_string())
            .or_insert_with(|| (BTreeSet::new(), seq));
        entry.0.extend(carried_fields(call));
    }

    /// **Every call the agent reported reaches the panel** as a `tool_use`
    /// (held back at most a bounded while, never for good): the reported
    /// calls no panel line in `announced` (tool_use ids) names.
    pub fn unannounced<'s>(
        &'s self,
        announced: &'s std::collections::HashSet<String>,
        panel_lines: usize,
    ) -> impl Iterator<Item = Violation> + 's {
        self.reported
            .iter()
            .filter(|(id, _)| !announced.contains(id))
            .map(move |(id, seq)| Violation {
                rule: EVERY_CALL_REACHES_THE_PANEL,
                line: panel_lines.saturating_sub(1),
                what: format!(
                    "call {id}, reported by the agent (first frame seq {seq}), never reached the panel as a tool_use"
                ),
            })
    }

    /// What a `tool_use` block lacks that the call's frames carried.
    fn missing_fields(&self, block: &Value) -> Vec<String> {
        let name = block["name"].as_str().unwrap_or("");
        let Some(id) = block["id"].as_str() else {
            return Vec::new();
        };
        let Some((carried, seq)) = self.carried.get(id) else {
            return Vec::new();
        };
        required_fields(name)
            .iter()
            .filter(|f| carried.contains(**f) && !has_text(&block["input"][**f]))
            .map(|f| {
                format!(
                    "the {name} input of call {id} lacks {f}, which the call's frames carry (first frame seq {seq})"
                )
            })
            .collect()
    }
}

/// The required fields one frame's tool call object carries: under any of
/// their spellings in `rawInput`, a location's or a diff's path, a new
/// file's diff text, an `execute` call's title that is a command line.
fn carried_fields(call: &Value) -> Vec<&'static str> {
    let raw = call["rawInput"].as_object();
    let diffs: Vec<&Value> = call["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["type"] == "diff")
        .collect();
    let mut out = Vec::new();
    for field in ["command", "file_path", "content"] {
        let spelled = raw.is_some_and(|m| {
            spellings(field)
                .iter()
                .filter_map(|k| m.get(*k))
                .any(|v| has_text(v) || (field == "command" && has_argv(v)))
        });
        let structured = match field {
            "file_path" => {
                call["locations"]
                    .as_array()
                    .is_some_and(|l| l.iter().any(|l| has_text(&l["path"])))
                    || diffs.iter().any(|d| has_text(&d["path"]))
            }
            "content" => diffs
                .iter()
                .any(|d| !has_text(&d["oldText"]) && has_text(&d["newText"])),
            "command" => {
                call["kind"] == "execute"
                    && call["title"]
                        .as_str()
                        .is_some_and(|t| t.trim().contains(char::is_whitespace))
                    && !raw.is_some_and(|m| m.values().any(|v| v == &call["title"]))
            }
            _ => false,
        };
        if spelled || structured {
            out.push(field);
        }
    }
    out
}

/// A non-blank string.
fn has_text(v: &Value) -> bool {
    v.as_str().is_some_and(|s| !s.trim().is_empty())
}

/// A non-empty list of strings (an argv, or command lines).
fn has_argv(v: &Value) -> bool {
    v.as_array()
        .is_some_and(|a| !a.is_empty() && a.iter().all(Value::is_string))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A call the agent reported that no panel line shows is a violation;
    /// shown once, or an MCP server's startup notice, it is none.
    #[test]
    fn a_reported_call_the_panel_never_sees_breaks_every_call_reaches_the_panel() {
        let frames = [
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"mcp_startup.x","title":"mcp__unity-ops__startup","kind":"other","status":"failed"}}}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"mcp__unity-ops__uap_slow","kind":"other"}}}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress"}}}"#,
        ];
        let calls =
            CallFrames::from_frames(frames.iter().enumerate().map(|(i, f)| (i as u64 + 1, *f)));
        let text = json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "working"}]}});
        let shown = json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "c1", "name": "mcp__unity-ops__uap_slow", "input": {}}]}});
        let hidden = check_lines(&[Some(text.clone())], &calls);
        assert_eq!(hidden.len(), 1, "{hidden:?}");
        assert_eq!(hidden[0].rule, EVERY_CALL_REACHES_THE_PANEL);
        assert!(
            hidden[0].what.contains("call c1") && hidden[0].what.contains("seq 2"),
            "{}",
            hidden[0].what
        );
        assert!(check_lines(&[Some(text), Some(shown)], &calls).is_empty());
    }

    #[test]
    fn base64_runs_are_measured_only_in_texts_long_enough() {
        assert_eq!(longest_base64_run("short"), None);
        let text = format!("a {} b", "Q".repeat(MAX_BASE64_RUN));
        assert_eq!(longest_base64_run(&text), Some(MAX_BASE64_RUN));
        let prose = "word ".repeat(MAX_BASE64_RUN);
        assert_eq!(longest_base64_run(&prose), Some(4));
    }

    #[test]
    fn names_base64_texts_and_missing_inputs_are_violations() {
        let frame = json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"sessionUpdate": "tool_call_update", "toolCallId": "c3", "kind": "execute", "rawInput": {"command": "ls"}}}}).to_string();
        let calls = CallFrames::from_frames([(7, frame.as_str())].into_iter());
        let panel = vec![
            Some(
                json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "c1", "name": "Run the tests", "input": {}}]}}),
            ),
            Some(
                json!({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "c1", "content": "Q".repeat(MAX_BASE64_RUN)}]}}),
            ),
            Some(
                json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "c2", "name": "mcp__unity-ops__uap_ping", "input": {}}]}}),
            ),
            Some(
                json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "c3", "name": "Bash", "input": {"cwd": "/w"}}]}}),
            ),
            Some(
                json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "c4", "name": "Bash", "input": {}}]}}),
            ),
        ];
        let found = check_lines(&panel, &calls);
        let rules: Vec<(&str, usize)> = found.iter().map(|v| (v.rule, v.line)).collect();
        assert_eq!(
            rules,
            [
                (NAMES_ARE_IDENTIFIERS, 0),
                (NO_BASE64_TEXT, 1),
                (INPUTS_CARRY_ARGUMENTS, 3)
            ],
            "a call no frame gave a command is no violation"
        );
        assert!(found[2].to_string().contains("seq 7"), "{}", found[2]);
    }

    /// Gemini CLI 0.61's shell call carries its command only as the title
    /// of the permission request: the `Bash` input the bridge used to send
    /// (`{title, kind}`, blessed once) breaks the invariant, the one it
    /// sends now does not.
    #[test]
    fn gemini_bash_without_its_command_breaks_inputs_carry_the_arguments() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("recordings/gemini-cli/0.61.0/script-gate.jsonl");
        let recording = crate::corpus::recording::read(&path).expect("the recording reads");
        let id = "run_shell_command__call_gate_shell";
        let command =
            "mkdir -p Assets/Editor && printf 'public class Foo {}\\n' > Assets/Editor/Foo.cs";
        let line = |input: Value| {
            Some(
                json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": id, "name": "Bash", "input": input}]}}),
            )
        };
        let before = [line(json!({"title": command, "kind": "execute"}))];
        let found = check(&before, &recording);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].rule, INPUTS_CARRY_ARGUMENTS);
        let now = [line(
            json!({"title": command, "kind": "execute", "command": command}),
        )];
        assert_eq!(check(&now, &recording), []);
    }
}
