//! Tool naming against real agent frames (`tests/data/tool_name/`): each case
//! merges its frames in order, as the core does (a `{"request_permission":
//! toolCall}` frame through `permission_tool_call`, a
//! `{"request_permission_params": params}` frame through
//! `permission_request_fields`), and checks the one
//! `tool_use` name and input the panel must see.

use std::path::PathBuf;

use acp_bridge::call::identity::{
    CallFields, claude_tool_name, identity_pending, merge_tool_call, permission_request_fields,
    permission_tool_call, tool_input,
};
use serde_json::Value;

fn cases(file: &str) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/tool_name")
        .join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

fn check(file: &str) {
    let mut failures = Vec::new();
    let all = cases(file);
    assert!(!all.is_empty(), "{file} has no cases");
    for case in &all {
        let name = case["case"].as_str().expect("case name");
        let frames = case["frames"].as_array().expect("frames");
        let mut call = CallFields::default();
        for (i, frame) in frames.iter().enumerate() {
            // `{"request_permission": toolCall}` is a permission request's toolCall
            // `{"request_permission_params": params}` is a whole request's params
            match (
                frame.get("request_permission"),
                frame.get("request_permission_params"),
            ) {
                (Some(tc), _) => merge_tool_call(&mut call, &permission_tool_call(tc)),
                (None, Some(params)) => {
                    merge_tool_call(&mut call, &permission_request_fields(params))
                }
                (None, None) => merge_tool_call(&mut call, &frame.clone().into()),
            }
            if i == 0 {
                let want = case["pending_after_first"].as_bool().unwrap_or(false);
                if identity_pending(&call) != want {
                    failures.push(format!(
                        "  {name}: identity_pending after the first frame, want {want}"
                    ));
                }
            }
        }
        let got_name = claude_tool_name(&call);
        if got_name != case["name"] {
            failures.push(format!(
                "  {name}: name want {}, got {got_name}",
                case["name"]
            ));
        }
        let got_input = tool_input(&call);
        if got_input != case["input"] {
            failures.push(format!(
                "  {name}: input want {}, got {got_input}",
                case["input"]
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{file}: {} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn mcp_calls_of_every_agent_are_named_mcp_server_tool_with_their_real_arguments() {
    check("mcp_frames.json");
}

fn other_calls_map_by_kind_then_title_and_carry_command_and_paths() {
    check("other_frames.json");
}

fn merging_keeps_absent_fields_and_merges_raw_input_key_by_key() {
    let mut call = CallFields::default();
    merge_tool_call(
        &mut call,
        &serde_json::json!({"sessionUpdate": "tool_call", "title": "a", "rawInput": {"x": 1}, "content": [1]}).into(),
    );
    merge_tool_call(
        &mut call,
        &serde_json::json!({"sessionUpdate": "tool_call_update", "rawInput": {"y": 2}, "content": [2], "title": null}).into(),
    );
    assert_eq!(
        serde_json::to_value(&call.own).unwrap(),
        serde_json::json!({"title": "a", "rawInput": {"x": 1, "y": 2}, "content": [2]})
    );
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(tool_name: mcp_calls_of_every_agent_are_named_mcp_server_tool_with_their_real_arguments, other_calls_map_by_kind_then_title_and_carry_command_and_paths, merging_keeps_absent_fields_and_merges_raw_input_key_by_key)
}
