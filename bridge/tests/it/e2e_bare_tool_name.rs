//! End-to-end over real pipes and real HTTP: `acp-bridge` lists the tools of
//! the panel's MCP server (a real stub-mcp on loopback) once the session's
//! servers are settled, and a call the agent names only by a bare tool name
//! reaches the panel as that server's tool.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use stub_mcp::Config;

use crate::support::{self, Bridge, scratch};

fn is(v: &Value, ty: &str) -> bool {
    v["type"] == ty
}

fn a_call_named_only_by_a_tool_the_registered_server_lists_is_that_servers_tool() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime for stub-mcp");
    let server = runtime
        .block_on(stub_mcp::serve(Config {
            token: Some("bare-test-token".into()),
            ..Config::default()
        }))
        .expect("stub-mcp starts");
    let dir = scratch("bare-tool-name");
    let log = dir.join("bridge.log");
    let mcp = json!({"mcpServers": {"unity-ops": {"type": "http", "url": server.url(),
        "headers": {"Authorization": format!("Bearer {}", server.token())}}}})
    .to_string();
    let (mut bridge, peer_pids) = Bridge::start_with_peer(
        &dir,
        "bare_tool_name.json",
        &[
            "--output-format",
            "stream-json",
            "--verbose",
            "--input-format",
            "stream-json",
            "--mcp-config",
            &mcp,
            "--bridge-log",
            log.to_str().unwrap(),
        ],
    );
    bridge.send(
        r#"{"type":"control_request","request_id":"req_1","request":{"subtype":"initialize"}}"#,
    );
    bridge.wait_for("system/init", |v| is(v, "system") && v["subtype"] == "init");
    // the list comes on its own task; the prompt waits for it only here, so
    // the call below cannot race it
    let listed = format!(
        "MCP server unity-ops lists {} tool(s)",
        stub_mcp::catalogue().len()
    );
    let until = Instant::now() + support::STEP_TIMEOUT;
    while !std::fs::read_to_string(&log).is_ok_and(|l| l.contains(&listed)) {
        if Instant::now() > until {
            bridge.fail(&format!("the bridge log never said {listed:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    bridge.send(
        r#"{"type":"user","message":{"role":"user","content":"ping"},"parent_tool_use_id":null,"session_id":"default"}"#,
    );
    let tool_use = bridge.wait_for("the tool_use", |v| {
        is(v, "assistant") && v["message"]["content"][0]["type"] == "tool_use"
    });
    assert_eq!(
        tool_use["message"]["content"][0]["name"], "mcp__unity-ops__uap_ping",
        "{tool_use}"
    );
    let ask = bridge.wait_for("can_use_tool", |v| {
        is(v, "control_request") && v["request"]["subtype"] == "can_use_tool"
    });
    assert_eq!(ask["request"]["tool_name"], "mcp__unity-ops__uap_ping");
    bridge.send(
        &json!({"type": "control_response", "response": {"subtype": "success",
            "request_id": ask["request_id"], "response": {"behavior": "allow", "updatedInput": {}}}})
        .to_string(),
    );
    let result = bridge.wait_for("the result", |v| is(v, "result"));
    assert_eq!(result["is_error"], false, "{result}");
    bridge.close_stdin();
    bridge.expect_clean_exit(&peer_pids);
    support::assert_peer_kept_to_script(&bridge.stderr());
    runtime.block_on(server.shutdown());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(e2e_bare_tool_name: a_call_named_only_by_a_tool_the_registered_server_lists_is_that_servers_tool)
}
