//! What a run leaves behind: once the agent is stopped, every process
//! still below the recorder (a daemon that left the agent's process group
//! and session) is ended and named in the trailer; one that outlives
//! SIGKILL is a harness error. The recorder is the init of its PID
//! namespace ([`crate::capture::isolation`]) or a child subreaper, so such orphans
//! are its descendants.

use super::driver;
use crate::corpus::recording::Outcome;

/// How long processes of a swept process group get to vanish before what
/// still runs counts as left behind.
const LEFTOVER_QUIET: std::time::Duration = std::time::Duration::from_millis(500);
/// How long a SIGKILLed leftover may take to vanish.
const LEFTOVER_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Ends every process the run left behind (the agent is stopped by now):
/// each is named in a note; one that outlives SIGKILL is a harness error.
pub(super) async fn end_leftovers(end: &mut driver::RunEnd) {
    let swept = process_group::end_descendants(LEFTOVER_QUIET, LEFTOVER_LIMIT).await;
    for p in &swept.ended {
        end.notes.push(format!(
            "process {} was still running after the agent ended (left its process group); ended it: `{}`",
            p.pid, p.cmdline
        ));
    }
    for p in &swept.survivors {
        end.notes.push(format!(
            "harness error: process {} is still alive {} s after SIGKILL: `{}`",
            p.pid,
            LEFTOVER_LIMIT.as_secs(),
            p.cmdline
        ));
    }
    if !swept.survivors.is_empty() {
        end.outcome = Outcome::Error;
    }
}
