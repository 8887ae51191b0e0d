//! `acp-harness rescrub [PATH...]`: committed recordings re-scrubbed for
//! what the recorder of their day left in them (the recording machine's
//! kernel release), without re-recording; see `capture::rescrub`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

use super::exit::{EXIT_CODES, Exit};
use crate::capture::rescrub;

#[derive(clap::Args, Debug)]
#[command(after_help = EXIT_CODES)]
pub struct RescrubArgs {
    /// Recordings or directories of them [default: recordings].
    pub paths: Vec<PathBuf>,
}

pub fn run(args: RescrubArgs) -> anyhow::Result<ExitCode> {
    let roots = if args.paths.is_empty() {
        vec![PathBuf::from("recordings")]
    } else {
        args.paths
    };
    let (mut files, mut changed) = (0, 0);
    for root in &roots {
        for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
            let entry = entry.with_context(|| format!("listing {}", root.display()))?;
            if !entry.file_type().is_file() || entry.path().extension().is_none_or(|e| e != "jsonl")
            {
                continue;
            }
            files += 1;
            if let Some(done) = rescrub::rescrub(entry.path())? {
                changed += 1;
                println!(
                    "{}: {} -> {} ({} places)",
                    done.path.display(),
                    done.releases.join(", "),
                    rescrub::PLACEHOLDER.0,
                    done.replaced
                );
            }
        }
    }
    println!("{files} recording(s) read, {changed} re-scrubbed");
    Ok(Exit::Good.into())
}
