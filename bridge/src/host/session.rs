//! One bridged session: the agent child process, the panel on our own
//! stdin/stdout, and the core in between.
//!
//! Serialisation: a single task owns the [`Bridge`] and selects over one
//! event channel (panel lines, agent lines, agent stderr, ends of those
//! pipes), the agent's exit, the core's `next_deadline()`, the shutdown
//! escalation timer and our own termination signals. Only that task ever
//! touches the core, so both directions are serialised without a lock, and it
//! never waits on a pipe or on the child: writes go to writer tasks through
//! queues, the child is reaped by its own task.
//!
//! Backpressure: the panel's and the agent's lines come on channels of their
//! own, taken only while the queues their output goes to are under budget
//! (agent lines: the panel's queue; panel lines: both), so a panel that stops
//! reading stops the agent at its pipe and a fast agent runs at the panel's
//! pace ([`super::line_queue`]). A line over the cap (`--max-line-bytes`) is
//! skipped by its reader; the core is told when the cap is passed and ends a
//! running turn, the host reports the line's length when it ends.
//!
//! Ending: when the panel's stdin closes the core is told (`on_panel_eof`)
//! and decides when the agent's stdin may close (`close_agent_stdin`, after
//! any running turn, bounded by `Timing::eof_drain`). Then the agent gets
//! `Timing::grace` to exit, then SIGTERM to its process group (Windows:
//! CTRL_BREAK to its console process group), then SIGKILL (Windows: its Job
//! Object terminated), then we reap it; leftovers of the tree are ended and
//! orphans reaped. Our own SIGINT/SIGTERM/SIGHUP (Windows: ctrl_c /
//! ctrl_break / ctrl_close) start that ending at once.

use std::process::ExitStatus;
use std::time::Duration;

use acp_bridge::tap::{Outcome, TapEnd, TapSession, Way};
use acp_bridge::{Bridge, Output};
use anyhow::Result;
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep_until};

use process_group::tree::{INTERRUPT_NAME, KILL_NAME, Tree};
use process_group::{Graces, Ladder, Rung};

use super::signals::Signals;
use super::tap_file::{panel_line_secrets, tap_scrubber};
use ending::{answer_late_panel_lines, end_leftovers, finish};
use exit_status::{describe, killed_by};
use pipes::Pipes;

use super::agent_process;
use super::args::HostConfig;
use super::line_io::{Line, Read};
use super::line_queue::LineQueue;
use super::random_ids::RandomIds;
use super::stderr_sink::StderrSink;
use super::tap_file::{Tap, TapConfig, utc_date};

/// How long the agent's stdout may stay open after the agent exited (a
/// grandchild can hold it) before the exit is reported to the core anyway.
const STDOUT_DRAIN_AFTER_EXIT: Duration = Duration::from_secs(1);
/// How long after the agent's stdout ended its exit status may take to
/// arrive before the core is told the agent closed its stdout (an exit
/// reports the exit code, which says more).
const STDOUT_EOF_SETTLE: Duration = Duration::from_millis(100);
/// The request id of the initialize the host sends itself in `-p` mode.
const PRINT_INIT_ID: &str = "acp-bridge-print-init";

