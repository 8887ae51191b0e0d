//! The transcript of one replay: every panel line in, every bridge line out
//! (to the panel and to the agent), every agent frame the fake agent
//! released, divergences and notes, in the order they happened. Rendered
//! normalised, it is the golden.

use std::fmt;
use std::io;

use serde_json::Value;

use super::divergence::{Divergence, render_diff, shorten};
use super::normalise::Labeller;

/// One thing that happened during a replay.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// A stream-json line the panel driver sent to the bridge.
    Panel(String),
    /// A stream-json line the bridge emitted for the panel.
    BridgeToPanel(String),
    /// A JSON-RPC line the bridge sent to the agent.
    BridgeToAgent(String),
    /// A recorded agent line the fake agent released to the bridge.
    AgentToBridge(String),
    Divergence(Divergence),
    /// What the replayer did (a new process, the end of the recording).
    Note(String),
}

/// The entries of one replay, in order.
#[derive(Debug, Default, Clone)]
pub struct Transcript {
    pub entries: Vec<Entry>,
}

/// Longest rendering of a value inside a divergence line.
const DIFF_VALUE_MAX: usize = 160;

impl Transcript {
    pub fn push(&mut self, entry: Entry) {
        self.entries.push(entry);
    }

    pub fn note(&mut self, text: impl Into<String>) {
        self.entries.push(Entry::Note(text.into()));
    }

    pub fn divergences(&self) -> impl Iterator<Item = &Divergence> {
        self.entries.iter().filter_map(|e| match e {
            Entry::Divergence(d) => Some(d),
            _ => None,
        })
    }

    /// The normalised text: one line per entry (a divergence adds one
    /// indented line per differing field). Labels are assigned first-seen
    /// over the whole transcript.
    pub fn render(&self) -> String {
        self.render_parsed(Vec::new(), Vec::new())
    }

    /// [`Transcript::render`] given the bridge's panel lines and the agent's
    /// released lines already parsed (`None`: not JSON), one per
    /// `BridgeToPanel` and `AgentToBridge` entry in order, as the replay
    /// keeps them; for a kind with any other count every line is parsed here.
    /// The values are normalised in place (an image's megabytes are not
    /// copied), so the render is their last reader.
    pub fn render_parsed(
        &self,
        panel_values: Vec<Option<Value>>,
        agent_values: Vec<Option<Value>>,
    ) -> String {
        let mut renderer = Renderer::default();
        let mut out = String::new();
        let count = |kind: fn(&Entry) -> bool| self.entries.iter().filter(|e| kind(e)).count();
        let to_panel = count(|e| matches!(e, Entry::BridgeToPanel(_)));
        let to_bridge = count(|e| matches!(e, Entry::AgentToBridge(_)));
        let mut panel_parsed = (to_panel == panel_values.len()).then(|| panel_values.into_iter());
        let mut agent_parsed = (to_bridge == agent_values.len()).then(|| agent_values.into_iter());
        for entry in &self.entries {
            let value = match entry {
                Entry::BridgeToPanel(_) => panel_parsed.as_mut().and_then(Iterator::next),
                Entry::AgentToBridge(_) => agent_parsed.as_mut().and_then(Iterator::next),
                _ => None,
            };
            renderer.entry(entry, value.flatten(), |prefix, text| {
                use fmt::Write;
                let _ = writeln!(out, "{prefix}{text}");
            });
        }
        out
    }
}

/// The text of one transcript line as [`Renderer::entry`] hands it out: a
/// parsed line comes as its normalised value, for whoever takes it to
/// serialise where the line goes, so a folded message of megabytes is never
/// a second string.
#[derive(Debug, Clone, Copy)]
pub enum LineText<'a> {
    Text(&'a str),
    /// Written in its compact form (one line: JSON escapes every newline).
    Json(&'a Value),
}

impl LineText<'_> {
    /// Writes the text to `out`.
    pub fn write_to(&self, out: &mut impl io::Write) -> io::Result<()> {
        match self {
            LineText::Text(t) => out.write_all(t.as_bytes()),
            LineText::Json(v) => serde_json::to_writer(out, v).map_err(io::Error::other),
        }
    }
}

impl fmt::Display for LineText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        /// serde_json writes whole UTF-8 pieces (it cuts a string only at
        /// the ASCII characters it escapes).
        struct Adapter<'a, 'b>(&'a mut fmt::Formatter<'b>);
        impl io::Write for Adapter<'_, '_> {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                let s = std::str::from_utf8(buf).map_err(io::Error::other)?;
                self.0.write_str(s).map_err(io::Error::other)?;
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        self.write_to(&mut Adapter(f)).map_err(|_| fmt::Error)
    }
}

