//! The scenario driver: plays the panel's steps against a live agent over
//! the minimal ACP client, with the bridge's own frame builders and order
//! rules (interrupt = `session/cancel` then each pending permission answered
//! `cancelled`; deny + interrupt = reject option then `session/cancel`; a
//! prompt sent while one runs is queued until the running prompt returns).
//!
//! Every wait has a deadline; a wait that expires, an agent that exits, or an
//! agent that stops answering ends the run with an outcome instead of hanging.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use acp_bridge::McpEndpoint;
use acp_bridge::acp::client::{self as frames, PermissionIntent, PromptImage};
use acp_bridge::acp::revision::{self, Revision};
use acp_bridge::acp::update_kind::{ChunkKind, UpdateKind};
use serde_json::Value;
use tokio::time::Instant;

use crate::capture::acp_client::{AgentProcess, Incoming, Tap};
use crate::capture::interrupt::Interrupt;
use crate::corpus::profile::{Launch, Ready, Stop};
use crate::corpus::recording::{Exit, Outcome};
use crate::corpus::scenario::call_ledger::CallLedger;
use crate::corpus::scenario::{Decision, Point, Prompt, Scenario, Step};

/// How long a step may wait for a permission request or a point in the turn.
const STEP_TIMEOUT: Duration = Duration::from_secs(90);
/// How long a turn may take to finish.
const TURN_TIMEOUT: Duration = Duration::from_secs(150);

mod agent_slot;
mod negotiation;
mod ready;

pub(super) use agent_slot::AgentSlot;
use agent_slot::note_event;

/// What woke a pump.
enum Wake {
    Agent(Option<Incoming>),
    ToolCall,
    Mcp,
}

/// Why the driver stopped early.
#[derive(Debug)]
pub enum Halt {
    Timeout(String),
    AgentClosed(String),
    Error(anyhow::Error),
    /// SIGINT or SIGTERM (named) asked the run to end.
    Interrupted(&'static str),
}

impl From<anyhow::Error> for Halt {
    fn from(e: anyhow::Error) -> Self {
        Halt::Error(e)
    }
}

impl Halt {
    /// The outcome a run that played to `result` records, with the note
    /// saying why it stopped early. Both recording clients (ACP and
    /// stream-json) end their runs through here so their outcomes agree.
    fn outcome(result: Result<(), Halt>) -> (Outcome, Option<String>) {
        match result {
            Ok(()) => (Outcome::Ok, None),
            Err(Halt::Timeout(what)) => (Outcome::Timeout, Some(format!("timeout: {what}"))),
            Err(Halt::AgentClosed(what)) => (
                Outcome::AgentCrashed,
                Some(format!("agent closed its output: {what}")),
            ),
            Err(Halt::Error(e)) => (Outcome::Error, Some(format!("error: {e:#}"))),
            Err(Halt::Interrupted(signal)) => (
                Outcome::Interrupted,
                Some(format!(
                    "interrupted: {}",
                    crate::capture::interrupt::describe(signal)
                )),
            ),
        }
    }
}

/// What one run came to.
pub struct RunEnd {
    pub outcome: Outcome,
    pub exit: Exit,
    pub notes: Vec<String>,
}

/// What the driver needs to start and talk to agent processes.
pub struct Setup<'a> {
    pub launch: &'a Launch,
    pub stop: Stop,
    pub ready: &'a Ready,
    pub workspace: String,
    pub mcp: McpEndpoint,
    /// The profile's `[session]`: what the client does beyond what the
    /// agent advertises, as the bridge's launch flags do it.
    pub session: &'a crate::corpus::profile::SessionSetup,
    /// The protocol revision `initialize` offers (`record --acp-protocol`).
    pub offer: Revision,
    pub live: bool,
    pub tap: Tap,
    /// Running count of `tools/call` requests stub-mcp received: a tool is
    /// really running once its call reached the server.
    pub mcp_calls: tokio::sync::watch::Receiver<u64>,
    /// Requests per MCP method stub-mcp received (for `[[ready.wait]]`
    /// `mcp_request` and the no-MCP-server note).
    pub mcp_methods: tokio::sync::watch::Receiver<super::http_legs::McpMethods>,
    /// The `[ready]` conditions for this agent version: after session/new, after session/load.
    pub ready_conditions: [Vec<crate::corpus::profile::readiness::Condition>; 2],
    /// Called once with the first initialize result (fills the header).
    pub on_initialized: Box<dyn FnMut(&Value) + Send + 'a>,
}

