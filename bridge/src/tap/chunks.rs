//! A credential or a user's path streamed in pieces: agents stream text a
//! few characters at a time, and the bridge passes it on to the panel as
//! deltas, so a pasted key spans many lines and no one line holds it. The
//! tap holds each way's streamed text back until [`WINDOW`] bytes of it have
//! followed (or that stream ended), looks for what the scrubber finds in the
//! joined text, and redacts a find in the lines it came from: the first
//! keeps the placeholder, the others lose their part of it. Lines leave in
//! the order they came.

use std::borrow::Cow;
use std::collections::VecDeque;

use serde_json::Value;

use super::Way;
use super::scrub::Scrubber;

/// How much streamed text follows a piece before it is written: a find
/// longer than this that started in a written piece escapes.
pub const WINDOW: usize = 512;

/// Held lines are written regardless past this many bytes (a huge line
/// behind a held piece must not grow the hold without bound).
const MAX_HELD_BYTES: usize = 4 << 20;

/// A line of the session on its way to the tap.
#[derive(Debug)]
pub struct Pending {
    pub ms: u64,
    pub way: Way,
    pub raw: String,
    pub skipped: Option<super::Skipped>,
    piece: Option<Piece>,
}

impl Pending {
    pub fn new(ms: u64, way: Way, raw: String, skipped: Option<super::Skipped>) -> Pending {
        Pending {
            ms,
            way,
            raw,
            skipped,
            piece: None,
        }
    }
}

/// The streamed text a line carries.
#[derive(Debug)]
struct Piece {
    stream: u64,
    /// The stream's text bytes up to the end of this piece.
    end: usize,
    text: String,
    /// Where the text is in the line's JSON.
    pointer: &'static str,
    edited: bool,
}

#[derive(Debug)]
struct OpenStream {
    way: Way,
    kind: &'static str,
    id: u64,
    /// Its text bytes so far.
    total: usize,
}

/// The held lines and the open stream of each way.
#[derive(Debug, Default)]
pub struct ChunkWindow {
    queue: VecDeque<Pending>,
    held_bytes: usize,
    /// The streams still open, one per way at most.
    open: Vec<OpenStream>,
    next_stream: u64,
}

impl ChunkWindow {
    /// Takes the next line and returns the lines that may be written now.
    pub fn push(&mut self, mut line: Pending, scrubber: &mut Scrubber) -> Vec<Pending> {
        let streamed = streamed_text(line.way, &line.raw);
        // any other line of the same way ends the way's open stream
        let kind = streamed.as_ref().map(|s| s.0);
        let ending: Vec<u64> = self
            .open
            .iter()
            .filter(|s| s.way == line.way && Some(s.kind) != kind)
            .map(|s| s.id)
            .collect();
        self.open.retain(|s| !ending.contains(&s.id));
        for stream in ending {
            self.redact_across(stream, scrubber, true);
        }
        if let Some((kind, pointer, text)) = streamed {
            let open = match self.open.iter().position(|s| s.way == line.way) {
                Some(i) => &mut self.open[i],
                None => {
                    self.next_stream += 1;
                    self.open.push(OpenStream {
                        way: line.way,
                        kind,
                        id: self.next_stream,
                        total: 0,
                    });
                    self.open.last_mut().expect("just pushed")
                }
            };
            open.total += text.len();
            let stream = open.id;
            line.piece = Some(Piece {
                stream,
                end: open.total,
                text,
                pointer,
                edited: false,
            });
            self.held_bytes += line.raw.len();
            self.queue.push_back(line);
            self.redact_across(stream, scrubber, false);
        } else {
            self.held_bytes += line.raw.len();
            self.queue.push_back(line);
        }
        self.release(false)
    }

    /// Every held line, for the end of the session.
    pub fn drain(&mut self, scrubber: &mut Scrubber) -> Vec<Pending> {
        for stream in std::mem::take(&mut self.open) {
            self.redact_across(stream.id, scrubber, true);
        }
        self.release(true)
    }

