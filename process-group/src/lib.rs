//! Child processes the way this workspace runs them. Every child starts in
//! its own process group (on Windows: a Job Object and a console process
//! group, see [`tree`]), so signalling the group reaches whatever it started
//! (npx shims, node, helpers); every wait has a timeout; every child is
//! ended by us: stdin closed, a grace period, SIGTERM (CTRL_BREAK) to the
//! group, another grace period, SIGKILL to the group (the job terminated).
//!
//! The ladder itself ([`Ladder`]) is sans-IO (deadlines in, signals out), so
//! an event loop that must never await the child (the bridge host) and code
//! that can simply await it ([`stop`]) end children by the same rules.
//! [`output`] runs a short-lived command (npm) with both pipes read while it
//! runs, so a chatty child never stalls on a full pipe until the timeout.

#[cfg(unix)]
mod descendants;
pub mod tree;

#[cfg(unix)]
pub use descendants::{Proc, Swept, become_subreaper, descendants, end_descendants, parse_stat};

#[cfg(unix)]
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

#[cfg(unix)]
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
#[cfg(unix)]
use tokio::process::{Child, ChildStdin, Command};
use tokio::time::Instant;

#[cfg(unix)]
/// Makes `cmd` start its child in a new process group (group id = its pid)
/// and kill it when the handle is dropped. With `die_with_parent` the kernel
/// also SIGKILLs it (Linux) when the spawning thread dies, so a host that is
/// itself SIGKILLed leaves no orphan.
pub fn in_own_group(cmd: &mut Command, die_with_parent: bool) -> &mut Command {
    cmd.process_group(0).kill_on_drop(true);
    #[cfg(target_os = "linux")]
    if die_with_parent {
        // SAFETY: prctl is async-signal-safe and touches only the child's own state.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = die_with_parent;
    cmd
}

#[cfg(unix)]
/// Sends `signal` to every process in group `pgid`. False when no process is
/// left in the group (or `pgid` is not a valid group id).
pub fn signal_group(pgid: i32, signal: i32) -> bool {
    if pgid <= 0 {
        return false;
    }
    // SAFETY: plain kill(2); a negative pid addresses the group.
    let rc = unsafe { libc::kill(-pgid, signal) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(unix)]
/// True while any process of group `pgid` exists (zombies included).
pub fn group_alive(pgid: i32) -> bool {
    signal_group(pgid, 0)
}

/// The grace periods of the ladder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Graces {
    /// After stdin closed, before SIGTERM.
    pub eof: Duration,
    /// After SIGTERM, before SIGKILL.
    pub term: Duration,
    /// After SIGKILL, before giving up on reaping.
    pub kill: Duration,
}

/// What the ladder asks for when a deadline passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rung {
    /// Send SIGTERM to the group.
    Terminate,
    /// Send SIGKILL to the group.
    Kill,
    /// SIGKILL did not get the child reaped either: stop waiting for it.
    GiveUp,
}

/// The stop ladder as a state machine: start it when the child's stdin is
/// closed, sleep until [`Ladder::deadline`], then act on [`Ladder::due`].
#[derive(Debug, Clone)]
pub struct Ladder {
    graces: Graces,
    next: Option<(Rung, Instant)>,
}

impl Ladder {
    /// The child's stdin was closed at `now`: SIGTERM is due after the EOF grace.
    pub fn after_stdin_closed(graces: Graces, now: Instant) -> Ladder {
        Ladder {
            graces,
            next: Some((Rung::Terminate, now + graces.eof)),
        }
    }

    /// When the next rung is due; `None` once it gave up.
    pub fn deadline(&self) -> Option<Instant> {
        self.next.map(|(_, at)| at)
    }

    /// Makes the next rung due at once (asked to hurry, e.g. by a signal).
    pub fn hurry(&mut self, now: Instant) {
        if let Some((_, at)) = self.next.as_mut() {
            *at = now;
        }
    }

    /// Skips to SIGKILL, due at once (asked twice).
    pub fn kill_now(&mut self, now: Instant) {
        if self.next.is_some_and(|(r, _)| r != Rung::GiveUp) {
            self.next = Some((Rung::Kill, now));
        }
    }

    /// The rung due at `now`, if any, and the ladder moves past it.
    pub fn due(&mut self, now: Instant) -> Option<Rung> {
        let (rung, at) = self.next?;
        if now < at {
            return None;
        }
        self.next = match rung {
            Rung::Terminate => Some((Rung::Kill, now + self.graces.term)),
            Rung::Kill => Some((Rung::GiveUp, now + self.graces.kill)),
            Rung::GiveUp => None,
        };
        Some(rung)
    }
}

#[cfg(unix)]
/// How [`stop`] ended a child.
#[derive(Debug)]
pub struct Stopped {
    /// `None` when it could not be reaped even after SIGKILL.
    pub status: Option<ExitStatus>,
    /// The rungs that had to be used, in order.
    pub rungs: Vec<Rung>,
}

