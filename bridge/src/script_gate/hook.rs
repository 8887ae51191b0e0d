//! The Claude Code PreToolUse hook (`acp-bridge gate-hook`): the gate's
//! decision as the hook's JSON on stdout, from the hook's JSON on stdin.

use serde_json::{Value, json};

use super::{deny_text, gated_target};

/// The Claude Code PreToolUse hook: `stdin` is the hook's JSON
/// (`tool_name`, `tool_input`). A gated write gives the JSON line to print
/// (a `deny` decision with [`deny_text`]); anything else, including input
/// that is not JSON, gives `None` (print nothing, allow). Exit 0 either way.
pub fn hook_decision(stdin: &str) -> Option<String> {
    let input: Value = serde_json::from_str(stdin).ok()?;
    let tool_name = input["tool_name"].as_str()?;
    let target = gated_target(tool_name, &input["tool_input"])?;
    Some(
        json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": deny_text(&target),
        }})
        .to_string(),
    )
}

/// The most stdin the hook reads (a `Write` carries the whole file); larger
/// input is not parsed and so allowed.
pub const HOOK_INPUT_LIMIT: u64 = 64 * 1024 * 1024;

/// Runs the hook on this process's stdin and stdout: reads the hook's JSON,
/// prints the decision line for a gated write, nothing otherwise. Waits at
/// most `timeout` for stdin to end; input it cannot read in time, or at all,
/// is allowed (the caller exits 0 either way).
pub fn run_hook_on_stdio(timeout: std::time::Duration) -> std::io::Result<()> {
    use std::io::{Read, Write};
    let (tx, rx) = std::sync::mpsc::channel();
    // a detached reader: on timeout the process exits and takes it along
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let read = std::io::stdin()
            .lock()
            .take(HOOK_INPUT_LIMIT + 1)
            .read_to_end(&mut buf);
        let _ = tx.send(read.ok().map(|_| buf));
    });
    let Ok(Some(bytes)) = rx.recv_timeout(timeout) else {
        return Ok(());
    };
    if bytes.len() as u64 > HOOK_INPUT_LIMIT {
        return Ok(());
    }
    let Ok(text) = String::from_utf8(bytes) else {
        return Ok(());
    };
    if let Some(line) = hook_decision(&text) {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{line}")?;
        out.flush()?;
    }
    Ok(())
}
