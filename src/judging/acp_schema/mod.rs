//! ACP frames checked against the official ACP v1 JSON schema
//! (`schema/acp-v1/`): every frame of a recording's ACP leg, and what the
//! bridge sends to the agent in a replay. Validation is the `jsonschema`
//! crate's; this module only picks the definition each frame must match.

pub mod classify;
pub mod matrix;
pub mod schema;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap};

pub use classify::{Classifier, FrameCheck, Sender, Verdict};
pub use schema::{AcpSchema, SchemaError, Violation};

use crate::corpus::recording::{Dir, Event, Leg, Recording};
use crate::judging::replay::transcript::{Entry, Transcript};

/// Every frame of `recording`'s ACP leg, checked in order (ids tracked per
/// agent process).
pub fn check_recording(schema: &AcpSchema, recording: &Recording) -> Vec<FrameCheck> {
    let mut frames = RecordedFrames::default();
    recording
        .events
        .iter()
        .filter_map(|e| frames.check(schema, e))
        .collect()
}

/// The recorded ACP frames checked one event at a time (a recording read
/// line by line checks them on the way), ids tracked per agent process.
#[derive(Default)]
pub struct RecordedFrames {
    conversations: HashMap<u32, Classifier>,
}

impl RecordedFrames {
    /// `e` checked (`None`: not an ACP frame).
    pub fn check(&mut self, schema: &AcpSchema, e: &Event) -> Option<FrameCheck> {
        if e.leg != Leg::Acp {
            return None;
        }
        let sender = match e.dir {
            Dir::ToAgent => Sender::Client,
            Dir::FromAgent => Sender::Agent,
            _ => return None,
        };
        let classifier = self.conversations.entry(e.proc.max(1)).or_default();
        Some(classifier.check(schema, sender, &e.raw))
    }
}

/// The frames the bridge sent to the agent in a replay, checked (the agent's
/// frames are read only to match the bridge's responses to their requests).
pub fn check_bridge_frames(schema: &AcpSchema, transcript: &Transcript) -> Vec<FrameCheck> {
    let mut frames = BridgeFrames::default();
    transcript
        .entries
        .iter()
        .filter_map(|entry| frames.check(schema, entry))
        .collect()
}

/// The frames the bridge sends to the agent in a replay, checked one entry
/// at a time as the replay goes.
#[derive(Default)]
pub struct BridgeFrames {
    classifier: Classifier,
}

impl BridgeFrames {
    /// `entry` checked when it is a bridge frame to the agent (`None`
    /// otherwise; an agent frame is noted to match the bridge's responses).
    pub fn check(&mut self, schema: &AcpSchema, entry: &Entry) -> Option<FrameCheck> {
        match entry {
            Entry::BridgeToAgent(line) => Some(self.classifier.check(schema, Sender::Client, line)),
            Entry::AgentToBridge(line) => {
                self.classifier.note(Sender::Agent, line);
                None
            }
            _ => None,
        }
    }
}

/// Frames counted by verdict, violations and outside methods by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub frames: usize,
    pub valid: usize,
    pub invalid: usize,
    pub outside: usize,
    /// (method, pointer, message) -> frames.
    pub violations: BTreeMap<(String, String, String), usize>,
    /// method (or why there is none) -> frames outside the schema.
    pub outside_methods: BTreeMap<String, usize>,
}

impl Tally {
    pub fn add(&mut self, check: &FrameCheck) {
        self.frames += 1;
        let method = check.method.clone().unwrap_or_else(|| "(no method)".into());
        match &check.verdict {
            Verdict::Valid => self.valid += 1,
            Verdict::Invalid(violations) => {
                self.invalid += 1;
                for v in violations {
                    *self
                        .violations
                        .entry((method.clone(), v.pointer.clone(), v.message.clone()))
                        .or_default() += 1;
                }
            }
            Verdict::Outside(why) => {
                self.outside += 1;
                let key = match &check.method {
                    Some(m) => m.clone(),
                    None => format!("({why})"),
                };
                *self.outside_methods.entry(key).or_default() += 1;
            }
        }
    }

    pub fn merge(&mut self, other: &Tally) {
        self.frames += other.frames;
        self.valid += other.valid;
        self.invalid += other.invalid;
        self.outside += other.outside;
        for (k, n) in &other.violations {
            *self.violations.entry(k.clone()).or_default() += n;
        }
        for (k, n) in &other.outside_methods {
            *self.outside_methods.entry(k.clone()).or_default() += n;
        }
    }
}

/// One recording's frames against the schema, by side.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordingConformance {
    /// What the recorded agent sent.
    pub agent: Tally,
    /// What the recorder's client sent.
    pub client: Tally,
    /// What the bridge sent to the agent in the replay (`None`: not replayed).
    pub bridge: Option<Tally>,
}

impl RecordingConformance {
    /// The recorded frames of both sides, counted.
    pub fn of_recording(schema: &AcpSchema, recording: &Recording) -> RecordingConformance {
        let mut out = RecordingConformance::default();
        for check in check_recording(schema, recording) {
            out.add(&check);
        }
        out
    }

    /// The recorded frames of both sides of a recording read one event at a
    /// time ([`crate::corpus::recording::Reader`]), counted; the first
    /// error reading it.
    pub fn of_events<E>(
        schema: &AcpSchema,
        events: impl IntoIterator<Item = Result<Event, E>>,
    ) -> Result<RecordingConformance, E> {
        let mut frames = RecordedFrames::default();
        let mut out = RecordingConformance::default();
        for event in events {
            if let Some(check) = frames.check(schema, &event?) {
                out.add(&check);
            }
        }
        Ok(out)
    }

    /// Counts one recorded frame's check.
    pub fn add(&mut self, check: &FrameCheck) {
        match check.sender {
            Sender::Agent => self.agent.add(check),
            Sender::Client => self.client.add(check),
        }
    }

    /// The bridge's violations, one line each (`None`: there are none).
    pub fn bridge_violations(&self) -> Option<Vec<String>> {
        let bridge = self.bridge.as_ref().filter(|b| b.invalid > 0)?;
        Some(
            bridge
                .violations
                .iter()
                .map(|((method, pointer, message), n)| {
                    let pointer = if pointer.is_empty() { "/" } else { pointer };
                    format!("{method} at {pointer}: {message} ({n} frame(s))")
                })
                .collect(),
        )
    }

    /// Adds the bridge's frames of a replay.
    pub fn with_bridge(mut self, schema: &AcpSchema, transcript: &Transcript) -> Self {
        let mut tally = Tally::default();
        for check in check_bridge_frames(schema, transcript) {
            tally.add(&check);
        }
        self.bridge = Some(tally);
        self
    }

    /// Adds the bridge's frames of a replay, counted as it went.
    pub fn with_bridge_tally(mut self, tally: Tally) -> Self {
        self.bridge = Some(tally);
        self
    }
}
