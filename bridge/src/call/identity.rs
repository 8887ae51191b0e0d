//! The Claude tool name and input for an ACP tool call. The panel renders,
//! auto-approves and gates by Claude tool names, so every tool call gets one.
//!
//! **One identity rule, the same for every agent**: a call is a call of MCP
//! server S, tool T when a structural field of the call *is* an identifier
//! naming S and T (see [`identity`]): the call's ACP `name`, rawInput `server` + `tool`, rawInput
//! `tool_name` / `toolName` / `name` / `tool`, the title, any string in
//! `_meta`, the permission request's title, `_meta` and option names. The
//! spellings are `mcp__S__T`, `S__T`, `mcp.S.T`, `Tool: S/T`,
//! `T (S MCP Server)` for any server, and S followed by any run of separator
//! characters (`-`, `_`, `.`, `/`, `:`) and T (also after an `mcp` prefix)
//! for the panel's own servers, where the separator could also be part of a
//! name; any of them may be followed by a
//! decoration (`: <arguments JSON>`). Whole fields only: a shell command or a
//! sentence that mentions a tool is not that tool. The agents recorded so far
//! are examples of the rule, not cases of it:
//!
//! | agent | where the identity is |
//! |---|---|
//! | codex-acp | rawInput `{server, tool, arguments}`; title `Tool: S/T` (0.x) or `mcp.S.T` (1.x/2.x) |
//! | Grok Build | rawInput `tool_name: "S__T"` of its `use_tool` meta-tool; title and `_meta` `S__T` |
//! | Gemini CLI >= 0.36 | title `T (S MCP Server)`; arguments as a JSON text block |
//! | Gemini CLI 0.24-0.35 | the permission options `proceed_always_tool` / `proceed_always_server` "Always Allow <x>"; the title is the arguments as JSON |
//!
//! A bare tool name (`uap_ping`, also decorated: `uap_ping({...})`) names an
//! MCP call only when it is exactly one tool of exactly one registered
//! server, by the tool lists the host hands the core, and a dispatcher
//! meta-tool's arguments naming a registered server's listed tool name that
//! call; see [`crate::call::server_tools`].
//!
//! An MCP call's input is its arguments (see [`mcp_arguments`]); anything
//! else is named by a Claude built-in name in `_meta` ([`meta_builtin_name`]),
//! else by ACP `kind`, and by title when the kind is `other` or missing.
//! A permission request's title and kind never rename a call: they stand in
//! only while the call has none ([`PermissionParts`]).

use serde_json::{Map, Value};

use crate::acp::json_field::field;
use crate::acp::permission_option::PermissionOption;
use crate::acp::tool_call::ToolKind;
use crate::call::fields::{ARGUMENT_KEYS, IDENTITY_KEYS, TOOL_KEYS};
pub use crate::call::fields::{
    CallFields, OwnFields, PermissionParts, action_data, declared_tool_name, is_tool_identifier,
    json_text_arguments, kind, meta_builtin_name, title, title_name, wrapped_arguments,
};
use crate::call::input::{AgentToolInput, agent_tool_input};
pub use crate::call::server_tools::RegisteredServers;
use crate::call::server_tools::{bare_identity, decorated_name, dispatched_identity};

/// An MCP tool a call invokes, as the agent framed it.
#[derive(Debug, Clone, PartialEq)]
pub struct McpCall {
    pub server: String,
    pub tool: String,
    /// The tool's arguments, when the frames carried them (`{}` otherwise).
    pub arguments: Value,
}

impl McpCall {
    /// Claude's name for it: `mcp__<server>__<tool>`.
    pub fn claude_name(&self) -> String {
        format!("mcp__{}__{}", self.server, self.tool)
    }
}

/// Merges one frame's view of a tool call (a `tool_call`, a
/// `tool_call_update`, or a permission request's fields) into what is
/// known so far (`sessionUpdate` / `toolCallId` are not kept). Absent or
/// null fields keep their value (codex 2.x drops rawInput
/// from its last update); `rawInput` objects merge key by key (Grok's
/// retitling update carries `variant` and `tool_name` but may leave out
/// `tool_input`); every other field is replaced, and so is each part of the
/// permission request the frame carries.
pub fn merge_tool_call(known: &mut CallFields, frame: &CallFields) {
    merge_tool_call_owned(known, frame.clone());
}

/// [`merge_tool_call`] taking the frame: its values move into `known`, so a
/// large result (an image) is not copied.
pub fn merge_tool_call_owned(known: &mut CallFields, frame: CallFields) {
    known.permission.merge(frame.permission);
    known.own.merge(frame.own);
}

