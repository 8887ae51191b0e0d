//! The panel driver: plays the GUI panel to the bridge from a scenario. It
//! sends the stream-json lines a panel sends (initialize, prompts, permission
//! answers, interrupts, steering, mode changes, a resume in a new process)
//! and decides when each step may go by watching what the bridge emits
//! (`can_use_tool` requests, `tool_use` blocks, text deltas, `result`).

use std::collections::VecDeque;

use serde_json::{Value, json};

use crate::corpus::scenario::call_ledger::CallLedger;
use crate::corpus::scenario::{Decision, Point, Prompt, Scenario, Step};

/// What the replayer should do next for the panel.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Feed these stream-json lines to the bridge, in order.
    Send(Vec<String>),
    /// The same, with a note for the transcript saying why.
    SendWithNote(Vec<String>, String),
    /// Restart: end the bridge and agent process, start a new bridge with
    /// `--resume` of this session id (if the panel learnt one).
    Resume { session_id: Option<String> },
    /// A step was skipped because its moment never came; say why.
    Skip(String),
    /// Nothing to send until the bridge emits what this describes.
    Wait {
        step: usize,
        step_kind: &'static str,
        waiting_for: String,
    },
    /// Every step ran and no turn is running.
    Finished,
}

/// A `can_use_tool` request the panel has not answered yet.
#[derive(Debug, Clone, PartialEq)]
struct PendingPermission {
    request_id: String,
    input: Value,
    suggestions: Option<Value>,
}

/// What the panel has seen of the running turn.
#[derive(Debug, Clone, Default, PartialEq)]
struct Turn {
    tool_uses: usize,
    permissions: usize,
    text_deltas: usize,
    /// The turn's tool calls by `tool_use` id: whether each asked and ran.
    calls: CallLedger,
}

/// The panel side of one replay.
pub struct PanelDriver<'a> {
    scenario: &'a Scenario,
    /// Index of the next step to run; `None` before initialize was sent.
    next_step: usize,
    /// The panel's control request counter (`req_1`, ...).
    requests: u32,
    /// Initialize must be (re)sent: at the start and after a resume.
    needs_initialize: bool,
    /// A control request whose response the panel waits for.
    awaiting: Option<String>,
    turn_running: bool,
    turn: Turn,
    pending: VecDeque<PendingPermission>,
    session_id: Option<String>,
    /// [`CallLedger::mark`] when the current step began.
    step_mark: usize,
    /// Notes of steps passed inside [`PanelDriver::poll_now`].
    notes: Vec<String>,
}

