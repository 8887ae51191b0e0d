//! End-to-end over real pipes: `acp-bridge` fronting the scripted ACP peer (a
//! test double), driven with stream-json on stdin exactly as an SDK would,
//! through one turn with a tool call and a permission round trip.

use crate::support;

use serde_json::{Value, json};
use support::{Bridge, assert_peer_kept_to_script, peer_cmd, read_pids, scratch};

fn is(v: &Value, ty: &str) -> bool {
    v["type"] == ty
}

fn turn_with_a_tool_call_and_permission_round_trip_completes_over_pipes() {
    let dir = scratch("turn");
    let log = dir.join("bridge.log");
    let mcp = json!({"mcpServers": {
        "unity-ops": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer test-token"}},
        "local-tool": {"type": "stdio", "command": "some-tool"}
    }})
    .to_string();
    // The Python Agent SDK's command line, with the TS SDK's `--flag=value` form mixed in.
    let (mut bridge, peer_pids) = Bridge::start_with_peer(
        &dir,
        "tool_call_with_permission.json",
        &[
            "--output-format",
            "stream-json",
            "--verbose",
            "--input-format",
            "stream-json",
            "--system-prompt=Be terse.",
            "--permission-prompt-tool",
            "stdio",
            "--mcp-config",
            &mcp,
            "--setting-sources",
            "",
            "--bridge-log",
            log.to_str().unwrap(),
        ],
    );

    bridge.send(r#"{"type":"control_request","request_id":"req_1","request":{"subtype":"initialize","hooks":null}}"#);
    let init = bridge.wait_for("the initialize control_response", |v| {
        is(v, "control_response")
    });
    assert_eq!(init["response"]["request_id"], "req_1");
    assert_eq!(init["response"]["subtype"], "success", "{init}");
    let system = bridge.wait_for("system/init", |v| is(v, "system") && v["subtype"] == "init");
    assert_eq!(system["session_id"], "sess-1");

    bridge.send(
        r#"{"type":"user","message":{"role":"user","content":"list the files"},"parent_tool_use_id":null,"session_id":"default"}"#,
    );
    let tool_use = bridge.wait_for("the assistant tool_use", |v| {
        is(v, "assistant")
            && v["message"]["content"]
                .as_array()
                .is_some_and(|c| c.iter().any(|b| b["type"] == "tool_use"))
    });
    let block = &tool_use["message"]["content"][0];
    assert_eq!(block["id"], "call-1");
    assert_eq!(block["name"], "Bash");
    assert_eq!(block["input"]["command"], "ls");

    let ask = bridge.wait_for("the can_use_tool control_request", |v| {
        is(v, "control_request") && v["request"]["subtype"] == "can_use_tool"
    });
    assert_eq!(ask["request"]["tool_name"], "Bash");
    let request_id = ask["request_id"]
        .as_str()
        .expect("request_id is a string")
        .to_string();
    bridge.send(
        &json!({"type":"control_response","response":{"subtype":"success","request_id":request_id,
            "response":{"behavior":"allow","updatedInput":{"command":"ls"}}}})
        .to_string(),
    );

    let tool_result = bridge.wait_for("the tool_result", |v| {
        is(v, "user")
            && v["message"]["content"]
                .as_array()
                .is_some_and(|c| c.iter().any(|b| b["type"] == "tool_result"))
    });
    let result_block = &tool_result["message"]["content"][0];
    assert_eq!(result_block["tool_use_id"], "call-1");
    assert!(
        result_block.to_string().contains("alpha.txt"),
        "{result_block}"
    );

    let result = bridge.wait_for("the result", |v| is(v, "result"));
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(result["session_id"], "sess-1");

    // Clean end: the panel closes stdin, the bridge ends the agent and exits 0.
    bridge.close_stdin();
    bridge.expect_clean_exit(&peer_pids);
    let stderr = bridge.stderr();

    bridge.assert_one_result();
    // Agent stderr is forwarded with a prefix; the peer checked every request
    // against its script (a deviation would have ended it with an error).
    assert!(
        stderr.contains("[agent] scripted-acp-peer: got session/prompt"),
        "{stderr}"
    );
    assert!(
        stderr.contains("session/request_permission answered"),
        "{stderr}"
    );
    assert_peer_kept_to_script(&stderr);
    // --bridge-log kept the traffic of both legs, tagged by direction.
    let log = std::fs::read_to_string(&log).unwrap();
    for tag in ["panel> ", "<panel ", "agent< ", "<agent ", "agent-stderr "] {
        assert!(
            log.lines().any(|l| l.starts_with(tag)),
            "bridge log has no {tag:?} line:\n{log}"
        );
    }
    assert!(
        !log.contains("test-token"),
        "the bridge log leaks the MCP Authorization value"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn panel_closing_stdin_mid_turn_still_gets_the_result() {
    // Like `claude -p`: the SDK may close stdin right after the prompt; the
    // running turn (here: waiting on a permission) must still finish.
    let dir = scratch("eof-mid-turn");
    let (mut bridge, peer_pids) = Bridge::start_with_peer(
        &dir,
        "tool_call_with_permission.json",
        &[
            "--system-prompt",
            "Be terse.",
            "--mcp-config",
            r#"{"mcpServers":{"unity-ops":{"type":"http","url":"http://127.0.0.1:9/mcp","headers":{"Authorization":"Bearer test-token"}}}}"#,
        ],
    );
    bridge.send(
        r#"{"type":"control_request","request_id":"req_1","request":{"subtype":"initialize"}}"#,
    );
    bridge.send(r#"{"type":"user","message":{"role":"user","content":"list the files"},"parent_tool_use_id":null,"session_id":"default"}"#);
    let ask = bridge.wait_for("the can_use_tool control_request", |v| {
        is(v, "control_request") && v["request"]["subtype"] == "can_use_tool"
    });
    bridge.send(
        &json!({"type":"control_response","response":{"subtype":"success","request_id":ask["request_id"],
            "response":{"behavior":"allow","updatedInput":{"command":"ls"}}}})
        .to_string(),
    );
    bridge.close_stdin();
    let result = bridge.wait_for("the result after stdin closed", |v| is(v, "result"));
    assert_eq!(result["is_error"], false, "{result}");
    bridge.expect_clean_exit(&peer_pids);
    let _ = std::fs::remove_dir_all(&dir);
}

fn eight_mib_image_result_crosses_the_pipes_as_an_image_block() {
    let dir = scratch("large-image");
    let (mut bridge, peer_pids) = Bridge::start_with_peer(&dir, "large_image_result.json", &[]);
    bridge.send(
        r#"{"type":"control_request","request_id":"req_1","request":{"subtype":"initialize"}}"#,
    );
    bridge.send(r#"{"type":"user","message":{"role":"user","content":"take a screenshot"},"parent_tool_use_id":null,"session_id":"default"}"#);
    let tool_result = bridge.wait_for("the tool_result", |v| {
        is(v, "user")
            && v["message"]["content"]
                .as_array()
                .is_some_and(|c| c.iter().any(|b| b["type"] == "tool_result"))
    });
    let content = &tool_result["message"]["content"][0]["content"];
    let image = content
        .as_array()
        .and_then(|blocks| blocks.iter().find(|b| b["type"] == "image"))
        .unwrap_or_else(|| {
            panic!(
                "no image block in {}",
                &content.to_string()[..300.min(content.to_string().len())]
            )
        });
    assert_eq!(
        image["source"]["data"].as_str().map(str::len),
        Some(8 * 1024 * 1024)
    );
    assert_eq!(image["source"]["media_type"], "image/png");
    let text: String = content
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "text")
        .map(|b| b["text"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(text, "Game view, 1920x1080.");
    let result = bridge.wait_for("the result", |v| is(v, "result"));
    assert_eq!(result["is_error"], false);
    bridge.close_stdin();
    let (status, _) = bridge.read_to_exit(&peer_pids);
    assert!(
        status.success(),
        "exit {status}\nstderr:\n{}",
        bridge.stderr()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn print_mode_prompt_runs_one_turn_without_reading_stdin() {
    // `acp-bridge -p "<prompt>"`, as `claude -p` is run by older SDKs and by
    // people in a shell. Our stdin stays open and unread: the turn and the
    // exit must not wait for it.
    let dir = scratch("print-mode");
    let (mut bridge, peer_pids) = Bridge::start_with_peer(
        &dir,
        "text_only_turn.json",
        &[
            "-p",
            "ping the editor",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
    );
    let result = bridge.wait_for("the result", |v| is(v, "result"));
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(result["result"], "pong");
    let (status, _) = bridge.read_to_exit(&peer_pids);
    let stderr = bridge.stderr();
    assert!(status.success(), "exit {status}\nstderr:\n{stderr}");
    assert_peer_kept_to_script(&stderr);
    // The initialize the host sent for itself is not answered on stdout.
    assert!(
        !bridge.seen.iter().any(|l| l.contains("control_response")),
        "{}",
        bridge.seen.join("\n")
    );
    assert!(
        bridge
            .seen
            .iter()
            .any(|l| l.contains(r#""subtype":"init""#))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn unread_stderr_does_not_stall_a_chatty_session() {
    // ~2 MB of agent stderr into a stderr pipe nobody reads (64 KiB buffer).
    let dir = scratch("unread-stderr");
    let pid_file = dir.join("pids");
    let mut bridge = Bridge::start_with_unread_stderr(&[
        "-p",
        "ping the editor",
        "--agent-cmd",
        &peer_cmd("chatty_text_turn.json", &pid_file),
        "--cwd",
        dir.to_str().unwrap(),
    ]);
    let peer_pids = read_pids(&pid_file);
    let result = bridge.wait_for("the result", |v| is(v, "result"));
    assert_eq!(result["is_error"], false, "{result}");
    bridge.expect_clean_exit(&peer_pids);
    let _ = std::fs::remove_dir_all(&dir);
}

fn interrupt_during_a_permission_prompt_cancels_and_ends_the_turn_once() {
    let dir = scratch("interrupt");
    let (mut bridge, peer_pids) =
        Bridge::start_with_peer(&dir, "interrupted_at_permission.json", &[]);
    bridge.send(
        r#"{"type":"control_request","request_id":"req_1","request":{"subtype":"initialize"}}"#,
    );
    bridge.send(r#"{"type":"user","message":{"role":"user","content":"list the files"},"parent_tool_use_id":null,"session_id":"default"}"#);
    bridge.wait_for("the can_use_tool control_request", |v| {
        is(v, "control_request") && v["request"]["subtype"] == "can_use_tool"
    });
    bridge.send(
        r#"{"type":"control_request","request_id":"int_1","request":{"subtype":"interrupt"}}"#,
    );
    let ack = bridge.wait_for("the interrupt's control_response", |v| {
        is(v, "control_response") && v["response"]["request_id"] == "int_1"
    });
    assert_eq!(ack["response"]["subtype"], "success", "{ack}");
    bridge.wait_for("the result", |v| is(v, "result"));
    bridge.close_stdin();
    let (status, _) = bridge.read_to_exit(&peer_pids);
    let stderr = bridge.stderr();
    assert!(status.success(), "exit {status}\nstderr:\n{stderr}");
    bridge.assert_one_result();
    // session/cancel reached the agent before the permission answer, which
    // the peer checked was `cancelled`.
    assert!(
        stderr.contains("scripted-acp-peer: got session/cancel"),
        "{stderr}"
    );
    assert_peer_kept_to_script(&stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

fn a_panel_line_over_the_cap_is_skipped_and_reported_and_the_next_prompt_runs() {
    let dir = scratch("panel-over-cap");
    let (mut bridge, peer_pids) =
        Bridge::start_with_peer(&dir, "text_only_turn.json", &["--max-line-bytes", "65536"]);
    bridge.send(
        r#"{"type":"control_request","request_id":"req_1","request":{"subtype":"initialize"}}"#,
    );
    bridge.wait_for("system/init", |v| is(v, "system") && v["subtype"] == "init");
    let huge = json!({"type":"user","message":{"role":"user","content":"x".repeat(200_000)}});
    bridge.send(&huge.to_string());
    let lost = bridge.wait_for("the result for the skipped line", |v| is(v, "result"));
    assert_eq!(lost["is_error"], true, "{lost}");
    let text = lost["result"].as_str().unwrap_or("");
    assert!(text.contains("line cap of 65536 bytes"), "{lost}");
    bridge.send(r#"{"type":"user","message":{"role":"user","content":"ping the editor"},"parent_tool_use_id":null,"session_id":"default"}"#);
    let result = bridge.wait_for("the next prompt's result", |v| is(v, "result"));
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(result["result"], "pong", "{result}");
    bridge.close_stdin();
    bridge.expect_clean_exit(&peer_pids);
    let stderr = bridge.stderr();
    let skipped = format!(
        "skipped a line of {} bytes from the panel",
        huge.to_string().len()
    );
    assert!(stderr.contains(&skipped), "{stderr}");
    assert_peer_kept_to_script(&stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(e2e_turn: turn_with_a_tool_call_and_permission_round_trip_completes_over_pipes, panel_closing_stdin_mid_turn_still_gets_the_result, eight_mib_image_result_crosses_the_pipes_as_an_image_block, print_mode_prompt_runs_one_turn_without_reading_stdin, unread_stderr_does_not_stall_a_chatty_session, interrupt_during_a_permission_prompt_cancels_and_ends_the_turn_once, a_panel_line_over_the_cap_is_skipped_and_reported_and_the_next_prompt_runs)
}
