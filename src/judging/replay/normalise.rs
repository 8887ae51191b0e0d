//! Normalisation of the JSON lines that go into a transcript.
//!
//! Replay feeds the bridge a fake clock and counter ids, so almost everything
//! it prints is already deterministic. What is left varies between recordings
//! of the same scenario (session ids, tool-call ids, uuids minted by agents),
//! so those values get stable first-seen labels (`<session 1>`), and big
//! base64 payloads are replaced by a digest so goldens stay readable.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::ops::Range;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Base64 runs at least this long are replaced by a digest.
pub const BASE64_DIGEST_MIN: usize = 200;

/// Runs at least this long have their digest memoised per transcript (an
/// image is in the agent's frame and again in the bridge's tool result);
/// shorter ones cost less to hash again than to remember.
const MEMO_RUN_MIN: usize = 16 * 1024;

/// A labelled value is also replaced where it appears under other keys, but
/// only when it is at least this long (a short id could be ordinary text).
const GLOBAL_LABEL_MIN: usize = 6;

/// What kind of variable value a label stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum LabelKind {
    Session,
    ToolCall,
    Uuid,
}

impl LabelKind {
    fn name(self) -> &'static str {
        match self {
            LabelKind::Session => "session",
            LabelKind::ToolCall => "tool-call",
            LabelKind::Uuid => "uuid",
        }
    }

    /// The label kind of a value stored under `key` in an object whose
    /// `type` is `tool_use` or not, if any.
    fn of_key(key: &str, in_tool_use: bool) -> Option<LabelKind> {
        match key {
            "sessionId" | "session_id" => Some(LabelKind::Session),
            "toolCallId" | "tool_use_id" => Some(LabelKind::ToolCall),
            "id" if in_tool_use => Some(LabelKind::ToolCall),
            "uuid" => Some(LabelKind::Uuid),
            _ => None,
        }
    }
}

/// Assigns first-seen labels to variable values, shared across one transcript
/// so the same session id reads the same in every line.
#[derive(Debug, Default)]
pub struct Labeller {
    labels: HashMap<String, String>,
    counts: HashMap<LabelKind, usize>,
    /// Lowercase uuids labelled `<uuid N>`, as runs of consecutive values
    /// with consecutive labels (the replay's counter ids are such runs): a
    /// replay of a million stream events labels a million uuids in a few
    /// entries.
    uuids: UuidRuns,
    /// The longest labelled value: a longer string (a base64 image) is no
    /// label's value, and is not hashed to find that out.
    longest: usize,
    digests: DigestMemo,
}

impl Labeller {
    pub fn new() -> Labeller {
        Labeller::default()
    }

    fn label(&mut self, kind: LabelKind, value: &str) -> String {
        if let Some(label) = self.get(value) {
            return label;
        }
        let n = self.counts.entry(kind).or_insert(0);
        *n += 1;
        let label = format!("<{} {}>", kind.name(), n);
        self.longest = self.longest.max(value.len());
        // only a uuid label is kept as a run; other kinds skip the parse
        match (kind == LabelKind::Uuid)
            .then(|| lowercase_uuid(value))
            .flatten()
        {
            Some(v) => self.uuids.insert(v, *n),
            None => {
                self.labels.insert(value.to_string(), label.clone());
            }
        }
        label
    }

    /// The label `value` already has.
    fn get(&self, value: &str) -> Option<String> {
        if let Some(label) = self.labels.get(value) {
            return Some(label.clone());
        }
        let n = self.uuids.get(lowercase_uuid(value)?)?;
        Some(format!("<{} {n}>", LabelKind::Uuid.name()))
    }

    /// A driver note with the tool calls it names as the panel lines show
    /// them: an id already labelled reads as its label, so an agent's fresh
    /// random call ids change no note when it is re-recorded.
    pub fn note(&self, text: &str) -> String {
        let word = |w: &str| match self.labels.get(w) {
            Some(label) if label.starts_with("<tool-call ") => label.clone(),
            _ => w.to_string(),
        };
        text.split(' ').map(word).collect::<Vec<_>>().join(" ")
    }

