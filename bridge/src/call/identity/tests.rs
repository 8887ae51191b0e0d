//! The tool naming rules' tests.

use super::*;
use crate::call::fields::LISTED_MERGE_MAX;
use serde_json::json;

/// A call's fields from a test case: its own fields, merged with the
/// permission request whose `params` are under `asked`, if any.
pub(crate) fn fields_of(case: &Value) -> CallFields {
    let mut own = case.clone();
    let asked = own.as_object_mut().and_then(|m| m.remove("asked"));
    let mut call = CallFields::from(own);
    if let Some(params) = asked {
        merge_tool_call(&mut call, &permission_request_fields(&params));
    }
    call
}

#[test]
fn input_is_the_arguments_and_title_kind_and_path_only_without_them() {
    let mut call = CallFields::default();
    merge_tool_call(
        &mut call,
        &json!({"sessionUpdate": "tool_call", "toolCallId": "c", "kind": "read", "title": "Read a", "rawInput": {"file_path": "a", "title": "mine"}}).into(),
    );
    merge_tool_call(
        &mut call,
        &json!({"sessionUpdate": "tool_call_update", "toolCallId": "c", "locations": [{"path": "/p/a"}]}).into(),
    );
    assert_eq!(
        tool_input(&call),
        json!({"file_path": "a", "title": "mine"})
    );
    assert_eq!(
        tool_input(&json!({"rawInput": "ls -la"}).into()),
        json!({"rawInput": "ls -la"})
    );
    assert_eq!(
        tool_input(
            &json!({"kind": "read", "title": "Read a", "locations": [{"path": "/p/a"}]}).into()
        ),
        json!({"title": "Read a", "kind": "read", "path": "/p/a", "file_path": "/p/a"})
    );
}

#[test]
fn the_identity_is_any_whole_field_in_any_spelling_and_never_a_mention() {
    let ours = ["unity-ops".to_string()];
    let ping = Some("mcp__unity-ops__uap_ping");
    let cases: &[(Value, &[String], Option<&str>)] = &[
        (json!({"title": "mcp__unity-ops__uap_ping"}), &[], ping),
        (json!({"title": "unity-ops__uap_ping"}), &[], ping),
        (json!({"title": "mcp.unity-ops.uap_ping"}), &[], ping),
        (json!({"title": "Tool: unity-ops/uap_ping"}), &[], ping),
        (
            json!({"title": "uap_ping (unity-ops MCP Server)"}),
            &[],
            ping,
        ),
        (json!({"title": "unity-ops_uap_ping"}), &ours, ping),
        (json!({"title": "unity-ops.uap_ping"}), &ours, ping),
        (json!({"title": "unity-ops/uap_ping"}), &ours, ping),
        (json!({"title": "unity-ops:uap_ping"}), &ours, ping),
        (json!({"title": "unity-ops::uap_ping"}), &ours, ping),
        (json!({"title": "mcp_unity-ops_uap_ping"}), &ours, ping),
        // any run of separator characters (Copilot CLI, Factory Droid)
        (json!({"title": "unity-ops-uap_ping"}), &ours, ping),
        (json!({"title": "unity-ops___uap_ping"}), &ours, ping),
        (json!({"title": "unity-ops___uap_ping"}), &[], ping),
        (json!({"title": "unity-ops-_:uap_ping"}), &ours, ping),
        (json!({"title": "unity-opsuap_ping"}), &ours, None),
        (json!({"title": "unity-ops-uap_ping"}), &[], None),
        // the server's name sanitised to identifier characters (pi)
        (json!({"title": "mcp__unity_ops__uap_ping"}), &ours, ping),
        (json!({"title": "unity_ops_uap_ping"}), &ours, ping),
        (
            json!({"title": "mcp__unity_ops__uap_ping"}),
            &[],
            Some("mcp__unity_ops__uap_ping"),
        ),
        (
            json!({"title": "unity-ops/uap_ping: {\"a\":1}"}),
            &ours,
            ping,
        ),
        (
            json!({"title": "ToolCall", "kind": "read", "_meta": {"toolName": "unity-ops__uap_ping"}}),
            &[],
            ping,
        ),
        (
            json!({"title": "x", "_meta": {"a": {"b": {"name": "mcp__unity-ops__uap_ping"}}}}),
            &[],
            ping,
        ),
        (
            json!({"rawInput": {"server": "unity-ops", "tool": "uap_ping"}}),
            &[],
            ping,
        ),
        (
            json!({"rawInput": {"tool_name": "unity-ops_uap_ping"}}),
            &ours,
            ping,
        ),
        (
            json!({"asked": {"toolCall": {"title": "{}"}, "options": [{"name": "Allow mcp.unity-ops.uap_ping"}]}}),
            &[],
            ping,
        ),
        // ambiguous separators name only the panel's own servers
        (json!({"title": "unity-ops_uap_ping"}), &[], None),
        (json!({"title": "src/main.rs", "kind": "read"}), &ours, None),
        // a mention is not an identity
        (
            json!({"title": "echo unity-ops__uap_ping", "kind": "execute"}),
            &ours,
            None,
        ),
        (
            json!({"title": "Calling unity-ops/uap_ping now"}),
            &ours,
            None,
        ),
        (
            json!({"title": "unity-ops/uap_ping: it answered pong"}),
            &ours,
            None,
        ),
        (
            json!({"rawInput": {"server": "prod", "name": "api"}}),
            &ours,
            None,
        ),
        (
            json!({"title": "mcp__unity-ops__startup", "kind": "other"}),
            &ours,
            None,
        ),
    ];
    for (call, servers, want) in cases {
        let registered = RegisteredServers::new(servers.to_vec());
        let got = mcp_call_among(&fields_of(call), &registered).map(|m| m.claude_name());
        assert_eq!(got.as_deref(), *want, "{call} with servers {servers:?}");
    }
    let decorated = json!({"title": "unity-ops/uap_ping: {\"a\":1}"});
    assert_eq!(
        mcp_call_among(&decorated.into(), &RegisteredServers::new(ours.to_vec()))
            .unwrap()
            .arguments,
        json!({"a": 1})
    );
}

