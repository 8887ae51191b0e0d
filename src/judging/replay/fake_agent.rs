//! The fake agent: serves the `acp` leg of one recorded agent process to a
//! client (the bridge in-process, or any ACP client on stdio).
//!
//! Each frame the client sends is matched to the next unconsumed recorded
//! client frame of the same kind and method (a response: the one answering the
//! same agent request id). The recorded agent frames that follow it are then
//! released in order until the next recorded client frame: that is where the
//! recorded agent waited on its client again. JSON-RPC ids of client requests
//! are remapped both ways; the agent's own request ids pass through.

use std::collections::{BTreeMap, HashMap, VecDeque};

use serde_json::Value;

use super::divergence::{Closest, Divergence, VarEquivalence, diff_frames};
use crate::corpus::recording::RecordingError;

/// Which way a recorded ACP frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Client (recorder, standing in for the bridge) to agent.
    ToAgent,
    /// Agent to client.
    FromAgent,
}

/// One recorded line of the `acp` leg, as the replayer needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcpFrame {
    pub seq: u64,
    pub ms: u64,
    pub dir: Direction,
    pub raw: String,
}

/// An agent line to hand to the client, with the recorded time it was sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Released {
    pub seq: u64,
    pub ms: u64,
    pub line: String,
    /// `line` parsed (`None`: not JSON), so the transcript's render reads
    /// it without parsing the line again.
    pub value: Option<Value>,
}

/// What one client line produced.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Served {
    pub released: Vec<Released>,
    pub divergences: Vec<Divergence>,
}

/// The JSON-RPC shape of a frame.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Request { method: String, id: Value },
    Notification { method: String },
    Response { id: Value },
    Other,
}

impl Kind {
    fn of(v: &Value) -> Kind {
        let method = v.get("method").and_then(Value::as_str);
        let id = v.get("id").filter(|id| !id.is_null());
        match (method, id) {
            (Some(m), Some(id)) => Kind::Request {
                method: m.to_string(),
                id: id.clone(),
            },
            (Some(m), None) => Kind::Notification {
                method: m.to_string(),
            },
            (None, Some(id)) if v.get("result").is_some() || v.get("error").is_some() => {
                Kind::Response { id: id.clone() }
            }
            _ => Kind::Other,
        }
    }

    /// Whether a recorded client frame of kind `self` can stand for `sent`.
    fn matches(&self, sent: &Kind) -> bool {
        match (self, sent) {
            (Kind::Request { method: a, .. }, Kind::Request { method: b, .. }) => a == b,
            (Kind::Notification { method: a }, Kind::Notification { method: b }) => a == b,
            (Kind::Response { id: a }, Kind::Response { id: b }) => a == b,
            _ => false,
        }
    }

    fn method(&self) -> Option<&str> {
        match self {
            Kind::Request { method, .. } | Kind::Notification { method } => Some(method),
            _ => None,
        }
    }

    fn describe(&self) -> String {
        match self {
            Kind::Request { method, id } => format!("request {method} (id {id})"),
            Kind::Notification { method } => format!("notification {method}"),
            Kind::Response { id } => format!("response to agent request {id}"),
            Kind::Other => "JSON that is not JSON-RPC".to_string(),
        }
    }
}

/// A recorded client frame, parsed once.
struct Slot {
    frame: AcpFrame,
    /// The frame parsed (`None`: not JSON).
    parsed: Option<Value>,
    kind: Kind,
    /// Matched by a line the client sent.
    done: bool,
}

/// Where the recorded agent frames come from, in recorded order: a
/// recording in memory, or one read again from its file so that only the
/// frames not yet due are held.
pub type AgentFrames<'a> = Box<dyn Iterator<Item = Result<AcpFrame, RecordingError>> + 'a>;

