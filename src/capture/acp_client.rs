//! The minimal ACP client the recorder drives agents with: starts the agent
//! process, writes JSON-RPC lines to its stdin and hands every line it prints
//! (stdout and stderr) both to the recording tap and to the scenario driver.
//!
//! Frames are built by `acp_bridge::acp::client` (the bridge's own builders) so a
//! recording holds exactly what the bridge would send. Every line is tapped
//! *before* it is written, so a reply can never be recorded ahead of the
//! request that caused it.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use acp_bridge::acp::client::{Notification, Request};
use acp_bridge::acp::revision::Revision;
use anyhow::Context;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;

use crate::corpus::profile::Stop;
use crate::corpus::recording::{Dir, Exit, Http, Leg};

/// One event for the recording, before scrubbing and numbering.
#[derive(Debug, Clone)]
pub struct Tapped {
    pub leg: Leg,
    pub dir: Dir,
    pub proc: u32,
    pub raw: String,
    pub http: Option<Http>,
}

/// Where tapped events go (the recorder's timeline).
pub type Tap = UnboundedSender<Tapped>;

/// What the driver sees from the agent's stdout.
#[derive(Debug, Clone)]
pub enum Incoming {
    /// A JSON object line.
    Frame(Value),
    /// A line that is not a JSON object (kept in the recording as is).
    Garbage(String),
    /// stdout closed: the agent exited or closed it.
    Closed,
}

/// A running agent process.
pub struct AgentProcess {
    pub proc: u32,
    child: Child,
    pid: i32,
    stdin: Option<ChildStdin>,
    next_id: u64,
    tap: Tap,
    readers: Vec<JoinHandle<()>>,
}

impl AgentProcess {
    /// Starts `program args` with exactly `env` (plus PATH) in `cwd`, in its
    /// own process group so that stopping it also stops what it started.
    pub fn spawn(
        proc: u32,
        program: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
        cwd: &Path,
        tap: Tap,
    ) -> anyhow::Result<(AgentProcess, UnboundedReceiver<Incoming>)> {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(cwd)
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // not tied to the spawning thread: the recorder's runtime has several
        process_group::in_own_group(&mut cmd, false);
        if let Some(path) = std::env::var_os("PATH") {
            cmd.env("PATH", path);
        }
        cmd.env("LANG", "C.UTF-8");
        cmd.envs(env);
        let mut child = cmd
            .spawn()
            .with_context(|| format!("starting the agent `{program}`"))?;
        let pid = child.id().map(|p| p as i32).unwrap_or(0);
        let stdout = child.stdout.take().context("agent stdout")?;
        let stderr = child.stderr.take().context("agent stderr")?;
        let (tx, rx) = unbounded_channel();
        let out_tap = tap.clone();
        let out = tokio::spawn(async move {
            let mut lines = BufReader::new(stdout);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match lines.read_until(b'\n', &mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf);
                        let line = line.trim_end_matches(['\n', '\r']).to_string();
                        if line.is_empty() {
                            continue;
                        }
                        // parsed first so the line itself moves into the tap
                        // (no copy of a large frame); the tap still comes first
                        let incoming = match serde_json::from_str::<Value>(&line) {
                            Ok(v) if v.is_object() => Incoming::Frame(v),
                            _ => Incoming::Garbage(line.clone()),
                        };
                        let _ = out_tap.send(Tapped {
                            leg: Leg::Acp,
                            dir: Dir::FromAgent,
                            proc,
                            raw: line,
                            http: None,
                        });
                        let _ = tx.send(incoming);
                    }
                }
            }
            let _ = tx.send(Incoming::Closed);
        });
        let err_tap = tap.clone();
        let err = tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let _ = err_tap.send(Tapped {
                    leg: Leg::Stderr,
                    dir: Dir::FromAgent,
                    proc,
                    raw: line,
                    http: None,
                });
            }
        });
        let stdin = child.stdin.take();
        Ok((
            AgentProcess {
                proc,
                child,
                pid,
                stdin,
                next_id: 0,
                tap,
                readers: vec![out, err],
            },
            rx,
        ))
    }

    /// Writes one frame (tapped first). Fails when stdin is gone.
    pub async fn send(&mut self, line: String) -> anyhow::Result<()> {
        let _ = self.tap.send(Tapped {
            leg: Leg::Acp,
            dir: Dir::ToAgent,
            proc: self.proc,
            raw: line.clone(),
            http: None,
        });
        let stdin = self
            .stdin
            .as_mut()
            .context("agent stdin is already closed")?;
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .context("writing to the agent's stdin")?;
        stdin.flush().await.context("flushing the agent's stdin")?;
        Ok(())
    }

    /// Sends a request with the next numeric id (from 0, as the bridge
    /// does), as `revision` spells it; returns the id.
    pub async fn request(&mut self, request: &Request, revision: Revision) -> anyhow::Result<u64> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(request.line(id, revision)).await?;
        Ok(id)
    }

    pub async fn notify(&mut self, notification: &Notification) -> anyhow::Result<()> {
        self.send(notification.line()).await
    }

    /// Whether the process has exited (without waiting).
    pub fn try_exit(&mut self) -> Option<Exit> {
        self.child.try_wait().ok().flatten().map(exit_of)
    }

    /// Ends the agent by the shared ladder: close stdin, wait `eof_grace`,
    /// SIGTERM the group, wait `term_grace`, SIGKILL the group (always swept,
    /// so helpers the agent started never outlive it). Returns how it exited
    /// and notes on each rung it took.
    pub async fn stop(mut self, stop: Stop) -> (Exit, Vec<String>) {
        let mut notes = Vec::new();
        let graces = process_group::Graces {
            eof: stop.eof_grace,
            term: stop.term_grace,
            kill: Duration::from_secs(5),
        };
        let stopped =
            process_group::stop(&mut self.child, self.pid, self.stdin.take(), graces).await;
        for rung in &stopped.rungs {
            notes.push(match rung {
                process_group::Rung::Terminate => format!(
                    "agent process {} still running {} ms after stdin closed; sent SIGTERM",
                    self.proc,
                    stop.eof_grace.as_millis()
                ),
                process_group::Rung::Kill => format!(
                    "agent process {} ignored SIGTERM for {} ms; sent SIGKILL",
                    self.proc,
                    stop.term_grace.as_millis()
                ),
                process_group::Rung::GiveUp => {
                    format!("agent process {} could not be reaped", self.proc)
                }
            });
        }
        let exit = stopped.status.map(exit_of).unwrap_or_default();
        // Let the readers deliver the last lines (bounded).
        for reader in self.readers.drain(..) {
            if tokio::time::timeout(Duration::from_secs(3), reader)
                .await
                .is_err()
            {
                notes.push(format!(
                    "agent process {}: output still open after exit",
                    self.proc
                ));
            }
        }
        (exit, notes)
    }
}

fn exit_of(status: std::process::ExitStatus) -> Exit {
    Exit {
        code: status.code(),
        signal: status.signal(),
    }
}
