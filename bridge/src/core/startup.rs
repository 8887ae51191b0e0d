//! What the session's start holds while the handshake runs: the ACP
//! revision negotiation, when the agent must have answered the step in
//! flight, and what the panel sent meanwhile (its `initialize` requests,
//! answered once the session is up, and the lines handled then).

use std::time::Duration;

use serde_json::Value;

use super::HANDSHAKE_TIMEOUT;
use super::panel_initialize::InitializeAsk;
use crate::acp::revision::{Answered, Negotiation, Offer, Revision};
use crate::stream_json::RequestId;

#[derive(Debug, Default)]
pub(super) struct Startup {
    negotiation: Negotiation,
    /// When the agent must have answered the handshake step in flight.
    deadline: Option<Duration>,
    /// The panel's `initialize` requests (id and what each asked).
    panel_inits: Vec<(RequestId, InitializeAsk)>,
    /// Panel lines that arrived during the handshake, each with whether it
    /// is a prompt (`user` line).
    deferred: Vec<(String, bool)>,
}

/// What waited for the session, handed over when the handshake ends.
pub(super) struct Waited {
    pub panel_inits: Vec<(RequestId, InitializeAsk)>,
    pub deferred: Vec<String>,
}

impl Startup {
    /// The handshake starts at `now`, negotiating as `offer` says.
    pub(super) fn start(&mut self, offer: Offer, now: Duration) {
        self.negotiation = Negotiation::start(offer);
        self.step_sent(now);
    }

    /// A handshake step went out at `now`: the agent has
    /// [`HANDSHAKE_TIMEOUT`] to answer it.
    pub(super) fn step_sent(&mut self, now: Duration) {
        self.deadline = Some(now + HANDSHAKE_TIMEOUT);
    }

    /// When the step in flight times out.
    pub(super) fn deadline(&self) -> Option<Duration> {
        self.deadline
    }

    /// The revision the last `initialize` offered.
    pub(super) fn offered(&self) -> Revision {
        self.negotiation.offered()
    }

    /// The agent refused the offer: the next revision to offer, if any.
    pub(super) fn refused(&mut self) -> Option<Revision> {
        self.negotiation.refused()
    }

    /// What the agent's `initialize` answer selected.
    pub(super) fn answered(&self, result: &Value) -> Answered {
        self.negotiation.answered(result)
    }

    /// A panel `initialize` waits for the session.
    pub(super) fn wait_panel_init(&mut self, request_id: RequestId, ask: InitializeAsk) {
        self.panel_inits.push((request_id, ask));
    }

    /// A panel line waits for the session (`prompt`: a `user` line).
    pub(super) fn defer(&mut self, line: &str, prompt: bool) {
        self.deferred.push((line.to_string(), prompt));
    }

    pub(super) fn has_deferred(&self) -> bool {
        !self.deferred.is_empty()
    }

    /// A panel prompt waits for the session.
    pub(super) fn has_deferred_prompt(&self) -> bool {
        self.deferred.iter().any(|(_, prompt)| *prompt)
    }

    /// The handshake ended (the session is up, or it could not start):
    /// nothing times out, and what waited is handed over.
    pub(super) fn end(&mut self) -> Waited {
        self.deadline = None;
        Waited {
            panel_inits: std::mem::take(&mut self.panel_inits),
            deferred: (std::mem::take(&mut self.deferred).into_iter())
                .map(|(line, _)| line)
                .collect(),
        }
    }

    /// The agent is gone: nothing times out.
    pub(super) fn stop_waiting(&mut self) {
        self.deadline = None;
    }
}
