//! The bare tool name rule's tests.

use serde_json::{Value, json};

use super::*;
use crate::call::identity::mcp_call_among;
use crate::call::identity::tests::fields_of;

/// `unity-ops` registered, listing `uap_ping` and `uap_fail`.
fn one() -> RegisteredServers {
    let mut s = RegisteredServers::new(vec!["unity-ops".into()]);
    s.set_tools("unity-ops", vec!["uap_ping".into(), "uap_fail".into()]);
    s
}

/// `unity-ops` and `editor` registered, both listing `uap_ping`.
fn two() -> RegisteredServers {
    let mut s = RegisteredServers::new(vec!["unity-ops".into(), "editor".into()]);
    s.set_tools("unity-ops", vec!["uap_ping".into(), "uap_fail".into()]);
    s.set_tools("editor", vec!["uap_ping".into(), "open_scene".into()]);
    s
}

/// `unity-ops` registered, no list given.
fn unlisted() -> RegisteredServers {
    RegisteredServers::new(vec!["unity-ops".into()])
}

/// A list of a server that is not registered.
fn not_registered() -> RegisteredServers {
    let mut s = RegisteredServers::new(vec!["unity-ops".into()]);
    s.set_tools("editor", vec!["uap_ping".into()]);
    s
}

#[test]
fn a_bare_tool_name_resolves_only_to_exactly_one_tool_of_exactly_one_registered_server() {
    let ping = Some("mcp__unity-ops__uap_ping");
    let cases: Vec<(&str, Value, RegisteredServers, Option<&str>)> = vec![
        (
            "unique title",
            json!({"title": "uap_ping", "kind": "other"}),
            one(),
            ping,
        ),
        (
            "title without kind",
            json!({"title": " uap_ping "}),
            one(),
            ping,
        ),
        (
            "ACP name",
            json!({"name": "uap_ping", "title": "Ping"}),
            one(),
            ping,
        ),
        (
            "rawInput tool",
            json!({"title": "use_tool", "rawInput": {"tool": "uap_ping", "arguments": {}}}),
            one(),
            ping,
        ),
        (
            "rawInput tool_name",
            json!({"rawInput": {"tool_name": "uap_fail"}}),
            one(),
            Some("mcp__unity-ops__uap_fail"),
        ),
        (
            "_meta name field",
            json!({"title": "ToolCall", "_meta": {"x": {"toolName": "uap_ping"}}}),
            one(),
            ping,
        ),
        (
            "permission title",
            json!({"asked": {"toolCall": {"title": "uap_ping"}}}),
            one(),
            ping,
        ),
        (
            "an MCP kind",
            json!({"title": "uap_ping", "kind": "execute"}),
            one(),
            ping,
        ),
        ("in two servers", json!({"title": "uap_ping"}), two(), None),
        (
            "in one of two",
            json!({"title": "open_scene"}),
            two(),
            Some("mcp__editor__open_scene"),
        ),
        (
            "no list given",
            json!({"title": "uap_ping"}),
            unlisted(),
            None,
        ),
        (
            "no server registered",
            json!({"title": "uap_ping"}),
            RegisteredServers::default(),
            None,
        ),
        (
            "listed by an unregistered server",
            json!({"title": "uap_ping"}),
            not_registered(),
            None,
        ),
        (
            "not a listed tool",
            json!({"title": "uap_pong"}),
            one(),
            None,
        ),
        (
            "a mention is no name",
            json!({"title": "run uap_ping now"}),
            one(),
            None,
        ),
        (
            "a title decorated with JSON arguments is the name before them",
            json!({"title": "uap_ping: {}"}),
            one(),
            Some("mcp__unity-ops__uap_ping"),
        ),
        (
            "a title decorated as a call is the name before it",
            json!({"title": "uap_ping(x=1)"}),
            one(),
            Some("mcp__unity-ops__uap_ping"),
        ),
        (
            "a name followed by a sentence is no decoration",
            json!({"title": "uap_ping: pinging the editor"}),
            one(),
            None,
        ),
        (
            "a dispatcher's arguments naming a listed tool are that call",
            json!({"title": "use_capability", "rawInput": {"capability_id": "mcp-tool:unity-ops/uap_ping", "arguments": {}}}),
            one(),
            Some("mcp__unity-ops__uap_ping"),
        ),
        (
            "a dispatcher naming a tool no registered server lists is not",
            json!({"title": "use_capability", "rawInput": {"capability_id": "mcp-tool:unity-ops/uap_pong", "arguments": {}}}),
            one(),
            None,
        ),
        ("case differs", json!({"title": "UAP_PING"}), one(), None),
        (
            "an option name is a sentence",
            json!({"asked": {"toolCall": {"title": "x"}, "options": [{"name": "Allow uap_ping"}]}}),
            one(),
            None,
        ),
        (
            "a spelled-out identity wins",
            json!({"title": "uap_ping", "_meta": {"toolName": "mcp__editor__uap_fail"}}),
            one(),
            Some("mcp__editor__uap_fail"),
        ),
        (
            "a spelled-out identity of a tool in two servers",
            json!({"title": "editor__uap_ping"}),
            two(),
            Some("mcp__editor__uap_ping"),
        ),
        (
            "the agent's own: kind and location",
            json!({"title": "uap_ping", "kind": "read", "locations": [{"path": "a.txt"}]}),
            one(),
            None,
        ),
        (
            "kind other with a location is no proof",
            json!({"title": "uap_ping", "kind": "other", "locations": [{"path": "a.txt"}]}),
            one(),
            ping,
        ),
        (
            "the agent's own: a built-in name in _meta",
            json!({"title": "uap_ping", "_meta": {"claudeCode": {"toolName": "Bash"}}}),
            one(),
            None,
        ),
    ];
    for (what, call, servers, want) in cases {
        let got = mcp_call_among(&fields_of(&call), &servers).map(|m| m.claude_name());
        assert_eq!(got.as_deref(), want, "{what}: {call}");
    }
}

#[test]
fn a_later_list_replaces_the_earlier_and_survives_new_names() {
    let mut s = one();
    s.set_tools("unity-ops", vec!["uap_slow".into()]);
    assert_eq!(s.server_of("uap_ping"), None);
    assert_eq!(s.server_of("uap_slow"), Some("unity-ops"));
    let renamed = s.with_names(vec!["other".into()]);
    assert_eq!(renamed.server_of("uap_slow"), None);
    assert_eq!(renamed.with_names(vec!["unity-ops".into()]), s);
}
