//! A golden compared with a transcript while the transcript is rendered:
//! the golden file is read one line at a time beside it, so neither is held
//! whole. They compare as insta compares them (the texts with trailing
//! whitespace trimmed: trailing blank lines and the last line's trailing
//! spaces do not count). Only when they differ is anything kept: the few
//! lines before the first difference and a bounded window from it on, which
//! explain a difference in a transcript too big to diff whole.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use super::golden::{Comparison, GoldenError};
use crate::judging::replay::transcript::LineText;

/// Equal lines kept before the first difference (the diff's context).
const CONTEXT_BEFORE: usize = 3;
/// Lines of each side kept from the first difference on.
const WINDOW_LINES: usize = 200;
/// Bytes of each side kept from the first difference on (the first
/// differing line is kept whole).
const WINDOW_BYTES: usize = 1 << 20;
/// A context or tail line kept longer than this is cut.
const KEPT_LINE_MAX: usize = 4096;
/// Transcript lines shown at the end of a failure.
pub const TAIL: usize = 12;

/// The text as insta compares it, one line at a time: a line goes out once
/// a later line shows it is not trailing; at the end the last non-blank
/// line goes out with its trailing whitespace trimmed, blank lines after it
/// not at all.
#[derive(Default)]
struct TrimEnd {
    held: VecDeque<String>,
}

impl TrimEnd {
    fn push(&mut self, line: String, out: &mut VecDeque<String>) {
        if !line.trim_end().is_empty() {
            out.extend(self.held.drain(..));
        }
        self.held.push_back(line);
    }

    fn finish(&mut self, out: &mut VecDeque<String>) {
        if let Some(first) = self.held.pop_front()
            && !first.trim_end().is_empty()
        {
            out.push_back(first.trim_end().to_string());
        }
        self.held.clear();
    }
}

/// A golden snapshot's text lines, read one at a time past its header.
struct GoldenLines {
    path: PathBuf,
    reader: BufReader<File>,
    trim: TrimEnd,
    ready: VecDeque<String>,
    done: bool,
}

impl GoldenLines {
    /// `None`: there is no golden yet.
    fn open(path: &Path) -> Result<Option<GoldenLines>, GoldenError> {
        if !path.exists() {
            return Ok(None);
        }
        let unreadable = |message: String| GoldenError::Unreadable {
            path: path.to_path_buf(),
            message,
        };
        let file = File::open(path).map_err(|e| unreadable(e.to_string()))?;
        let mut golden = GoldenLines {
            path: path.to_path_buf(),
            reader: BufReader::new(file),
            trim: TrimEnd::default(),
            ready: VecDeque::new(),
            done: false,
        };
        // insta's header: `---`, metadata, `---` (or the legacy form:
        // metadata up to a blank line)
        let first = golden.raw_line()?.unwrap_or_default();
        let yaml = first.trim_end() == "---";
        loop {
            let Some(line) = golden.raw_line()? else {
                if yaml {
                    return Err(unreadable("its header never ends (`---`)".into()));
                }
                break;
            };
            if yaml && line.trim_end() == "---" || !yaml && line.trim_end().is_empty() {
                break;
            }
            if yaml && line.trim() == "snapshot_kind: binary" {
                return Err(unreadable("not a text snapshot".into()));
            }
        }
        Ok(Some(golden))
    }

    fn raw_line(&mut self) -> Result<Option<String>, GoldenError> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => Ok(None),
            Ok(_) => {
                if line.ends_with('\n') {
                    line.pop();
                    if line.ends_with('\r') {
                        line.pop();
                    }
                }
                Ok(Some(line))
            }
            Err(e) => Err(GoldenError::Unreadable {
                path: self.path.clone(),
                message: e.to_string(),
            }),
        }
    }

    /// The next line as compared (`None`: no more).
    fn next(&mut self) -> Result<Option<String>, GoldenError> {
        while self.ready.is_empty() && !self.done {
            match self.raw_line()? {
                Some(line) => self.trim.push(line, &mut self.ready),
                None => {
                    self.trim.finish(&mut self.ready);
                    self.done = true;
                }
            }
        }
        Ok(self.ready.pop_front())
    }
}

/// A golden's text lines as insta compares them, read one at a time past
/// its header (`None`: there is no golden).
pub fn read_lines(
    path: &Path,
) -> Result<Option<impl Iterator<Item = Result<String, GoldenError>>>, GoldenError> {
    Ok(GoldenLines::open(path)?.map(|mut g| std::iter::from_fn(move || g.next().transpose())))
}

/// What is kept of both sides once they differ.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Window {
    /// 0-based index of the first line kept (the same on both sides: the
    /// lines before the first difference are equal).
    pub from: usize,
    /// 0-based index of the first differing line.
    pub first: usize,
    pub golden: Vec<String>,
    pub replay: Vec<String>,
    /// The transcript's last lines (each cut to a readable length).
    pub tail: Vec<String>,
}

enum Golden {
    Missing,
    Unreadable(String),
    Lines(GoldenLines),
}

/// A transcript compared with its golden line by line as it is written.
pub struct GoldenStream {
    golden: Golden,
    trim: TrimEnd,
    out: VecDeque<String>,
    compared: usize,
    before: VecDeque<String>,
    window: Option<Window>,
    replay_bytes: usize,
    tail: VecDeque<String>,
}

impl GoldenStream {
    /// Compares with the golden at `path` (none there: the comparison is
    /// `Missing` and nothing is kept).
    pub fn open(path: &Path) -> GoldenStream {
        let golden = match GoldenLines::open(path) {
            Ok(Some(g)) => Golden::Lines(g),
            Ok(None) => Golden::Missing,
            Err(e) => Golden::Unreadable(e.to_string()),
        };
        GoldenStream {
            golden,
            trim: TrimEnd::default(),
            out: VecDeque::new(),
            compared: 0,
            before: VecDeque::new(),
            window: None,
            replay_bytes: 0,
            tail: VecDeque::new(),
        }
    }

