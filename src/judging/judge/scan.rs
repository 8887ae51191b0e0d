//! One pass over a recording file, one line at a time, gathering all that
//! judging reads of it besides the replay itself: what the replay indexes
//! (header, trailer, the acp leg's client frames), the recorded frames
//! against the ACP schema, the turns' provenance and the tool calls the
//! invariants compare with. The replay then reads the agent frames again
//! from the file, so a judged recording is never held whole.

use std::path::Path;

use super::invariants::CallFrames;
use super::provenance::Turns;
use crate::corpus::recording::{Dir, Leg, RecordingError};
use crate::judging::acp_schema::{AcpSchema, RecordedFrames, RecordingConformance};
use crate::judging::replay::source::Indexed;

/// What one pass gathered.
pub struct Scanned {
    pub indexed: Indexed,
    /// An acp event says agent process 1 (one without a number does not).
    pub acp_process_1: bool,
    /// The recorded frames against the schema (`None`: no schema given).
    pub acp: Option<RecordingConformance>,
    pub turns: Turns,
    pub calls: CallFrames,
}

/// Reads `path` once; its first bad line is the error (naming file and line).
/// With `check_schema`, the frames are checked against the schema of the
/// revision the recording negotiated (its header's `protocol_version`).
pub fn scan(path: &Path, check_schema: bool) -> Result<Scanned, RecordingError> {
    let mut acp_process_1 = false;
    let mut turns = Turns::default();
    let mut calls = CallFrames::default();
    let mut frames = RecordedFrames::default();
    let mut acp = check_schema.then(RecordingConformance::default);
    let mut schema = None;
    let indexed = Indexed::read_with(path, |header, e| {
        let schema =
            *schema.get_or_insert_with(|| AcpSchema::for_protocol(header.protocol_version).ok());
        acp_process_1 |= e.leg == Leg::Acp && e.proc == 1;
        turns.observe(e);
        if e.leg == Leg::Acp && e.dir == Dir::FromAgent {
            calls.observe(e.seq, &e.raw);
        }
        if let (Some(schema), Some(acp)) = (schema, acp.as_mut())
            && let Some(check) = frames.check(schema, e)
        {
            acp.add(&check);
        }
    })?;
    Ok(Scanned {
        indexed,
        acp_process_1,
        acp,
        turns,
        calls,
    })
}
