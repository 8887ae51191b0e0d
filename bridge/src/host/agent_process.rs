//! The agent child process with piped stdio, spawned in its own process
//! group (`process_group`) so the whole tree it starts (npx shims, node,
//! helper processes) can be signalled at once.

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
        .stderr(Stdio::piped());
    // Killed on drop as a last resort only (the host ends the group itself on
    // every path), and killed by the kernel if the host dies without cleaning
    // up: that is tied to the spawning thread, the runtime's only one.
    process_group::in_own_group(&mut command, true);
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
