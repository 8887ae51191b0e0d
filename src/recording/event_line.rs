//! An event line read straight into an [`Event`]. The tagged [`Line`](super::Line)
//! enum buffers every field of a line before it knows which variant it is
//! (serde's internally tagged enums do), which copies an agent frame of
//! megabytes once more and allocates per field; most lines are events.
//!
//! Exact: a line is read here only when its one `type` is `event` and every
//! field reads; anything else (any error) is left to `Line`, so what a line
//! reads as and the error a bad line gets do not change.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Dir, Event, Http, Leg};

/// [`Event`]'s fields plus the tag, read in one pass.
#[derive(Deserialize)]
struct EventLine {
    #[serde(rename = "type")]
    _tag: EventTag,
    seq: u64,
    ms: u64,
    leg: Leg,
    dir: Dir,
    #[serde(default)]
    proc: u32,
    raw: String,
    #[serde(default)]
    http: Option<Http>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

/// The only tag read here.
#[derive(Deserialize)]
enum EventTag {
    #[serde(rename = "event")]
    Event,
}

/// The event on `line`, or `None` when it is not one that reads (then
/// `Line` decides what it is, or what is wrong with it).
pub(super) fn read(line: &str) -> Option<Event> {
    let e: EventLine = serde_json::from_str(line).ok()?;
    Some(Event {
        seq: e.seq,
        ms: e.ms,
        leg: e.leg,
        dir: e.dir,
        proc: e.proc,
        raw: e.raw,
        http: e.http,
        extra: e.extra,
    })
}
