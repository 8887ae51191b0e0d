//! The arguments of an agent's own tool call in Claude's input shape
//! (docs/bridge-behaviour.md, "Tool identity"): **inputs carry the
//! arguments** wherever a frame of the call carried them (rawInput, a JSON
//! object in a content text, the title's decoration, the permission
//! request's `toolCall`), and the fields the Claude tool needs (`Bash`
//! `{command}`, `Write` `{file_path, content}`, `Edit` `{file_path,
//! old_string, new_string}`) are filled from whichever spelling the agent
//! used. The rule reads structure only: the same field aliases for every
//! agent.

use serde_json::{Map, Value};

use crate::acp::json_field::{field, has_key, map_field};
use crate::acp::tool_call::ToolKind;
use crate::call::fields::CallFields;
use crate::script_gate;

/// The fields a Claude tool's input needs before the panel can show,
/// approve or gate it; the core holds a call's `tool_use` until they are
/// known (or a later line forces it out). `Edit` waits for its path only:
/// the ACP kind `edit` is also Claude's `Write` and `MultiEdit`, whose
/// inputs have no `old_string`.
pub fn required_fields(name: &str) -> &'static [&'static str] {
    match name {
        "Bash" | "Shell" | "PowerShell" => &["command"],
        "Write" => &["file_path", "content"],
        "Edit" => &["file_path"],
        _ => &[],
    }
}

/// The fields of the Claude tool's input shape the bridge fills in from
/// any argument source when rawInput lacks them: the required ones, and
/// `Edit`'s strings.
pub fn shape_fields(name: &str) -> &'static [&'static str] {
    match name {
        "Edit" => &["file_path", "old_string", "new_string"],
        other => required_fields(other),
    }
}

/// The spellings agents use for each Claude field, Claude's own first.
fn aliases(claude: &str) -> &'static [&'static str] {
    match claude {
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
        "old_string" => &["old_string", "oldString", "old_str", "oldText", "old_text"],
        "new_string" => &["new_string", "newString", "new_str", "newText", "new_text"],
        _ => &[],
    }
}

/// A value that stands for a Claude field: a non-empty string, or for
/// `command` an argv (`["bash", "-lc", "..."]`) or a list of command lines;
/// `old_string` may be empty (a new file).
fn field_value(claude: &str, v: &Value) -> Option<Value> {
    match (claude, v) {
        ("command", Value::Array(items)) => {
            let first_is_line = items
                .first()
                .and_then(Value::as_str)
                .is_some_and(|s| s.trim().contains(char::is_whitespace));
            if first_is_line {
                commands_list(items)
            } else {
                crate::script_gate::argv_command(items)
            }
            .map(Value::String)
        }
        ("old_string", Value::String(s)) => Some(Value::String(s.clone())),
        (_, Value::String(s)) if !s.trim().is_empty() => Some(Value::String(s.clone())),
        _ => None,
    }
}

/// A `commands` list (every item a command line) as one script, a line each.
fn commands_list(items: &[Value]) -> Option<String> {
    let lines: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
    (lines.len() == items.len() && !lines.is_empty()).then(|| lines.join("\n"))
}

/// The Claude-shape fields `name` needs that `has` says are missing, from
/// the call's argument sources (`sources`, searched in order by every
/// alias), its locations and its diffs; `kind execute` titles stand for the
/// command (agents title a shell call with it).
pub fn claude_fields(
    name: &str,
    call: &CallFields,
    sources: &[&Map<String, Value>],
    has: impl Fn(&str) -> bool,
) -> Vec<(&'static str, Value)> {
    let mut out = Vec::new();
    for &claude in shape_fields(name) {
        if has(claude) {
            continue;
        }
        let found = aliases(claude)
            .iter()
            .find_map(|alias| {
                sources
                    .iter()
                    .find_map(|s| s.get(*alias).and_then(|v| field_value(claude, v)))
            })
            .or_else(|| from_structure(claude, call))
            .or_else(|| from_patch(claude, sources));
        if let Some(v) = found {
            out.push((claude, v));
        }
    }
    out
}

