//! Recordings rewritten into the current format without re-recording:
//! large payloads moved into the corpus's blob store (format 2, see
//! `recording::blobs`), each file verified to read back event for event
//! as it did before it replaces the old one, and blobs that no recording
//! references removed.
//!
//! Lines are rewritten as text: only an event holding a long string and the
//! header's `format` change, every other byte of the file stays as it was.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde_json::Value;

use crate::corpus::recording::blobs::{self, BlobCache, BlobRef, BlobStore};
use crate::corpus::recording::{self, FORMAT, RecordingError};

/// What one file's migration did.
#[derive(Debug, PartialEq, Eq)]
pub struct Migrated {
    pub path: PathBuf,
    /// Payloads moved into the store.
    pub stored: usize,
    pub bytes_before: usize,
    pub bytes_after: usize,
}

/// `text` (the recording at `path`) with every long string of its events
/// stored in `store`; the header says format 2 when any was. Lines without
/// one are kept byte for byte.
pub fn to_stored(text: &str, path: &Path, store: &BlobStore) -> Result<String, RecordingError> {
    let mut cache = BlobCache::default();
    let mut out = String::with_capacity(text.len().min(1 << 20));
    let mut moved = false;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let body = line.trim_end_matches('\n');
        if body.len() < blobs::THRESHOLD {
            out.push_str(line);
            continue;
        }
        let mut event = parse(body, path, i + 1)?;
        let raw = inline_raw(&mut event, path, i + 1, &mut cache)?;
        if blobs::long_strings(&raw).is_empty() {
            out.push_str(line);
            continue;
        }
        let (raw, refs) =
            blobs::store_long_strings(&raw, store).map_err(|source| RecordingError::Io {
                path: store.dir().to_path_buf(),
                source,
            })?;
        event["raw"] = Value::from(raw);
        event["blobs"] = serde_json::to_value(refs).expect("references always serialise");
        out.push_str(&event.to_string());
        out.push_str(&line[body.len()..]);
        moved = true;
    }
    if moved {
        out = with_format(&out, FORMAT, path)?;
    }
    Ok(out)
}

/// `text` (the recording at `path`) with every blob back in its event, as
/// one self-contained format 1 file (what the recorder wrote before blobs).
pub fn to_inline(text: &str, path: &Path) -> Result<String, RecordingError> {
    let mut cache = BlobCache::default();
    let mut out = String::with_capacity(text.len());
    let mut joined = false;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let body = line.trim_end_matches('\n');
        if !body.contains(r#""blobs":"#) {
            out.push_str(line);
            continue;
        }
        let mut event = parse(body, path, i + 1)?;
        let raw = inline_raw(&mut event, path, i + 1, &mut cache)?;
        event["raw"] = Value::from(raw);
        out.push_str(&event.to_string());
        out.push_str(&line[body.len()..]);
        joined = true;
    }
    if joined {
        out = with_format(&out, 1, path)?;
    }
    Ok(out)
}

fn parse(body: &str, path: &Path, line: usize) -> Result<Value, RecordingError> {
    serde_json::from_str(body).map_err(|e| RecordingError::Parse {
        path: path.to_path_buf(),
        line,
        message: format!("not a recording line: {e}"),
    })
}

/// The event's whole `raw` (its blobs joined in, its `blobs` taken out);
/// empty for a line that is no event.
fn inline_raw(
    event: &mut Value,
    path: &Path,
    line: usize,
    cache: &mut BlobCache,
) -> Result<String, RecordingError> {
    if event.get("type").and_then(Value::as_str) != Some("event") {
        return Ok(String::new());
    }
    let Some(refs) = event.as_object_mut().and_then(|o| o.shift_remove("blobs")) else {
        let raw = event.get("raw").and_then(Value::as_str).unwrap_or_default();
        return Ok(raw.to_string());
    };
    let refs: Vec<BlobRef> = serde_json::from_value(refs).map_err(|e| RecordingError::Parse {
        path: path.to_path_buf(),
        line,
        message: format!("`blobs` is not a list of references: {e}"),
    })?;
    let raw = event.get("raw").and_then(Value::as_str).unwrap_or_default();
    blobs::join(raw, &refs, path, cache).map_err(|source| RecordingError::Blob {
        path: path.to_path_buf(),
        line,
        seq: event.get("seq").and_then(Value::as_u64).unwrap_or(0),
        source: Box::new(source),
    })
}

