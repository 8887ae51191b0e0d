//! `acp-harness conformance`: every ACP frame of the corpus against the ACP
//! schema, per agent and version and side (the recorded agent, the
//! recorder's client, the bridge in the replay). Agent-side violations are
//! reported; a bridge frame the schema rejects fails the command.

use std::path::PathBuf;
use std::process::ExitCode;

use super::exit::{EXIT_CODES, Exit};
use super::output::{Color, Out};
use super::selection::judged_with;
use crate::judging::acp_schema::matrix::Matrix;
use crate::judging::judge::{Case, Corpus};

/// `--format`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Format {
    /// Agent x version x side, then each violation and outside method.
    #[default]
    Table,
    /// `{schema, versions, bridge_invalid}`.
    Json,
    /// A Markdown table, then each violation and outside method.
    Markdown,
}

#[derive(clap::Args, Debug)]
#[command(after_help = EXIT_CODES)]
pub struct ConformanceArgs {
    /// The workspace root holding `recordings/` and `scenarios/`.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
    /// Only recordings whose `<agent>/<version>/<scenario>` contains this
    /// (matching nothing is a usage error).
    #[arg(long)]
    pub filter: Option<String>,
    /// What to print.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Recordings replayed at once (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub jobs: usize,
}

/// `acp-harness conformance`: exit 1 when a frame the bridge sent is invalid.
pub fn run(args: ConformanceArgs) -> anyhow::Result<ExitCode> {
    let corpus = Corpus::at(&args.root);
    let cases = judged_with(&corpus, args.filter.as_deref(), args.jobs, |c| Case {
        replay: None,
        transcript: Default::default(),
        golden_diff: None,
        ..c
    })?;
    let mut matrix = Matrix::default();
    let mut unread = Vec::new();
    for case in &cases {
        match &case.acp {
            Some(acp) => matrix.add(&case.id.agent, &case.id.version, acp),
            None => unread.push(format!(
                "{}: {}",
                case.path.display(),
                case.error().unwrap_or_else(|| "not checked".into())
            )),
        }
    }
    let mut out = Out::new(Color::Never);
    match args.format {
        Format::Table => out.print(&matrix.render_table()),
        Format::Markdown => out.print(&matrix.render_markdown()),
        Format::Json => out.print(
            &(serde_json::to_string_pretty(&matrix.to_json()).expect("JSON values serialise")
                + "\n"),
        ),
    }
    for u in &unread {
        eprintln!("not checked: {u}");
    }
    Ok(Exit::of_judged(&cases, matrix.bridge_invalid() > 0).into())
}