/// A Claude field from the call's ACP structure: a location or diff path,
/// a diff's texts, an `execute` title holding a command line (after the
/// tool's name when the title is decorated `<tool>: <command>`).
fn from_structure(claude: &str, call: &CallFields) -> Option<Value> {
    let diff = diffs(call).next();
    match claude {
        "file_path" => call
            .own
            .first_location()
            .or_else(|| diff.and_then(|d| field(d, "path").as_str()))
            .map(|p| Value::String(p.to_string())),
        "content" => diff
            .filter(|d| field(d, "oldText").as_str().is_none_or(str::is_empty))
            .and_then(|d| field(d, "newText").as_str())
            .map(|t| Value::String(t.to_string())),
        "old_string" => {
            diff.map(|d| Value::String(field(d, "oldText").as_str().unwrap_or("").into()))
        }
        "new_string" => diff
            .and_then(|d| field(d, "newText").as_str())
            .map(|t| Value::String(t.to_string())),
        "command" => (crate::call::fields::kind(call) == Some(&ToolKind::Execute))
            .then(|| crate::call::fields::title(call))
            .flatten()
            .and_then(|t| match code_span_at_start(t) {
                Some(command) => Some(command),
                None => Some(t).filter(|t| t.contains(char::is_whitespace)),
            })
            .filter(|t| !t.is_empty())
            // a title repeating another argument (its description) labels the call
            .filter(|t| {
                !call
                    .own
                    .raw_input()
                    .as_object()
                    .is_some_and(|m| m.values().any(|v| v.as_str() == Some(*t)))
            })
            .map(|t| Value::String(command_of_title(t).to_string())),
        _ => None,
    }
}

/// The text of a Markdown code span that opens `title` (``` `make test` (low) ```
/// holds `make test`, the rest decorates it), or `None` when none does.
fn code_span_at_start(title: &str) -> Option<&str> {
    let rest = title.trim_start_matches('`');
    let fence = &title[..title.len() - rest.len()];
    if fence.is_empty() {
        return None;
    }
    let end = rest.find(fence)?;
    Some(rest[..end].trim())
}

/// The command line of an `execute` title: what follows `<tool>: ` when
/// the title starts with a tool identifier and a colon (`terminal: ls -la`;
/// no shell command is a word ending in `:`), else the whole title.
fn command_of_title(title: &str) -> &str {
    match title.split_once(": ") {
        Some((head, rest))
            if crate::call::fields::is_tool_identifier(head) && !rest.trim().is_empty() =>
        {
            rest.trim()
        }
        _ => title,
    }
}

/// A Claude field from a patch text among the arguments (see
/// [`crate::script_gate::patch_change`]).
fn from_patch(claude: &str, sources: &[&Map<String, Value>]) -> Option<Value> {
    use crate::script_gate::PatchChange;
    let text = match patch_in(sources)? {
        PatchChange::Write { file_path, content } => match claude {
            "file_path" => file_path,
            "content" => content,
            _ => return None,
        },
        PatchChange::Edit { file_path, strings } => match (claude, strings) {
            ("file_path", _) => file_path,
            ("old_string", Some((old, _))) => old,
            ("new_string", Some((_, new))) => new,
            _ => return None,
        },
    };
    Some(Value::String(text))
}

/// The change the first patch text among the arguments' string values makes.
fn patch_in(sources: &[&Map<String, Value>]) -> Option<crate::script_gate::PatchChange> {
    sources
        .iter()
        .flat_map(|s| s.values())
        .filter_map(Value::as_str)
        .find_map(crate::script_gate::patch_change)
}

/// Whether [`file_tool_name`] may rename a call declared `declared`: its
/// kind says only that a file changes, or nothing Claude knows, and no
/// `_meta` names it. Cheap: no argument is read.
pub fn file_tool_name_may_apply(declared: &str, call: &CallFields) -> bool {
    let kind_name = crate::call::fields::kind(call).and_then(ToolKind::claude_name);
    (declared == "Edit" && kind_name == Some("Edit") || kind_name.is_none())
        && crate::call::fields::meta_builtin_name(call).is_none()
}

