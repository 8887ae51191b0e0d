//! The recorder's second client kind: it plays the panel to an agent that
//! speaks Claude Code's stream-json (profile `protocol = "stream-json"`,
//! i.e. the real `claude -p --input-format stream-json ...`), so the
//! recording shows what the bridge's panel output should look like.
//!
//! The panel's side is the scenario's [`PanelDriver`], the one the replayer uses: Claude gets
//! exactly the lines the replayer sends to the bridge for the same scenario
//! (initialize, prompts, `can_use_tool` answers, interrupts, steering, mode
//! changes), so the two outputs can be compared line kind by line kind. A
//! resume starts a new process with `--resume <session>`.
//!
//! The process side reuses [`AgentProcess`]; its taps are relabelled from the
//! `acp` leg to the `stream-json` leg on the way to the timeline. **Every
//! wait has a deadline**: a silent agent ends the run as `timeout`.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc::unbounded_channel;
use tokio::time::Instant;

use super::driver::{AgentSlot, Halt, RunEnd};
use crate::capture::acp_client::{Incoming, Tap, Tapped};
use crate::capture::interrupt::Interrupt;
use crate::corpus::profile::{Launch, Stop};
use crate::corpus::recording::Leg;
use crate::corpus::scenario::Scenario;
use crate::corpus::scenario::panel_driver::{Action, PanelDriver};

/// How long the agent may stay silent while the panel waits for something.
const WAIT_TIMEOUT: Duration = Duration::from_secs(150);

/// What the stream-json client needs.
pub struct Setup<'a> {
    pub launch: &'a Launch,
    pub stop: Stop,
    pub workspace: String,
    pub tap: Tap,
    /// Called once with `{"agentInfo": {...}}` built from the first
    /// `system`/`init` line (fills the header).
    pub on_initialized: Box<dyn FnMut(&Value) + Send + 'a>,
}

struct Client<'a> {
    setup: Setup<'a>,
    slot: AgentSlot,
    initialized: bool,
}

/// Runs `scenario` against the stream-json agent (until done or
/// `interrupt`) and ends it.
pub async fn run(scenario: &Scenario, setup: Setup<'_>, mut interrupt: Interrupt) -> RunEnd {
    let slot = AgentSlot::new(setup.tap.clone(), setup.stop);
    let mut c = Client {
        setup,
        slot,
        initialized: false,
    };
    let result = tokio::select! {
        r = c.play(scenario) => r,
        signal = interrupt.wait() => Err(Halt::Interrupted(signal)),
    };
    c.slot.finish(result).await
}

impl Client<'_> {
    fn note(&mut self, text: String) {
        self.slot.note(text);
    }

    async fn play(&mut self, scenario: &Scenario) -> Result<(), Halt> {
        let mut panel = PanelDriver::new(scenario);
        self.start_process(None)?;
        loop {
            match panel.poll() {
                Action::Send(lines) => self.send_all(&lines).await?,
                Action::SendWithNote(lines, note) => {
                    self.note(note);
                    self.send_all(&lines).await?;
                }
                Action::Skip(note) => self.note(note),
                Action::Resume { session_id } => {
                    self.end_process().await;
                    self.start_process(session_id.as_deref())?;
                }
                Action::Wait {
                    step,
                    step_kind,
                    waiting_for,
                } => {
                    let what = format!("step {step} ({step_kind}): {waiting_for}");
                    let line = self.next_line(&what).await?;
                    panel.observe(&line);
                    if let Some(lines) = panel.poll_now() {
                        self.send_all(&lines).await?;
                    }
                }
                Action::Finished => return Ok(()),
            }
        }
    }

    async fn send_all(&mut self, lines: &[String]) -> Result<(), Halt> {
        let agent = self.slot.agent()?;
        for line in lines {
            let frame: Value = serde_json::from_str(line)
                .map_err(|e| Halt::Error(anyhow::anyhow!("panel line is not JSON: {e}")))?;
            agent.send(frame.to_string()).await?;
        }
        Ok(())
    }

    /// The next JSON line from the agent's stdout (non-JSON lines are noted
    /// and skipped).
    async fn next_line(&mut self, what: &str) -> Result<String, Halt> {
        let deadline = Instant::now() + WAIT_TIMEOUT;
        loop {
            let rx = self
                .slot
                .rx
                .as_mut()
                .ok_or_else(|| Halt::AgentClosed("no agent process".into()))?;
            let incoming = match tokio::time::timeout_at(deadline, rx.recv()).await {
                Err(_) => return Err(Halt::Timeout(format!("waited for {what}"))),
                Ok(None) | Ok(Some(Incoming::Closed)) => {
                    self.slot.rx = None;
                    return Err(Halt::AgentClosed(format!("while waiting for {what}")));
                }
                Ok(Some(i)) => i,
            };
            match incoming {
                Incoming::Frame(v) => {
                    self.learn_version(&v);
                    return Ok(v.to_string());
                }
                Incoming::Garbage(line) => {
                    let shown: String = line.chars().take(120).collect();
                    self.note(format!(
                        "agent printed a line that is not a JSON object: {shown}"
                    ));
                }
                Incoming::Closed => {}
            }
        }
    }

    /// The header's `agent_info` from the first `system`/`init` line.
    fn learn_version(&mut self, v: &Value) {
        if self.initialized
            || v.get("type").and_then(Value::as_str) != Some("system")
            || v.get("subtype").and_then(Value::as_str) != Some("init")
        {
            return;
        }
        self.initialized = true;
        let version = v.get("claude_code_version").cloned().unwrap_or(Value::Null);
        (self.setup.on_initialized)(
            &json!({"agentInfo": {"name": "claude-code", "version": version}}),
        );
    }

    fn start_process(&mut self, resume: Option<&str>) -> Result<(), Halt> {
        let launch = self.setup.launch;
        let mut args = launch.args.clone();
        if let Some(session) = resume {
            args.push("--resume".into());
            args.push(session.to_string());
        }
        let (relabelled, mut raw) = unbounded_channel::<Tapped>();
        let tap = self.setup.tap.clone();
        // The process module taps on the ACP leg; this is the stream-json leg.
        tokio::spawn(async move {
            while let Some(mut t) = raw.recv().await {
                if t.leg == Leg::Acp {
                    t.leg = Leg::StreamJson;
                }
                if tap.send(t).is_err() {
                    break;
                }
            }
        });
        self.slot
            .start(launch, &args, &self.setup.workspace, relabelled)?;
        Ok(())
    }

    async fn end_process(&mut self) {
        self.slot.end().await;
    }
}