/// Serves one recorded agent process. The client frames are all held (a
/// line the client sends may match any of them); the agent frames are read
/// on as they are released. The agent frames between two client frames form
/// a segment, due when the client frame before it is matched and read one
/// frame at a time as it is served ([`FakeAgent::next_released`]); a
/// segment passed over (its client frame not matched yet) waits in
/// `pending`, so memory is bounded by what the client has not asked for,
/// not by how long a segment is (a streamed answer of a million chunks).
pub struct FakeAgent<'a> {
    client: Vec<Slot>,
    /// Segment `k` holds the agent frames after client frame `k - 1` and
    /// before client frame `k`; `released[k]` says it went out.
    released: Vec<bool>,
    agent: AgentFrames<'a>,
    /// The next agent frame read and not yet due, with its segment.
    peeked: Option<(usize, AcpFrame)>,
    /// Agent frames of segments passed over, by segment.
    pending: BTreeMap<usize, VecDeque<AcpFrame>>,
    /// Segments released and not yet served to their end, in release order.
    due: VecDeque<usize>,
    /// Recorded agent frames in all, and those released.
    agent_total: usize,
    agent_released: usize,
    /// Reading the agent frames failed (the file changed under the replay).
    read_error: Option<String>,
    /// Recorded client request id (as JSON text) -> the id the client used.
    ids: HashMap<String, Value>,
    /// Recorded client request ids, to spot responses to requests never sent.
    recorded_request_ids: HashMap<String, u64>,
    eq: VarEquivalence,
    started: bool,
}

#[cfg(test)]
impl FakeAgent<'static> {
    /// Serves a leg held in memory (the tests' agent; a replay serves its
    /// recording through `Source::fake_agent`).
    pub fn new(frames: Vec<AcpFrame>) -> FakeAgent<'static> {
        let (client, agent): (Vec<_>, Vec<_>) = frames
            .into_iter()
            .partition(|f| f.dir == Direction::ToAgent);
        let total = agent.len();
        FakeAgent::streaming(client, total, Box::new(agent.into_iter().map(Ok)))
    }
}

