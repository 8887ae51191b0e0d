//! `acp-bridge gate-hook` as a process: Claude Code's PreToolUse hook JSON on
//! stdin, a deny decision or nothing on stdout, exit 0 either way.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::bridge;

/// Runs the hook with `stdin`, returns (exit code, stdout). The process is
/// killed if it has not finished within 20 s.
fn run_hook(stdin: &str) -> (Option<i32>, String) {
    let mut child = Command::new(bridge())
        .arg("gate-hook")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn acp-bridge gate-hook");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if child.try_wait().expect("try_wait").is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("gate-hook did not exit within 20 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().expect("output");
    (
        out.status.code(),
        String::from_utf8(out.stdout).expect("utf-8 stdout"),
    )
}

fn gated_powershell_write_is_denied_with_the_decision_json_and_exit_0() {
    let (code, stdout) = run_hook(
        r#"{"hook_event_name":"PreToolUse","tool_name":"PowerShell","tool_input":{"command":"Set-Content -Path Assets/X.cs -Value x"}}"#,
    );
    assert_eq!(code, Some(0));
    let v: Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(
        v["hookSpecificOutput"]["permissionDecisionReason"],
        acp_bridge::script_gate::deny_text("Assets/X.cs").as_str()
    );
}

fn allowed_calls_and_non_json_print_nothing_and_exit_0() {
    for stdin in [
        r#"{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"UapStaging/X.cs","content":"x"}}"#,
        r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cat Assets/X.cs"}}"#,
        "not json at all",
        "",
    ] {
        let (code, stdout) = run_hook(stdin);
        assert_eq!(code, Some(0), "{stdin}");
        assert_eq!(stdout, "", "{stdin}");
    }
}

/// The suite's trials (see the `trials!` macro).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    trials!(script_gate_hook: gated_powershell_write_is_denied_with_the_decision_json_and_exit_0, allowed_calls_and_non_json_print_nothing_and_exit_0)
}