/// A permission request's `toolCall` as fields to merge into the call: its
/// `content`, `title` and `kind` describe the request, not the call, so
/// they go to its [`PermissionParts`] (a rejected call's result then comes
/// from its own final frame, and Gemini's arguments stay readable), the
/// rest to its own fields.
pub fn permission_tool_call(tool_call: &Value) -> CallFields {
    let mut own = OwnFields::from(tool_call.clone());
    let permission = PermissionParts {
        title: own.title.take(),
        kind: own.kind.take(),
        content: own.content.take(),
        ..PermissionParts::default()
    };
    CallFields { own, permission }
}

/// A permission request's `params` as fields to merge into the call: its
/// `toolCall` (see [`permission_tool_call`]) plus its `options` and `_meta`
/// as [`PermissionParts`], because Gemini CLI before 0.36 names the MCP tool
/// and server only in the option names.
pub fn permission_request_fields(params: &Value) -> CallFields {
    let mut fields = permission_tool_call(field(params, "toolCall"));
    let options = field(params, "options");
    if options.is_array() {
        fields.permission.options = Some(PermissionOption::read_all(options));
    }
    if let Some(meta) = params.get("_meta").filter(|m| m.is_object()) {
        fields.permission.meta = Some(meta.clone());
    }
    fields
}

/// The `<x>` of the option named `Always Allow <x>` whose `optionId` is
/// `option_id` (Gemini's structural ids), if `<x>` is an id.
fn always_allow_subject<'a>(call: &'a CallFields, option_id: &str) -> Option<&'a str> {
    call.permission
        .options()
        .iter()
        .find(|o| o.option_id.as_deref() == Some(option_id))?
        .name
        .as_deref()?
        .strip_prefix("Always Allow ")
        .map(str::trim)
        .filter(|s| is_id(s))
}

/// A name part as agents spell server and tool ids: no whitespace, no
/// brackets, not empty.
fn is_id(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// `<server>__<tool>` with exactly one `__`: codex 2.x announces a failed
/// MCP startup as a call titled `mcp__unity-ops__startup`, which is no
/// `unity-ops` tool.
/// Where `s` first has `__`, its bytes compared in place: a string pattern
/// builds a searcher per call, and this runs for every call's identity.
fn double_underscore(s: &str) -> Option<usize> {
    s.as_bytes().windows(2).position(|w| w == b"__")
}

fn split_double_underscore(s: &str) -> Option<(String, String)> {
    let at = double_underscore(s)?;
    let (server, tool) = (&s[..at], &s[at + 2..]);
    // a longer run of underscores is one separator (`S___T`)
    let tool = tool.trim_start_matches('_');
    (is_id(server) && is_id(tool) && double_underscore(tool).is_none())
        .then(|| (server.to_string(), tool.to_string()))
}

/// An MCP tool identity spelled in one whole string, without decoration.
/// Spellings whose separator is unambiguous (`mcp__S__T`, `mcp.S.T`,
/// `S__T`, `Tool: S/T`, `T (S MCP Server)`) name any server; S followed by
/// any run of separators (`S_T`, `S-T`, `S___T`, `S.T`, `S/T`, `S:T`), which
/// also occur inside names, only a server in `servers`, the panel's servers
/// the bridge registered.
fn spelled_identity(s: &str, servers: &[String]) -> Option<(String, String)> {
    let s = s.trim();
    if let Some(rest) = s.strip_prefix("Tool: ")
        && let Some((server, tool)) = rest.split_once('/')
        && is_id(server)
        && is_id(tool)
    {
        return Some((server.into(), tool.into()));
    }
    if let Some(rest) = s.strip_suffix(" MCP Server)")
        && let Some((tool, server)) = rest.split_once(" (")
        && is_id(tool)
        && is_id(server)
    {
        return Some((server.into(), tool.into()));
    }
    for server in servers {
        // `S__T`, `S::T`, `S_T`, `S.T`, `S/T`, `S:T`, also after an `mcp`
        // prefix, S as registered or with every character but letters,
        // digits and `_` as `_` (agents sanitise names so: `unity_ops`)
        let sanitises = !server.chars().all(is_identifier_char);
        let bodies = std::iter::once(s).chain(
            ["mcp__", "mcp.", "mcp_", "mcp/", "mcp:"]
                .iter()
                .filter_map(|p| s.strip_prefix(p)),
        );
        let rests = bodies.flat_map(|body| {
            std::iter::once(body.strip_prefix(server.as_str()))
                .chain(sanitises.then(|| strip_sanitised(body, server)))
                .flatten()
        });
        for rest in rests {
            // any run of separator characters: `-` (Copilot CLI's
            // `unity-ops-uap_ping`), `___` (Factory Droid's), `::`, ...
            let tool = rest.trim_start_matches(is_separator);
            if tool.len() < rest.len() && is_id(tool) && double_underscore(tool).is_none() {
                return Some((server.clone(), tool.to_string()));
            }
        }
    }
    if let Some(rest) = s.strip_prefix("mcp__") {
        return split_double_underscore(rest);
    }
    if let Some(rest) = s.strip_prefix("mcp.")
        && let Some((server, tool)) = rest.rsplit_once('.')
        && is_id(server)
        && is_id(tool)
    {
        return Some((server.into(), tool.into()));
    }
    split_double_underscore(s)
}

/// A character that may stand between a registered server's name and its
/// tool's.
fn is_separator(c: char) -> bool {
    matches!(c, '-' | '_' | '.' | '/' | ':')
}

fn is_identifier_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `body` after a prefix that is `name` with every character but ASCII
/// letters, digits and `_` as `_`: how agents that allow only identifier
/// characters in tool names spell a server (`unity-ops` -> `unity_ops`).
/// Compared in place: this runs for every call's identity.
fn strip_sanitised<'a>(body: &'a str, name: &str) -> Option<&'a str> {
    name.chars().try_fold(body, |rest, c| {
        rest.strip_prefix(if is_identifier_char(c) { c } else { '_' })
    })
}