/// `text` with its header's `format` set to `format` (the header line
/// re-written in its own key order; the rest untouched).
fn with_format(text: &str, format: u32, path: &Path) -> Result<String, RecordingError> {
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let mut header = parse(first, path, 1)?;
    if header.get("type").and_then(Value::as_str) != Some("header") {
        return Err(RecordingError::Parse {
            path: path.to_path_buf(),
            line: 1,
            message: "the first line is no header".into(),
        });
    }
    header["format"] = Value::from(format);
    Ok(format!("{header}\n{rest}"))
}

/// Migrates the recording at `path` in place (written whole: temp file and
/// rename) after checking that it reads back as the same recording; `None`
/// when it holds nothing to move.
pub fn migrate(path: &Path) -> anyhow::Result<Option<Migrated>> {
    let text = read(path)?;
    let store = BlobStore::for_writing(path);
    let out = to_stored(&text, path, &store)?;
    if out == text {
        return Ok(None);
    }
    let mut before = recording::parse_str(&text, path)?;
    let after = recording::parse_str(&out, path)
        .with_context(|| format!("{}: migrated, it no longer reads", path.display()))?;
    before.header.format = after.header.format;
    if before != after {
        bail!(
            "{}: migrated, it does not read back as the same recording; left as it was",
            path.display()
        );
    }
    atomic_file::write(path, &out).with_context(|| format!("writing {}", path.display()))?;
    Ok(Some(Migrated {
        path: path.to_path_buf(),
        stored: out.matches("<blob:sha256:").count(),
        bytes_before: text.len(),
        bytes_after: out.len(),
    }))
}

fn read(path: &Path) -> anyhow::Result<String> {
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut crate::corpus::regular_file::open(path)
            .with_context(|| format!("reading {}", path.display()))?,
        &mut text,
    )
    .with_context(|| format!("reading {}", path.display()))?;
    Ok(text)
}

/// How a corpus stands with its blob store.
#[derive(Debug, Default)]
pub struct Audit {
    /// `file:line` of every event that still holds a long string inline.
    pub inline: Vec<String>,
    /// Every blob a recording references.
    pub referenced: BTreeSet<String>,
    /// Blobs in the store that no recording references.
    pub orphans: Vec<String>,
    /// Referenced blobs the store does not have, with who references them.
    pub missing: Vec<String>,
}

/// Reads every recording under `root` (the store is `root/blobs`) as it is
/// stored, without joining blobs.
pub fn audit(root: &Path) -> anyhow::Result<Audit> {
    let store = BlobStore::at(root.join(blobs::STORE));
    let mut audit = Audit::default();
    for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
        let entry = entry.with_context(|| format!("listing {}", root.display()))?;
        if !entry.file_type().is_file() || entry.path().extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let path = entry.path();
        let text = read(path)?;
        for (i, line) in text.lines().enumerate() {
            if line.len() < blobs::THRESHOLD && !line.contains(r#""blobs":"#) {
                continue;
            }
            let event = parse(line, path, i + 1)?;
            let raw = event.get("raw").and_then(Value::as_str).unwrap_or_default();
            if !blobs::long_strings(raw).is_empty() {
                audit.inline.push(format!("{}:{}", path.display(), i + 1));
            }
            let refs: Vec<BlobRef> = event
                .get("blobs")
                .map(|b| serde_json::from_value(b.clone()))
                .transpose()
                .with_context(|| format!("{}:{}: `blobs`", path.display(), i + 1))?
                .unwrap_or_default();
            for r in refs {
                if !store.path_of(&r.sha256).is_file() {
                    audit
                        .missing
                        .push(format!("{} ({}:{})", r.sha256, path.display(), i + 1));
                }
                audit.referenced.insert(r.sha256);
            }
        }
    }
    audit.orphans = store
        .names()
        .with_context(|| format!("listing {}", store.dir().display()))?
        .into_iter()
        .filter(|n| !audit.referenced.contains(n))
        .collect();
    Ok(audit)
}

