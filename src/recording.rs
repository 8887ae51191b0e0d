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

/// The format version this module writes and understands.
pub const FORMAT: u32 = 1;

/// What replaces a secret (Authorization values, API keys) before it reaches disk.
pub const REDACTED: &str = "<redacted>";

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
    #[serde(default)]
    pub protocol_version: u64,
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
    #[serde(flatten)]
    pub extra: Map<String, Value>,
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
    Header(Header),
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
    #[error("{path}: empty file, expected a header line")]
    Empty { path: PathBuf },
}

impl RecordingError {
    fn parse(path: &Path, line: usize, message: impl Into<String>) -> Self {
        RecordingError::Parse {
            path: path.to_path_buf(),
            line,
            message: message.into(),
        }
    }
}

/// Reads a recording file.
pub fn read(path: &Path) -> Result<Recording, RecordingError> {
    // One read and one UTF-8 check for the whole file; lines are borrowed
    // from it, so only the strings a line holds are copied.
    let bytes = std::fs::read(path).map_err(|source| RecordingError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&bytes, path)
}

/// Parses recording text; `path` only names the source in errors.
pub fn parse_str(text: &str, path: &Path) -> Result<Recording, RecordingError> {
    parse(text.as_bytes(), path)
}

fn parse(bytes: &[u8], path: &Path) -> Result<Recording, RecordingError> {
    // Lines before one that is not UTF-8 are read first: an error in them
    // is the one to report.
    let (text, not_utf8) = match std::str::from_utf8(bytes) {
        Ok(text) => (text, None),
        Err(e) => {
            let valid = e.valid_up_to();
            let line_start = bytes[..valid]
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |i| i + 1);
            let text = std::str::from_utf8(&bytes[..line_start]).unwrap_or_default();
            (text, Some(valid - line_start))
        }
    };
    let (header, events, trailer) = parse_lines(text, path)?;
    if let Some(column) = not_utf8 {
        return Err(RecordingError::parse(
            path,
            text.matches('\n').count() + 1,
            format!("not valid UTF-8 (invalid byte at column {})", column + 1),
        ));
    }
    let header = header.ok_or_else(|| RecordingError::Empty {
        path: path.to_path_buf(),
    })?;
    Ok(Recording {
        header,
        events,
        trailer,
    })
}

/// What the lines of a recording hold: header, events, trailer.
type Lines = (Option<Header>, Vec<Event>, Option<Trailer>);

/// The lines of `text` in order; the header is checked for by the caller
/// (a file whose first line is not UTF-8 has none yet).
fn parse_lines(text: &str, path: &Path) -> Result<Lines, RecordingError> {
    let mut header: Option<Header> = None;
    let mut events = Vec::new();
    let mut trailer: Option<Trailer> = None;
    let mut last_seq = 0u64;
    for (index, line) in text.split('\n').enumerate() {
        let number = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        if trailer.is_some() {
            return Err(RecordingError::parse(
                path,
                number,
                "line after the trailer",
            ));
        }
        let parsed: Line = serde_json::from_str(line).map_err(|e| {
            RecordingError::parse(path, number, format!("not a recording line: {e}"))
        })?;
        match parsed {
            Line::Header(h) => {
                if header.is_some() || !events.is_empty() {
                    return Err(RecordingError::parse(
                        path,
                        number,
                        "header is not the first line",
                    ));
                }
                if h.format != FORMAT {
                    return Err(RecordingError::parse(
                        path,
                        number,
                        format!(
                            "format {} is not supported (this harness reads {FORMAT})",
                            h.format
                        ),
                    ));
                }
                header = Some(h);
            }
            Line::Event(e) => {
                if header.is_none() {
                    return Err(RecordingError::parse(
                        path,
                        number,
                        "event before the header",
                    ));
                }
                if !e.leg.directions().contains(&e.dir) {
                    return Err(RecordingError::parse(
                        path,
                        number,
                        format!(
                            "leg {:?} has no direction {:?} (it has {:?})",
                            e.leg,
                            e.dir,
                            e.leg.directions()
                        ),
                    ));
                }
                if e.seq <= last_seq {
                    return Err(RecordingError::parse(
                        path,
                        number,
                        format!("seq {} does not follow {last_seq}", e.seq),
                    ));
                }
                last_seq = e.seq;
                events.push(e);
            }
            Line::Trailer(t) => {
                if header.is_none() {
                    return Err(RecordingError::parse(
                        path,
                        number,
                        "trailer before the header",
                    ));
                }
                trailer = Some(t);
            }
        }
    }
    Ok((header, events, trailer))
}