    /// Normalises one JSON line for a transcript: labels, digests, compact form.
    /// A line that is not JSON is kept as text (digested where it holds base64).
    pub fn line(&mut self, raw: &str) -> String {
        match serde_json::from_str::<Value>(raw) {
            Ok(value) => self.normalised(raw, value),
            Err(_) => format!("(not JSON) {}", digest_base64_runs(raw)),
        }
    }

    fn normalised(&mut self, raw: &str, mut value: Value) -> String {
        self.value(&mut value);
        serde_json::to_string(&value).unwrap_or_else(|_| raw.to_string())
    }

    /// Normalises a JSON value in place.
    pub fn value(&mut self, value: &mut Value) {
        match value {
            Value::Object(map) => {
                // `type` as it reads when each key is reached: normalising
                // the `type` value itself could change it
                let mut in_tool_use = map.get("type").and_then(Value::as_str) == Some("tool_use");
                for (key, slot) in map.iter_mut() {
                    match (LabelKind::of_key(key, in_tool_use), &*slot) {
                        (Some(kind), Value::String(s)) if !s.is_empty() && !is_label(s) => {
                            let label = self.label(kind, s);
                            *slot = Value::String(label);
                        }
                        _ => self.value(slot),
                    }
                    if key == "type" {
                        in_tool_use = slot.as_str() == Some("tool_use");
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.value(v)),
            Value::String(s) => {
                if let Some(label) = Some(s.len())
                    .filter(|n| (GLOBAL_LABEL_MIN..=self.longest).contains(n))
                    .and_then(|_| self.get(s.as_str()))
                {
                    *s = label;
                } else if is_uuid(s) {
                    *s = self.label(LabelKind::Uuid, s);
                } else {
                    self.digests.digest_runs(s);
                }
            }
            _ => {}
        }
    }
}

/// Runs of consecutive uuid values with consecutive label numbers: start
/// value -> (first label number, length).
#[derive(Debug, Default)]
struct UuidRuns {
    runs: BTreeMap<u128, (usize, u128)>,
}

impl UuidRuns {
    fn get(&self, v: u128) -> Option<usize> {
        let (start, (label, len)) = self.runs.range(..=v).next_back()?;
        (v - start < *len).then(|| label + (v - start) as usize)
    }

    /// `v` (not labelled yet) gets label number `n`.
    fn insert(&mut self, v: u128, n: usize) {
        if let Some((start, (label, len))) = self.runs.range_mut(..v).next_back()
            && start.checked_add(*len) == Some(v)
            && *label + *len as usize == n
        {
            *len += 1;
            return;
        }
        self.runs.insert(v, (n, 1));
    }
}

/// A uuid in lowercase as its 128-bit value (`None`: not a uuid, or not
/// lowercase, which is labelled as the text it is).
fn lowercase_uuid(s: &str) -> Option<u128> {
    if !is_uuid(s) || s.bytes().any(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let hex: String = s.chars().filter(|c| *c != '-').collect();
    u128::from_str_radix(&hex, 16).ok()
}

fn is_label(s: &str) -> bool {
    s.starts_with('<') && s.ends_with('>')
}

/// `8-4-4-4-12` hex digits, any case.
pub fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// The base64 alphabet (standard and URL-safe, with padding) as a lookup
/// table: the scan below runs over every byte of every transcript string.
const BASE64_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        table[c] = b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_');
        c += 1;
    }
    table
};

/// Replaces every run of at least [`BASE64_DIGEST_MIN`] base64 characters by
/// `<base64 N chars sha256:…>`. One pass, linear in the input.
pub fn digest_base64_runs(s: &str) -> String {
    digested(s, |range| digest(&s[range])).unwrap_or_else(|| s.to_string())
}

/// `shorten(&digest_base64_runs(text), max)` of a text written in pieces
/// (a value serialised into it), holding only what is shown: a base64 run
/// is hashed as it comes, the rest counted past the first `max` characters.
pub struct ShortDigest {
    max: usize,
    head: String,
    chars: usize,
    /// The base64 run going on: its first bytes, its length, and its hash
    /// once it is long enough to be digested.
    run: Vec<u8>,
    run_len: usize,
    hash: Option<Sha256>,
}

impl ShortDigest {
    pub fn new(max: usize) -> ShortDigest {
        ShortDigest {
            max,
            head: String::new(),
            chars: 0,
            run: Vec::new(),
            run_len: 0,
            hash: None,
        }
    }

