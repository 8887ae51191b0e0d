//! `acp-harness contract`: derive the stream-json contract from Claude
//! Code's reference recordings, or compare the bridge's output per scenario
//! with Claude's, or run the round trip through a Claude Code ACP adapter.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::judging::contract::compare::{self, Row, Shape, differences, is_justified, justified};
use crate::judging::contract::roundtrip::{self, Outcome};
use crate::judging::contract::{
    CONTRACT_PATH, Contract, newest_reference, reference_lines, reference_recordings,
};
use crate::judging::judge::Corpus;

#[derive(clap::Args, Debug)]
pub struct ContractArgs {
    #[command(subcommand)]
    pub command: ContractCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum ContractCommand {
    /// Derive contracts/claude-code.json from the Claude Code reference recordings.
    Derive {
        /// Repository root holding recordings/ and contracts/.
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// Print the contract instead of writing it.
        #[arg(long)]
        stdout: bool,
    },
    /// Compare, per scenario, the bridge's stream-json for each ACP recording
    /// with Claude's; prints a Markdown table (the one docs/contract.md shows).
    Compare {
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// Print each difference under the table.
        #[arg(long)]
        details: bool,
        /// Every recorded version of each agent, not only its newest.
        #[arg(long)]
        all_versions: bool,
    },
    /// Claude Code through an ACP adapter, replayed through the bridge,
    /// against Claude Code's own output, value by value; exit 1 on a
    /// difference not justified in contracts/roundtrip.toml.
    Roundtrip {
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// Also list the justified differences.
        #[arg(long)]
        details: bool,
    },
    /// The Agent SDKs' stream-json surface matrix: write docs/sdk-surface.md
    /// from contracts/sdk-surface/ (exit 1 when an entry has no row or a row
    /// no entry), or with --extract re-extract an SDK's vendored surface from
    /// its pinned version.
    Surface {
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// Re-extract this SDK (its id in contracts/claude-side.toml) from the
        /// pinned version, installed into the install cache (needs its registry).
        #[arg(long, value_name = "SDK")]
        extract: Option<String>,
        /// With --extract: read the package from this directory (its files as
        /// the catalogue names them) instead of installing it.
        #[arg(long, requires = "extract")]
        from: Option<PathBuf>,
        /// Print the page instead of writing it.
        #[arg(long)]
        stdout: bool,
    },
}

/// `acp-harness contract ...`.
pub fn run(args: ContractArgs) -> anyhow::Result<std::process::ExitCode> {
    match args.command {
        ContractCommand::Derive { root, stdout } => {
            let recs = reference_recordings(&root.join("recordings"))?;
            let contract = Contract::derive(recs.iter().map(|(l, r)| (l.clone(), r)));
            if stdout {
                print!("{}", contract.to_json());
            } else {
                let path = root.join(CONTRACT_PATH);
                atomic_file::write(&path, contract.to_json())
                    .with_context(|| format!("writing {}", path.display()))?;
                eprintln!(
                    "[contract] {} kinds from {} recordings -> {}",
                    contract.kinds.len(),
                    contract.recordings.len(),
                    path.display()
                );
            }
            Ok(std::process::ExitCode::SUCCESS)
        }
        ContractCommand::Compare {
            root,
            details,
            all_versions,
        } => compare(&root, details, all_versions),
        ContractCommand::Roundtrip { root, details } => roundtrip(&root, details),
        ContractCommand::Surface {
            root,
            extract,
            from,
            stdout,
        } => surface(&root, extract.as_deref(), from.as_deref(), stdout),
    }
}

/// `contract surface`: re-extracts one SDK's surface when asked, then
/// writes the matrix page; exit 1 when the matrix and the surfaces disagree.
fn surface(
    root: &Path,
    extract: Option<&str>,
    from: Option<&Path>,
    stdout: bool,
) -> anyhow::Result<std::process::ExitCode> {
    use crate::judging::sdk_surface::{self, matrix};
    if let Some(id) = extract {
        let cat = crate::corpus::claude_side::Catalogue::load(root)?;
        let package = cat.get(id).with_context(|| {
            format!(
                "{id}: not in {}",
                crate::corpus::claude_side::CATALOGUE_PATH
            )
        })?;
        let source = package
            .surface
            .as_ref()
            .with_context(|| format!("{id}: not an SDK (it has no surface)"))?;
        let dir = match from {
            Some(d) => d.to_path_buf(),
            None => crate::tracking::claude_side::installed_package_dir(
                package,
                source,
                &package.pinned,
            )?,
        };
        let surface = sdk_surface::Surface::extract(package, source, &package.pinned, &dir)?;
        let path = root.join(&source.vendored);
        atomic_file::write(&path, surface.to_json())
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!(
            "[surface] {id} {}: {} control subtypes, {} message types -> {}",
            package.pinned,
            surface.control_subtypes.len(),
            surface.message_types.len(),
            path.display()
        );
    }
    let m = matrix::Matrix::load(root)?;
    let surfaces = matrix::vendored_surfaces(root)?;
    let page = matrix::render(&m, &surfaces);
    if stdout {
        print!("{page}");
    } else {
        let path = root.join(matrix::DOC_PATH);
        atomic_file::write(&path, &page).with_context(|| format!("writing {}", path.display()))?;
        let c = m.control_counts();
        eprintln!(
            "[surface] {} control subtypes ({} mapped, {} local, {} unsupported), {} message types -> {}",
            c.total,
            c.mapped,
            c.local,
            c.unsupported,
            m.message_counts().total,
            path.display()
        );
    }
    let problems = m.check(&surfaces);
    for p in &problems {
        eprintln!("[surface] {p}");
    }
    Ok(super::exit::Exit::found_if(!problems.is_empty()).into())
}

/// Every recording of the agents `contracts/roundtrip.toml` lists that has a
/// Claude reference recording of its scenario, against that reference, with
/// each difference's side. A recording that cannot be replayed, or whose
/// replay diverged from it, is a row with an error.
pub fn roundtrip_outcome(corpus: &Corpus) -> anyhow::Result<Outcome> {
    // the facts are read from the bridge's lines for the panel
    let corpus = &corpus.clone().keeping_panel_lines();
    let justifications = roundtrip::load_justifications(&corpus.root)?;
    let claude = reference_recordings(&corpus.recordings)?;
    let mut rows = Vec::new();
    for path in corpus.recordings()? {
        let id = corpus.id_of(&path, None);
        if !justifications.agents.contains(&id.agent) {
            continue;
        }
        let Some(reference) = newest_reference(&claude, &id.scenario) else {
            continue;
        };
        let mut row = roundtrip::Row {
            agent: id.agent.clone(),
            version: id.version.clone(),
            scenario: id.scenario.clone(),
            differences: Vec::new(),
            sides: Vec::new(),
            error: None,
        };
        let case = corpus.judge(&path);
        match (&case.error(), &case.replay) {
            (Some(e), _) => row.error = Some(e.to_string()),
            (None, None) => row.error = Some("not replayed".into()),
            (None, Some(replay)) => match replay.divergences().next() {
                Some(d) => row.error = Some(format!("the replay diverged: {d}")),
                None => {
                    row.differences = roundtrip::differences(
                        &roundtrip::facts(&reference_lines(reference)),
                        &roundtrip::facts(&replay.panel_lines),
                    )
                }
            },
        }
        rows.push(row);
    }
    let stale = justifications.classify(&mut rows);
    Ok(Outcome { rows, stale })
}

fn roundtrip(root: &Path, details: bool) -> anyhow::Result<std::process::ExitCode> {
    let outcome = roundtrip_outcome(&Corpus::at(root))?;
    if outcome.rows.is_empty() {
        anyhow::bail!(
            "no recordings of the agents listed in {} under {}",
            roundtrip::JUSTIFIED_PATH,
            root.join("recordings").display()
        );
    }
    print!("{}", roundtrip::render(&outcome, details));
    eprintln!("[roundtrip] {}", outcome.summary());
    Ok(if outcome.holds() {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    })
}

/// Every ACP recording that has a Claude reference recording of its scenario.
pub fn rows(corpus: &Corpus) -> anyhow::Result<Vec<Row>> {
    // the shapes are read from the bridge's lines for the panel
    let corpus = &corpus.clone().keeping_panel_lines();
    let claude = reference_recordings(&corpus.recordings)?;
    let mut out = Vec::new();
    for path in corpus.recordings()? {
        let id = corpus.id_of(&path, None);
        let Some(reference) = newest_reference(&claude, &id.scenario) else {
            continue;
        };
        let claude_shape = Shape::of(&reference_lines(reference));
        let mut row = Row {
            scenario: id.scenario.clone(),
            agent: format!("{} {}", id.agent, id.version),
            claude: claude_shape,
            bridge: Shape::default(),
            differences: Vec::new(),
            unjustified: Vec::new(),
            error: None,
        };
        let case = corpus.judge(&path);
        let replayed = match (&case.error(), &case.replay) {
            (None, Some(replay)) => corpus
                .scenario(&case.id.scenario)
                .map(|sc| (replay, sc))
                .map_err(anyhow::Error::msg),
            (Some(e), _) => Err(anyhow::anyhow!("{e}")),
            (None, None) => Err(anyhow::anyhow!("{}: not replayed", path.display())),
        };
        // A malformed justification is an error of the whole comparison.
        match replayed {
            Err(e) => row.error = Some(format!("{e:#}")),
            Ok((replay, sc)) => {
                row.bridge = Shape::of(&replay.panel_lines);
                row.differences = differences(&row.claude, &row.bridge);
                let justified = justified(&sc.path)?;
                // an agent that asked no permission leaves the bridge none
                // to forward: what follows from that is the agent's
                let mut agent_asked = false;
                let mut agent_noticed = false;
                case.transcript.for_each_line(|l| {
                    let from_agent = l.starts_with("agent>bridge ");
                    agent_asked |=
                        from_agent && l.contains(r#""method":"session/request_permission""#);
                    agent_noticed |= from_agent && l.contains(r#""sessionUpdate":"notice""#);
                    !(agent_asked && agent_noticed)
                })?;
                row.unjustified = row
                    .differences
                    .iter()
                    .filter(|d| !is_justified(d, &justified))
                    .filter(|d| {
                        agent_asked
                            || !compare::follows_from_unasked_calls(d, &row.claude, &row.bridge)
                    })
                    .filter(|d| !(agent_noticed && compare::follows_from_agent_notices(d)))
                    // the agent's known limitation names what follows from it
                    .filter(|d| {
                        !case
                            .limitation
                            .as_ref()
                            .is_some_and(|l| l.contract.contains(&d.key))
                    })
                    .cloned()
                    .collect();
            }
        }
        out.push(row);
    }
    Ok(out)
}

fn compare(
    root: &Path,
    details: bool,
    all_versions: bool,
) -> anyhow::Result<std::process::ExitCode> {
    let mut rows = rows(&Corpus::at(root))?;
    if !all_versions {
        rows = compare::newest_versions(rows);
    }
    print!("{}", compare::table(&rows));
    let mut unjustified = 0;
    for r in &rows {
        unjustified += r.unjustified.len();
        if details {
            for d in &r.differences {
                let mark = if r.unjustified.contains(d) {
                    "UNJUSTIFIED"
                } else {
                    "justified"
                };
                println!(
                    "- {} / {}: {mark} `{}`: {}",
                    r.scenario, r.agent, d.key, d.detail
                );
            }
        }
    }
    eprintln!(
        "[contract] {} rows, {unjustified} unjustified differences",
        rows.len()
    );
    Ok(if unjustified == 0 {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    })
}
