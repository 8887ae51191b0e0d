//! The processes below this one, found by their parent links in `/proc`
//! (Linux), and the sweep that ends them: what a run leaves behind once its
//! agent is stopped (a daemon that left the agent's process group and
//! session) is ended here, so nothing outlives the run. Orphans reach us
//! because the recorder is the init of its PID namespace, or a child
//! subreaper ([`become_subreaper`]) where it has no namespace of its own.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::time::Instant;

/// One process found under `/proc`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proc {
    pub pid: i32,
    pub ppid: i32,
    /// Its command line, arguments joined by spaces (`[comm]` when it has none).
    pub cmdline: String,
    /// Exited but not yet reaped.
    pub zombie: bool,
}

/// Parses `/proc/<pid>/stat`: (ppid, state), reading past the command
/// name, which may hold spaces and parentheses.
pub fn parse_stat(stat: &str) -> Option<(i32, char, String)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?.to_string();
    let mut rest = stat.get(close + 1..)?.split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    Some((ppid, state, comm))
}

/// Every process on the machine as `/proc` shows it (empty where there is no `/proc`).
fn all() -> Vec<Proc> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (ppid, state, comm) = parse_stat(&stat)?;
            let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let args: Vec<String> = raw
                .split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            let cmdline = if args.is_empty() {
                format!("[{comm}]")
            } else {
                args.join(" ")
            };
            Some(Proc {
                pid,
                ppid,
                cmdline,
                zombie: state == 'Z' || state == 'X',
            })
        })
        .collect()
}

/// Every process below `ancestor` (children, theirs, ...), zombies included.
pub fn descendants(ancestor: i32) -> Vec<Proc> {
    let procs = all();
    let mut children: BTreeMap<i32, Vec<&Proc>> = BTreeMap::new();
    for p in &procs {
        children.entry(p.ppid).or_default().push(p);
    }
    let mut out = Vec::new();
    let mut todo = vec![ancestor];
    while let Some(pid) = todo.pop() {
        for child in children.get(&pid).into_iter().flatten() {
            if child.pid != ancestor {
                todo.push(child.pid);
                out.push((*child).clone());
            }
        }
    }
    out.sort_by_key(|p| p.pid);
    out
}

/// Makes orphaned descendants of this process its children rather than
/// init's (Linux `PR_SET_CHILD_SUBREAPER`), so [`end_descendants`] finds a
/// daemon that left its parent. False where that is not possible.
pub fn become_subreaper() -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: plain prctl on this process's own attribute.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// What [`end_descendants`] found and did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Swept {
    /// Processes still running after the quiet period: ended with SIGKILL.
    pub ended: Vec<Proc>,
    /// Processes alive even after SIGKILL and the whole wait.
    pub survivors: Vec<Proc>,
}

/// Ends whatever still runs below this process: first waits up to `quiet`
/// for processes that are already dying (a swept process group), then
/// SIGKILLs the rest, and waits up to `limit` for them to be gone, reaping
/// those that are its own children (orphans it inherited; the caller must
/// have reaped the children it waits for itself).
pub async fn end_descendants(quiet: Duration, limit: Duration) -> Swept {
    let me = std::process::id() as i32;
    let started = Instant::now();
    let mut swept = Swept::default();
    let mut killing = false;
    loop {
        let procs = descendants(me);
        for p in procs.iter().filter(|p| p.zombie && p.ppid == me) {
            // SAFETY: reaps one exited child of ours, without blocking.
            unsafe { libc::waitpid(p.pid, std::ptr::null_mut(), libc::WNOHANG) };
        }
        let live: Vec<&Proc> = procs.iter().filter(|p| !p.zombie).collect();
        if procs.is_empty() || (live.is_empty() && started.elapsed() >= limit) {
            break;
        }
        if !live.is_empty() && (killing || started.elapsed() >= quiet) {
            killing = true;
            for p in &live {
                if !swept.ended.iter().any(|e| e.pid == p.pid) {
                    swept.ended.push((*p).clone());
                }
                // SAFETY: plain kill(2) of a process below us.
                unsafe { libc::kill(p.pid, libc::SIGKILL) };
            }
        }
        if started.elapsed() >= quiet + limit {
            swept.survivors = live.into_iter().cloned().collect();
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    swept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_parse_past_a_command_name_with_spaces_and_parentheses() {
        let cases = [
            ("42 (bash) S 1 42 42 0", Some((1, 'S', "bash"))),
            ("7 (a b) (c)) Z 3 7 7", Some((3, 'Z', "a b) (c)"))),
            ("garbage", None),
        ];
        for (line, want) in cases {
            let got = parse_stat(line);
            let want = want.map(|(p, s, c)| (p, s, c.to_string()));
            assert_eq!(got, want, "{line}");
        }
    }
}
