//! Committed recordings re-scrubbed for what the recorder of their day left
//! in them: the recording machine's kernel release (in the Claude system
//! prompt's `OS Version: Linux ...`, on the model leg), which the recorder
//! now writes as `<kernel-release>`. Every occurrence of each release found
//! becomes the placeholder and the header names it; the ACP leg (what the
//! bridge is replayed) must come out byte-identical, or nothing is written.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use anyhow::{Context as _, bail};
use regex::Regex;
use serde_json::Value;

use crate::capture::record::scrubbing::kernel_release_is_distinctive;
use crate::corpus::recording::{self, Leg};

/// The placeholder and what it stands for, as the header lists it.
pub const PLACEHOLDER: (&str, &str) = (
    "<kernel-release>",
    "the kernel release of the machine that recorded",
);

/// Where a kernel release shows: the Claude system prompt's environment.
static RELEASE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"OS Version: Linux ([0-9][0-9A-Za-z._+~-]*)").expect("a valid regex")
});

/// The distinctive kernel releases `text` shows (`6.1.0-18-amd64`, not a
/// bare `6.8.0`).
pub fn kernel_releases(text: &str) -> BTreeSet<String> {
    RELEASE
        .captures_iter(text)
        .map(|c| c[1].to_string())
        .filter(|r| kernel_release_is_distinctive(r))
        .collect()
}

/// What one file's re-scrub did.
#[derive(Debug, PartialEq, Eq)]
pub struct Rescrubbed {
    pub path: PathBuf,
    pub releases: Vec<String>,
    pub replaced: usize,
}

/// Re-scrubs `path` in place (written whole: temp file and rename);
/// `None` when it holds no kernel release.
pub fn rescrub(path: &Path) -> anyhow::Result<Option<Rescrubbed>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let releases = kernel_releases(&text);
    if releases.is_empty() {
        return Ok(None);
    }
    let mut replaced = 0;
    let mut out = text.clone();
    for release in &releases {
        replaced += out.matches(release.as_str()).count();
        out = out.replace(release.as_str(), PLACEHOLDER.0);
    }
    let out = with_placeholder(&out).with_context(|| format!("{}: its header", path.display()))?;
    let before = recording::parse_str(&text, path)?;
    let after = recording::parse_str(&out, path)
        .with_context(|| format!("{}: re-scrubbed, it no longer reads", path.display()))?;
    let acp = |r: &recording::Recording| -> Vec<String> {
        r.events
            .iter()
            .filter(|e| e.leg == Leg::Acp)
            .map(|e| e.raw.clone())
            .collect()
    };
    if acp(&before) != acp(&after) {
        bail!(
            "{}: a kernel release is in its ACP leg, which the replay plays: re-record it instead",
            path.display()
        );
    }
    atomic_file::write(path, &out).with_context(|| format!("writing {}", path.display()))?;
    Ok(Some(Rescrubbed {
        path: path.to_path_buf(),
        releases: releases.into_iter().collect(),
        replaced,
    }))
}

/// `text` with the header's `placeholders` naming [`PLACEHOLDER`] (the
/// header line re-written in its own key order; the rest untouched).
fn with_placeholder(text: &str) -> anyhow::Result<String> {
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let mut header: Value = serde_json::from_str(first).context("not JSON")?;
    let placeholders = header
        .get_mut("placeholders")
        .and_then(Value::as_object_mut)
        .context("no placeholders object")?;
    if placeholders.contains_key(PLACEHOLDER.0) {
        return Ok(text.to_string());
    }
    placeholders.insert(PLACEHOLDER.0.into(), Value::from(PLACEHOLDER.1));
    Ok(format!("{header}\n{rest}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recording with a machine's kernel release in a model request comes
    /// out with the placeholder there and in its header, every other byte
    /// kept; once done, a second run finds nothing; one with the release in
    /// its ACP leg is refused and left as it was.
    #[test]
    fn a_kernel_release_on_the_model_leg_becomes_the_placeholder_and_on_the_acp_leg_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let header = r#"{"type":"header","format":1,"agent":"a","agent_info":null,"package":"p@1","argv":[],"scenario":"s","scenario_sha256":"x","model_mode":"stub","harness_version":"0","client_capabilities":null,"protocol_version":1,"date":"2026-01-01","isolation":"none","placeholders":{"<workspace>":"cwd"}}"#;
        let model = r#"{"type":"event","seq":1,"ms":1,"leg":"model","dir":"request","proc":0,"raw":"{\"system\":\"OS Version: Linux 6.18.44-fc-v669\\nShell: bash; 6.18.44-fc-v669\"}"}"#;
        let acp = r#"{"type":"event","seq":2,"ms":2,"leg":"acp","dir":"from_agent","proc":1,"raw":"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}"}"#;
        let trailer = r#"{"type":"trailer","seq":3,"ms":3,"outcome":"ok","exit":{"code":0,"signal":null},"notes":[]}"#;
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, format!("{header}\n{model}\n{acp}\n{trailer}\n")).unwrap();
        let done = rescrub(&path).unwrap().unwrap();
        assert_eq!(done.releases, ["6.18.44-fc-v669"]);
        assert_eq!(done.replaced, 2);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("6.18.44"), "{text}");
        assert!(
            text.contains(r#"OS Version: Linux <kernel-release>\\nShell: bash; <kernel-release>"#),
            "{text}"
        );
        assert!(
            text.contains(
                r#""<kernel-release>":"the kernel release of the machine that recorded""#
            )
        );
        assert!(text.ends_with(&format!("{acp}\n{trailer}\n")));
        assert_eq!(rescrub(&path).unwrap(), None);

        let on_acp = dir.path().join("acp.jsonl");
        let bad = acp.replace(
            r#"\"result\":{}"#,
            r#"\"result\":{\"os\":\"OS Version: Linux 6.1.0-18-amd64\"}"#,
        );
        let original = format!("{header}\n{bad}\n{trailer}\n").replace("\"seq\":3", "\"seq\":3");
        let original = original
            .replace(r#""seq":2"#, r#""seq":1"#)
            .replace(r#""seq":3"#, r#""seq":2"#);
        std::fs::write(&on_acp, &original).unwrap();
        let e = rescrub(&on_acp).unwrap_err().to_string();
        assert!(e.contains("ACP leg"), "{e}");
        assert_eq!(std::fs::read_to_string(&on_acp).unwrap(), original);
    }
}
