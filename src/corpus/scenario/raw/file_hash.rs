//! A scenario file's identity as recording headers hold it: the sha256 of
//! the file without the tables only the judge reads.

use crate::corpus::recording::blobs::sha256_hex;

/// The tables only the judge reads: the expectations and the justifications
/// of the comparison with Claude Code. Editing one changes no frame a
/// recording holds, so it does not make the scenario's recordings stale.
const JUDGE_ONLY_TABLES: &[&str] = &["[[expect]]", "[claude_comparison]"];

/// The scenario hashes a recording header may hold. `current` leaves out
/// every judge-only table; `with_expectations` hashes the `[[expect]]`
/// tables too, as recordings made before expectations were left out do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RecordingHashes {
    pub(super) current: String,
    pub(super) with_expectations: String,
}

impl RecordingHashes {
    pub(super) fn of(bytes: &[u8]) -> RecordingHashes {
        RecordingHashes {
            current: sha256_hex(&without_tables(bytes, JUDGE_ONLY_TABLES)),
            with_expectations: sha256_hex(&without_tables(bytes, &["[claude_comparison]"])),
        }
    }
}

/// The file without the tables whose header line is one of `tables`
/// (each up to the next table header).
fn without_tables(bytes: &[u8], tables: &[&str]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut inside = false;
    for line in bytes.split_inclusive(|b| *b == b'\n') {
        let trimmed = line.trim_ascii();
        // a `[[step.model]]` sub-table belongs to its step; any other header
        // starts a new table
        if trimmed.starts_with(b"[") {
            inside = tables.iter().any(|t| trimmed == t.as_bytes());
        }
        if !inside {
            out.extend_from_slice(line);
        }
    }
    out
}
