//! `acp-harness drift`: what an agent sends differently between two
//! recordings or versions, next to what the bridge made of each.

use std::path::PathBuf;

use anyhow::Context as _;

use crate::drift::{Sides, report, side};
use crate::judge::Corpus;

#[derive(clap::Args, Debug)]
pub struct DriftArgs {
    /// Side A: a recording or a directory of them (e.g. recordings/codex-acp/0.4.4).
    pub a: Option<PathBuf>,
    /// Side B.
    pub b: Option<PathBuf>,
    /// Instead of paths: the agent whose recorded versions to compare.
    #[arg(long)]
    pub agent: Option<String>,
    #[arg(long)]
    pub from: Option<String>,
    #[arg(long)]
    pub to: Option<String>,
    /// Only these scenarios (repeatable); default every scenario of each side.
    #[arg(long)]
    pub scenario: Vec<String>,
    /// Repository root holding recordings/ and scenarios/.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
    /// Also write the report (markdown) to this file.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// `acp-harness drift`: print the report (and write it with `--out`).
pub fn run(args: DriftArgs) -> anyhow::Result<std::process::ExitCode> {
    let (a, b) = match (&args.a, &args.b, &args.agent, &args.from, &args.to) {
        (Some(a), Some(b), None, _, _) => (a.clone(), b.clone()),
        (None, None, Some(agent), Some(from), Some(to)) => {
            let dir = args.root.join("recordings").join(agent);
            (dir.join(from), dir.join(to))
        }
        _ => anyhow::bail!(
            "give two recordings (or version directories), or --agent X --from V1 --to V2"
        ),
    };
    let sides = Sides {
        a: side(&a, &args.scenario)?,
        b: side(&b, &args.scenario)?,
    };
    let report = report(&sides, &Corpus::at(&args.root))?;
    let mut text = report.render();
    if args.out.is_some() {
        // a committed report says how to make it again
        let argv: Vec<String> = std::env::args().skip(1).collect();
        text = text.replacen(
            "\n\n",
            &format!("\n\nReproduce: `acp-harness {}`\n\n", argv.join(" ")),
            1,
        );
    }
    print!("{text}");
    if let Some(out) = &args.out {
        std::fs::write(out, &text).with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(std::process::ExitCode::SUCCESS)
}
