//! `acp-harness check`: judge the whole corpus and print it as a table
//! (with what failed and why), JSON, JUnit XML or Markdown; optionally also
//! write the JUnit file and the HTML report from the same run.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

use super::exit::{EXIT_CODES, Exit};
use super::output::{Color, Out};
use super::selection::judged_with;
use crate::judging::judge::{self, Case, Corpus};
use crate::judging::report::{self, Summary, junit};
use atomic_file::{Output, prepare_dir};

/// `--format`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Format {
    /// A table of agent x version x scenario, then each failure explained.
    #[default]
    Table,
    /// `{summary, cases, orphan_goldens, profile_errors}`.
    Json,
    /// JUnit XML: one testcase per recording, `<agent>/<version>/<scenario>`.
    Junit,
    /// A Markdown table with each failure folded under it.
    Markdown,
}

#[derive(clap::Args, Debug)]
#[command(after_help = EXIT_CODES)]
pub struct CheckArgs {
    /// The workspace root holding `recordings/`, `scenarios/` and `tests/snapshots/`.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
    /// Only recordings whose `<agent>/<version>/<scenario>` contains this
    /// (matching nothing is a usage error).
    #[arg(long)]
    pub filter: Option<String>,
    /// Table format: print nothing but the table and the summary.
    #[arg(long)]
    pub quiet: bool,
    /// What to print.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Also write JUnit XML to this file (same run, any --format).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Also write the HTML report into this directory (same run).
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Colour: auto (a terminal and NO_COLOR unset), always, never.
    #[arg(long, value_enum, default_value_t)]
    pub color: Color,
    /// Recordings judged at once (0: one per core). The output is the same
    /// for every value.
    #[arg(long, default_value_t = 0)]
    pub jobs: usize,
}

/// `acp-harness check`: exit 0 when every recording passes, 1 when one
/// fails, 2 on a usage or tool error.
pub fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    // outputs are looked at before the run: a bad one is refused up front
    let junit_out = args
        .junit
        .as_deref()
        .map(|p| Output::prepare(p).with_context(|| format!("--junit {}", p.display())))
        .transpose()?;
    if let Some(dir) = &args.report {
        prepare_dir(dir).with_context(|| format!("--report {}", dir.display()))?;
    }
    let corpus = Corpus::at(&args.root);
    // Profiles are data every other command trusts: check them without npm.
    let profile_errors: Vec<String> = crate::corpus::profile::validate_all(&args.root)?
        .iter()
        .map(|e| e.to_string())
        .collect();
    // the HTML report reads passed cases' transcripts; nothing else does
    let keep: fn(Case) -> Case = if args.report.is_some() {
        |c| c
    } else {
        Case::lightened
    };
    let cases = judged_with(&corpus, args.filter.as_deref(), args.jobs, keep)?;
    if cases.is_empty() {
        for e in &profile_errors {
            println!("profile error: {e}");
        }
        println!("no recordings under {}", corpus.recordings.display());
        return Ok(Exit::found_if(!profile_errors.is_empty()).into());
    }
    let orphans = if args.filter.is_none() {
        let ids: Vec<_> = cases.iter().map(|c| c.id.clone()).collect();
        judge::orphan_goldens(&corpus.snapshots, &ids)
    } else {
        Vec::new()
    };
    let mut out = Out::new(match args.format {
        Format::Table => args.color,
        _ => Color::Never,
    });
    match args.format {
        Format::Table => {
            for e in &profile_errors {
                out.println(&format!("profile error: {e}"));
            }
            print_table(&mut out, &cases, &orphans, args.quiet);
        }
        Format::Json => out.print(&report::json(&cases, &orphans, &profile_errors)),
        Format::Junit => out.print(&junit::render(&cases)),
        Format::Markdown => out.print(&report::markdown(&cases)),
    }
    if let Some(file) = &junit_out {
        file.write(junit::render(&cases))
            .with_context(|| format!("writing {}", file.path().display()))?;
    }
    if let Some(dir) = &args.report {
        let page = super::report::write(dir, &cases, &corpus)?;
        eprintln!("wrote {}", page.display());
    }
    if args.format != Format::Table {
        for e in &profile_errors {
            eprintln!("profile error: {e}");
        }
    }
    let found = !profile_errors.is_empty() || cases.iter().any(|c| !c.passed());
    Ok(Exit::of_judged(&cases, found).into())
}

fn print_table(out: &mut Out, cases: &[Case], orphans: &[PathBuf], quiet: bool) {
    out.print(&report::table(cases));
    if !quiet {
        let styled = out.styled();
        for c in cases.iter().filter(|c| !c.passed()) {
            out.print(&format!(
                "\n=== {}\n{}\n",
                c.id.trial_name(),
                c.report_styled(styled).trim_end()
            ));
        }
    }
    for orphan in orphans {
        out.println(&format!(
            "\nwarning: golden {} has no recording (remove it if the recording is gone)",
            orphan.display()
        ));
    }
    let summary = Summary::of(cases);
    out.println(&format!("\n{}", summary.line()));
    if summary.no_golden > 0 {
        out.println(
            "bless missing goldens with `INSTA_UPDATE=always cargo test --test it -- <agent>/<version>`",
        );
    }
}
