//! The lines a golden and a transcript compare as: a line up to [`BIG`]
//! bytes is a string; a longer one (a folded message of megabytes) is
//! compared as it is read from the golden and rendered from the transcript,
//! both at once, and only what decides the comparison is kept (its length,
//! its length without trailing whitespace, how far it agrees with the other
//! side) with its first bytes to show.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::{self, BufRead, Write};

use crate::judging::replay::transcript::LineText;

/// A line longer than this is compared as it streams, never held whole.
pub const BIG: usize = 64 * 1024;
const CHUNK: usize = 8192;
/// Bytes kept each side of where a streamed pair first differs.
const AROUND: usize = 1024;

/// One line as compared.
#[derive(Debug)]
pub enum Line {
    Small(String),
    Big(Big),
}

/// What is kept of a line compared as it streamed.
#[derive(Debug)]
pub struct Big {
    /// Its first bytes (up to [`BIG`]), to show.
    pub head: String,
    pub len: usize,
    /// Its length without trailing whitespace.
    pub content: usize,
    /// Bytes it shares from its start with the line it was compared with.
    pub common: usize,
    /// The text's last line: compared without its trailing whitespace.
    pub trimmed: bool,
    /// Where it first differs from the other line (an offset some bytes
    /// before it) and its bytes from there, to show past its head.
    pub around: Option<(usize, Vec<u8>)>,
}

impl Big {
    fn compared_len(&self) -> usize {
        if self.trimmed { self.content } else { self.len }
    }
}

impl Line {
    fn is_blank(&self) -> bool {
        match self {
            Line::Small(s) => s.trim_end().is_empty(),
            // streamed only when its head shows it is not blank
            Line::Big(_) => false,
        }
    }

    fn trimmed(self) -> Line {
        match self {
            Line::Small(s) => Line::Small(s.trim_end().to_string()),
            Line::Big(b) => Line::Big(Big { trimmed: true, ..b }),
        }
    }

    /// The text shown for it (a streamed line: its head and its length).
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            Line::Small(s) => Cow::Borrowed(s),
            Line::Big(b) => {
                let mut text = b.head.clone();
                let head = text.len();
                if let Some((from, bytes)) = &b.around
                    && from + bytes.len() > head
                {
                    let gap = from.saturating_sub(head);
                    if gap > 0 {
                        text.push_str(&format!("[… {gap} bytes …]"));
                    }
                    let start = head.saturating_sub(*from).min(bytes.len());
                    text.push_str(&String::from_utf8_lossy(&bytes[start..]));
                }
                text.push_str(&format!("[… {} bytes in all]", b.compared_len()));
                Cow::Owned(text)
            }
        }
    }

    pub fn into_text(self) -> String {
        match self {
            Line::Small(s) => s,
            big => big.text().into_owned(),
        }
    }
}

/// Whether two lines (either may be past the end) compare equal. Two
/// streamed lines are the pair streamed together: each compared text is a
/// prefix of its line, so they are equal when as long as each other and
/// within the bytes both lines share.
pub fn same(golden: &Option<Line>, replay: &Option<Line>) -> bool {
    match (golden, replay) {
        (None, None) => true,
        (Some(Line::Small(g)), Some(Line::Small(r))) => g == r,
        (Some(Line::Big(g)), Some(Line::Big(r))) => {
            g.compared_len() == r.compared_len() && g.common.min(r.common) >= g.compared_len()
        }
        _ => false,
    }
}

/// The text as insta compares it, one line at a time: a line goes out once
/// a later line shows it is not trailing; at the end the last non-blank
/// line goes out with its trailing whitespace trimmed, blank lines after it
/// not at all.
#[derive(Default)]
pub struct TrimEnd {
    held: VecDeque<Line>,
}

impl TrimEnd {
    pub fn push(&mut self, line: Line, out: &mut VecDeque<Line>) {
        if !line.is_blank() {
            out.extend(self.held.drain(..));
        }
        self.held.push_back(line);
    }

    /// Lets the held lines go: a line known not blank comes next.
    pub fn release(&mut self, out: &mut VecDeque<Line>) {
        out.extend(self.held.drain(..));
    }

