//! The timeline: one task that receives every event of a run (ACP lines in
//! both directions, agent stderr, stub-mcp and model exchanges, harness
//! notes) through one channel and writes them in arrival order, numbering
//! and timestamping each as it writes it and scrubbing it first.
//!
//! The header needs `agentInfo`, which is known only once the agent
//! answered `initialize`; events before that (a few hundred ms) are held in
//! memory and written the moment the header can be. A run that never got
//! that far still writes everything at the end, with `agent_info: null`.
//! The recording goes to the version asked for, always; an agent that
//! reports another version (`agentInfo.version`, unless the profile maps the
//! asked version to what it reports) gets nothing written, and the run is an
//! error naming both: never a write into another version's directory.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::capture::acp_client::Tapped;
use crate::corpus::recording::{
    Exit, Finished, Header, Outcome, RecordingError, RecordingWriter, Scrubber,
};

/// Why a run's timeline wrote no recording.
#[derive(Debug, thiserror::Error)]
pub enum TimelineError {
    #[error(transparent)]
    Recording(#[from] RecordingError),
    #[error(
        "{agent}: asked for version {asked}, but the agent reports version {reported}; nothing was written \
         (if {asked} reports itself as {reported}, say so in the profile: `reported_versions = {{ \"{asked}\" = \"{reported}\" }}`)"
    )]
    VersionMismatch {
        agent: String,
        asked: String,
        reported: String,
    },
}

/// Control messages to the timeline.
pub enum Control {
    /// The initialize result arrived: fill the header and open the file.
    AgentInfo {
        agent_info: Value,
        protocol_version: Option<u64>,
    },
    /// Write the trailer and close.
    Finish {
        outcome: Outcome,
        exit: Exit,
        notes: Vec<String>,
        done: oneshot::Sender<Result<Finished, TimelineError>>,
    },
}

/// Handle to a running timeline.
pub struct Timeline {
    pub tap: UnboundedSender<Tapped>,
    control: UnboundedSender<Control>,
    task: JoinHandle<()>,
}

impl Timeline {
    /// The recording goes to `<out_root>/<agent>/<version>/<scenario>.jsonl`;
    /// `reported_as` is what the profile says this version reports itself as.
    pub fn start(
        header: Header,
        scrubber: Scrubber,
        out_root: PathBuf,
        version: semver::Version,
        reported_as: Option<String>,
    ) -> Timeline {
        let (tap, tap_rx) = unbounded_channel();
        let (control, control_rx) = unbounded_channel();
        let state = State {
            started: Instant::now(),
            header,
            scrubber,
            out_root,
            version,
            reported_as,
            mismatch: None,
            pending: Vec::new(),
            writer: None,
            error: None,
        };
        let task = tokio::spawn(state.run(tap_rx, control_rx));
        Timeline { tap, control, task }
    }

    pub fn agent_info(&self, agent_info: Value, protocol_version: Option<u64>) {
        let _ = self.control.send(Control::AgentInfo {
            agent_info,
            protocol_version,
        });
    }

    /// Writes the trailer after every event already sent; returns the
    /// finished recording (not yet at its path).
    pub async fn finish(
        self,
        outcome: Outcome,
        exit: Exit,
        notes: Vec<String>,
    ) -> Result<Finished, TimelineError> {
        let (done, rx) = oneshot::channel();
        let _ = self.control.send(Control::Finish {
            outcome,
            exit,
            notes,
            done,
        });
        drop(self.tap);
        let result = rx.await.unwrap_or_else(|_| {
            Err(TimelineError::Recording(RecordingError::Io {
                path: PathBuf::from("<timeline>"),
                source: std::io::Error::other("the timeline task ended early"),
            }))
        });
        let _ = self.task.await;
        result
    }
}

struct State {
    started: Instant,
    header: Header,
    scrubber: Scrubber,
    out_root: PathBuf,
    version: semver::Version,
    reported_as: Option<String>,
    /// The agent reported another version: nothing is written.
    mismatch: Option<TimelineError>,
    pending: Vec<(u64, Tapped)>,
    writer: Option<RecordingWriter>,
    error: Option<RecordingError>,
}

impl State {
    async fn run(
        mut self,
        mut tap_rx: UnboundedReceiver<Tapped>,
        mut control_rx: UnboundedReceiver<Control>,
    ) {
        loop {
            tokio::select! {
                biased;
                Some(event) = tap_rx.recv() => {
                    self.event(event);
                    // a batch goes to disk once nothing more is queued
                    if tap_rx.is_empty() {
                        self.flush();
                    }
                }
                Some(control) = control_rx.recv() => match control {
                    Control::AgentInfo { agent_info, protocol_version } => {
                        self.header.agent_info = agent_info;
                        if let Some(v) = protocol_version {
                            self.header.protocol_version = v;
                            // the frames are judged against the negotiated revision's schema
                            if self.header.acp_schema.is_some() {
                                self.header.acp_schema = Some(
                                    crate::judging::acp_schema::schema::version_for(v).into(),
                                );
                            }
                        }
                        self.mismatch = self.version_mismatch();
                        self.open();
                    }
                    Control::Finish { outcome, exit, notes, done } => {
                        // Everything already sent is written before the trailer.
                        while let Ok(event) = tap_rx.try_recv() {
                            self.event(event);
                        }
                        let _ = done.send(self.finish(outcome, exit, notes));
                        return;
                    }
                },
                else => return,
            }
        }
    }

