//! Normalisation of the JSON lines that go into a transcript.
//!
//! Replay feeds the bridge a fake clock and counter ids, so almost everything
//! it prints is already deterministic. What is left varies between recordings
//! of the same scenario (session ids, tool-call ids, uuids minted by agents),
//! so those values get stable first-seen labels (`<session 1>`), and big
//! base64 payloads are replaced by a digest so goldens stay readable.

use std::collections::HashMap;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Base64 runs at least this long are replaced by a digest.
pub const BASE64_DIGEST_MIN: usize = 200;

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

    /// The label kind of a value stored under `key` in `parent`, if any.
    fn of_key(key: &str, parent: &serde_json::Map<String, Value>) -> Option<LabelKind> {
        match key {
            "sessionId" | "session_id" => Some(LabelKind::Session),
            "toolCallId" | "tool_use_id" => Some(LabelKind::ToolCall),
            "id" if parent.get("type").and_then(Value::as_str) == Some("tool_use") => {
                Some(LabelKind::ToolCall)
            }
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
    /// The longest labelled value: a longer string (a base64 image) is no
    /// label's value, and is not hashed to find that out.
    longest: usize,
}

impl Labeller {
    pub fn new() -> Labeller {
        Labeller::default()
    }

    fn label(&mut self, kind: LabelKind, value: &str) -> String {
        if let Some(label) = self.labels.get(value) {
            return label.clone();
        }
        let n = self.counts.entry(kind).or_insert(0);
        *n += 1;
        let label = format!("<{} {}>", kind.name(), n);
        self.longest = self.longest.max(value.len());
        self.labels.insert(value.to_string(), label.clone());
        label
    }

    /// Normalises one JSON line for a transcript: labels, digests, compact form.
    /// A line that is not JSON is kept as text (digested where it holds base64).
    pub fn line(&mut self, raw: &str) -> String {
        match serde_json::from_str::<Value>(raw) {
            Ok(mut value) => {
                self.value(&mut value);
                serde_json::to_string(&value).unwrap_or_else(|_| raw.to_string())
            }
            Err(_) => format!("(not JSON) {}", digest_base64_runs(raw)),
        }
    }

    /// Normalises a JSON value in place.
    pub fn value(&mut self, value: &mut Value) {
        match value {
            Value::Object(map) => {
                let keys: Vec<String> = map.keys().cloned().collect();
                for key in keys {
                    let kind = LabelKind::of_key(&key, map);
                    let slot = map.get_mut(&key).expect("key listed from this map");
                    match (kind, &*slot) {
                        (Some(kind), Value::String(s)) if !s.is_empty() && !is_label(s) => {
                            let label = self.label(kind, s);
                            *slot = Value::String(label);
                        }
                        _ => self.value(slot),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.value(v)),
            Value::String(s) => {
                if let Some(label) = Some(s.len())
                    .filter(|n| (GLOBAL_LABEL_MIN..=self.longest).contains(n))
                    .and_then(|_| self.labels.get(s.as_str()))
                {
                    *s = label.clone();
                } else if is_uuid(s) {
                    *s = self.label(LabelKind::Uuid, s);
                } else if let Some(d) = digested(s) {
                    *s = d;
                }
            }
            _ => {}
        }
    }
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
    digested(s).unwrap_or_else(|| s.to_string())
}

/// [`digest_base64_runs`], `None` when no run is long enough (nothing to copy).
fn digested(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    if bytes.len() < BASE64_DIGEST_MIN {
        return None;
    }
    let is_base64 = |c: &u8| BASE64_BYTE[*c as usize];
    let mut out: Option<String> = None;
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        let Some(start) = bytes[i..].iter().position(is_base64).map(|k| i + k) else {
            break;
        };
        let end = bytes[start..]
            .iter()
            .position(|c| !is_base64(c))
            .map_or(bytes.len(), |k| start + k);
        if end - start >= BASE64_DIGEST_MIN {
            let out = out.get_or_insert_with(|| String::with_capacity(s.len().min(4096)));
            out.push_str(&s[copied..start]);
            out.push_str(&digest(&s[start..end]));
            copied = end;
        }
        i = end;
    }
    let mut out = out?;
    out.push_str(&s[copied..]);
    Some(out)
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

    #[test]
    fn a_line_that_is_not_json_is_kept_as_text() {
        let mut l = Labeller::new();
        assert_eq!(l.line("garbage {"), "(not JSON) garbage {");
    }
}