    pub fn finish(&mut self, out: &mut VecDeque<Line>) {
        if let Some(first) = self.held.pop_front()
            && !first.is_blank()
        {
            out.push_back(first.trimmed());
        }
        self.held.clear();
    }
}

fn not_utf8() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "stream did not contain valid UTF-8",
    )
}

/// One line's bytes from a reader, a piece at a time, without its line
/// ending (`\n` or `\r\n`; a `\r` before anything else is text).
#[derive(Default)]
pub struct LineBytes {
    cr: bool,
    ended: bool,
    /// Anything was read (a line, even empty, rather than the end).
    pub any: bool,
}

impl LineBytes {
    /// The line's next bytes into `out` (non-empty); 0: the line ended.
    pub fn read(&mut self, reader: &mut impl BufRead, out: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.ended {
                return Ok(0);
            }
            let buf = match reader.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                self.ended = true;
                if self.cr {
                    self.cr = false;
                    out[0] = b'\r';
                    return Ok(1);
                }
                return Ok(0);
            }
            self.any = true;
            if self.cr {
                self.cr = false;
                if buf[0] == b'\n' {
                    reader.consume(1);
                    self.ended = true;
                    return Ok(0);
                }
                out[0] = b'\r';
                return Ok(1);
            }
            let n = buf.len().min(out.len());
            match buf[..n].iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(0) => {
                    let newline = buf[0] == b'\n';
                    reader.consume(1);
                    if newline {
                        self.ended = true;
                        return Ok(0);
                    }
                    self.cr = true;
                }
                Some(i) => {
                    out[..i].copy_from_slice(&buf[..i]);
                    reader.consume(i);
                    return Ok(i);
                }
                None => {
                    out[..n].copy_from_slice(&buf[..n]);
                    reader.consume(n);
                    return Ok(n);
                }
            }
        }
    }

    /// The rest of the line onto `bytes`.
    pub fn read_rest(&mut self, reader: &mut impl BufRead, bytes: &mut Vec<u8>) -> io::Result<()> {
        let mut chunk = [0u8; CHUNK];
        loop {
            let n = self.read(reader, &mut chunk)?;
            if n == 0 {
                return Ok(());
            }
            bytes.extend_from_slice(&chunk[..n]);
        }
    }
}

/// Whether the start of a line shows it is not blank (a character cut at
/// the end does not count).
pub fn shows_text(head: &[u8]) -> io::Result<bool> {
    let valid = match std::str::from_utf8(head) {
        Ok(s) => s,
        Err(e) if e.error_len().is_some() => return Err(not_utf8()),
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default(),
    };
    Ok(valid.chars().any(|c| !c.is_whitespace()))
}

/// A line's length and its length without trailing (Unicode) whitespace,
/// from its bytes a piece at a time.
#[derive(Default)]
struct Scan {
    len: usize,
    content: usize,
    partial: Vec<u8>,
}

impl Scan {
    fn feed(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        if let Some(&first) = self.partial.first() {
            let width = match first {
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                _ => 4,
            };
            let take = (width - self.partial.len()).min(bytes.len());
            self.partial.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.partial.len() < width {
                return Ok(());
            }
            let whole = std::mem::take(&mut self.partial);
            self.text(std::str::from_utf8(&whole).map_err(|_| not_utf8())?);
        }
        match std::str::from_utf8(bytes) {
            Ok(s) => self.text(s),
            Err(e) if e.error_len().is_some() => return Err(not_utf8()),
            Err(e) => {
                let (valid, rest) = bytes.split_at(e.valid_up_to());
                self.text(std::str::from_utf8(valid).unwrap_or_default());
                self.partial.extend_from_slice(rest);
            }
        }
        Ok(())
    }

    fn text(&mut self, s: &str) {
        if let Some((i, c)) = s.char_indices().rev().find(|(_, c)| !c.is_whitespace()) {
            self.content = self.len + i + c.len_utf8();
        }
        self.len += s.len();
    }

    fn end(&self) -> io::Result<()> {
        if self.partial.is_empty() {
            Ok(())
        } else {
            Err(not_utf8())
        }
    }
}

