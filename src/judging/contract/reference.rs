//! Claude Code's own recordings (`recordings/claude-code/`): which files they
//! are and the stream-json lines they hold.

use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

use super::ContractError;
use crate::corpus::recording::{self, Dir, Leg, Recording};

/// Whether `path` is a stream-json reference recording (Claude Code itself):
/// its header says `"protocol":"stream-json"`. The replayer skips those; they
/// are not an ACP agent to replay. Reads only the first line.
pub fn is_reference_recording(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut first = String::new();
    if std::io::BufReader::new(file).read_line(&mut first).is_err() {
        return false;
    }
    serde_json::from_str::<Value>(&first)
        .ok()
        .and_then(|h| {
            h.get("protocol")
                .and_then(|p| p.as_str())
                .map(|p| p == "stream-json")
        })
        .unwrap_or(false)
}

/// The stream-json lines Claude printed (`from_agent`), in order.
pub fn reference_lines(rec: &Recording) -> Vec<String> {
    rec.leg(Leg::StreamJson)
        .filter(|e| e.dir == Dir::FromAgent)
        .map(|e| e.raw.clone())
        .collect()
}

/// Every reference recording under `dir`, sorted, with its
/// `<agent>/<version>/<scenario>.jsonl` label.
pub fn reference_recordings(dir: &Path) -> Result<Vec<(String, Recording)>, ContractError> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.map_err(|e| ContractError::Read {
            path: dir.to_path_buf(),
            message: e.to_string(),
        })?;
        let p = entry.path();
        if !(entry.file_type().is_file()
            && p.extension().is_some_and(|e| e == "jsonl")
            && is_reference_recording(p))
        {
            continue;
        }
        let rec = recording::read(p).map_err(|e| ContractError::Read {
            path: p.to_path_buf(),
            message: e.to_string(),
        })?;
        let label: Vec<String> = p
            .iter()
            .rev()
            .take(3)
            .map(|c| c.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        out.push((label.join("/"), rec));
    }
    if out.is_empty() {
        return Err(ContractError::NoRecordings(dir.to_path_buf()));
    }
    Ok(out)
}

/// The reference recording of `scenario` from the newest Claude Code version
/// recorded: what the bridge's output is held to now. (The contract is
/// derived from every version; a key one version dropped stays optional.)
pub fn newest_reference<'a>(
    claude: &'a [(String, Recording)],
    scenario: &str,
) -> Option<&'a Recording> {
    claude
        .iter()
        .filter(|(_, r)| r.header.scenario == scenario)
        .max_by_key(|(label, r)| {
            let version = r.header.agent_info["version"]
                .as_str()
                .or_else(|| label.split('/').nth(1))
                .and_then(|v| semver::Version::parse(v).ok());
            (version, label.clone())
        })
        .map(|(_, r)| r)
}