#[cfg(unix)]
/// Ends `child` (group `pgid`) by the ladder: `stdin` is dropped (closed)
/// first. The group is swept with SIGKILL at the end whatever happened, so
/// nothing the child started outlives it.
pub async fn stop(
    child: &mut Child,
    pgid: i32,
    stdin: Option<ChildStdin>,
    graces: Graces,
) -> Stopped {
    drop(stdin);
    let mut ladder = Ladder::after_stdin_closed(graces, Instant::now());
    let mut rungs = Vec::new();
    let status = loop {
        let Some(deadline) = ladder.deadline() else {
            break None;
        };
        if let Ok(status) = tokio::time::timeout_at(deadline, child.wait()).await {
            break status.ok();
        }
        match ladder.due(Instant::now()) {
            Some(Rung::Terminate) => {
                rungs.push(Rung::Terminate);
                signal_group(pgid, libc::SIGTERM);
            }
            Some(Rung::Kill) => {
                rungs.push(Rung::Kill);
                signal_group(pgid, libc::SIGKILL);
            }
            Some(Rung::GiveUp) => {
                rungs.push(Rung::GiveUp);
                break None;
            }
            None => {}
        }
    };
    signal_group(pgid, libc::SIGKILL);
    Stopped { status, rungs }
}

#[cfg(unix)]
/// Waits for `child` at most `timeout`; `None` when it is still running.
pub async fn wait_timeout(
    child: &mut Child,
    timeout: Duration,
) -> Option<std::io::Result<ExitStatus>> {
    tokio::time::timeout(timeout, child.wait()).await.ok()
}

#[cfg(unix)]
/// What to do with a short-lived command's stdout and stderr.
#[derive(Debug, Clone, Copy)]
pub enum Pipes {
    /// Read both while it runs and return them.
    Capture,
    /// Relay every line of both to our stderr as it comes, prefixed
    /// `[<prefix>] ` (progress).
    Relay(&'static str),
    /// Leave them as the command has them (the parent's, unless set, e.g.
    /// to a log file).
    AsGiven,
}

#[cfg(unix)]
/// A finished short-lived command.
#[derive(Debug)]
pub struct Output {
    pub status: ExitStatus,
    /// Empty unless [`Pipes::Capture`].
    pub stdout: Vec<u8>,
    /// Empty unless [`Pipes::Capture`].
    pub stderr: Vec<u8>,
}

#[cfg(unix)]
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("cannot start it: {0}")]
    Spawn(std::io::Error),
    #[error("no end within {} s; stopped it", .0.as_secs())]
    Timeout(Duration),
    #[error("waiting for it failed: {0}")]
    Wait(std::io::Error),
}

#[cfg(unix)]
/// How long a command past its timeout gets after SIGTERM before SIGKILL
/// (a child that runs children of its own gets to end them).
pub const TIMEOUT_TERM_GRACE: Duration = Duration::from_secs(10);

#[cfg(unix)]
/// Runs `cmd` to its end in its own process group, stdin empty, its pipes as
/// `pipes` says (read while it runs). After `timeout` its group gets SIGTERM,
/// then SIGKILL after [`TIMEOUT_TERM_GRACE`].
pub async fn output(mut cmd: Command, timeout: Duration, pipes: Pipes) -> Result<Output, RunError> {
    let piped = !matches!(pipes, Pipes::AsGiven);
    cmd.stdin(Stdio::null());
    if piped {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    }
    in_own_group(&mut cmd, true);
    let mut child = cmd.spawn().map_err(RunError::Spawn)?;
    let pgid = child.id().map_or(0, |p| p as i32);
    let out = child.stdout.take().map(|p| tokio::spawn(drain(p, pipes)));
    let err = child.stderr.take().map(|p| tokio::spawn(drain(p, pipes)));
    let status = match wait_timeout(&mut child, timeout).await {
        Some(status) => status.map_err(RunError::Wait)?,
        None => {
            signal_group(pgid, libc::SIGTERM);
            if wait_timeout(&mut child, TIMEOUT_TERM_GRACE).await.is_none() {
                signal_group(pgid, libc::SIGKILL);
                let _ = wait_timeout(&mut child, Duration::from_secs(5)).await;
            }
            signal_group(pgid, libc::SIGKILL);
            return Err(RunError::Timeout(timeout));
        }
    };
    // what the child started may still hold the pipes: sweep the group, bound the wait
    signal_group(pgid, libc::SIGKILL);
    let mut collected = [Vec::new(), Vec::new()];
    for (slot, task) in collected.iter_mut().zip([out, err]) {
        if let Some(task) = task
            && let Ok(Ok(bytes)) = tokio::time::timeout(Duration::from_secs(5), task).await
        {
            *slot = bytes;
        }
    }
    let [stdout, stderr] = collected;
    Ok(Output {
        status,
        stdout,
        stderr,
    })
}

