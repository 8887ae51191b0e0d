//! The Claude tool name and input for an ACP tool call. The panel renders,
//! auto-approves and gates by Claude tool names, so every tool call gets one.
//!
//! MCP tools are recognised **structurally**, only from the places where each
//! agent really puts the tool's identity (bridge.md "Tool-name mapping"),
//! never by searching a title or a command for a tool name:
//!
//! | agent | where the identity is |
//! |---|---|
//! | codex-acp 0.x | rawInput `{server, tool, arguments}`; title `Tool: <server>/<tool>` |
//! | codex-acp 1.x/2.x | the same rawInput; title `mcp.<server>.<tool>` with `_meta.is_mcp_tool_call` (kind `execute`, still not Bash) |
//! | Grok Build | title `use_tool` with rawInput `{tool_name: "<server>__<tool>", tool_input}`, later retitled `<server>__<tool>` with rawInput `variant` `UseTool` / `MCPTool`; a direct call titled `<server>__<tool>` |
//! | Gemini CLI >= 0.36 | title `<tool> (<server> MCP Server)`; arguments only as a JSON text block in `content` |
//! | Gemini CLI 0.24-0.35 | title = the arguments as JSON; tool and server only in the permission options `proceed_always_tool` "Always Allow <tool>" / `proceed_always_server` "Always Allow <server>" |
//!
//! Everything else maps by ACP `kind`, and by title when the kind is `other`
//! or missing.

use serde_json::{Map, Value};

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
/// `tool_call_update`, or a permission request's `toolCall`) into what is
/// known so far (`sessionUpdate` / `toolCallId` are not kept). Absent or
/// null fields keep their value (codex 2.x drops rawInput
/// from its last update); `rawInput` objects merge key by key (Grok's
/// retitling update carries `variant` and `tool_name` but may leave out
/// `tool_input`); every other field is replaced.
pub fn merge_tool_call(known: &mut Value, frame: &Value) {
    let Some(frame) = frame.as_object() else {
        return;
    };
    if !known.is_object() {
        *known = Value::Object(Map::new());
    }
    let known = known.as_object_mut().expect("made an object above");
    for (key, value) in frame {
        if key == "sessionUpdate" || key == "toolCallId" || value.is_null() {
            continue;
        }
        match (key.as_str(), known.get_mut(key), value) {
            ("rawInput", Some(Value::Object(old)), Value::Object(new)) => {
                for (k, v) in new {
                    old.insert(k.clone(), v.clone());
                }
            }
            _ => {
                known.insert(key.clone(), value.clone());
            }
        }
    }
}

/// Where [`permission_tool_call`] keeps a permission request's `content`.
pub const PERMISSION_CONTENT: &str = "permissionContent";

/// A permission request's `toolCall` as fields to merge into the call. Its
/// `content` describes the request, not the tool's output (codex 0.x: "Allow
/// the unity-ops MCP server to run tool ..."; Gemini: the arguments as JSON
/// text), so it is kept as [`PERMISSION_CONTENT`]: a rejected call's result
/// then comes from its own final frame, and Gemini's arguments stay readable.
pub fn permission_tool_call(tool_call: &Value) -> Value {
    let mut fields = tool_call.clone();
    if let Some(map) = fields.as_object_mut()
        && let Some(content) = map.remove("content")
    {
        map.insert(PERMISSION_CONTENT.into(), content);
    }
    fields
}

/// Where [`permission_request_fields`] keeps a permission request's `options`.
pub const PERMISSION_OPTIONS: &str = "permissionOptions";

/// A permission request's `params` as fields to merge into the call: its
/// `toolCall` (see [`permission_tool_call`]) plus its `options` as
/// [`PERMISSION_OPTIONS`], because Gemini CLI before 0.36 names the MCP tool
/// and server only in the option names.
pub fn permission_request_fields(params: &Value) -> Value {
    let mut fields = permission_tool_call(&params["toolCall"]);
    if let Some(options) = params["options"].as_array()
        && let Some(map) = fields.as_object_mut()
    {
        map.insert(PERMISSION_OPTIONS.into(), Value::Array(options.clone()));
    }
    fields
}

