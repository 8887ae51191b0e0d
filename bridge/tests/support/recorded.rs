//! A committed recording's event `raw` as the agent sent it: its payloads
//! stored by content put back by the recording format's own reader
//! (`recording_format::blobs`, which the harness reads the corpus with too).

use std::path::Path;

use recording_format::blobs::{BlobCache, BlobRef, join};
use serde_json::Value;

/// The event's whole `raw`; `None` when it has none. A reference that does
/// not resolve is a panic naming the recording: a test must not read markers.
pub fn raw(event: &Value, recording: &Path) -> Option<String> {
    let stored = event["raw"].as_str()?;
    let Some(refs) = event.get("blobs") else {
        return Some(stored.to_string());
    };
    let refs: Vec<BlobRef> = serde_json::from_value(refs.clone())
        .unwrap_or_else(|e| panic!("{}: blob references: {e}", recording.display()));
    let joined = join(stored, &refs, recording, &mut BlobCache::default());
    Some(joined.unwrap_or_else(|e| panic!("{}: {e}", recording.display())))
}