/// An MCP call's server, tool and the arguments its decoration carries
/// (see [`field_identity`]).
pub type Identity = (String, String, Option<Value>);

/// An MCP identity in one whole field, possibly followed by a decoration
/// (`: <arguments JSON>`, ` <arguments JSON>`), with the arguments the
/// decoration carries. A field that merely mentions a tool (a shell command,
/// free text) is no identity.
pub fn field_identity(s: &str, servers: &[String]) -> Option<Identity> {
    let s = s.trim();
    if let Some((server, tool)) = spelled_identity(s, servers) {
        return Some((server, tool, None));
    }
    // where `": "`, then `" {"`, occur: a two-byte window is compared in
    // place (a string pattern builds a searcher per call)
    let at = |pair: &'static [u8; 2]| {
        s.as_bytes()
            .windows(2)
            .enumerate()
            .filter(move |(_, w)| *w == pair)
            .map(|(i, _)| i)
    };
    for i in at(b": ").chain(at(b" {")) {
        let (head, tail) = (&s[..i], s[i..].trim_start_matches(':').trim());
        if let Some((server, tool)) = spelled_identity(head, servers) {
            let arguments = match serde_json::from_str::<Value>(tail) {
                Ok(v @ Value::Object(_)) => Some(v),
                _ if tail.starts_with('{') || tail.is_empty() => None,
                // `<identity>: <free text>` is a sentence, not a decoration
                _ => continue,
            };
            return Some((server, tool, arguments));
        }
    }
    None
}

const SERVER_KEYS: &[&str] = &["server", "server_name", "serverName", "mcp_server"];
/// Keys that name the tool beside a server key (`{server, tool}`); `name`
/// is left out: `{server, name}` is as likely an agent tool's own arguments.
const PAIRED_TOOL_KEYS: &[&str] = &["tool", "tool_name", "toolName"];

/// A server + tool pair of keys in one object (`{server, tool}`).
fn keyed_identity(obj: &Value) -> Option<(String, String)> {
    let server = SERVER_KEYS.iter().find_map(|k| field(obj, k).as_str())?;
    let tool = PAIRED_TOOL_KEYS
        .iter()
        .find_map(|k| field(obj, k).as_str())?;
    (is_id(server) && is_id(tool)).then(|| (server.to_string(), tool.to_string()))
}

/// The first identity among the string values of `v` (objects and arrays
/// searched to a small depth), each taken as a whole field.
fn identity_in_values(v: &Value, servers: &[String], depth: usize) -> Option<Identity> {
    match v {
        Value::String(s) => field_identity(s, servers),
        Value::Object(map) if depth > 0 => {
            if let Some((s, t)) = keyed_identity(v) {
                return Some((s, t, None));
            }
            map.values()
                .find_map(|x| identity_in_values(x, servers, depth - 1))
        }
        Value::Array(items) if depth > 0 => items
            .iter()
            .find_map(|x| identity_in_values(x, servers, depth - 1)),
        _ => None,
    }
}

