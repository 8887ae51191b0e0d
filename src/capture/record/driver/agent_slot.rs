//! The agent process a recording client talks to, one after another over
//! a run.

use tokio::sync::mpsc::UnboundedReceiver;

use super::{Halt, RunEnd};
use crate::capture::acp_client::{AgentProcess, Incoming, Tap, Tapped};
use crate::corpus::profile::{Launch, Stop};
use crate::corpus::recording::{Dir, Exit, Leg};

/// The agent process a recording client talks to now (numbered from 1 per
/// run; a resume or reload starts the next one) with the run's harness notes
/// and the last process's exit. Both recording clients (ACP and stream-json)
/// start, note and end their processes through it, so their runs end alike.
pub(in crate::capture::record) struct AgentSlot {
    tap: Tap,
    stop: Stop,
    process: Option<AgentProcess>,
    /// The current process's output; `None` once it closed.
    pub(in crate::capture::record) rx: Option<UnboundedReceiver<Incoming>>,
    /// The current process's number (0 before the first).
    pub(in crate::capture::record) proc: u32,
    notes: Vec<String>,
    last_exit: Exit,
}

impl AgentSlot {
    pub(in crate::capture::record) fn new(tap: Tap, stop: Stop) -> Self {
        AgentSlot {
            tap,
            stop,
            process: None,
            rx: None,
            proc: 0,
            notes: Vec::new(),
            last_exit: Exit::default(),
        }
    }

    /// A harness note: printed for whoever watches the run, tapped onto the
    /// timeline, and kept for the header's notes.
    pub(in crate::capture::record) fn note(&mut self, text: String) {
        eprintln!("[record] {text}");
        let _ = self.tap.send(note_event(self.proc, text.clone()));
        self.notes.push(text);
    }

    /// The current process, or why there is none.
    pub(in crate::capture::record) fn agent(&mut self) -> Result<&mut AgentProcess, Halt> {
        self.process
            .as_mut()
            .ok_or_else(|| Halt::AgentClosed("no agent process".into()))
    }

    /// Starts the next process of `launch` with `args` in `workspace`, its
    /// traffic tapped to `tap`; a process after the first is noted.
    pub(in crate::capture::record) fn start(
        &mut self,
        launch: &Launch,
        args: &[String],
        workspace: &str,
        tap: Tap,
    ) -> anyhow::Result<()> {
        self.proc += 1;
        if self.proc > 1 {
            self.note(format!("agent process {} started", self.proc));
        }
        let (agent, rx) = AgentProcess::spawn(
            self.proc,
            &launch.program,
            args,
            &launch.env,
            std::path::Path::new(workspace),
            tap,
        )?;
        self.process = Some(agent);
        self.rx = Some(rx);
        Ok(())
    }

    /// Ends the current process the profile's way; what the stop had to
    /// do (signals, a kill) becomes notes.
    pub(in crate::capture::record) async fn end(&mut self) {
        if let Some(agent) = self.process.take() {
            let (exit, notes) = agent.stop(self.stop).await;
            for n in notes {
                self.note(n);
            }
            self.last_exit = exit;
        }
        self.rx = None;
    }

    /// Ends the run that played to `result`: notes why it stopped early,
    /// ends the process, and hands over what the run came to.
    pub(in crate::capture::record) async fn finish(&mut self, result: Result<(), Halt>) -> RunEnd {
        let (outcome, why) = Halt::outcome(result);
        if let Some(why) = why {
            self.note(why);
        }
        self.end().await;
        RunEnd {
            outcome,
            exit: std::mem::take(&mut self.last_exit),
            notes: std::mem::take(&mut self.notes),
        }
    }
}

pub(super) fn note_event(proc: u32, raw: String) -> Tapped {
    Tapped {
        leg: Leg::Harness,
        dir: Dir::Note,
        proc,
        raw,
        http: None,
    }
}
