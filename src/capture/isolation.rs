//! Isolation for recording: the agent, stub-mcp and the model server all
//! run inside a network namespace that has only loopback, so an agent can
//! never reach the internet while it is recorded and a recording never
//! depends on it (codex tries GitHub for a plugin sync; 0.9.2 fetches a
//! model list); and inside a PID namespace whose init is the recorder, so
//! every process the agent starts (a daemon in its own session included)
//! is the recorder's descendant, is ended after each run
//! ([`process_group::end_descendants`]), and dies with the namespace when
//! the recorder ends, taking the network namespace with it.
//!
//! The route is the simplest robust one: `record` (outside) installs what it
//! needs, then re-executes itself as `unshare --net --pid --fork
//! --mount-proc --kill-child=SIGTERM -- <self> record --inside-netns ...`; the inner
//! process checks it is its namespace's init, brings `lo` up and proves
//! that a non-loopback address is unreachable before it records anything.
//! Only a proven run says `netns-loopback` in its header.

use std::net::{SocketAddr, TcpStream};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};

/// Header value of a run verified to have only loopback.
pub const NETNS_LOOPBACK: &str = "netns-loopback";
/// Header value of a run that used the host network.
pub const HOST_NETWORK: &str = "none";

/// Addresses that must be unreachable from inside (public DNS, a private
/// range, the GitHub API's usual front): any success means we leak.
const PROBES: &[&str] = &["1.1.1.1:443", "140.82.112.6:443", "10.255.255.1:80"];

/// What `unshare` is given: a network namespace, and a PID namespace (with
/// its own `/proc`) whose init gets SIGTERM when `unshare` dies (it ends its
/// run as `interrupted`; the kernel then ends the rest of the namespace).
const UNSHARE_ARGS: &[&str] = &[
    "--net",
    "--pid",
    "--fork",
    "--mount-proc",
    "--kill-child=SIGTERM",
];

/// Whether `unshare` can make both namespaces here (needs root or user namespaces).
pub fn available() -> bool {
    Command::new("unshare")
        .args(UNSHARE_ARGS)
        .args(["--", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// The command that re-runs this executable with `args` inside fresh
/// network and PID namespaces.
pub fn reexec_command(args: &[std::ffi::OsString]) -> anyhow::Result<Command> {
    let exe = std::env::current_exe().context("finding the harness executable to re-run")?;
    let mut cmd = Command::new("unshare");
    cmd.args(UNSHARE_ARGS).arg("--").arg(exe).args(args);
    Ok(cmd)
}

/// Runs the recorder inside the namespaces and waits for it. `unshare` and
/// the recorder it forks get a process group of their own (a terminal's
/// Ctrl-C reaches only this process, which passes it on once to the group:
/// `unshare` ignores it, the recorder ends its run as `interrupted`);
/// `unshare` is SIGKILLed should this process die, and then the recorder
/// gets SIGTERM (`--kill-child=SIGTERM`) and ends the same way. The
/// recorder also holds the read end of a pipe only this process writes to
/// ([`parent_gone`]): it commits nothing once that end reports this process
/// gone. However this process ends, nothing unfinished is committed.
pub fn run_reexec(mut cmd: Command) -> anyhow::Result<ExitCode> {
    let (read_end, write_end) = parent_pipe().context("making the recorder's parent pipe")?;
    let mut write_end = Some(write_end);
    let read_fd = std::os::fd::AsRawFd::as_raw_fd(&read_end);
    cmd.env(PARENT_PIPE_ENV, read_fd.to_string());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let mut interrupt = crate::capture::interrupt::Interrupt::listen()
            .context("taking over SIGINT and SIGTERM")?;
        let mut cmd = tokio::process::Command::from(cmd);
        cmd.process_group(0);
        let parent = std::process::id();
        // SAFETY: prctl and getppid are async-signal-safe and touch only the child.
        unsafe {
            cmd.pre_exec(move || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                // the read end goes on to `unshare` and the recorder; the
                // write end stays close-on-exec, held by this process alone
                if libc::fcntl(read_fd, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() as u32 != parent {
                    return Err(std::io::Error::other(
                        "the recorder ended before its child started",
                    ));
                }
                Ok(())
            });
        }
        let mut child = cmd
            .spawn()
            .context("running the recorder inside `unshare --net`")?;
        let status = tokio::select! {
            status = child.wait() => status,
            signal = interrupt.wait() => {
                // the recorder commits nothing from now on, even should the
                // signal reach it before it can take signals
                drop(write_end.take());
                if let Some(pid) = child.id() {
                    let number = if signal == "SIGINT" { libc::SIGINT } else { libc::SIGTERM };
                    // the group `unshare` leads: the recorder inside is in it
                    process_group::signal_group(pid as i32, number);
                }
                child.wait().await
            }
        }
        .context("waiting for the recorder inside `unshare --net`")?;
        Ok(match status.code() {
            _ if interrupt.requested().is_some() => {
                ExitCode::from(crate::capture::interrupt::EXIT_INTERRUPTED)
            }
            Some(0) => ExitCode::SUCCESS,
            Some(c) => ExitCode::from(c.clamp(1, 255) as u8),
            None => ExitCode::FAILURE,
        })
    })
}

/// The environment variable naming the recorder's end of its parent pipe.
const PARENT_PIPE_ENV: &str = "ACP_HARNESS_PARENT_PIPE";

/// A pipe whose ends are both close-on-exec: (read, write).
fn parent_pipe() -> std::io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 fills two fds we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both fds were just created and are owned by nobody else.
    Ok(unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    })
}