    /// Takes the transcript's next line, `prefix` then `text` (without its
    /// newline).
    pub fn line(&mut self, prefix: &str, text: &str) {
        self.put(prefix, LineText::Text(text));
    }

    /// [`GoldenStream::line`] of a rendered line's text; nothing is
    /// serialised when there is no golden to compare with.
    pub fn put(&mut self, prefix: &str, text: LineText<'_>) {
        if !matches!(self.golden, Golden::Lines(_)) {
            return;
        }
        self.trim.push(format!("{prefix}{text}"), &mut self.out);
        while let Some(line) = self.out.pop_front() {
            self.compare(Some(line));
        }
    }

    fn compare(&mut self, line: Option<String>) {
        let Golden::Lines(golden) = &mut self.golden else {
            return;
        };
        if let Some(l) = &line {
            push_cut(&mut self.tail, l, TAIL);
        }
        match &mut self.window {
            None => {
                let g = match golden.next() {
                    Ok(g) => g,
                    Err(e) => {
                        self.golden = Golden::Unreadable(e.to_string());
                        return;
                    }
                };
                if g.is_none() && line.is_none() {
                    return;
                }
                if g == line {
                    push_cut(
                        &mut self.before,
                        line.as_deref().unwrap_or(""),
                        CONTEXT_BEFORE,
                    );
                    self.compared += 1;
                    return;
                }
                let from = self.compared - self.before.len();
                let before: Vec<String> = self.before.drain(..).collect();
                let mut window = Window {
                    from,
                    first: self.compared,
                    golden: before.clone(),
                    replay: before,
                    tail: Vec::new(),
                };
                window.golden.extend(g);
                if let Some(l) = line {
                    self.replay_bytes = l.len();
                    window.replay.push(l);
                }
                self.window = Some(window);
            }
            Some(window) => {
                if let Some(l) = line
                    && window.replay.len() < CONTEXT_BEFORE + WINDOW_LINES
                    && self.replay_bytes < WINDOW_BYTES
                {
                    self.replay_bytes += l.len();
                    window.replay.push(l);
                }
            }
        }
    }

    /// How the transcript compared, and what is kept of both sides when
    /// they differ.
    pub fn finish(mut self) -> (Comparison, Option<Window>) {
        if matches!(self.golden, Golden::Lines(_)) {
            self.trim.finish(&mut self.out);
            while let Some(line) = self.out.pop_front() {
                self.compare(Some(line));
            }
            // a golden longer than the transcript differs where it goes on
            self.compare(None);
        }
        match self.golden {
            Golden::Missing => (Comparison::Missing, None),
            Golden::Unreadable(e) => (Comparison::Differs(e), None),
            Golden::Lines(mut golden) => {
                let Some(mut window) = self.window else {
                    return (Comparison::Same, None);
                };
                let mut bytes: usize = window.golden.iter().map(String::len).sum();
                while window.golden.len() < window.first - window.from + WINDOW_LINES
                    && bytes < WINDOW_BYTES
                {
                    match golden.next() {
                        Ok(Some(g)) => {
                            bytes += g.len();
                            window.golden.push(g);
                        }
                        _ => break,
                    }
                }
                window.tail = self.tail.into();
                (Comparison::Differs(String::new()), Some(window))
            }
        }
    }
}

/// Keeps `line` (cut to [`KEPT_LINE_MAX`]) as the newest of at most `keep`.
fn push_cut(lines: &mut VecDeque<String>, line: &str, keep: usize) {
    if lines.len() == keep {
        lines.pop_front();
    }
    lines.push_back(crate::judging::replay::divergence::shorten(
        line,
        KEPT_LINE_MAX,
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compare(golden: &str, transcript: &str) -> (Comparison, Option<Window>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.snap");
        std::fs::write(&path, format!("---\nsource: x\n---\n{golden}")).unwrap();
        let mut s = GoldenStream::open(&path);
        for l in transcript.lines() {
            s.line("", l);
        }
        s.finish()
    }

    #[test]
    fn streamed_comparison_agrees_with_insta_on_trailing_whitespace() {
        let cases = [
            ("a\nb\n", "a\nb\n", true),
            ("a\nb", "a\nb\n\n\n", true),
            ("a\nb  \n", "a\nb\n", true),
            ("a\n\nb\n", "a\nb\n", false),
            ("a  \nb\n", "a\nb\n", false),
            ("a\nb\nc\n", "a\nb\n", false),
            ("a\nb\n", "a\nb\nc\n", false),
            ("a\n  \n", "a\n", true),
        ];
        for (golden, transcript, same) in cases {
            let (c, _) = compare(golden, transcript);
            let whole = super::super::golden::compare(Some(golden), transcript);
            assert_eq!(c == Comparison::Same, same, "{golden:?} {transcript:?}");
            assert_eq!(whole == Comparison::Same, same, "{golden:?} {transcript:?}");
        }
    }

    #[test]
    fn a_difference_keeps_the_lines_before_it_and_a_window_after() {
        let golden: String = (0..10).map(|i| format!("line {i}\n")).collect();
        let transcript = golden.replace("line 6", "line six");
        let (c, w) = compare(&golden, &transcript);
        assert!(matches!(c, Comparison::Differs(_)));
        let w = w.unwrap();
        assert_eq!((w.from, w.first), (3, 6));
        assert_eq!(w.golden[3], "line 6");
        assert_eq!(w.replay[3], "line six");
        assert_eq!(w.golden.len(), 7);
        assert_eq!(w.tail.last().map(String::as_str), Some("line 9"));
    }
}
