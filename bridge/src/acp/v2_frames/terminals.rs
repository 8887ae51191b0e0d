//! v2's agent-owned terminals read into v1's model. A v2 agent runs a
//! command in a terminal of its own, shows it in a call's content as a
//! `terminal` block (`terminalId`), and sends its output apart:
//! `terminal_output_chunk` appends base64 bytes, `terminal_update` may carry
//! a snapshot of the whole output (`output.data`). v1's model already has
//! what that is: output streamed beside a `terminal` block in
//! `_meta.terminal_output` deltas (Zed's convention), which the call's
//! result shows. So each piece of output becomes such a delta on the call
//! that shows the terminal; output that comes before any call shows its
//! terminal is held (bounded) until one does.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hasher};

use base64::Engine;
use serde_json::{Value, json};

/// At most this many terminals are followed; output for others is dropped
/// with a diagnostic.
const MAX_TERMINALS: usize = 1024;

/// Output held for terminals no call shows yet, across all of them, and
/// for one of them (a panel's `Bash` result is cut far sooner).
const MAX_HELD_BYTES: usize = 1 << 20;
const MAX_TERMINAL_OUTPUT: usize = 256 * 1024;

/// One terminal: the call that shows it, and the bytes seen so far.
#[derive(Debug, Default)]
struct Terminal {
    call: Option<String>,
    /// Text waiting for a call to show the terminal.
    held: String,
    /// The tail of a UTF-8 character split between two pieces.
    carry: Vec<u8>,
    /// How many output bytes came, and their hash: a snapshot that starts
    /// with them extends them.
    seen_len: usize,
    seen_hash: DefaultHasher,
}

/// What a piece of terminal output is to the core.
#[derive(Debug, PartialEq)]
pub(super) enum Output {
    /// `_meta.terminal_output` text for this call.
    Delta { call: String, text: String },
    /// Held until a call shows the terminal, or nothing new.
    Nothing,
    /// Said as a diagnostic.
    Skipped(String),
}

#[derive(Debug, Default)]
pub(super) struct Terminals {
    terminals: HashMap<String, Terminal>,
    held_bytes: usize,
}

impl Terminals {
    /// A call's content shows `terminal_id`: output held for it is the
    /// call's now (`None` when there was none).
    pub fn shown_by(&mut self, terminal_id: &str, call: &str) -> Option<String> {
        let terminal = follow(&mut self.terminals, terminal_id)?;
        terminal.call = Some(call.to_string());
        let held = std::mem::take(&mut terminal.held);
        self.held_bytes -= held.len();
        (!held.is_empty()).then_some(held)
    }

    /// `terminal_output_chunk`: `data` (base64) appended to the output.
    pub fn chunk(&mut self, terminal_id: &str, data: &str) -> Output {
        match base64::engine::general_purpose::STANDARD.decode(data) {
            Ok(bytes) => self.append(terminal_id, &bytes),
            Err(e) => Output::Skipped(format!(
                "terminal_output_chunk for terminal {terminal_id} is not base64 ({e}); skipped"
            )),
        }
    }

    /// `terminal_update`'s `output.data` (base64): the whole output so far.
    /// What extends the bytes already seen is appended; a snapshot that
    /// rewrites them cannot be unsent (a diagnostic).
    pub fn snapshot(&mut self, terminal_id: &str, data: &str) -> Output {
        let bytes = match base64::engine::general_purpose::STANDARD.decode(data) {
            Ok(bytes) => bytes,
            Err(e) => {
                return Output::Skipped(format!(
                    "terminal_update output for terminal {terminal_id} is not base64 ({e}); skipped"
                ));
            }
        };
        let Some(terminal) = follow(&mut self.terminals, terminal_id) else {
            return too_many(terminal_id);
        };
        let extends = bytes.len() >= terminal.seen_len && {
            let mut prefix = DefaultHasher::new();
            prefix.write(&bytes[..terminal.seen_len]);
            prefix.finish() == terminal.seen_hash.finish()
        };
        if !extends {
            return Output::Skipped(format!(
                "terminal_update rewrites the output of terminal {terminal_id} the panel was given; the rewrite is skipped"
            ));
        }
        let new = bytes[terminal.seen_len..].to_vec();
        self.append(terminal_id, &new)
    }