#[derive(Default)]
struct TurnPoints {
    /// The agent reported a tool call in this turn.
    tool_call: bool,
    /// A tool call of this turn finished (completed or failed).
    tool_done: bool,
    /// `tools/call` requests stub-mcp had seen when the turn started.
    mcp_calls_at_start: u64,
    permission: bool,
    chunks: u32,
    /// The turn's tool calls: whether each asked and ran.
    calls: CallLedger,
    /// v2: the agent reported the turn's foreground state.
    started: bool,
}

struct Driver<'a> {
    setup: Setup<'a>,
    slot: AgentSlot,
    /// What the agent's `initialize` answer advertised.
    agent: frames::AgentCapabilities,
    session_result: Value,
    session_id: String,
    responses: HashMap<u64, Value>,
    running: Option<u64>,
    /// The revision the agent selected in `initialize`.
    revision: Revision,
    /// v2: the running prompt was answered (`{messageId}`), and whether its
    /// `state_update` `idle` came already; the turn ends when both have.
    prompt_answered: bool,
    idle_seen: bool,
    queued: VecDeque<Vec<frames::ContentBlock>>,
    permissions: VecDeque<(frames::RequestId, Value)>,
    turn: TurnPoints,
    sent_first_prompt: bool,
    /// The scenario's system prompt, as the replayer launches the bridge
    /// with it (`--system-prompt`).
    system_prompt: Option<String>,
    /// Methods of the notifications this agent process sent (for `[ready]`).
    notifications_seen: std::collections::HashSet<String>,
    /// Kinds of the `session/update`s this agent process sent (for `[ready]`).
    updates_seen: std::collections::HashSet<String>,
    /// stub-mcp's request counts when this agent process started.
    mcp_at_start: super::http_legs::McpMethods,
    /// Client methods the agent called that this client did not declare
    /// (noted once each).
    undeclared_seen: std::collections::HashSet<String>,
}

/// Runs `scenario` to its end (or until something halts it, `interrupt`
/// included) and ends the agent.
pub async fn run(scenario: &Scenario, setup: Setup<'_>, mut interrupt: Interrupt) -> RunEnd {
    let slot = AgentSlot::new(setup.tap.clone(), setup.stop);
    let mut d = Driver {
        setup,
        slot,
        agent: frames::AgentCapabilities::default(),
        session_result: Value::Null,
        session_id: String::new(),
        responses: HashMap::new(),
        running: None,
        revision: Revision::V1,
        prompt_answered: false,
        idle_seen: false,
        queued: VecDeque::new(),
        permissions: VecDeque::new(),
        turn: TurnPoints::default(),
        sent_first_prompt: false,
        system_prompt: scenario.system_prompt.clone(),
        notifications_seen: Default::default(),
        updates_seen: Default::default(),
        mcp_at_start: Default::default(),
        undeclared_seen: Default::default(),
    };
    let result = tokio::select! {
        r = d.play(scenario) => r,
        signal = interrupt.wait() => Err(Halt::Interrupted(signal)),
    };
    if !d.setup.live && d.setup.mcp_methods.borrow().is_empty() {
        d.note(
            "stub-mcp received no request: the agent never connected to the unity-ops MCP server it was given".into(),
        );
    }
    d.slot.finish(result).await
}