/// Renders a transcript one entry at a time, as the entries happen: the
/// labels are assigned first-seen over what was rendered before, so the
/// lines are those of [`Transcript::render`] whether or not the entries are
/// ever held together.
#[derive(Debug, Default)]
pub struct Renderer {
    labels: Labeller,
}

impl Renderer {
    /// Hands each transcript line of `entry` to `emit` as its prefix and its
    /// text, without a newline (one line, or a divergence's headline and one
    /// per differing field): a folded message of megabytes is not copied to
    /// join them. `value` is the entry's line already parsed (a
    /// `BridgeToPanel` or `AgentToBridge` entry; `None`: parse it here),
    /// normalised in place and handed out as it is.
    pub fn entry(
        &mut self,
        entry: &Entry,
        value: Option<Value>,
        mut emit: impl FnMut(&str, LineText<'_>),
    ) {
        let labels = &mut self.labels;
        let mut line = |prefix: &str, text: &str| {
            // A transcript line is one line: a stray newline (a non-JSON
            // agent line) would shift every later line of the diff.
            if text.contains(['\n', '\r']) {
                let text = text.replace('\r', "\\r").replace('\n', "\\n");
                emit(prefix, LineText::Text(&text))
            } else {
                emit(prefix, LineText::Text(text))
            }
        };
        match (entry, value) {
            (Entry::BridgeToPanel(_), Some(mut v)) => {
                labels.value(&mut v);
                emit("bridge>panel ", LineText::Json(&v));
            }
            (Entry::AgentToBridge(_), Some(mut v)) => {
                labels.value(&mut v);
                emit("agent>bridge ", LineText::Json(&v));
            }
            (Entry::Panel(l), _) => line("panel> ", &labels.line(l)),
            (Entry::BridgeToPanel(l), None) => line("bridge>panel ", &labels.line(l)),
            (Entry::BridgeToAgent(l), _) => line("bridge>agent ", &labels.line(l)),
            (Entry::AgentToBridge(l), None) => line("agent>bridge ", &labels.line(l)),
            (Entry::Note(n), _) => line("-- ", &labels.note(n)),
            (Entry::Divergence(d), _) => {
                line("!! divergence: ", &d.headline());
                for diff in d.details() {
                    let mut show = |v: &Value| {
                        let mut v = v.clone();
                        labels.value(&mut v);
                        shorten(&v.to_string(), DIFF_VALUE_MAX)
                    };
                    let text = render_diff(diff, &mut show);
                    line("!!   ", &text);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_render_one_line_each_with_direction_prefixes_and_shared_labels() {
        let mut t = Transcript::default();
        t.push(Entry::Panel(r#"{"type":"user"}"#.into()));
        t.push(Entry::BridgeToAgent(
            r#"{"method":"session/prompt","params":{"sessionId":"S"}}"#.into(),
        ));
        t.push(Entry::AgentToBridge("oops\nline".into()));
        t.push(Entry::BridgeToPanel(
            r#"{"type":"result","session_id":"S"}"#.into(),
        ));
        t.note("agent process 1 exited");
        assert_eq!(
            t.render(),
            concat!(
                "panel> {\"type\":\"user\"}\n",
                "bridge>agent {\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"<session 1>\"}}\n",
                "agent>bridge (not JSON) oops\\nline\n",
                "bridge>panel {\"type\":\"result\",\"session_id\":\"<session 1>\"}\n",
                "-- agent process 1 exited\n",
            )
        );
    }

    #[test]
    fn lines_parsed_by_the_replay_render_as_lines_parsed_here() {
        let image = "iVBORw0KGgo".repeat(100);
        let mut t = Transcript::default();
        let lines = [
            format!(
                r#"{{"type":"user","session_id":"S","content":[{{"data":"{image}\u00e9\/"}}]}}"#
            ),
            "not json".to_string(),
            r#"{"type":"result","session_id":"S"}"#.to_string(),
        ];
        for l in &lines {
            t.push(Entry::AgentToBridge(l.clone()));
            t.push(Entry::BridgeToPanel(l.clone()));
        }
        let parsed: Vec<Option<Value>> =
            lines.iter().map(|l| serde_json::from_str(l).ok()).collect();
        assert_eq!(t.render_parsed(parsed.clone(), parsed.clone()), t.render());
        // a count that does not match the entries: every line parsed here
        assert_eq!(
            t.render_parsed(parsed[..1].to_vec(), parsed.clone()),
            t.render()
        );
        assert_eq!(t.render_parsed(parsed.clone(), Vec::new()), t.render());
    }
}