    fn out(&mut self, s: &str) {
        for c in s.chars() {
            if self.chars <= self.max {
                self.head.push(c);
            }
            self.chars += 1;
        }
    }

    fn end_run(&mut self) {
        match self.hash.take() {
            Some(hash) => {
                let hex: String = hash
                    .finalize()
                    .iter()
                    .take(6)
                    .map(|b| format!("{b:02x}"))
                    .collect();
                self.out(&format!("<base64 {} chars sha256:{hex}>", self.run_len));
            }
            None => {
                let run = std::mem::take(&mut self.run);
                self.out(std::str::from_utf8(&run).unwrap_or_default());
            }
        }
        self.run.clear();
        self.run_len = 0;
    }

    /// The text as shown.
    pub fn finish(mut self) -> String {
        self.end_run();
        match self.head.char_indices().nth(self.max) {
            Some((end, _)) => format!("{}… ({} chars)", &self.head[..end], self.chars),
            None => self.head,
        }
    }
}

impl std::io::Write for ShortDigest {
    /// Takes whole UTF-8 pieces (serde_json cuts only at ASCII).
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut i = 0;
        while i < buf.len() {
            let other = buf[i..].iter().position(|b| !BASE64_BYTE[*b as usize]);
            let end = other.map_or(buf.len(), |k| i + k);
            self.run_len += end - i;
            match &mut self.hash {
                Some(hash) => hash.update(&buf[i..end]),
                None => {
                    self.run.extend_from_slice(&buf[i..end]);
                    if self.run.len() >= BASE64_DIGEST_MIN {
                        let mut hash = Sha256::new();
                        hash.update(&self.run);
                        self.hash = Some(hash);
                        self.run.clear();
                    }
                }
            }
            if end == buf.len() {
                break;
            }
            self.end_run();
            let text_end = buf[end..]
                .iter()
                .position(|b| BASE64_BYTE[*b as usize])
                .map_or(buf.len(), |k| end + k);
            let text = std::str::from_utf8(&buf[end..text_end]).map_err(std::io::Error::other)?;
            self.out(text);
            i = text_end;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// [`digest_base64_runs`], `None` when no run is long enough (nothing to
/// copy); `digest_run` makes the digest of the run at a range of `s`.
fn digested(s: &str, mut digest_run: impl FnMut(Range<usize>) -> String) -> Option<String> {
    let bytes = s.as_bytes();
    if bytes.len() < BASE64_DIGEST_MIN {
        return None;
    }
    let mut out: Option<String> = None;
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        let Some(start) = bytes[i..]
            .iter()
            .position(|c| BASE64_BYTE[*c as usize])
            .map(|k| i + k)
        else {
            break;
        };
        let end = run_end(bytes, start);
        if end - start >= BASE64_DIGEST_MIN {
            let out = out.get_or_insert_with(|| String::with_capacity(s.len().min(4096)));
            out.push_str(&s[copied..start]);
            out.push_str(&digest_run(start..end));
            copied = end;
        }
        i = end;
    }
    let mut out = out?;
    out.push_str(&s[copied..]);
    Some(out)
}

/// Where the base64 run from `start` ends: first a block of bytes at a time
/// with a branch-free test the compiler vectorises (an image is one run of
/// megabytes), then byte by byte.
fn run_end(bytes: &[u8], start: usize) -> usize {
    const BLOCK: usize = 32;
    let is_base64 = |b: u8| {
        b.is_ascii_lowercase()
            | b.is_ascii_uppercase()
            | b.is_ascii_digit()
            | (b == b'+')
            | (b == b'/')
            | (b == b'=')
            | (b == b'-')
            | (b == b'_')
    };
    let mut i = start;
    while let Some(block) = bytes.get(i..).and_then(<[u8]>::first_chunk::<BLOCK>) {
        if !block.iter().fold(true, |all, b| all & is_base64(*b)) {
            break;
        }
        i += BLOCK;
    }
    bytes[i..]
        .iter()
        .position(|c| !BASE64_BYTE[*c as usize])
        .map_or(bytes.len(), |k| i + k)
}

/// Digests of the long runs already seen in one transcript, found by a cheap
/// fingerprint and confirmed by comparing the bytes, so a hit is exact.
#[derive(Debug, Default)]
struct DigestMemo {
    /// The strings the memoised runs were cut out of (moved here once
    /// digested, never copied).
    sources: Vec<String>,
    runs: HashMap<u64, Vec<MemoRun>>,
}

#[derive(Debug)]
struct MemoRun {
    source: usize,
    range: Range<usize>,
    digest: String,
}

impl DigestMemo {
    /// Replaces the base64 runs of `s` by their digests, hashing only the
    /// long runs not seen before.
    fn digest_runs(&mut self, s: &mut String) {
        let mut fresh = Vec::new();
        let Some(new) = digested(s, |range| {
            let run = &s[range.clone()];
            if run.len() < MEMO_RUN_MIN {
                return digest(run);
            }
            if let Some(d) = self.find(run) {
                return d.to_string();
            }
            let d = shared_digest(run);
            fresh.push((range, d.clone()));
            d
        }) else {
            return;
        };
        let old = std::mem::replace(s, new);
        if fresh.is_empty() {
            return;
        }
        let source = self.sources.len();
        for (range, digest) in fresh {
            let key = fingerprint(&old[range.clone()]);
            self.runs.entry(key).or_default().push(MemoRun {
                source,
                range,
                digest,
            });
        }
        self.sources.push(old);
    }

