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

use crate::json_field::field;

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
    call: &Value,
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
            .or_else(|| from_structure(claude, call));
        if let Some(v) = found {
            out.push((claude, v));
        }
    }
    out
}

/// A Claude field from the call's ACP structure: a location or diff path,
/// a diff's texts, an `execute` title holding a command line.
fn from_structure(claude: &str, call: &Value) -> Option<Value> {
    let diff = diffs(call).next();
    match claude {
        "file_path" => field(call, "locations")
            .as_array()
            .and_then(|l| l.first())
            .and_then(|l| field(l, "path").as_str())
            .or_else(|| diff.and_then(|d| field(d, "path").as_str()))
            .map(|p| Value::String(p.to_string())),
        "content" => diff
            .filter(|d| field(d, "oldText").as_str().is_none_or(str::is_empty))
            .and_then(|d| field(d, "newText").as_str())
            .map(|t| Value::String(t.to_string())),
        "old_string" => diff.map(|d| Value::String(field(d, "oldText").as_str().unwrap_or("").into())),
        "new_string" => diff
            .and_then(|d| field(d, "newText").as_str())
            .map(|t| Value::String(t.to_string())),
        "command" => (crate::tool_name::kind(call) == Some("execute"))
            .then(|| crate::tool_name::title(call))
            .flatten()
            .filter(|t| t.contains(char::is_whitespace))
            .map(|t| Value::String(t.to_string())),
        _ => None,
    }
}

/// The call's `diff` content entries, its own then its permission request's.
fn diffs(call: &Value) -> impl Iterator<Item = &Value> {
    ["content", crate::tool_name::PERMISSION_CONTENT]
        .into_iter()
        .filter_map(|k| field(call, k).as_array())
        .flatten()
        .filter(|item| field(item, "type") == "diff")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fill(name: &str, call: Value) -> Value {
        let raw = call["rawInput"].as_object().cloned().unwrap_or_default();
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
                "Bash from an execute title with arguments",
                "Bash",
                json!({"kind": "execute", "title": "echo hi > Assets/A.cs", "rawInput": {"cwd": "/w"}}),
                json!({"command": "echo hi > Assets/A.cs"}),
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
