//! The tree handle against real processes on every platform: a child that
//! started a grandchild is ended with it, by `kill` (SIGKILL to the group,
//! the Job Object terminated) and, on Windows, by closing the job. The
//! child and grandchild are this binary again (no shell needed), told their
//! part by an environment variable ([`as_tree_process`]).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

type Case = fn() -> Result<(), String>;

const ROLE: &str = "PROCESS_GROUP_TREE_TEST_ROLE";
const BOUND: Duration = Duration::from_secs(10);

/// The exit code of this binary started as one of the tree's processes
/// (told its part by [`ROLE`]), `None` when it is started as the tests.
pub(crate) fn as_tree_process() -> Option<ExitCode> {
    match std::env::var(ROLE).as_deref() {
        // starts the grandchild, says its pid, waits
        Ok("parent") => {
            let me = std::env::current_exe().unwrap();
            // never waited for: the test ends it with the tree
            #[allow(clippy::zombie_processes)]
            let grandchild = std::process::Command::new(me)
                .env(ROLE, "sleeper")
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap();
            println!("{}", grandchild.id());
            std::thread::sleep(Duration::from_secs(60));
            Some(ExitCode::from(9))
        }
        Ok("sleeper") => {
            std::thread::sleep(Duration::from_secs(60));
            Some(ExitCode::from(9))
        }
        _ => None,
    }
}

/// The suite's trials.
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    let mut cases: Vec<(&str, Case)> = vec![(
        "tree::kill_ends_the_child_and_its_grandchild",
        kill_ends_the_child_and_its_grandchild,
    )];
    if cfg!(windows) {
        cases.push((
            "tree::dropping_the_tree_ends_the_child_and_its_grandchild",
            dropping_the_tree_ends_the_child_and_its_grandchild,
        ));
    }
    let trial = |(name, case): (&str, Case)| {
        libtest_mimic::Trial::test(name, move || case().map_err(Into::into))
    };
    cases.into_iter().map(trial).collect()
}

/// Starts the parent as a tree on `runtime`; returns the tree and the
/// parent's and grandchild's pids.
fn start(
    runtime: &tokio::runtime::Runtime,
) -> Result<(process_group::tree::Spawned, [u32; 2]), String> {
    runtime.block_on(async {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.env(ROLE, "parent");
        let mut spawned =
            process_group::tree::spawn(cmd, true).map_err(|e| format!("spawn: {e}"))?;
        let mut lines = BufReader::new(&mut spawned.stdout).lines();
        let line = tokio::time::timeout(BOUND, lines.next_line())
            .await
            .map_err(|_| "the parent never named its grandchild".to_string())?
            .map_err(|e| e.to_string())?
            .ok_or("the parent closed its stdout")?;
        let grandchild: u32 = line.trim().parse().map_err(|e| format!("{line:?}: {e}"))?;
        let parent = spawned.tree.id();
        Ok((spawned, [parent, grandchild]))
    })
}

fn kill_ends_the_child_and_its_grandchild() -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (spawned, pids) = start(&runtime)?;
    if pids.iter().any(|p| gone(*p)) {
        return Err(format!("not both running at the start: {pids:?}"));
    }
    if !spawned.tree.kill() {
        return Err("kill reached nothing".into());
    }
    let status = runtime
        .block_on(async { tokio::time::timeout(BOUND, spawned.exit).await })
        .map_err(|_| "the child was not reaped after kill".to_string())?;
    if status.is_ok_and(|s| s.is_ok_and(|s| s.success())) {
        return Err("the killed child exited 0".into());
    }
    wait_gone(&pids)
}

fn dropping_the_tree_ends_the_child_and_its_grandchild() -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (spawned, pids) = start(&runtime)?;
    drop(spawned);
    // the task that owns the job goes with the runtime: the job closes
    drop(runtime);
    wait_gone(&pids)
}

fn wait_gone(pids: &[u32]) -> Result<(), String> {
    let until = Instant::now() + BOUND;
    loop {
        let left: Vec<u32> = pids.iter().copied().filter(|p| !gone(*p)).collect();
        if left.is_empty() {
            return Ok(());
        }
        if Instant::now() > until {
            return Err(format!("still running: {left:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Gone, or a zombie nobody will run again.
#[cfg(unix)]
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => process_group::parse_stat(&stat).is_some_and(|(_, state, _)| state == 'Z'),
    }
}

#[cfg(windows)]
fn gone(pid: u32) -> bool {
    use windows::Win32::Foundation::{CloseHandle, STILL_ACTIVE};
    use windows::Win32::System::Threading::{
        GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
    };
    // SAFETY: a handle we open, read and close here.
    unsafe {
        let Ok(handle) = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, false, pid) else {
            return true;
        };
        let mut code = 0u32;
        let read = GetExitCodeProcess(handle, &mut code);
        let _ = CloseHandle(handle);
        read.is_err() || code != STILL_ACTIVE.0 as u32
    }
}