/// The Claude file tool a call is by its arguments, where its declared name
/// says only that a file changes (`Edit`, from the kind `edit`) or nothing
/// Claude knows (no kind, or `other`): a patch text is the `Write` or `Edit`
/// it makes; an `Edit` whose arguments hold a whole file's text and no
/// strings to replace, or whose one diff starts from no text, is Claude's
/// `Write`. A name the agent's `_meta` gives stands. `None`: the declared
/// name stays.
pub fn file_tool_name(
    declared: &str,
    call: &CallFields,
    sources: &[&Map<String, Value>],
) -> Option<&'static str> {
    use crate::script_gate::PatchChange;
    if !file_tool_name_may_apply(declared, call) {
        return None;
    }
    if let Some(change) = patch_in(sources) {
        return Some(match change {
            PatchChange::Write { .. } => "Write",
            PatchChange::Edit { .. } => "Edit",
        });
    }
    if declared != "Edit" {
        return None;
    }
    let has = |claude: &str| {
        aliases(claude)
            .iter()
            .any(|a| sources.iter().any(|s| s.contains_key(*a)))
    };
    let strings = has("old_string") || has("new_string");
    let whole_text = ["content", "contents", "file_text"].iter().any(|k| {
        sources
            .iter()
            .any(|s| s.get(*k).is_some_and(Value::is_string))
    });
    // one diff only: a change of several files is no `Write` of one
    let mut diffs = diffs(call);
    let new_file = diffs
        .next()
        .is_some_and(|d| field(d, "oldText").as_str().is_none_or(str::is_empty))
        && diffs.next().is_none();
    (!strings && (whole_text || new_file)).then_some("Write")
}

/// The call's `diff` content entries, its own then its permission request's.
fn diffs(call: &CallFields) -> impl Iterator<Item = &Value> {
    let own = call.own.content().iter();
    own.chain(call.permission.content())
        .filter(|item| field(item, "type") == "diff")
}

/// The `input` of a call that is no MCP call: its rawInput in Claude's
/// shape (see [`tool_input`]).
pub fn agent_tool_input(call: &CallFields) -> Value {
    AgentToolInput::new(call).to_value()
}

/// [`agent_tool_input`] borrowed from the call's fields: serialising it
/// writes the same bytes without copying rawInput into a map of its own
/// first (every agent tool call's `tool_use` is written so).
#[derive(Debug)]
pub struct AgentToolInput<'a> {
    /// The Claude tool the call is: declared, then refined by its
    /// arguments ([`file_tool_name`]).
    name: &'a str,
    raw: RawInput<'a>,
    /// An argv `command` (codex's form) as one string, in rawInput's place.
    command: Option<String>,
    /// Arguments from other frames' sources (a JSON content text, the
    /// title's decoration, the permission request's JSON text) whose keys
    /// rawInput lacks.
    side: Map<String, Value>,
    /// Added after rawInput's keys, in this order, where rawInput has no
    /// such key; `title`, `kind` and `path` only when the call has no
    /// arguments at all (they are the bridge's, not the agent's).
    title: Option<&'a str>,
    kind: Option<&'a str>,
    path: Option<&'a str>,
    file_path: Option<&'a str>,
    /// The fields the Claude tool needs that no key above gives
    /// ([`crate::call::input::claude_fields`]).
    filled: Vec<(&'static str, Value)>,
}