    fn ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    fn event(&mut self, event: Tapped) {
        let ms = self.ms();
        if self.writer.is_some() {
            self.write(ms, event);
        } else {
            self.pending.push((ms, event));
        }
    }

    fn write(&mut self, ms: u64, event: Tapped) {
        let Some(writer) = self.writer.as_mut() else {
            return;
        };
        let raw = self.scrubber.scrub_owned(event.raw);
        let http = event.http.map(|h| self.scrubber.scrub_http(h));
        if let Err(e) = writer.event(ms, event.leg, event.dir, event.proc, raw, http)
            && self.error.is_none()
        {
            self.error = Some(e);
        }
    }

    fn flush(&mut self) {
        if let Some(writer) = self.writer.as_mut()
            && let Err(e) = writer.flush()
            && self.error.is_none()
        {
            self.error = Some(e);
        }
    }

    fn path(&self) -> PathBuf {
        self.out_root
            .join(&self.header.agent)
            .join(self.version.to_string())
            .join(format!("{}.jsonl", self.header.scenario))
    }

    /// The error when the agent reports a version other than the one asked
    /// for (or the one the profile says it reports).
    fn version_mismatch(&self) -> Option<TimelineError> {
        let reported = self.header.agent_version()?;
        if reports_version(reported, &self.version, self.reported_as.as_deref()) {
            return None;
        }
        Some(TimelineError::VersionMismatch {
            agent: self.header.agent.clone(),
            asked: self.version.to_string(),
            reported: reported.chars().take(200).collect(),
        })
    }

    fn open(&mut self) {
        if self.writer.is_some() || self.mismatch.is_some() {
            return;
        }
        let path = self.path();
        match RecordingWriter::create(&path, &self.header) {
            Ok(w) => {
                eprintln!(
                    "[record] writing {} (as {} until it is complete)",
                    display_rel(&path),
                    display_rel(w.temp_path())
                );
                self.writer = Some(w);
                for (ms, event) in std::mem::take(&mut self.pending) {
                    self.write(ms, event);
                }
                self.flush();
            }
            Err(e) => self.error = Some(e),
        }
    }

    fn finish(
        mut self,
        outcome: Outcome,
        exit: Exit,
        notes: Vec<String>,
    ) -> Result<Finished, TimelineError> {
        self.open();
        if let Some(e) = self.mismatch.take() {
            return Err(e);
        }
        if let Some(e) = self.error.take() {
            return Err(e.into());
        }
        let ms = self.ms();
        let notes = notes.iter().map(|n| self.scrubber.scrub(n)).collect();
        let finished = match self.writer.take() {
            Some(w) => w.finish(ms, outcome, exit, notes),
            None => Err(RecordingError::Io {
                path: self.path(),
                source: std::io::Error::other("recording was never opened"),
            }),
        };
        Ok(finished?)
    }
}

/// Whether an agent reporting `reported` is version `asked`: the same
/// version, or the string the profile says `asked` reports.
fn reports_version(reported: &str, asked: &semver::Version, reported_as: Option<&str>) -> bool {
    // build metadata marks the directory (`+acp2`), never the agent's version
    reported_as == Some(reported)
        || semver::Version::parse(reported.trim_start_matches('v'))
            .is_ok_and(|v| v.cmp_precedence(asked).is_eq())
}

fn display_rel(path: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(|p| p.display().to_string()))
        .unwrap_or_else(|| path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::reports_version;

    #[test]
    fn an_agent_is_the_version_it_reports_or_the_one_its_profile_maps() {
        let asked = semver::Version::parse("1.0.1").unwrap();
        let cases = [
            ("1.0.1", None, true),
            ("v1.0.1", None, true),
            ("1.0.0", None, false),
            ("1.0.1-beta", None, false),
            ("../../x", None, false),
            ("1.0.0", Some("1.0.0"), true),
            ("1.0.1", Some("1.0.0"), true),
            ("1.0.2", Some("1.0.0"), false),
        ];
        for (reported, mapped, expected) in cases {
            assert_eq!(
                reports_version(reported, &asked, mapped),
                expected,
                "{reported} for 1.0.1 (mapped: {mapped:?})"
            );
        }
    }
}
