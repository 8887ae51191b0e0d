//! `acp-harness import <tap>`: a tapped panel session becomes a corpus
//! case (a recording and an imported scenario). It shows what it will
//! commit; `--dry-run` shows it and writes nothing.

use std::path::PathBuf;
use std::process::ExitCode;

use super::exit::{EXIT_CODES, Exit};
use crate::capture::import::{self, PanelStep, Plan, Request};

#[derive(clap::Args, Debug)]
#[command(after_help = EXIT_CODES)]
pub struct ImportArgs {
    /// The tap to import (written by `acp-bridge --tap`).
    pub tap: PathBuf,
    /// The corpus root holding `recordings/` and `scenarios/`.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
    /// The agent (profile id) to file it under [default: the profile the tap's agentInfo.name, package or command line names].
    #[arg(long)]
    pub agent: Option<String>,
    /// The name of the recording and its scenario [default: the tap's file name without .jsonl].
    #[arg(long)]
    pub name: Option<String>,
    /// The agent's version, for a tap whose agent names none (no agentInfo.version, no _meta.agentVersion).
    #[arg(long)]
    pub version: Option<String>,
    /// Mark the recording synthetic, saying why (the tapped agent was a replay, not a real agent).
    #[arg(long, value_name = "WHY")]
    pub synthetic: Option<String>,
    /// The tapped agent's model was the scripted model server of `acp-harness sandbox`
    /// playing this scenario (the header then says `model_mode` stub).
    #[arg(long, value_name = "SCENARIO")]
    pub scripted_model: Option<String>,
    /// Import even where a credential shape survived scrubbing, once you have read
    /// the places named and found nothing secret (a test key, a hash).
    #[arg(long)]
    pub accept_credential_shapes: bool,
    /// Show what would be written, and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let plan = import::plan(&Request {
        tap: args.tap.clone(),
        root: args.root,
        agent: args.agent,
        name: args.name,
        version: args.version,
        accept_credential_shapes: args.accept_credential_shapes,
        synthetic: args.synthetic,
        scripted_model: args.scripted_model,
    })?;
    print!("{}", describe(&plan));
    if args.dry_run {
        println!("dry run: nothing written");
    } else {
        import::commit(&plan)?;
        println!(
            "wrote {} and {}\nnext: `acp-harness replay {}`, read the transcript, then bless its golden",
            plan.scenario_path.display(),
            plan.recording_path.display(),
            plan.recording_path.display()
        );
    }
    Ok(Exit::Good.into())
}

/// What the import commits, for the person who runs it.
fn describe(plan: &Plan) -> String {
    let mut out = format!(
        "import {}/{}/{} (tapped {})\n",
        plan.agent, plan.version, plan.name, plan.tapped
    );
    let kept: Vec<String> = plan.kept.iter().map(|(l, n)| format!("{n} {l}")).collect();
    out.push_str(&format!(
        "  recording {} ({} events: {})\n",
        plan.recording_path.display(),
        plan.kept.iter().map(|(_, n)| n).sum::<usize>(),
        kept.join(", ")
    ));
    out.push_str(&format!(
        "  scenario  {} ({} steps)\n",
        plan.scenario_path.display(),
        plan.steps.len()
    ));
    let mut prompts = Vec::new();
    let mut answers = Vec::new();
    let mut other = Vec::new();
    let with_images = |text: &str, images: &[crate::capture::import::Image]| match images.len() {
        0 => format!("{:?}", shorten(text)),
        n => format!("{:?} (+{n} image(s))", shorten(text)),
    };
    for step in &plan.steps {
        match step {
            PanelStep::Prompt { text, images } => prompts.push(with_images(text, images)),
            PanelStep::Steer { at, text, images } => {
                prompts.push(format!("{} (steered at {at})", with_images(text, images)))
            }
            PanelStep::Permission {
                decision,
                tool,
                updated_input,
            } => answers.push(match updated_input {
                Some(_) => format!("{tool}: {decision}, with the input edited"),
                None => format!("{tool}: {decision}"),
            }),
            PanelStep::Interrupt { at } => other.push(format!("interrupt at {at}")),
            PanelStep::SetMode { mode } => other.push(format!("set_mode {mode}")),
            PanelStep::SetModel { model } => other.push(format!("set_model {model}")),
        }
    }
    let list = |out: &mut String, title: &str, items: &[String]| {
        out.push_str(&format!("  {title}: {}\n", items.len()));
        for (i, item) in items.iter().enumerate() {
            out.push_str(&format!("    {}. {item}\n", i + 1));
        }
    };
    list(&mut out, "prompts", &prompts);
    list(&mut out, "tool calls", &plan.tool_uses);
    list(&mut out, "permission answers", &answers);
    if !other.is_empty() {
        list(&mut out, "other steps", &other);
    }
    for note in &plan.notes {
        out.push_str(&format!("  note: {note}\n"));
    }
    out
}

/// A prompt cut to one readable line.
fn shorten(text: &str) -> String {
    const MAX: usize = 100;
    let one_line = text.replace('\n', " ");
    if one_line.chars().count() <= MAX {
        return one_line;
    }
    let cut: String = one_line.chars().take(MAX).collect();
    format!("{cut}...")
}
