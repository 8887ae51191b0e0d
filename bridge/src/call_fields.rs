//! Readers of a tool call's merged fields (its ACP `kind` and `title`, the
//! permission request's parts kept beside them, a name declared in `_meta`),
//! shared by naming ([`crate::tool_name`]) and inputs ([`crate::tool_input`]),
//! which both read them and neither owns them.

use serde_json::{Map, Value};

use crate::json_field::field;

/// The Claude name for an ACP kind, `None` for `other`, a missing kind or a
/// kind this table does not know (then the agent's title is the name).
pub fn name_for_kind(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "read" => "Read",
        "edit" => "Edit",
        "execute" => "Bash",
        "fetch" => "WebFetch",
        "search" => "Search",
        "delete" => "Delete",
        "move" => "Move",
        "think" => "Think",
        _ => return None,
    })
}

/// Where [`permission_tool_call`] keeps a permission request's `content`.
pub const PERMISSION_CONTENT: &str = "permissionContent";

/// Where [`permission_request_fields`] keeps a permission request's `options`.
pub const PERMISSION_OPTIONS: &str = "permissionOptions";

/// Where [`permission_tool_call`] keeps the permission request's `title`
/// and `kind`: they describe the request, so they never rename a call the
/// agent already named; they only stand in while the call has none.
pub const PERMISSION_TITLE: &str = "permissionTitle";
pub const PERMISSION_KIND: &str = "permissionKind";

pub fn non_empty(v: &Value) -> Option<&str> {
    v.as_str().map(str::trim).filter(|t| !t.is_empty())
}

/// The call's title: its own, else the permission request's.
pub fn title(call: &Value) -> Option<&str> {
    non_empty(field(call, "title")).or_else(|| non_empty(field(call, PERMISSION_TITLE)))
}

/// The call's kind: its own, else the permission request's.
pub fn kind(call: &Value) -> Option<&str> {
    field(call, "kind")
        .as_str()
        .or_else(|| field(call, PERMISSION_KIND).as_str())
}

/// Where [`permission_request_fields`] keeps the permission request's `_meta`.
pub const PERMISSION_META: &str = "permissionMeta";

/// JSON arguments in a text block: the permission request's content first,
/// then (with `with_content`) the call's.
pub fn json_text_arguments(call: &Value, with_content: bool) -> Option<Value> {
    let own = with_content
        .then(|| field(call, "content").as_array())
        .flatten();
    let blocks = field(call, PERMISSION_CONTENT)
        .as_array()
        .into_iter()
        .chain(own);
    for item in blocks.flatten() {
        let block = if field(item, "type") == "content" {
            field(item, "content")
        } else {
            item
        };
        if let Some(text) = field(block, "text").as_str()
            && let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(text)
        {
            return Some(v);
        }
    }
    None
}

/// The name of an agent's own tool from its `_meta`, kind or title, before
/// its arguments refine it (see [`crate::tool_input::file_tool_name`]).
pub fn declared_tool_name(call: &Value) -> &str {
    if let Some(name) = meta_builtin_name(call) {
        return name;
    }
    if let Some(name) = kind(call).and_then(name_for_kind) {
        return name;
    }
    // **names are identifiers**: a title carrying arguments, a path or a
    // sentence is never a name
    match title(call).and_then(title_name) {
        Some((name, _)) => name,
        None => "Tool",
    }
}

/// The name of a call its kind made a file tool (`Edit`, or `Write` by its
/// arguments) when it carries no path to change: **`Edit` and `Write` only
/// for calls that carry a path** (an agent labels a read-only screenshot
/// `edit`). The title when it names the call, else `Tool`; `None` when the
/// name stands (not a file tool, named by `_meta`, or a path is known).
pub fn pathless_file_tool_name<'a>(call: &'a Value, name: &str, has_path: bool) -> Option<&'a str> {
    let by_kind = matches!(name, "Edit" | "Write") && meta_builtin_name(call).is_none();
    if !by_kind || has_path {
        return None;
    }
    Some(title(call).and_then(title_name).map_or("Tool", |(n, _)| n))
}

/// Whether `s` can be a Claude tool name: 1 to 64 of `A-Z a-z 0-9 _ -`
/// (the Messages API's rule for tool names).
pub fn is_tool_identifier(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
}