/// Replaces machine-specific values (temporary paths, ephemeral URLs, tokens)
/// with placeholders and secrets with [`REDACTED`], in every raw string,
/// consistently, before anything is written.
#[derive(Clone, Debug, Default)]
pub struct Scrubber {
    /// (value, replacement), longest value first so a path is replaced
    /// before any of its prefixes.
    rules: Vec<(String, String)>,
    /// Finds whether any rule's value or temp root occurs at all, in one
    /// pass: most lines (and every base64 image) hold none, and then the
    /// rules, one scan each, are skipped.
    any_rule: Option<aho_corasick::AhoCorasick>,
    /// Paths under the system temp dir that the run created.
    run_temp: Option<RunTemp>,
}

/// The placeholder of the `n`th path (from 1) under the system temp dir that
/// a run created: a socket, a file an agent wrote (named by pid or time).
pub fn temp_placeholder(n: usize) -> String {
    format!("<temp-{n}>")
}

/// Finds absolute paths under the system temp dir that did not exist before
/// the run (created or modified since it started) and numbers them by first
/// appearance, so a pid- or time-named path reads the same on every machine.
/// Paths that merely appear in text (an agent's prompt naming `/tmp/x`) exist
/// on no disk, or are older, and are left alone.
#[derive(Clone, Debug)]
struct RunTemp {
    roots: Vec<String>,
    since: std::time::SystemTime,
    /// Seen paths, in order; the placeholder is `<temp-{index+1}>`.
    seen: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl RunTemp {
    fn created_by_run(&self, path: &str) -> bool {
        std::fs::symlink_metadata(path)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t >= self.since)
    }

    fn scrub(&self, mut out: String) -> String {
        for root in &self.roots {
            let prefix = format!("{root}/");
            let mut from = 0;
            while let Some(at) = out[from..].find(&prefix).map(|i| from + i) {
                let starts_token = at == 0 || path_delimiter(out[..at].chars().next_back());
                let len = out[at..]
                    .find(|c: char| path_delimiter(Some(c)))
                    .unwrap_or(out.len() - at);
                let path = out[at..at + len].trim_end_matches('.').to_string();
                if !starts_token || path.len() <= prefix.len() {
                    from = at + prefix.len();
                    continue;
                }
                let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
                let index = match seen.iter().position(|p| *p == path) {
                    Some(i) => Some(i),
                    None if self.created_by_run(&path) => {
                        seen.push(path.clone());
                        Some(seen.len() - 1)
                    }
                    None => None,
                };
                drop(seen);
                match index {
                    Some(i) => {
                        let placeholder = temp_placeholder(i + 1);
                        out.replace_range(at..at + path.len(), &placeholder);
                        from = at + placeholder.len();
                    }
                    None => from = at + path.len(),
                }
            }
        }
        out
    }
}

/// Whether `c` ends (or precedes) a path in free text or JSON.
fn path_delimiter(c: Option<char>) -> bool {
    c.is_none_or(|c| c.is_whitespace() || "\"'`\\()[]{}<>,;:=".contains(c))
}

impl Scrubber {
    pub fn new() -> Self {
        Self::default()
    }

    /// Replace `value` by `placeholder` everywhere. Empty values are ignored.
    pub fn placeholder(&mut self, value: impl Into<String>, placeholder: impl Into<String>) {
        let value = value.into();
        if value.is_empty() {
            return;
        }
        let placeholder = placeholder.into();
        // A JSON writer may escape '/' as "\/"; cover that spelling too.
        let escaped = value.replace('/', "\\/");
        if escaped != value {
            self.rules.push((escaped, placeholder.replace('/', "\\/")));
            // Percent-encoded too: Grok names its session directory after the
            // workspace path with '/' as %2F.
            self.rules
                .push((value.replace('/', "%2F"), placeholder.replace('/', "%2F")));
        }
        self.rules.push((value, placeholder));
        self.rules
            .sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        self.rules.dedup_by(|a, b| a.0 == b.0);
        self.find_any();
    }

