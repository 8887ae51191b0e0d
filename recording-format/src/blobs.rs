//! Large payloads stored once, by content (recording format 2): a JSON
//! string inside an event's `raw` whose text is [`THRESHOLD`] bytes or more
//! is written to `<corpus>/blobs/sha256/<hex>` exactly as it appeared (its
//! bytes between the quotes, escapes and all), and the event keeps the
//! marker `<blob:sha256:<hex>>` in its place plus a reference saying where
//! (`"blobs":[{"at":<byte offset of the marker>,"sha256":"<hex>"}]`).
//!
//! The same screenshot crosses the MCP result, the ACP frames and the model
//! request of every screenshot recording; stored once, a new recording of it
//! adds kilobytes, not megabytes. Reading gives back the exact bytes: a
//! blob whose content does not hash to its name, a marker missing at its
//! offset, or a name that is not 64 hex digits is an error, never other
//! bytes replayed.

use std::collections::HashMap;
use std::io::{self, Read as _};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// A JSON string this long or longer (its text between the quotes, in
/// bytes) is stored as a blob: a screenshot's base64 (550 KiB), and the
/// longest system prompts (16-60 KiB), which an agent version repeats in
/// every model request.
pub const THRESHOLD: usize = 16 * 1024;

/// The store's directory under a corpus root.
pub const STORE: &str = "blobs";

/// The largest blob read back: far above any payload an agent sends, low
/// enough that a hostile file cannot make a reader take all memory.
const BLOB_MAX: u64 = 256 * 1024 * 1024;

/// Where one blob's marker stands in an event's stored `raw`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlobRef {
    /// Byte offset of the marker in the stored `raw`.
    pub at: usize,
    /// The blob's name: sha256 of its bytes, 64 lower-case hex digits.
    pub sha256: String,
}

/// The text standing in `raw` for the blob named `sha256`.
pub fn marker(sha256: &str) -> String {
    format!("<blob:sha256:{sha256}>")
}

