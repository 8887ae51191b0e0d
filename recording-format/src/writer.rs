//! The recording writer: whole lines into a temp file beside the
//! recording's path, committed by rename once the trailer is written.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::Map;

use crate::blobs::{self, BlobStore};
use crate::recording::{
    Dir, Event, Exit, Header, Http, Leg, Line, Outcome, RecordingError, Trailer,
};
use atomic_file::AtomicFile;

/// Appends lines to a recording and numbers events itself so `seq` is
/// monotonic by construction. The lines go to a temp file beside the
/// recording's path ([`AtomicFile`]); only [`Finished::commit`] puts it at
/// that path, so a run cut short never truncates or replaces a committed
/// recording. Lines are buffered (whole lines only) and go to the OS at
/// [`RecordingWriter::flush`], when the buffer fills, and at the trailer:
/// the recorder's timeline flushes whenever its queue is empty, so a flood
/// of frames costs one write per batch instead of one per frame, and an
/// idle run has everything in the temp file.
pub struct RecordingWriter {
    path: PathBuf,
    file: BufWriter<AtomicFile>,
    seq: u64,
    /// Bytes written so far (where the next line starts).
    written: u64,
    /// Where payloads of [`blobs::THRESHOLD`] or more go.
    store: BlobStore,
}

/// A recording with its trailer written, not yet at its path.
pub struct Finished {
    file: AtomicFile,
    /// Where the trailer starts in the file, and what it says.
    trailer_at: u64,
    trailer: Trailer,
}

impl Finished {
    /// The recording's path (where [`Finished::commit`] puts it).
    pub fn path(&self) -> &Path {
        self.file.target()
    }

    /// Where the finished recording is until it is committed.
    pub fn temp_path(&self) -> &Path {
        self.file.temp_path()
    }

    /// Hands the recording to the disk (a commit after this only renames).
    pub fn sync(&mut self) -> Result<(), RecordingError> {
        let path = self.path().to_path_buf();
        self.file
            .sync()
            .map_err(|source| RecordingError::Io { path, source })
    }

    /// Puts the recording at its path unless `refuse()` gives a reason not
    /// to at the last moment (after the sync, just before the rename);
    /// `None` then, and the recording is kept as [`Finished::keep_interrupted`]
    /// keeps it, its trailer saying `interrupted` and why.
    pub fn commit_unless(
        mut self,
        refuse: impl FnOnce() -> Option<String>,
    ) -> Result<Option<PathBuf>, RecordingError> {
        self.sync()?;
        if let Some(why) = refuse() {
            self.interrupted(why)?;
            self.keep_interrupted()?;
            return Ok(None);
        }
        self.commit().map(Some)
    }

    /// Rewrites the trailer as `interrupted` with `why` among its notes,
    /// unless it says so already: a run that played to its end but was
    /// interrupted before its commit never claims another outcome.
    pub fn interrupted(&mut self, why: String) -> Result<(), RecordingError> {
        if self.trailer.outcome == Outcome::Interrupted {
            return Ok(());
        }
        self.trailer.outcome = Outcome::Interrupted;
        self.trailer.notes.push(why);
        let mut text = serde_json::to_string(&Line::Trailer(self.trailer.clone()))
            .expect("recording lines always serialise");
        text.push('\n');
        let at = self.trailer_at;
        let path = self.path().to_path_buf();
        self.file
            .rewrite_from(at, text.as_bytes())
            .map_err(|source| RecordingError::Io { path, source })
    }

    /// Puts the recording at its path (synced, then renamed over whatever
    /// was there).
    pub fn commit(self) -> Result<PathBuf, RecordingError> {
        let path = self.path().to_path_buf();
        self.file
            .commit()
            .map_err(|source| RecordingError::Io { path, source })
    }