impl<'a> PanelDriver<'a> {
    pub fn new(scenario: &'a Scenario) -> PanelDriver<'a> {
        PanelDriver {
            scenario,
            next_step: 0,
            requests: 0,
            needs_initialize: true,
            awaiting: None,
            turn_running: false,
            turn: Turn::default(),
            pending: VecDeque::new(),
            session_id: None,
            step_mark: 0,
            notes: Vec::new(),
        }
    }

    /// The session id the panel learnt from `system/init` or `result`.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// 1-based number of the step being worked on, for messages.
    pub fn step_number(&self) -> usize {
        self.next_step + 1
    }

    fn request_id(&mut self) -> String {
        self.requests += 1;
        format!("req_{}", self.requests)
    }

    fn control_request(&mut self, request: Value) -> String {
        let id = self.request_id();
        json!({"type": "control_request", "request_id": id, "request": request}).to_string()
    }

    /// Takes note of one line the bridge emitted for the panel.
    pub fn observe(&mut self, line: &str) {
        if let Ok(v) = serde_json::from_str::<Value>(line) {
            self.observe_value(&v);
        }
    }

    /// [`PanelDriver::observe`] of a line already parsed.
    pub fn observe_value(&mut self, v: &Value) {
        let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
        match ty {
            "control_response" => {
                let id = v.pointer("/response/request_id").and_then(Value::as_str);
                if id.is_some() && id == self.awaiting.as_deref() {
                    self.awaiting = None;
                }
            }
            "control_request"
                if v.pointer("/request/subtype").and_then(Value::as_str)
                    == Some("can_use_tool") =>
            {
                self.turn.permissions += 1;
                if let Some(id) = v.pointer("/request/tool_use_id").and_then(Value::as_str) {
                    self.turn.calls.asked(id);
                }
                self.pending.push_back(PendingPermission {
                    request_id: v
                        .get("request_id")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    input: v
                        .pointer("/request/input")
                        .cloned()
                        .unwrap_or_else(|| json!({})),
                    suggestions: v.pointer("/request/permission_suggestions").cloned(),
                });
            }
            "control_cancel_request" => {
                let id = v.get("request_id").and_then(Value::as_str);
                self.pending.retain(|p| Some(p.request_id.as_str()) != id);
            }
            "system" if v.get("subtype").and_then(Value::as_str) == Some("init") => {
                self.learn_session(v);
            }
            "assistant" => {
                for block in blocks_of_type(v, "tool_use") {
                    self.turn.tool_uses += 1;
                    if let Some(id) = block.get("id").and_then(Value::as_str) {
                        self.turn.calls.seen(id);
                    }
                }
            }
            "user" => {
                for block in blocks_of_type(v, "tool_result") {
                    if let Some(id) = block.get("tool_use_id").and_then(Value::as_str) {
                        self.turn.calls.ran(id);
                    }
                }
            }
            "stream_event"
                if v.pointer("/event/delta/type").and_then(Value::as_str) == Some("text_delta") =>
            {
                self.turn.text_deltas += 1;
            }
            "result" => {
                self.learn_session(v);
                self.turn_running = false;
                // A permission request left open when the turn ended is moot.
                self.pending.clear();
            }
            _ => {}
        }
    }

    fn learn_session(&mut self, v: &Value) {
        if let Some(s) = v
            .get("session_id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            self.session_id = Some(s.to_string());
        }
    }

    fn reached(&self, at: Point) -> bool {
        match at {
            // Some agents ask permission before they report the call.
            // As the recorder: a tool call reported, not a permission request.
            Point::FirstToolCall => self.turn.tool_uses > 0,
            Point::Permission => self.turn.permissions > 0,
            Point::Chunks(n) => self.turn.text_deltas >= n as usize,
        }
    }

    fn wait(&self, waiting_for: impl Into<String>) -> Action {
        let step_kind = match self.scenario.steps.get(self.next_step) {
            Some(s) => s.kind(),
            None => "end",
        };
        Action::Wait {
            step: self.next_step + 1,
            step_kind,
            waiting_for: waiting_for.into(),
        }
    }

    /// A permission request no step will answer, while the panel waits for
    /// the turn to end: the panel denies it (the recorder answered such
    /// requests `cancelled`, which a panel cannot express; the difference
    /// shows as a divergence).
    fn deny_unanswered(&mut self, n: usize) -> Option<Action> {
        let p = self.pending.pop_front()?;
        Some(Action::SendWithNote(
            vec![permission_answer(&p, Decision::Deny, None)],
            format!("step {n}: a permission request no step answers; the panel denies it"),
        ))
    }

    /// What a panel does the moment its point comes, in the middle of a
    /// stream of agent frames: a steer. The recorder queues a steering prompt
    /// client-side until the running prompt returns (as the bridge does), so
    /// no recorded client frame marks its moment; waiting for the end of the
    /// released batch would let the turn end first and turn the steer into a
    /// new turn. Interrupts and permission answers do not need this: their
    /// recorded client frames end the batch where they were sent.
    /// A permission step whose call went ahead unasked is passed here too
    /// (its note kept for [`PanelDriver::take_notes`]), so a steer behind it
    /// still lands in the running turn.
    pub fn poll_now(&mut self) -> Option<Vec<String>> {
        if self.awaiting.is_some() || self.needs_initialize || !self.turn_running {
            return None;
        }
        if let Some(Step::Permission { .. }) = self.scenario.steps.get(self.next_step)
            && self.pending.is_empty()
            && let Some(call) = self.turn.calls.unasked_since(self.step_mark)
        {
            let n = self.next_step + 1;
            self.notes.push(format!(
                "step {n} (permission): tool call {call} ran without a permission request"
            ));
            self.next_step += 1;
            self.step_mark = self.turn.calls.mark();
        }
        match self.scenario.steps.get(self.next_step)? {
            Step::Steer { at, prompt } if self.reached(*at) => {
                let line = user_line(prompt);
                self.next_step += 1;
                Some(vec![line])
            }
            _ => None,
        }
    }

    /// Notes of steps passed since the last call, for the transcript.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// The next thing to do, given what the bridge has emitted so far.
    pub fn poll(&mut self) -> Action {
        if let Some(id) = &self.awaiting {
            return self.wait(format!("the control_response to {id}"));
        }
        let waits_for_idle = matches!(
            self.scenario.steps.get(self.next_step),
            None | Some(
                Step::Prompt(_) | Step::SetMode { .. } | Step::SetModel { .. } | Step::Resume
            )
        );
        if waits_for_idle
            && self.turn_running
            && !self.needs_initialize
            && let Some(action) = self.deny_unanswered(self.next_step + 1)
        {
            return action;
        }
        if self.needs_initialize {
            self.needs_initialize = false;
            let line = self.control_request(json!({"subtype": "initialize"}));
            self.awaiting = Some(format!("req_{}", self.requests));
            return Action::Send(vec![line]);
        }
        let Some(step) = self.scenario.steps.get(self.next_step).cloned() else {
            return if self.turn_running {
                self.wait("the result of the running turn")
            } else {
                Action::Finished
            };
        };
        let action = match self.step_action(&step, self.next_step + 1) {
            Ok(action) => action,
            // not yet: the step stays next
            Err(wait) => return wait,
        };
        self.next_step += 1;
        self.step_mark = self.turn.calls.mark();
        action
    }

    /// What step `n` does now, or (`Err`) what it waits for first.
    fn step_action(&mut self, step: &Step, n: usize) -> Result<Action, Action> {
        Ok(match step {
            Step::Prompt(prompt) => {
                if self.turn_running {
                    return Err(self.wait("the result of the previous turn"));
                }
                self.turn_running = true;
                self.turn = Turn::default();
                Action::Send(vec![user_line(prompt)])
            }
            Step::Permission {
                decision,
                updated_input,
                ..
            } => match self.pending.pop_front() {
                Some(p) => Action::Send(vec![permission_answer(
                    &p,
                    *decision,
                    updated_input.as_ref(),
                )]),
                None if !self.turn_running => Action::Skip(format!(
                    "step {n} (permission): the turn ended without a permission request"
                )),
                None => match self.turn.calls.unasked_since(self.step_mark) {
                    Some(call) => Action::Skip(format!(
                        "step {n} (permission): tool call {call} ran without a permission request"
                    )),
                    None => return Err(self.wait("a can_use_tool request")),
                },
            },
            Step::Interrupt { at } => {
                if self.reached(*at) {
                    Action::Send(vec![self.control_request(json!({"subtype": "interrupt"}))])
                } else if !self.turn_running {
                    Action::Skip(format!(
                        "step {n} (interrupt): the turn ended before {}",
                        describe(*at)
                    ))
                } else {
                    return Err(self.wait(describe(*at)));
                }
            }
            Step::Steer { at, prompt } => {
                if self.reached(*at) {
                    Action::Send(vec![user_line(prompt)])
                } else if !self.turn_running {
                    // Like the recorder: the message still goes, as a new turn.
                    self.turn_running = true;
                    self.turn = Turn::default();
                    Action::SendWithNote(
                        vec![user_line(prompt)],
                        format!(
                            "step {n} (steer): the turn ended before {}; sent as a new prompt",
                            describe(*at)
                        ),
                    )
                } else {
                    return Err(self.wait(describe(*at)));
                }
            }
            Step::SetMode { mode } => {
                if self.turn_running {
                    return Err(self.wait("the result of the running turn"));
                }
                let line =
                    self.control_request(json!({"subtype": "set_permission_mode", "mode": mode}));
                self.awaiting = Some(format!("req_{}", self.requests));
                Action::Send(vec![line])
            }
            Step::SetModel { model } => {
                if self.turn_running {
                    return Err(self.wait("the result of the running turn"));
                }
                let line = self.control_request(json!({"subtype": "set_model", "model": model}));
                self.awaiting = Some(format!("req_{}", self.requests));
                Action::Send(vec![line])
            }
            Step::Resume => {
                if self.turn_running {
                    return Err(self.wait("the result of the running turn"));
                }
                self.needs_initialize = true;
                self.pending.clear();
                Action::Resume {
                    session_id: self.session_id.clone(),
                }
            }
        })
    }

    /// The bridge emitted everything it will until the panel acts (in
    /// replay: the recorded agent waits for the client's next frame). A
    /// permission step waiting then has its evidence that no request is
    /// coming: it is skipped, as the recorder skipped it when the call went
    /// ahead unasked. Returns the note saying so; `None` when the current
    /// step is no such wait.
    pub fn on_bridge_quiet(&mut self) -> Option<String> {
        let waiting = self.awaiting.is_none()
            && !self.needs_initialize
            && self.turn_running
            && self.pending.is_empty()
            && matches!(
                self.scenario.steps.get(self.next_step),
                Some(Step::Permission { .. })
            );
        if !waiting {
            return None;
        }
        let n = self.next_step + 1;
        self.next_step += 1;
        self.step_mark = self.turn.calls.mark();
        Some(format!(
            "step {n} (permission): the agent went quiet without a permission request"
        ))
    }
}

/// The content blocks of type `ty` in a stream-json message line.
fn blocks_of_type<'v>(v: &'v Value, ty: &'v str) -> impl Iterator<Item = &'v Value> + 'v {
    v.pointer("/message/content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(move |b| b.get("type").and_then(Value::as_str) == Some(ty))
}

fn describe(at: Point) -> String {
    match at {
        Point::FirstToolCall => "the first tool call of the turn".to_string(),
        Point::Permission => "the first permission request of the turn".to_string(),
        Point::Chunks(n) => format!("{n} text delta(s) in the turn"),
    }
}

/// The `user` line a panel sends for a prompt: text first, then images.
pub fn user_line(prompt: &Prompt) -> String {
    let mut content = vec![json!({"type": "text", "text": prompt.text})];
    for img in &prompt.images {
        content.push(json!({
            "type": "image",
            "source": {"type": "base64", "media_type": img.media_type, "data": img.data_base64}
        }));
    }
    json!({
        "type": "user",
        "message": {"role": "user", "content": content},
        "parent_tool_use_id": null,
        "session_id": ""
    })
    .to_string()
}

/// The `control_response` a panel sends to answer `can_use_tool`; an
/// allowing one sends back `edited` as the input when given.
fn permission_answer(p: &PendingPermission, decision: Decision, edited: Option<&Value>) -> String {
    let input = edited.unwrap_or(&p.input);
    let response = match decision {
        Decision::Allow => json!({"behavior": "allow", "updatedInput": input}),
        Decision::AllowAlways => {
            // The panel's "always allow" sends back the suggestion it was offered.
            let rules = p.suggestions.clone().unwrap_or_else(|| json!([]));
            json!({"behavior": "allow", "updatedInput": input, "updatedPermissions": rules})
        }
        Decision::Deny => json!({"behavior": "deny", "message": "The user denied this tool call."}),
        Decision::Cancel => {
            json!({"behavior": "deny", "message": "The user denied this tool call and interrupted.", "interrupt": true})
        }
    };
    json!({
        "type": "control_response",
        "response": {"subtype": "success", "request_id": p.request_id, "response": response}
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::scenario;
    use std::path::Path;

    fn scenario(steps: &str) -> Scenario {
        let text =
            format!("name = \"t\"\nsummary = \"a test scenario\"\ntools = [\"uap_ping\"]\n{steps}");
        scenario::parse(Path::new("t.toml"), text.as_bytes()).expect("test scenario parses")
    }

    const PROMPT_AND_ALLOW: &str = r#"
[[step]]
panel = "prompt"
text = "Ping."
  [[step.model]]
  tool_calls = [{ tool = "uap_ping", arguments = {}, id = "c1" }]
  [[step.model]]
  text = "ok"
[[step]]
panel = "permission"
decision = "allow"
"#;

    fn sent(a: Action) -> Vec<Value> {
        match a {
            Action::Send(lines) => lines
                .iter()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
            other => panic!("expected Send, got {other:?}"),
        }
    }

    #[test]
    fn initialize_goes_first_and_the_prompt_waits_for_its_response() {
        let sc = scenario(PROMPT_AND_ALLOW);
        let mut d = PanelDriver::new(&sc);
        let init = sent(d.poll());
        assert_eq!(init[0]["request"]["subtype"], "initialize");
        assert!(matches!(d.poll(), Action::Wait { step: 1, .. }));
        d.observe(
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1"}}"#,
        );
        let user = sent(d.poll());
        assert_eq!(user[0]["message"]["content"][0]["text"], "Ping.");
    }

    #[test]
    fn a_permission_step_answers_the_pending_request_with_its_input() {
        let sc = scenario(PROMPT_AND_ALLOW);
        let mut d = PanelDriver::new(&sc);
        d.poll();
        d.observe(
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1"}}"#,
        );
        d.poll();
        assert!(matches!(
            d.poll(),
            Action::Wait {
                step: 2,
                step_kind: "permission",
                ..
            }
        ));
        d.observe(r#"{"type":"control_request","request_id":"acp-perm-1","request":{"subtype":"can_use_tool","tool_name":"X","input":{"a":1}}}"#);
        let answer = sent(d.poll());
        assert_eq!(answer[0]["response"]["request_id"], "acp-perm-1");
        assert_eq!(
            answer[0]["response"]["response"],
            json!({"behavior":"allow","updatedInput":{"a":1}})
        );
        assert!(
            matches!(d.poll(), Action::Wait { waiting_for, .. } if waiting_for.contains("result"))
        );
        d.observe(r#"{"type":"result","subtype":"success","session_id":"S"}"#);
        assert_eq!(d.poll(), Action::Finished);
        assert_eq!(d.session_id(), Some("S"));
    }

    fn initialized(sc: &Scenario) -> PanelDriver<'_> {
        let mut d = PanelDriver::new(sc);
        d.poll();
        d.observe(
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1"}}"#,
        );
        d
    }

    #[test]
    fn a_permission_request_no_step_answers_is_denied_before_the_turn_may_end() {
        let sc = scenario(
            "[[step]]\npanel = \"prompt\"\ntext = \"Hi.\"\n  [[step.model]]\n  text = \"x\"\n",
        );
        let mut d = initialized(&sc);
        sent(d.poll());
        d.observe(r#"{"type":"control_request","request_id":"acp-perm-1","request":{"subtype":"can_use_tool","tool_name":"X","input":{}}}"#);
        match d.poll() {
            Action::SendWithNote(lines, note) => {
                let v: Value = serde_json::from_str(&lines[0]).unwrap();
                assert_eq!(v["response"]["response"]["behavior"], "deny");
                assert!(note.contains("no step answers"), "{note}");
            }
            other => panic!("expected a denial, got {other:?}"),
        }
    }

    #[test]
    fn a_steer_whose_point_never_came_is_sent_as_a_new_prompt() {
        let sc = scenario(
            "[[step]]\npanel = \"prompt\"\ntext = \"First.\"\n  [[step.model]]\n  text = \"x\"\n[[step]]\npanel = \"steer\"\nat = \"first_tool_call\"\ntext = \"Second.\"\n  [[step.model]]\n  text = \"y\"\n",
        );
        let mut d = initialized(&sc);
        sent(d.poll());
        assert!(matches!(
            d.poll(),
            Action::Wait {
                step: 2,
                step_kind: "steer",
                ..
            }
        ));
        d.observe(r#"{"type":"result","subtype":"success"}"#);
        assert!(
            matches!(d.poll(), Action::SendWithNote(_, note) if note.contains("sent as a new prompt"))
        );
        assert!(
            matches!(d.poll(), Action::Wait { waiting_for, .. } if waiting_for.contains("result"))
        );
    }

    #[test]
    fn a_steer_goes_the_moment_its_point_comes_while_the_turn_runs() {
        let sc = scenario(
            "[[step]]\npanel = \"prompt\"\ntext = \"First.\"\n  [[step.model]]\n  text = \"x\"\n[[step]]\npanel = \"steer\"\nat = \"chunks:1\"\ntext = \"Second.\"\n  [[step.model]]\n  text = \"y\"\n",
        );
        let mut d = initialized(&sc);
        sent(d.poll());
        assert_eq!(d.poll_now(), None, "no chunk yet");
        d.observe(r#"{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}}"#);
        let lines = d.poll_now().expect("the steer goes at once");
        assert!(lines[0].contains("Second."));
        assert_eq!(d.poll_now(), None, "only once");
        assert!(
            matches!(d.poll(), Action::Wait { waiting_for, .. } if waiting_for.contains("result"))
        );
    }

    #[test]
    fn a_permission_step_is_skipped_when_the_turn_ends_without_a_request() {
        let sc = scenario(PROMPT_AND_ALLOW);
        let mut d = PanelDriver::new(&sc);
        d.poll();
        d.observe(
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1"}}"#,
        );
        d.poll();
        d.observe(r#"{"type":"result","subtype":"success"}"#);
        assert!(matches!(d.poll(), Action::Skip(_)));
        assert_eq!(d.poll(), Action::Finished);
    }
}
