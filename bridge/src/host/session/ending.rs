//! The end of a session: late panel lines answered, what is left of the
//! agent's process tree ended, stdout flushed and the tap finished.

use std::time::Duration;

use acp_bridge::tap::{Outcome, TapEnd, Way};
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

#[cfg(unix)]
use process_group::tree::{INTERRUPT_NAME, KILL_NAME};

use super::exit_status::exit_signal;
use super::{EndCause, Host, PANEL_FLUSH, PANEL_LINGER, PANEL_LINGER_MAX, STDERR_FLUSH};
use crate::host::line_io::Read;

/// Answers panel lines that come after the agent is gone (the core fails
/// prompts and control requests fast), until the panel closes its input or
/// stays quiet for [`PANEL_LINGER`] (at most [`PANEL_LINGER_MAX`] in all).
pub(super) async fn answer_late_panel_lines(
    host: &mut Host,
    panel_lines: &mut mpsc::Receiver<Read>,
    now: &impl Fn() -> Duration,
) {
    let until = Instant::now() + PANEL_LINGER_MAX;
    while host.panel_open && Instant::now() < until {
        let quiet = PANEL_LINGER.min(until.saturating_duration_since(Instant::now()));
        match timeout(quiet, panel_lines.recv()).await {
            Ok(Some(Read::Line(line))) => host.panel_line(line, now()),
            Ok(Some(Read::OverCap)) => {
                let out = host.bridge.on_panel_line_over_cap(host.cap, now());
                host.apply(out);
            }
            Ok(Some(Read::Skipped { bytes })) => host.skipped(Way::PanelToBridge, bytes),
            Ok(Some(Read::End(_)) | None) | Err(_) => break,
        }
    }
}

/// Ends what is left of the agent's process group after its leader exited
/// (helpers it started), then reaps the orphans adopted by us.
#[cfg(unix)]
pub(super) async fn end_leftovers(grace: Duration, host: &mut Host) {
    for (name, kill) in [(INTERRUPT_NAME, false), (KILL_NAME, true)] {
        if !host.tree.alive() {
            break;
        }
        host.note(&format!(
            "{name} to what is left of the agent's process group"
        ));
        // The group id stays ours while any member lives (the kernel does not
        // hand out a pid still in use as a group id).
        if kill {
            host.tree.kill();
        } else {
            host.tree.interrupt();
        }
        let until = Instant::now() + grace;
        while host.tree.alive() && Instant::now() < until {
            crate::host::reap_orphans();
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    crate::host::reap_orphans();
    if host.tree.alive() {
        host.diag(&format!(
            "processes of the agent's group {} survived SIGKILL",
            host.tree.id()
        ));
    }
}

/// Ends what is left of the agent's Job Object after the agent exited
/// (helpers it started): the job is terminated at once, as its helpers have
/// no console of their own to be asked on, and Windows has no orphans to reap.
#[cfg(windows)]
pub(super) async fn end_leftovers(_grace: Duration, host: &mut Host) {
    host.note("terminating what is left of the agent's job");
    host.tree.kill();
}

pub(super) async fn finish(
    mut host: Host,
    panel_writer: tokio::task::JoinHandle<()>,
    code: i32,
) -> i32 {
    if host.dropped_agent_lines > 0 {
        let n = host.dropped_agent_lines;
        host.diag(&format!(
            "{n} line(s) for the agent were dropped because its stdin was already closed"
        ));
    }
    host.panel_tx.close();
    if timeout(PANEL_FLUSH, panel_writer).await.is_err() {
        host.diag("stdout could not be flushed in time");
    }
    host.note(&format!("exit {code}"));
    let ms = host.ms();
    let (agent_code, agent_signal) = match host.agent_status {
        Some(s) => (s.code(), exit_signal(&s)),
        None => (None, None),
    };
    let end = TapEnd {
        outcome: match host.cause {
            Some(EndCause::Signal(_)) => Outcome::Interrupted,
            _ if code == 0 => Outcome::Ok,
            _ => Outcome::Error,
        },
        agent_code,
        agent_signal,
        bridge_exit: code,
    };
    if let Some(told) = host.log.finish(ms, end, Vec::new()) {
        host.stderr.line(format!("acp-bridge: {told}"));
    }
    host.stderr.close(STDERR_FLUSH).await;
    code
}