    /// Finds in the joined text of `stream`'s held pieces that span two
    /// pieces or more, replaced in those pieces. Until the stream has
    /// `ended`, a find reaching the end of the text so far waits: the next
    /// piece may make it longer.
    fn redact_across(&mut self, stream: u64, scrubber: &mut Scrubber, ended: bool) {
        // the stream's held pieces, newest first, back to a window of text
        let mut newest_first = Vec::new();
        let mut bytes = 0;
        for (i, line) in self.queue.iter().enumerate().rev() {
            if let Some(p) = line.piece.as_ref().filter(|p| p.stream == stream) {
                newest_first.push(i);
                bytes += p.text.len();
                if bytes > 2 * WINDOW {
                    break;
                }
            }
        }
        let mut joined = String::with_capacity(bytes);
        let mut starts = Vec::with_capacity(newest_first.len());
        for &i in newest_first.iter().rev() {
            let p = self.queue[i].piece.as_ref().expect("a piece");
            starts.push((i, joined.len()));
            joined.push_str(&p.text);
        }
        if starts.len() < 2 {
            return;
        }
        let piece_at = |offset: usize| starts.iter().rposition(|(_, s)| *s <= offset).unwrap_or(0);
        // from the last find back, so earlier offsets stay true
        for (kind, placeholder, start, end) in scrubber.spans(&joined).into_iter().rev() {
            let (first, last) = (piece_at(start), piece_at(end.saturating_sub(1)));
            if first == last || !ended && end == joined.len() {
                continue;
            }
            scrubber.count(kind);
            for (k, &(index, piece_start)) in starts.iter().enumerate().take(last + 1).skip(first) {
                let piece = self.queue[index].piece.as_mut().expect("a piece");
                let len = piece.text.len();
                let from = start.saturating_sub(piece_start).min(len);
                let to = (end - piece_start).min(len);
                let keep = if k == first { placeholder.as_str() } else { "" };
                piece.text.replace_range(from..to, keep);
                piece.edited = true;
            }
        }
    }

    /// Pops the lines at the front that may be written: no piece, a piece
    /// whose stream ended or has [`WINDOW`] bytes after it; all with `all`.
    fn release(&mut self, all: bool) -> Vec<Pending> {
        let mut out = Vec::new();
        while let Some(front) = self.queue.front() {
            let ready = all
                || self.held_bytes > MAX_HELD_BYTES
                || match &front.piece {
                    None => true,
                    Some(p) => self
                        .open
                        .iter()
                        .find(|s| s.id == p.stream)
                        .is_none_or(|s| s.total - p.end >= WINDOW),
                };
            if !ready {
                break;
            }
            let mut line = self.queue.pop_front().expect("a front line");
            self.held_bytes -= line.raw.len();
            if let Some(piece) = line.piece.take().filter(|p| p.edited) {
                line.raw = rewritten(&line.raw, piece.pointer, piece.text);
            }
            out.push(line);
        }
        out
    }
}

/// The line with the text at `pointer` replaced (its other bytes as
/// serde_json writes them, keys in their order).
fn rewritten(raw: &str, pointer: &str, text: String) -> String {
    let Ok(mut v) = serde_json::from_str::<Value>(raw) else {
        return raw.to_string();
    };
    match v.pointer_mut(pointer) {
        Some(slot) => *slot = Value::String(text),
        None => return raw.to_string(),
    }
    v.to_string()
}

/// A line longer than this is no piece of streamed text (an image, a file):
/// it is not parsed for one.
const MAX_PIECE_LINE: usize = 64 * 1024;

/// The panel's `stream_event` lines, read only as far as a delta's text.
#[derive(serde::Deserialize)]
struct PanelLine<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    event: PanelEvent<'a>,
}

#[derive(serde::Deserialize)]
struct PanelEvent<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    delta: PanelDelta<'a>,
}

#[derive(serde::Deserialize)]
struct PanelDelta<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    thinking: Option<Cow<'a, str>>,
}

