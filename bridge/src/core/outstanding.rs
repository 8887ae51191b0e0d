//! The requests the bridge sent the agent and still waits on, and the
//! prompts it gave up on after an interrupt. The agent answers by id, so
//! one owner hands out the ids and matches the answers to what asked.

use std::time::Duration;

use crate::stream_json::RequestId;

use super::PermissionMode;

/// What a JSON-RPC request we sent is waiting for.
#[derive(Debug)]
pub(super) enum Pending {
    Initialize,
    NewSession {
        after_auth: bool,
    },
    LoadSession {
        after_auth: bool,
    },
    Authenticate {
        then_load: bool,
    },
    Prompt,
    /// A panel `set_permission_mode`, answered when the agent answers or
    /// at `due` ([`super::CONTROL_TIMEOUT`]), whichever comes first.
    PanelSetMode {
        request_id: RequestId,
        mode: PermissionMode,
        due: Duration,
    },
    /// A panel `set_model`, answered like [`Pending::PanelSetMode`].
    PanelSetModel {
        request_id: RequestId,
        model: String,
        due: Duration,
    },
    /// A panel request carried out as a config option change
    /// (`set_max_thinking_tokens`), answered like [`Pending::PanelSetMode`].
    PanelSetConfig {
        request_id: RequestId,
        due: Duration,
    },
    /// A mode change the panel asked for inside a permission answer
    /// (`updatedPermissions` `setMode`); nothing to answer, the mode is
    /// taken over when the agent agrees.
    PermissionSetMode {
        mode: PermissionMode,
    },
    /// A launch-spec mode/model change sent during the handshake.
    Startup {
        what: String,
    },
}

impl Pending {
    /// The panel `control_request` this request answers, and when the
    /// panel gets an error if the agent has not answered.
    pub(super) fn panel_request(&self) -> Option<(&RequestId, Duration)> {
        match self {
            Pending::PanelSetMode {
                request_id, due, ..
            }
            | Pending::PanelSetModel {
                request_id, due, ..
            }
            | Pending::PanelSetConfig { request_id, due } => Some((request_id, *due)),
            _ => None,
        }
    }

    /// The handshake request's method, for a request of the handshake.
    fn handshake_method(&self) -> Option<&'static str> {
        match self {
            Pending::Initialize => Some("initialize"),
            Pending::NewSession { .. } => Some("session/new"),
            Pending::LoadSession { .. } => Some("session/load"),
            Pending::Authenticate { .. } => Some("authenticate"),
            _ => None,
        }
    }
}

/// What an agent's answer with a given id answers.
pub(super) enum Answer {
    /// A prompt given up after an interrupt: its turn already ended.
    Late,
    Waiting(Pending),
    /// No request of ours has this id (or it was answered already).
    Unknown,
}

#[derive(Debug, Default)]
pub(super) struct Outstanding {
    next_id: u64,
    waiting: Vec<(u64, Pending)>,
    /// `session/prompt` requests given up after an interrupt: their answer
    /// and the session updates before it are late and dropped; new prompts
    /// wait until the agent has answered them.
    late_prompts: Vec<u64>,
}