impl<'a> FakeAgent<'a> {
    /// Serves `client` (every recorded client frame, in order) and the
    /// `agent_total` agent frames `agent` yields in recorded order.
    pub fn streaming(
        client: Vec<AcpFrame>,
        agent_total: usize,
        agent: AgentFrames<'a>,
    ) -> FakeAgent<'a> {
        let mut recorded_request_ids = HashMap::new();
        let client: Vec<Slot> = client
            .into_iter()
            .map(|frame| {
                let parsed = serde_json::from_str::<Value>(&frame.raw).ok();
                let kind = parsed.as_ref().map(Kind::of).unwrap_or(Kind::Other);
                if let Kind::Request { id, .. } = &kind {
                    recorded_request_ids.insert(id.to_string(), frame.seq);
                }
                Slot {
                    frame,
                    parsed,
                    kind,
                    done: false,
                }
            })
            .collect();
        FakeAgent {
            released: vec![false; client.len() + 1],
            client,
            agent,
            peeked: None,
            pending: BTreeMap::new(),
            due: VecDeque::new(),
            agent_total,
            agent_released: 0,
            read_error: None,
            ids: HashMap::new(),
            recorded_request_ids,
            eq: VarEquivalence::default(),
            started: false,
        }
    }

    /// Agent frames recorded before the client's first frame (sent unprompted).
    pub fn start(&mut self) -> Served {
        let mut served = self.start_due();
        self.serve_due(&mut served);
        served
    }

    /// [`FakeAgent::start`], leaving what it releases due
    /// ([`FakeAgent::next_released`]).
    pub fn start_due(&mut self) -> Served {
        self.started = true;
        self.release_segment(0);
        Served::default()
    }

    /// Takes one line the client sent; returns the agent lines it unlocks and
    /// any divergence from the recording.
    pub fn on_client_line(&mut self, line: &str) -> Served {
        let mut served = self.on_client_line_due(line);
        self.serve_due(&mut served);
        served
    }

    /// Moves every due agent line into `served`.
    fn serve_due(&mut self, served: &mut Served) {
        while let Some(r) = self.next_released(&mut served.divergences) {
            served.released.push(r);
        }
    }

    /// [`FakeAgent::on_client_line`], leaving the agent lines it unlocks
    /// due ([`FakeAgent::next_released`]): a replay takes them one at a time.
    pub fn on_client_line_due(&mut self, line: &str) -> Served {
        let mut served = if self.started {
            Served::default()
        } else {
            self.start_due()
        };
        let sent: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                served.divergences.push(Divergence::NotJsonRpc {
                    line: line.to_string(),
                    why: e.to_string(),
                });
                return served;
            }
        };
        let kind = Kind::of(&sent);
        if kind == Kind::Other {
            served.divergences.push(Divergence::NotJsonRpc {
                line: line.to_string(),
                why: "no method and no result/error".into(),
            });
            return served;
        }
        let found = self
            .client
            .iter()
            .position(|s| !s.done && s.kind.matches(&kind));
        let Some(i) = found else {
            served.divergences.push(Divergence::Unmatched {
                what: kind.describe(),
                closest: self.closest(&sent, &kind),
            });
            return served;
        };
        self.client[i].done = true;
        let recorded = self.client[i]
            .parsed
            .clone()
            .expect("a matched frame was parsed");
        let mut diffs = diff_frames(&recorded, &sent, &["id"], &mut self.eq);
        // the client's own version (a v2 `initialize`'s `info.version`) is
        // not the agent's behaviour: a newer bridge replays older recordings
        diffs.retain(|d| d.pointer != "/params/info/version");
        if !diffs.is_empty() {
            served.divergences.push(Divergence::Differs {
                what: kind.describe(),
                recorded_seq: self.client[i].frame.seq,
                diffs,
            });
        }
        if let (Kind::Request { id: rec_id, .. }, Kind::Request { id: sent_id, .. }) =
            (&self.client[i].kind, &kind)
        {
            self.ids.insert(rec_id.to_string(), sent_id.clone());
        }
        self.release_segment(i + 1);
        served
    }

    /// The segment an agent frame of `seq` belongs to.
    fn segment_of(&self, seq: u64) -> usize {
        self.client.partition_point(|s| s.frame.seq < seq)
    }

    /// The next agent frame of segment `k` (`None`: the segment is over):
    /// those passed over earlier, then those read on up to the first frame
    /// of a later segment. The file holds segments in order, so a frame read
    /// on belongs to `k`, to a later segment (kept for it) or to an earlier
    /// one not released yet (kept in `pending`).
    fn next_of_segment(&mut self, k: usize) -> Option<AcpFrame> {
        if let Some(frames) = self.pending.get_mut(&k) {
            if let Some(f) = frames.pop_front() {
                return Some(f);
            }
            self.pending.remove(&k);
        }
        loop {
            let next = match self.peeked.take() {
                Some(p) => Some(p),
                None if self.read_error.is_some() => None,
                None => match self.agent.next() {
                    Some(Ok(f)) => Some((self.segment_of(f.seq), f)),
                    Some(Err(e)) => {
                        self.read_error = Some(e.to_string());
                        None
                    }
                    None => None,
                },
            };
            let (segment, frame) = next?;
            if segment > k {
                self.peeked = Some((segment, frame));
                return None;
            }
            if segment == k {
                return Some(frame);
            }
            self.pending.entry(segment).or_default().push_back(frame);
        }
    }

    /// Makes segment `k` due (once).
    fn release_segment(&mut self, k: usize) {
        if !std::mem::replace(&mut self.released[k], true) {
            self.due.push_back(k);
        }
    }

    /// The next agent line due, in the order the segments were released
    /// and then recorded (`None`: nothing is due); a divergence it shows
    /// (a response to a request the client never sent) goes to `divergences`.
    pub fn next_released(&mut self, divergences: &mut Vec<Divergence>) -> Option<Released> {
        let frame = loop {
            let k = *self.due.front()?;
            match self.next_of_segment(k) {
                Some(frame) => break frame,
                None => {
                    self.due.pop_front();
                }
            }
        };
        self.agent_released += 1;
        let mut line = frame.raw;
        let mut value = serde_json::from_str::<Value>(&line).ok();
        let kind = value.as_ref().map(Kind::of).unwrap_or(Kind::Other);
        if let (Kind::Response { id }, Some(v)) = (&kind, &mut value) {
            let key = id.to_string();
            match self.ids.get(&key) {
                Some(sent_id) if sent_id != id => {
                    v["id"] = sent_id.clone();
                    line = serde_json::to_string(v).unwrap_or(line);
                }
                Some(_) => {}
                None if self.recorded_request_ids.contains_key(&key) => {
                    divergences.push(Divergence::OrphanResponse {
                        recorded_seq: frame.seq,
                        recorded_id: id.clone(),
                    });
                }
                None => {}
            }
        }
        Some(Released {
            seq: frame.seq,
            ms: frame.ms,
            line,
            value,
        })
    }

    /// The recorded client frame most like `sent`: same method first, then
    /// not yet matched, then fewest differing fields.
    fn closest(&self, sent: &Value, kind: &Kind) -> Option<Closest> {
        self.client
            .iter()
            .filter_map(|s| {
                let parsed = s.parsed.as_ref()?;
                let mut eq = VarEquivalence::default();
                let diffs = diff_frames(parsed, sent, &["id"], &mut eq);
                let same_method = s.kind.method().is_some() && s.kind.method() == kind.method();
                let same_shape = std::mem::discriminant(&s.kind) == std::mem::discriminant(kind);
                Some(((!same_method, !same_shape, s.done, diffs.len()), s, diffs))
            })
            .min_by_key(|(score, s, _)| (*score, s.frame.seq))
            .map(|(_, s, diffs)| Closest {
                what: s.kind.describe(),
                recorded_seq: s.frame.seq,
                diffs,
            })
    }

    /// Recorded client frames the client never sent, as divergences.
    pub fn never_sent(&self) -> Vec<Divergence> {
        self.client
            .iter()
            .filter(|s| !s.done)
            .map(|s| Divergence::NeverSent {
                what: match s.kind {
                    Kind::Other => format!(
                        "unparsable client line {:?}",
                        super::divergence::shorten(&s.frame.raw, 60)
                    ),
                    ref k => k.describe(),
                },
                recorded_seq: s.frame.seq,
            })
            .collect()
    }

    /// How many recorded agent frames were never released.
    pub fn unreleased(&self) -> usize {
        self.agent_total.saturating_sub(self.agent_released)
    }

    /// Whether every recorded frame was matched or released.
    pub fn finished(&self) -> bool {
        self.client.iter().all(|s| s.done) && self.unreleased() == 0
    }

    /// Why the agent frames could not be read on (`None`: they could).
    pub fn read_error(&self) -> Option<&str> {
        self.read_error.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-written acp leg (a test double for a recording).
    fn leg(frames: &[(Direction, &str)]) -> Vec<AcpFrame> {
        frames
            .iter()
            .enumerate()
            .map(|(i, (dir, raw))| AcpFrame {
                seq: i as u64 + 1,
                ms: 10 * i as u64,
                dir: *dir,
                raw: raw.to_string(),
            })
            .collect()
    }

    use Direction::{FromAgent as A, ToAgent as C};

    #[test]
    fn a_released_frame_carries_its_line_parsed_also_when_its_id_is_remapped() {
        let mut fake = FakeAgent::new(leg(&[
            (
                C,
                r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}"#,
            ),
            (A, r#"{"jsonrpc":"2.0","id":7,"result":{"v":1.5e300}}"#),
            (
                A,
                r#"{"method":"session/update","params":{"d":"\u00e9\/"}}"#,
            ),
            (A, "not json"),
            (
                C,
                r#"{"jsonrpc":"2.0","id":8,"method":"session/new","params":{}}"#,
            ),
            (A, r#"{"jsonrpc":"2.0","id":8,"result":{"sessionId":"s"}}"#),
        ]));
        let mut released = fake
            .on_client_line(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#)
            .released;
        released.extend(
            fake.on_client_line(r#"{"jsonrpc":"2.0","id":8,"method":"session/new","params":{}}"#)
                .released,
        );
        assert_eq!(released.len(), 4);
        assert!(released[0].line.contains(r#""id":0"#), "remapped");
        for r in &released {
            assert_eq!(
                r.value,
                serde_json::from_str::<Value>(&r.line).ok(),
                "{}",
                r.line
            );
        }
    }

    fn lines(s: &Served) -> Vec<&str> {
        s.released.iter().map(|r| r.line.as_str()).collect()
    }

    #[test]
    fn a_request_releases_the_agent_frames_up_to_the_next_client_frame_with_its_id_remapped() {
        let mut fake = FakeAgent::new(leg(&[
            (
                C,
                r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1}}"#,
            ),
            (
                A,
                r#"{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":1}}"#,
            ),
            (
                C,
                r#"{"jsonrpc":"2.0","id":8,"method":"session/new","params":{}}"#,
            ),
            (A, r#"{"jsonrpc":"2.0","id":8,"result":{"sessionId":"s"}}"#),
            (
                A,
                r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#,
            ),
        ]));
        let s = fake.on_client_line(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#,
        );
        assert_eq!(
            lines(&s),
            [r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#]
        );
        assert!(s.divergences.is_empty());
        let s =
            fake.on_client_line(r#"{"jsonrpc":"2.0","id":8,"method":"session/new","params":{}}"#);
        assert_eq!(s.released.len(), 2);
        assert_eq!(
            s.released[0].line, r#"{"jsonrpc":"2.0","id":8,"result":{"sessionId":"s"}}"#,
            "same id: byte-faithful"
        );
        assert!(fake.finished());
    }

    #[test]
    fn agent_request_ids_pass_through_and_the_answer_is_matched_by_that_id() {
        let mut fake = FakeAgent::new(leg(&[
            (
                C,
                r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{}}"#,
            ),
            (
                A,
                r#"{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{}}"#,
            ),
            (
                C,
                r#"{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}"#,
            ),
            (
                A,
                r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#,
            ),
        ]));
        let s = fake
            .on_client_line(r#"{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{}}"#);
        assert_eq!(
            lines(&s),
            [r#"{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{}}"#]
        );
        let s = fake.on_client_line(r#"{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"reject_once"}}}"#);
        assert_eq!(
            lines(&s),
            [r#"{"jsonrpc":"2.0","id":5,"result":{"stopReason":"end_turn"}}"#]
        );
        assert_eq!(s.divergences.len(), 1);
        assert_eq!(
            s.divergences[0].details()[0].pointer,
            "/result/outcome/optionId"
        );
    }

    #[test]
    fn an_unrecorded_request_is_a_divergence_naming_the_closest_recorded_frame_and_releases_nothing()
     {
        let mut fake = FakeAgent::new(leg(&[
            (
                C,
                r#"{"jsonrpc":"2.0","id":1,"method":"session/set_mode","params":{"modeId":"auto"}}"#,
            ),
            (A, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
        ]));
        let s = fake.on_client_line(
            r#"{"jsonrpc":"2.0","id":1,"method":"session/set_model","params":{"modelId":"m"}}"#,
        );
        assert!(s.released.is_empty());
        match &s.divergences[..] {
            [
                Divergence::Unmatched {
                    closest: Some(c), ..
                },
            ] => {
                assert_eq!(c.recorded_seq, 1);
                let pointers: Vec<&str> = c.diffs.iter().map(|d| d.pointer.as_str()).collect();
                assert_eq!(pointers, ["/method", "/params/modeId", "/params/modelId"]);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(fake.never_sent().len(), 1);
        assert_eq!(fake.unreleased(), 1);
    }

    #[test]
    fn a_line_that_is_not_json_is_reported_not_fatal() {
        let mut fake = FakeAgent::new(leg(&[(
            C,
            r#"{"jsonrpc":"2.0","method":"session/cancel","params":{}}"#,
        )]));
        let s = fake.on_client_line("not json");
        assert!(matches!(s.divergences[..], [Divergence::NotJsonRpc { .. }]));
        let s = fake.on_client_line(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{}}"#);
        assert!(s.divergences.is_empty());
        assert!(fake.finished());
    }

    #[test]
    fn a_segment_passed_over_waits_until_its_client_frame_comes_and_a_read_error_is_kept_not_fatal()
    {
        let frames = leg(&[
            (C, r#"{"jsonrpc":"2.0","method":"a","params":{}}"#),
            (A, r#"{"jsonrpc":"2.0","method":"after_a","params":{}}"#),
            (C, r#"{"jsonrpc":"2.0","method":"b","params":{}}"#),
            (A, r#"{"jsonrpc":"2.0","method":"after_b","params":{}}"#),
            (A, r#"{"jsonrpc":"2.0","method":"after_b2","params":{}}"#),
        ]);
        let mut fake = FakeAgent::new(frames.clone());
        let s = fake.on_client_line(r#"{"jsonrpc":"2.0","method":"b","params":{}}"#);
        assert_eq!(lines(&s).len(), 2);
        assert!(lines(&s)[0].contains("after_b"));
        assert_eq!(fake.unreleased(), 1);
        let s = fake.on_client_line(r#"{"jsonrpc":"2.0","method":"a","params":{}}"#);
        assert_eq!(
            lines(&s),
            [r#"{"jsonrpc":"2.0","method":"after_a","params":{}}"#]
        );
        assert!(fake.finished());

        let (client, agent): (Vec<_>, Vec<_>) = frames
            .into_iter()
            .partition(|f| f.dir == Direction::ToAgent);
        let broken =
            agent
                .into_iter()
                .take(1)
                .map(Ok)
                .chain(std::iter::once(Err(RecordingError::Empty {
                    path: "gone.jsonl".into(),
                })));
        let mut fake = FakeAgent::streaming(client, 3, Box::new(broken));
        let s = fake.on_client_line(r#"{"jsonrpc":"2.0","method":"b","params":{}}"#);
        assert!(s.released.is_empty());
        assert_eq!(
            fake.read_error(),
            Some("gone.jsonl: empty file, expected a header line")
        );
        assert_eq!(fake.unreleased(), 3);
    }
}
