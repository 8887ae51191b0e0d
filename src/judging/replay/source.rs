//! What a replay reads of a recording: its header and trailer, every
//! recorded client frame of the acp leg (a client line may match any of
//! them), and the agent frames in order. From a file the agent frames are
//! read again per agent process, one line at a time, so a replay holds the
//! client frames and the frames not yet due, never the whole recording.

use std::collections::BTreeMap;
use std::path::Path;

use super::fake_agent::{AcpFrame, AgentFrames, Direction, FakeAgent};
use crate::corpus::recording::{
    Dir, Event, Header, Leg, Reader, Recording, RecordingError, Trailer,
};

/// The acp leg of one agent process, as far as it is held.
#[derive(Debug, Default, Clone)]
pub struct ProcessLeg {
    /// Every recorded client frame, in order.
    pub client: Vec<AcpFrame>,
    /// How many agent frames it recorded.
    pub agent: usize,
}

/// The acp leg, gathered one event at a time.
#[derive(Debug, Default, Clone)]
pub struct AcpLeg {
    /// Agent process number (events without one count as 1) -> its leg.
    pub processes: BTreeMap<u32, ProcessLeg>,
}

impl AcpLeg {
    pub fn observe(&mut self, e: &Event) {
        let Some(frame) = acp_frame(e) else { return };
        let leg = self.processes.entry(e.proc.max(1)).or_default();
        match frame.dir {
            Direction::ToAgent => leg.client.push(frame),
            Direction::FromAgent => leg.agent += 1,
        }
    }

    /// Whether agent process `proc` has any acp frame.
    pub fn has(&self, proc: u32) -> bool {
        self.processes.contains_key(&proc)
    }

    /// The number of the last agent process with acp frames (1 without any).
    pub fn last_process(&self) -> u32 {
        self.processes.keys().next_back().copied().unwrap_or(1)
    }
}

/// `e` as an acp frame (`None`: another leg, or a direction acp has not).
fn acp_frame(e: &Event) -> Option<AcpFrame> {
    if e.leg != Leg::Acp {
        return None;
    }
    let dir = match e.dir {
        Dir::ToAgent => Direction::ToAgent,
        Dir::FromAgent => Direction::FromAgent,
        _ => return None,
    };
    Some(AcpFrame {
        seq: e.seq,
        ms: e.ms,
        dir,
        // a client frame is kept; an agent frame is only counted
        raw: if dir == Direction::ToAgent {
            e.raw.clone()
        } else {
            String::new()
        },
    })
}

/// Where the agent frames are read from.
#[derive(Clone, Copy)]
pub enum Frames<'a> {
    Memory(&'a Recording),
    /// The recording's file, read again one line at a time.
    File(&'a Path),
}

/// A recording as a replay reads it.
pub struct Source<'a> {
    pub header: &'a Header,
    pub trailer: Option<&'a Trailer>,
    /// Events in the recording (header and trailer not counted).
    pub events: usize,
    pub leg: AcpLeg,
    pub frames: Frames<'a>,
}

impl<'a> Source<'a> {
    /// A recording held in memory.
    pub fn of_recording(recording: &'a Recording) -> Source<'a> {
        let mut leg = AcpLeg::default();
        for e in &recording.events {
            leg.observe(e);
        }
        Source {
            header: &recording.header,
            trailer: recording.trailer.as_ref(),
            events: recording.events.len(),
            leg,
            frames: Frames::Memory(recording),
        }
    }

    /// The fake agent of agent process `proc`.
    pub fn fake_agent(&self, proc: u32) -> FakeAgent<'a> {
        let leg = self.leg.processes.get(&proc).cloned().unwrap_or_default();
        let of_proc =
            move |e: &Event| e.leg == Leg::Acp && e.dir == Dir::FromAgent && e.proc.max(1) == proc;
        let agent: AgentFrames<'a> = match self.frames {
            Frames::Memory(r) => Box::new(r.events.iter().filter(move |e| of_proc(e)).map(|e| {
                Ok(AcpFrame {
                    seq: e.seq,
                    ms: e.ms,
                    dir: Direction::FromAgent,
                    raw: e.raw.clone(),
                })
            })),
            Frames::File(path) => match Reader::open(path) {
                Ok(reader) => Box::new(reader.filter_map(move |e| match e {
                    Ok(e) if of_proc(&e) => Some(Ok(AcpFrame {
                        seq: e.seq,
                        ms: e.ms,
                        dir: Direction::FromAgent,
                        raw: e.raw,
                    })),
                    Ok(_) => None,
                    Err(e) => Some(Err(e)),
                })),
                Err(e) => Box::new(std::iter::once(Err(e))),
            },
        };
        FakeAgent::streaming(leg.client, leg.agent, agent)
    }
}

/// A recording file read once, one line at a time, keeping what a
/// [`Source`] of it needs.
pub struct Indexed {
    pub header: Header,
    pub trailer: Option<Trailer>,
    /// Events (header and trailer not counted).
    pub events: usize,
    pub leg: AcpLeg,
}

impl Indexed {
    pub fn read(path: &Path) -> Result<Indexed, RecordingError> {
        Indexed::read_with(path, |_, _| {})
    }

    /// [`Indexed::read`], handing each event to `each` on the way; the
    /// first bad line is the error (naming file and line).
    pub fn read_with(
        path: &Path,
        mut each: impl FnMut(&Header, &Event),
    ) -> Result<Indexed, RecordingError> {
        let mut reader = Reader::open(path)?;
        let header = reader.header().clone();
        let mut events = 0;
        let mut leg = AcpLeg::default();
        for e in reader.by_ref() {
            let e = e?;
            events += 1;
            leg.observe(&e);
            each(&header, &e);
        }
        Ok(Indexed {
            header: reader.header().clone(),
            trailer: reader.trailer().cloned(),
            events,
            leg,
        })
    }

    /// The recording as the replay reads it: agent frames from `path` again.
    pub fn source<'a>(&'a self, path: &'a Path) -> Source<'a> {
        Source {
            header: &self.header,
            trailer: self.trailer.as_ref(),
            events: self.events,
            leg: self.leg.clone(),
            frames: Frames::File(path),
        }
    }
}
