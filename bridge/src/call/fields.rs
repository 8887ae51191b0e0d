//! A tool call's merged fields ([`CallFields`]: its own, and the permission
//! request's parts apart) and their readers (its ACP `kind` and `title`, a
//! name declared in `_meta`),
//! shared by naming ([`crate::call::identity`]) and inputs ([`crate::call::input`]),
//! which both read them and neither owns them.

mod own;

use serde_json::{Map, Value};

use crate::acp::json_field::field;
use crate::acp::permission_option::PermissionOption;
use crate::acp::tool_call::ToolKind;
#[cfg(test)]
pub(crate) use own::LISTED_MERGE_MAX;
pub use own::{OwnFields, held_bytes, list_bytes};

/// A tool call's fields merged across its frames: the agent's own ACP
/// fields ([`OwnFields`]: typed where the schema names them, every other
/// key kept) and, apart from them, the parts of the permission requests
/// that asked about the call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallFields {
    /// The call's own fields: none before any frame.
    pub own: OwnFields,
    pub permission: PermissionParts,
}

/// The parts of a permission request that describe the call it asks about
/// (see [`crate::call::identity::permission_request_fields`]). They describe the
/// request, not the call, so they never replace the call's own fields: its
/// `title` and `kind` stand in only while the call has none (some agents
/// title a request with the arguments, or say `read` for an MCP call); its
/// `content` is no result (codex 0.x: "Allow the unity-ops MCP server to
/// run tool ..."; Gemini: the arguments as JSON text).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PermissionParts {
    /// `toolCall.title`.
    pub title: Option<String>,
    /// `toolCall.kind`.
    pub kind: Option<ToolKind>,
    /// `toolCall.content`'s blocks.
    pub content: Option<Vec<Value>>,
    /// The request's `options`: Gemini CLI before 0.36 names the MCP tool
    /// and server only in the option names.
    pub options: Option<Vec<PermissionOption>>,
    /// The request's `_meta` (an object).
    pub meta: Option<Value>,
}

static NULL: Value = Value::Null;

/// A call of no fields (what a request for no known call reads).
static EMPTY: CallFields = CallFields {
    own: OwnFields::new(),
    permission: PermissionParts {
        title: None,
        kind: None,
        content: None,
        options: None,
        meta: None,
    },
};

impl CallFields {
    /// A call of no fields.
    pub fn empty() -> &'static CallFields {
        &EMPTY
    }
}

/// A call's own fields (an object's; any other value has none), no
/// permission request's.
impl From<Value> for CallFields {
    fn from(own: Value) -> CallFields {
        CallFields {
            own: OwnFields::from(own),
            permission: PermissionParts::default(),
        }
    }
}

/// A call's own fields, no permission request's.
impl From<OwnFields> for CallFields {
    fn from(own: OwnFields) -> CallFields {
        CallFields {
            own,
            permission: PermissionParts::default(),
        }
    }
}

impl PermissionParts {
    /// The request's `_meta`, `Null` when it has none.
    pub fn meta(&self) -> &Value {
        self.meta.as_ref().unwrap_or(&NULL)
    }

    /// The request's title, when it says something.
    pub fn title(&self) -> Option<&str> {
        self.title
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
    }

    /// The request's content blocks (none when it has none).
    pub fn content(&self) -> &[Value] {
        self.content.as_deref().unwrap_or_default()
    }

    /// The request's options (none when it has none).
    pub fn options(&self) -> &[PermissionOption] {
        self.options.as_deref().unwrap_or_default()
    }

    /// Takes every part `later` has: a later request describes the call
    /// anew.
    pub fn merge(&mut self, later: PermissionParts) {
        let PermissionParts {
            title,
            kind,
            content,
            options,
            meta,
        } = later;
        if title.is_some() {
            self.title = title;
        }
        if kind.is_some() {
            self.kind = kind;
        }
        if content.is_some() {
            self.content = content;
        }
        if options.is_some() {
            self.options = options;
        }
        if meta.is_some() {
            self.meta = meta;
        }
    }
}

/// The call's title: its own, else the permission request's.
pub fn title(call: &CallFields) -> Option<&str> {
    call.own.title().or_else(|| call.permission.title())
}

/// The call's kind: its own, else the permission request's.
pub fn kind(call: &CallFields) -> Option<&ToolKind> {
    call.own.kind.as_ref().or(call.permission.kind.as_ref())
}

/// JSON arguments in a text block: the permission request's content first,
/// then (with `with_content`) the call's.
pub fn json_text_arguments(call: &CallFields, with_content: bool) -> Option<Value> {
    let own = if with_content {
        call.own.content()
    } else {
        &[]
    };
    let blocks = call.permission.content().iter().chain(own);
    for item in blocks {
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
/// its arguments refine it (see [`crate::call::input::file_tool_name`]).
pub fn declared_tool_name(call: &CallFields) -> &str {
    if let Some(name) = meta_builtin_name(call) {
        return name;
    }
    if let Some(name) = kind(call).and_then(ToolKind::claude_name) {
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
pub fn pathless_file_tool_name<'a>(
    call: &'a CallFields,
    name: &str,
    has_path: bool,
) -> Option<&'a str> {
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
pub fn meta_builtin_name(call: &CallFields) -> Option<&'static str> {
    let own = call.own.name.as_deref();
    if let Some(name) = own.and_then(|s| CLAUDE_BUILTIN_TOOLS.iter().find(|b| **b == s).copied()) {
        return Some(name);
    }
    fn find(v: &Value, depth: usize) -> Option<&'static str> {
        let map = v.as_object().filter(|_| depth > 0)?;
        let named = TOOL_KEYS
            .iter()
            .filter_map(|k| crate::acp::json_field::map_field(map, k).as_str())
            .find_map(|s| CLAUDE_BUILTIN_TOOLS.iter().find(|b| **b == s).copied());
        named.or_else(|| map.values().find_map(|x| find(x, depth - 1)))
    }
    find(call.own.meta(), 3).or_else(|| find(call.permission.meta(), 3))
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
/// arguments}`), or an action object's `data` ([`action_data`]). `None`:
/// rawInput is the arguments itself, and so is an envelope of no arguments
/// (`{"tool_input": {}}` says nothing more).
pub fn wrapped_arguments(raw: &Map<String, Value>) -> Option<&Map<String, Value>> {
    if let Some(data) = action_data(raw) {
        return Some(data).filter(|inner| !inner.is_empty());
    }
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

/// The arguments of an action object: `{data: {...}, kind: "<Something>Action"}`
/// (or `type`), an agent's typed action wrapping a tool's arguments; `data`
/// is an argument key only beside such a name.
pub fn action_data(raw: &Map<String, Value>) -> Option<&Map<String, Value>> {
    let data = raw.get("data")?.as_object()?;
    let names_action = |s: &str| s.len() > "Action".len() && s.ends_with("Action");
    let named = ["kind", "type"]
        .iter()
        .filter_map(|k| raw.get(*k)?.as_str())
        .any(names_action);
    (raw.len() == 2 && named).then_some(data)
}
