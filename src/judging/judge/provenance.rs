//! Whether each turn's answer came from the model: a prompt the agent
//! answers without asking its model at all (it answers a queued or stale
//! result, or text of its own) played nothing of its scenario, however right
//! the panel output looks. Judged on the recording's own legs: between a
//! `session/prompt` and its successful result, the model leg holds a request.

use std::collections::HashMap;

use serde_json::Value;

use crate::corpus::recording::{Dir, Event, Header, Leg, Recording};
use crate::judging::expect::Failure;

/// The expectation's name, as known-limitation entries list it.
pub const ANSWERED_BY_THE_MODEL: &str = "answered_by_the_model";

/// One failure naming every prompt that ended with a stop reason other than
/// `cancelled` and no model request between it and its result. Recordings
/// that cannot say are not judged: synthetic ones, `--model live` ones, and
/// those whose model leg holds no request at all (an agent that never asks a
/// model; a run that asked none ended `incomplete` when it was recorded).
pub fn unanswered_turns(recording: &Recording) -> Option<Failure> {
    let mut turns = Turns::default();
    for e in &recording.events {
        turns.observe(e);
    }
    turns.finish(&recording.header)
}

/// What [`unanswered_turns`] reads of a recording, gathered one event at a
/// time.
#[derive(Debug, Default)]
pub struct Turns {
    /// The seq of each model request so far.
    model_requests: Vec<u64>,
    /// (proc, id) of each prompt request -> its seq
    open: HashMap<(u32, String), u64>,
    unanswered: Vec<String>,
}

impl Turns {
    pub fn observe(&mut self, e: &Event) {
        match e.leg {
            Leg::Model => {
                let post = e
                    .http
                    .as_ref()
                    .and_then(|h| h.method.as_deref())
                    .is_none_or(|m| m.eq_ignore_ascii_case("POST"));
                if e.dir == Dir::Request && post {
                    self.model_requests.push(e.seq);
                }
            }
            Leg::Acp => self.observe_acp(e),
            _ => {}
        }
    }

    fn observe_acp(&mut self, e: &Event) {
        // only prompts and prompt results are parsed, not every update
        let relevant = match e.dir {
            Dir::ToAgent => e.raw.contains("session/prompt"),
            _ => e.raw.contains("stopReason"),
        };
        if !relevant {
            return;
        }
        let Ok(frame) = serde_json::from_str::<Value>(&e.raw) else {
            return;
        };
        let id = frame.get("id").map(Value::to_string);
        match (e.dir, id) {
            (Dir::ToAgent, Some(id)) if frame["method"] == "session/prompt" => {
                self.open.insert((e.proc, id), e.seq);
            }
            (Dir::FromAgent, Some(id)) if frame.get("method").is_none() => {
                let Some(sent) = self.open.remove(&(e.proc, id.clone())) else {
                    return;
                };
                let Some(stop) = frame["result"]["stopReason"].as_str() else {
                    return; // an error answer: the result expectations judge it
                };
                if stop == "cancelled" {
                    return;
                }
                // every model request before this result has been seen
                let asked = self
                    .model_requests
                    .iter()
                    .any(|s| (sent..e.seq).contains(s));
                if !asked {
                    self.unanswered.push(format!(
                        "session/prompt id {id} (seq {sent}) returned {stop:?} at seq {} with no model request between",
                        e.seq
                    ));
                }
            }
            _ => {}
        }
    }

    /// The failure, once every event has been observed.
    pub fn finish(self, h: &Header) -> Option<Failure> {
        if h.synthetic || h.model_mode != "stub" || self.model_requests.is_empty() {
            return None;
        }
        if self.unanswered.is_empty() {
            return None;
        }
        let unanswered = self.unanswered;
        Some(Failure {
            line: 0,
            expectation: ANSWERED_BY_THE_MODEL.to_owned(),
            why: "every prompt the agent answers is answered from its model: the scenario scripts the model's replies, so an answer made without asking plays nothing of it".to_owned(),
            expected: "a model request between each session/prompt and its result".to_owned(),
            came: format!("{} prompt(s) answered without one", unanswered.len()),
            items: unanswered,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recording(lines: &[&str]) -> Recording {
        let header = r#"{"type":"header","format":1,"agent":"a","agent_info":null,"package":"","argv":[],"scenario":"s","scenario_sha256":"x","model_mode":"stub","harness_version":"0","client_capabilities":null,"protocol_version":1,"date":"2026-01-01","isolation":"none","placeholders":{}}"#;
        let mut text = format!("{header}\n");
        for (i, l) in lines.iter().enumerate() {
            text.push_str(&l.replace("SEQ", &(i + 1).to_string()));
            text.push('\n');
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, text).unwrap();
        crate::corpus::recording::read(&path).unwrap()
    }

    const PROMPT: &str = r#"{"type":"event","seq":SEQ,"ms":1,"leg":"acp","dir":"to_agent","proc":1,"raw":"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/prompt\",\"params\":{}}"}"#;
    const MODEL: &str = r#"{"type":"event","seq":SEQ,"ms":1,"leg":"model","dir":"request","proc":0,"raw":"{}","http":{"method":"POST","path":"/v1/messages"}}"#;
    const PROBE: &str = r#"{"type":"event","seq":SEQ,"ms":1,"leg":"model","dir":"request","proc":0,"raw":"","http":{"method":"HEAD","path":"/"}}"#;
    const END_TURN: &str = r#"{"type":"event","seq":SEQ,"ms":1,"leg":"acp","dir":"from_agent","proc":1,"raw":"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"stopReason\":\"end_turn\"}}"}"#;
    const CANCELLED: &str = r#"{"type":"event","seq":SEQ,"ms":1,"leg":"acp","dir":"from_agent","proc":1,"raw":"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"stopReason\":\"cancelled\"}}"}"#;

    #[test]
    fn a_prompt_is_answered_by_the_model_when_a_model_request_falls_inside_its_turn() {
        let cases: &[(&str, &[&str], bool)] = &[
            ("asked", &[PROMPT, MODEL, END_TURN], true),
            (
                "asked only after the result",
                &[MODEL, PROMPT, END_TURN, MODEL],
                false,
            ),
            (
                "a probe is not a model request",
                &[MODEL, PROMPT, PROBE, END_TURN],
                false,
            ),
            (
                "a cancelled prompt is not judged",
                &[MODEL, PROMPT, CANCELLED],
                true,
            ),
            (
                "an agent that never asks a model is not judged",
                &[PROMPT, END_TURN],
                true,
            ),
        ];
        for (case, lines, answered) in cases {
            let got = unanswered_turns(&recording(lines));
            assert_eq!(got.is_none(), *answered, "{case}: {got:?}");
        }
    }
}