/// What a call's rawInput gives its input.
#[derive(Debug, Clone, Copy)]
enum RawInput<'a> {
    /// Its keys and values.
    Object(&'a Map<String, Value>),
    /// A value that is no object, kept under `rawInput`.
    Other(&'a Value),
    Absent,
}

/// One value of an [`AgentToolInput`]: borrowed from the call, or text.
#[derive(Debug, Clone, Copy, serde::Serialize)]
#[serde(untagged)]
pub enum InputValue<'a> {
    Value(&'a Value),
    Text(&'a str),
}

/// The arguments of an agent tool call from anywhere but its rawInput, by
/// precedence: the title's decoration, a JSON object title, a JSON object
/// text of the permission request, `content_arguments` (a JSON object text
/// of the call's content while it was no result).
fn side_arguments(
    call: &CallFields,
    content_arguments: Option<&Value>,
) -> Option<Map<String, Value>> {
    let decoration = crate::call::fields::title(call)
        .and_then(crate::call::fields::title_name)
        .and_then(|(_, d)| d);
    let json_title = [call.own.title(), call.permission.title()]
        .into_iter()
        .flatten()
        .filter(|t| t.starts_with('{'))
        .find_map(|t| {
            serde_json::from_str::<Value>(t)
                .ok()
                .filter(Value::is_object)
        });
    // the sources merge key by key, as rawInput does across frames: an
    // earlier source's value wins, a later one adds the keys it lacks
    let sources = [
        decoration,
        json_title,
        crate::call::fields::json_text_arguments(call, false),
        content_arguments.cloned(),
    ];
    let mut merged: Option<Map<String, Value>> = None;
    for source in sources.into_iter().flatten() {
        let Value::Object(map) = source else { continue };
        match merged.as_mut() {
            None => merged = Some(map),
            Some(into) => {
                for (k, v) in map {
                    into.entry(k).or_insert(v);
                }
            }
        }
    }
    merged
}

/// The arguments an agent tool call's rawInput object gives its input:
/// those an envelope (`{tool, arguments}`, ...) wraps, else its own keys.
/// Every key of them is a key of the input ([`AgentToolInput::entries`]).
pub(crate) fn raw_arguments(call: &CallFields) -> Option<&Map<String, Value>> {
    let map = call.own.raw_input().as_object()?;
    Some(crate::call::fields::wrapped_arguments(map).unwrap_or(map))
}

impl<'a> AgentToolInput<'a> {
    pub fn new(call: &'a CallFields) -> AgentToolInput<'a> {
        AgentToolInput::with_content_arguments(call, None)
    }

    /// [`AgentToolInput::new`] also reading the arguments a JSON text of
    /// the call's own content carried before it was the result.
    pub fn with_content_arguments(
        call: &'a CallFields,
        content_arguments: Option<&Value>,
    ) -> AgentToolInput<'a> {
        let raw = match (raw_arguments(call), call.own.raw_input()) {
            (Some(arguments), _) => RawInput::Object(arguments),
            (None, Value::Null) => RawInput::Absent,
            (None, other) => RawInput::Other(other),
        };
        let has = |key: &str| match raw {
            RawInput::Object(map) => has_key(map, key),
            RawInput::Other(_) => key == "rawInput",
            RawInput::Absent => false,
        };
        let raw_field = |key: &str| match raw {
            RawInput::Object(map) => map_field(map, key),
            _ => &Value::Null,
        };
        let mut side = side_arguments(call, content_arguments).unwrap_or_default();
        side.retain(|k, _| !has(k));
        // an argv `command` (from rawInput or another source) as one string
        let command = match (raw_field("command"), side.get("command")) {
            (Value::Array(argv), _) | (Value::Null, Some(Value::Array(argv))) => {
                crate::script_gate::argv_command(argv)
            }
            _ => None,
        };
        let has = |key: &str| has(key) || side.contains_key(key);
        let location = call.own.first_location();
        let path = location.filter(|_| !has("path"));
        let file_path = (crate::call::fields::kind(call).is_some_and(ToolKind::is_file_kind)
            && !has("file_path"))
        .then(|| {
            if has("path") {
                raw_field("path").as_str()
            } else {
                path
            }
        })
        .flatten();
        let raw_map = match raw {
            RawInput::Object(map) => Some(map),
            _ => None,
        };
        let sources: Vec<&Map<String, Value>> = raw_map.into_iter().chain([&side]).collect();
        let declared = crate::call::fields::declared_tool_name(call);
        let name = file_tool_name(declared, call, &sources).unwrap_or(declared);
        let filled = crate::call::input::claude_fields(name, call, &sources, |k| {
            has(k) || (k == "file_path" && file_path.is_some())
        });
        // the bridge's own fallback keys stand in only for a call without
        // arguments: they never enter an input the agent gave arguments for
        let has_arguments = match raw {
            RawInput::Object(map) => !map.is_empty(),
            RawInput::Other(_) => true,
            RawInput::Absent => false,
        } || !side.is_empty();
        let fallback = |v: Option<&'a str>| v.filter(|_| !has_arguments);
        let title = fallback(crate::call::fields::title(call).filter(|_| !has("title")));
        let kind = fallback(
            crate::call::fields::kind(call)
                .map(ToolKind::as_str)
                .filter(|_| !has("kind")),
        );
        let path = fallback(path);
        AgentToolInput {
            name,
            raw,
            command,
            side,
            title,
            kind,
            path,
            file_path,
            filled,
        }
    }

    /// The Claude tool name the input is shaped for.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// The input's keys and values in order: rawInput's (an argv `command`
    /// as its string), the other sources' arguments, then `title`, `kind`,
    /// `path` (only for a call without arguments), `file_path`, then the
    /// Claude tool's fields filled in.
    pub fn entries(&self) -> impl Iterator<Item = (&str, InputValue<'_>)> {
        let raw = match self.raw {
            RawInput::Object(map) => Some(map.iter()),
            _ => None,
        };
        let raw = raw.into_iter().flatten().map(|(k, v)| {
            let value = match &self.command {
                Some(command) if k == "command" => InputValue::Text(command),
                _ => InputValue::Value(v),
            };
            (k.as_str(), value)
        });
        let other = match self.raw {
            RawInput::Other(v) => Some(("rawInput", InputValue::Value(v))),
            _ => None,
        };
        let side = self.side.iter().map(|(k, v)| {
            let value = match &self.command {
                Some(command) if k == "command" => InputValue::Text(command),
                _ => InputValue::Value(v),
            };
            (k.as_str(), value)
        });
        let added = [
            ("title", self.title),
            ("kind", self.kind),
            ("path", self.path),
            ("file_path", self.file_path),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k, InputValue::Text(v?))));
        let filled = self.filled.iter().map(|(k, v)| (*k, InputValue::Value(v)));
        raw.chain(other).chain(side).chain(added).chain(filled)
    }

    /// The input as a `Value` (what [`agent_tool_input`] returns).
    pub fn to_value(&self) -> Value {
        let map = self
            .entries()
            .map(|(k, v)| {
                let v = match v {
                    InputValue::Value(v) => v.clone(),
                    InputValue::Text(t) => Value::String(t.to_string()),
                };
                (k.to_string(), v)
            })
            .collect();
        Value::Object(map)
    }
}

