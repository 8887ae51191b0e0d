//! `acp-harness outdated`: per agent profile, the newest recorded version
//! and the newer versions published in its registry (npm, PyPI), the
//! package renames it follows, and with `--registry` what the ACP registry
//! says of it; per Agent SDK of the Claude side, its pinned version and
//! the newer ones; as a table or JSON.

use std::path::PathBuf;
use std::process::ExitCode;

use semver::Version;

use super::exit::Exit;
use crate::packages::outdated::{Row, agents, rows, sdk_rows};

#[derive(clap::Args, Debug)]
#[command(after_help = super::exit::EXIT_CODES)]
pub struct OutdatedArgs {
    /// Only these agents or Claude-side SDKs (repeatable); default every
    /// profile under profiles/ and every SDK in contracts/claude-side.toml.
    #[arg(long)]
    pub agent: Vec<String>,
    /// Also list pre-releases (nightlies, release candidates).
    #[arg(long)]
    pub pre: bool,
    /// Answer from the install cache (saved registry answers, installed versions); no network.
    #[arg(long)]
    pub offline: bool,
    /// Also compare each profile with this ACP registry index (a file or an
    /// http(s) URL; without a value the official one): a registry version
    /// newer than recorded, a recipe whose package or arguments differ from the registry's.
    #[arg(long, value_name = "FILE|URL", num_args = 0..=1,
          default_missing_value = crate::packages::acp_registry::DEFAULT_URL)]
    pub registry: Option<String>,
    /// `table` for people, `json` for scripts.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Repository root holding profiles/ and recordings/.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
}

/// The table for people: one line per agent.
pub fn table(rows: &[Row]) -> String {
    let headers = [
        "agent",
        "newest recorded",
        "newer published",
        "older, not recorded",
    ];
    let cells: Vec<[String; 4]> = rows
        .iter()
        .map(|r| {
            let newer = match &r.error {
                Some(e) => format!("unknown: {e}"),
                None if r.newer.is_empty() => "-".into(),
                None => join(&r.newer),
            };
            [
                r.agent.clone(),
                match (&r.newest_recorded, r.protocol) {
                    (None, _) => "-".into(),
                    (Some(v), "sdk") => format!("{v} (pinned)"),
                    (Some(v), _) => v.to_string(),
                },
                newer,
                match r.unrecorded_older.last() {
                    None => "-".into(),
                    Some(newest) => format!("{} (newest {newest})", r.unrecorded_older.len()),
                },
            ]
        })
        .collect();
    let mut out = crate::text_table::render(headers, &cells);
    for r in rows {
        if let Some(stall) = &r.stalled {
            out.push_str(&format!("{}: {stall}\n", r.agent));
        }
        for rename in &r.renamed {
            out.push_str(&format!("{}: renamed {rename}\n", r.agent));
        }
        if let Some(c) = &r.registry {
            if c.newer_than_recorded {
                out.push_str(&format!(
                    "{}: the ACP registry lists {} {}, newer than recorded\n",
                    r.agent, c.id, c.version
                ));
            }
            for m in &c.mismatches {
                out.push_str(&format!("{}: ACP registry: {m}\n", r.agent));
            }
        }
    }
    out
}

/// Whether the ACP registry says something the profile does not follow.
fn registry_differs(row: &Row) -> bool {
    row.registry
        .as_ref()
        .is_some_and(|c| c.newer_than_recorded || !c.mismatches.is_empty())
}

fn join(v: &[Version]) -> String {
    v.iter()
        .map(Version::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `acp-harness outdated`: exit 0 when every agent is current, 1 when newer
/// versions are published or the ACP registry differs, 2 when a registry
/// could not be asked.
pub fn run(args: OutdatedArgs) -> anyhow::Result<ExitCode> {
    let catalogue = crate::corpus::claude_side::Catalogue::load_or_empty(&args.root)?;
    let is_sdk = |a: &String| catalogue.sdks().any(|(p, _)| &p.id == a);
    let (asked_sdks, asked_agents): (Vec<String>, Vec<String>) =
        args.agent.iter().cloned().partition(is_sdk);
    let agents = if args.agent.is_empty() || !asked_agents.is_empty() {
        agents(&args.root, &asked_agents)?
    } else {
        Vec::new()
    };
    let index = match &args.registry {
        Some(location) => Some(crate::packages::acp_registry::load(location)?),
        None => None,
    };
    let mut rows = rows(&args.root, &agents, args.pre, args.offline, index.as_ref())?;
    let fetch = if args.offline {
        crate::packages::versions::offline_versions
    } else {
        crate::packages::versions::versions_saved
    };
    if args.agent.is_empty() || !asked_sdks.is_empty() {
        rows.extend(sdk_rows(
            &catalogue,
            &asked_sdks,
            args.pre,
            args.offline,
            fetch,
        ));
    }
    // a Claude-side package that stopped while the product goes on
    crate::packages::outdated::mark_stalled(&mut rows, &catalogue, fetch);
    match args.format {
        Format::Table => print!("{}", table(&rows)),
        Format::Json => println!("{}", serde_json::to_string_pretty(&rows)?),
    }
    Ok(if rows.iter().any(|r| r.error.is_some()) {
        Exit::Error
    } else {
        Exit::found_if(
            rows.iter()
                .any(|r| !r.newer.is_empty() || registry_differs(r) || r.stalled.is_some()),
        )
    }
    .into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packages::outdated::{compare, vs};

    #[test]
    fn the_npm_answer_parses_into_rows_as_json_and_table() {
        let published = crate::packages::versions::parse_versions(
            r#"["0.58.0","0.59.0","0.60.0-nightly.20260908.g85aca163f","0.60.0","0.61.0"]"#,
        )
        .unwrap();
        let (newest_recorded, newer, unrecorded_older) =
            compare(&vs("0.58.0 0.59.0"), &published, false);
        let row = Row {
            agent: "gemini-cli".into(),
            protocol: "acp",
            packages: vec!["@google/gemini-cli".into()],
            newest_recorded,
            newer,
            unrecorded_older,
            source: "npm",
            error: None,
            renamed: Vec::new(),
            registry: None,
            stalled: None,
        };
        let json = serde_json::to_value([&row]).unwrap();
        assert_eq!(json[0]["newest_recorded"], "0.59.0");
        assert_eq!(json[0]["newer"], serde_json::json!(["0.60.0", "0.61.0"]));
        assert_eq!(json[0]["unrecorded_older"], serde_json::json!([]));
        let text = table(&[row]);
        assert!(
            text.lines()
                .nth(2)
                .unwrap()
                .starts_with("gemini-cli  0.59.0"),
            "{text}"
        );
        assert!(text.contains("0.60.0, 0.61.0"), "{text}");
    }
}
