//! The agent child process: spawned in its own process group so the whole
//! tree it starts (npx shims, node, helper processes) can be signalled at once.

use std::path::Path;
use std::process::Stdio;

use anyhow::{Context, Result};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

/// A running agent and the pipes to it.
pub struct AgentProcess {
    pub child: Child,
    /// Process group id (= the agent's pid, as it leads its own group).
    pub pgid: i32,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
}

/// Starts `argv` in `cwd` with piped stdio.
pub fn spawn(argv: &[String], cwd: &Path) -> Result<AgentProcess> {
    let (program, args) = argv.split_first().context("empty agent command line")?;
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        // Last resort only: the host ends the group itself on every path.
        .kill_on_drop(true);
    #[cfg(target_os = "linux")]
    // SAFETY: prctl is async-signal-safe and touches only the child's own state.
    unsafe {
        // If the host dies without cleaning up (it was SIGKILLed), the agent
        // is killed too instead of living on as an orphan. This is tied to
        // the spawning thread, which is the runtime's only (main) thread.
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let mut child = command
        .spawn()
        .with_context(|| format!("cannot start the agent {program:?} (in {})", cwd.display()))?;
    let pid = child
        .id()
        .context("the agent exited before its pid was read")?;
    let stdin = child.stdin.take().context("agent stdin was not piped")?;
    let stdout = child.stdout.take().context("agent stdout was not piped")?;
    let stderr = child.stderr.take().context("agent stderr was not piped")?;
    Ok(AgentProcess {
        child,
        pgid: pid as i32,
        stdin,
        stdout,
        stderr,
    })
}

/// Sends `signal` to every process in group `pgid`. Returns false when no
/// process is left in the group.
pub fn signal_group(pgid: i32, signal: i32) -> bool {
    // SAFETY: plain syscall; a negative pid addresses the group.
    let rc = unsafe { libc::kill(-pgid, signal) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// True while any process of group `pgid` exists (zombies included).
pub fn group_alive(pgid: i32) -> bool {
    signal_group(pgid, 0)
}
