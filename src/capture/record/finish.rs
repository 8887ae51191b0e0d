//! The end of a run: servers down, taps drained, the trailer's outcome
//! decided, and what the recorder says about a finished recording.

use std::path::Path;

use crate::capture::interrupt::{Interrupt, PARENT_GONE};
use crate::capture::isolation;
use crate::corpus::recording::{self, Outcome};

use super::{driver, leftovers, timeline};
use crate::capture::model_server::{AgentTools, ModelScript};

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
/// timeline, and the off-script requests seen; what the run is known not
/// to play before it starts, and whether the agent asks a model at all.
pub(super) struct RunSinks<'a> {
    pub(super) forwards: [Option<tokio::task::JoinHandle<()>>; 2],
    pub(super) tap: crate::capture::acp_client::Tap,
    pub(super) timeline: timeline::Timeline,
    pub(super) off_script: &'a std::sync::Mutex<Vec<String>>,
    pub(super) unplayed: Vec<String>,
    pub(super) asks_model: bool,
}

/// Servers down, their taps drained, then the trailer: a run that played
/// to its end but answered a model request off the script is `off_script`,
/// each such request named in the notes; one that left a scripted reply
/// unasked, or could not play the scenario's calls of the agent's own
/// tools, is `incomplete` (each named); one that got a signal after its
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
        mut unplayed,
        asks_model,
    } = sinks;
    if let Some(m) = model {
        let unasked = m.finish().await;
        // an agent that never asks a model leaves every reply unasked by design
        if asks_model {
            unplayed.extend(
                unasked.into_iter().map(|r| {
                    format!("incomplete: a scripted model reply was never asked for: {r}")
                }),
            );
        }
    }
    mcp.shutdown().await;
    for f in forwards.into_iter().flatten() {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), f).await;
    }
    leftovers::end_leftovers(&mut end).await;
    drop(tap);
    let off = std::mem::take(&mut *off_script.lock().unwrap_or_else(|e| e.into_inner()));
    end.outcome = settle(end.outcome, !off.is_empty(), !unplayed.is_empty());
    for note in &unplayed {
        eprintln!("[record] {note}");
    }
    end.notes.extend(off);
    end.notes.extend(unplayed);
    if end.outcome != Outcome::Interrupted
        && let Some(why) = why_not_commit(interrupt)
    {
        end.outcome = Outcome::Interrupted;
        end.notes.push(format!("{why} as the run ended"));
    }
    let finished = timeline.finish(end.outcome, end.exit, end.notes).await?;
    Ok((finished, end.outcome))
}

/// The trailer's outcome of a run that ended `ended`: a run that played to
/// its end is `off_script` when a request was, else `incomplete` when part
/// of its scenario was not played; any other ending stays as it is.
pub(super) fn settle(ended: Outcome, off_script: bool, incomplete: bool) -> Outcome {
    match ended {
        Outcome::Ok if off_script => Outcome::OffScript,
        Outcome::Ok if incomplete => Outcome::Incomplete,
        other => other,
    }
}

/// The scenario's agent-tool roles (`agent_tool = "shell"`) the profile
/// maps no tool for, each as a note: such a call reaches the agent under
/// the bare role name and exercises nothing of the agent's own.
pub(super) fn unmapped_roles(script: &ModelScript, agent_tools: &AgentTools) -> Vec<String> {
    script
        .agent_tool_roles()
        .into_iter()
        .filter(|role| !agent_tools.0.contains_key(*role))
        .map(|role| {
            format!(
                "incomplete: the scenario calls the agent's own `{role}` tool and the profile maps none ([model.agent_tools.{role}])"
            )
        })
        .collect()
}

/// The recording's ACP frames against the vendored schema, one line: what
/// its header's `acp_schema` says the recorder validated against. The
/// recording is read one event at a time.
pub(super) fn schema_check(path: &Path) -> String {
    use crate::judging::acp_schema::{AcpSchema, RecordingConformance, schema};
    // the schema of the revision the run negotiated
    let events = match recording::Reader::open(path) {
        Ok(events) => events,
        Err(e) => return format!("ACP schema: not checked: {e}"),
    };
    let protocol = events.header().protocol_version;
    let schema_name = schema::version_for(protocol);
    let checked = AcpSchema::for_protocol(protocol)
        .map_err(|e| e.to_string())
        .and_then(|s| RecordingConformance::of_events(s, events).map_err(|e| e.to_string()));
    let acp = match checked {
        Ok(acp) => acp,
        Err(e) => return format!("ACP schema {schema_name}: not checked: {e}"),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_played_to_its_end_is_ok_only_when_nothing_was_off_script_or_unplayed() {
        let cases = [
            (Outcome::Ok, false, false, Outcome::Ok),
            (Outcome::Ok, true, false, Outcome::OffScript),
            (Outcome::Ok, false, true, Outcome::Incomplete),
            (Outcome::Ok, true, true, Outcome::OffScript),
            (Outcome::Timeout, false, true, Outcome::Timeout),
            (Outcome::AgentCrashed, true, true, Outcome::AgentCrashed),
            (Outcome::Interrupted, false, true, Outcome::Interrupted),
        ];
        for (ended, off, incomplete, want) in cases {
            assert_eq!(
                settle(ended, off, incomplete),
                want,
                "{ended:?} off={off} incomplete={incomplete}"
            );
        }
    }
}
