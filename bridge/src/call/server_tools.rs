//! The MCP servers the bridge registered with the agent, the tools each of
//! them lists, and the one naming rule that reads those lists: **a bare tool
//! name is resolved when it is exactly one tool of exactly one registered
//! server**.
//!
//! Some agents name an MCP call by its tool alone (`uap_ping` as the title,
//! the ACP `name` or rawInput `tool`), with no server anywhere in the call.
//! The host lists each registered server's tools once per session and hands
//! the lists to the core ([`crate::Bridge::set_server_tools`]); before that,
//! without a list, or when the name is a tool of two servers, a bare name
//! stays the agent's own tool's.
//!
//! Whole fields only, and the fields the identity rule reads (see
//! [`crate::call::identity::identity`]): the call's ACP `name`, rawInput's name
//! fields (`tool`, `tool_name`, `toolName`, `name`), the title, a name field
//! of `_meta`, the permission request's title and a name field of its
//! `_meta`. Option names are sentences, not fields. A spelled-out identity
//! (`mcp__S__T`, ...) wins over a bare name anywhere.
//!
//! **The agent's own tool is meant** when the call says so by structure: its
//! ACP name or `_meta` names a Claude built-in tool, or it has a kind other
//! than `other` and a location (a path it touches). MCP calls carry neither
//! (agents do give them kinds: `execute`, `read`, `edit`).

use serde_json::Value;

use crate::acp::json_field::field;
use crate::acp::tool_call::ToolKind;
use crate::call::fields::{CallFields, TOOL_KEYS, kind, meta_builtin_name};

/// The servers registered with the agent (by name) and what each listed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegisteredServers {
    names: Vec<String>,
    /// Each listed server's tool names, kept whatever the registered names
    /// are (a panel's `initialize` may change them before the session).
    tools: Vec<(String, Vec<String>)>,
}

impl RegisteredServers {
    /// The servers named, no tool list yet.
    pub fn new(names: Vec<String>) -> RegisteredServers {
        RegisteredServers {
            names,
            tools: Vec::new(),
        }
    }

    /// The registered servers' names.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The same lists for another set of registered servers.
    pub fn with_names(&self, names: Vec<String>) -> RegisteredServers {
        RegisteredServers {
            names,
            tools: self.tools.clone(),
        }
    }

    /// What `server` lists (a later list replaces an earlier one).
    pub fn set_tools(&mut self, server: &str, tools: Vec<String>) {
        match self.tools.iter_mut().find(|(s, _)| s == server) {
            Some((_, known)) => *known = tools,
            None => self.tools.push((server.to_string(), tools)),
        }
    }

    /// The registered server that lists `tool`, when exactly one does, and
    /// lists it once.
    pub fn server_of(&self, tool: &str) -> Option<&str> {
        let mut found = None;
        for (server, tools) in &self.tools {
            if !self.names.contains(server) {
                continue;
            }
            match tools.iter().filter(|t| *t == tool).count() {
                0 => {}
                1 if found.is_none() => found = Some(server.as_str()),
                _ => return None,
            }
        }
        found
    }

    /// Whether `server` is registered and lists `tool`.
    pub fn lists(&self, server: &str, tool: &str) -> bool {
        self.names.iter().any(|n| n == server)
            && self
                .tools
                .iter()
                .any(|(s, tools)| s == server && tools.iter().any(|t| t == tool))
    }

    fn has_lists(&self) -> bool {
        self.tools.iter().any(|(s, _)| self.names.contains(s))
    }
}

/// The server and tool a call names by a bare tool name (see the module
/// doc), and the arguments a decoration of it carries; `None` when no
/// whole field is exactly one registered tool (bare or decorated, see
/// [`decorated_name`]) or the call is the agent's own.
pub fn bare_identity(
    call: &CallFields,
    servers: &RegisteredServers,
) -> Option<(String, String, Option<Value>)> {
    if !servers.has_lists() || agents_own(call) {
        return None;
    }
    let raw = call.own.raw_input();
    let mut names: Vec<&str> = Vec::new();
    names.extend(call.own.name.as_deref());
    names.extend(TOOL_KEYS.iter().filter_map(|k| field(raw, k).as_str()));
    names.extend(call.own.title.as_deref());
    name_fields(call.own.meta(), 3, &mut names);
    names.extend(call.permission.title.as_deref());
    name_fields(call.permission.meta(), 3, &mut names);
    let names: Vec<&str> = names.into_iter().map(str::trim).collect();
    let listed = |name: &str| servers.server_of(name).map(str::to_string);
    let exact = names
        .iter()
        .find_map(|name| Some((listed(name)?, name.to_string(), None)));
    exact.or_else(|| {
        names.iter().find_map(|field| {
            let (name, arguments) = decorated_name(field)?;
            Some((listed(name)?, name.to_string(), arguments))
        })
    })
}