/// sha256 of `bytes` in lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// Whether `name` can name a blob (and so is safe as a file name).
pub fn is_blob_name(name: &str) -> bool {
    name.len() == 64
        && name
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The byte ranges of the texts of the JSON strings in `raw` that are
/// [`THRESHOLD`] bytes or longer, in order. A lexical scan (quote to
/// unescaped quote), so it works on any text: in a body that is no JSON
/// the ranges are still exact bytes, stored and given back as they were.
pub fn long_strings(raw: &str) -> Vec<Range<usize>> {
    let bytes = raw.as_bytes();
    let mut found = Vec::new();
    if bytes.len() < THRESHOLD {
        return found;
    }
    let mut open = None;
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], open) {
            (b'"', None) => open = Some(i + 1),
            (b'\\', Some(_)) => i += 1,
            (b'"', Some(start)) => {
                if i - start >= THRESHOLD {
                    found.push(start..i);
                }
                open = None;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// A content-addressed store: `<dir>/sha256/<hex>`.
#[derive(Clone, Debug)]
pub struct BlobStore {
    dir: PathBuf,
}

/// Why a blob could not be given back.
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    #[error("no blob store (a `blobs/sha256` directory) above the recording")]
    NoStore,
    #[error("`{0}` is no blob name (64 lower-case hex digits)")]
    BadName(String),
    #[error("blob {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("blob {path} is corrupt: its content hashes to sha256:{actual}")]
    Corrupt { path: PathBuf, actual: String },
    #[error("blob {path} is not UTF-8 text")]
    NotText { path: PathBuf },
}

impl BlobStore {
    pub fn at(dir: impl Into<PathBuf>) -> BlobStore {
        BlobStore { dir: dir.into() }
    }

    /// The store of the recording at `path`: the nearest directory above it
    /// holding `blobs/sha256`.
    pub fn above(path: &Path) -> Option<BlobStore> {
        path.ancestors()
            .skip(1)
            .map(|d| d.join(STORE))
            .find(|d| d.join("sha256").is_dir())
            .map(BlobStore::at)
    }

    /// The store a recording written at `path` puts its blobs in: the one
    /// [`BlobStore::above`] finds, else the corpus root's
    /// (`<root>/<agent>/<version>/<scenario>.jsonl`), else its directory's.
    pub fn for_writing(path: &Path) -> BlobStore {
        if let Some(store) = BlobStore::above(path) {
            return store;
        }
        let dir = path.parent().unwrap_or(Path::new(""));
        let root = dir
            .parent()
            .and_then(Path::parent)
            .filter(|r| !r.as_os_str().is_empty())
            .unwrap_or(dir);
        BlobStore::at(root.join(STORE))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the blob named `sha256` is.
    pub fn path_of(&self, sha256: &str) -> PathBuf {
        self.dir.join("sha256").join(sha256)
    }

    /// Stores `text` (written whole: temp file and rename; kept when it is
    /// there already) and returns its name.
    pub fn put(&self, text: &str) -> io::Result<String> {
        let name = sha256_hex(text.as_bytes());
        let path = self.path_of(&name);
        if !path.is_file() {
            atomic_file::write(&path, text)?;
        }
        Ok(name)
    }

    /// The blob named `sha256`, checked against its name.
    pub fn get(&self, sha256: &str) -> Result<String, BlobError> {
        if !is_blob_name(sha256) {
            return Err(BlobError::BadName(sha256.to_string()));
        }
        let path = self.path_of(sha256);
        let io = |source| BlobError::Io {
            path: path.clone(),
            source,
        };
        let file = crate::regular_file::open(&path).map_err(io)?;
        let mut bytes = Vec::new();
        file.take(BLOB_MAX + 1)
            .read_to_end(&mut bytes)
            .map_err(io)?;
        if bytes.len() as u64 > BLOB_MAX {
            return Err(io(io::Error::other(format!(
                "larger than {} MiB",
                BLOB_MAX >> 20
            ))));
        }
        let actual = sha256_hex(&bytes);
        if actual != sha256 {
            return Err(BlobError::Corrupt { path, actual });
        }
        String::from_utf8(bytes).map_err(|_| BlobError::NotText { path })
    }

    /// The names of the blobs in the store, sorted.
    pub fn names(&self) -> io::Result<Vec<String>> {
        let dir = self.dir.join("sha256");
        let mut names = Vec::new();
        match std::fs::read_dir(&dir) {
            Ok(entries) => {
                for entry in entries {
                    names.push(entry?.file_name().to_string_lossy().into_owned());
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        names.sort();
        Ok(names)
    }
}

/// Copies the recording at `from` to `to` with the blobs it references
/// into `target` (a store `to` reads from: see [`BlobStore::above`]), so a
/// recording copied out of its corpus still reads.
pub fn copy_recording(from: &Path, to: &Path, target: &BlobStore) -> io::Result<()> {
    let text = std::fs::read_to_string(from)?;
    let source = BlobStore::above(from);
    for line in text.lines().filter(|l| l.contains(r#""blobs":"#)) {
        let refs = serde_json::from_str::<serde_json::Value>(line)
            .ok()
            .and_then(|e| serde_json::from_value::<Vec<BlobRef>>(e["blobs"].clone()).ok())
            .unwrap_or_default();
        for r in refs {
            let source = source.as_ref().ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("{}: no blob store above it", from.display()),
                )
            })?;
            let blob = source.get(&r.sha256).map_err(io::Error::other)?;
            target.put(&blob)?;
        }
    }
    atomic_file::write(to, text)
}

/// `raw` with each long string stored in `store` and its marker in its
/// place; no references (and `raw` unchanged) when nothing is that long.
pub fn store_long_strings(raw: &str, store: &BlobStore) -> io::Result<(String, Vec<BlobRef>)> {
    let ranges = long_strings(raw);
    if ranges.is_empty() {
        return Ok((raw.to_string(), Vec::new()));
    }
    let mut out = String::with_capacity(raw.len().min(4096));
    let mut refs = Vec::new();
    let mut from = 0;
    for range in ranges {
        out.push_str(&raw[from..range.start]);
        let sha256 = store.put(&raw[range.clone()])?;
        refs.push(BlobRef {
            at: out.len(),
            sha256: sha256.clone(),
        });
        out.push_str(&marker(&sha256));
        from = range.end;
    }
    out.push_str(&raw[from..]);
    Ok((out, refs))
}

/// Why a stored `raw` and its references do not fit together, or a blob
/// could not be had.
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    #[error("blob reference {index} (sha256:{sha256}) does not stand at byte {at}: {why}")]
    Misplaced {
        index: usize,
        sha256: String,
        at: usize,
        why: &'static str,
    },
    #[error("sha256:{sha256}: {source}")]
    Blob {
        sha256: String,
        #[source]
        source: BlobError,
    },
}

/// Blobs read once per reader: a screenshot crosses several frames of one
/// recording, and each read hashes the whole blob.
#[derive(Default)]
pub struct BlobCache {
    store: Option<Option<BlobStore>>,
    blobs: HashMap<String, Arc<str>>,
}

impl BlobCache {
    /// The blob named `sha256` in the store above `recording`.
    fn get(&mut self, recording: &Path, sha256: &str) -> Result<Arc<str>, BlobError> {
        if let Some(text) = self.blobs.get(sha256) {
            return Ok(text.clone());
        }
        let store = self
            .store
            .get_or_insert_with(|| BlobStore::above(recording))
            .as_ref()
            .ok_or(BlobError::NoStore)?;
        let text: Arc<str> = store.get(sha256)?.into();
        self.blobs.insert(sha256.to_string(), text.clone());
        Ok(text)
    }
}

/// The `raw` an event was recorded with: `stored` with each marker replaced
/// by its blob's bytes (from the store above `recording`).
pub fn join(
    stored: &str,
    refs: &[BlobRef],
    recording: &Path,
    cache: &mut BlobCache,
) -> Result<String, JoinError> {
    let mut out = String::new();
    let mut from = 0;
    for (index, r) in refs.iter().enumerate() {
        let misplaced = |why| JoinError::Misplaced {
            index,
            sha256: r.sha256.clone(),
            at: r.at,
            why,
        };
        if !is_blob_name(&r.sha256) {
            return Err(misplaced("its name is not 64 lower-case hex digits"));
        }
        if r.at < from {
            return Err(misplaced("references are out of order or overlap"));
        }
        let mark = marker(&r.sha256);
        if stored.get(r.at..r.at + mark.len()) != Some(mark.as_str()) {
            return Err(misplaced("the marker is not there"));
        }
        let text = cache
            .get(recording, &r.sha256)
            .map_err(|source| JoinError::Blob {
                sha256: r.sha256.clone(),
                source,
            })?;
        if out.is_empty() {
            out.reserve(stored.len() + text.len());
        }
        out.push_str(&stored[from..r.at]);
        out.push_str(&text);
        from = r.at + mark.len();
    }
    out.push_str(&stored[from..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn long(c: char) -> String {
        std::iter::repeat_n(c, THRESHOLD).collect()
    }

    /// Strings at the threshold are found, shorter ones and escaped quotes
    /// inside a string are not taken for ends; text that is no JSON still
    /// yields exact ranges.
    #[test]
    fn long_strings_are_the_quoted_texts_at_or_over_the_threshold() {
        let big = long('A');
        let short = "x".repeat(THRESHOLD - 1);
        let raw = format!(r#"{{"a":"{short}","b":"{big}\"{big}","c":"{big}"}}"#);
        let found = long_strings(&raw);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(&raw[found[0].clone()], format!(r#"{big}\"{big}"#));
        assert_eq!(&raw[found[1].clone()], big);
        let unbalanced = format!("data: \"{big}");
        assert!(long_strings(&unbalanced).is_empty());
    }

    /// Stored and joined again, a frame is its exact bytes; the same payload
    /// twice is one blob.
    #[test]
    fn a_frame_stored_and_joined_is_byte_identical() {
        let dir = tempfile::tempdir().unwrap();
        let store = BlobStore::at(dir.path().join(STORE));
        let big = long('Q');
        let raw = format!(r#"{{"image":"{big}","again":"{big}","note":"é"}}"#);
        let (stored, refs) = store_long_strings(&raw, &store).unwrap();
        assert_eq!(refs.len(), 2);
        assert_eq!(refs[0].sha256, refs[1].sha256);
        assert!(stored.len() < 300, "{stored}");
        assert_eq!(store.names().unwrap().len(), 1);
        let recording = dir.path().join("a/1/r.jsonl");
        let joined = join(&stored, &refs, &recording, &mut BlobCache::default()).unwrap();
        assert_eq!(joined, raw);
    }

    /// A corrupt blob, a missing one, a marker not where its reference says
    /// and a name that would leave the store are each an error naming it.
    #[test]
    fn bad_references_and_corrupt_blobs_are_errors_naming_the_blob() {
        let dir = tempfile::tempdir().unwrap();
        let store = BlobStore::at(dir.path().join(STORE));
        let raw = format!(r#"{{"image":"{}"}}"#, long('Z'));
        let (stored, refs) = store_long_strings(&raw, &store).unwrap();
        let recording = dir.path().join("a/1/r.jsonl");
        let join = |stored: &str, refs: &[BlobRef]| {
            join(stored, refs, &recording, &mut BlobCache::default())
                .unwrap_err()
                .to_string()
        };
        let moved = [BlobRef {
            at: refs[0].at + 1,
            ..refs[0].clone()
        }];
        assert!(join(&stored, &moved).contains("the marker is not there"));
        let escape = [BlobRef {
            at: refs[0].at,
            sha256: "../../../etc/passwd".into(),
        }];
        assert!(join(&stored, &escape).contains("not 64 lower-case hex"));
        std::fs::write(store.path_of(&refs[0].sha256), "tampered").unwrap();
        let corrupt = join(&stored, &refs);
        assert!(
            corrupt.contains("is corrupt") && corrupt.contains(&refs[0].sha256),
            "{corrupt}"
        );
        std::fs::remove_file(store.path_of(&refs[0].sha256)).unwrap();
        let missing = join(&stored, &refs);
        assert!(missing.contains(&refs[0].sha256), "{missing}");
    }
}
