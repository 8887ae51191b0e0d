//! A committed recording's event `raw` as the agent sent it: its payloads
//! stored by content (recording format 2: `recordings/blobs/sha256/<hex>`,
//! markers `<blob:sha256:<hex>>` at the offsets `blobs` lists) put back.
//! The bridge cannot use the harness's reader (the harness depends on the
//! bridge), so its tests read the format here.

use std::path::Path;

use serde_json::Value;

/// The event's whole `raw`; `None` when it has none. A reference that does
/// not resolve is a panic naming the recording: a test must not read markers.
pub fn raw(event: &Value, recording: &Path) -> Option<String> {
    let stored = event["raw"].as_str()?;
    let Some(refs) = event["blobs"].as_array() else {
        return Some(stored.to_string());
    };
    let store = recording
        .ancestors()
        .map(|d| d.join("blobs/sha256"))
        .find(|d| d.is_dir())
        .unwrap_or_else(|| panic!("{}: no blob store above it", recording.display()));
    let mut out = String::new();
    let mut from = 0;
    for r in refs {
        let (at, hash) = (
            r["at"].as_u64().unwrap_or(0) as usize,
            r["sha256"].as_str().unwrap_or(""),
        );
        let marker = format!("<blob:sha256:{hash}>");
        assert!(
            hash.len() == 64 && stored.get(at..at + marker.len()) == Some(marker.as_str()),
            "{}: blob reference {hash} at {at} does not stand there",
            recording.display()
        );
        let blob = std::fs::read_to_string(store.join(hash))
            .unwrap_or_else(|e| panic!("{}: blob {hash}: {e}", recording.display()));
        out.push_str(&stored[from..at]);
        out.push_str(&blob);
        from = at + marker.len();
    }
    out.push_str(&stored[from..]);
    Some(out)
}