#[cfg(unix)]
/// [`output`] from synchronous code, on a runtime of its own. Must not be
/// called from inside a tokio runtime.
pub fn output_blocking(cmd: Command, timeout: Duration, pipes: Pipes) -> Result<Output, RunError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(RunError::Spawn)?
        .block_on(output(cmd, timeout, pipes))
}

#[cfg(unix)]
/// Reads a pipe to its end: kept with `Capture`, relayed line by line with `Lines`.
async fn drain(pipe: impl AsyncRead + Unpin, pipes: Pipes) -> Vec<u8> {
    let mut reader = BufReader::new(pipe);
    let mut kept = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return kept,
            Ok(_) => match pipes {
                Pipes::Capture => kept.extend_from_slice(&line),
                Pipes::Relay(prefix) => eprintln!(
                    "[{prefix}] {}",
                    String::from_utf8_lossy(&line).trim_end_matches(['\n', '\r'])
                ),
                Pipes::AsGiven => {}
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRACES: Graces = Graces {
        eof: Duration::from_millis(100),
        term: Duration::from_millis(200),
        kill: Duration::from_millis(300),
    };

    #[test]
    fn the_ladder_goes_term_kill_give_up_each_after_its_grace() {
        let t0 = Instant::now();
        let mut l = Ladder::after_stdin_closed(GRACES, t0);
        assert_eq!(l.deadline(), Some(t0 + GRACES.eof));
        assert_eq!(l.due(t0), None, "nothing is due before the EOF grace");
        let t1 = t0 + GRACES.eof;
        assert_eq!(l.due(t1), Some(Rung::Terminate));
        assert_eq!(l.deadline(), Some(t1 + GRACES.term));
        let t2 = t1 + GRACES.term;
        assert_eq!(l.due(t2), Some(Rung::Kill));
        let t3 = t2 + GRACES.kill;
        assert_eq!(l.due(t3), Some(Rung::GiveUp));
        assert_eq!(l.deadline(), None);
        assert_eq!(l.due(t3 + GRACES.kill), None);
    }

    #[test]
    fn hurrying_makes_the_next_rung_due_and_asking_twice_kills() {
        let t0 = Instant::now();
        let mut l = Ladder::after_stdin_closed(GRACES, t0);
        l.hurry(t0);
        assert_eq!(l.due(t0), Some(Rung::Terminate));
        l.kill_now(t0);
        assert_eq!(l.due(t0), Some(Rung::Kill));
    }

    #[cfg(unix)]
    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    #[cfg(unix)]
    /// Running, not gone or a zombie waiting for init to reap it.
    fn running(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| !r.trim_start().starts_with('Z'))
        })
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_child_that_ignores_stdin_and_sigterm_is_killed_with_its_group() {
        let dir = std::env::temp_dir().join(format!("process-group-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pid_file = dir.join("helper.pid");
        let mut cmd = sh(&format!(
            "trap '' TERM; sleep 30 & echo $! > {}; wait",
            pid_file.display()
        ));
        cmd.stdin(Stdio::piped());
        in_own_group(&mut cmd, true);
        let mut child = cmd.spawn().unwrap();
        let pgid = child.id().unwrap() as i32;
        let stdin = child.stdin.take();
        let until = std::time::Instant::now() + Duration::from_secs(5);
        while !pid_file.exists() && std::time::Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let helper = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .to_string();
        assert!(running(&helper));
        let started = std::time::Instant::now();
        let stopped = stop(&mut child, pgid, stdin, GRACES).await;
        assert!(stopped.status.is_some(), "reaped");
        assert_eq!(stopped.rungs, [Rung::Terminate, Rung::Kill]);
        assert!(started.elapsed() < Duration::from_secs(5));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            !running(&helper),
            "the helper it started went with the group"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_child_that_ends_on_stdin_eof_needs_no_signal() {
        let mut cmd = sh("cat >/dev/null");
        cmd.stdin(Stdio::piped());
        in_own_group(&mut cmd, true);
        let mut child = cmd.spawn().unwrap();
        let pgid = child.id().unwrap() as i32;
        let stdin = child.stdin.take();
        let stopped = stop(&mut child, pgid, stdin, GRACES).await;
        assert!(stopped.status.is_some_and(|s| s.success()));
        assert!(stopped.rungs.is_empty(), "{:?}", stopped.rungs);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn output_reads_a_pipe_larger_than_its_buffer_while_the_child_runs() {
        // 1 MiB on stdout: a parent that reads only after exit would stall here
        let out = output(
            sh("head -c 1048576 /dev/zero"),
            Duration::from_secs(10),
            Pipes::Capture,
        )
        .await
        .unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout.len(), 1 << 20);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn output_stops_a_child_at_the_timeout() {
        let started = std::time::Instant::now();
        let e = output(sh("sleep 30"), Duration::from_millis(200), Pipes::Capture)
            .await
            .unwrap_err();
        assert!(matches!(e, RunError::Timeout(_)), "{e}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
