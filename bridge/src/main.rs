//! `acp-bridge`: a drop-in for the `claude` CLI that speaks Claude Code
//! stream-json on its own stdin/stdout and drives an ACP agent run as a child
//! process. All translation happens in the library's sans-IO core; this binary
//! only parses the command line and hosts the process (see `host`).

mod host;

fn main() -> std::process::ExitCode {
    host::main_entry()
}