    fn append(&mut self, terminal_id: &str, bytes: &[u8]) -> Output {
        let Some(terminal) = follow(&mut self.terminals, terminal_id) else {
            return too_many(terminal_id);
        };
        terminal.seen_len += bytes.len();
        terminal.seen_hash.write(bytes);
        let mut pending = std::mem::take(&mut terminal.carry);
        pending.extend_from_slice(bytes);
        let text = match std::str::from_utf8(&pending) {
            Ok(text) => text.to_string(),
            // an incomplete character at the end waits for the next piece
            Err(e) if e.error_len().is_none() => {
                let valid = e.valid_up_to();
                terminal.carry = pending[valid..].to_vec();
                String::from_utf8_lossy(&pending[..valid]).into_owned()
            }
            Err(_) => String::from_utf8_lossy(&pending).into_owned(),
        };
        if text.is_empty() {
            return Output::Nothing;
        }
        if let Some(call) = &terminal.call {
            return Output::Delta {
                call: call.clone(),
                text,
            };
        }
        let room = MAX_HELD_BYTES.saturating_sub(self.held_bytes);
        let room = room.min(MAX_TERMINAL_OUTPUT.saturating_sub(terminal.held.len()));
        let end = text.floor_char_boundary(room);
        terminal.held.push_str(&text[..end]);
        self.held_bytes += end;
        if end < text.len() {
            return Output::Skipped(format!(
                "output of terminal {terminal_id}, which no call shows yet, is over what is held; the rest is skipped"
            ));
        }
        Output::Nothing
    }
}

/// The terminal, followed from now on if there is room.
fn follow<'a>(
    terminals: &'a mut HashMap<String, Terminal>,
    terminal_id: &str,
) -> Option<&'a mut Terminal> {
    if !terminals.contains_key(terminal_id) && terminals.len() >= MAX_TERMINALS {
        return None;
    }
    Some(terminals.entry(terminal_id.to_string()).or_default())
}

fn too_many(terminal_id: &str) -> Output {
    Output::Skipped(format!(
        "output of terminal {terminal_id} skipped: {MAX_TERMINALS} terminals are followed already"
    ))
}

/// The `terminal` blocks' ids in a call update's `content`.
pub(super) fn shown_terminals(update: &Value) -> Vec<String> {
    terminal_blocks(update["content"].as_array().map_or(&[], Vec::as_slice))
        .filter_map(|block| block["terminalId"].as_str().map(str::to_string))
        .collect()
}

/// Whether a call's `content` entries show a terminal.
pub fn shows_a_terminal(content: &[Value]) -> bool {
    terminal_blocks(content).next().is_some()
}

fn terminal_blocks(content: &[Value]) -> impl Iterator<Item = &Value> {
    content.iter().filter(|block| block["type"] == "terminal")
}

/// A v1 `tool_call_update` carrying `text` as Zed's `_meta.terminal_output`
/// delta for the call.
pub(super) fn output_frame(session_id: &Value, call: &str, terminal_id: &str, text: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": session_id,
            "update": {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call,
                "_meta": {"terminal_output": {"terminal_id": terminal_id, "data": text}},
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(text: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(text)
    }

    fn delta(call: &str, text: &str) -> Output {
        Output::Delta {
            call: call.into(),
            text: text.into(),
        }
    }

    #[test]
    fn output_before_a_call_shows_the_terminal_is_held_then_streams_to_it() {
        let mut t = Terminals::default();
        assert_eq!(t.chunk("t1", &b64(b"a\n")), Output::Nothing);
        assert_eq!(t.shown_by("t1", "call_1").as_deref(), Some("a\n"));
        assert_eq!(t.shown_by("t1", "call_1"), None);
        assert_eq!(t.chunk("t1", &b64(b"b\n")), delta("call_1", "b\n"));
    }

    #[test]
    fn a_character_split_between_chunks_arrives_whole() {
        let mut t = Terminals::default();
        t.shown_by("t", "c");
        let e = "é".as_bytes();
        assert_eq!(t.chunk("t", &b64(&e[..1])), Output::Nothing);
        assert_eq!(
            t.chunk("t", &b64(&[&e[1..], b"!"].concat())),
            delta("c", "é!")
        );
    }

    #[test]
    fn a_snapshot_that_extends_the_output_adds_its_new_bytes_and_a_rewrite_is_skipped() {
        let mut t = Terminals::default();
        t.shown_by("t", "c");
        assert_eq!(t.chunk("t", &b64(b"one\n")), delta("c", "one\n"));
        assert_eq!(t.snapshot("t", &b64(b"one\ntwo\n")), delta("c", "two\n"));
        assert_eq!(t.snapshot("t", &b64(b"one\ntwo\n")), Output::Nothing);
        assert!(matches!(
            t.snapshot("t", &b64(b"ONE\n")),
            Output::Skipped(why) if why.contains("rewrites")
        ));
        assert!(matches!(t.chunk("t", "not base64!"), Output::Skipped(_)));
    }

    #[test]
    fn held_output_is_bounded() {
        let mut t = Terminals::default();
        let big = vec![b'x'; MAX_TERMINAL_OUTPUT + 10];
        assert!(matches!(t.chunk("t", &b64(&big)), Output::Skipped(_)));
        assert_eq!(
            t.shown_by("t", "c").map(|h| h.len()),
            Some(MAX_TERMINAL_OUTPUT)
        );
    }
}
