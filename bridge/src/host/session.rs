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

use acp_bridge::tap::{TapEnd, TapSession, Way};
use acp_bridge::{Bridge, Output};
use anyhow::Result;
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep_until, timeout};

use process_group::tree::{INTERRUPT_NAME, KILL_NAME, Tree};
use process_group::{Graces, Ladder, Rung};

use super::signals::Signals;
use super::tap_file::{panel_line_secrets, tap_scrubber};
use exit_status::{describe, exit_signal, killed_by};

use super::agent_process;
use super::args::HostConfig;
use super::line_io::{Line, Read, read_lines, write_lines, write_lines_blocking};
use super::line_queue::{LineQueue, READ_BUDGET, ReadBudget, WRITE_BUDGET, line_queue};
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
    let log = Tap::open(
        TapConfig {
            tap: config.tap.as_deref(),
            bridge_log: config.bridge_log.as_deref(),
            cap: config.max_line_bytes,
        },
        TapSession {
            bridge_version: env!("CARGO_PKG_VERSION").to_string(),
            date: utc_date(),
            argv: config.agent_argv.clone(),
            launch: config.spec.clone(),
        },
        tap_scrubber(&config),
    )?;
    log.line(
        ms(),
        Way::Note,
        &format!("acp-bridge argv {:?}", std::env::args().collect::<Vec<_>>()),
    );
    let mut stderr = StderrSink::start();
    for note in &config.notes {
        diagnostic(&mut stderr, &log, start, note);
    }

    // Before the agent exists: a signal must never kill us with the agent left running.
    let mut signals = Signals::listen()?;

    let agent = match agent_process::spawn(&config.agent_argv, &config.cwd) {
        Ok(agent) => agent,
        Err(e) => {
            // The notes above go out before the error that ends us.
            let end = TapEnd {
                outcome: "error",
                bridge_exit: 1,
                ..TapEnd::default()
            };
            if let Some(told) = log.finish(ms(), end, vec![format!("{e:#}")]) {
                stderr.line(format!("acp-bridge: {told}"));
            }
            stderr.close(STDERR_FLUSH).await;
            return Err(e);
        }
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
    let (events_tx, mut events) = mpsc::channel::<Event>(64);
    let (panel_lines_tx, mut panel_lines) = mpsc::channel::<Read>(64);
    if config.print_prompt.is_none() {
        let budget = Some(ReadBudget::new(READ_BUDGET));
        tokio::spawn(read_lines(
            tokio::io::stdin(),
            cap,
            budget,
            panel_lines_tx,
            |r| r,
        ));
    }
    let (agent_lines_tx, mut agent_lines) = mpsc::channel::<Read>(64);
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

    let mut exit_rx = agent.exit;

    let mut host = Host {
        bridge: Bridge::new(config.spec.clone(), Box::new(RandomIds)),
        panel_tx,
        agent_tx,
        log,
        start,
        agent_status: None,
        stderr,
        tree: agent.tree,
        cap,
        panel_open: true,
        panel_gone: false,
        panel_eof_seen: false,
        stdin_closed: false,
        dropped_agent_lines: 0,
        synthetic_init: false,
        cause: None,
        drain_until: None,
        ladder: None,
        grace: timing.grace,
        signalled: false,
        lister: Some(events_tx),
    };

    if let Some(prompt) = &config.print_prompt {
        // `-p "<prompt>"`: play the panel's part ourselves, then "close" its input.
        host.synthetic_init = true;
        let init = format!(
            r#"{{"type":"control_request","request_id":"{PRINT_INIT_ID}","request":{{"subtype":"initialize"}}}}"#
        );
        let user = serde_json::json!({"type": "user", "session_id": "",
            "message": {"role": "user", "content": prompt}, "parent_tool_use_id": null});
        for line in [init, user.to_string()] {
            host.log.line(host.ms(), Way::PanelToBridge, &line);
            let out = host.bridge.on_panel_line(&line, now());
            host.apply(out);
        }
        host.panel_eof(now(), timing.eof_drain);
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
            read = agent_lines.recv(), if agent_stdout_open && panel_room => match read {
                Some(Read::Line(line)) => host.agent_line(line, now()),
                Some(Read::OverCap) => {
                    let out = host.bridge.on_agent_line_over_cap(cap, now());
                    host.apply(out);
                }
                Some(Read::Skipped { bytes }) => host.skipped(Way::AgentToBridge, bytes),
                end => {
                    if let Some(Read::End(Some(e))) = end {
                        host.diag(&format!("reading the agent's stdout failed: {e}"));
                    }
                    agent_stdout_open = false;
                    // an exiting agent's status follows its stdout's end
                    // closely; an agent that lives on is told to the core soon
                    stdout_closed_due = Some(Instant::now() + STDOUT_EOF_SETTLE);
                }
            },
            read = panel_lines.recv(), if panel_reading && panel_room && agent_room => match read {
                Some(Read::Line(line)) => host.panel_line(line, now()),
                Some(Read::OverCap) => {
                    if host.panel_open {
                        let out = host.bridge.on_panel_line_over_cap(cap, now());
                        host.apply(out);
                    }
                }
                Some(Read::Skipped { bytes }) => host.skipped(Way::PanelToBridge, bytes),
                end => {
                    if let Some(Read::End(Some(e))) = end {
                        host.diag(&format!("reading stdin failed ({e}); treating it as closed"));
                    }
                    panel_reading = false;
                    host.panel_eof(now(), timing.eof_drain);
                }
            },
            _ = host.panel_tx.room(), if !host.panel_room() => {}
            _ = host.agent_tx.room(), if !host.agent_room() => {}
            _ = host.log.room(), if !tap_room => {}
            event = events.recv(), if events_open => match event {
                Some(Event::PanelGone(e)) => {
                    host.diag(&format!("writing stdout failed ({e}); ending the session"));
                    host.panel_open = false;
                    host.panel_gone = true;
                    host.panel_eof(now(), timing.eof_drain);
                    host.close_agent_stdin();
                }
                Some(Event::AgentStderr(Read::Line(line))) => {
                    host.stderr.line(format!("[agent] {}", line.text));
                    host.log.line(host.ms(), Way::AgentStderr, &line.text);
                }
                Some(Event::AgentStderr(Read::Skipped { bytes })) => {
                    host.skipped(Way::AgentStderr, bytes)
                }
                Some(Event::AgentStderr(Read::OverCap)) => {}
                Some(Event::AgentStderr(Read::End(_))) => agent_stderr_open = false,
                Some(Event::ServerTools(listed)) => host.server_tools(listed),
                Some(Event::AgentStdinBroken(e)) => {
                    host.diag(&format!("writing to the agent failed ({e}); it may have exited"));
                    host.stdin_closed = true;
                }
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
            let on_its_own = host.cause.is_none()
                || matches!(host.cause, Some(EndCause::AgentStdout)) && !host.signalled;
            match host.cause {
                _ if on_its_own && exit_code != 0 => host.diag(&format!(
                    "the agent ended on its own ({})",
                    describe(status)
                )),
                Some(EndCause::Core) => host
                    .diag("the session failed (reported to the panel above); the agent was ended"),
                _ => {}
            }
            return Ok(finish(host, panel_writer, exit_code).await);
        }
    }
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

/// Answers panel lines that come after the agent is gone (the core fails
/// prompts and control requests fast), until the panel closes its input or
/// stays quiet for [`PANEL_LINGER`] (at most [`PANEL_LINGER_MAX`] in all).
async fn answer_late_panel_lines(
    host: &mut Host,
    panel_lines: &mut mpsc::Receiver<Read>,
    now: &impl Fn() -> Duration,
) {
    let until = Instant::now() + PANEL_LINGER_MAX;
    while host.panel_open && Instant::now() < until {
        let quiet = PANEL_LINGER.min(until.saturating_duration_since(Instant::now()));
        match timeout(quiet, panel_lines.recv()).await {
            Ok(Some(Read::Line(line))) => host.panel_line(line, now()),
            Ok(Some(Read::OverCap)) => {
                let out = host.bridge.on_panel_line_over_cap(host.cap, now());
                host.apply(out);
            }
            Ok(Some(Read::Skipped { bytes })) => host.skipped(Way::PanelToBridge, bytes),
            Ok(Some(Read::End(_)) | None) | Err(_) => break,
        }
    }
}

/// Ends what is left of the agent's process group after its leader exited
/// (helpers it started), then reaps the orphans adopted by us.
#[cfg(unix)]
async fn end_leftovers(grace: Duration, host: &mut Host) {
    for (name, kill) in [(INTERRUPT_NAME, false), (KILL_NAME, true)] {
        if !host.tree.alive() {
            break;
        }
        host.note(&format!(
            "{name} to what is left of the agent's process group"
        ));
        // The group id stays ours while any member lives (the kernel does not
        // hand out a pid still in use as a group id).
        if kill {
            host.tree.kill();
        } else {
            host.tree.interrupt();
        }
        let until = Instant::now() + grace;
        while host.tree.alive() && Instant::now() < until {
            super::reap_orphans();
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    super::reap_orphans();
    if host.tree.alive() {
        host.diag(&format!(
            "processes of the agent's group {} survived SIGKILL",
            host.tree.id()
        ));
    }
}

/// Ends what is left of the agent's Job Object after the agent exited
/// (helpers it started): the job is terminated at once, as its helpers have
/// no console of their own to be asked on, and Windows has no orphans to reap.
#[cfg(windows)]
async fn end_leftovers(_grace: Duration, host: &mut Host) {
    host.note("terminating what is left of the agent's job");
    host.tree.kill();
}

async fn finish(mut host: Host, panel_writer: tokio::task::JoinHandle<()>, code: i32) -> i32 {
    if host.dropped_agent_lines > 0 {
        let n = host.dropped_agent_lines;
        host.diag(&format!(
            "{n} line(s) for the agent were dropped because its stdin was already closed"
        ));
    }
    host.panel_tx.close();
    if timeout(PANEL_FLUSH, panel_writer).await.is_err() {
        host.diag("stdout could not be flushed in time");
    }
    host.note(&format!("exit {code}"));
    let ms = host.ms();
    let (agent_code, agent_signal) = match host.agent_status {
        Some(s) => (s.code(), exit_signal(&s)),
        None => (None, None),
    };
    let end = TapEnd {
        outcome: match host.cause {
            Some(EndCause::Signal(_)) => "interrupted",
            _ if code == 0 => "ok",
            _ => "error",
        },
        agent_code,
        agent_signal,
        bridge_exit: code,
    };
    if let Some(told) = host.log.finish(ms, end, Vec::new()) {
        host.stderr.line(format!("acp-bridge: {told}"));
    }
    host.stderr.close(STDERR_FLUSH).await;
    code
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

mod exit_status;
mod tool_listing;

#[cfg(test)]
mod tests;
