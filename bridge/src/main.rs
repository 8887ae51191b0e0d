//! `acp-bridge`: a drop-in for the `claude` CLI that speaks Claude Code
//! stream-json on its own stdin/stdout and drives an ACP agent run as a child
//! process. All translation happens in the library's sans-IO core; this binary
//! only parses the command line and hosts the process (see `host`).

mod host;

fn main() -> std::process::ExitCode {
    // `acp-bridge gate-hook`: the script gate as a Claude Code PreToolUse hook,
    // the same code as the bridge's `--script-gate`; it always exits 0.
    if std::env::args().nth(1).as_deref() == Some("gate-hook") {
        let _ = acp_bridge::script_gate::run_hook_on_stdio(std::time::Duration::from_secs(30));
        return std::process::ExitCode::SUCCESS;
    }
    host::main_entry()
}
