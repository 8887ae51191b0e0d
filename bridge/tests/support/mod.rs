//! Shared by the end-to-end tests: runs the real `acp-bridge` binary over
//! real pipes in front of the scripted ACP peer (a test double), and reads
//! what it writes with a timeout on every read.

#![allow(dead_code)]

pub mod recorded;
pub mod termination;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The `acp-bridge` under test: the one cargo built, or the binary named by
/// `ACP_BRIDGE_TEST_BIN` (a release archive's, unpacked: `.ci/release`).
pub fn bridge() -> PathBuf {
    match std::env::var_os(BRIDGE_BIN_ENV) {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => PathBuf::from(env!("CARGO_BIN_EXE_acp-bridge")),
    }
}

pub const BRIDGE_BIN_ENV: &str = "ACP_BRIDGE_TEST_BIN";
pub const PEER: &str = env!("CARGO_BIN_EXE_scripted-acp-peer");

/// Every read and wait in these tests is bounded by this.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(15);

pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/support/scripts")
        .join(name)
}

/// A unique scratch directory for one test.
pub fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("acp-bridge-e2e-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The agent command line for the peer running `script_name`, writing its pids to `pid_file`.
pub fn peer_cmd(script_name: &str, pid_file: &Path) -> String {
    join_command_line(&[
        PEER,
        script(script_name).to_str().unwrap(),
        "--pid-file",
        pid_file.to_str().unwrap(),
    ])
}

/// `words` as one command line the bridge splits back into them: shell
/// words on Unix, double-quoted words on Windows (test paths hold no quotes
/// and no backslash before a closing quote).
pub fn join_command_line(words: &[&str]) -> String {
    if cfg!(windows) {
        let quoted: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
        quoted.join(" ")
    } else {
        shell_words::join(words)
    }
}

/// A running `acp-bridge` with the test playing the panel.
pub struct Bridge {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    stderr_done: Arc<std::sync::atomic::AtomicBool>,
    /// Every stdout line read so far, for failure messages.
    pub seen: Vec<String>,
    /// Every line written to its stdin, in order.
    pub sent: Vec<String>,
}

impl Bridge {
    pub fn start(args: &[&str]) -> Bridge {
        Bridge::start_with_agent_env(args, None)
    }

    /// Like [`Bridge::start`], with `ACP_BRIDGE_AGENT` set to `agent_env` (else unset).
    /// Starts the bridge with `args` in front of the scripted peer running
    /// `script`, with `dir` as the session's cwd (and home of the peer's pid
    /// file); returns it with the peer's pids.
    pub fn start_with_peer(dir: &Path, script: &str, args: &[&str]) -> (Bridge, Vec<i32>) {
        let pid_file = dir.join("pids");
        let peer = peer_cmd(script, &pid_file);
        let mut all = args.to_vec();
        all.extend(["--agent-cmd", &peer, "--cwd", dir.to_str().unwrap()]);
        let bridge = Bridge::start(&all);
        (bridge, read_pids(&pid_file))
    }

    pub fn start_with_agent_env(args: &[&str], agent_env: Option<&str>) -> Bridge {
        Bridge::spawn(args, agent_env, true, None, &[])
    }

    /// Like [`Bridge::start`], with `dir` first in its `PATH`.
    pub fn start_with_path_first(args: &[&str], dir: &Path) -> Bridge {
        Bridge::spawn(args, None, true, Some(dir), &[])
    }

    /// Like [`Bridge::start`], with these environment variables set.
    pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Bridge {
        Bridge::spawn(args, None, true, None, env)
    }

    /// Like [`Bridge::start`], but its stderr is a pipe nobody reads (as some
    /// panels do): the bridge must not stall on it.
    pub fn start_with_unread_stderr(args: &[&str]) -> Bridge {
        Bridge::spawn(args, None, false, None, &[])
    }

    fn spawn(
        args: &[&str],
        agent_env: Option<&str>,
        read_stderr: bool,
        path_first: Option<&Path>,
        env: &[(&str, &str)],
    ) -> Bridge {
        #[cfg(windows)]
        have_a_console();
        let mut command = Command::new(bridge());
        // A console process group of its own, so CTRL_BREAK reaches only it
        // (the SDKs' SIGTERM, the Windows way).
        #[cfg(windows)]
        std::os::windows::process::CommandExt::creation_flags(
            &mut command,
            windows::Win32::System::Threading::CREATE_NEW_PROCESS_GROUP.0,
        );
        command.env_remove("ACP_BRIDGE_AGENT");
        command.env_remove("ACP_BRIDGE_TAP");
        command.envs(env.iter().copied());
        if let Some(agent) = agent_env {
            command.env("ACP_BRIDGE_AGENT", agent);
        }
        if let Some(dir) = path_first {
            let rest = std::env::var_os("PATH").unwrap_or_default();
            let path = std::env::join_paths(
                std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&rest)),
            )
            .expect("a PATH entry with a separator in it");
            command.env("PATH", path);
        }
        let mut child = command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start acp-bridge");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        let stderr_done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let done = stderr_done.clone();
        if read_stderr {
            let err = child.stderr.take().unwrap();
            std::thread::spawn(move || {
                for line in BufReader::new(err).lines() {
                    let Ok(line) = line else { break };
                    let mut s = sink.lock().unwrap();
                    s.push_str(&line);
                    s.push('\n');
                }
                done.store(true, std::sync::atomic::Ordering::SeqCst);
            });
        } else {
            // The pipe stays open in `child` and is never read.
            done.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        let stdin = child.stdin.take();
        Bridge {
            child,
            stdin,
            lines,
            stderr,
            stderr_done,
            seen: Vec::new(),
            sent: Vec::new(),
        }
    }

    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin already closed");
        writeln!(stdin, "{line}")
            .and_then(|_| stdin.flush())
            .expect("write to acp-bridge");
        self.sent.push(line.to_string());
    }

    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    #[cfg(unix)]
    pub fn signal(&self, signal: i32) {
        // SAFETY: plain syscall on the child this struct started and has not reaped.
        unsafe {
            libc::kill(self.child.id() as i32, signal);
        }
    }

    /// Asks the bridge to end as the SDKs do: SIGTERM on Unix, CTRL_BREAK
    /// to its console process group on Windows. Where the host cannot
    /// generate console events ([`console_events_missing`]: wine implements
    /// CTRL_C only), the event goes to the bridge as Windows itself delivers
    /// it, a thread started in the process at kernel32's `CtrlRoutine`.
    /// `Err` when neither way reached it.
    pub fn terminate(&self) -> Result<(), String> {
        #[cfg(unix)]
        {
            self.signal(libc::SIGTERM);
            Ok(())
        }
        #[cfg(windows)]
        {
            use windows::Win32::System::Console::{CTRL_BREAK_EVENT, GenerateConsoleCtrlEvent};
            // SAFETY: plain call on the group of the child this struct started.
            match unsafe { GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, self.child.id()) } {
                Ok(()) => Ok(()),
                Err(e) if console_events_missing() => self
                    .console_event_by_ctrl_routine(CTRL_BREAK_EVENT)
                    .map_err(|by_thread| {
                        format!("CTRL_BREAK to acp-bridge: {e}; by CtrlRoutine: {by_thread}")
                    }),
                Err(e) => Err(format!("CTRL_BREAK to acp-bridge: {e}")),
            }
        }
    }

    /// Runs the bridge's console control handlers for `event` on a thread of
    /// its own, started at `CtrlRoutine` (what the console host does).
    #[cfg(windows)]
    fn console_event_by_ctrl_routine(&self, event: u32) -> windows::core::Result<()> {
        use std::os::windows::io::AsRawHandle;
        use windows::Win32::Foundation::{CloseHandle, HANDLE};
        use windows::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
        use windows::Win32::System::Threading::{CreateRemoteThread, LPTHREAD_START_ROUTINE};
        use windows::core::{s, w};
        // SAFETY: kernel32 is mapped at the same address in every process of
        // the session, so its CtrlRoutine here is its CtrlRoutine there; the
        // routine takes the event as its one argument, as a thread start does.
        unsafe {
            let kernel32 = GetModuleHandleW(w!("kernel32.dll"))?;
            let routine = GetProcAddress(kernel32, s!("CtrlRoutine"))
                .ok_or_else(windows::core::Error::from_thread)?;
            let start: LPTHREAD_START_ROUTINE = Some(std::mem::transmute::<
                unsafe extern "system" fn() -> isize,
                unsafe extern "system" fn(*mut std::ffi::c_void) -> u32,
            >(routine));
            let thread = CreateRemoteThread(
                HANDLE(self.child.as_raw_handle()),
                None,
                0,
                start,
                Some(event as usize as *const std::ffi::c_void),
                0,
                None,
            )?;
            let _ = CloseHandle(thread);
        }
        Ok(())
    }

    /// Ends the bridge outright, giving it no chance to clean up (SIGKILL,
    /// TerminateProcess).
    pub fn kill(&mut self) {
        self.child.kill().expect("kill acp-bridge");
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Reads stdout until a line satisfies `pred`; panics after [`STEP_TIMEOUT`]
    /// with everything seen so far.
    pub fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + STEP_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    let value: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                        panic!("acp-bridge wrote a non-JSON line ({e}): {line}")
                    });
                    if pred(&value) {
                        return value;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.fail(&format!("timed out waiting for {what}"))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.fail(&format!("stdout closed while waiting for {what}"))
                }
            }
        }
    }

    /// Reads the rest of stdout (until it closes), bounded by [`STEP_TIMEOUT`].
    pub fn read_to_end(&mut self) {
        let deadline = Instant::now() + STEP_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(RecvTimeoutError::Disconnected) => return,
                Err(RecvTimeoutError::Timeout) => {
                    self.fail("timed out waiting for stdout to close")
                }
            }
        }
    }

    /// Waits for the bridge to exit, bounded by `limit`.
    pub fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Let the stderr reader catch up (bounded: a leftover process could hold the pipe).
                let until = Instant::now() + Duration::from_secs(2);
                while !self.stderr_done.load(std::sync::atomic::Ordering::SeqCst)
                    && Instant::now() < until
                {
                    std::thread::sleep(Duration::from_millis(10));
                }
                return status;
            }
            if Instant::now() > deadline {
                self.fail(&format!("acp-bridge did not exit within {limit:?}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for the bridge to exit (up to 10 s) and then for `pids` to be
    /// gone (up to 3 s), ending those still there so a failing assertion
    /// leaks no process. Returns the exit status and the pids that were left.
    pub fn wait_exit_and_reap(&mut self, pids: &[i32]) -> (ExitStatus, Vec<i32>) {
        let status = self.wait_exit(Duration::from_secs(10));
        let left = wait_gone(pids, Duration::from_secs(3));
        kill_pids(&left);
        (status, left)
    }

    /// Reads stdout to its end, then [`Bridge::wait_exit_and_reap`].
    pub fn read_to_exit(&mut self, pids: &[i32]) -> (ExitStatus, Vec<i32>) {
        self.read_to_end();
        self.wait_exit_and_reap(pids)
    }

    /// Reads to the exit and asserts the bridge exited 0 and left no agent
    /// process running.
    pub fn expect_clean_exit(&mut self, pids: &[i32]) {
        let (status, left) = self.read_to_exit(pids);
        assert!(
            status.success(),
            "exit {status}\nstderr:\n{}",
            self.stderr()
        );
        assert!(left.is_empty(), "agent still running: {left:?}");
    }

    /// Asserts the panel read exactly one `result` line.
    pub fn assert_one_result(&self) {
        let results = self
            .seen
            .iter()
            .filter(|l| l.contains(r#""type":"result""#))
            .count();
        assert_eq!(results, 1, "exactly one result:\n{}", self.seen.join("\n"));
    }

    pub fn fail(&mut self, why: &str) -> ! {
        let _ = self.child.kill();
        let _ = self.child.wait();
        panic!(
            "{why}\n--- stdout so far:\n{}\n--- stderr:\n{}",
            self.seen.join("\n"),
            self.stderr()
        );
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        // A failed test must not leave the bridge behind either.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Console control events reach only processes of the sender's console: a
/// test run without one (a CI service) gets its own, which the bridge and
/// its agent inherit.
#[cfg(windows)]
pub fn have_a_console() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        use windows::Win32::System::Console::{AllocConsole, GetConsoleWindow};
        // SAFETY: plain calls on our own process.
        unsafe {
            if GetConsoleWindow().is_invalid() {
                let _ = AllocConsole();
            }
        }
    });
}

/// Set where the host cannot generate console control events (wine's
/// GenerateConsoleCtrlEvent sends CTRL_C only): [`Bridge::terminate`] then
/// delivers the event through `CtrlRoutine`, and a test that still cannot
/// reach the bridge says so on stderr instead of failing. Never set on Windows.
pub const NO_CONSOLE_EVENTS_ENV: &str = "ACP_BRIDGE_TEST_NO_CONSOLE_EVENTS";

/// Whether this host was declared unable to deliver console events
/// ([`NO_CONSOLE_EVENTS_ENV`]).
pub fn console_events_missing() -> bool {
    std::env::var_os(NO_CONSOLE_EVENTS_ENV).is_some_and(|v| v == "1")
}

/// Asserts the scripted peer never left its script (it says `step` on
/// stderr when a request was not the one its script expected).
pub fn assert_peer_kept_to_script(stderr: &str) {
    assert!(
        !stderr.contains("scripted-acp-peer: step"),
        "the peer left its script:\n{stderr}"
    );
}

/// Pids written by the peer (its own first, then its helper's), waiting for the file.
pub fn read_pids(pid_file: &Path) -> Vec<i32> {
    let deadline = Instant::now() + STEP_TIMEOUT;
    loop {
        if let Ok(text) = std::fs::read_to_string(pid_file)
            && text.ends_with('\n')
        {
            return text.lines().map(|l| l.parse().unwrap()).collect();
        }
        assert!(
            Instant::now() < deadline,
            "the peer never wrote {}",
            pid_file.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// True once `pid` is gone or a zombie nobody can reap any more.
#[cfg(unix)]
pub fn process_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // The state follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// True once `pid` has exited (or no process has that id).
#[cfg(windows)]
pub fn process_gone(pid: i32) -> bool {
    use windows::Win32::Foundation::{CloseHandle, STILL_ACTIVE};
    use windows::Win32::System::Threading::{
        GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
    };
    // SAFETY: a handle we open, read and close here.
    unsafe {
        let Ok(handle) = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, false, pid as u32) else {
            return true;
        };
        let mut code = 0u32;
        let read = GetExitCodeProcess(handle, &mut code);
        let _ = CloseHandle(handle);
        read.is_err() || code != STILL_ACTIVE.0 as u32
    }
}

/// Waits up to `limit` for every pid to be gone; returns the ones left.
pub fn wait_gone(pids: &[i32], limit: Duration) -> Vec<i32> {
    let deadline = Instant::now() + limit;
    loop {
        let left: Vec<i32> = pids.iter().copied().filter(|p| !process_gone(*p)).collect();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Ends stray test processes (only those this test started) so a failing
/// assertion does not leak them.
pub fn kill_pids(pids: &[i32]) {
    for &pid in pids {
        if !process_gone(pid) {
            #[cfg(unix)]
            // SAFETY: plain syscall on a pid this test's peer reported.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
            #[cfg(windows)]
            // SAFETY: a handle we open, use and close here.
            unsafe {
                use windows::Win32::Foundation::CloseHandle;
                use windows::Win32::System::Threading::{
                    OpenProcess, PROCESS_TERMINATE, TerminateProcess,
                };
                if let Ok(handle) = OpenProcess(PROCESS_TERMINATE, false, pid as u32) {
                    let _ = TerminateProcess(handle, 1);
                    let _ = CloseHandle(handle);
                }
            }
        }
    }
}
