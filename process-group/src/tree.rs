//! A child with everything it starts, behind one handle on every platform.
//! On Unix the tree is the child's own process group (see
//! [`crate::in_own_group`]); on Windows it is a Job Object that ends every
//! process in it when its last handle closes, so a bridge that is killed, or
//! dies, takes the tree with it, and the child leads a new console process
//! group, so CTRL_BREAK reaches it and what it started, and not us.

use std::io;
use std::process::{ExitStatus, Stdio};

use tokio::process::{ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::oneshot;

/// A started tree: its handle, the child's pipes, and its exit status once
/// it exited (reaped by a task of its own, so nobody has to await the child).
pub struct Spawned {
    pub tree: Tree,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
    /// The child's own exit (not its tree's); an error when waiting failed.
    pub exit: oneshot::Receiver<io::Result<ExitStatus>>,
}

/// What ends a tree, named as the platform names it (for diagnostics).
#[cfg(unix)]
pub const INTERRUPT_NAME: &str = "SIGTERM";
#[cfg(unix)]
pub const KILL_NAME: &str = "SIGKILL";
#[cfg(windows)]
pub const INTERRUPT_NAME: &str = "CTRL_BREAK";
#[cfg(windows)]
pub const KILL_NAME: &str = "job termination";

/// The handle that reaches the whole tree.
#[derive(Debug)]
pub struct Tree {
    pid: u32,
    /// Asks the task that owns the job to terminate it.
    #[cfg(windows)]
    kill: tokio::sync::mpsc::UnboundedSender<()>,
}

impl Tree {
    /// The child's process id (on Unix also its process group's id, on
    /// Windows also its console process group's).
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// Asks the tree to end: SIGTERM to the group (Unix), CTRL_BREAK to the
    /// console process group (Windows). False when nothing was reached.
    pub fn interrupt(&self) -> bool {
        #[cfg(unix)]
        {
            crate::signal_group(self.pid as i32, libc::SIGTERM)
        }
        #[cfg(windows)]
        {
            use windows::Win32::System::Console::{CTRL_BREAK_EVENT, GenerateConsoleCtrlEvent};
            // SAFETY: plain call; the group id is our child's pid.
            unsafe { GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, self.pid) }.is_ok()
        }
    }

    /// Ends every process of the tree now: SIGKILL to the group (Unix), the
    /// Job Object terminated (Windows). False when nothing was reached.
    pub fn kill(&self) -> bool {
        #[cfg(unix)]
        {
            crate::signal_group(self.pid as i32, libc::SIGKILL)
        }
        #[cfg(windows)]
        {
            self.kill.send(()).is_ok()
        }
    }

    /// True while a process of the group exists (zombies included). Windows
    /// has no cheap equivalent; [`Tree::kill`] ends the job synchronously.
    #[cfg(unix)]
    pub fn alive(&self) -> bool {
        crate::group_alive(self.pid as i32)
    }
}

/// Starts `cmd` with all three pipes as a tree of its own. With
/// `die_with_parent` the kernel also ends the child when we die (Linux
/// PDEATHSIG; on Windows the Job Object always does, for the whole tree).
/// Must be called inside a tokio runtime. When the runtime drops the task
/// that reaps it, the child is killed (Unix: the child alone, its group is
/// the caller's to end; Windows: the whole job, as its last handle closes).
pub fn spawn(mut cmd: Command, die_with_parent: bool) -> io::Result<Spawned> {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    imp::spawn(cmd, die_with_parent)
}

/// True for failures of the job setup that a second start can get past:
/// the thread snapshot used to resume the suspended child can come back
/// short or fail while processes come and go (`ERROR_BAD_LENGTH`, which
/// the snapshot's documentation says to retry; `ERROR_INTERNAL_ERROR`;
/// or no thread of the child in it). A program that is missing, not
/// executable or refused fails the same way every time and is not retried.
pub fn start_failure_is_transient(error: &io::Error) -> bool {
    const ERROR_BAD_LENGTH: i32 = 24;
    const ERROR_INTERNAL_ERROR: i32 = 1359;
    match error.raw_os_error() {
        Some(code) => code == ERROR_BAD_LENGTH || code == ERROR_INTERNAL_ERROR,
        None => error.kind() == io::ErrorKind::Other,
    }
}