/// A golden line too long to read whole: its head, read already, then the
/// rest from the reader.
pub struct Pending {
    pub head: Vec<u8>,
    pub bytes: LineBytes,
}

impl Pending {
    /// Its text read whole.
    pub fn read_whole(mut self, reader: &mut impl BufRead) -> io::Result<String> {
        self.bytes.read_rest(reader, &mut self.head)?;
        String::from_utf8(self.head).map_err(|_| not_utf8())
    }
}

/// The golden side of a streamed pair as the transcript renders: its bytes
/// are read as many at a time as the transcript writes, until they differ.
struct Streamed<'a, R: BufRead> {
    reader: &'a mut R,
    golden: Pending,
    at: usize,
    golden_scan: Scan,
    replay_scan: Scan,
    replay_head: Vec<u8>,
    common: usize,
    stopped: bool,
    chunk: Box<[u8; CHUNK]>,
    /// The transcript's last bytes before they differ.
    recent: Vec<u8>,
    differs: Option<Differs>,
}

/// Where a streamed pair differs: the bytes before it, and each side's after.
struct Differs {
    before: Vec<u8>,
    golden: Vec<u8>,
    replay: Vec<u8>,
}

impl<R: BufRead> Streamed<'_, R> {
    /// The golden's next bytes into the chunk (0: its line ended).
    fn golden_bytes(&mut self, max: usize) -> io::Result<usize> {
        let max = max.min(CHUNK);
        let n = if self.at < self.golden.head.len() {
            let n = max.min(self.golden.head.len() - self.at);
            self.chunk[..n].copy_from_slice(&self.golden.head[self.at..self.at + n]);
            self.at += n;
            n
        } else {
            self.golden
                .bytes
                .read(self.reader, &mut self.chunk[..max])?
        };
        self.golden_scan.feed(&self.chunk[..n])?;
        if let Some(Differs { golden, .. }) = &mut self.differs {
            let room = AROUND.saturating_sub(golden.len()).min(n);
            golden.extend_from_slice(&self.chunk[..room]);
        }
        Ok(n)
    }

    /// The lines differ from here on: `at` bytes into the golden's chunk.
    fn differ(&mut self, before: &[u8], at: usize, n: usize) {
        let mut kept = std::mem::take(&mut self.recent);
        kept.extend_from_slice(before);
        kept.drain(..kept.len().saturating_sub(AROUND));
        self.differs = Some(Differs {
            before: kept,
            golden: self.chunk[at..n].to_vec(),
            replay: Vec::new(),
        });
        self.stopped = true;
    }

    /// The bytes around the difference on one side, from their offset.
    fn around(&self, golden: bool) -> Option<(usize, Vec<u8>)> {
        self.differs.as_ref().map(|d| {
            let mut bytes = d.before.clone();
            bytes.extend_from_slice(if golden { &d.golden } else { &d.replay });
            (self.common - d.before.len(), bytes)
        })
    }
}

