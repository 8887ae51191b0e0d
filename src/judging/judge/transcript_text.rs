//! A case's rendered transcript (what its golden holds), written one line
//! at a time as the replay is judged: kept in memory while small, and past
//! [`IN_MEMORY_MAX`] in an anonymous temporary file, so a replay of a
//! million events holds no transcript. Whoever reads it (the `replay`
//! command's print, the HTML report, blessing) reads it back from there.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex};

use crate::judging::replay::transcript::LineText;

/// A transcript longer than this goes to a temporary file as it is written.
pub const IN_MEMORY_MAX: usize = 8 << 20;

/// A rendered transcript, in memory or in its temporary file (removed when
/// the last clone is dropped).
#[derive(Clone, Default)]
pub struct TranscriptText {
    text: Text,
}

#[derive(Clone)]
enum Text {
    Memory(String),
    File { file: Arc<Mutex<File>>, len: u64 },
}

impl Default for Text {
    fn default() -> Text {
        Text::Memory(String::new())
    }
}

impl TranscriptText {
    /// Its length in bytes.
    pub fn len(&self) -> u64 {
        match &self.text {
            Text::Memory(s) => s.len() as u64,
            Text::File { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes the whole text to `out`, a buffer at a time.
    pub fn write_to(&self, out: &mut dyn Write) -> io::Result<()> {
        match &self.text {
            Text::Memory(s) => out.write_all(s.as_bytes()),
            Text::File { file, len } => {
                let mut file = file.lock().map_err(|_| io::Error::other("poisoned"))?;
                file.seek(SeekFrom::Start(0))?;
                let copied = io::copy(&mut (&mut *file).take(*len), out)?;
                if copied == *len {
                    Ok(())
                } else {
                    Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the transcript's temporary file is shorter than was written",
                    ))
                }
            }
        }
    }

    /// Every line, without its newline, in order; `f` stops the walk by
    /// returning false. Reading back a spilled transcript fails only if its
    /// temporary file does.
    pub fn for_each_line(&self, mut f: impl FnMut(&str) -> bool) -> io::Result<()> {
        match &self.text {
            Text::Memory(s) => {
                for line in s.lines() {
                    if !f(line) {
                        break;
                    }
                }
                Ok(())
            }
            Text::File { file, len } => {
                let mut file = file.lock().map_err(|_| io::Error::other("poisoned"))?;
                file.seek(SeekFrom::Start(0))?;
                let mut reader = BufReader::new((&mut *file).take(*len));
                let mut line = String::new();
                loop {
                    line.clear();
                    if reader.read_line(&mut line)? == 0 {
                        return Ok(());
                    }
                    let text = line.strip_suffix('\n').unwrap_or(&line);
                    if !f(text.strip_suffix('\r').unwrap_or(text)) {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Whether any line holds `needle`.
    pub fn contains(&self, needle: &str) -> bool {
        let mut found = false;
        let _ = self.for_each_line(|l| {
            found = l.contains(needle);
            !found
        });
        found
    }

    /// The whole text as one string (for a transcript known to be small, or
    /// a reader that needs it whole: insta, the HTML report).
    pub fn text(&self) -> String {
        match &self.text {
            Text::Memory(s) => s.clone(),
            Text::File { .. } => {
                let mut out = Vec::new();
                let _ = self.write_to(&mut out);
                String::from_utf8_lossy(&out).into_owned()
            }
        }
    }
}

impl From<String> for TranscriptText {
    fn from(text: String) -> TranscriptText {
        TranscriptText {
            text: Text::Memory(text),
        }
    }
}

impl fmt::Display for TranscriptText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.text {
            Text::Memory(s) => f.write_str(s),
            Text::File { .. } => f.write_str(&self.text()),
        }
    }
}

impl fmt::Debug for TranscriptText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.text {
            Text::Memory(s) => write!(f, "TranscriptText({} bytes in memory)", s.len()),
            Text::File { len, .. } => write!(f, "TranscriptText({len} bytes in a file)"),
        }
    }
}

/// Writes a [`TranscriptText`] one line at a time; a line goes to the
/// temporary file as it is serialised, once the text is past
/// [`IN_MEMORY_MAX`].
#[derive(Default)]
pub struct Writer {
    memory: Vec<u8>,
    file: Option<BufWriter<File>>,
    len: u64,
    error: Option<io::Error>,
}

impl Writer {
    /// Appends a line, `prefix` then `text`, and a newline.
    pub fn line(&mut self, prefix: &str, text: &str) {
        self.put(prefix, LineText::Text(text));
    }

    /// [`Writer::line`] of a rendered line's text (a JSON value is
    /// serialised straight into the transcript).
    pub fn put(&mut self, prefix: &str, text: LineText<'_>) {
        if self.error.is_some() {
            return;
        }
        let written = self
            .write_all(prefix.as_bytes())
            .and_then(|()| text.write_to(self))
            .and_then(|()| self.write_all(b"\n"));
        if let Err(e) = written {
            self.error = Some(e);
        }
    }
}

impl Write for Writer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.len += buf.len() as u64;
        if self.file.is_none() && self.memory.len() + buf.len() < IN_MEMORY_MAX {
            self.memory.extend_from_slice(buf);
            return Ok(buf.len());
        }
        let file = match &mut self.file {
            Some(f) => f,
            None => {
                let mut file = BufWriter::with_capacity(1 << 16, tempfile::tempfile()?);
                file.write_all(&std::mem::take(&mut self.memory))?;
                self.file.insert(file)
            }
        };
        file.write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Writer {
    /// The text written; an error when its temporary file could not be
    /// written (the disk is full), naming why.
    pub fn finish(self) -> Result<TranscriptText, io::Error> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let text = match self.file {
            None => Text::Memory(
                String::from_utf8(self.memory)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            ),
            Some(file) => {
                let file = file.into_inner().map_err(|e| e.into_error())?;
                Text::File {
                    file: Arc::new(Mutex::new(file)),
                    len: self.len,
                }
            }
        };
        Ok(TranscriptText { text })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_transcript_reads_back_as_written_from_its_file() {
        let line = "x".repeat(1000);
        for lines in [3, IN_MEMORY_MAX / 1000 + 10] {
            let mut w = Writer::default();
            for i in 0..lines {
                w.line(&format!("{i} "), &line);
            }
            let t = w.finish().unwrap();
            let spilled = format!("{t:?}").contains("in a file");
            assert_eq!(spilled, lines > 100, "{t:?}");
            let mut n = 0;
            t.for_each_line(|l| {
                assert_eq!(l, format!("{n} {line}"));
                n += 1;
                true
            })
            .unwrap();
            assert_eq!(n, lines);
            assert_eq!(t.len(), t.text().len() as u64);
            assert!(t.contains(&format!("{} x", lines - 1)));
            assert!(!t.contains("absent"));
        }
    }
}
