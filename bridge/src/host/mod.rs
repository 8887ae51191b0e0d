//! The process host behind the `acp-bridge` binary: command line, agent child
//! process, pipes, and the session loop that feeds the sans-IO core.

mod agent_process;
mod args;
mod command_line;
mod line_io;
mod line_queue;
mod machine;
mod mcp_client;
mod mcp_config;
mod program;
mod random_ids;
mod session;
mod signals;
mod stderr_sink;
mod tap_file;

use std::process::ExitCode;
use std::time::Duration;

use args::Invocation;

/// Parses the command line, runs one session, and maps the outcome to an exit
/// code: 0 after a clean session, non-zero with a message on stderr otherwise.
pub fn main_entry() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let current_dir = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => return fail(&format!("cannot read the current directory: {e}")),
    };
    let config = match args::parse(&argv, args::Env::from_process(), &current_dir) {
        Ok(Invocation::Version) => {
            print!("{}", acp_bridge::build_stamp::BRIDGE.version_text());
            return ExitCode::SUCCESS;
        }
        Ok(Invocation::Help) => {
            print!("{}", args::USAGE);
            return ExitCode::SUCCESS;
        }
        Ok(Invocation::Run(config)) => *config,
        Err(e) => return fail(&format!("{e:#}\n(see acp-bridge --help)")),
    };
    become_subreaper();
    // One thread: the session loop is the only task doing real work, and the
    // agent's parent-death signal is tied to the thread that spawned it.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(&format!("cannot start the async runtime: {e}")),
    };
    let result = runtime.block_on(session::run(config));
    // The stdin reader may sit in a blocking read that never returns; do not wait for it.
    runtime.shutdown_timeout(Duration::from_millis(100));
    match result {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        Err(e) => fail(&format!("{e:#}")),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("acp-bridge: {message}");
    ExitCode::FAILURE
}

/// Orphans of the agent's tree are re-parented to us instead of init, so we
/// can reap them and leave no zombie behind (Windows has no zombies; the
/// Job Object holds the tree).
fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain prctl on our own process.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
    }
}

/// Reaps any exited child without blocking. Only called once the agent itself
/// has been reaped, so it cannot steal the agent's exit status.
#[cfg(unix)]
fn reap_orphans() {
    loop {
        let mut status = 0;
        // SAFETY: plain syscall with a valid pointer.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            break;
        }
    }
}