/// Inside the namespaces: whether the `record` that started this recorder
/// is gone (its pipe's write end closed, as it is when the process dies,
/// SIGKILL included). A recorder as init of its PID namespace cannot ask
/// for its parent (`getppid` is 0 there), so it asks the pipe. Outside the
/// namespaces there is no such parent: never gone.
pub fn parent_gone() -> bool {
    let Some(&fd) = PARENT_PIPE.get() else {
        return false;
    };
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: polls one fd without waiting; a bad fd is reported in revents.
    let ready = unsafe { libc::poll(&mut poll, 1, 0) };
    // nothing is ever written: readable means end of file, the writer gone
    ready > 0 && poll.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0
}

/// Inside the namespaces: ends the run ([`crate::capture::interrupt::request_end`])
/// once [`parent_gone`] would say so, watched by a thread of its own.
pub fn end_run_when_parent_goes() {
    let Some(&fd) = PARENT_PIPE.get() else {
        return;
    };
    std::thread::spawn(move || {
        loop {
            let mut poll = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: waits on one fd this process holds for its lifetime.
            let ready = unsafe { libc::poll(&mut poll, 1, -1) };
            if ready > 0 {
                if poll.revents & libc::POLLNVAL == 0 {
                    crate::capture::interrupt::request_end(crate::capture::interrupt::PARENT_GONE);
                }
                return;
            }
            if ready < 0
                && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
            {
                return;
            }
        }
    });
}

/// The recorder's end of its parent pipe, once [`enter_inside`] took it.
static PARENT_PIPE: std::sync::OnceLock<libc::c_int> = std::sync::OnceLock::new();

/// Takes the parent pipe's read end named in the environment, close-on-exec
/// again so the agents do not inherit it.
fn take_parent_pipe() {
    let Some(fd) = std::env::var(PARENT_PIPE_ENV)
        .ok()
        .and_then(|v| v.parse::<libc::c_int>().ok())
    else {
        return;
    };
    // SAFETY: sets a descriptor flag; a bad fd only fails the call.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } == 0 {
        let _ = PARENT_PIPE.set(fd);
    }
}

/// Inside the namespaces: check this process is the PID namespace's init,
/// bring `lo` up, then prove isolation.
pub fn enter_inside() -> anyhow::Result<()> {
    if std::process::id() != 1 {
        bail!(
            "the recorder is process {} inside its namespaces, not the init (1) of a PID namespace of its own",
            std::process::id()
        );
    }
    end_on_signals();
    take_parent_pipe();
    let status = Command::new("ip")
        .args(["link", "set", "lo", "up"])
        .stdin(Stdio::null())
        .status()
        .context("running `ip link set lo up` (is iproute2 installed?)")?;
    if !status.success() {
        bail!("`ip link set lo up` failed ({status})");
    }
    verify_loopback_only()
}

/// A namespace's init ignores signals it has no handler for, so SIGINT
/// and SIGTERM get one that ends it at once (the kernel then ends every
/// process of the namespace) until [`end_runs_cleanly`] says the recorder's
/// run takes them over ([`crate::capture::interrupt::Interrupt::listen`], whose
/// registration still calls this handler after its own).
fn end_on_signals() {
    extern "C" fn end(signal: libc::c_int) {
        if signal != libc::SIGHUP {
            crate::capture::interrupt::note_received(signal);
        }
        if CLEAN_END.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(128 + signal) }
    }
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: installs a handler that only reads an atomic and calls _exit.
        unsafe { libc::signal(signal, end as *const () as libc::sighandler_t) };
    }
}

/// Set once the run ends itself on SIGINT/SIGTERM (SIGHUP still ends at once).
static CLEAN_END: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on SIGINT and SIGTERM no longer end this process at once: the
/// caller has [`crate::capture::interrupt::Interrupt`] end its run.
pub fn end_runs_cleanly() {
    CLEAN_END.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Fails unless only loopback is reachable: every probe address must refuse
/// to connect (in a namespace without routes that is immediate), and a
/// loopback listener must be reachable.
pub fn verify_loopback_only() -> anyhow::Result<()> {
    for probe in PROBES {
        let addr: SocketAddr = probe.parse().expect("probe addresses are valid");
        if TcpStream::connect_timeout(&addr, Duration::from_millis(1500)).is_ok() {
            bail!("network isolation check failed: {probe} is reachable from inside the namespace");
        }
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .context("binding loopback inside the namespace")?;
    let local = listener.local_addr()?;
    TcpStream::connect_timeout(&local, Duration::from_millis(1500))
        .with_context(|| format!("loopback {local} is not reachable inside the namespace"))?;
    Ok(())
}