impl<R: BufRead> Write for Streamed<'_, R> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.replay_scan.feed(buf)?;
        let room = BIG.saturating_sub(self.replay_head.len()).min(buf.len());
        self.replay_head.extend_from_slice(&buf[..room]);
        let mut rest = buf;
        while !self.stopped && !rest.is_empty() {
            let n = self.golden_bytes(rest.len())?;
            if n == 0 {
                self.differ(&[], 0, 0);
                break;
            }
            let now = &rest[..n];
            if now == &self.chunk[..n] {
                self.common += n;
                self.recent.extend_from_slice(now);
                if self.recent.len() > 2 * AROUND {
                    self.recent.drain(..self.recent.len() - AROUND);
                }
                rest = &rest[n..];
            } else {
                let same = now
                    .iter()
                    .zip(&self.chunk[..n])
                    .take_while(|(a, b)| a == b)
                    .count();
                self.common += same;
                self.differ(&now[..same], same, n);
                rest = &rest[same..];
            }
        }
        if let Some(Differs { replay, .. }) = &mut self.differs {
            let room = AROUND.saturating_sub(replay.len()).min(rest.len());
            replay.extend_from_slice(&rest[..room]);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Renders `prefix` then `text` while reading the golden's pending line
/// beside it; the two lines as compared. An error is the golden's.
pub fn stream_pair(
    reader: &mut impl BufRead,
    golden: Pending,
    prefix: &str,
    text: LineText<'_>,
) -> io::Result<(Big, Big)> {
    let mut s = Streamed {
        reader,
        golden,
        at: 0,
        golden_scan: Scan::default(),
        replay_scan: Scan::default(),
        replay_head: Vec::new(),
        common: 0,
        stopped: false,
        chunk: Box::new([0u8; CHUNK]),
        recent: Vec::new(),
        differs: None,
    };
    s.write_all(prefix.as_bytes())?;
    text.write_to(&mut s)?;
    if !s.stopped {
        // the golden goes on past the transcript's line, or ends with it
        let n = s.golden_bytes(CHUNK)?;
        if n > 0 {
            s.differ(&[], 0, n);
        }
    }
    while s.golden_bytes(CHUNK)? > 0 {}
    s.golden_scan.end()?;
    let golden_around = s.around(true);
    let replay_around = s.around(false);
    let golden = Big {
        head: head_text(&s.golden.head),
        len: s.golden_scan.len,
        content: s.golden_scan.content,
        common: s.common,
        trimmed: false,
        around: golden_around,
    };
    let replay = Big {
        head: head_text(&s.replay_head),
        len: s.replay_scan.len,
        content: s.replay_scan.content,
        common: s.common,
        trimmed: false,
        around: replay_around,
    };
    Ok((golden, replay))
}

fn head_text(head: &[u8]) -> String {
    let valid = match std::str::from_utf8(head) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default(),
    };
    valid.to_string()
}

/// A transcript line rendered up to [`BIG`] bytes: `Ok` the whole line,
/// `Err` its first bytes when it is longer.
pub fn render_bounded(prefix: &str, text: LineText<'_>) -> Result<String, Vec<u8>> {
    struct Bounded {
        bytes: Vec<u8>,
        full: bool,
    }
    impl Write for Bounded {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let room = BIG - self.bytes.len();
            if buf.len() > room {
                self.bytes.extend_from_slice(&buf[..room]);
                self.full = true;
                return Err(io::Error::other("longer than the bound"));
            }
            self.bytes.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut b = Bounded {
        bytes: Vec::new(),
        full: false,
    };
    let _ = b
        .write_all(prefix.as_bytes())
        .and_then(|()| text.write_to(&mut b));
    if b.full {
        return Err(b.bytes);
    }
    Ok(String::from_utf8(b.bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// A transcript line compared with nothing (the comparison is decided):
/// its head and length only.
pub fn unpaired(prefix: &str, text: LineText<'_>) -> Big {
    struct Counted(Scan, Vec<u8>);
    impl Write for Counted {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.feed(buf)?;
            let room = BIG.saturating_sub(self.1.len()).min(buf.len());
            self.1.extend_from_slice(&buf[..room]);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut c = Counted(Scan::default(), Vec::new());
    let _ = c
        .write_all(prefix.as_bytes())
        .and_then(|()| text.write_to(&mut c));
    Big {
        head: head_text(&c.1),
        len: c.0.len,
        content: c.0.content,
        common: 0,
        trimmed: false,
        around: None,
    }
}

/// A golden line too long to read whole, read past and kept as its head
/// and length (it shows a difference already found).
pub fn skim(reader: &mut impl BufRead, mut pending: Pending) -> io::Result<Big> {
    let mut scan = Scan::default();
    scan.feed(&pending.head)?;
    let mut chunk = [0u8; CHUNK];
    loop {
        let n = pending.bytes.read(reader, &mut chunk)?;
        if n == 0 {
            break;
        }
        scan.feed(&chunk[..n])?;
    }
    scan.end()?;
    Ok(Big {
        head: head_text(&pending.head),
        len: scan.len,
        content: scan.content,
        common: 0,
        trimmed: false,
        around: None,
    })
}