/// A name followed by a decoration of its arguments, as titles spell a
/// call: `T: {...}`, `T {...}`, `T({...})`, `T(x=1)`, `T()`; the name and
/// the arguments a JSON object decoration carries. Text after the name
/// that is no decoration (`T: pinging the editor`, `T is running`) makes
/// the field a sentence, not a name.
pub fn decorated_name(field: &str) -> Option<(&str, Option<Value>)> {
    let s = field.trim();
    let end = s.find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.')))?;
    let (name, rest) = s.split_at(end);
    if name.is_empty() {
        return None;
    }
    let object = |text: &str| match serde_json::from_str::<Value>(text.trim()) {
        Ok(v @ Value::Object(_)) => Some(v),
        _ => None,
    };
    if let Some(inner) = rest.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
        return Some((name, object(inner)));
    }
    let tail = rest.strip_prefix(':').unwrap_or(rest).trim();
    if !tail.starts_with('{') {
        return None;
    }
    Some((name, Some(object(tail)?)))
}

/// The server and tool a dispatcher call carries in its arguments: agents
/// that offer their model one meta-tool (`use_capability {action: "call",
/// capability_id: "mcp-tool:unity-ops/uap_ping", arguments: {...}}`) name
/// the real call in a string of rawInput (`[<scheme>:]<server>/<tool>`,
/// `<server>__<tool>`) or in two string fields of one object (a server and
/// a tool). Only a registered server and a tool it lists count, so a path
/// or a sentence never becomes an MCP name.
pub fn dispatched_identity(
    call: &CallFields,
    servers: &RegisteredServers,
) -> Option<(String, String)> {
    if !servers.has_lists() || agents_own(call) {
        return None;
    }
    dispatched_in(call.own.raw_input(), servers, 2)
}

fn dispatched_in(v: &Value, servers: &RegisteredServers, depth: usize) -> Option<(String, String)> {
    let map = v.as_object().filter(|_| depth > 0)?;
    let strings: Vec<&str> = map
        .values()
        .filter_map(Value::as_str)
        .map(str::trim)
        .collect();
    let spelled = strings.iter().find_map(|s| {
        let body = match s.split_once(':') {
            Some((scheme, rest)) if is_scheme(scheme) => rest,
            _ => s,
        };
        let (server, tool) = body.split_once('/').or_else(|| body.split_once("__"))?;
        servers
            .lists(server, tool)
            .then(|| (server.to_string(), tool.to_string()))
    });
    let paired = || {
        strings.iter().find_map(|server| {
            let tool = strings.iter().find(|t| servers.lists(server, t))?;
            Some((server.to_string(), tool.to_string()))
        })
    };
    spelled.or_else(paired).or_else(|| {
        map.values()
            .find_map(|x| dispatched_in(x, servers, depth - 1))
    })
}

/// A URI-like scheme before a dispatched name (`mcp-tool`, `mcp`).
fn is_scheme(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Whether the call says by structure that it is the agent's own tool: a
/// Claude built-in name, or a kind other than `other` with a location.
fn agents_own(call: &CallFields) -> bool {
    let located = call.own.locations.as_ref().is_some_and(|l| !l.is_empty());
    meta_builtin_name(call).is_some()
        || (located && kind(call).is_some_and(|k| *k != ToolKind::Other))
}

/// The string values of name keys ([`TOOL_KEYS`]) in `v`'s objects, to
/// `depth` levels.
fn name_fields<'a>(v: &'a Value, depth: usize, out: &mut Vec<&'a str>) {
    let Some(map) = v.as_object().filter(|_| depth > 0) else {
        return;
    };
    out.extend(TOOL_KEYS.iter().filter_map(|k| map.get(*k)?.as_str()));
    for x in map.values() {
        name_fields(x, depth - 1, out);
    }
}

#[cfg(test)]
mod tests;
