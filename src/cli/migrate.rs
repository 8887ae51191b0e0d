//! `acp-harness record --migrate [PATH...]`: committed recordings brought to
//! what today's recorder writes, without re-recording: the recording machine's
//! kernel release scrubbed (`capture::rescrub`), large payloads moved into
//! the blob store (`capture::migrate`), blobs nothing references removed.
//! Each file is checked to read back as it did before it is replaced.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

use super::exit::Exit;
use crate::capture::{migrate, rescrub};
use crate::corpus::recording::blobs;

/// Migrates the recordings under `paths` (recordings or directories of them;
/// none: `recordings`); a directory holding a blob store is pruned too.
pub fn run(paths: Vec<PathBuf>) -> anyhow::Result<ExitCode> {
    let roots = if paths.is_empty() {
        vec![PathBuf::from("recordings")]
    } else {
        paths
    };
    let (mut files, mut scrubbed, mut moved) = (0, 0, 0);
    let (mut before, mut after) = (0, 0);
    for root in &roots {
        for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
            let entry = entry.with_context(|| format!("listing {}", root.display()))?;
            if !entry.file_type().is_file() || entry.path().extension().is_none_or(|e| e != "jsonl")
            {
                continue;
            }
            files += 1;
            if let Some(done) = rescrub::rescrub(entry.path())? {
                scrubbed += 1;
                println!(
                    "{}: {} -> {} ({} places)",
                    done.path.display(),
                    done.releases.join(", "),
                    rescrub::PLACEHOLDER.0,
                    done.replaced
                );
            }
            if let Some(done) = migrate::migrate(entry.path())? {
                moved += 1;
                before += done.bytes_before;
                after += done.bytes_after;
                println!(
                    "{}: {} payload(s) into the blob store, {} -> {} bytes",
                    done.path.display(),
                    done.stored,
                    done.bytes_before,
                    done.bytes_after
                );
            }
        }
        if root.join(blobs::STORE).is_dir() {
            for name in migrate::prune(root)? {
                println!(
                    "{}: blob {name} pruned (no recording references it)",
                    root.display()
                );
            }
        }
    }
    println!(
        "{files} recording(s) read, {scrubbed} re-scrubbed, {moved} with payloads moved ({} -> {} MB)",
        before / 1_000_000,
        after / 1_000_000
    );
    Ok(Exit::Good.into())
}