/// The `<x>` of the option named `Always Allow <x>` whose `optionId` is
/// `option_id` (Gemini's structural ids), if `<x>` is an id.
fn always_allow_subject<'a>(call: &'a Value, option_id: &str) -> Option<&'a str> {
    call[PERMISSION_OPTIONS]
        .as_array()?
        .iter()
        .find(|o| o["optionId"] == option_id)?["name"]
        .as_str()?
        .strip_prefix("Always Allow ")
        .map(str::trim)
        .filter(|s| is_id(s))
}

fn title(call: &Value) -> Option<&str> {
    call["title"]
        .as_str()
        .map(str::trim)
        .filter(|t| !t.is_empty())
}

/// A name part as agents spell server and tool ids: no whitespace, no
/// brackets, not empty.
fn is_id(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// `<server>__<tool>` (Grok's own spelling of an MCP tool), with exactly one
/// `__`: codex 2.x announces a failed MCP startup as a call titled
/// `mcp__unity-ops__startup`, which is no `unity-ops` tool.
fn split_double_underscore(s: &str) -> Option<(String, String)> {
    let (server, tool) = s.split_once("__")?;
    (is_id(server) && is_id(tool) && !tool.contains("__"))
        .then(|| (server.to_string(), tool.to_string()))
}

/// The MCP tool this call invokes, read only from where agents put it.
pub fn mcp_call(call: &Value) -> Option<McpCall> {
    let raw = &call["rawInput"];
    let title = title(call);

    // codex-acp (both lines): rawInput {server, tool, arguments}
    if let (Some(server), Some(tool)) = (raw["server"].as_str(), raw["tool"].as_str())
        && is_id(server)
        && is_id(tool)
    {
        return Some(McpCall {
            server: server.into(),
            tool: tool.into(),
            arguments: object_or_empty(&raw["arguments"]),
        });
    }

    // Grok: the `use_tool` meta-tool, before or after its retitling update
    let grok_variant = raw["variant"].as_str();
    if (title == Some("use_tool") || matches!(grok_variant, Some("UseTool" | "MCPTool")))
        && let Some((server, tool)) = raw["tool_name"].as_str().and_then(split_double_underscore)
    {
        return Some(McpCall {
            server,
            tool,
            arguments: grok_arguments(raw),
        });
    }
    if let Some(t) = title {
        // Grok: a direct call (or the retitled use_tool) named `<server>__<tool>`
        if let Some((server, tool)) = split_double_underscore(t) {
            return Some(McpCall {
                server,
                tool,
                arguments: grok_arguments(raw),
            });
        }
        // codex-acp 1.x/2.x: `mcp.<server>.<tool>`, marked as an MCP call
        if call["_meta"]["is_mcp_tool_call"].as_bool() == Some(true)
            && let Some(rest) = t.strip_prefix("mcp.")
            && let Some((server, tool)) = rest.rsplit_once('.')
            && is_id(server)
            && is_id(tool)
        {
            return Some(McpCall {
                server: server.into(),
                tool: tool.into(),
                arguments: object_or_empty(&raw["arguments"]),
            });
        }
        // codex-acp 0.x: `Tool: <server>/<tool>`
        if let Some(rest) = t.strip_prefix("Tool: ")
            && let Some((server, tool)) = rest.split_once('/')
            && is_id(server)
            && is_id(tool)
        {
            return Some(McpCall {
                server: server.into(),
                tool: tool.into(),
                arguments: object_or_empty(&raw["arguments"]),
            });
        }
        // Gemini CLI: `<tool> (<server> MCP Server)`, arguments as a JSON text block
        if let Some(rest) = t.strip_suffix(" MCP Server)")
            && let Some((tool, server)) = rest.split_once(" (")
            && is_id(tool)
            && is_id(server)
        {
            return Some(McpCall {
                server: server.into(),
                tool: tool.into(),
                arguments: json_text_arguments(call),
            });
        }
    }
    // Gemini CLI 0.24-0.35: the title is the arguments as JSON; the tool and
    // server are named only by the options `proceed_always_tool` and
    // `proceed_always_server`, which Gemini offers for MCP calls alone
    if let (Some(tool), Some(server)) = (
        always_allow_subject(call, "proceed_always_tool"),
        always_allow_subject(call, "proceed_always_server"),
    ) {
        let arguments = match title.map(serde_json::from_str::<Value>) {
            Some(Ok(v @ Value::Object(_))) => v,
            _ => json_text_arguments(call),
        };
        return Some(McpCall {
            server: server.into(),
            tool: tool.into(),
            arguments,
        });
    }
    None
}

fn object_or_empty(v: &Value) -> Value {
    if v.is_object() {
        v.clone()
    } else {
        Value::Object(Map::new())
    }
}

/// Grok's arguments: `tool_input` of the use_tool form, else (a direct call)
/// rawInput itself minus Grok's own bookkeeping keys.
fn grok_arguments(raw: &Value) -> Value {
    if raw["tool_input"].is_object() {
        return raw["tool_input"].clone();
    }
    for key in ["arguments", "input"] {
        if raw[key].is_object() {
            return raw[key].clone();
        }
    }
    match raw.as_object() {
        Some(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "variant" | "tool_name" | "server_name"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        None => Value::Object(Map::new()),
    }
}

/// Gemini's arguments: the first text block of the permission request's
/// content (else of `content`) that parses as a JSON object.
fn json_text_arguments(call: &Value) -> Value {
    let blocks = call[PERMISSION_CONTENT]
        .as_array()
        .into_iter()
        .chain(call["content"].as_array());
    for item in blocks.flatten() {
        let block = if item["type"] == "content" {
            &item["content"]
        } else {
            item
        };
        if let Some(text) = block["text"].as_str()
            && let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(text)
        {
            return v;
        }
    }
    Value::Object(Map::new())
}

/// The Claude tool name for a tool call. `call` holds the ACP fields seen so
/// far for it (`kind`, `title`, `rawInput`, `_meta`, ...), merged across
/// `tool_call` / `tool_call_update` / the permission request's `toolCall`
/// (see [`merge_tool_call`]).
pub fn claude_tool_name(call: &Value) -> String {
    if let Some(mcp) = mcp_call(call) {
        return mcp.claude_name();
    }
    if let Some(name) = call["kind"].as_str().and_then(name_for_kind) {
        return name.to_string();
    }
    match title(call) {
        Some(title) => title.to_string(),
        None => "Tool".to_string(),
    }
}

/// The `input` of the call's `tool_use`: an MCP call's real arguments; for
/// anything else rawInput (an object; anything else under `rawInput`) plus
/// `title` / `kind` and the first location's `path`, never overwriting a key
/// of rawInput, with `command` (a string,
/// also for codex's argv form), `file_path` and `path` where the agent gave
/// them, so the panel's describer and the script gate can read them.
pub fn tool_input(call: &Value) -> Value {
    if let Some(mcp) = mcp_call(call) {
        return mcp.arguments;
    }
    let mut input = match &call["rawInput"] {
        Value::Object(map) => map.clone(),
        Value::Null => Map::new(),
        other => {
            let mut m = Map::new();
            m.insert("rawInput".into(), other.clone());
            m
        }
    };
    if let Some(t) = title(call) {
        input
            .entry("title")
            .or_insert_with(|| Value::String(t.to_string()));
    }
    if let Some(kind) = call["kind"].as_str() {
        input
            .entry("kind")
            .or_insert_with(|| Value::String(kind.to_string()));
    }
    if let Some(argv) = input.get("command").filter(|c| c.is_array())
        && let Some(command) =
            crate::script_gate::shell_command(&serde_json::json!({ "command": argv }))
    {
        input.insert("command".into(), Value::String(command));
    }
    let location = call["locations"]
        .as_array()
        .and_then(|l| l.first())
        .and_then(|l| l["path"].as_str());
    if let Some(path) = location {
        input
            .entry("path")
            .or_insert_with(|| Value::String(path.to_string()));
    }
    if matches!(call["kind"].as_str(), Some("read" | "edit" | "delete"))
        && !input.contains_key("file_path")
    {
        let path = input
            .get("path")
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(path) = path {
            input.insert("file_path".into(), Value::String(path));
        }
    }
    Value::Object(input)
}

/// Whether the call's identity may still change: Grok's `use_tool` before
/// its `tool_name` is known, or a call with neither title, kind nor rawInput
/// yet. The core may hold the `tool_use` back while this holds, but must
/// emit it before any permission request or result of the call.
pub fn identity_pending(call: &Value) -> bool {
    if title(call) == Some("use_tool") {
        return mcp_call(call).is_none();
    }
    title(call).is_none() && call["kind"].as_str().is_none() && call["rawInput"].is_null()
}

/// Whether the call so far has no `kind` and a title that is not a
/// structural MCP identity: Grok Build's first `tool_call` carries only the
/// name the model used (`run_terminal_command`, `write`), and the kind and
/// real rawInput come in its next frame. The core holds such a call's
/// `tool_use` back for one frame at most (unlike [`identity_pending`], which
/// holds until the identity is known), and always before any permission
/// request or result of the call.
pub fn kind_pending(call: &Value) -> bool {
    call["kind"].as_str().is_none() && title(call).is_some() && mcp_call(call).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn input_is_raw_input_plus_title_kind_and_path() {
        let mut call = Value::Null;
        merge_tool_call(
            &mut call,
            &json!({"sessionUpdate": "tool_call", "toolCallId": "c", "kind": "read", "title": "Read a", "rawInput": {"file_path": "a", "title": "mine"}}),
        );
        merge_tool_call(
            &mut call,
            &json!({"sessionUpdate": "tool_call_update", "toolCallId": "c", "locations": [{"path": "/p/a"}]}),
        );
        assert_eq!(
            tool_input(&call),
            json!({"file_path": "a", "title": "mine", "kind": "read", "path": "/p/a"})
        );
        assert_eq!(
            tool_input(&json!({"rawInput": "ls -la"})),
            json!({"rawInput": "ls -la"})
        );
    }

    #[test]
    fn kinds_map_to_claude_names_and_other_uses_the_title() {
        let cases = [
            (json!({"kind": "read", "title": "x"}), "Read"),
            (json!({"kind": "edit"}), "Edit"),
            (json!({"kind": "execute", "title": "ls"}), "Bash"),
            (json!({"kind": "fetch"}), "WebFetch"),
            (json!({"kind": "search"}), "Search"),
            (json!({"kind": "delete"}), "Delete"),
            (json!({"kind": "move"}), "Move"),
            (json!({"kind": "think"}), "Think"),
            (json!({"kind": "other", "title": "use_tool"}), "use_tool"),
            (
                json!({"kind": "other", "title": "Tool: unity ops/uap_ping"}),
                "Tool: unity ops/uap_ping",
            ),
            (
                json!({"title": "uap_ping (unity-ops MCP Server)"}),
                "mcp__unity-ops__uap_ping",
            ),
            (json!({"kind": "brand_new_kind", "title": "t"}), "t"),
            (json!({"kind": "other"}), "Tool"),
            (json!({}), "Tool"),
        ];
        for (call, want) in cases {
            assert_eq!(claude_tool_name(&call), want, "{call}");
        }
    }
}