    fn find(&self, run: &str) -> Option<&str> {
        self.runs
            .get(&fingerprint(run))?
            .iter()
            .find(|m| &self.sources[m.source][m.range.clone()] == run)
            .map(|m| m.digest.as_str())
    }
}

/// At most this many bytes of long runs are remembered across transcripts:
/// the corpus's images repeat between recordings (the unity-ops screenshot
/// is the same fixed-seed image in every one).
const SHARED_MEMO_MAX_BYTES: usize = 8 * 1024 * 1024;

/// Long runs digested by any transcript of this process, oldest first
/// (fingerprint, run, digest), within [`SHARED_MEMO_MAX_BYTES`].
static SHARED_MEMO: std::sync::Mutex<Vec<(u64, Box<str>, String)>> =
    std::sync::Mutex::new(Vec::new());

/// [`digest`] of a long run, remembered across transcripts; a hit is
/// confirmed byte for byte, so it is exact.
fn shared_digest(run: &str) -> String {
    let key = fingerprint(run);
    let hit = SHARED_MEMO.lock().ok().and_then(|memo| {
        memo.iter()
            .find(|(k, r, _)| *k == key && &**r == run)
            .map(|(_, _, d)| d.clone())
    });
    if let Some(d) = hit {
        return d;
    }
    let d = digest(run);
    if run.len() <= SHARED_MEMO_MAX_BYTES
        && let Ok(mut memo) = SHARED_MEMO.lock()
    {
        let mut held: usize = memo.iter().map(|(_, r, _)| r.len()).sum();
        while held + run.len() > SHARED_MEMO_MAX_BYTES && !memo.is_empty() {
            held -= memo.remove(0).1.len();
        }
        memo.push((key, run.into(), d.clone()));
    }
    d
}

/// A hash of a run's length and a few slices of it: cheap next to hashing
/// megabytes, and only a hint (a hit is confirmed byte for byte).
fn fingerprint(run: &str) -> u64 {
    const SLICE: usize = 64;
    let b = run.as_bytes();
    let mid = b.len() / 2;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    b.len().hash(&mut h);
    b[..SLICE.min(b.len())].hash(&mut h);
    b[mid..(mid + SLICE).min(b.len())].hash(&mut h);
    b[b.len().saturating_sub(SLICE)..].hash(&mut h);
    h.finish()
}

/// `<base64 N chars sha256:first 12 hex>`.
pub fn digest(run: &str) -> String {
    let hash = Sha256::digest(run.as_bytes());
    let hex: String = hash.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("<base64 {} chars sha256:{hex}>", run.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_written_in_pieces_is_shown_as_its_whole_digested_and_shortened() {
        use std::io::Write;
        let image = "iVBORw0KGgo/+=".repeat(40);
        let texts = [
            String::new(),
            "short é".to_string(),
            image.clone(),
            format!("a {image} b {} c é{image}", &image[..150]),
            format!("{}x{}", &image[..199], &image[..200]),
            "é".repeat(400),
        ];
        for text in texts {
            for max in [0, 10, 300, 10_000] {
                let whole = acp_bridge::shorten::shorten(&digest_base64_runs(&text), max);
                for piece in [1, 7, 64, 100_000] {
                    let mut w = ShortDigest::new(max);
                    let mut at = 0;
                    while at < text.len() {
                        let mut end = (at + piece).min(text.len());
                        while !text.is_char_boundary(end) {
                            end += 1;
                        }
                        w.write_all(&text.as_bytes()[at..end]).unwrap();
                        at = end;
                    }
                    assert_eq!(w.finish(), whole, "{text:?} {max} {piece}");
                }
            }
        }
    }

    #[test]
    fn session_ids_get_the_same_label_everywhere_they_appear() {
        let mut l = Labeller::new();
        let a = l.line(r#"{"params":{"sessionId":"sess-abc-1"}}"#);
        let b = l.line(r#"{"type":"system","session_id":"sess-abc-1","other":"sess-abc-1"}"#);
        let c = l.line(r#"{"params":{"sessionId":"zzz"}}"#);
        assert_eq!(a, r#"{"params":{"sessionId":"<session 1>"}}"#);
        assert_eq!(
            b,
            r#"{"type":"system","session_id":"<session 1>","other":"<session 1>"}"#
        );
        assert_eq!(c, r#"{"params":{"sessionId":"<session 2>"}}"#);
    }

    #[test]
    fn a_note_names_a_labelled_tool_call_by_its_label_and_leaves_other_words() {
        let mut l = Labeller::new();
        l.line(r#"{"toolCallId":"tc-5c33b85fbf01","sessionId":"S1"}"#);
        for (note, shown) in [
            (
                "step 2 (permission): tool call tc-5c33b85fbf01 ran without a permission request",
                "step 2 (permission): tool call <tool-call 1> ran without a permission request",
            ),
            // an id no panel line showed, and a session id, stay as written
            ("tool call tc-other ran", "tool call tc-other ran"),
            ("session S1 resumed", "session S1 resumed"),
        ] {
            assert_eq!(l.note(note), shown);
        }
    }

    #[test]
    fn empty_and_short_values_are_not_labelled_elsewhere() {
        let mut l = Labeller::new();
        let a = l.line(r#"{"session_id":"","text":""}"#);
        assert_eq!(a, r#"{"session_id":"","text":""}"#);
        let b = l.line(r#"{"toolCallId":"c1","text":"c1"}"#);
        assert_eq!(b, r#"{"toolCallId":"<tool-call 1>","text":"c1"}"#);
    }

    #[test]
    fn tool_use_ids_and_tool_call_ids_share_labels() {
        let mut l = Labeller::new();
        let a = l.line(r#"{"update":{"toolCallId":"call_99"}}"#);
        let b = l.line(r#"{"content":[{"type":"tool_use","id":"call_99","name":"X"},{"type":"tool_result","tool_use_id":"call_99"}]}"#);
        assert_eq!(a, r#"{"update":{"toolCallId":"<tool-call 1>"}}"#);
        assert_eq!(
            b,
            r#"{"content":[{"type":"tool_use","id":"<tool-call 1>","name":"X"},{"type":"tool_result","tool_use_id":"<tool-call 1>"}]}"#
        );
    }

    #[test]
    fn uuids_anywhere_are_labelled_first_seen() {
        let mut l = Labeller::new();
        let a = l.line(r#"{"uuid":"00000000-0000-4000-8000-000000000007","x":["6F9619FF-8B86-D011-B42D-00C04FC964FF"]}"#);
        assert_eq!(a, r#"{"uuid":"<uuid 1>","x":["<uuid 2>"]}"#);
    }

    #[test]
    fn counter_uuids_label_first_seen_in_runs_and_a_repeat_keeps_its_label() {
        let id = |n: u32| format!("00000000-0000-4000-8000-{n:012x}");
        let mut l = Labeller::new();
        let mut got = Vec::new();
        for v in [
            id(1),
            id(2),
            id(3),
            "6f9619ff-8b86-d011-b42d-00c04fc964ff".into(),
            id(4),
            id(2),
            id(9),
            id(5),
        ] {
            got.push(l.line(&format!(r#"{{"uuid":"{v}"}}"#)));
        }
        let want: Vec<String> = [1, 2, 3, 4, 5, 2, 6, 7]
            .iter()
            .map(|n| format!(r#"{{"uuid":"<uuid {n}>"}}"#))
            .collect();
        assert_eq!(got, want);
        // a labelled uuid is the same label under any key, in any text
        assert_eq!(
            l.line(&format!(r#"{{"x":"{}"}}"#, id(9))),
            r#"{"x":"<uuid 6>"}"#
        );
        // a counter's next thousand take one more run, not a thousand entries
        let runs = l.uuids.runs.len();
        for n in 10..1010 {
            l.line(&format!(r#"{{"uuid":"{}"}}"#, id(n)));
        }
        assert_eq!(l.uuids.runs.len(), runs + 1, "{:?}", l.uuids);
    }

    #[test]
    fn long_base64_is_digested_and_short_text_is_kept() {
        let blob = "iVBORw0KGgo".repeat(50);
        let mut l = Labeller::new();
        let out = l.line(&format!(
            r#"{{"data":"{blob}","text":"hello","uri":"data:image/png;base64,{blob}"}}"#
        ));
        let d = digest(&blob);
        assert_eq!(
            out,
            format!(r#"{{"data":"{d}","text":"hello","uri":"data:image/png;base64,{d}"}}"#)
        );
        assert!(d.starts_with("<base64 550 chars sha256:"));
    }

    /// The run scan as it reads in the spec: byte by byte, the same table.
    fn digested_byte_by_byte(s: &str) -> String {
        let b = s.as_bytes();
        let (mut out, mut i, mut copied) = (String::new(), 0, 0);
        while i < b.len() {
            if !BASE64_BYTE[b[i] as usize] {
                i += 1;
                continue;
            }
            let mut end = i;
            while end < b.len() && BASE64_BYTE[b[end] as usize] {
                end += 1;
            }
            if end - i >= BASE64_DIGEST_MIN {
                out.push_str(&s[copied..i]);
                out.push_str(&digest(&s[i..end]));
                copied = end;
            }
            i = end;
        }
        out.push_str(&s[copied..]);
        out
    }

    #[test]
    fn a_long_run_remembered_across_transcripts_digests_as_computed_and_a_lookalike_does_not_hit() {
        let run = "QUJD".repeat(MEMO_RUN_MIN);
        // same length, fingerprint slices and ends: differs only inside
        let mut lookalike = run.clone().into_bytes();
        lookalike[run.len() / 4] = b'x';
        let lookalike = String::from_utf8(lookalike).unwrap();
        assert_eq!(fingerprint(&run), fingerprint(&lookalike));
        for _ in 0..2 {
            for s in [&run, &lookalike] {
                let mut l = Labeller::new();
                let line = format!(r#"{{"data":"{s}"}}"#);
                assert_eq!(
                    l.line(&line),
                    format!(r#"{{"data":"{}"}}"#, digest(s)),
                    "a fresh labeller each time: only the shared memo remembers"
                );
            }
        }
    }

    #[test]
    fn the_block_scan_finds_the_same_runs_as_a_byte_by_byte_scan() {
        let run = |n: usize| "aZ09+/=-_".chars().cycle().take(n).collect::<String>();
        let mut inputs = Vec::new();
        for n in [
            0, 1, 31, 32, 33, 63, 64, 199, 200, 201, 231, 232, 233, 4096, 70_000,
        ] {
            for (before, after) in [
                ("", ""),
                ("\n", "\n"),
                ("\\u00e9", "\u{e9}"),
                ("é", "\\/"),
                ("data:image/png;base64,", "\""),
                (" ", "\t"),
            ] {
                inputs.push(format!("{before}{}{after}", run(n)));
                inputs.push(format!("{before}{}\n{}{after}", run(n), run(n + 7)));
            }
        }
        // a break at every offset of the first blocks of a long run
        for at in 0..70 {
            let mut s = run(400).into_bytes();
            s[at] = b'.';
            inputs.push(String::from_utf8(s).unwrap());
        }
        for s in &inputs {
            assert_eq!(digest_base64_runs(s), digested_byte_by_byte(s), "{s:?}");
        }
    }

    #[test]
    fn an_image_seen_twice_gets_the_same_digest_and_a_look_alike_its_own() {
        let image = "iVBORw0KGgo".repeat(4000);
        // same length, same first, middle and last bytes: the same fingerprint
        let mut look_alike = image.clone().into_bytes();
        look_alike[1000] = if look_alike[1000] == b'A' { b'B' } else { b'A' };
        let look_alike = String::from_utf8(look_alike).unwrap();
        assert_eq!(fingerprint(&image), fingerprint(&look_alike));
        let mut l = Labeller::new();
        let lines = [
            format!(r#"{{"data":"{image}"}}"#),
            format!(r#"{{"content":[{{"data":"{image}","x":"{look_alike}"}}]}}"#),
            format!(r#"{{"data":"{look_alike}","text":"\n{image}\u00e9"}}"#),
        ];
        let (d, e) = (digest(&image), digest(&look_alike));
        assert_ne!(d, e);
        let out: Vec<String> = lines.iter().map(|line| l.line(line)).collect();
        assert_eq!(
            out,
            [
                format!(r#"{{"data":"{d}"}}"#),
                format!(r#"{{"content":[{{"data":"{d}","x":"{e}"}}]}}"#),
                format!(r#"{{"data":"{e}","text":"\n{d}é"}}"#),
            ]
        );
    }

    #[test]
    fn an_id_before_its_tool_use_type_is_still_a_tool_call_id() {
        let mut l = Labeller::new();
        let a = l.line(r#"{"id":"call_7","type":"tool_use","x":{"id":"call_7","type":"text"}}"#);
        assert_eq!(
            a,
            r#"{"id":"<tool-call 1>","type":"tool_use","x":{"id":"<tool-call 1>","type":"text"}}"#
        );
    }

    #[test]
    fn a_line_that_is_not_json_is_kept_as_text() {
        let mut l = Labeller::new();
        assert_eq!(l.line("garbage {"), "(not JSON) garbage {");
    }
}
