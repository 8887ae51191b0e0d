//! `acp-harness`: record real ACP agents through scenarios, replay the
//! recordings into the bridge, and compare what it emits.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// mimalloc keeps freed memory for reuse: glibc maps every allocation over
/// 128 KiB afresh, so each big frame a replay copies (base64 images of up to
/// megabytes) would cost a new mapping, page faults and zeroing.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `--version`: the version, then which build (commit, target, ACP revisions).
static LONG_VERSION: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let build = acp_harness::corpus::recording::HARNESS_BUILD;
    format!("{}\n{}", build.version, build.details().trim_end())
});

#[derive(Parser)]
#[command(name = "acp-harness", version, long_version = LONG_VERSION.as_str(), about, after_help = acp_harness::cli::exit::EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Install an agent's packages from npm or PyPI, and its runtimes, into the per-user cache (e.g. codex-acp@2.6.0).
    Install(acp_harness::cli::install::InstallArgs),
    /// Run a scenario against a real agent and write a recording.
    Record(acp_harness::cli::record::RecordArgs),
    /// Run a panel command in front of a real agent in the recorder's sandbox (loopback only, scripted model).
    Sandbox(acp_harness::cli::sandbox::SandboxArgs),
    /// Replay a recording (or a directory of them) through the bridge; print the transcript and the golden diff.
    Replay(acp_harness::cli::replay::ReplayArgs),
    /// Replay the whole corpus and print a table of agent x version x scenario.
    Check(acp_harness::cli::check::CheckArgs),
    /// Check every ACP frame of the corpus against the official ACP schema, per agent version and side.
    Conformance(acp_harness::cli::conformance::ConformanceArgs),
    /// Serve a recording as an ACP agent on stdio.
    FakeAgent(acp_harness::cli::replay::FakeAgentArgs),
    /// Turn a tapped panel session (acp-bridge --tap) into a recording and a scenario.
    Import(acp_harness::cli::import::ImportArgs),
    /// Compare what an agent sent in two recordings (or versions) structurally, next to the bridge output diff.
    Drift(acp_harness::cli::drift::DriftArgs),
    /// Find the first agent version that breaks a scenario in the bridge.
    Bisect(acp_harness::cli::bisect::BisectArgs),
    /// Per agent: the newest recorded version and the newer versions published (npm, PyPI).
    Outdated(acp_harness::cli::outdated::OutdatedArgs),
    /// The official ACP agent registry: its agents beside the profiles here, starter profiles.
    Registry(acp_harness::cli::registry::RegistryArgs),
    /// Record the versions not yet recorded, judge them against the previous version, write drift reports.
    Update(acp_harness::cli::update::UpdateArgs),
    /// Judge the corpus and write the HTML report (one self-contained page).
    Report(acp_harness::cli::report::ReportArgs),
    /// The stream-json contract from Claude Code's reference recordings: derive it, compare against it.
    Contract(acp_harness::cli::contract::ContractArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Install(args) => acp_harness::cli::install::run(args),
        Command::Record(args) => acp_harness::cli::record::run(args),
        Command::Sandbox(args) => acp_harness::cli::sandbox::run(args),
        Command::Replay(args) => acp_harness::cli::replay::run(args),
        Command::Check(args) => acp_harness::cli::check::run(args),
        Command::Conformance(args) => acp_harness::cli::conformance::run(args),
        Command::FakeAgent(args) => acp_harness::cli::replay::fake_agent(args),
        Command::Import(args) => acp_harness::cli::import::run(args),
        Command::Drift(args) => acp_harness::cli::drift::run(args),
        Command::Bisect(args) => acp_harness::cli::bisect::run(args),
        Command::Contract(args) => acp_harness::cli::contract::run(args),
        Command::Outdated(args) => acp_harness::cli::outdated::run(args),
        Command::Registry(args) => acp_harness::cli::registry::run(args),
        Command::Update(args) => acp_harness::cli::update::run(args),
        Command::Report(args) => acp_harness::cli::report::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("acp-harness: {err:#}");
            acp_harness::cli::exit::of_error(&err).into()
        }
    }
}
