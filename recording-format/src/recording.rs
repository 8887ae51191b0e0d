//! The recording format (format 1, see ARCHITECTURE.md "Recording"): types,
//! a writer that writes whole lines and flushes whenever its caller has
//! nothing more queued (a crash loses no more than was still in flight),
//! a reader whose errors name `file:line`, and the scrubber that keeps
//! secrets and machine-specific paths off disk.
//!
//! Reading is strict about the envelope (`type`, `seq`, `ms`, `leg`, `dir`,
//! `proc`, `http`): an unknown value, a wrong type, a leg with a direction it
//! never has, or bytes that are not UTF-8 are errors naming `file:line`, so
//! a corrupt file is never mistaken for a bridge regression. It is tolerant
//! inside `raw` (byte-faithful, anything goes) and of fields it does not know
//! (kept in `extra`, written back unchanged) and of unknown trailer outcomes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::blobs;
pub use crate::reader::Reader;
pub use crate::writer::{Finished, RecordingWriter, interrupted_path};

/// The format version this module writes; it reads this one and every
/// earlier one. Format 2 adds large payloads stored by content
/// ([`blobs`]); a format 1 file is a format 2 file with none.
pub const FORMAT: u32 = 2;

/// What replaces a secret (Authorization values, API keys) before it reaches disk.
pub use crate::placeholder::REDACTED;

/// The header key naming the ACP revision the recording client offered in
/// `initialize` (absent: 1); `protocol_version` is the one negotiated.
pub const ACP_OFFERED: &str = "acp_offered";

/// The build metadata of a version directory that holds ACP v2 recordings
/// of that version (`recordings/<agent>/2.6.0+acp2/`).
pub const REVISION_2_BUILD: &str = "acp2";

/// Line 1 of a recording.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: u32,
    /// Profile id, e.g. `codex-acp`.
    pub agent: String,
    /// `agentInfo` from the initialize response, verbatim; `null` when the
    /// agent never answered initialize.
    #[serde(default)]
    pub agent_info: Value,
    /// npm `package@version` that was run.
    pub package: String,
    /// The argv the agent was started with (placeholders applied).
    #[serde(default)]
    pub argv: Vec<String>,
    pub scenario: String,
    #[serde(default)]
    pub scenario_sha256: String,
    /// `stub` (scripted model server) or `live` (the agent's own model).
    pub model_mode: String,
    pub harness_version: String,
    /// The `clientCapabilities` sent in initialize.
    #[serde(default)]
    pub client_capabilities: Value,
    /// The ACP `protocolVersion` the agent's initialize response
    /// negotiated (the client's own when the agent never answered; 0 in
    /// recordings that predate the field).
    #[serde(default)]
    pub protocol_version: u64,
    /// The ACP schema the recorder validated the frames against
    /// (`schema/acp-v1/VERSION` of the harness that recorded); absent in
    /// stream-json recordings and in recordings that predate the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acp_schema: Option<String>,
    /// The build that wrote this file (`BuildStamp::to_json`: version,
    /// commit, dirty, target, ACP revisions and schema): the harness's for a
    /// recording, the bridge's for a tap. Absent in files that predate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<Value>,
    /// UTC date of the run, `YYYY-MM-DD`.
    pub date: String,
    /// `netns-loopback` when the run was verified to have only loopback,
    /// `none` when it ran with the host network (`--allow-network` or
    /// `--model live`).
    pub isolation: String,
    /// True for recordings not made by `record` against a real agent.
    #[serde(default)]
    pub synthetic: bool,
    /// Placeholder -> what it stands for (never the machine value itself).
    #[serde(default)]
    pub placeholders: BTreeMap<String, String>,
    /// Fields this version does not know (kept, written back unchanged).
    /// What the recording client did beyond what the agent advertised
    /// (the profile's `[session]`); the replay launches the bridge alike.
    #[serde(default, skip_serializing_if = "SessionSetup::is_default")]
    pub session: SessionSetup,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What a recording's client does beyond what the agent's capabilities