/// The streamed text a line carries: (kind, pointer, text). The agent's
/// message, thought and user chunks; the panel's text and thinking deltas.
pub fn streamed_text(way: Way, raw: &str) -> Option<(&'static str, &'static str, String)> {
    if raw.len() > MAX_PIECE_LINE {
        return None;
    }
    match way {
        Way::AgentToBridge => {
            if let Some(chunk) = crate::acp::chunk_frame::parse(raw) {
                return Some((
                    chunk.kind.as_str(),
                    "/params/update/content/text",
                    chunk.text.into_owned(),
                ));
            }
            if !raw.contains("user_message_chunk") {
                return None;
            }
            let v: Value = serde_json::from_str(raw).ok()?;
            let update = &v["params"]["update"];
            if v["method"] != "session/update" || update["content"]["type"] != "text" {
                return None;
            }
            if update["sessionUpdate"] != "user_message_chunk" {
                return None;
            }
            let kind = "user_message_chunk";
            let text = update["content"]["text"].as_str()?.to_string();
            Some((kind, "/params/update/content/text", text))
        }
        Way::BridgeToPanel if raw.contains("content_block_delta") => {
            let line: PanelLine = serde_json::from_str(raw).ok()?;
            if line.kind != "stream_event" || line.event.kind != "content_block_delta" {
                return None;
            }
            let delta = line.event.delta;
            match (&*delta.kind, delta.text, delta.thinking) {
                ("text_delta", Some(text), _) => {
                    Some(("text_delta", "/event/delta/text", text.into_owned()))
                }
                ("thinking_delta", _, Some(text)) => {
                    Some(("thinking_delta", "/event/delta/thinking", text.into_owned()))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(text: &str) -> String {
        serde_json::json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s",
            "update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":text}}}})
        .to_string()
    }

    fn delta(text: &str) -> String {
        serde_json::json!({"type":"stream_event","event":{"type":"content_block_delta","index":0,
            "delta":{"type":"text_delta","text":text}}})
        .to_string()
    }

    fn run(lines: &[(Way, String)], scrubber: &mut Scrubber) -> Vec<(Way, String)> {
        let mut w = ChunkWindow::default();
        let mut out = Vec::new();
        for (i, (way, raw)) in lines.iter().enumerate() {
            for p in w.push(Pending::new(i as u64, *way, raw.clone(), None), scrubber) {
                out.push((p.way, p.raw));
            }
        }
        out.extend(w.drain(scrubber).into_iter().map(|p| (p.way, p.raw)));
        out
    }

    fn split(text: &str, n: usize) -> Vec<String> {
        text.chars()
            .collect::<Vec<_>>()
            .chunks(n)
            .map(|c| c.iter().collect())
            .collect()
    }

    /// A key and a path streamed 5 characters at a time, on both ways,
    /// interleaved: each is redacted in the pieces it came from, every
    /// other byte and the order of the lines kept.
    #[test]
    fn finds_across_pieces_are_redacted_in_the_pieces_they_came_from() {
        let mut b = Scrubber::builder();
        b.path("home", "<home>", "/home/zoe");
        let mut scrubber = b.build();
        let said = "use sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv and /home/zoe/x, done";
        let mut lines = Vec::new();
        for piece in split(said, 5) {
            lines.push((Way::AgentToBridge, chunk(&piece)));
            lines.push((Way::BridgeToPanel, delta(&piece)));
        }
        lines.push((
            Way::AgentToBridge,
            r#"{"jsonrpc":"2.0","id":3,"result":{}}"#.into(),
        ));
        let out = run(&lines, &mut scrubber);
        assert_eq!(out.len(), lines.len());
        for (way, want) in [
            (Way::AgentToBridge, "/params/update/content/text"),
            (Way::BridgeToPanel, "/event/delta/text"),
        ] {
            let joined: String = out
                .iter()
                .filter(|(w, _)| *w == way)
                .filter_map(|(_, raw)| serde_json::from_str::<Value>(raw).ok())
                .filter_map(|v| v.pointer(want).and_then(Value::as_str).map(str::to_string))
                .collect();
            assert_eq!(joined, "use <redacted> and <home>/x, done", "{way:?}");
        }
        let ways: Vec<Way> = out.iter().map(|(w, _)| *w).collect();
        let sent: Vec<Way> = lines.iter().map(|(w, _)| *w).collect();
        assert_eq!(ways, sent, "the order of the lines");
        assert_eq!(scrubber.counts().get("sk-key"), Some(&2));
        assert_eq!(scrubber.counts().get("home"), Some(&2));
    }

    /// Text held back is written once [`WINDOW`] bytes follow it, so the
    /// hold stays bounded in a long stream; a stream's end writes it all.
    #[test]
    fn a_piece_is_held_only_until_a_window_of_text_follows_it() {
        let mut scrubber = Scrubber::builder().build();
        let mut w = ChunkWindow::default();
        let piece = "x".repeat(100);
        let mut written = 0;
        for i in 0..30 {
            written += w
                .push(
                    Pending::new(i, Way::AgentToBridge, chunk(&piece), None),
                    &mut scrubber,
                )
                .len();
            let held = i as usize + 1 - written;
            assert!(held <= WINDOW / 100 + 1, "{held} held after {i}");
        }
        let ended = w.push(
            Pending::new(
                31,
                Way::AgentToBridge,
                r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.into(),
                None,
            ),
            &mut scrubber,
        );
        assert_eq!(written + ended.len(), 31);
    }
}