/// The client capabilities `initialize` declared under `revision` (v1's
/// `clientCapabilities`, v2's `capabilities`), for a note on a method the
/// agent called anyway and for the header.
pub(super) fn declared_capabilities(revision: Revision) -> Value {
    let (_, declared) = frames::declared_capabilities(revision);
    serde_json::to_value(declared).unwrap_or_default()
}

impl Driver<'_> {
    fn note(&mut self, text: String) {
        self.slot.note(text);
    }

    async fn play(&mut self, scenario: &Scenario) -> Result<(), Halt> {
        self.start_process(false).await?;
        // What the bridge prepends to the first prompt: the system prompt
        // unless the session call carried it, and the gate's steering text.
        let custom = frames::first_prompt_instructions(
            self.system_prompt
                .as_deref()
                .filter(|_| self.session_system_prompt().is_none()),
            scenario.script_gate,
        );
        for (index, step) in scenario.steps.iter().enumerate() {
            let n = index + 1;
            match step {
                Step::Prompt(p) => {
                    self.wait_idle(&format!("step {n}: previous turn to finish"))
                        .await?;
                    let blocks = self.prompt_blocks(p, custom.as_deref());
                    self.send_prompt(blocks).await?;
                }
                Step::Permission {
                    decision,
                    option_id,
                    ..
                } => {
                    let mark = self.turn.calls.mark();
                    self.wait_until(
                        STEP_TIMEOUT,
                        &format!("step {n}: a permission request"),
                        |d| {
                            !d.permissions.is_empty()
                                || d.idle()
                                || d.turn.calls.unasked_since(mark).is_some()
                        },
                    )
                    .await?;
                    if self.permissions.is_empty() {
                        let why = match self.turn.calls.unasked_since(mark) {
                            Some(call) => format!("tool call {call} ran without one"),
                            None => "the turn ended without one".to_string(),
                        };
                        self.note(format!(
                            "step {n}: no permission request is coming ({why}); decision {decision} not used"
                        ));
                        continue;
                    }
                    self.answer_permission(*decision, option_id.as_deref())
                        .await?;
                }
                Step::Interrupt { at } => {
                    if !self.wait_point(*at, n).await? {
                        continue;
                    }
                    self.setup
                        .tap
                        .send(note_event(self.slot.proc, format!("step {n}: interrupt")))
                        .ok();
                    self.interrupt().await?;
                }
                Step::Steer { at, prompt } => {
                    self.wait_point(*at, n).await?;
                    let blocks = self.prompt_blocks(prompt, custom.as_deref());
                    self.send_prompt(blocks).await?;
                }
                Step::SetModel { .. } => {} // imported scenarios only: never recorded
                Step::SetMode { mode } => {
                    self.wait_idle(&format!("step {n}: turn to finish before set_mode"))
                        .await?;
                    match frames::resolve_permission_mode(
                        mode,
                        &frames::SessionState::read(&self.session_result),
                    ) {
                        None => self.note(format!(
                            "step {n}: the agent advertises no mode matching `{mode}`; nothing sent"
                        )),
                        Some(change) => {
                            let request = frames::mode_change_request(&self.session_id, &change);
                            let method = request.method(self.revision);
                            let response =
                                self.call(request, &format!("step {n}: {method}")).await?;
                            if let Some(err) = response.get("error") {
                                self.note(format!("step {n}: {method} failed: {err}"));
                            }
                        }
                    }
                }
                Step::Resume => {
                    self.wait_idle(&format!("step {n}: turn to finish before resume"))
                        .await?;
                    self.end_process().await;
                    if self.setup.ready.resume_in_new_minute {
                        self.wait_for_new_minute(n).await;
                    }
                    self.start_process(true).await?;
                }
            }
        }
        self.wait_idle("the last turn to finish").await?;
        Ok(())
    }

    fn idle(&self) -> bool {
        self.running.is_none() && self.queued.is_empty()
    }

    /// The session call's `systemPrompt`, as the bridge builds it.
    fn session_system_prompt(&self) -> Option<frames::SystemPrompt> {
        frames::session_system_prompt(self.system_prompt.as_deref(), None, &self.agent)
    }

    fn prompt_blocks(&mut self, p: &Prompt, custom: Option<&str>) -> Vec<frames::ContentBlock> {
        let text = if self.setup.live { &p.live } else { &p.text };
        let images: Vec<PromptImage> = p
            .images
            .iter()
            .map(|i| PromptImage {
                media_type: i.media_type.clone(),
                data_base64: i.data_base64.clone(),
            })
            .collect();
        let custom = if self.sent_first_prompt { None } else { custom };
        self.sent_first_prompt = true;
        frames::prompt_blocks(text, &images, custom, &self.agent)
    }

    /// Sends now when no prompt runs, else queues it (the bridge's rule).
    async fn send_prompt(&mut self, blocks: Vec<frames::ContentBlock>) -> Result<(), Halt> {
        if self.running.is_some() {
            self.queued.push_back(blocks);
            return Ok(());
        }
        self.dispatch(blocks).await
    }

    async fn dispatch(&mut self, prompt: Vec<frames::ContentBlock>) -> Result<(), Halt> {
        let request = frames::Request::Prompt {
            session_id: self.session_id.clone(),
            prompt,
        };
        let revision = self.revision;
        let id = self.agent()?.request(&request, revision).await?;
        self.running = Some(id);
        self.prompt_answered = false;
        self.idle_seen = false;
        self.turn = TurnPoints {
            mcp_calls_at_start: *self.setup.mcp_calls.borrow(),
            ..TurnPoints::default()
        };
        Ok(())
    }

    fn agent(&mut self) -> Result<&mut AgentProcess, Halt> {
        self.slot.agent()
    }

    async fn answer_permission(
        &mut self,
        decision: Decision,
        option_id: Option<&str>,
    ) -> Result<(), Halt> {
        let Some((id, options)) = self.permissions.pop_front() else {
            return Ok(());
        };
        let intent = match decision {
            Decision::Allow => PermissionIntent::AllowOnce,
            Decision::AllowAlways => PermissionIntent::AllowAlways,
            Decision::Deny | Decision::Cancel => PermissionIntent::Deny,
        };
        let chosen = match option_id {
            Some(o) => Some(o.to_string()),
            None => frames::choose_permission_option(
                &frames::PermissionOption::read_all(&options),
                intent,
            ),
        };
        let result = match &chosen {
            Some(o) => frames::PermissionAnswer::selected(o),
            None => {
                self.note(format!(
                    "no option fits {decision} among {options}; answered cancelled"
                ));
                frames::PermissionAnswer::cancelled()
            }
        };
        self.agent()?
            .send(frames::result_line(&id, &result))
            .await?;
        if decision == Decision::Cancel {
            self.cancel().await?;
        }
        Ok(())
    }

    /// Sleeps into the next wall-clock minute (the profile's
    /// `resume_in_new_minute`): Gemini CLI names its session file by the
    /// minute and the session id, so a process that loads the session in the
    /// minute it was created reopens that file as a fresh one and finds no
    /// history. At most 60 s.
    async fn wait_for_new_minute(&mut self, n: usize) {
        let since_epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let into_minute = since_epoch.as_millis() % 60_000;
        let wait = Duration::from_millis((60_000 - into_minute) as u64 + 500);
        let _ = self.setup.tap.send(note_event(
            self.slot.proc,
            format!("step {n}: waiting for a new wall-clock minute before session/load (profile: resume_in_new_minute)"),
        ));
        tokio::time::sleep(wait).await;
    }

    async fn cancel(&mut self) -> Result<(), Halt> {
        let cancel = frames::Notification::Cancel {
            session_id: self.session_id.clone(),
        };
        Ok(self.agent()?.notify(&cancel).await?)
    }

    /// Answers a permission request `cancelled`.
    async fn cancel_permission(&mut self, id: &frames::RequestId) -> Result<(), Halt> {
        let answer = frames::result_line(id, &frames::PermissionAnswer::cancelled());
        Ok(self.agent()?.send(answer).await?)
    }

    async fn interrupt(&mut self) -> Result<(), Halt> {
        self.cancel().await?;
        while let Some((id, _)) = self.permissions.pop_front() {
            self.cancel_permission(&id).await?;
        }
        Ok(())
    }

    /// Waits for `at` in the running turn; false (with a note) when the turn
    /// ended first.
    async fn wait_point(&mut self, at: Point, n: usize) -> Result<bool, Halt> {
        let reached = |d: &Driver| match at {
            // "During the first tool call": reported by the agent and either
            // running at stub-mcp or already over. A call still waiting for
            // its permission answer, or approved but not yet dispatched, is
            // not running yet.
            Point::FirstToolCall => {
                d.turn.tool_call
                    && d.permissions.is_empty()
                    && (d.turn.tool_done || *d.setup.mcp_calls.borrow() > d.turn.mcp_calls_at_start)
            }
            Point::Permission => d.turn.permission,
            Point::Chunks(c) => d.turn.chunks >= c,
        };
        self.wait_until(
            STEP_TIMEOUT,
            &format!("step {n}: {at} in the running turn"),
            |d| reached(d) || d.running.is_none(),
        )
        .await?;
        if reached(self) {
            Ok(true)
        } else {
            self.note(format!("step {n}: the turn ended before {at}"));
            Ok(false)
        }
    }

    /// Waits for no running or queued prompt. A permission request no step
    /// will answer is answered `cancelled` (with a note) so the turn can end.
    async fn wait_idle(&mut self, what: &str) -> Result<(), Halt> {
        loop {
            self.wait_until(TURN_TIMEOUT, what, |d| {
                d.idle() || !d.permissions.is_empty()
            })
            .await?;
            if self.idle() {
                return Ok(());
            }
            while let Some((id, _)) = self.permissions.pop_front() {
                self.note(format!(
                    "a permission request no scenario step answers; answered cancelled ({what})"
                ));
                self.cancel_permission(&id).await?;
            }
        }
    }

    async fn wait_until(
        &mut self,
        timeout: Duration,
        what: &str,
        done: impl Fn(&Driver) -> bool,
    ) -> Result<(), Halt> {
        let deadline = Instant::now() + timeout;
        while !done(self) {
            self.pump(deadline, what).await?;
        }
        Ok(())
    }

    /// Handles one line from the agent (or fails at the deadline).
    async fn pump(&mut self, deadline: Instant, what: &str) -> Result<(), Halt> {
        let rx = self
            .slot
            .rx
            .as_mut()
            .ok_or_else(|| Halt::AgentClosed("no agent process".into()))?;
        let mcp_calls = &mut self.setup.mcp_calls;
        let mcp_methods = &mut self.setup.mcp_methods;
        let received = tokio::time::timeout_at(deadline, async {
            tokio::select! {
                incoming = rx.recv() => Wake::Agent(incoming),
                // A tool call reached stub-mcp: let the caller re-check its condition.
                Ok(()) = mcp_calls.changed() => Wake::ToolCall,
                Ok(()) = mcp_methods.changed() => Wake::Mcp,
            }
        })
        .await;
        let incoming = match received {
            Err(_) => return Err(Halt::Timeout(format!("waited {what}"))),
            Ok(Wake::ToolCall) => {
                // Mark the new count seen, or `changed()` would fire at once again.
                self.setup.mcp_calls.borrow_and_update();
                self.turn.calls.unasked_ran();
                return Ok(());
            }
            Ok(Wake::Mcp) => {
                self.setup.mcp_methods.borrow_and_update();
                return Ok(());
            }
            Ok(Wake::Agent(None)) | Ok(Wake::Agent(Some(Incoming::Closed))) => {
                self.slot.rx = None;
                return Err(Halt::AgentClosed(format!("while waiting for {what}")));
            }
            Ok(Wake::Agent(Some(i))) => i,
        };
        match incoming {
            Incoming::Garbage(line) => {
                let shown: String = line.chars().take(120).collect();
                self.note(format!(
                    "agent printed a line that is not a JSON object: {shown}"
                ));
            }
            Incoming::Frame(frame) => self.handle(frame).await?,
            Incoming::Closed => {}
        }
        Ok(())
    }

    async fn handle(&mut self, frame: Value) -> Result<(), Halt> {
        let method = frame
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_string);
        let id = frame.get("id").cloned();
        match (method, id) {
            (Some(method), Some(id)) => {
                if method == "session/request_permission" {
                    // kept as sent, for a note when no option fits
                    let options = Value::Array(
                        frame["params"]["options"]
                            .as_array()
                            .cloned()
                            .unwrap_or_default(),
                    );
                    self.turn.permission = true;
                    self.turn.started = true;
                    // Agents that ask first (Gemini CLI) announce the call
                    // only in the request: that is their first tool call.
                    // v1 names it `toolCall`, v2 a `subject` of type `tool_call`
                    let subject = &frame["params"]["subject"];
                    let call = match frame["params"].get("toolCall") {
                        Some(call) => Some(call),
                        None => (subject["type"] == "tool_call").then_some(&subject["toolCall"]),
                    };
                    if let Some(call) = call {
                        self.turn.tool_call = true;
                        if let Some(call) = call["toolCallId"].as_str() {
                            self.turn.calls.asked(call);
                        }
                    }
                    self.permissions.push_back((id.into(), options));
                } else {
                    // We declared no fs and no terminal: refuse anything else.
                    if self.undeclared_seen.insert(method.clone()) {
                        self.note(format!(
                            "the agent called {method}, a method this client did not declare (clientCapabilities {}); answered -32601",
                            declared_capabilities(self.revision)
                        ));
                    }
                    let answer = frames::method_not_found(&id.into(), &method);
                    self.agent()?.send(answer).await?;
                }
            }
            (Some(method), None) => {
                self.notifications_seen.insert(method.clone());
                if let Some(kind) = frame["params"]["update"]["sessionUpdate"].as_str() {
                    self.updates_seen.insert(kind.to_owned());
                }
                if method == "session/update"
                    && revision::is_idle_update(&frame["params"]["update"])
                {
                    self.idle_seen = true;
                    if self.prompt_answered {
                        self.turn_ended().await?;
                    }
                }
                if method == "session/update" {
                    let kind = frame["params"]["update"]["sessionUpdate"]
                        .as_str()
                        .unwrap_or_default();
                    match UpdateKind::parse(kind) {
                        UpdateKind::Chunk(ChunkKind::Message) => {
                            self.turn.chunks += 1;
                            self.turn.started = true;
                        }
                        UpdateKind::State => self.turn.started = true,
                        // v2 reports the turn's foreground work begun
                        // (`running`); a call it reports before that (an MCP
                        // server's startup) is not one of the turn's
                        UpdateKind::Call(_)
                            if self.revision == Revision::V2 && !self.turn.started => {}
                        UpdateKind::Call(_) => {
                            self.turn.tool_call = true;
                            let update = &frame["params"]["update"];
                            let call = update["toolCallId"].as_str();
                            if let Some(call) = call {
                                self.turn.calls.seen(call);
                            }
                            let status = update["status"].as_str();
                            if matches!(status, Some("completed") | Some("failed")) {
                                self.turn.tool_done = true;
                                if let Some(call) = call {
                                    self.turn.calls.ran(call);
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            (None, Some(id)) => {
                let Some(id) = id.as_u64() else {
                    return Ok(());
                };
                let refused = frame.get("error").is_some();
                self.responses.insert(id, frame);
                if self.running == Some(id) {
                    // v1 ends the turn with the answer; v2 answers at once
                    // and ends it with `state_update` `idle` (a refused
                    // prompt starts no turn)
                    self.prompt_answered = true;
                    if self.revision == Revision::V1 || refused || self.idle_seen {
                        self.turn_ended().await?;
                    }
                }
            }
            (None, None) => {}
        }
        Ok(())
    }

    /// The running turn is over: the next queued prompt goes.
    async fn turn_ended(&mut self) -> Result<(), Halt> {
        self.running = None;
        if let Some(next) = self.queued.pop_front() {
            self.dispatch(next).await?;
        }
        Ok(())
    }

    /// Sends a request and waits for its response frame.
    async fn call(&mut self, request: frames::Request, what: &str) -> Result<Value, Halt> {
        // as the bridge spells it under the negotiated revision
        let revision = self.revision;
        let id = self.agent()?.request(&request, revision).await?;
        let timeout = Duration::from_millis(self.setup.ready.handshake_timeout_ms);
        self.wait_until(timeout, what, |d| d.responses.contains_key(&id))
            .await?;
        Ok(self.responses.remove(&id).unwrap_or_default())
    }

    async fn start_process(&mut self, load: bool) -> Result<(), Halt> {
        let launch = self.setup.launch;
        eprintln!("[record] starting agent process {}", self.slot.proc + 1);
        self.slot.start(
            launch,
            &launch.args,
            &self.setup.workspace,
            self.setup.tap.clone(),
        )?;
        self.responses.clear();
        self.permissions.clear();
        self.notifications_seen.clear();
        self.updates_seen.clear();
        self.mcp_at_start = self.setup.mcp_methods.borrow().clone();

        let result = self.initialize().await?;
        if self.slot.proc == 1 {
            (self.setup.on_initialized)(&result);
            let agent = frames::AgentCapabilities::read(&result);
            if !frames::offers_http_mcp(&agent, self.setup.session.mcp_unadvertised) {
                self.note(
                    "the agent advertises no agentCapabilities.mcpCapabilities.http: it may not take the unity-ops MCP server (HTTP) from session/new".into(),
                );
            }
        }
        self.agent = frames::AgentCapabilities::read(&result);

        if load && !self.agent.load_session {
            self.note(
                "the agent does not advertise loadSession; sending session/load anyway".into(),
            );
        }
        let mcp = frames::McpOffer {
            endpoint: Some(&self.setup.mcp),
            unadvertised: self.setup.session.mcp_unadvertised,
        };
        let setup = frames::session_setup(
            &self.setup.workspace,
            mcp,
            &self.agent,
            self.session_system_prompt(),
        );
        let (method, request) = if load {
            let request = frames::Request::LoadSession {
                session_id: self.session_id.clone(),
                setup,
            };
            ("session/load", request)
        } else {
            ("session/new", frames::Request::NewSession(setup))
        };
        let response = self
            .call(request, &format!("the {method} response"))
            .await?;
        let Some(result) = response.get("result").cloned() else {
            return Err(Halt::Error(anyhow::anyhow!("{method} failed: {response}")));
        };
        if !load {
            self.session_id = result["sessionId"].as_str().unwrap_or_default().to_string();
            self.session_result = result;
        } else if result.is_object() && !result.as_object().is_some_and(|o| o.is_empty()) {
            // session/load may return modes/models again; keep what it says.
            self.session_result = result;
        }
        self.set_config_options().await?;
        self.wait_ready(load).await
    }

    async fn end_process(&mut self) {
        self.slot.end().await;
        self.running = None;
        self.queued.clear();
        self.permissions.clear();
    }
}