fn pipes<I, O, E>(stdin: Option<I>, stdout: Option<O>, stderr: Option<E>) -> io::Result<(I, O, E)> {
    match (stdin, stdout, stderr) {
        (Some(i), Some(o), Some(e)) => Ok((i, o, e)),
        _ => Err(io::Error::other("a pipe to the child was not set up")),
    }
}

#[cfg(unix)]
mod imp {
    use super::*;

    pub fn spawn(mut cmd: Command, die_with_parent: bool) -> io::Result<Spawned> {
        crate::in_own_group(&mut cmd, die_with_parent);
        let mut child = cmd.spawn()?;
        let pid = child
            .id()
            .ok_or_else(|| io::Error::other("the child exited before its pid was read"))?;
        let (stdin, stdout, stderr) =
            pipes(child.stdin.take(), child.stdout.take(), child.stderr.take())?;
        let (exit_tx, exit) = oneshot::channel();
        tokio::spawn(async move {
            let _ = exit_tx.send(child.wait().await);
        });
        Ok(Spawned {
            tree: Tree { pid },
            stdin,
            stdout,
            stderr,
            exit,
        })
    }
}

#[cfg(windows)]
mod imp {
    use process_wrap::tokio::{CommandWrap, CreationFlags, JobObject, KillOnDrop};
    use windows::Win32::System::Threading::CREATE_NEW_PROCESS_GROUP;

    use super::*;

    /// How many times a start whose process was created but whose Job Object
    /// setup failed transiently is tried (the failed child is already ended).
    const START_ATTEMPTS: usize = 3;

    pub fn spawn(cmd: Command, _die_with_parent: bool) -> io::Result<Spawned> {
        let mut wrap = CommandWrap::from(cmd);
        // KillOnDrop makes the job kill-on-close: our last handle to it
        // closing (dropped, or the bridge gone) ends every process in it.
        wrap.wrap(CreationFlags(CREATE_NEW_PROCESS_GROUP))
            .wrap(JobObject)
            .wrap(KillOnDrop);
        let mut attempt = 1;
        let mut child = loop {
            match wrap.spawn() {
                Ok(child) => break child,
                Err(e) if attempt < START_ATTEMPTS && start_failure_is_transient(&e) => {
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        };
        let pid = child
            .id()
            .ok_or_else(|| io::Error::other("the child exited before its pid was read"))?;
        let (stdin, stdout, stderr) = pipes(
            child.stdin().take(),
            child.stdout().take(),
            child.stderr().take(),
        )?;
        let (exit_tx, exit) = oneshot::channel();
        let (kill, mut kills) = tokio::sync::mpsc::unbounded_channel::<()>();
        // This task owns the job: it reaps the child, terminates the job when
        // asked, and closes it (ending what is left) once every handle is gone.
        tokio::spawn(async move {
            let mut exit_tx = Some(exit_tx);
            loop {
                tokio::select! {
                    status = child.wait(), if exit_tx.is_some() => {
                        if let Some(tx) = exit_tx.take() {
                            let _ = tx.send(status);
                        }
                    }
                    asked = kills.recv() => match asked {
                        Some(()) => {
                            let _ = child.start_kill();
                        }
                        None => break,
                    },
                }
            }
            drop(child);
        });
        Ok(Spawned {
            tree: Tree { pid, kill },
            stdin,
            stdout,
            stderr,
            exit,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_job_setup_failures_that_can_pass_on_a_second_start_are_retried() {
        let cases = [
            (io::Error::from_raw_os_error(1359), true),
            (io::Error::from_raw_os_error(24), true),
            (
                io::Error::other("no thread belonging to the child was found"),
                true,
            ),
            (io::Error::from_raw_os_error(2), false),
            (io::Error::from_raw_os_error(5), false),
            (io::Error::from_raw_os_error(193), false),
            (io::Error::from(io::ErrorKind::NotFound), false),
            (io::Error::from(io::ErrorKind::InvalidInput), false),
        ];
        for (error, transient) in cases {
            assert_eq!(start_failure_is_transient(&error), transient, "{error}");
        }
    }
}
