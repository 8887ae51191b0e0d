//! Reading a recording one line at a time: memory is bounded by the longest
//! line, not by the file, so a million-event recording can be walked
//! through. [`super::read`] is this reader collected.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::blobs::{self, BlobCache, BlobRef};
use crate::recording::{Event, FORMAT, Header, Line, Recording, RecordingError, Trailer};

/// The longest line read before the header is found: a header is a few KiB,
/// so a file that never gets to one is refused, never read whole.
const HEADER_MAX: u64 = 1024 * 1024;

/// The header (read on opening), then the events in order; the trailer
/// once the events are exhausted. Each line is checked as [`super::read`]
/// checks it; the first error ends the iteration.
pub struct Reader<R> {
    input: R,
    path: PathBuf,
    /// The number of the line last read (from 1).
    number: usize,
    buf: Vec<u8>,
    header: Header,
    last_seq: u64,
    trailer: Option<Trailer>,
    done: bool,
    blobs: BlobCache,
}

impl Reader<BufReader<File>> {
    /// Opens `path` and reads its header.
    pub fn open(path: &Path) -> Result<Self, RecordingError> {
        let file = crate::regular_file::open(path).map_err(|source| RecordingError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Reader::new(BufReader::with_capacity(64 * 1024, file), path)
    }
}

impl<R: BufRead> Reader<R> {
    /// Reads the header from `input`; `path` only names the source in errors.
    pub fn new(input: R, path: &Path) -> Result<Self, RecordingError> {
        let mut input = input;
        let mut buf = Vec::new();
        let mut number = 0;
        let header = loop {
            let Some(text) = next_text(&mut input, &mut buf, &mut number, path, HEADER_MAX)? else {
                return Err(RecordingError::Empty {
                    path: path.to_path_buf(),
                });
            };
            if text.trim().is_empty() {
                continue;
            }
            match parse_line(text, number, path)? {
                Line::Header(h) => {
                    if !(1..=FORMAT).contains(&h.format) {
                        return Err(RecordingError::parse(
                            path,
                            number,
                            format!(
                                "format {} is not supported (this harness reads 1 to {FORMAT})",
                                h.format
                            ),
                        ));
                    }
                    break *h;
                }
                Line::Event(_) => {
                    return Err(RecordingError::parse(
                        path,
                        number,
                        "event before the header",
                    ));
                }
                Line::Trailer(_) => {
                    return Err(RecordingError::parse(
                        path,
                        number,
                        "trailer before the header",
                    ));
                }
            }
        };
        Ok(Reader {
            input,
            path: path.to_path_buf(),
            number,
            buf,
            header,
            last_seq: 0,
            trailer: None,
            done: false,
            blobs: BlobCache::default(),
        })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The trailer, once the events have been read to the end (none: the
    /// run was cut short).
    pub fn trailer(&self) -> Option<&Trailer> {
        self.trailer.as_ref()
    }

    /// The whole recording in memory.
    pub fn into_recording(mut self) -> Result<Recording, RecordingError> {
        let events = self.by_ref().collect::<Result<Vec<_>, _>>()?;
        Ok(Recording {
            header: self.header,
            events,
            trailer: self.trailer,
        })
    }

    fn next_event(&mut self) -> Result<Option<Event>, RecordingError> {
        loop {
            let path = &self.path;
            let Some(text) = next_text(
                &mut self.input,
                &mut self.buf,
                &mut self.number,
                path,
                u64::MAX,
            )?
            else {
                return Ok(None);
            };
            let number = self.number;
            if text.trim().is_empty() {
                continue;
            }
            if self.trailer.is_some() {
                return Err(RecordingError::parse(
                    path,
                    number,
                    "line after the trailer",
                ));
            }
            match parse_line(text, number, path)? {
                Line::Header(_) => {
                    return Err(RecordingError::parse(
                        path,
                        number,
                        "header is not the first line",
                    ));
                }
                Line::Event(mut e) => {
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
                    if e.seq <= self.last_seq {
                        return Err(RecordingError::parse(
                            path,
                            number,
                            format!("seq {} does not follow {}", e.seq, self.last_seq),
                        ));
                    }
                    self.last_seq = e.seq;
                    if let Some(refs) = e.extra.remove("blobs") {
                        e.raw = self.join_blobs(&e, refs, number)?;
                    }
                    return Ok(Some(e));
                }
                Line::Trailer(t) => self.trailer = Some(t),
            }
        }
    }
}

impl<R> Reader<R> {
    /// The event's `raw` with its blobs in place of their markers.
    fn join_blobs(
        &mut self,
        e: &Event,
        refs: serde_json::Value,
        number: usize,
    ) -> Result<String, RecordingError> {
        let path = &self.path;
        if self.header.format < 2 {
            return Err(RecordingError::parse(
                path,
                number,
                format!(
                    "blob references in a format {} recording (they came with format 2)",
                    self.header.format
                ),
            ));
        }
        let refs: Vec<BlobRef> = serde_json::from_value(refs).map_err(|err| {
            RecordingError::parse(
                path,
                number,
                format!("`blobs` is not a list of references: {err}"),
            )
        })?;
        blobs::join(&e.raw, &refs, path, &mut self.blobs).map_err(|source| RecordingError::Blob {
            path: path.clone(),
            line: number,
            seq: e.seq,
            source: Box::new(source),
        })
    }
}

impl<R: BufRead> Iterator for Reader<R> {
    type Item = Result<Event, RecordingError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let next = self.next_event().transpose();
        if !matches!(next, Some(Ok(_))) {
            self.done = true;
        }
        next
    }
}

/// The next line of `input` (without its `\n`) in `buf`, as text; `None`
/// at the end. A line that is not UTF-8 is an error naming its column.
fn next_text<'b>(
    input: &mut impl BufRead,
    buf: &'b mut Vec<u8>,
    number: &mut usize,
    path: &Path,
    max: u64,
) -> Result<Option<&'b str>, RecordingError> {
    buf.clear();
    let read = if max == u64::MAX {
        input.read_until(b'\n', buf)
    } else {
        std::io::Read::take(input.by_ref(), max).read_until(b'\n', buf)
    }
    .map_err(|source| RecordingError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if read == 0 {
        return Ok(None);
    }
    *number += 1;
    if read as u64 == max && buf.last() != Some(&b'\n') {
        return Err(RecordingError::parse(
            path,
            *number,
            format!("a line over {} KiB before the header ends", max / 1024),
        ));
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
    }
    match std::str::from_utf8(buf) {
        Ok(text) => Ok(Some(text)),
        Err(e) => Err(RecordingError::parse(
            path,
            *number,
            format!(
                "not valid UTF-8 (invalid byte at column {})",
                e.valid_up_to() + 1
            ),
        )),
    }
}

fn parse_line(text: &str, number: usize, path: &Path) -> Result<Line, RecordingError> {
    serde_json::from_str(text)
        .map_err(|e| RecordingError::parse(path, number, format!("not a recording line: {e}")))
}