impl serde::Serialize for AgentToolInput<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.entries())
    }
}

/// [`script_gate::gated_target`] for an ACP tool call the bridge relays (`fields` as
/// merged across its frames): a file tool is also judged by every file the
/// call names, its `locations` and the paths of its `diff` content, since a
/// multi-file patch lists each file there while `input` carries the first.
pub fn gated_target_in_call(tool_name: &str, input: &Value, fields: &CallFields) -> Option<String> {
    if let Some(target) = script_gate::gated_target(tool_name, input) {
        return Some(target);
    }
    if !script_gate::FILE_TOOL_NAMES.contains(&tool_name) {
        return None;
    }
    let diffs = (fields.own.content().iter())
        .chain(fields.permission.content())
        .filter(|item| item["type"] == "diff")
        .filter_map(|item| item["path"].as_str());
    fields
        .own
        .location_paths()
        .chain(diffs)
        .find(|path| script_gate::is_gated_script_path(path))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fill(name: &str, call: Value) -> Value {
        let raw = call["rawInput"].as_object().cloned().unwrap_or_default();
        let call = CallFields::from(call);
        let fields = claude_fields(name, &call, &[&raw], |k| raw.contains_key(k));
        Value::Object(fields.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    #[test]
    fn claude_fields_come_from_any_spelling_or_structure() {
        let cases = [
            (
                "Bash from cmd",
                "Bash",
                json!({"rawInput": {"cmd": "ls -la"}}),
                json!({"command": "ls -la"}),
            ),
            (
                "Bash from a commands list",
                "Bash",
                json!({"rawInput": {"commands": ["mkdir -p Assets", "echo x > Assets/A.cs"]}}),
                json!({"command": "mkdir -p Assets\necho x > Assets/A.cs"}),
            ),
            (
                "Bash from an argv",
                "Bash",
                json!({"rawInput": {"cmd": ["bash", "-lc", "echo hi"]}}),
                json!({"command": "echo hi"}),
            ),
            (
                "Bash from an execute title decorated with the tool's name (Hermes Agent 0.19.0)",
                "Bash",
                json!({"kind": "execute", "title": "terminal: mkdir -p Assets/Editor && printf 'public class Foo {}\\n' > Assets/Editor/Foo.cs", "content": [{"type": "content", "content": {"type": "text", "text": "$ mkdir -p Assets/Editor && printf 'public class Foo {}\\n' > Assets/Editor/Foo.cs"}}]}),
                json!({"command": "mkdir -p Assets/Editor && printf 'public class Foo {}\\n' > Assets/Editor/Foo.cs"}),
            ),
            (
                "Bash from an execute title with arguments",
                "Bash",
                json!({"kind": "execute", "title": "echo hi > Assets/A.cs", "rawInput": {"cwd": "/w"}}),
                json!({"command": "echo hi > Assets/A.cs"}),
            ),
            (
                "Bash from an execute title that opens with the command as a code span (Factory Droid's `cmd` (low))",
                "Bash",
                json!({"kind": "execute", "title": "`mkdir -p A && printf 'x' > A/F.cs` (low)", "rawInput": {"riskLevel": "low"}}),
                json!({"command": "mkdir -p A && printf 'x' > A/F.cs"}),
            ),
            (
                "a one-word command in a code span is a command",
                "Bash",
                json!({"kind": "execute", "title": "`ls`"}),
                json!({"command": "ls"}),
            ),
            (
                "an unclosed code span is the title as it is",
                "Bash",
                json!({"kind": "execute", "title": "`echo hi"}),
                json!({"command": "`echo hi"}),
            ),
            (
                "an execute title repeating the call's description is no command",
                "Bash",
                json!({"kind": "execute", "title": "Run a shell command", "rawInput": {"description": "Run a shell command"}}),
                json!({}),
            ),
            (
                "a one-word execute title is no command",
                "Bash",
                json!({"kind": "execute", "title": "Bash"}),
                json!({}),
            ),
            (
                "Write from filePath and a new-file diff",
                "Write",
                json!({"rawInput": {"filePath": "a.txt"}, "content": [{"type": "diff", "path": "a.txt", "oldText": null, "newText": "x"}]}),
                json!({"file_path": "a.txt", "content": "x"}),
            ),
            (
                "Edit from a diff and its location",
                "Edit",
                json!({"locations": [{"path": "b.txt"}], "content": [{"type": "diff", "path": "b.txt", "oldText": "o", "newText": "n"}]}),
                json!({"file_path": "b.txt", "old_string": "o", "new_string": "n"}),
            ),
            (
                "fields rawInput has are not added",
                "Bash",
                json!({"rawInput": {"command": "ls"}}),
                json!({}),
            ),
            (
                "other tools need nothing",
                "Read",
                json!({"rawInput": {"filePath": "a"}}),
                json!({}),
            ),
        ];
        for (case, name, call, want) in cases {
            assert_eq!(fill(name, call), want, "{case}");
        }
    }
}
