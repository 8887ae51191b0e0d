//! `acp-harness drift`: what an agent sends differently between two
//! recordings or versions, next to what the bridge made of each.

use std::path::PathBuf;

use anstyle::{AnsiColor, Style};
use anyhow::Context as _;

use super::exit::{EXIT_CODES, Exit, UsageError};
use super::output::{Color, Out};
use crate::judging::drift::{Sides, report, side};
use crate::judging::judge::Corpus;
use crate::judging::report::paint;

/// `--format`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Format {
    /// The Markdown report (what `--out` writes).
    #[default]
    Markdown,
    /// `{title, differs, changes, bridge}`.
    Json,
}

#[derive(clap::Args, Debug)]
#[command(after_help = EXIT_CODES)]
pub struct DriftArgs {
    /// Side A: a recording or a directory of them (e.g. recordings/codex-acp/0.4.4).
    pub a: Option<PathBuf>,
    /// Side B.
    pub b: Option<PathBuf>,
    /// Instead of paths: the agent whose recorded versions to compare.
    #[arg(long)]
    pub agent: Option<String>,
    /// With --agent: the older recorded version (side A, recordings/<agent>/<from>).
    #[arg(long, requires = "agent")]
    pub from: Option<String>,
    /// With --agent: the newer recorded version (side B, recordings/<agent>/<to>).
    #[arg(long, requires = "agent")]
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
    /// Exit 1 when anything differs (as `git diff --exit-code`); default exit 0.
    #[arg(long)]
    pub exit_code: bool,
    /// What to print.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Colour: auto (a terminal and NO_COLOR unset), always, never.
    #[arg(long, value_enum, default_value_t)]
    pub color: Color,
}

/// `acp-harness drift`: print the report (and write it with `--out`).
pub fn run(args: DriftArgs) -> anyhow::Result<std::process::ExitCode> {
    // looked at before the comparison: a bad --out is refused up front
    let out_file = args
        .out
        .as_deref()
        .map(|p| atomic_file::Output::prepare(p).with_context(|| format!("--out {}", p.display())))
        .transpose()?;
    let (a, b) = match (&args.a, &args.b, &args.agent, &args.from, &args.to) {
        (Some(a), Some(b), None, _, _) => (a.clone(), b.clone()),
        (None, None, Some(agent), Some(from), Some(to)) => {
            for (field, value) in [("--agent", agent), ("--from", from), ("--to", to)] {
                crate::corpus::name::check(field, value)?;
            }
            let dir = args.root.join("recordings").join(agent);
            (dir.join(from), dir.join(to))
        }
        _ => {
            return Err(UsageError(
                "give two recordings (or version directories), or --agent X --from V1 --to V2"
                    .into(),
            )
            .into());
        }
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
    match args.format {
        Format::Markdown => Out::new(args.color).print(&styled_markdown(&text)),
        Format::Json => Out::new(Color::Never).print(
            &(serde_json::to_string_pretty(&report.to_json()).expect("JSON values serialise")
                + "\n"),
        ),
    }
    if let Some(out) = &out_file {
        out.write(&text)
            .with_context(|| format!("writing {}", out.path().display()))?;
    }
    Ok(Exit::found_if(args.exit_code && report.differs()).into())
}

/// Headings bold, diff lines red and green (stripped when colour is off).
fn styled_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        let style = if body.starts_with('#') {
            Some(Style::new().bold())
        } else if body.starts_with('+') && !body.starts_with("+++") {
            Some(AnsiColor::Green.on_default())
        } else if body.starts_with('-') && !body.starts_with("---") && !body.starts_with("- ") {
            Some(AnsiColor::Red.on_default())
        } else if body.starts_with("@@") {
            Some(AnsiColor::Cyan.on_default())
        } else {
            None
        };
        match style {
            Some(s) => {
                out.push_str(&paint(s, body));
                out.push_str(&line[body.len()..]);
            }
            None => out.push_str(line),
        }
    }
    out
}