#[test]
fn a_permission_request_never_renames_a_call_nor_makes_an_mcp_call_read() {
    let mut call = CallFields::default();
    merge_tool_call(
        &mut call,
        &json!({"toolCallId": "c", "title": "ls -la", "kind": "execute", "rawInput": {"command": "ls -la"}}).into(),
    );
    merge_tool_call(
        &mut call,
        &permission_tool_call(&json!({"toolCallId": "c", "title": "{}", "kind": "read"})),
    );
    assert_eq!(claude_tool_name(&call), "Bash");
    let mut mcp = CallFields::from(
        json!({"title": "ToolCall", "_meta": {"tool_name": "unity-ops__uap_ping"}}),
    );
    merge_tool_call(
        &mut mcp,
        &permission_tool_call(&json!({"toolCallId": "c", "kind": "read"})),
    );
    assert_eq!(claude_tool_name(&mcp), "mcp__unity-ops__uap_ping");
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
        // names are identifiers: a title with arguments, a path or a
        // sentence names nothing
        (
            json!({"kind": "other", "title": "Tool: unity ops/uap_ping"}),
            "Tool",
        ),
        (
            json!({"kind": "other", "title": "apply_patch: {\"input\":\"*** Begin Patch\\n*** Update File: a.txt\\n@@\\n-x\\n+y\"}"}),
            "Edit",
        ),
        (
            json!({"kind": "other", "title": "read_notes: {\"path\":\"a.txt\"}"}),
            "read_notes",
        ),
        // a file change is the Claude tool its arguments make it
        (
            json!({"kind": "other", "title": "apply_patch: {\"input\":\"*** Begin Patch\\n*** Add File: Assets/Editor/Foo.cs\"}"}),
            "Write",
        ),
        (
            json!({"kind": "other", "title": "apply_patch", "rawInput": {"input": "*** Add File: a.cs\n+x\n"}}),
            "Write",
        ),
        (
            json!({"kind": "edit", "rawInput": {"path": "a.cs", "content": "x"}}),
            "Write",
        ),
        (
            json!({"kind": "edit", "content": [{"type": "diff", "path": "a.cs", "oldText": null, "newText": "x"}]}),
            "Write",
        ),
        (
            json!({"kind": "edit", "rawInput": {"path": "a.cs", "old_string": "", "new_string": "x"}}),
            "Edit",
        ),
        (
            json!({"kind": "edit", "content": [{"type": "diff", "path": "a.cs", "oldText": "o", "newText": "n"}]}),
            "Edit",
        ),
        (
            json!({"kind": "edit", "rawInput": {"content": "x"}, "_meta": {"toolName": "Edit"}}),
            "Edit",
        ),
        (
            json!({"kind": "execute", "rawInput": {"command": "patch", "input": "*** Add File: a.cs\n+x\n"}}),
            "Bash",
        ),
        (json!({"title": "Assets/Editor/Foo.cs"}), "Tool"),
        (json!({"title": "Run the tests now"}), "Tool"),
        (json!({"title": "write_file: not json"}), "Tool"),
        (
            json!({"title": "uap_ping (unity-ops MCP Server)"}),
            "mcp__unity-ops__uap_ping",
        ),
        (json!({"kind": "brand_new_kind", "title": "t"}), "t"),
        (json!({"kind": "other"}), "Tool"),
        (json!({}), "Tool"),
    ];
    for (call, want) in cases {
        assert_eq!(claude_tool_name(&fields_of(&call)), want, "{call}");
    }
}