/// The MCP identity of a call (server, tool, decoration arguments) from any
/// of its structural fields, in this order: the call's `name`, rawInput `server` + `tool`,
/// rawInput's name fields, the title, any string in `_meta`, the permission
/// request's title, `_meta` and option names; else a dispatcher's
/// arguments naming a registered server's tool ([`dispatched_identity`]);
/// else a bare tool name one registered server lists ([`bare_identity`]).
/// Wherever the identity is found, a title spelling the same tool with a
/// decoration still carries the call's arguments.
pub fn identity(call: &CallFields, registered: &RegisteredServers) -> Option<Identity> {
    let servers = registered.names();
    let (server, tool, decoration) = undecorated_identity(call, servers)
        .or_else(|| dispatched_identity(call, registered).map(|(s, t)| (s, t, None)))
        .or_else(|| bare_identity(call, registered))?;
    let decoration = decoration.or_else(|| {
        let titles = [call.own.title(), call.permission.title()];
        let spelled = titles
            .into_iter()
            .flatten()
            .filter_map(|title| field_identity(title, servers))
            .find(|(s, t, d)| *s == server && *t == tool && d.is_some())
            .and_then(|(_, _, d)| d);
        // the bare name decorated (`T({...})`) where the identity is elsewhere
        spelled.or_else(|| {
            titles
                .into_iter()
                .flatten()
                .filter_map(decorated_name)
                .find(|(name, arguments)| *name == tool && arguments.is_some())
                .and_then(|(_, arguments)| arguments)
        })
    });
    Some((server, tool, decoration))
}

fn undecorated_identity(call: &CallFields, servers: &[String]) -> Option<Identity> {
    if mcp_startup_server(&call.own).is_some() {
        return None;
    }
    // ACP's own `name` of the call, when the agent gives one
    if let Some(found) = call.own.name().and_then(|s| field_identity(s, servers)) {
        return Some(found);
    }
    let raw = call.own.raw_input();
    if let Some((s, t)) = keyed_identity(raw)
        && field_identity(&t, servers).is_none()
    {
        return Some((s, t, None));
    }
    let named = TOOL_KEYS
        .iter()
        .filter_map(|k| field(raw, k).as_str())
        .chain(call.own.title())
        .find_map(|s| field_identity(s, servers));
    if named.is_some() {
        return named;
    }
    if let Some(found) = identity_in_values(call.own.meta(), servers, 3) {
        return Some(found);
    }
    if let Some(found) = call
        .permission
        .title()
        .and_then(|s| field_identity(s, servers))
    {
        return Some(found);
    }
    if let Some(found) = identity_in_values(call.permission.meta(), servers, 3) {
        return Some(found);
    }
    // an option name ending in an identity (`Always allow mcp__s__t`)
    if let Some(found) = call
        .permission
        .options()
        .iter()
        .filter_map(|o| o.name.as_deref())
        .filter_map(|n| n.split_whitespace().last())
        .find_map(|last| spelled_identity(last, servers))
    {
        return Some((found.0, found.1, None));
    }
    // Gemini CLI 0.24-0.35: tool and server named only by the options
    // `proceed_always_tool` and `proceed_always_server`
    if let (Some(tool), Some(server)) = (
        always_allow_subject(call, "proceed_always_tool"),
        always_allow_subject(call, "proceed_always_server"),
    ) {
        return Some((server.into(), tool.into(), None));
    }
    None
}

/// The server of an MCP startup notice (`mcp__<server>__startup`, kind
/// other or none, no rawInput: codex reports starting each server so), if
/// `call` is one: no tool the model called.
pub(crate) fn mcp_startup_server(call: &OwnFields) -> Option<String> {
    let title = call.title.as_deref()?;
    let server = title.strip_prefix("mcp__")?.strip_suffix("__startup")?;
    let other = matches!(call.kind, None | Some(ToolKind::Other));
    (other && call.raw_input.is_none() && !server.is_empty()).then(|| server.to_string())
}

/// The arguments of an MCP call, if any frame so far carried them: an
/// argument key of rawInput, else rawInput itself minus identity keys (a
/// rawInput that holds only the identity is a call without arguments), else
/// the identity's decoration, a title that is a JSON object, or a JSON
/// object text block of the permission request (or, with `with_content`, of
/// the call's content: not once the content is the tool's result). An empty
/// rawInput (`{}`) counts only when no other source has arguments.
pub fn mcp_arguments(
    call: &CallFields,
    decoration: Option<&Value>,
    with_content: bool,
) -> Option<Value> {
    let raw = call.own.raw_input();
    let raw_arguments = raw_input_arguments(raw);
    if raw_arguments.is_some() && raw.as_object().is_some_and(|m| !m.is_empty()) {
        return raw_arguments;
    }
    // an empty rawInput says least: another source's arguments win over it
    other_arguments(call, decoration, with_content).or(raw_arguments)
}

