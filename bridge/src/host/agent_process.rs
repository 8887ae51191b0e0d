//! The agent child process with piped stdio, started as a tree of its own
//! ([`process_group::tree`]: a process group on Unix, a Job Object on
//! Windows) so everything it starts (npx shims, `cmd.exe`, node, helper
//! processes) is ended with it.

use std::io;
use std::path::Path;
use std::process::ExitStatus;

use anyhow::{Context, Result};
use process_group::tree::Tree;
use tokio::process::{ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::oneshot;

/// A running agent and the pipes to it.
pub struct AgentProcess {
    pub tree: Tree,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
    /// The agent's own exit, reaped by a task of its own.
    pub exit: oneshot::Receiver<io::Result<ExitStatus>>,
}

/// Starts `argv` in `cwd` with piped stdio.
pub fn spawn(argv: &[String], cwd: &Path) -> Result<AgentProcess> {
    let (program, args) = argv.split_first().context("empty agent command line")?;
    let mut command = Command::new(locate(program));
    command.args(args).current_dir(cwd);
    // The tree is ended by the host on every path; the kernel ends it too
    // if the host dies without cleaning up (Linux: tied to the spawning
    // thread, the runtime's only one; Windows: the job closes with us).
    let spawned = process_group::tree::spawn(command, true)
        .with_context(|| format!("cannot start the agent {program:?} (in {})", cwd.display()))?;
    Ok(AgentProcess {
        tree: spawned.tree,
        stdin: spawned.stdin,
        stdout: spawned.stdout,
        stderr: spawned.stderr,
        exit: spawned.exit,
    })
}

/// The file to start for `program`: on Windows found through `PATH` and
/// `PATHEXT` ([`super::program`]); elsewhere `exec` searches `PATH` itself.
fn locate(program: &str) -> String {
    if cfg!(windows) {
        let path = std::env::var("PATH").unwrap_or_default();
        let pathext = std::env::var("PATHEXT").ok();
        let start = std::env::current_dir()
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_default();
        super::program::resolve_windows(program, &start, &path, pathext.as_deref(), |p| {
            Path::new(p).is_file()
        })
        .unwrap_or_else(|| program.to_string())
    } else {
        program.to_string()
    }
}