/// say: the bridge does the same from its launch flags
/// (`--acp-mcp-unadvertised`, `--acp-config`), and the recording's header
/// carries it so that a replay launches the bridge alike.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SessionSetup {
    /// The unity-ops server goes into `session/new` and `session/load`
    /// though the agent advertises no `mcpCapabilities.http` (some agents
    /// take servers they do not advertise).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mcp_unadvertised: bool,
    /// Session config options set right after the session opens
    /// (`session/set_config_option`): `{ mode = "auto" }` for an agent whose
    /// permission preset is settable only over ACP. A profile's are set in
    /// id order (a TOML table has none); a tap's header keeps the order of
    /// the bridge's flags.
    #[serde(default, skip_serializing_if = "indexmap::IndexMap::is_empty")]
    pub config_options: indexmap::IndexMap<String, String>,
}

impl SessionSetup {
    pub fn is_default(&self) -> bool {
        *self == SessionSetup::default()
    }

    /// The config options as the bridge's launch takes them.
    pub fn config_option_list(&self) -> Vec<(String, String)> {
        self.config_options
            .iter()
            .map(|(id, value)| (id.clone(), value.clone()))
            .collect()
    }
}

impl Header {
    /// `agentInfo.version`, if the agent reported one.
    pub fn agent_version(&self) -> Option<&str> {
        self.agent_info.get("version").and_then(Value::as_str)
    }
}

/// Which conversation an event belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Leg {
    /// JSON-RPC between the client and the agent (stdio).
    Acp,
    /// One stderr line of the agent.
    Stderr,
    /// The agent's HTTP exchanges with stub-mcp.
    Mcp,
    /// The agent's HTTP exchanges with the model server.
    Model,
    /// What the recorder itself did or saw.
    Harness,
    /// Stream-json lines between the recorder (playing the panel) and a
    /// stream-json agent (Claude Code): `to_agent` = stdin, `from_agent` = stdout.
    #[serde(rename = "stream-json")]
    StreamJson,
}

impl Leg {
    /// The directions an event of this leg can have.
    pub fn directions(self) -> &'static [Dir] {
        match self {
            Leg::Acp | Leg::StreamJson => &[Dir::ToAgent, Dir::FromAgent],
            Leg::Stderr => &[Dir::FromAgent],
            Leg::Mcp | Leg::Model => &[Dir::Request, Dir::Response],
            Leg::Harness => &[Dir::Note],
        }
    }

    /// The name the format spells it with.
    pub fn as_str(self) -> &'static str {
        match self {
            Leg::Acp => "acp",
            Leg::Stderr => "stderr",
            Leg::Mcp => "mcp",
            Leg::Model => "model",
            Leg::Harness => "harness",
            Leg::StreamJson => "stream-json",
        }
    }
}

/// Direction of an event within its leg.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dir {
    ToAgent,
    FromAgent,
    Request,
    Response,
    Note,
}

impl Dir {
    /// The name the format spells it with.
    pub fn as_str(self) -> &'static str {
        match self {
            Dir::ToAgent => "to_agent",
            Dir::FromAgent => "from_agent",
            Dir::Request => "request",
            Dir::Response => "response",
            Dir::Note => "note",
        }
    }
}

/// HTTP metadata of an `mcp` / `model` event.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Http {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Header name -> value, Authorization and API keys redacted.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One observed event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Monotonic over the whole file (header excluded), from 1.
    pub seq: u64,
    /// Milliseconds since the recorder started.
    pub ms: u64,
    pub leg: Leg,
    pub dir: Dir,
    /// Agent process number: 1, then 2 after a resume in a new process.
    #[serde(default)]
    pub proc: u32,
    /// Byte-faithful payload (scrubbed): a JSON-RPC line, a stderr line, an
    /// HTTP body, or a note.
    pub raw: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<Http>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Ok,
    Timeout,
    AgentCrashed,
    Error,
    /// SIGINT or SIGTERM ended the run; never committed, never judged ok.
    Interrupted,
    /// The agent sent a model request the scenario does not script and the
    /// profile does not declare as a side request (the trailer's notes name it).
    OffScript,
    /// The run played to its end, but not all of its scenario: a scripted
    /// model reply was never asked for, or the scenario scripts calls of
    /// the agent's own tools and the profile maps none (the notes say which).
    Incomplete,
    #[serde(other)]
    Other,
}

