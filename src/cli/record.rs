//! `acp-harness record`: its arguments; the work is [`crate::capture::record`],
//! and with `--migrate` [`super::migrate`]: the one command that writes
//! recordings also brings committed ones to today's format.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::capture::record::{self, mode};

#[derive(clap::Args, Debug, Clone)]
pub struct RecordArgs {
    /// `<agent>[@<version>]`, e.g. codex-acp@2.6.0 (default version: the profile's)
    #[arg(long, required_unless_present = "migrate")]
    pub agent: Option<String>,
    /// Scenario name(s) under scenarios/ (repeatable)
    #[arg(long, required_unless_present_any = ["all", "migrate"])]
    pub scenario: Vec<String>,
    /// Every scenario under scenarios/
    #[arg(long, conflicts_with = "scenario")]
    pub all: bool,
    /// `stub`: the scripted model server; `live`: the agent's own login and model (needs the network)
    #[arg(long, default_value = "stub", value_parser = ["stub", "live"])]
    pub model: String,
    /// Where recordings go [default: <root>/recordings]
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Repository root holding profiles/ and scenarios/
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
    /// Record with the host network when a loopback-only namespace is not available
    #[arg(long)]
    pub allow_network: bool,
    /// Record into a temporary directory and compare with the recording under --out
    /// (after normalising randomised values); exit 1 with a diff when they differ
    #[arg(long)]
    pub check: bool,
    /// What to do with a scenario already recorded: `once` records only when none
    /// exists and never overwrites, `new` records the missing ones, `all` re-records
    /// and says what changed, `stale` re-records only those made from an older
    /// scenario file
    #[arg(long, value_enum, default_value_t = mode::Mode::Once)]
    pub mode: mode::Mode,
    /// The ACP revision the client offers: 1, or 2 (Preview; a real
    /// client's negotiation: an agent that refuses it is offered 1). A v2
    /// recording goes beside v1's as `<version>+acp2`
    #[arg(long, default_value = "1", value_parser = ["1", "2"])]
    pub acp_protocol: String,
    /// Internal: this process already runs inside the network namespace
    #[arg(long, hide = true)]
    pub inside_netns: bool,
    /// Record nothing: rewrite committed recordings (or directories of them
    /// [default: recordings]) into today's format without re-recording
    /// (payloads into the blob store, re-scrubbed), each checked to read
    /// back frame for frame; blobs no recording references are removed
    #[arg(long, value_name = "PATH", num_args = 0.., conflicts_with_all = ["agent", "scenario", "all", "check"])]
    pub migrate: Option<Vec<PathBuf>>,
}

impl From<RecordArgs> for record::Request {
    fn from(a: RecordArgs) -> Self {
        record::Request {
            agent: a.agent.unwrap_or_default(),
            scenario: a.scenario,
            all: a.all,
            model: a.model,
            out: a.out.unwrap_or_else(|| a.root.join("recordings")),
            root: a.root,
            allow_network: a.allow_network,
            check: a.check,
            mode: a.mode,
            inside_netns: a.inside_netns,
            offer: if a.acp_protocol == "2" {
                acp_bridge::acp::revision::Revision::V2
            } else {
                acp_bridge::acp::revision::Revision::V1
            },
        }
    }
}

pub fn run(args: RecordArgs) -> anyhow::Result<ExitCode> {
    match args.migrate {
        Some(paths) => super::migrate::run(paths),
        None => record::run(args.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        record: RecordArgs,
    }

    /// (arguments after `--agent a --scenario s`, where recordings go)
    #[test]
    fn recordings_go_under_the_root_unless_out_says_otherwise() {
        let cases: [(&[&str], &str); 4] = [
            (&[], "./recordings"),
            (&["--root", "repo"], "repo/recordings"),
            (&["--root", "repo", "--out", "elsewhere"], "elsewhere"),
            (&["--out", "elsewhere"], "elsewhere"),
        ];
        for (args, want) in cases {
            let argv = ["record", "--agent", "a", "--scenario", "s"]
                .iter()
                .chain(args);
            let request = record::Request::from(Cli::parse_from(argv).record);
            assert_eq!(request.out, PathBuf::from(want), "{args:?}");
        }
    }

    /// `--migrate` records nothing: it needs no agent or scenario, takes
    /// paths (none: the corpus), and refuses to be mixed with a recording.
    #[test]
    fn migrate_takes_paths_instead_of_an_agent_and_refuses_recording_flags() {
        let parse = |argv: &[&str]| Cli::try_parse_from(argv).map(|c| c.record.migrate);
        assert_eq!(parse(&["record", "--migrate"]).unwrap(), Some(vec![]));
        assert_eq!(
            parse(&["record", "--migrate", "a", "b"]).unwrap(),
            Some(vec![PathBuf::from("a"), PathBuf::from("b")])
        );
        assert!(parse(&["record", "--migrate", "--agent", "x"]).is_err());
        assert!(parse(&["record"]).is_err());
    }
}