    fn find_any(&mut self) {
        let roots = self.run_temp.iter().flat_map(|t| &t.roots);
        let needles = self
            .rules
            .iter()
            .map(|r| r.0.clone())
            .chain(roots.map(|r| format!("{r}/")));
        // leftmost-first: only then does the search use its SIMD prefilter
        // (about ten times faster than one scan per rule on a base64 image)
        self.any_rule = aho_corasick::AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::LeftmostFirst)
            .build(needles)
            .ok();
    }

    /// Replaces the run's workspace path, its slug (every character but
    /// ASCII letters and digits as `-`, as agents name project directories)
    /// and its hex digests by `<workspace>`, `<workspace-slug>` and
    /// `<workspace-hash>`.
    pub fn workspace(&mut self, workspace: &str) {
        self.placeholder(workspace, "<workspace>");
        let slug: String = workspace
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        self.placeholder(slug, "<workspace-slug>");
        self.hashes_of(workspace, "<workspace-hash>");
    }

    /// Replaces the hex digests of `value` (sha256, sha1, md5, and sha256's
    /// first 16 characters), as agents name directories after a hash of the
    /// workspace path, by `placeholder`.
    pub fn hashes_of(&mut self, value: &str, placeholder: &str) {
        use sha2::Digest as _;
        fn hex(bytes: &[u8]) -> String {
            bytes.iter().map(|b| format!("{b:02x}")).collect()
        }
        let sha256 = hex(&sha2::Sha256::digest(value.as_bytes()));
        let digests = [
            sha256[..16].to_string(),
            hex(&sha1::Sha1::digest(value.as_bytes())),
            hex(&md5::Md5::digest(value.as_bytes())),
            sha256,
        ];
        for d in digests {
            self.placeholder(d, placeholder);
        }
    }

    /// Also replaces absolute paths under `temp_roots` (the system temp dir)
    /// created since `since` by numbered [`temp_placeholder`]s.
    pub fn run_temp(&mut self, temp_roots: Vec<String>, since: std::time::SystemTime) {
        let mut roots: Vec<String> = temp_roots
            .into_iter()
            .map(|r| r.trim_end_matches('/').to_string())
            .filter(|r| !r.is_empty())
            .collect();
        roots.sort();
        roots.dedup();
        self.run_temp = Some(RunTemp {
            roots,
            since,
            seen: Default::default(),
        });
        self.find_any();
    }

    /// Replace a secret value by [`REDACTED`].
    pub fn secret(&mut self, value: impl Into<String>) {
        self.placeholder(value, REDACTED);
    }

    pub fn scrub(&self, text: &str) -> String {
        self.scrub_owned(text.to_string())
    }

    /// [`Scrubber::scrub`] of a string it may keep: a line with nothing to
    /// replace is not copied.
    pub fn scrub_owned(&self, mut out: String) -> String {
        // With no rule value and no temp root in the text, the rules and
        // the temp paths change nothing.
        if self.any_rule.as_ref().is_some_and(|a| !a.is_match(&out)) {
            return out;
        }
        for (value, replacement) in &self.rules {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), replacement);
            }
        }
        // after the fixed rules: the run's own dirs under temp are <run> already
        match &self.run_temp {
            Some(t) => t.scrub(out),
            None => out,
        }
    }

    /// Scrubs header values and redacts credentials by header name.
    pub fn scrub_http(&self, mut http: Http) -> Http {
        http.path = http.path.map(|p| self.scrub(&p));
        http.headers = http
            .headers
            .into_iter()
            .map(|(name, value)| {
                let lower = name.to_ascii_lowercase();
                let secret = lower == "authorization"
                    || lower == "proxy-authorization"
                    || lower.contains("api-key")
                    || lower.contains("api_key")
                    || lower == "cookie";
                let value = if secret {
                    REDACTED.to_string()
                } else {
                    self.scrub(&value)
                };
                (lower, value)
            })
            .collect();
        http
    }
}

mod writer;
pub use writer::{Finished, RecordingWriter, interrupted_path};

#[cfg(test)]
mod tests;