/// An agent's title as a tool name and the arguments its decoration
/// carries: the whole title when it is an identifier, else an identifier
/// head followed by `: <JSON object>` or ` <JSON object>` (`apply_patch:
/// {"input":"*** Begin Patch..."}`). Anything else (a command line, a path,
/// a sentence) names nothing.
pub fn title_name(title: &str) -> Option<(&str, Option<Value>)> {
    let title = title.trim();
    if is_tool_identifier(title) {
        return Some((title, None));
    }
    let at = title.find([':', ' '])?;
    let (head, tail) = (&title[..at], title[at..].trim_start_matches(':').trim());
    if !is_tool_identifier(head) || !tail.starts_with('{') {
        return None;
    }
    match serde_json::from_str::<Value>(tail) {
        Ok(v @ Value::Object(_)) => Some((head, Some(v))),
        _ => None,
    }
}

/// Claude Code's built-in tool names: a `_meta` name field holding exactly
/// one of them names the call so (an ACP kind is coarser: `edit` is Write,
/// Edit or MultiEdit).
const CLAUDE_BUILTIN_TOOLS: &[&str] = &[
    "Agent",
    "AskUserQuestion",
    "Bash",
    "BashOutput",
    "Edit",
    "EnterPlanMode",
    "ExitPlanMode",
    "Glob",
    "Grep",
    "KillShell",
    "LS",
    "MultiEdit",
    "NotebookEdit",
    "NotebookRead",
    "Read",
    "Skill",
    "Task",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
    "Write",
];

/// The Claude built-in tool the call's ACP `name` is, else the one its
/// `_meta` (or its permission request's) names in a tool-name field
/// (`toolName`, `tool_name`, `tool`, `name`, at any depth up to 3), the
/// whole string exactly one of [`CLAUDE_BUILTIN_TOOLS`]: structure,
/// whoever sends it. Any other `name` (`exec_command`) says less than the
/// call's kind, so it names nothing here.
pub fn meta_builtin_name(call: &Value) -> Option<&'static str> {
    let own = field(call, "name").as_str();
    if let Some(name) = own.and_then(|s| CLAUDE_BUILTIN_TOOLS.iter().find(|b| **b == s).copied()) {
        return Some(name);
    }
    fn find(v: &Value, depth: usize) -> Option<&'static str> {
        let map = v.as_object().filter(|_| depth > 0)?;
        let named = TOOL_KEYS
            .iter()
            .filter_map(|k| map.get(*k).and_then(Value::as_str))
            .find_map(|s| CLAUDE_BUILTIN_TOOLS.iter().find(|b| **b == s).copied());
        named.or_else(|| map.values().find_map(|x| find(x, depth - 1)))
    }
    find(field(call, "_meta"), 3).or_else(|| find(field(call, PERMISSION_META), 3))
}

/// Keys whose value may spell a whole identity (`tool_name: "S__T"`).
pub(crate) const TOOL_KEYS: &[&str] = &["tool", "tool_name", "toolName", "name"];

/// rawInput / `_meta` keys that name a call's server and tool rather than
/// hold its arguments.
pub(crate) const IDENTITY_KEYS: &[&str] = &[
    "server",
    "server_name",
    "serverName",
    "mcp_server",
    "tool",
    "tool_name",
    "toolName",
    "name",
    "variant",
];
/// rawInput keys that hold an MCP call's arguments.
pub(crate) const ARGUMENT_KEYS: &[&str] = &[
    "arguments",
    "tool_input",
    "input",
    "args",
    "params",
    "parameters",
];

/// The arguments a rawInput wraps in an envelope: exactly one argument key
/// holding an object, beside nothing but keys that name the tool or server
/// (`{tool, arguments}`, `{name, input}`, `{args}`, codex's `{server, tool,
/// arguments}`). `None`: rawInput is the arguments itself, and so is an
/// envelope of no arguments (`{"tool_input": {}}` says nothing more).
pub fn wrapped_arguments(raw: &Map<String, Value>) -> Option<&Map<String, Value>> {
    let mut wrapped = None;
    for (key, value) in raw {
        match value {
            Value::Object(inner) if ARGUMENT_KEYS.contains(&key.as_str()) => {
                if wrapped.replace(inner).is_some() {
                    return None;
                }
            }
            _ if IDENTITY_KEYS.contains(&key.as_str()) => {}
            _ => return None,
        }
    }
    wrapped.filter(|inner| !inner.is_empty())
}