/// Whether `line` is the `control_response` to request `id` (parsed only
/// when it looks like one, so ordinary lines cost a prefix check).
fn is_reply_to(line: &str, id: &str) -> bool {
    line.contains(r#""control_response""#)
        && line.contains(id)
        && serde_json::from_str::<serde_json::Value>(line)
            .is_ok_and(|v| v["type"] == "control_response" && v["response"]["request_id"] == id)
}

/// After the agent is gone, how long the panel may stay quiet before we exit:
/// a line written just after the agent exited still gets its answer (an
/// error result, an error response). [`PANEL_LINGER_MAX`] bounds a panel
/// that keeps writing.
const PANEL_LINGER: Duration = Duration::from_millis(500);
const PANEL_LINGER_MAX: Duration = Duration::from_secs(5);

/// How long our stderr may take to take our last lines.
const STDERR_FLUSH: Duration = Duration::from_secs(1);
/// How long the panel writer may take to flush our last lines.
const PANEL_FLUSH: Duration = Duration::from_secs(5);

/// What comes besides the panel's and the agent's lines (which have
/// channels of their own, for backpressure).
enum Event {
    /// Our stdout broke: nobody reads what we write any more.
    PanelGone(String),
    AgentStderr(Read),
    AgentStdinBroken(String),
    /// What a registered MCP server lists ([`tool_listing`]).
    ServerTools(tool_listing::Listed),
}

/// Why the session ended, for the exit code.
#[derive(Debug, Clone, Copy)]
enum EndCause {
    /// The panel closed our stdin (or stopped reading our stdout).
    Panel,
    /// The core closed the agent's stdin on its own (e.g. authentication failed).
    Core,
    /// The agent closed its stdout: it is stopped; its own exit code counts
    /// when it exited before we had to signal it.
    AgentStdout,
    /// We got this signal (its Unix number; Windows console events are
    /// numbered as the signal they stand for, see [`Signals`]).
    Signal(i32),
}

pub async fn run(config: HostConfig) -> Result<i32> {
    let start = std::time::Instant::now();
    let now = || start.elapsed();
    let timing = config.timing;
    let ms = || start.elapsed().as_millis() as u64;
    let (log, untapped) = open_tap(&config, start)?;
    let mut stderr = StderrSink::start();
    for note in untapped.iter().chain(&config.notes) {
        diagnostic(&mut stderr, &log, start, note);
    }

    // Before the agent exists: a signal must never kill us with the agent left running.
    let mut signals = Signals::listen()?;

    let agent = match agent_process::spawn(&config.agent_argv, &config.cwd) {
        Ok(agent) => agent,
        Err(e) => return Err(spawn_failed(e, log, stderr, ms()).await),
    };
    log.line(
        ms(),
        Way::Note,
        &format!(
            "agent started: pid {}, argv {:?}",
            agent.tree.id(),
            config.agent_argv
        ),
    );

    let cap = config.max_line_bytes;
    let Pipes {
        events_tx,
        mut events,
        mut panel_lines,
        mut agent_lines,
        panel_tx,
        agent_tx,
        panel_writer,
        mut exit_rx,
        tree,
    } = Pipes::start(agent, cap, config.print_prompt.is_none());

    let mut host = Host::new(
        &config, log, start, stderr, tree, panel_tx, agent_tx, events_tx,
    );

    if let Some(prompt) = &config.print_prompt {
        host.play_print_prompt(prompt, now(), timing.eof_drain);
    }

    let mut events_open = true;
    let mut panel_reading = config.print_prompt.is_none();
    let mut ticked_deadline: Option<Duration> = None;
    let mut spin_reported = false;
    let mut agent_stdout_open = true;
    let mut stdout_closed_due: Option<Instant> = None;
    // Drained too before we finish, so the agent's last words are not lost.
    let mut agent_stderr_open = true;
    let mut agent_exit: Option<(Option<ExitStatus>, Instant)> = None;

    loop {
        // A deadline the core kept after being ticked for it would make this
        // loop spin; it is skipped until the core sets another one.
        let core_deadline = host.bridge.next_deadline();
        if core_deadline.is_some() && core_deadline == ticked_deadline && !spin_reported {
            host.diag("the core kept a deadline that already passed; not ticking it again");
            spin_reported = true;
        }
        let deadline = core_deadline
            .filter(|d| Some(*d) != ticked_deadline)
            .map(|d| Instant::from_std(start + d));
        let step_due = [
            host.drain_until,
            host.ladder.as_ref().and_then(Ladder::deadline),
        ]
        .into_iter()
        .flatten()
        .min();
        let exit_drain_due = agent_exit.map(|(_, at)| at + STDOUT_DRAIN_AFTER_EXIT);
        let tap_room = host.log.has_room();
        let panel_room = host.panel_room() && tap_room;
        let agent_room = host.agent_room() && tap_room;
        tokio::select! {
            read = agent_lines.recv(), if agent_stdout_open && panel_room => {
                if !host.agent_read(read, now()) {
                    agent_stdout_open = false;
                    // an exiting agent's status follows its stdout's end
                    // closely; an agent that lives on is told to the core soon
                    stdout_closed_due = Some(Instant::now() + STDOUT_EOF_SETTLE);
                }
            }
            read = panel_lines.recv(), if panel_reading && panel_room && agent_room => {
                panel_reading = host.panel_read(read, now(), timing.eof_drain);
            }
            _ = host.panel_tx.room(), if !host.panel_room() => {}
            _ = host.agent_tx.room(), if !host.agent_room() => {}
            _ = host.log.room(), if !tap_room => {}
            event = events.recv(), if events_open => match event {
                Some(Event::AgentStderr(Read::End(_))) => agent_stderr_open = false,
                Some(event) => host.event(event, now(), timing.eof_drain),
                // Cannot happen while the panel writer lives (it holds a
                // sender until `finish`); if it did, the other arms still end the session.
                None => events_open = false,
            },
            status = &mut exit_rx, if agent_exit.is_none() => {
                let status = match status {
                    Ok(Ok(s)) => Some(s),
                    Ok(Err(e)) => { host.diag(&format!("waiting for the agent failed: {e}")); None }
                    Err(_) => None,
                };
                host.note(&format!("agent exited: {}", describe(status)));
                host.agent_status = status;
                agent_exit = Some((status, Instant::now()));
            }
            _ = sleep_until_opt(deadline), if deadline.is_some() => {
                ticked_deadline = core_deadline;
                let out = host.bridge.on_tick(now());
                host.apply(out);
            }
            _ = sleep_until_opt(step_due), if step_due.is_some() => {
                if host.escalate() {
                    return Ok(finish(host, panel_writer, 1).await);
                }
            }
            _ = sleep_until_opt(stdout_closed_due), if stdout_closed_due.is_some() && agent_exit.is_none() => {
                stdout_closed_due = None;
                // nothing the agent does can reach the panel any more: the
                // running turn ends now and the agent is stopped
                if !host.stdin_closed {
                    host.cause.get_or_insert(EndCause::AgentStdout);
                }
                let out = host.bridge.on_agent_stdout_closed(now());
                host.apply(out);
            }
            _ = sleep_until_opt(exit_drain_due), if exit_drain_due.is_some() && (agent_stdout_open || agent_stderr_open) => {
                host.diag("the agent exited but its output is still open (a child of it holds it); not waiting for it");
                agent_stdout_open = false;
                agent_stderr_open = false;
            }
            signal = signals.recv() => host.on_signal(signal),
        }

        if let Some((status, _)) = agent_exit
            && !agent_stdout_open
            && !agent_stderr_open
        {
            let code = status.and_then(|s| s.code());
            let out = host.bridge.on_agent_exit(code, now());
            host.apply(out);
            if host.panel_open && panel_reading {
                answer_late_panel_lines(&mut host, &mut panel_lines, &now).await;
            }
            end_leftovers(timing.grace, &mut host).await;
            let exit_code = host.exit_code(status);
            host.say_why_it_ended(status, exit_code);
            return Ok(finish(host, panel_writer, exit_code).await);
        }
    }
}

/// The agent did not start: the tap ends with the error, and the notes
/// already on stderr go out before the error that ends us.
async fn spawn_failed(
    e: anyhow::Error,
    log: Tap,
    mut stderr: StderrSink,
    ms: u64,
) -> anyhow::Error {
    let end = TapEnd {
        outcome: Outcome::Error,
        agent_code: None,
        agent_signal: None,
        bridge_exit: 1,
    };
    if let Some(told) = log.finish(ms, end, vec![format!("{e:#}")]) {
        stderr.line(format!("acp-bridge: {told}"));
    }
    stderr.close(STDERR_FLUSH).await;
    e
}

/// The tap (and `--bridge-log`), with the bridge's own command line as its
/// first note; and why the tap is off, when it could not be opened.
fn open_tap(config: &HostConfig, start: std::time::Instant) -> Result<(Tap, Option<String>)> {
    let (log, untapped) = Tap::open(
        TapConfig {
            tap: config.tap.as_deref(),
            bridge_log: config.bridge_log.as_deref(),
            cap: config.max_line_bytes,
        },
        TapSession {
            build: acp_bridge::build_stamp::BRIDGE,
            date: utc_date(),
            argv: config.agent_argv.clone(),
            launch: config.spec.clone(),
        },
        tap_scrubber(config),
    )?;
    log.line(
        start.elapsed().as_millis() as u64,
        Way::Note,
        &format!(
            "acp-bridge argv {:?}",
            super::args::tap_argv(&std::env::args().collect::<Vec<_>>())
        ),
    );
    Ok((log, untapped))
}

/// State the loop mutates, with the ways it reacts.
struct Host {
    bridge: Bridge,
    panel_tx: LineQueue,
    agent_tx: LineQueue,
    /// The tap and `--bridge-log` view (no-ops without the flags).
    log: Tap,
    /// When the session started: the tap's times count from here.
    start: std::time::Instant,
    /// The agent's exit status, once it exited.
    agent_status: Option<ExitStatus>,
    stderr: StderrSink,
    /// The agent and everything it started.
    tree: Tree,
    /// The longest line either way (`--max-line-bytes`).
    cap: usize,
    panel_eof_seen: bool,
    /// False once the panel's stdin closed or its stdout broke.
    panel_open: bool,
    /// Our stdout broke: what would go to the panel is dropped.
    panel_gone: bool,
    stdin_closed: bool,
    dropped_agent_lines: usize,
    /// True until the reply to our own `-p` initialize request is swallowed.
    synthetic_init: bool,
    cause: Option<EndCause>,
    /// After panel EOF: when the running turn has taken too long and the
    /// agent's stdin is closed anyway.
    drain_until: Option<Instant>,
    /// Once the agent's stdin is closed: the shared stop ladder.
    ladder: Option<Ladder>,
    grace: Duration,
    /// We sent the agent's group a signal.
    signalled: bool,
    /// Taken when the session's MCP servers are listed (once).
    lister: Option<mpsc::Sender<Event>>,
}

impl Host {
    /// The session's state as it starts: panel open, the agent's stdin
    /// open, nothing ending yet.
    #[allow(clippy::too_many_arguments)] // the parts the session's start made, each once
    fn new(
        config: &HostConfig,
        log: Tap,
        start: std::time::Instant,
        stderr: StderrSink,
        tree: Tree,
        panel_tx: LineQueue,
        agent_tx: LineQueue,
        lister: mpsc::Sender<Event>,
    ) -> Host {
        Host {
            bridge: Bridge::new(config.spec.clone(), Box::new(RandomIds)),
            panel_tx,
            agent_tx,
            log,
            start,
            agent_status: None,
            stderr,
            tree,
            cap: config.max_line_bytes,
            panel_open: true,
            panel_gone: false,
            panel_eof_seen: false,
            stdin_closed: false,
            dropped_agent_lines: 0,
            synthetic_init: false,
            cause: None,
            drain_until: None,
            ladder: None,
            grace: config.timing.grace,
            signalled: false,
            lister: Some(lister),
        }
    }

    /// `-p "<prompt>"`: plays the panel's part (an initialize, the prompt),
    /// then "closes" its input.
    fn play_print_prompt(&mut self, prompt: &str, now: Duration, eof_drain: Duration) {
        self.synthetic_init = true;
        let init = format!(
            r#"{{"type":"control_request","request_id":"{PRINT_INIT_ID}","request":{{"subtype":"initialize"}}}}"#
        );
        let user = serde_json::json!({"type": "user", "session_id": "",
            "message": {"role": "user", "content": prompt}, "parent_tool_use_id": null});
        for line in [init, user.to_string()] {
            self.log.line(self.ms(), Way::PanelToBridge, &line);
            let out = self.bridge.on_panel_line(&line, now);
            self.apply(out);
        }
        self.panel_eof(now, eof_drain);
    }

    /// What the agent's stdout reader gave; false once the stdout ended.
    fn agent_read(&mut self, read: Option<Read>, now: Duration) -> bool {
        match read {
            Some(Read::Line(line)) => self.agent_line(line, now),
            Some(Read::OverCap) => {
                let out = self.bridge.on_agent_line_over_cap(self.cap, now);
                self.apply(out);
            }
            Some(Read::Skipped { bytes }) => self.skipped(Way::AgentToBridge, bytes),
            end => {
                if let Some(Read::End(Some(e))) = end {
                    self.diag(&format!("reading the agent's stdout failed: {e}"));
                }
                return false;
            }
        }
        true
    }

    /// What the panel's stdin reader gave; false once the stdin ended (the
    /// core is told, as when the panel closes it).
    fn panel_read(&mut self, read: Option<Read>, now: Duration, eof_drain: Duration) -> bool {
        match read {
            Some(Read::Line(line)) => self.panel_line(line, now),
            Some(Read::OverCap) => {
                if self.panel_open {
                    let out = self.bridge.on_panel_line_over_cap(self.cap, now);
                    self.apply(out);
                }
            }
            Some(Read::Skipped { bytes }) => self.skipped(Way::PanelToBridge, bytes),
            end => {
                if let Some(Read::End(Some(e))) = end {
                    self.diag(&format!(
                        "reading stdin failed ({e}); treating it as closed"
                    ));
                }
                self.panel_eof(now, eof_drain);
                return false;
            }
        }
        true
    }

    /// An event besides the lines: a broken pipe, the agent's stderr, a
    /// server's tool list.
    fn event(&mut self, event: Event, now: Duration, eof_drain: Duration) {
        match event {
            Event::PanelGone(e) => {
                self.diag(&format!("writing stdout failed ({e}); ending the session"));
                self.panel_open = false;
                self.panel_gone = true;
                self.panel_eof(now, eof_drain);
                self.close_agent_stdin();
            }
            Event::AgentStderr(Read::Line(line)) => {
                self.stderr.line(format!("[agent] {}", line.text));
                self.log.line(self.ms(), Way::AgentStderr, &line.text);
            }
            Event::AgentStderr(Read::Skipped { bytes }) => self.skipped(Way::AgentStderr, bytes),
            Event::AgentStderr(Read::OverCap | Read::End(_)) => {}
            Event::ServerTools(listed) => self.server_tools(listed),
            Event::AgentStdinBroken(e) => {
                self.diag(&format!(
                    "writing to the agent failed ({e}); it may have exited"
                ));
                self.stdin_closed = true;
            }
        }
    }

    /// Says on stderr why the session ended when the panel would not know:
    /// the agent failed on its own, or the session failed.
    fn say_why_it_ended(&mut self, status: Option<ExitStatus>, exit_code: i32) {
        let on_its_own = self.cause.is_none()
            || matches!(self.cause, Some(EndCause::AgentStdout)) && !self.signalled;
        match self.cause {
            _ if on_its_own && exit_code != 0 => self.diag(&format!(
                "the agent ended on its own ({})",
                describe(status)
            )),
            Some(EndCause::Core) => {
                self.diag("the session failed (reported to the panel above); the agent was ended")
            }
            _ => {}
        }
    }

    /// Whether the panel's queue may take more (a dead writer takes nothing
    /// but holds nobody up).
    fn panel_room(&self) -> bool {
        self.panel_gone || self.panel_tx.has_room()
    }

    fn agent_room(&self) -> bool {
        self.stdin_closed || self.agent_tx.has_room()
    }

    fn agent_line(&mut self, line: Line, now: Duration) {
        if line.lossy {
            self.diag("an agent line was not valid UTF-8; invalid bytes replaced");
        }
        self.log.line(self.ms(), Way::AgentToBridge, &line.text);
        let out = self.bridge.on_agent_line(&line.text, now);
        self.apply(out);
    }

    fn panel_line(&mut self, line: Line, now: Duration) {
        if line.lossy {
            self.diag("a panel line was not valid UTF-8; invalid bytes replaced");
        }
        for secret in panel_line_secrets(&line.text) {
            self.log.secret(&secret);
        }
        self.log.line(self.ms(), Way::PanelToBridge, &line.text);
        if self.panel_open {
            let out = self.bridge.on_panel_line(&line.text, now);
            self.apply(out);
        }
    }

    /// An over-cap line that went `way` ended after `bytes` bytes.
    fn skipped(&mut self, way: Way, bytes: u64) {
        self.log.skipped(self.ms(), way, bytes);
        let from = match way {
            Way::PanelToBridge => "the panel",
            Way::AgentStderr => "the agent's stderr",
            _ => "the agent",
        };
        self.diag(&format!(
            "skipped a line of {bytes} bytes from {from}: over the line cap of {} bytes (--max-line-bytes)",
            self.cap
        ));
    }

    fn apply(&mut self, out: Output) {
        for line in out.to_agent {
            if self.stdin_closed {
                self.dropped_agent_lines += 1;
                continue;
            }
            self.log.line(self.ms(), Way::BridgeToAgent, &line);
            self.agent_tx.push(line);
        }
        for line in out.to_panel {
            if self.synthetic_init && is_reply_to(&line, PRINT_INIT_ID) {
                // Nobody asked for it: the request was ours.
                self.synthetic_init = false;
                continue;
            }
            self.log.line(self.ms(), Way::BridgeToPanel, &line);
            if !self.panel_gone {
                self.panel_tx.push(line);
            }
        }
        for d in &out.diagnostics {
            diagnostic(&mut self.stderr, &self.log, self.start, d);
        }
        if out.close_agent_stdin && !self.stdin_closed {
            self.cause.get_or_insert(EndCause::Core);
            self.close_agent_stdin();
        }
        self.list_server_tools();
    }

    fn diag(&mut self, text: &str) {
        diagnostic(&mut self.stderr, &self.log, self.start, text);
    }

    fn note(&self, text: &str) {
        self.log.line(self.ms(), Way::Note, text);
    }

    /// Milliseconds since the session started, for the tap.
    fn ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    fn panel_eof(&mut self, now: Duration, eof_drain: Duration) {
        if self.panel_eof_seen {
            return;
        }
        self.panel_eof_seen = true;
        self.panel_open = false;
        if !matches!(self.cause, Some(EndCause::Signal(_))) {
            self.cause = Some(EndCause::Panel);
        }
        let out = self.bridge.on_panel_eof(now);
        self.apply(out);
        if !self.stdin_closed {
            // The core keeps the agent for the running turn; bound that wait.
            self.drain_until = Some(Instant::now() + eof_drain);
        }
    }

    /// Closes the agent's stdin (after what is queued) and starts the grace period.
    fn close_agent_stdin(&mut self) {
        if self.stdin_closed {
            return;
        }
        self.stdin_closed = true;
        self.agent_tx.close();
        self.note("closed the agent's stdin");
        self.drain_until = None;
        let graces = Graces {
            eof: self.grace,
            term: self.grace,
            kill: self.grace,
        };
        self.ladder = Some(Ladder::after_stdin_closed(graces, Instant::now()));
    }

    fn on_signal(&mut self, signal: i32) {
        if matches!(self.cause, Some(EndCause::Signal(_))) {
            // Asked again: no more patience.
            self.diag(&format!("got signal {signal} again; killing the agent"));
            if let Some(ladder) = self.ladder.as_mut() {
                ladder.kill_now(Instant::now());
            }
            return;
        }
        self.diag(&format!("got signal {signal}; ending the agent"));
        self.cause = Some(EndCause::Signal(signal));
        self.close_agent_stdin();
        if let Some(ladder) = self.ladder.as_mut() {
            ladder.hurry(Instant::now());
        }
    }

    /// Runs what is due; true when there is nothing left to try.
    fn escalate(&mut self) -> bool {
        let now = Instant::now();
        let grace = self.grace;
        let with_grace = |s: &str| format!("{s} (grace {} ms)", grace.as_millis());
        if self.drain_until.is_some_and(|at| at <= now) {
            self.diag(&with_grace(
                "the running turn did not end after stdin closed; closing the agent's stdin",
            ));
            self.close_agent_stdin();
            return false;
        }
        let Some(rung) = self.ladder.as_mut().and_then(|l| l.due(now)) else {
            return false;
        };
        match rung {
            Rung::Terminate => {
                self.note(&format!(
                    "sending {INTERRUPT_NAME} to the agent's process group"
                ));
                self.signalled = true;
                if !self.tree.interrupt() {
                    // e.g. no console to send CTRL_BREAK on: the kill follows
                    self.note(&format!("{INTERRUPT_NAME} reached no process"));
                }
            }
            Rung::Kill => {
                self.diag(&with_grace(&format!(
                    "the agent ignored its stdin closing and {INTERRUPT_NAME}; sending {KILL_NAME}"
                )));
                self.signalled = true;
                self.tree.kill();
            }
            Rung::GiveUp => {
                self.diag("the agent could not be reaped after SIGKILL; giving up on it");
                return true;
            }
        }
        false
    }

    fn exit_code(&self, status: Option<ExitStatus>) -> i32 {
        match self.cause {
            Some(EndCause::Signal(n)) => 128 + n,
            Some(EndCause::Panel) => 0,
            Some(EndCause::Core) => 1,
            Some(EndCause::AgentStdout) if self.signalled => 1,
            Some(EndCause::AgentStdout) | None => match status {
                Some(s) => s.code().unwrap_or_else(|| 128 + killed_by(s).unwrap_or(0)),
                None => 1,
            },
        }
    }
}

fn diagnostic(stderr: &mut StderrSink, log: &Tap, start: std::time::Instant, text: &str) {
    stderr.line(format!("acp-bridge: {text}"));
    log.line(start.elapsed().as_millis() as u64, Way::Diagnostic, text);
}

async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => sleep_until(at).await,
        None => std::future::pending().await,
    }
}

mod ending;
mod exit_status;
mod pipes;
mod tool_listing;

#[cfg(test)]
mod tests;
