//! The stream-json contract: what Claude Code's own lines look like, derived
//! from its reference recordings, and the check of the bridge's lines
//! against it.

use std::io::BufRead;
use std::path::Path;

/// Whether `path` is a stream-json reference recording (Claude Code itself):
/// its header says `"protocol":"stream-json"`. The replayer skips those; they
/// are not an ACP agent to replay. Reads only the first line.
pub fn is_reference_recording(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else { return false };
    let mut first = String::new();
    if std::io::BufReader::new(file).read_line(&mut first).is_err() {
        return false;
    }
    serde_json::from_str::<serde_json::Value>(&first)
        .ok()
        .and_then(|h| h.get("protocol").and_then(|p| p.as_str()).map(|p| p == "stream-json"))
        .unwrap_or(false)
}