impl Outcome {
    /// The name the trailer uses (`ok`, `timeout`, `agent_crashed`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Timeout => "timeout",
            Outcome::AgentCrashed => "agent_crashed",
            Outcome::Error => "error",
            Outcome::Interrupted => "interrupted",
            Outcome::OffScript => "off_script",
            Outcome::Incomplete => "incomplete",
            Outcome::Other => "other",
        }
    }
}

/// The agent's exit status (the last process's).
///
/// `describe` words it for people: `exited with code 0`, `was ended by
/// signal 15`, `exited with no status recorded`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

impl Exit {
    pub fn describe(&self) -> String {
        match (self.code, self.signal) {
            (Some(c), _) => format!("exited with code {c}"),
            (None, Some(s)) => format!("was ended by signal {s}"),
            (None, None) => "exited with no status recorded".into(),
        }
    }
}

/// The last line of a complete recording.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trailer {
    pub seq: u64,
    pub ms: u64,
    pub outcome: Outcome,
    #[serde(default)]
    pub exit: Exit,
    #[serde(default)]
    pub notes: Vec<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One line of a recording file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line {
    /// Boxed: one per file, far larger than an event.
    Header(Box<Header>),
    Event(Event),
    Trailer(Trailer),
}

/// A whole recording as read from disk.
#[derive(Clone, Debug, PartialEq)]
pub struct Recording {
    pub header: Header,
    pub events: Vec<Event>,
    /// `None` when the file is truncated (the run died before its end).
    pub trailer: Option<Trailer>,
}

impl Recording {
    /// Events of one leg, in recorded order.
    pub fn leg(&self, leg: Leg) -> impl Iterator<Item = &Event> {
        self.events.iter().filter(move |e| e.leg == leg)
    }
    pub fn is_truncated(&self) -> bool {
        self.trailer.is_none()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Parse {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}:{line}: event seq {seq}: {source}")]
    Blob {
        path: PathBuf,
        line: usize,
        seq: u64,
        /// Boxed: the error is returned by every read, and this is its
        /// largest variant.
        #[source]
        source: Box<blobs::JoinError>,
    },
    #[error("{path}: empty file, expected a header line")]
    Empty { path: PathBuf },
}

impl RecordingError {
    pub(crate) fn parse(path: &Path, line: usize, message: impl Into<String>) -> Self {
        RecordingError::Parse {
            path: path.to_path_buf(),
            line,
            message: message.into(),
        }
    }
}

/// Reads a recording file (all of it: see [`Reader`] for one event at a time).
pub fn read(path: &Path) -> Result<Recording, RecordingError> {
    Reader::open(path)?.into_recording()
}

/// The trailer of a recording read to its end one event at a time (every
/// line checked as [`read`] checks it, none held); `None`: it has none.
pub fn read_trailer(path: &Path) -> Result<Option<Trailer>, RecordingError> {
    let mut reader = Reader::open(path)?;
    for event in reader.by_ref() {
        event?;
    }
    Ok(reader.trailer().cloned())
}

/// Parses recording text; `path` only names the source in errors.
pub fn parse_str(text: &str, path: &Path) -> Result<Recording, RecordingError> {
    parse(text.as_bytes(), path)
}

fn parse(bytes: &[u8], path: &Path) -> Result<Recording, RecordingError> {
    Reader::new(bytes, path)?.into_recording()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legs_and_directions_are_named_as_the_format_spells_them() {
        let legs = [
            Leg::Acp,
            Leg::Stderr,
            Leg::Mcp,
            Leg::Model,
            Leg::Harness,
            Leg::StreamJson,
        ];
        for leg in legs {
            assert_eq!(serde_json::to_value(leg).unwrap(), leg.as_str());
            for dir in leg.directions() {
                assert_eq!(serde_json::to_value(dir).unwrap(), dir.as_str());
            }
        }
    }
}