/// Removes the blobs under `root/blobs` that no recording under `root`
/// references; returns their names.
pub fn prune(root: &Path) -> anyhow::Result<Vec<String>> {
    let audit = audit(root)?;
    let store = BlobStore::at(root.join(blobs::STORE));
    for name in &audit.orphans {
        let path = store.path_of(name);
        std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
    }
    Ok(audit.orphans)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"type":"header","format":1,"agent":"a","agent_info":null,"package":"p@1","argv":[],"scenario":"s","scenario_sha256":"x","model_mode":"stub","harness_version":"0","client_capabilities":null,"protocol_version":1,"date":"2026-01-01","isolation":"none","placeholders":{}}"#;

    fn inline_recording() -> String {
        let image = "iVBOR".repeat(blobs::THRESHOLD / 4);
        let frame = format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"content":{{"type":"image","data":"{image}"}}}}}}"#
        );
        let event = serde_json::json!({"type":"event","seq":1,"ms":1,"leg":"acp","dir":"from_agent","proc":1,"raw":frame});
        let small = r#"{"type":"event","seq":2,"ms":2,"leg":"stderr","dir":"from_agent","proc":1,"raw":"done"}"#;
        let trailer = r#"{"type":"trailer","seq":3,"ms":3,"outcome":"ok","exit":{"code":0,"signal":null},"notes":[]}"#;
        format!("{HEADER}\n{event}\n{small}\n{trailer}\n")
    }

    /// A recording migrates to format 2 with its payload in the store, reads
    /// back as the same recording, inlines back to the very bytes it was,
    /// and a second migration finds nothing to do.
    #[test]
    fn a_migrated_recording_reads_back_the_same_and_inlines_to_its_old_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/1.0.0/s.jsonl");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text = inline_recording();
        std::fs::write(&path, &text).unwrap();
        let done = migrate(&path).unwrap().unwrap();
        assert_eq!(done.stored, 1);
        assert!(done.bytes_after < 2048, "{done:?}");
        let stored = std::fs::read_to_string(&path).unwrap();
        assert!(stored.starts_with(r#"{"type":"header","format":2,"#));
        assert_eq!(
            BlobStore::at(dir.path().join("blobs"))
                .names()
                .unwrap()
                .len(),
            1
        );
        let mut before = recording::parse_str(&text, &path).unwrap();
        before.header.format = 2;
        assert_eq!(recording::read(&path).unwrap(), before);
        assert_eq!(to_inline(&stored, &path).unwrap(), text);
        assert_eq!(migrate(&path).unwrap(), None);
        let audit = audit(dir.path()).unwrap();
        assert!(audit.inline.is_empty() && audit.orphans.is_empty() && audit.missing.is_empty());
    }

    /// A blob no recording references is pruned; a referenced one stays.
    #[test]
    fn prune_removes_only_blobs_nothing_references() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/1.0.0/s.jsonl");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, inline_recording()).unwrap();
        migrate(&path).unwrap();
        let store = BlobStore::at(dir.path().join("blobs"));
        let orphan = store.put("left over").unwrap();
        assert_eq!(prune(dir.path()).unwrap(), [orphan]);
        assert_eq!(store.names().unwrap().len(), 1);
        assert!(recording::read(&path).is_ok());
    }
}
