//! End-to-end over real pipes: `acp-bridge` in front of a scripted agent
//! that speaks none of the recorded agents' dialects (identity in `_meta`
//! as `S_T`, a generic title and a misleading kind, arguments only in a
//! later update, a decorated `S/T` title, a permission request titled with
//! the arguments, empty chunks carrying usage). The panel must still see
//! `mcp__<server>__<tool>` with the real arguments, one name per call, and
//! no empty text block.

use crate::support;

use std::collections::HashMap;

use serde_json::{Value, json};
use support::{Bridge, assert_peer_kept_to_script, scratch};

const MCP: &str = r#"{"mcpServers":{"unity-ops":{"type":"http","url":"http://127.0.0.1:9/mcp"}}}"#;

fn tool_uses(lines: &[Value]) -> HashMap<String, (String, Value)> {
    let mut out = HashMap::new();
    for v in lines.iter().filter(|v| v["type"] == "assistant") {
        for b in v["message"]["content"].as_array().into_iter().flatten() {
            if b["type"] == "tool_use" {
                let id = b["id"].as_str().unwrap_or("").to_string();
                let first = out.insert(
                    id.clone(),
                    (
                        b["name"].as_str().unwrap_or("").to_string(),
                        b["input"].clone(),
                    ),
                );
                assert!(first.is_none(), "two tool_use blocks for {id}");
            }
        }
    }
    out
}

fn an_unseen_dialect_gets_mcp_names_real_arguments_one_name_per_call_and_no_empty_blocks() {
    let dir = scratch("unknown-dialect");
    let (mut bridge, peer_pids) =
        Bridge::start_with_peer(&dir, "unknown_dialect.json", &["--mcp-config", MCP]);
    bridge.send(
        r#"{"type":"control_request","request_id":"req_1","request":{"subtype":"initialize"}}"#,
    );
    bridge.send(r#"{"type":"user","message":{"role":"user","content":"ping"},"parent_tool_use_id":null,"session_id":"default"}"#);
    let mut asked = HashMap::new();
    for answer in ["allow", "deny"] {
        let ask = bridge.wait_for("a can_use_tool control_request", |v| {
            v["type"] == "control_request" && v["request"]["subtype"] == "can_use_tool"
        });
        let request = &ask["request"];
        asked.insert(
            request["tool_use_id"].as_str().unwrap().to_string(),
            (
                request["tool_name"].as_str().unwrap().to_string(),
                request["input"].clone(),
            ),
        );
        let response = match answer {
            "allow" => json!({"behavior": "allow", "updatedInput": request["input"]}),
            _ => json!({"behavior": "deny", "message": "not now"}),
        };
        bridge.send(
            &json!({"type":"control_response","response":{"subtype":"success",
                "request_id":ask["request_id"],"response":response}})
            .to_string(),
        );
    }
    let result = bridge.wait_for("the result", |v| v["type"] == "result");
    bridge.close_stdin();
    bridge.expect_clean_exit(&peer_pids);
    assert_peer_kept_to_script(&bridge.stderr());

    let lines: Vec<Value> = bridge
        .seen
        .iter()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let uses = tool_uses(&lines);
    let want = [
        ("u-1", "mcp__unity-ops__uap_ping", json!({"verbose": true})),
        (
            "u-2",
            "mcp__unity-ops__uap_editor_screenshot",
            json!({"return_image": false}),
        ),
        (
            "u-3",
            "Bash",
            json!({"command": "echo unity-ops__uap_ping"}),
        ),
    ];
    for (id, name, input) in &want {
        let (got_name, got_input) = uses
            .get(*id)
            .unwrap_or_else(|| panic!("no tool_use for {id}"));
        assert_eq!(got_name, name, "name of {id}");
        if name.starts_with("mcp__") {
            assert_eq!(got_input, input, "input of {id}");
        } else {
            assert_eq!(got_input["command"], input["command"], "command of {id}");
        }
    }
    // one name per call: the permission request and the denial use the tool_use's
    for (id, (name, input)) in &asked {
        assert_eq!(name, &uses[id].0, "can_use_tool name of {id}");
        assert_eq!(input, &uses[id].1, "can_use_tool input of {id}");
    }
    let denials = result["permission_denials"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(denials.len(), 1, "{result}");
    for d in &denials {
        let id = d["tool_use_id"].as_str().unwrap_or("");
        assert_eq!(d["tool_name"], uses[id].0.as_str(), "denial of {id}");
    }
    // every announced call got its result
    for id in uses.keys() {
        assert!(
            lines
                .iter()
                .any(|v| v["type"] == "user"
                    && v["message"]["content"][0]["tool_use_id"] == id.as_str()),
            "no tool_result for {id}"
        );
    }
    // no assistant message holds an empty text block
    for v in lines.iter().filter(|v| v["type"] == "assistant") {
        for b in v["message"]["content"].as_array().into_iter().flatten() {
            assert!(
                b["type"] != "text" || b["text"] != "",
                "empty text block in {v}"
            );
        }
    }
    // usage carried by the empty chunks' `_meta` (the prompt answer has none)
    assert_eq!(result["usage"]["input_tokens"], 300, "{result}");
    assert_eq!(result["usage"]["output_tokens"], 20, "{result}");
    bridge.assert_one_result();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(e2e_unknown_dialect: an_unseen_dialect_gets_mcp_names_real_arguments_one_name_per_call_and_no_empty_blocks)
}
