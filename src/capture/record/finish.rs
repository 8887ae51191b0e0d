//! The end of a run: servers down, taps drained, the trailer's outcome
//! decided, and what the recorder says about a finished recording.

use std::path::Path;

use crate::capture::interrupt::{Interrupt, PARENT_GONE};
use crate::capture::isolation;
use crate::corpus::recording::{self, Outcome};

use super::{driver, leftovers, timeline};

/// Why a finished run must not be committed, if it must not: a signal
/// received at any moment since the run started (the agent's stop and the
/// moments after the last turn included), or the `record` that started
/// this recorder gone (SIGKILLed: nobody is there to say the run is wanted).
pub(super) fn why_not_commit(interrupt: &Interrupt) -> Option<String> {
    let why = interrupt
        .requested()
        .or_else(|| isolation::parent_gone().then_some(PARENT_GONE))?;
    Some(format!(
        "interrupted: {}",
        crate::capture::interrupt::describe(why)
    ))
}

/// Where a run's events go: the servers' forwarding tasks, the tap, the
/// timeline, and the off-script requests seen.
pub(super) struct RunSinks<'a> {
    pub(super) forwards: [Option<tokio::task::JoinHandle<()>>; 2],
    pub(super) tap: crate::capture::acp_client::Tap,
    pub(super) timeline: timeline::Timeline,
    pub(super) off_script: &'a std::sync::Mutex<Vec<String>>,
}

/// Servers down, their taps drained, then the trailer: a run that played
/// to its end but answered a model request off the script is `off_script`,
/// each such request named in the notes; one that got a signal after its
/// last step (while the agent was stopped, say) is `interrupted`.
pub(super) async fn finish_run(
    model: Option<crate::capture::model_server::Running>,
    mcp: stub_mcp::Running,
    sinks: RunSinks<'_>,
    mut end: driver::RunEnd,
    interrupt: &Interrupt,
) -> anyhow::Result<(recording::Finished, Outcome)> {
    let RunSinks {
        forwards,
        tap,
        timeline,
        off_script,
    } = sinks;
    if let Some(m) = model {
        m.shutdown().await;
    }
    mcp.shutdown().await;
    for f in forwards.into_iter().flatten() {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), f).await;
    }
    leftovers::end_leftovers(&mut end).await;
    drop(tap);
    let off = std::mem::take(&mut *off_script.lock().unwrap_or_else(|e| e.into_inner()));
    if !off.is_empty() && end.outcome == Outcome::Ok {
        end.outcome = Outcome::OffScript;
    }
    end.notes.extend(off);
    if end.outcome != Outcome::Interrupted
        && let Some(why) = why_not_commit(interrupt)
    {
        end.outcome = Outcome::Interrupted;
        end.notes.push(format!("{why} as the run ended"));
    }
    let finished = timeline.finish(end.outcome, end.exit, end.notes).await?;
    Ok((finished, end.outcome))
}

/// The recording's ACP frames against the vendored schema, one line: what
/// its header's `acp_schema` says the recorder validated against.
pub(super) fn schema_check(path: &Path) -> String {
    use crate::judging::acp_schema::{AcpSchema, RecordingConformance, schema};
    let schema_name = schema::version();
    let acp = match (AcpSchema::get(), recording::read(path)) {
        (Ok(s), Ok(r)) => RecordingConformance::of_recording(s, &r),
        (Err(e), _) => return format!("ACP schema {schema_name}: not checked: {e}"),
        (_, Err(e)) => return format!("ACP schema {schema_name}: not checked: {e}"),
    };
    let side = |t: &crate::judging::acp_schema::Tally| {
        format!(
            "{} valid, {} invalid, {} outside",
            t.valid, t.invalid, t.outside
        )
    };
    format!(
        "ACP schema {schema_name}: agent {} frame(s): {}; client {} frame(s): {}",
        acp.agent.frames,
        side(&acp.agent),
        acp.client.frames,
        side(&acp.client)
    )
}