impl Outstanding {
    /// The id for the next request, recorded as waiting for `pending`.
    pub(super) fn register(&mut self, pending: Pending) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.waiting.push((id, pending));
        id
    }

    /// Takes what the answer with `id` answers.
    pub(super) fn answer(&mut self, id: Option<u64>) -> Answer {
        let Some(id) = id else {
            return Answer::Unknown;
        };
        if let Some(pos) = self.late_prompts.iter().position(|l| *l == id) {
            self.late_prompts.remove(pos);
            return Answer::Late;
        }
        match self.waiting.iter().position(|(pid, _)| *pid == id) {
            Some(pos) => Answer::Waiting(self.waiting.remove(pos).1),
            None => Answer::Unknown,
        }
    }

    /// Whether the request with `id` is a prompt still waiting.
    pub(super) fn is_prompt(&self, id: u64) -> bool {
        (self.waiting.iter()).any(|(pid, p)| *pid == id && matches!(p, Pending::Prompt))
    }

    pub(super) fn prompt_running(&self) -> bool {
        (self.waiting.iter()).any(|(_, p)| matches!(p, Pending::Prompt))
    }

    /// Forgets the first prompt waiting, as its answer would; `false` when
    /// none waits.
    pub(super) fn take_prompt(&mut self) -> bool {
        let prompt = (self.waiting.iter()).position(|(_, p)| matches!(p, Pending::Prompt));
        prompt.map(|pos| self.waiting.remove(pos)).is_some()
    }

    /// A `session/load` is waiting: the agent replays history.
    pub(super) fn loading(&self) -> bool {
        (self.waiting.iter()).any(|(_, p)| matches!(p, Pending::LoadSession { .. }))
    }

    /// The agent still owes the answer to a prompt given up.
    pub(super) fn any_late(&self) -> bool {
        !self.late_prompts.is_empty()
    }

    /// The running prompts are given up: their answers become late.
    pub(super) fn give_up_prompts(&mut self) {
        let late = &mut self.late_prompts;
        self.waiting.retain(|(id, p)| {
            let prompt = matches!(p, Pending::Prompt);
            if prompt {
                late.push(*id);
            }
            !prompt
        });
    }

    /// The method of the handshake request waiting, if one is.
    pub(super) fn handshake_waiting(&self) -> Option<&'static str> {
        (self.waiting.iter()).find_map(|(_, p)| p.handshake_method())
    }

    /// Forgets the handshake's requests: the start failed.
    pub(super) fn drop_handshake(&mut self) {
        self.waiting.retain(|(_, p)| p.handshake_method().is_none());
    }

    /// When the earliest panel request waiting times out.
    pub(super) fn next_panel_due(&self) -> Option<Duration> {
        (self.waiting.iter())
            .filter_map(|(_, p)| p.panel_request().map(|(_, due)| due))
            .min()
    }

    /// Takes the panel requests due by `now`, oldest first: the agent did
    /// not answer them in time, and a later answer finds nothing waiting.
    pub(super) fn take_panel_due(&mut self, now: Duration) -> Vec<RequestId> {
        let (due, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|(_, p)| p.panel_request().is_some_and(|(_, due)| due <= now));
        self.waiting = keep;
        due.into_iter()
            .filter_map(|(_, p)| panel_request_id(p))
            .collect()
    }

    /// Forgets everything: the agent is gone. Returns the panel requests
    /// that still need an answer, oldest first.
    pub(super) fn end(&mut self) -> Vec<RequestId> {
        self.late_prompts.clear();
        (std::mem::take(&mut self.waiting).into_iter())
            .filter_map(|(_, p)| panel_request_id(p))
            .collect()
    }
}

fn panel_request_id(p: Pending) -> Option<RequestId> {
    match p {
        Pending::PanelSetMode { request_id, .. }
        | Pending::PanelSetModel { request_id, .. }
        | Pending::PanelSetConfig { request_id, .. } => Some(request_id),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panel(id: u64, due: u64) -> Pending {
        Pending::PanelSetConfig {
            request_id: RequestId::from(id),
            due: Duration::from_secs(due),
        }
    }

    #[test]
    fn a_given_up_prompt_is_answered_late_once_then_unknown() {
        let mut r = Outstanding::default();
        let prompt = r.register(Pending::Prompt);
        let init = r.register(Pending::Initialize);
        assert!(r.is_prompt(prompt) && !r.is_prompt(init));
        r.give_up_prompts();
        assert!(r.any_late() && !r.prompt_running());
        assert!(matches!(r.answer(Some(prompt)), Answer::Late));
        assert!(matches!(r.answer(Some(prompt)), Answer::Unknown));
        assert!(!r.any_late());
        assert!(matches!(
            r.answer(Some(init)),
            Answer::Waiting(Pending::Initialize)
        ));
        assert!(matches!(r.answer(None), Answer::Unknown));
    }

    #[test]
    fn panel_requests_time_out_in_order_and_are_answered_when_the_agent_goes() {
        let mut r = Outstanding::default();
        r.register(panel(1, 5));
        r.register(Pending::Prompt);
        r.register(panel(2, 3));
        r.register(panel(3, 9));
        assert_eq!(r.next_panel_due(), Some(Duration::from_secs(3)));
        let due: Vec<String> = (r.take_panel_due(Duration::from_secs(5)).iter())
            .map(ToString::to_string)
            .collect();
        assert_eq!(due, ["1", "2"]);
        assert!(r.prompt_running());
        let left: Vec<String> = r.end().iter().map(ToString::to_string).collect();
        assert_eq!(left, ["3"]);
        assert!(!r.prompt_running() && r.next_panel_due().is_none());
    }
}