/// The bytes of an agent tool's `tool_use` input, key order included (the
/// panel shows the input as sent; goldens compare bytes, `Value` equality
/// does not see order).
#[test]
fn agent_tool_input_keeps_raw_input_order_then_fallbacks_only_without_arguments_then_file_path() {
    let cases = [
        (
            json!({"title": "cat f", "kind": "execute", "rawInput": {"command": ["bash", "-lc", "cat f"], "cwd": "/p"}}),
            r#"{"command":"cat f","cwd":"/p"}"#,
        ),
        (
            json!({"kind": "read", "title": "Read a", "rawInput": {"file_path": "a", "title": "mine"}, "locations": [{"path": "/p/a"}]}),
            r#"{"file_path":"a","title":"mine"}"#,
        ),
        (
            json!({"kind": "read", "title": "Read", "locations": [{"path": "/p/a"}, {"path": "/p/b"}]}),
            r#"{"title":"Read","kind":"read","path":"/p/a","file_path":"/p/a"}"#,
        ),
        (
            json!({"kind": "delete", "rawInput": {"path": "x", "kind": null}}),
            r#"{"path":"x","kind":null,"file_path":"x"}"#,
        ),
        (
            json!({"kind": "edit", "rawInput": {"path": 5}, "locations": [{"path": "/p/a"}]}),
            r#"{"path":5,"file_path":"/p/a"}"#,
        ),
        (
            json!({"title": "ls", "rawInput": "ls -la"}),
            r#"{"rawInput":"ls -la"}"#,
        ),
        (
            json!({"kind": "read", "rawInput": ["a", 1], "locations": [{"path": "/p/a"}]}),
            r#"{"rawInput":["a",1],"file_path":"/p/a"}"#,
        ),
        (
            json!({"rawInput": {"command": ["ls", 1]}, "asked": {"toolCall": {"title": "Run ls", "kind": "execute"}}}),
            r#"{"command":["ls",1]}"#,
        ),
        (
            json!({"title": "  ", "rawInput": {"command": "ls"}}),
            r#"{"command":"ls"}"#,
        ),
        (json!({}), r#"{}"#),
    ];
    for (call, want) in cases {
        let fields = fields_of(&call);
        assert_eq!(agent_tool_input(&fields).to_string(), want, "{call}");
        let borrowed = serde_json::to_string(&AgentToolInput::new(&fields)).unwrap();
        assert_eq!(borrowed, want, "{call}");
    }
}

/// A frame of many keys merges through a map's index, with what a short
/// one gets: a key the call has replaced in place, rawInput merged key by
/// key, a null kept out, new keys after the others in their order.
#[test]
fn a_frame_of_many_keys_merges_as_a_short_one_does() {
    for extra in [2, LISTED_MERGE_MAX + 8] {
        let mut call = CallFields::from(json!({"title": "a", "rawInput": {"x": 1}}));
        let mut frame = json!({"title": "b", "rawInput": {"y": 2}, "status": null});
        let mut want = json!({"title": "b", "rawInput": {"x": 1, "y": 2}});
        for i in 0..extra {
            frame[format!("k{i}")] = json!(i);
            want[format!("k{i}")] = json!(i);
        }
        merge_tool_call(&mut call, &CallFields::from(frame));
        assert_eq!(
            serde_json::to_string(&call.own).unwrap(),
            want.to_string(),
            "{extra} keys"
        );
    }
}
