//! A golden compared with a transcript while the transcript is rendered:
//! the golden file is read one line at a time beside it, so neither is held
//! whole. They compare as insta compares them (the texts with trailing
//! whitespace trimmed: trailing blank lines and the last line's trailing
//! spaces do not count). Only when they differ is anything kept: the few
//! lines before the first difference and a bounded window from it on, which
//! explain a difference in a transcript too big to diff whole.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use super::golden::{Comparison, GoldenError, TAIL, Window};
use super::golden_line::{self, BIG, Line, LineBytes, Pending, TrimEnd};
use crate::corpus::regular_file;
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

/// A golden snapshot's text lines, read one at a time past its header.
struct GoldenLines {
    path: PathBuf,
    reader: BufReader<File>,
    trim: TrimEnd,
    ready: VecDeque<Line>,
    /// The next raw line, too long to read whole, known not blank.
    pending: Option<Pending>,
    done: bool,
}

/// The longest line insta's header may have.
const HEADER_LINE_MAX: usize = 64 * 1024;

/// A raw line read up to [`BIG`] bytes.
enum Raw {
    Line(String),
    Big(Pending),
    End,
}

impl GoldenLines {
    /// `None`: there is no golden yet.
    fn open(path: &Path) -> Result<Option<GoldenLines>, GoldenError> {
        if !regular_file::exists(path) {
            return Ok(None);
        }
        let unreadable = |message: String| GoldenError::Unreadable {
            path: path.to_path_buf(),
            message,
        };
        let file = regular_file::open(path).map_err(|e| unreadable(e.to_string()))?;
        let mut golden = GoldenLines {
            path: path.to_path_buf(),
            reader: BufReader::new(file),
            trim: TrimEnd::default(),
            ready: VecDeque::new(),
            pending: None,
            done: false,
        };
        // insta's header: `---`, metadata, `---` (or the legacy form:
        // metadata up to a blank line)
        let first = golden.header_line()?.unwrap_or_default();
        let yaml = first.trim_end() == "---";
        loop {
            let Some(line) = golden.header_line()? else {
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

    fn unreadable(&self, e: io::Error) -> GoldenError {
        GoldenError::Unreadable {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    /// A line of insta's header, which is a few short metadata lines: one
    /// longer than [`HEADER_LINE_MAX`] (a file that is no snapshot) is an
    /// error, never read whole.
    fn header_line(&mut self) -> Result<Option<String>, GoldenError> {
        let mut bytes = LineBytes::default();
        let mut line = Vec::new();
        let mut limited = (&mut self.reader).take(HEADER_LINE_MAX as u64);
        bytes
            .read_rest(&mut limited, &mut line)
            .map_err(|e| self.unreadable(e))?;
        if line.len() >= HEADER_LINE_MAX {
            return Err(GoldenError::Unreadable {
                path: self.path.clone(),
                message: format!(
                    "a header line is over {} KiB: this is no insta snapshot",
                    HEADER_LINE_MAX / 1024
                ),
            });
        }
        if !bytes.any {
            return Ok(None);
        }
        String::from_utf8(line)
            .map(Some)
            .map_err(|_| GoldenError::Unreadable {
                path: self.path.clone(),
                message: "stream did not contain valid UTF-8".into(),
            })
    }

    /// The next raw line, read whole when it is short or blank.
    fn raw_bounded(&mut self) -> io::Result<Raw> {
        let mut bytes = LineBytes::default();
        let mut head = Vec::new();
        let mut chunk = [0u8; 8192];
        while head.len() < BIG {
            let room = (BIG - head.len()).min(chunk.len());
            let n = bytes.read(&mut self.reader, &mut chunk[..room])?;
            if n == 0 {
                if !bytes.any {
                    return Ok(Raw::End);
                }
                let line = String::from_utf8(head).map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        "stream did not contain valid UTF-8",
                    )
                })?;
                return Ok(Raw::Line(line));
            }
            head.extend_from_slice(&chunk[..n]);
        }
        let pending = Pending { head, bytes };
        if golden_line::shows_text(&pending.head)? {
            return Ok(Raw::Big(pending));
        }
        pending.read_whole(&mut self.reader).map(Raw::Line)
    }

    /// Reads one raw line on (the end: the held lines as they end).
    fn advance(&mut self) -> Result<(), GoldenError> {
        match self.raw_bounded().map_err(|e| self.unreadable(e))? {
            Raw::Line(line) => self.trim.push(Line::Small(line), &mut self.ready),
            Raw::Big(pending) => {
                self.trim.release(&mut self.ready);
                self.pending = Some(pending);
            }
            Raw::End => {
                self.trim.finish(&mut self.ready);
                self.done = true;
            }
        }
        Ok(())
    }

    /// Whether the next line as compared is one too long to read whole.
    fn next_is_big(&mut self) -> Result<bool, GoldenError> {
        loop {
            if !self.ready.is_empty() || self.done {
                return Ok(false);
            }
            if self.pending.is_some() {
                return Ok(true);
            }
            self.advance()?;
        }
    }

    /// The next line as compared (`None`: no more); a long one read whole.
    fn next(&mut self) -> Result<Option<Line>, GoldenError> {
        self.next_line(true)
    }

    /// [`GoldenLines::next`], a long line read whole only when `whole`
    /// (else kept as its head and length).
    fn next_line(&mut self, whole: bool) -> Result<Option<Line>, GoldenError> {
        loop {
            if let Some(line) = self.ready.pop_front() {
                return Ok(Some(line));
            }
            if let Some(pending) = self.pending.take() {
                let line = if whole {
                    pending.read_whole(&mut self.reader).map(Line::Small)
                } else {
                    golden_line::skim(&mut self.reader, pending).map(Line::Big)
                };
                let line = line.map_err(|e| self.unreadable(e))?;
                self.trim.push(line, &mut self.ready);
            } else if self.done {
                return Ok(None);
            } else {
                self.advance()?;
            }
        }
    }
}

/// A golden's text lines as insta compares them, read one at a time past
/// its header (`None`: there is no golden).
pub fn read_lines(
    path: &Path,
) -> Result<Option<impl Iterator<Item = Result<String, GoldenError>>>, GoldenError> {
    Ok(GoldenLines::open(path)?.map(|mut g| {
        std::iter::from_fn(move || g.next().map(|l| l.map(Line::into_text)).transpose())
    }))
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
    out: VecDeque<Line>,
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
    /// serialised when there is no golden to compare with. A line longer
    /// than [`BIG`] is compared as it renders with the golden's line as it
    /// is read, when that is long too; else it is compared whole.
    pub fn put(&mut self, prefix: &str, text: LineText<'_>) {
        if !matches!(self.golden, Golden::Lines(_)) {
            return;
        }
        let line = match golden_line::render_bounded(prefix, text) {
            Ok(line) => Line::Small(line),
            Err(head) if golden_line::shows_text(&head).unwrap_or(false) => {
                self.put_big(prefix, text);
                return;
            }
            Err(_) => Line::Small(format!("{prefix}{text}")),
        };
        self.trim.push(line, &mut self.out);
        self.compare_out();
    }

    fn compare_out(&mut self) {
        while let Some(line) = self.out.pop_front() {
            self.compare(Some(line));
        }
    }

    /// A line known not blank and longer than [`BIG`].
    fn put_big(&mut self, prefix: &str, text: LineText<'_>) {
        self.trim.release(&mut self.out);
        self.compare_out();
        let line = match &mut self.golden {
            Golden::Lines(_) if self.window.is_some() => {
                Line::Big(golden_line::unpaired(prefix, text))
            }
            Golden::Lines(golden) => match golden.next_is_big() {
                Ok(true) => {
                    let pending = golden.pending.take().unwrap_or(Pending {
                        head: Vec::new(),
                        bytes: LineBytes::default(),
                    });
                    match golden_line::stream_pair(&mut golden.reader, pending, prefix, text) {
                        Ok((g, r)) => {
                            golden.trim.push(Line::Big(g), &mut golden.ready);
                            Line::Big(r)
                        }
                        Err(e) => {
                            self.golden = Golden::Unreadable(golden.unreadable(e).to_string());
                            return;
                        }
                    }
                }
                Ok(false) => Line::Small(format!("{prefix}{text}")),
                Err(e) => {
                    self.golden = Golden::Unreadable(e.to_string());
                    return;
                }
            },
            _ => return,
        };
        self.trim.push(line, &mut self.out);
        self.compare_out();
    }

    fn compare(&mut self, line: Option<Line>) {
        let Golden::Lines(golden) = &mut self.golden else {
            return;
        };
        if let Some(l) = &line {
            push_cut(&mut self.tail, &l.text(), TAIL);
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
                if golden_line::same(&g, &line) {
                    let text = line.as_ref().map(Line::text).unwrap_or_default();
                    push_cut(&mut self.before, &text, CONTEXT_BEFORE);
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
                window.golden.extend(g.map(Line::into_text));
                if let Some(l) = line {
                    let l = l.into_text();
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
                    let l = l.into_text();
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
            self.compare_out();
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
                    match golden.next_line(false) {
                        Ok(Some(g)) => {
                            let g = g.into_text();
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

    #[test]
    fn a_line_too_long_to_hold_compares_as_insta_compares_it() {
        let big = "x".repeat(100_000);
        let other = format!("{}y{}", &big[..50_000], &big[50_001..]);
        let spaces = " ".repeat(70_000);
        // (golden, transcript, first differing line when they differ)
        let cases: Vec<(String, String, Option<usize>)> = vec![
            (format!("a\n{big}\nb\n"), format!("a\n{big}\nb\n"), None),
            (
                format!("a\n{big}\nb\n"),
                format!("a\n{other}\nb\n"),
                Some(1),
            ),
            (format!("a\n{big}   \n"), format!("a\n{big}\n"), None),
            (format!("a\n{big}  \n\n  \n"), format!("a\n{big}"), None),
            (format!("{big}\n"), format!("{big}{spaces}\n\n"), None),
            (format!("{big}\u{3000}\n"), format!("{big}\n"), None),
            (format!("a\n{big} \nb\n"), format!("a\n{big}\nb\n"), Some(1)),
            (format!("a\n{big}\nb\n"), format!("a\n{big} \nb\n"), Some(1)),
            (format!("a\n{big}\nb\n"), format!("a\n{big}\n"), Some(2)),
            (format!("a\n{big}\n"), format!("a\n{big}\nb\n"), Some(2)),
            (format!("{big}yy\nc\n"), format!("{big}\nc\n"), Some(0)),
            (format!("{big}\nc\n"), format!("{big}yy\nc\n"), Some(0)),
            (
                format!("a\r\n{big}\r\n\r\n{big}\rz\r\nb\r\n"),
                format!("a\n{big}\n\n{big}\rz\nb\n"),
                None,
            ),
            (format!("a\n{big}\n"), "a\nb\n".to_string(), Some(1)),
            ("a\nb\n".to_string(), format!("a\n{big}\n"), Some(1)),
            (format!("abc{spaces}\n"), "abc\n".to_string(), None),
            (
                format!("{big}\u{3000}x\n"),
                format!("{big}\u{3000}y\n"),
                Some(0),
            ),
        ];
        for (i, (golden, transcript, first)) in cases.into_iter().enumerate() {
            let (c, w) = compare(&golden, &transcript);
            let whole = super::super::golden::compare(Some(&golden), &transcript);
            assert_eq!(c == Comparison::Same, first.is_none(), "case {i}");
            assert_eq!(whole == Comparison::Same, first.is_none(), "case {i}");
            assert_eq!(w.as_ref().map(|w| w.first), first, "case {i}");
            for line in w.iter().flat_map(|w| w.golden.iter().chain(&w.replay)) {
                assert!(line.len() < 2 * BIG, "case {i}: a kept line is bounded");
            }
        }
    }

    #[test]
    fn a_long_line_differing_in_the_middle_shows_its_head_and_length() {
        let big = "x".repeat(100_000);
        let other = format!("{}y{}", &big[..50_000], &big[50_001..]);
        let (_, w) = compare(&format!("a\n{big}\n"), &format!("a\n{other}\n"));
        let w = w.unwrap();
        assert_eq!((w.from, w.first), (0, 1));
        assert!(w.golden[1].starts_with("xxx") && w.golden[1].ends_with("[… 100000 bytes in all]"));
        assert!(w.replay[1][50_000..].starts_with('y'));

        // past the head: the bytes around the difference are kept too
        let far = format!("{}y{}", &big[..90_000], &big[90_001..]);
        let (_, w) = compare(&format!("a\n{big}\n"), &format!("a\n{far}\n"));
        let w = w.unwrap();
        let (golden, replay) = (&w.golden[1], &w.replay[1]);
        assert_ne!(golden, replay);
        assert!(replay.contains("[… 23440 bytes …]") && replay.contains("xy"));
        assert!(replay.len() < BIG + 4 * 1024, "{}", replay.len());
    }
}
