//! `acp-harness report`: judge the corpus and write the HTML report, one
//! self-contained page (`check --report DIR` writes the same from its run).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;

use super::exit::{EXIT_CODES, Exit};
use super::selection::judged;
use crate::judging::drift;
use crate::judging::judge::{Case, Corpus};
use crate::judging::report::{html, version_order};

#[derive(clap::Args, Debug)]
#[command(after_help = EXIT_CODES)]
pub struct ReportArgs {
    /// The directory to write `index.html` into (created when missing).
    #[arg(long)]
    pub out: PathBuf,
    /// The workspace root holding `recordings/`, `scenarios/`, `tests/snapshots/` and `docs/`.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
    /// Only recordings whose `<agent>/<version>/<scenario>` contains this.
    #[arg(long)]
    pub filter: Option<String>,
}

/// `acp-harness report --out DIR`: exit 0 when every recording passes, 1
/// when one fails (the page is written either way).
pub fn run(args: ReportArgs) -> anyhow::Result<ExitCode> {
    atomic_file::prepare_dir(&args.out).with_context(|| format!("--out {}", args.out.display()))?;
    let corpus = Corpus::at(&args.root);
    let cases = judged(&corpus, args.filter.as_deref())?;
    let page = write(&args.out, &cases, &corpus)?;
    println!("wrote {}", page.display());
    Ok(Exit::found_if(cases.iter().any(|c| !c.passed())).into())
}

/// Writes `DIR/index.html` for `cases` (sorted); returns its path.
pub fn write(dir: &Path, cases: &[Case], corpus: &Corpus) -> anyhow::Result<PathBuf> {
    let extras = html::Extras {
        drift: drift_between_versions(cases, corpus),
        notes: matrix_notes(cases, corpus),
    };
    let path = dir.join("index.html");
    atomic_file::write(&path, html::render(cases, &extras))
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// Per agent and version: the drift report from the previous recorded
/// version, the bridge's side taken from the judged transcripts (nothing is
/// replayed again).
fn drift_between_versions(cases: &[Case], corpus: &Corpus) -> BTreeMap<(String, String), String> {
    let mut by_version: BTreeMap<&str, BTreeMap<&str, Vec<&Case>>> = BTreeMap::new();
    for c in cases {
        by_version
            .entry(&c.id.agent)
            .or_default()
            .entry(&c.id.version)
            .or_default()
            .push(c);
    }
    let mut out = BTreeMap::new();
    for (agent, versions) in by_version {
        let mut list: Vec<(&str, Vec<&Case>)> = versions.into_iter().collect();
        list.sort_by(|a, b| version_order(a.0, b.0));
        for pair in list.windows(2) {
            let (prev, next) = (&pair[0], &pair[1]);
            let sides = drift::Sides {
                a: prev.1.iter().map(|c| c.path.clone()).collect(),
                b: next.1.iter().map(|c| c.path.clone()).collect(),
            };
            let transcript = |scenario: &str, r: &crate::corpus::recording::Recording| {
                let version = r.header.agent_version().unwrap_or("");
                match [prev, next].iter().flat_map(|p| &p.1).find(|c| {
                    c.id.scenario == scenario && c.id.version == version && c.replay.is_some()
                }) {
                    Some(c) => Ok(c.transcript.text()),
                    None => corpus
                        .scenario(scenario)
                        .map(|sc| {
                            crate::judging::judge::replay_with(r, &sc)
                                .transcript
                                .render()
                        })
                        .map_err(|e| format!("cannot replay: its scenario: {e}")),
                }
            };
            let text = match drift::report_with(&sides, transcript) {
                Ok(r) => r.render(),
                Err(e) => format!("no drift report: {e}"),
            };
            out.insert((agent.to_string(), next.0.to_string()), text);
        }
    }
    out
}

/// Per agent: the `docs/*matrix*.md` files that name it and the notes
/// beside its recordings (`recordings/<agent>/*.md`, `*.toml`).
fn matrix_notes(cases: &[Case], corpus: &Corpus) -> BTreeMap<String, Vec<(String, String)>> {
    let mut agents: Vec<&str> = cases.iter().map(|c| c.id.agent.as_str()).collect();
    agents.dedup();
    let files_in = |dir: &Path, keep: &dyn Fn(&str) -> bool| -> Vec<(String, String)> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(keep))
            .collect();
        files.sort();
        files
            .into_iter()
            .filter_map(|p| {
                let text = std::fs::read_to_string(&p).ok()?;
                let name = p
                    .strip_prefix(&corpus.root)
                    .unwrap_or(&p)
                    .display()
                    .to_string();
                Some((name, text))
            })
            .collect()
    };
    let docs = files_in(&corpus.root.join("docs"), &|n| {
        n.contains("matrix") && n.ends_with(".md")
    });
    agents
        .into_iter()
        .map(|agent| {
            let mut notes: Vec<(String, String)> = docs
                .iter()
                .filter(|(_, text)| text.contains(agent))
                .cloned()
                .collect();
            notes.extend(files_in(&corpus.recordings.join(agent), &|n| {
                n.ends_with(".md") || n.ends_with(".toml")
            }));
            (agent.to_string(), notes)
        })
        .collect()
}