/// An MCP call's arguments as its rawInput carries them: an argument key,
/// else rawInput minus identity keys.
fn raw_input_arguments(raw: &Value) -> Option<Value> {
    if let Some(data) = raw.as_object().and_then(action_data) {
        return Some(Value::Object(data.clone()));
    }
    for key in ARGUMENT_KEYS {
        match field(raw, key) {
            v @ Value::Object(_) => return Some(v.clone()),
            Value::String(s) => {
                if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(s) {
                    return Some(v);
                }
            }
            _ => {}
        }
    }
    if let Some(map) = raw.as_object() {
        let rest: Map<String, Value> = map
            .iter()
            .filter(|(k, _)| !IDENTITY_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        return Some(Value::Object(rest));
    }
    None
}

/// An MCP call's arguments from anywhere but its rawInput: the identity's
/// decoration, a JSON object title, a JSON object text block.
pub fn other_arguments(
    call: &CallFields,
    decoration: Option<&Value>,
    with_content: bool,
) -> Option<Value> {
    if let Some(v) = decoration {
        return Some(v.clone());
    }
    let titles = [call.own.title(), call.permission.title()];
    for t in titles.into_iter().flatten() {
        if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(t) {
            return Some(v);
        }
    }
    json_text_arguments(call, with_content)
}

/// The MCP tool this call invokes, from any spelling of its identity in any
/// structural field (see [`identity`]); `servers` are the panel's servers
/// the bridge registered and their tools (none: only unambiguous spellings
/// count).
pub fn mcp_call_among(call: &CallFields, servers: &RegisteredServers) -> Option<McpCall> {
    let (server, tool, decoration) = identity(call, servers)?;
    let arguments =
        mcp_arguments(call, decoration.as_ref(), true).unwrap_or_else(|| Value::Object(Map::new()));
    Some(McpCall {
        server,
        tool,
        arguments,
    })
}

/// [`mcp_call_among`] with no known server.
pub fn mcp_call(call: &CallFields) -> Option<McpCall> {
    mcp_call_among(call, &RegisteredServers::default())
}

/// The Claude tool name for a tool call. `call` holds the ACP fields seen so
/// far for it (`kind`, `title`, `rawInput`, `_meta`, ...), merged across
/// `tool_call` / `tool_call_update` / the permission request's `toolCall`
/// (see [`merge_tool_call`]).
pub fn claude_tool_name(call: &CallFields) -> String {
    claude_tool_name_among(call, &RegisteredServers::default())
}

/// [`claude_tool_name`] knowing the panel's MCP servers: an MCP identity
/// wins over any kind or title, and a built-in name in `_meta` (see
/// [`meta_builtin_name`]) over the kind.
pub fn claude_tool_name_among(call: &CallFields, servers: &RegisteredServers) -> String {
    claude_tool_name_known(call, identity(call, servers).as_ref())
}

/// [`claude_tool_name_among`] with the call's [`identity`] already worked out.
pub fn claude_tool_name_known(call: &CallFields, identity: Option<&Identity>) -> String {
    if let Some((server, tool, _)) = identity {
        return format!("mcp__{server}__{tool}");
    }
    AgentToolInput::new(call).name().to_string()
}

/// The `input` of the call's `tool_use`: an MCP call's real arguments; for
/// anything else rawInput (an object; anything else under `rawInput`) plus
/// `title` / `kind` and the first location's `path`, never overwriting a key
/// of rawInput, with `command` (a string,
/// also for codex's argv form), `file_path` and `path` where the agent gave
/// them, so the panel's describer and the script gate can read them.
pub fn tool_input(call: &CallFields) -> Value {
    if let Some(mcp) = mcp_call(call) {
        return mcp.arguments;
    }
    agent_tool_input(call)
}

/// Whether the call's identity may still change: a call titled `use_tool`
/// (a meta-tool that calls another) before the tool it calls is known, or a
/// call with neither title, kind nor rawInput yet. The core holds the
/// `tool_use` back while this holds, but emits it before anything that must
/// follow it.
pub fn identity_pending(call: &CallFields) -> bool {
    identity_pending_among(call, &RegisteredServers::default())
}

/// Whether the call has a kind (its own or its permission request's).
pub fn has_kind(call: &CallFields) -> bool {
    kind(call).is_some()
}

/// [`identity_pending`] knowing the panel's MCP servers.
pub fn identity_pending_among(call: &CallFields, servers: &RegisteredServers) -> bool {
    if title(call) == Some("use_tool") {
        return mcp_call_among(call, servers).is_none();
    }
    title(call).is_none() && kind(call).is_none() && call.own.raw_input().is_null()
}

#[cfg(test)]
pub(crate) mod tests;
