//! `acp-harness check`: judge the whole corpus and print a table of
//! agent x version x scenario, then what failed and why.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

use crate::judge::{self, Case, Corpus, Status};

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// The workspace root holding `recordings/`, `scenarios/` and `tests/snapshots/`.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
    /// Only recordings whose `<agent>/<version>/<scenario>` contains this.
    #[arg(long)]
    pub filter: Option<String>,
    /// Print nothing but the table.
    #[arg(long)]
    pub quiet: bool,
}

/// `acp-harness check`: replay the whole corpus and print a table of
/// agent x version x scenario. Exit 0 when every recording passes.
pub fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let corpus = Corpus::at(&args.root);
    let paths = corpus
        .recordings()
        .context("the corpus (run check from the repository root, or pass --root)")?;
    let cases: Vec<Case> = paths
        .iter()
        .filter(|p| {
            args.filter
                .as_ref()
                .is_none_or(|f| corpus.id_of(p, None).trial_name().contains(f.as_str()))
        })
        .map(|p| corpus.judge(p))
        .collect();
    // Profiles are data every other command trusts: check them without npm.
    let profile_errors = crate::profile::validate_all(&args.root)?;
    for e in &profile_errors {
        println!("profile error: {e}");
    }
    if cases.is_empty() {
        println!("no recordings under {}", corpus.recordings.display());
        return Ok(if profile_errors.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    print!("{}", table(&cases));
    let failed: Vec<&Case> = cases.iter().filter(|c| !c.passed()).collect();
    if !args.quiet {
        for c in &failed {
            println!("\n=== {}\n{}", c.id.trial_name(), c.report().trim_end());
        }
    }
    if args.filter.is_none() {
        let ids: Vec<_> = cases.iter().map(|c| c.id.clone()).collect();
        for orphan in judge::orphan_goldens(&corpus.snapshots, &ids) {
            println!(
                "\nwarning: golden {} has no recording (remove it if the recording is gone)",
                orphan.display()
            );
        }
    }
    let missing = cases
        .iter()
        .filter(|c| c.statuses().contains(&Status::GoldenMissing))
        .count();
    println!(
        "\n{} recording(s): {} passed, {} failed{}",
        cases.len(),
        cases.len() - failed.len(),
        failed.len(),
        if missing > 0 {
            format!(
                " ({missing} without a golden: bless with `INSTA_UPDATE=always cargo test --test replay`)"
            )
        } else {
            String::new()
        }
    );
    if !profile_errors.is_empty() {
        println!("{} profile(s) failed to load (above)", profile_errors.len());
    }
    Ok(if failed.is_empty() && profile_errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The `check` table: one row per recording.
pub fn table(cases: &[Case]) -> String {
    let headers = ["agent", "version", "scenario", "status"];
    let rows: Vec<[String; 4]> = cases
        .iter()
        .map(|c| {
            let status = c
                .statuses()
                .iter()
                .map(|s| s.label())
                .collect::<Vec<_>>()
                .join(", ");
            let scenario = if c.synthetic {
                format!("{} (synthetic)", c.id.scenario)
            } else {
                c.id.scenario.clone()
            };
            [c.id.agent.clone(), c.id.version.clone(), scenario, status]
        })
        .collect();
    let mut widths = headers.map(str::len);
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |cells: &[&str], out: &mut String| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", padded.join("  ").trim_end());
    };
    line(&headers, &mut out);
    line(
        &widths
            .map(|w| "-".repeat(w))
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        &mut out,
    );
    for r in &rows {
        line(&r.iter().map(String::as_str).collect::<Vec<_>>(), &mut out);
    }
    out
}
