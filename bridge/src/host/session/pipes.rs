//! The session's pipes: the tasks that read and write the panel's and the
//! agent's streams, and the channels the session's loop selects over.

use std::process::ExitStatus;

use process_group::tree::Tree;
use tokio::sync::mpsc;

use super::Event;
use crate::host::agent_process;
use crate::host::line_io::{Read, read_lines, write_lines, write_lines_blocking};
use crate::host::line_queue::{LineQueue, READ_BUDGET, ReadBudget, WRITE_BUDGET, line_queue};

/// The session's channels and the tasks behind them: readers of the panel's
/// stdin and the agent's stdout and stderr, and writers to the panel and the
/// agent (each reports a broken pipe as an [`Event`]).
pub(super) struct Pipes {
    pub(super) events_tx: mpsc::Sender<Event>,
    pub(super) events: mpsc::Receiver<Event>,
    pub(super) panel_lines: mpsc::Receiver<Read>,
    pub(super) agent_lines: mpsc::Receiver<Read>,
    pub(super) panel_tx: LineQueue,
    pub(super) agent_tx: LineQueue,
    pub(super) panel_writer: tokio::task::JoinHandle<()>,
    pub(super) exit_rx: tokio::sync::oneshot::Receiver<std::io::Result<ExitStatus>>,
    pub(super) tree: Tree,
}

impl Pipes {
    /// Starts the readers and writers; the panel's stdin is read only when
    /// the panel speaks (not in `-p` mode).
    pub(super) fn start(agent: agent_process::AgentProcess, cap: usize, read_panel: bool) -> Pipes {
        let (events_tx, events) = mpsc::channel::<Event>(64);
        let (panel_lines_tx, panel_lines) = mpsc::channel::<Read>(64);
        if read_panel {
            let budget = Some(ReadBudget::new(READ_BUDGET));
            tokio::spawn(read_lines(
                tokio::io::stdin(),
                cap,
                budget,
                panel_lines_tx,
                |r| r,
            ));
        }
        let (agent_lines_tx, agent_lines) = mpsc::channel::<Read>(64);
        let budget = Some(ReadBudget::new(READ_BUDGET));
        tokio::spawn(read_lines(agent.stdout, cap, budget, agent_lines_tx, |r| r));
        tokio::spawn(read_lines(
            agent.stderr,
            cap,
            Some(ReadBudget::new(READ_BUDGET)),
            events_tx.clone(),
            Event::AgentStderr,
        ));

        let (panel_tx, panel_rx) = line_queue(WRITE_BUDGET);
        let panel_writer = {
            let events_tx = events_tx.clone();
            // a thread of its own: a large line goes out while the core works on
            tokio::task::spawn_blocking(move || {
                if let Some(e) = write_lines_blocking(std::io::stdout(), panel_rx) {
                    let _ = events_tx.blocking_send(Event::PanelGone(e.to_string()));
                }
            })
        };
        let (agent_tx, agent_rx) = line_queue(WRITE_BUDGET);
        {
            let events_tx = events_tx.clone();
            let stdin = agent.stdin;
            tokio::spawn(async move {
                if let Some(e) = write_lines(stdin, agent_rx).await {
                    let _ = events_tx.send(Event::AgentStdinBroken(e.to_string())).await;
                }
            });
        }
        Pipes {
            events_tx,
            events,
            panel_lines,
            agent_lines,
            panel_tx,
            agent_tx,
            panel_writer,
            exit_rx: agent.exit,
            tree: agent.tree,
        }
    }
}