    /// Keeps the recording beside its path under the name
    /// [`interrupted_path`] gives, which no reader of the corpus picks up.
    pub fn keep_interrupted(self) -> Result<PathBuf, RecordingError> {
        let kept = interrupted_path(self.path());
        self.file
            .persist_as(&kept)
            .map_err(|source| RecordingError::Io {
                path: kept.clone(),
                source,
            })?;
        Ok(kept)
    }
}

/// Where an interrupted run keeps its recording: `<scenario>.jsonl.interrupted`
/// beside the recording's path (not `.jsonl`, so never judged or counted).
pub fn interrupted_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".interrupted");
    path.with_file_name(name)
}

/// The writer's buffer: a batch of small frames, or one line past it.
const WRITE_BUFFER: usize = 64 * 1024;

impl RecordingWriter {
    /// Starts the recording for `path` (in a temp file beside it, making
    /// parent directories) and writes the header.
    pub fn create(path: &Path, header: &Header) -> Result<Self, RecordingError> {
        let io = |source| RecordingError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = AtomicFile::create(path).map_err(io)?;
        let mut writer = RecordingWriter {
            path: path.to_path_buf(),
            file: BufWriter::with_capacity(WRITE_BUFFER, file),
            seq: 0,
            written: 0,
            store: BlobStore::for_writing(path),
        };
        writer.write_line(&Line::Header(Box::new(header.clone())))?;
        writer.flush()?;
        Ok(writer)
    }

    /// Where the lines are while the recording is written.
    pub fn temp_path(&self) -> &Path {
        self.file.get_ref().temp_path()
    }

    /// Hands every buffered line to the OS.
    pub fn flush(&mut self) -> Result<(), RecordingError> {
        self.file.flush().map_err(|e| self.io_error(e))
    }

    /// An io error on this recording, naming its path.
    fn io_error(&self, source: std::io::Error) -> RecordingError {
        RecordingError::Io {
            path: self.path.clone(),
            source,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one event, assigning the next `seq`. Returns the seq used.
    pub fn event(
        &mut self,
        ms: u64,
        leg: Leg,
        dir: Dir,
        proc: u32,
        raw: String,
        http: Option<Http>,
    ) -> Result<u64, RecordingError> {
        self.seq += 1;
        let (raw, refs) =
            blobs::store_long_strings(&raw, &self.store).map_err(|e| self.io_error(e))?;
        let mut extra = Map::new();
        if !refs.is_empty() {
            extra.insert(
                "blobs".into(),
                serde_json::to_value(refs).expect("references always serialise"),
            );
        }
        let event = Event {
            seq: self.seq,
            ms,
            leg,
            dir,
            proc,
            raw,
            http,
            extra,
        };
        self.write_line(&Line::Event(event))?;
        Ok(self.seq)
    }

    /// Writes the trailer (seq continues the event numbering); the
    /// recording is complete but not yet at its path.
    pub fn finish(
        mut self,
        ms: u64,
        outcome: Outcome,
        exit: Exit,
        notes: Vec<String>,
    ) -> Result<Finished, RecordingError> {
        self.seq += 1;
        let trailer = Trailer {
            seq: self.seq,
            ms,
            outcome,
            exit,
            notes,
            extra: Map::new(),
        };
        let trailer_at = self.written;
        self.write_line(&Line::Trailer(trailer.clone()))?;
        self.flush()?;
        let path = self.path;
        let file = self.file.into_inner().map_err(|e| RecordingError::Io {
            path,
            source: e.into_error(),
        })?;
        Ok(Finished {
            file,
            trailer_at,
            trailer,
        })
    }

    fn write_line(&mut self, line: &Line) -> Result<(), RecordingError> {
        let mut text = serde_json::to_string(line).expect("recording lines always serialise");
        text.push('\n');
        // Whole lines into the buffer (a line longer than it is written
        // through at once): the file never ends in half a line of ours
        // between flushes.
        let written = self.file.write_all(text.as_bytes());
        written.map_err(|e| self.io_error(e))?;
        self.written += text.len() as u64;
        Ok(())
    }
}
